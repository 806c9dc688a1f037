//! migrate: a bulk copy of a populated environment into a fresh one (LMDB → LMDB), and a
//! read-only pass (LMDB → nothing), each warm (the source file read into the page cache
//! first) and cold (synced and evicted, checked with mincore). Beside the time: the
//! region's user and sys time, peak RSS and page faults.

use anyhow::{bail, Result};

use super::config::env_options;
use super::{pagecache, store, usage, ColdNotAchieved, Context, Figures, PresetWorkload, Residency};
use crate::ffi::bindings as sys;
use crate::workload::lmdb::{begin_cursor, end_cursor, ok, touch, walk, Api, Env, Failed, MDB_val, FORWARD};
use crate::workload::measure::{timed, Outcome};
use crate::workload::perf::PerfCounter;

/// Walks `src` with a cursor of its own, handing each entry to `each`; the entry count.
#[inline(always)]
unsafe fn walk_source(
    api: &Api,
    src: &Env,
    each: impl FnMut(&mut MDB_val, &mut MDB_val) -> Result<(), Failed>,
) -> Result<u64, Failed> {
    let tc = begin_cursor(api, src, sys::MDB_RDONLY)?;
    let n = walk(api.mdb_cursor_get, tc.1, FORWARD, "mdb_cursor_get(MDB_NEXT)", each);
    end_cursor(api, tc, false, n)
}

/// # Safety
/// Both environments are open and idle; `dst` is empty.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_migrate_copy(api: &Api, src: &Env, dst: &Env, flags: u32) -> Result<u64, Failed> {
    let tc = begin_cursor(api, dst, 0)?;
    let n = walk_source(api, src, |k, v| ok("mdb_cursor_put", (api.mdb_cursor_put)(tc.1, k, v, flags)));
    end_cursor(api, tc, true, n)
}

/// # Safety
/// `src` is open and idle.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_migrate_read(api: &Api, src: &Env) -> Result<u64, Failed> {
    walk_source(api, src, |_, v| {
        touch(v);
        Ok(())
    })
}

/// Puts the source file in the page cache, or takes it out and checks that it is out.
fn cache_state(file: &std::path::Path, cold: bool) -> Result<Residency> {
    if !cold {
        pagecache::warm(file)?;
        return pagecache::residency(file);
    }
    pagecache::evict(file)?;
    let r = pagecache::residency(file)?;
    if r.resident_pages > 0 {
        let file = file.display().to_string();
        return Err(ColdNotAchieved { resident: r.resident_pages, total: r.total_pages, file }.into());
    }
    Ok(r)
}

pub fn run(ctx: &Context, w: PresetWorkload, mut counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let copy = match w {
        PresetWorkload::MigrateCopyWarm | PresetWorkload::MigrateCopyCold => true,
        PresetWorkload::MigrateReadWarm | PresetWorkload::MigrateReadCold => false,
        other => bail!("{} is not a migrate workload", other.name()),
    };
    let mut out = Outcome::default();
    for _ in 0..ctx.iterations {
        let (ns, instructions, checksum, figures) = once(ctx, copy, w.is_cold(), counter.as_deref_mut())?;
        out.push_checked(ns, instructions, checksum, figures)?;
    }
    Ok(out)
}

/// What one timed pass measured: its time (ns), its instructions when counted, its
/// checksum and its figures.
type Measured = (u64, Option<u64>, crate::workload::Checksum, Figures);

/// One timed pass; the environments are opened after the cache is set up (opening reads
/// the meta pages) and before the clock starts.
fn once(ctx: &Context, copy: bool, cold: bool, counter: Option<&mut PerfCounter>) -> Result<Measured> {
    let (api, cfg, dir) = (ctx.api, ctx.cfg, ctx.dir()?);
    let resident = cache_state(&store::data_file(dir), cold)?;
    let src = Env::open(api, dir, &env_options(cfg).read_only())?;
    let fresh = tempfile::tempdir_in(ctx.scratch)?;
    let dst = if copy { Some(Env::open(api, fresh.path(), &env_options(cfg))?) } else { None };
    let put = if cfg.preset.migrate_append { sys::MDB_APPEND } else { 0 };
    let reset = usage::reset_peak();
    let before = usage::snapshot()?;
    // SAFETY: both environments are open and idle; dst is fresh.
    let (ns, instructions, r) = timed(counter, || unsafe {
        match &dst {
            Some(d) => lmdbregress_timed_migrate_copy(api, &src, d, put),
            None => lmdbregress_timed_migrate_read(api, &src),
        }
    })?;
    let used = usage::between(before, usage::snapshot()?, reset.then(usage::peak_kib).flatten());
    let n = r.map_err(|e| api.failure(e))?;
    if n != cfg.entries as u64 {
        bail!("the timed pass visited {n} entries of {}", cfg.entries);
    }
    let checksum = store::walk_checksum(dst.as_ref().unwrap_or(&src))?;
    let figures = Figures { ops: Some(n), usage: Some(used), resident: Some(resident), ..Default::default() };
    Ok((ns, instructions, checksum, figures))
}
