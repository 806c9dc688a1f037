//! Readers in processes of their own (`--reader-procs`): a crew's readers as a
//! multi-process deployment runs them (OpenLDAP's tools beside slapd, an application's
//! worker processes), each taking its reader slot through the lock file's shared table
//! and reading through its own map of the data file, where reader threads share their
//! process's. The paired worker starts them once, before any pass; each loads the same
//! libraries the worker loaded, opens every unit's environment when a pass has filled it
//! (the same directory, so the same lock file), and runs one reader's interval when told.
//!
//! The worker speaks to each over its stdin and stdout, a JSON line an order or an
//! answer, always outside an interval: it says the unit and the deadline before it lets
//! its writer go, and reads what each reader did after the interval. Within the interval
//! a reader and the writer share only a [`Board`](super::concurrent::Board), in a file
//! both map. Clocks compare across processes as CLOCK_MONOTONIC nanoseconds, which is
//! what `Instant` reads on Linux.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::concurrent::{self, Crew, ReaderTxn, RemoteReaders, SharedBoard, SplitMix64, Work};
use super::lmdb::{Api, Database, Env, EnvOptions};

/// What the worker tells a reader process.
#[derive(Debug, Serialize, Deserialize)]
enum Order {
    /// Open unit `unit`'s environment in `dir` with the library of slot `slot`.
    Open { unit: usize, slot: usize, dir: PathBuf, map_size: u64, flags: u32 },
    /// One reader's interval on `unit`, held to `cpu`, until `deadline_ns` (and the writer's end).
    Interval { unit: usize, deadline_ns: u64, cpu: usize, per_get: bool, keys: u32 },
    /// Close unit `unit`'s environment (its pass is over).
    Close { unit: usize },
}

/// A reader process's answer to an order.
#[derive(Debug, Serialize, Deserialize)]
enum Answer {
    Done,
    Read(Figures),
    Failed(String),
}

/// One reader's interval as it crosses the pipe: [`Work`] with its instants as
/// CLOCK_MONOTONIC nanoseconds and its histogram as recorded buckets.
#[derive(Debug, Serialize, Deserialize)]
struct Figures {
    ops: u64,
    first_ns: u64,
    last_ns: u64,
    cpu_ns: u64,
    bytes: u64,
    latency: Vec<(u64, u64)>,
}

impl Figures {
    fn of(w: &Work) -> Figures {
        let latency = w.latency.as_ref().map_or_else(Vec::new, |h| {
            h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
        });
        Figures {
            ops: w.ops,
            first_ns: monotonic_ns(w.first),
            last_ns: monotonic_ns(w.last),
            cpu_ns: w.cpu.as_nanos() as u64,
            bytes: w.bytes,
            latency,
        }
    }

    fn work(&self) -> Work {
        let mut latency = concurrent::latency_histogram();
        for &(ns, n) in &self.latency {
            latency.record_n(ns, n).expect("a bucket of the same bounds");
        }
        Work {
            ops: self.ops,
            first: instant(self.first_ns),
            last: instant(self.last_ns),
            cpu: Duration::from_nanos(self.cpu_ns),
            latency: Some(latency),
            bytes: self.bytes,
        }
    }
}

/// An instant and CLOCK_MONOTONIC read together, once a process.
fn anchor() -> (Instant, u64) {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    *ANCHOR.get_or_init(|| (Instant::now(), now_ns()))
}

fn now_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("Linux has CLOCK_MONOTONIC");
    Duration::from(t).as_nanos() as u64
}

/// `at` as CLOCK_MONOTONIC nanoseconds, comparable across processes.
pub fn monotonic_ns(at: Instant) -> u64 {
    let (i, ns) = anchor();
    match at.checked_duration_since(i) {
        Some(after) => ns + after.as_nanos() as u64,
        None => ns - (i - at).as_nanos() as u64,
    }
}

/// The instant of `ns` CLOCK_MONOTONIC nanoseconds.
pub fn instant(ns: u64) -> Instant {
    let (i, at) = anchor();
    match ns.checked_sub(at) {
        Some(after) => i + Duration::from_nanos(after),
        None => i - Duration::from_nanos(at - ns),
    }
}

/// One reader process, as its worker holds it.
struct Proc {
    child: Child,
    orders: ChildStdin,
    answers: BufReader<ChildStdout>,
}

/// The reader processes of a paired worker, and the board they share with its writer.
pub struct ReaderProcs {
    procs: Vec<Proc>,
    board: Arc<SharedBoard>,
    /// The board's file, removed when the processes are gone.
    _file: tempfile::NamedTempFile,
}

/// How long a reader process has to end once told to (its orders closed) before it is
/// killed: it has an environment or two to close, nothing else.
const ENDING: Duration = Duration::from_secs(2);

impl ReaderProcs {
    /// Starts `count` reader processes, the k-th by `command(k, board)` (the board's file,
    /// made in `scratch`), each to die with this process (`crate::children`).
    pub fn start(count: u32, scratch: &Path, command: impl Fn(u32, &Path) -> Command) -> Result<ReaderProcs> {
        let file = tempfile::Builder::new().prefix("reader-board").tempfile_in(scratch)?;
        let board = Arc::new(SharedBoard::of(file.as_file())?);
        let mut procs = Vec::new();
        for k in 0..count {
            let mut cmd = command(k, file.path());
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
            let mut child = crate::children::spawn(&mut cmd).context("cannot start a reader process")?;
            let orders = child.stdin.take().expect("piped");
            let answers = BufReader::new(child.stdout.take().expect("piped"));
            procs.push(Proc { child, orders, answers });
        }
        Ok(ReaderProcs { procs, board, _file: file })
    }

    /// Each process's id, in order.
    pub fn pids(&self) -> Vec<u32> {
        self.procs.iter().map(|p| p.child.id()).collect()
    }

    /// Every process opens `unit`'s environment in `dir` with slot `slot`'s library.
    pub fn open(&mut self, unit: usize, slot: usize, dir: &Path, o: &EnvOptions) -> Result<()> {
        let (map_size, flags) = (o.map_size, o.flags);
        self.everyone(&Order::Open { unit, slot, dir: dir.to_path_buf(), map_size, flags })
    }

    /// Every process closes `unit`'s environment.
    pub fn close(&mut self, unit: usize) -> Result<()> {
        self.everyone(&Order::Close { unit })
    }

    fn everyone(&mut self, order: &Order) -> Result<()> {
        for k in 0..self.procs.len() {
            self.tell(k, order)?;
        }
        for k in 0..self.procs.len() {
            match self.hear(k)? {
                Answer::Done => {}
                Answer::Failed(e) => bail!("reader process {k}: {e}"),
                Answer::Read(_) => bail!("reader process {k} answered {order:?} with an interval"),
            }
        }
        Ok(())
    }

    fn tell(&mut self, k: usize, order: &Order) -> Result<()> {
        let line = serde_json::to_string(order)? + "\n";
        let p = &mut self.procs[k];
        match p.orders.write_all(line.as_bytes()).and_then(|()| p.orders.flush()) {
            Ok(()) => Ok(()),
            Err(_) => Err(self.ended(k)),
        }
    }

    fn hear(&mut self, k: usize) -> Result<Answer> {
        let mut line = String::new();
        match self.procs[k].answers.read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str(&line).with_context(|| format!("reader process {k} said {line:?}")),
            _ => Err(self.ended(k)),
        }
    }

    /// Why process `k` no longer answers: how it ended.
    fn ended(&mut self, k: usize) -> anyhow::Error {
        let p = &mut self.procs[k];
        let pid = p.child.id();
        let status = wait_for(&mut p.child, ENDING);
        let how = match status {
            Some(s) => format!("it ended ({s})"),
            None => "it stopped answering".to_string(),
        };
        anyhow!("reader process {k} of {} (pid {pid}) is gone: {how}", self.procs.len())
    }
}

/// `child`'s status once it has ended, waiting at most `patience`; None if it has not.
fn wait_for(child: &mut Child, patience: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + patience;
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

impl RemoteReaders for ReaderProcs {
    fn board(&self) -> Arc<SharedBoard> {
        self.board.clone()
    }

    fn begin(&mut self, unit: usize, crew: &Crew, deadline: Instant, cpus: &[usize]) -> Result<()> {
        if crew.readers as usize > self.procs.len() {
            bail!("a crew of {} readers beside {} reader processes", crew.readers, self.procs.len());
        }
        let (deadline_ns, per_get, keys) = (monotonic_ns(deadline), crew.reader_txn == ReaderTxn::PerGet, crew.keys);
        for (k, &cpu) in cpus.iter().enumerate() {
            self.tell(k, &Order::Interval { unit, deadline_ns, cpu, per_get, keys })?;
        }
        Ok(())
    }

    fn end(&mut self, readers: u32) -> Result<Vec<Work>> {
        let mut out = Vec::new();
        let mut failed = None;
        // Every reader is heard, so that none is left mid-answer for the next interval.
        for k in 0..readers as usize {
            match self.hear(k) {
                Ok(Answer::Read(f)) => out.push(f.work()),
                Ok(Answer::Failed(e)) => failed = failed.or(Some(anyhow!("reader process {k}: {e}"))),
                Ok(Answer::Done) => failed = failed.or(Some(anyhow!("reader process {k} read nothing"))),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        failed.map_or(Ok(out), Err)
    }
}

impl Drop for ReaderProcs {
    /// Closes every process's orders (it ends at their end), and kills one that has not
    /// ended within [`ENDING`]: none is left behind.
    fn drop(&mut self) {
        for p in self.procs.drain(..) {
            let Proc { mut child, orders, answers } = p;
            drop((orders, answers));
            if wait_for(&mut child, ENDING).is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// A reader process's life: it obeys `orders` and answers each on `answers` until its
/// orders end, opening environments with `apis[slot]` (None: a library that did not
/// load), its keys those of reader thread `index` of each crew.
pub fn serve(
    apis: &[Option<&Api>],
    board: Arc<SharedBoard>,
    index: usize,
    orders: impl BufRead,
    mut answers: impl Write,
) -> Result<()> {
    let mut envs: BTreeMap<usize, (Env, SplitMix64)> = BTreeMap::new();
    let mut cpu = None;
    for line in orders.lines() {
        let order: Order = serde_json::from_str(&line?)?;
        let answer = match order {
            Order::Open { unit, slot, dir, map_size, flags } => {
                let o = EnvOptions { map_size, flags, txn_flags: 0, db: Database::Unnamed, lmdb10: Default::default() };
                match apis.get(slot).copied().flatten() {
                    None => Answer::Failed(format!("slot {slot} has no library")),
                    Some(api) => match Env::open(api, &dir, &o) {
                        Ok(env) => {
                            envs.insert(unit, (env, concurrent::thread_rng(concurrent::CREW_SEED, index)));
                            Answer::Done
                        }
                        Err(e) => Answer::Failed(format!("cannot open {}: {e}", dir.display())),
                    },
                }
            }
            Order::Close { unit } => {
                envs.remove(&unit);
                Answer::Done
            }
            Order::Interval { unit, deadline_ns, cpu: at, per_get, keys } => {
                let Some((env, rng)) = envs.get_mut(&unit) else {
                    bail!("told to read unit {unit}, which is not open");
                };
                if cpu != Some(at) {
                    concurrent::pin(at).with_context(|| format!("cannot hold a reader process to CPU {at}"))?;
                    cpu = Some(at);
                }
                let reader_txn = if per_get { ReaderTxn::PerGet } else { ReaderTxn::PerInterval };
                let crew = Crew { readers: 1, reader_txn, writer: None, keys };
                match concurrent::read_apart(env, &crew, rng, board.clone(), instant(deadline_ns)) {
                    Ok(w) => Answer::Read(Figures::of(&w)),
                    Err(e) => Answer::Failed(e),
                }
            }
        };
        answers.write_all((serde_json::to_string(&answer)? + "\n").as_bytes())?;
        answers.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_cross_processes_as_monotonic_nanoseconds_and_back() {
        let now = Instant::now();
        for at in [now, now + Duration::from_millis(3), now - Duration::from_micros(7)] {
            let back = instant(monotonic_ns(at));
            let off = if back > at { back - at } else { at - back };
            assert!(off < Duration::from_micros(1), "{at:?} came back as {back:?}");
        }
        let clock = now_ns();
        assert!(monotonic_ns(Instant::now()).abs_diff(clock) < 10_000_000, "the same clock as CLOCK_MONOTONIC");
    }

    #[test]
    fn a_readers_figures_cross_the_pipe_whole() {
        let mut latency = concurrent::latency_histogram();
        for ns in [150, 151, 900, 12_345, 12_345] {
            latency.record(ns).unwrap();
        }
        let first = Instant::now();
        let w = Work {
            ops: 5,
            first,
            last: first + Duration::from_micros(40),
            cpu: Duration::from_nanos(31_000),
            latency: Some(latency.clone()),
            bytes: 510,
        };
        let line = serde_json::to_string(&Answer::Read(Figures::of(&w))).unwrap();
        let Answer::Read(f) = serde_json::from_str(&line).unwrap() else { panic!("{line}") };
        let back = f.work();
        assert_eq!((back.ops, back.cpu, back.bytes), (w.ops, w.cpu, w.bytes));
        assert_eq!(back.last - back.first, w.last - w.first);
        let h = back.latency.unwrap();
        assert_eq!((h.len(), h.max(), h.min()), (latency.len(), latency.max(), latency.min()));
        assert_eq!(h.value_at_quantile(0.5), latency.value_at_quantile(0.5));
    }
}
