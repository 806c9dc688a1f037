//! Readers beside a writer: each unit's reader and writer throughput, its scaling against
//! one reader, and its get latency, from the crews' figures every sample carries
//! (`workload::concurrent::CrewFigures`); medians over samples, percentiles of every get
//! pooled (`stats::latency`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{median_of, sorted, Key, PresetReport};
use crate::record::label::Label;
use crate::record::{Engine, Sample};
use crate::report::extras::{Cell, ExtraPart, ExtraTable};
use crate::stats::latency::{latency_of_counts, Latency};
use crate::workload::Workload;

/// One unit on one workload: medians over its samples.
#[derive(Debug, Clone, Serialize)]
pub struct CrewRow {
    pub engine: Engine,
    pub workload: Workload,
    #[serde(serialize_with = "crate::record::label::as_text")]
    pub tag: Label,
    pub readers: u32,
    pub n: usize,
    /// Gets per second by all readers together, and by one reader thread.
    pub reader_ops_per_s: f64,
    pub reader_ops_per_s_per_thread: f64,
    /// Its readers' gets per second over the same build's with one reader.
    pub scaling: Option<f64>,
    /// Puts per second of the writer's own time.
    pub writer_ops_per_s: Option<f64>,
    /// Every get of every sample, in nanoseconds.
    pub get_ns: Option<Latency>,
}

pub(super) fn rows(groups: &BTreeMap<Key, Vec<&Sample>>) -> Vec<CrewRow> {
    let mut rows: Vec<CrewRow> = groups.iter().filter_map(|(k, ss)| row(k, ss)).collect();
    // A build's rows differ by their reader count alone.
    let build = |r: &CrewRow| (r.engine, r.workload, Label { readers: None, ..r.tag.clone() });
    let alone: BTreeMap<(Engine, Workload, Label), f64> =
        rows.iter().filter(|r| r.readers == 1).map(|r| (build(r), r.reader_ops_per_s)).collect();
    for r in &mut rows {
        r.scaling = alone.get(&build(r)).map(|a| r.reader_ops_per_s / a);
    }
    sorted(rows, |r: &CrewRow| (r.engine, r.workload, &r.tag))
}

fn row((engine, workload, tag): &Key, ss: &[&Sample]) -> Option<CrewRow> {
    let crews: Vec<_> = ss.iter().filter_map(|s| s.figures.crew.as_ref()).collect();
    let first = crews.first()?;
    let mut pooled: BTreeMap<u64, u64> = BTreeMap::new();
    for (ns, n) in crews.iter().flat_map(|c| &c.latency_ns) {
        *pooled.entry(*ns).or_default() += n;
    }
    let pooled: Vec<(f64, u64)> = pooled.into_iter().map(|(ns, n)| (ns as f64, n)).collect();
    Some(CrewRow {
        engine: *engine,
        workload: *workload,
        tag: tag.clone(),
        readers: first.readers,
        n: crews.len(),
        reader_ops_per_s: median_of(crews.iter().map(|c| c.reader_ops_per_s().0))?,
        reader_ops_per_s_per_thread: median_of(crews.iter().map(|c| c.reader_ops_per_s().1))?,
        scaling: None,
        writer_ops_per_s: median_of(crews.iter().filter_map(|c| c.writer_ops_per_s())),
        get_ns: latency_of_counts(&pooled),
    })
}

/// The part every format shows: a table per workload (and engine, when several).
pub(super) fn part(p: &PresetReport, heading: &dyn Fn(Engine, &str) -> String) -> ExtraPart {
    let columns = ["LMDB Tag", "gets/s", "gets/s a reader", "vs 1 reader", "puts/s", "get p50 ns", "p99 ns", "max ns"];
    let tables = ExtraTable::by_workload(&p.crews, |r| (r.engine, r.workload), &columns, cells, heading);
    ExtraPart {
        title: "Readers beside a writer: throughput and latency".into(),
        about: "Medians over each tag's samples: gets per second by all its readers and by one reader \
                thread, that against the same build with one reader, and the writer's puts per second \
                of its own time; every get of every sample pooled for its latency (p50 and p99 by R's \
                type 8 quantile, of buckets of two significant digits)."
            .into(),
        tables,
        notes: Vec::new(),
    }
}

fn cells(r: &CrewRow) -> Vec<Cell> {
    let num = |v: Option<f64>| v.map_or_else(|| Cell::Text("-".into()), Cell::Num);
    let l = r.get_ns.as_ref();
    vec![
        Cell::Tag(r.tag.clone()),
        Cell::Num(r.reader_ops_per_s),
        Cell::Num(r.reader_ops_per_s_per_thread),
        Cell::Text(r.scaling.map_or_else(|| "-".into(), |s| format!("{s:.2}x"))),
        num(r.writer_ops_per_s),
        num(l.map(|l| l.p50)),
        num(l.map(|l| l.p99)),
        num(l.map(|l| l.max)),
    ]
}
