//! The presets' blocks in the outline (so Markdown, text and any outline renderer show
//! them): what the preset is, then its tables of latencies or resources.

use super::{LatencyRow, ResourceRow};
use crate::report::cells::{label, num, Cells};
use crate::report::model::ReportModel;
use crate::report::outline::Document;
use crate::runner::runfile::Engine;
use crate::workload::Workload;

/// The preset and its data, after the report's opening paragraph.
pub fn intro(d: &mut Document, m: &ReportModel) {
    let Some(p) = &m.preset else { return };
    d.para(format!("Preset {}: {}", p.preset, p.about));
    d.para(format!("Data: {}; {}.", p.dataset, p.settings));
}

/// The preset's own tables, after the verdict tables: one per engine (and migrate variant),
/// so each fits Bugzilla's 80 columns whole.
pub fn tables(d: &mut Document, m: &ReportModel) {
    let Some(p) = &m.preset else { return };
    if !p.latency.is_empty() {
        d.heading(1, "Open, Get, Close: latency");
        d.para(
            "Every cycle of every round pooled, per tag, in microseconds (p50 and p99 by R's type 8 \
             quantile). write: the median time to write the database, in ms (its section judges \
             it); size: the data file's allocated size on disk.",
        );
        for e in m.engines() {
            let rows: Vec<&LatencyRow> = p.latency.iter().filter(|r| r.engine == e).collect();
            if !rows.is_empty() {
                sub_heading(d, m, e, "Latency");
                d.table(latency_cells(m, &rows));
            }
        }
    }
    if !p.resources.is_empty() {
        d.heading(1, "Migration: resources");
        d.para(
            "Medians over the rounds, for the timed region only: wall, user and sys time in ms \
             (getrusage), peak RSS in MiB (VmHWM, reset before the region), major and minor page \
             faults, and the share of the source file in the page cache when the clock started. \
             Cold means synced and evicted with POSIX_FADV_DONTNEED, and mincore found none of it \
             cached; a round where pages stayed is no cold sample: \"cold not achieved\".",
        );
        let mut groups: Vec<(Engine, Workload)> = p.resources.iter().map(|r| (r.engine, r.workload)).collect();
        groups.dedup();
        for (e, w) in groups {
            let rows: Vec<&ResourceRow> = p.resources.iter().filter(|r| r.engine == e && r.workload == w).collect();
            sub_heading(d, m, e, w.title());
            d.table(resource_cells(m, &rows));
        }
        d.list(cold_notes(&p.resources));
    }
}

/// "Copy, Cold", or "Copy, Cold (c engine)" when both engines ran (as section titles).
fn sub_heading(d: &mut Document, m: &ReportModel, e: Engine, title: &str) {
    if m.engines().len() > 1 {
        d.heading(2, format!("{title} ({e} engine)"));
    } else {
        d.heading(2, title);
    }
}

pub fn latency_cells(m: &ReportModel, rows: &[&LatencyRow]) -> Cells {
    let mut c = Cells::new(&["LMDB Tag", "min", "mean", "p50", "p99", "max", "write ms", "size MB"], 0, 1);
    for r in rows {
        let l = &r.latency_us;
        let mut row = vec![label(&r.tag), num(l.min), num(l.mean), num(l.p50), num(l.p99), num(l.max)];
        row.push(r.write_ms.map(num).unwrap_or_else(|| "-".into()));
        row.push(r.db_bytes.map(|b| format!("{:.1}", b as f64 / 1e6)).unwrap_or_else(|| "-".into()));
        c.push(row, m.newest.as_deref() == Some(r.tag.as_str()));
    }
    c
}

pub fn resource_cells(m: &ReportModel, rows: &[&ResourceRow]) -> Cells {
    let header = ["LMDB Tag", "wall ms", "user ms", "sys ms", "RSS MiB", "major", "minor", "cached", "n"];
    let mut c = Cells::new(&header, 0, 1);
    for r in rows {
        let mut row = vec![label(&r.tag)];
        match &r.figures {
            Some(f) => row.extend([
                num(f.wall_ms),
                num(f.user_ms),
                num(f.sys_ms),
                f.max_rss_mib.map(|x| format!("{x:.1}")).unwrap_or_else(|| "n/a".into()),
                format!("{:.0}", f.major_faults),
                format!("{:.0}", f.minor_faults),
                f.resident_percent.map(|p| format!("{p:.0}%")).unwrap_or_else(|| "-".into()),
                f.n.to_string(),
            ]),
            None => {
                row.push("cold not achieved".into());
                row.extend(std::iter::repeat_n("-".to_string(), header.len() - 2));
            }
        }
        c.push(row, m.newest.as_deref() == Some(r.tag.as_str()));
    }
    c
}

/// Rows whose cold rounds (some or all) kept pages in the cache, with the worker's words.
fn cold_notes(rows: &[ResourceRow]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            let why = r.cold_not_achieved.as_deref()?;
            let some = if r.figures.is_some() { "some rounds" } else { "every round" };
            Some(format!("{} {} ({} engine), {some}: {why}", label(&r.tag), r.workload.title(), r.engine))
        })
        .collect()
}
