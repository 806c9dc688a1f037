//! open-get: cold-start latency. Each timed cycle opens the environment read-only,
//! begins a read transaction, gets one fixed key, ends the transaction and closes the
//! environment. Writing the database is a timed workload of its own. migrate reads the
//! same kind of database, written here.

use std::ffi::CStr;
use std::path::Path;

use anyhow::{bail, Result};

use super::data::Docs;
use super::store;
use super::{config::env_options, fresh_writes, Context, Figures, PresetWorkload};
use crate::ffi::bindings as sys;
use crate::workload::checksum::checksum_of;
use crate::workload::lmdb::{begin_cursor, c_path, empty_val, end_cursor, ok, val, Api, Env, Failed};
use crate::workload::measure::{timed, Outcome};
use crate::workload::perf::PerfCounter;
use crate::workload::Checksum;
use crate::workload::WorkloadConfig;

/// Puts every document, in key order, in one transaction.
///
/// # Safety
/// `env` is open and no other transaction of it is active.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_docs_write(api: &Api, env: &Env, docs: &Docs, flags: u32) -> Result<(), Failed> {
    let tc = begin_cursor(api, env, 0)?;
    let (mut start, mut r) = (0, Ok(()));
    for (i, &end) in docs.ends.iter().enumerate() {
        let (mut k, mut v) = (val(&docs.keys[i * 4..i * 4 + 4]), val(&docs.bytes[start..end]));
        start = end;
        r = ok("mdb_cursor_put", (api.mdb_cursor_put)(tc.1, &mut k, &mut v, flags));
        if r.is_err() {
            break;
        }
    }
    end_cursor(api, tc, true, r)
}

/// One cycle: open, begin, get, end, close.
///
/// # Safety
/// `dir` holds an environment whose unnamed database has `key`.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_open_get(
    api: &Api,
    dir: &CStr,
    map_size: usize,
    flags: u32,
    key: &[u8],
) -> Result<(), Failed> {
    let mut env = std::ptr::null_mut();
    ok("mdb_env_create", (api.mdb_env_create)(&mut env))?;
    let r = open_get_in(api, env, dir, map_size, flags, key);
    (api.mdb_env_close)(env);
    r
}

#[inline(always)]
unsafe fn open_get_in(
    api: &Api,
    env: *mut sys::MDB_env,
    dir: &CStr,
    map_size: usize,
    flags: u32,
    key: &[u8],
) -> Result<(), Failed> {
    ok("mdb_env_set_mapsize", (api.mdb_env_set_mapsize)(env, map_size))?;
    ok("mdb_env_open", (api.mdb_env_open)(env, dir.as_ptr(), flags | sys::MDB_RDONLY, 0o664))?;
    let mut txn = std::ptr::null_mut();
    ok("mdb_txn_begin", (api.mdb_txn_begin)(env, std::ptr::null_mut(), sys::MDB_RDONLY, &mut txn))?;
    let mut dbi = 0;
    let mut r = ok("mdb_dbi_open", (api.mdb_dbi_open)(txn, std::ptr::null(), 0, &mut dbi));
    if r.is_ok() {
        let (mut k, mut v) = (val(key), empty_val());
        r = ok("mdb_get", (api.mdb_get)(txn, dbi, &mut k, &mut v));
        std::hint::black_box(&v);
    }
    (api.mdb_txn_abort)(txn);
    r
}

/// The documents' database, as the write workload writes it.
pub fn prepare(api: &Api, dir: &Path, cfg: &WorkloadConfig) -> Result<()> {
    let docs = Docs::generate(cfg.entries, cfg.preset.max_value, cfg.seed);
    let env = Env::open(api, dir, &env_options(cfg))?;
    // SAFETY: env is open and idle.
    unsafe { lmdbregress_timed_docs_write(api, &env, &docs, 0) }.map_err(|e| api.failure(e))?;
    Ok(())
}

pub fn run(ctx: &Context, w: PresetWorkload, counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    match w {
        PresetWorkload::OpenGet => cycles(ctx, counter),
        PresetWorkload::OpenGetWrite => write(ctx, counter),
        other => bail!("{} is not an open-get workload", other.name()),
    }
}

fn write(ctx: &Context, counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let docs = Docs::generate(ctx.cfg.entries, ctx.cfg.preset.max_value, ctx.cfg.seed);
    // SAFETY: fresh_writes hands over an open, idle environment.
    fresh_writes(ctx, docs.len(), counter, |env| unsafe { lmdbregress_timed_docs_write(ctx.api, env, &docs, 0) })
}

/// Each sample: `open_get_cycles` cycles, each timed on its own; the sample's time is their mean.
fn cycles(ctx: &Context, mut counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let (api, pc, dir) = (ctx.api, &ctx.cfg.preset, ctx.dir()?);
    let key = pc.open_get_key.expect("resolved").to_be_bytes();
    let cdir = c_path(dir);
    let o = env_options(ctx.cfg);
    let n = pc.open_get_cycles as usize;
    let mut passes = Vec::new();
    for _ in 0..ctx.iterations {
        let mut latencies = Vec::with_capacity(n);
        let mut instructions: Option<u64> = None;
        for _ in 0..n {
            // SAFETY: the prepared database holds every key below the entry count.
            let (ns, counted, r) = timed(counter.as_deref_mut(), || unsafe {
                lmdbregress_timed_open_get(api, &cdir, o.map_size as usize, o.flags, &key)
            })?;
            latencies.push(ns);
            if let Some(c) = counted {
                *instructions.get_or_insert(0) += c;
            }
            r.map_err(|e| api.failure(e))?;
        }
        passes.push((latencies, instructions));
    }
    let checksum = store::lookup_checksum(&Env::open(api, dir, &o.read_only())?, [&key[..]])?;
    let db_bytes = Some(store::size_on_disk(dir)?);
    let mut out = Outcome::default();
    for (latencies_ns, instructions) in passes {
        let mean = latencies_ns.iter().sum::<u64>() / n as u64;
        let figures = Figures { ops: Some(n as u64), latencies_ns, db_bytes, ..Default::default() };
        out.push_checked(mean, instructions, checksum, figures)?;
    }
    Ok(out)
}

pub fn expected_checksum(w: PresetWorkload, cfg: &WorkloadConfig) -> Checksum {
    let docs = Docs::generate(cfg.entries, cfg.preset.max_value, cfg.seed);
    if w == PresetWorkload::OpenGet {
        let i = cfg.preset.open_get_key.expect("resolved") as usize;
        return checksum_of(std::iter::once((docs.key(i), docs.value(i))));
    }
    checksum_of((0..docs.len()).map(|i| (docs.key(i), docs.value(i))))
}
