//! lmdb: the shapes LMDB's own world benchmarks (db_bench_mdb, ioarena) and the paths
//! LMDB changed that LmdbJava's six never run: fills of every value size and batch,
//! overwrites and deletes beside a long reader, large values on a fragmented freelist,
//! sorted duplicates, reset/renew reads, copies and drops. Each workload is one row of
//! harness/lmdb_suite.def; each pass runs on a fresh environment, its setup untimed.

pub mod commits;
pub mod data;
pub mod declared;
pub mod ops;
pub mod pass;
mod readers;

use std::path::Path;

use anyhow::Result;

pub use declared::LmdbWorkload;
use declared::{Options, Shape, SuiteRow};
use ops::{RowOps, SETUP_BATCH};
use pass::Write;

use super::store::{size_on_disk, walk_checksum};
use super::Context;
use crate::ffi::bindings as sys;
use crate::workload::iocount::{Io, Mark};
use crate::workload::lmdb::{self, c_path, Database, Env, EnvOptions, Failed, Lmdb10};
use crate::workload::measure::{timed, Figures, Outcome};
use crate::workload::perf::PerfCounter;
use crate::workload::profile_part;
use crate::workload::{Checksum, WorkloadConfig};

/// How row `d`'s environments are opened.
pub fn env_options(d: &SuiteRow, cfg: &WorkloadConfig) -> EnvOptions {
    // Spilling is what LMDB does without MDB_WRITEMAP: a SPILL row goes without it.
    let writemap = (!cfg.no_writemap || d.options.has(Options::WRITEMAP)) && !d.options.has(Options::SPILL);
    let db = match d.shape {
        Shape::DupFill | Shape::DupRead | Shape::DupDelete => {
            Database::UnnamedDup { fixed: d.options.has(Options::DUPFIXED) }
        }
        _ if d.options.has(Options::NAMED) => Database::Named { integer_keys: false },
        _ if d.options.has(Options::REVERSEKEY) => Database::UnnamedReverse,
        _ => Database::Unnamed,
    };
    let has = |o| d.options.has(o);
    let remap = if has(Options::REMAP) { lmdb::MDB_REMAP_CHUNKS } else { 0 };
    let lmdb10 = Lmdb10 {
        page_size: has(Options::PAGESIZE).then_some(PAGE_SIZE),
        checksum: has(Options::CHECKSUM),
        encrypt: has(Options::ENCRYPT),
    };
    let map_size = cfg.map_size.expect("a resolved preset configuration");
    let map_size = match () {
        _ if has(Options::GROW) => GROW_FROM,
        _ if has(Options::SPILL) => map_size + SPILL_MAP,
        _ => map_size,
    };
    let flags = lmdb::env_flags(writemap, cfg.sync, cfg.readahead) | remap;
    EnvOptions { map_size, flags, txn_flags: cfg.sync.txn_flags(), db, lmdb10 }
}

/// How a pass's copy is opened to be verified: a COPY's read-only (MDB_RDONLY), so LMDB
/// opens a fresh lock file for a reader.
fn copy_options(d: &SuiteRow, cfg: &WorkloadConfig) -> EnvOptions {
    let o = env_options(d, cfg);
    let rdonly = if d.shape == Shape::Copy { sys::MDB_RDONLY } else { 0 };
    EnvOptions { flags: o.flags | rdonly, ..o }
}

/// GROW's first map: 256 KiB, which the map doubles from as the fill needs.
pub const GROW_FROM: u64 = 256 << 10;

/// SPILL's map beyond the suite's: room for the reserved value LMDB allocates.
pub const SPILL_MAP: u64 = 2 * pass::SPILL_BYTES as u64;

/// PAGESIZE's page size (mdb_env_set_pagesize): four times the usual 4 KiB.
pub const PAGE_SIZE: u32 = 16384;

/// The map an lmdb-suite run needs for `entries`: room for every row's data, twice over.
pub fn map_size(entries: u32) -> u64 {
    (entries as u64 * 4096).max(64 << 20).next_multiple_of(1 << 20)
}

/// The checksum a correct pass of `w` produces, without LMDB.
pub fn expected_checksum(w: LmdbWorkload, cfg: &WorkloadConfig) -> Checksum {
    data::expected(w.declared(), cfg.entries, cfg.seed)
}

/// Runs `w` `ctx.iterations` times its own passes ([`SuiteRow::passes`]), each on a fresh
/// environment and each a sample, then ends its profile part
/// under callgrind, whatever the passes did: every row of a worker is counted apart, and
/// under valgrind on a thread of its own, as if alone (`profile_part`).
pub fn run(ctx: &Context, w: LmdbWorkload, counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let outcome = match counter.is_none() && profile_part::under_valgrind() {
        true => profile_part::alone(|| passes(ctx, w, None)),
        false => passes(ctx, w, counter),
    };
    profile_part::dump(w.name());
    outcome
}

fn passes(ctx: &Context, w: LmdbWorkload, mut counter: Option<&mut PerfCounter>) -> Result<Outcome> {
    let d = w.declared();
    let (a, b, c, _) = ctx.api.version();
    d.applies_to((a, b, c)).map_err(|n| anyhow::anyhow!("{n}"))?;
    let plan = RowOps::new(d, ctx.cfg.entries, ctx.cfg.seed);
    let mut out = Outcome::default();
    for _ in 0..ctx.iterations * d.passes(ctx.cfg.entries, ctx.time_commits) {
        let dir = tempfile::tempdir_in(ctx.scratch)?;
        let env = Env::open(ctx.api, dir.path(), &env_options(d, ctx.cfg))?;
        setup(&env, &plan)?;
        if d.shape == Shape::Readers {
            readers::leave(ctx, &env, dir.path(), &env_options(d, ctx.cfg))?;
        }
        let copy = tempfile::tempdir_in(ctx.scratch)?;
        let backup = match d.shape {
            Shape::Incremental => Some(backup(ctx, &env, d, &plan, copy.path())?),
            _ => None,
        };
        let places = CopyPlaces { copy: copy.path(), dump: &dir.path().join("incremental"), backup: backup.as_ref() };
        let txnid = env.last_txnid()?;
        if ctx.time_commits {
            commits::settle(dir.path())?;
            commits::arm(plan.timed.len().max(plan.setup_puts.len()) + 1);
        }
        let mark = Mark::now();
        let timed = timed_pass(&env, d, &plan, places, counter.as_deref_mut());
        let commit_order_ns = commits::take();
        let (ns, instructions, checksum) = timed?;
        let (syncs, bytes) = mark.since();
        // A pass that committed nothing (a read) has no I/O per commit.
        let commits = env.last_txnid()? - txnid;
        drop(backup);
        let (checksum, space, db_bytes) = match d.shape {
            Shape::Copy | Shape::Incremental => {
                drop(env);
                let copied = Env::open(ctx.api, copy.path(), &copy_options(d, ctx.cfg))?;
                (walk_checksum(&copied)?, copied.space(copy.path())?, size_on_disk(copy.path())?)
            }
            _ => (checksum.map_or_else(|| walk_checksum(&env), Ok)?, env.space(dir.path())?, size_on_disk(dir.path())?),
        };
        let ops =
            if plan.timed.len() > 0 { plan.timed.len() } else { plan.setup_puts.len() - plan.setup_deletes.len() };
        let commit_ns = commits::buckets(&commit_order_ns);
        // The order only where the row repeats its pass (few commits a pass), for stats to
        // pair commit k with the reference's: paired so, fillRandomEach's 2,000 commits a
        // pass came out wider near idle (sync ±1.3 / 2.3% by pass medians, ±1.7 / 2.8%
        // paired), and their order would be 150 KB a round.
        let commit_order_ns = match d.passes(ctx.cfg.entries, ctx.time_commits) > 1 {
            true => commit_order_ns,
            false => Vec::new(),
        };
        let figures = Figures {
            ops: Some(ops as u64),
            db_bytes: Some(db_bytes),
            commit_ns,
            commit_order_ns,
            ..Default::default()
        };
        out.push_checked(ns, instructions, checksum, figures)?;
        out.space.push(space);
        out.io.extend((commits > 0).then_some(Io { syncs, bytes, commits }));
    }
    Ok(out)
}

/// The untimed puts and deletes a pass starts from.
fn setup(env: &Env, plan: &RowOps) -> Result<()> {
    let (w, deletes) = (Write::plain(0), Write::plain(SETUP_BATCH));
    // SAFETY: env is open and idle.
    let r = unsafe {
        pass::put(env.api, env, &plan.setup_puts, w)
            .and_then(|()| pass::delete(env.api, env, &plan.setup_deletes, deletes))
    };
    r.map_err(|e| env.api.failure(e))?;
    Ok(())
}

/// INCREMENTAL's untimed start: a backup (mdb_env_copy2) as of the last transaction, then
/// the changes; the backup opened with MDB_WRITEMAP, as mdb_env_incr_loadfd needs it, and
/// the transaction it holds.
fn backup<'a>(ctx: &Context<'a>, env: &Env, d: &SuiteRow, plan: &RowOps, to: &Path) -> Result<(Env<'a>, usize)> {
    let api = env.api;
    // SAFETY: mdb_env_info fills the struct; mdb_env_copy2 and the puts run on an idle env.
    let since = unsafe {
        let mut info: sys::MDB_envinfo = std::mem::zeroed();
        api.check("mdb_env_info", (api.mdb_env_info)(env.env, &mut info))?;
        api.check("mdb_env_copy2", (api.mdb_env_copy2)(env.env, c_path(to).as_ptr(), 0))?;
        pass::put(api, env, &plan.timed, Write::plain(d.batch)).map_err(|e| api.failure(e))?;
        info.me_last_txnid as usize
    };
    let o = env_options(d, ctx.cfg);
    Ok((Env::open(ctx.api, to, &EnvOptions { flags: o.flags | sys::MDB_WRITEMAP, ..o })?, since))
}

/// Where a pass's copies go: COPY's and INCREMENTAL's folder, INCREMENTAL's dump file and
/// its open backup.
struct CopyPlaces<'p, 'a> {
    copy: &'p Path,
    dump: &'p Path,
    backup: Option<&'p (Env<'a>, usize)>,
}

/// Times the pass; a read's checksum is what it returned, a write's is read after.
fn timed_pass(
    env: &Env,
    d: &SuiteRow,
    plan: &RowOps,
    places: CopyPlaces,
    counter: Option<&mut PerfCounter>,
) -> Result<(u64, Option<u64>, Option<Checksum>)> {
    let api = env.api;
    let has = |o| d.options.has(o);
    let reader = if has(Options::READER) { Some(env.begin(true)?) } else { None };
    let renew = if d.shape == Shape::Renew { Some(reset_txn(env)?) } else { None };
    let (to, dump) = (c_path(places.copy), c_path(places.dump));
    let copy_flags = if has(Options::COMPACT) { sys::MDB_CP_COMPACT } else { 0 };
    let w = write_of(d);
    // SAFETY: env is open; the only transactions are the reader (read-only) and the reset
    // one, each ended below.
    if d.shape == Shape::Readers {
        readers::prime_pid_list(env);
    }
    let (ns, instructions, r) = timed(counter, || unsafe {
        match d.shape {
            Shape::Fill | Shape::Overwrite | Shape::Fragment | Shape::DupFill => {
                pass::lmdbregress_timed_lmdb_put(api, env, &plan.timed, w).map(|()| None)
            }
            Shape::Delete | Shape::DupDelete => {
                pass::lmdbregress_timed_lmdb_delete(api, env, &plan.timed, w).map(|()| None)
            }
            Shape::DupRead => {
                let walk = d.dup_walk().expect("a DUPREAD row's");
                pass::lmdbregress_timed_lmdb_dup_read(api, env, &plan.timed, walk).map(Some)
            }
            Shape::Renew => {
                pass::lmdbregress_timed_lmdb_renew(api, env, renew.expect("made above"), &plan.timed).map(Some)
            }
            Shape::Copy => pass::lmdbregress_timed_lmdb_copy(api, env, &to, copy_flags).map(|()| None),
            Shape::Drop => pass::lmdbregress_timed_lmdb_drop(api, env, has(Options::NAMED)).map(|()| None),
            Shape::Readers => pass::lmdbregress_timed_lmdb_readers(api, env, readers::STALE).map(|()| None),
            Shape::Incremental => {
                let (backup, since) = places.backup.expect("made by backup()");
                pass::lmdbregress_timed_lmdb_incremental(api, env, backup, &dump, *since).map(|()| None)
            }
        }
    })?;
    for txn in reader.into_iter().chain(renew) {
        // SAFETY: ending the transactions begun above, after the pass.
        unsafe { (api.mdb_txn_abort)(txn) };
    }
    let r: Result<Option<Checksum>, Failed> = r;
    Ok((ns, instructions, r.map_err(|e| api.failure(e))?))
}

/// How row `d`'s timed puts or deletes are made.
fn write_of(d: &SuiteRow) -> Write {
    let cursor = d.options.has(Options::CURSOR);
    let flags = if d.options.has(Options::APPEND) {
        sys::MDB_APPEND
    } else if d.options.has(Options::NOOVERWRITE) && d.shape == Shape::DupFill {
        sys::MDB_NODUPDATA
    } else if d.options.has(Options::NOOVERWRITE) {
        sys::MDB_NOOVERWRITE
    } else if cursor && (d.shape == Shape::Overwrite || ops::rewrites_in_place(d)) {
        sys::MDB_CURRENT
    } else if d.options.has(Options::RESERVE) {
        sys::MDB_RESERVE
    } else {
        0
    };
    let has = |o| d.options.has(o);
    Write {
        batch: d.batch,
        cursor,
        flags,
        nested: has(Options::NESTED),
        tracked: has(Options::TRACKED),
        grow: has(Options::GROW),
        dupsort: d.shape == Shape::DupFill,
        child_open: has(Options::CHILDOPEN),
        spill: has(Options::SPILL),
    }
}

/// A read transaction, reset: the renew loop renews it for each get.
fn reset_txn(env: &Env) -> Result<*mut lmdb::MDB_txn> {
    let txn = env.begin(true)?;
    // SAFETY: a live read transaction of ours.
    unsafe { (env.api.mdb_txn_reset)(txn) };
    Ok(txn)
}
