//! Scheduling: one worker process per (engine, tag, round), warm-up rounds first, every
//! round in a fresh shuffled order of blocks (the units of one sync mode, memory limit,
//! reader count and readahead together), until the stop rule says so; adaptive rounds
//! measure what the last one left undecided. Results go to the run file as they arrive.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::seq::SliceRandom;

use super::adaptive::{LayoutsWanted, Progress, Selection};
use super::draws::Draws;
use super::job::{interrupt_flag, ScheduleOutcome, StopWhen};
use super::measure::{append_all, failed_units};
use super::paired::{self, Excluded};
use super::prepare::Ready;
use super::scratch::Scratch;
use super::{layouts, pool, Label, RunSpec, Unit};
use crate::progress::{JobPhase, Log};
use crate::record::{self, CheckKind, End, EndReason, FailureStage, Phase, Record, RunData, RunWriter, Sample};
use crate::workload::Workload;

impl RunSpec {
    /// A new run from its first round, ended by its plan or Ctrl-C.
    pub fn start(&self, w: &mut RunWriter) -> Result<ScheduleOutcome> {
        self.schedule(0, Vec::new(), true, None).execute(w)
    }

    /// A new run that `stop` also ends ("decided") when it holds after a measured round.
    pub fn start_until(&self, stop: &StopWhen<'_>, w: &mut RunWriter) -> Result<ScheduleOutcome> {
        self.schedule(0, Vec::new(), true, Some(stop)).execute(w)
    }

    /// Continues the run `data` has so far: its rounds left, then its closing check unless
    /// recorded (a run stopped in that check resumes into it), then its end record.
    pub fn resume(&self, data: &RunData, w: &mut RunWriter) -> Result<ScheduleOutcome> {
        let checked = data.closing_check().is_some_and(|k| data.checks.iter().any(|c| c.kind == Some(k)));
        self.schedule(data.completed_rounds(), data.samples.clone(), !checked, None).execute(w)
    }

    fn schedule<'a>(
        &'a self,
        start_round: u32,
        prior: Vec<Sample>,
        close: bool,
        stop_when: Option<&'a StopWhen<'a>>,
    ) -> Schedule<'a> {
        let excluded = Default::default();
        let draws = Draws::new(self.plan.layout_seed.unwrap_or_default(), &prior);
        Schedule { spec: self, start_round, prior, close, interrupted: interrupt_flag(), stop_when, excluded, draws }
    }
}

/// A specification's worker processes under way; made by [`RunSpec`]'s `start`, `start_until`
/// and `resume` alone.
struct Schedule<'a> {
    spec: &'a RunSpec,
    /// The first round to run (non-zero when resuming).
    start_round: u32,
    /// Samples already in the run file (resuming), for the precision target.
    prior: Vec<Sample>,
    /// Whether the check that closes the rounds is still to make.
    close: bool,
    interrupted: Arc<AtomicBool>,
    /// Ends the run ("decided") when it holds after a measured round, as bisect does.
    stop_when: Option<&'a StopWhen<'a>>,
    /// Paired rounds: units that crashed a process, left out of later ones.
    excluded: Excluded,
    /// With random layouts: the seeds each unit's layouts are linked with.
    draws: Draws,
}

impl Schedule<'_> {
    /// The run's layout seed when every timed (unit, round) links its own layout; counts
    /// are the same under every layout, so counting schedules run the fixed builds.
    fn layout_seed(&self) -> Option<u64> {
        let random = self.spec.counter.is_none() && self.spec.plan.layouts == record::Layouts::Random;
        self.spec.plan.layout_seed.filter(|_| random)
    }

    pub fn execute(&self, w: &mut RunWriter) -> Result<ScheduleOutcome> {
        // A log's progress lines, from before the clock the budget is kept by.
        let budget = self.spec.plan.time_budget_s.map(Duration::from_secs_f64);
        let log = Log::start(JobPhase::Preparing, budget)?;
        let started = Instant::now();
        let budget_kept = super::watchdog::budget(budget);
        super::watchdog::begin_schedule();
        let scratch = self.spec.scratch()?;
        let mut ready = self.spec.ready(&scratch, w)?;
        if self.spec.paired() {
            // One engine's units share a process at a time.
            let per_engine = |e| self.spec.units.iter().filter(|u| u.engine == e).count();
            let most = self.spec.engines.iter().map(|e| per_engine(*e)).max().unwrap_or(0);
            paired::check_memory(most, &ready)?;
        }
        let plan = &self.spec.plan;
        // Without a cap on its rounds the bar grows a round at a time.
        let rounds_ahead = |from: u32| plan.rounds.map_or(1, |cap| cap.saturating_sub(from));
        let units = self.spec.units.len() as u64;
        let bar = crate::progress::bar(u64::from(plan.warmup + rounds_ahead(self.start_round)) * units, "measuring");
        let mut samples = self.prior.clone();
        let prior = samples.len();
        let mut reason = EndReason::Rounds;
        let mut round = self.start_round;
        // Warm-up only before rounds: a run resumed after its last round has none left.
        let mut warm_left = if plan.allows_round(round) { plan.warmup } else { 0 };
        // A resumed run goes on from what its rounds so far decided.
        let mut progress = self.spec.progress(&samples, self.spec.horizon(round, 0, Duration::ZERO, started));
        let mut measuring_since: Option<Instant> = None;
        loop {
            let warm = warm_left > 0;
            if !warm && !plan.allows_round(round) {
                break;
            }
            let warm_index = warm.then(|| plan.warmup - warm_left);
            match warm {
                true => log.phase(JobPhase::WarmUp),
                false => {
                    measuring_since.get_or_insert_with(Instant::now);
                    log.phase(JobPhase::Measuring);
                    log.rounds(round, plan.rounds);
                    if plan.rounds.is_none() && round > self.start_round {
                        bar.inc_length(units);
                    }
                }
            }
            let selection = self.selection(round, progress.as_ref()).filter(|_| !warm);
            let references = self.reference_layouts(progress.as_ref().filter(|_| !warm));
            ready.copy_for(&references)?;
            let slot = (round, warm_index, selection.as_ref(), &references);
            let round_began = Instant::now();
            samples.extend(self.round(slot, &ready, &scratch, (&bar, &log), w)?);
            let last = round_began.elapsed();
            if self.interrupted.load(Ordering::SeqCst) {
                reason = EndReason::Interrupted;
                break;
            }
            if warm {
                warm_left -= 1;
                continue;
            }
            round += 1;
            let spent = measuring_since.map_or(Duration::ZERO, |t| t.elapsed());
            let horizon = self.spec.horizon(round, round - self.start_round, spent, started);
            progress = self.spec.progress(&samples, horizon);
            if let Some(why) = self.spec.stop_after((round, last), started, &samples, self.stop_when, progress.as_ref())
            {
                reason = why;
                break;
            }
        }
        bar.finish_and_clear();
        drop(budget_kept);
        let mut stopped = (reason == EndReason::Interrupted).then_some(Phase::Rounds { from: round });
        let close = self.close && stopped.is_none();
        log.phase(JobPhase::Checking);
        if self.spec.counter.is_some() && close {
            self.spec.check_determinism(&ready, &scratch, &samples, w)?;
        }
        // The schedule's wall time: the layout check below counts, as counting passes do.
        let wall = started.elapsed();
        if self.layout_seed().is_some() && close {
            layouts::check_counts(self.spec, &self.draws, &samples, w)?;
        }
        if close && self.interrupted.load(Ordering::SeqCst) {
            reason = EndReason::Interrupted;
            let kind = if self.spec.counter.is_some() { CheckKind::Repeat } else { CheckKind::Layouts };
            stopped = Some(Phase::Check(kind));
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
        Ok(ScheduleOutcome { end, stopped })
    }

    /// "round 3/20", or "round 3" without a cap on the rounds.
    fn round_text(&self, round: u32) -> String {
        match self.spec.plan.rounds {
            Some(cap) => format!("round {}/{cap}", round + 1),
            None => format!("round {}", round + 1),
        }
    }

    /// Which units adaptive round `round` measures on each workload, from what the rounds
    /// before it left undecided; None when every unit is measured.
    fn selection(&self, round: u32, progress: Option<&Progress>) -> Option<Selection> {
        progress.filter(|_| self.spec.adaptive()).map(|p| p.selection(round, &self.spec.units))
    }

    /// The further layouts of references a paired round holds, where the statistics say
    /// they narrow the open comparisons for their time: in time rounds of random layouts, of
    /// one layout of every other unit and one pass each (each pass of a unit is paired with
    /// the reference's of its position otherwise), on workloads timed in chunks.
    fn reference_layouts(&self, progress: Option<&Progress>) -> LayoutsWanted {
        let plan = &self.spec.plan;
        let able = self.spec.paired() && self.layout_seed().is_some();
        if !able || plan.layouts_per_process > 1 || plan.iterations > 1 {
            return LayoutsWanted::new();
        }
        let mut wanted = match plan.reference_layouts {
            record::ReferenceLayouts::Auto => progress.map(Progress::reference_layouts).unwrap_or_default(),
            record::ReferenceLayouts::Exactly(k) => self.every_reference(k),
        };
        // Readers beside a writer pair their crews interval by interval, within their axes.
        wanted.values_mut().for_each(|each| each.retain(|w, k| !w.is_crew() && *k > 1));
        wanted.retain(|_, each| !each.is_empty());
        wanted
    }

    /// `k` layouts of each engine's reference (the oldest of the baseline's units) on
    /// every workload.
    fn every_reference(&self, k: u32) -> LayoutsWanted {
        let baseline = self.spec.plan.baseline.as_ref().map(record::Base::as_str);
        let mut wanted = LayoutsWanted::new();
        for &engine in self.spec.engines.iter() {
            let labels = self.spec.units.iter().filter(|u| u.engine == engine).map(|u| &u.label);
            if let Some(reference) = Label::reference_among(labels, baseline) {
                wanted.insert((engine, reference), self.spec.workloads.iter().map(|w| (*w, k)).collect());
            }
        }
        wanted
    }

    /// One round: every unit once (or those `selection` measures), in a fresh shuffled
    /// order of blocks ([`in_blocks`]), one worker at a time, so no two timed regions
    /// overlap. Counted rounds run on every core: counts ignore load. With random layouts
    /// every unit first gets its own, linked on every core before the round's first worker
    /// starts. `warm_index` numbers warm-up rounds (not recorded). A paired round also holds
    /// the further layouts of the `references`.
    fn round(
        &self,
        (round, warm_index, selection, references): (u32, Option<u32>, Option<&Selection>, &LayoutsWanted),
        ready: &Ready,
        scratch: &Scratch,
        (bar, log): (&indicatif::ProgressBar, &Log),
        w: &mut RunWriter,
    ) -> Result<Vec<Sample>> {
        let warm = warm_index.is_some();
        let measured = |u: &Unit| selection.is_none_or(|s| self.spec.workloads.iter().any(|w| s.measures(u, *w)));
        let units: Vec<Unit> = self.spec.units.iter().filter(|u| measured(u)).cloned().collect();
        let mut units = in_blocks(units, |u| u.label.axes(), &mut rand::thread_rng());
        let mut further = Vec::new();
        if self.layout_seed().is_some() {
            let slot = warm_index.map_or(format!("round {round}"), |i| format!("warm-up {i}"));
            bar.set_message(format!("{slot}: linking layouts"));
            // Further layouts of a unit serve only the workloads whose chunks stand alone.
            let alone = |u: &Unit| {
                let measures = |w: &Workload| selection.is_none_or(|s| s.measures(u, *w));
                self.spec.workloads.iter().any(|w| w.chunks_stand_alone() && measures(w))
            };
            let per_unit: Vec<u32> =
                units.iter().map(|u| if alone(u) { self.spec.plan.layouts_per_process } else { 1 }).collect();
            let (jobs, interrupted) = (self.spec.jobs, &self.interrupted);
            let (linked, failed) = layouts::link_round_each(&units, (&self.draws, &per_unit), jobs, interrupted);
            // After Ctrl-C a layout not linked is no failure of its unit.
            let record = !warm && !self.interrupted.load(Ordering::SeqCst);
            for (u, error) in failed.iter().filter(|_| record) {
                log.failed(format!("{} {}", u.engine, u.label));
                w.append(&Record::Failure(
                    self.spec.failure(u, None, FailureStage::Layout, error.clone()).in_round(round),
                ))?;
            }
            units = linked;
            further = layouts::link_reference_layouts(&units, references, &self.draws, jobs, interrupted);
        }
        if self.spec.paired() {
            let units = (&units[..], &further[..]);
            return self.paired_round(units, (round, warm, selection), ready, scratch, (bar, log), w);
        }
        // A unit whose worker stalled is left out, as paired rounds leave out their culprits.
        let order: Vec<&Unit> = units.iter().filter(|u| !super::watchdog::hung(u.engine, &u.label)).collect();
        let jobs = if self.spec.counter.is_some() { self.spec.jobs } else { 1 };
        let mut out = Vec::new();
        let work = |u: &&Unit| {
            bar.set_message(if warm {
                format!("warm-up, {}", u.label)
            } else {
                format!("{}, {} {}", self.round_text(round), u.engine, u.label)
            });
            self.spec.measure(u, round, (warm, false), (ready, selection), scratch.of(&u.label))
        };
        // A unit left out of an adaptive round counts as done on the bar.
        bar.inc((self.spec.units.len() - order.len()) as u64);
        pool::for_each(&order, jobs, work, |_, records| {
            bar.inc(1);
            failed_units(&records).for_each(|u| log.failed(u));
            out.extend(append_all(w, records)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// A paired round: one process per engine holding all its units (those `selection`
    /// measures), and the `further` layouts of its references, each with its workloads.
    fn paired_round(
        &self,
        (units, further): (&[Unit], &[(Unit, Vec<Workload>)]),
        (round, warm, selection): (u32, bool, Option<&Selection>),
        ready: &Ready,
        scratch: &Scratch,
        (bar, log): (&indicatif::ProgressBar, &Log),
        w: &mut RunWriter,
    ) -> Result<Vec<Sample>> {
        let mut out = Vec::new();
        // A unit counts once on the bar, however many layouts of it a process holds.
        let distinct = |us: &[Unit]| us.iter().map(|u| (u.engine, &u.label)).collect::<BTreeSet<_>>().len();
        bar.inc(self.spec.units.len().saturating_sub(distinct(units)) as u64);
        for engine in self.spec.engines.iter() {
            let of: Vec<Unit> = units.iter().filter(|u| u.engine == *engine).cloned().collect();
            let further: Vec<(Unit, Vec<Workload>)> =
                further.iter().filter(|(u, _)| u.engine == *engine).cloned().collect();
            let slot = if warm { "warm-up".to_string() } else { self.round_text(round) };
            bar.set_message(format!("{slot}: {} {engine} units side by side", of.len()));
            let folder = scratch.of_all(of.iter().map(|u| &u.label));
            let of = (&of[..], &further[..]);
            let records = self.spec.measure_paired(of, round, warm, ready, folder, &self.excluded, selection);
            failed_units(&records).for_each(|u| log.failed(u));
            out.extend(append_all(w, records)?);
            bar.inc(distinct(of.0) as u64);
        }
        Ok(out)
    }
}

/// A round's order: `items` in blocks of one `key` (a unit's axes: its sync mode, memory
/// limit, reader count and readahead), each block shuffled and the blocks in a shuffled
/// order. A unit is compared with the baseline of its own axes, measured in the same round:
/// in one block the two run close in time, so a disk busy for a while (the other processes'
/// writeback, which a sync commit waits for) is more often busy for both. Without axes, one
/// block: a shuffle of them all.
fn in_blocks<T, K: Ord>(items: Vec<T>, key: impl Fn(&T) -> K, rng: &mut impl rand::Rng) -> Vec<T> {
    let mut blocks: BTreeMap<K, Vec<T>> = BTreeMap::new();
    for item in items {
        blocks.entry(key(&item)).or_default().push(item);
    }
    let mut blocks: Vec<Vec<T>> = blocks.into_values().collect();
    blocks.shuffle(rng);
    blocks.iter_mut().for_each(|b| b.shuffle(rng));
    blocks.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::in_blocks;
    use crate::record::Label;
    use crate::workload::SyncMode;

    fn labels(modes: &[Option<SyncMode>]) -> Vec<Label> {
        let tags = ["LMDB_0.9.17", "LMDB_0.9.33", "LMDB_1.0.1"];
        let at = |m: &Option<SyncMode>, t| m.map_or(Label::build(t, None), |m| Label::build(t, None).with_sync(m));
        modes.iter().flat_map(|m| tags.map(|t| at(m, t))).collect()
    }

    /// Under a sync axis each mode's three tags run one after another, in an order and a
    /// place among the modes that differ from round to round.
    #[test]
    fn a_sync_modes_units_share_a_block() {
        let modes: Vec<Option<SyncMode>> = SyncMode::ALL.iter().copied().map(Some).collect();
        let units = labels(&modes);
        let (mut firsts, mut orders) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for seed in 0..40 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let round = in_blocks(units.clone(), Label::axes, &mut rng);
            let mut sorted = round.clone();
            sorted.sort();
            let mut all = units.clone();
            all.sort();
            assert_eq!(sorted, all, "every unit once");
            for block in round.chunks(3) {
                assert!(block.iter().all(|l| l.sync == block[0].sync), "a block of one mode: {round:?}");
            }
            firsts.insert(round[0].sync);
            orders.insert(round.iter().map(|l| l.base.clone()).collect::<Vec<_>>());
        }
        assert_eq!(firsts.len(), SyncMode::ALL.len(), "each mode's block first in some round");
        assert!(orders.len() > 20, "the tags shuffled inside each block: {}", orders.len());
    }

    /// Without an axis a round is one block: any unit may follow any other.
    #[test]
    fn without_axes_a_round_is_one_shuffle() {
        let units = labels(&[None, None]);
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let round = in_blocks(units.clone(), Label::axes, &mut rng);
            seen.insert((round[0].base.clone(), round[1].base.clone()));
        }
        assert_eq!(seen.len(), 9, "every pair of tags (the same tag twice too) begins some round: {seen:?}");
    }
}
