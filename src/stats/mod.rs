//! Statistics, kept apart from measurement: summaries with intervals here; the one
//! comparison method and its verdicts in [`ratio`]; the run's design (rounds as blocks,
//! families of comparisons, noise) in [`family`]; slow outliers in [`burst`]; how much code layout moves a time in
//! [`layout`]; what more rounds would resolve in [`project`]; the judgement of the runner's `--target-ci` stop rule in [`stop`], at the looks of [`looks`].
//! Distributions come from statrs.

pub mod adaptive;
pub mod budget;
pub mod burst;
pub mod chunks;
pub mod family;
pub mod history;
pub mod latency;
pub mod layout;
pub mod looks;
pub mod project;
pub mod rank;
pub mod ratio;
pub mod reference;
pub mod stop;

pub use ratio::{Comparison, Method, Verdict};

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};
use statrs::statistics::{Data, Distribution, Max, Median, Min};

/// The confidence level of every family of intervals (before multiplicity correction).
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
    // r: the count of order statistics we may drop from each end.
    let r = median_cut(n);
    if r == 0 {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    Some(Interval { lo: s[(r - 1) as usize], hi: s[(n - r) as usize] })
}

/// The largest r with P(Binomial(n, ½) < r) ≤ α/2; 0 when no interval reaches 95%.
fn median_cut(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let b = Binomial::new(0.5, n).expect("valid binomial");
    let mut r = 0u64;
    while r < n / 2 && b.cdf(r) <= ALPHA / 2.0 {
        r += 1;
    }
    r
}

/// The fewest samples for which the median has a 95% interval (6).
pub fn median_interval_min_n() -> usize {
    (1..).find(|n| median_cut(*n) > 0).expect("some n reaches 95%") as usize
}

/// A draw of the standard normal distribution (Box–Muller), for the tests' simulations.
#[cfg(test)]
pub(crate) fn standard_normal(rng: &mut impl rand::Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// The median of any values (NaN for none).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    Data::new(xs.to_vec()).median()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy 1.17 (stats.t.ppf) and from the binomial table of
    // median intervals.
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
    fn median_interval_uses_order_statistics() {
        // n = 10: [x(2), x(9)], coverage 97.9%.
        let xs: Vec<f64> = (1..=10).map(f64::from).rev().collect();
        assert_eq!(median_interval(&xs), Some(Interval { lo: 2.0, hi: 9.0 }));
        // n = 6 is the smallest n with a 95% interval: [min, max].
        assert_eq!(median_interval(&[5., 1., 3., 2., 6., 4.]), Some(Interval { lo: 1.0, hi: 6.0 }));
        assert_eq!(median_interval(&[1., 2., 3., 4., 5.]), None);
        assert_eq!(median_interval_min_n(), 6);
        // n = 20: [x(6), x(15)].
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(median_interval(&xs), Some(Interval { lo: 6.0, hi: 15.0 }));
    }

    #[test]
    fn summary_and_median() {
        let s = summarize(&A).unwrap();
        assert_eq!(s.n, 8);
        assert!(close(s.median, 10.1, 1e-12));
        assert!(close(s.mean, 10.1, 1e-12));
        assert!(close(median(&B), 10.7, 1e-12));
    }
}
