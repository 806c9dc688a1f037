//! The bisection search and the per-probe decision, free of any measuring, so both can
//! be tested against synthetic oracles.

use serde::Serialize;

use crate::stats::family::{self, Rounds, Rule};
use crate::stats::{self, Verdict as StatVerdict};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ProbeVerdict {
    Good,
    Bad,
    /// The round cap came before the probe's interval left the middle.
    Undecided,
    /// It could not be built or measured; the search goes around it (`git bisect skip`).
    Skipped(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeStep {
    pub candidate: String,
    pub verdict: ProbeVerdict,
    /// What was measured, in words.
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchOutcome {
    /// Index of the last candidate known good and of the first known bad.
    pub last_good: usize,
    pub first_bad: usize,
    pub steps: Vec<ProbeStep>,
    /// Candidates strictly between the two that were skipped.
    pub skipped_between: Vec<usize>,
    /// An undecided probe stopped the search.
    pub stopped_undecided: bool,
}

impl SearchOutcome {
    /// True when the first bad candidate is pinned down: nothing untested lies between.
    pub fn resolved(&self) -> bool {
        !self.stopped_undecided
            && self.first_bad == self.last_good + 1 + self.skipped_between.len()
            && self.skipped_between.is_empty()
    }
}

/// Bisects `candidates`, whose first is known good and last known bad. `probe` measures
/// one candidate and says which side it is on.
pub fn bisect(candidates: &[String], probe: &mut dyn FnMut(&str) -> (ProbeVerdict, String)) -> SearchOutcome {
    assert!(candidates.len() >= 2, "a good and a bad end are needed");
    let (mut lo, mut hi) = (0usize, candidates.len() - 1);
    let mut skipped: Vec<usize> = Vec::new();
    let mut steps = Vec::new();
    let mut stopped_undecided = false;
    loop {
        let mid = (lo + hi) as f64 / 2.0;
        // The untested candidate nearest the middle (skipped ones are gone around).
        let Some(i) = (lo + 1..hi)
            .filter(|i| !skipped.contains(i))
            .min_by(|a, b| ((*a as f64 - mid).abs()).total_cmp(&(*b as f64 - mid).abs()).then(a.cmp(b)))
        else {
            break;
        };
        let (verdict, detail) = probe(&candidates[i]);
        steps.push(ProbeStep { candidate: candidates[i].clone(), verdict: verdict.clone(), detail });
        match verdict {
            ProbeVerdict::Good => lo = i,
            ProbeVerdict::Bad => hi = i,
            ProbeVerdict::Skipped(_) => skipped.push(i),
            ProbeVerdict::Undecided => {
                stopped_undecided = true;
                break;
            }
        }
    }
    let mut skipped_between: Vec<usize> = skipped.into_iter().filter(|i| *i > lo && *i < hi).collect();
    skipped_between.sort();
    SearchOutcome { last_good: lo, first_bad: hi, steps, skipped_between, stopped_undecided }
}

/// Where a probe sits between the good and bad references: 0 = good, 1 = bad (from
/// the per-round medians; for the reader, not for the decision).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Position {
    pub at: f64,
}

/// Each round's midpoint of the two ends: the geometric mean of good and bad.
fn midpoint(good: &Rounds, bad: &Rounds) -> Rounds {
    good.iter().filter_map(|(r, g)| bad.get(r).map(|b| (*r, (g * b).sqrt()))).collect()
}

/// The probe against the midpoint of the ends, per round, by the one comparison method
/// (`family` decisions share the error rate): bad when its interval lies wholly above the
/// midpoint, good when wholly below, None while it straddles it — or while the ends
/// themselves are not told apart.
pub fn decide(
    good: &Rounds,
    bad: &Rounds,
    probe: &Rounds,
    family: usize,
    rule: &Rule,
) -> (Option<ProbeVerdict>, Option<Position>) {
    let med = |r: &Rounds| stats::median(&r.values().copied().collect::<Vec<_>>());
    let (mg, mb, mp) = (med(good), med(bad), med(probe));
    let position = (mg.is_finite() && mb.is_finite() && mp.is_finite() && mb != mg)
        .then(|| Position { at: (mp.ln() - mg.ln()) / (mb.ln() - mg.ln()) });
    let ends = family::compare(good, bad, family, rule).map(|c| c.verdict);
    if !matches!(ends, Some(StatVerdict::Slower | StatVerdict::Faster)) {
        return (None, position);
    }
    let bad_is_slower = ends == Some(StatVerdict::Slower);
    let side = family::compare(&midpoint(good, bad), probe, family, rule).map(|c| c.verdict);
    let verdict = match (side, bad_is_slower) {
        (Some(StatVerdict::Slower), true) | (Some(StatVerdict::Faster), false) => Some(ProbeVerdict::Bad),
        (Some(StatVerdict::Faster), true) | (Some(StatVerdict::Slower), false) => Some(ProbeVerdict::Good),
        _ => None,
    };
    (verdict, position)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("c{i}")).collect()
    }

    fn idx(s: &str) -> usize {
        s[1..].parse().unwrap()
    }

    #[test]
    fn clean_step_is_found_in_log2_probes() {
        let c = names(17);
        for step in 1..17 {
            let mut probes = 0;
            let out = bisect(&c, &mut |x| {
                probes += 1;
                (if idx(x) >= step { ProbeVerdict::Bad } else { ProbeVerdict::Good }, String::new())
            });
            assert!(out.resolved(), "step {step}");
            assert_eq!(out.first_bad, step);
            assert_eq!(out.last_good, step - 1);
            assert!(probes <= 4, "step {step}: {probes} probes");
        }
    }

    #[test]
    fn skipped_probes_are_gone_around() {
        let c = names(9);
        // c4 does not build; the step is at c6.
        let out = bisect(&c, &mut |x| match idx(x) {
            4 => (ProbeVerdict::Skipped("does not compile".into()), String::new()),
            i if i >= 6 => (ProbeVerdict::Bad, String::new()),
            _ => (ProbeVerdict::Good, String::new()),
        });
        assert!(out.resolved());
        assert_eq!(out.first_bad, 6);
        assert!(out.steps.iter().any(|s| s.candidate == "c4" && matches!(s.verdict, ProbeVerdict::Skipped(_))));
        // If the skipped one is right at the step, the result names the range.
        let out = bisect(&c, &mut |x| match idx(x) {
            4 => (ProbeVerdict::Skipped("crashes".into()), String::new()),
            i if i >= 4 => (ProbeVerdict::Bad, String::new()),
            _ => (ProbeVerdict::Good, String::new()),
        });
        assert!(!out.resolved());
        assert_eq!((out.last_good, out.first_bad), (3, 5));
        assert_eq!(out.skipped_between, vec![4]);
    }

    #[test]
    fn an_undecided_probe_stops_with_the_remaining_range() {
        let c = names(9);
        let out = bisect(&c, &mut |x| match idx(x) {
            i if i >= 6 => (ProbeVerdict::Bad, String::new()),
            5 => (ProbeVerdict::Undecided, String::new()),
            _ => (ProbeVerdict::Good, String::new()),
        });
        assert!(out.stopped_undecided && !out.resolved());
        assert_eq!((out.last_good, out.first_bad), (4, 6));
    }

    #[test]
    fn no_candidates_between_is_resolved_at_once() {
        let out = bisect(&names(2), &mut |_| unreachable!("nothing to probe"));
        assert!(out.resolved());
        assert_eq!(out.first_bad, 1);
    }

    /// Deterministic noise: a fixed sequence of ±3% wobble plus a rare 2.5× outlier, one
    /// value per round.
    fn noisy(center: f64, n: usize, seed: u64) -> Rounds {
        let mut s = seed;
        (0..n as u32)
            .map(|i| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                let v = if i % 11 == 7 { center * 2.5 } else { center * (1.0 + 0.06 * (u - 0.5)) };
                (i, v)
            })
            .collect()
    }

    fn rule() -> Rule {
        Rule::default()
    }

    #[test]
    fn noisy_probes_are_decided_by_their_interval() {
        let (good, bad) = (noisy(100.0, 20, 1), noisy(110.0, 20, 2));
        assert_eq!(decide(&good, &bad, &noisy(100.5, 20, 3), 1, &rule()).0, Some(ProbeVerdict::Good));
        assert_eq!(decide(&good, &bad, &noisy(109.5, 20, 4), 1, &rule()).0, Some(ProbeVerdict::Bad));
        // A probe right in the middle cannot be placed.
        assert_eq!(decide(&good, &bad, &noisy(104.9, 20, 5), 1, &rule()).0, None);
        // Too few rounds to separate the references: no decision yet.
        assert_eq!(decide(&noisy(100.0, 3, 6), &noisy(101.0, 3, 7), &noisy(100.0, 3, 8), 1, &rule()).0, None);
    }

    #[test]
    fn instruction_counts_decide_with_few_samples() {
        let r = |v: &[f64]| -> Rounds { v.iter().enumerate().map(|(i, x)| (i as u32, *x)).collect() };
        let counts = rule().for_counts();
        let (good, bad) = (r(&[1000.0, 1000.0]), r(&[1100.0, 1100.0]));
        assert_eq!(decide(&good, &bad, &r(&[1099.0, 1100.0]), 1, &counts).0, Some(ProbeVerdict::Bad));
        assert_eq!(decide(&good, &bad, &r(&[1000.0, 1000.0]), 1, &counts).0, Some(ProbeVerdict::Good));
        let (_, pos) = decide(&good, &bad, &r(&[1100.0, 1100.0]), 1, &counts);
        assert!((pos.unwrap().at - 1.0).abs() < 1e-9);
    }

    #[test]
    fn no_regression_gives_no_separation() {
        let (good, bad) = (noisy(100.0, 20, 9), noisy(100.2, 20, 10));
        assert_eq!(decide(&good, &bad, &noisy(100.1, 20, 11), 1, &rule()).0, None);
    }
}
