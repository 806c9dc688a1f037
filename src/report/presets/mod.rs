//! The presets' figures beside the verdicts: open-get's latency distribution, its
//! database's size on disk and time to write; migrate's resources, warm and cold. Built
//! from the run's samples with `stats` ([`PresetReport`]), then made the model's extra
//! content by [`content`] (tables, charts, and the [`csv`] files), which every format
//! renders; JSON carries the rows as they are.

pub mod commits;
pub mod content;
pub mod crew;
pub mod csv;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::label::{as_text, Label};
use crate::record::{Engine, FailureCause, RunData, Sample};
use crate::stats::latency::{self, Latency};
use crate::stats::median;
use crate::workload::presets::{self, Preset, PresetWorkload};
use crate::workload::suite::Suite;
use crate::workload::Workload;

#[derive(Debug, Clone, Serialize)]
pub struct PresetReport {
    pub preset: String,
    pub about: String,
    pub dataset: String,
    /// Environment flags, map size and the preset's own settings.
    pub settings: String,
    pub latency: Vec<LatencyRow>,
    pub resources: Vec<ResourceRow>,
    /// Readers beside a writer (`--suite concurrency`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crews: Vec<crew::CrewRow>,
    /// Time per commit of the lmdb suite's write rows (`--sync` time runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<commits::CommitRow>,
}

/// open-get on one tag and engine: every cycle of every round pooled.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyRow {
    pub engine: Engine,
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    /// Per cycle, in microseconds.
    pub latency_us: Latency,
    /// Median time to write the database, in milliseconds.
    pub write_ms: Option<f64>,
    /// Median size of the data file on disk.
    pub db_bytes: Option<u64>,
}

/// One migrate variant on one tag and engine: medians over its samples.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceRow {
    pub engine: Engine,
    pub workload: Workload,
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    /// None when no round of a cold variant achieved cold.
    pub figures: Option<Resources>,
    /// Why some rounds (all, without `figures`) have no sample: the file stayed cached.
    pub cold_not_achieved: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Resources {
    pub n: usize,
    pub wall_ms: f64,
    pub user_ms: f64,
    pub sys_ms: f64,
    /// None where the kernel would not reset the peak.
    pub max_rss_mib: Option<f64>,
    pub major_faults: f64,
    pub minor_faults: f64,
    /// The source file's pages in the page cache before the clock started, in percent.
    pub resident_percent: Option<f64>,
}

type Key = (Engine, Workload, Label);

/// The preset's report, or None for a run of LmdbJava's workloads.
pub fn build(data: &RunData) -> Option<PresetReport> {
    let preset = Suite::of(&data.header.workloads).ok()?.preset()?;
    let mut groups: BTreeMap<Key, Vec<&Sample>> = BTreeMap::new();
    for s in data.samples.iter().filter(|s| !s.counted) {
        groups.entry((s.engine, s.workload, s.unit.clone())).or_default().push(s);
    }
    Some(PresetReport {
        preset: preset.name().into(),
        about: preset.about().into(),
        dataset: preset.dataset(&data.header.config),
        settings: preset.settings(&data.header.config),
        latency: if preset == Preset::OpenGet { latency_rows(&groups) } else { Vec::new() },
        resources: if preset == Preset::Migrate { resource_rows(&groups, data) } else { Vec::new() },
        crews: if preset == Preset::Concurrency { crew::rows(&groups) } else { Vec::new() },
        commits: if preset == Preset::Lmdb { commits::rows(&groups) } else { Vec::new() },
    })
}

fn sorted<T>(mut rows: Vec<T>, key: impl Fn(&T) -> (Engine, Workload, &Label)) -> Vec<T> {
    rows.sort_by(|a, b| {
        let (x, y) = (key(a), key(b));
        (x.0, x.1, x.2.release_key()).cmp(&(y.0, y.1, y.2.release_key()))
    });
    rows
}

fn median_of(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = xs.collect();
    (!v.is_empty()).then(|| median(&v))
}

fn latency_rows(groups: &BTreeMap<Key, Vec<&Sample>>) -> Vec<LatencyRow> {
    let open_get = Workload::Preset(PresetWorkload::OpenGet);
    let write = Workload::Preset(PresetWorkload::OpenGetWrite);
    let rows = groups
        .iter()
        .filter(|((_, w, _), _)| *w == open_get)
        .filter_map(|((engine, _, tag), ss)| {
            let cycles: Vec<f64> = ss.iter().flat_map(|s| &s.figures.latencies_ns).map(|&ns| ns as f64).collect();
            let writes = groups.get(&(*engine, write, tag.clone())).map(Vec::as_slice).unwrap_or_default();
            let sizes = ss.iter().chain(writes).filter_map(|s| s.figures.db_bytes.map(|b| b as f64));
            Some(LatencyRow {
                engine: *engine,
                tag: tag.clone(),
                latency_us: latency::latency(&cycles)?.scaled(1e-3),
                write_ms: median_of(writes.iter().map(|s| s.ms())),
                db_bytes: median_of(sizes).map(|b| b as u64),
            })
        })
        .collect();
    sorted(rows, |r: &LatencyRow| (r.engine, open_get, &r.tag))
}

fn resources(ss: &[&Sample]) -> Resources {
    let usage: Vec<_> = ss.iter().filter_map(|s| s.figures.usage).collect();
    let of = |f: fn(&presets::Usage) -> f64| median_of(usage.iter().map(f)).unwrap_or(f64::NAN);
    Resources {
        n: ss.len(),
        wall_ms: median_of(ss.iter().map(|s| s.ms())).unwrap_or(f64::NAN),
        user_ms: of(|u| u.user_us as f64 / 1e3),
        sys_ms: of(|u| u.sys_us as f64 / 1e3),
        max_rss_mib: median_of(usage.iter().filter_map(|u| u.max_rss_kib).map(|k| k as f64 / 1024.0)),
        major_faults: of(|u| u.major_faults as f64),
        minor_faults: of(|u| u.minor_faults as f64),
        resident_percent: median_of(
            ss.iter()
                .filter_map(|s| s.figures.resident)
                .map(|r| 100.0 * r.resident_pages as f64 / r.total_pages.max(1) as f64),
        ),
    }
}

fn resource_rows(groups: &BTreeMap<Key, Vec<&Sample>>, data: &RunData) -> Vec<ResourceRow> {
    // Rounds whose cold variant never got its file out of the cache left no sample.
    let mut cold: BTreeMap<Key, &str> = BTreeMap::new();
    for f in data.failures.iter().filter(|f| f.cause == Some(FailureCause::ColdNotAchieved)) {
        if let Some(w) = f.workload {
            cold.entry((f.engine, w, f.unit.clone())).or_insert(&f.error);
        }
    }
    let keys: std::collections::BTreeSet<Key> = groups.keys().chain(cold.keys()).cloned().collect();
    let rows = keys
        .into_iter()
        .map(|k| ResourceRow {
            engine: k.0,
            workload: k.1,
            tag: k.2.clone(),
            figures: groups.get(&k).map(|ss| resources(ss)),
            cold_not_achieved: cold.get(&k).map(|e| e.to_string()),
        })
        .collect();
    sorted(rows, |r: &ResourceRow| (r.engine, r.workload, &r.tag))
}
