//! What a worker process (Rust or C) prints on stdout: one JSON object per line.

use serde::{Deserialize, Serialize};

use crate::record::metric::Counts;
use crate::record::FailureCause;
use crate::workload::iocount::Io;
use crate::workload::presets::Figures;
use crate::workload::space::Space;
use crate::workload::{Checksum, Workload};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkerLine {
    /// The workload this line reports; absent for `prepare`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// Wall time of each timed repetition, in nanoseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_ns: Vec<u64>,
    /// Instructions of each repetition, when the worker counted them (perf_event_open).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions: Vec<u64>,
    /// The events of each repetition counted around the worker (callgrind): the runner
    /// fills them in from the profile, no worker prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<Counts>,
    /// What each repetition computed, for readCrc and readXxh64 (held to the checksum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<u64>,
    /// From `verify`: what the workload read, once per run for each engine and tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
    /// The LMDB call that failed, with mdb_strerror's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the error means to a report, where it means more than its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<FailureCause>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prepared: bool,
    /// From `prepare`: the read database's shape as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_shape: Option<DbShape>,
    /// A paired worker's slot this line reports (its line in the slots file, from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Passes run in chunks: each sample's chunk times in nanoseconds, in pass order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks_ns: Vec<Vec<u64>>,
    /// A paired worker's last words: the slot whose chunk was running when a fatal signal
    /// came (printed by its signal handler).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crashed: Option<u32>,
    /// A paired worker's progress, printed after every round of chunks: the watchdog's
    /// sign of life, read by it alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub progress: bool,
    /// A preset's figures beside each sample's time, one per sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figures>,
    /// A write's space after each pass, one per sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub space: Vec<Space>,
    /// A write's syncs, bytes and commits in each pass, one per sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io: Vec<Io>,
    /// Whole passes of the six: each timed region's major page faults, one per sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub major_faults: Vec<u64>,
}

impl WorkerLine {
    /// The counts of repetition `i`: the runner's from callgrind, else the worker's perf
    /// count of instructions; None when nothing was counted.
    pub fn counts_of(&self, i: usize) -> Option<Counts> {
        self.counts.get(i).cloned().or_else(|| self.instructions.get(i).map(|n| Counts::instructions(*n)))
    }
}

/// A read database as its writer left it: files of one shape, written by libraries of one
/// format version, hold the same tree, so any unit of that version may read any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DbShape {
    /// The writer's major and minor version: 0.9 and 1.0 cannot read each other's files.
    pub format: (i32, i32),
    /// The data file's own format number (its meta page's version): a version number does
    /// not always say it (mdb.master3 reports 0.9.90 and writes the 1.0 line's files).
    #[serde(default)]
    pub data_version: u32,
    pub branch: usize,
    pub leaf: usize,
    pub overflow: usize,
    pub entries: usize,
}
