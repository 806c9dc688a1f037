//! The stop rule: the time budget, the caller's stop condition, and the resolution target,
//! whose judgement the statistics provide ([`TargetReached`]).

use std::time::{Duration, Instant};

use super::job::StopWhen;
use super::RunSpec;
use crate::record::{EndReason, Sample};

impl RunSpec {
    /// Why the run ends after measured round `round` (counted from 1), or None to go on: the
    /// time budget (unless that was the last round anyway), the caller's stop condition, or
    /// the resolution target. The round count and Ctrl-C are the schedule's own.
    pub(super) fn stop_after(
        &self,
        round: u32,
        started: Instant,
        samples: &[Sample],
        stop_when: Option<&StopWhen<'_>>,
    ) -> Option<EndReason> {
        let budget = self.plan.time_budget_s.map(Duration::from_secs_f64);
        if budget.is_some_and(|b| started.elapsed() >= b) && round < self.plan.rounds {
            return Some(EndReason::TimeBudget);
        }
        if stop_when.is_some_and(|f| f(samples)) {
            return Some(EndReason::Decided);
        }
        let target = self.plan.target_ci?;
        let labels = self.units.iter().map(|u| (u.label.to_string(), &u.label)).collect();
        let (metric, min_effect) = (self.plan.metric, self.plan.min_effect());
        let baseline = self.plan.baseline.as_deref();
        (self.target_reached)(samples, &labels, baseline, target, metric, min_effect).then_some(EndReason::TargetCi)
    }
}
