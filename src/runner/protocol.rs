//! What a worker process (Rust or C) prints on stdout: one JSON object per line.

use serde::{Deserialize, Serialize};

use crate::workload::presets::Figures;
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
    /// What each repetition computed, for readCrc and readXxh64 (held to the checksum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<u64>,
    /// From `verify`: what the workload read, once per run for each engine and tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
    /// The LMDB call that failed, with mdb_strerror's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prepared: bool,
    /// A preset's figures beside each sample's time, one per sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figures>,
}
