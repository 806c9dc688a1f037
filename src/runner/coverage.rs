//! Line coverage of units built for it (gcc `--coverage`): each unit's workloads run once
//! by its worker, as the counting pass runs them (its read database prepared by the worker
//! first, uncounted), and gcov's account of the lines that ran read back.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::gcov::{self, FileCoverage};
use super::job::Job;
use super::prepare::Ready;
use super::{Label, RunSpec, Unit};
use crate::workload::Workload;

/// A workload whose coverage run failed on a unit: its lines are not counted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NotRun {
    #[serde(serialize_with = "crate::record::label::as_text")]
    pub unit: Label,
    pub workload: Workload,
    pub error: String,
}

use crate::record::FailureStage;

/// libgcov writes each object's counts where its build was compiled, unless these say
/// where: in `GCOV_PREFIX`, with that many leading folders of the build's path left out.
const PREFIX: &str = "GCOV_PREFIX";
const STRIP: &str = "GCOV_PREFIX_STRIP";
/// More folders than any build's path has: every count file lands in `GCOV_PREFIX` itself.
const STRIP_ALL: &str = "1000";

/// This process's `GCOV_PREFIX`, which every worker it starts inherits, while it lives.
/// Set from the one thread that starts workers, between their runs: each unit's counts go
/// to a folder of its own, and no build or check writes counts while it is set.
struct CountsGoTo {
    before: Vec<(&'static str, Option<OsString>)>,
}

impl CountsGoTo {
    fn set(dir: &Path) -> CountsGoTo {
        let before = [PREFIX, STRIP].iter().map(|k| (*k, std::env::var_os(k))).collect();
        std::env::set_var(PREFIX, dir);
        std::env::set_var(STRIP, STRIP_ALL);
        CountsGoTo { before }
    }
}

impl Drop for CountsGoTo {
    fn drop(&mut self) {
        for (k, v) in &self.before {
            match v {
                Some(v) => std::env::set_var(k, v),
                None => std::env::remove_var(k),
            }
        }
    }
}

impl RunSpec {
    /// Every unit's workloads run once, each in a worker of its own (a worker that dies
    /// leaves no counts, so one that fails loses only its own), their counts added to the
    /// unit's folder under `into` (libgcov adds to the counts it finds there, so runs of
    /// several suites sum). The workloads that failed; an error if all of a unit's did.
    pub fn run_covered(&self, into: &Path) -> Result<Vec<NotRun>> {
        let mut not_run = Vec::new();
        for (i, u) in self.units.iter().enumerate() {
            let counts = into.join(i.to_string());
            std::fs::create_dir_all(&counts).with_context(|| format!("cannot create {}", counts.display()))?;
            let failed: Vec<NotRun> = (self.cover_one(u, &counts).into_iter())
                .map(|(w, e)| NotRun {
                    unit: u.label.clone(),
                    workload: w,
                    error: self.failure(u, Some(w), FailureStage::Coverage, e).error,
                })
                .collect();
            if failed.len() == self.workloads.len() {
                let first = failed.first().map_or(String::new(), |f| f.error.clone());
                bail!("{}: its workloads did not run: {first}", u.label);
            }
            not_run.extend(failed);
        }
        Ok(not_run)
    }

    /// Per unit, gcov's account of `sources` from the counts [`RunSpec::run_covered`] left.
    pub fn read_covered(
        &self,
        into: &Path,
        gcov: &str,
        sources: &[&str],
    ) -> Result<Vec<BTreeMap<String, FileCoverage>>> {
        let mut out = Vec::new();
        for (i, u) in self.units.iter().enumerate() {
            let counts = into.join(i.to_string());
            let objects = notes_beside(u, &counts, sources)?;
            out.push(gcov::run(gcov, &counts, &objects).with_context(|| format!("{}'s coverage", u.label))?);
        }
        Ok(out)
    }

    /// `u`'s read database prepared, then each workload run once in a worker of its own,
    /// its counts in `counts`; the workloads that failed, with why. What the preparation ran
    /// is no workload's: its counts go to the scratch folder.
    fn cover_one(&self, u: &Unit, counts: &Path) -> Vec<(Workload, String)> {
        let all_failed = |e: String| self.workloads.iter().map(|w| (*w, e.clone())).collect();
        let own = match self.scratch() {
            Ok(own) => own,
            Err(e) => return all_failed(format!("{e:#}")),
        };
        let own = own.of(&u.label);
        let mut ready = Ready::default();
        if !self.reads().is_empty() {
            let _uncounted = CountsGoTo::set(&own.join("preparation counts"));
            match self.prepare_one(u, own) {
                Ok((db, _)) => ready.dbs.insert(u.label.clone(), db),
                Err(e) => return all_failed(e),
            };
        }
        let _counts = CountsGoTo::set(counts);
        let run = |w: Workload| {
            let job = Job { unit: u, batch: vec![w] };
            let (lines, death) = self.invoke(&job, &ready, own);
            death.or_else(|| lines.iter().find_map(|l| l.error.clone())).map(|e| (w, e))
        };
        self.workloads.iter().filter(|w| self.applies(u, **w)).filter_map(|w| run(*w)).collect()
    }
}

/// The build's notes (`liblmdb.so-mdb.gcno`, written beside its library by the compiler)
/// copied beside the counts, where gcov reads both: the object names of `sources`.
fn notes_beside(u: &Unit, counts: &Path, sources: &[&str]) -> Result<Vec<String>> {
    let library: &PathBuf = u.library.as_ref().context("a coverage unit loads its library")?;
    let build = library.parent().context("a library has a folder")?;
    let artifact = library.file_name().context("a library has a name")?.to_string_lossy();
    let mut objects = Vec::new();
    for source in sources {
        let stem = source.strip_suffix(".c").unwrap_or(source);
        let notes = format!("{artifact}-{stem}.gcno");
        let from = build.join(&notes);
        if !from.is_file() {
            bail!("{} has no {notes}: it is not a coverage build (gcc --coverage)", build.display());
        }
        std::fs::copy(&from, counts.join(&notes)).with_context(|| format!("cannot copy {}", from.display()))?;
        objects.push(notes);
    }
    Ok(objects)
}
