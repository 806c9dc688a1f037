//! The Rust engine: the six workloads against one loaded liblmdb.
//!
//! Each timed function holds only the workload — no allocation, logging or checksum
//! bookkeeping — and is exported unmangled so an instruction counter (callgrind's
//! `--toggle-collect=lmdbregress_timed_*`) can count exactly its region.

use std::hint::black_box;
use std::os::raw::c_int;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;

use super::dataset::{self, ValueWriter};
use super::lmdb::{bytes, empty_val, val, Api, CursorGet, CursorPut, Env, EnvOptions, LmdbError, MDB_cursor, MDB_val};
use super::perf::PerfCounter;
use super::{Checksum, Dataset, KeyKind, Order, Workload, WorkloadConfig};
use crate::ffi::bindings as sys;

const FIRST: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_FIRST;
const NEXT: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_NEXT;
const LAST: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_LAST;
const PREV: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_PREV;
const SET_KEY: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_SET_KEY;

pub fn env_options(cfg: &WorkloadConfig) -> EnvOptions {
    EnvOptions {
        map_size: cfg.effective_map_size(),
        writemap: !cfg.no_writemap,
        nosync: !cfg.sync,
        integer_keys: cfg.keys == KeyKind::Int,
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
type Timed = Result<u64, (&'static str, c_int)>;

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

#[inline(always)]
unsafe fn walk(
    get: CursorGet,
    cur: *mut MDB_cursor,
    start: sys::MDB_cursor_op,
    step: sys::MDB_cursor_op,
    mut each: impl FnMut(&MDB_val, &MDB_val),
) -> Result<(), (&'static str, c_int)> {
    let (mut k, mut v) = (empty_val(), empty_val());
    let mut rc = get(cur, &mut k, &mut v, start);
    while rc == 0 {
        each(&k, &v);
        rc = get(cur, &mut k, &mut v, step);
    }
    if rc == sys::MDB_NOTFOUND {
        Ok(())
    } else {
        Err(("mdb_cursor_get", rc))
    }
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_seq(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    walk(get, cur, FIRST, NEXT, |k, v| consume(k, v))?;
    Ok(0)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_rev(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    walk(get, cur, LAST, PREV, |k, v| consume(k, v))?;
    Ok(0)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_crc(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    let mut h = crc32fast::Hasher::new();
    walk(get, cur, FIRST, NEXT, |k, v| {
        h.update(bytes(k));
        h.update(bytes(v));
    })?;
    Ok(h.finalize() as u64)
}

#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_read_xxh64(get: CursorGet, cur: *mut MDB_cursor) -> Timed {
    let mut sum = 0u64;
    walk(get, cur, FIRST, NEXT, |k, v| {
        sum = sum
            .wrapping_add(xxhash_rust::xxh64::xxh64(bytes(k), 0))
            .wrapping_add(xxhash_rust::xxh64::xxh64(bytes(v), 0));
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
    let mut txn = std::ptr::null_mut();
    let rc = (api.mdb_txn_begin)(env.env, std::ptr::null_mut(), 0, &mut txn);
    if rc != 0 {
        return Err(("mdb_txn_begin", rc));
    }
    let mut cur = std::ptr::null_mut();
    let rc = (api.mdb_cursor_open)(txn, env.dbi, &mut cur);
    if rc != 0 {
        (api.mdb_txn_abort)(txn);
        return Err(("mdb_cursor_open", rc));
    }
    for j in 0..data.len() {
        let mut k = key.fill(data, j);
        let mut v = val(values.fill(j));
        let rc = put(cur, &mut k, &mut v, flags);
        if rc != 0 {
            (api.mdb_cursor_close)(cur);
            (api.mdb_txn_abort)(txn);
            return Err(("mdb_cursor_put", rc));
        }
    }
    (api.mdb_cursor_close)(cur);
    let rc = (api.mdb_txn_commit)(txn);
    if rc != 0 {
        return Err(("mdb_txn_commit", rc));
    }
    Ok(0)
}

fn lmdb_err(api: &Api, (call, rc): (&'static str, c_int)) -> LmdbError {
    api.check(call, rc).expect_err("rc is non-zero")
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
        .map_err(|e| lmdb_err(api, e))?;
    Ok(())
}

/// One timed sample.
pub struct Measured {
    pub nanos: u64,
    /// Instructions retired in the timed region, when a perf counter was given.
    pub instructions: Option<u64>,
}

/// One untimed walk over the database, so the timed passes that follow take no page
/// faults: what LmdbJava's warm-up iterations leave behind. (Not a `timed_` function, so
/// instruction counters skip it.)
pub fn fault_in(api: &Api, env: &Env) -> Result<()> {
    let txn = env.begin(true)?;
    let cur = env.cursor(txn)?;
    // SAFETY: cursor on a live read transaction, closed right after.
    // One byte of every 4 KiB of each value: values too large for a leaf live on overflow
    // pages, which a walk alone never touches.
    let r = unsafe {
        walk(api.mdb_cursor_get, cur, FIRST, NEXT, |_, v| {
            let b = bytes(v);
            for i in (0..b.len()).step_by(4096) {
                std::ptr::read_volatile(&b[i]);
            }
        })
    };
    unsafe {
        (api.mdb_cursor_close)(cur);
        (api.mdb_txn_abort)(txn);
    }
    r.map_err(|e| lmdb_err(api, e))?;
    Ok(())
}

/// The untimed check, once per run for each engine and tag: what each read workload
/// visits, hashed as its [`Checksum`] says, through this library.
pub fn verify(api: &Api, env: &Env, w: Workload, data: &Dataset) -> Result<Checksum> {
    let txn = env.begin(true)?;
    let cur = env.cursor(txn)?;
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
    // SAFETY: cursor on a live read transaction; pointers valid until it ends.
    let r = unsafe {
        match w {
            Workload::ReadKey => by_key(get, cur, data, &mut each),
            Workload::ReadRev => walk(get, cur, LAST, PREV, |k, v| each(bytes(k), bytes(v))),
            _ => walk(get, cur, FIRST, NEXT, |k, v| each(bytes(k), bytes(v))),
        }
    };
    // SAFETY: closing what we opened, in order.
    unsafe {
        (api.mdb_cursor_close)(cur);
        (api.mdb_txn_abort)(txn);
    }
    r.map_err(|e| lmdb_err(api, e))?;
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
) -> Result<(), (&'static str, c_int)> {
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

/// Times one read workload once. The transaction and cursor are opened before the clock
/// starts and closed after it stops, as LmdbJava's benchmark holds them open.
pub fn time_read(
    api: &Api,
    env: &Env,
    w: Workload,
    data: &Dataset,
    mut counter: Option<&mut PerfCounter>,
) -> Result<(Measured, u64)> {
    let txn = env.begin(true)?;
    let cur = env.cursor(txn)?;
    let get = api.mdb_cursor_get;
    // SAFETY: closing what we opened, once, on every path below.
    let close = || unsafe {
        (api.mdb_cursor_close)(cur);
        (api.mdb_txn_abort)(txn);
    };
    let mut key = KeyBuffer::new(data);
    if let Some(c) = counter.as_deref_mut() {
        if let Err(e) = c.start() {
            close();
            return Err(e);
        }
    }
    let start = Instant::now();
    // SAFETY: cursor on a live read transaction.
    let r = unsafe {
        match w {
            Workload::ReadKey => lmdbregress_timed_read_key(get, cur, data, &mut key),
            Workload::ReadSeq => lmdbregress_timed_read_seq(get, cur),
            Workload::ReadRev => lmdbregress_timed_read_rev(get, cur),
            Workload::ReadCrc => lmdbregress_timed_read_crc(get, cur),
            Workload::ReadXxh64 => lmdbregress_timed_read_xxh64(get, cur),
            Workload::Write | Workload::Preset(_) => unreachable!("not one of the five reads"),
        }
    };
    let nanos = start.elapsed().as_nanos() as u64;
    let instructions = counter.map(|c| c.stop()).transpose();
    close();
    let out = r.map_err(|e| lmdb_err(api, e))?;
    let instructions = instructions?;
    Ok((Measured { nanos, instructions }, out))
}

/// Times one write on a fresh environment in `scratch`; creating it is not timed.
pub fn time_write(
    api: &Api,
    scratch: &Path,
    cfg: &WorkloadConfig,
    data: &Dataset,
    mut counter: Option<&mut PerfCounter>,
) -> Result<Measured> {
    let dir = tempfile::tempdir_in(scratch)?;
    let env = Env::open(api, dir.path(), &env_options(cfg))?;
    let (mut key, mut values) = (KeyBuffer::new(data), data.values());
    let flags = write_flags(cfg);
    if let Some(c) = counter.as_deref_mut() {
        c.start()?;
    }
    let start = Instant::now();
    // SAFETY: env is open and idle.
    let r = unsafe { lmdbregress_timed_write(api, &env, api.mdb_cursor_put, data, (&mut key, &mut values), flags) };
    let nanos = start.elapsed().as_nanos() as u64;
    let instructions = counter.map(|c| c.stop()).transpose();
    r.map_err(|e| lmdb_err(api, e))?;
    let instructions = instructions?;
    drop(env);
    Ok(Measured { nanos, instructions })
}
