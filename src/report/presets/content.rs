//! The presets' content as the model carries it ([`Extras`]): what the preset is, then its
//! tables of latencies or resources, open-get's latency chart per engine, and the CSV
//! files. Data only: the formats lay it out through the outline.

use anyhow::Result;

use super::{LatencyRow, PresetReport, ResourceRow};
use crate::record::{Engine, Label, RunData};
use crate::report::extras::{Cell, ExtraChart, ExtraPart, ExtraTable, Extras, Whisker};
use crate::workload::Workload;

/// The run's extra content: a preset's, or none for LmdbJava's six. `engines` are the
/// report's (one sub-heading per engine when there are several); `newest` is marked.
pub fn extras(data: &RunData, engines: &[Engine], newest: Option<&Label>) -> Result<Extras> {
    let Some(p) = super::build(data) else { return Ok(Extras::default()) };
    let mut x = Extras {
        intro: vec![format!("Preset {}: {}", p.preset, p.about), format!("Data: {}; {}.", p.dataset, p.settings)],
        files: super::csv::files(&p)?,
        ..Extras::default()
    };
    let heading = |e: Engine, title: &str| match engines.len() > 1 {
        true => format!("{title} ({e} engine)"),
        false => title.to_string(),
    };
    if !p.latency.is_empty() {
        let part = latency_part(&p, &mut x.charts, engines, newest, &heading);
        x.parts.push(part);
    }
    if !p.resources.is_empty() {
        x.parts.push(resources_part(&p, &heading));
    }
    if !p.crews.is_empty() {
        x.parts.push(super::crew::part(&p, &heading));
    }
    if !p.commits.is_empty() {
        x.parts.push(super::commits::part(&p, &heading));
    }
    x.preset = Some(p);
    Ok(x)
}

/// open-get's latency: one table per engine, each with its chart.
fn latency_part(
    p: &PresetReport,
    charts: &mut Vec<ExtraChart>,
    engines: &[Engine],
    newest: Option<&Label>,
    heading: &dyn Fn(Engine, &str) -> String,
) -> ExtraPart {
    let mut charted: Vec<Engine> = p.latency.iter().map(|r| r.engine).collect();
    charted.dedup();
    let mut tables = Vec::new();
    for &e in engines {
        let rows: Vec<&LatencyRow> = p.latency.iter().filter(|r| r.engine == e).collect();
        if rows.is_empty() {
            continue;
        }
        let suffix = if charted.len() > 1 { format!("-latency-{e}.svg") } else { "-latency.svg".into() };
        charts.push(latency_chart(e, &rows, suffix, newest));
        let columns = ["LMDB Tag", "min", "mean", "p50", "p99", "max", "write ms", "size MB"];
        tables.push(ExtraTable {
            heading: heading(e, "Latency"),
            columns: columns.map(String::from).to_vec(),
            rows: rows.iter().map(|r| latency_cells(r)).collect(),
            chart: Some(charts.len() - 1),
        });
    }
    ExtraPart {
        title: "Open, Get, Close: latency".into(),
        about: "Every cycle of every round pooled, per tag, in microseconds (p50 and p99 by R's type 8 \
             quantile). write: the median time to write the database, in ms (its section judges \
             it); size: the data file's allocated size on disk."
            .into(),
        tables,
        notes: Vec::new(),
    }
}

fn latency_cells(r: &LatencyRow) -> Vec<Cell> {
    let l = &r.latency_us;
    let mut row = vec![Cell::Tag(r.tag.clone())];
    row.extend([l.min, l.mean, l.p50, l.p99, l.max].map(Cell::Num));
    row.push(r.write_ms.map(Cell::Num).unwrap_or_else(|| Cell::Text("-".into())));
    row.push(Cell::Text(r.db_bytes.map(|b| format!("{:.1}", b as f64 / 1e6)).unwrap_or_else(|| "-".into())));
    row
}

/// p50 per cycle, min to p99, × mean, per tag, as the sections' charts are drawn.
fn latency_chart(engine: Engine, rows: &[&LatencyRow], suffix: String, newest: Option<&Label>) -> ExtraChart {
    let columns = rows
        .iter()
        .map(|r| Whisker {
            tag: r.tag.to_string(),
            lo: r.latency_us.min,
            mid: r.latency_us.p50,
            hi: r.latency_us.p99,
            mark: r.latency_us.mean,
            newest: newest == Some(&r.tag),
        })
        .collect();
    ExtraChart {
        suffix,
        title: format!("Open, Get, Close ({engine} engine) — p50 per cycle, min to p99, × mean"),
        unit: "us/cycle".into(),
        columns,
    }
}

/// migrate's resources: one table per engine and variant, so each fits Bugzilla's 80
/// columns whole, then the rounds that stayed cached.
fn resources_part(p: &PresetReport, heading: &dyn Fn(Engine, &str) -> String) -> ExtraPart {
    let mut groups: Vec<(Engine, Workload)> = p.resources.iter().map(|r| (r.engine, r.workload)).collect();
    groups.dedup();
    let columns = ["LMDB Tag", "wall ms", "user ms", "sys ms", "RSS MiB", "major", "minor", "cached", "n"];
    let tables = groups
        .into_iter()
        .map(|(e, w)| ExtraTable {
            heading: heading(e, w.title()),
            columns: columns.map(String::from).to_vec(),
            rows: p.resources.iter().filter(|r| r.engine == e && r.workload == w).map(resource_cells).collect(),
            chart: None,
        })
        .collect();
    ExtraPart {
        title: "Migration: resources".into(),
        about: "Medians over the rounds, for the timed region only: wall, user and sys time in ms \
             (getrusage), peak RSS in MiB (VmHWM, reset before the region), major and minor page \
             faults, and the share of the source file in the page cache when the clock started. \
             Cold means synced and evicted with POSIX_FADV_DONTNEED, and mincore found none of it \
             cached; a round where pages stayed is no cold sample: \"cold not achieved\"."
            .into(),
        tables,
        notes: cold_notes(&p.resources),
    }
}

fn resource_cells(r: &ResourceRow) -> Vec<Cell> {
    let mut row = vec![Cell::Tag(r.tag.clone())];
    match &r.figures {
        Some(f) => row.extend([
            Cell::Num(f.wall_ms),
            Cell::Num(f.user_ms),
            Cell::Num(f.sys_ms),
            Cell::Text(f.max_rss_mib.map(|x| format!("{x:.1}")).unwrap_or_else(|| "n/a".into())),
            Cell::Text(format!("{:.0}", f.major_faults)),
            Cell::Text(format!("{:.0}", f.minor_faults)),
            Cell::Text(f.resident_percent.map(|p| format!("{p:.0}%")).unwrap_or_else(|| "-".into())),
            Cell::Text(f.n.to_string()),
        ]),
        None => {
            row.push(Cell::Text("cold not achieved".into()));
            row.extend(std::iter::repeat_n(Cell::Text("-".into()), 7));
        }
    }
    row
}

/// Rows whose cold rounds (some or all) kept pages in the cache, with the worker's words.
fn cold_notes(rows: &[ResourceRow]) -> Vec<(Label, String)> {
    rows.iter()
        .filter_map(|r| {
            let why = r.cold_not_achieved.as_deref()?;
            let some = if r.figures.is_some() { "some rounds" } else { "every round" };
            Some((r.tag.clone(), format!("{} ({} engine), {some}: {why}", r.workload.title(), r.engine)))
        })
        .collect()
}
