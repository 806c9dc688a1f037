//! What a run can measure, each metric declared once: its name and unit, how it is
//! collected (the clock, or events a counter reports), and so how it is judged (paired
//! intervals for time; exact, within a tolerance, for counts). A sample carries its time
//! and the events counted in its timed region; every figure of a metric is read from
//! them here, so a new callgrind-derived metric is a variant and its row below.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::workload::concurrent::CrewFigures;
use crate::workload::iocount::Io;
use crate::workload::presets::lmdb_suite::commits;
use crate::workload::space::Space;
use crate::workload::Workload;

/// An event a counter reports for the timed region, under callgrind's name for it (its
/// `events:` line). perf_event_open counts `Ir` only; the rest need `--cache-sim=yes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Event {
    /// Instructions executed.
    Ir,
    /// Data reads and writes.
    Dr,
    Dw,
    /// First-level misses: instruction fetches, data reads, data writes.
    I1mr,
    D1mr,
    D1mw,
    /// Last-level misses: instruction fetches, data reads, data writes.
    ILmr,
    DLmr,
    DLmw,
}

impl Event {
    pub const ALL: [Event; 9] =
        [Event::Ir, Event::Dr, Event::Dw, Event::I1mr, Event::D1mr, Event::D1mw, Event::ILmr, Event::DLmr, Event::DLmw];

    /// The event callgrind names `name` in its `events:` line; None for one the tool does
    /// not read (branch events, `--collect-systime`).
    pub fn from_callgrind(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Event::Ir => "Ir",
            Event::Dr => "Dr",
            Event::Dw => "Dw",
            Event::I1mr => "I1mr",
            Event::D1mr => "D1mr",
            Event::D1mw => "D1mw",
            Event::ILmr => "ILmr",
            Event::DLmr => "DLmr",
            Event::DLmw => "DLmw",
        }
    }
}

/// The events counted over one timed region (or one function's share of it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Counts(BTreeMap<Event, u64>);

impl Counts {
    /// A region whose instructions alone were counted (perf_event_open).
    pub fn instructions(n: u64) -> Counts {
        Counts(BTreeMap::from([(Event::Ir, n)]))
    }

    pub fn get(&self, e: Event) -> Option<u64> {
        self.0.get(&e).copied()
    }

    pub fn insert(&mut self, e: Event, n: u64) {
        self.0.insert(e, n);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each event counted, with its count.
    pub fn iter(&self) -> impl Iterator<Item = (Event, u64)> + '_ {
        self.0.iter().map(|(e, n)| (*e, *n))
    }

    /// The sum of `events`; None when any of them was not counted.
    fn sum(&self, events: &[Event]) -> Option<u64> {
        events.iter().map(|e| self.get(*e)).sum()
    }
}

impl FromIterator<(Event, u64)> for Counts {
    fn from_iter<I: IntoIterator<Item = (Event, u64)>>(iter: I) -> Counts {
        Counts(iter.into_iter().collect())
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, clap::ValueEnum, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Wall time of the timed region (CLOCK_MONOTONIC).
    #[default]
    Time,
    /// Instructions retired in the timed region (perf_event_open, else callgrind).
    Instructions,
    /// First-level data-cache misses, reads and writes (callgrind's cache simulation).
    D1Misses,
    /// Last-level cache misses, instruction fetches and data (callgrind's cache simulation).
    LlMisses,
    /// L1 hits + 5 × LL hits + 35 × RAM hits, from callgrind's cache simulation.
    EstimatedCycles,
    /// The data file's size after a write pass, in bytes.
    FileSize,
    /// The last page used after a write pass (mdb_env_info's me_last_pgno).
    LastPage,
    /// The written database's branch, leaf and overflow pages, and its depth (mdb_stat).
    BranchPages,
    LeafPages,
    OverflowPages,
    Depth,
    /// Page numbers on the freelist after a write pass.
    FreePages,
    /// Readers beside a writer (`--suite concurrency`): a reader thread's nanoseconds per
    /// get, the inverse of its gets per second, judged by paired intervals.
    ReaderOps,
    /// The writer beside them: nanoseconds per put, the inverse of its puts per second.
    WriterOps,
    /// A reader thread's CPU nanoseconds per get (CLOCK_THREAD_CPUTIME_ID): reader-ops
    /// without the time a thread waited for a core, which the scheduler sets when the
    /// crew's threads outnumber the cores.
    ReaderCpu,
    /// The writer's CPU nanoseconds per put.
    WriterCpu,
    /// A write pass's syncs (fdatasync, fsync, msync MS_SYNC, writes through an O_DSYNC
    /// descriptor) per committed write transaction.
    SyncsPerCommit,
    /// The bytes a write pass handed to write, pwrite and writev, per committed write
    /// transaction (0 under MDB_WRITEMAP, which writes through the map).
    BytesPerCommit,
    /// Page faults that read from the device (getrusage's ru_majflt) per operation of a
    /// whole pass: what a memory limit (`run --memory-limit`) costs a read.
    MajorFaults,
    /// The median of a write pass's commits (mdb_txn_commit, its syncs included), in
    /// microseconds: the lmdb suite's write rows in a time run under `--sync`. Judged by
    /// intervals, as time is; the median, as a commit that waits out a stall of the disk
    /// moves a pass's mean and not its median.
    CommitP50,
}

/// How a metric's figures are collected, and so judged.
#[derive(Clone, Copy)]
pub enum Collect {
    /// The clock around the timed region: judged by paired intervals.
    Clock,
    /// A formula over events a counter reports: exact, judged within a tolerance.
    Events {
        /// Whether callgrind must simulate the caches (perf counts `Ir` only).
        cache_sim: bool,
        value: fn(&Counts) -> Option<u64>,
    },
    /// A figure of the environment a write pass left, read after the pass: exact, judged
    /// as counts are.
    Space { value: fn(&Space) -> u64 },
    /// A figure of a crew of readers and a writer (`workload::concurrent`), per pass and
    /// per interval: judged by paired intervals, as time is.
    Crew { pass: fn(&CrewFigures) -> Option<f64>, intervals: fn(&CrewFigures) -> Vec<f64> },
    /// What a write pass's timed region synced and wrote (`workload::iocount`), per
    /// commit: exact, judged as counts are.
    Io { value: fn(&Io) -> u64 },
    /// The process's major page faults over a whole pass, read before and after its
    /// timed region: a count, judged as counts are (0 where everything was cached, which
    /// no ratio of intervals can judge); it moves with the page cache and its readahead.
    Faults,
    /// A figure of a write pass's commits, each timed (`Figures::commit_ns`, a histogram's
    /// buckets), in nanoseconds: judged by intervals, as time is.
    Commits { value: fn(&[(u64, u64)]) -> Option<u64> },
}

/// A metric's one declaration.
pub struct MetricInfo {
    /// The metric in a sentence ("time", "instructions").
    pub name: &'static str,
    /// The column heading of LmdbJava's six workloads ("ms/op", "instr/entry").
    pub unit: &'static str,
    /// A column heading of its change ("instr").
    pub short: &'static str,
    /// The unit of a preset that counts per cycle ("instr/cycle").
    per_cycle: &'static str,
    pub collect: Collect,
    /// How far apart two counts of the same work may be, in counts, beyond the relative
    /// tolerance: the cache simulation sees a buffer that another process placed across one
    /// more line (measured: one D1 miss in 112,599, then in 1,063).
    pub slack: u64,
    /// What to do when a run has none of it; None when every sample has it.
    pub missing: Option<&'static str>,
}

const NO_CACHE: &str = "this run has no cache simulation: measure with `run --metric instructions --with-cache`, \
                        or `run --metric d1-misses` (ll-misses, estimated-cycles)";

const NO_FAULTS: &str = "this run has no major-fault counts: they are read around each whole pass of LmdbJava's \
                         six (`run --pairing process`, `--memory-limit`, or `--metric major-faults`) by this \
                         version of lmdb-regress";

const NO_CREW: &str = "this run has no readers beside a writer: measure `run --suite concurrency`";

const NO_COMMITS: &str = "this run has no commit times: they are read around each commit of the lmdb suite's \
                          write rows in a time run under --sync (`run --suite lmdb --workloads \
                          fillRandomEach,fillRandom --sync nosync,nometasync,sync`) by this version of lmdb-regress";

const NO_IO: &str = "this run has no I/O counts: they are taken around each write pass, so measure a write \
                     (`run --workloads write`, or the lmdb suite's fills) with this version of lmdb-regress";

/// An I/O metric's row: one figure of [`Io`] per commit, in `unit`.
const fn io(name: &'static str, short: &'static str, unit: &'static str, value: fn(&Io) -> u64) -> MetricInfo {
    MetricInfo { name, short, unit, per_cycle: unit, collect: Collect::Io { value }, slack: 0, missing: Some(NO_IO) }
}

const NO_SPACE: &str = "this run has no space figures: they are read after each write pass, so measure the write \
                        (`run --workloads write`) with this version of lmdb-regress";

/// A space metric's row: one figure of [`Space`], in `unit`.
const fn space(name: &'static str, short: &'static str, unit: &'static str, value: fn(&Space) -> u64) -> MetricInfo {
    MetricInfo {
        name,
        short,
        unit,
        per_cycle: unit,
        collect: Collect::Space { value },
        slack: 0,
        missing: Some(NO_SPACE),
    }
}

impl Metric {
    pub const ALL: [Metric; 20] = [
        Metric::Time,
        Metric::Instructions,
        Metric::D1Misses,
        Metric::LlMisses,
        Metric::EstimatedCycles,
        Metric::FileSize,
        Metric::LastPage,
        Metric::BranchPages,
        Metric::LeafPages,
        Metric::OverflowPages,
        Metric::Depth,
        Metric::FreePages,
        Metric::ReaderOps,
        Metric::WriterOps,
        Metric::ReaderCpu,
        Metric::WriterCpu,
        Metric::SyncsPerCommit,
        Metric::BytesPerCommit,
        Metric::MajorFaults,
        Metric::CommitP50,
    ];

    /// The metric's one row.
    pub fn info(self) -> &'static MetricInfo {
        const TIME: MetricInfo = MetricInfo {
            name: "time",
            short: "time",
            unit: "ms/op",
            per_cycle: "",
            collect: Collect::Clock,
            slack: 0,
            missing: None,
        };
        const INSTRUCTIONS: MetricInfo = MetricInfo {
            name: "instructions",
            short: "instr",
            unit: "instr/entry",
            per_cycle: "instr/cycle",
            collect: Collect::Events { cache_sim: false, value: |c| c.get(Event::Ir) },
            slack: 0,
            missing: Some(
                "this run has no instruction counts: measure with `run --metric instructions` or `--with-instructions`",
            ),
        };
        const D1_MISSES: MetricInfo = MetricInfo {
            name: "D1 misses",
            short: "D1mis",
            unit: "D1mis/entry",
            per_cycle: "D1mis/cycle",
            collect: Collect::Events { cache_sim: true, value: |c| c.sum(&[Event::D1mr, Event::D1mw]) },
            slack: 4,
            missing: Some(NO_CACHE),
        };
        const LL_MISSES: MetricInfo = MetricInfo {
            name: "LL misses",
            short: "LLmis",
            unit: "LLmis/entry",
            per_cycle: "LLmis/cycle",
            collect: Collect::Events { cache_sim: true, value: |c| c.sum(&[Event::ILmr, Event::DLmr, Event::DLmw]) },
            slack: 4,
            missing: Some(NO_CACHE),
        };
        const ESTIMATED_CYCLES: MetricInfo = MetricInfo {
            name: "estimated cycles",
            short: "cycles",
            unit: "cycles/entry",
            per_cycle: "cycles/cycle",
            collect: Collect::Events { cache_sim: true, value: estimated_cycles },
            slack: 4 * 35,
            missing: Some(NO_CACHE),
        };
        const FILE_SIZE: MetricInfo = space("file size", "file", "file bytes", |s| s.file_size);
        const LAST_PAGE: MetricInfo = space("last page", "last pg", "last page", |s| s.last_page);
        const BRANCH_PAGES: MetricInfo = space("branch pages", "branch", "branch pages", |s| s.branch_pages);
        const LEAF_PAGES: MetricInfo = space("leaf pages", "leaf", "leaf pages", |s| s.leaf_pages);
        const OVERFLOW_PAGES: MetricInfo = space("overflow pages", "ovfl", "ovfl pages", |s| s.overflow_pages);
        const DEPTH: MetricInfo = space("depth", "depth", "levels", |s| s.depth);
        const FREE_PAGES: MetricInfo = space("free pages", "free", "free pages", |s| s.free_pages);
        const READER_OPS: MetricInfo = MetricInfo {
            name: "reader time per get",
            short: "get",
            unit: "ns/get",
            per_cycle: "ns/get",
            collect: Collect::Crew {
                pass: CrewFigures::pass_reader_ns_per_get,
                intervals: CrewFigures::reader_ns_per_get,
            },
            slack: 0,
            missing: Some(NO_CREW),
        };
        const WRITER_OPS: MetricInfo = MetricInfo {
            name: "writer time per put",
            short: "put",
            unit: "ns/put",
            per_cycle: "ns/put",
            collect: Collect::Crew {
                pass: CrewFigures::pass_writer_ns_per_put,
                intervals: CrewFigures::writer_ns_per_put,
            },
            slack: 0,
            missing: Some(NO_CREW),
        };
        const READER_CPU: MetricInfo = MetricInfo {
            name: "reader CPU time per get",
            short: "get cpu",
            unit: "cpu ns/get",
            per_cycle: "cpu ns/get",
            collect: Collect::Crew {
                pass: CrewFigures::pass_reader_cpu_ns_per_get,
                intervals: CrewFigures::reader_cpu_ns_per_get,
            },
            slack: 0,
            missing: Some(NO_CREW),
        };
        const WRITER_CPU: MetricInfo = MetricInfo {
            name: "writer CPU time per put",
            short: "put cpu",
            unit: "cpu ns/put",
            per_cycle: "cpu ns/put",
            collect: Collect::Crew {
                pass: CrewFigures::pass_writer_cpu_ns_per_put,
                intervals: CrewFigures::writer_cpu_ns_per_put,
            },
            slack: 0,
            missing: Some(NO_CREW),
        };
        const SYNCS_PER_COMMIT: MetricInfo = io("syncs per commit", "syncs", "syncs/commit", |io| io.syncs);
        const BYTES_PER_COMMIT: MetricInfo = io("bytes written per commit", "bytes", "bytes/commit", |io| io.bytes);
        const MAJOR_FAULTS: MetricInfo = MetricInfo {
            name: "major faults",
            short: "majflt",
            unit: "faults/entry",
            per_cycle: "faults/cycle",
            collect: Collect::Faults,
            slack: 0,
            missing: Some(NO_FAULTS),
        };
        const COMMIT_P50: MetricInfo = MetricInfo {
            name: "median commit time",
            short: "commit",
            unit: "us/commit",
            per_cycle: "us/commit",
            collect: Collect::Commits { value: commits::median_ns },
            slack: 0,
            missing: Some(NO_COMMITS),
        };
        match self {
            Metric::Time => &TIME,
            Metric::Instructions => &INSTRUCTIONS,
            Metric::D1Misses => &D1_MISSES,
            Metric::LlMisses => &LL_MISSES,
            Metric::EstimatedCycles => &ESTIMATED_CYCLES,
            Metric::FileSize => &FILE_SIZE,
            Metric::LastPage => &LAST_PAGE,
            Metric::BranchPages => &BRANCH_PAGES,
            Metric::LeafPages => &LEAF_PAGES,
            Metric::OverflowPages => &OVERFLOW_PAGES,
            Metric::Depth => &DEPTH,
            Metric::FreePages => &FREE_PAGES,
            Metric::ReaderOps => &READER_OPS,
            Metric::WriterOps => &WRITER_OPS,
            Metric::ReaderCpu => &READER_CPU,
            Metric::WriterCpu => &WRITER_CPU,
            Metric::SyncsPerCommit => &SYNCS_PER_COMMIT,
            Metric::BytesPerCommit => &BYTES_PER_COMMIT,
            Metric::MajorFaults => &MAJOR_FAULTS,
            Metric::CommitP50 => &COMMIT_P50,
        }
    }

    /// The metric in a sentence.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The metric as the command line and JSON keys spell it ("d1-misses").
    pub fn key(self) -> &'static str {
        match self {
            Metric::Time => "time",
            Metric::Instructions => "instructions",
            Metric::D1Misses => "d1-misses",
            Metric::LlMisses => "ll-misses",
            Metric::EstimatedCycles => "estimated-cycles",
            Metric::FileSize => "file-size",
            Metric::LastPage => "last-page",
            Metric::BranchPages => "branch-pages",
            Metric::LeafPages => "leaf-pages",
            Metric::OverflowPages => "overflow-pages",
            Metric::Depth => "depth",
            Metric::FreePages => "free-pages",
            Metric::ReaderOps => "reader-ops",
            Metric::WriterOps => "writer-ops",
            Metric::ReaderCpu => "reader-cpu",
            Metric::WriterCpu => "writer-cpu",
            Metric::SyncsPerCommit => "syncs-per-commit",
            Metric::BytesPerCommit => "bytes-per-commit",
            Metric::MajorFaults => "major-faults",
            Metric::CommitP50 => "commit-p50",
        }
    }

    /// The column heading of LmdbJava's six workloads.
    pub fn unit(self) -> &'static str {
        self.info().unit
    }

    /// Whether the figures are exact counts, judged within a tolerance.
    pub fn is_exact(self) -> bool {
        matches!(
            self.info().collect,
            Collect::Events { .. } | Collect::Space { .. } | Collect::Io { .. } | Collect::Faults
        )
    }

    /// Whether every sample that has it holds it whether or not it was counted (space,
    /// major faults): shown beside any run's metric.
    pub fn beside_any(self) -> bool {
        self.is_space() || self.is_faults()
    }

    /// Whether it is counted around every write pass (syncs, bytes), per commit.
    pub fn is_io(self) -> bool {
        matches!(self.info().collect, Collect::Io { .. })
    }

    /// Whether every write pass reports it, counted or not (space, I/O).
    pub fn of_every_write(self) -> bool {
        self.is_space() || self.is_io()
    }

    /// The metric's figure of a write pass's I/O, in the pass's total; None for the others.
    pub fn of_io(self, io: &Io) -> Option<u64> {
        match self.info().collect {
            Collect::Io { value } => Some(value(io)),
            _ => None,
        }
    }

    /// Whether it is the process's major page faults around a whole pass.
    pub fn is_faults(self) -> bool {
        matches!(self.info().collect, Collect::Faults)
    }

    /// Whether it is a figure of a write pass's timed commits.
    pub fn is_commits(self) -> bool {
        matches!(self.info().collect, Collect::Commits { .. })
    }

    /// The metric's figure of a pass's timed commits (`Figures::commit_ns`), in
    /// nanoseconds; None for the other metrics, and for a pass that timed none.
    pub fn of_commits(self, buckets: &[(u64, u64)]) -> Option<u64> {
        match self.info().collect {
            Collect::Commits { value } => value(buckets),
            _ => None,
        }
    }

    /// Whether it is read from the environment a write left, not counted in a timed region.
    pub fn is_space(self) -> bool {
        matches!(self.info().collect, Collect::Space { .. })
    }

    /// Whether it is a figure of readers beside a writer, judged by paired intervals.
    pub fn is_crew(self) -> bool {
        matches!(self.info().collect, Collect::Crew { .. })
    }

    /// Whether collecting it needs callgrind's cache simulation.
    pub fn needs_cache_sim(self) -> bool {
        matches!(self.info().collect, Collect::Events { cache_sim: true, .. })
    }

    /// The metrics the cache simulation adds, in the registry's order.
    pub fn cache_simulated() -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().filter(|m| m.needs_cache_sim())
    }

    /// The metric's figure of a region whose events are `counts`; None for time, and for a
    /// region whose counter did not count what the metric needs.
    pub fn of_counts(self, counts: &Counts) -> Option<u64> {
        match self.info().collect {
            Collect::Clock
            | Collect::Space { .. }
            | Collect::Crew { .. }
            | Collect::Io { .. }
            | Collect::Faults
            | Collect::Commits { .. } => None,
            Collect::Events { value, .. } => value(counts),
        }
    }

    /// The metric's figure of the space a write left; None for the other metrics.
    pub fn of_space(self, space: &Space) -> Option<u64> {
        match self.info().collect {
            Collect::Space { value } => Some(value(space)),
            _ => None,
        }
    }

    /// The total of one operation: time in the workload's time unit per timed region;
    /// counts per operation of the pass (I/O: per commit, `ops` its commits); space as it
    /// is, of the whole pass; a commit's nanoseconds in microseconds (a crew's figures are
    /// per operation already: [`Metric::of_crew`]).
    pub fn per_op(self, total: f64, w: Workload, ops: u64) -> f64 {
        match self.info().collect {
            Collect::Clock => total / w.time_unit().ns,
            Collect::Commits { .. } => total / 1e3,
            Collect::Events { .. } | Collect::Io { .. } | Collect::Faults => total / ops.max(1) as f64,
            Collect::Space { .. } | Collect::Crew { .. } => total,
        }
    }

    /// A crew's figure for its whole pass, and for each of its intervals; None for the
    /// other metrics, and for a crew without what it needs (a writer's, without a writer).
    pub fn of_crew(self, crew: &CrewFigures) -> Option<(f64, Vec<f64>)> {
        match self.info().collect {
            Collect::Crew { pass, intervals } => Some((pass(crew)?, intervals(crew))),
            _ => None,
        }
    }

    /// A workload's unit under the metric: a preset names its own ("s/op", "instr/cycle").
    pub fn unit_of(self, w: Workload) -> &'static str {
        match (self.info().collect, w) {
            (Collect::Clock, _) => w.time_unit().label,
            (Collect::Space { .. } | Collect::Crew { .. } | Collect::Io { .. } | Collect::Commits { .. }, _) => {
                self.unit()
            }
            (_, Workload::Preset(p)) if p.per() == "cycle" => self.info().per_cycle,
            _ => self.unit(),
        }
    }

    /// How many of the metric's own units make one display unit of a whole region (ms,
    /// millions; a commit's µs).
    pub fn display(self) -> f64 {
        if self.is_commits() {
            1e3
        } else if self.is_space() || self.is_crew() || self.is_io() || self.is_faults() {
            1.0
        } else {
            1e6
        }
    }

    /// The exact metrics whose events `counts` holds, in declaration order.
    pub fn counted_in(counts: &Counts) -> impl Iterator<Item = Metric> + '_ {
        Metric::ALL.into_iter().filter(|m| m.of_counts(counts).is_some())
    }
}

/// Itamar Turner-Trauring's estimate, as iai-callgrind computes it: L1 hits + 5 × LL hits
/// + 35 × RAM hits.
fn estimated_cycles(c: &Counts) -> Option<u64> {
    let ram = c.sum(&[Event::ILmr, Event::DLmr, Event::DLmw])?;
    let l1_misses = c.sum(&[Event::I1mr, Event::D1mr, Event::D1mw])?;
    let accesses = c.sum(&[Event::Ir, Event::Dr, Event::Dw])?;
    let ll_hits = l1_misses.saturating_sub(ram);
    let l1_hits = accesses.saturating_sub(l1_misses);
    Some(l1_hits + 5 * ll_hits + 35 * ram)
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simulated() -> Counts {
        [(Event::Ir, 1000), (Event::Dr, 300), (Event::Dw, 100)]
            .into_iter()
            .chain([(Event::I1mr, 10), (Event::D1mr, 20), (Event::D1mw, 5)])
            .chain([(Event::ILmr, 1), (Event::DLmr, 4), (Event::DLmw, 2)])
            .collect()
    }

    #[test]
    fn estimated_cycles_follow_the_formula() {
        // RAM hits 7, L1 misses 35 so LL hits 28, accesses 1400 so L1 hits 1365.
        assert_eq!(Metric::EstimatedCycles.of_counts(&simulated()), Some(1365 + 5 * 28 + 35 * 7));
        assert_eq!(Metric::D1Misses.of_counts(&simulated()), Some(25));
        assert_eq!(Metric::LlMisses.of_counts(&simulated()), Some(7));
    }

    #[test]
    fn a_count_of_instructions_alone_holds_no_cache_metric() {
        let c = Counts::instructions(42);
        assert_eq!(Metric::counted_in(&c).collect::<Vec<_>>(), [Metric::Instructions]);
        assert_eq!(Metric::counted_in(&simulated()).count(), 4);
    }

    #[test]
    fn metrics_spell_themselves_as_the_command_line_does() {
        use clap::ValueEnum;
        for m in Metric::ALL {
            assert_eq!(m.to_possible_value().unwrap().get_name(), m.key());
            assert_eq!(serde_json::to_value(m).unwrap(), m.key());
        }
        assert_eq!(serde_json::to_string(&simulated()).unwrap().get(..9), Some("{\"Ir\":100"));
    }
}
