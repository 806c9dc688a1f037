//! Record making: a worker's lines as the run file's samples and failures.

use std::collections::BTreeSet;

use anyhow::Result;

use super::prepare::Ready;
use super::protocol::WorkerLine;
use super::runfile::{Failure, Record, RunWriter, Sample};
use super::schedule::Job;
use super::{Schedule, Unit};
use crate::workload::suite::Verification;
use crate::workload::Workload;

impl Schedule<'_> {
    /// A worker's samples and failures as run-file records. Timed readCrc and readXxh64
    /// passes must compute what verification read.
    pub(super) fn record(
        &self,
        job: &Job,
        round: u32,
        ready: &Ready,
        lines: Vec<WorkerLine>,
        death: Option<String>,
    ) -> Vec<Record> {
        let u = job.unit;
        let mut out = Vec::new();
        let mut reported = BTreeSet::new();
        for line in lines {
            let Some(wl) = line.workload else { continue };
            reported.insert(wl);
            // As the workload's suite verifies: once, before timing, or by the pass itself.
            let checksum = match wl.suite().verification() {
                Verification::Once => ready.checksums.get(&(u.engine, u.label.clone(), wl)).copied(),
                Verification::EachPass => line.checksum,
            };
            let wrong = line.outputs.iter().find(|&&o| checksum.is_some_and(|c| c.digest != o));
            let error = line.error.or_else(|| {
                wrong.map(|o| format!("timed pass computed {o:016x}, verification read {}", checksum.unwrap()))
            });
            if let Some(error) = error {
                out.push(Record::Failure(self.failure(u, Some(wl), "run", error).in_round(round)));
                continue;
            }
            for (i, ns) in line.samples_ns.iter().enumerate() {
                out.push(Record::Sample(Sample {
                    round,
                    engine: u.engine,
                    tag: u.label.to_string(),
                    workload: wl,
                    ns: *ns,
                    instructions: line.instructions.get(i).copied(),
                    checksum,
                    counted: self.counted,
                    figures: line.figures.get(i).cloned().unwrap_or_default(),
                    layout: u.layout.as_ref().map(|l| l.seed),
                }));
            }
        }
        // A workload the worker never reported failed, whether the worker died or not.
        let missing = death.unwrap_or_else(|| "the worker exited normally without reporting this workload".into());
        for wl in job.batch.iter().filter(|wl| !reported.contains(wl)) {
            out.push(Record::Failure(self.failure(u, Some(*wl), "run", missing.clone()).in_round(round)));
        }
        out
    }

    /// A unit's failure as the run file records it; a full map says what map would do.
    pub(super) fn failure(&self, u: &Unit, workload: Option<Workload>, stage: &str, error: String) -> Failure {
        let error = match error.contains("MDB_MAP_FULL") {
            false => error,
            true if self.spec.workloads.iter().any(|w| w.suite().preset().is_some()) => {
                format!("{error} (the map is too small for this data: give a larger --preset-map-size)")
            }
            true => format!(
                "{error} (the map of {} bytes is too small for this data: give --map-size {} or more, or leave it out)",
                self.spec.config.effective_map_size(),
                self.spec.config.roomy_map_size()
            ),
        };
        Failure { round: None, engine: u.engine, tag: u.label.to_string(), workload, stage: stage.into(), error }
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
