//! The presets' tables as CSV for scripts: `-latency.csv` (open-get) and
//! `-resources.csv` (migrate), written only when the run has them.

use anyhow::Result;
use serde::Serialize;

use super::{LatencyRow, PresetReport, ResourceRow};
use crate::report::extras::DataFile;

#[derive(Serialize)]
struct LatencyCsvRow {
    engine: String,
    tag: String,
    cycles: usize,
    min_us: f64,
    mean_us: f64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
    write_ms: Option<f64>,
    db_bytes: Option<u64>,
}

#[derive(Serialize)]
struct ResourcesCsvRow<'a> {
    engine: String,
    workload: String,
    tag: String,
    n: Option<usize>,
    wall_ms: Option<f64>,
    user_ms: Option<f64>,
    sys_ms: Option<f64>,
    max_rss_mib: Option<f64>,
    major_faults: Option<f64>,
    minor_faults: Option<f64>,
    resident_percent: Option<f64>,
    cold_not_achieved: Option<&'a str>,
}

fn latency(rows: &[LatencyRow]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        let l = &r.latency_us;
        w.serialize(LatencyCsvRow {
            engine: r.engine.to_string(),
            tag: r.tag.to_string(),
            cycles: l.n,
            min_us: l.min,
            mean_us: l.mean,
            p50_us: l.p50,
            p99_us: l.p99,
            max_us: l.max,
            write_ms: r.write_ms,
            db_bytes: r.db_bytes,
        })?;
    }
    Ok(w.into_inner()?)
}

fn resources(rows: &[ResourceRow]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        let f = r.figures.as_ref();
        w.serialize(ResourcesCsvRow {
            engine: r.engine.to_string(),
            workload: r.workload.to_string(),
            tag: r.tag.to_string(),
            n: f.map(|f| f.n),
            wall_ms: f.map(|f| f.wall_ms),
            user_ms: f.map(|f| f.user_ms),
            sys_ms: f.map(|f| f.sys_ms),
            max_rss_mib: f.and_then(|f| f.max_rss_mib),
            major_faults: f.map(|f| f.major_faults),
            minor_faults: f.map(|f| f.minor_faults),
            resident_percent: f.and_then(|f| f.resident_percent),
            cold_not_achieved: r.cold_not_achieved.as_deref(),
        })?;
    }
    Ok(w.into_inner()?)
}

pub fn files(p: &PresetReport) -> Result<Vec<DataFile>> {
    let mut out = Vec::new();
    if !p.latency.is_empty() {
        out.push(DataFile { suffix: "-latency.csv".into(), bytes: latency(&p.latency)? });
    }
    if !p.resources.is_empty() {
        out.push(DataFile { suffix: "-resources.csv".into(), bytes: resources(&p.resources)? });
    }
    Ok(out)
}
