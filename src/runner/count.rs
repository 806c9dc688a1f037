//! The instruction-counting pass after the timed rounds, and the check that counts repeat.

use std::path::Path;

use anyhow::Result;

use super::counter;
use super::job::{interrupted, Job};
use super::prepare::Ready;
use super::record::append_all;
use super::runfile::{Check, Record, RunWriter, Sample, COUNT_TOLERANCE};
use super::{pool, scratch, RunSpec, Unit};
use crate::workload::Workload;

impl RunSpec {
    /// The instruction-counting pass the plan asks for after the timed rounds (every unit
    /// once, on every core, its samples marked `counted`), if a counter is at hand.
    pub fn count_pass(&self, w: &mut RunWriter) -> Result<()> {
        let Some(entries) = self.plan.count_entries else { return Ok(()) };
        let counter = match counter::detect() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("no instruction counts beside time: {e:#}");
                return Ok(());
            }
        };
        let pass = self.counting(self.workloads.clone(), entries, counter)?;
        eprintln!("counting instructions: every unit once, {entries} entries");
        pass.count_every_unit(w)
    }

    /// This counting specification's pass: every unit once under the counter, on every
    /// core, its samples marked `counted`, no end record (the timed rounds wrote theirs).
    fn count_every_unit(&self, w: &mut RunWriter) -> Result<()> {
        assert!(self.counter.is_some(), "a counting specification");
        let scratch = scratch::create()?;
        let ready = self.ready(scratch.path(), w)?;
        let bar = crate::progress::bar(self.units.len() as u64, "counting instructions");
        let units: Vec<&Unit> = self.units.iter().collect();
        let mut samples = Vec::new();
        pool::for_each(
            &units,
            self.jobs,
            |u| self.measure(u, 0, (false, true), &ready, scratch.path()),
            |_, records| {
                bar.inc(1);
                samples.extend(append_all(w, records)?);
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        self.check_determinism(&ready, scratch.path(), &samples, w)
    }

    /// Counts are taken once per unit, which is only sound if they repeat: count one
    /// unit's workload (the first counted sample's) again and record whether they agree.
    pub(super) fn check_determinism(
        &self,
        ready: &Ready,
        scratch: &Path,
        counted: &[Sample],
        w: &mut RunWriter,
    ) -> Result<()> {
        let Some(first) = counted.iter().find(|s| s.instructions.is_some()) else { return Ok(()) };
        let Some(u) = self.units.iter().find(|u| u.engine == first.engine && u.label.to_string() == first.tag) else {
            return Ok(());
        };
        if interrupted() {
            return Ok(());
        }
        let again = self.count_once(u, first.workload, ready, scratch);
        let what = format!("{} {} {} counted twice", first.engine, first.tag, first.workload);
        w.append(&Record::Check(counts_agree(what, Ok(first.instructions.unwrap_or_default()), again)))
    }

    /// One workload of `u` counted once more: its count, or why there is none.
    pub(super) fn count_once(
        &self,
        u: &Unit,
        workload: Workload,
        ready: &Ready,
        scratch: &Path,
    ) -> Result<u64, String> {
        let (lines, death) = self.invoke(&Job { unit: u, batch: vec![workload] }, ready, scratch);
        let count = lines.iter().find(|l| l.workload == Some(workload)).and_then(|l| l.instructions.first().copied());
        count.ok_or_else(|| death.unwrap_or_else(|| format!("{} {} {workload}: no count", u.engine, u.label)))
    }
}

/// Whether two counts of the same work agree. They may differ by a few instructions where
/// glibc's memcpy takes another path for another buffer alignment; what matters is that this
/// stays far below the tolerance counts are judged with.
pub(super) fn counts_agree(what: String, first: Result<u64, String>, second: Result<u64, String>) -> Check {
    let allowed = COUNT_TOLERANCE / 10.0;
    match (first, second) {
        (Ok(a), Ok(b)) => {
            let off = (b as f64 - a as f64).abs() / (a.max(1) as f64);
            let detail =
                format!("{a} then {b} instructions, {:.5}% apart (allowed: {:.2}%)", off * 100.0, allowed * 100.0);
            Check { what, passed: off <= allowed, detail }
        }
        (Err(e), _) | (_, Err(e)) => Check { what, passed: false, detail: e },
    }
}
