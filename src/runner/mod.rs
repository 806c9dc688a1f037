//! Scheduling: one worker process per (engine, tag, round), warm-up rounds first, every
//! round in a fresh shuffled order, stopping at a round count, a time budget, a
//! resolution target, the caller's stop condition (bisect) or Ctrl-C. Results go to the
//! run file as they arrive.

pub mod counter;
pub mod merge;
pub mod protocol;
pub mod runfile;
pub mod worker;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::seq::SliceRandom;

pub use crate::compile::sanitize;
use crate::stats;
use crate::workload::{Workload, WorkloadConfig};
use counter::Counter;
use protocol::WorkerLine;
use runfile::{End, EndReason, Engine, Failure, Plan, Record, RunWriter, Sample};

/// One thing to measure: an engine on a tag.
#[derive(Debug, Clone)]
pub struct Unit {
    pub engine: Engine,
    pub tag: String,
    /// The Rust worker is this binary; the C twin is the tag's own executable.
    pub program: PathBuf,
    /// The shared library, for the Rust worker.
    pub library: Option<PathBuf>,
}

impl Unit {
    /// The program and the arguments that start its worker for `action`.
    fn argv(&self, action: &str) -> (PathBuf, Vec<OsString>) {
        let args = match self.engine {
            Engine::Rust => vec![
                "worker".into(),
                action.into(),
                "--library".into(),
                self.library.clone().expect("rust units have a library").into(),
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
    pub stop_when: Option<&'a dyn Fn(&[Sample]) -> bool>,
    /// This is the instruction-counting pass after the timed rounds: its samples are
    /// marked `counted` and it writes no end record.
    pub counted: bool,
}

/// A process-wide Ctrl-C flag: the first Ctrl-C stops the run after saving; workers die
/// with the signal and their partial round is not recorded as a failure.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        let g = f.clone();
        let _ = ctrlc::set_handler(move || g.store(true, Ordering::SeqCst));
        f
    })
    .clone()
}

fn scratch_root() -> Result<tempfile::TempDir> {
    let base = std::env::var_os("LMDB_REGRESS_SCRATCH").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base)?;
    tempfile::Builder::new().prefix("lmdb-regress-").tempdir_in(&base).context("cannot create a scratch directory")
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

impl Schedule<'_> {
    /// Builds each tag's read database once, with that tag's own library.
    fn prepare(&self, scratch: &Path, w: &mut RunWriter) -> Result<BTreeMap<String, PathBuf>> {
        let mut dbs = BTreeMap::new();
        if !self.workloads.iter().any(|w| w.is_read()) {
            return Ok(dbs);
        }
        let mut done = BTreeSet::new();
        // The Rust unit of a tag prepares it when there is one (the C twin reads the same file).
        let mut units: Vec<&Unit> = self.units.iter().collect();
        units.sort_by_key(|u| u.engine);
        let bar = crate::progress::bar(units.len() as u64, "preparing read databases");
        for u in units {
            bar.inc(1);
            if !done.insert(u.tag.clone()) {
                continue;
            }
            if self.interrupted.load(Ordering::SeqCst) {
                break;
            }
            bar.set_message(u.tag.clone());
            let dir = scratch.join(sanitize(&u.tag)).join("db");
            std::fs::create_dir_all(&dir)?;
            let mut cmd = u.command("prepare");
            cmd.arg("--dir").arg(&dir).args(self.cfg.to_args());
            let (lines, death) = run_worker(cmd);
            let error = death.or_else(|| lines.iter().find_map(|l| l.error.clone()));
            match error {
                None if lines.iter().any(|l| l.prepared) => {
                    dbs.insert(u.tag.clone(), dir);
                }
                other => {
                    let error = other.unwrap_or_else(|| "worker reported nothing".into());
                    bar.suspend(|| eprintln!("{}: cannot build the read database: {error}", u.tag));
                    w.append(&Record::Failure(Failure {
                        round: None,
                        engine: u.engine,
                        tag: u.tag.clone(),
                        workload: None,
                        stage: "prepare".into(),
                        error,
                    }))?;
                }
            }
        }
        bar.finish_and_clear();
        Ok(dbs)
    }

    pub fn execute(&self, w: &mut RunWriter) -> Result<Outcome> {
        let scratch = scratch_root()?;
        let dbs = self.prepare(scratch.path(), w)?;
        let started = Instant::now();
        let budget = self.plan.time_budget_s.map(Duration::from_secs_f64);
        let total_rounds = self.plan.warmup + self.plan.rounds.saturating_sub(self.start_round);
        let bar = crate::progress::bar(total_rounds as u64 * self.units.len() as u64, "measuring");
        let mut samples = self.prior.clone();
        let mut rng = rand::thread_rng();
        let mut reason = EndReason::Rounds;
        let mut round = self.start_round;
        let mut warm_left = self.plan.warmup;
        loop {
            let warm = warm_left > 0;
            if !warm && round >= self.plan.rounds {
                break;
            }
            let mut order = self.units.clone();
            order.shuffle(&mut rng);
            for u in &order {
                if self.interrupted.load(Ordering::SeqCst) {
                    break;
                }
                bar.set_message(if warm {
                    format!("warm-up, {}", u.tag)
                } else {
                    format!("round {}/{}, {} {}", round + 1, self.plan.rounds, u.engine, u.tag)
                });
                let new = self.measure(u, round, warm, &dbs, scratch.path(), w)?;
                samples.extend(new);
                bar.inc(1);
            }
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
        let end = End {
            reason,
            rounds: round,
            finished: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        };
        w.append(&Record::End(end.clone()))?;
        Ok(Outcome { end })
    }

    /// The instruction-counting pass: every unit once under the counter, its samples marked
    /// `counted`, no end record (the timed rounds wrote theirs). Counts do not depend on
    /// the machine's load, so one pass is enough.
    pub fn count_pass(&self, w: &mut RunWriter) -> Result<()> {
        assert!(self.counted && self.counter.is_some(), "a counting schedule");
        let scratch = scratch_root()?;
        let dbs = self.prepare(scratch.path(), w)?;
        let bar = crate::progress::bar(self.units.len() as u64, "counting instructions");
        for u in &self.units {
            if self.interrupted.load(Ordering::SeqCst) {
                break;
            }
            bar.set_message(format!("{} {}", u.engine, u.tag));
            self.measure(u, 0, false, &dbs, scratch.path(), w)?;
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(())
    }

    /// The worker invocations of one unit: all workloads in one process, or (under
    /// callgrind, whose total covers a whole process) one process per workload.
    fn batches(&self, u: &Unit, workloads: Vec<Workload>) -> Vec<Vec<Workload>> {
        match self.counter_for(u) {
            Some(Counter::Callgrind { .. }) => workloads.into_iter().map(|w| vec![w]).collect(),
            _ => vec![workloads],
        }
    }

    /// The counter a unit's worker uses: perf only inside the Rust worker.
    fn counter_for(&self, u: &Unit) -> Option<Counter> {
        match (&self.counter, u.engine) {
            (None, _) => None,
            (Some(Counter::Perf), Engine::C) => Some(Counter::Callgrind { version: "valgrind".into() }),
            (Some(c), _) => Some(c.clone()),
        }
    }

    /// One unit's worker process(es) for a round. Returns the samples recorded.
    fn measure(
        &self,
        u: &Unit,
        round: u32,
        warm: bool,
        dbs: &BTreeMap<String, PathBuf>,
        scratch: &Path,
        w: &mut RunWriter,
    ) -> Result<Vec<Sample>> {
        let db = dbs.get(&u.tag);
        // Reads need the tag's read database; without one they were already reported.
        let workloads: Vec<Workload> =
            self.workloads.iter().copied().filter(|w| !w.is_read() || db.is_some()).collect();
        let mut out = Vec::new();
        for batch in self.batches(u, workloads) {
            let names: Vec<&str> = batch.iter().map(|w| w.name()).collect();
            let counter = self.counter_for(u);
            let mut args: Vec<OsString> = Vec::new();
            if let Some(db) = db {
                args.extend(["--dir".into(), db.into()]);
            }
            args.extend(["--scratch".into(), scratch.into(), "--workloads".into(), names.join(",").into()]);
            // A callgrind total covers the process: one repetition per process then.
            let iterations = if matches!(counter, Some(Counter::Callgrind { .. })) { 1 } else { self.plan.iterations };
            args.extend(["--iterations".into(), iterations.to_string().into()]);
            if counter == Some(Counter::Perf) {
                args.push("--count-instructions".into());
            }
            args.extend(self.cfg.to_args().into_iter().map(OsString::from));
            let (program, mut full) = u.argv("run");
            full.extend(args);
            let profile = scratch.join(format!("callgrind-{}.out", std::process::id()));
            let cmd = match counter {
                Some(Counter::Callgrind { .. }) => {
                    let _ = std::fs::remove_file(&profile);
                    counter::callgrind_command(&program, &full, &profile)
                }
                _ => {
                    let mut c = Command::new(&program);
                    c.args(&full);
                    c
                }
            };
            let (mut lines, mut death) = run_worker(cmd);
            if warm || self.interrupted.load(Ordering::SeqCst) {
                continue;
            }
            if matches!(counter, Some(Counter::Callgrind { .. })) && death.is_none() {
                match counter::callgrind_total(&profile) {
                    Ok(total) => {
                        lines.iter_mut().filter(|l| l.workload.is_some()).for_each(|l| l.instructions = vec![total])
                    }
                    Err(e) => death = Some(format!("{e:#}")),
                }
            }
            out.extend(self.record(u, round, &batch, lines, death, w)?);
        }
        Ok(out)
    }

    /// Appends a worker's samples and failures to the run file.
    fn record(
        &self,
        u: &Unit,
        round: u32,
        batch: &[Workload],
        lines: Vec<WorkerLine>,
        death: Option<String>,
        w: &mut RunWriter,
    ) -> Result<Vec<Sample>> {
        let mut out = Vec::new();
        let mut reported = BTreeSet::new();
        let fail = |wl: Workload, error: String| {
            Record::Failure(Failure {
                round: Some(round),
                engine: u.engine,
                tag: u.tag.clone(),
                workload: Some(wl),
                stage: "run".into(),
                error,
            })
        };
        for line in lines {
            let Some(wl) = line.workload else { continue };
            reported.insert(wl);
            if let Some(error) = line.error {
                w.append(&fail(wl, error))?;
                continue;
            }
            for (i, ns) in line.samples_ns.iter().enumerate() {
                let s = Sample {
                    round,
                    engine: u.engine,
                    tag: u.tag.clone(),
                    workload: wl,
                    ns: *ns,
                    instructions: line.instructions.get(i).copied(),
                    checksum: line.checksum,
                    counted: self.counted,
                };
                w.append(&Record::Sample(s.clone()))?;
                out.push(s);
            }
        }
        // A workload the worker never reported failed, whether the worker died or not.
        let missing = death.unwrap_or_else(|| "the worker exited normally without reporting this workload".into());
        for wl in batch.iter().filter(|wl| !reported.contains(wl)) {
            w.append(&fail(*wl, missing.clone()))?;
        }
        Ok(out)
    }
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
}
