//! `lmdb-regress compare OLD NEW`, in benchstat's manner: per tag and workload, old and
//! new medians, the change with its interval and p-value, "~" where not significant.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::{bail, Result};
use serde::Serialize;

use super::model::release_key;
use crate::runner::runfile::{Engine, RunData};
use crate::stats::{self, Comparison, Summary};
use crate::workload::Workload;

#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub engine: Engine,
    pub workload: Workload,
    pub tag: String,
    pub old: Summary,
    pub new: Summary,
    pub change: Comparison,
}

type Groups = BTreeMap<(Engine, Workload, String), Vec<f64>>;

fn groups(d: &RunData) -> Groups {
    let mut g = Groups::new();
    for s in &d.samples {
        if let Some(v) = s.value(d.header.plan.metric) {
            g.entry((s.engine, s.workload, s.tag.clone())).or_default().push(v);
        }
    }
    g
}

pub fn build(old: &RunData, new: &RunData) -> Result<Vec<CompareRow>> {
    if old.header.plan.metric != new.header.plan.metric {
        bail!(
            "the two runs measured different metrics ({:?} and {:?})",
            old.header.plan.metric,
            new.header.plan.metric
        );
    }
    let (go, gn) = (groups(old), groups(new));
    let mut rows: Vec<CompareRow> = go
        .iter()
        .filter_map(|(k, o)| {
            let n = gn.get(k)?;
            Some(CompareRow {
                engine: k.0,
                workload: k.1,
                tag: k.2.clone(),
                old: stats::summarize(o)?,
                new: stats::summarize(n)?,
                change: stats::compare(o, n)?,
            })
        })
        .collect();
    if rows.is_empty() {
        bail!("the two runs have no (engine, tag, workload) in common");
    }
    rows.sort_by(|a, b| {
        (a.engine, Workload::ALL.iter().position(|w| *w == a.workload), release_key(&a.tag)).cmp(&(
            b.engine,
            Workload::ALL.iter().position(|w| *w == b.workload),
            release_key(&b.tag),
        ))
    });
    Ok(rows)
}

pub fn render_text(rows: &[CompareRow], unit: &str) -> String {
    let mut o = String::new();
    let mut last: Option<(Engine, Workload)> = None;
    let header = ["tag", &format!("old {unit}"), &format!("new {unit}"), "delta", "95% CI", "p"].map(String::from);
    let mut table: Vec<[String; 6]> = Vec::new();
    let flush = |o: &mut String, title: &str, table: &mut Vec<[String; 6]>| {
        if table.is_empty() {
            return;
        }
        let w: Vec<usize> = (0..6)
            .map(|i| table.iter().map(|r| r[i].chars().count()).chain([header[i].chars().count()]).max().unwrap())
            .collect();
        let _ = writeln!(o, "{title}");
        for r in std::iter::once(&header).chain(table.iter()) {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| if i == 0 { format!("{c:<w$}", w = w[i]) } else { format!("{c:>w$}", w = w[i]) })
                .collect();
            let _ = writeln!(o, "{}", line.join("  ").trim_end());
        }
        o.push('\n');
        table.clear();
    };
    for r in rows {
        if last != Some((r.engine, r.workload)) {
            if let Some((e, w)) = last {
                flush(&mut o, &format!("{} ({e})", w.title()), &mut table);
            }
            last = Some((r.engine, r.workload));
        }
        let c = &r.change;
        table.push([
            r.tag.clone(),
            format!("{} {}", super::num(r.old.median), super::plus_minus(&r.old)),
            format!("{} {}", super::num(r.new.median), super::plus_minus(&r.new)),
            if c.significant { super::delta(c) } else { "~".into() },
            super::delta_interval(c),
            format!("p={} n={}+{}", c.p_value().map(super::fmt_p).unwrap_or_else(|| "n/a".into()), r.old.n, r.new.n),
        ]);
    }
    if let Some((e, w)) = last {
        flush(&mut o, &format!("{} ({e})", w.title()), &mut table);
    }
    o
}
