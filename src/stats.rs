//! Statistics, kept apart from measurement: summaries with intervals, and comparisons
//! with a significance test. Quantiles and distributions come from statrs.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};
use statrs::statistics::{Data, Distribution, Max, Median, Min};

/// The confidence level of every interval and the significance level of every test.
pub const CONFIDENCE: f64 = 0.95;
pub const ALPHA: f64 = 1.0 - CONFIDENCE;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation: stddev / mean.
    pub cv: f64,
    /// 95% interval of the mean (Student t); None below two samples.
    pub mean_ci: Option<Interval>,
    /// 95% interval of the median from order statistics; None when too few samples
    /// for any order-statistic interval to reach 95% (n < 6).
    pub median_ci: Option<Interval>,
}

impl Summary {
    /// The median interval's half-width as a percentage of the median.
    pub fn median_ci_percent(&self) -> Option<f64> {
        self.median_ci.map(|ci| 100.0 * ci.half_width() / self.median)
    }
}

/// Two-sided Student-t quantile for `df` degrees of freedom at the confidence level.
pub fn t_quantile(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).expect("df > 0").inverse_cdf(1.0 - ALPHA / 2.0)
}

pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len();
    let data = Data::new(xs.to_vec());
    let mean = data.mean().unwrap_or(f64::NAN);
    let stddev = if n > 1 { data.std_dev().unwrap_or(0.0) } else { 0.0 };
    let mean_ci = (n > 1).then(|| {
        let h = t_quantile((n - 1) as f64) * stddev / (n as f64).sqrt();
        Interval { lo: mean - h, hi: mean + h }
    });
    Some(Summary {
        n,
        mean,
        median: data.median(),
        stddev,
        min: data.min(),
        max: data.max(),
        cv: if mean != 0.0 { stddev / mean } else { 0.0 },
        mean_ci,
        median_ci: median_interval(xs),
    })
}

/// Distribution-free interval of the median: [x_(r), x_(n+1-r)] with the largest r
/// such that P(Binomial(n, ½) < r) ≤ α/2, which covers the median with ≥ 95%.
pub fn median_interval(xs: &[f64]) -> Option<Interval> {
    let n = xs.len() as u64;
    if n == 0 {
        return None;
    }
    let b = Binomial::new(0.5, n).expect("valid binomial");
    let mut r = 0u64;
    while r < n / 2 && b.cdf(r) <= ALPHA / 2.0 {
        r += 1;
    }
    // r is now the count of order statistics we may drop from each end.
    if r == 0 {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    Some(Interval { lo: s[(r - 1) as usize], hi: s[(n - r) as usize] })
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    pub statistic: f64,
    pub p_value: f64,
}

/// Welch's unequal-variance t test, two-sided.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TestResult> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (sa, sb) = (summarize(a)?, summarize(b)?);
    let (va, vb) = (sa.stddev.powi(2) / a.len() as f64, sb.stddev.powi(2) / b.len() as f64);
    if va + vb == 0.0 {
        let p = if sa.mean == sb.mean { 1.0 } else { 0.0 };
        return Some(TestResult { statistic: 0.0, p_value: p });
    }
    let t = (sb.mean - sa.mean) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(TestResult { statistic: t, p_value: (2.0 * (1.0 - dist.cdf(t.abs()))).min(1.0) })
}

/// Mann–Whitney U test, two-sided, normal approximation with tie and continuity
/// corrections (as scipy's `mannwhitneyu(method="asymptotic")`). Robust to the
/// occasional 2.5× outlier a shared machine produces. The statistic is U of `a`.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<TestResult> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(f64, usize)> = a.iter().map(|&x| (x, 0)).chain(b.iter().map(|&x| (x, 1))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for r in &mut ranks[i..=j] {
            *r = rank;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let r1: f64 = all.iter().zip(&ranks).filter(|(x, _)| x.1 == 0).map(|(_, r)| r).sum();
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let mu = n1f * n2f / 2.0;
    let sigma = (n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)))).sqrt();
    if sigma == 0.0 {
        return Some(TestResult { statistic: u1, p_value: 1.0 });
    }
    let z = ((u1 - mu).abs() - 0.5).max(0.0) / sigma;
    let p = 2.0 * (1.0 - Normal::new(0.0, 1.0).unwrap().cdf(z));
    Some(TestResult { statistic: u1, p_value: p.min(1.0) })
}

/// `new` against `base`: the ratio of medians with its interval, and the tests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// median(new) / median(base).
    pub ratio: f64,
    /// Interval of the ratio, from the medians' intervals by propagating relative
    /// uncertainty; None when either side has too few samples for a median interval.
    pub ratio_ci: Option<Interval>,
    pub mann_whitney: Option<TestResult>,
    pub welch: Option<TestResult>,
    /// Mann–Whitney p < α.
    pub significant: bool,
}

impl Comparison {
    pub fn delta_percent(&self) -> f64 {
        100.0 * (self.ratio - 1.0)
    }

    pub fn p_value(&self) -> Option<f64> {
        self.mann_whitney.map(|t| t.p_value)
    }
}

pub fn compare(base: &[f64], new: &[f64]) -> Option<Comparison> {
    let (sb, sn) = (summarize(base)?, summarize(new)?);
    let ratio = sn.median / sb.median;
    let ratio_ci = match (sb.median_ci, sn.median_ci) {
        (Some(cb), Some(cn)) => {
            let rel = ((cb.half_width() / sb.median).powi(2) + (cn.half_width() / sn.median).powi(2)).sqrt();
            Some(Interval { lo: ratio * (1.0 - rel), hi: ratio * (1.0 + rel) })
        }
        _ => None,
    };
    let mw = mann_whitney(new, base);
    Some(Comparison {
        ratio,
        ratio_ci,
        mann_whitney: mw,
        welch: welch(base, new),
        significant: mw.map(|t| t.p_value < ALPHA).unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy 1.17 (stats.t.ppf, ttest_ind(equal_var=False),
    // mannwhitneyu(method="asymptotic")) and from the binomial table of median intervals.
    const A: [f64; 8] = [10.1, 10.3, 9.8, 10.0, 10.2, 10.4, 9.9, 10.1];
    const B: [f64; 9] = [10.6, 10.9, 10.5, 10.8, 11.0, 10.7, 10.4, 10.9, 10.6];

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        assert!(close(t_quantile(10.0), 2.228138851986274, 1e-9));
        assert!(close(t_quantile(1.0), 12.706204736174694, 1e-9));
        assert!(close(t_quantile(30.0), 2.0422724563012378, 1e-9));
    }

    #[test]
    fn welch_matches_scipy() {
        let r = welch(&A, &B).unwrap();
        assert!(close(r.statistic, 6.24758017671769, 1e-9), "{r:?}");
        assert!(close(r.p_value, 1.6531024261167238e-05, 1e-6), "{r:?}");
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        let r = mann_whitney(&B, &A).unwrap();
        assert_eq!(r.statistic, 71.5);
        assert!(close(r.p_value, 0.0007350472090507637, 1e-6), "{r:?}");
        // With ties on both sides.
        let r = mann_whitney(&[3., 4., 4., 5., 6., 7., 7., 8.], &[1., 2., 2., 3., 4., 5., 5., 5., 6.]).unwrap();
        assert_eq!(r.statistic, 54.5);
        assert!(close(r.p_value, 0.07986390296935013, 1e-6), "{r:?}");
    }

    #[test]
    fn median_interval_uses_order_statistics() {
        // n = 10: [x(2), x(9)], coverage 97.9%.
        let xs: Vec<f64> = (1..=10).map(f64::from).rev().collect();
        assert_eq!(median_interval(&xs), Some(Interval { lo: 2.0, hi: 9.0 }));
        // n = 6 is the smallest n with a 95% interval: [min, max].
        assert_eq!(median_interval(&[5., 1., 3., 2., 6., 4.]), Some(Interval { lo: 1.0, hi: 6.0 }));
        assert_eq!(median_interval(&[1., 2., 3., 4., 5.]), None);
        // n = 20: [x(6), x(15)].
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(median_interval(&xs), Some(Interval { lo: 6.0, hi: 15.0 }));
    }

    #[test]
    fn summary_and_comparison() {
        let s = summarize(&A).unwrap();
        assert_eq!(s.n, 8);
        assert!(close(s.median, 10.1, 1e-12));
        assert!(close(s.mean, 10.1, 1e-12));
        let c = compare(&A, &B).unwrap();
        assert!(close(c.ratio, 10.7 / 10.1, 1e-12));
        assert!(c.significant);
        let same = compare(&A, &A).unwrap();
        assert!(!same.significant);
        assert_eq!(same.ratio, 1.0);
    }
}
