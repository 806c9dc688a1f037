//! Counting instructions retired in the timed region only: through perf_event_open where
//! the kernel allows it (inside the Rust worker, around the timed call), otherwise under
//! valgrind's callgrind with collection toggled on only inside the timed functions.
//! The perf counter itself is `workload::perf`; this module chooses between the two.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::record::metric::{Counts, Event};
use crate::record::Engine;
use crate::workload::measure::TimedFunctions;
use crate::workload::perf::PerfCounter;
use crate::workload::Workload;

/// How a worker's instructions (and, simulated, its cache misses) are counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// The Rust worker opens a hardware counter itself: instructions only.
    Perf,
    /// The worker runs under callgrind; `version` is valgrind's; `caches` when callgrind
    /// simulates the caches (`--cache-sim=yes`), so that every event of [`Event`] is
    /// counted: the caches it simulates.
    Callgrind { version: String, caches: Option<Caches> },
}

/// The caches callgrind simulates, as it took them from this host's CPU, each as
/// `(name, size in bytes, line size, associativity)`; given back to callgrind as flags, so
/// that every count of a run simulates the same caches and callgrind does not warn, on
/// every worker's stderr, about the host's caches it adjusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caches(Vec<(String, u64, u64, u64)>);

impl Caches {
    /// "I1 65536 B, 64 B, 16-way associative; D1 …; LL …".
    pub fn describe(&self) -> String {
        let one =
            |(n, size, line, ways): &(String, u64, u64, u64)| format!("{n} {size} B, {line} B, {ways}-way associative");
        self.0.iter().map(one).collect::<Vec<_>>().join("; ")
    }

    /// `--I1=65536,16,64` and so on.
    fn flags(&self) -> impl Iterator<Item = String> + '_ {
        self.0.iter().map(|(n, size, line, ways)| format!("--{n}={size},{ways},{line}"))
    }

    /// The caches a profile's `desc:` lines describe: "desc: I1 cache: 65536 B, 64 B,
    /// 16-way associative" (Intel hosts), "desc: LL cache: 268435456 B, 64 B, direct-mapped"
    /// (valgrind's word for one way, seen on AMD EPYC hosts), or "fully associative".
    fn from_profile(text: &str) -> Result<Caches> {
        fn described(line: &str) -> Option<(&str, &str)> {
            line.strip_prefix("desc: ")?.split_once(" cache: ")
        }
        let caches = text
            .lines()
            .filter_map(|line| described(line).map(|(name, rest)| (line, name, rest)))
            .map(|(line, name, rest)| {
                let (size, line_size, ways) =
                    cache_shape(rest).with_context(|| format!("callgrind described a cache as {line:?}"))?;
                Ok((name.to_string(), size, line_size, ways))
            })
            .collect::<Result<Vec<_>>>()?;
        let names: Vec<&str> = caches.iter().map(|c| c.0.as_str()).collect();
        if names != ["I1", "D1", "LL"] {
            bail!("callgrind's profile describes the caches {names:?}, not the I1, D1 and LL caches it simulates");
        }
        Ok(Caches(caches))
    }
}

/// "65536 B, 64 B, 16-way associative" as (size, line size, ways).
fn cache_shape(rest: &str) -> Result<(u64, u64, u64)> {
    let bytes = |part: &str| part.trim().strip_suffix(" B").and_then(|n| n.trim().parse::<u64>().ok());
    let parts: Vec<&str> = rest.split(',').collect();
    let [size, line, ways] = parts[..] else { bail!("not three parts (size, line size, associativity)") };
    let (size, line) = (bytes(size).context("no size in bytes")?, bytes(line).context("no line size in bytes")?);
    if size == 0 || line == 0 || size % line != 0 {
        bail!("a size of {size} B is not a whole number of {line}-byte lines");
    }
    let ways = match ways.trim() {
        "direct-mapped" => 1,
        "fully associative" => size / line,
        other => other
            .strip_suffix("-way associative")
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .with_context(|| format!("an associativity of {other:?}"))?,
    };
    Ok((size, line, ways))
}

/// The timed functions of both engines, every suite's (src/workload/native.rs and
/// presets/, harness/workloads.c and presets.c).
pub const TOGGLE_PATTERNS: [&str; 2] = ["lmdbregress_timed_*", "timed_*"];

impl Counter {
    pub fn describe(&self) -> String {
        match self {
            Counter::Perf => "perf_event_open (PERF_COUNT_HW_INSTRUCTIONS, user space, around the timed call)".into(),
            Counter::Callgrind { version, caches } => format!(
                "{version} callgrind, collecting only inside the timed functions (--toggle-collect){}",
                caches
                    .as_ref()
                    .map(|c| format!(", simulating the caches (--cache-sim=yes); caches: {}", c.describe()))
                    .unwrap_or_default()
            ),
        }
    }

    /// The counter a C worker uses where this one is perf (which only the Rust worker opens).
    pub fn for_c(&self) -> Counter {
        match self {
            Counter::Perf => Counter::Callgrind { version: "valgrind".into(), caches: None },
            c => c.clone(),
        }
    }
}

/// perf_event_open if a counter opens and counts, else callgrind if valgrind runs; with
/// `cache_sim`, callgrind simulating the caches (perf counts no cache metric).
pub fn detect(cache_sim: bool) -> Result<Counter> {
    let forced = crate::envvars::one_of("LMDB_REGRESS_COUNTER", crate::envvars::COUNTERS)? == Some("callgrind");
    if !forced && !cache_sim {
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
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let caches = if cache_sim { Some(simulated_caches()?) } else { None };
    Ok(Counter::Callgrind { version, caches })
}

/// The caches callgrind simulates on this host (it takes them from the CPU).
fn simulated_caches() -> Result<Caches> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("probe.out");
    let status = Command::new("valgrind")
        .args(["--tool=callgrind", "--quiet", "--cache-sim=yes"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("true")
        .stderr(std::process::Stdio::null())
        .status()
        .context("cannot run valgrind to learn the caches it simulates")?;
    let text = std::fs::read_to_string(&out).ok().filter(|_| status.success());
    let text = text.context("valgrind --cache-sim=yes did not run here: the cache metrics cannot be counted")?;
    Caches::from_profile(&text).context("callgrind's profile does not say which I1, D1 and LL caches it simulated")
}

/// What dumps a workload's profile part under callgrind, as a part's `desc: Trigger:`
/// line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// The return of this timed function (`--dump-after=`), called once per repetition.
    After(String),
    /// The worker's client request naming this workload (`Client Request: `).
    Request(String),
}

impl Trigger {
    /// The trigger a `desc: Trigger: ` line's rest names; None for another (the program's
    /// termination, which ends no workload's part).
    pub fn parse(desc: &str) -> Option<Trigger> {
        let desc = desc.trim();
        if let Some(f) = desc.strip_prefix("--dump-after=") {
            return Some(Trigger::After(f.trim().to_string()));
        }
        desc.strip_prefix("Client Request: ").map(|w| Trigger::Request(w.trim().to_string()))
    }

    /// The function callgrind must dump after, for an [`Trigger::After`].
    pub fn function(&self) -> Option<&str> {
        match self {
            Trigger::After(f) => Some(f),
            Trigger::Request(_) => None,
        }
    }
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trigger::After(function) => write!(f, "the return of {function}"),
            Trigger::Request(w) => write!(f, "the worker's request for {w}"),
        }
    }
}

/// What ends `w`'s profile part in `engine`'s worker, as `w`'s suite declares it, so one
/// process counts several workloads apart. None where the suite's timed functions run many
/// times per sample and nothing else ends a part (the presets but lmdb): those are counted
/// one process per workload, by the profile's total.
pub fn part_trigger(engine: Engine, w: Workload) -> Option<Trigger> {
    match w.timed_functions() {
        TimedFunctions::OnePerPass { rust, c } => Some(Trigger::After(
            match engine {
                Engine::Rust => rust,
                Engine::C => c,
            }
            .to_string(),
        )),
        TimedFunctions::NamedParts => Some(Trigger::Request(w.name().to_string())),
        TimedFunctions::ManyPerPass => None,
    }
}

/// Wraps a worker command line in callgrind, collecting only inside the timed functions
/// and dumping a profile part (`out_file.1`, `.2`, …) each time one of `dump_after` returns;
/// with `caches`, simulating them.
pub fn callgrind_command(
    program: &Path,
    args: &[std::ffi::OsString],
    out_file: &Path,
    dump_after: &[&str],
    caches: Option<&Caches>,
) -> Command {
    let mut c = Command::new("valgrind");
    // Every symbol bound as the worker loads (LMDB's and libc's calls through the PLT), so
    // no timed region counts the dynamic linker binding a function it is the first to call
    // (thousands of instructions, in whichever workload of the process came first); and a
    // thread's stack mapped afresh, never one an ended thread left (mdb_env_copy2's writer).
    c.env("LD_BIND_NOW", "1").env("GLIBC_TUNABLES", "glibc.pthread.stack_cache_size=0");
    c.arg("--tool=callgrind").arg("--quiet").arg("--collect-atstart=no");
    if let Some(caches) = caches {
        c.arg("--cache-sim=yes").args(caches.flags());
    }
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

/// A program (`run --program`) under callgrind: the whole process counted, from its first
/// instruction to its exit (the dynamic loader's and libc's start-up included), one
/// profile in `out_file`; with `caches`, simulating them.
pub fn whole_process_command(program: &Path, args: &[String], out_file: &Path, caches: Option<&Caches>) -> Command {
    let mut c = Command::new("valgrind");
    c.arg("--tool=callgrind").arg("--quiet");
    if let Some(caches) = caches {
        c.arg("--cache-sim=yes").args(caches.flags());
    }
    c.arg(format!("--callgrind-out-file={}", out_file.display()));
    c.arg(program).args(args);
    c
}

/// One profile part: what dumped it, and the events counted since the previous part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfilePart {
    pub trigger: Trigger,
    pub counts: Counts,
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

/// The parts `callgrind_command` dumped, in order (`out_file.1`, `.2`, …), each by a
/// timed function's return or the worker's request.
pub fn callgrind_parts(out_file: &Path) -> Result<Vec<ProfilePart>> {
    let mut parts = Vec::new();
    for n in 1.. {
        let path = part_path(out_file, n);
        if !path.exists() {
            break;
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let trigger = text
            .lines()
            .find_map(|l| l.strip_prefix("desc: Trigger: ").and_then(Trigger::parse))
            .with_context(|| format!("{} names no workload's trigger", path.display()))?;
        parts.push(ProfilePart { trigger, counts: totals_of(&text, &path)? });
    }
    Ok(parts)
}

/// The totals of a profile written without parts.
pub fn callgrind_total(out_file: &Path) -> Result<Counts> {
    let text =
        std::fs::read_to_string(out_file).with_context(|| format!("no callgrind profile {}", out_file.display()))?;
    totals_of(&text, out_file)
}

/// A profile's totals, by the names of its `events:` line (the events the tool does not
/// read left out).
pub fn totals_of(text: &str, path: &Path) -> Result<Counts> {
    let events = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))
        .with_context(|| format!("{} has no events line", path.display()))?;
    let totals = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .with_context(|| format!("{} has no totals line", path.display()))?;
    let values: Vec<u64> = totals
        .split_whitespace()
        .map(|v| v.parse())
        .collect::<std::result::Result<_, _>>()
        .with_context(|| format!("{}: totals {totals:?} are not counts", path.display()))?;
    // Callgrind leaves out trailing zeros of a cost line.
    let value = |i: usize| values.get(i).copied().unwrap_or(0);
    let counts: Counts = events
        .split_whitespace()
        .enumerate()
        .filter_map(|(i, e)| Some((Event::from_callgrind(e)?, value(i))))
        .collect();
    if counts.get(Event::Ir).is_none() {
        bail!("{}: its events line ({}) counts no instructions (Ir)", path.display(), events.trim());
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulated_caches_are_read_from_a_profile_and_given_back_as_flags() {
        let text =
            "desc: I1 cache: 65536 B, 64 B, 16-way associative\ndesc: D1 cache: 49152 B, 64 B, 12-way associative\n\
                    desc: LL cache: 503316480 B, 64 B, 30-way associative\ndesc: Timerange: Basic block 0 - 28938\n";
        let c = Caches::from_profile(text).unwrap();
        assert_eq!(c.flags().collect::<Vec<_>>(), ["--I1=65536,16,64", "--D1=49152,12,64", "--LL=503316480,30,64"]);
        assert!(c.describe().starts_with("I1 65536 B, 64 B, 16-way associative; D1 49152 B"), "{}", c.describe());
        let e = Caches::from_profile("desc: I1 cache: 65536 B\n").unwrap_err();
        assert!(format!("{e:#}").contains("\"desc: I1 cache: 65536 B\""), "{e:#}");
    }

    /// valgrind 3.19 on an AMD EPYC host (lines as it wrote them there).
    #[test]
    fn an_amd_hosts_direct_mapped_and_other_shapes_are_read() {
        let text =
            "desc: I1 cache: 65536 B, 64 B, 4-way associative\ndesc: D1 cache: 32768 B, 64 B, 8-way associative\n\
                    desc: LL cache: 268435456 B, 64 B, direct-mapped\ndesc: Timerange: Basic block 0 - 29602\n";
        let c = Caches::from_profile(text).unwrap();
        assert_eq!(c.flags().collect::<Vec<_>>(), ["--I1=65536,4,64", "--D1=32768,8,64", "--LL=268435456,1,64"]);
        let full =
            "desc: I1 cache: 4096 B, 64 B, fully associative\ndesc: D1 cache: 32768 B, 64 B, 8-way associative\n\
                    desc: LL cache: 268435456 B, 64 B, 2-way associative\n";
        assert_eq!(Caches::from_profile(full).unwrap().flags().next().unwrap(), "--I1=4096,64,64");
        for (shape, says) in [
            ("64 B, 8-way associative", "not three parts"),
            ("65536 B, 64 B, eight-way", "an associativity of \"eight-way\""),
            ("65536 B, 60 B, 8-way associative", "not a whole number"),
        ] {
            let text = format!("desc: I1 cache: {shape}\ndesc: D1 cache: 32768 B, 64 B, 8-way associative\n");
            let e = format!("{:#}", Caches::from_profile(&text).unwrap_err());
            assert!(e.contains(says) && e.contains(shape), "{e}");
        }
        let two =
            "desc: I1 cache: 65536 B, 64 B, 4-way associative\ndesc: LL cache: 268435456 B, 64 B, direct-mapped\n";
        assert!(format!("{:#}", Caches::from_profile(two).unwrap_err()).contains("[\"I1\", \"LL\"]"));
    }

    #[test]
    fn totals_are_read_by_the_events_line() {
        let text = "version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nfn=f\n3 10 4 2 1\ntotals: 10 4 2 1\n";
        let c = totals_of(text, Path::new("p")).unwrap();
        assert_eq!(
            (c.get(Event::Ir), c.get(Event::Dw), c.get(Event::I1mr), c.get(Event::DLmw)),
            (Some(10), Some(2), Some(1), Some(0))
        );
        let plain = totals_of("events: Ir\nsummary: 77\n", Path::new("p")).unwrap();
        assert_eq!(plain, Counts::instructions(77));
        let e = totals_of("events: Bc Bcm\ntotals: 1 2\n", Path::new("p")).unwrap_err();
        assert!(format!("{e}").contains("counts no instructions"), "{e}");
    }
}
