//! How many layouts of a section's reference each paired process should hold. A
//! comparison's value for a process carries two units' per-process effects (their layouts,
//! where their files and maps lie): its own and the reference's. The reference's is in
//! every comparison of that process alike, so it shows as the part of the labels' ratios
//! that moves together from round to round. K layouts of the reference, each timing every
//! chunk and each compared with the unit's pass (`stats::chunks`), divide that part by K at the price
//! of K − 1 more passes in the section's rounds.

use std::collections::BTreeMap;

use super::family::{robust_sd, Rounds};
use super::median;
use crate::record::{Label, MAX_REFERENCE_LAYOUTS};

/// Rounds a label needs beside the reference before its spread is read: fewer say little.
pub const LEAST_ROUNDS: usize = 8;

/// The variance (of log ratios to the reference, per round) that a section's comparisons
/// share through one layout of the reference, and the variance each has of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub shared: f64,
    pub own: f64,
}

impl Split {
    /// From each label's values per round (`compared`: the reference's as well), and how
    /// many layouts of the reference each round held. None until three labels beside the
    /// reference have [`LEAST_ROUNDS`] rounds with it.
    pub fn of(compared: &BTreeMap<Label, Rounds>, reference: &Label, layouts: &BTreeMap<u32, u32>) -> Option<Split> {
        let base = compared.get(reference)?;
        let logs: Vec<BTreeMap<u32, f64>> = compared
            .iter()
            .filter(|(l, _)| *l != reference)
            .map(|(_, r)| centred(base, r))
            .filter(|c| c.len() >= LEAST_ROUNDS)
            .collect();
        if logs.len() < 3 {
            return None;
        }
        // Each round's mean over its labels: the reference's part (divided by the round's
        // layouts of it), and what the labels' own parts leave in a mean of them.
        let mut by_round: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        logs.iter().flatten().for_each(|(r, x)| by_round.entry(*r).or_default().push(*x));
        by_round.retain(|_, xs| xs.len() >= 3);
        let means: BTreeMap<u32, f64> =
            by_round.iter().map(|(r, xs)| (*r, xs.iter().sum::<f64>() / xs.len() as f64)).collect();
        let residuals: Vec<f64> = logs
            .iter()
            .map(|c| {
                let rest: Vec<f64> = c.iter().filter_map(|(r, x)| means.get(r).map(|m| x - m)).collect();
                robust_sd(&rest).powi(2)
            })
            .collect();
        let labels = median(&by_round.values().map(|xs| xs.len() as f64).collect::<Vec<_>>());
        // A label's residual has lost 1/L of its own variance to the round's mean.
        let own = median(&residuals) * labels / (labels - 1.0);
        let k = |r: &u32| f64::from(*layouts.get(r).unwrap_or(&1));
        let scaled: Vec<f64> = means.iter().map(|(r, m)| m * k(r).sqrt()).collect();
        let k_mean = means.keys().map(k).sum::<f64>() / means.len() as f64;
        let shared = (robust_sd(&scaled).powi(2) - k_mean * own / labels).max(0.0);
        Some(Split { shared, own })
    }

    /// The layouts of the reference that narrow the section's intervals most for the time
    /// spent, with `units` units measured in a round: each comparison's variance is
    /// own + shared / K, and a round's time grows as units + K − 1.
    pub fn best_layouts(&self, units: f64) -> u32 {
        let cost = |k: u32| (self.own + self.shared / f64::from(k)) * (units + f64::from(k) - 1.0);
        (1..=MAX_REFERENCE_LAYOUTS).min_by(|a, b| cost(*a).total_cmp(&cost(*b))).unwrap_or(1)
    }
}

/// ln(values / reference) in the rounds both hold, less its median.
fn centred(reference: &Rounds, values: &Rounds) -> BTreeMap<u32, f64> {
    let logs: BTreeMap<u32, f64> = values
        .iter()
        .filter_map(|(r, v)| reference.get(r).map(|b| (*r, (v / b).ln())))
        .filter(|(_, x)| x.is_finite())
        .collect();
    let m = median(&logs.values().copied().collect::<Vec<_>>());
    logs.into_iter().map(|(r, x)| (r, x - m)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::standard_normal;
    use rand::{Rng, SeedableRng};

    /// Sixteen labels and a reference over `rounds` rounds: each round the reference is
    /// off by a draw of sd `shared` (over √K with K layouts of it), each label by its own
    /// draw of sd `own`.
    fn section(shared: f64, own: f64, rounds: u32, layouts: u32, seed: u64) -> BTreeMap<Label, Rounds> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let s = shared / f64::from(layouts).sqrt();
        let mut out: BTreeMap<Label, Rounds> = BTreeMap::new();
        for r in 0..rounds {
            let base = s * standard_normal(&mut rng);
            out.entry(Label::build("LMDB_0.9.17", None)).or_default().insert(r, 100.0 * f64::exp(base));
            for t in 18..34 {
                let v = 100.0
                    * f64::exp(0.01 * f64::from(t % 3) + own * standard_normal(&mut rng) + rng.gen_range(-1e-4..1e-4));
                out.entry(Label::build(&format!("LMDB_0.9.{t}"), None)).or_default().insert(r, v);
            }
        }
        out
    }

    #[test]
    fn the_references_part_is_told_from_the_labels_own() {
        let reference = Label::build("LMDB_0.9.17", None);
        let one = BTreeMap::new();
        let s = Split::of(&section(0.015, 0.01, 200, 1, 1), &reference, &one).unwrap();
        assert!((s.shared.sqrt() - 0.015).abs() < 0.003, "{s:?}");
        assert!((s.own.sqrt() - 0.01).abs() < 0.002, "{s:?}");
        // Rounds that held four layouts of the reference show a quarter of its variance,
        // and are read back as the same reference.
        let four: BTreeMap<u32, u32> = (0..200).map(|r| (r, 4)).collect();
        let s4 = Split::of(&section(0.015, 0.01, 200, 4, 2), &reference, &four).unwrap();
        assert!((s4.shared.sqrt() - 0.015).abs() < 0.004, "{s4:?}");
        let none = Split::of(&section(0.0, 0.01, 200, 1, 3), &reference, &one).unwrap();
        assert!(none.shared.sqrt() < 0.003, "{none:?}");
        assert!(Split::of(&section(0.015, 0.01, 7, 1, 4), &reference, &one).is_none(), "too few rounds");
    }

    #[test]
    fn layouts_of_the_reference_pay_only_where_its_part_is_large() {
        let split = |shared: f64, own: f64| Split { shared: shared.powi(2), own: own.powi(2) };
        assert_eq!(split(0.0, 0.01).best_layouts(17.0), 1);
        assert_eq!(split(0.005, 0.02).best_layouts(17.0), 1, "a small part is not worth a pass");
        assert_eq!(split(0.013, 0.013).best_layouts(17.0), 4);
        assert_eq!(split(0.013, 0.013).best_layouts(2.0), 1, "in a round of two units a pass is dear");
    }
}
