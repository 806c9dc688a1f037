//! Preset environments: checksummed by walking them, measured on disk. (They are opened as
//! Xodus opens them: `PresetConfig::env_options`, the unnamed database.)

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::workload::checksum::Hasher;
use crate::workload::lmdb::Env;
use crate::workload::Checksum;

/// Entry count and xxHash64 of every key then value, in key order: what a correct
/// environment holds, computed the same way by both engines.
pub fn walk_checksum(env: &Env) -> Result<Checksum> {
    let mut h = Hasher::default();
    env.walk(|k, v| h.add(k, v))?;
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
