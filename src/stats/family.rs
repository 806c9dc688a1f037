//! A run's design made explicit: one value per (label, round), comparisons inside a
//! family of k with Bonferroni-widened intervals (each at 1 − 0.05/k), and the machine's
//! noise as the run saw it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::ratio::{self, Comparison, Verdict};
use super::{median, ALPHA};

/// One value per round. A worker's repetitions within a round are one block, so they
/// are summarised into that round's value (their median), never pooled.
pub type Rounds = BTreeMap<u32, f64>;

pub fn per_round(values: impl IntoIterator<Item = (u32, f64)>) -> Rounds {
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (r, v) in values {
        by.entry(r).or_default().push(v);
    }
    by.into_iter().map(|(r, v)| (r, median(&v))).collect()
}

/// How deltas are judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// `same` needs the whole interval within ±this fraction.
    pub min_effect: f64,
    /// Instruction counts further apart than this fraction differ.
    pub count_tolerance: f64,
    /// The figures are exact instruction counts.
    pub counts: bool,
}

pub const MIN_EFFECT: f64 = 0.02;
pub const COUNT_TOLERANCE: f64 = 0.005;

impl Default for Rule {
    fn default() -> Self {
        Rule { min_effect: MIN_EFFECT, count_tolerance: COUNT_TOLERANCE, counts: false }
    }
}

impl Rule {
    pub fn for_counts(self) -> Rule {
        Rule { counts: true, ..self }
    }
}

/// `b` against `a` as one of `family` comparisons: per-round pairs where both were
/// measured in the same rounds, else the two samples apart.
pub fn compare(a: &Rounds, b: &Rounds, family: usize, rule: &Rule) -> Option<Comparison> {
    let common: Vec<(f64, f64)> = a.iter().filter_map(|(r, x)| b.get(r).map(|y| (*x, *y))).collect();
    if rule.counts || common.len() < 2 {
        return compare_apart(a, b, family, rule);
    }
    let (pa, pb): (Vec<f64>, Vec<f64>) = common.into_iter().unzip();
    ratio::paired(&pa, &pb, ALPHA / family.max(1) as f64, rule.min_effect)
}

/// `b` against `a` from different runs, whose round numbers mean nothing to each other:
/// the two samples apart.
pub fn compare_apart(a: &Rounds, b: &Rounds, family: usize, rule: &Rule) -> Option<Comparison> {
    let (va, vb): (Vec<f64>, Vec<f64>) = (a.values().copied().collect(), b.values().copied().collect());
    if rule.counts {
        return ratio::counts(&va, &vb, rule.count_tolerance);
    }
    ratio::unpaired(&va, &vb, ALPHA / family.max(1) as f64, rule.min_effect)
}

/// Every label against `reference`, as one family of (labels − 1) comparisons.
pub fn against(blocks: &BTreeMap<String, Rounds>, reference: &str, rule: &Rule) -> BTreeMap<String, Comparison> {
    let Some(base) = blocks.get(reference) else { return BTreeMap::new() };
    let k = blocks.len().saturating_sub(1);
    blocks
        .iter()
        .filter(|(t, _)| t.as_str() != reference)
        .filter_map(|(t, r)| compare(base, r, k, rule).map(|c| (t.clone(), c)))
        .collect()
}

/// The number of comparisons in the all-pairs family of `k` labels. Comparing against a
/// label chosen after seeing the data (the fastest) is one of these pairs, so intervals at
/// this family's level survive that choice.
pub fn all_pairs(k: usize) -> usize {
    k * k.saturating_sub(1) / 2
}

/// The run's noise as the samples show it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Noise {
    /// Per-sample spread: robust CV (1.4826 × MAD of log values), median over labels.
    pub spread: f64,
    /// Between-round drift: robust spread of the rounds' common effect on every label.
    pub drift: f64,
}

/// 1.4826 × the median absolute deviation: the standard deviation of normal data, robustly.
pub fn robust_sd(xs: &[f64]) -> f64 {
    let m = median(xs);
    1.4826 * median(&xs.iter().map(|x| (x - m).abs()).collect::<Vec<f64>>())
}

pub fn noise(blocks: &BTreeMap<String, Rounds>) -> Option<Noise> {
    let logs: Vec<BTreeMap<u32, f64>> = blocks
        .values()
        .filter(|r| r.len() >= 3 && r.values().all(|v| *v > 0.0))
        .map(|r| r.iter().map(|(k, v)| (*k, v.ln())).collect())
        .collect();
    if logs.is_empty() {
        return None;
    }
    let spread = median(&logs.iter().map(|l| robust_sd(&l.values().copied().collect::<Vec<_>>())).collect::<Vec<_>>());
    // Each label's deviation from its own median, then per round the median over labels.
    let mut by_round: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for l in &logs {
        let m = median(&l.values().copied().collect::<Vec<_>>());
        for (r, v) in l {
            by_round.entry(*r).or_default().push(v - m);
        }
    }
    let effects: Vec<f64> = by_round.values().map(|v| median(v)).collect();
    let drift = if effects.len() >= 3 { robust_sd(&effects) } else { 0.0 };
    Some(Noise { spread: spread.exp_m1(), drift: drift.exp_m1() })
}

/// True when every comparison against `reference` is decided, or resolved to within
/// ±`target` (a fraction): the run has nothing more to learn at this resolution.
pub fn resolved(blocks: &BTreeMap<String, Rounds>, reference: &str, rule: &Rule, target: f64) -> bool {
    if blocks.len() < 2 {
        return false;
    }
    let cmp = against(blocks, reference, rule);
    cmp.len() + 1 == blocks.len()
        && cmp.values().all(|c| c.verdict != Verdict::Inconclusive || c.half_width().is_some_and(|h| h <= target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetitions_in_a_round_become_one_value() {
        let r = per_round([(0, 10.0), (0, 12.0), (0, 50.0), (1, 11.0)]);
        assert_eq!(r, BTreeMap::from([(0, 12.0), (1, 11.0)]));
    }

    #[test]
    fn drift_between_rounds_cancels_in_pairs() {
        // Round r slows every label by 3% × r; B is 4% slower than A in every round.
        let a: Rounds = (0..20).map(|r| (r, 100.0 * (1.0 + 0.03 * r as f64))).collect();
        let b: Rounds = a.iter().map(|(r, v)| (*r, v * 1.04)).collect();
        let c = compare(&a, &b, 1, &Rule::default()).unwrap();
        assert_eq!(c.method, ratio::Method::Paired);
        assert_eq!(c.verdict, Verdict::Slower);
        assert!((c.ratio - 1.04).abs() < 1e-9);
        let blocks = BTreeMap::from([("a".to_string(), a), ("b".to_string(), b)]);
        let n = noise(&blocks).unwrap();
        assert!(n.drift > 0.1 && n.spread > 0.1, "{n:?}");
    }

    #[test]
    fn separate_runs_fall_back_to_two_samples() {
        let a: Rounds = (0..10).map(|r| (r, 100.0 + r as f64)).collect();
        let b: Rounds = (10..20).map(|r| (r, 110.0 + (r - 10) as f64)).collect();
        let c = compare(&a, &b, 1, &Rule::default()).unwrap();
        assert_eq!(c.method, ratio::Method::Unpaired);
    }
}
