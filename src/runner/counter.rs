//! Counting instructions retired in the timed region only: through perf_event_open where
//! the kernel allows it (inside the Rust worker, around the timed call), otherwise under
//! valgrind's callgrind with collection toggled on only inside the timed functions.
//! The perf counter itself is `workload::perf`; this module chooses between the two.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use super::runfile::Engine;
use crate::workload::measure::TimedFunctions;
use crate::workload::perf::PerfCounter;
use crate::workload::Workload;

/// How a worker's instructions are counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// The Rust worker opens a hardware counter itself.
    Perf,
    /// The worker runs under callgrind; `version` is valgrind's.
    Callgrind { version: String },
}

/// The timed functions of both engines, every suite's (src/workload/native.rs and
/// presets/, harness/workloads.c and presets.c).
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
    if crate::envvars::one_of("LMDB_REGRESS_COUNTER", crate::envvars::COUNTERS)? != Some("callgrind") {
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

/// The timed function `engine` calls once per repetition of `w`, as `w`'s suite declares
/// it (callgrind dumps a profile part when one returns, so one process counts every
/// workload separately). None where the suite's timed functions run many times per sample
/// (the presets): those are counted one process per workload, by the profile's total.
pub fn timed_function(engine: Engine, w: Workload) -> Option<&'static str> {
    match w.timed_functions() {
        TimedFunctions::OnePerPass { rust, c } => Some(match engine {
            Engine::Rust => rust,
            Engine::C => c,
        }),
        TimedFunctions::ManyPerPass => None,
    }
}

/// Wraps a worker command line in callgrind, collecting only inside the timed functions
/// and dumping a profile part (`out_file.1`, `.2`, …) each time one of `dump_after` returns.
pub fn callgrind_command(program: &Path, args: &[std::ffi::OsString], out_file: &Path, dump_after: &[&str]) -> Command {
    let mut c = Command::new("valgrind");
    c.arg("--tool=callgrind").arg("--quiet").arg("--collect-atstart=no");
    for p in TOGGLE_PATTERNS {
        c.arg(format!("--toggle-collect={p}"));
    }
    let mut functions = dump_after.to_vec();
    functions.sort_unstable();
    functions.dedup();
    for f in functions {
        c.arg(format!("--dump-after={f}"));
    }
    c.arg(format!("--callgrind-out-file={}", out_file.display()));
    c.arg(program).args(args);
    c
}

/// One profile part: the function whose return dumped it, and the instructions counted
/// since the previous part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub trigger: String,
    pub instructions: u64,
}

fn part_path(out_file: &Path, n: usize) -> std::path::PathBuf {
    let name = out_file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    out_file.with_file_name(format!("{name}.{n}"))
}

/// Removes the profile and the parts a previous run under the same name left.
pub fn remove_profile(out_file: &Path) {
    let _ = std::fs::remove_file(out_file);
    (1..).map(|n| part_path(out_file, n)).take_while(|p| std::fs::remove_file(p).is_ok()).for_each(drop);
}

/// The parts `callgrind_command` dumped, in order (`out_file.1`, `.2`, …).
pub fn callgrind_parts(out_file: &Path) -> Result<Vec<Part>> {
    let mut parts = Vec::new();
    for n in 1.. {
        let path = part_path(out_file, n);
        if !path.exists() {
            break;
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let trigger = text
            .lines()
            .find_map(|l| l.strip_prefix("desc: Trigger: --dump-after="))
            .with_context(|| format!("{} names no --dump-after trigger", path.display()))?;
        parts.push(Part { trigger: trigger.trim().to_string(), instructions: total_of(&text, &path)? });
    }
    Ok(parts)
}

/// The instruction total of a profile written without parts.
pub fn callgrind_total(out_file: &Path) -> Result<u64> {
    let text =
        std::fs::read_to_string(out_file).with_context(|| format!("no callgrind profile {}", out_file.display()))?;
    total_of(&text, out_file)
}

fn total_of(text: &str, path: &Path) -> Result<u64> {
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("{} has no totals line", path.display()))
}
