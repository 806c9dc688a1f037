//! What a run established, for the summary every report opens with: the resolved
//! differences against the baseline (consecutive tags sharing one step as one), what time
//! left open and the rounds that would close it, and what failed. Computed from the
//! model's sections, once per document; formats put it in words.

use serde::Serialize;

use super::model::{unmeasured, Delta, ReportModel, Section};
use crate::record::{Engine, Label};
use crate::stats::{self, Verdict};
use crate::workload::Workload;

/// What the run established, for the summary every report opens with: the resolved
/// differences against the baseline, what time left open and what would close it, and
/// what failed. Computed from the sections; formats put it in words.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Findings {
    /// Resolved differences against the baseline, section by section in release order;
    /// consecutive tags that share one step are one.
    pub steps: Vec<TagStep>,
    /// Sections where time left differences against the baseline unresolved.
    pub unresolved: Vec<Unresolved>,
    /// Seconds a round took in this run, wall time (read databases and warm-up included):
    /// what more rounds would cost.
    pub seconds_per_round: Option<f64>,
    /// Failure records of the run (workers, layouts, read databases, verification).
    pub failures: usize,
    pub checksum_mismatches: usize,
    /// Checks the run made about itself that failed.
    pub failed_checks: usize,
    /// Tags asked for and not measured.
    pub not_measured: Vec<String>,
}

/// What resolved a step: an instruction count (time beside it), or time alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepBy {
    Instructions,
    Time,
}

/// One difference against the baseline, shared by consecutive tags.
#[derive(Debug, Clone, Serialize)]
pub struct TagStep {
    pub engine: Engine,
    pub workload: Workload,
    pub by: StepBy,
    /// Each tag that shares it against the baseline, in release order: the first is where
    /// the run first sees it.
    pub deltas: Vec<Delta>,
    /// Whether the last of them is the last tag of its series in the section: the step
    /// holds from the first on.
    pub to_last: bool,
    /// Tags the run asked for and did not measure between the tag before the first and the
    /// first: the step may lie among them.
    pub not_measured: Vec<String>,
}

impl TagStep {
    pub fn first(&self) -> &Delta {
        &self.deltas[0]
    }

    pub fn last(&self) -> &Delta {
        &self.deltas[self.deltas.len() - 1]
    }
}

/// A section whose time left differences against the baseline unresolved.
#[derive(Debug, Clone, Serialize)]
pub struct Unresolved {
    pub engine: Engine,
    pub workload: Workload,
    /// Inconclusive deltas against the baseline, of how many.
    pub inconclusive: usize,
    pub of: usize,
    /// The section's resolution, after `rounds`.
    pub resolution: Option<f64>,
    pub rounds: usize,
    /// Rounds at which the typical interval would narrow to ±min-effect, so that a
    /// difference of that size is told from none; None without an interval to project.
    pub rounds_to_resolve: Option<usize>,
    /// Rounds every interval of the section needs before it exists at its level.
    pub rounds_for_intervals: usize,
}

impl Findings {
    pub fn of(m: &ReportModel) -> Findings {
        let mut steps = Vec::new();
        let mut unresolved = Vec::new();
        for s in &m.sections {
            steps.extend(steps_of(m, s));
            unresolved.extend(unresolved_of(m, s));
        }
        Findings {
            steps,
            unresolved,
            seconds_per_round: m.end.as_ref().and_then(|e| {
                let rounds = e.rounds + m.plan.warmup;
                e.wall_s.filter(|_| rounds > 0).map(|w| w / rounds as f64)
            }),
            failures: m.failures.len(),
            checksum_mismatches: m.sections.iter().map(|s| s.checksum_mismatches.len()).sum(),
            failed_checks: m.checks.iter().filter(|c| !c.passed).count(),
            not_measured: unmeasured(m).into_iter().map(|t| t.label.to_string()).collect(),
        }
    }

    /// Whether the run resolved any difference at all.
    pub fn any(&self) -> bool {
        !self.steps.is_empty()
    }
}

/// What a delta against the baseline resolved, as the key that tells steps apart: the
/// count's direction and ratio when instructions moved, else time's direction.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Resolved {
    Instructions(Verdict, f64),
    Time(Verdict, bool),
}

fn resolved(m: &ReportModel, d: &Delta) -> Option<Resolved> {
    let counts = if m.rule.counts { Some(&d.comparison) } else { d.instructions() };
    match counts.filter(|c| c.verdict.is_change()) {
        Some(c) => Some(Resolved::Instructions(c.verdict, c.ratio)),
        None => d.verdict().is_change().then_some(Resolved::Time(d.verdict(), d.time_only)),
    }
}

/// Whether `next` shares the step `first` began: the same direction, and for counts the
/// same ratio within the count tolerance.
fn same_step(m: &ReportModel, first: Resolved, next: Resolved) -> bool {
    match (first, next) {
        (Resolved::Instructions(v, a), Resolved::Instructions(w, b)) => {
            v == w && (b / a - 1.0).abs() <= m.rule.count_tolerance
        }
        (a, b) => a == b,
    }
}

/// Which series a label's steps run along: a release tag's toolchain (release tags of one
/// toolchain follow each other); None for commits and layouts, whose order says nothing,
/// so that each of them stands alone.
fn series(l: &Label) -> Option<Option<String>> {
    (l.version().is_some() && l.layout.is_none()).then(|| l.compared_as().1.map(String::from))
}

/// A section's resolved differences against the baseline, grouped where consecutive tags
/// of one series share one step.
fn steps_of(m: &ReportModel, s: &Section) -> Vec<TagStep> {
    let rows: Vec<&Delta> = s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).collect();
    let mut lines: Vec<(Option<Option<String>>, Vec<&Delta>)> = Vec::new();
    for d in &rows {
        let key = series(&d.tag);
        match lines.iter_mut().find(|(k, _)| k.is_some() && *k == key) {
            Some((_, line)) => line.push(d),
            None => lines.push((key, vec![d])),
        }
    }
    let mut steps = Vec::new();
    for (_, line) in lines {
        // (what resolved it, first index, last index) along the line.
        let mut runs: Vec<(Resolved, usize, usize)> = Vec::new();
        for (i, d) in line.iter().enumerate() {
            let Some(key) = resolved(m, d) else { continue };
            match runs.last_mut() {
                Some((first, _, last)) if *last + 1 == i && same_step(m, *first, key) => *last = i,
                _ => runs.push((key, i, i)),
            }
        }
        steps.extend(runs.into_iter().map(|(key, a, b)| TagStep {
            engine: s.engine,
            workload: s.workload,
            by: if matches!(key, Resolved::Instructions(..)) { StepBy::Instructions } else { StepBy::Time },
            deltas: line[a..=b].iter().map(|d| (*d).clone()).collect(),
            to_last: b + 1 == line.len(),
            not_measured: not_measured_before(m, s, &line[a].tag),
        }));
    }
    steps
}

/// The tags of `tag`'s series the run asked for and the section lacks, between the
/// section's tag before `tag` and `tag`.
fn not_measured_before(m: &ReportModel, s: &Section, tag: &Label) -> Vec<String> {
    let key = series(tag);
    if key.is_none() {
        return Vec::new();
    }
    let order: Vec<&Label> = m.tags.iter().map(|t| &t.label).filter(|t| series(t) == key).collect();
    let Some(at) = order.iter().position(|t| *t == tag) else { return Vec::new() };
    let measured = |t: &Label| s.vs_baseline.iter().any(|r| r.tag == *t);
    let after = order[..at].iter().rposition(|t| measured(t)).map_or(0, |i| i + 1);
    order[after..at].iter().map(|t| t.to_string()).collect()
}

/// A time section whose deltas against the baseline are not all decided.
fn unresolved_of(m: &ReportModel, s: &Section) -> Option<Unresolved> {
    if m.rule.counts {
        return None;
    }
    let deltas: Vec<&Delta> = s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).collect();
    let inconclusive = deltas.iter().filter(|d| d.verdict() == Verdict::Inconclusive).count();
    if inconclusive == 0 {
        return None;
    }
    let projected = s.resolution.and_then(|r| stats::project::rounds_to_reach(r, s.rounds, m.rule.min_effect));
    // Intervals that are n/a need their rounds first, whatever the projection; without
    // an interval nothing projects how many more would resolve ±min-effect.
    let needed = s.rounds_needed.all();
    Some(Unresolved {
        engine: s.engine,
        workload: s.workload,
        inconclusive,
        of: deltas.len(),
        resolution: s.resolution,
        rounds: s.rounds,
        rounds_to_resolve: projected.map(|p| p.max(needed)),
        rounds_for_intervals: needed,
    })
}
