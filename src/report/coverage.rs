//! The run's own coverage in words: what its workloads executed of the lines that changed
//! from its baseline to its newest unit, as the Method section says it, and the finding
//! that qualifies every `same` with it.

use super::model::ReportModel;
use super::names::name;
use super::numbers::line_share;
use crate::record::CoverageOutcome;
use crate::stats::Verdict;

/// The Method section's line: the figure, or why the run has none.
pub fn method_line(m: &ReportModel) -> String {
    let Some(c) = &m.coverage else {
        return "Coverage: this run file records none (written before runs measured it); \
                lmdb-regress coverage BASELINE NEWEST measures it."
            .into();
    };
    match &c.outcome {
        CoverageOutcome::Measured { baseline, newest, workloads, entries, changed, mdb } => {
            let run: Vec<String> = workloads.iter().map(|w| w.to_string()).collect();
            let figure = match changed.percent() {
                Some(p) => format!(
                    "the workloads executed {p:.1}% ({} of {}) of the executable lines of mdb.c and midl.c \
                     that changed between {} and {}",
                    changed.executed,
                    changed.executable,
                    name(baseline),
                    name(newest)
                ),
                None => format!(
                    "no executable line of mdb.c or midl.c changed between {} and {}",
                    name(baseline),
                    name(newest)
                ),
            };
            format!(
                "Coverage: {figure}, and {} of {}'s mdb.c ({}, once each at {entries} entries on gcc -O0 \
                 --coverage builds, after the measured rounds). A same verdict speaks only for what ran; \
                 lmdb-regress coverage lists the changed functions never executed.",
                line_share(*mdb),
                name(newest),
                run.join(", ")
            )
        }
        CoverageOutcome::Skipped => "Coverage: not measured (--no-coverage): how much of what changed these \
                                     workloads execute is not known, so a same verdict may be of code that never ran."
            .into(),
        CoverageOutcome::NoWorkloads => "Coverage: none: this run's workloads are programs or a preset's, and the \
                                         coverage pass runs LmdbJava's six."
            .into(),
        CoverageOutcome::OneUnit => "Coverage: none: the run measured one unit, so nothing changed between two.".into(),
        CoverageOutcome::Failed { error } => format!("Coverage: not measured: {}.", error.trim_end_matches('.')),
    }
}

/// "same, over the 25.8% of changed lines these workloads execute": said once, when some
/// delta against the baseline is same and the figure was measured.
pub fn same_finding(m: &ReportModel) -> Option<String> {
    let Some(CoverageOutcome::Measured { baseline, newest, changed, .. }) = m.coverage.as_ref().map(|c| &c.outcome)
    else {
        return None;
    };
    let same = m.sections.iter().flat_map(|s| &s.vs_baseline).filter_map(|r| r.vs_baseline.as_ref());
    if !same.clone().any(|d| d.verdict() == Verdict::Same) {
        return None;
    }
    let p = changed.percent()?;
    Some(format!(
        "same is same over the {p:.1}% of changed lines these workloads execute ({} of {} executable lines of \
         mdb.c and midl.c changed between {} and {}); the rest never ran.",
        changed.executed,
        changed.executable,
        name(baseline),
        name(newest)
    ))
}
