//! A seeded simulation of the per-round paired method when code layout moves times: each
//! sample a layout of its own (random layouts), or each tag one layout in every round (one
//! fixed build per tag). Shared by tests/layout_coverage.rs, which holds the method to it,
//! and examples/layout_coverage.rs, which prints the table in reports/README.md.

use lmdb_regress::stats::family::{self, Rounds, Rule};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// One cell of the simulation: a workload's layout sensitivity and the machine's noise.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    pub workload: &'static str,
    /// Standard deviation of a layout's effect on log time.
    pub layout: f64,
    /// Standard deviation of the per-sample noise on log time.
    pub noise: f64,
    /// The true ratio of B to A, over layouts.
    pub truth: f64,
}

/// The sizes: layout ±5–9% on readKey, ±4% on write; per-sample noise 3–8%; no
/// change and a 5% step.
pub fn cells() -> Vec<Cell> {
    let mut out = Vec::new();
    for (workload, layout) in [("readKey", 0.05), ("readKey", 0.09), ("write", 0.04)] {
        for noise in [0.03, 0.08] {
            for truth in [1.00, 1.05] {
                out.push(Cell { workload, layout, noise, truth });
            }
        }
    }
    out
}

/// What the method gives over many trials of one cell.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Share of 95% intervals that hold the true ratio.
    pub coverage: f64,
    /// Median half-width of the intervals, as a fraction.
    pub half_width: f64,
}

fn normal(rng: &mut Pcg64) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// One run of two tags over `rounds`, with a drift of ±10% across the rounds that both
/// share. `random`: every sample its own layout; else each tag one layout throughout.
fn run(rng: &mut Pcg64, c: Cell, rounds: u32, random: bool) -> (Rounds, Rounds) {
    let fixed = [c.layout * normal(rng), c.layout * normal(rng)];
    let (mut a, mut b) = (Rounds::new(), Rounds::new());
    for r in 0..rounds {
        let drift = 0.10 * (2.0 * r as f64 / rounds as f64 - 1.0) + 0.02 * normal(rng);
        let mut sample = |tag: usize, centre: f64| {
            let layout = if random { c.layout * normal(rng) } else { fixed[tag] };
            centre * (drift + layout + c.noise * normal(rng)).exp()
        };
        a.insert(r, sample(0, 100.0));
        b.insert(r, sample(1, 100.0 * c.truth));
    }
    (a, b)
}

/// `trials` seeded runs of a cell, judged as every table judges B against A (one comparison).
pub fn simulate(c: Cell, random: bool, trials: usize, rounds: u32, seed: u64) -> Outcome {
    let mut rng = Pcg64::seed_from_u64(seed);
    let (mut covered, mut widths) = (0, Vec::with_capacity(trials));
    for _ in 0..trials {
        let (a, b) = run(&mut rng, c, rounds, random);
        let cmp = family::compare(&a, &b, 1, &Rule::default()).expect("pairs");
        let ci = cmp.ci.expect("enough rounds for a 95% interval");
        covered += usize::from(ci.lo <= c.truth && c.truth <= ci.hi);
        widths.push(cmp.half_width().expect("an interval"));
    }
    widths.sort_by(f64::total_cmp);
    Outcome { coverage: covered as f64 / trials as f64, half_width: widths[widths.len() / 2] }
}
