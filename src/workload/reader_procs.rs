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
use std::io::{BufRead, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::concurrent::{self, Crew, ReaderTxn, RemoteReaders, SharedBoard, SplitMix64, Work, MAX_READER_PROCS};
use super::lmdb::{Api, Database, Env, EnvOptions};

/// What the worker tells a reader process.
#[derive(Debug, Serialize, Deserialize)]
enum Order {
    /// Open unit `unit`'s environment in `dir` with the library of slot `slot`.
    Open { unit: usize, slot: usize, dir: PathBuf, map_size: u64, flags: u32 },
    /// One reader's interval on `unit`, held to `cpu`, until `deadline_ns` (and the writer's end).
    Interval { unit: usize, deadline_ns: u64, cpu: usize, reader_txn: ReaderTxn, keys: u32 },
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
    /// Its answers, read without blocking (the worker waits for them with a deadline).
    answers: ChildStdout,
    /// What has come of an answer not yet whole.
    pending: Vec<u8>,
}

impl Proc {
    /// Its next answer line if a whole one has come, without waiting; an error once its
    /// answers have ended.
    fn line(&mut self) -> std::io::Result<Option<String>> {
        loop {
            if let Some(n) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=n).collect();
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            let mut buf = [0u8; 8192];
            match self.answers.read(&mut buf) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// The reader processes of a paired worker, and the board they share with its writer.
pub struct ReaderProcs {
    procs: Vec<Proc>,
    board: Arc<SharedBoard>,
    /// The board's file, removed when the processes are gone.
    _file: tempfile::NamedTempFile,
    /// The interval under way: its unit, deadline and stamp (the deadline as
    /// CLOCK_MONOTONIC nanoseconds, which each reader marks on the board as it begins).
    current: Option<(usize, Instant, u64)>,
    /// Each open unit's slot, to name it.
    slots: BTreeMap<usize, usize>,
    /// How long after its interval's end a reader's answer may come: [`GRACE`].
    grace: Duration,
    /// Why every process was killed, once one was late: nothing more is asked of them.
    killed: Option<String>,
}

/// How long a reader process has to end once told to (its orders closed) before it is
/// killed: it has an environment or two to close, nothing else.
const ENDING: Duration = Duration::from_secs(2);

/// How long after its interval's end (the deadline, or the writer's end if later) a
/// reader process's answer may come before it is named as hung. A healthy reader answers
/// within one get and one line on a pipe after the end: a get takes microseconds, and the
/// longest of the runs in reports/README.md ("Readers that claim a reader slot per get"),
/// a scheduler's stall on a loaded 2-core VM, took 172 ms; 5 s is about 30 times that,
/// and a twelfth of the watchdog's 60-s floor, which would otherwise name only the unit.
pub const GRACE: Duration = Duration::from_secs(5);

/// How many graces a reader process has to answer an order outside an interval (open or
/// close a unit's environment: a dlopen and an mdb_env_open, or an mdb_env_close; no data
/// read, no interval to wait out): 30 s in a run, half the watchdog's 60-s floor, so a
/// reader that hangs there is named before the watchdog names only the unit.
const ORDER_GRACES: u32 = 6;

/// How often a worker whose readers' interval is over, but not its writer's, looks at the
/// board again: only past the deadline, so nothing wakes it inside the interval.
const LOOK: Duration = Duration::from_millis(20);

impl ReaderProcs {
    /// Starts `count` reader processes, the k-th by `command(k, board)` (the board's file,
    /// made in `scratch`), each to die with this process (`crate::children`).
    pub fn start(count: u32, scratch: &Path, command: impl Fn(u32, &Path) -> Command) -> Result<ReaderProcs> {
        if count as usize > MAX_READER_PROCS {
            bail!("{count} reader processes: at most {MAX_READER_PROCS}");
        }
        let file = tempfile::Builder::new().prefix("reader-board").tempfile_in(scratch)?;
        let board = Arc::new(SharedBoard::of(file.as_file())?);
        let mut procs = Vec::new();
        for k in 0..count {
            let mut cmd = command(k, file.path());
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
            let mut child = crate::children::spawn(&mut cmd).context("cannot start a reader process")?;
            let orders = child.stdin.take().expect("piped");
            let answers = child.stdout.take().expect("piped");
            nonblocking(&answers)?;
            procs.push(Proc { child, orders, answers, pending: Vec::new() });
        }
        let (current, slots, grace, killed) = (None, BTreeMap::new(), GRACE, None);
        Ok(ReaderProcs { procs, board, _file: file, current, slots, grace, killed })
    }

    /// How long after an interval's end a reader's answer may come: [`GRACE`] unless a
    /// test that stops a reader on purpose asks for less (an order's answer may come within
    /// [`ORDER_GRACES`] of it).
    pub fn set_grace(&mut self, grace: Duration) {
        self.grace = grace;
    }

    /// Each process's id, in order.
    pub fn pids(&self) -> Vec<u32> {
        self.procs.iter().map(|p| p.child.id()).collect()
    }

    /// Every process opens `unit`'s environment in `dir` with slot `slot`'s library.
    pub fn open(&mut self, unit: usize, slot: usize, dir: &Path, o: &EnvOptions) -> Result<()> {
        let (map_size, flags) = (o.map_size, o.flags);
        self.slots.insert(unit, slot);
        self.everyone(&Order::Open { unit, slot, dir: dir.to_path_buf(), map_size, flags })
    }

    /// Every process closes `unit`'s environment.
    pub fn close(&mut self, unit: usize) -> Result<()> {
        self.everyone(&Order::Close { unit })
    }

    /// Tells every process `order` and hears each answer, within [`ORDER_GRACES`] graces:
    /// a process that does not answer by then is named, and every process is killed.
    fn everyone(&mut self, order: &Order) -> Result<()> {
        self.alive()?;
        for k in 0..self.procs.len() {
            self.tell(k, order)?;
        }
        let patience = self.grace * ORDER_GRACES;
        let until = Instant::now() + patience;
        for k in 0..self.procs.len() {
            match self.hear_by(k, until)? {
                Some(Answer::Done) => {}
                Some(Answer::Failed(e)) => bail!("reader process {k}: {e}"),
                Some(Answer::Read(_)) => bail!("reader process {k} answered {order:?} with an interval"),
                None => return Err(self.unanswered(k, order, patience)),
            }
        }
        Ok(())
    }

    /// Fails once every process was killed, saying why.
    fn alive(&self) -> Result<()> {
        match &self.killed {
            Some(why) => bail!("{why}"),
            None => Ok(()),
        }
    }

    fn tell(&mut self, k: usize, order: &Order) -> Result<()> {
        let line = serde_json::to_string(order)? + "\n";
        let p = &mut self.procs[k];
        match p.orders.write_all(line.as_bytes()).and_then(|()| p.orders.flush()) {
            Ok(()) => Ok(()),
            Err(_) => Err(self.ended(k)),
        }
    }

    /// Process `k`'s next answer, waiting until `until`; None if it has not come by then.
    fn hear_by(&mut self, k: usize, until: Instant) -> Result<Option<Answer>> {
        loop {
            if let Some(a) = self.answer(k)? {
                return Ok(Some(a));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            readable(&[self.procs[k].answers.as_raw_fd()], left);
        }
    }

    /// Process `k`'s next answer if it has come, without waiting.
    fn answer(&mut self, k: usize) -> Result<Option<Answer>> {
        match self.procs[k].line() {
            Ok(Some(line)) => {
                serde_json::from_str(&line).map(Some).with_context(|| format!("reader process {k} said {line:?}"))
            }
            Ok(None) => Ok(None),
            Err(_) => Err(self.ended(k)),
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
        self.alive()?;
        if crew.readers as usize > self.procs.len() {
            bail!("a crew of {} readers beside {} reader processes", crew.readers, self.procs.len());
        }
        let (deadline_ns, reader_txn, keys) = (monotonic_ns(deadline), crew.reader_txn, crew.keys);
        self.current = Some((unit, deadline, deadline_ns));
        for (k, &cpu) in cpus.iter().enumerate() {
            self.tell(k, &Order::Interval { unit, deadline_ns, cpu, reader_txn, keys })?;
        }
        Ok(())
    }

    /// Waits for each reader's answer until the interval's end and [`GRACE`]; a reader
    /// late past that fails the interval, named, and every reader process is killed.
    fn end(&mut self, readers: u32) -> Result<Vec<Work>> {
        let (unit, deadline, stamp) = self.current.take().expect("an interval begun");
        let mut heard: Vec<Option<Result<Answer>>> = (0..readers).map(|_| None).collect();
        let mut due = Due::new(deadline, self.grace);
        // Every reader is heard, so that none is left mid-answer for the next interval.
        while heard.iter().any(Option::is_none) {
            for k in 0..readers as usize {
                if heard[k].is_none() {
                    heard[k] = self.answer(k).transpose();
                }
            }
            let waiting: Vec<usize> = (0..readers as usize).filter(|&k| heard[k].is_none()).collect();
            if waiting.is_empty() {
                break;
            }
            match due.left(&self.board, readers) {
                Duration::ZERO => {
                    // Beside stale readers, those that began wait for a writer that waits
                    // for the one that did not: it is the one to name.
                    let never = waiting.iter().find(|&&k| !self.board.began(k, stamp));
                    let late = *never.unwrap_or(&waiting[0]);
                    return Err(self.late(late, unit, stamp, due.grace));
                }
                left => {
                    let fds: Vec<i32> = waiting.iter().map(|&k| self.procs[k].answers.as_raw_fd()).collect();
                    readable(&fds, left);
                }
            }
        }
        let mut out = Vec::new();
        let mut failed = None;
        for (k, h) in heard.into_iter().enumerate() {
            match h.expect("every reader heard") {
                Ok(Answer::Read(f)) => out.push(f.work()),
                Ok(Answer::Failed(e)) => failed = failed.or(Some(anyhow!("reader process {k}: {e}"))),
                Ok(Answer::Done) => failed = failed.or(Some(anyhow!("reader process {k} read nothing"))),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        failed.map_or(Ok(out), Err)
    }
}

impl ReaderProcs {
    /// Reader process `k` has not answered in time for unit `unit`'s interval stamped
    /// `stamp`: every process is killed (an answer half-read, a process stopped, are no
    /// footing for another interval) and the error names it.
    fn late(&mut self, k: usize, unit: usize, stamp: u64, grace: Duration) -> anyhow::Error {
        let (n, pid) = (self.procs.len(), self.procs[k].child.id());
        let slot = self.slots.get(&unit).map_or(String::new(), |s| format!(" (slot {s})"));
        let how = match self.board.began(k, stamp) {
            true => "it began its reads and did not end them",
            false => "it never began its reads",
        };
        self.kill_all(format!(
            "reader process {k} of {n} (pid {pid}) hung on unit {unit}{slot}: no answer {:.1} s after its \
             interval's end ({how}); every reader process was killed",
            grace.as_secs_f64()
        ))
    }

    /// Reader process `k` has not answered `order` within `patience`: every process is
    /// killed, as for one late after an interval, and the error names it.
    fn unanswered(&mut self, k: usize, order: &Order, patience: Duration) -> anyhow::Error {
        let (n, pid) = (self.procs.len(), self.procs[k].child.id());
        let what = match order {
            Order::Open { unit, slot, .. } => format!("to open unit {unit} (slot {slot})"),
            Order::Close { unit } => format!("to close unit {unit}"),
            Order::Interval { unit, .. } => format!("of an interval on unit {unit}"),
        };
        self.kill_all(format!(
            "reader process {k} of {n} (pid {pid}) hung: no answer to its order {what} in {:.1} s; every \
             reader process was killed",
            patience.as_secs_f64()
        ))
    }

    /// Kills every process and keeps `why`, which every later order fails with.
    fn kill_all(&mut self, why: String) -> anyhow::Error {
        for p in self.procs.drain(..) {
            kill(p);
        }
        self.killed = Some(why.clone());
        anyhow!(why)
    }
}

/// When an interval's readers are due: [`GRACE`] after the interval's end, which is its
/// deadline or, when later, the moment its writer is seen done (readers read until then).
/// A writer still at work past the deadline while every reader has begun is a writer's
/// quota, not a reader's fault: the readers are then not yet due. One still waiting for a
/// reader to begin (stale readers) is: the readers are due at the deadline and the grace.
struct Due {
    deadline: Instant,
    grace: Duration,
    /// When the writer was first seen done.
    written: Option<Instant>,
}

impl Due {
    fn new(deadline: Instant, grace: Duration) -> Due {
        Due { deadline, grace, written: None }
    }

    /// How long to wait for answers before looking again: zero once the readers are late.
    fn left(&mut self, board: &concurrent::Board, readers: u32) -> Duration {
        let now = Instant::now();
        if now < self.deadline {
            // Nothing wakes the worker inside the interval but an answer.
            return self.deadline - now;
        }
        if self.written.is_none() && board.written() {
            self.written = Some(now);
        }
        match self.written {
            Some(w) => (w.max(self.deadline) + self.grace).saturating_duration_since(now),
            // A writer that waits for a reader to begin: due from the deadline, looked at
            // again in case the writer ends after all.
            None if board.begun() < readers => (self.deadline + self.grace).saturating_duration_since(now).min(LOOK),
            // The writer's quota outlasts the interval: the readers read on until it is met.
            None => LOOK,
        }
    }
}

/// Waits until one of `fds` has something to read (or has ended), at most `patience`.
fn readable(fds: &[i32], patience: Duration) {
    let mut polled: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ms = patience.as_millis().min(i32::MAX as u128 - 1) as i32 + 1;
    // SAFETY: an array of pollfd of our own, its length given; an interrupted poll is
    // only an early look.
    unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, ms) };
}

/// Makes reads of `answers` return at once when nothing has come.
fn nonblocking(answers: &ChildStdout) -> std::io::Result<()> {
    let fd = answers.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Ends `p` now: SIGKILL, which a stopped process obeys too, and waits for it.
fn kill(p: Proc) {
    let Proc { mut child, orders, answers, .. } = p;
    drop((orders, answers));
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for ReaderProcs {
    /// Closes every process's orders (it ends at their end), and kills one that has not
    /// ended within [`ENDING`]: none is left behind.
    fn drop(&mut self) {
        for p in self.procs.drain(..) {
            let Proc { mut child, orders, answers, .. } = p;
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
            Order::Interval { unit, deadline_ns, cpu: at, reader_txn, keys } => {
                let Some((env, rng)) = envs.get_mut(&unit) else {
                    bail!("told to read unit {unit}, which is not open");
                };
                if cpu != Some(at) {
                    concurrent::pin(at).with_context(|| format!("cannot hold a reader process to CPU {at}"))?;
                    cpu = Some(at);
                }
                let crew = Crew { readers: 1, reader_txn, writer: None, keys };
                let mark = (index, deadline_ns);
                match concurrent::read_apart(env, &crew, rng, (board.clone(), mark), instant(deadline_ns)) {
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
