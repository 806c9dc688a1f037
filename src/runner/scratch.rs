//! Scratch folders of runs (read databases, write environments, profiles): where each
//! unit keeps its data files, and the folders themselves. A unit goes to memory (a tmpfs:
//! /dev/shm where it is one with room) when nothing it measures needs a disk, else to the
//! system's temporary folder; `LMDB_REGRESS_SCRATCH` puts every unit in one folder of the
//! user's, refused in memory for a unit that needs a disk. On ext4 the kernel wrote back
//! one unit's MDB_WRITEMAP file beside the next unit's timed pass: 20 rounds in 5 minutes
//! against 56-62 in memory (reports/README.md). Each folder, `lmdb-regress-*`, is one
//! schedule's, removed when it ends; it holds an `owner` file that its run keeps locked
//! (flock) for its whole life; a run killed before it could remove its folder leaves the
//! lock free, and the next run to start removes that folder. A folder whose lock is held,
//! or that has no owner file, is never touched.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Label, RunSpec};
use crate::record::{Medium, Place};
use crate::workload::{Readahead, SyncMode, Workload, WorkloadConfig};

const PREFIX: &str = "lmdb-regress-";
const OWNER: &str = "owner";
/// The memory file system units go to when nothing they measure needs a disk.
const MEMORY: &str = "/dev/shm";

/// One schedule's folder in one place, removed on drop.
struct Folder {
    dir: tempfile::TempDir,
    /// Locked while this run lives.
    _owner: File,
}

/// A schedule's scratch folders: one in each place its units were put, each unit's known.
pub struct Scratch {
    folders: BTreeMap<PathBuf, Folder>,
    placement: Placement,
}

impl Scratch {
    /// The folder of `label`'s data files.
    pub fn of(&self, label: &Label) -> &Path {
        self.of_all([label])
    }

    /// The one folder of units that share a process or a read database: theirs (they are
    /// always placed alike, their axes being one run's), or, were they not, the one on a disk.
    pub fn of_all<'a>(&self, labels: impl IntoIterator<Item = &'a Label>) -> &Path {
        let bases: Vec<&PathBuf> = labels.into_iter().filter_map(|l| self.placement.of.get(l)).collect();
        let on_disk = bases.iter().find(|b| medium_of(b) == Medium::Disk);
        let base = on_disk.or(bases.first()).copied().or_else(|| self.folders.keys().next());
        self.folders[base.expect("a scratch has a folder")].dir.path()
    }
}

/// Why a unit's data files must lie on a disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskNeed {
    /// Its commits sync, or its environment is opened to sync (a per-transaction mode,
    /// compared with those that do): in memory a sync reaches no device.
    Syncs(SyncMode),
    /// Its process is held to a memory limit: in memory its files' pages cannot be evicted.
    MemoryLimit,
    /// It sets readahead (`--readahead`): in memory no fault reads from a device.
    Readahead,
    /// The workload evicts its file from the page cache: in memory nothing is evicted.
    PageCache(Workload),
}

impl std::fmt::Display for DiskNeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiskNeed::Syncs(m) => {
                write!(f, "it is opened to sync ({}), and in memory a sync reaches no device", m.name())
            }
            DiskNeed::MemoryLimit => f.write_str("it is held to a memory limit, and in memory no page can be evicted"),
            DiskNeed::Readahead => f.write_str("it sets readahead, and in memory no fault reads from a device"),
            DiskNeed::PageCache(w) => write!(f, "{w} evicts its file from the page cache, and in memory none is"),
        }
    }
}

/// Why a unit of `label` measuring `workloads` under `config` needs its data files on a
/// disk; None when memory serves: its sync mode (its label's, else the run's), its memory
/// limit, its readahead (an axis, or off), and the workloads' own declarations.
pub fn disk_need(label: &Label, config: &WorkloadConfig, workloads: &[Workload]) -> Option<DiskNeed> {
    let sync = label.sync.unwrap_or(config.sync);
    if sync != SyncMode::Nosync {
        return Some(DiskNeed::Syncs(sync));
    }
    if label.memory_limit.is_some() {
        return Some(DiskNeed::MemoryLimit);
    }
    if label.readahead.is_some() || config.readahead == Readahead::Off {
        return Some(DiskNeed::Readahead);
    }
    workloads.iter().copied().find(|w| w.needs_page_cache()).map(DiskNeed::PageCache)
}

/// Where each unit of a run keeps its data files: the folder its scratch folder is made in.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    of: BTreeMap<Label, PathBuf>,
}

impl Placement {
    /// Each folder the units were put in, what holds it and its units.
    pub fn places(&self) -> Vec<Place> {
        let mut by_base: BTreeMap<&PathBuf, Vec<Label>> = BTreeMap::new();
        self.of.iter().for_each(|(label, base)| by_base.entry(base).or_default().push(label.clone()));
        let place = |(base, units): (&PathBuf, Vec<Label>)| Place {
            medium: medium_of(base),
            storage: crate::environment::storage_of(base),
            units,
        };
        by_base.into_iter().map(place).collect()
    }

    /// A new scratch folder in each place, after removing those that dead runs left there.
    pub fn create(&self) -> Result<Scratch> {
        let mut folders = BTreeMap::new();
        for base in self.of.values() {
            if !folders.contains_key(base) {
                folders.insert(base.clone(), create_in(base)?);
            }
        }
        if folders.is_empty() {
            let base = self::base()?;
            folders.insert(base.clone(), create_in(&base)?);
        }
        Ok(Scratch { folders, placement: self.clone() })
    }
}

impl RunSpec {
    /// Where this run's `units` keep their data files ([`place`]).
    pub(super) fn placement<'a>(&self, units: impl IntoIterator<Item = &'a Label>) -> Result<Placement> {
        let needs: Vec<(Label, Option<DiskNeed>)> =
            units.into_iter().map(|l| (l.clone(), disk_need(l, &self.config, &self.workloads))).collect();
        place(&needs, self.room_in_memory(), &Bases::here()?)
    }

    /// A scratch folder for every unit of this run, each in its place.
    pub(super) fn scratch(&self) -> Result<Scratch> {
        self.placement(self.units.iter().map(|u| &u.label))?.create()
    }

    /// Refuses to go on with a run whose units would now keep their data files elsewhere
    /// than its samples so far were measured (`recorded`, the header's places): samples
    /// from memory and from a disk would be judged as one. Files from before places were
    /// recorded name none, and are not checked.
    pub fn check_places(&self, recorded: &[Place]) -> Result<()> {
        if recorded.is_empty() {
            return Ok(());
        }
        let now = self.placement(self.units.iter().map(|u| &u.label))?.places();
        let holder =
            |places: &[Place], label: &Label| places.iter().find(|p| p.units.contains(label)).map(Place::holder);
        for label in self.units.iter().map(|u| &u.label) {
            let (Some(before), Some(after)) = (holder(recorded, label), holder(&now, label)) else { continue };
            if before != after {
                anyhow::bail!(
                    "{label} kept its data files {before} when this run began and would now keep them {after}: \
                     resume where it began (LMDB_REGRESS_SCRATCH set or unset as then, and room in {MEMORY} \
                     for units in memory), or start a new run"
                );
            }
        }
        Ok(())
    }

    /// What units in memory may write there at most: each, a read database and a write
    /// environment, each file no larger than the map (a paired process holds every unit's
    /// write environment at once; a unit's further layouts read links to its one file,
    /// which take no room); beside them, as much again for each further layout of a
    /// reference (`--reference-layouts`), one per engine.
    fn room_in_memory(&self) -> Room {
        let each = self.config.effective_map_size().saturating_mul(2);
        let further = match self.plan.reference_layouts {
            crate::record::ReferenceLayouts::Auto => crate::record::MAX_REFERENCE_LAYOUTS,
            crate::record::ReferenceLayouts::Exactly(k) => k,
        };
        let beside = each.saturating_mul(u64::from(further - 1) * self.engines.len() as u64);
        Room { each, beside }
    }
}

/// The folders units may be put in.
pub struct Bases {
    /// The user's (`LMDB_REGRESS_SCRATCH`), which takes every unit.
    pub user: Option<PathBuf>,
    /// Where units go that need no disk, when it is a tmpfs with room.
    pub memory: PathBuf,
    /// Where the others go.
    pub disk: PathBuf,
}

impl Bases {
    /// This machine's: `LMDB_REGRESS_SCRATCH`, /dev/shm and the temporary folder.
    pub fn here() -> Result<Bases> {
        let user = crate::envvars::dir("LMDB_REGRESS_SCRATCH")?;
        Ok(Bases { user, memory: PathBuf::from(MEMORY), disk: std::env::temp_dir() })
    }
}

/// Places `units`, each with what it needs: with a user's folder, every unit there
/// (refused, naming the unit and why, when it is in memory and a unit needs a disk); else
/// those that need no disk in `bases.memory` when it is a tmpfs with room for `bytes_each`
/// of each, and the rest in `bases.disk` (refused when that is in memory).
/// The bytes units placed in memory may write there: `each` for every unit, and `beside`
/// once for them all.
#[derive(Debug, Clone, Copy)]
pub struct Room {
    pub each: u64,
    pub beside: u64,
}

pub fn place(units: &[(Label, Option<DiskNeed>)], room: Room, bases: &Bases) -> Result<Placement> {
    let needing = units.iter().find_map(|(l, need)| need.map(|n| (l, n)));
    if let Some(user) = &bases.user {
        if let Some((unit, need)) = needing.filter(|_| in_memory(user)) {
            anyhow::bail!(
                "{unit} needs a disk ({need}), and the scratch folder {} is in memory (tmpfs): set \
                 LMDB_REGRESS_SCRATCH to a folder on a disk, or unset it (units that need a disk then go to {})",
                user.display(),
                bases.disk.display()
            );
        }
        return Ok(Placement { of: units.iter().map(|(l, _)| (l.clone(), user.clone())).collect() });
    }
    let disk = &bases.disk;
    if let Some((unit, need)) = needing.filter(|_| in_memory(disk)) {
        anyhow::bail!(
            "{unit} needs a disk ({need}), and the temporary folder {} is in memory (tmpfs): set \
             LMDB_REGRESS_SCRATCH to a folder on a disk",
            disk.display()
        );
    }
    let free = units.iter().filter(|(_, need)| need.is_none()).count() as u64;
    let bytes = free.saturating_mul(room.each).saturating_add(room.beside);
    let memory = (free > 0).then(|| tmpfs_with_room(&bases.memory, bytes)).flatten();
    let base = |need: &Option<DiskNeed>| match (need, &memory) {
        (None, Some(m)) => m.clone(),
        _ => disk.clone(),
    };
    Ok(Placement { of: units.iter().map(|(l, need)| (l.clone(), base(need))).collect() })
}

/// `dir` when it is a tmpfs with room for `bytes` more: in its free space, and in the
/// memory the machine has available (a tmpfs's pages are memory that nothing reclaims).
fn tmpfs_with_room(dir: &Path, bytes: u64) -> Option<PathBuf> {
    if !in_memory(dir) {
        return None;
    }
    let fs = nix::sys::statvfs::statvfs(dir).ok()?;
    let free = (fs.blocks_available() as u64).saturating_mul(fs.fragment_size() as u64);
    let room = free.min(crate::environment::available_memory().unwrap_or(free));
    (bytes <= room).then(|| dir.to_path_buf())
}

/// Where scratch folders are made when placement is not asked: `LMDB_REGRESS_SCRATCH`,
/// else the temporary folder.
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

fn medium_of(base: &Path) -> Medium {
    match in_memory(base) {
        true => Medium::Memory,
        false => Medium::Disk,
    }
}

/// A new scratch folder in `base`, after removing those that dead runs left there.
fn create_in(base: &Path) -> Result<Folder> {
    std::fs::create_dir_all(base).with_context(|| format!("cannot create {} (for scratch folders)", base.display()))?;
    remove_abandoned(base);
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir_in(base)
        .with_context(|| format!("cannot create a scratch folder in {}", base.display()))?;
    // Locked before it takes its name, so no other run ever finds it unlocked.
    let staged = dir.path().join(format!("{OWNER}.new"));
    let mut owner = File::create(&staged).with_context(|| format!("cannot create {}", staged.display()))?;
    owner.try_lock().with_context(|| format!("cannot lock {}", staged.display()))?;
    writeln!(owner, "{}", std::process::id()).with_context(|| format!("cannot write {}", staged.display()))?;
    std::fs::rename(&staged, dir.path().join(OWNER)).with_context(|| format!("cannot rename {}", staged.display()))?;
    Ok(Folder { dir, _owner: owner })
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
    use crate::workload::presets::PresetWorkload;
    use crate::workload::MemoryLimit;

    fn tag() -> Label {
        Label::build("LMDB_0.9.33", None)
    }

    /// What makes a unit need a disk: its label's axes, the run's one sync mode or
    /// readahead, and a workload that declares it measures the page cache.
    #[test]
    fn a_unit_needs_a_disk_for_what_it_measures_and_for_nothing_else() {
        let cfg = WorkloadConfig::default();
        let six = Workload::ALL;
        assert_eq!(disk_need(&tag(), &cfg, &six), None);
        assert_eq!(disk_need(&tag().with_sync(SyncMode::Nosync), &cfg, &six), None);
        assert_eq!(disk_need(&tag().with_sync(SyncMode::Sync), &cfg, &six), Some(DiskNeed::Syncs(SyncMode::Sync)));
        let synced = WorkloadConfig { sync: SyncMode::Nometasync, ..cfg.clone() };
        assert_eq!(disk_need(&tag(), &synced, &six), Some(DiskNeed::Syncs(SyncMode::Nometasync)));
        let limited = tag().with_memory_limit(MemoryLimit(256 << 20));
        assert_eq!(disk_need(&limited, &cfg, &six), Some(DiskNeed::MemoryLimit));
        assert_eq!(disk_need(&tag().with_readahead(Readahead::On), &cfg, &six), Some(DiskNeed::Readahead));
        let off = WorkloadConfig { readahead: Readahead::Off, ..cfg.clone() };
        assert_eq!(disk_need(&tag(), &off, &six), Some(DiskNeed::Readahead));
        let warm = [PresetWorkload::MigrateCopyWarm, PresetWorkload::MigrateReadWarm].map(Workload::Preset);
        assert_eq!(disk_need(&tag(), &cfg, &warm), None);
        let cold = Workload::Preset(PresetWorkload::MigrateReadCold);
        assert_eq!(disk_need(&tag(), &cfg, &[warm[0], cold]), Some(DiskNeed::PageCache(cold)));
    }

    fn shm() -> PathBuf {
        let shm = PathBuf::from(MEMORY);
        assert!(in_memory(&shm), "these tests need {MEMORY} mounted as a tmpfs");
        shm
    }

    /// In one run a plain unit goes to memory, and a sync unit and a memory-limited one to
    /// the disk; a tmpfs without room for what the units in memory write is not taken.
    #[test]
    fn units_that_need_no_disk_go_to_a_tmpfs_with_room_and_the_others_to_disk() {
        let disk = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        assert!(!in_memory(disk.path()), "target/ is on a disk");
        let bases = Bases { user: None, memory: shm(), disk: disk.path().to_path_buf() };
        let plain = tag();
        let sync = tag().with_sync(SyncMode::Sync);
        let limited = tag().with_memory_limit(MemoryLimit(1 << 30));
        let units = [
            (plain.clone(), None),
            (sync.clone(), Some(DiskNeed::Syncs(SyncMode::Sync))),
            (limited.clone(), Some(DiskNeed::MemoryLimit)),
        ];
        let placed = place(&units, Room { each: 1 << 20, beside: 0 }, &bases).unwrap();
        let medium = |p: &Placement, l: &Label| p.places().into_iter().find(|p| p.units.contains(l)).unwrap().medium;
        assert_eq!([&plain, &sync, &limited].map(|l| medium(&placed, l)), [Medium::Memory, Medium::Disk, Medium::Disk]);
        let scratch = placed.create().unwrap();
        assert!(scratch.of(&plain).starts_with(MEMORY) && scratch.of(&sync).starts_with(disk.path()));
        assert_eq!(scratch.of_all([&plain, &sync]), scratch.of(&sync), "shared: the one on a disk");
        let too_much = place(&units, Room { each: u64::MAX / 4, beside: 0 }, &bases).unwrap();
        assert_eq!(medium(&too_much, &plain), Medium::Disk, "no room in {MEMORY}");
        let not_tmpfs = Bases { memory: disk.path().to_path_buf(), ..bases };
        assert_eq!(medium(&place(&units, Room { each: 1, beside: 0 }, &not_tmpfs).unwrap(), &plain), Medium::Disk);
    }

    /// A user's folder takes every unit; in memory it is refused for a unit that needs a
    /// disk, saying which unit, why and what to set.
    #[test]
    fn a_users_folder_in_memory_is_refused_for_a_unit_that_needs_a_disk() {
        let user = tempfile::tempdir_in(shm()).unwrap();
        let bases = Bases { user: Some(user.path().to_path_buf()), memory: shm(), disk: std::env::temp_dir() };
        let plain = (tag(), None);
        let all = place(std::slice::from_ref(&plain), Room { each: 1, beside: 0 }, &bases).unwrap().places();
        assert_eq!((all.len(), all[0].medium), (1, Medium::Memory));
        let cold = Workload::Preset(PresetWorkload::MigrateReadCold);
        for (label, need) in
            [(tag(), DiskNeed::PageCache(cold)), (tag().with_readahead(Readahead::Off), DiskNeed::Readahead)]
        {
            let e = place(&[plain.clone(), (label.clone(), Some(need))], Room { each: 1, beside: 0 }, &bases)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("{label} needs a disk ({need})")), "{e}");
            assert!(e.contains("is in memory (tmpfs): set LMDB_REGRESS_SCRATCH to a folder on a disk"), "{e}");
        }
    }

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
