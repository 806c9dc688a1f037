//! migrate: a bulk copy of a populated environment into a fresh one (LMDB → LMDB), and a
//! read-only pass (LMDB → nothing), each warm (the source file read into the page cache
//! first) and cold (synced and evicted, checked with mincore). Beside the time: the
//! region's user and sys time, peak RSS and page faults.

use anyhow::{bail, Result};

use super::store::{self, begin_cursor, end_cursor, lmdb_err, ok, Failed};
use super::{pagecache, timed, usage, Context, Figures, Outcome, PresetWorkload, Residency, COLD_NOT_ACHIEVED};
use crate::ffi::bindings as sys;
use crate::workload::lmdb::{empty_val, Api, Env, MDB_val};
use crate::workload::perf::PerfCounter;

/// Reads one byte of every page a value spans, so values on overflow pages are read too.
#[inline(always)]
unsafe fn touch(v: &MDB_val) {
    let p = v.mv_data as *const u8;
    let mut off = 0;
    while off < v.mv_size {
        std::ptr::read_volatile(p.add(off));
        off += 4096;
    }
}

/// Walks `src` with a cursor, handing each entry to `each`; returns the entry count.
#[inline(always)]
unsafe fn walk(
    api: &Api,
    src: &Env,
    mut each: impl FnMut(&mut MDB_val, &mut MDB_val) -> Result<(), Failed>,
) -> Result<u64, Failed> {
    let tc = begin_cursor(api, src, sys::MDB_RDONLY)?;
    let (mut k, mut v) = (empty_val(), empty_val());
    let mut n = 0u64;
    let mut r = Ok(());
    let mut rc = (api.mdb_cursor_get)(tc.1, &mut k, &mut v, sys::MDB_cursor_op_MDB_FIRST);
    while rc == 0 {
        r = each(&mut k, &mut v);
        if r.is_err() {
            break;
        }
        n += 1;
        rc = (api.mdb_cursor_get)(tc.1, &mut k, &mut v, sys::MDB_cursor_op_MDB_NEXT);
    }
    if r.is_ok() && rc != sys::MDB_NOTFOUND {
        r = Err(("mdb_cursor_get(MDB_NEXT)", rc));
    }
    end_cursor(api, tc, false, r.map(|()| n))
}

/// # Safety
/// Both environments are open and idle; `dst` is empty.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_migrate_copy(api: &Api, src: &Env, dst: &Env, flags: u32) -> Result<u64, Failed> {
    let tc = begin_cursor(api, dst, 0)?;
    let n = walk(api, src, |k, v| ok("mdb_cursor_put", (api.mdb_cursor_put)(tc.1, k, v, flags)));
    end_cursor(api, tc, true, n)
}

/// # Safety
/// `src` is open and idle.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_migrate_read(api: &Api, src: &Env) -> Result<u64, Failed> {
    walk(api, src, |_, v| {
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
        bail!(
            "{COLD_NOT_ACHIEVED}: {} of {} pages of {} still resident after fsync and POSIX_FADV_DONTNEED",
            r.resident_pages,
            r.total_pages,
            file.display()
        );
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
        out.push(ns, instructions, checksum, figures)?;
    }
    Ok(out)
}

type Pass = (u64, Option<u64>, crate::workload::Checksum, Figures);

/// One timed pass; the environments are opened after the cache is set up (opening reads
/// the meta pages) and before the clock starts.
fn once(ctx: &Context, copy: bool, cold: bool, counter: Option<&mut PerfCounter>) -> Result<Pass> {
    let (api, pc, dir) = (ctx.api, &ctx.cfg, ctx.dir()?);
    let map = pc.map_size.expect("resolved");
    let resident = cache_state(&store::data_file(dir), cold)?;
    let src = store::open(api, dir, map, pc.env_flags() | sys::MDB_RDONLY)?;
    let fresh = tempfile::tempdir_in(ctx.scratch)?;
    let dst = if copy { Some(store::open(api, fresh.path(), map, pc.env_flags())?) } else { None };
    let put = if pc.migrate_append { sys::MDB_APPEND } else { 0 };
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
    let n = r.map_err(|e| lmdb_err(api, e))?;
    if n != pc.n() as u64 {
        bail!("the timed pass visited {n} entries of {}", pc.n());
    }
    let checksum = store::walk_checksum(dst.as_ref().unwrap_or(&src))?;
    let figures = Figures { ops: Some(n), usage: Some(used), resident: Some(resident), ..Default::default() };
    Ok((ns, instructions, checksum, figures))
}
