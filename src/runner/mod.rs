//! Scheduling: one worker process per (engine, tag, round), warm-up rounds first, every
//! round in a fresh shuffled order, stopping at a round count, a time budget, a
//! resolution target, the caller's stop condition (bisect) or Ctrl-C. Results go to the
//! run file as they arrive.

pub mod counter;
mod layouts;
pub mod merge;
pub mod pool;
pub mod protocol;
pub mod runfile;
pub mod scratch;
pub mod worker;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::seq::SliceRandom;

pub use crate::compile::sanitize;
use crate::layout::{self, Layout};
use crate::stats;
use crate::workload::dataset::expected_checksums;
use crate::workload::{Checksum, Dataset, Workload, WorkloadConfig};
use counter::Counter;
use protocol::WorkerLine;
use runfile::{Check, End, EndReason, Engine, Failure, Plan, Record, RunWriter, Sample};

/// One thing to measure: an engine on a tag.
#[derive(Debug, Clone)]
pub struct Unit {
    pub engine: Engine,
    pub tag: String,
    /// The Rust worker is this binary; the C twin is the tag's own executable.
    pub program: PathBuf,
    /// The shared library, for the Rust worker.
    pub library: Option<PathBuf>,
    /// The SHA-256 the build record (or the layout's record) gives the artifact this unit
    /// loads (the library) or runs (the C twin): checked before every load and every start.
    pub sha256: String,
    /// The layout `library` (Rust) or `program` (C twin) was linked with; None: the fixed build.
    pub layout: Option<Layout>,
    /// With random layouts: what every round links this unit's own layout from.
    pub relink: Option<Arc<layout::Source>>,
}

impl Unit {
    /// A unit as built, of one fixed layout: its compiler's.
    pub fn fixed(engine: Engine, tag: String, program: PathBuf, library: Option<PathBuf>, sha256: String) -> Unit {
        Unit { engine, tag, program, library, sha256, layout: None, relink: None }
    }

    /// The same unit running `layout` instead: its library (Rust) or its C twin.
    pub fn with_layout(&self, layout: Layout) -> Unit {
        let mut u = self.clone();
        match u.engine {
            Engine::Rust => u.library = Some(layout.path.clone()),
            Engine::C => u.program = layout.path.clone(),
        }
        u.sha256 = layout.sha256.clone();
        u.layout = Some(layout);
        u
    }

    /// The program and the arguments that start its worker for `action`.
    fn argv(&self, action: &str) -> (PathBuf, Vec<OsString>) {
        let args = match self.engine {
            Engine::Rust => vec![
                "worker".into(),
                action.into(),
                "--library".into(),
                self.library.clone().expect("rust units have a library").into(),
                "--library-sha256".into(),
                self.sha256.clone().into(),
            ],
            Engine::C => vec![action.into()],
        };
        (self.program.clone(), args)
    }

    fn command(&self, action: &str) -> Command {
        let (program, args) = self.argv(action);
        let mut c = Command::new(program);
        c.args(args);
        c
    }

    /// Runs one of this unit's workers. The Rust worker checks its library itself before
    /// loading it; the C twin is checked here, before it is started.
    fn run(&self, cmd: Command) -> (Vec<WorkerLine>, Option<String>) {
        if self.engine == Engine::C {
            if let Err(e) = crate::artifact::verify(&self.program, &self.sha256) {
                return (Vec::new(), Some(format!("the C twin was not started: {e:#}")));
            }
        }
        run_worker(cmd)
    }
}

/// What a finished (or stopped) schedule says.
pub struct Outcome {
    pub end: End,
}

/// How the worker processes are started and what they run.
pub struct Schedule<'a> {
    pub units: Vec<Unit>,
    pub workloads: Vec<Workload>,
    pub cfg: &'a WorkloadConfig,
    pub plan: &'a Plan,
    /// The first round to run (non-zero when resuming).
    pub start_round: u32,
    /// Samples already in the run file (resuming), for the precision target.
    pub prior: Vec<Sample>,
    pub interrupted: Arc<AtomicBool>,
    /// Set when the plan's metric is instructions.
    pub counter: Option<Counter>,
    /// Checked after every measured round: true ends the run ("decided"), as bisect does.
    pub stop_when: Option<&'a (dyn Fn(&[Sample]) -> bool + Sync)>,
    /// This is the instruction-counting pass after the timed rounds: its samples are
    /// marked `counted` and it writes no end record.
    pub counted: bool,
    /// Worker processes at once for untimed and counted work (timed rounds: always one).
    pub jobs: usize,
}

impl<'a> Schedule<'a> {
    /// A new run's schedule from its first round, stopped by Ctrl-C and its plan alone.
    pub fn new(
        units: Vec<Unit>,
        workloads: Vec<Workload>,
        cfg: &'a WorkloadConfig,
        plan: &'a Plan,
        counter: Option<Counter>,
        jobs: usize,
    ) -> Schedule<'a> {
        let interrupted = interrupt_flag();
        let (start_round, prior, stop_when, counted) = (0, Vec::new(), None, false);
        Schedule { units, workloads, cfg, plan, start_round, prior, interrupted, counter, stop_when, counted, jobs }
    }
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

fn describe_exit(status: std::process::ExitStatus, stderr: &str) -> String {
    use std::os::unix::process::ExitStatusExt;
    let tail = stderr.lines().rev().take(3).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" | ");
    let what = match status.signal() {
        Some(sig) => format!("worker killed by signal {sig} ({})", signal_name(sig)),
        None => format!("worker exited with status {}", status.code().unwrap_or(-1)),
    };
    if tail.is_empty() {
        what
    } else {
        format!("{what}: {tail}")
    }
}

/// The signal's name (`SIGABRT`), or `signal` for a number this platform does not name.
fn signal_name(sig: i32) -> &'static str {
    nix::sys::signal::Signal::try_from(sig).map(|s| s.as_str()).unwrap_or("signal")
}

/// Runs one worker and returns its lines, or why it died.
fn run_worker(mut cmd: Command) -> (Vec<WorkerLine>, Option<String>) {
    let out = match cmd.stdin(Stdio::null()).output() {
        Ok(o) => o,
        Err(e) => return (Vec::new(), Some(format!("cannot start worker: {e}"))),
    };
    let lines: Vec<WorkerLine> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let death = (!out.status.success()).then(|| describe_exit(out.status, &String::from_utf8_lossy(&out.stderr)));
    (lines, death)
}

/// The read databases of a run, and the checksums each unit's reads were verified with.
#[derive(Default)]
struct Ready {
    dbs: BTreeMap<String, PathBuf>,
    /// (engine, tag, read workload) → the verified checksum; reads without one are not measured.
    checksums: BTreeMap<(Engine, String, Workload), Checksum>,
}

/// One worker invocation: a unit and the workloads it runs in that process.
struct Job<'u> {
    unit: &'u Unit,
    batch: Vec<Workload>,
}

impl Schedule<'_> {
    fn reads(&self) -> Vec<Workload> {
        self.workloads.iter().copied().filter(|w| w.is_read()).collect()
    }

    /// The six workloads' reads are verified once per run and unit; presets' workloads
    /// check their own data in every timed pass.
    fn verified(w: Workload) -> bool {
        w.is_read() && !matches!(w, Workload::Preset(_))
    }

    /// Builds each tag's read database once, with that tag's own library (the Rust unit's
    /// when there is one; the C twin reads the same file), then has every unit verify what
    /// its reads return. Neither is timed, so both use every core.
    fn ready(&self, scratch: &Path, w: &mut RunWriter) -> Result<Ready> {
        let mut ready = Ready::default();
        if self.reads().is_empty() {
            return Ok(ready);
        }
        let mut builders: Vec<&Unit> = self.units.iter().collect();
        builders.sort_by_key(|u| u.engine);
        let mut seen = BTreeSet::new();
        builders.retain(|u| seen.insert(u.tag.clone()));
        let bar = crate::progress::bar(builders.len() as u64, "preparing read databases");
        pool::for_each(
            &builders,
            self.jobs,
            |u| self.prepare_one(u, scratch),
            |u, result| {
                bar.inc(1);
                match result {
                    Ok(dir) => {
                        ready.dbs.insert(u.tag.clone(), dir);
                        Ok(())
                    }
                    // After Ctrl-C a worker's death is no failure of the tag.
                    Err(_) if self.interrupted.load(Ordering::SeqCst) => Ok(()),
                    Err(error) => {
                        let f = self.failure(u, None, "prepare", error);
                        bar.suspend(|| eprintln!("{}: cannot build the read database: {}", u.tag, f.error));
                        w.append(&Record::Failure(f))
                    }
                }
            },
        )?;
        bar.finish_and_clear();
        if !self.interrupted.load(Ordering::SeqCst) {
            self.verify(&mut ready, w)?;
        }
        Ok(ready)
    }

    fn prepare_one(&self, u: &Unit, scratch: &Path) -> Result<PathBuf, String> {
        if self.interrupted.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        let dir = scratch.join(own_folder(&u.tag)).join("db");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut cmd = u.command("prepare");
        cmd.arg("--dir").arg(&dir).args(self.cfg.to_args());
        // A preset's workloads say which database to write.
        cmd.arg("--workloads").arg(self.workloads.iter().map(|w| w.name()).collect::<Vec<_>>().join(","));
        let (lines, death) = u.run(cmd);
        match death.or_else(|| lines.iter().find_map(|l| l.error.clone())) {
            None if lines.iter().any(|l| l.prepared) => Ok(dir),
            other => Err(other.unwrap_or_else(|| "worker reported nothing".into())),
        }
    }

    /// Once per run and unit: each read's checksum through the unit's own engine and
    /// library, held to what the data must give (computed here, without LMDB). A read that
    /// fails this is recorded and not measured; timed passes are then held to it.
    fn verify(&self, ready: &mut Ready, w: &mut RunWriter) -> Result<()> {
        let reads: Vec<Workload> = self.reads().into_iter().filter(|w| Self::verified(*w)).collect();
        if reads.is_empty() {
            return Ok(());
        }
        let expected: BTreeMap<Workload, Checksum> =
            expected_checksums(&reads, &Dataset::generate(self.cfg)).into_iter().collect();
        let units: Vec<&Unit> = self.units.iter().filter(|u| ready.dbs.contains_key(&u.tag)).collect();
        let names: Vec<&str> = reads.iter().map(|w| w.name()).collect();
        let bar = crate::progress::bar(units.len() as u64, "verifying reads");
        let dbs = &ready.dbs;
        let work = |u: &&Unit| {
            if self.interrupted.load(Ordering::SeqCst) {
                return (Vec::new(), Some("interrupted".to_string()));
            }
            let mut cmd = u.command("verify");
            cmd.arg("--dir").arg(&dbs[&u.tag]).arg("--workloads").arg(names.join(",")).args(self.cfg.to_args());
            u.run(cmd)
        };
        let mut found = BTreeMap::new();
        pool::for_each(&units, self.jobs, work, |u, (lines, death)| {
            bar.inc(1);
            if self.interrupted.load(Ordering::SeqCst) {
                return Ok(());
            }
            for wl in &reads {
                let line = lines.iter().find(|l| l.workload == Some(*wl));
                let verdict = match line.map(|l| (l.checksum, l.error.clone())) {
                    Some((_, Some(error))) => Err(error),
                    Some((Some(got), None)) if Some(&got) == expected.get(wl) => Ok(got),
                    Some((Some(got), None)) => Err(format!(
                        "read {got}, but the data written gives {}",
                        expected.get(wl).map(|c| c.to_string()).unwrap_or_default()
                    )),
                    _ => Err(death.clone().unwrap_or_else(|| "the verify worker reported nothing".into())),
                };
                match verdict {
                    Ok(c) => {
                        found.insert((u.engine, u.tag.clone(), *wl), c);
                    }
                    Err(error) => w.append(&Record::Failure(self.failure(u, Some(*wl), "verify", error)))?,
                }
            }
            Ok(())
        })?;
        bar.finish_and_clear();
        ready.checksums = found;
        Ok(())
    }

    /// The run's layout seed when every timed (unit, round) links its own layout; counts
    /// are the same under every layout, so counting schedules run the fixed builds.
    fn layout_seed(&self) -> Option<u64> {
        let random = self.counter.is_none() && self.plan.layouts == runfile::Layouts::Random;
        self.plan.layout_seed.filter(|_| random)
    }

    pub fn execute(&self, w: &mut RunWriter) -> Result<Outcome> {
        let started = Instant::now();
        let scratch = scratch::create()?;
        let ready = self.ready(scratch.path(), w)?;
        let budget = self.plan.time_budget_s.map(Duration::from_secs_f64);
        let total_rounds = self.plan.warmup + self.plan.rounds.saturating_sub(self.start_round);
        let bar = crate::progress::bar(total_rounds as u64 * self.units.len() as u64, "measuring");
        let mut samples = self.prior.clone();
        let prior = samples.len();
        let mut reason = EndReason::Rounds;
        let mut round = self.start_round;
        let mut warm_left = self.plan.warmup;
        loop {
            let warm = warm_left > 0;
            if !warm && round >= self.plan.rounds {
                break;
            }
            let warm_index = warm.then(|| self.plan.warmup - warm_left);
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
            if budget.is_some_and(|b| started.elapsed() >= b) && round < self.plan.rounds {
                reason = EndReason::TimeBudget;
                break;
            }
            if self.stop_when.is_some_and(|f| f(&samples)) {
                reason = EndReason::Decided;
                break;
            }
            if let Some(target) = self.plan.target_ci {
                if resolved(&samples, target, self.plan.metric, self.plan.min_effect()) {
                    reason = EndReason::TargetCi;
                    break;
                }
            }
        }
        bar.finish_and_clear();
        if self.counter.is_some() && round > self.start_round {
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
            timed_s: (self.counter.is_none()).then_some(timed_ns as f64 / 1e9),
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
        let mut units: Vec<Unit> = self.units.clone();
        units.shuffle(&mut rand::thread_rng());
        if let Some(seed) = self.layout_seed() {
            let slot = warm_index.map_or(format!("round {round}"), |i| format!("warm-up {i}"));
            bar.set_message(format!("{slot}: linking layouts"));
            let (linked, failed) = layouts::link_round(&units, seed, &slot, self.jobs, &self.interrupted);
            // After Ctrl-C a layout not linked is no failure of its unit.
            let record = !warm && !self.interrupted.load(Ordering::SeqCst);
            for (u, error) in failed.iter().filter(|_| record) {
                w.append(&Record::Failure(self.failure(u, None, "layout", error.clone()).in_round(round)))?;
            }
            units = linked;
        }
        let order: Vec<&Unit> = units.iter().collect();
        let jobs = if self.counter.is_some() { self.jobs } else { 1 };
        let mut out = Vec::new();
        let work = |u: &&Unit| {
            bar.set_message(if warm {
                format!("warm-up, {}", u.tag)
            } else {
                format!("round {}/{}, {} {}", round + 1, self.plan.rounds, u.engine, u.tag)
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

    /// The instruction-counting pass: every unit once under the counter, on every core,
    /// its samples marked `counted`, no end record (the timed rounds wrote theirs).
    pub fn count_pass(&self, w: &mut RunWriter) -> Result<()> {
        assert!(self.counted && self.counter.is_some(), "a counting schedule");
        let scratch = scratch::create()?;
        let ready = self.ready(scratch.path(), w)?;
        let bar = crate::progress::bar(self.units.len() as u64, "counting instructions");
        let units: Vec<&Unit> = self.units.iter().collect();
        let mut samples = Vec::new();
        pool::for_each(
            &units,
            self.jobs,
            |u| self.measure(u, 0, false, &ready, scratch.path()),
            |_, records| {
                bar.inc(1);
                samples.extend(append_all(w, records)?);
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        self.check_determinism(&ready, scratch.path(), &samples, w)
    }

    /// Counts are taken once per unit, which is only sound if they repeat: count one
    /// unit's workload (the first counted sample's) again and record whether they agree.
    fn check_determinism(&self, ready: &Ready, scratch: &Path, counted: &[Sample], w: &mut RunWriter) -> Result<()> {
        let Some(first) = counted.iter().find(|s| s.instructions.is_some()) else { return Ok(()) };
        let Some(u) = self.units.iter().find(|u| u.engine == first.engine && u.tag == first.tag) else { return Ok(()) };
        if self.interrupted.load(Ordering::SeqCst) {
            return Ok(());
        }
        let again = self.count_once(u, first.workload, ready, scratch);
        let what = format!("{} {} {} counted twice", first.engine, first.tag, first.workload);
        w.append(&Record::Check(counts_agree(what, Ok(first.instructions.unwrap_or_default()), again)))
    }

    /// One workload of `u` counted once more: its count, or why there is none.
    fn count_once(&self, u: &Unit, workload: Workload, ready: &Ready, scratch: &Path) -> Result<u64, String> {
        let (lines, death) = self.invoke(&Job { unit: u, batch: vec![workload] }, ready, scratch);
        let count = lines.iter().find(|l| l.workload == Some(workload)).and_then(|l| l.instructions.first().copied());
        count.ok_or_else(|| death.unwrap_or_else(|| format!("{} {} {workload}: no count", u.engine, u.tag)))
    }

    /// The counter a unit's worker uses: perf only inside the Rust worker.
    fn counter_for(&self, u: &Unit) -> Option<Counter> {
        match (&self.counter, u.engine) {
            (None, _) => None,
            (Some(Counter::Perf), Engine::C) => Some(Counter::Callgrind { version: "valgrind".into() }),
            (Some(c), _) => Some(c.clone()),
        }
    }

    /// One unit's worker process(es) for a round: the records to append (none when warm).
    fn measure(&self, u: &Unit, round: u32, warm: bool, ready: &Ready, scratch: &Path) -> Result<Vec<Record>> {
        // Reads need the tag's read database and this unit's verified checksum; without
        // them they were already reported.
        let workloads: Vec<Workload> = self
            .workloads
            .iter()
            .copied()
            .filter(|w| match Self::verified(*w) {
                true => ready.checksums.contains_key(&(u.engine, u.tag.clone(), *w)),
                false => !w.is_read() || ready.dbs.contains_key(&u.tag),
            })
            .collect();
        // Under callgrind, workloads without one timed call per repetition (presets) get
        // a process each; the rest share one.
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

    /// Runs one worker invocation (under callgrind when counting there) and returns its
    /// lines, with the callgrind total as each line's instruction count.
    fn invoke(&self, job: &Job, ready: &Ready, scratch: &Path) -> (Vec<WorkerLine>, Option<String>) {
        let u = job.unit;
        let names: Vec<&str> = job.batch.iter().map(|w| w.name()).collect();
        let counter = self.counter_for(u);
        let mut args: Vec<OsString> = Vec::new();
        if let Some(db) = ready.dbs.get(&u.tag) {
            args.extend(["--dir".into(), db.into()]);
        }
        args.extend(["--scratch".into(), scratch.into(), "--workloads".into(), names.join(",").into()]);
        // Callgrind dumps a part per timed call: one repetition per workload then.
        let iterations = if matches!(counter, Some(Counter::Callgrind { .. })) { 1 } else { self.plan.iterations };
        args.extend(["--iterations".into(), iterations.to_string().into()]);
        if counter == Some(Counter::Perf) {
            args.push("--count-instructions".into());
        }
        args.extend(self.cfg.to_args().into_iter().map(OsString::from));
        let (program, mut full) = u.argv("run");
        full.extend(args);
        let Some(Counter::Callgrind { .. }) = counter else {
            let mut c = Command::new(&program);
            c.args(&full);
            return u.run(c);
        };
        // Parallel jobs each need their own profile file.
        let profile = scratch.join(format!("callgrind-{}-{}.out", u.engine, sanitize(&u.tag)));
        counter::remove_profile(&profile);
        let functions: Option<Vec<&str>> = job.batch.iter().map(|w| counter::timed_function(u.engine, *w)).collect();
        let dump_after = functions.as_deref().unwrap_or_default();
        let (mut lines, death) = u.run(counter::callgrind_command(&program, &full, &profile, dump_after));
        if death.is_some() {
            return (lines, death);
        }
        let counted = match functions {
            Some(_) => counter::callgrind_parts(&profile).map(|parts| assign_parts(job, &mut lines, parts)),
            // One workload in this process: the profile's total is its count.
            None => counter::callgrind_total(&profile).map(|total| {
                lines.iter_mut().filter(|l| l.workload.is_some()).for_each(|l| l.instructions = vec![total])
            }),
        };
        match counted {
            Ok(()) => (lines, None),
            Err(e) => (lines, Some(format!("{e:#}"))),
        }
    }

    /// A worker's samples and failures as run-file records. Timed readCrc and readXxh64
    /// passes must compute what verification read.
    fn record(
        &self,
        job: &Job,
        round: u32,
        ready: &Ready,
        lines: Vec<WorkerLine>,
        death: Option<String>,
    ) -> Vec<Record> {
        let u = job.unit;
        let mut out = Vec::new();
        let mut reported = BTreeSet::new();
        for line in lines {
            let Some(wl) = line.workload else { continue };
            reported.insert(wl);
            // Verified once (the six workloads), or checked by the pass itself (presets).
            let checksum = ready.checksums.get(&(u.engine, u.tag.clone(), wl)).copied().or(line.checksum);
            let wrong = line.outputs.iter().find(|&&o| checksum.is_some_and(|c| c.digest != o));
            let error = line.error.or_else(|| {
                wrong.map(|o| format!("timed pass computed {o:016x}, verification read {}", checksum.unwrap()))
            });
            if let Some(error) = error {
                out.push(Record::Failure(self.failure(u, Some(wl), "run", error).in_round(round)));
                continue;
            }
            for (i, ns) in line.samples_ns.iter().enumerate() {
                out.push(Record::Sample(Sample {
                    round,
                    engine: u.engine,
                    tag: u.tag.clone(),
                    workload: wl,
                    ns: *ns,
                    instructions: line.instructions.get(i).copied(),
                    checksum,
                    counted: self.counted,
                    figures: line.figures.get(i).cloned().unwrap_or_default(),
                    layout: u.layout.as_ref().map(|l| l.seed),
                }));
            }
        }
        // A workload the worker never reported failed, whether the worker died or not.
        let missing = death.unwrap_or_else(|| "the worker exited normally without reporting this workload".into());
        for wl in job.batch.iter().filter(|wl| !reported.contains(wl)) {
            out.push(Record::Failure(self.failure(u, Some(*wl), "run", missing.clone()).in_round(round)));
        }
        out
    }
}

/// Whether two counts of the same work agree. They may differ by a few instructions where
/// glibc's memcpy takes another path for another buffer alignment; what matters is that this
/// stays far below the tolerance counts are judged with.
fn counts_agree(what: String, first: Result<u64, String>, second: Result<u64, String>) -> Check {
    let allowed = stats::family::Rule::default().count_tolerance / 10.0;
    match (first, second) {
        (Ok(a), Ok(b)) => {
            let off = (b as f64 - a as f64).abs() / (a.max(1) as f64);
            let detail =
                format!("{a} then {b} instructions, {:.5}% apart (allowed: {:.2}%)", off * 100.0, allowed * 100.0);
            Check { what, passed: off <= allowed, detail }
        }
        (Err(e), _) | (_, Err(e)) => Check { what, passed: false, detail: e },
    }
}

impl Schedule<'_> {
    /// A unit's failure as the run file records it; a full map says what map would do.
    fn failure(&self, u: &Unit, workload: Option<Workload>, stage: &str, error: String) -> Failure {
        let error = match error.contains("MDB_MAP_FULL") {
            false => error,
            true if self.workloads.iter().any(|w| matches!(w, Workload::Preset(_))) => {
                format!("{error} (the map is too small for this data: give a larger --preset-map-size)")
            }
            true => format!(
                "{error} (the map of {} bytes is too small for this data: give --map-size {} or more, or leave it out)",
                self.cfg.effective_map_size(),
                self.cfg.roomy_map_size()
            ),
        };
        Failure { round: None, engine: u.engine, tag: u.tag.clone(), workload, stage: stage.into(), error }
    }
}

/// Gives each workload's line the count of the profile part its timed function dumped.
/// Parts come in call order; a workload that failed before its timed call has none, and a
/// line left without a count is a failure, not a sample without one.
fn assign_parts(job: &Job, lines: &mut [WorkerLine], parts: Vec<counter::Part>) {
    let mut parts = parts.into_iter().peekable();
    for w in &job.batch {
        let function = counter::timed_function(job.unit.engine, *w).unwrap_or_default();
        let part = parts.next_if(|p| p.trigger == function);
        for l in lines.iter_mut().filter(|l| l.workload == Some(*w) && l.error.is_none()) {
            match &part {
                Some(p) => l.instructions = vec![p.instructions],
                None => l.error = Some(format!("callgrind dumped no count for {function}")),
            }
        }
    }
}

/// Appends records to the run file and returns the samples among them.
fn append_all(w: &mut RunWriter, records: Result<Vec<Record>>) -> Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for r in records? {
        w.append(&r)?;
        if let Record::Sample(s) = r {
            samples.push(s);
        }
    }
    Ok(samples)
}

/// True when, in every (engine, workload), every tag's comparison with the oldest tag is
/// decided or resolved to within ±`target` percent: more rounds would not change the table.
pub fn resolved(samples: &[Sample], target: f64, metric: runfile::Metric, min_effect: f64) -> bool {
    let mut groups: BTreeMap<(Engine, Workload), BTreeMap<String, Vec<(u32, f64)>>> = BTreeMap::new();
    for s in samples.iter().filter(|s| !s.counted) {
        if let Some(v) = s.value(metric) {
            groups.entry((s.engine, s.workload)).or_default().entry(s.tag.clone()).or_default().push((s.round, v));
        }
    }
    let rule = stats::family::Rule { min_effect, ..Default::default() };
    let rule = if metric == runfile::Metric::Instructions { rule.for_counts() } else { rule };
    !groups.is_empty()
        && groups.into_values().all(|by_tag| {
            let blocks: BTreeMap<String, stats::family::Rounds> = by_tag
                .into_iter()
                .filter(|(t, _)| crate::manifest::control_of(t).is_none())
                .map(|(t, v)| (t, stats::family::per_round(v)))
                .collect();
            let reference = blocks.keys().min_by_key(|t| crate::manifest::release_key(t)).cloned().unwrap_or_default();
            stats::family::resolved(&blocks, &reference, &rule, target / 100.0)
        })
}

/// A label's own folder name: readable, and unique by a hash of the whole label (two labels
/// that `sanitize` alike, `a/b` and `a-b`, still get two folders). 0.9 and 1.0 cannot open
/// each other's files, and no tag may ever read another's.
fn own_folder(label: &str) -> String {
    use sha2::Digest;
    format!("{}-{}", sanitize(label), &hex::encode(sha2::Sha256::digest(label.as_bytes()))[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_by_nix() {
        assert_eq!(signal_name(libc::SIGABRT), "SIGABRT");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(libc::SIGUSR1), "SIGUSR1");
        assert_eq!(signal_name(999), "signal");
    }

    #[test]
    fn every_label_reads_a_database_of_its_own() {
        let labels =
            ["LMDB_0.9.33", "LMDB_1.0.1", "mdb.RE/0.9 @ 1a2b3c4d", "mdb.RE-0.9 @ 1a2b3c4d", "LMDB_1.0.1 (clang -O2)"];
        let folders: std::collections::BTreeSet<String> = labels.iter().map(|l| own_folder(l)).collect();
        assert_eq!(folders.len(), labels.len(), "{folders:?}");
        assert_eq!(own_folder("LMDB_1.0.1"), own_folder("LMDB_1.0.1"));
    }
}
