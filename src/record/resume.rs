//! What a run file says is left to do: the first phase of its plan it does not record,
//! which `run --resume` continues with.

use std::collections::BTreeSet;

use super::metric::Metric;
use super::plan::Layouts;
use super::reader::RunData;
use super::schema::{CheckKind, End, EndReason, Sample, CHECKS};

/// A phase of a run after its builds, in order: what a resumed run continues with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The measured rounds, from this one (counted from 0).
    Rounds { from: u32 },
    /// The check after the rounds, before the end record.
    Check(CheckKind),
    /// The instruction-counting pass after the end record (`--with-instructions`).
    Counting,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Phase::Rounds { from } => write!(f, "the measured rounds (at round {})", from + 1),
            Phase::Check(CheckKind::Repeat) => f.write_str("the determinism check (one unit counted twice)"),
            Phase::Check(CheckKind::Layouts) => f.write_str("the layout check (one unit counted under two layouts)"),
            Phase::Counting => f.write_str("the instruction-counting pass"),
        }
    }
}

impl RunData {
    /// Rounds with at least one sample.
    pub fn completed_rounds(&self) -> u32 {
        self.samples.iter().filter(|s| !s.counted).map(|s| s.round + 1).max().unwrap_or(0)
    }

    /// The end record of a run whose rounds ended (not by Ctrl-C); its counting pass may
    /// still be left ([`RunData::left`]).
    pub fn finished(&self) -> Option<&End> {
        self.end.as_ref().filter(|e| e.reason != EndReason::Interrupted)
    }

    /// The check that closes this run's rounds, if its plan makes one: an instruction run
    /// counts one unit twice, a random-layout time run one unit under two layouts.
    pub fn closing_check(&self) -> Option<CheckKind> {
        let plan = &self.header.plan;
        match (plan.metric, plan.layouts) {
            (Metric::Time, Layouts::Random) => Some(CheckKind::Layouts),
            (Metric::Time, Layouts::Fixed) => None,
            (_, _) => Some(CheckKind::Repeat),
        }
    }

    /// The first phase of its plan the run file lacks, None when it is complete: rounds
    /// left (no end record, or Ctrl-C's); the check after every round, when no end record
    /// follows it; the counting pass, when its closing check is not recorded and a
    /// (unit, workload) the rounds measured has no count. (A check skipped for want of a
    /// counter is written by the end record, or by the counting pass as a check that did
    /// not pass.) Files from before check records (schema 2 and older) made no checks:
    /// their counting pass is complete once it counted anything.
    pub fn left(&self) -> Option<Phase> {
        let checks = self.header.schema >= CHECKS;
        let recorded = |kind| !checks || self.checks.iter().any(|c| c.kind == Some(kind));
        if self.finished().is_none() {
            let from = self.completed_rounds();
            if self.header.plan.allows_round(from) {
                return Some(Phase::Rounds { from });
            }
            return Some(self.closing_check().filter(|k| !recorded(*k)).map_or(Phase::Rounds { from }, Phase::Check));
        }
        let counting = self.header.plan.count_entries.is_some() && self.header.plan.metric == Metric::Time;
        let (taken, measured) = counts_taken(&self.samples);
        let legacy = !checks && taken > 0;
        let counted = (checks && recorded(CheckKind::Repeat)) || legacy || (taken >= measured && taken > 0);
        (counting && !counted).then_some(Phase::Counting)
    }
}

/// How far a counting pass got over `samples`: the (engine, unit, workload)s the rounds
/// measured that it counted, of all those the rounds measured.
pub fn counts_taken(samples: &[Sample]) -> (usize, usize) {
    let of = |counted: bool| -> BTreeSet<_> {
        samples.iter().filter(|s| s.counted == counted).map(|s| (s.engine, &s.unit, s.workload)).collect()
    };
    let measured = of(false);
    (of(true).intersection(&measured).count(), measured.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::*;
    use crate::record::metric::Counts;
    use crate::record::plan::Plan;
    use crate::record::reader::load;
    use crate::record::schema::Record;
    use crate::workload::Workload;

    #[test]
    fn a_run_lacks_the_first_phase_its_file_does_not_record() {
        let dir = tempfile::tempdir().unwrap();
        let sample = |round| Record::Sample(Sample { round, ..time_sample("LMDB_0.9.33") });
        let random = Plan { layouts: Layouts::Random, layout_seed: Some(1), ..Plan::new(2, 0, Metric::Time) };
        let counting = Plan { count_entries: Some(1000), ..Plan::new(2, 0, Metric::Time) };
        let counted =
            Record::Sample(Sample { counted: true, counts: Counts::instructions(9), ..time_sample("LMDB_0.9.33") });
        let left = |plan: &Plan, records: &[Record]| load(&file_of(dir.path(), plan.clone(), records)).unwrap().left();
        let interrupted = end(EndReason::Interrupted, 1, 1.0, 0.5);
        assert_eq!(left(&random, &[sample(0), interrupted.clone()]), Some(Phase::Rounds { from: 1 }));
        // Every round measured, the check after them not: killed, or Ctrl-C in it.
        let both = [sample(0), sample(1)];
        assert_eq!(left(&random, &both), Some(Phase::Check(CheckKind::Layouts)));
        assert_eq!(left(&random, &[sample(0), sample(1), interrupted]), Some(Phase::Check(CheckKind::Layouts)));
        let done = [sample(0), sample(1), check(CheckKind::Layouts), end(EndReason::Rounds, 2, 1.0, 0.5)];
        assert_eq!(left(&random, &done), None);
        // A run that ended without the check (no counter) lacks nothing.
        assert_eq!(left(&random, &[sample(0), sample(1), end(EndReason::Rounds, 2, 1.0, 0.5)]), None);
        let write = Record::Sample(Sample { workload: Workload::Write, ..time_sample("LMDB_0.9.33") });
        let ended = [sample(0), write, sample(1), end(EndReason::Rounds, 2, 1.0, 0.5), counted.clone()];
        assert_eq!(left(&counting, &ended), Some(Phase::Counting));
        // Every count taken, the pass's check not (killed just before it): nothing is missing.
        let all = [sample(0), sample(1), end(EndReason::Rounds, 2, 1.0, 0.5), counted];
        assert_eq!(left(&counting, &all), None);
        let with_check: Vec<Record> = ended.iter().cloned().chain([check(CheckKind::Repeat)]).collect();
        assert_eq!(left(&counting, &with_check), None);
        let instructions = Plan::new(1, 0, Metric::Instructions);
        assert_eq!(left(&instructions, &[sample(0)]), Some(Phase::Check(CheckKind::Repeat)));
    }
}
