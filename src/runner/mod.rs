//! Measuring: units (`unit.rs`) scheduled into worker processes (`schedule.rs`), each
//! tag's read database prepared (`prepare.rs`) and its reads verified (`verify.rs`),
//! workers started under callgrind when counting there (`callgrind.rs`), their lines made
//! into run-file records (`record.rs`), the counting pass (`count.rs`) and the stop rule
//! (`stop.rs`), all started from one run specification (`spec.rs`).

mod callgrind;
mod count;
pub mod counter;
pub mod label;
mod layouts;
pub mod merge;
pub mod pool;
mod prepare;
pub mod protocol;
mod record;
pub mod runfile;
mod schedule;
pub mod scratch;
mod spec;
mod stop;
mod unit;
mod verify;
pub mod worker;

pub use crate::compile::sanitize;
pub use label::Label;
use schedule::Schedule;
pub use schedule::{interrupt_flag, Outcome, StopWhen};
pub use spec::{instruction_counter, RunSpec};
pub use stop::resolved;
pub use unit::Unit;
