//! tokyo-cabinet: Xodus's JMH run of the Tokyo Cabinet benchmark on LMDB. Writes put
//! every key (value = key) in one transaction into a fresh environment; reads open the
//! prepared environment afresh and time the whole read transaction, as Xodus does.

use anyhow::{bail, Result};

use super::data::{TcKeys, TC_KEY};
use super::store;
use super::{config::env_options, fresh_writes, Context, Figures, PresetWorkload};
use crate::ffi::bindings as sys;
use crate::workload::checksum::checksum_of;
use crate::workload::lmdb::{begin_cursor, empty_val, end_cursor, ok, val, walk, Api, Env, Failed, FORWARD};
use crate::workload::measure::{timed, Outcome};
use crate::workload::perf::PerfCounter;
use crate::workload::Checksum;
use crate::workload::WorkloadConfig;

/// # Safety (all timed functions)
/// `env` is open and no other transaction of it is active.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_tc_write(api: &Api, env: &Env, keys: &[u8]) -> Result<(), Failed> {
    let tc = begin_cursor(api, env, 0)?;
    let mut r = Ok(());
    for key in keys.chunks_exact(TC_KEY) {
        let (mut k, mut v) = (val(key), val(key));
        r = ok("mdb_cursor_put", (api.mdb_cursor_put)(tc.1, &mut k, &mut v, 0));
        if r.is_err() {
            break;
        }
    }
    end_cursor(api, tc, true, r)
}

/// Walks every entry; returns the sum of key and value lengths (Xodus's result).
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_tc_read_successive(api: &Api, env: &Env) -> Result<u64, Failed> {
    let tc = begin_cursor(api, env, sys::MDB_RDONLY)?;
    let mut sum = 0u64;
    let r = walk(api.mdb_cursor_get, tc.1, FORWARD, "mdb_cursor_get(MDB_NEXT)", |k, v| {
        sum += (k.mv_size + v.mv_size) as u64;
        Ok(())
    });
    end_cursor(api, tc, false, r.map(|_| sum))
}

/// Looks every key up in `keys`' order; returns the sum of key and value lengths.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_tc_read_random(api: &Api, env: &Env, keys: &[u8]) -> Result<u64, Failed> {
    let tc = begin_cursor(api, env, sys::MDB_RDONLY)?;
    let mut sum = 0u64;
    let mut r = Ok(());
    for key in keys.chunks_exact(TC_KEY) {
        let (mut k, mut v) = (val(key), empty_val());
        r = ok(
            "mdb_cursor_get(MDB_SET_KEY)",
            (api.mdb_cursor_get)(tc.1, &mut k, &mut v, sys::MDB_cursor_op_MDB_SET_KEY),
        );
        if r.is_err() {
            break;
        }
        sum += (k.mv_size + v.mv_size) as u64;
    }
    end_cursor(api, tc, false, r.map(|()| sum))
}

/// The read database: every key in ascending order, as Xodus's read benchmark writes it.
pub fn prepare(api: &Api, dir: &std::path::Path, cfg: &WorkloadConfig) -> Result<()> {
    let keys = TcKeys::generate(cfg.entries, cfg.seed);
    let env = Env::open(api, dir, &env_options(cfg))?;
    // SAFETY: env is open and idle.
    unsafe { lmdbregress_timed_tc_write(api, &env, &keys.successive) }.map_err(|e| api.failure(e))?;
    Ok(())
}

pub fn run(ctx: &Context, w: PresetWorkload, counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let keys = TcKeys::generate(ctx.cfg.entries, ctx.cfg.seed);
    match w {
        PresetWorkload::TcSuccessiveWrite => write(ctx, &keys.successive, counter),
        PresetWorkload::TcRandomWrite => write(ctx, &keys.random, counter),
        PresetWorkload::TcSuccessiveRead => read(ctx, None, counter),
        PresetWorkload::TcRandomRead => read(ctx, Some(&keys.random), counter),
        other => bail!("{} is not a tokyo-cabinet workload", other.name()),
    }
}

fn write(ctx: &Context, keys: &[u8], counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    // SAFETY: fresh_writes hands over an open, idle environment.
    fresh_writes(ctx, keys.len() / TC_KEY, counter, |env| unsafe { lmdbregress_timed_tc_write(ctx.api, env, keys) })
}

/// Each pass on a freshly opened environment (Xodus reopens per invocation); the checksum
/// comes after the timed passes, so they find the pages as the prepared database left them.
fn read(ctx: &Context, random: Option<&[u8]>, mut counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let (api, dir, n) = (ctx.api, ctx.dir()?, ctx.cfg.entries as u64);
    let o = env_options(ctx.cfg).read_only();
    let mut passes = Vec::new();
    for _ in 0..ctx.iterations {
        let env = Env::open(api, dir, &o)?;
        // SAFETY: env is open and idle.
        let (ns, instructions, r) = timed(counter.as_deref_mut(), || unsafe {
            match random {
                None => lmdbregress_timed_tc_read_successive(api, &env),
                Some(keys) => lmdbregress_timed_tc_read_random(api, &env, keys),
            }
        })?;
        let sum = r.map_err(|e| api.failure(e))?;
        if sum != n * 2 * TC_KEY as u64 {
            bail!("the timed pass read {sum} bytes of keys and values, expected {}", n * 2 * TC_KEY as u64);
        }
        passes.push((ns, instructions));
    }
    let env = Env::open(api, dir, &o)?;
    let checksum = match random {
        None => store::walk_checksum(&env)?,
        Some(keys) => store::lookup_checksum(&env, keys.chunks_exact(TC_KEY))?,
    };
    let mut out = Outcome::default();
    for (ns, instructions) in passes {
        out.push_checked(ns, instructions, checksum, Figures { ops: Some(n), ..Default::default() })?;
    }
    Ok(out)
}

pub fn expected_checksum(w: PresetWorkload, cfg: &WorkloadConfig) -> Checksum {
    let keys = TcKeys::generate(cfg.entries, cfg.seed);
    let order = if w == PresetWorkload::TcRandomRead { &keys.random } else { &keys.successive };
    checksum_of(order.chunks_exact(TC_KEY).map(|k| (k, k)))
}
