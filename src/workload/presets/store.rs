//! Preset environments: checksummed by walking them, measured on disk. (They are opened as
//! Xodus opens them: `config::env_options`, the unnamed database.)

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::workload::checksum::Hasher;
use crate::workload::lmdb::{bytes, empty_val, val, Env};
use crate::workload::Checksum;

/// Entry count and xxHash64 of every key then value, in key order: what a correct
/// environment holds, computed the same way by both engines.
pub fn walk_checksum(env: &Env) -> Result<Checksum> {
    let mut h = Hasher::default();
    env.walk(|k, v| h.add(k, v))?;
    Ok(h.finish())
}

/// Entry count and xxHash64 of each key then the value found for it, in `keys`' order.
pub fn lookup_checksum<'k>(env: &Env, keys: impl IntoIterator<Item = &'k [u8]>) -> Result<Checksum> {
    let api = env.api;
    let txn = env.begin(true)?;
    let mut h = Hasher::default();
    for key in keys {
        let (mut k, mut v) = (val(key), empty_val());
        // SAFETY: a live read transaction; v points into its pages until it ends.
        let rc = unsafe { (api.mdb_get)(txn, env.dbi, &mut k, &mut v) };
        if rc != 0 {
            // SAFETY: ending the transaction we began.
            unsafe { (api.mdb_txn_abort)(txn) };
            api.check("mdb_get", rc)?;
        }
        // SAFETY: as above.
        h.add(key, unsafe { bytes(&v) });
    }
    // SAFETY: ending the transaction we began, after the last use of its pages.
    unsafe { (api.mdb_txn_abort)(txn) };
    Ok(h.finish())
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
