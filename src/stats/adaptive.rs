//! Whether intervals keep their level when adaptive rounds stop each comparison as soon as
//! it is decided: a run's processes (rounds, the unit of replication) drawn again with
//! replacement, round after round, each resample run through the adaptive rule itself
//! ([`judge`] and the runner's [`drawn`]), and every reported interval checked against the
//! whole run's estimate: at the level of the look that decided it, else of the last
//! ([`looks`]). The same resamples without stopping, every interval at the nominal level,
//! give the resampling's own coverage beside it.

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;
use serde::Serialize;

use super::family::{self, Rounds, Rule};
use super::looks;
use super::stop::{judge, Compared};
use super::Interval;
use crate::record::{Engine, Label, Target};
use crate::runner::adaptive::drawn;
use crate::workload::Workload;

/// What the resamples show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    pub resamples: usize,
    /// Rounds in each resample (the run's).
    pub rounds: usize,
    pub sections: usize,
    /// Comparisons with the reference, over all sections.
    pub comparisons: usize,
    /// Of (resample, section), those whose every interval covered: adaptive, then every round.
    pub family_adaptive: f64,
    pub family_fixed: f64,
    /// Of the intervals, those that covered: adaptive, then every round.
    pub each_adaptive: f64,
    pub each_fixed: f64,
    /// Of the (comparison, round) pairs, those adaptive rounds measured.
    pub measured: f64,
    /// Of the comparisons, those adaptive rounds stopped before the last round.
    pub stopped_early: f64,
    /// Each section's family coverage ("engine workload": adaptive, every round).
    pub by_section: BTreeMap<String, [f64; 2]>,
}

/// Resamples `resamples` runs of `full`'s rounds (those every section measured), each as long
/// as the run, judged by `rule` and `target` (percent) as a run is.
pub fn coverage(
    full: &Compared,
    rule: &Rule,
    target: Option<Target>,
    resamples: usize,
    rng: &mut impl Rng,
) -> Coverage {
    let rounds: Vec<u32> = common_rounds(full);
    let truth: Truth = full
        .iter()
        .map(|(k, (r, b))| (*k, family::against(b, r, rule).into_iter().map(|(l, c)| (l, c.ratio)).collect()))
        .collect();
    let mut tally = Tally::default();
    for _ in 0..resamples {
        let order: Vec<u32> = (0..rounds.len()).map(|_| rounds[rng.gen_range(0..rounds.len())]).collect();
        let fixed = resampled(full, &order);
        let fixed_reported = fixed.iter().map(|(k, (r, b))| (*k, nominal(b, r, rule))).collect();
        tally.add(&fixed, &fixed_reported, &truth, order.len(), false);
        let adaptive = adaptive_run(full, &order, rule, target);
        let spent = adaptive.iter().map(|(k, (r, b))| (*k, spent(b, r, rule, target, order.len()))).collect();
        tally.add(&adaptive, &spent, &truth, order.len(), true);
    }
    let comparisons = truth.values().map(BTreeMap::len).sum();
    tally.finish(resamples, rounds.len(), full.len(), comparisons)
}

/// The rounds in which every section's every label was measured.
pub(super) fn common_rounds(full: &Compared) -> Vec<u32> {
    let mut sets = full.values().flat_map(|(_, b)| b.values()).map(|r| r.keys().copied().collect::<BTreeSet<u32>>());
    let first = sets.next().unwrap_or_default();
    sets.fold(first, |a, b| a.intersection(&b).copied().collect()).into_iter().collect()
}

/// The resample `order` with every label measured in every step (step i draws the run's
/// round `order[i]`).
fn resampled(full: &Compared, order: &[u32]) -> Compared {
    let steps = |r: &Rounds| -> Rounds { order.iter().enumerate().map(|(i, o)| (i as u32, r[o])).collect() };
    full.iter()
        .map(|(k, (reference, blocks))| {
            (*k, (reference.clone(), blocks.iter().map(|(l, r)| (l.clone(), steps(r))).collect()))
        })
        .collect()
}

/// The resample `order` as adaptive rounds measure it: after each step the open comparisons
/// drawn for the next (a label not yet judged always), the reference whenever another is.
fn adaptive_run(full: &Compared, order: &[u32], rule: &Rule, target: Option<Target>) -> Compared {
    let mut got: Compared = full
        .iter()
        .map(|(k, (r, b))| (*k, (r.clone(), b.keys().map(|l| (l.clone(), Rounds::new())).collect())))
        .collect();
    for step in 0..order.len() as u32 {
        let progress = judge(&nonempty(&got), rule, target, (step, Some(f64::from(order.len() as u32 - step))));
        for (k, (reference, blocks)) in got.iter_mut() {
            let section = progress.sections.get(k);
            let measured = |l: &Label| match section {
                None => true,
                Some(s) => {
                    s.open.get(l).map_or(!s.closed.contains(l) && *l != s.reference, |share| drawn(step, *share))
                }
            };
            let chosen: Vec<Label> = blocks.keys().filter(|l| measured(l)).cloned().collect();
            let with_reference = chosen.iter().any(|l| l != reference);
            for (l, r) in blocks.iter_mut() {
                if chosen.contains(l) || (with_reference && l == reference) {
                    r.insert(step, full[k].1[l][&order[step as usize]]);
                }
            }
        }
    }
    got
}

/// The labels measured at least once: what a run's samples would hold.
pub(super) fn nonempty(c: &Compared) -> Compared {
    c.iter()
        .map(|(k, (r, b))| {
            (
                *k,
                (
                    r.clone(),
                    b.iter()
                        .filter(|(_, v)| !v.is_empty())
                        .map(|(l, v)| (l.clone(), v.clone()))
                        .collect::<BTreeMap<_, _>>(),
                ),
            )
        })
        .filter(|(_, (_, b))| !b.is_empty())
        .collect()
}

/// Each section's reported intervals.
type Reported = BTreeMap<(Engine, Workload), BTreeMap<Label, Option<Interval>>>;

/// A run of every round without looks: each interval at the family's nominal level.
fn nominal(blocks: &BTreeMap<Label, Rounds>, reference: &Label, rule: &Rule) -> BTreeMap<Label, Option<Interval>> {
    family::against(blocks, reference, rule).into_iter().map(|(l, c)| (l, c.ci)).collect()
}

/// A run that stopped at looks: each interval at the look that decided it, else the last's level.
fn spent(
    blocks: &BTreeMap<Label, Rounds>,
    reference: &Label,
    rule: &Rule,
    target: Option<Target>,
    rounds: usize,
) -> BTreeMap<Label, Option<Interval>> {
    looks::against(blocks, reference, rule, target, rounds as u32)
        .into_iter()
        .map(|(l, s)| (l, s.comparison.ci))
        .collect()
}

/// Each section's comparisons' estimates from the whole run: what the intervals should cover.
type Truth = BTreeMap<(Engine, Workload), BTreeMap<Label, f64>>;

#[derive(Default)]
struct Tally {
    families: [usize; 2],
    families_covered: [usize; 2],
    intervals: [usize; 2],
    covered: [usize; 2],
    pairs_measured: usize,
    early: usize,
    /// Per section: families covered, adaptive then every round.
    sections: BTreeMap<String, [usize; 2]>,
}

impl Tally {
    /// One resample's intervals (`adaptive` or every round) against the whole run's estimates.
    fn add(&mut self, got: &Compared, reported: &Reported, truth: &Truth, rounds: usize, adaptive: bool) {
        let i = usize::from(adaptive);
        for (k, (_, blocks)) in got {
            let mut all = true;
            for (label, ratio) in &truth[k] {
                let ci = reported.get(k).and_then(|r| r.get(label).copied().flatten());
                let covers = ci.is_some_and(|ci| ci.lo <= *ratio && *ratio <= ci.hi);
                all &= covers;
                self.intervals[i] += 1;
                self.covered[i] += usize::from(covers);
                if adaptive {
                    let measured = blocks.get(label).map_or(0, BTreeMap::len);
                    let last = blocks.get(label).and_then(|r| r.keys().last()).map_or(0, |l| *l as usize + 1);
                    self.pairs_measured += measured;
                    self.early += usize::from(last < rounds);
                }
            }
            self.families[i] += 1;
            self.families_covered[i] += usize::from(all);
            let key = format!("{} {}", k.0, k.1);
            self.sections.entry(key).or_default()[1 - i] += usize::from(all);
        }
    }

    fn finish(self, resamples: usize, rounds: usize, sections: usize, comparisons: usize) -> Coverage {
        let frac = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        Coverage {
            resamples,
            rounds,
            sections,
            comparisons,
            family_adaptive: frac(self.families_covered[1], self.families[1]),
            family_fixed: frac(self.families_covered[0], self.families[0]),
            each_adaptive: frac(self.covered[1], self.intervals[1]),
            each_fixed: frac(self.covered[0], self.intervals[0]),
            measured: frac(self.pairs_measured, resamples * comparisons * rounds),
            stopped_early: frac(self.early, self.intervals[1]),
            by_section: self
                .sections
                .into_iter()
                .map(|(k, [a, f])| (k, [frac(a, resamples), frac(f, resamples)]))
                .collect(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A run of 30 processes: in each of two workloads a reference, two tags 8% slower and
    /// two as fast, every process moving each tag by its own ±2%.
    pub(in crate::stats) fn run(rng: &mut impl Rng) -> Compared {
        let normal = |rng: &mut dyn rand::RngCore| {
            let (u, v): (f64, f64) = (rng.gen(), rng.gen());
            (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let effects = [("a", 1.0), ("b", 1.08), ("c", 1.08), ("d", 1.0), ("e", 1.0)];
        [Workload::ReadKey, Workload::Write]
            .into_iter()
            .map(|w| {
                let blocks = effects
                    .iter()
                    .map(|(l, e)| {
                        (Label::build(l, None), (0..30).map(|r| (r, e * (0.02 * normal(rng)).exp())).collect())
                    })
                    .collect();
                ((Engine::Rust, w), (Label::build("a", None), blocks))
            })
            .collect()
    }

    #[test]
    fn adaptive_stopping_measures_less_and_its_intervals_keep_their_level() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let full = run(&mut rng);
        let c = coverage(&full, &Rule::default(), None, 100, &mut rng);
        assert_eq!((c.rounds, c.sections, c.comparisons), (30, 2, 8));
        assert!(c.measured < 0.8 && c.stopped_early > 0.3, "{c:?}");
        // 100 resamples of two families at 95%: at least 90% allows for the draw.
        assert!(c.family_adaptive >= 0.90 && c.family_fixed >= 0.90, "{c:?}");
    }
}
