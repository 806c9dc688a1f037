//! Null distributions of the two rank statistics the intervals are inverted from:
//! Wilcoxon's signed-rank T+ (paired) and Mann–Whitney's U (two samples). Exact for the
//! sample sizes runs have; a normal approximation with continuity correction beyond.

use statrs::distribution::{ContinuousCDF, Normal};

/// Above this many pairs the signed-rank distribution is approximated.
const EXACT_SIGNED_RANK: usize = 80;
/// Above this many cells (n1·n2) the rank-sum distribution is approximated.
const EXACT_RANK_SUM: usize = 2_500;

/// The number of order statistics to cut from each end of the sorted Walsh averages (or
/// pairwise differences) for a two-sided interval at level 1 − `alpha`: the largest c
/// with P(T ≤ c − 1) ≤ α/2. Zero means no interval reaches that level with these samples.
pub fn signed_rank_cut(n: usize, alpha: f64) -> usize {
    if n == 0 {
        return 0;
    }
    if n > EXACT_SIGNED_RANK {
        let m = (n * (n + 1)) as f64 / 4.0;
        let sd = ((n * (n + 1) * (2 * n + 1)) as f64 / 24.0).sqrt();
        return normal_cut(m, sd, alpha);
    }
    // A table compares many pairs at one level and one n: each distribution is built once.
    thread_local! {
        static CUTS: std::cell::RefCell<std::collections::HashMap<(usize, u64), usize>> = Default::default();
    }
    let key = (n, alpha.to_bits());
    if let Some(c) = CUTS.with(|m| m.borrow().get(&key).copied()) {
        return c;
    }
    let c = exact_signed_rank_cut(n, alpha);
    CUTS.with(|m| m.borrow_mut().insert(key, c));
    c
}

fn exact_signed_rank_cut(n: usize, alpha: f64) -> usize {
    let max = n * (n + 1) / 2;
    // p[t] = P(T+ = t) for the ranks added so far, each in or out with probability ½.
    let mut p = vec![0.0f64; max + 1];
    p[0] = 1.0;
    for i in 1..=n {
        for t in (0..=max).rev() {
            let with = if t >= i { p[t - i] } else { 0.0 };
            p[t] = (p[t] + with) / 2.0;
        }
    }
    cut_from_pmf(&p, alpha)
}

/// The fewest pairs whose signed-rank interval reaches level 1 − `alpha`: with fewer, a
/// paired comparison has no interval (2^−n must not exceed α/2).
pub fn min_pairs(alpha: f64) -> usize {
    (1..).find(|n| signed_rank_cut(*n, alpha) > 0).expect("enough pairs reach any level")
}

/// As [`signed_rank_cut`], for Mann–Whitney's U with samples of `n1` and `n2`.
pub fn rank_sum_cut(n1: usize, n2: usize, alpha: f64) -> usize {
    if n1 == 0 || n2 == 0 {
        return 0;
    }
    if n1 * n2 > EXACT_RANK_SUM {
        let m = (n1 * n2) as f64 / 2.0;
        let sd = ((n1 * n2 * (n1 + n2 + 1)) as f64 / 12.0).sqrt();
        return normal_cut(m, sd, alpha);
    }
    // U's distribution by the recurrence f(a, b, u) = f(a−1, b, u−b) + f(a, b−1, u),
    // kept as probabilities: weights a/(a+b) and b/(a+b).
    let max = n1 * n2;
    let mut prev: Vec<Vec<f64>> = (0..=n2).map(|_| vec![1.0]).collect(); // a = 0: U = 0
    for a in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n2 + 1);
        cur.push(vec![1.0]); // b = 0: U = 0
        for b in 1..=n2 {
            let mut d = vec![0.0; a * b + 1];
            let (wa, wb) = (a as f64 / (a + b) as f64, b as f64 / (a + b) as f64);
            for (u, x) in prev[b].iter().enumerate() {
                d[u + b] += wa * x;
            }
            for (u, x) in cur[b - 1].iter().enumerate() {
                d[u] += wb * x;
            }
            cur.push(d);
        }
        prev = cur;
    }
    debug_assert_eq!(prev[n2].len(), max + 1);
    cut_from_pmf(&prev[n2], alpha)
}

fn cut_from_pmf(p: &[f64], alpha: f64) -> usize {
    let mut cdf = 0.0;
    let mut c = 0;
    // A hair of tolerance so that exactly-α/2 tails (small n) count as inside.
    while c < p.len() && cdf + p[c] <= alpha / 2.0 * (1.0 + 1e-9) {
        cdf += p[c];
        c += 1;
    }
    c.min(p.len() / 2)
}

fn normal_cut(mean: f64, sd: f64, alpha: f64) -> usize {
    let z = Normal::new(0.0, 1.0).unwrap().inverse_cdf(1.0 - alpha / 2.0);
    // P(T ≤ c − 1) ≈ Φ((c − 1 + ½ − mean)/sd) ≤ α/2.
    let c = (mean + 0.5 - z * sd).floor();
    if c < 0.0 {
        0
    } else {
        c as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Published critical values (two-sided α = 0.05): Wilcoxon signed-rank T ≤ 8 at
    // n = 10, ≤ 52 at n = 20; Mann–Whitney U ≤ 23 at 10 × 10, ≤ 127 at 20 × 20.
    #[test]
    fn cuts_match_published_critical_values() {
        assert_eq!(signed_rank_cut(10, 0.05), 9);
        assert_eq!(signed_rank_cut(20, 0.05), 53);
        assert_eq!(rank_sum_cut(10, 10, 0.05), 24);
        assert_eq!(rank_sum_cut(20, 20, 0.05), 128);
        // n = 5: the smallest two-sided p is 1/16 > 0.05, so no interval.
        assert_eq!(signed_rank_cut(5, 0.05), 0);
        assert_eq!(signed_rank_cut(6, 0.05), 1);
        // 2^-n <= alpha/2: 6 pairs at 95%, 7 at 1 - 0.05/3, 13 at 1 - 0.05/136 (17 tags).
        assert_eq!(min_pairs(0.05), 6);
        assert_eq!(min_pairs(0.05 / 3.0), 7);
        assert_eq!(min_pairs(0.05 / 136.0), 13);
    }

    #[test]
    fn the_approximations_meet_the_exact_values() {
        let exact = signed_rank_cut(80, 0.01);
        let m = (80 * 81) as f64 / 4.0;
        let sd = ((80 * 81 * 161) as f64 / 24.0).sqrt();
        let approx = normal_cut(m, sd, 0.01);
        // Within 0.2% of the 3240 Walsh averages: the order statistic hardly moves.
        assert!((exact as i64 - approx as i64).abs() <= 6, "{exact} vs {approx}");
        let exact = rank_sum_cut(50, 50, 0.05);
        let approx = normal_cut(50.0 * 50.0 / 2.0, (50.0 * 50.0 * 101.0 / 12.0f64).sqrt(), 0.05);
        assert!((exact as i64 - approx as i64).abs() <= 2, "{exact} vs {approx}");
    }
}
