//! The plain data a schedule hands around: one worker invocation (`Job`), what a finished
//! schedule says (`ScheduleOutcome`), a caller's stop condition (`StopWhen`), and the process-wide
//! Ctrl-C flag every stage of a run checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{Label, Unit};
use crate::record::{End, Phase, Sample};
use crate::workload::Workload;

/// What a finished (or stopped) schedule says.
pub struct ScheduleOutcome {
    pub end: End,
    /// The phase Ctrl-C stopped, if it did.
    pub stopped: Option<Phase>,
}

/// What a command was doing when Ctrl-C stopped it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    Building,
    Run(Phase),
    Search(SearchStep),
    Writing,
}

/// A step of a command that searches (bisect, explain): what it measured or narrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchStep {
    /// Profiling the units under callgrind.
    Profiling,
    /// Measuring the two ends, to confirm the change before searching between them.
    Confirming { good: Label, bad: Label },
    /// Measuring one candidate against the ends.
    Measuring(Label),
    /// One phase of a bisection.
    Narrowing(SearchPhase),
}

/// What a search phase narrows: releases first, then the commits between two of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchPhase {
    Tags,
    Commits,
}

impl SearchPhase {
    /// Its candidates, as a chart's axis describes them.
    pub fn candidates(self) -> &'static str {
        match self {
            SearchPhase::Tags => "LMDB tag, in release order",
            SearchPhase::Commits => "commit, in commit order",
        }
    }
}

impl std::fmt::Display for SearchPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchPhase::Tags => "tags",
            SearchPhase::Commits => "commits",
        })
    }
}

impl std::fmt::Display for SearchStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchStep::Profiling => f.write_str("profiling"),
            SearchStep::Confirming { good, bad } => write!(f, "confirming {good} → {bad}"),
            SearchStep::Measuring(label) => write!(f, "measuring {label}"),
            SearchStep::Narrowing(phase) => write!(f, "searching the {phase}"),
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Building => f.write_str("while building"),
            Stage::Run(phase) => write!(f, "during {phase}"),
            Stage::Search(what) => write!(f, "while {what}"),
            Stage::Writing => f.write_str("while writing"),
        }
    }
}

/// Ctrl-C ended a stage of the command: what it had done by then, and how to go on. The
/// command exits with status 130, as a shell reports a process ended by SIGINT.
#[derive(Debug, thiserror::Error)]
#[error("interrupted {stage}: {then}")]
pub struct Interrupted {
    pub stage: Stage,
    pub then: String,
}

/// A caller's stop condition, checked after every measured round: true ends the run.
pub type StopWhen<'a> = dyn Fn(&[Sample]) -> bool + Sync + 'a;

/// One worker invocation: a unit and the workloads it runs in that process.
#[derive(Clone)]
pub(super) struct Job<'u> {
    pub unit: &'u Unit,
    pub batch: Vec<Workload>,
}

/// A process-wide Ctrl-C flag: the first Ctrl-C stops the run (or the builds) after
/// saving; workers (and compilers) get the signal too and die with it, and their partial
/// round is not recorded as a failure. A second Ctrl-C ends the process at once.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        let g = f.clone();
        let _ = ctrlc::set_handler(move || {
            if g.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            // Workers and compilers are outside the terminal's group (`crate::children`).
            crate::children::interrupt();
        });
        f
    })
    .clone()
}

/// Whether Ctrl-C has stopped the run.
pub fn interrupted() -> bool {
    interrupt_flag().load(Ordering::SeqCst)
}
