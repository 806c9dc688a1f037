//! Bursts: round values far slower than their tag and their round predict — a moment of
//! interference (another process, a frequency dip) that hit one worker, not a property of
//! the tag. Counted once here, named in every report; the paired rank method already
//! resists them, so they are reported, never removed.

use std::collections::BTreeMap;

use serde::Serialize;

use super::family::{centred_logs, robust_sd, Rounds};

/// A burst lies this many robust standard deviations (1.4826 × MAD of the residuals)
/// above its prediction…
pub const ROBUST_SDS: f64 = 4.0;
/// …and at least this fraction slower, so that a very quiet run's small wobbles are not bursts.
pub const MIN_EXCESS: f64 = 0.10;

/// Where a burst was: the label and the round, and how much slower than predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Burst<K> {
    pub label: K,
    pub round: u32,
    /// The value over its prediction, less 1 (0.3: 30% slower).
    pub excess: f64,
}

/// A section's bursts among its round values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bursts<K> {
    /// Round values looked at.
    pub values: usize,
    /// Largest excess first.
    pub found: Vec<Burst<K>>,
}

/// Each round value's prediction is its label's median plus its round's median effect over
/// the labels (one sweep of median polish, on log values); a burst lies more than
/// [`ROBUST_SDS`] robust standard deviations and [`MIN_EXCESS`] above it. None below two
/// labels of three rounds each (no round effect to take out).
pub fn bursts<K: Ord + Clone>(blocks: &BTreeMap<K, Rounds>) -> Option<Bursts<K>> {
    let c = centred_logs(blocks).filter(|c| c.labels.len() >= 2)?;
    let residuals: Vec<(&K, u32, f64)> =
        c.labels.iter().flat_map(|(l, r)| r.iter().map(|(k, v)| (*l, *k, v - c.effects[k]))).collect();
    let sd = robust_sd(&residuals.iter().map(|(_, _, e)| *e).collect::<Vec<_>>());
    let limit = (ROBUST_SDS * sd).max(MIN_EXCESS.ln_1p());
    let mut found: Vec<Burst<K>> = residuals
        .iter()
        .filter(|(_, _, e)| *e > limit)
        .map(|(l, round, e)| Burst { label: (*l).clone(), round: *round, excess: e.exp_m1() })
        .collect();
    found.sort_by(|a, b| b.excess.total_cmp(&a.excess).then(a.label.cmp(&b.label)));
    Some(Bursts { values: residuals.len(), found })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spike_on_one_tag_in_one_round_is_a_burst_and_drift_is_not() {
        // Three tags, 12 rounds, each round 2% slower than the last for all (drift), a
        // small wobble, and tag b 30% slower in round 5 alone.
        let wobble = |t: usize, r: u32| 1.0 + 0.005 * (((t as u32 * 7 + r * 3) % 5) as f64 - 2.0);
        let blocks: BTreeMap<String, Rounds> = ["a", "b", "c"]
            .iter()
            .enumerate()
            .map(|(t, l)| {
                let rounds = (0..12).map(|r| {
                    let spike = if *l == "b" && r == 5 { 1.3 } else { 1.0 };
                    (r, 100.0 * (1.0 + 0.02 * r as f64) * wobble(t, r) * spike)
                });
                (l.to_string(), rounds.collect())
            })
            .collect();
        let b = bursts(&blocks).unwrap();
        assert_eq!(b.values, 36);
        assert_eq!(b.found.len(), 1, "{b:?}");
        assert_eq!((b.found[0].label.as_str(), b.found[0].round), ("b", 5));
        assert!((b.found[0].excess - 0.3).abs() < 0.04, "about 30% over the prediction: {b:?}");
        // A faster outlier is no burst; one label alone has no round effect to take out.
        let mut fast = blocks.clone();
        *fast.get_mut("b").unwrap().get_mut(&5).unwrap() /= 1.69;
        assert!(bursts(&fast).unwrap().found.is_empty());
        assert_eq!(bursts(&blocks.into_iter().take(1).collect()), None);
    }
}
