//! Scheduling: one worker process per (engine, tag, round), warm-up rounds first, every
//! round in a fresh shuffled order, until the stop rule says so. Results go to the run
//! file as they arrive.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use rand::seq::SliceRandom;

use super::counter::{self, Counter};
use super::prepare::Ready;
use super::record::append_all;
use super::runfile::{self, End, EndReason, Record, RunWriter, Sample};
use super::{layouts, pool, scratch, RunSpec, Unit};
use crate::workload::Workload;

/// What a finished (or stopped) schedule says.
pub struct Outcome {
    pub end: End,
}

/// A caller's stop condition, checked after every measured round: true ends the run.
pub type StopWhen<'a> = dyn Fn(&[Sample]) -> bool + Sync + 'a;

/// A specification's worker processes under way; made by [`RunSpec`] alone.
pub(super) struct Schedule<'a> {
    pub spec: &'a RunSpec,
    /// The first round to run (non-zero when resuming).
    pub start_round: u32,
    /// Samples already in the run file (resuming), for the precision target.
    pub prior: Vec<Sample>,
    pub interrupted: Arc<AtomicBool>,
    /// Ends the run ("decided") when it holds after a measured round, as bisect does.
    pub stop_when: Option<&'a StopWhen<'a>>,
    /// This is the instruction-counting pass after the timed rounds: its samples are
    /// marked `counted` and it writes no end record.
    pub counted: bool,
}

/// A process-wide Ctrl-C flag: the first Ctrl-C stops the run (or the builds) after
/// saving; workers die with the signal and their partial round is not recorded as a
/// failure. A second Ctrl-C ends the process at once.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        let g = f.clone();
        let _ = ctrlc::set_handler(move || {
            if g.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
        f
    })
    .clone()
}

/// One worker invocation: a unit and the workloads it runs in that process.
pub(super) struct Job<'u> {
    pub unit: &'u Unit,
    pub batch: Vec<Workload>,
}

impl Schedule<'_> {
    /// The run's layout seed when every timed (unit, round) links its own layout; counts
    /// are the same under every layout, so counting schedules run the fixed builds.
    fn layout_seed(&self) -> Option<u64> {
        let random = self.spec.counter.is_none() && self.spec.plan.layouts == runfile::Layouts::Random;
        self.spec.plan.layout_seed.filter(|_| random)
    }

    pub fn execute(&self, w: &mut RunWriter) -> Result<Outcome> {
        let started = Instant::now();
        let scratch = scratch::create()?;
        let ready = self.ready(scratch.path(), w)?;
        let total_rounds = self.spec.plan.warmup + self.spec.plan.rounds.saturating_sub(self.start_round);
        let bar = crate::progress::bar(total_rounds as u64 * self.spec.units.len() as u64, "measuring");
        let mut samples = self.prior.clone();
        let prior = samples.len();
        let mut reason = EndReason::Rounds;
        let mut round = self.start_round;
        let mut warm_left = self.spec.plan.warmup;
        loop {
            let warm = warm_left > 0;
            if !warm && round >= self.spec.plan.rounds {
                break;
            }
            let warm_index = warm.then(|| self.spec.plan.warmup - warm_left);
            samples.extend(self.round(round, warm_index, &ready, scratch.path(), &bar, w)?);
            if self.interrupted.load(Ordering::SeqCst) {
                reason = EndReason::Interrupted;
                break;
            }
            if warm {
                warm_left -= 1;
                continue;
            }
            round += 1;
            if let Some(why) = self.stop_after(round, started, &samples) {
                reason = why;
                break;
            }
        }
        bar.finish_and_clear();
        if self.spec.counter.is_some() && round > self.start_round {
            self.check_determinism(&ready, scratch.path(), &samples[prior..], w)?;
        }
        // The schedule's wall time: the layout check below counts, as counting passes do.
        let wall = started.elapsed();
        let checked = round > self.start_round && !self.interrupted.load(Ordering::SeqCst);
        if let Some(seed) = self.layout_seed().filter(|_| checked) {
            layouts::check_counts(self, seed, &samples[prior..], w)?;
        }
        let timed_ns: u64 = samples[prior..].iter().map(|s| s.ns).sum();
        let end = End {
            reason,
            rounds: round,
            finished: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            wall_s: Some(wall.as_secs_f64()),
            timed_s: (self.spec.counter.is_none()).then_some(timed_ns as f64 / 1e9),
        };
        w.append(&Record::End(end.clone()))?;
        Ok(Outcome { end })
    }

    /// One round: every unit once, in a fresh shuffled order, one worker at a time, so no
    /// two timed regions overlap. Counted rounds run on every core: counts ignore load.
    /// With random layouts every unit first gets its own, linked on every core before the
    /// round's first worker starts. `warm_index` numbers warm-up rounds (not recorded).
    fn round(
        &self,
        round: u32,
        warm_index: Option<u32>,
        ready: &Ready,
        scratch: &Path,
        bar: &indicatif::ProgressBar,
        w: &mut RunWriter,
    ) -> Result<Vec<Sample>> {
        let warm = warm_index.is_some();
        let mut units: Vec<Unit> = self.spec.units.clone();
        units.shuffle(&mut rand::thread_rng());
        if let Some(seed) = self.layout_seed() {
            let slot = warm_index.map_or(format!("round {round}"), |i| format!("warm-up {i}"));
            bar.set_message(format!("{slot}: linking layouts"));
            let (linked, failed) = layouts::link_round(&units, seed, &slot, self.spec.jobs, &self.interrupted);
            // After Ctrl-C a layout not linked is no failure of its unit.
            let record = !warm && !self.interrupted.load(Ordering::SeqCst);
            for (u, error) in failed.iter().filter(|_| record) {
                w.append(&Record::Failure(self.failure(u, None, "layout", error.clone()).in_round(round)))?;
            }
            units = linked;
        }
        let order: Vec<&Unit> = units.iter().collect();
        let jobs = if self.spec.counter.is_some() { self.spec.jobs } else { 1 };
        let mut out = Vec::new();
        let work = |u: &&Unit| {
            bar.set_message(if warm {
                format!("warm-up, {}", u.label)
            } else {
                format!("round {}/{}, {} {}", round + 1, self.spec.plan.rounds, u.engine, u.label)
            });
            self.measure(u, round, warm, ready, scratch)
        };
        pool::for_each(&order, jobs, work, |_, records| {
            bar.inc(1);
            out.extend(append_all(w, records)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// One unit's worker process(es) for a round: the records to append (none when warm).
    pub(super) fn measure(
        &self,
        u: &Unit,
        round: u32,
        warm: bool,
        ready: &Ready,
        scratch: &Path,
    ) -> Result<Vec<Record>> {
        // Reads need the tag's read database and this unit's verified checksum; without
        // them they were already reported.
        let workloads: Vec<Workload> = self
            .spec
            .workloads
            .iter()
            .copied()
            .filter(|w| match w.verified_once() {
                true => ready.checksums.contains_key(&(u.engine, u.label.clone(), *w)),
                false => !w.is_read() || ready.dbs.contains_key(&u.label),
            })
            .collect();
        // Under callgrind, workloads whose suite declares no one timed call per repetition
        // (TimedFunctions::ManyPerPass) get a process each; the rest share one.
        let callgrind = matches!(self.counter_for(u), Some(Counter::Callgrind { .. }));
        let (shared, alone): (Vec<Workload>, Vec<Workload>) =
            workloads.into_iter().partition(|w| !callgrind || counter::timed_function(u.engine, *w).is_some());
        let jobs = std::iter::once(shared).chain(alone.into_iter().map(|w| vec![w]));
        let mut out = Vec::new();
        for job in jobs.filter(|b| !b.is_empty()).map(|batch| Job { unit: u, batch }) {
            if self.interrupted.load(Ordering::SeqCst) {
                break;
            }
            let (lines, death) = self.invoke(&job, ready, scratch);
            if warm || self.interrupted.load(Ordering::SeqCst) {
                continue;
            }
            out.extend(self.record(&job, round, ready, lines, death));
        }
        Ok(out)
    }
}
