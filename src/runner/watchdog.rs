//! The watchdog over every worker process: the parent reads a worker's lines as they come
//! (a paired worker prints one after every round of chunks, other workers one per workload)
//! and kills a worker that prints nothing for longer than its limit: ten times the slowest
//! stretch between two lines that workers of the same unit (or paired processes of the same
//! engine) took earlier, and never less than the floor (`--watchdog`, 60 s by default).
//! With `--time-budget`, no worker outlives the budget by more than one floor. Nothing runs
//! inside the worker's timed chunks: the watching is this process's. Also how a worker's
//! death is told.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::protocol::WorkerLine;
use super::Label;
use crate::record::Engine;
use crate::workload::Workload;

/// The least limit unless `--watchdog` says otherwise, in seconds.
pub const DEFAULT_FLOOR_S: f64 = 60.0;
/// How many times its slowest earlier stretch a stretch may take.
const FACTOR: u32 = 10;
/// How long a worker sent SIGTERM (which names the slot it was running) has to die.
const GRACE: Duration = Duration::from_secs(2);
/// The largest `--watchdog`: a week.
const MAX_FLOOR_S: f64 = 7.0 * 86_400.0;

/// Whose earlier stretches set a worker's limit: one unit's workers of one program (a
/// worker under valgrind is slower than the same worker alone), or one engine's paired
/// processes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Watched {
    Unit(Engine, Label, PathBuf),
    Paired(Engine),
}

/// Why the watchdog killed a worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Killed {
    /// It printed nothing for this long: the unit running is to blame.
    Stalled(Duration),
    /// The run's time budget and one floor had passed: no unit is to blame.
    PastBudget(Duration),
}

impl std::fmt::Display for Killed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Killed::Stalled(d) => write!(
                f,
                "killed by the watchdog: no progress for {} (the limit: --watchdog, or {FACTOR} times the slowest \
                 earlier stretch; raise --watchdog if the unit is only slow)",
                seconds(*d)
            ),
            Killed::PastBudget(d) => {
                write!(
                    f,
                    "killed by the watchdog: the run's --time-budget and one --watchdog floor ({}) had passed",
                    seconds(*d)
                )
            }
        }
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// A watched worker's lines (progress lines left out), and how it ended.
pub(super) struct Ran {
    pub lines: Vec<WorkerLine>,
    /// Why it died (None: it exited with status 0).
    pub death: Option<String>,
    pub killed: Option<Killed>,
}

struct State {
    floor: Duration,
    slowest: BTreeMap<Watched, Duration>,
    /// Units whose single-unit worker stalled: left out of every later process.
    hung: BTreeSet<(Engine, Label)>,
    /// A unit's workloads whose worker died in a timed round: not run again.
    died: BTreeSet<(Engine, Label, Workload)>,
    /// No worker runs past this (the time budget's end and one floor).
    deadline: Option<Instant>,
}

/// The watchdog's settings and what it has seen: one per process ([`GLOBAL`]).
pub(super) struct Watchdog(Mutex<State>);

/// The process's watchdog: a run's workers, however many stages start them.
static GLOBAL: Watchdog = Watchdog::new();

impl Watchdog {
    const fn new() -> Watchdog {
        Watchdog(Mutex::new(State {
            floor: Duration::from_secs(DEFAULT_FLOOR_S as u64),
            slowest: BTreeMap::new(),
            hung: BTreeSet::new(),
            died: BTreeSet::new(),
            deadline: None,
        }))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The limit of the next stretch of a worker of `key`, and whether it is the budget's.
    fn limit(&self, key: &Watched) -> (Duration, bool) {
        let s = self.state();
        let own = s.slowest.get(key).map_or(Duration::ZERO, |d| *d * FACTOR).max(s.floor);
        match s.deadline.map(|d| d.saturating_duration_since(Instant::now())) {
            Some(left) if left < own => (left, true),
            _ => (own, false),
        }
    }

    fn record(&self, key: &Watched, stretch: Duration) {
        let mut s = self.state();
        let slowest = s.slowest.entry(key.clone()).or_default();
        *slowest = (*slowest).max(stretch);
    }
}

/// Forgets what earlier runs of this process saw (stretches, units that stalled or
/// died): a run of another suite starts anew.
pub fn begin_run() {
    let mut s = GLOBAL.state();
    s.slowest.clear();
    s.hung.clear();
    s.died.clear();
}

/// Sets the floor of every limit (`--watchdog`).
pub fn set_floor(floor: Duration) {
    GLOBAL.state().floor = floor;
}

/// Until the guard is dropped, no worker outlives `budget` from now by more than one floor
/// (None: no budget). The rounds hold it; the checks and counts after them do not.
pub(super) fn budget(budget: Option<Duration>) -> BudgetKept {
    let mut s = GLOBAL.state();
    s.deadline = budget.map(|b| Instant::now() + b + s.floor);
    BudgetKept
}

/// The time budget's hold on workers, released when dropped.
pub(super) struct BudgetKept;

impl Drop for BudgetKept {
    fn drop(&mut self) {
        GLOBAL.state().deadline = None;
    }
}

/// Whether a worker of this unit stalled earlier in this process: it is left out.
pub(super) fn hung(engine: Engine, label: &Label) -> bool {
    GLOBAL.state().hung.contains(&(engine, label.clone()))
}

pub(super) fn mark_hung(engine: Engine, label: &Label) {
    GLOBAL.state().hung.insert((engine, label.clone()));
}

/// Whether a worker of this unit died running `workload` in an earlier timed round of this
/// schedule: a crash in LMDB repeats, so the workload is not run again (its died row says
/// it once).
pub(super) fn died(engine: Engine, label: &Label, workload: Workload) -> bool {
    GLOBAL.state().died.contains(&(engine, label.clone(), workload))
}

pub(super) fn mark_died(engine: Engine, label: &Label, workload: Workload) {
    GLOBAL.state().died.insert((engine, label.clone(), workload));
}

/// Forgets the deaths of earlier schedules: a schedule that measures a unit again (a
/// bisect's probe, a confirmation) sees it die again.
pub(super) fn begin_schedule() {
    GLOBAL.state().died.clear();
}

/// `--watchdog`'s value: seconds, positive, finite, at most a week.
pub fn parse_floor(s: &str) -> Result<Duration, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 || v > MAX_FLOOR_S {
        return Err(format!("{s} is not a number of seconds above 0 and at most {MAX_FLOOR_S} (a week)"));
    }
    Ok(Duration::from_secs_f64(v))
}

/// Runs `cmd` under the watchdog: its lines, or why it died or was killed.
pub(super) fn run(cmd: Command, key: Watched) -> Ran {
    GLOBAL.run(cmd, key)
}

impl Watchdog {
    fn run(&self, mut cmd: Command, key: Watched) -> Ran {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = match crate::children::spawn(&mut cmd) {
            Ok(c) => c,
            Err(e) => return Ran { lines: Vec::new(), death: Some(format!("cannot start worker: {e}")), killed: None },
        };
        let stderr = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                let _ = e.read_to_end(&mut text);
                String::from_utf8_lossy(&text).into_owned()
            })
        });
        let (lines, killed) = self.watch(&mut child, &key);
        let status = match killed {
            Some(_) => child.wait(),
            None => self.wait_after_output(&mut child, &key),
        };
        let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
        let death = match (killed, status) {
            (Some(k), _) => Some(k.to_string()),
            (None, Ok(status)) => (!status.success()).then(|| describe_exit(status, &stderr)),
            (None, Err(e)) => Some(format!("cannot wait for the worker: {e}")),
        };
        Ran { lines, death, killed }
    }

    /// Reads the worker's lines until its output ends, or until it stalls past its limit
    /// (then it is killed).
    fn watch(&self, child: &mut Child, key: &Watched) -> (Vec<WorkerLine>, Option<Killed>) {
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut lines = Vec::new();
        let mut last = Instant::now();
        loop {
            let (limit, budget) = self.limit(key);
            match rx.recv_timeout(limit.saturating_sub(last.elapsed())) {
                Ok(text) => {
                    self.record(key, last.elapsed());
                    last = Instant::now();
                    lines.extend(serde_json::from_str::<WorkerLine>(&text).ok().filter(|l| !l.progress));
                }
                Err(RecvTimeoutError::Disconnected) => return (lines, None),
                Err(RecvTimeoutError::Timeout) => {
                    // SIGTERM first: a paired worker names the slot it was running.
                    signal(child, libc::SIGTERM);
                    let end = Instant::now() + GRACE;
                    while let Ok(text) = rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
                        lines.extend(serde_json::from_str::<WorkerLine>(&text).ok().filter(|l| !l.progress));
                    }
                    signal(child, libc::SIGKILL);
                    let killed = if budget { Killed::PastBudget(self.state().floor) } else { Killed::Stalled(limit) };
                    return (lines, Some(killed));
                }
            }
        }
    }

    /// Waits for a worker whose output has ended, killing it if it does not exit within its
    /// limit.
    fn wait_after_output(&self, child: &mut Child, key: &Watched) -> std::io::Result<ExitStatus> {
        // At least the grace: a worker at its budget's end that closed its output is exiting.
        let end = Instant::now() + self.limit(key).0.max(GRACE);
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= end {
                signal(child, libc::SIGKILL);
                return child.wait();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: signals our own child, which has not been waited for (its pid is not reused).
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
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
    fn the_floor_is_positive_finite_seconds() {
        assert_eq!(parse_floor("2.5"), Ok(Duration::from_millis(2500)));
        for bad in ["0", "-1", "nan", "inf", "1e20", "ten", ""] {
            assert!(parse_floor(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_silent_worker_is_killed_and_a_talking_one_is_not() {
        let dog = Watchdog::new();
        dog.state().floor = Duration::from_millis(1500);
        let key = Watched::Paired(Engine::C);
        let mut talking = Command::new("sh");
        talking
            .args(["-c", "for i in 1 2 3; do echo '{\"progress\":true}'; sleep 1; done; echo '{\"prepared\":true}'"]);
        let ran = dog.run(talking, key.clone());
        assert_eq!((ran.death, ran.killed), (None, None));
        assert_eq!(ran.lines.len(), 1, "progress lines are the watchdog's alone");
        let mut silent = Command::new("sh");
        silent.args(["-c", "echo '{\"prepared\":true}'; exec sleep 600"]);
        let ran = dog.run(silent, Watched::Paired(Engine::Rust));
        assert!(matches!(ran.killed, Some(Killed::Stalled(_))), "{:?}", ran.death);
        assert_eq!(ran.lines.len(), 1, "what it said before is kept");
        assert!(ran.death.unwrap().contains("no progress for 1.5 s"));
    }

    #[test]
    fn no_worker_outlives_the_budget_by_more_than_the_floor() {
        let dog = Watchdog::new();
        dog.state().floor = Duration::from_secs(30);
        dog.state().deadline = Some(Instant::now() + Duration::from_secs(2));
        let mut talking = Command::new("sh");
        talking.args(["-c", "while :; do echo '{\"progress\":true}'; sleep 0.2; done"]);
        let ran = dog.run(talking, Watched::Paired(Engine::Rust));
        assert_eq!(ran.killed, Some(Killed::PastBudget(Duration::from_secs(30))), "{:?}", ran.death);
    }
}
