//! A run's design made explicit: one value per (label, round), comparisons inside a
//! family with Bonferroni-widened intervals (each of a table's k at 1 − 0.05/(k·T), T the
//! run's tables), and the machine's noise as the run saw it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::ratio::{self, Comparison, Verdict};
use super::{median, ALPHA};
use crate::record::Metric;

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
    /// The run's tables of one kind (against the baseline, or ranked): they share its 5%
    /// error, so that a run of many workloads is as unlikely to claim a false difference
    /// anywhere as a run of one.
    pub tables: usize,
}

pub use crate::record::{COUNT_TOLERANCE, MIN_EFFECT};

impl Default for Rule {
    fn default() -> Self {
        Rule { min_effect: MIN_EFFECT, count_tolerance: COUNT_TOLERANCE, counts: false, tables: 1 }
    }
}

impl Rule {
    /// The rule a run's figures are judged by: its `same` margin, its metric's kind, its
    /// error shared by its `tables` (the report's, and the runner's judgement of them).
    pub fn of_run(min_effect: f64, metric: Metric, tables: usize) -> Rule {
        Rule { min_effect, ..Rule::default() }.for_metric(metric).for_tables(tables)
    }

    pub fn for_counts(self) -> Rule {
        Rule { counts: true, ..self }
    }

    /// The rule a metric's figures are judged by: exact counts within the tolerance,
    /// anything else by intervals.
    pub fn for_metric(self, metric: Metric) -> Rule {
        if metric.is_exact() {
            self.for_counts()
        } else {
            self
        }
    }

    /// The rule of a run whose claims come in `tables` tables of each kind.
    pub fn for_tables(self, tables: usize) -> Rule {
        Rule { tables: tables.max(1), ..self }
    }

    /// The comparisons that share the run's error with one of a table's `family`.
    pub fn share(&self, family: usize) -> usize {
        family.max(1) * self.tables.max(1)
    }

    /// The error one comparison of a table's `family` may spend.
    pub fn alpha(&self, family: usize) -> f64 {
        ALPHA / self.share(family) as f64
    }

    /// The smallest change that counts as one under this rule.
    pub fn tolerance(&self) -> f64 {
        if self.counts {
            self.count_tolerance
        } else {
            self.min_effect
        }
    }
}

/// `b` against `a` as one of a table's `family` comparisons, in the rule's tables:
/// per-round pairs where both were measured in the same rounds, else the two samples apart.
pub fn compare(a: &Rounds, b: &Rounds, family: usize, rule: &Rule) -> Option<Comparison> {
    compare_at(a, b, rule.alpha(family), rule)
}

/// `b` against `a` at level 1 − `alpha`, the family's correction already made: per-round
/// pairs where both were measured in the same rounds, else the two samples apart.
pub fn compare_at(a: &Rounds, b: &Rounds, alpha: f64, rule: &Rule) -> Option<Comparison> {
    let common: Vec<(f64, f64)> = a.iter().filter_map(|(r, x)| b.get(r).map(|y| (*x, *y))).collect();
    if rule.counts || common.len() < 2 {
        return apart_at(a, b, alpha, rule);
    }
    let (pa, pb): (Vec<f64>, Vec<f64>) = common.into_iter().unzip();
    ratio::paired(&pa, &pb, alpha, rule.min_effect)
}

/// `b` against `a` from different runs, whose round numbers mean nothing to each other:
/// the two samples apart.
pub fn compare_apart(a: &Rounds, b: &Rounds, family: usize, rule: &Rule) -> Option<Comparison> {
    apart_at(a, b, rule.alpha(family), rule)
}

fn apart_at(a: &Rounds, b: &Rounds, alpha: f64, rule: &Rule) -> Option<Comparison> {
    let (va, vb): (Vec<f64>, Vec<f64>) = (a.values().copied().collect(), b.values().copied().collect());
    if rule.counts {
        return ratio::counts(&va, &vb, rule.count_tolerance);
    }
    ratio::unpaired(&va, &vb, alpha, rule.min_effect)
}

/// Every label against `reference`, as one family of (labels − 1) comparisons.
pub fn against<K: Ord + Clone>(blocks: &BTreeMap<K, Rounds>, reference: &K, rule: &Rule) -> BTreeMap<K, Comparison> {
    let Some(base) = blocks.get(reference) else { return BTreeMap::new() };
    let k = blocks.len().saturating_sub(1);
    blocks
        .iter()
        .filter(|(t, _)| *t != reference)
        .filter_map(|(t, r)| compare(base, r, k, rule).map(|c| (t.clone(), c)))
        .collect()
}

/// The number of comparisons in the all-pairs family of `k` labels. Comparing against a
/// label chosen after seeing the data (the fastest) is one of these pairs, so intervals at
/// this family's level survive that choice.
pub fn all_pairs(k: usize) -> usize {
    k * k.saturating_sub(1) / 2
}

/// One row of a ranked table, as [`ranking`] decides it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked<K> {
    pub label: K,
    /// 1 + the number of labels resolved faster than this one in the all-pairs family.
    pub rank: usize,
    /// This label against the fastest (None for the fastest itself).
    pub vs_fastest: Option<Comparison>,
}

/// A ranked table decided by the one comparison method alone, so that its order, its
/// ranks and its column against the fastest never contradict each other:
///
/// - the fastest is the label that no other beats by the estimate (each other's ratio
///   against it is at least 1); should the estimates run in a circle (labels within each
///   other's noise), the one the fewest beat, then the one the others trail most;
/// - a label's rank is 1 + the labels resolved faster than it, each pair compared in the
///   all-pairs family (the fastest is chosen after seeing the data);
/// - rows go fastest first, then by rank, then by the estimate against the fastest.
pub fn ranking<K: Ord + Clone>(blocks: &BTreeMap<K, Rounds>, rule: &Rule) -> Vec<Ranked<K>> {
    let labels: Vec<&K> = blocks.keys().collect();
    let k = labels.len();
    let family = all_pairs(k);
    // against[i][j]: label j against label i.
    let against: Vec<Vec<Option<Comparison>>> = (0..k)
        .map(|i| {
            (0..k)
                .map(|j| (i != j).then(|| compare(&blocks[labels[i]], &blocks[labels[j]], family, rule)).flatten())
                .collect()
        })
        .collect();
    let beaten_by = |i: usize| against[i].iter().filter(|c| c.is_some_and(|c| c.ratio < 1.0)).count();
    let trail = |i: usize| against[i].iter().flatten().map(|c| c.ratio.ln()).sum::<f64>();
    let Some(fastest) = (0..k).min_by(|a, b| beaten_by(*a).cmp(&beaten_by(*b)).then(trail(*b).total_cmp(&trail(*a))))
    else {
        return Vec::new();
    };
    let resolved_faster =
        |j: usize| (0..k).filter(|i| against[*i][j].is_some_and(|c| c.verdict == Verdict::Slower)).count();
    let mut rows: Vec<Ranked<K>> = (0..k)
        .map(|j| Ranked { label: labels[j].clone(), rank: 1 + resolved_faster(j), vs_fastest: against[fastest][j] })
        .collect();
    let estimate = |r: &Ranked<K>| r.vs_fastest.map_or(f64::INFINITY, |c| c.ratio);
    rows.sort_by(|x, y| {
        let first = |r: &Ranked<K>| r.label != *labels[fastest];
        (first(x), x.rank).cmp(&(first(y), y.rank)).then(estimate(x).total_cmp(&estimate(y)))
    });
    rows
}

/// How many rounds a section's intervals need at their levels; with fewer they are n/a.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RoundsNeeded {
    /// The median's 95% interval (the ± column): order statistics.
    pub median: usize,
    /// Each comparison in the ranked table's family (all pairs).
    pub ranked: usize,
    /// Each comparison in the baseline table's family (0 without one).
    pub baseline: usize,
}

impl RoundsNeeded {
    /// At a table's families of `ranked_family` and `baseline_family`, in the rule's tables.
    pub fn of(ranked_family: usize, baseline_family: usize, rule: &Rule) -> RoundsNeeded {
        let pairs = |k: usize| if k == 0 { 0 } else { super::rank::min_pairs(rule.alpha(k)) };
        RoundsNeeded {
            median: super::median_interval_min_n(),
            ranked: pairs(ranked_family),
            baseline: pairs(baseline_family),
        }
    }

    /// Enough for every interval.
    pub fn all(&self) -> usize {
        self.median.max(self.ranked).max(self.baseline)
    }
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

pub fn noise<K: Ord>(blocks: &BTreeMap<K, Rounds>) -> Option<Noise> {
    let c = centred_logs(blocks)?;
    let spread =
        median(&c.labels.values().map(|l| robust_sd(&l.values().copied().collect::<Vec<_>>())).collect::<Vec<_>>());
    let effects: Vec<f64> = c.effects.values().copied().collect();
    let drift = if effects.len() >= 3 { robust_sd(&effects) } else { 0.0 };
    Some(Noise { spread: spread.exp_m1(), drift: drift.exp_m1() })
}

/// Log values by label and round, each label less its own median, and each round's effect
/// common to all labels (the median of those over the labels in that round).
pub struct Centred<'a, K> {
    pub labels: BTreeMap<&'a K, BTreeMap<u32, f64>>,
    pub effects: BTreeMap<u32, f64>,
}

/// [`Centred`] over the labels with three rounds or more of positive values; None without one.
pub fn centred_logs<K: Ord>(blocks: &BTreeMap<K, Rounds>) -> Option<Centred<'_, K>> {
    let labels: BTreeMap<&K, BTreeMap<u32, f64>> = blocks
        .iter()
        .filter(|(_, r)| r.len() >= 3 && r.values().all(|v| *v > 0.0))
        .map(|(l, r)| {
            let m = median(&r.values().map(|v| v.ln()).collect::<Vec<_>>());
            (l, r.iter().map(|(k, v)| (*k, v.ln() - m)).collect())
        })
        .collect();
    if labels.is_empty() {
        return None;
    }
    let mut by_round: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    labels.values().flatten().for_each(|(k, v)| by_round.entry(*k).or_default().push(*v));
    let effects = by_round.iter().map(|(k, v)| (*k, median(v))).collect();
    Some(Centred { labels, effects })
}

/// True when every comparison against `reference` is decided, or resolved to within
/// ±`target` (a fraction): the run has nothing more to learn at this resolution.
pub fn resolved<K: Ord + Clone>(blocks: &BTreeMap<K, Rounds>, reference: &K, rule: &Rule, target: f64) -> bool {
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

    /// A row's passes in one process (fillRandom's, where commits are timed) are one
    /// round's repetitions: its value is the median of the passes' median commits, not the
    /// median of their commits pooled (9 here), so a pass of disturbed commits weighs once.
    #[test]
    fn a_rounds_commit_p50_is_the_median_of_its_passes_medians() {
        use crate::record::{fixtures::unit_sample, Label, Metric, Sample};
        let metric = Metric::CommitP50;
        let pass = |round, commits: &[u64]| {
            let commit_ns = commits.iter().map(|&ns| (ns, 1)).collect();
            let figures = crate::workload::presets::Figures { commit_ns, ..Default::default() };
            let workload = "fillRandom".parse().unwrap();
            Sample { round, workload, figures, ..unit_sample(&Label::build("a", None)) }
        };
        let samples = [pass(0, &[1, 9, 9]), pass(0, &[2, 10, 10]), pass(0, &[3, 11, 11]), pass(1, &[4, 4, 5])];
        let values = super::super::chunks::by_round(&samples, |s| s.value(metric));
        let rounds = &values[&Label::build("a", None)];
        assert_eq!((rounds[&0], rounds[&1]), (10.0 / metric.display(), 4.0 / metric.display()), "{values:?}");
    }

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

    /// Three labels in eight rounds whose medians order differently from the paired
    /// estimate: the estimate decides order, rank and the column against the fastest.
    #[test]
    fn the_ranking_follows_the_paired_estimate_not_the_medians() {
        // a has the smaller median (10 against 10.1), but b is 9.5% faster in three rounds
        // and 1% slower in five: the Hodges-Lehmann estimate of b / a is exp(-0.045).
        let d = [-0.1, -0.1, -0.1, 0.01, 0.01, 0.01, 0.01, 0.01];
        let a: Rounds = (0..8).map(|r| (r, 10.0)).collect();
        let b: Rounds = (0..8).map(|r| (r, 10.0 * f64::exp(d[r as usize]))).collect();
        let c: Rounds = a.iter().map(|(r, v)| (*r, v * 1.5)).collect();
        let blocks = BTreeMap::from([("a".to_string(), a), ("b".to_string(), b.clone()), ("c".to_string(), c)]);
        assert!(crate::stats::median(&b.values().copied().collect::<Vec<_>>()) > 10.0);
        let rows = ranking(&blocks, &Rule::default());
        let order: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(order, ["b", "a", "c"]);
        assert!(rows[0].vs_fastest.is_none());
        // Nobody beats the fastest by the estimate shown.
        assert!(rows[1..].iter().all(|r| r.vs_fastest.unwrap().ratio >= 1.0), "{rows:?}");
        assert!((rows[1].vs_fastest.unwrap().ratio - f64::exp(0.045)).abs() < 1e-9, "{rows:?}");
        assert_eq!((rows[0].rank, rows[1].rank, rows[2].rank), (1, 1, 3), "c is resolved slower than both: {rows:?}");
    }

    #[test]
    fn intervals_say_how_many_rounds_they_need() {
        let rule = Rule::default();
        let n = RoundsNeeded::of(3, 2, &rule);
        assert_eq!((n.median, n.ranked, n.baseline, n.all()), (6, 7, 7, 7));
        assert_eq!(RoundsNeeded::of(136, 16, &rule).all(), 13);
        assert_eq!(RoundsNeeded::of(1, 0, &rule).baseline, 0);
        // Six tables share the run's error: each of 16 comparisons at 1 − 0.05/96.
        assert_eq!(RoundsNeeded::of(1, 16, &rule.for_tables(6)).baseline, 12);
    }

    #[test]
    fn separate_runs_fall_back_to_two_samples() {
        let a: Rounds = (0..10).map(|r| (r, 100.0 + r as f64)).collect();
        let b: Rounds = (10..20).map(|r| (r, 110.0 + (r - 10) as f64)).collect();
        let c = compare(&a, &b, 1, &Rule::default()).unwrap();
        assert_eq!(c.method, ratio::Method::Unpaired);
    }
}
