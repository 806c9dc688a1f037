//! Prints the simulation behind reports/README.md's "resolution per minute" table: for each
//! design (layouts a round × passes a worker, long or short blocks), the rounds a 10-minute
//! budget buys for the 17-tag matrix, and for readKey and write the A/A family-wise
//! false-verdict rate, coverage and power with a 3% step, and the median
//! half-width against the baseline. Seeded: the same numbers on every machine.
//!
//!     cargo run --release --example resolution_study

#[path = "../tests/resolution_sim/mod.rs"]
mod resolution_sim;

use resolution_sim::{designs, simulate, READ_KEY, WRITE};

fn main() {
    const TRIALS: usize = 400;
    println!("simulated, {TRIALS} A/A and {TRIALS} step trials a cell, 17 tags, 10 minutes of wall time a run unless its rounds are fixed");
    println!("| design | round | rounds | wall | workload | A/A false | step coverage | power, 3% | half-width |");
    println!("|---|---:|---:|---:|---|---:|---:|---:|---:|");
    for (i, d) in designs().into_iter().enumerate() {
        for w in [READ_KEY, WRITE] {
            let o = simulate(w, d, TRIALS, 1000 + i as u64);
            println!(
                "| {} | {:.1} s | {} | {:.1} min | {} | {:.3} | {:.3} | {:.2} | ±{:.1}% |",
                d.name,
                d.matrix_round_s(),
                o.rounds,
                o.rounds as f64 * d.matrix_round_s() / 60.0,
                w.name,
                o.aa_false,
                o.step_coverage,
                o.power,
                100.0 * o.half_width
            );
        }
    }
}
