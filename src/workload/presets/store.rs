//! Preset environments: opened as Xodus opens them (the unnamed database, no named-DB
//! table), checksummed by walking them, measured on disk.

use std::ffi::CString;
use std::os::raw::c_int;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::ptr;

use anyhow::{Context, Result};

use crate::ffi::bindings as sys;
use crate::workload::lmdb::{bytes, empty_val, Api, Env, LmdbError, MDB_cursor, MDB_txn};
use crate::workload::Checksum;

/// A failed LMDB call inside a timed region: the call and its code (no allocation there).
pub type Failed = (&'static str, c_int);

/// An LMDB return code as a result, for timed regions.
#[inline(always)]
pub fn ok(call: &'static str, rc: c_int) -> Result<(), Failed> {
    if rc == 0 {
        Ok(())
    } else {
        Err((call, rc))
    }
}

/// A transaction (read-only with `flags` MDB_RDONLY) and a cursor on `env`'s database, for
/// timed regions; [`end_cursor`] closes both.
///
/// # Safety
/// `env` is open and no other write transaction of it is active.
#[inline(always)]
pub unsafe fn begin_cursor(api: &Api, env: &Env, flags: u32) -> Result<(*mut MDB_txn, *mut MDB_cursor), Failed> {
    let mut txn = ptr::null_mut();
    ok("mdb_txn_begin", (api.mdb_txn_begin)(env.env, ptr::null_mut(), flags, &mut txn))?;
    let mut cur = ptr::null_mut();
    if let Err(e) = ok("mdb_cursor_open", (api.mdb_cursor_open)(txn, env.dbi, &mut cur)) {
        (api.mdb_txn_abort)(txn);
        return Err(e);
    }
    Ok((txn, cur))
}

/// Closes the cursor, then commits the transaction when `r` is a success of a write
/// transaction, else aborts it; returns `r` or the commit's failure.
///
/// # Safety
/// `txn` and `cur` come from [`begin_cursor`] and are not used again.
#[inline(always)]
pub unsafe fn end_cursor<T>(
    api: &Api,
    (txn, cur): (*mut MDB_txn, *mut MDB_cursor),
    commit: bool,
    r: Result<T, Failed>,
) -> Result<T, Failed> {
    (api.mdb_cursor_close)(cur);
    if commit && r.is_ok() {
        ok("mdb_txn_commit", (api.mdb_txn_commit)(txn))?;
    } else {
        (api.mdb_txn_abort)(txn);
    }
    r
}

pub fn lmdb_err(api: &Api, (call, rc): Failed) -> LmdbError {
    api.check(call, rc).expect_err("rc is non-zero")
}

/// The directory as LMDB takes it.
pub fn c_path(dir: &Path) -> CString {
    CString::new(dir.as_os_str().as_encoded_bytes()).expect("no NUL in a path")
}

/// Opens (creating, unless `flags` has MDB_RDONLY) the environment in `dir` and its
/// unnamed database.
pub fn open<'a>(api: &'a Api, dir: &Path, map_size: u64, flags: u32) -> Result<Env<'a>, LmdbError> {
    let rdonly = flags & sys::MDB_RDONLY != 0;
    let mut raw = ptr::null_mut();
    // SAFETY: the standard opening sequence on pointers we own; `env` closes on drop.
    unsafe {
        api.check("mdb_env_create", (api.mdb_env_create)(&mut raw))?;
        let mut env = Env { api, env: raw, dbi: 0 };
        api.check("mdb_env_set_mapsize", (api.mdb_env_set_mapsize)(raw, map_size as usize))?;
        api.check("mdb_env_open", (api.mdb_env_open)(raw, c_path(dir).as_ptr(), flags, 0o664))?;
        let txn = env.begin(rdonly)?;
        let rc = (api.mdb_dbi_open)(txn, ptr::null(), if rdonly { 0 } else { sys::MDB_CREATE }, &mut env.dbi);
        if rc != 0 {
            (api.mdb_txn_abort)(txn);
            api.check("mdb_dbi_open", rc)?;
        }
        api.check("mdb_txn_commit", (api.mdb_txn_commit)(txn))?;
        Ok(env)
    }
}

/// Entry count and xxHash64 of every key then value, in key order: what a correct
/// environment holds, computed the same way by both engines.
pub fn walk_checksum(env: &Env) -> Result<Checksum> {
    let api = env.api;
    let txn = env.begin(true)?;
    let cur = env.cursor(txn)?;
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    let mut entries = 0u64;
    let (mut k, mut v) = (empty_val(), empty_val());
    // SAFETY: a cursor on a live read transaction; k and v point into its pages until it ends.
    let rc = unsafe {
        let mut rc = (api.mdb_cursor_get)(cur, &mut k, &mut v, sys::MDB_cursor_op_MDB_FIRST);
        while rc == 0 {
            h.update(bytes(&k));
            h.update(bytes(&v));
            entries += 1;
            rc = (api.mdb_cursor_get)(cur, &mut k, &mut v, sys::MDB_cursor_op_MDB_NEXT);
        }
        (api.mdb_cursor_close)(cur);
        (api.mdb_txn_abort)(txn);
        rc
    };
    if rc != sys::MDB_NOTFOUND {
        api.check("mdb_cursor_get", rc)?;
    }
    Ok(Checksum { entries, digest: h.digest() })
}

/// The checksum of `pairs` as `walk_checksum` computes it, without LMDB.
pub fn checksum_of<'d>(pairs: impl Iterator<Item = (&'d [u8], &'d [u8])>) -> Checksum {
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    let mut entries = 0u64;
    for (k, v) in pairs {
        h.update(k);
        h.update(v);
        entries += 1;
    }
    Checksum { entries, digest: h.digest() }
}

pub fn data_file(dir: &Path) -> PathBuf {
    dir.join("data.mdb")
}

/// The data file's allocated size (what `du` shows): with MDB_WRITEMAP the file is as
/// long as the map, but only written pages take room.
pub fn size_on_disk(dir: &Path) -> Result<u64> {
    let f = data_file(dir);
    Ok(std::fs::metadata(&f).with_context(|| format!("cannot stat {}", f.display()))?.blocks() * 512)
}
