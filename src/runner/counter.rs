//! Counting instructions retired in the timed region only: through perf_event_open where
//! the kernel allows it (inside the Rust worker, around the timed call), otherwise under
//! valgrind's callgrind with collection toggled on only inside the timed functions.
//! The perf counter itself is `workload::perf`; this module chooses between the two.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::workload::perf::PerfCounter;

/// How a worker's instructions are counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// The Rust worker opens a hardware counter itself.
    Perf,
    /// The worker runs under callgrind; `version` is valgrind's.
    Callgrind { version: String },
}

/// The timed functions of both engines (src/workload/native.rs, harness/workloads.c).
pub const TOGGLE_PATTERNS: [&str; 2] = ["lmdbregress_timed_*", "timed_*"];

impl Counter {
    pub fn describe(&self) -> String {
        match self {
            Counter::Perf => "perf_event_open (PERF_COUNT_HW_INSTRUCTIONS, user space, around the timed call)".into(),
            Counter::Callgrind { version } => {
                format!("{version} callgrind, collecting only inside the timed functions (--toggle-collect)")
            }
        }
    }
}

/// perf_event_open if a counter opens and counts, else callgrind if valgrind runs.
pub fn detect() -> Result<Counter> {
    if std::env::var("LMDB_REGRESS_COUNTER").as_deref() != Ok("callgrind") {
        if let Ok(mut c) = PerfCounter::open() {
            if c.start().is_ok() {
                std::hint::black_box((0..1000u64).sum::<u64>());
                if c.stop().is_ok_and(|n| n > 0) {
                    return Ok(Counter::Perf);
                }
            }
        }
    }
    let out = Command::new("valgrind").arg("--version").output().context(
        "instructions cannot be counted: perf_event_open is not allowed here and valgrind is not installed (apt-get install valgrind)",
    )?;
    Ok(Counter::Callgrind { version: String::from_utf8_lossy(&out.stdout).trim().to_string() })
}

/// Wraps a worker command line in callgrind, writing its profile to `out_file`.
pub fn callgrind_command(program: &Path, args: &[std::ffi::OsString], out_file: &Path) -> Command {
    let mut c = Command::new("valgrind");
    c.arg("--tool=callgrind").arg("--quiet").arg("--collect-atstart=no");
    for p in TOGGLE_PATTERNS {
        c.arg(format!("--toggle-collect={p}"));
    }
    c.arg(format!("--callgrind-out-file={}", out_file.display()));
    c.arg(program).args(args);
    c
}

/// The instruction total of a callgrind profile (its `totals:` or `summary:` line).
pub fn callgrind_total(out_file: &Path) -> Result<u64> {
    let text =
        std::fs::read_to_string(out_file).with_context(|| format!("no callgrind profile {}", out_file.display()))?;
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("{} has no totals line", out_file.display()))
}
