//! Timing a workload and what one worker measured: the perf counter (when counting)
//! around the clock around the timed call, and the samples, outputs, checksum and figures
//! a workload reports, the six LmdbJava workloads and the presets' alike.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::checksum::Checksum;
use super::iocount::Io;
use super::perf::PerfCounter;
use super::space::Space;

/// What an ended pass computed, and the space a write pass left.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    pub output: u64,
    pub space: Option<Space>,
    /// What a write pass synced, wrote and committed.
    pub io: Option<Io>,
    /// The operations of a pass of fewer than one per entry (readKey's `--key-sample`).
    pub ops: Option<u64>,
}

/// Times one pass: the perf counter (when counting) around the clock, nothing else inside;
/// the pass's nanoseconds, its instructions when counted, and what it returned.
#[inline(always)]
pub fn timed<T>(mut counter: Option<&mut PerfCounter>, pass: impl FnOnce() -> T) -> Result<(u64, Option<u64>, T)> {
    if let Some(c) = counter.as_deref_mut() {
        c.start()?;
    }
    let start = Instant::now();
    let r = pass();
    let ns = start.elapsed().as_nanos() as u64;
    let instructions = counter.map(|c| c.stop()).transpose()?;
    Ok((ns, instructions, r))
}

/// Where a worker's timed passes run: the read database (suites that prepare one), the
/// folder fresh environments go in, and the repetitions of each workload.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    pub dir: Option<&'a Path>,
    pub scratch: &'a Path,
    pub iterations: u32,
    /// Each read pass starts with the read database evicted from the page cache and read
    /// through again (under a memory limit: charged to it, so the pass starts with what the
    /// limit holds and reads the rest from the device).
    pub evict: bool,
    /// The lmdb suite's passes time each commit (`--sync` time runs).
    pub time_commits: bool,
}

/// How an instruction counter under callgrind finds a workload's timed region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimedFunctions {
    /// Each repetition is one call of a function of the workload's own, named here in
    /// the Rust engine and in the C twin: callgrind dumps a profile part as it returns,
    /// so one process counts several workloads apart.
    OnePerPass { rust: &'static str, c: &'static str },
    /// A pass calls its timed functions many times, or shares them with other workloads:
    /// each workload is counted in a process of its own, by the profile's total.
    ManyPerPass,
    /// The worker ends each workload's profile part itself, whatever its timed functions
    /// (`workload::profile_part`): one process counts several workloads apart.
    NamedParts,
}

/// What one workload measured in one worker.
#[derive(Debug, Default)]
pub struct Outcome {
    pub samples_ns: Vec<u64>,
    /// One per sample, when counted.
    pub instructions: Vec<u64>,
    /// readCrc and readXxh64: what each timed pass computed, one per sample.
    pub outputs: Vec<u64>,
    /// Passes run in chunks beside other units: each sample's chunk times, in pass order.
    pub chunks_ns: Vec<Vec<u64>>,
    /// Presets: the checksum every pass produced.
    pub checksum: Option<Checksum>,
    /// Presets: one per sample.
    pub figures: Vec<Figures>,
    /// Writes: the space each pass left, one per sample.
    pub space: Vec<Space>,
    /// Writes: what each pass synced, wrote and committed, one per sample.
    pub io: Vec<Io>,
    /// Whole passes of the six: the major page faults of each timed region, one per sample.
    pub major_faults: Vec<u64>,
}

impl Outcome {
    /// Records one timed pass.
    pub fn push(&mut self, ns: u64, instructions: Option<u64>) {
        self.samples_ns.push(ns);
        self.instructions.extend(instructions);
    }

    /// Records one pass run in chunks: its time is the sum of its chunks' times.
    pub fn push_chunks(&mut self, chunks_ns: Vec<u64>, ended: Ended, w: super::Workload) {
        self.push_ended(chunks_ns.iter().sum(), None, ended, w);
        self.chunks_ns.push(chunks_ns);
    }

    /// Records one ended pass: its time, what it computed (readCrc, readXxh64) and the
    /// space it left (the write).
    pub fn push_ended(&mut self, ns: u64, instructions: Option<u64>, ended: Ended, w: super::Workload) {
        self.push(ns, instructions);
        if w.computes_output() {
            self.outputs.push(ended.output);
        }
        self.space.extend(ended.space);
        self.io.extend(ended.io);
        if let Some(ops) = ended.ops {
            self.figures.push(Figures { ops: Some(ops), ..Figures::default() });
        }
    }

    /// Records one timed pass with its checksum and figures; every pass must produce the
    /// same checksum.
    pub fn push_checked(
        &mut self,
        ns: u64,
        instructions: Option<u64>,
        checksum: Checksum,
        figures: Figures,
    ) -> Result<()> {
        if let Some(c) = self.checksum.filter(|c| *c != checksum) {
            bail!("pass {} produced checksum {checksum}, the first {c}", self.samples_ns.len() + 1);
        }
        self.checksum = Some(checksum);
        self.push(ns, instructions);
        self.figures.push(figures);
        Ok(())
    }
}

/// Figures a preset sample carries beside its time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Operations in the timed pass (entries, or open-get cycles): instruction counts are per one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    /// open-get: every cycle's latency in nanoseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latencies_ns: Vec<u64>,
    /// The database file's allocated size in bytes (st_blocks × 512).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_bytes: Option<u64>,
    /// migrate: what the timed region cost the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// migrate: the source file's pages in the page cache just before the timed region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident: Option<Residency>,
    /// lmdb suite under `--sync`, a time run: each commit of the pass (mdb_txn_commit) as
    /// a histogram's buckets (nanoseconds, how many).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commit_ns: Vec<(u64, u64)>,
    /// The same commits' times in the order the pass made them (nanoseconds), so that
    /// stats can pair commit k of a unit with commit k of the reference: a pass's commits
    /// ramp with its growing tree, and like is compared with like. Empty in runs from
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commit_order_ns: Vec<u64>,
    /// concurrency: what the readers and the writer did in each interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crew: Option<super::concurrent::CrewFigures>,
}

impl Figures {
    pub fn is_empty(&self) -> bool {
        *self == Figures::default()
    }
}

/// getrusage deltas over the timed region, and its peak resident set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub user_us: u64,
    pub sys_us: u64,
    /// Peak RSS in KiB during the timed region (VmHWM after resetting it); None where
    /// the kernel does not let a process reset it.
    pub max_rss_kib: Option<u64>,
    pub major_faults: u64,
    pub minor_faults: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residency {
    pub resident_pages: u64,
    pub total_pages: u64,
}
