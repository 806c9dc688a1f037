//! Readers beside a writer on one environment, an interval at a time (db_bench's
//! readwhilewriting, ioarena's `-r`/`-w`). A unit's crew of reader threads and at most
//! one writer is parked between intervals: the threads start together when an interval
//! opens and stop when it closes, so several units' crews in one process take turns and
//! no interval of one overlaps another's work (pairing, as chunks pair the one-thread
//! workloads). Each interval reports what every thread did in it.

use std::ops::Deref;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub use super::dataset::SplitMix64;
use super::lmdb::{ok, val, Api, Database, Env, EnvOptions, Failed, MDB_env, MDB_txn};
use crate::ffi::bindings as sys;

/// Bytes of every value the crews read and write.
pub const VALUE_BYTES: usize = 100;
/// The longest get a reader's histogram holds exactly; longer ones are counted at it.
const LATENCY_CEILING_NS: u64 = 60_000_000_000;

/// An empty histogram of gets' latencies, as every reader keeps one.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, LATENCY_CEILING_NS, 2).expect("valid bounds")
}

/// How the readers hold their read transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReaderTxn {
    /// mdb_txn_reset and mdb_txn_renew around every get (db_bench's readrandom): the
    /// thread's reader slot, claimed at its first begin, is kept in its thread-local key,
    /// so the reader table's mutex is taken once per reader and environment.
    PerGet,
    /// One read transaction for the whole interval.
    PerInterval,
    /// mdb_txn_begin and mdb_txn_abort around every get, in an environment opened with
    /// MDB_NOTLS ([`ReaderTxn::env_flags`]): without a thread-local slot every begin claims
    /// one under the lock file's reader-table mutex (mdb_txn_renew0) and every abort
    /// releases it (mdb_txn_end with MDB_END_SLOT): the reader table a lock file's format
    /// lays out, 1.0's (version 2) as 0.9's (version 1), by the same code in both.
    SlotPerGet,
}

impl ReaderTxn {
    /// The flags an environment these readers read needs: MDB_NOTLS for a slot per get
    /// (with thread-local slots an abort keeps the slot for the thread's next begin).
    pub fn env_flags(self) -> u32 {
        match self {
            ReaderTxn::SlotPerGet => sys::MDB_NOTLS,
            ReaderTxn::PerGet | ReaderTxn::PerInterval => 0,
        }
    }
}

/// What the writer does, when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writer {
    /// Overwrites of random existing keys per write transaction (1 or 1,000 in the anchors).
    pub puts_per_txn: u32,
    /// Puts per second at most (LMDB dbbench's `--writes_per_second`); None: as fast as it can.
    pub rate: Option<u32>,
    /// Puts per interval at most: the writer then waits for the interval's end, so what
    /// it leaves in the file is the same in every run.
    pub quota: Option<u64>,
}

/// One crew's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crew {
    pub readers: u32,
    pub reader_txn: ReaderTxn,
    pub writer: Option<Writer>,
    /// Keys in the database, 0..keys, as 16 decimal digits.
    pub keys: u32,
}

/// What one thread did in one interval.
#[derive(Debug, Clone)]
pub struct Work {
    pub ops: u64,
    /// When its first operation began and its last ended.
    pub first: Instant,
    pub last: Instant,
    /// The thread's CPU time over the same span: its work without the time it waited
    /// for a core (3 threads on 2 cores wait, and the scheduler decides how long).
    pub cpu: Duration,
    /// Gets only: each get's time, reset and renew included with `PerGet`.
    pub latency: Option<Histogram<u64>>,
    /// Readers: the sum of the value bytes they saw, so a read the compiler could skip
    /// is still done and a wrong read is seen.
    pub bytes: u64,
}

/// What a crew did in one interval.
#[derive(Debug, Clone)]
pub struct CrewInterval {
    pub readers: Vec<Work>,
    pub writer: Option<Work>,
}

impl CrewInterval {
    /// From the first operation of any thread to the last.
    pub fn span(&self) -> (Instant, Instant) {
        let all = || self.readers.iter().chain(&self.writer);
        let first = all().map(|w| w.first).min().expect("a crew has a thread");
        let last = all().map(|w| w.last).max().expect("a crew has a thread");
        (first, last)
    }
}

/// The key `i` as 16 decimal digits, db_bench's keys.
pub fn key(i: u32) -> [u8; 16] {
    let mut k = [b'0'; 16];
    let mut n = i;
    for d in k.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    k
}

/// The index a key of [`key`] spells.
fn key_index(k: &[u8; 16]) -> u32 {
    k.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as u32
}

/// The value of key `i` in its `version`-th write: its bytes name both, so a reader can
/// check what it read.
fn value(i: u32, version: u32) -> [u8; VALUE_BYTES] {
    let mut v = [0u8; VALUE_BYTES];
    v[..4].copy_from_slice(&i.to_le_bytes());
    v[4..8].copy_from_slice(&version.to_le_bytes());
    v
}

/// Makes the environment a crew runs on in `dir`: `keys` keys of [`VALUE_BYTES`] each,
/// in the unnamed database.
pub fn fill<'a>(api: &'a Api, dir: &Path, keys: u32, flags: u32) -> Result<Env<'a>> {
    let map_size = map_size(keys);
    let o = EnvOptions { map_size, flags, txn_flags: 0, db: Database::Unnamed, lmdb10: Default::default() };
    let env = Env::open(api, dir, &o)?;
    let txn = env.begin(false)?;
    for i in 0..keys {
        put(&env, txn, i, sys::MDB_APPEND)?;
    }
    api.check("mdb_txn_commit", unsafe { (api.mdb_txn_commit)(txn) })?;
    Ok(env)
}

/// Key `i` with its first value put in `txn` (untimed: filling and ageing); the
/// transaction is aborted when the put fails.
fn put(env: &Env, txn: *mut MDB_txn, i: u32, flags: u32) -> Result<()> {
    let api = env.api;
    let (k, v) = (key(i), value(i, 0));
    let (mut k, mut v) = (val(&k), val(&v));
    // SAFETY: txn is a live write transaction of env.
    let rc = unsafe { (api.mdb_put)(txn, env.dbi, &mut k, &mut v, flags) };
    if rc != 0 {
        unsafe { (api.mdb_txn_abort)(txn) };
        api.check("mdb_put", rc)?;
    }
    Ok(())
}

/// Single-put commits a held reader keeps from reuse in [`age`]: about three pages each, so
/// the freelist ends far past what a reader stalled in one get leaves (tens to hundreds).
pub const AGEING_PUTS: u32 = 500;

/// Ages `env` (of `keys` keys) as a reader stalled in a get would, untimed: a read
/// transaction held over `puts` single-put commits, then one more commit, after which the
/// pages they freed are reusable. A fresh environment's writer is fast until the first such
/// stall grows its freelist, then slower for the rest of the pass, about 1.6× (8.7 µs a put
/// against 13.5–15 µs, one reader, AMD EPYC); when that first stall comes is the
/// scheduler's draw, so without this a unit's process was fast or slow by chance
/// (reports/README.md, "Readers beside a writer: pairing by reader count, and the writer's
/// first stall").
pub fn age(env: &Env, keys: u32, puts: u32) -> Result<()> {
    let api = env.api;
    let reader = env.begin(true)?;
    let mut rng = SplitMix64(AGEING_SEED);
    let mut commit = |n: u32| -> Result<()> {
        for _ in 0..n {
            let txn = env.begin(false)?;
            put(env, txn, (rng.next_u64() % u64::from(keys)) as u32, 0)?;
            api.check("mdb_txn_commit", unsafe { (api.mdb_txn_commit)(txn) })?;
        }
        Ok(())
    };
    let held = commit(puts);
    // SAFETY: the read transaction of this thread, begun above.
    unsafe { (api.mdb_txn_abort)(reader) };
    held?;
    commit(1)
}

/// The keys [`age`] overwrites: the same for every unit.
const AGEING_SEED: u64 = 0x5EED_A6E;

/// The map of `keys` keys: room for the writer's copies beside a stale reader's pages.
pub fn map_size(keys: u32) -> u64 {
    (u64::from(keys) * 400).max(1 << 24) * 4
}

/// An environment handle the crew's threads share: LMDB's environments are made for
/// use from many threads, each with transactions of its own; with mdb_txn_begin's flags
/// for the writer's transactions ([`Env::txn_flags`]).
#[derive(Clone, Copy)]
struct Shared(*mut MDB_env, sys::MDB_dbi, u32);
// SAFETY: see above; every transaction stays in the thread that began it.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// A crew's threads, parked between intervals; the scope they run in joins them.
pub struct Running {
    crew: Crew,
    /// Each thread's CPU by [`placement`], readers first and the writer last.
    places: Vec<usize>,
    /// Reader threads in this process: none when the readers are processes of their own.
    local_readers: u32,
    open: Barrier,
    closed: Barrier,
    signals: Signals,
    quit: AtomicBool,
    results: Mutex<Vec<Option<Result<Work, String>>>>,
}

impl Running {
    /// `crew` held to `cpus`, its readers threads of this process or (`remote`) reader
    /// processes that share `board`.
    fn new(crew: Crew, cpus: &[usize], board: Arc<SharedBoard>, remote: bool) -> Running {
        let local_readers = if remote { 0 } else { crew.readers };
        let n = local_readers as usize + usize::from(crew.writer.is_some());
        Running {
            crew,
            places: placement(&crew, cpus),
            local_readers,
            open: Barrier::new(n + 1),
            closed: Barrier::new(n + 1),
            signals: Signals::new(board),
            quit: AtomicBool::new(false),
            results: Mutex::new(vec![None; n]),
        }
    }

    /// Starts the crew's threads of this process on `env` in `scope`, each held to its
    /// CPU; they wait for [`Running::interval`]. `seed` draws each thread's keys. Their
    /// handles, to be joined before the environment closes: a scope's end waits for a
    /// thread's closure only, and LMDB's destructor of a thread's reader slot runs after it.
    pub fn start<'scope, 'env: 'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, 'env>,
        env: &Env<'env>,
        seed: u64,
    ) -> Vec<ScopedJoinHandle<'scope, ()>> {
        let (api, shared) = (env.api, Shared(env.env, env.dbi, env.txn_flags));
        let readers = self.crew.readers as usize;
        let local = (0..self.local_readers as usize).chain(self.crew.writer.map(|_| readers));
        let mut handles = Vec::new();
        for (slot, thread) in local.enumerate() {
            let (cpu, is_writer) = (self.places[thread], thread == readers);
            let mut rng = thread_rng(seed, thread);
            handles.push(scope.spawn(move || {
                let shared = shared;
                let pinned = pin(cpu).map_err(|e| format!("cannot hold a crew's thread to CPU {cpu}: {e}"));
                self.serve(api, shared, (slot, is_writer), pinned, &mut rng)
            }));
        }
        handles
    }

    /// A crew's thread: one interval's work each time the crew opens, until it quits; a
    /// thread that could not be held to its CPU fails every interval instead.
    fn serve(
        &self,
        api: &Api,
        env: Shared,
        (slot, is_writer): (usize, bool),
        pinned: Result<(), String>,
        rng: &mut SplitMix64,
    ) {
        let failed = |e: Failed| api.failure(e).to_string();
        let mut version = 0u32;
        loop {
            self.open.wait();
            if self.quit.load(Ordering::Acquire) {
                return;
            }
            let work = match (&pinned, is_writer, self.crew.writer) {
                (Err(e), ..) => {
                    if is_writer {
                        // Readers wait for the writer's end, which this is.
                        self.signals.board.written.store(1, Ordering::Release);
                    }
                    Err(e.clone())
                }
                (Ok(()), true, Some(w)) => {
                    version += 1;
                    let work = write(api, env, (&self.crew, w, version), rng, &self.signals);
                    // Every way out says so: readers wait for the writer's end.
                    self.signals.board.written.store(1, Ordering::Release);
                    work.map_err(failed)
                }
                (Ok(()), ..) => read(api, env, &self.crew, rng, &self.signals).map_err(failed),
            };
            self.results.lock().expect("not poisoned")[slot] = Some(work);
            self.closed.wait();
        }
    }

    /// Opens the crew for `length` and waits for every thread (and, with `remote`, every
    /// reader process, unit `unit` of theirs) to stop. Each thread ends at the deadline by
    /// its own clock: a coordinator woken from a sleep to say stop waits for a core while
    /// the crew's threads hold them, a scheduler slice (ms) that would stretch every
    /// interval by whatever the host's load makes it.
    pub fn interval(
        &self,
        length: Duration,
        mut remote: Option<(&mut dyn RemoteReaders, usize)>,
    ) -> Result<CrewInterval> {
        let deadline = Instant::now() + length;
        self.signals.reset(self.crew.writer.is_some(), deadline);
        if let Some((r, unit)) = remote.as_mut() {
            // Told before the writer is let go: a process wakes as late as a parked thread.
            r.begin(*unit, &self.crew, deadline, &self.places[..self.crew.readers as usize])?;
        }
        self.open.wait();
        let far = remote.map(|(r, _)| r.end(self.crew.readers));
        if far.as_ref().is_some_and(Result::is_err) {
            // A writer waiting for readers that will never begin gives up.
            self.signals.abandoned.store(true, Ordering::Release);
        }
        self.closed.wait();
        // A reader process's end first: the writer's failure then is only its echo.
        let far = far.transpose()?;
        let mut done: Vec<Work> = Vec::new();
        for r in self.results.lock().expect("not poisoned").iter_mut() {
            match r.take() {
                Some(Ok(w)) => done.push(w),
                Some(Err(e)) => bail!("{e}"),
                None => bail!("a thread of the crew reported nothing"),
            }
        }
        let writer = self.crew.writer.map(|_| done.pop().expect("the writer's slot is last"));
        Ok(CrewInterval { readers: far.unwrap_or(done), writer })
    }

    /// Ends the crew's threads (their scope joins them).
    pub fn finish(&self) {
        self.quit.store(true, Ordering::Release);
        self.open.wait();
    }
}

/// Runs `crews` (each on its own environment, of its own library) for `intervals` rounds
/// of `length` each, every round in the order `order(round)` gives (called between
/// rounds, outside every interval), one crew's interval at a time.
pub fn alternate<'a>(
    envs: &[Env<'a>],
    crews: &[Crew],
    rounds: (u32, Duration),
    order: impl FnMut(u32) -> Vec<usize>,
) -> Result<Vec<Vec<CrewInterval>>> {
    alternate_with(envs, crews, None, rounds, order)
}

/// [`alternate`], the readers of every crew in reader processes when `remote` is given:
/// crew `k`'s are unit `k` of theirs, its environment already open in each.
pub fn alternate_with<'a>(
    envs: &[Env<'a>],
    crews: &[Crew],
    mut remote: Option<&mut dyn RemoteReaders>,
    (intervals, length): (u32, Duration),
    mut order: impl FnMut(u32) -> Vec<usize>,
) -> Result<Vec<Vec<CrewInterval>>> {
    let cpus = allowed_cpus()?;
    let board = match remote.as_ref() {
        Some(r) => r.board(),
        None => Arc::new(SharedBoard::anonymous()?),
    };
    let running: Vec<Running> =
        crews.iter().map(|c| Running::new(*c, &cpus, board.clone(), remote.is_some())).collect();
    std::thread::scope(|scope| {
        // One seed for every crew: each unit's writer overwrites the same keys in the same order.
        let threads: Vec<ScopedJoinHandle<'_, ()>> =
            envs.iter().zip(&running).flat_map(|(env, crew)| crew.start(scope, env, CREW_SEED)).collect();
        let mut out: Vec<Vec<CrewInterval>> = crews.iter().map(|_| Vec::new()).collect();
        let mut result = Ok(());
        'rounds: for round in 0..intervals {
            for unit in order(round) {
                let far = remote.as_mut().map(|r| (&mut **r as &mut dyn RemoteReaders, unit));
                match running[unit].interval(length, far) {
                    Ok(i) => out[unit].push(i),
                    Err(e) => {
                        result = Err(e);
                        break 'rounds;
                    }
                }
            }
        }
        running.iter().for_each(Running::finish);
        // Joined whole (their threads' destructors run), so none touches an environment
        // that closes after: a reader slot's destructor after its map was gone crashed.
        for t in threads {
            if let Err(panic) = t.join() {
                std::panic::resume_unwind(panic);
            }
        }
        result.map(|()| out)
    })
}

/// The seed of every crew's keys.
pub const CREW_SEED: u64 = 1;

/// The keys of a crew's `thread`-th thread (readers first, the writer last), from `seed`:
/// a reader in a process of its own draws those of the reader thread it stands for.
pub fn thread_rng(seed: u64, thread: usize) -> SplitMix64 {
    SplitMix64(seed ^ (thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Reader processes a crew's readers run in (`workload::reader_procs`): told an interval's
/// unit and deadline before the writer starts, asked what each did once it is over.
pub trait RemoteReaders {
    /// The board they share with the writer.
    fn board(&self) -> Arc<SharedBoard>;
    /// Starts the first `crew.readers` of them on `unit` until `deadline`, the k-th held
    /// to `cpus[k]`.
    fn begin(&mut self, unit: usize, crew: &Crew, deadline: Instant, cpus: &[usize]) -> Result<()>;
    /// What each of the first `readers` did, once all have stopped.
    fn end(&mut self, readers: u32) -> Result<Vec<Work>>;
}

/// A reader's interval in a process of its own (`workload::reader_procs`): the gets a
/// reader thread makes (see [`read`]) on `env`, until `deadline` and the writer's end on
/// `board`, with `rng` the keys of the reader thread it stands for; `mark`, its index and
/// the interval's stamp, is put on the board when its reads begin.
pub fn read_apart(
    env: &Env,
    crew: &Crew,
    rng: &mut SplitMix64,
    (board, mark): (Arc<SharedBoard>, (usize, u64)),
    deadline: Instant,
) -> Result<Work, String> {
    let signals = Signals { mark: Some(mark), ..Signals::new(board) };
    *signals.deadline.lock().expect("not poisoned") = Some(deadline);
    read(env.api, Shared(env.env, env.dbi, env.txn_flags), crew, rng, &signals)
        .map_err(|e| env.api.failure(e).to_string())
}

/// The CPU each of `crew`'s threads is held to, readers first and the writer last, out of
/// `cpus` (not empty): a CPU each while there are enough; otherwise the writer keeps one of
/// its own and the readers take the others in turn. Left to the scheduler, 2 readers and a
/// writer on 2 cores shared them one way in one interval and another in the next, and a
/// reader's CPU time per get was 26% higher while the writer had a core to itself (it
/// commits faster, and every commit sends the readers to pages their caches do not hold):
/// each unit's figure for a process was set by how many intervals fell each way
/// (reports/README.md, "Readers beside a writer: each crew's threads held to their CPUs").
pub fn placement(crew: &Crew, cpus: &[usize]) -> Vec<usize> {
    let readers = crew.readers as usize;
    let threads = readers + usize::from(crew.writer.is_some());
    let (writer_cpu, reader_cpus) = match cpus.split_last() {
        Some((last, rest)) if threads > cpus.len() && crew.writer.is_some() && !rest.is_empty() => (*last, rest),
        _ => (cpus[readers % cpus.len()], cpus),
    };
    let mut places: Vec<usize> = (0..readers).map(|k| reader_cpus[k % reader_cpus.len()]).collect();
    if crew.writer.is_some() {
        places.push(writer_cpu);
    }
    places
}

/// The CPUs this process may run on (its affinity mask), in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>> {
    use nix::sched::{sched_getaffinity, CpuSet};
    let set = sched_getaffinity(nix::unistd::Pid::from_raw(0))?;
    let cpus: Vec<usize> = (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect();
    if cpus.is_empty() {
        bail!("the process may run on no CPU, by its affinity mask");
    }
    Ok(cpus)
}

/// Holds the calling thread to `cpu`.
pub fn pin(cpu: usize) -> nix::Result<()> {
    use nix::sched::{sched_setaffinity, CpuSet};
    let mut set = CpuSet::new();
    set.set(cpu)?;
    sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}

/// A reader's interval: random gets until its deadline, each timed.
fn read(api: &Api, env: Shared, crew: &Crew, rng: &mut SplitMix64, signals: &Signals) -> Result<Work, Failed> {
    let mut latency = latency_histogram();
    let mut txn: *mut MDB_txn = ptr::null_mut();
    // SAFETY: a read transaction of this thread's own, on an open environment; a reader
    // that claims a slot per get begins its transactions in `get` instead.
    let rc = match crew.reader_txn {
        ReaderTxn::SlotPerGet => 0,
        ReaderTxn::PerGet | ReaderTxn::PerInterval => unsafe {
            (api.mdb_txn_begin)(env.0, ptr::null_mut(), sys::MDB_RDONLY, &mut txn)
        },
    };
    signals.begun();
    ok("mdb_txn_begin", rc)?;
    let deadline = signals.deadline();
    let (mut ops, mut bytes) = (0u64, 0u64);
    let (first, cpu_first) = (Instant::now(), thread_cpu());
    let mut last;
    // At least one get, however late the thread was scheduled.
    let result = loop {
        let k = key((rng.next_u64() % u64::from(crew.keys)) as u32);
        let began = Instant::now();
        let got = unsafe { get(api, env, txn, &k, crew.reader_txn) };
        last = Instant::now();
        match got {
            Ok(n) => bytes += n,
            Err(e) => break Err(e),
        }
        latency.saturating_record((last - began).as_nanos() as u64);
        ops += 1;
        if signals.over(last, deadline) {
            break Ok(());
        }
    };
    let cpu = thread_cpu() - cpu_first;
    if !txn.is_null() {
        unsafe { (api.mdb_txn_abort)(txn) };
    }
    result.map(|()| Work { ops, first, last, cpu, latency: Some(latency), bytes })
}

/// The calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu() -> Duration {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID);
    Duration::from(now.expect("Linux has a CPU clock for every thread"))
}

/// One get as a reader in `mode` makes it: in `txn`, renewed around it with
/// [`ReaderTxn::PerGet`]; with [`ReaderTxn::SlotPerGet`] in a read transaction of its
/// own, begun and aborted around it (`txn` unused). The value's bytes read.
///
/// # Safety
/// `txn` is this thread's read transaction on `env` (but with `SlotPerGet`).
#[inline(always)]
unsafe fn get(api: &Api, env: Shared, txn: *mut MDB_txn, k: &[u8; 16], mode: ReaderTxn) -> Result<u64, Failed> {
    match mode {
        ReaderTxn::PerInterval => lookup(api, env, txn, k),
        ReaderTxn::PerGet => {
            (api.mdb_txn_reset)(txn);
            ok("mdb_txn_renew", (api.mdb_txn_renew)(txn))?;
            lookup(api, env, txn, k)
        }
        ReaderTxn::SlotPerGet => {
            let mut own: *mut MDB_txn = ptr::null_mut();
            ok("mdb_txn_begin", (api.mdb_txn_begin)(env.0, ptr::null_mut(), sys::MDB_RDONLY, &mut own))?;
            // The value is read inside `lookup`, while the transaction still holds its page.
            let got = lookup(api, env, own, k);
            (api.mdb_txn_abort)(own);
            got
        }
    }
}

/// The get of key `i` a crew's reader in `mode` makes, once, on `env`, in `txn` (a read
/// transaction of this thread; null with [`ReaderTxn::SlotPerGet`]): what a test
/// reads the reader table around. The value's bytes read.
pub fn get_once(env: &Env, txn: *mut MDB_txn, i: u32, mode: ReaderTxn) -> Result<u64> {
    // SAFETY: the caller's transaction of this thread, as documented, or none.
    unsafe { get(env.api, Shared(env.env, env.dbi, env.txn_flags), txn, &key(i), mode) }
        .map_err(|e| env.api.failure(e).into())
}

/// The get of `k` in `txn`, its value checked; the value's bytes read.
///
/// # Safety
/// `txn` is a live read transaction of this thread on `env`.
#[inline(always)]
unsafe fn lookup(api: &Api, env: Shared, txn: *mut MDB_txn, k: &[u8; 16]) -> Result<u64, Failed> {
    let mut kv = val(k);
    let mut v = super::lmdb::empty_val();
    ok("mdb_get", (api.mdb_get)(txn, env.1, &mut kv, &mut v))?;
    // The first and last byte: the page is touched, and the read cannot be skipped.
    let data = std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size);
    // A value names its key (see `value`): anything else is a wrong read.
    if v.mv_size != VALUE_BYTES || data[..4] != key_index(k).to_le_bytes() {
        return Err(("mdb_get (a value of another key)", sys::MDB_CORRUPTED));
    }
    Ok(u64::from(data[0]) + u64::from(data[v.mv_size - 1]) + v.mv_size as u64)
}

/// The writer's interval: overwrites of random keys, `puts_per_txn` a transaction, at
/// most `rate` a second, at least one transaction, until its deadline (a transaction under
/// way is committed) or, with a quota, until it is met, however long that takes.
fn write(
    api: &Api,
    env: Shared,
    (crew, w, version): (&Crew, Writer, u32),
    rng: &mut SplitMix64,
    signals: &Signals,
) -> Result<Work, Failed> {
    let deadline = signals.deadline();
    let stop = || Instant::now() >= deadline;
    // Readers that hold a transaction for the interval hold it from before the first put.
    if crew.reader_txn == ReaderTxn::PerInterval {
        while signals.board.begun.load(Ordering::Acquire) < crew.readers {
            if signals.abandoned.load(Ordering::Acquire) {
                return Err(("the readers' read transactions (a reader process ended first)", sys::MDB_PANIC));
            }
            std::hint::spin_loop();
        }
    }
    let (first, cpu_first) = (Instant::now(), thread_cpu());
    let mut ops = 0u64;
    let mut last;
    loop {
        let mut txn: *mut MDB_txn = ptr::null_mut();
        ok("mdb_txn_begin", unsafe { (api.mdb_txn_begin)(env.0, ptr::null_mut(), env.2, &mut txn) })?;
        for _ in 0..w.puts_per_txn {
            let i = (rng.next_u64() % u64::from(crew.keys)) as u32;
            let (k, v) = (key(i), value(i, version));
            let (mut k, mut v) = (val(&k), val(&v));
            let rc = unsafe { (api.mdb_put)(txn, env.1, &mut k, &mut v, 0) };
            if rc != 0 {
                unsafe { (api.mdb_txn_abort)(txn) };
                return Err(("mdb_put", rc));
            }
            ops += 1;
        }
        ok("mdb_txn_commit", unsafe { (api.mdb_txn_commit)(txn) })?;
        last = Instant::now();
        if w.quota.is_some_and(|q| ops >= q) {
            break;
        }
        if let Some(rate) = w.rate {
            let due = first + Duration::from_secs_f64(ops as f64 / f64::from(rate));
            while Instant::now() < due && !stop() {
                std::thread::sleep(Duration::from_micros(100).min(due.saturating_duration_since(Instant::now())));
            }
        }
        if w.quota.is_none() && stop() {
            break;
        }
    }
    // Read once, after the last commit: no clock of the CPU's inside the puts it times.
    let cpu = thread_cpu() - cpu_first;
    signals.board.written.store(1, Ordering::Release);
    std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
    Ok(Work { ops, first, last, cpu, latency: None, bytes: 0 })
}

/// What a crew's writer and readers tell each other within an interval, in memory that
/// reader processes map too: plain counters, the same in every process.
#[repr(C)]
pub struct Board {
    /// Readers whose read transaction of the interval has begun.
    begun: AtomicU32,
    /// 1 once the writer is done with the interval (or when there is none).
    written: AtomicU32,
    /// Reader process k's mark: the stamp (its deadline, CLOCK_MONOTONIC ns) of the last
    /// interval whose reads it began, so that a worker whose reader is late can say
    /// whether it ever began; written once an interval, never in the gets.
    began: [AtomicU64; MAX_READER_PROCS],
}

/// The most reader processes a board has marks for.
pub const MAX_READER_PROCS: usize = 1024;

impl Board {
    /// Whether the writer is done with the interval (or there is none).
    pub fn written(&self) -> bool {
        self.written.load(Ordering::Acquire) == 1
    }

    /// How many readers have begun their reads this interval.
    pub fn begun(&self) -> u32 {
        self.begun.load(Ordering::Acquire)
    }

    /// Whether reader process `k` began the reads of the interval stamped `stamp`.
    pub fn began(&self, k: usize, stamp: u64) -> bool {
        self.began.get(k).is_some_and(|m| m.load(Ordering::Acquire) == stamp)
    }
}

/// A [`Board`] in a shared mapping: anonymous for threads, of a file for processes.
pub struct SharedBoard(NonNull<Board>);

// SAFETY: the board is atomics only, made for use from many threads and processes.
unsafe impl Send for SharedBoard {}
unsafe impl Sync for SharedBoard {}

impl SharedBoard {
    /// Zeroed memory of this process's own (its threads share it).
    pub fn anonymous() -> std::io::Result<SharedBoard> {
        SharedBoard::map(libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1)
    }

    /// `file`'s first bytes, which every process that maps it shares; the file is made
    /// as long as a board (zeroed) if it is shorter.
    pub fn of(file: &std::fs::File) -> std::io::Result<SharedBoard> {
        let bytes = std::mem::size_of::<Board>() as u64;
        if file.metadata()?.len() < bytes {
            file.set_len(bytes)?;
        }
        SharedBoard::map(libc::MAP_SHARED, file.as_raw_fd())
    }

    fn map(flags: libc::c_int, fd: RawFd) -> std::io::Result<SharedBoard> {
        let bytes = std::mem::size_of::<Board>();
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh mapping of our own, unmapped on drop.
        let p = unsafe { libc::mmap(ptr::null_mut(), bytes, prot, flags, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SharedBoard(NonNull::new(p.cast()).expect("mmap returns no null mapping")))
    }
}

impl Deref for SharedBoard {
    type Target = Board;
    fn deref(&self) -> &Board {
        // SAFETY: mapped, aligned to a page, and zeroed memory is a valid Board.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for SharedBoard {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, no longer referred to.
        unsafe { libc::munmap(self.0.as_ptr().cast(), std::mem::size_of::<Board>()) };
    }
}

/// What a crew's threads tell each other within an interval.
struct Signals {
    /// When the interval's length has passed.
    deadline: Mutex<Option<Instant>>,
    board: Arc<SharedBoard>,
    /// A reader process ended: the writer waits for its readers no longer.
    abandoned: AtomicBool,
    /// A reader process's index and the interval's stamp, marked on the board as it begins.
    mark: Option<(usize, u64)>,
}

impl Signals {
    fn new(board: Arc<SharedBoard>) -> Signals {
        Signals { deadline: Mutex::new(None), board, abandoned: AtomicBool::new(false), mark: None }
    }

    /// A reader has begun its reads: counted, and marked when it is a process.
    fn begun(&self) {
        self.board.begun.fetch_add(1, Ordering::AcqRel);
        if let Some((k, stamp)) = self.mark {
            if let Some(m) = self.board.began.get(k) {
                m.store(stamp, Ordering::Release);
            }
        }
    }

    fn reset(&self, writer: bool, deadline: Instant) {
        *self.deadline.lock().expect("not poisoned") = Some(deadline);
        self.board.begun.store(0, Ordering::SeqCst);
        self.board.written.store(u32::from(!writer), Ordering::SeqCst);
        self.abandoned.store(false, Ordering::Release);
    }

    /// The interval's deadline, set before its threads are let go.
    fn deadline(&self) -> Instant {
        self.deadline.lock().expect("not poisoned").expect("set when the interval opens")
    }

    /// A reader's interval is over at `now`: its deadline has passed and the writer is
    /// done, so a reader held open is open across every put.
    fn over(&self, now: Instant, deadline: Instant) -> bool {
        now >= deadline && self.board.written.load(Ordering::Acquire) == 1
    }
}

/// What a crew did over a pass of intervals, as a sample carries it: each interval's span
/// and each thread's operations in it, and every get's latency as a histogram.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrewFigures {
    pub readers: u32,
    /// Each interval, from its first operation to its last, in nanoseconds.
    pub intervals_ns: Vec<u64>,
    /// Each interval: every reader thread's gets.
    pub reader_ops: Vec<Vec<u64>>,
    /// Each interval: the writer's puts; empty without a writer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writer_ops: Vec<u64>,
    /// Each interval: from the writer's first put to its last commit, in nanoseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writer_ns: Vec<u64>,
    /// Each interval: every reader thread's CPU time over its span, in nanoseconds
    /// (empty in run files from before it was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reader_cpu_ns: Vec<Vec<u64>>,
    /// Each interval: the writer's CPU time over its span, in nanoseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writer_cpu_ns: Vec<u64>,
    /// Every get of the pass: (nanoseconds, how many), the histogram's recorded buckets
    /// in ascending order (two significant digits).
    pub latency_ns: Vec<(u64, u64)>,
}

impl CrewFigures {
    /// The figures of a crew of `readers` readers that ran `intervals`.
    pub fn of(readers: u32, intervals: &[CrewInterval]) -> CrewFigures {
        let mut all = latency_histogram();
        for w in intervals.iter().flat_map(|i| &i.readers) {
            if let Some(h) = &w.latency {
                all.add(h).expect("same bounds");
            }
        }
        CrewFigures {
            readers,
            intervals_ns: intervals.iter().map(|i| i.span()).map(|(a, b)| (b - a).as_nanos() as u64).collect(),
            reader_ops: intervals.iter().map(|i| i.readers.iter().map(|w| w.ops).collect()).collect(),
            writer_ops: intervals.iter().filter_map(|i| i.writer.as_ref().map(|w| w.ops)).collect(),
            writer_ns: intervals
                .iter()
                .filter_map(|i| i.writer.as_ref())
                .map(|w| (w.last - w.first).as_nanos() as u64)
                .collect(),
            reader_cpu_ns: intervals
                .iter()
                .map(|i| i.readers.iter().map(|w| w.cpu.as_nanos() as u64).collect())
                .collect(),
            writer_cpu_ns: intervals
                .iter()
                .filter_map(|i| i.writer.as_ref())
                .map(|w| w.cpu.as_nanos() as u64)
                .collect(),
            latency_ns: all.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect(),
        }
    }

    /// Each interval's reader cost: nanoseconds of one reader thread per get (the
    /// inverse of its gets per second), so a larger figure is slower, as times are.
    pub fn reader_ns_per_get(&self) -> Vec<f64> {
        let per = |(ns, ops): (&u64, &Vec<u64>)| *ns as f64 * f64::from(self.readers) / ops.iter().sum::<u64>() as f64;
        self.intervals_ns.iter().zip(&self.reader_ops).map(per).collect()
    }

    /// Each interval's writer cost: nanoseconds per put, over the writer's own span (a
    /// writer with a quota rests after it); empty without a writer.
    pub fn writer_ns_per_put(&self) -> Vec<f64> {
        self.writer_ns.iter().zip(&self.writer_ops).map(|(ns, ops)| *ns as f64 / *ops as f64).collect()
    }

    /// Each interval's reader CPU cost: the reader threads' CPU nanoseconds per get, so
    /// the time a thread waited for a core (the scheduler's share, not LMDB's) is left
    /// out; empty in run files from before it was recorded.
    pub fn reader_cpu_ns_per_get(&self) -> Vec<f64> {
        let per = |(cpu, ops): (&Vec<u64>, &Vec<u64>)| cpu.iter().sum::<u64>() as f64 / ops.iter().sum::<u64>() as f64;
        self.reader_cpu_ns.iter().zip(&self.reader_ops).map(per).collect()
    }

    /// Each interval's writer CPU cost: CPU nanoseconds per put; empty without a writer.
    pub fn writer_cpu_ns_per_put(&self) -> Vec<f64> {
        self.writer_cpu_ns.iter().zip(&self.writer_ops).map(|(ns, ops)| *ns as f64 / *ops as f64).collect()
    }

    /// The pass's reader CPU cost: CPU nanoseconds per get over all its intervals; None
    /// without a get or without CPU times.
    pub fn pass_reader_cpu_ns_per_get(&self) -> Option<f64> {
        let cpu: u64 = self.reader_cpu_ns.iter().flatten().sum();
        (cpu > 0 && self.gets() > 0).then(|| cpu as f64 / self.gets() as f64)
    }

    /// The pass's writer CPU cost: CPU nanoseconds per put; None without a put or CPU times.
    pub fn pass_writer_cpu_ns_per_put(&self) -> Option<f64> {
        let (cpu, puts) = (self.writer_cpu_ns.iter().sum::<u64>(), self.writer_ops.iter().sum::<u64>());
        (cpu > 0 && puts > 0).then(|| cpu as f64 / puts as f64)
    }

    /// The pass's reader cost, over all its intervals: nanoseconds of a reader thread per get.
    pub fn pass_reader_ns_per_get(&self) -> Option<f64> {
        let gets: u64 = self.reader_ops.iter().flatten().sum();
        (gets > 0).then(|| self.span_ns() * f64::from(self.readers) / gets as f64)
    }

    /// The pass's writer cost: nanoseconds per put; None without a writer or a put.
    pub fn pass_writer_ns_per_put(&self) -> Option<f64> {
        let puts: u64 = self.writer_ops.iter().sum();
        (puts > 0).then(|| self.writer_ns.iter().sum::<u64>() as f64 / puts as f64)
    }

    /// Gets per second by all readers together, and by one reader thread.
    pub fn reader_ops_per_s(&self) -> (f64, f64) {
        let total = self.reader_ops.iter().flatten().sum::<u64>() as f64 / self.span_ns() * 1e9;
        (total, total / f64::from(self.readers.max(1)))
    }

    /// The writer's puts per second of its own span; None without a writer.
    pub fn writer_ops_per_s(&self) -> Option<f64> {
        self.pass_writer_ns_per_put().map(|ns| 1e9 / ns)
    }

    /// The gets of every reader thread.
    pub fn gets(&self) -> u64 {
        self.reader_ops.iter().flatten().sum()
    }

    fn span_ns(&self) -> f64 {
        self.intervals_ns.iter().sum::<u64>() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crew(readers: u32, writer: bool) -> Crew {
        let writer = writer.then_some(Writer { puts_per_txn: 1, rate: None, quota: None });
        Crew { readers, reader_txn: ReaderTxn::PerGet, writer, keys: 10 }
    }

    #[test]
    fn a_writer_beside_more_readers_than_cores_keeps_a_core_of_its_own() {
        assert_eq!(placement(&crew(2, true), &[0, 1]), [0, 0, 1]);
        assert_eq!(placement(&crew(4, true), &[2, 5, 7]), [2, 5, 2, 5, 7]);
        assert_eq!(placement(&crew(3, true), &[0]), [0, 0, 0, 0], "one CPU holds everyone");
    }

    #[test]
    fn threads_that_fit_take_a_cpu_each() {
        assert_eq!(placement(&crew(1, true), &[0, 1]), [0, 1]);
        assert_eq!(placement(&crew(2, true), &[3, 4, 6, 9]), [3, 4, 6]);
        assert_eq!(placement(&crew(3, false), &[0, 1]), [0, 1, 0], "no writer: the readers in turn");
    }

    #[test]
    fn a_pinned_thread_runs_only_on_its_cpu() {
        let cpus = allowed_cpus().unwrap();
        let last = *cpus.last().unwrap();
        let (mask, on) = std::thread::spawn(move || {
            pin(last).unwrap();
            let mask = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
            (mask, unsafe { libc::sched_getcpu() })
        })
        .join()
        .unwrap();
        assert!(cpus.iter().all(|&c| mask.is_set(c).unwrap() == (c == last)), "{cpus:?} held to {last}");
        assert_eq!(on, last as i32);
    }

    #[test]
    fn keys_are_sixteen_decimal_digits() {
        assert_eq!(&key(0), b"0000000000000000");
        assert_eq!(&key(4_294_967_295), b"0000004294967295");
    }
}
