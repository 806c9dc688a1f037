//! The comparison method on simulated runs with known truth (seeded): interval coverage
//! under drift, bursts, heavy tails and 2.5× outliers; the false-positive rate of whole
//! tables of identical tags; the power to find a 5% step; and the contradictions the old
//! method allowed, now impossible.

use std::collections::BTreeMap;

use lmdb_regress::stats::family::{self, Rounds, Rule};
use lmdb_regress::stats::{ratio, Verdict, ALPHA};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

#[derive(Clone, Copy, Debug)]
enum Noise {
    /// Log-normal, 2% per sample.
    Plain,
    /// A drift of up to ±10% across the rounds, shared by every tag in a round.
    Drift,
    /// One round in five is 30% slower for every tag in it; single samples burst too.
    Bursts,
    /// Student t with 3 degrees of freedom, scaled to 3%.
    HeavyTails,
    /// 10% of samples at 2.5×.
    Outliers,
}

const SCENARIOS: [Noise; 5] = [Noise::Plain, Noise::Drift, Noise::Bursts, Noise::HeavyTails, Noise::Outliers];

fn normal(rng: &mut Pcg64) -> f64 {
    // Box–Muller: enough for a test's noise.
    let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn student_t3(rng: &mut Pcg64) -> f64 {
    let z = normal(rng);
    let chi: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
    z / (chi / 3.0).sqrt()
}

/// Per-round multipliers every tag shares (drift, round bursts).
fn round_effects(rng: &mut Pcg64, noise: Noise, rounds: u32) -> Vec<f64> {
    (0..rounds)
        .map(|r| match noise {
            Noise::Drift => 1.0 + 0.10 * (2.0 * r as f64 / rounds as f64 - 1.0) + 0.02 * normal(rng),
            Noise::Bursts if rng.gen_bool(0.2) => 1.3,
            _ => 1.0,
        })
        .collect()
}

fn sample(rng: &mut Pcg64, noise: Noise, center: f64, round_effect: f64) -> f64 {
    let x = match noise {
        Noise::HeavyTails => center * (0.03 * student_t3(rng)).exp(),
        Noise::Outliers if rng.gen_bool(0.1) => center * 2.5 * (0.02 * normal(rng)).exp(),
        Noise::Bursts if rng.gen_bool(0.05) => center * 1.8,
        _ => center * (0.02 * normal(rng)).exp(),
    };
    x * round_effect
}

/// One simulated run: every tag once per round, with the tags' true centres.
fn simulate(rng: &mut Pcg64, noise: Noise, centers: &[f64], rounds: u32) -> BTreeMap<String, Rounds> {
    let effects = round_effects(rng, noise, rounds);
    let mut out: BTreeMap<String, Rounds> = BTreeMap::new();
    for (r, e) in effects.iter().enumerate() {
        for (i, c) in centers.iter().enumerate() {
            out.entry(format!("t{i:02}")).or_default().insert(r as u32, sample(rng, noise, *c, *e));
        }
    }
    out
}

#[test]
fn intervals_cover_the_true_ratio_in_every_noise_scenario() {
    for noise in SCENARIOS {
        let mut rng = Pcg64::seed_from_u64(8);
        let (trials, truth) = (1500, 1.05);
        let mut covered = 0;
        let mut widths = Vec::new();
        for _ in 0..trials {
            let b = simulate(&mut rng, noise, &[100.0, 100.0 * truth], 20);
            let c = family::compare(&b["t00"], &b["t01"], 1, &Rule::default()).unwrap();
            let ci = c.ci.expect("20 pairs reach 95%");
            covered += usize::from(ci.lo <= truth && truth <= ci.hi);
            widths.push(c.half_width().unwrap());
        }
        let coverage = covered as f64 / trials as f64;
        widths.sort_by(f64::total_cmp);
        eprintln!("{noise:?}: coverage {coverage:.3}, median half-width {:.2}%", 100.0 * widths[widths.len() / 2]);
        assert!(coverage >= 0.94, "{noise:?}: coverage {coverage} below 0.94");
    }
}

/// Tables of 17 identical tags: how often does a table show any change at all?
#[test]
fn tables_of_identical_tags_rarely_show_a_change() {
    let rule = Rule::default();
    for noise in [Noise::Plain, Noise::Outliers, Noise::Drift] {
        let mut rng = Pcg64::seed_from_u64(17);
        let tables = 200;
        let (mut ranked_flagged, mut baseline_flagged) = (0, 0);
        for _ in 0..tables {
            let b = simulate(&mut rng, noise, &[100.0; 17], 20);
            // The ranked table: every tag against the fastest median, in the all-pairs family.
            let med = |r: &Rounds| lmdb_regress::stats::median(&r.values().copied().collect::<Vec<_>>());
            let fastest = b.iter().min_by(|x, y| med(x.1).total_cmp(&med(y.1))).unwrap().0.clone();
            let k = family::all_pairs(b.len());
            let any_ranked = b
                .iter()
                .filter(|(t, _)| **t != fastest)
                .any(|(_, r)| family::compare(&b[&fastest], r, k, &rule).unwrap().verdict.is_change());
            ranked_flagged += usize::from(any_ranked);
            // The baseline table: every tag against the first, k − 1 comparisons.
            let any_baseline = family::against(&b, &"t00".to_string(), &rule).values().any(|c| c.verdict.is_change());
            baseline_flagged += usize::from(any_baseline);
        }
        let (fr, fb) = (ranked_flagged as f64 / tables as f64, baseline_flagged as f64 / tables as f64);
        eprintln!("{noise:?}: tables with a change: ranked {fr:.3}, baseline {fb:.3}");
        assert!(fr <= 0.06 && fb <= 0.06, "{noise:?}: ranked {fr}, baseline {fb}");
    }
}

#[test]
fn a_five_percent_step_is_found_at_the_default_size() {
    // `make run`'s shape: 11 tags, 20 rounds; the last six are 5% slower; 2% noise.
    let mut rng = Pcg64::seed_from_u64(5);
    let centers: Vec<f64> = (0..11).map(|i| if i >= 5 { 105.0 } else { 100.0 }).collect();
    let (trials, mut found, mut wrong) = (200, 0, 0);
    for _ in 0..trials {
        let b = simulate(&mut rng, Noise::Plain, &centers, 20);
        let c = family::against(&b, &"t00".to_string(), &Rule::default());
        found += (5..11).filter(|i| c[&format!("t{i:02}")].verdict == Verdict::Slower).count();
        wrong += (1..5).filter(|i| c[&format!("t{i:02}")].verdict.is_change()).count();
    }
    let power = found as f64 / (trials * 6) as f64;
    eprintln!("power {power:.3}, false changes {wrong}");
    assert!(power >= 0.95, "a 5% step was found as slower in only {power} of comparisons");
    assert!(wrong as f64 / (trials * 4) as f64 <= 0.01);
}

/// Every verdict agrees with its own interval, whatever the data.
#[test]
fn no_verdict_disagrees_with_its_interval() {
    let mut rng = Pcg64::seed_from_u64(3);
    for trial in 0..2000 {
        let n = rng.gen_range(2..30);
        let noise = SCENARIOS[trial % SCENARIOS.len()];
        let truth = rng.gen_range(0.9..1.1);
        let b = simulate(&mut rng, noise, &[100.0, 100.0 * truth], n);
        let k = rng.gen_range(1..140);
        let c = family::compare(&b["t00"], &b["t01"], k, &Rule::default()).unwrap();
        assert!((c.confidence - (1.0 - ALPHA / k as f64)).abs() < 1e-12);
        match (c.verdict, c.ci) {
            (Verdict::Slower, Some(i)) => assert!(i.lo > 1.0),
            (Verdict::Faster, Some(i)) => assert!(i.hi < 1.0),
            (Verdict::Same, Some(i)) => assert!(i.lo >= 0.98 && i.hi <= 1.02 && i.lo <= 1.0 && i.hi >= 1.0),
            (Verdict::Inconclusive, Some(i)) => assert!(i.lo <= 1.0 && i.hi >= 1.0 && (i.lo < 0.98 || i.hi > 1.02)),
            (Verdict::Inconclusive, None) => {}
            (v, None) => panic!("{v:?} without an interval"),
        }
        if let Some(i) = c.ci {
            assert!(i.lo <= c.ratio && c.ratio <= i.hi, "the estimate lies in its interval: {c:?}");
        }
    }
}

/// The old `compare` printed "~" for a deterministic +8% in instruction counts at n = 2.
#[test]
fn deterministic_counts_are_judged_by_tolerance() {
    let r = |v: f64| -> Rounds { [(0, v), (1, v)].into_iter().collect() };
    let rule = Rule::default().for_counts();
    let c = family::compare(&r(1000.0), &r(1080.0), 1, &rule).unwrap();
    assert_eq!((c.verdict, c.method), (Verdict::Slower, ratio::Method::Counts));
    let c = family::compare(&r(1000.0), &r(1004.0), 1, &rule).unwrap();
    assert_eq!(c.verdict, Verdict::Same);
}
