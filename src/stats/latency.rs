//! Latency distributions: percentiles of many timed cycles, computed here and nowhere
//! else, by statrs's quantile (R's type 8, median-unbiased interpolation).

use serde::{Deserialize, Serialize};
use statrs::statistics::{Data, Distribution, Max, Min, OrderStatistics};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub n: usize,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    /// The same distribution in another unit (`factor` × every figure).
    pub fn scaled(&self, factor: f64) -> Latency {
        Latency {
            n: self.n,
            min: self.min * factor,
            mean: self.mean * factor,
            p50: self.p50 * factor,
            p99: self.p99 * factor,
            max: self.max * factor,
        }
    }
}

pub fn latency(xs: &[f64]) -> Option<Latency> {
    if xs.is_empty() {
        return None;
    }
    let mut d = Data::new(xs.to_vec());
    Some(Latency {
        n: xs.len(),
        min: d.min(),
        mean: d.mean().unwrap_or(f64::NAN),
        p50: d.percentile(50),
        p99: d.percentile(99),
        max: d.max(),
    })
}

/// [`latency`] of a histogram: each value with how many times it was seen (ascending, as
/// hdrhistogram's recorded buckets come), by the same type-8 quantile, without expanding it.
pub fn latency_of_counts(counted: &[(f64, u64)]) -> Option<Latency> {
    let n: u64 = counted.iter().map(|(_, c)| c).sum();
    let (first, last) = (counted.iter().find(|(_, c)| *c > 0)?.0, counted.iter().rev().find(|(_, c)| *c > 0)?.0);
    // The k-th smallest value (1-based).
    let nth = |k: u64| {
        let mut seen = 0;
        counted.iter().find(|(_, c)| {
            seen += c;
            seen >= k
        })
    };
    let quantile = |p: f64| {
        let h = (n as f64 + 1.0 / 3.0) * p + 1.0 / 3.0;
        if h <= 1.0 {
            return first;
        }
        if h >= n as f64 {
            return last;
        }
        let k = h.floor() as u64;
        let (lo, hi) = (nth(k).expect("k <= n").0, nth(k + 1).expect("k < n").0);
        lo + (h - h.floor()) * (hi - lo)
    };
    let mean = counted.iter().map(|(v, c)| v * *c as f64).sum::<f64>() / n as f64;
    Some(Latency { n: n as usize, min: first, mean, p50: quantile(0.5), p99: quantile(0.99), max: last })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_has_the_percentiles_of_its_values_expanded() {
        let counted = [(1.0, 3), (2.0, 0), (5.0, 10), (7.0, 1), (100.0, 2)];
        let expanded: Vec<f64> = counted.iter().flat_map(|(v, c)| std::iter::repeat_n(*v, *c as usize)).collect();
        let (a, b) = (latency_of_counts(&counted).unwrap(), latency(&expanded).unwrap());
        assert_eq!((a.n, a.min, a.max), (b.n, b.min, b.max));
        for (x, y) in [(a.mean, b.mean), (a.p50, b.p50), (a.p99, b.p99)] {
            assert!((x - y).abs() < 1e-9, "{a:?} {b:?}");
        }
        assert!(latency_of_counts(&[]).is_none());
    }

    #[test]
    fn percentiles_follow_type_8() {
        // 1..=1000 shuffled: type 8 puts p99 at h = (n + 1/3)·0.99 + 1/3 = 990.663…
        let xs: Vec<f64> = (1..=1000).map(|i| ((i * 7919) % 1000 + 1) as f64).collect();
        let l = latency(&xs).unwrap();
        assert_eq!((l.n, l.min, l.max), (1000, 1.0, 1000.0));
        assert!((l.mean - 500.5).abs() < 1e-9);
        assert!((l.p50 - 500.5).abs() < 1e-9, "the median of an even count");
        assert!((l.p99 - (990.0 + (1000.0f64 + 1.0 / 3.0).mul_add(0.99, 1.0 / 3.0).fract())).abs() < 1e-9, "{}", l.p99);
        assert_eq!(latency(&[3.0, 1.0, 2.0]).unwrap().p50, 2.0);
        assert!(latency(&[]).is_none());
        assert_eq!(latency(&[4.0]).unwrap().p99, 4.0);
    }
}
