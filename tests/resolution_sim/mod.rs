//! A seeded simulation of what a run resolves per minute of wall time, lever by lever:
//! repetitions inside a worker, several layouts a round (each its own worker), and short
//! blocks (workload-major rounds), under random layouts, drift and bursts. Shared by
//! tests/resolution_study.rs, which holds the chosen design to the limits, and
//! examples/resolution_study.rs, which prints the table in reports/README.md.
//!
//! The model, on log time, for one workload of the 17-tag matrix: every timed pass is its
//! tag's truth + the round's drift (±10%, common to all tags) + a random walk within the
//! round's block (1%/√s, so tags measured far apart in a long block drift apart) + its
//! layout's effect + per-pass noise + now and then a burst (+20–40%, hitting one pass, at
//! 0.25 per second of timed work: about a quarter of the rounds of a 17-tag readKey run).
//! A round's value is the median of the tag's passes in it (as `family::per_round` takes
//! it); comparisons are the report's (paired, Bonferroni over the 16 against the baseline).

use lmdb_regress::stats::family::{self, Rounds, Rule};
use lmdb_regress::stats::Verdict;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::BTreeMap;

pub const TAGS: usize = 17;
/// Timed seconds a pass, the six workloads (0.9.33 medians, reports/README.md).
pub const PASSES_S: [f64; 6] = [0.061, 0.019, 0.019, 0.045, 0.044, 0.090];
/// Starting a worker: process, library load, its SHA-256 check.
pub const START_S: f64 = 0.030;
/// A worker's walk over the read database before its first timed read.
pub const FAULT_IN_S: f64 = 0.060;
/// Linking a layout, wall time with both cores linking (about 50 ms of one core).
pub const LINK_S: f64 = 0.026;
/// The wall-time budget every design gets for the whole matrix (unless its rounds are fixed).
pub const BUDGET_S: f64 = 600.0;
pub const BURST_RATE: f64 = 0.25;
pub const WALK: f64 = 0.01;

/// A workload as the simulation sees it.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    pub name: &'static str,
    /// Index into [`PASSES_S`].
    pub index: usize,
    /// Standard deviation of a layout's effect on log time.
    pub layout: f64,
    /// Standard deviation of the per-pass noise on log time.
    pub noise: f64,
}

pub const READ_KEY: Workload = Workload { name: "readKey", index: 0, layout: 0.07, noise: 0.03 };
pub const WRITE: Workload = Workload { name: "write", index: 5, layout: 0.04, noise: 0.06 };

/// How a run spends its rounds.
#[derive(Clone, Copy, Debug)]
pub struct Design {
    pub name: &'static str,
    /// Layouts a tag runs in each round, each in a worker of its own.
    pub layouts: u32,
    /// Timed repetitions of each workload inside each worker (`--iterations`).
    pub reps: u32,
    /// A round runs one workload over all tags (a short block), not all six.
    pub short_blocks: bool,
    /// Rounds of the matrix; None: as many as the budget buys.
    pub fixed_rounds: Option<u32>,
}

pub fn designs() -> Vec<Design> {
    let d = |name, layouts, reps, short_blocks| Design { name, layouts, reps, short_blocks, fixed_rounds: None };
    vec![
        Design { fixed_rounds: Some(20), ..d("1 layout × 1 pass, 20 rounds (before)", 1, 1, false) },
        d("1 layout × 1 pass", 1, 1, false),
        d("1 layout × 3 passes (median)", 1, 3, false),
        d("3 layouts × 1 pass", 3, 1, false),
        d("2 layouts × 2 passes", 2, 2, false),
        d("3 layouts × 2 passes", 3, 2, false),
        d("5 layouts × 1 pass", 5, 1, false),
        d("1 layout × 1 pass, short blocks", 1, 1, true),
        d("3 layouts × 1 pass, short blocks", 3, 1, true),
    ]
}

impl Design {
    /// Seconds one tag's worker(s) take for the workloads `passes` (read: any but write).
    fn slot(&self, passes: &[usize]) -> f64 {
        let reads = passes.iter().any(|&i| i != WRITE.index);
        let timed: f64 = passes.iter().map(|&i| PASSES_S[i]).sum();
        self.layouts as f64 * (START_S + if reads { FAULT_IN_S } else { 0.0 } + self.reps as f64 * timed)
    }

    /// Wall seconds of one round of the whole matrix (all six workloads), linking included.
    pub fn matrix_round_s(&self) -> f64 {
        let link = TAGS as f64 * self.layouts as f64 * LINK_S;
        let all: Vec<usize> = (0..6).collect();
        let per_tag = if self.short_blocks { all.iter().map(|&i| self.slot(&[i])).sum() } else { self.slot(&all) };
        link + TAGS as f64 * per_tag
    }

    /// Rounds of the matrix: as many as fit the budget unless fixed.
    pub fn rounds(&self) -> u32 {
        self.fixed_rounds.unwrap_or((BUDGET_S / self.matrix_round_s()) as u32)
    }

    /// Seconds between the starts of two tags' slots in `w`'s block.
    fn slot_s(&self, w: Workload) -> f64 {
        if self.short_blocks {
            self.slot(&[w.index])
        } else {
            self.slot(&(0..6).collect::<Vec<_>>())
        }
    }
}

fn normal(rng: &mut Pcg64) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// One run of `w` under `d`: per tag its rounds' values. `truth[t]`: tag t's log effect.
fn run(rng: &mut Pcg64, w: Workload, d: Design, truth: &[f64], rounds: u32) -> BTreeMap<String, Rounds> {
    let mut out: BTreeMap<String, Rounds> = BTreeMap::new();
    let (slot, pass) = (d.slot_s(w), PASSES_S[w.index]);
    let mut order: Vec<usize> = (0..TAGS).collect();
    for r in 0..rounds {
        let drift = 0.10 * (2.0 * r as f64 / rounds as f64 - 1.0) + 0.03 * normal(rng);
        order.shuffle(rng);
        let mut walk = 0.0;
        for &t in &order {
            walk += WALK * slot.sqrt() * normal(rng);
            let mut passes = Vec::with_capacity((d.layouts * d.reps) as usize);
            for _ in 0..d.layouts {
                let layout = w.layout * normal(rng);
                for _ in 0..d.reps {
                    let burst =
                        if rng.gen::<f64>() < BURST_RATE * pass { rng.gen_range(0.2..0.4f64).ln_1p() } else { 0.0 };
                    passes.push((r, (truth[t] + drift + walk + layout + w.noise * normal(rng) + burst).exp()));
                }
            }
            let value = family::per_round(passes)[&r];
            out.entry(format!("t{t:02}")).or_default().insert(r, value);
        }
    }
    out
}

/// What a design gives over many seeded runs of one workload.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    pub rounds: u32,
    /// Share of A/A runs with any `slower` or `faster` against the baseline (the share
    /// where some interval misses the truth, 1).
    pub aa_false: f64,
    /// Share of step runs where every interval against the baseline holds its truth.
    pub step_coverage: f64,
    /// Share of the 3%-slower tags called `slower` against the baseline.
    pub power: f64,
    /// Median half-width against the baseline, as a fraction.
    pub half_width: f64,
}

/// `trials` seeded A/A runs and as many runs where tags 9–16 are 3% slower (a step).
pub fn simulate(w: Workload, d: Design, trials: usize, seed: u64) -> Outcome {
    let mut rng = Pcg64::seed_from_u64(seed);
    let rounds = d.rounds();
    let rule = Rule::default();
    let step: Vec<f64> = (0..TAGS).map(|t| if t >= 9 { 0.03f64.ln_1p() } else { 0.0 }).collect();
    let mut o = Outcome { rounds, ..Default::default() };
    let (mut slower, mut stepped, mut widths) = (0, 0, Vec::new());
    for _ in 0..trials {
        for (truth, aa) in [(vec![0.0; TAGS], true), (step.clone(), false)] {
            let blocks = run(&mut rng, w, d, &truth, rounds);
            let cmp = family::against(&blocks, &"t00".to_string(), &rule);
            assert_eq!(cmp.len(), TAGS - 1, "every tag compared");
            let covers = cmp.iter().all(|(t, c)| {
                let want = truth[t[1..].parse::<usize>().unwrap()].exp();
                c.ci.is_some_and(|i| i.lo <= want && want <= i.hi)
            });
            if aa {
                o.aa_false += f64::from(u8::from(cmp.values().any(|c| c.verdict.is_change())));
                continue;
            }
            o.step_coverage += f64::from(u8::from(covers));
            for (t, c) in &cmp {
                widths.push(c.half_width().expect("an interval"));
                if t.as_str() >= "t09" {
                    stepped += 1;
                    slower += usize::from(c.verdict == Verdict::Slower);
                }
            }
        }
    }
    let n = trials as f64;
    (o.aa_false, o.step_coverage) = (o.aa_false / n, o.step_coverage / n);
    o.power = slower as f64 / stepped as f64;
    widths.sort_by(f64::total_cmp);
    o.half_width = widths[widths.len() / 2];
    o
}
