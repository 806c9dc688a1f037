//! The presets' charts: open-get's latency per tag (p50, min to p99, mean), one chart per
//! engine, drawn like the sections' charts.

use anyhow::Result;

use crate::report::model::ReportModel;
use crate::report::svg::{whiskers, Whisker};
use crate::report::Output;

pub fn charts(m: &ReportModel) -> Vec<Result<Output>> {
    let Some(p) = &m.preset else { return Vec::new() };
    let mut engines: Vec<_> = p.latency.iter().map(|r| r.engine).collect();
    engines.dedup();
    engines
        .iter()
        .map(|&engine| {
            let columns: Vec<Whisker> = p
                .latency
                .iter()
                .filter(|r| r.engine == engine)
                .map(|r| Whisker {
                    tag: r.tag.clone(),
                    lo: r.latency_us.min,
                    mid: r.latency_us.p50,
                    hi: r.latency_us.p99,
                    mark: r.latency_us.mean,
                    newest: m.newest.as_deref() == Some(r.tag.as_str()),
                })
                .collect();
            let suffix = if engines.len() > 1 { format!("-latency-{engine}.svg") } else { "-latency.svg".into() };
            let title = format!("Open, Get, Close ({engine} engine) — p50 per cycle, min to p99, × mean");
            Ok(Output { suffix, bytes: whiskers(&title, "us/cycle", &columns)?.into_bytes() })
        })
        .collect()
}
