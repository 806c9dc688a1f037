//! The run record: the run file's types (`schema`), how a file of any schema is read
//! (`reader`: the one upgrader and the rules) and written (`writer`), what a cut-off run
//! has left to do (`resume`), and the values it names units and figures by (`label`,
//! `metric`). It sits below the runner and the statistics, so both read the same record
//! and neither owns it.

pub mod label;
pub mod metric;
pub mod plan;
pub mod reader;
pub mod resume;
pub mod schema;
pub mod writer;

#[cfg(test)]
pub(crate) mod fixtures;

pub use label::{Base, Label};
pub use metric::{Counts, Event, Metric};
pub use plan::{
    Adaptive, Closing, Figure, FigureUnit, LayoutStudy, Layouts, Pairing, Plan, ProgramRecord, ReferenceLayouts, Shard,
    Stopping, Target, COUNT_TOLERANCE, MAX_REFERENCE_LAYOUTS, MIN_EFFECT,
};
pub use reader::{load, RunData};
pub use resume::{counts_taken, Phase};
pub use schema::{
    BuildStatus, CheckKind, CoverageOutcome, Declared, End, EndReason, Engine, Failure, FailureCause, FailureStage,
    Header, Lines, Medium, Part, Place, Record, RunCheck, RunCoverage, Sample, TagStatus, WorkerBuild, SCHEMA,
};
pub use writer::RunWriter;
