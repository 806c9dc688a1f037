//! The `--target-ci` stop rule's judgement, given to the runner as its
//! [`TargetReached`](crate::runner::TargetReached): whether the measured rounds resolve
//! every comparison the report makes.

use std::collections::BTreeMap;

use super::family;
use crate::runner::runfile::{Engine, Metric, Sample};
use crate::runner::Label;
use crate::workload::Workload;

/// True when, in every (engine, workload), every tag's comparison with the oldest tag is
/// decided or resolved to within ±`target` percent: more rounds would not change the table.
/// `labels` are the values the samples' labels were rendered from.
pub fn target_reached(
    samples: &[Sample],
    labels: &BTreeMap<String, &Label>,
    target: f64,
    metric: Metric,
    min_effect: f64,
) -> bool {
    let mut groups: BTreeMap<(Engine, Workload), BTreeMap<String, Vec<(u32, f64)>>> = BTreeMap::new();
    for s in samples.iter().filter(|s| !s.counted) {
        if let Some(v) = s.value(metric) {
            groups.entry((s.engine, s.workload)).or_default().entry(s.tag.clone()).or_default().push((s.round, v));
        }
    }
    let rule = family::Rule { min_effect, ..Default::default() };
    let rule = rule.for_metric(metric);
    !groups.is_empty()
        && groups.into_values().all(|by_tag| {
            let blocks: BTreeMap<String, family::Rounds> = by_tag
                .into_iter()
                .filter(|(t, _)| labels.get(t).is_some_and(|l| !l.control))
                .map(|(t, v)| (t, family::per_round(v)))
                .collect();
            let reference = blocks.keys().min_by_key(|t| labels[*t].release_key()).cloned().unwrap_or_default();
            family::resolved(&blocks, &reference, &rule, target / 100.0)
        })
}
