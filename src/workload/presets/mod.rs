//! Presets: benchmark shapes other people publish, each a named set of workloads with its
//! own dataset, parameters, section titles and units. They run through the same runner as
//! the six LmdbJava workloads (one worker per engine, tag and round), so their times are
//! judged by the same statistics. The C twin of this module is harness/presets.c.
//!
//! - `tokyo-cabinet`: Xodus's JMH run of the Tokyo Cabinet benchmark on LMDB.
//! - `open-get`: cold-start latency: open, read one key, close, a thousand times.
//! - `migrate`: a bulk copy into a fresh environment, and a read-only pass, warm and cold.
//! - `lmdb`: LMDB's own benchmark shapes and the paths LMDB changed a table's rows.
//! - `concurrency`: readers beside a writer, a crew of threads per unit.

pub mod concurrency;
pub mod config;
pub mod data;
pub mod lmdb_suite;
pub mod migrate;
pub mod open_get;
pub mod pagecache;
pub mod store;
pub mod tokyo_cabinet;
pub mod usage;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::lmdb::{self, Api, Failed};
use super::measure::{timed, Outcome, Places};
pub use super::measure::{Figures, Residency, Usage};
use super::perf::PerfCounter;
use super::{Checksum, Workload, WorkloadConfig};
pub use config::PresetConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Preset {
    TokyoCabinet,
    OpenGet,
    Migrate,
    Lmdb,
    Concurrency,
}

/// The workloads of every preset, in the order their sections are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PresetWorkload {
    TcSuccessiveWrite,
    TcRandomWrite,
    TcSuccessiveRead,
    TcRandomRead,
    OpenGet,
    OpenGetWrite,
    MigrateCopyWarm,
    MigrateCopyCold,
    MigrateReadWarm,
    MigrateReadCold,
    #[serde(rename = "readwhilewriting")]
    ReadWhileWriting,
    #[serde(rename = "stalereader")]
    StaleReader,
    #[serde(rename = "slotwhilewriting")]
    SlotWhileWriting,
    /// A row of harness/lmdb_suite.def, by its name.
    #[serde(untagged)]
    Lmdb(lmdb_suite::LmdbWorkload),
}

/// How a section shows time: its column heading and how many nanoseconds make one unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeUnit {
    pub label: &'static str,
    pub ns: f64,
}

pub const MS_PER_OP: TimeUnit = TimeUnit { label: "ms/op", ns: 1e6 };
/// A program's: one run of it, exec to exit.
pub const MS_PER_RUN: TimeUnit = TimeUnit { label: "ms/run", ns: 1e6 };
const S_PER_OP: TimeUnit = TimeUnit { label: "s/op", ns: 1e9 };
const US_PER_CYCLE: TimeUnit = TimeUnit { label: "us/cycle", ns: 1e3 };

/// One preset workload's definition, in one row.
struct Info {
    name: &'static str,
    title: &'static str,
    preset: Preset,
    /// It reads the database the runner prepares once per tag.
    reads_database: bool,
    unit: TimeUnit,
    /// What one operation of the pass is (instruction counts are per one).
    per: &'static str,
}

impl PresetWorkload {
    /// Every preset's workloads, in section order.
    pub fn all() -> impl Iterator<Item = PresetWorkload> {
        PresetWorkload::FIXED.into_iter().chain(lmdb_suite::LmdbWorkload::all().map(PresetWorkload::Lmdb))
    }

    const FIXED: [PresetWorkload; 13] = [
        PresetWorkload::TcSuccessiveWrite,
        PresetWorkload::TcRandomWrite,
        PresetWorkload::TcSuccessiveRead,
        PresetWorkload::TcRandomRead,
        PresetWorkload::OpenGet,
        PresetWorkload::OpenGetWrite,
        PresetWorkload::MigrateCopyWarm,
        PresetWorkload::MigrateCopyCold,
        PresetWorkload::MigrateReadWarm,
        PresetWorkload::MigrateReadCold,
        PresetWorkload::ReadWhileWriting,
        PresetWorkload::StaleReader,
        PresetWorkload::SlotWhileWriting,
    ];

    fn info(self) -> Info {
        use Preset::*;
        use PresetWorkload as W;
        if let W::Lmdb(l) = self {
            let d = l.declared();
            return Info {
                name: d.name,
                title: d.title,
                preset: Lmdb,
                reads_database: false,
                unit: MS_PER_OP,
                per: "op",
            };
        }
        let (name, title, preset, reads_database, unit, per) = match self {
            W::TcSuccessiveWrite => ("tcSuccessiveWrite", "Successive Write", TokyoCabinet, false, S_PER_OP, "entry"),
            W::TcRandomWrite => ("tcRandomWrite", "Random Write", TokyoCabinet, false, S_PER_OP, "entry"),
            W::TcSuccessiveRead => ("tcSuccessiveRead", "Successive Read", TokyoCabinet, true, S_PER_OP, "entry"),
            W::TcRandomRead => ("tcRandomRead", "Random Read", TokyoCabinet, true, S_PER_OP, "entry"),
            W::OpenGet => ("openGet", "Open, Get, Close", OpenGet, true, US_PER_CYCLE, "cycle"),
            W::OpenGetWrite => ("openGetWrite", "Write the Database", OpenGet, false, MS_PER_OP, "entry"),
            W::MigrateCopyWarm => ("migrateCopyWarm", "Copy, Warm", Migrate, true, MS_PER_OP, "entry"),
            W::MigrateCopyCold => ("migrateCopyCold", "Copy, Cold", Migrate, true, MS_PER_OP, "entry"),
            W::MigrateReadWarm => ("migrateReadWarm", "Read Only, Warm", Migrate, true, MS_PER_OP, "entry"),
            W::MigrateReadCold => ("migrateReadCold", "Read Only, Cold", Migrate, true, MS_PER_OP, "entry"),
            W::ReadWhileWriting => {
                ("readwhilewriting", "Readers Beside a Writer", Concurrency, false, MS_PER_OP, "get")
            }
            W::StaleReader => ("stalereader", "Stale Readers Beside a Writer", Concurrency, false, MS_PER_OP, "get"),
            W::SlotWhileWriting => (
                "slotwhilewriting",
                "Readers Claiming a Slot per Get Beside a Writer",
                Concurrency,
                false,
                MS_PER_OP,
                "get",
            ),
            W::Lmdb(_) => unreachable!("answered above"),
        };
        Info { name, title, preset, reads_database, unit, per }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn title(self) -> &'static str {
        self.info().title
    }

    pub fn preset(self) -> Preset {
        self.info().preset
    }

    pub fn reads_database(self) -> bool {
        self.info().reads_database
    }

    pub fn time_unit(self) -> TimeUnit {
        self.info().unit
    }

    /// "entry" or "cycle": the operation instruction counts are divided by.
    pub fn per(self) -> &'static str {
        self.info().per
    }

    /// A cold variant of migrate: the source file is evicted before the clock starts.
    pub fn is_cold(self) -> bool {
        matches!(self, PresetWorkload::MigrateCopyCold | PresetWorkload::MigrateReadCold)
    }
}

impl FromStr for PresetWorkload {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        PresetWorkload::all().find(|w| w.name().eq_ignore_ascii_case(s)).ok_or(())
    }
}

impl Preset {
    pub const ALL: [Preset; 5] =
        [Preset::TokyoCabinet, Preset::OpenGet, Preset::Migrate, Preset::Lmdb, Preset::Concurrency];

    pub fn name(self) -> &'static str {
        match self {
            Preset::TokyoCabinet => "tokyo-cabinet",
            Preset::OpenGet => "open-get",
            Preset::Migrate => "migrate",
            Preset::Lmdb => "lmdb",
            Preset::Concurrency => "concurrency",
        }
    }

    pub fn workloads(self) -> Vec<Workload> {
        PresetWorkload::all().filter(|w| w.preset() == self).map(Workload::Preset).collect()
    }

    /// Its own flags, with their defaults, for `run --preset list`.
    pub fn flags(self) -> &'static str {
        match self {
            Preset::TokyoCabinet => "--entries (1000000), --map-size (1 GiB)",
            Preset::OpenGet => {
                "--entries (100000), --preset-max-value (2000), --open-get-cycles (1000), \
                 --open-get-key (the middle entry)"
            }
            Preset::Migrate => "--entries (100000), --preset-max-value (2000), --migrate-append",
            Preset::Lmdb => "--entries (100000), --map-size (4 KiB an entry, at least 64 MiB)",
            Preset::Concurrency => {
                "--entries (100000), --readers (1), --interval-ms (200), --intervals (5), --puts-per-txn (1), \
                 --writes-per-second (unlimited), --puts-per-interval (stalereader 1000, else unlimited)"
            }
        }
    }

    /// Where the shape comes from and what it measures, for `run --preset list`.
    pub fn about(self) -> &'static str {
        match self {
            Preset::TokyoCabinet => {
                "The Tokyo Cabinet benchmark as Xodus's JMH suite runs it on LMDB: each operation one \
                 single-shot timed pass over the whole key set. Writes: one transaction of plain cursor \
                 puts into a fresh environment. Reads: a read transaction (begun inside the timed pass) \
                 on a freshly opened environment; successive reads walk a cursor, random reads look \
                 every key up (MDB_SET_KEY)."
            }
            Preset::OpenGet => {
                "Cold-start latency as in a published RocksDB/Speedb/LMDB comparison: each cycle opens \
                 the environment read-only, begins a read transaction, gets one fixed key (mdb_get), \
                 ends the transaction and closes the environment. A sample is the mean cycle; the \
                 latency table pools every cycle. Writing the database is timed as its own workload; \
                 its size on disk is the data file's allocated bytes. The paper used 1,000,000 \
                 entries (1.1 GB on disk); the default here is 100,000 (175 MB on disk with \
                 LMDB 0.9.33) so a run across every tag stays short: --entries 1000000 \
                 gives the paper's size."
            }
            Preset::Migrate => {
                "A bulk copy as in a published game-server backend migration: read every entry of a \
                 populated environment and put it into a fresh one (Copy), or only read it (Read \
                 Only). Warm: the source file is read into the page cache first. Cold: it is synced \
                 and evicted (POSIX_FADV_DONTNEED) and mincore must find none of it resident, else \
                 the sample is dropped as \"cold not achieved\". Wall, user and sys time, peak RSS \
                 and page faults of the timed region are reported beside the verdicts."
            }
            Preset::Lmdb => {
                "The shapes of LMDB's own benchmarks (db_bench_mdb, ioarena) and the code paths LMDB \
                 changed that LmdbJava's six never run: fills of every value size and batch, \
                 overwrites and deletes beside a long-lived reader, large values on a fragmented \
                 freelist, sorted duplicates, reset/renew reads, copies and drops. Each workload is \
                 one row of harness/lmdb_suite.def, which both engines read; each pass runs on a \
                 fresh environment, its setup untimed, and its checksum and space are read after it."
            }
            Preset::Concurrency => {
                "Readers beside a writer, as db_bench_mdb's readwhilewriting: N reader threads get random \
                 keys, each get in a read transaction reset and renewed around it, beside one writer \
                 overwriting random keys, --puts-per-txn a transaction. stalereader: each reader holds one \
                 read transaction for the whole interval, so the writer cannot reuse the pages it frees \
                 (the file grows). slotwhilewriting: each get in a read transaction begun and aborted \
                 around it, the environment opened with MDB_NOTLS, so every get claims a reader slot under \
                 the lock file's reader-table mutex and releases it (readwhilewriting's readers claim \
                 theirs once). A pass is --intervals intervals of --interval-ms; paired, every unit's \
                 crew takes its interval in a shuffled order each round, one crew at a time, its threads \
                 held to CPUs (the writer on one of its own when they outnumber them). Judged by \
                 --metric reader-ops (a reader thread's ns per get) or writer-ops (ns per put), or \
                 reader-cpu and writer-cpu (the same in each thread's CPU time, without its waits for \
                 a core); \
                 `--readers 1,2,4` makes a unit of each count; `--reader-procs` runs each reader in a \
                 process of its own (one reader thread each, sharing the lock file's reader table) \
                 beside the writer's."
            }
        }
    }

    /// The dataset in one line, with the parameters in force (a resolved configuration).
    pub fn dataset(self, cfg: &WorkloadConfig) -> String {
        let n = cfg.entries;
        match self {
            Preset::TokyoCabinet => {
                format!("{n} keys of 8 decimal digits (00000000, 00000001, ...), each value equal to its key")
            }
            Preset::OpenGet | Preset::Migrate => format!(
                "{n} entries: 4-byte big-endian integer keys, values random printable strings of 0 to {} bytes",
                cfg.preset.max_value
            ),
            Preset::Lmdb => format!(
                "up to {n} entries: keys of 16 decimal digits, values cut from a random pool, of each \
                 workload's size"
            ),
            Preset::Concurrency => format!(
                "{n} keys of 16 decimal digits, values of {} bytes naming their key",
                crate::workload::concurrent::VALUE_BYTES
            ),
        }
    }

    /// How the environments are opened and the preset's own settings, in one line (a
    /// resolved configuration).
    pub fn settings(self, cfg: &WorkloadConfig) -> String {
        let r = &cfg.preset;
        let mut flags = vec![cfg.sync.flags_named()];
        if !cfg.no_writemap {
            flags.push("MDB_WRITEMAP");
        }
        if cfg.readahead == super::Readahead::Off {
            flags.push("MDB_NORDAHEAD");
        }
        let map = format!("map {} MiB", cfg.map_size.expect("resolved") >> 20);
        let own = match self {
            Preset::TokyoCabinet => String::new(),
            Preset::OpenGet => {
                format!(", {} cycles a sample on key {}", r.open_get_cycles, r.open_get_key.expect("resolved"))
            }
            Preset::Migrate => (if r.migrate_append { ", MDB_APPEND puts" } else { ", plain puts" }).to_string(),
            Preset::Lmdb => ", the unnamed database (MDB_DUPSORT for the duplicates)".to_string(),
            Preset::Concurrency => format!(
                ", {} intervals of {} ms a pass, {} put(s) a write transaction{}{}, MDB_NOTLS for slotwhilewriting",
                r.intervals,
                r.interval_ms,
                r.puts_per_txn,
                r.writes_per_second.map_or(String::new(), |n| format!(", at most {n} puts/s")),
                match r.reader_procs {
                    true => ", each reader a process of its own (--reader-procs)",
                    false => "",
                }
            ),
        };
        format!("{}, {map}{own}", flags.join(", "))
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Preset> {
        Preset::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            let known: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
            anyhow::anyhow!("unknown preset {s}; known: {}, list", known.join(", "))
        })
    }
}

/// A cold sample whose file was still in the page cache: the report shows "cold not
/// achieved" instead of a number.
#[derive(Debug, thiserror::Error)]
#[error("cold not achieved: {resident} of {total} pages of {file} still resident after fsync and POSIX_FADV_DONTNEED")]
pub struct ColdNotAchieved {
    pub resident: u64,
    pub total: u64,
    pub file: String,
}

/// Where a worker runs a preset workload.
pub struct Context<'a> {
    pub api: &'a Api,
    /// Resolved for the workload's preset.
    pub cfg: &'a WorkloadConfig,
    /// The database the runner prepared (workloads that read one).
    pub dir: Option<&'a Path>,
    /// Where fresh environments go.
    pub scratch: &'a Path,
    pub iterations: u32,
    /// Each commit of the lmdb suite's passes timed too.
    pub time_commits: bool,
}

impl Context<'_> {
    fn dir(&self) -> Result<&Path> {
        self.dir.ok_or_else(|| anyhow::anyhow!("this preset workload reads the prepared database: it needs --dir"))
    }
}

/// Times `write` on a fresh environment in the scratch directory, `iterations` times; each
/// pass's checksum is of the environment written, its figures the operations and the
/// data file's size on disk, beside the space it left.
fn fresh_writes(
    ctx: &Context,
    ops: usize,
    mut counter: Option<&mut PerfCounter>,
    write: impl Fn(&lmdb::Env) -> Result<(), Failed>,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    for _ in 0..ctx.iterations {
        let dir = tempfile::tempdir_in(ctx.scratch)?;
        let env = lmdb::Env::open(ctx.api, dir.path(), &config::env_options(ctx.cfg))?;
        let (ns, instructions, r) = timed(counter.as_deref_mut(), || write(&env))?;
        r.map_err(|e| ctx.api.failure(e))?;
        let checksum = store::walk_checksum(&env)?;
        let space = env.space(dir.path())?;
        drop(env);
        let figures =
            Figures { ops: Some(ops as u64), db_bytes: Some(store::size_on_disk(dir.path())?), ..Default::default() };
        out.push_checked(ns, instructions, checksum, figures)?;
        out.space.push(space);
    }
    Ok(out)
}

/// Writes preset `p`'s database into `dir` (a configuration resolved for it), once per
/// run and tag.
pub fn prepare(api: &Api, dir: &Path, cfg: &WorkloadConfig, p: Preset) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    match p {
        Preset::TokyoCabinet => tokyo_cabinet::prepare(api, dir, cfg),
        Preset::OpenGet | Preset::Migrate => open_get::prepare(api, dir, cfg),
        Preset::Lmdb => anyhow::bail!("lmdb's workloads read no prepared database: each pass makes its own"),
        Preset::Concurrency => {
            anyhow::bail!("concurrency's workloads read no prepared database: each pass fills its own")
        }
    }
}

/// Runs one preset workload `places.iterations` times (a configuration resolved for its preset).
pub fn run(
    api: &Api,
    w: PresetWorkload,
    cfg: &WorkloadConfig,
    places: Places,
    counter: Option<&mut PerfCounter>,
) -> Result<Outcome> {
    let Places { dir, scratch, iterations, time_commits, .. } = places;
    let ctx = Context { api, cfg, dir, scratch, iterations, time_commits };
    match w.preset() {
        Preset::TokyoCabinet => tokyo_cabinet::run(&ctx, w, counter),
        Preset::OpenGet => open_get::run(&ctx, w, counter),
        Preset::Migrate => migrate::run(&ctx, w, counter),
        Preset::Lmdb => match w {
            PresetWorkload::Lmdb(l) => lmdb_suite::run(&ctx, l, counter),
            _ => unreachable!("lmdb's workloads are rows of its table"),
        },
        Preset::Concurrency => concurrency::run(&ctx, w, cfg.preset.crew_readers),
    }
}

/// The checksum a correct pass of `w` must produce under a configuration resolved for its
/// preset, computed without LMDB (callers use [`crate::workload::expected_checksum`], for
/// every workload); None for readers beside a writer, whose reads depend on the writer's
/// pace (each reader checks that every value names its key instead).
pub(crate) fn expected_checksum(w: PresetWorkload, cfg: &WorkloadConfig) -> Option<Checksum> {
    Some(match w.preset() {
        Preset::TokyoCabinet => tokyo_cabinet::expected_checksum(w, cfg),
        Preset::OpenGet | Preset::Migrate => open_get::expected_checksum(w, cfg),
        Preset::Lmdb => match w {
            PresetWorkload::Lmdb(l) => lmdb_suite::expected_checksum(l, cfg),
            _ => unreachable!("lmdb's workloads are rows of its table"),
        },
        Preset::Concurrency => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_every_preset_has_workloads() {
        for w in PresetWorkload::all() {
            assert_eq!(w.name().parse::<PresetWorkload>(), Ok(w));
        }
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
            assert!(!p.workloads().is_empty());
        }
        assert!("nope"
            .parse::<Preset>()
            .unwrap_err()
            .to_string()
            .contains("tokyo-cabinet, open-get, migrate, lmdb, concurrency, list"));
    }
}
