//! Prints the simulation behind reports/README.md's "random layouts" method table: per cell
//! (workload's layout sensitivity, per-sample noise, true ratio), the 95% intervals' coverage
//! and median half-width of the per-round paired method, with a layout of its own for every
//! sample and with one fixed layout per tag. Seeded: the same numbers on every machine.
//!
//!     cargo run --release --example layout_coverage

#[path = "../tests/layout_sim/mod.rs"]
mod layout_sim;

use layout_sim::{cells, simulate};

fn main() {
    const TRIALS: usize = 2000;
    println!("simulated, {TRIALS} trials a cell, 20 rounds, drift ±10% across the rounds");
    println!("| workload | layout σ | noise σ | true ratio | coverage, random | half-width, random | coverage, fixed | half-width, fixed |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (i, c) in cells().into_iter().enumerate() {
        let (r, f) = (simulate(c, true, TRIALS, 20, i as u64), simulate(c, false, TRIALS, 20, i as u64));
        println!(
            "| {} | {:.0}% | {:.0}% | {:.2} | {:.3} | ±{:.1}% | {:.3} | ±{:.1}% |",
            c.workload,
            100.0 * c.layout,
            100.0 * c.noise,
            c.truth,
            r.coverage,
            100.0 * r.half_width,
            f.coverage,
            100.0 * f.half_width
        );
    }
}
