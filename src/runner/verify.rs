//! Verification: once per run and unit, each read's checksum held to what the data must
//! give, for the suites that verify once ([`Verification::Once`]).
//!
//! [`Verification::Once`]: crate::workload::suite::Verification::Once

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;

use super::job::interrupted;
use super::{pool, Label, RunSpec, Unit};
use crate::record::{Engine, FailureStage, Record, RunWriter};
use crate::workload::suite::Suite;
use crate::workload::{Checksum, Workload};

/// (engine, tag, read workload) → the verified checksum; reads without one are not measured.
pub(super) type Checksums = BTreeMap<(Engine, Label, Workload), Checksum>;

impl RunSpec {
    /// Once per run and unit (per engine and file, for units that share one): each read's
    /// checksum through the unit's own engine and library, held to what the data must give (computed here, without LMDB). A read that
    /// fails this is recorded and not measured; timed passes are then held to it.
    /// `dbs` are the tags' read databases; returns the checksums verified.
    pub(super) fn verify(&self, dbs: &BTreeMap<Label, PathBuf>, w: &mut RunWriter) -> Result<Checksums> {
        // Reads of suites verified once (Verification::Once); the others check each pass.
        let reads: Vec<Workload> = self.reads().into_iter().filter(|w| w.verified_once()).collect();
        if reads.is_empty() {
            return Ok(Checksums::new());
        }
        let expected: BTreeMap<Workload, Checksum> =
            Suite::of(&reads)?.expected_checksums(&reads, &self.config).into_iter().collect();
        // Each unit with its read database: a unit without one has nothing to verify. Units of
        // one engine that share a file (`RunSpec::db_key`) verify it once: they differ only in
        // the limit their timed workers are held to and MDB_NORDAHEAD, advice that returns
        // the same bytes, and a verify worker is held to no limit.
        let mut seen = std::collections::BTreeSet::new();
        let units: Vec<(&Unit, &PathBuf)> = self
            .units
            .iter()
            .filter_map(|u| Some((u, dbs.get(&u.label)?)))
            .filter(|(u, dir)| seen.insert((u.engine, *dir)))
            .collect();
        let names: Vec<&str> = reads.iter().map(|w| w.name()).collect();
        let bar = crate::progress::bar(units.len() as u64, "verifying reads");
        let work = |&(u, dir): &(&Unit, &PathBuf)| {
            if interrupted() {
                return (Vec::new(), Some("interrupted".to_string()));
            }
            let mut cmd = u.command(super::worker::WorkerAction::Verify);
            cmd.arg("--dir").arg(dir).arg("--workloads").arg(names.join(",")).args(self.config.to_args());
            u.run(cmd)
        };
        let mut found = BTreeMap::new();
        pool::for_each(&units, self.jobs, work, |&(u, dir), (lines, death)| {
            bar.inc(1);
            if interrupted() {
                return Ok(());
            }
            let sharing: Vec<&Unit> =
                self.units.iter().filter(|v| v.engine == u.engine && dbs.get(&v.label) == Some(dir)).collect();
            for wl in &reads {
                let line = lines.iter().find(|l| l.workload == Some(*wl));
                let verdict = match line.map(|l| (l.checksum, l.error.clone())) {
                    Some((_, Some(error))) => Err(error),
                    Some((Some(got), None)) if Some(&got) == expected.get(wl) => Ok(got),
                    Some((Some(got), None)) => Err(format!(
                        "read {got}, but the data written gives {}",
                        expected.get(wl).map(|c| c.to_string()).unwrap_or_default()
                    )),
                    _ => Err(death.clone().unwrap_or_else(|| "the verify worker reported nothing".into())),
                };
                for v in &sharing {
                    match &verdict {
                        Ok(c) => {
                            found.insert((v.engine, v.label.clone(), *wl), *c);
                        }
                        Err(error) => {
                            w.append(&Record::Failure(self.failure(v, Some(*wl), FailureStage::Verify, error.clone())))?
                        }
                    }
                }
            }
            Ok(())
        })?;
        bar.finish_and_clear();
        Ok(found)
    }
}
