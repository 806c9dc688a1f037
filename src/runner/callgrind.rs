//! Starting a measuring worker, and callgrind handling: the counter each engine uses,
//! callgrind's command line, and each workload's count from the profile's parts.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use super::counter::{self, Counter};
use super::job::Job;
use super::memlimit::{Controller, Limited};
use super::prepare::Ready;
use super::protocol::WorkerLine;
use super::{sanitize, RunSpec, Unit};
use crate::record::Engine;

impl RunSpec {
    /// The counter a unit's worker uses: perf only inside the Rust worker.
    pub(super) fn counter_for(&self, u: &Unit) -> Option<Counter> {
        match (&self.counter, u.engine) {
            (None, _) => None,
            (Some(c), Engine::C) => Some(c.for_c()),
            (Some(c), _) => Some(c.clone()),
        }
    }

    /// Runs one worker invocation (under callgrind when counting there) and returns its
    /// lines, with the callgrind totals as each line's counts.
    pub(super) fn invoke(&self, job: &Job, ready: &Ready, scratch: &Path) -> (Vec<WorkerLine>, Option<String>) {
        let u = job.unit;
        let names: Vec<&str> = job.batch.iter().map(|w| w.name()).collect();
        let counter = self.counter_for(u);
        let mut args: Vec<OsString> = Vec::new();
        if let Some(db) = ready.dbs.get(&u.label) {
            args.extend(["--dir".into(), db.into()]);
        }
        args.extend(["--scratch".into(), scratch.into(), "--workloads".into(), names.join(",").into()]);
        // Callgrind dumps a part per timed call: one repetition per workload then.
        let iterations = if matches!(counter, Some(Counter::Callgrind { .. })) { 1 } else { self.plan.iterations };
        args.extend(["--iterations".into(), iterations.to_string().into()]);
        if counter == Some(Counter::Perf) {
            args.push("--count-instructions".into());
        }
        args.extend(self.config.to_args().into_iter().map(OsString::from));
        let (program, mut full) = u.argv(super::worker::WorkerAction::Run);
        full.extend(args);
        let Some(Counter::Callgrind { caches, .. }) = counter else {
            let mut c = Command::new(&program);
            c.args(&full);
            if counter.is_none() {
                super::unit::pad_stack(&mut c);
            }
            return run_held(job, c);
        };
        let profile = profile_path(scratch, u);
        counter::remove_profile(&profile);
        let triggers: Option<Vec<counter::Trigger>> =
            job.batch.iter().map(|w| counter::part_trigger(u.engine, *w)).collect();
        let dump_after: Vec<&str> = triggers.iter().flatten().filter_map(counter::Trigger::function).collect();
        let (mut lines, death) =
            run_held(job, counter::callgrind_command(&program, &full, &profile, &dump_after, caches.as_ref()));
        let counted = match triggers {
            // The parts of the workloads a dead worker ended are theirs still.
            Some(triggers) => {
                counter::callgrind_parts(&profile).map(|parts| assign_parts(job, &triggers, &mut lines, parts))
            }
            None if death.is_some() => Ok(()),
            // One workload in this process: the profile's total is its count.
            None => counter::callgrind_total(&profile).map(|total| {
                lines.iter_mut().filter(|l| l.workload.is_some()).for_each(|l| l.counts = vec![total.clone()])
            }),
        };
        match (counted, death) {
            (_, Some(death)) => (lines, Some(death)),
            (Ok(()), None) => (lines, None),
            (Err(e), None) => (lines, Some(format!("{e:#}"))),
        }
    }
}

/// Runs a job's worker, in a cgroup held to its unit's memory limit when it has one. Where
/// that cgroup cannot be made, the worker is not started: each workload of the job fails
/// with the reason, and nothing is measured without the limit its label names.
fn run_held(job: &Job, mut cmd: Command) -> (Vec<WorkerLine>, Option<String>) {
    let Some(limit) = job.unit.label.memory_limit else { return job.unit.run(cmd) };
    match Controller::find().and_then(|c| Limited::new(&c, limit.0)) {
        Ok(held) => {
            held.confine(&mut cmd);
            // Dropped (the cgroup removed) once the worker has ended.
            let (lines, death) = job.unit.run(cmd);
            let oom =
                (held.oom_kills() > 0).then(|| format!("the kernel's OOM killer ended it, over its {limit} limit"));
            let death = match (death, oom) {
                (Some(d), Some(oom)) => Some(format!("{d}: {oom}")),
                (d, _) => d,
            };
            drop(held);
            (lines, death)
        }
        Err(refused) => {
            let error = |w: &crate::workload::Workload| WorkerLine {
                workload: Some(*w),
                error: Some(format!("not measured without its memory limit: {refused}")),
                ..Default::default()
            };
            (job.batch.iter().map(error).collect(), None)
        }
    }
}

/// Where a unit's worker writes its callgrind profile (parts add `.1`, `.2`, …): parallel
/// jobs each need their own.
pub(super) fn profile_path(scratch: &Path, u: &Unit) -> std::path::PathBuf {
    scratch.join(format!("callgrind-{}-{}.out", u.engine, sanitize(&u.label.to_string())))
}

/// Gives each workload's line the count of the profile part that ended it (`triggers`, one
/// per workload of the batch). Parts come in call order; a workload that failed before its
/// timed call has no part by its function's return, and a line left without a count is a
/// failure, not a sample without one.
fn assign_parts(job: &Job, triggers: &[counter::Trigger], lines: &mut [WorkerLine], parts: Vec<counter::ProfilePart>) {
    let mut parts = parts.into_iter().peekable();
    for (w, trigger) in job.batch.iter().zip(triggers) {
        let part = parts.next_if(|p| p.trigger == *trigger);
        for l in lines.iter_mut().filter(|l| l.workload == Some(*w) && l.error.is_none()) {
            match &part {
                Some(p) => l.counts = vec![p.counts.clone()],
                None => l.error = Some(format!("callgrind dumped no count at {trigger}")),
            }
        }
    }
}
