//! What a time budget buys under each way of sharing rounds among comparisons: a run's
//! processes (rounds) drawn again with replacement, each resample measured as a run with
//! that budget would measure it (each measurement costing what it cost in the run), and the
//! half-widths it would report. A run measured in every round (adaptive off) is the input;
//! the rules are [`Sharing`]'s.

use std::collections::BTreeMap;

use rand::Rng;
use serde::Serialize;

use super::adaptive::{common_rounds, nonempty};
use super::family::{Rounds, Rule};
use super::stop::{judge, Compared};
use super::{looks, median};
use crate::record::{Engine, Label, Target};
use crate::runner::adaptive::drawn;
use crate::workload::Workload;

/// How the rounds are shared among the open comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    /// Every label in every round (adaptive off).
    EveryRound,
    /// Shares in proportion to the rounds each needs, against the most any needs or the
    /// rounds the budget can still afford, whichever is fewer.
    Horizon,
    /// Shares in proportion to the rounds each needs, against the most any needs.
    Need,
}

/// Seconds one measurement of a label takes in a section, and the untimed seconds a round
/// costs whatever it measures.
#[derive(Debug, Clone, Default)]
pub struct Costs {
    pub each: BTreeMap<(Engine, Workload), BTreeMap<Label, f64>>,
    pub round: f64,
}

/// Each section's half-widths (percent) in the last round, averaged over the resamples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bought {
    pub sharing: Sharing,
    pub resamples: usize,
    /// Rounds a resample ran, mean.
    pub rounds: f64,
    /// Each section's half-widths, in the sections' order.
    pub sections: Vec<Widths>,
    /// Comparisons at or within the target's half-width at the end, of all, mean.
    pub within_target: f64,
}

/// One section's median and widest half-width at the end (percent), mean over resamples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Widths {
    pub engine: Engine,
    pub workload: Workload,
    pub median: f64,
    pub widest: f64,
}

/// Runs `resamples` resamples of `full` with `budget` seconds each under `sharing`.
pub fn bought(
    full: &Compared,
    costs: &Costs,
    (budget, sharing): (f64, Sharing),
    (rule, target): (&Rule, Option<Target>),
    resamples: usize,
    rng: &mut impl Rng,
) -> Bought {
    let rounds: Vec<u32> = common_rounds(full);
    let mut widths: BTreeMap<(Engine, Workload), [f64; 2]> = BTreeMap::new();
    let (mut ran, mut within, mut total) = (0.0, 0usize, 0usize);
    for _ in 0..resamples {
        let (got, steps) =
            one_run(full, costs, (budget, sharing), (rule, target), || rounds[rng.gen_range(0..rounds.len())]);
        ran += f64::from(steps);
        for (k, (reference, blocks)) in &got {
            let hw: Vec<f64> = looks::against(blocks, reference, rule, target, steps)
                .values()
                .filter_map(|s| s.comparison.ci)
                .map(|ci| ci.half_width() * 100.0)
                .collect();
            if hw.is_empty() {
                continue;
            }
            let goal = target.map_or(f64::INFINITY, |t| t.percent);
            within += hw.iter().filter(|h| **h <= goal).count();
            total += hw.len();
            let entry = widths.entry(*k).or_default();
            entry[0] += median(&hw) / resamples as f64;
            entry[1] += hw.iter().copied().fold(0.0, f64::max) / resamples as f64;
        }
    }
    Bought {
        sharing,
        resamples,
        rounds: ran / resamples as f64,
        sections: widths
            .into_iter()
            .map(|((engine, workload), [median, widest])| Widths { engine, workload, median, widest })
            .collect(),
        within_target: if total == 0 { 0.0 } else { within as f64 / total as f64 },
    }
}

/// One resampled run: rounds drawn by `draw` until the budget is spent or nothing is open;
/// what it measured, and its rounds.
fn one_run(
    full: &Compared,
    costs: &Costs,
    (budget, sharing): (f64, Sharing),
    (rule, target): (&Rule, Option<Target>),
    mut draw: impl FnMut() -> u32,
) -> (Compared, u32) {
    let mut got: Compared = full
        .iter()
        .map(|(k, (r, b))| (*k, (r.clone(), b.keys().map(|l| (l.clone(), Rounds::new())).collect())))
        .collect();
    let (mut spent, mut step) = (0.0, 0u32);
    while spent < budget {
        let horizon =
            (sharing == Sharing::Horizon && step > 0).then(|| (budget - spent) / (spent / f64::from(step)).max(1e-9));
        let progress = (sharing != Sharing::EveryRound).then(|| judge(&nonempty(&got), rule, target, (step, horizon)));
        if progress.as_ref().is_some_and(|p| step > 0 && p.settled()) {
            break;
        }
        let source = draw();
        spent += costs.round;
        for (k, (reference, blocks)) in got.iter_mut() {
            let section = progress.as_ref().and_then(|p| p.sections.get(k));
            let chosen = |l: &Label| match section {
                None => true,
                Some(s) => {
                    s.open.get(l).map_or(!s.closed.contains(l) && l != &s.reference, |share| drawn(step, *share))
                }
            };
            let any = blocks.keys().any(|l| l != reference && chosen(l));
            for (l, r) in blocks.iter_mut().filter(|(l, _)| (any && *l == reference) || (l != &reference && chosen(l)))
            {
                r.insert(step, full[k].1[l][&source]);
                spent += costs.each.get(k).and_then(|c| c.get(l)).copied().unwrap_or(0.0);
            }
        }
        step += 1;
    }
    (got, step)
}

#[cfg(test)]
mod tests {
    use super::super::adaptive::tests::run;
    use super::*;
    use rand::SeedableRng;

    fn costs(full: &Compared, each: f64, round: f64) -> Costs {
        let each = full.iter().map(|(k, (_, b))| (*k, b.keys().map(|l| (l.clone(), each)).collect())).collect();
        Costs { each, round }
    }

    /// Measured in every round, a budget buys exactly the rounds it pays for; with rounds
    /// shared, the decided comparison drops out and the same budget buys more rounds.
    #[test]
    fn a_budget_buys_the_rounds_it_pays_for_and_sharing_buys_more() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let full = run(&mut rng);
        let (costs, rule) = (costs(&full, 1.0, 1.0), Rule::default());
        // A round of two sections of five labels costs 1 + 10 seconds: 220 seconds buy 20.
        let every = bought(&full, &costs, (220.0, Sharing::EveryRound), (&rule, None), 20, &mut rng);
        assert_eq!(every.rounds, 20.0);
        assert_eq!(every.sections.len(), 2);
        let w = every.sections[0];
        assert!(0.0 < w.median && w.median <= w.widest && w.widest < 5.0, "{every:?}");
        let shared = bought(&full, &costs, (220.0, Sharing::Horizon), (&rule, None), 20, &mut rng);
        assert!(shared.rounds > every.rounds, "{shared:?}");
    }
}
