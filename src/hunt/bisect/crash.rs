//! `bisect --bad-if crash`: a probe is bad when its worker dies running the workload, good
//! when it gives a sample; each side is one process, run once.

use anyhow::Result;

use super::{BadIf, Bisector, PassSettings};
use crate::hunt::search::ProbeVerdict;
use crate::record::{Failure, Metric, RunData};
use crate::runner::{Label, Unit};

impl BadIf {
    /// The search's rule, in words.
    pub fn describe(self) -> &'static str {
        match self {
            BadIf::Change => "it differs from good by the threshold",
            BadIf::Crash => "its worker dies running the workload",
        }
    }
}

impl Bisector<'_> {
    /// Good runs the workload and bad's worker dies in it; the line that says so.
    pub(super) fn confirm_crash(&mut self, good: &Unit, bad: &Unit) -> Result<bool> {
        let (g, b) = (&good.label, &bad.label);
        let run = self.run_once(&format!("confirm-{g}-{b}"), vec![good.clone(), bad.clone()])?;
        let (gv, bv) = (side(&run, g), side(&run, b));
        let line = format!("confirm: {g} {}; {b} {}", said(&gv, &run, g), said(&bv, &run, b));
        self.say(line);
        Ok(gv == ProbeVerdict::Good && bv == ProbeVerdict::Bad)
    }

    /// One process of the probe on the workload: bad if it dies, good if it gives a sample.
    pub(super) fn probe_crash(&mut self, unit: Unit) -> Result<(ProbeVerdict, String)> {
        let label = unit.label.clone();
        let run = self.run_once(&format!("probe-{label}"), vec![unit])?;
        let verdict = side(&run, &label);
        Ok((verdict.clone(), said(&verdict, &run, &label)))
    }

    /// One round of `units`, no warm-up, by time (no counter), each in a process of its own.
    fn run_once(&mut self, name: &str, units: Vec<Unit>) -> Result<RunData> {
        let pass = PassSettings { metric: Metric::Time, counter: None, min_rounds: 1, max_rounds: 1, warmup: 0 };
        self.run_pass(name, units, &|_| true, pass)
    }
}

/// Which side `label` is on in `run`.
fn side(run: &RunData, label: &Label) -> ProbeVerdict {
    side_of(run.samples.iter().any(|s| s.unit == *label), &run.failures, label)
}

/// Good when `label` gave a sample, bad when its worker died, skipped when it failed
/// otherwise (an error LMDB returned, a wrong checksum).
fn side_of(sampled: bool, failures: &[Failure], label: &Label) -> ProbeVerdict {
    if sampled {
        return ProbeVerdict::Good;
    }
    match failures.iter().find(|f| f.unit == *label) {
        Some(f) if f.died => ProbeVerdict::Bad,
        Some(f) => ProbeVerdict::Skipped(format!("it failed without dying: {}", f.error)),
        None => ProbeVerdict::Skipped("neither a sample nor a failure".into()),
    }
}

/// What `label` did, in words: ran, or how its worker died.
fn said(v: &ProbeVerdict, run: &RunData, label: &Label) -> String {
    said_of(v, &run.failures, label)
}

fn said_of(v: &ProbeVerdict, failures: &[Failure], label: &Label) -> String {
    let death = failures.iter().find(|f| f.unit == *label && f.died).map(|f| f.error.as_str());
    match (v, death) {
        (ProbeVerdict::Good, _) => "ran".into(),
        (ProbeVerdict::Bad, Some(how)) => format!("died ({how})"),
        // The search prints why it skipped.
        (ProbeVerdict::Skipped(_), _) => String::new(),
        (other, _) => format!("{other:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Engine, FailureStage};

    fn failure(unit: &str, died: bool) -> Failure {
        let (stage, error) = (FailureStage::Run, "worker killed by signal 6 (SIGABRT)".to_string());
        Failure {
            round: Some(0),
            engine: Engine::Rust,
            unit: Label::build(unit, None),
            workload: None,
            stage,
            error,
            died,
            cause: None,
        }
    }

    #[test]
    fn a_death_is_bad_an_error_is_skipped_and_neither_is_no_side() {
        let failures = [failure("dies", true), failure("errs", false)];
        let l = |unit: &str| Label::build(unit, None);
        assert_eq!(side_of(true, &failures, &l("dies")), ProbeVerdict::Good, "a sample: it ran");
        assert_eq!(side_of(false, &failures, &l("dies")), ProbeVerdict::Bad);
        let errs = side_of(false, &failures, &l("errs"));
        assert!(matches!(&errs, ProbeVerdict::Skipped(why) if why.starts_with("it failed without dying")), "{errs:?}");
        assert!(matches!(side_of(false, &failures, &l("absent")), ProbeVerdict::Skipped(_)));
        assert_eq!(said_of(&ProbeVerdict::Bad, &failures, &l("dies")), "died (worker killed by signal 6 (SIGABRT))");
    }
}
