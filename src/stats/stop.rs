//! The `--target-ci` stop rule's judgement, given to the runner as its
//! [`TargetReached`](crate::runner::TargetReached): whether the measured rounds resolve
//! every comparison the report makes.

use std::collections::BTreeMap;

use super::{chunks, family};
use crate::record::{Engine, Metric, Sample};
use crate::runner::Label;
use crate::workload::Workload;

/// True when, in every (engine, workload), every tag's comparison with the `baseline` (the
/// oldest tag when None) is decided or resolved to within ±`target` percent: more rounds
/// would not change the table. `labels` are the values the samples' labels were rendered from.
pub fn target_reached(
    samples: &[Sample],
    labels: &BTreeMap<String, &Label>,
    baseline: Option<&str>,
    target: f64,
    metric: Metric,
    min_effect: f64,
) -> bool {
    let mut groups: BTreeMap<(Engine, Workload), Vec<&Sample>> = BTreeMap::new();
    let measured = |s: &&Sample| !s.counted && !s.unit.control;
    for s in samples.iter().filter(measured) {
        groups.entry((s.engine, s.workload)).or_default().push(s);
    }
    let rule = family::Rule { min_effect, ..Default::default() };
    let rule = rule.for_metric(metric);
    !groups.is_empty()
        && groups.into_values().all(|group| {
            let blocks = chunks::group_by(group, |s| s.value(metric), |s| s.chunk_values(metric)).compared;
            let is_baseline =
                |t: &&String| baseline.is_none_or(|b| labels.get(*t).is_some_and(|l| l.compared_as().0 == b));
            let oldest = |keys: &mut dyn Iterator<Item = &String>| {
                keys.min_by_key(|t| labels.get(*t).map(|l| l.release_key())).cloned()
            };
            let reference = oldest(&mut blocks.keys().filter(is_baseline)).or_else(|| oldest(&mut blocks.keys()));
            let reference = reference.unwrap_or_default();
            family::resolved(&blocks, &reference, &rule, target / 100.0)
        })
}
