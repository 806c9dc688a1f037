//! Read-database preparation: each tag's read database built once, in a folder of its own,
//! with that tag's own library, before anything is measured.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::adaptive::LayoutsWanted;
use super::job::interrupted;
use super::protocol::DbShape;
use super::scratch::Scratch;
use super::verify::Checksums;
use super::{pool, sanitize, Label, RunSpec, Unit};
use crate::record::{FailureStage, Record, RunWriter};
use crate::workload::suite::Verification;
use crate::workload::{Checksum, Workload};

/// The read databases of a run, and the checksums each unit's reads were verified with.
#[derive(Default)]
pub(super) struct Ready {
    pub dbs: BTreeMap<Label, PathBuf>,
    /// With several layouts of a unit in one process: copies of its read database, one for
    /// each layout past the first (two environments of one lock file in one process would
    /// share its reader table), each its data file linked where the file system allows.
    pub copies: BTreeMap<Label, Vec<PathBuf>>,
    /// Each read database's shape, when its writer reported one.
    pub shapes: BTreeMap<Label, DbShape>,
    /// (engine, tag, read workload) → the verified checksum; reads without one are not measured.
    pub checksums: Checksums,
    /// What each pass of a workload verified in each pass must produce, computed without LMDB.
    pub expected: BTreeMap<Workload, Checksum>,
}

impl RunSpec {
    /// Builds each tag's read database once, with that tag's own library (the Rust unit's
    /// when there is one; the C twin reads the same file), then has every unit verify what
    /// its reads return. Neither is timed, so both use every core. Units that differ only in
    /// how a reader opens the file share it ([`RunSpec::db_key`]).
    pub(super) fn ready(&self, scratch: &Scratch, w: &mut RunWriter) -> Result<Ready> {
        let mut ready = Ready { expected: self.expected_each_pass(), ..Ready::default() };
        if self.reads().is_empty() {
            return Ok(ready);
        }
        // A unit that runs no read (its sync mode not applicable) reads no database.
        let mut builders: Vec<&Unit> =
            self.units.iter().filter(|u| self.reads().iter().any(|w| self.applies(u, *w))).collect();
        builders.sort_by_key(|u| u.engine);
        let mut seen = BTreeSet::new();
        builders.retain(|u| seen.insert(self.db_key(&u.label)));
        let sharing = |key: Label| self.units.iter().filter(move |v| self.db_key(&v.label) == key).map(|v| &v.label);
        let bar = crate::progress::bar(builders.len() as u64, "preparing read databases");
        pool::for_each(
            &builders,
            self.jobs,
            |u| {
                let key = self.db_key(&u.label);
                self.prepare_in(u, &scratch.of_all(sharing(key.clone())).join(own_folder(&key.to_string())))
            },
            |u, result| {
                bar.inc(1);
                let labels: BTreeSet<&Label> = sharing(self.db_key(&u.label)).collect();
                match result {
                    Ok((dir, shape)) => {
                        for label in labels {
                            ready.dbs.insert(label.clone(), dir.clone());
                            ready.shapes.extend(shape.map(|s| (label.clone(), s)));
                        }
                        Ok(())
                    }
                    // After Ctrl-C a worker's death is no failure of the tag.
                    Err(_) if interrupted() => Ok(()),
                    Err(error) => {
                        let f = self.failure(u, None, FailureStage::Prepare, error);
                        bar.suspend(|| eprintln!("{}: cannot build the read database: {}", u.label, f.error));
                        labels.into_iter().try_for_each(|label| {
                            w.append(&Record::Failure(crate::record::Failure { unit: label.clone(), ..f.clone() }))
                        })
                    }
                }
            },
        )?;
        bar.finish_and_clear();
        if !interrupted() {
            ready.checksums = self.verify(&ready.dbs, w)?;
        }
        let extra = self.plan.layouts_per_process.saturating_sub(1) as usize;
        // Copied once per file, however many labels share it.
        let mut copied: BTreeMap<&PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for (label, dir) in ready.dbs.iter().filter(|_| extra > 0) {
            if !copied.contains_key(dir) {
                let copies = (1..=extra).map(|k| copy_db(dir, k)).collect::<Result<Vec<_>, String>>();
                copied.insert(dir, copies.map_err(anyhow::Error::msg)?);
            }
            ready.copies.insert(label.clone(), copied[dir].clone());
        }
        Ok(ready)
    }

    /// The read database `label` reads, as the label of the one its units share. A memory
    /// limit and readahead change how a reader's process and map are held, never a byte
    /// the writer writes (the file is written unlimited, and MDB_NORDAHEAD is only advice
    /// on the map: `a_read_database_is_the_same_bytes_with_readahead_on_and_off`), so
    /// their units share one file, written once, when rounds run one worker at a time.
    /// Where workers run side by side (counted rounds) each keeps its own: one's eviction
    /// would empty another's cache.
    pub(super) fn db_key(&self, label: &Label) -> Label {
        match self.counter {
            None => Label { memory_limit: None, readahead: None, ..label.clone() },
            Some(_) => label.clone(),
        }
    }

    /// The checksums of the workloads that check them in each pass (Verification::EachPass).
    fn expected_each_pass(&self) -> BTreeMap<Workload, Checksum> {
        let each = self.workloads.iter().filter(|w| w.suite().verification() == Verification::EachPass);
        each.filter_map(|&w| Some((w, crate::workload::expected_checksum(w, &self.config)?))).collect()
    }

    /// Writes `u`'s read database in a folder of its own and flushes it to disk, so that no
    /// writeback of it falls into a timed region; returns its folder and shape.
    pub(super) fn prepare_one(&self, u: &Unit, scratch: &Path) -> Result<(PathBuf, Option<DbShape>), String> {
        self.prepare_in(u, &scratch.join(own_folder(&u.label.to_string())))
    }

    /// Writes `u`'s read database into `folder`/db, flushed to disk.
    fn prepare_in(&self, u: &Unit, folder: &Path) -> Result<(PathBuf, Option<DbShape>), String> {
        if interrupted() {
            return Err("interrupted".into());
        }
        let dir = folder.join("db");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut cmd = u.command(super::worker::WorkerAction::Prepare);
        cmd.arg("--dir").arg(&dir).args(self.config.to_args());
        // The workloads name the suite whose database is written.
        cmd.arg("--workloads").arg(self.workloads.iter().map(|w| w.name()).collect::<Vec<_>>().join(","));
        let (lines, death) = u.run(cmd);
        match death.or_else(|| lines.iter().find_map(|l| l.error.clone())) {
            None if lines.iter().any(|l| l.prepared) => {
                flush(&dir)?;
                Ok((dir, lines.iter().find_map(|l| l.db_shape)))
            }
            other => Err(other.unwrap_or_else(|| "worker reported nothing".into())),
        }
    }
}

impl Ready {
    /// Copies of each reference's read database for its further layouts (`wanted`), made
    /// once: two environments of one lock file in one process would share its reader table.
    /// The reference draws its file among the units of its shape, and its further layouts
    /// read copies of the one it drew, so each of their files gets them.
    pub(super) fn copy_for(&mut self, wanted: &LayoutsWanted) -> Result<()> {
        for ((_, reference), each) in wanted {
            let need = each.values().copied().max().unwrap_or(1) as usize - 1;
            let shape = self.shapes.get(reference);
            let alike: Vec<Label> = match shape {
                Some(s) => self.shapes.iter().filter(|(_, o)| *o == s).map(|(l, _)| l.clone()).collect(),
                None => vec![reference.clone()],
            };
            for label in alike {
                let Some(dir) = self.dbs.get(&label) else { continue };
                let copies = self.copies.entry(label.clone()).or_default();
                for k in copies.len() + 1..=need {
                    copies.push(copy_db(dir, k).map_err(anyhow::Error::msg)?);
                }
            }
        }
        Ok(())
    }
}

/// Copy `k` of the read database in `dir`, beside it: a folder of its own, so that its
/// environment makes its own lock file (two environments of one lock file in a process
/// share its reader table, and LMDB answers `MDB_BAD_RSLOT`), whose data file is a hard
/// link to the one file, so that every layout reads the same pages and costs no memory;
/// a copy, flushed to disk, where the file system refuses the link.
fn copy_db(dir: &Path, k: usize) -> Result<PathBuf, String> {
    let to = dir.with_file_name(format!("db-{k}"));
    std::fs::create_dir_all(&to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let (data, linked) = (dir.join("data.mdb"), to.join("data.mdb"));
    let _ = std::fs::remove_file(&linked);
    if std::fs::hard_link(&data, &linked).is_ok() {
        return Ok(to);
    }
    std::fs::copy(&data, &linked).map_err(|e| format!("cannot copy {}: {e}", data.display()))?;
    flush(&to)?;
    Ok(to)
}

/// Every file of a database folder written to disk.
fn flush(dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for path in entries.flatten().map(|e| e.path()).filter(|p| p.is_file()) {
        std::fs::File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(|e| format!("cannot flush {}: {e}", path.display()))?;
    }
    Ok(())
}

/// A label's own folder name: readable, and unique by a hash of the whole label (two labels
/// that `sanitize` alike, `a/b` and `a-b`, still get two folders). 0.9 and 1.0 cannot open
/// each other's files, and no tag may ever read another's.
fn own_folder(label: &str) -> String {
    use sha2::Digest;
    format!("{}-{}", sanitize(label), &hex::encode(sha2::Sha256::digest(label.as_bytes()))[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(counter: Option<super::super::counter::Counter>) -> RunSpec {
        use crate::record::{Engine, Metric, Plan};
        RunSpec {
            units: Vec::new(),
            workloads: vec![Workload::ReadKey],
            engines: vec![Engine::Rust],
            config: Default::default(),
            plan: Plan::new(1, 0, Metric::Time),
            counter,
            jobs: 2,
            judge: crate::stats::stop::progress,
        }
    }

    /// A further layout's database is a folder of its own (its own lock file) whose data
    /// file is the one file, linked: no second copy of its pages.
    #[test]
    fn a_further_layouts_database_links_the_one_data_file() {
        use std::os::unix::fs::MetadataExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("db");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("data.mdb"), b"pages").unwrap();
        std::fs::write(dir.join("lock.mdb"), b"readers").unwrap();
        let linked = copy_db(&dir, 1).unwrap();
        assert_ne!(linked, dir);
        let inode = |d: &Path| std::fs::metadata(d.join("data.mdb")).unwrap().ino();
        assert_eq!(inode(&linked), inode(&dir));
        assert!(!linked.join("lock.mdb").exists(), "its environment makes its own lock file");
        assert_eq!(copy_db(&dir, 1).unwrap(), linked, "made again over itself");
    }

    /// Units of one build under different limits and readahead read one file; a sync mode
    /// (it opens the writer's environment) or another build does not share it, nor does
    /// any unit where workers run side by side.
    #[test]
    fn units_that_differ_in_how_a_reader_holds_the_file_share_it_when_run_one_at_a_time() {
        use crate::workload::{MemoryLimit, Readahead, SyncMode};
        let tag = Label::build("LMDB_0.9.33", None);
        let small = tag.with_memory_limit(MemoryLimit(256 << 20));
        let large_off = tag.with_memory_limit(MemoryLimit(2 << 30)).with_readahead(Readahead::Off);
        let timed = spec(None);
        assert_eq!(timed.db_key(&small), timed.db_key(&large_off));
        assert_eq!(timed.db_key(&small), tag);
        assert_ne!(timed.db_key(&small.with_sync(SyncMode::Sync)), timed.db_key(&small));
        assert_ne!(timed.db_key(&Label::build("LMDB_1.0.1", None).with_memory_limit(MemoryLimit(256 << 20))), tag);
        let counted = spec(Some(super::super::counter::Counter::Perf));
        assert_ne!(counted.db_key(&small), counted.db_key(&large_off));
    }

    #[test]
    fn every_label_reads_a_database_of_its_own() {
        let labels =
            ["LMDB_0.9.33", "LMDB_1.0.1", "mdb.RE/0.9 @ 1a2b3c4d", "mdb.RE-0.9 @ 1a2b3c4d", "LMDB_1.0.1 (clang -O2)"];
        let folders: std::collections::BTreeSet<String> = labels.iter().map(|l| own_folder(l)).collect();
        assert_eq!(folders.len(), labels.len(), "{folders:?}");
        assert_eq!(own_folder("LMDB_1.0.1"), own_folder("LMDB_1.0.1"));
    }
}
