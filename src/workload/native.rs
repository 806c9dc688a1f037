//! The Rust engine: the six workloads against one loaded liblmdb.
//!
//! Each timed function holds only the workload — no allocation, logging or checksum
//! bookkeeping — and is exported unmangled so an instruction counter (callgrind's
//! `--toggle-collect=lmdbregress_timed_*`) can count exactly its region.

use std::hint::black_box;
use std::path::Path;

use anyhow::Result;

use super::dataset::{self, ValueWriter};
use super::lmdb::{
    self, begin_cursor, bytes, empty_val, end_cursor, touch, val, walk, Api, CursorGet, CursorPut, Database, Env,
    EnvOptions, Failed, MDB_cursor, MDB_val, BACKWARD, FORWARD,
};
use super::measure::{timed, Outcome, Places, TimedFunctions};
use super::perf::PerfCounter;
use super::{Checksum, Dataset, KeyKind, Order, Workload, WorkloadConfig};
use crate::ffi::bindings as sys;

const SET_KEY: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_SET_KEY;

/// How LmdbJava's benchmark opens its environments: the database "db".
pub fn env_options(cfg: &WorkloadConfig) -> EnvOptions {
    EnvOptions {
        map_size: cfg.effective_map_size(),
        flags: lmdb::env_flags(!cfg.no_writemap, cfg.sync),
        db: Database::Named { integer_keys: cfg.keys == KeyKind::Int },
    }
}

/// One reused key buffer, as LmdbJava's `rwKey`: the timed loops write each key into it.
pub struct KeyBuffer {
    bytes: [u8; dataset::STRING_KEY_BYTES],
    size: usize,
}

impl KeyBuffer {
    pub fn new(data: &Dataset) -> KeyBuffer {
        KeyBuffer { bytes: [0; dataset::STRING_KEY_BYTES], size: data.key_size() }
    }

    /// Key `j` (a write position) as an MDB_val over this buffer. Fixed-size copies, so
    /// each is a store or two rather than a call to memcpy.
    #[inline(always)]
    fn fill(&mut self, data: &Dataset, j: usize) -> MDB_val {
        match data.key_kind {
            KeyKind::Int => self.bytes[..dataset::INT_BYTES].copy_from_slice(&data.keys[j].to_ne_bytes()),
            KeyKind::Str16 => self.bytes.copy_from_slice(&data.key_strings[j * 16..j * 16 + 16]),
        }
        MDB_val { mv_size: self.size, mv_data: self.bytes.as_mut_ptr() as *mut _ }
    }
}

/// The key and value escape to the optimiser, their bytes unread: an empty asm statement
/// with both addresses as inputs, as the C twin's CONSUME (std's black_box would first
/// store each reference to the stack).
#[inline(always)]
fn consume(k: &MDB_val, v: &MDB_val) {
    // SAFETY: an empty template; it only claims it may read memory through the pointers.
    unsafe {
        std::arch::asm!("/* {0} {1} */", in(reg) k as *const MDB_val, in(reg) v as *const MDB_val, options(nostack, preserves_flags))
    }
}

/// Result of the timed region: its own output (CRC, xxHash sum) or the failing call.
type Timed = Result<u64, Failed>;

/// # Safety (all timed functions)
/// `cur` is an open cursor on a read transaction of the database `data` was written to.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_key(
    get: CursorGet,
    cur: *mut MDB_cursor,
    data: &Dataset,
    key: &mut KeyBuffer,
) -> Timed {
    for j in 0..data.len() {
        let mut k = key.fill(data, j);
        let mut v = empty_val();
        let rc = get(cur, &mut k, &mut v, SET_KEY);
        if rc != 0 {
            return Err(("mdb_cursor_get(MDB_SET_KEY)", rc));
        }
        black_box(&v);
    }
    Ok(0)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_seq(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    walk(get, cur, FORWARD, "mdb_cursor_get", |k, v| {
        consume(k, v);
        Ok(())
    })?;
    Ok(0)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_rev(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    walk(get, cur, BACKWARD, "mdb_cursor_get", |k, v| {
        consume(k, v);
        Ok(())
    })?;
    Ok(0)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_crc(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    let mut h = crc32fast::Hasher::new();
    walk(get, cur, FORWARD, "mdb_cursor_get", |k, v| {
        h.update(bytes(k));
        h.update(bytes(v));
        Ok(())
    })?;
    Ok(h.finalize() as u64)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_xxh64(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    let mut sum = 0u64;
    walk(get, cur, FORWARD, "mdb_cursor_get", |k, v| {
        sum = sum
            .wrapping_add(xxhash_rust::xxh64::xxh64(bytes(k), 0))
            .wrapping_add(xxhash_rust::xxh64::xxh64(bytes(v), 0));
        Ok(())
    })?;
    Ok(sum)
}

/// Every entry in write order, each built in the reused key and value buffers as
/// LmdbJava's writer builds it.
///
/// # Safety
/// `env` is open; no other transaction is active.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_write(
    api: &Api,
    env: &Env,
    put: CursorPut,
    data: &Dataset,
    buffers: (&mut KeyBuffer, &mut ValueWriter),
    flags: u32,
) -> Timed {
    let (key, values) = buffers;
    let tc = begin_cursor(api, env, 0)?;
    let mut r = Ok(0);
    for j in 0..data.len() {
        let mut k = key.fill(data, j);
        let mut v = val(values.fill(j));
        let rc = put(tc.1, &mut k, &mut v, flags);
        if rc != 0 {
            r = Err(("mdb_cursor_put", rc));
            break;
        }
    }
    end_cursor(api, tc, true, r)
}

/// Each workload's timed function in this engine and in the C twin (harness/workloads.c),
/// called once per repetition.
pub fn timed_functions(w: Workload) -> TimedFunctions {
    let (rust, c) = match w {
        Workload::ReadKey => ("lmdbregress_timed_read_key", "timed_read_key"),
        Workload::ReadSeq => ("lmdbregress_timed_read_seq", "timed_read_seq"),
        Workload::ReadRev => ("lmdbregress_timed_read_rev", "timed_read_rev"),
        Workload::ReadCrc => ("lmdbregress_timed_read_crc", "timed_read_crc"),
        Workload::ReadXxh64 => ("lmdbregress_timed_read_xxh64", "timed_read_xxh64"),
        Workload::Write => ("lmdbregress_timed_write", "timed_write"),
        // Not one of the six: its own suite declares its functions.
        Workload::Preset(_) => return TimedFunctions::ManyPerPass,
    };
    TimedFunctions::OnePerPass { rust, c }
}

fn write_flags(cfg: &WorkloadConfig) -> u32 {
    match cfg.order {
        Order::Seq => sys::MDB_APPEND,
        Order::Random => 0,
    }
}

/// Writes the read database once per run and tag, as the write workload writes: in key
/// order with MDB_APPEND, or (random order) with plain puts, as LmdbJava's reader does.
pub fn prepare(api: &Api, dir: &Path, cfg: &WorkloadConfig, data: &Dataset) -> Result<()> {
    write_database(api, dir, cfg, data, write_flags(cfg))
}

/// Writes every entry of `data` into a new environment in `dir` with `flags` (untimed).
pub fn write_database(api: &Api, dir: &Path, cfg: &WorkloadConfig, data: &Dataset, flags: u32) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let env = Env::open(api, dir, &env_options(cfg))?;
    let (mut key, mut values) = (KeyBuffer::new(data), data.values());
    // SAFETY: env is open and idle.
    unsafe { lmdbregress_timed_write(api, &env, api.mdb_cursor_put, data, (&mut key, &mut values), flags) }
        .map_err(|e| api.failure(e))?;
    Ok(())
}

/// One untimed walk over the database, so the timed passes that follow take no page
/// faults: what LmdbJava's warm-up iterations leave behind. (Not a `timed_` function, so
/// instruction counters skip it.)
pub fn fault_in(env: &Env) -> Result<()> {
    // SAFETY: the value's bytes are the transaction's, live during the walk.
    env.walk(|_, v| unsafe { touch(&val(v)) })?;
    Ok(())
}

/// The verify step: each of `reads` walked once through this library, untimed, on the
/// read database in `dir`, and handed to `report` with its checksum or why there is none.
pub fn verify_all(
    api: &Api,
    dir: &Path,
    cfg: &WorkloadConfig,
    reads: &[Workload],
    mut report: impl FnMut(Workload, Result<Checksum, String>),
) {
    let data = Dataset::generate(cfg);
    let env = Env::open(api, dir, &env_options(cfg));
    for &w in reads {
        report(
            w,
            match &env {
                Ok(env) => verify(api, env, w, &data).map_err(|e| format!("{e:#}")),
                Err(e) => Err(e.to_string()),
            },
        );
    }
}

/// The untimed check, once per run for each engine and tag: what each read workload
/// visits, hashed as its [`Checksum`] says, through this library.
pub fn verify(api: &Api, env: &Env, w: Workload, data: &Dataset) -> Result<Checksum> {
    let get = api.mdb_cursor_get;
    let mut entries = 0u64;
    let mut xx = xxhash_rust::xxh64::Xxh64::new(0);
    let mut crc = crc32fast::Hasher::new();
    let mut sum = 0u64;
    let mut each = |k: &[u8], v: &[u8]| {
        xx.update(k);
        xx.update(v);
        crc.update(k);
        crc.update(v);
        sum = sum.wrapping_add(xxhash_rust::xxh64::xxh64(k, 0)).wrapping_add(xxhash_rust::xxh64::xxh64(v, 0));
        entries += 1;
    };
    // SAFETY: a cursor on a fresh read transaction, closed right after; pointers valid until then.
    unsafe {
        let tc = begin_cursor(api, env, sys::MDB_RDONLY).map_err(|e| api.failure(e))?;
        let mut walked = |k: &mut MDB_val, v: &mut MDB_val| {
            each(bytes(k), bytes(v));
            Ok(())
        };
        let r = match w {
            Workload::ReadKey => by_key(get, tc.1, data, &mut each),
            Workload::ReadRev => walk(get, tc.1, BACKWARD, "mdb_cursor_get", &mut walked).map(drop),
            _ => walk(get, tc.1, FORWARD, "mdb_cursor_get", &mut walked).map(drop),
        };
        end_cursor(api, tc, false, r).map_err(|e| api.failure(e))?;
    }
    let digest = match w {
        Workload::ReadCrc => crc.finalize() as u64,
        Workload::ReadXxh64 => sum,
        _ => xx.digest(),
    };
    Ok(Checksum { entries, digest })
}

/// Every key in write order through MDB_SET_KEY, handing each key and found value on.
unsafe fn by_key(
    get: CursorGet,
    cur: *mut MDB_cursor,
    data: &Dataset,
    mut each: impl FnMut(&[u8], &[u8]),
) -> Result<(), Failed> {
    for j in 0..data.len() {
        let mut k = val(data.key(j));
        let mut v = empty_val();
        let rc = get(cur, &mut k, &mut v, SET_KEY);
        if rc != 0 {
            return Err(("mdb_cursor_get(MDB_SET_KEY)", rc));
        }
        each(data.key(j), bytes(&v));
    }
    Ok(())
}

/// Opens the read database and faults its pages in, once per worker.
fn open_reads<'a>(api: &'a Api, cfg: &WorkloadConfig, dir: Option<&Path>) -> Result<Env<'a>, String> {
    let dir = dir.ok_or("reads need --dir")?;
    let env = Env::open(api, dir, &env_options(cfg)).map_err(|e| e.to_string())?;
    fault_in(&env).map_err(|e| format!("{e:#}"))?;
    Ok(env)
}

/// One worker's passes of the six: the data generated once, the read database opened
/// (and faulted in) once, and only if a read is asked for.
pub struct Session<'a> {
    api: &'a Api,
    cfg: &'a WorkloadConfig,
    places: Places<'a>,
    data: std::cell::OnceCell<Dataset>,
    reads_env: Option<Result<Env<'a>, String>>,
}

impl<'a> Session<'a> {
    pub fn new(api: &'a Api, cfg: &'a WorkloadConfig, places: Places<'a>) -> Session<'a> {
        Session { api, cfg, places, data: std::cell::OnceCell::new(), reads_env: None }
    }

    /// Times `w` `places.iterations` times: a read on the read database, the write on
    /// fresh environments.
    pub fn run(&mut self, w: Workload, counter: Option<&mut PerfCounter>) -> Result<Outcome> {
        let (api, cfg, places) = (self.api, self.cfg, self.places);
        let data = self.data.get_or_init(|| Dataset::generate(cfg));
        match w {
            Workload::Preset(p) => Err(anyhow::anyhow!("{} is not one of LmdbJava's workloads", p.name())),
            Workload::Write => run_write(api, places.scratch, cfg, data, places.iterations, counter),
            _ => match self.reads_env.get_or_insert_with(|| open_reads(api, cfg, places.dir)) {
                Ok(env) => run_read(api, env, w, data, places.iterations, counter),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            },
        }
    }
}

/// Times read workload `w` `iterations` times on the open read database; readCrc and
/// readXxh64 also report what each pass computed.
pub fn run_read(
    api: &Api,
    env: &Env,
    w: Workload,
    data: &Dataset,
    iterations: u32,
    mut counter: Option<&mut PerfCounter>,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    for _ in 0..iterations {
        let (ns, instructions, output) = time_read(api, env, w, data, counter.as_deref_mut())?;
        out.push(ns, instructions);
        if matches!(w, Workload::ReadCrc | Workload::ReadXxh64) {
            out.outputs.push(output);
        }
    }
    Ok(out)
}

/// Times one read workload once. The transaction and cursor are opened before the clock
/// starts and closed after it stops, as LmdbJava's benchmark holds them open.
fn time_read(
    api: &Api,
    env: &Env,
    w: Workload,
    data: &Dataset,
    counter: Option<&mut PerfCounter>,
) -> Result<(u64, Option<u64>, u64)> {
    let get = api.mdb_cursor_get;
    let mut key = KeyBuffer::new(data);
    // SAFETY: a cursor on a fresh read transaction, closed once, after the timed pass.
    unsafe {
        let tc = begin_cursor(api, env, sys::MDB_RDONLY).map_err(|e| api.failure(e))?;
        let cur = tc.1;
        let pass = timed(counter, || match w {
            Workload::ReadKey => lmdbregress_timed_read_key(get, cur, data, &mut key),
            Workload::ReadSeq => lmdbregress_timed_read_seq(get, cur),
            Workload::ReadRev => lmdbregress_timed_read_rev(get, cur),
            Workload::ReadCrc => lmdbregress_timed_read_crc(get, cur),
            Workload::ReadXxh64 => lmdbregress_timed_read_xxh64(get, cur),
            Workload::Write | Workload::Preset(_) => unreachable!("not one of the five reads"),
        });
        let _ = end_cursor(api, tc, false, Ok(()));
        let (ns, instructions, r) = pass?;
        Ok((ns, instructions, r.map_err(|e| api.failure(e))?))
    }
}

/// Times the write workload `iterations` times, each on a fresh environment in `scratch`;
/// creating it is not timed.
pub fn run_write(
    api: &Api,
    scratch: &Path,
    cfg: &WorkloadConfig,
    data: &Dataset,
    iterations: u32,
    mut counter: Option<&mut PerfCounter>,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    for _ in 0..iterations {
        let dir = tempfile::tempdir_in(scratch)?;
        let env = Env::open(api, dir.path(), &env_options(cfg))?;
        let (mut key, mut values) = (KeyBuffer::new(data), data.values());
        let flags = write_flags(cfg);
        // SAFETY: env is open and idle.
        let (ns, instructions, r) = timed(counter.as_deref_mut(), || unsafe {
            lmdbregress_timed_write(api, &env, api.mdb_cursor_put, data, (&mut key, &mut values), flags)
        })?;
        r.map_err(|e| api.failure(e))?;
        out.push(ns, instructions);
    }
    Ok(out)
}
