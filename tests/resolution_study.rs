//! Method evidence (simulated, seeded) for the default run's design: what 10 minutes of the
//! 17-tag matrix resolve under random layouts, drift and bursts (+20–40% on one pass, about
//! a quarter of the rounds of a readKey run), lever by lever. The chosen design — one layout
//! and one pass per worker, as many rounds as the budget buys — must keep the family-wise
//! limits, and beat both the old 20 rounds and the repetition levers at equal wall time.

#[path = "resolution_sim/mod.rs"]
mod resolution_sim;

use resolution_sim::{designs, simulate, Design, READ_KEY, WRITE};

fn design(name: &str) -> Design {
    designs().into_iter().find(|d| d.name == name).expect("a studied design")
}

#[test]
fn the_default_keeps_family_wise_coverage_and_the_a_a_rate_with_bursts() {
    for (i, w) in [READ_KEY, WRITE].into_iter().enumerate() {
        let o = simulate(w, design("1 layout × 1 pass"), 150, 40 + i as u64);
        eprintln!("{}: {o:?}", w.name);
        assert!(o.rounds >= 80, "10 minutes buy {} rounds", o.rounds);
        assert!(o.step_coverage >= 0.94, "{}: {o:?}", w.name);
        // 150 trials: the 5% limit plus two standard errors.
        assert!(o.aa_false <= 0.05 + 2.0 * (0.05f64 * 0.95 / 150.0).sqrt(), "{}: {o:?}", w.name);
    }
}

#[test]
fn rounds_buy_more_resolution_per_minute_than_repetitions_or_layouts_per_round() {
    let budget = simulate(READ_KEY, design("1 layout × 1 pass"), 100, 7);
    let before = simulate(READ_KEY, design("1 layout × 1 pass, 20 rounds (before)"), 100, 7);
    eprintln!("budget {budget:?}\nbefore {before:?}");
    assert!(budget.half_width < 0.7 * before.half_width && budget.power > before.power);
    for lever in ["1 layout × 3 passes (median)", "3 layouts × 1 pass", "1 layout × 1 pass, short blocks"] {
        let o = simulate(READ_KEY, design(lever), 100, 7);
        eprintln!("{lever}: {o:?}");
        assert!(o.half_width > budget.half_width, "{lever} resolves finer in the same wall time: {o:?}");
    }
}

#[test]
fn the_burst_rate_is_the_issue_s_a_quarter_of_the_rounds() {
    // 17 readKey passes a round, each hit with probability rate × its duration.
    let p = resolution_sim::BURST_RATE * resolution_sim::PASSES_S[READ_KEY.index];
    let rounds_hit = 1.0 - (1.0 - p).powi(resolution_sim::TAGS as i32);
    assert!((0.2..0.3).contains(&rounds_hit), "{rounds_hit}");
}
