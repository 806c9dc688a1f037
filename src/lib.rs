//! lmdb-regress: did LMDB get slower, in which release, in which commit, and by how much?
//!
//! Data flows one way: sources → builds → measurements → statistics → reports.

pub mod abi;
pub mod artifact;
pub mod children;
pub mod cli;
pub mod cmd;
pub mod compile;
pub mod environment;
pub mod envvars;
pub mod ffi;
pub mod files;
pub mod harness;
pub mod hunt;
pub mod layout;
pub mod manifest;
pub mod matrix;
pub mod mtest;
pub mod paired_twin;
pub mod progress;
pub mod record;
pub mod report;
pub mod runner;
pub mod source;
pub mod stage;
pub mod stats;
pub mod tags;
pub mod terminal;
pub mod workload;

/// The Rust target triple this binary was built for (the C compiler must match it).
pub const TARGET: &str = env!("LMDB_REGRESS_TARGET");
