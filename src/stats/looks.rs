//! Stopping that spends its error over the looks. A run that ends a comparison once it is
//! decided (adaptive rounds, or `--target-ci`) looks at its intervals many times; checked
//! at the nominal level after every round, one of them wanders outside by chance far more
//! often than the level says. So comparisons are decided only at looks spaced
//! geometrically in rounds (r₀, 2r₀, 4r₀, …), look j at family-wise level α·½/2^(j+1), and
//! the run's last round gets what the early looks left (at least α/2). The levels sum to
//! α: every interval of every look covers together with probability ≥ 1 − α (Bonferroni
//! over the looks), whichever look a comparison is reported at. r₀ is the fewest pairs
//! whose interval reaches look 0's level, so no look spends error it cannot use.

use std::collections::BTreeMap;

use super::family::{self, Rounds, Rule};
use super::ratio::{Comparison, Method, Verdict};
use super::{rank, ALPHA};
use crate::record::{Closing, Target};

/// The share of the run's error the early looks spend, over them all; the last round
/// keeps the rest, so that an interval never decided is at most a little wider than a
/// run without looks would give it (z at α/2 against z at α).
pub const EARLY_SHARE: f64 = 0.5;

/// The looks of a family of comparisons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Looks {
    /// The round (counted from 1) of the first look.
    first: u32,
    /// Comparisons in the family: each look's level is shared among them.
    family: usize,
}

impl Looks {
    pub fn of(family: usize) -> Looks {
        let family = family.max(1);
        Looks { first: rank::min_pairs(early_alpha(0) / family as f64) as u32, family }
    }

    /// The early looks up to round `rounds` (counted from 1), each with the level (per
    /// comparison, the family's correction made) a comparison is decided at there.
    fn early(&self, rounds: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        (0..31u32)
            .map(move |j| (self.first.saturating_mul(1 << j), early_alpha(j) / self.family as f64))
            .take_while(move |(round, _)| *round <= rounds)
    }

    /// The level of each interval reported after the run's last round `rounds`: the
    /// error the early looks before it left.
    fn last(&self, rounds: u32) -> f64 {
        let spent: f64 = self.early(rounds.saturating_sub(1)).map(|(_, a)| a).sum();
        ALPHA / self.family as f64 - spent
    }

    /// The level of the next look after round `rounds`.
    fn next(&self, rounds: u32) -> f64 {
        let looks = self.early(rounds).count() as u32;
        early_alpha(looks) / self.family as f64
    }

    /// The round of the next look after round `rounds`.
    fn next_round(&self, rounds: u32) -> u32 {
        self.first.saturating_mul(1 << self.early(rounds).count().min(31))
    }
}

/// The family-wise error early look `j` spends.
fn early_alpha(j: u32) -> f64 {
    ALPHA * EARLY_SHARE / f64::powi(2.0, j as i32 + 1)
}

/// Where a comparison stands after some rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stand {
    /// Its interval and verdict: at the look that decided it, else at `At`'s level.
    pub comparison: Comparison,
    /// The early look (a round, counted from 1) that decided it; None when none has.
    pub decided_at: Option<u32>,
}

/// Which level a comparison no early look decided is judged at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The run goes on: the next look's, to tell how far it is from decided.
    Next,
    /// The run goes on to about this round (counted from 1): the next look's level if one
    /// falls by then, else the error the early looks leave the last round, at which the
    /// comparison will be reported (a comparison the run ends before its next look needs
    /// only that level's width, not the look's).
    Until(u32),
    /// The run ended with this round: the error the early looks left.
    Last,
}

impl At {
    /// How a run that goes on after `rounds` rounds weighs an open comparison: to the
    /// round its `horizon` (the rounds it can still afford, where known) reaches, else to
    /// the next look.
    pub fn going_on(rounds: u32, horizon: Option<f64>) -> At {
        horizon.map_or(At::Next, |h| At::Until(rounds.saturating_add(h.clamp(0.0, 1e9) as u32)))
    }
}

/// `b` against `a`, one of a table's `family` comparisons in the rule's tables, after
/// `rounds` rounds (counted from 1):
/// the first early look that closes it ([`closed`] by `target`), each
/// look judging the rounds up to it; else judged at `at`'s level on every round. An early
/// look at the run's last round is the last look.
pub fn stand(
    a: &Rounds,
    b: &Rounds,
    family: usize,
    rule: &Rule,
    target: Option<Target>,
    rounds: u32,
    at: At,
) -> Option<Stand> {
    if rule.counts {
        // Exact counts repeat: looking again spends no error.
        let c = family::compare(a, b, family, rule)?;
        let decided_at = (at != At::Last && closed(&c, target)).then_some(rounds);
        return Some(Stand { comparison: c, decided_at });
    }
    let looks = Looks::of(rule.share(family));
    let early = match at {
        At::Next | At::Until(_) => rounds,
        At::Last => rounds.saturating_sub(1),
    };
    for (look, alpha) in looks.early(early) {
        let upto = |r: &Rounds| -> Rounds { r.range(..look).map(|(k, v)| (*k, *v)).collect() };
        let c = family::compare_at(&upto(a), &upto(b), alpha, rule);
        if let Some(c) = c.filter(|c| closed(c, target)) {
            return Some(Stand { comparison: c, decided_at: Some(look) });
        }
    }
    let alpha = match at {
        At::Until(end) if looks.next_round(rounds) > end => looks.last(end),
        At::Next | At::Until(_) => looks.next(rounds),
        At::Last => looks.last(rounds),
    };
    family::compare_at(a, b, alpha, rule).map(|comparison| Stand { comparison, decided_at: None })
}

/// Every label of a section against `reference`, one family, as a run of `rounds` rounds
/// that ended there reports them.
pub fn against<K: Ord + Clone>(
    blocks: &BTreeMap<K, Rounds>,
    reference: &K,
    rule: &Rule,
    target: Option<Target>,
    rounds: u32,
) -> BTreeMap<K, Stand> {
    let Some(base) = blocks.get(reference) else { return BTreeMap::new() };
    let family = blocks.len().saturating_sub(1);
    blocks
        .iter()
        .filter(|(l, _)| *l != reference)
        .filter_map(|(l, b)| Some((l.clone(), stand(base, b, family, rule, target, rounds, At::Last)?)))
        .collect()
}

/// Whether a comparison needs no more rounds: decided, and with a target within it (or
/// either, as files before schema 11 closed them). An exact count has no width: decided
/// is all it can be.
pub fn closed(c: &Comparison, target: Option<Target>) -> bool {
    let decided = c.verdict != Verdict::Inconclusive;
    let within = |t: Target| c.half_width().is_some_and(|h| h <= t.percent / 100.0);
    match target {
        None => decided,
        Some(t) if t.closing == Closing::DecidedOrWithin => decided || within(t),
        Some(t) => decided && (c.method == Method::Counts || within(t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Looks double from the fewest pairs that reach look 0's level; the levels of the
    /// early looks and the last sum to the run's, wherever the run ends.
    #[test]
    fn the_looks_spend_the_runs_error_and_no_more() {
        let looks = Looks::of(2);
        let rounds: Vec<u32> = looks.early(40).map(|(r, _)| r).collect();
        assert_eq!(rounds, [9, 18, 36]);
        for end in [5, 9, 10, 36, 37, 100] {
            let spent: f64 = looks.early(end - 1).map(|(_, a)| a).sum::<f64>() + looks.last(end);
            assert!((spent - ALPHA / 2.0).abs() < 1e-12, "{end}: {spent}");
            assert!(looks.last(end) >= ALPHA * (1.0 - EARLY_SHARE) / 2.0);
        }
        assert_eq!(looks.next(9), ALPHA / 2.0 / 8.0);
    }

    /// A run that ends before its next look judges an open comparison at the level its
    /// last round will report it at, looser than the look's; one that reaches the look, at
    /// the look's.
    #[test]
    fn a_run_that_ends_before_its_next_look_judges_at_the_last_rounds_level() {
        let a: Rounds = (0..20u32).map(|r| (r, 1.0)).collect();
        let b: Rounds = (0..20u32).map(|r| (r, 1.0 + if r % 2 == 0 { 0.05 } else { -0.05 })).collect();
        let rule = Rule::default();
        let level = |at| 1.0 - stand(&a, &b, 2, &rule, None, 20, at).unwrap().comparison.confidence;
        let looks = Looks::of(2);
        assert_eq!(looks.next_round(20), 36);
        assert!((level(At::Until(30)) - looks.last(30)).abs() < 1e-12);
        assert!((level(At::Until(36)) - looks.next(20)).abs() < 1e-12);
        assert_eq!(level(At::Until(40)), level(At::Next));
        assert!(level(At::Until(30)) > 2.0 * level(At::Next));
    }

    /// A difference of 10% is decided at the first look, with that look's interval; a
    /// difference of none is never decided and is reported at the last look's level.
    #[test]
    fn a_comparison_is_reported_at_the_look_that_decided_it() {
        let rounds = |f: f64| -> Rounds { (0..40u32).map(|r| (r, f * (1.0 + 0.001 * (r % 7) as f64))).collect() };
        let rule = Rule::default();
        let s = stand(&rounds(1.0), &rounds(1.1), 2, &rule, None, 40, At::Last).unwrap();
        assert_eq!(s.decided_at, Some(9));
        assert_eq!((s.comparison.n, s.comparison.verdict), (9, Verdict::Slower));
        assert_eq!(s.comparison.confidence, 1.0 - ALPHA / 2.0 / 4.0);
        let b: Rounds = (0..40u32).map(|r| (r, 1.0 + if r % 2 == 0 { 0.05 } else { -0.05 })).collect();
        let s = stand(&rounds(1.0), &b, 2, &rule, None, 40, At::Last).unwrap();
        assert_eq!((s.decided_at, s.comparison.n), (None, 40));
        assert!((s.comparison.confidence - (1.0 - (ALPHA / 2.0 - ALPHA / 2.0 * 7.0 / 16.0))).abs() < 1e-12);
    }
}
