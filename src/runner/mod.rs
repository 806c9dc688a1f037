//! Measuring: one run specification (`spec.rs`) scheduled (`schedule.rs`, the only file
//! that knows the stages below it) into worker processes of units (`unit.rs`, each
//! invocation a `job.rs` `Job`, every worker watched by `watchdog.rs`): each tag's read
//! database prepared (`prepare.rs`) and its reads verified (`verify.rs`), workers
//! started under callgrind when counting there (`callgrind.rs`), their lines made into
//! run-file records (`record.rs`), the counting pass (`count.rs`), the layout check
//! (`layouts.rs`), the stop rule (`stop.rs`) and adaptive rounds (`adaptive.rs`), whose
//! judgement of what is still undecided the statistics pass in ([`Judge`]). The stages are methods of [`RunSpec`]; none
//! of them knows the schedule.

pub mod adaptive;
mod callgrind;
mod count;
pub mod counter;
pub mod coverage;
mod draws;
pub mod gcov;
mod job;
mod layouts;
mod measure;
pub mod memlimit;
pub mod merge;
mod paired;
pub mod paired_worker;
pub mod pool;
mod prepare;
pub mod profile;
pub mod profiling;
pub mod program;
pub mod protocol;
mod schedule;
pub mod scratch;
mod spec;
mod stop;
mod unit;
mod verify;
pub mod watchdog;
pub mod worker;

pub use crate::compile::sanitize;
pub use crate::record::label::Label;
pub use job::{interrupt_flag, interrupted, Interrupted, ScheduleOutcome, SearchPhase, SearchStep, Stage, StopWhen};
pub use paired::DEFAULT_CHUNK;
pub use spec::{instruction_counter, Judge, RunSpec};
pub use unit::{CompiledProgram, Unit};
