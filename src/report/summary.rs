//! `run --summary-json`: one object per (engine, tag, workload), for scripts. Its counts
//! per operation are the report's: [`RunData::per_op`], the one "per operation".

use std::collections::BTreeMap;

use crate::record::{Engine, Label, RunData, Sample};
use crate::workload::Workload;

/// One (engine, tag, workload); names are a script interface. Times are those of the timed
/// rounds (null in a run of an exact metric, where they were taken under the counter);
/// counts come from the instruction run or the counting pass.
#[derive(Debug, serde::Serialize)]
pub struct SummaryRow {
    pub engine: String,
    pub tag: String,
    pub workload: String,
    /// Samples in the run's metric.
    pub n: usize,
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    /// Instructions of the whole timed region.
    pub median_instructions: Option<f64>,
    /// Instructions per operation of the workload, as the report shows them: per entry,
    /// and per cycle for open-get's openGet (the name is kept for scripts).
    pub instructions_per_entry: Option<f64>,
    pub checksum: Option<String>,
    pub failures: usize,
}

type Key = (Engine, Label, Workload);

/// One group's samples: times, and counts (the whole region's and per operation).
#[derive(Default)]
struct SummaryGroup {
    ms: Vec<f64>,
    counts: Vec<f64>,
    per_op: Vec<f64>,
    checksum: Option<String>,
}

pub fn summary_json(data: &RunData) -> Vec<SummaryRow> {
    let timed = !data.header.plan.metric.is_exact();
    let mut groups: BTreeMap<Key, SummaryGroup> = BTreeMap::new();
    for s in &data.samples {
        let g = groups.entry((s.engine, s.unit.clone(), s.workload)).or_default();
        add(g, data, s, timed);
    }
    for f in &data.failures {
        let reads = || data.header.workloads.iter().copied().filter(|w| w.is_read()).collect::<Vec<Workload>>();
        for w in f.workload.map(|w| vec![w]).unwrap_or_else(reads) {
            groups.entry((f.engine, f.unit.clone(), w)).or_default();
        }
    }
    let mut rows: Vec<SummaryRow> = groups.into_iter().map(|(key, g)| row(data, key, g, timed)).collect();
    // Scripts read the rows in the order of their names.
    rows.sort_by(|a, b| (&a.engine, &a.tag, &a.workload).cmp(&(&b.engine, &b.tag, &b.workload)));
    rows
}

fn add(g: &mut SummaryGroup, data: &RunData, s: &Sample, timed: bool) {
    use crate::record::Metric::Instructions;
    if timed && !s.counted {
        g.ms.push(s.ms());
    }
    if s.counted || !timed {
        if let (Some(total), Some(per_op)) = (s.total(Instructions), data.per_op(s, Instructions)) {
            g.counts.push(total as f64);
            g.per_op.push(per_op);
        }
    }
    if g.checksum.is_none() && !s.counted {
        g.checksum = s.checksum.map(|c| c.to_string());
    }
}

fn row(data: &RunData, (engine, tag, workload): Key, g: SummaryGroup, timed: bool) -> SummaryRow {
    let s = crate::stats::summarize(&g.ms);
    let median = |v: &[f64]| (!v.is_empty()).then(|| crate::stats::median(v));
    let failures = data
        .failures
        .iter()
        .filter(|f| f.engine == engine && f.unit == tag && f.workload.is_none_or(|w| w == workload))
        .count();
    SummaryRow {
        n: if timed { g.ms.len() } else { g.counts.len() },
        median_ms: s.as_ref().map(|s| s.median),
        min_ms: s.as_ref().map(|s| s.min),
        median_instructions: median(&g.counts),
        instructions_per_entry: median(&g.per_op),
        checksum: g.checksum,
        failures,
        engine: engine.to_string(),
        tag: tag.to_string(),
        workload: workload.to_string(),
    }
}
