//! The instruction-counting pass after the timed rounds, and the check that counts repeat.

use std::path::Path;

use anyhow::Result;

use super::counter;
use super::job::{interrupted, Job};
use super::measure::{append_all, failed_units};
use super::prepare::Ready;
use super::scratch::Scratch;
use super::{pool, RunSpec, Unit};
use crate::record::metric::{Counts, Metric};
use crate::record::{CheckKind, Record, RunCheck, RunWriter, Sample, COUNT_TOLERANCE};
use crate::workload::Workload;

impl RunSpec {
    /// The instruction-counting pass the plan asks for after the timed rounds: every unit
    /// once, on every core, its samples marked `counted`, then the pass's closing check
    /// (one unit counted again). `prior` are the run file's samples: a resumed pass counts
    /// only what is not counted yet. Without a counter, the check records why nothing was.
    /// After Ctrl-C the check is not made, which leaves the pass to resume.
    pub fn count_pass(&self, w: &mut RunWriter, prior: &[Sample]) -> Result<()> {
        let Some(entries) = self.plan.count_entries else { return Ok(()) };
        let counter = match counter::detect(self.plan.simulates_caches()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("no instruction counts beside time: {e:#}");
                let what = "instruction counts beside time".to_string();
                let detail = format!("none taken: {e:#}");
                return w.append(&Record::Check(RunCheck {
                    what,
                    passed: false,
                    detail,
                    kind: Some(CheckKind::Repeat),
                }));
            }
        };
        let mut counted: Vec<Sample> = prior.iter().filter(|s| s.counted).cloned().collect();
        let left = self.uncounted(&counted);
        let units: usize = left.iter().map(|(_, units)| units.len()).sum();
        match counted.is_empty() {
            true => eprintln!("counting instructions: every unit once, {entries} entries"),
            false => eprintln!("counting instructions: the units not counted yet ({units}), {entries} entries"),
        }
        for (workloads, units) in left {
            let pass = RunSpec { units, ..self.counting(workloads, entries, counter.clone())? };
            counted.extend(pass.count_every_unit(w)?);
            if interrupted() {
                return Ok(());
            }
        }
        self.counting(self.workloads.clone(), entries, counter)?.recount(&counted, w)
    }

    /// The units with workloads no counted sample covers, grouped by those workloads.
    fn uncounted(&self, counted: &[Sample]) -> Vec<(Vec<Workload>, Vec<Unit>)> {
        let mut left: Vec<(Vec<Workload>, Vec<Unit>)> = Vec::new();
        // A unit whose worker stalled is left out here too.
        for u in self.units.iter().filter(|u| !super::watchdog::hung(u.engine, &u.label)) {
            let done =
                |wl: &Workload| counted.iter().any(|s| s.engine == u.engine && s.unit == u.label && s.workload == *wl);
            let missing: Vec<Workload> = self.workloads.iter().copied().filter(|wl| !done(wl)).collect();
            match left.iter_mut().find(|(w, _)| *w == missing) {
                _ if missing.is_empty() => {}
                Some((_, units)) => units.push(u.clone()),
                None => left.push((missing, vec![u.clone()])),
            }
        }
        left
    }

    /// This counting specification's pass: every unit once under the counter, on every
    /// core, its samples marked `counted`, no end record (the timed rounds wrote theirs).
    fn count_every_unit(&self, w: &mut RunWriter) -> Result<Vec<Sample>> {
        assert!(self.counter.is_some(), "a counting specification");
        let scratch = self.scratch()?;
        let log = crate::progress::Log::start(crate::progress::JobPhase::CountingInstructions, None)?;
        let ready = self.ready(&scratch, w)?;
        let bar = crate::progress::bar(self.units.len() as u64, "counting instructions");
        let units: Vec<&Unit> = self.units.iter().collect();
        let mut samples = Vec::new();
        pool::for_each(
            &units,
            self.jobs,
            |u| self.measure(u, 0, (false, true), (&ready, None), scratch.of(&u.label)),
            |_, records| {
                bar.inc(1);
                failed_units(&records).for_each(|u| log.failed(u));
                samples.extend(append_all(w, records)?);
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        Ok(samples)
    }

    /// The counting pass's closing check over its `counted` samples, in a read database of
    /// its own: the pass may have counted in several groups, or in an earlier session.
    fn recount(&self, counted: &[Sample], w: &mut RunWriter) -> Result<()> {
        let scratch = self.scratch()?;
        let mut ready = Ready::default();
        let again = recounted(counted);
        let unit = again.and_then(|s| self.units.iter().find(|u| u.engine == s.engine && u.label == s.unit));
        if let (Some(u), Some(s)) = (unit, again.filter(|s| s.workload.is_read())) {
            match self.prepare_one(u, scratch.of(&u.label)) {
                Ok((dir, _)) => drop(ready.dbs.insert(u.label.clone(), dir)),
                Err(_) if interrupted() => return Ok(()),
                Err(e) => return w.append(&Record::Check(repeat_check(s, Err(e)))),
            }
        }
        self.check_determinism(&ready, &scratch, counted, w)
    }

    /// Counts are taken once per unit, many workloads to a worker, which is only sound if
    /// they repeat and no workload's count depends on those before it: count the first
    /// unit's last workload (`recounted`) again, alone in a worker, and record whether they agree. A check
    /// with nothing to count again is recorded as not passed, saying why; after Ctrl-C
    /// nothing is recorded.
    pub(super) fn check_determinism(
        &self,
        ready: &Ready,
        scratch: &Scratch,
        counted: &[Sample],
        w: &mut RunWriter,
    ) -> Result<()> {
        if interrupted() {
            return Ok(());
        }
        let Some(sample) = recounted(counted) else {
            let detail = "nothing was counted (every count failed: see the failures)".to_string();
            let what = "instruction counts repeat".to_string();
            return w.append(&Record::Check(RunCheck { what, passed: false, detail, kind: Some(CheckKind::Repeat) }));
        };
        let again = match self.units.iter().find(|u| u.engine == sample.engine && u.label == sample.unit) {
            Some(u) => self.count_once(u, sample.workload, ready, scratch.of(&u.label)),
            None => Err(format!("{} {} is not measured in this session", sample.engine, sample.unit)),
        };
        if interrupted() {
            return Ok(());
        }
        w.append(&Record::Check(repeat_check(sample, again)))
    }

    /// One workload of `u` counted once more: its counts, or why there are none.
    pub(super) fn count_once(
        &self,
        u: &Unit,
        workload: Workload,
        ready: &Ready,
        scratch: &Path,
    ) -> Result<Counts, String> {
        if workload.is_program() {
            return self.count_program(u, workload, scratch);
        }
        let (lines, death) = self.invoke(&Job { unit: u, batch: vec![workload] }, ready, scratch);
        let count = lines.iter().find(|l| l.workload == Some(workload)).and_then(|l| l.counts_of(0));
        count.ok_or_else(|| death.unwrap_or_else(|| format!("{} {} {workload}: no count", u.engine, u.label)))
    }
}

/// The sample the closing check counts again: the last counted of the first unit counted,
/// which its worker ran after the unit's other workloads; with simulated caches, which
/// the workloads before it left warm, the first.
fn recounted(counted: &[Sample]) -> Option<&Sample> {
    let first = counted.iter().find(|s| !s.counts.is_empty())?;
    if Metric::counted_in(&first.counts).any(Metric::needs_cache_sim) {
        return Some(first);
    }
    counted.iter().rfind(|s| !s.counts.is_empty() && s.engine == first.engine && s.unit == first.unit)
}

/// The check that `first`'s counts repeat, every metric they hold, against `again`.
fn repeat_check(first: &Sample, again: Result<Counts, String>) -> RunCheck {
    let what = format!("{} {} {} counted twice", first.engine, first.unit, first.workload);
    let metrics: Vec<Metric> = Metric::counted_in(&first.counts).collect();
    counts_agree(CheckKind::Repeat, what, &metrics, Ok(first.counts.clone()), again)
}

/// Whether two counts of the same work agree. They may differ by a few instructions where
/// glibc's memcpy takes another path for another buffer alignment; what matters is that this
/// stays far below the tolerance counts are judged with.
pub(super) fn counts_agree(
    kind: CheckKind,
    what: String,
    metrics: &[Metric],
    first: Result<Counts, String>,
    second: Result<Counts, String>,
) -> RunCheck {
    let allowed = COUNT_TOLERANCE / 10.0;
    let kind = Some(kind);
    let (first, second) = match (first, second) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return RunCheck { what, passed: false, detail: e, kind },
    };
    let mut passed = true;
    let mut details = Vec::new();
    for m in metrics {
        let (Some(a), Some(b)) = (m.of_counts(&first), m.of_counts(&second)) else {
            passed = false;
            details.push(format!("{} counted once only", m.name()));
            continue;
        };
        let off = (b as f64 - a as f64).abs() / (a.max(1) as f64);
        passed &= off <= allowed || a.abs_diff(b) <= m.info().slack;
        details.push(format!("{a} then {b} {}, {:.5}% apart", m.name(), off * 100.0));
    }
    let slack: Vec<String> =
        metrics.iter().filter(|m| m.info().slack > 0).map(|m| format!("{} {}", m.info().slack, m.name())).collect();
    let slack = if slack.is_empty() { String::new() } else { format!(", or {}", slack.join(", ")) };
    let detail = format!("{} (allowed: {:.2}%{slack})", details.join("; "), allowed * 100.0);
    RunCheck { what, passed, detail, kind }
}
