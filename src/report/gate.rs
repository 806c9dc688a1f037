//! The regression gate (`--fail-on slower:2%`): which of a report's comparisons lie beyond
//! a threshold, judged by their intervals, never by the point estimate. It reads the
//! comparisons the report models made and computes no statistic of its own: time fails
//! only when the whole interval lies above the threshold, an exact count when every
//! repetition rose by more than it. A comparison whose interval straddles the threshold is
//! a warning, with the rounds that would decide it.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::cells;
use super::compare::Comparisons;
use super::history::History;
use super::model::ReportModel;
use crate::record::{Engine, Label, Metric};
use crate::stats::{project, Comparison, Method};
use crate::workload::Workload;

/// `--fail-on slower:PCT%`: a slowdown beyond this fraction fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FailOn {
    /// As a fraction: 0.02 is 2%.
    pub slower_than: f64,
}

impl FailOn {
    /// The ratio a comparison's interval must lie wholly above to fail.
    fn limit(self) -> f64 {
        1.0 + self.slower_than
    }
}

impl fmt::Display for FailOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // 2% as "2%", 0.5% as "0.5%": the value as it was given.
        write!(f, "slower:{}%", (self.slower_than * 100.0 * 1e9).round() / 1e9)
    }
}

/// Why `--fail-on` refused its value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FailOnError {
    #[error("{0:?} is not DIRECTION:PCT% (e.g. slower:2%)")]
    Shape(String),
    #[error(
        "{0:?}: the gate fails on regressions only, and a change faster than the baseline is none; give slower:PCT%"
    )]
    Faster(String),
    #[error("{0:?}: unknown direction {1:?}; the gate takes slower:PCT% (e.g. slower:2%)")]
    Direction(String, String),
    #[error("{0:?}: the threshold needs its percent sign (slower:{1}%)")]
    NoPercent(String, String),
    #[error("{0:?}: {1:?} is not a percentage (e.g. slower:2%)")]
    NotANumber(String, String),
    #[error("{0:?}: the threshold must be a finite percentage of 0 or more")]
    OutOfRange(String),
}

impl FromStr for FailOn {
    type Err = FailOnError;

    fn from_str(s: &str) -> Result<FailOn, FailOnError> {
        let given = || s.to_string();
        let (direction, threshold) = s.split_once(':').ok_or_else(|| FailOnError::Shape(given()))?;
        match direction.trim() {
            "slower" => {}
            "faster" => return Err(FailOnError::Faster(given())),
            other => return Err(FailOnError::Direction(given(), other.to_string())),
        }
        let threshold = threshold.trim();
        let Some(number) = threshold.strip_suffix('%') else {
            return Err(match threshold.parse::<f64>() {
                Ok(_) => FailOnError::NoPercent(given(), threshold.to_string()),
                Err(_) => FailOnError::NotANumber(given(), threshold.to_string()),
            });
        };
        let pct: f64 = number.trim().parse().map_err(|_| FailOnError::NotANumber(given(), number.to_string()))?;
        if !pct.is_finite() || pct < 0.0 {
            return Err(FailOnError::OutOfRange(given()));
        }
        Ok(FailOn { slower_than: pct / 100.0 })
    }
}

/// What was compared: one tag (or commit) against another in one section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    pub engine: Engine,
    pub workload: Workload,
    #[serde(serialize_with = "crate::record::label::as_text")]
    pub tag: Label,
    pub against: Against,
}

/// What a tag was compared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    /// Another tag or commit of the same run: the baseline, or the commit before.
    Tag(String),
    /// The same tag in an earlier run (`compare OLD NEW`).
    OldRun,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}) {}", self.workload.name(), self.engine, self.tag)?;
        match &self.against {
            Against::Tag(t) => write!(f, " against {t}"),
            Against::OldRun => f.write_str(", new run against old"),
        }
    }
}

/// Where one comparison stands against the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "judgement")]
pub enum Judgement {
    /// The whole interval lies above the threshold.
    Beyond,
    /// The interval reaches past the threshold and below it: not decided.
    Undecided {
        /// Rounds at which the interval, narrowing as 1/√rounds about its estimate, would
        /// no longer straddle the threshold; None when rounds cannot decide it (counts,
        /// or an estimate on the threshold itself).
        rounds: Option<usize>,
    },
    /// The whole interval lies at or below the threshold.
    Within,
    /// Beyond the threshold in its run, but not in the second, independent run that
    /// measured it again (`--confirm`): not counted.
    Unconfirmed,
}

/// One comparison, judged.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub subject: Subject,
    pub metric: Metric,
    pub comparison: Comparison,
    pub judgement: Judgement,
    /// The same comparison in the second run that measured it again (`--confirm`).
    pub again: Option<Comparison>,
}

/// A report's comparisons against the gate.
#[derive(Debug, Clone, Serialize)]
pub struct GateOutcome {
    pub fail_on: FailOn,
    pub checks: Vec<GateCheck>,
    /// What was asked for and not measured, so not judged: each with why.
    pub not_judged: Vec<NotJudged>,
    /// Built tags a section holds no comparison of (a unit that crashed, failed its checksum
    /// or lost every sample of a workload): named, never passed over in silence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsampled: Vec<String>,
    /// Units of one name that are different patches in two compared runs: measured, but
    /// kept apart, so not judged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apart: Vec<NotJudged>,
    /// The baseline every comparison is made against, where there is one (a run's report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

/// A unit asked for and not measured: its name, and why (a build's first line of failure).
#[derive(Debug, Clone, Serialize)]
pub struct NotJudged {
    pub unit: String,
    pub why: String,
}

/// The units not judged, grouped by their reason in the order first met: "LMDB_0.9.19,
/// LMDB_0.9.20 (why)", so that a long reason shared by many is said once.
pub fn not_judged_lines(not_judged: &[NotJudged]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for n in not_judged {
        match groups.iter_mut().find(|(why, _)| *why == n.why) {
            Some((_, units)) => units.push(&n.unit),
            None => groups.push((&n.why, vec![&n.unit])),
        }
    }
    groups.into_iter().map(|(why, units)| format!("{} ({why})", units.join(", "))).collect()
}

/// The gate found a regression beyond its threshold: the exit status is 3.
#[derive(Debug, thiserror::Error)]
#[error("regression beyond the gate {fail_on}: {failed} of {} beyond it (listed above)", cells::plural(*.checked, "comparison"))]
pub struct GateFailed {
    pub fail_on: FailOn,
    pub failed: usize,
    pub checked: usize,
}

/// "time +10.1% [+9.7%, +10.6%]".
pub fn figures(metric: Metric, c: &Comparison) -> String {
    format!("{} {} {}", metric.name(), cells::delta(c), cells::interval(c))
}

/// Where `c` stands against `fail_on`.
pub fn judge(c: &Comparison, fail_on: FailOn) -> Judgement {
    let limit = fail_on.limit();
    let Some(ci) = c.ci else {
        // Too few rounds for an interval at the family's level: nothing is excluded.
        return Judgement::Undecided { rounds: None };
    };
    if ci.lo > limit {
        Judgement::Beyond
    } else if ci.hi > limit {
        Judgement::Undecided { rounds: rounds_to_decide(c, limit) }
    } else {
        Judgement::Within
    }
}

/// The rounds after which an interval of this width about this estimate would lie wholly on
/// one side of `limit`. Counts repeat exactly: more of them decide nothing.
fn rounds_to_decide(c: &Comparison, limit: f64) -> Option<usize> {
    if c.method == Method::Counts {
        return None;
    }
    let distance = (c.ratio / limit).ln().abs().exp() - 1.0;
    project::rounds_to_reach(c.half_width()?, c.n, distance)
}

impl GateOutcome {
    fn new(fail_on: FailOn, compared: impl IntoIterator<Item = (Subject, Metric, Comparison)>) -> GateOutcome {
        let checks = compared
            .into_iter()
            .map(|(subject, metric, comparison)| GateCheck {
                judgement: judge(&comparison, fail_on),
                subject,
                metric,
                comparison,
                again: None,
            })
            .collect();
        GateOutcome { fail_on, checks, not_judged: Vec::new(), unsampled: Vec::new(), apart: Vec::new(), against: None }
    }

    fn not_judged(self, not_judged: Vec<NotJudged>) -> GateOutcome {
        GateOutcome { not_judged, ..self }
    }

    /// This outcome with each failure judged again by `again`, the gate over a second,
    /// independent run of the failing comparisons: a failure stands only when both runs
    /// fail it; one the second run does not repeat becomes a warning.
    pub fn confirmed_by(&self, again: &GateOutcome) -> GateOutcome {
        let checks = self
            .checks
            .iter()
            .map(|c| {
                if c.judgement != Judgement::Beyond {
                    return c.clone();
                }
                let second = again.checks.iter().find(|a| a.subject == c.subject && a.metric == c.metric);
                let judgement = match second {
                    Some(a) if a.judgement == Judgement::Beyond => Judgement::Beyond,
                    _ => Judgement::Unconfirmed,
                };
                GateCheck { judgement, again: second.map(|a| a.comparison), ..c.clone() }
            })
            .collect();
        GateOutcome { checks, ..self.clone() }
    }

    /// The subjects of the failures, each once.
    pub fn failed_subjects(&self) -> Vec<&Subject> {
        let mut out: Vec<&Subject> = Vec::new();
        for c in self.failed() {
            if !out.contains(&&c.subject) {
                out.push(&c.subject);
            }
        }
        out
    }

    pub fn failed(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks.iter().filter(|c| c.judgement == Judgement::Beyond)
    }

    pub fn warned(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks.iter().filter(|c| matches!(c.judgement, Judgement::Undecided { .. } | Judgement::Unconfirmed))
    }

    /// The gate's verdict first, then a line per failure and per warning.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.verdict()];
        out.extend(self.against.iter().map(|b| format!("baseline: {b}, which every comparison is made against")));
        out.extend(self.failed().map(|c| format!("failed: {}", self.describe(c))));
        out.extend(self.warned().map(|c| format!("warning: {}", self.describe(c))));
        let not_judged = [not_judged_lines(&self.not_judged), not_judged_lines(&self.apart)].concat();
        out.extend(not_judged.into_iter().map(|n| format!("not judged: {n}")));
        out.extend(self.unsampled.iter().map(|n| format!("not judged: {n}")));
        out
    }

    /// "gate slower:2%: FAILED, 6 of 16 comparisons beyond it; 2 warnings".
    pub fn verdict(&self) -> String {
        let of = cells::plural(self.checks.len(), "comparison");
        let mut head = match self.failed().count() {
            0 => format!("gate {}: passed, none of {of} beyond it", self.fail_on),
            n => format!("gate {}: FAILED, {n} of {of} beyond it", self.fail_on),
        };
        let warned = self.warned().count();
        if warned > 0 {
            head += &format!("; {}", cells::plural(warned, "warning"));
        }
        if !self.not_judged.is_empty() {
            head += &format!("; {} not measured, so not judged", cells::plural(self.not_judged.len(), "tag"));
        }
        if !self.apart.is_empty() {
            let n = cells::plural(self.apart.len(), "unit");
            head += &format!("; {n} a different patch in each run, kept apart, so not judged");
        }
        if !self.unsampled.is_empty() {
            let n = cells::plural(self.unsampled.len(), "workload");
            head += &format!("; {n} of built tags without a comparison, so not judged");
        }
        head
    }

    /// "write (rust) LMDB_0.9.21 against LMDB_0.9.17: time +10.1% [+9.7%, +10.6%], the whole
    /// interval above +2.0%".
    fn describe(&self, c: &GateCheck) -> String {
        format!("{}: {}, {}", c.subject, figures(c.metric, &c.comparison), self.reason(c))
    }

    /// Why a check stands where it does against the gate, in words.
    pub fn reason(&self, c: &GateCheck) -> String {
        let limit = cells::percent(100.0 * self.fail_on.slower_than);
        let again = c.again.as_ref().map(|x| figures(c.metric, x));
        match c.judgement {
            Judgement::Unconfirmed => format!(
                "beyond {limit} in the first run, but not in the second that measured it again ({}): not counted",
                again.as_deref().unwrap_or("not measured there")
            ),
            Judgement::Beyond if again.is_some() => {
                format!("beyond {limit} in both runs (the second: {})", again.as_deref().unwrap_or_default())
            }
            Judgement::Beyond if c.metric.is_exact() => format!("every count above {limit}"),
            Judgement::Beyond => format!("the whole interval above {limit}"),
            Judgement::Within => format!("within {limit}"),
            Judgement::Undecided { .. } if c.comparison.ci.is_none() => {
                format!("undecided against {limit}: too few rounds ({}) for an interval at this level", c.comparison.n)
            }
            Judgement::Undecided { .. } if c.metric.is_exact() => {
                format!("undecided against {limit}: the counts vary across it, so they are not deterministic")
            }
            Judgement::Undecided { rounds: Some(r) } => format!(
                "the interval reaches past {limit}: about {} would decide it (this comparison has {})",
                cells::plural(r, "round"),
                c.comparison.n
            ),
            Judgement::Undecided { rounds: None } => {
                format!("the interval reaches past {limit}, its estimate on it: no number of rounds decides it")
            }
        }
    }

    /// Ok when nothing lies beyond the gate; an error when it judged nothing at all, which
    /// is no pass.
    pub fn result(&self) -> anyhow::Result<()> {
        if self.checks.is_empty() {
            anyhow::bail!("the gate {} judged no comparison: the run compared no two tags", self.fail_on);
        }
        match self.failed().count() {
            0 => Ok(()),
            n => Err(GateFailed { fail_on: self.fail_on, failed: n, checked: self.checks.len() }.into()),
        }
    }

    /// Writes the gate's lines to stderr (stdout holds the report), then its result.
    pub fn conclude(&self) -> anyhow::Result<()> {
        for line in self.lines() {
            eprintln!("{line}");
        }
        self.result()
    }
}

/// Every tag against the baseline, in the report's metric, and its instruction count
/// beside time when counted: what `run`, `report` and `its-10406` gate on.
pub fn of_report(m: &ReportModel, fail_on: FailOn) -> GateOutcome {
    let metric = m.unit.metric;
    let compared = m.sections.iter().flat_map(|s| {
        s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).flat_map(move |d| {
            let subject = Subject {
                engine: s.engine,
                workload: s.workload,
                tag: d.tag.clone(),
                against: Against::Tag(d.against.to_string()),
            };
            let counts = d.counts.iter().map(|(m, i)| (subject.clone(), *m, *i)).collect::<Vec<_>>();
            std::iter::once((subject, metric, d.comparison)).chain(counts)
        })
    });
    let not_measured = super::model::unmeasured(m).into_iter().map(|t| {
        let why = t.reason.as_deref().and_then(|r| r.lines().next()).unwrap_or("not built");
        NotJudged { unit: t.label.to_string(), why: why.to_string() }
    });
    let outcome = GateOutcome::new(fail_on, compared).not_judged(not_measured.collect());
    GateOutcome { unsampled: unsampled(m), against: Some(m.baseline.clone()), ..outcome }
}

/// Each built tag and section (engine, workload) with no comparison against the baseline
/// at any of its axes' values (reader counts, sync modes, memory limits), and why where the
/// report knows it: its worker died.
fn unsampled(m: &ReportModel) -> Vec<String> {
    let baseline = Label::build(&m.baseline, None);
    let built = m.tags.iter().filter(|t| t.status == crate::record::BuildStatus::Built && t.label != baseline);
    let mut out = Vec::new();
    for t in built {
        for s in &m.sections {
            if s.vs_baseline.iter().any(|r| r.tag.built() == t.label && r.vs_baseline.is_some()) {
                continue;
            }
            let at = |d: &&super::model::DiedRow| (d.engine, d.workload) == (s.engine, s.workload);
            let died = m.died.iter().filter(at).find(|d| d.unit.built() == t.label);
            let why = died.map(|d| format!(": its worker died ({})", d.how)).unwrap_or_default();
            out.push(format!("{} {} ({}): no comparison against the baseline{why}", t.label, s.workload, s.engine));
        }
    }
    out
}

/// Every row of `compare OLD NEW`: the new run's tag against the old run's.
pub fn of_compare(c: &Comparisons, fail_on: FailOn) -> GateOutcome {
    let compared = c.rows.iter().map(|r| {
        let subject = Subject { engine: r.engine, workload: r.workload, tag: r.tag.clone(), against: Against::OldRun };
        (subject, c.metric, r.change)
    });
    let apart =
        c.apart.iter().map(|a| NotJudged { unit: a.tag.to_string(), why: "a different patch in each run".into() });
    GateOutcome { apart: apart.collect(), ..GateOutcome::new(fail_on, compared) }
}

/// Every measured commit of a history against the one before it, in its metric and in
/// instructions beside time; `gated` picks the commits judged (`history --extend`: the new
/// ones).
pub fn of_history(h: &History, fail_on: FailOn, gated: impl Fn(&str) -> bool) -> GateOutcome {
    let metric = h.metric;
    let short = |c: &str| c[..c.len().min(10)].to_string();
    let compared = h.series.iter().flat_map(|s| {
        s.changes.iter().filter(|c| gated(&c.commit)).flat_map(move |c| {
            let subject = Subject {
                engine: s.engine,
                workload: s.workload,
                tag: Label::build(&short(&c.commit), None),
                against: Against::Tag(short(&c.after)),
            };
            let counts = c.counts.iter().map(|(m, i)| (subject.clone(), *m, *i)).collect::<Vec<_>>();
            std::iter::once((subject, metric, c.comparison)).chain(counts)
        })
    });
    let skipped = h
        .points
        .iter()
        .filter(|p| gated(&p.commit))
        .filter_map(|p| p.skipped.as_ref().map(|why| NotJudged { unit: short(&p.commit), why: why.clone() }));
    let skipped: Vec<NotJudged> = skipped.collect();
    GateOutcome::new(fail_on, compared).not_judged(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Interval;

    fn time(lo: f64, hi: f64, n: usize) -> Comparison {
        let ci = Some(Interval { lo, hi });
        let ratio = (lo * hi).sqrt();
        Comparison {
            ratio,
            ci,
            confidence: 0.95,
            n,
            method: Method::Paired,
            verdict: crate::stats::ratio::judge(ci, 0.02),
        }
    }

    fn gate(s: &str) -> FailOn {
        s.parse().unwrap()
    }

    #[test]
    fn thresholds_parse_and_say_what_is_wrong() {
        assert_eq!(gate("slower:2%").slower_than, 0.02);
        assert_eq!(gate("slower:0.5%").to_string(), "slower:0.5%");
        assert_eq!(gate("slower:2%").to_string(), "slower:2%");
        assert_eq!(gate("slower:0%").slower_than, 0.0);
        let err = |s: &str| s.parse::<FailOn>().unwrap_err();
        assert_eq!(err("slower:abc"), FailOnError::NotANumber("slower:abc".into(), "abc".into()));
        assert_eq!(err("slower:abc%"), FailOnError::NotANumber("slower:abc%".into(), "abc".into()));
        assert_eq!(err("slower:2"), FailOnError::NoPercent("slower:2".into(), "2".into()));
        assert_eq!(err("faster:2%"), FailOnError::Faster("faster:2%".into()));
        assert_eq!(err("slowr:2%"), FailOnError::Direction("slowr:2%".into(), "slowr".into()));
        assert_eq!(err("2%"), FailOnError::Shape("2%".into()));
        assert_eq!(err("slower:-1%"), FailOnError::OutOfRange("slower:-1%".into()));
        assert_eq!(err("slower:inf%"), FailOnError::OutOfRange("slower:inf%".into()));
        assert!(err("slower:2").to_string().contains("slower:2%"), "{}", err("slower:2"));
    }

    #[test]
    fn the_interval_decides_not_the_estimate() {
        let g = gate("slower:2%");
        assert_eq!(judge(&time(1.021, 1.08, 20), g), Judgement::Beyond);
        // An estimate of +5% whose interval reaches below +2% does not fail.
        assert!(matches!(judge(&time(1.019, 1.08, 20), g), Judgement::Undecided { rounds: Some(_) }));
        assert_eq!(judge(&time(1.001, 1.019, 20), g), Judgement::Within);
        assert_eq!(judge(&time(0.9, 0.95, 20), g), Judgement::Within);
        let no_interval = Comparison { ci: None, ..time(1.1, 1.2, 3) };
        assert_eq!(judge(&no_interval, g), Judgement::Undecided { rounds: None });
    }

    #[test]
    fn counts_fail_when_every_repetition_rose_beyond_the_threshold() {
        let g = gate("slower:2%");
        let counts = |a: &[f64], b: &[f64]| crate::stats::ratio::counts(a, b, 0.005).unwrap();
        assert_eq!(judge(&counts(&[1000.0], &[1021.0]), g), Judgement::Beyond);
        assert_eq!(judge(&counts(&[1000.0], &[1019.0]), g), Judgement::Within);
        assert_eq!(judge(&counts(&[1000.0, 1000.0], &[1010.0, 1030.0]), g), Judgement::Undecided { rounds: None });
    }

    #[test]
    fn a_failure_stands_only_when_the_second_run_repeats_it() {
        let g = gate("slower:2%");
        let subject = |tag: &str| Subject {
            engine: Engine::Rust,
            workload: Workload::Write,
            tag: Label::build(tag, None),
            against: Against::Tag("LMDB_0.9.17".into()),
        };
        let first = GateOutcome::new(
            g,
            [
                (subject("LMDB_0.9.21"), Metric::Time, time(1.05, 1.08, 20)),
                (subject("LMDB_0.9.22"), Metric::Time, time(1.05, 1.08, 20)),
                (subject("LMDB_0.9.23"), Metric::Time, time(0.99, 1.01, 20)),
            ],
        );
        assert_eq!(first.failed_subjects().len(), 2);
        // The second run measures only what failed: one repeats, one does not.
        let again = GateOutcome::new(
            g,
            [
                (subject("LMDB_0.9.21"), Metric::Time, time(1.04, 1.07, 20)),
                (subject("LMDB_0.9.22"), Metric::Time, time(0.99, 1.01, 20)),
            ],
        );
        let both = first.confirmed_by(&again);
        let judged: Vec<Judgement> = both.checks.iter().map(|c| c.judgement).collect();
        assert_eq!(judged, [Judgement::Beyond, Judgement::Unconfirmed, Judgement::Within]);
        assert_eq!(both.failed().count(), 1);
        assert_eq!(both.warned().count(), 1);
        assert!(both.lines()[2].contains("not in the second that measured it again (time"), "{:?}", both.lines());
        // A second run that lacks the comparison confirms nothing.
        let none = first.confirmed_by(&GateOutcome::new(g, []));
        assert_eq!(none.failed().count(), 0);
        assert!(none.result().is_ok());
    }

    #[test]
    fn the_rounds_that_decide_narrow_the_interval_to_the_distance_from_the_threshold() {
        let g = gate("slower:2%");
        // Estimate +4% over 20 rounds, about ±3% wide: it must narrow to the 2% between
        // the estimate and the threshold, (3/2)² × 20 rounds.
        let c = time(1.04 / 1.03, 1.04 * 1.03, 20);
        let Judgement::Undecided { rounds: Some(r) } = judge(&c, g) else { panic!("{:?}", judge(&c, g)) };
        let distance = 1.04 / 1.02 - 1.0;
        let want = project::rounds_to_reach(c.half_width().unwrap(), 20, distance).unwrap();
        assert_eq!(r, want);
        assert!((40..=50).contains(&r), "{r}");
    }
}
