//! Before anything is built: a run's data must fit this machine. A map the address space
//! or the scratch file system cannot hold, or entries that do not fit in memory, would
//! otherwise fail every unit of every round, one worker at a time, after the builds.

use std::path::Path;

use anyhow::{bail, Result};

use crate::workload::presets::Preset;
use crate::workload::suite::Suite;
use crate::workload::{Workload, WorkloadConfig};

/// Bytes each entry's key costs a worker beyond the database: the key list, its text for
/// string keys, and the set that keeps random keys distinct while they are drawn.
fn key_bytes(config: &WorkloadConfig) -> u64 {
    let text = if config.key_size() > 4 { config.key_size() as u64 } else { 0 };
    let distinct = if config.order == crate::workload::Order::Random { 12 } else { 0 };
    4 + text + distinct
}

/// Checks `config` (resolved for the suite of `workloads`) against this machine: its map
/// against the address space and, with MDB_WRITEMAP (LMDB then makes its data file as
/// large as the map), against the largest file the scratch folder's file system holds; its
/// entries against memory.
pub fn check(config: &WorkloadConfig, workloads: &[Workload]) -> Result<()> {
    let map = config.effective_map_size();
    address_space(map)?;
    if !config.no_writemap {
        file_size(map, &crate::runner::scratch::base()?)?;
    }
    memory(config, Suite::of(workloads)?.preset())
}

/// Reserves (and releases) `map` bytes of address space, as LMDB's map will need.
fn address_space(map: u64) -> Result<()> {
    let len = usize::try_from(map).unwrap_or(usize::MAX);
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    // SAFETY: an inaccessible anonymous mapping, unmapped at once; nothing reads or writes it.
    let at = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_NONE, flags, -1, 0) };
    if at == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        bail!(
            "--map-size {map} does not fit this process's address space (reserving it: {e}); give a smaller \
             --map-size, or leave it out for a map that fits the data"
        );
    }
    // SAFETY: unmaps exactly the mapping made above.
    unsafe { libc::munmap(at, len) };
    Ok(())
}

/// Sizes a sparse file in `scratch` to `map` bytes (and removes it), as LMDB sizes its data
/// file under MDB_WRITEMAP.
fn file_size(map: u64, scratch: &Path) -> Result<()> {
    std::fs::create_dir_all(scratch).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", scratch.display()))?;
    let probe = tempfile::Builder::new().prefix(".map-size-check-").tempfile_in(scratch)?;
    if let Err(e) = probe.as_file().set_len(map) {
        bail!(
            "--map-size {map} does not fit the file system of {} ({e}): with MDB_WRITEMAP, LMDB makes its data file \
             as large as the map; give a smaller --map-size, --no-writemap, or LMDB_REGRESS_SCRATCH on another \
             file system",
            scratch.display()
        );
    }
    Ok(())
}

/// The keys a worker holds and the database it reads (in the page cache, or in memory
/// when the scratch folder is a tmpfs) must fit in this machine's memory.
fn memory(config: &WorkloadConfig, suite: Option<Preset>) -> Result<()> {
    let entries = config.entries as u64;
    let database = match suite {
        None => config.min_map_size(),
        Some(_) => entries.saturating_mul(config.preset.max_value as u64 + 64).min(config.effective_map_size()),
    };
    let need = entries.saturating_mul(key_bytes(config)).saturating_add(database);
    let have = total_memory();
    if need > have {
        let fit = (entries as f64 * have as f64 / need as f64) as u64;
        bail!(
            "--entries {entries} needs about {} of memory (the keys, and a database of {}), more than this \
             machine's {}: give --entries {fit} or fewer",
            gib(need),
            gib(database),
            gib(have)
        );
    }
    Ok(())
}

fn total_memory() -> u64 {
    // SAFETY: sysinfo fills the struct it is given.
    let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
    match unsafe { libc::sysinfo(&mut info) } {
        0 => (info.totalram as u64).saturating_mul(info.mem_unit.max(1) as u64),
        _ => u64::MAX,
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_this_machine_cannot_hold_is_refused() {
        let huge = WorkloadConfig { map_size: Some(i64::MAX as u64), ..WorkloadConfig::default() };
        let e = address_space(huge.effective_map_size()).unwrap_err().to_string();
        assert!(e.contains("--map-size 9223372036854775807 does not fit this process's address space"), "{e}");
        address_space(WorkloadConfig::default().effective_map_size()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        file_size(1 << 30, dir.path()).unwrap();
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "the probe is removed");

        // Petabytes: 4 billion values of 500 kB.
        let many = WorkloadConfig { entries: u32::MAX, value_size: 500_000, ..WorkloadConfig::default() };
        let e = memory(&many, None).unwrap_err().to_string();
        assert!(e.contains("--entries 4294967295 needs about") && e.contains("or fewer"), "{e}");
        memory(&WorkloadConfig::default(), None).unwrap();
    }
}
