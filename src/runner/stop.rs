//! The stop rule: the time budget, the caller's stop condition, and what the statistics
//! judge still undecided ([`Progress`]): a run ends when nothing is, at its resolution
//! target or, with adaptive rounds, once every comparison is decided.

use std::time::{Duration, Instant};

use super::adaptive::Progress;
use super::job::StopWhen;
use super::RunSpec;
use crate::record::{Adaptive, Base, EndReason, Sample};

impl RunSpec {
    /// Whether this run's rounds leave decided comparisons out: time rounds of a plan that says so.
    pub(super) fn adaptive(&self) -> bool {
        self.counter.is_none() && self.plan.adaptive == Adaptive::On
    }

    /// What `samples` leave undecided, when the resolution target or adaptive rounds need it,
    /// with `horizon` the rounds the run can still afford (when known).
    pub(super) fn progress(&self, samples: &[Sample], horizon: Option<f64>) -> Option<Progress> {
        if self.plan.target_ci.is_none() && !self.adaptive() {
            return None;
        }
        let metric = (self.plan.metric, self.plan.min_effect());
        let baseline = self.plan.baseline.as_ref().map(Base::as_str);
        Some((self.judge)(samples, baseline, self.plan.target(), metric, horizon, self.plan.reference_layouts))
    }

    /// The rounds the run can still afford after `done` measured rounds (counted from 1),
    /// `measured` of them in this session, taking `spent` since its first: the cap's, and
    /// the budget's at the session's mean round so far (rounds grow cheaper as comparisons
    /// close, so this errs short). None when neither bounds it.
    pub(super) fn horizon(&self, done: u32, measured: u32, spent: Duration, started: Instant) -> Option<f64> {
        let by_cap = self.plan.rounds.map(|cap| f64::from(cap.saturating_sub(done)));
        let by_budget = self.plan.time_budget_s.filter(|_| measured > 0).map(|budget| {
            let left = (budget - started.elapsed().as_secs_f64()).max(0.0);
            left / (spent.as_secs_f64() / f64::from(measured)).max(1e-3)
        });
        [by_cap, by_budget].into_iter().flatten().reduce(f64::min)
    }

    /// Why the run ends after measured round `round` (counted from 1), which took `last`, or
    /// None to go on: the time budget, spent or too short for another round (unless that
    /// was the last round anyway), the caller's stop condition, or `progress` settled (at
    /// the resolution target, or every comparison decided). The round count and Ctrl-C are
    /// the schedule's own.
    pub(super) fn stop_after(
        &self,
        (round, last): (u32, Duration),
        started: Instant,
        samples: &[Sample],
        stop_when: Option<&StopWhen<'_>>,
        progress: Option<&Progress>,
    ) -> Option<EndReason> {
        let budget = self.plan.time_budget_s.map(Duration::from_secs_f64);
        if budget.is_some_and(|b| no_room_for_a_round(started.elapsed(), last, b)) && self.plan.allows_round(round) {
            return Some(EndReason::TimeBudget);
        }
        if stop_when.is_some_and(|f| f(samples)) {
            return Some(EndReason::Decided);
        }
        match (progress.is_some_and(Progress::settled), self.plan.target_ci) {
            (false, _) => None,
            (true, Some(_)) => Some(EndReason::TargetCi),
            (true, None) => Some(EndReason::Decided),
        }
    }
}

/// Whether a budget of which `elapsed` is spent has no room for another round as long as the
/// last one: a round begun would end past it (as each suite's last round did under `--suite
/// all`, 34 s over 15 minutes). The last round is the best guess at the next: rounds of one
/// run cost about the same, and adaptive ones only grow cheaper as comparisons are decided.
fn no_room_for_a_round(elapsed: Duration, last: Duration, budget: Duration) -> bool {
    elapsed + last > budget
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_that_would_end_past_the_budget_is_not_begun() {
        let s = Duration::from_secs;
        assert!(!no_room_for_a_round(s(60), s(30), s(100)), "ends at 90 s");
        assert!(no_room_for_a_round(s(80), s(30), s(100)), "would end at 110 s");
        assert!(no_room_for_a_round(s(101), Duration::ZERO, s(100)), "spent");
    }
}
