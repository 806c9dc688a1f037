//! How `run --suite all` shares its time budget among its suites. Each suite's share is
//! taken from what is left of the whole when it starts, in proportion to its part among the
//! parts of the suites still to run: time a suite does not spend (its rounds done, its
//! target met, its adaptive rounds settled) flows to the suites after it. None gets less
//! than its planned share (its part of the whole): time a suite overspends (its last
//! round, its checks and passes after the rounds) lengthens the whole instead. The parts
//! are `--suite-budget`'s durations when given, else [`default_part`]'s.

use std::time::Duration;

use anyhow::{bail, Result};

use crate::workload::suite::{Suite, SuiteChoice};

/// One suite's budget as `--suite-budget` gives it (`lmdb=2m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteShare {
    pub suite: Suite,
    pub budget: Duration,
}

/// `SUITE=DURATION`, one item of `--suite-budget`: a suite `--suite all` runs, and at
/// least a second.
pub fn parse_share(s: &str) -> Result<SuiteShare, String> {
    let Some((name, budget)) = s.split_once('=') else {
        return Err(format!("{s:?}: expected SUITE=DURATION, e.g. lmdb=2m"));
    };
    let named = <SuiteChoice as clap::ValueEnum>::from_str(name.trim(), false).ok();
    let suite = match named.map(SuiteChoice::suites).as_deref() {
        Some([one]) => *one,
        _ => return Err(format!("{name:?} is no suite of --suite all: lmdbjava, lmdb or concurrency")),
    };
    let text = budget;
    let budget = humantime::parse_duration(text.trim()).map_err(|e| format!("{name}={text}: {e}"))?;
    if budget < Duration::from_secs(1) {
        return Err(format!("{name}={text}: a suite's budget is at least 1s"));
    }
    Ok(SuiteShare { suite, budget })
}

/// A suite's part of the whole unless `--suite-budget` says, in fifteenths (at the goal's
/// 15 minutes, its minutes). LmdbJava's six first and most: their ±1% over 22 tags took 75
/// paired rounds (15 min 51 s idle, adaptive off), and 11 minutes buy about 55 of them.
/// The lmdb suite's rows run whole, a process per unit and round, at 10,000 entries under
/// `--suite all`: a round over 22 tags took 100 s at load 7 and 32 s at load 3–4, so 2
/// minutes buy one to four. Readers beside a writer pair in intervals, one crew at a time:
/// their first round over 22 tags, with every crew's fill, took 95 s, so 2 minutes buy one
/// or two; no share of 15 minutes resolves them to ±1% (28 rounds gave ±2.7% at best).
/// reports/README.md, "The --suite all budget".
fn default_part(suite: Suite) -> u32 {
    match suite {
        Suite::LmdbJava => 11,
        Suite::Lmdb | Suite::Concurrency => 2,
        Suite::TokyoCabinet | Suite::OpenGet | Suite::Migrate | Suite::Programs => 0,
    }
}

/// How a `--suite all` run's budget is shared: its suites that run, in the order measured,
/// each with its part.
#[derive(Debug, Clone, PartialEq)]
pub struct Budgets {
    whole: Duration,
    parts: Vec<(Suite, f64)>,
    /// Whether the parts are `--suite-budget`'s (seconds) rather than the defaults.
    given: bool,
}

impl Budgets {
    /// The budgets of `running` (the suites that run, in the order measured) from
    /// `--time-budget` and `--suite-budget`; None when neither is given. `--suite-budget`
    /// must give each suite that runs its budget, no other, none twice, and add up to
    /// `--time-budget` when both are given; `left_out` says why a suite does not run.
    pub fn of(
        time_budget: Option<Duration>,
        given: &[SuiteShare],
        running: &[Suite],
        left_out: impl Fn(Suite) -> Option<String>,
    ) -> Result<Option<Budgets>> {
        if given.is_empty() {
            let parts: Vec<(Suite, f64)> = running.iter().map(|s| (*s, f64::from(default_part(*s)))).collect();
            return Ok(time_budget.map(|whole| Budgets { whole, parts, given: false }));
        }
        for (i, g) in given.iter().enumerate() {
            if given[..i].iter().any(|e| e.suite == g.suite) {
                bail!("--suite-budget names {} twice", name(g.suite));
            }
            if let Some(why) = left_out(g.suite) {
                bail!("--suite-budget gives {} a budget, but it does not run: {why}", name(g.suite));
            }
        }
        if let Some(s) = running.iter().find(|s| !given.iter().any(|g| g.suite == **s)) {
            let all: Vec<&str> = running.iter().map(|s| name(*s)).collect();
            bail!(
                "--suite-budget gives {} no budget: give each suite that runs its own ({})",
                name(*s),
                all.join(", ")
            );
        }
        let total: Duration = given.iter().map(|g| g.budget).sum();
        if let Some(whole) = time_budget.filter(|w| *w != total) {
            let terms: Vec<String> = given.iter().map(|g| format!("{} {}", name(g.suite), shown(g.budget))).collect();
            bail!(
                "--suite-budget adds up to {} ({}), not --time-budget {}: give one of them, or make them agree",
                shown(total),
                terms.join(" + "),
                shown(whole)
            );
        }
        let budget_of = |s: &Suite| given.iter().find(|g| g.suite == *s).map_or(0.0, |g| g.budget.as_secs_f64());
        let parts = running.iter().map(|s| (*s, budget_of(s))).collect();
        Ok(Some(Budgets { whole: total, parts, given: true }))
    }

    /// The whole budget: `--time-budget`, or what `--suite-budget` adds up to.
    pub fn whole(&self) -> Duration {
        self.whole
    }

    /// The `index`-th suite's share when each suite before it spends its own exactly: what
    /// its run file's header is written with before anything is measured.
    pub fn planned(&self, index: usize) -> Duration {
        let before = sum(&self.parts[..index]) / sum(&self.parts).max(f64::MIN_POSITIVE);
        self.of_left(index, self.whole.mul_f64(before))
    }

    /// The `index`-th suite's share when `spent` has gone since the first suite began: its
    /// part of what is left, among the parts of it and the suites after it, and never less
    /// than planned. An earlier suite's overspend (its last round, its checks and passes
    /// after the rounds) thus lengthens the whole rather than cutting a later suite below
    /// the rounds its part is sized for: a share shorter than its round would have the
    /// watchdog end the round at the budget and one floor, with nothing measured.
    pub fn share(&self, index: usize, spent: Duration) -> Duration {
        self.of_left(index, spent).max(self.planned(index))
    }

    /// The `index`-th suite's part of what is left after `spent`, to the second.
    fn of_left(&self, index: usize, spent: Duration) -> Duration {
        let left = self.whole.saturating_sub(spent).as_secs_f64();
        Duration::from_secs_f64(self.share_of(index, left).round())
    }

    /// The `index`-th suite's part of `left` seconds.
    fn share_of(&self, index: usize, left: f64) -> f64 {
        left * self.parts[index].1 / sum(&self.parts[index..]).max(f64::MIN_POSITIVE)
    }

    /// The rule, said before anything is built: "budget: --time-budget 15m; each suite's
    /// share is taken as it starts from what is left, … (parts: lmdbjava 11, lmdb 2,
    /// concurrency 2), …".
    pub fn rule(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(s, p)| match self.given {
                true => format!("{} {}", name(*s), shown(Duration::from_secs_f64(*p))),
                false => format!("{} {p}", name(*s)),
            })
            .collect();
        let (whole, unit) = match self.given {
            true => (format!("--suite-budget, {} in all", shown(self.whole)), "as given"),
            false => (format!("--time-budget {}", shown(self.whole)), "parts"),
        };
        format!(
            "budget: {whole}; each suite's share is taken as it starts from what is left, in proportion to \
             its part among the suites still to run ({unit}: {}), so time one does not spend goes to those \
             after it; none gets less than planned",
            parts.join(", ")
        )
    }

    /// What the `index`-th suite is given when it starts after `spent`, and why:
    /// "budget 3m 10s (planned 2m): 2 of the 4 parts left, of 6m 20s left of 15m".
    pub fn given_at(&self, index: usize, spent: Duration) -> String {
        let (share, planned) = (self.share(index, spent), self.planned(index));
        let left = format!("{} left of {}", shown(self.whole.saturating_sub(spent)), shown(self.whole));
        if self.of_left(index, spent) < planned {
            return format!("budget {} (planned; its part of the {left} is less)", shown(share));
        }
        let rest = sum(&self.parts[index..]);
        let part = match self.given {
            true => format!(
                "its {} of the {} given to it and the suites after it",
                shown_f(self.parts[index].1),
                shown_f(rest)
            ),
            false => format!("{} of the {rest} parts left", self.parts[index].1),
        };
        format!("budget {} (planned {}): {part}, of {left}", shown(share), shown(planned))
    }
}

/// The parts of `parts` together.
fn sum(parts: &[(Suite, f64)]) -> f64 {
    parts.iter().map(|(_, p)| p).sum()
}

/// The suite as `--suite` names it.
pub fn name(suite: Suite) -> &'static str {
    SuiteChoice::one(suite).map_or(suite.name(), SuiteChoice::name)
}

/// A duration to the second, as `--time-budget` takes it ("2m 30s").
pub fn shown(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs_f64().round() as u64)).to_string()
}

fn shown_f(seconds: f64) -> String {
    shown(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Suite; 3] = [Suite::LmdbJava, Suite::Lmdb, Suite::Concurrency];

    fn min(m: u64) -> Duration {
        Duration::from_secs(60 * m)
    }

    fn runs(_: Suite) -> Option<String> {
        None
    }

    /// Planned, each suite takes its part of the whole; started late or early, its part of
    /// what is left, so what one does not spend goes to the suites after it in proportion.
    #[test]
    fn each_share_is_taken_from_what_is_left_when_the_suite_starts() {
        let b = Budgets::of(Some(min(15)), &[], &ALL, runs).unwrap().unwrap();
        let planned: Vec<u64> = (0..3).map(|i| b.planned(i).as_secs()).collect();
        assert_eq!(planned, [660, 120, 120]);
        assert_eq!(b.share(0, Duration::ZERO), min(11));
        // LmdbJava's six settled after 7 minutes: the 4 they left go 2:2 to the others.
        assert_eq!(b.share(1, min(7)), min(4));
        // The lmdb suite then spent 5 of its 4: concurrency takes what is left; had they
        // overspent, never less than planned.
        assert_eq!((b.share(2, min(12)), b.share(2, min(14)), b.share(2, min(16))), (min(3), min(2), min(2)));
        let said = b.given_at(1, min(7));
        assert_eq!(said, "budget 4m (planned 2m): 2 of the 4 parts left, of 8m left of 15m");
        let said = b.given_at(2, min(14));
        assert_eq!(said, "budget 2m (planned; its part of the 1m left of 15m is less)");
        assert!(b.rule().contains("(parts: lmdbjava 11, lmdb 2, concurrency 2)"), "{}", b.rule());
        // Two suites running share the whole in their parts.
        let two = Budgets::of(Some(min(13)), &[], &ALL[..2], runs).unwrap().unwrap();
        assert_eq!((two.planned(0), two.planned(1)), (min(11), min(2)));
        assert_eq!(Budgets::of(None, &[], &ALL, runs).unwrap(), None);
    }

    #[test]
    fn suite_budget_gives_each_suite_that_runs_its_own_and_adds_up() {
        let given: Vec<SuiteShare> =
            ["lmdbjava=9m", "lmdb=4m", "concurrency=2m"].iter().map(|s| parse_share(s).unwrap()).collect();
        let b = Budgets::of(None, &given, &ALL, runs).unwrap().unwrap();
        assert_eq!((b.whole(), b.planned(1), b.share(1, min(8))), (min(15), min(4), min(4) + Duration::from_secs(40)));
        assert_eq!(Budgets::of(Some(min(15)), &given, &ALL, runs).unwrap(), Some(b));
        let refused = |time: Option<Duration>, given: &[SuiteShare], running: &[Suite]| {
            let out = |s: Suite| (!running.contains(&s)).then(|| "--metric instructions".to_string());
            Budgets::of(time, given, running, out).unwrap_err().to_string()
        };
        let e = refused(Some(min(14)), &given, &ALL);
        assert_eq!(e, "--suite-budget adds up to 15m (lmdbjava 9m + lmdb 4m + concurrency 2m), not --time-budget 14m: give one of them, or make them agree");
        let e = refused(None, &given, &ALL[..2]);
        assert_eq!(e, "--suite-budget gives concurrency a budget, but it does not run: --metric instructions");
        let e = refused(None, &given[..2], &ALL);
        assert!(e.starts_with("--suite-budget gives concurrency no budget: give each suite"), "{e}");
        let e = refused(None, &[given[0], given[1], given[0]], &ALL);
        assert_eq!(e, "--suite-budget names lmdbjava twice");
        for (bad, why) in [
            ("all=2m", "\"all\" is no suite of --suite all"),
            ("tokyo=2m", "\"tokyo\" is no suite"),
            ("lmdb", "expected SUITE=DURATION"),
            ("lmdb=0s", "at least 1s"),
            ("lmdb=soon", "lmdb=soon:"),
        ] {
            let e = parse_share(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
