//! What is measured: the six LmdbJava workloads, their configuration, and the data they
//! read and write. The Rust engine (`native`) and the C twin (harness/workloads.c)
//! implement the same definitions, down to the pseudo-random sequences.

pub mod checksum;
pub mod concurrent;
pub mod dataset;
pub mod iocount;
pub mod lmdb;
pub mod malloc;
pub mod measure;
pub mod native;
pub mod paired;
pub mod pass;
pub mod perf;
pub mod presets;
pub mod profile_part;
pub mod program;
pub mod reader_procs;
pub mod session;
pub mod settings;
pub mod space;
pub mod suite;

pub use checksum::Checksum;
pub use dataset::{Dataset, SplitMix64, POOL_BYTES};
pub use lmdb::{Readahead, SyncMode};
pub use settings::{EnvSettings, MemoryLimit};

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The six workloads, named as LmdbJava names them, and the presets' workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Workload {
    #[serde(rename = "readKey")]
    ReadKey,
    #[serde(rename = "readSeq")]
    ReadSeq,
    #[serde(rename = "readRev")]
    ReadRev,
    #[serde(rename = "readCrc")]
    ReadCrc,
    #[serde(rename = "readXxh64")]
    ReadXxh64,
    #[serde(rename = "write")]
    Write,
    /// Written by its own name ("tcRandomWrite").
    #[serde(untagged)]
    Preset(presets::PresetWorkload),
    /// A program of the user's (`run --program FILE.c`), by its file's stem; any name no
    /// other workload has reads as one.
    #[serde(untagged)]
    Program(program::ProgramName),
}

impl Workload {
    pub const ALL: [Workload; 6] = [
        Workload::ReadKey,
        Workload::ReadSeq,
        Workload::ReadRev,
        Workload::ReadCrc,
        Workload::ReadXxh64,
        Workload::Write,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::ReadKey => "readKey",
            Workload::ReadSeq => "readSeq",
            Workload::ReadRev => "readRev",
            Workload::ReadCrc => "readCrc",
            Workload::ReadXxh64 => "readXxh64",
            Workload::Write => "write",
            Workload::Preset(p) => p.name(),
            Workload::Program(p) => p.as_str(),
        }
    }

    /// The section titles of LmdbJava's "LMDB Library Performance Analysis".
    pub fn title(self) -> &'static str {
        match self {
            Workload::ReadKey => "Read by Key",
            Workload::ReadSeq => "Iterate Sequentially",
            Workload::ReadRev => "Iterate Reverse",
            Workload::ReadCrc => "Calculate CRC32",
            Workload::ReadXxh64 => "Calculate xxHash64",
            Workload::Write => "Write Entry",
            Workload::Preset(p) => p.title(),
            Workload::Program(p) => p.as_str(),
        }
    }

    /// Whether it runs on an LMDB of `version` under `sync`: rows that ask for a 1.0 option
    /// do not run before 1.0, and nothing runs in a per-transaction sync mode before the
    /// LMDB that takes its flag ([`SyncMode::applies_to`]).
    pub fn applies_to(
        self,
        version: (i32, i32, i32),
        sync: SyncMode,
    ) -> Result<(), presets::lmdb_suite::declared::NotApplicable> {
        sync.applies_to(version)?;
        match self {
            Workload::Preset(presets::PresetWorkload::Lmdb(l)) => l.declared().applies_to(version),
            _ => Ok(()),
        }
    }

    /// The passes (samples) one iteration of it makes in a unit's process at `entries`:
    /// an lmdb-suite row of few commits makes several where its commits are timed
    /// ([`presets::lmdb_suite::declared::SuiteRow::passes`]), every other workload one.
    pub fn passes(self, entries: u32, commits_timed: bool) -> u32 {
        match self {
            Workload::Preset(presets::PresetWorkload::Lmdb(l)) => l.declared().passes(entries, commits_timed),
            _ => 1,
        }
    }

    /// Reads the database the runner prepares once per tag (and so needs it).
    pub fn is_read(self) -> bool {
        match self {
            Workload::Preset(p) => p.reads_database(),
            Workload::Program(_) => false,
            w => w != Workload::Write,
        }
    }

    /// Its chunks stand alone: each times the same calls whatever ran before it, so a
    /// chunk another layout of the unit times need not run here at all: readKey's gets of
    /// the keys in its range, and a walk's steps once a get untimed has placed its cursor
    /// where the chunk before it ends ([`pass::Pass::enter`]). A walk that computes what it
    /// visits (readCrc, readXxh64) needs every entry, and a write every chunk in order.
    pub fn chunks_stand_alone(self) -> bool {
        matches!(self, Workload::ReadKey | Workload::ReadSeq | Workload::ReadRev)
    }

    /// Its timed pass computes an output of its own (a CRC, an xxHash sum), which must be
    /// what verification read.
    pub fn computes_output(self) -> bool {
        matches!(self, Workload::ReadCrc | Workload::ReadXxh64)
    }

    /// Readers beside a writer (`--suite concurrency`): threads that work for an interval,
    /// so what they do is set by the clock, and no count of it repeats.
    pub fn is_crew(self) -> bool {
        self.suite() == suite::Suite::Concurrency
    }

    /// It measures the page cache against a device (a cold pass evicts its file and checks
    /// that none of it is left), so its files must lie on a disk: a tmpfs evicts nothing.
    pub fn needs_page_cache(self) -> bool {
        matches!(self, Workload::Preset(p) if p.is_cold())
    }

    /// A program of the user's, run whole by the runner rather than by a worker.
    pub fn is_program(self) -> bool {
        matches!(self, Workload::Program(_))
    }

    /// The built-in workload named `name` (the six's, the presets'), if there is one.
    pub fn built_in(name: &str) -> Option<Workload> {
        let presets = presets::PresetWorkload::all().map(Workload::Preset);
        Workload::ALL.into_iter().chain(presets).find(|w| w.name().eq_ignore_ascii_case(name))
    }

    /// The unit its time is shown in.
    pub fn time_unit(self) -> presets::TimeUnit {
        match self {
            Workload::Preset(p) => p.time_unit(),
            Workload::Program(_) => presets::MS_PER_RUN,
            _ => presets::MS_PER_OP,
        }
    }

    /// `all`, or a comma-separated list of names.
    pub fn parse_list(s: &str) -> anyhow::Result<Vec<Workload>> {
        if s.trim() == "all" {
            return Ok(Workload::ALL.to_vec());
        }
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let w: Workload = part.parse().map_err(|e| anyhow::anyhow!("{e}; or all for LmdbJava's six"))?;
            if !out.contains(&w) {
                out.push(w);
            }
        }
        anyhow::ensure!(!out.is_empty(), "no workload named in {s:?}");
        Ok(out)
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Workload> {
        let program = || program::ProgramName::known(s).map(Workload::Program);
        Workload::built_in(s).or_else(program).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown workload {s}; known: readKey, readSeq, readRev, readCrc, readXxh64, write, \
                 the presets' (run --preset list), and a run's programs (--program)"
            )
        })
    }
}

/// The checksum a correct pass of `w` under `cfg` must produce, computed without LMDB:
/// a read's, or a preset pass's; None for LmdbJava's write, which reads nothing back.
pub fn expected_checksum(w: Workload, cfg: &WorkloadConfig) -> Option<Checksum> {
    w.suite().expected_checksums(&[w], cfg).pop().map(|(_, c)| c)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    /// Native 4-byte integers in a database opened with MDB_INTEGERKEY.
    Int,
    /// The integer as a 16-byte zero-padded decimal string, no MDB_INTEGERKEY.
    Str16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// 0 … N−1 in order, written with MDB_APPEND (LmdbJava's default).
    Seq,
    /// Distinct random non-negative integers, written with plain puts (no MDB_APPEND),
    /// the read database too, as LmdbJava's `sequential=false`.
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// The 4-byte integer key, then zeros (LmdbJava's values, for string keys too).
    Fixed,
    /// Consecutive slices of a seeded 1 MiB pool (LmdbJava's `valRandom`).
    Random,
}

/// Every workload parameter, resolved for the run's suite; defaults are LmdbJava's
/// benchmark. Flags set the data parameters here; the environment settings (entries, map,
/// MDB_WRITEMAP, sync) come from [`EnvSettings`] and the presets' own parameters from
/// `PresetConfig`, both resolved into this by [`EnvSettings::resolve`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
#[serde(from = "settings::Stored", into = "settings::Stored")]
pub struct WorkloadConfig {
    /// Entries of the data (`EnvSettings`).
    #[arg(skip)]
    pub entries: u32,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    pub value_size: u32,
    /// Keys: int (native 4-byte integers, MDB_INTEGERKEY) or str16 (16-byte zero-padded decimals).
    #[arg(long, value_enum, default_value_t = KeyKind::Int)]
    pub keys: KeyKind,
    /// Key order: seq (0 … N−1, written with MDB_APPEND) or random (distinct random keys,
    /// plain puts, as LmdbJava's sequential=false).
    #[arg(long, value_enum, default_value_t = Order::Seq)]
    pub order: Order,
    /// Values: fixed (the 4-byte key, then zeros) or random (slices of a seeded 1 MiB pool).
    #[arg(long, value_enum, default_value_t = ValueKind::Fixed)]
    pub values: ValueKind,
    /// Environments are opened without MDB_WRITEMAP (`EnvSettings`).
    #[arg(skip)]
    pub no_writemap: bool,
    /// How commits are made durable (`EnvSettings`; a unit of a `--sync` axis its own).
    #[arg(skip)]
    pub sync: SyncMode,
    /// Whether the map's faults read ahead (`EnvSettings`; a unit of a `--readahead` axis
    /// its own).
    #[arg(skip)]
    pub readahead: Readahead,
    /// Seed of the random order and random values.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// readKey's gets a pass: the first N keys of the write order, which under `--order
    /// random` are a uniform sample of the keys (default: every key). For data larger than
    /// memory, where each get may wait on the device and a pass of every key takes minutes.
    #[arg(long, value_name = "N")]
    pub key_sample: Option<u32>,
    /// The map size (`EnvSettings`): a preset's always; LmdbJava's unless it follows the
    /// entries ([`Self::effective_map_size`]).
    #[arg(skip)]
    pub map_size: Option<u64>,
    /// The presets' own parameters.
    #[arg(skip)]
    pub preset: presets::PresetConfig,
    /// A run file from before one set of settings: LmdbJava's settings it recorded beside
    /// the preset's (which are this configuration's), written back as they were read.
    #[arg(skip)]
    pub recorded: Option<settings::Superseded>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            entries: 1_000_000,
            value_size: 100,
            keys: KeyKind::Int,
            order: Order::Seq,
            values: ValueKind::Fixed,
            no_writemap: false,
            sync: SyncMode::Nosync,
            readahead: Readahead::On,
            seed: 42,
            key_sample: None,
            map_size: None,
            preset: presets::PresetConfig::default(),
            recorded: None,
        }
    }
}

impl WorkloadConfig {
    /// `--map-size`, else LmdbJava's entries × value size × 32 / 10, or [`Self::roomy_map_size`]
    /// where that is more (small or string-keyed data would not fit LmdbJava's).
    pub fn effective_map_size(&self) -> u64 {
        let lmdbjava = self.entries as u64 * self.value_size as u64 * 32 / 10;
        self.map_size.unwrap_or(lmdbjava.max(self.roomy_map_size()))
    }

    /// The least map that can hold the data: every entry in full 4 KiB pages (an 8-byte
    /// node header, key, value, a 2-byte pointer; a value too large for a node in
    /// overflow pages of its own), the branch pages above them, and the two meta pages.
    pub fn min_map_size(&self) -> u64 {
        const PAGE: u64 = 4096;
        const USABLE: u64 = PAGE - 16;
        // LMDB's largest node on a 4 KiB page (me_nodemax).
        const NODE_MAX: u64 = USABLE / 2 - 2;
        let (n, key, value) = (self.entries as u64, self.key_size() as u64, self.value_size as u64);
        let node = 8 + key + value;
        let (leaf_node, overflow_pages) = if node <= NODE_MAX {
            (node.next_multiple_of(2) + 2, 0)
        } else {
            (8 + key + 8 + 2, (value + 16).div_ceil(PAGE))
        };
        let leaves = (n * leaf_node).div_ceil(USABLE);
        let branches = if leaves > 1 { (leaves * (8 + key + 2)).div_ceil(USABLE) } else { 0 };
        (2 + leaves + branches + n * overflow_pages) * PAGE
    }

    /// A map that always fits: twice the least (random-order inserts split pages and leave
    /// them part full) and 256 KiB more.
    pub fn roomy_map_size(&self) -> u64 {
        2 * self.min_map_size() + (256 << 10)
    }

    pub fn key_size(&self) -> usize {
        match self.keys {
            KeyKind::Int => 4,
            KeyKind::Str16 => 16,
        }
    }

    /// The same configuration as arguments, for a worker process (Rust or C).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![
            "--entries".into(),
            self.entries.to_string(),
            "--value-size".into(),
            self.value_size.to_string(),
            "--keys".into(),
            match self.keys {
                KeyKind::Int => "int".into(),
                KeyKind::Str16 => "str16".into(),
            },
            "--order".into(),
            match self.order {
                Order::Seq => "seq".into(),
                Order::Random => "random".into(),
            },
            "--values".into(),
            match self.values {
                ValueKind::Fixed => "fixed".into(),
                ValueKind::Random => "random".into(),
            },
            "--seed".into(),
            self.seed.to_string(),
            "--map-size".into(),
            self.effective_map_size().to_string(),
        ];
        a.push(if self.no_writemap { "--no-writemap" } else { "--writemap" }.into());
        if self.sync != SyncMode::Nosync {
            a.push(format!("--sync={}", self.sync));
        }
        if self.readahead != Readahead::On {
            a.push(format!("--readahead={}", self.readahead));
        }
        if let Some(n) = self.key_sample {
            a.push(format!("--key-sample={n}"));
        }
        a.extend(self.preset.to_args());
        a
    }

    /// `--key-sample` where it means what it says: at least one get, no more than the keys,
    /// of LmdbJava's readKey, and a sample (a random order's first keys, not a seq order's).
    fn check_key_sample(&self, suite: Option<presets::Preset>) -> anyhow::Result<()> {
        let Some(n) = self.key_sample else { return Ok(()) };
        anyhow::ensure!(suite.is_none(), "--key-sample samples the gets of LmdbJava's readKey: a preset takes none");
        anyhow::ensure!(n >= 1, "--key-sample must be at least 1 get");
        anyhow::ensure!(
            n <= self.entries,
            "--key-sample {n} is more than the {} entries: give at most {}, or leave it out for every key",
            self.entries,
            self.entries
        );
        anyhow::ensure!(
            self.order == Order::Random,
            "--key-sample takes the first {n} keys of the write order: under --order seq that is the lowest keys, \
             not a sample; give --order random"
        );
        Ok(())
    }

    /// The same configuration at `entries` (a preset's data too): what a counting pass runs,
    /// a key sample at most all of them.
    pub fn with_entries(&self, workloads: &[Workload], entries: u32) -> anyhow::Result<WorkloadConfig> {
        let suite = suite::Suite::of(workloads)?.preset();
        let key_sample = self.key_sample.map(|n| n.min(entries));
        let mut cfg = WorkloadConfig { entries, key_sample, ..self.clone() };
        if suite.is_some() {
            cfg.preset.open_get_key = cfg.preset.open_get_key.filter(|k| *k < entries);
        }
        Ok(settings::fill_defaults(cfg, suite))
    }

    /// The gets of a readKey pass: `--key-sample`'s, else one per entry.
    pub fn key_gets(&self) -> usize {
        self.key_sample.map_or(self.entries, |n| n.min(self.entries)) as usize
    }

    /// Checks this configuration, resolved for `suite` (None: LmdbJava's six).
    pub fn validate(&self, suite: Option<presets::Preset>) -> anyhow::Result<()> {
        anyhow::ensure!(self.entries > 0, "--entries must be at least 1");
        self.check_key_sample(suite)?;
        if let Some(map) = self.map_size.filter(|m| suite.is_none() && *m < self.min_map_size()) {
            anyhow::bail!(
                "--map-size {map} cannot hold {} entries of a {}-byte key and a {}-byte value: it needs at least {} \
                 bytes, and {} always fits; or leave --map-size out for a map that fits",
                self.entries,
                self.key_size(),
                self.value_size,
                self.min_map_size(),
                self.roomy_map_size()
            );
        }
        // LmdbJava's fixed values begin with the 4-byte integer key, whatever the key type.
        anyhow::ensure!(
            self.values == ValueKind::Random || self.value_size as usize >= dataset::INT_BYTES,
            "--value-size must be at least 4 with --values fixed (each value begins with its 4-byte integer key)"
        );
        anyhow::ensure!(
            self.value_size >= 1 && (self.value_size as usize) < POOL_BYTES,
            "--value-size must be 1 byte to under 1 MiB"
        );
        match suite {
            Some(p) => self.preset.validate(p, self.entries),
            None => Ok(()),
        }
    }
}
