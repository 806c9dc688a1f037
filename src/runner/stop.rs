//! The stop rule: when the measured rounds resolve every comparison the report makes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::runfile::{self, EndReason, Engine, Sample};
use super::{Label, Schedule};
use crate::stats;
use crate::workload::Workload;

impl Schedule<'_> {
    /// Why the run ends after measured round `round` (counted from 1), or None to go on: the
    /// time budget (unless that was the last round anyway), the caller's stop condition, or
    /// the resolution target. The round count and Ctrl-C are the schedule's own.
    pub(super) fn stop_after(&self, round: u32, started: Instant, samples: &[Sample]) -> Option<EndReason> {
        let budget = self.spec.plan.time_budget_s.map(Duration::from_secs_f64);
        if budget.is_some_and(|b| started.elapsed() >= b) && round < self.spec.plan.rounds {
            return Some(EndReason::TimeBudget);
        }
        if self.stop_when.is_some_and(|f| f(samples)) {
            return Some(EndReason::Decided);
        }
        let target = self.spec.plan.target_ci?;
        let labels = self.spec.units.iter().map(|u| (u.label.to_string(), &u.label)).collect();
        let (metric, min_effect) = (self.spec.plan.metric, self.spec.plan.min_effect());
        resolved(samples, &labels, target, metric, min_effect).then_some(EndReason::TargetCi)
    }
}

/// True when, in every (engine, workload), every tag's comparison with the oldest tag is
/// decided or resolved to within ±`target` percent: more rounds would not change the table.
/// `labels` are the values the samples' labels were rendered from.
pub fn resolved(
    samples: &[Sample],
    labels: &BTreeMap<String, &Label>,
    target: f64,
    metric: runfile::Metric,
    min_effect: f64,
) -> bool {
    let mut groups: BTreeMap<(Engine, Workload), BTreeMap<String, Vec<(u32, f64)>>> = BTreeMap::new();
    for s in samples.iter().filter(|s| !s.counted) {
        if let Some(v) = s.value(metric) {
            groups.entry((s.engine, s.workload)).or_default().entry(s.tag.clone()).or_default().push((s.round, v));
        }
    }
    let rule = stats::family::Rule { min_effect, ..Default::default() };
    let rule = rule.for_metric(metric);
    !groups.is_empty()
        && groups.into_values().all(|by_tag| {
            let blocks: BTreeMap<String, stats::family::Rounds> = by_tag
                .into_iter()
                .filter(|(t, _)| labels.get(t).is_some_and(|l| !l.control))
                .map(|(t, v)| (t, stats::family::per_round(v)))
                .collect();
            let reference = blocks.keys().min_by_key(|t| labels[*t].release_key()).cloned().unwrap_or_default();
            stats::family::resolved(&blocks, &reference, &rule, target / 100.0)
        })
}
