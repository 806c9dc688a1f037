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

#[cfg(test)]
mod tests {
    use super::*;

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
