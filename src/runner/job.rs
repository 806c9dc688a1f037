//! The plain data a schedule hands around: one worker invocation (`Job`), what a finished
//! schedule says (`Outcome`), a caller's stop condition (`StopWhen`), and the process-wide
//! Ctrl-C flag every stage of a run checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::runfile::{End, Sample};
use super::Unit;
use crate::workload::Workload;

/// What a finished (or stopped) schedule says.
pub struct Outcome {
    pub end: End,
}

/// A caller's stop condition, checked after every measured round: true ends the run.
pub type StopWhen<'a> = dyn Fn(&[Sample]) -> bool + Sync + 'a;

/// One worker invocation: a unit and the workloads it runs in that process.
pub(super) struct Job<'u> {
    pub unit: &'u Unit,
    pub batch: Vec<Workload>,
}

/// A process-wide Ctrl-C flag: the first Ctrl-C stops the run (or the builds) after
/// saving; workers die with the signal and their partial round is not recorded as a
/// failure. A second Ctrl-C ends the process at once.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        let g = f.clone();
        let _ = ctrlc::set_handler(move || {
            if g.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
        f
    })
    .clone()
}

/// Whether Ctrl-C has stopped the run.
pub(super) fn interrupted() -> bool {
    interrupt_flag().load(Ordering::SeqCst)
}
