//! Record making: a unit's worker processes for a round, and their lines as the run file's
//! samples and failures.

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;

use anyhow::Result;

use super::adaptive::Selection;
use super::counter::{self, Counter};
use super::job::{interrupted, Job};
use super::prepare::Ready;
use super::protocol::WorkerLine;
use super::{RunSpec, Unit};
use crate::record::{Failure, FailureStage, Record, RunWriter, Sample};
use crate::workload::suite::Verification;
use crate::workload::Workload;

impl RunSpec {
    /// One unit's worker process(es) for a round, on the workloads `selection` measures
    /// (all without one): the records to append (none when warm), their samples marked
    /// `counted` in a counting pass.
    pub(super) fn measure(
        &self,
        u: &Unit,
        round: u32,
        (warm, counted): (bool, bool),
        (ready, selection): (&Ready, Option<&Selection>),
        scratch: &Path,
    ) -> Result<Vec<Record>> {
        // A timed process runs a function order of this binary drawn for it; a counted one
        // the binary as built (counts do not move with placement).
        let drawn;
        let u = match counted {
            true => u,
            false => {
                drawn = super::unit::with_drawn_harness(std::slice::from_ref(u), &mut rand::thread_rng());
                &drawn[0]
            }
        };
        let selected = |w: Workload| selection.is_none_or(|s| s.measures(u, w));
        // Reads need the tag's read database and this unit's verified checksum; without
        // them they were already reported.
        let mut out = Vec::new();
        // Programs: each a process of its own, run by the runner itself.
        for &w in self.workloads.iter().filter(|w| w.is_program() && selected(**w)) {
            if interrupted() {
                return Ok(out);
            }
            let record = self.run_program(u, w, (round, counted), scratch);
            out.extend(record.filter(|_| !warm));
        }
        let workloads: Vec<Workload> = self
            .workloads
            .iter()
            .copied()
            .filter(|w| !w.is_program() && self.applies(u, *w) && selected(*w))
            .filter(|w| !super::watchdog::died(u.engine, &u.label, *w))
            .filter(|w| match w.verified_once() {
                true => ready.checksums.contains_key(&(u.engine, u.label.clone(), *w)),
                false => !w.is_read() || ready.dbs.contains_key(&u.label),
            })
            .collect();
        // Under callgrind, workloads whose profile part nothing ends apart
        // (TimedFunctions::ManyPerPass) get a process each; the rest share one.
        let callgrind = matches!(self.counter_for(u), Some(Counter::Callgrind { .. }));
        let (shared, alone): (Vec<Workload>, Vec<Workload>) =
            workloads.into_iter().partition(|w| !callgrind || counter::part_trigger(u.engine, *w).is_some());
        let jobs = std::iter::once(shared).chain(alone.into_iter().map(|w| vec![w]));
        let mut pending: VecDeque<Job> = jobs.filter(|b| !b.is_empty()).map(|batch| Job { unit: u, batch }).collect();
        while let Some(job) = pending.pop_front() {
            if interrupted() {
                break;
            }
            let (lines, death) = self.invoke(&job, ready, scratch);
            let (job, rest) = split_at_death(job, &lines, death.is_some());
            pending.extend(rest);
            if warm || interrupted() {
                continue;
            }
            if death.is_some() && !counted {
                for w in unreported(&job, &lines) {
                    super::watchdog::mark_died(u.engine, &u.label, w);
                }
            }
            out.extend(self.record(&job, round, counted, ready, lines, death));
        }
        Ok(out)
    }

    /// A worker's samples and failures as run-file records. Timed readCrc and readXxh64
    /// passes must compute what verification read.
    pub(super) fn record(
        &self,
        job: &Job,
        round: u32,
        counted: bool,
        ready: &Ready,
        lines: Vec<WorkerLine>,
        death: Option<String>,
    ) -> Vec<Record> {
        let u = job.unit;
        let mut out = Vec::new();
        let mut reported = BTreeSet::new();
        for mut line in lines {
            let Some(wl) = line.workload else { continue };
            reported.insert(wl);
            // As the workload's suite verifies: once, before timing, or by the pass itself.
            let checksum = match wl.suite().verification() {
                Verification::Once => ready.checksums.get(&(u.engine, u.label.clone(), wl)).copied(),
                Verification::EachPass => line.checksum,
            };
            let wrong = line.outputs.iter().find(|&&o| checksum.is_some_and(|c| c.digest != o));
            let expected = ready.expected.get(&wl).filter(|e| checksum.is_some_and(|c| c != **e));
            let error = line.error.take().or_else(|| {
                wrong.map(|o| format!("timed pass computed {o:016x}, verification read {}", checksum.unwrap()))
            });
            let error = error.or_else(|| {
                expected.map(|e| format!("the pass left {}, but the data written gives {e}", checksum.unwrap()))
            });
            if let Some(error) = error {
                let failure = Failure { cause: line.cause, ..self.failure(u, Some(wl), FailureStage::Run, error) };
                out.push(Record::Failure(failure.in_round(round)));
                continue;
            }
            for (i, ns) in line.samples_ns.iter().enumerate() {
                out.push(Record::Sample(Sample {
                    round,
                    engine: u.engine,
                    unit: u.label.clone(),
                    workload: wl,
                    ns: *ns,
                    counts: line.counts_of(i).unwrap_or_default(),
                    checksum,
                    counted,
                    figures: line.figures.get(i).cloned().unwrap_or_default(),
                    layout: u.layout.as_ref().map(|l| l.seed),
                    harness: u.harness,
                    chunks_ns: line.chunks_ns.get(i).cloned().unwrap_or_default(),
                    space: line.space.get(i).copied(),
                    io: line.io.get(i).copied(),
                    major_faults: line.major_faults.get(i).copied(),
                }));
            }
        }
        // A workload the worker never reported failed, whether the worker died or not.
        let died = death.is_some();
        let missing = death.unwrap_or_else(|| "the worker exited normally without reporting this workload".into());
        for wl in job.batch.iter().filter(|wl| !reported.contains(wl)) {
            let failure = self.failure(u, Some(*wl), FailureStage::Run, missing.clone());
            out.push(Record::Failure(Failure { died, ..failure }.in_round(round)));
        }
        out
    }
}

/// Appends records to the run file and returns the samples among them.
pub(super) fn append_all(w: &mut RunWriter, records: Result<Vec<Record>>) -> Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for r in records? {
        w.append(&r)?;
        if let Record::Sample(s) = r {
            samples.push(s);
        }
    }
    Ok(samples)
}

/// The units (engine and label) a unit's records report failed, for the progress line.
pub(super) fn failed_units(records: &Result<Vec<Record>>) -> impl Iterator<Item = String> + '_ {
    records.iter().flatten().filter_map(|r| match r {
        Record::Failure(f) => Some(format!("{} {}", f.engine, f.unit)),
        _ => None,
    })
}

/// The workloads of `job` its worker's `lines` did not report.
fn unreported(job: &Job, lines: &[WorkerLine]) -> Vec<Workload> {
    let reported: BTreeSet<Workload> = lines.iter().filter_map(|l| l.workload).collect();
    job.batch.iter().copied().filter(|w| !reported.contains(w)).collect()
}

/// A worker that died took down the workload it was running, the first of its batch it did
/// not report (a worker runs its batch in order), and no other: the job as far as that one,
/// and the workloads after it as a job of their own for a fresh worker.
fn split_at_death<'a>(job: Job<'a>, lines: &[WorkerLine], died: bool) -> (Job<'a>, Option<Job<'a>>) {
    let reported: BTreeSet<Workload> = lines.iter().filter_map(|l| l.workload).collect();
    let Some(at) = job.batch.iter().position(|w| !reported.contains(w)).filter(|_| died) else {
        return (job, None);
    };
    let mut batch = job.batch;
    let rest: Vec<Workload> = batch.split_off(at + 1).into_iter().filter(|w| !reported.contains(w)).collect();
    let rest = (!rest.is_empty()).then(|| Job { unit: job.unit, batch: rest });
    (Job { unit: job.unit, batch }, rest)
}
