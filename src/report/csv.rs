//! CSV for scripts, written by the csv crate from serde rows: one file of summaries with
//! every delta, one of raw samples.

use anyhow::Result;
use serde::Serialize;

use super::model::{Delta, ReportModel};
use super::{Exporter, Output};
use crate::record::{Engine, Metric};
use crate::workload::Workload;

pub struct Csv;

/// A cell as the csv crate writes it: empty for none, numbers as serde gives them.
#[derive(Clone, Serialize)]
#[serde(untagged)]
enum CsvCell {
    Float(Option<f64>),
    Whole(Option<u64>),
    Text(Option<String>),
    Flag(Option<bool>),
}

/// The metrics a CSV gives a column each: instructions always (so that every file has the
/// same columns for the same kind of run), then each other metric `counted` holds.
fn count_columns(counted: impl IntoIterator<Item = Metric>) -> Vec<Metric> {
    let mut v = vec![Metric::Instructions];
    v.extend(counted.into_iter().filter(|m| *m != Metric::Instructions && m.is_exact()));
    v.sort();
    v.dedup();
    v
}

fn key(m: Metric) -> String {
    m.key().replace('-', "_")
}

/// A delta's ratio, interval and verdict (with "time only"), as the JSON record has them.
fn parts(d: Option<&Delta>) -> [CsvCell; 4] {
    match d {
        None => [CsvCell::Float(None), CsvCell::Float(None), CsvCell::Float(None), CsvCell::Text(None)],
        Some(d) => {
            let c = &d.comparison;
            let verdict = Some(crate::report::cells::verdict(d));
            [
                CsvCell::Float(Some(c.ratio)),
                CsvCell::Float(c.ci.map(|i| i.lo)),
                CsvCell::Float(c.ci.map(|i| i.hi)),
                CsvCell::Text(verdict),
            ]
        }
    }
}

fn summary_header(counts: &[Metric]) -> Vec<String> {
    let mut h: Vec<String> = ["engine", "workload", "tag", "rank", "n", "median", "median_lo", "median_hi", "mean"]
        .into_iter()
        .chain(["stddev", "min", "max"])
        .map(String::from)
        .collect();
    h.extend(counts.iter().map(|m| format!("{}_per_entry", key(*m))));
    for against in ["vs_fastest", "vs_baseline"] {
        h.extend(["ratio", "lo", "hi", "verdict"].map(|x| format!("{against}_{x}")));
    }
    h.extend(counts.iter().map(|m| format!("vs_baseline_{}_ratio", key(*m))));
    h.extend(["vs_baseline_time_only", "unit", "layout_spread"].map(String::from));
    h
}

pub fn summaries(m: &ReportModel) -> Result<String> {
    let counts = count_columns(m.beside.iter().copied());
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = summary_header(&counts);
    w.write_record(&header)?;
    for s in &m.sections {
        for r in &s.ranked {
            let b = s.vs_baseline.iter().find(|b| b.tag == r.tag).and_then(|b| b.vs_baseline.as_ref());
            let x = &r.summary;
            let text = |t: &str| CsvCell::Text(Some(t.to_string()));
            let mut row = vec![text(&s.engine.to_string()), text(&s.workload.to_string()), text(&r.tag.to_string())];
            row.extend([
                CsvCell::Whole(Some(r.rank as u64)),
                CsvCell::Whole(Some(x.n as u64)),
                CsvCell::Float(Some(x.median)),
            ]);
            row.extend([CsvCell::Float(x.median_ci.map(|c| c.lo)), CsvCell::Float(x.median_ci.map(|c| c.hi))]);
            row.extend([x.mean, x.stddev, x.min, x.max].map(|v| CsvCell::Float(Some(v))));
            row.extend(counts.iter().map(|c| CsvCell::Float(r.per_entry.get(c).copied())));
            row.extend(parts(r.vs_fastest.as_ref()));
            row.extend(parts(b));
            row.extend(counts.iter().map(|c| CsvCell::Float(b.and_then(|d| d.counts.get(c)).map(|i| i.ratio))));
            row.extend([CsvCell::Flag(b.map(|d| d.time_only)), text(m.unit_of(s)), CsvCell::Float(s.layout_spread)]);
            w.serialize(row)?;
        }
    }
    let mut engines: Vec<Engine> = m.sections.iter().map(|s| s.engine).collect();
    engines.dedup();
    for n in &m.not_applicable {
        for (engine, tag) in engines.iter().flat_map(|e| n.units.iter().map(move |t| (*e, t))) {
            w.serialize(verdict_row(&header, (engine, n.workload, &tag.to_string()), "not applicable"))?;
        }
    }
    for d in m.died.iter().filter(|d| d.always()) {
        w.serialize(verdict_row(&header, (d.engine, d.workload, &d.unit.to_string()), "died"))?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// A summary row of a unit with no figure of the workload: its names, and the baseline
/// verdict that says why ("not applicable", "died").
fn verdict_row(header: &[String], (engine, workload, tag): (Engine, Workload, &str), verdict: &str) -> Vec<CsvCell> {
    let text = |t: String| CsvCell::Text(Some(t));
    let mut row: Vec<CsvCell> = header.iter().map(|_| CsvCell::Text(None)).collect();
    row[..3].clone_from_slice(&[text(engine.to_string()), text(workload.to_string()), text(tag.to_string())]);
    if let Some(at) = header.iter().position(|h| h == "vs_baseline_verdict") {
        row[at] = text(verdict.into());
    }
    row
}

pub fn samples(m: &ReportModel) -> Result<String> {
    let counts = count_columns(m.samples.iter().flat_map(|s| s.exact_metrics().collect::<Vec<_>>()));
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["round", "engine", "tag", "workload", "ns"].map(String::from).into();
    header.extend(counts.iter().map(|m| key(*m)));
    header.extend(["checksum", "counted", "layout"].map(String::from));
    w.write_record(header)?;
    for s in &m.samples {
        let text = |t: String| CsvCell::Text(Some(t));
        let mut row = vec![CsvCell::Whole(Some(s.round.into())), text(s.engine.to_string()), text(s.unit.to_string())];
        row.extend([text(s.workload.to_string()), CsvCell::Whole(Some(s.ns))]);
        row.extend(counts.iter().map(|c| CsvCell::Whole(s.total(*c))));
        row.extend([CsvCell::Text(s.checksum.map(|c| c.to_string())), CsvCell::Flag(Some(s.counted))]);
        row.push(CsvCell::Whole(s.layout.map(u64::from)));
        w.serialize(row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

impl Exporter for Csv {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        let mut out = vec![
            Output { suffix: "-summary.csv".into(), bytes: summaries(m)?.into_bytes() },
            Output { suffix: "-samples.csv".into(), bytes: samples(m)?.into_bytes() },
        ];
        out.extend(m.extras.files.iter().map(|f| Output { suffix: f.suffix.clone(), bytes: f.bytes.clone() }));
        Ok(out)
    }
}
