//! A run specification: everything a run is started from. `run`, `resume`, the counting
//! pass, the layout check, `layouts`, `bisect` and `its-10406` (through `run`) each make
//! one, and only a specification makes a run file's header or a schedule.

use anyhow::Result;

use super::counter::{self, Counter};
use super::runfile::{Engine, Header, Metric, Plan, RunWriter, Sample, TagStatus};
use super::schedule::{interrupt_flag, Outcome, Schedule, StopWhen};
use super::{Label, Unit};
use crate::workload::{Workload, WorkloadConfig};

/// What to measure, on what data, by which plan, counted by what, and how many workers at
/// once for untimed and counted work (timed rounds: always one).
pub struct RunSpec {
    pub units: Vec<Unit>,
    pub workloads: Vec<Workload>,
    pub engines: Vec<Engine>,
    pub config: WorkloadConfig,
    pub plan: Plan,
    /// Set when the plan's metric is instructions.
    pub counter: Option<Counter>,
    pub jobs: usize,
}

impl RunSpec {
    /// The specification a run file's header records, measured now by `units` (built
    /// again), with `jobs` workers at once.
    pub fn recorded(h: &Header, units: Vec<Unit>, jobs: usize) -> Result<RunSpec> {
        Ok(RunSpec {
            units,
            workloads: h.workloads.clone(),
            engines: h.engines.clone(),
            config: h.config.clone(),
            plan: h.plan.clone(),
            counter: instruction_counter(h.plan.metric)?,
            jobs,
        })
    }

    /// The header of a new run of this specification on this machine, listing `tags`
    /// (`labels`: the value each tag's label was rendered from) and declaring every unit
    /// the run can name: the tags' (built or not) and its units' (controls, a study's
    /// layouts).
    pub fn header(&self, tags: Vec<TagStatus>, labels: &[Label]) -> Header {
        debug_assert!(
            tags.len() == labels.len() && tags.iter().zip(labels).all(|(t, l)| t.tag == l.to_string()),
            "each tag comes with the value of its label"
        );
        let units: Vec<Label> = labels.iter().chain(self.units.iter().map(|u| &u.label)).cloned().collect();
        let (config, workloads, engines) = (self.config.clone(), self.workloads.clone(), self.engines.clone());
        let header = Header::new(config, workloads, engines, self.plan.clone(), tags, &units);
        let counter = self.counter.as_ref().map(|c| describe_counters(c, &self.engines));
        Header { instruction_counter: counter, ..header }
    }

    /// A new run from its first round, ended by its plan or Ctrl-C.
    pub fn start(&self, w: &mut RunWriter) -> Result<Outcome> {
        self.schedule(0, Vec::new(), None).execute(w)
    }

    /// A new run that `stop` also ends ("decided") when it holds after a measured round.
    pub fn start_until(&self, stop: &StopWhen<'_>, w: &mut RunWriter) -> Result<Outcome> {
        self.schedule(0, Vec::new(), Some(stop)).execute(w)
    }

    /// Continues a run at `start_round`; `prior` are its samples so far.
    pub fn resume(&self, start_round: u32, prior: Vec<Sample>, w: &mut RunWriter) -> Result<Outcome> {
        self.schedule(start_round, prior, None).execute(w)
    }

    /// The instruction-counting pass the plan asks for after the timed rounds (every unit
    /// once, on every core, its samples marked `counted`), if a counter is at hand.
    pub fn count_pass(&self, w: &mut RunWriter) -> Result<()> {
        let Some(entries) = self.plan.count_entries else { return Ok(()) };
        let counter = match counter::detect() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("no instruction counts beside time: {e:#}");
                return Ok(());
            }
        };
        let pass = self.counting(self.workloads.clone(), entries, counter)?;
        eprintln!("counting instructions: every unit once, {entries} entries");
        pass.counted_schedule().count_pass(w)
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
        })
    }

    /// This (counting) specification's schedule: its samples are marked `counted`.
    pub(super) fn counted_schedule(&self) -> Schedule<'_> {
        Schedule { counted: true, ..self.schedule(0, Vec::new(), None) }
    }

    fn schedule<'a>(
        &'a self,
        start_round: u32,
        prior: Vec<Sample>,
        stop_when: Option<&'a StopWhen<'a>>,
    ) -> Schedule<'a> {
        Schedule { spec: self, start_round, prior, interrupted: interrupt_flag(), stop_when, counted: false }
    }
}

/// The instruction counter a metric needs, or None for time.
pub fn instruction_counter(metric: Metric) -> Result<Option<Counter>> {
    match metric {
        Metric::Time => Ok(None),
        Metric::Instructions => Ok(Some(counter::detect()?)),
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
