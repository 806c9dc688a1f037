//! Time per commit: the lmdb suite's write rows under `--sync` time each mdb_txn_commit
//! (`Figures::commit_ns`); every commit of a unit's samples pooled, its percentiles by
//! `stats::latency`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{sorted, Key, PresetReport};
use crate::record::label::Label;
use crate::record::{Engine, Sample};
use crate::report::extras::{Cell, ExtraPart, ExtraTable};
use crate::stats::latency::{latency_of_counts, Latency};
use crate::workload::Workload;

/// One unit on one write row: every commit of its samples.
#[derive(Debug, Clone, Serialize)]
pub struct CommitRow {
    pub engine: Engine,
    pub workload: Workload,
    #[serde(serialize_with = "crate::record::label::as_text")]
    pub tag: Label,
    /// Samples that timed their commits.
    pub n: usize,
    /// Per commit, in microseconds.
    pub commit_us: Latency,
}

pub(super) fn rows(groups: &BTreeMap<Key, Vec<&Sample>>) -> Vec<CommitRow> {
    let rows = groups.iter().filter_map(|(k, ss)| row(k, ss)).collect();
    sorted(rows, |r: &CommitRow| (r.engine, r.workload, &r.tag))
}

fn row((engine, workload, tag): &Key, ss: &[&Sample]) -> Option<CommitRow> {
    let timed: Vec<&Sample> = ss.iter().copied().filter(|s| !s.figures.commit_ns.is_empty()).collect();
    let mut pooled: BTreeMap<u64, u64> = BTreeMap::new();
    for (ns, n) in timed.iter().flat_map(|s| &s.figures.commit_ns) {
        *pooled.entry(*ns).or_default() += n;
    }
    let pooled: Vec<(f64, u64)> = pooled.into_iter().map(|(ns, n)| (ns as f64, n)).collect();
    Some(CommitRow {
        engine: *engine,
        workload: *workload,
        tag: tag.clone(),
        n: timed.len(),
        commit_us: latency_of_counts(&pooled)?.scaled(1e-3),
    })
}

/// The part every format shows: a table per write row (and engine, when several).
pub(super) fn part(p: &PresetReport, heading: &dyn Fn(Engine, &str) -> String) -> ExtraPart {
    let columns = ["LMDB Tag", "commits", "p50 us", "p99 us", "max us", "mean us"];
    let tables = ExtraTable::by_workload(&p.commits, |r| (r.engine, r.workload), &columns, cells, heading);
    ExtraPart {
        title: "Time per commit".into(),
        about: "Each mdb_txn_commit of every timed pass, its syncs included, pooled per tag over its \
                samples, in microseconds (p50 and p99 by R's type 8 quantile, of buckets of two \
                significant digits). The clock is read around each commit inside the timed region, \
                into room made before the pass; a run asking how commits are made durable (--sync) \
                measures it, a count does not."
            .into(),
        tables,
        notes: Vec::new(),
    }
}

fn cells(r: &CommitRow) -> Vec<Cell> {
    let l = &r.commit_us;
    vec![
        Cell::Tag(r.tag.clone()),
        Cell::Text(l.n.to_string()),
        Cell::Num(l.p50),
        Cell::Num(l.p99),
        Cell::Num(l.max),
        Cell::Num(l.mean),
    ]
}
