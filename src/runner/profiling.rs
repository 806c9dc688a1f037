//! Profiling units for `explain`: each unit's workloads run once under callgrind, exactly
//! as the counting pass counts them (one worker process for the unit's workloads, the same
//! toggles and part triggers), and each workload's dumped part read as a profile.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::counter::{self, Counter};
use super::job::{interrupted, Job};
use super::prepare::Ready;
use super::profile::{self, Profile};
use super::{pool, RunSpec, Unit};
use crate::record::metric::Event;
use crate::workload::Workload;

/// One workload of one unit profiled: its profile, the part file's text it was read from,
/// and the instructions the worker's line was given (the part's total, as the counting
/// pass gives it).
#[derive(Debug, Clone)]
pub struct WorkloadProfile {
    pub workload: Workload,
    pub profile: Profile,
    pub part: Vec<u8>,
    pub instructions: u64,
    /// The timed operations of its pass, where the worker counts them apart from the
    /// entries (the presets' rows): the profile's costs are per one of them, as `run`'s are.
    pub ops: Option<u64>,
}

/// The valgrind a profile needs: callgrind, whatever counter `run` would choose; with
/// `cache`, simulating the caches as `run --with-cache` does.
pub fn callgrind(cache: bool) -> Result<Counter> {
    if cache {
        return counter::detect(true);
    }
    let out = std::process::Command::new("valgrind").arg("--version").output().context(
        "explain profiles under valgrind's callgrind, and valgrind is not installed (apt-get install valgrind)",
    )?;
    Ok(Counter::Callgrind { version: String::from_utf8_lossy(&out.stdout).trim().to_string(), caches: None })
}

impl RunSpec {
    /// Every unit's workloads profiled, `self.jobs` units at once; per unit, its profiles in
    /// the order of `self.workloads`, or why it has none.
    pub fn profile_units(&self) -> Result<Vec<Result<Vec<WorkloadProfile>, String>>> {
        let items: Vec<(usize, &Unit)> = self.units.iter().enumerate().collect();
        let bar = crate::progress::bar(items.len() as u64, "profiling under callgrind");
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        let mut out: Vec<Option<Result<Vec<WorkloadProfile>, String>>> = vec![None; items.len()];
        pool::for_each(
            &items,
            self.jobs,
            |(_, u)| self.profile_one(u),
            |(i, u), result| {
                bar.inc(1);
                if let Err(e) = &result {
                    bar.suspend(|| eprintln!("{} on the {} engine: not profiled: {e}", u.label, u.engine));
                }
                out[*i] = Some(result);
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        if interrupted() {
            let then = "nothing was written".to_string();
            return Err(super::Interrupted { stage: super::Stage::Search(super::SearchStep::Profiling), then }.into());
        }
        Ok(out.into_iter().map(|r| r.unwrap_or_else(|| Err("not profiled".into()))).collect())
    }

    /// One unit: its read database written (not profiled), then its workloads under
    /// callgrind: those whose parts end apart (one timed call per pass, or the worker's
    /// request) in one worker, a part dumped after each; each of the others (many timed
    /// calls a pass) in a worker of its own, whose whole profile is its part. Each unit has a scratch folder of its own, laid out as
    /// the counting pass lays out its one: the worker's arguments (its folders' paths) are
    /// then as long as there, and so is what it allocates before the timed calls, which
    /// moves where buffers land and what memcpy counts.
    fn profile_one(&self, u: &Unit) -> Result<Vec<WorkloadProfile>, String> {
        // Placed as the counting pass places it: a folder elsewhere has a path of another length.
        let own = self.scratch().map_err(|e| format!("{e:#}"))?;
        let scratch = own.of(&u.label);
        let mut ready = Ready::default();
        if !self.reads().is_empty() {
            let (db, _) = self.prepare_one(u, scratch)?;
            ready.dbs.insert(u.label.clone(), db);
        }
        let (one_call, many_calls): (Vec<Workload>, Vec<Workload>) =
            self.workloads.iter().partition(|w| counter::part_trigger(u.engine, **w).is_some());
        let mut out = Vec::new();
        if !one_call.is_empty() {
            out.extend(self.profile_batch(u, one_call, &ready, scratch)?);
        }
        for w in many_calls {
            out.extend(self.profile_batch(u, vec![w], &ready, scratch)?);
        }
        out.sort_by_key(|p| self.workloads.iter().position(|w| *w == p.workload));
        Ok(out)
    }

    /// One worker under callgrind running `batch`, and each workload's profile read from
    /// what it dumped.
    fn profile_batch(
        &self,
        u: &Unit,
        batch: Vec<Workload>,
        ready: &Ready,
        scratch: &Path,
    ) -> Result<Vec<WorkloadProfile>, String> {
        let job = Job { unit: u, batch: batch.clone() };
        let (lines, death) = self.invoke(&job, ready, scratch);
        if let Some(d) = death {
            return Err(d);
        }
        if let Some(e) = lines.iter().find_map(|l| l.error.clone()) {
            return Err(e);
        }
        let parts = match counter::part_trigger(u.engine, batch[0]) {
            Some(_) => parts_in(scratch)?,
            None => vec![super::callgrind::profile_path(scratch, u)],
        };
        if parts.len() != batch.len() {
            return Err(format!("callgrind dumped {} parts for {} workloads", parts.len(), batch.len()));
        }
        let mut out = Vec::new();
        for (w, part) in batch.iter().zip(parts) {
            let profile = profile::read(&part).map_err(|e| format!("{e:#}"))?;
            let raw = std::fs::read(&part).map_err(|e| format!("cannot read {}: {e}", part.display()))?;
            if let Some(trigger) = counter::part_trigger(u.engine, *w) {
                if profile.trigger.as_ref() != Some(&trigger) {
                    return Err(format!(
                        "{} was dumped by {:?}, not at {trigger} ({w})",
                        part.display(),
                        profile.trigger
                    ));
                }
            }
            let line = lines.iter().find(|l| l.workload == Some(*w));
            let Some(counts) = line.and_then(|l| l.counts.first()) else {
                return Err(format!("{w}: the worker reported no count"));
            };
            held_to_counts(*w, &profile, counts)?;
            let instructions = counts.get(Event::Ir).unwrap_or_default();
            let ops = line.and_then(|l| l.figures.first()).and_then(|f| f.ops);
            out.push(WorkloadProfile { workload: *w, profile, part: raw, instructions, ops });
        }
        Ok(out)
    }
}

/// Every event the runner counted is the sum of the profile's cost lines.
fn held_to_counts(w: Workload, profile: &Profile, counts: &crate::record::metric::Counts) -> Result<(), String> {
    for (event, count) in counts.iter() {
        let total = profile.event(event.name()).and_then(|i| profile.totals.get(i)).copied();
        if total != Some(count) {
            return Err(format!("{w}: the profile's {} total {total:?} is not the count {count}", event.name()));
        }
    }
    Ok(())
}

/// The parts one callgrind run dumped in `dir` (`NAME.1`, `NAME.2`, …), in order.
fn parts_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut parts: Vec<(u32, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let (stem, n) = name.rsplit_once('.')?;
            (stem.starts_with("callgrind-") && stem.ends_with(".out")).then_some(())?;
            Some((n.parse().ok()?, p))
        })
        .collect();
    parts.sort();
    Ok(parts.into_iter().map(|(_, p)| p).collect())
}
