//! The lmdb suite's timed regions, each a function of its own for callgrind
//! (`lmdbregress_timed_lmdb_*`, the C twin's `timed_lmdb_*`), and the untimed setup that
//! runs the same loops outside them.

use std::ffi::CStr;
use std::ptr;

use super::data::head;
use super::declared::DupWalk;
use super::ops::Ops;
use crate::ffi::bindings as sys;
use crate::workload::lmdb::{bytes, empty_val, ok, val, Api, Env, Failed, MDB_cursor, MDB_txn, MDB_val};
use crate::workload::Checksum;

/// How a pass's puts and deletes are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    /// Operations per transaction; 0: one for all.
    pub batch: u32,
    /// Through a cursor, not mdb_put / mdb_del.
    pub cursor: bool,
    /// mdb_put's / mdb_cursor_put's flags.
    pub flags: u32,
    /// Each mdb_put / mdb_del in a child transaction, committed; every tenth first in one
    /// aborted.
    pub nested: bool,
    /// The cursor is put on the key (MDB_SET_RANGE) before each mdb_put / mdb_del, so the
    /// write adjusts a cursor it does not own.
    pub tracked: bool,
    /// A batch that fills the map (MDB_MAP_FULL) is aborted, the map doubled
    /// (mdb_env_set_mapsize) and the batch run again.
    pub grow: bool,
    /// The database holds sorted duplicates: an MDB_CURRENT put is put at its key and data
    /// (MDB_GET_BOTH), not its key alone.
    pub dupsort: bool,
    /// Each batch's operations in a child transaction left open: the parent's commit
    /// commits it first; every tenth batch is first aborted with its child open, then made
    /// again.
    pub child_open: bool,
    /// After each batch, a child transaction makes its operations again, puts
    /// [`SPILL_BYTES`] with MDB_RESERVE (more pages than the dirty list has room for: LMDB
    /// spills), makes them again (spilled pages read back) and is aborted.
    pub spill: bool,
}

/// SPILL's reserved value: 65,537 pages of 4 KiB, which LMDB's estimate doubles past the
/// dirty list's room of 2^17 - 1 however many pages are dirty (mdb_page_spill); reserved,
/// so LMDB touches only its first and last pages.
pub const SPILL_BYTES: usize = 256 << 20;

impl Write {
    /// Plain mdb_put / mdb_del in transactions of `batch`.
    pub const fn plain(batch: u32) -> Write {
        Write {
            batch,
            cursor: false,
            flags: 0,
            nested: false,
            tracked: false,
            grow: false,
            dupsort: false,
            child_open: false,
            spill: false,
        }
    }
}

/// Runs `ops` in transactions of `w.batch`, each operation `op(txn, cursor, i)`; with
/// `w.grow`, a batch that fills the map is aborted, the map doubled and the batch run again.
///
/// # Safety
/// `env` is open and no write transaction of it is active.
#[inline(always)]
unsafe fn batched(
    api: &Api,
    env: &Env,
    n: usize,
    w: Write,
    mut op: impl FnMut(*mut MDB_txn, *mut MDB_cursor, usize) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let per = if w.batch == 0 { n.max(1) } else { w.batch as usize };
    let (mut i, mut aborted) = (0, false);
    while i < n {
        let start = i;
        let mut txn = ptr::null_mut();
        ok("mdb_txn_begin", (api.mdb_txn_begin)(env.env, ptr::null_mut(), env.txn_flags, &mut txn))?;
        let work = if w.child_open { child_of(api, env, txn) } else { Ok(txn) };
        let end = (i + per).min(n);
        let mut r = work.and_then(|work| ops_in(api, env, work, start..end, &mut op));
        if r.is_ok() && w.spill {
            r = spill((api, env), txn, start..end, &mut op);
        }
        i = end;
        let abort_first = w.child_open && !aborted && (start / per) % 10 == 0;
        let ended = match r {
            Ok(()) if abort_first => {
                (api.mdb_txn_abort)(txn);
                aborted = true;
                i = start;
                continue;
            }
            Ok(()) => super::commits::commit(api, txn),
            Err(e) => {
                (api.mdb_txn_abort)(txn);
                Err(e)
            }
        };
        aborted = false;
        match ended {
            Err((_, sys::MDB_MAP_FULL)) if w.grow => {
                double_map(api, env)?;
                i = start;
            }
            ended => ended?,
        }
    }
    Ok(())
}

/// Operations `range` in `txn`, through one cursor opened on it.
#[inline(always)]
unsafe fn ops_in(
    api: &Api,
    env: &Env,
    txn: *mut MDB_txn,
    range: std::ops::Range<usize>,
    op: &mut impl FnMut(*mut MDB_txn, *mut MDB_cursor, usize) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let mut cur = ptr::null_mut();
    let mut r = ok("mdb_cursor_open", (api.mdb_cursor_open)(txn, env.dbi, &mut cur));
    for i in range {
        if r.is_err() {
            break;
        }
        r = op(txn, cur, i);
    }
    if !cur.is_null() {
        (api.mdb_cursor_close)(cur);
    }
    r
}

/// [`Write::spill`]'s child of `txn`: operations `range` again, the reserved value that
/// makes LMDB spill, operations `range` once more, and the child aborted.
#[inline(always)]
unsafe fn spill(
    (api, env): (&Api, &Env),
    txn: *mut MDB_txn,
    range: std::ops::Range<usize>,
    op: &mut impl FnMut(*mut MDB_txn, *mut MDB_cursor, usize) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let child = child_of(api, env, txn)?;
    let r = ops_in(api, env, child, range.clone(), op).and_then(|()| {
        let (mut k, mut v) = (val(&spill_key()), MDB_val { mv_size: SPILL_BYTES, mv_data: ptr::null_mut() });
        ok("mdb_put(MDB_RESERVE, spill)", (api.mdb_put)(child, env.dbi, &mut k, &mut v, sys::MDB_RESERVE))?;
        ops_in(api, env, child, range, op)
    });
    (api.mdb_txn_abort)(child);
    r
}

/// The key of SPILL's reserved value, after every key of the suite's.
pub fn spill_key() -> [u8; super::data::KEY] {
    *b"S000000000000000"
}

/// Doubles the map of `env`, which has no transaction active.
#[inline(always)]
unsafe fn double_map(api: &Api, env: &Env) -> Result<(), Failed> {
    let mut info: sys::MDB_envinfo = std::mem::zeroed();
    ok("mdb_env_info", (api.mdb_env_info)(env.env, &mut info))?;
    ok("mdb_env_set_mapsize", (api.mdb_env_set_mapsize)(env.env, info.me_mapsize * 2))
}

/// Runs `op` on `txn`, or as `w` says in a child of it (operation `i`'s); first puts the
/// cursor on `key` when `w` says so.
#[inline(always)]
unsafe fn write_one(
    api: &Api,
    env: &Env,
    w: Write,
    (txn, cur): (*mut MDB_txn, *mut MDB_cursor),
    (i, key): (usize, &[u8]),
    op: impl Fn(*mut MDB_txn) -> Result<(), Failed>,
) -> Result<(), Failed> {
    if w.tracked {
        let (mut k, mut v) = (val(key), empty_val());
        let rc = (api.mdb_cursor_get)(cur, &mut k, &mut v, sys::MDB_cursor_op_MDB_SET_RANGE);
        if rc != sys::MDB_NOTFOUND {
            ok("mdb_cursor_get(MDB_SET_RANGE)", rc)?;
        }
    }
    if !w.nested {
        return op(txn);
    }
    if i % 10 == 0 {
        let child = child_of(api, env, txn)?;
        let r = op(child);
        (api.mdb_txn_abort)(child);
        r?;
    }
    let child = child_of(api, env, txn)?;
    match op(child) {
        Ok(()) => ok("mdb_txn_commit(child)", (api.mdb_txn_commit)(child)),
        Err(e) => {
            (api.mdb_txn_abort)(child);
            Err(e)
        }
    }
}

#[inline(always)]
unsafe fn child_of(api: &Api, env: &Env, txn: *mut MDB_txn) -> Result<*mut MDB_txn, Failed> {
    let mut child = ptr::null_mut();
    ok("mdb_txn_begin(child)", (api.mdb_txn_begin)(env.env, txn, env.txn_flags, &mut child))?;
    Ok(child)
}

/// Puts every operation's key and value.
///
/// # Safety
/// As [`batched`].
#[inline(always)]
pub unsafe fn put(api: &Api, env: &Env, ops: &Ops, w: Write) -> Result<(), Failed> {
    batched(api, env, ops.len(), w, |txn, cur, i| {
        let (key, value) = ops.get(i);
        if !w.cursor {
            return write_one(api, env, w, (txn, cur), (i, key), |t| put_one(api, env, t, w, key, value));
        }
        if w.flags & sys::MDB_CURRENT != 0 {
            // Its own key: MDB_SET_KEY points it into the page, which a resize moves.
            let (mut at_key, (mut found, at)) = (
                val(key),
                match w.dupsort {
                    true => (val(value), (sys::MDB_cursor_op_MDB_GET_BOTH, "mdb_cursor_get(MDB_GET_BOTH)")),
                    false => (empty_val(), (sys::MDB_cursor_op_MDB_SET_KEY, "mdb_cursor_get(MDB_SET_KEY)")),
                },
            );
            ok(at.1, (api.mdb_cursor_get)(cur, &mut at_key, &mut found, at.0))?;
        }
        let (mut k, mut v) = (val(key), val(value));
        ok("mdb_cursor_put", (api.mdb_cursor_put)(cur, &mut k, &mut v, w.flags))
    })
}

/// mdb_put of `value` under `key` with `w.flags`; with MDB_RESERVE, LMDB makes the room
/// and the value is copied into it.
#[inline(always)]
unsafe fn put_one(api: &Api, env: &Env, txn: *mut MDB_txn, w: Write, key: &[u8], value: &[u8]) -> Result<(), Failed> {
    let mut k = val(key);
    if w.flags & sys::MDB_RESERVE == 0 {
        let mut v = val(value);
        return refused_as_asked(w, "mdb_put", (api.mdb_put)(txn, env.dbi, &mut k, &mut v, w.flags));
    }
    let mut room = MDB_val { mv_size: value.len(), mv_data: ptr::null_mut() };
    ok("mdb_put(MDB_RESERVE)", (api.mdb_put)(txn, env.dbi, &mut k, &mut room, w.flags))?;
    ptr::copy_nonoverlapping(value.as_ptr(), room.mv_data as *mut u8, value.len());
    Ok(())
}

/// `rc` of a put: with MDB_NOOVERWRITE or MDB_NODUPDATA the data is there already, so
/// LMDB must refuse it (MDB_KEYEXIST), and that refusal is the put's success.
#[inline(always)]
fn refused_as_asked(w: Write, call: &'static str, rc: libc::c_int) -> Result<(), Failed> {
    match (w.flags & (sys::MDB_NOOVERWRITE | sys::MDB_NODUPDATA) != 0, rc) {
        (false, rc) => ok(call, rc),
        (true, sys::MDB_KEYEXIST) => Ok(()),
        (true, 0) => Err(("mdb_put(stored what it had to refuse)", sys::MDB_CORRUPTED)),
        (true, rc) => Err((call, rc)),
    }
}

/// Deletes every operation's key, or with a value, that one duplicate of it.
///
/// # Safety
/// As [`batched`].
#[inline(always)]
pub unsafe fn delete(api: &Api, env: &Env, ops: &Ops, w: Write) -> Result<(), Failed> {
    batched(api, env, ops.len(), w, |txn, cur, i| {
        let (key, dup) = ops.get(i);
        let one = !dup.is_empty();
        if !w.cursor {
            return write_one(api, env, w, (txn, cur), (i, key), |t| {
                let (mut k, mut d) = (val(key), val(dup));
                let data = if one { &mut d as *mut MDB_val } else { ptr::null_mut() };
                ok("mdb_del", (api.mdb_del)(t, env.dbi, &mut k, data))
            });
        }
        let (mut k, mut d) = (val(key), val(dup));
        let (op, call) = match one {
            true => (sys::MDB_cursor_op_MDB_GET_BOTH, "mdb_cursor_get(MDB_GET_BOTH)"),
            false => (sys::MDB_cursor_op_MDB_SET_KEY, "mdb_cursor_get(MDB_SET_KEY)"),
        };
        ok(call, (api.mdb_cursor_get)(cur, &mut k, &mut d, op))?;
        ok("mdb_cursor_del", (api.mdb_cursor_del)(cur, 0))
    })
}

/// # Safety
/// As [`batched`].
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_put(api: &Api, env: &Env, ops: &Ops, w: Write) -> Result<(), Failed> {
    put(api, env, ops, w)
}

/// # Safety
/// As [`batched`].
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_delete(api: &Api, env: &Env, ops: &Ops, w: Write) -> Result<(), Failed> {
    delete(api, env, ops, w)
}

/// Walks the duplicates as `walk` says, each key of `ops` or the whole database; the count
/// and the sum of every duplicate's 8 bytes it visits.
///
/// # Safety
/// `env` is open; no transaction of this thread is active.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_dup_read(
    api: &Api,
    env: &Env,
    ops: &Ops,
    walk: DupWalk,
) -> Result<Checksum, Failed> {
    let tc = crate::workload::lmdb::begin_cursor(api, env, sys::MDB_RDONLY)?;
    let mut sum = Checksum { entries: 0, digest: 0 };
    let mut r = match walk {
        DupWalk::Scan { reverse } => whole(api, tc.1, (sys::MDB_cursor_op_MDB_NEXT, reverse), &mut sum),
        DupWalk::NoDup { reverse } => whole(api, tc.1, (sys::MDB_cursor_op_MDB_NEXT_NODUP, reverse), &mut sum),
        DupWalk::MultipleBack => steps(api, tc.1, &mut empty_val(), sys::MDB_cursor_op_MDB_PREV_MULTIPLE, &mut sum),
        _ => Ok(()),
    };
    let per_key = !matches!(walk, DupWalk::Scan { .. } | DupWalk::NoDup { .. });
    for i in (0..ops.len()).filter(|_| per_key) {
        if r.is_err() {
            break;
        }
        r = dups_of(api, tc.1, ops.get(i), walk, &mut sum);
    }
    crate::workload::lmdb::end_cursor(api, tc, false, r.map(|()| sum))
}

/// The whole database by `step` (its MDB_PREV twin with `reverse`) from the unpositioned
/// cursor, then one step past the end, which must find nothing.
#[inline(always)]
unsafe fn whole(
    api: &Api,
    cur: *mut MDB_cursor,
    (step, reverse): (sys::MDB_cursor_op, bool),
    sum: &mut Checksum,
) -> Result<(), Failed> {
    let step = match (reverse, step) {
        (false, s) => s,
        (true, sys::MDB_cursor_op_MDB_NEXT) => sys::MDB_cursor_op_MDB_PREV,
        (true, _) => sys::MDB_cursor_op_MDB_PREV_NODUP,
    };
    let mut k = empty_val();
    steps(api, cur, &mut k, step, sum)?;
    let mut v = empty_val();
    match (api.mdb_cursor_get)(cur, &mut k, &mut v, step) {
        sys::MDB_NOTFOUND => Ok(()),
        rc => Err(("mdb_cursor_get(past the end)", if rc == 0 { sys::MDB_CORRUPTED } else { rc })),
    }
}

/// `step` until MDB_NOTFOUND, every duplicate (or page of them) it returns summed.
#[inline(always)]
unsafe fn steps(
    api: &Api,
    cur: *mut MDB_cursor,
    k: &mut MDB_val,
    step: sys::MDB_cursor_op,
    sum: &mut Checksum,
) -> Result<(), Failed> {
    let mut v = empty_val();
    let mut rc = (api.mdb_cursor_get)(cur, k, &mut v, step);
    while rc == 0 {
        bytes(&v).chunks_exact(8).for_each(|d| add(sum, d));
        rc = (api.mdb_cursor_get)(cur, k, &mut v, step);
    }
    match rc {
        sys::MDB_NOTFOUND => Ok(()),
        rc => Err(("mdb_cursor_get", rc)),
    }
}

/// One key's duplicates, as `walk` says; `key` and, for Range, the data it looks for.
#[inline(always)]
unsafe fn dups_of(
    api: &Api,
    cur: *mut MDB_cursor,
    (key, probe): (&[u8], &[u8]),
    walk: DupWalk,
    sum: &mut Checksum,
) -> Result<(), Failed> {
    let (mut k, mut v) = (val(key), empty_val());
    let (at, call) = match walk {
        DupWalk::Range => {
            v = val(probe);
            (sys::MDB_cursor_op_MDB_GET_BOTH_RANGE, "mdb_cursor_get(MDB_GET_BOTH_RANGE)")
        }
        _ => (sys::MDB_cursor_op_MDB_SET_KEY, "mdb_cursor_get(MDB_SET_KEY)"),
    };
    ok(call, (api.mdb_cursor_get)(cur, &mut k, &mut v, at))?;
    if walk == DupWalk::Count {
        let mut n = 0usize;
        ok("mdb_cursor_count", (api.mdb_cursor_count)(cur, &mut n))?;
        sum.entries += 1;
        sum.digest += n as u64;
        return Ok(());
    }
    let (first, step) = match walk {
        DupWalk::Multiple | DupWalk::MultipleBack => {
            (sys::MDB_cursor_op_MDB_GET_MULTIPLE, sys::MDB_cursor_op_MDB_NEXT_MULTIPLE)
        }
        DupWalk::Reverse => (sys::MDB_cursor_op_MDB_LAST_DUP, sys::MDB_cursor_op_MDB_PREV_DUP),
        _ => {
            add(sum, bytes(&v));
            (sys::MDB_cursor_op_MDB_NEXT_DUP, sys::MDB_cursor_op_MDB_NEXT_DUP)
        }
    };
    let mut rc = (api.mdb_cursor_get)(cur, &mut k, &mut v, first);
    while rc == 0 {
        bytes(&v).chunks_exact(8).for_each(|d| add(sum, d));
        rc = (api.mdb_cursor_get)(cur, &mut k, &mut v, step);
    }
    match rc {
        sys::MDB_NOTFOUND if walk == DupWalk::MultipleBack => {
            steps(api, cur, &mut k, sys::MDB_cursor_op_MDB_PREV_MULTIPLE, sum)
        }
        sys::MDB_NOTFOUND => Ok(()),
        rc => Err(("mdb_cursor_get", rc)),
    }
}

#[inline(always)]
fn add(sum: &mut Checksum, dup: &[u8]) {
    sum.entries += 1;
    sum.digest = sum.digest.wrapping_add(head(dup));
}

/// Gets every key, in a read transaction reset and renewed around each (db_bench's
/// readrandom); the count and the sum of each value's first 8 bytes.
///
/// # Safety
/// `txn` is a reset read transaction of `env`'s; it is reset again on return.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_renew(
    api: &Api,
    env: &Env,
    txn: *mut MDB_txn,
    ops: &Ops,
) -> Result<Checksum, Failed> {
    let mut sum = Checksum { entries: 0, digest: 0 };
    for i in 0..ops.len() {
        ok("mdb_txn_renew", (api.mdb_txn_renew)(txn))?;
        let (mut k, mut v) = (val(ops.get(i).0), empty_val());
        let rc = (api.mdb_get)(txn, env.dbi, &mut k, &mut v);
        if rc == 0 {
            sum.entries += 1;
            sum.digest = sum.digest.wrapping_add(head(bytes(&v)));
        }
        (api.mdb_txn_reset)(txn);
        ok("mdb_get", rc)?;
    }
    Ok(sum)
}

/// # Safety
/// `env` is open; no write transaction of it is active.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_copy(api: &Api, env: &Env, to: &CStr, flags: u32) -> Result<(), Failed> {
    ok("mdb_env_copy2", (api.mdb_env_copy2)(env.env, to.as_ptr(), flags))
}

/// Empties the database (mdb_drop, del 0) in one transaction; with `named`, deletes the
/// named database (del 1) and creates it again (mdb_dbi_open, MDB_CREATE), which must give
/// back the same handle.
///
/// # Safety
/// `env` is open; no write transaction of it is active; with `named` its database is the
/// named database "db".
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_drop(api: &Api, env: &Env, named: bool) -> Result<(), Failed> {
    let mut txn = ptr::null_mut();
    ok("mdb_txn_begin", (api.mdb_txn_begin)(env.env, ptr::null_mut(), env.txn_flags, &mut txn))?;
    let r = ok("mdb_drop", (api.mdb_drop)(txn, env.dbi, named as libc::c_int)).and_then(|()| match named {
        true => reopen(api, env, txn),
        false => Ok(()),
    });
    if let Err(e) = r {
        (api.mdb_txn_abort)(txn);
        return Err(e);
    }
    ok("mdb_txn_commit", (api.mdb_txn_commit)(txn))
}

/// The named database "db" created again in `txn`, on the handle it had.
#[inline(always)]
unsafe fn reopen(api: &Api, env: &Env, txn: *mut MDB_txn) -> Result<(), Failed> {
    let mut dbi = 0;
    ok("mdb_dbi_open(after mdb_drop)", (api.mdb_dbi_open)(txn, c"db".as_ptr(), sys::MDB_CREATE, &mut dbi))?;
    match dbi == env.dbi {
        true => Ok(()),
        false => Err(("mdb_dbi_open(after mdb_drop): another handle", sys::MDB_BAD_DBI)),
    }
}

/// The reader table's housekeeping: mdb_reader_list (each line counted), mdb_reader_check,
/// which must clear `stale` slots, then mdb_env_stat, mdb_env_info and a forced
/// mdb_env_sync.
///
/// # Safety
/// `env` is open; `stale` processes that held its reader slots have ended.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_readers(api: &Api, env: &Env, stale: u32) -> Result<(), Failed> {
    let mut lines = 0u32;
    let ctx = &mut lines as *mut u32 as *mut libc::c_void;
    ok("mdb_reader_list", (api.mdb_reader_list)(env.env, Some(count_line), ctx))?;
    let mut dead = 0;
    ok("mdb_reader_check", (api.mdb_reader_check)(env.env, &mut dead))?;
    if (lines, dead) != (stale + 1, stale as i32) {
        return Err(("mdb_reader_check(stale slots)", sys::MDB_CORRUPTED));
    }
    let mut stat: sys::MDB_stat = std::mem::zeroed();
    ok("mdb_env_stat", (api.mdb_env_stat)(env.env, &mut stat))?;
    let mut info: sys::MDB_envinfo = std::mem::zeroed();
    ok("mdb_env_info", (api.mdb_env_info)(env.env, &mut info))?;
    ok("mdb_env_sync", (api.mdb_env_sync)(env.env, 1))
}

/// mdb_reader_list's callback: one more line in `*ctx` (a u32).
unsafe extern "C" fn count_line(_msg: *const libc::c_char, ctx: *mut libc::c_void) -> libc::c_int {
    *(ctx as *mut u32) += 1;
    0
}

/// LMDB 1.0's incremental backup: the pages `env` changed after transaction `since`
/// (mdb_env_incr_dump) into the file `dump`, then loaded into `backup` (mdb_env_incr_loadfd).
///
/// # Safety
/// `env` and `backup` are open and idle; `backup` was opened with MDB_WRITEMAP.
#[no_mangle]
#[inline(never)]
pub unsafe fn lmdbregress_timed_lmdb_incremental(
    api: &Api,
    env: &Env,
    backup: &Env,
    dump: &CStr,
    since: usize,
) -> Result<(), Failed> {
    let v = api.v10.as_ref().ok_or(("mdb_env_incr_dump", libc::ENOSYS))?;
    ok("mdb_env_incr_dump", (v.mdb_env_incr_dump)(env.env, dump.as_ptr(), since))?;
    let fd = libc::open(dump.as_ptr(), libc::O_RDONLY);
    if fd < 0 {
        return Err(("open(incremental dump)", std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)));
    }
    let r = ok("mdb_env_incr_loadfd", (v.mdb_env_incr_loadfd)(backup.env, fd));
    libc::close(fd);
    r
}
