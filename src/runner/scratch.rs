//! Scratch folders of runs (read databases, write environments, profiles): one per
//! schedule, `lmdb-regress-*` in `LMDB_REGRESS_SCRATCH` (default: the system's temporary
//! folder), removed when the schedule ends. Each holds an `owner` file that its run keeps
//! locked (flock) for its whole life; a run killed before it could remove its folder
//! leaves the lock free, and the next run to start removes that folder. A folder whose
//! lock is held, or that has no owner file, is never touched.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

const PREFIX: &str = "lmdb-regress-";
const OWNER: &str = "owner";

/// A run's scratch folder, removed on drop.
pub struct Scratch {
    dir: tempfile::TempDir,
    /// Locked while this run lives.
    _owner: File,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Where scratch folders are made: `LMDB_REGRESS_SCRATCH`, else the temporary folder.
pub fn base() -> Result<PathBuf> {
    Ok(crate::envvars::dir("LMDB_REGRESS_SCRATCH")?.unwrap_or_else(std::env::temp_dir))
}

/// Whether `base` lies on a memory file system (tmpfs), where a sync reaches no device and
/// a memory limit cannot evict a page.
pub fn in_memory(base: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let at = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
    crate::environment::mount_of(&at, &mounts).is_some_and(|(_, fs)| fs == "tmpfs")
}

/// Refuses a scratch folder in memory for `units` that need a disk: a sync mode that syncs,
/// or a memory limit (its page cache must be evictable).
pub fn check_disk_for(units: &[&super::Label]) -> Result<()> {
    let needs_disk =
        |l: &&&super::Label| l.memory_limit.is_some() || l.sync.is_some_and(|m| m != crate::workload::SyncMode::Nosync);
    let Some(unit) = units.iter().find(needs_disk) else { return Ok(()) };
    let base = base()?;
    if in_memory(&base) {
        anyhow::bail!(
            "{unit} needs a disk (a sync mode that syncs, or a memory limit), and the scratch folder {} is \
             in memory (tmpfs): set LMDB_REGRESS_SCRATCH to a folder on a disk",
            base.display()
        );
    }
    Ok(())
}

/// A new scratch folder, after removing those that dead runs left.
pub fn create() -> Result<Scratch> {
    let base = base()?;
    std::fs::create_dir_all(&base)
        .with_context(|| format!("cannot create {} (LMDB_REGRESS_SCRATCH)", base.display()))?;
    remove_abandoned(&base);
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir_in(&base)
        .with_context(|| format!("cannot create a scratch folder in {} (LMDB_REGRESS_SCRATCH)", base.display()))?;
    // Locked before it takes its name, so no other run ever finds it unlocked.
    let staged = dir.path().join(format!("{OWNER}.new"));
    let mut owner = File::create(&staged).with_context(|| format!("cannot create {}", staged.display()))?;
    owner.try_lock().with_context(|| format!("cannot lock {}", staged.display()))?;
    writeln!(owner, "{}", std::process::id()).with_context(|| format!("cannot write {}", staged.display()))?;
    std::fs::rename(&staged, dir.path().join(OWNER)).with_context(|| format!("cannot rename {}", staged.display()))?;
    Ok(Scratch { dir, _owner: owner })
}

/// Removes every scratch folder in `base` whose owner lock is free: its run is gone.
fn remove_abandoned(base: &Path) {
    for dir in abandoned(base) {
        let pid = std::fs::read_to_string(dir.join(OWNER)).unwrap_or_default();
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => eprintln!("removed {}, left by run {} (no longer running)", dir.display(), pid.trim()),
            Err(e) => eprintln!("note: cannot remove {}, left by a run no longer running: {e}", dir.display()),
        }
    }
}

fn abandoned(base: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(base).into_iter().flatten().flatten();
    let ours = entries.filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX)).map(|e| e.path());
    ours.filter(|dir| File::open(dir.join(OWNER)).is_ok_and(|f| f.try_lock().is_ok())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_folders_of_dead_runs_are_removed() {
        let base = tempfile::tempdir().unwrap();
        let folder = |name: &str, owner: bool| {
            let d = base.path().join(name);
            std::fs::create_dir(&d).unwrap();
            if owner {
                std::fs::write(d.join(OWNER), "4242\n").unwrap();
            }
            d
        };
        let dead = folder("lmdb-regress-dead", true);
        let unknown = folder("lmdb-regress-no-owner", false);
        let other = folder("someone-else", true);
        let alive = folder("lmdb-regress-alive", true);
        let held = File::open(alive.join(OWNER)).unwrap();
        held.try_lock().unwrap();
        assert_eq!(abandoned(base.path()), [dead.clone()]);
        remove_abandoned(base.path());
        assert!(!dead.exists() && unknown.exists() && other.exists() && alive.exists());
    }
}
