//! A run specification: everything a run is started from. `run`, `resume`, the counting
//! pass, the layout check, `layouts`, `bisect` and `its-10406` (through `run`) each make
//! one, and only a specification makes a run file's header or a schedule.

use std::collections::BTreeMap;

use anyhow::Result;

use super::adaptive::Progress;
use super::counter::{self, Counter};
use super::{Label, Unit};
use crate::record::{Engine, Failure, FailureStage, Header, Metric, Plan, ReferenceLayouts, Sample, TagStatus, Target};
use crate::workload::{SyncMode, Workload, WorkloadConfig};

/// The judgement the stop rules and adaptive rounds need, which statistics provide
/// (`stats::stop::progress`): which comparisons with the baseline `samples` (their tags
/// rendered from `labels`' values) leave undecided and unresolved to within ±`target`
/// percent (when given), judged by `metric` and `min_effect`, and how far each is from it,
/// against the rounds the run can still afford (when known); and, where the plan leaves it
/// to them (`--reference-layouts auto`), how many layouts of the reference to hold.
pub type Judge = fn(&[Sample], Option<&str>, Option<Target>, (Metric, f64), Option<f64>, ReferenceLayouts) -> Progress;

/// What to measure, on what data, by which plan, counted by what, and how many workers at
/// once for untimed and counted work (timed rounds: always one); with the judgement its
/// plan's `target_ci` and adaptive rounds go by.
pub struct RunSpec {
    pub units: Vec<Unit>,
    pub workloads: Vec<Workload>,
    pub engines: Vec<Engine>,
    pub config: WorkloadConfig,
    pub plan: Plan,
    /// Set when the plan's metric is instructions.
    pub counter: Option<Counter>,
    pub jobs: usize,
    pub judge: Judge,
}

impl RunSpec {
    /// The specification a run file's header records, measured now by `units` (built
    /// again), with `jobs` workers at once, judged by `judge`.
    pub fn recorded(h: &Header, units: Vec<Unit>, jobs: usize, judge: Judge) -> Result<RunSpec> {
        Ok(RunSpec {
            units,
            workloads: h.workloads.clone(),
            engines: h.engines.clone(),
            config: h.config.clone(),
            plan: h.plan.clone(),
            counter: instruction_counter(&h.plan)?,
            jobs,
            judge,
        })
    }

    /// The header of a new run of this specification on this machine, listing `tags`,
    /// declaring every unit the run can name (the tags', built or not, and its units':
    /// controls, a study's layouts) and where each unit keeps its data files; refused
    /// before any run file is written when a unit's place cannot serve it.
    pub fn header(&self, tags: Vec<TagStatus>) -> Result<Header> {
        let labels = tags.iter().map(|t| &t.label);
        let units: Vec<Label> = labels.chain(self.units.iter().map(|u| &u.label)).cloned().collect();
        let (config, workloads, engines) = (self.config.clone(), self.workloads.clone(), self.engines.clone());
        let plan = Plan { passes: self.passes(), ..self.plan.clone() };
        let header = Header::new(config, workloads, engines, plan, tags, &units);
        let counter = self.counter.as_ref().map(|c| describe_counters(c, &self.engines));
        let places = self.placement(self.units.iter().map(|u| &u.label))?.places();
        Ok(Header { instruction_counter: counter, places, ..header })
    }

    /// The workloads that make more than one pass an iteration in this run, and how many,
    /// as its workers decide it (`Workload::passes`): commits are timed where a worker is
    /// told a sync mode (a unit's, or the run's one other than nosync) and counts nothing.
    fn passes(&self) -> BTreeMap<Workload, u32> {
        let told = self.config.sync != SyncMode::Nosync || self.units.iter().any(|u| u.label.sync.is_some());
        let commits_timed = told && self.counter.is_none();
        let passes = self.workloads.iter().map(|&w| (w, w.passes(self.config.entries, commits_timed)));
        passes.filter(|&(_, p)| p > 1).collect()
    }

    /// This specification's `workloads` counted once per unit by `counter`, on `entries`
    /// entries of its data, from the fixed builds.
    pub(super) fn counting(&self, workloads: Vec<Workload>, entries: u32, counter: Counter) -> Result<RunSpec> {
        Ok(RunSpec {
            units: self.units.clone(),
            config: self.config.with_entries(&workloads, entries)?,
            workloads,
            engines: self.engines.clone(),
            plan: self.plan.counting(),
            counter: Some(counter),
            jobs: self.jobs,
            judge: self.judge,
        })
    }

    /// Whether `w` runs on `u`: a row, or a sync mode (the unit's, else the run's), that
    /// asks for what `u`'s LMDB has not got does not (the report says so once, from the
    /// run's header); a unit of unknown version runs it.
    pub(super) fn applies(&self, u: &Unit, w: Workload) -> bool {
        let sync = u.label.sync.unwrap_or(self.config.sync);
        crate::manifest::reported_version(&u.version).is_none_or(|v| w.applies_to(v, sync).is_ok())
    }

    /// This specification's read workloads.
    pub(super) fn reads(&self) -> Vec<Workload> {
        self.workloads.iter().copied().filter(|w| w.is_read()).collect()
    }

    /// A unit's failure as the run file records it; a full map says what map would do.
    pub(super) fn failure(&self, u: &Unit, workload: Option<Workload>, stage: FailureStage, error: String) -> Failure {
        let error = match error.contains("MDB_MAP_FULL") {
            false => error,
            true if self.workloads.iter().any(|w| w.suite().preset().is_some()) => {
                format!("{error} (the map is too small for this data: give a larger --map-size)")
            }
            true => format!(
                "{error} (the map of {} bytes is too small for this data: give --map-size {} or more, or leave it out)",
                self.config.effective_map_size(),
                self.config.roomy_map_size()
            ),
        };
        Failure {
            round: None,
            engine: u.engine,
            unit: u.label.clone(),
            workload,
            stage,
            error,
            died: false,
            cause: None,
        }
    }
}

/// The counter a plan's rounds need, or None for time.
pub fn instruction_counter(plan: &Plan) -> Result<Option<Counter>> {
    match plan.metric.is_exact() {
        false => Ok(None),
        true => Ok(Some(counter::detect(plan.simulates_caches())?)),
    }
}

/// How the header says instructions are counted: perf only inside the Rust worker.
fn describe_counters(c: &Counter, engines: &[Engine]) -> String {
    match c {
        Counter::Perf if engines.contains(&Engine::C) => {
            format!("rust: {}; c: valgrind callgrind (--toggle-collect on the timed functions)", c.describe())
        }
        _ => c.describe(),
    }
}
