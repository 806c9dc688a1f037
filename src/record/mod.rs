//! The run record: the run file's types, how it is read (one upgrader for every schema)
//! and written, and the identities it names (labels, metrics). It sits below the runner
//! and the statistics, so both read the same record and neither owns it.

pub mod label;
pub mod metric;
pub mod runfile;
