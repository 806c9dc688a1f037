//! The one comparison method: B against A as a ratio with an interval, and its verdict.
//!
//! Time: the Hodges–Lehmann estimate of the shift in log time, with the distribution-free
//! interval that inverts the rank test — Wilcoxon's signed rank on per-round pairs when
//! both were measured in the same rounds (each round is a block, so drift between rounds
//! cancels), Mann–Whitney's rank sum for two separate runs. Ranks make one 2.5× sample
//! count as one sample, not as 2.5×. "Significant" is exactly "the interval excludes 1".
//!
//! Instruction counts repeat exactly: no test, only a stated tolerance.

use serde::{Deserialize, Serialize};

use super::{rank, Interval};

/// What a comparison concludes, in every format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The whole interval lies above 1.
    Slower,
    /// The whole interval lies below 1.
    Faster,
    /// The whole interval lies within ±min-effect of 1.
    Same,
    /// None of the above: the run did not resolve the difference.
    Inconclusive,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Same => "same",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Slower | Verdict::Faster)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Per-round pairs: Hodges–Lehmann with the signed-rank interval.
    Paired,
    /// Two separate samples: Hodges–Lehmann with the rank-sum interval.
    Unpaired,
    /// Exact instruction counts judged against a tolerance.
    Counts,
}

/// B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The estimate of B / A.
    pub ratio: f64,
    /// The interval of the ratio at `confidence`; None when too few samples reach that
    /// level (for counts: the range over repetitions).
    pub ci: Option<Interval>,
    /// The interval's level after the family's multiplicity correction.
    pub confidence: f64,
    /// Pairs (paired), the smaller sample (unpaired), or counts of B.
    pub n: usize,
    pub method: Method,
    pub verdict: Verdict,
}

impl Comparison {
    pub fn delta_percent(&self) -> f64 {
        100.0 * (self.ratio - 1.0)
    }

    /// Half the interval's width in log terms, as a fraction: "resolved to ±x".
    pub fn half_width(&self) -> Option<f64> {
        self.ci.filter(|_| self.method != Method::Counts).map(|ci| ((ci.hi / ci.lo).ln() / 2.0).exp() - 1.0)
    }
}

/// The verdict an interval of a ratio supports; checked in this order.
pub fn judge(ci: Option<Interval>, min_effect: f64) -> Verdict {
    match ci {
        Some(i) if i.lo > 1.0 => Verdict::Slower,
        Some(i) if i.hi < 1.0 => Verdict::Faster,
        Some(i) if i.lo >= 1.0 - min_effect && i.hi <= 1.0 + min_effect => Verdict::Same,
        _ => Verdict::Inconclusive,
    }
}

fn logs(xs: &[f64]) -> Option<Vec<f64>> {
    xs.iter().all(|x| *x > 0.0 && x.is_finite()).then(|| xs.iter().map(|x| x.ln()).collect())
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `i`-th smallest of `d` (from 0), moving `d`'s values about: a selection, not a sort,
/// as a run of many rounds has tens of thousands of Walsh averages per comparison.
fn order_statistic(d: &mut [f64], i: usize) -> f64 {
    *d.select_nth_unstable_by(i, |a, b| a.total_cmp(b)).1
}

/// Estimate and interval from log differences (in any order) with `cut` cut from each end.
fn finish(d: &mut [f64], cut: usize, alpha: f64, n: usize, method: Method, min_effect: f64) -> Comparison {
    let len = d.len();
    let median = match len % 2 {
        1 => order_statistic(d, len / 2),
        _ => (order_statistic(d, len / 2 - 1) + order_statistic(d, len / 2)) / 2.0,
    };
    let ci =
        (cut >= 1).then(|| Interval { lo: order_statistic(d, cut - 1).exp(), hi: order_statistic(d, len - cut).exp() });
    Comparison { ratio: median.exp(), ci, confidence: 1.0 - alpha, n, method, verdict: judge(ci, min_effect) }
}

/// `b[i]` against `a[i]`, measured in the same round `i`, at level 1 − `alpha`.
pub fn paired(a: &[f64], b: &[f64], alpha: f64, min_effect: f64) -> Option<Comparison> {
    assert_eq!(a.len(), b.len(), "pairs");
    let (la, lb) = (logs(a)?, logs(b)?);
    let d: Vec<f64> = la.iter().zip(&lb).map(|(x, y)| y - x).collect();
    let n = d.len();
    if n == 0 {
        return None;
    }
    // Walsh averages: every (d_i + d_j)/2 with i ≤ j.
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    Some(finish(&mut walsh, rank::signed_rank_cut(n, alpha), alpha, n, Method::Paired, min_effect))
}

/// `b` against `a`, two independent samples, at level 1 − `alpha`.
pub fn unpaired(a: &[f64], b: &[f64], alpha: f64, min_effect: f64) -> Option<Comparison> {
    let (la, lb) = (logs(a)?, logs(b)?);
    if la.is_empty() || lb.is_empty() {
        return None;
    }
    let mut d: Vec<f64> = lb.iter().flat_map(|y| la.iter().map(move |x| y - x)).collect();
    let cut = rank::rank_sum_cut(la.len(), lb.len(), alpha);
    Some(finish(&mut d, cut, alpha, la.len().min(lb.len()), Method::Unpaired, min_effect))
}

/// Instruction counts of B against A: the ratio of medians, the range over repetitions
/// as the interval, and beyond ±`tolerance` a change.
pub fn counts(a: &[f64], b: &[f64], tolerance: f64) -> Option<Comparison> {
    let (sa, sb) =
        (sorted(logs(a)?.iter().map(|x| x.exp()).collect()), sorted(logs(b)?.iter().map(|x| x.exp()).collect()));
    if sa.is_empty() || sb.is_empty() {
        return None;
    }
    let ratio = median_sorted(&sb) / median_sorted(&sa);
    let ci = Interval { lo: sb[0] / sa[sa.len() - 1], hi: sb[sb.len() - 1] / sa[0] };
    let verdict = if ci.lo > 1.0 + tolerance {
        Verdict::Slower
    } else if ci.hi < 1.0 - tolerance {
        Verdict::Faster
    } else if ci.lo >= 1.0 - tolerance && ci.hi <= 1.0 + tolerance {
        Verdict::Same
    } else {
        // Counts that wander across the tolerance: something is not deterministic.
        Verdict::Inconclusive
    };
    Some(Comparison { ratio, ci: Some(ci), confidence: 1.0, n: sb.len(), method: Method::Counts, verdict })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn verdicts_follow_the_interval() {
        let i = |lo, hi| Some(Interval { lo, hi });
        assert_eq!(judge(i(1.001, 1.2), 0.02), Verdict::Slower);
        assert_eq!(judge(i(0.8, 0.999), 0.02), Verdict::Faster);
        assert_eq!(judge(i(0.99, 1.015), 0.02), Verdict::Same);
        assert_eq!(judge(i(0.99, 1.03), 0.02), Verdict::Inconclusive);
        assert_eq!(judge(None, 0.02), Verdict::Inconclusive);
        // An interval that excludes 1 is a change even when it is small.
        assert_eq!(judge(i(1.001, 1.01), 0.02), Verdict::Slower);
    }

    #[test]
    fn counts_use_the_tolerance_not_a_test() {
        // n = 2 repetitions of a deterministic +8% change.
        let c = counts(&[1000.0, 1000.0], &[1080.0, 1080.0], 0.005).unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
        assert!(close(c.ratio, 1.08, 1e-12));
        let c = counts(&[1000.0], &[1003.0], 0.005).unwrap();
        assert_eq!(c.verdict, Verdict::Same);
        assert_eq!(c.half_width(), None);
    }

    #[test]
    fn a_pure_shift_is_estimated_exactly() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 * (1.0 + 0.01 * ((i * 7 % 13) as f64 - 6.0))).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
        let c = paired(&a, &b, 0.05, 0.02).unwrap();
        assert!(close(c.ratio, 1.05, 1e-12), "{c:?}");
        let ci = c.ci.unwrap();
        assert!(close(ci.lo, 1.05, 1e-12) && close(ci.hi, 1.05, 1e-12));
        assert_eq!(c.verdict, Verdict::Slower);
        let u = unpaired(&a, &b, 0.05, 0.02).unwrap();
        assert!(close(u.ratio, 1.05, 1e-12), "{u:?}");
        assert!(u.ci.unwrap().lo < 1.05 && u.ci.unwrap().hi > 1.05);
    }

    #[test]
    fn too_few_pairs_for_the_level_give_no_interval() {
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let c = paired(&a, &a.map(|x| x * 1.5), 0.05, 0.02).unwrap();
        assert_eq!(c.ci, None);
        assert_eq!(c.verdict, Verdict::Inconclusive);
    }
}
