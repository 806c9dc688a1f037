//! CSV for scripts, written by the csv crate from serde rows: one file of summaries with
//! every delta, one of raw samples.

use anyhow::Result;
use serde::Serialize;

use super::json::ComparisonRecord;
use super::model::{Delta, ReportModel};
use super::{Exporter, Output};

pub struct Csv;

#[derive(Serialize)]
struct SummaryRow<'a> {
    engine: String,
    workload: String,
    tag: &'a str,
    rank: usize,
    n: usize,
    median: f64,
    median_lo: Option<f64>,
    median_hi: Option<f64>,
    mean: f64,
    stddev: f64,
    min: f64,
    max: f64,
    instructions_per_entry: Option<f64>,
    vs_fastest_ratio: Option<f64>,
    vs_fastest_lo: Option<f64>,
    vs_fastest_hi: Option<f64>,
    vs_fastest_verdict: Option<String>,
    vs_baseline_ratio: Option<f64>,
    vs_baseline_lo: Option<f64>,
    vs_baseline_hi: Option<f64>,
    vs_baseline_verdict: Option<String>,
    vs_baseline_instructions_ratio: Option<f64>,
    vs_baseline_time_only: Option<bool>,
    unit: &'static str,
    /// The section's: how much layout alone moves the time (None: not measured).
    layout_spread: Option<f64>,
}

/// A delta's ratio, interval and verdict (with "time only"), as the JSON record has them.
fn parts(d: Option<&Delta>) -> (Option<f64>, Option<f64>, Option<f64>, Option<String>) {
    match d.map(|d| (ComparisonRecord::from(d), d)) {
        None => (None, None, None, None),
        Some((c, d)) => (Some(c.ratio), c.ci_low, c.ci_high, Some(crate::report::cells::verdict(d))),
    }
}

pub fn summaries(m: &ReportModel) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for s in &m.sections {
        for r in &s.ranked {
            let b = s.vs_baseline.iter().find(|b| b.tag == r.tag).and_then(|b| b.vs_baseline.as_ref());
            let (fr, flo, fhi, fv) = parts(r.vs_fastest.as_ref());
            let (br, blo, bhi, bv) = parts(b);
            let x = &r.summary;
            w.serialize(SummaryRow {
                engine: s.engine.to_string(),
                workload: s.workload.to_string(),
                tag: &r.tag,
                rank: r.rank,
                n: x.n,
                median: x.median,
                median_lo: x.median_ci.map(|c| c.lo),
                median_hi: x.median_ci.map(|c| c.hi),
                mean: x.mean,
                stddev: x.stddev,
                min: x.min,
                max: x.max,
                instructions_per_entry: r.instructions_per_entry,
                vs_fastest_ratio: fr,
                vs_fastest_lo: flo,
                vs_fastest_hi: fhi,
                vs_fastest_verdict: fv,
                vs_baseline_ratio: br,
                vs_baseline_lo: blo,
                vs_baseline_hi: bhi,
                vs_baseline_verdict: bv,
                vs_baseline_instructions_ratio: b.and_then(|d| d.instructions.map(|i| i.ratio)),
                vs_baseline_time_only: b.map(|d| d.time_only),
                unit: m.unit_of(s),
                layout_spread: s.layout_spread,
            })?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

#[derive(Serialize)]
struct SampleRow<'a> {
    round: u32,
    engine: String,
    tag: &'a str,
    workload: String,
    ns: u64,
    instructions: Option<u64>,
    checksum: Option<String>,
    counted: bool,
    layout: Option<u32>,
}

pub fn samples(m: &ReportModel) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for s in &m.samples {
        w.serialize(SampleRow {
            round: s.round,
            engine: s.engine.to_string(),
            tag: &s.tag,
            workload: s.workload.to_string(),
            ns: s.ns,
            instructions: s.instructions,
            checksum: s.checksum.map(|c| c.to_string()),
            counted: s.counted,
            layout: s.layout,
        })?;
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
