//! What is measured: the six LmdbJava workloads, their configuration, and the data they
//! read and write. The Rust engine (`native`) and the C twin (harness/workloads.c)
//! implement the same definitions, down to the pseudo-random sequences.

pub mod lmdb;
pub mod native;
pub mod perf;
pub mod presets;

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
        }
    }

    /// Reads the database the runner prepares once per tag (and so needs it).
    pub fn is_read(self) -> bool {
        match self {
            Workload::Preset(p) => p.reads_database(),
            w => w != Workload::Write,
        }
    }

    /// The unit its time is shown in.
    pub fn time_unit(self) -> presets::TimeUnit {
        match self {
            Workload::Preset(p) => p.time_unit(),
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
            let w: Workload = part.parse()?;
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
        let presets = presets::PresetWorkload::ALL.into_iter().map(Workload::Preset);
        Workload::ALL.into_iter().chain(presets).find(|w| w.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown workload {s}; known: readKey, readSeq, readRev, readCrc, readXxh64, write, all, \
                 and the presets' (run --preset list)"
            )
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    /// Native 4-byte integers in a database opened with MDB_INTEGERKEY.
    Int,
    /// 16-byte zero-padded decimal strings, no MDB_INTEGERKEY.
    Str16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Seq,
    /// A seeded permutation; random writes use plain puts, not MDB_APPEND.
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// The key's bytes, then zeros (LmdbJava's values).
    Fixed,
    /// Slices of a seeded 1 MiB pool.
    Random,
}

/// Every workload parameter; defaults are LmdbJava's benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct WorkloadConfig {
    /// Entries per operation.
    #[arg(long, default_value_t = 1_000_000)]
    pub entries: u32,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    pub value_size: u32,
    #[arg(long, value_enum, default_value_t = KeyKind::Int)]
    pub keys: KeyKind,
    #[arg(long, value_enum, default_value_t = Order::Seq)]
    pub order: Order,
    #[arg(long, value_enum, default_value_t = ValueKind::Fixed)]
    pub values: ValueKind,
    /// Open environments without MDB_WRITEMAP.
    #[arg(long)]
    pub no_writemap: bool,
    /// Open environments without MDB_NOSYNC.
    #[arg(long)]
    pub sync: bool,
    /// Seed of the random order and random values.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Map size in bytes (default: entries × value size × 32 / 10, as LmdbJava).
    #[arg(long)]
    pub map_size: Option<u64>,
    /// The presets' parameters (`run --preset`).
    #[command(flatten)]
    #[serde(default, skip_serializing_if = "presets::PresetConfig::is_default")]
    pub preset: presets::PresetConfig,
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
            sync: false,
            seed: 42,
            map_size: None,
            preset: presets::PresetConfig::default(),
        }
    }
}

/// Size of the random-value pool.
pub const POOL_BYTES: usize = 1 << 20;

impl WorkloadConfig {
    pub fn effective_map_size(&self) -> u64 {
        self.map_size.unwrap_or(self.entries as u64 * self.value_size as u64 * 32 / 10)
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
        if self.no_writemap {
            a.push("--no-writemap".into());
        }
        if self.sync {
            a.push("--sync".into());
        }
        a.extend(self.preset.to_args());
        a
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.entries > 0, "--entries must be at least 1");
        anyhow::ensure!(
            self.value_size as usize >= self.key_size(),
            "--value-size must hold the key ({} bytes)",
            self.key_size()
        );
        anyhow::ensure!((self.value_size as usize) < POOL_BYTES, "--value-size must be under 1 MiB");
        Ok(())
    }
}

/// splitmix64: tiny, and bit-identical in the C twin, so both engines see the same data.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// All keys and values of a configuration, laid out before any timing starts.
pub struct Dataset {
    pub key_size: usize,
    pub value_size: usize,
    /// Key i's bytes at `keys[i*key_size..]`, in sorted (insertion-by-append) order.
    pub keys: Vec<u8>,
    /// Value of key i at `values[i*value_size..]`.
    pub values: Vec<u8>,
    /// The order in which random-order workloads visit keys (identity for `seq`).
    pub order: Vec<u32>,
}

impl Dataset {
    pub fn generate(cfg: &WorkloadConfig) -> Dataset {
        let n = cfg.entries as usize;
        let ks = cfg.key_size();
        let vs = cfg.value_size as usize;
        let mut keys = vec![0u8; n * ks];
        for i in 0..n {
            let k = &mut keys[i * ks..(i + 1) * ks];
            match cfg.keys {
                KeyKind::Int => k.copy_from_slice(&(i as u32).to_ne_bytes()),
                KeyKind::Str16 => k.copy_from_slice(format!("{i:016}").as_bytes()),
            }
        }
        let mut rng = SplitMix64(cfg.seed);
        let mut values = vec![0u8; n * vs];
        match cfg.values {
            ValueKind::Fixed => {
                for i in 0..n {
                    values[i * vs..i * vs + ks].copy_from_slice(&keys[i * ks..(i + 1) * ks]);
                }
            }
            ValueKind::Random => {
                let mut pool = vec![0u8; POOL_BYTES];
                for chunk in pool.chunks_mut(8) {
                    let r = rng.next_u64().to_le_bytes();
                    chunk.copy_from_slice(&r[..chunk.len()]);
                }
                let span = (POOL_BYTES - vs) as u64;
                for i in 0..n {
                    let off = (rng.next_u64() % span) as usize;
                    values[i * vs..(i + 1) * vs].copy_from_slice(&pool[off..off + vs]);
                }
            }
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        if cfg.order == Order::Random {
            // Fisher–Yates, from the top, with the same generator as the values.
            for i in (1..n).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
        }
        Dataset { key_size: ks, value_size: vs, keys, values, order }
    }

    pub fn key(&self, i: usize) -> &[u8] {
        &self.keys[i * self.key_size..(i + 1) * self.key_size]
    }

    pub fn value(&self, i: usize) -> &[u8] {
        &self.values[i * self.value_size..(i + 1) * self.value_size]
    }
}

/// What a read returned: every tag must agree on it for the same configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checksum {
    pub entries: u64,
    /// readCrc: the CRC32; readXxh64: the sum; the others: xxHash64 of every key then
    /// value in visiting order (computed in an untimed pass).
    pub digest: u64,
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:016x}", self.entries, self.digest)
    }
}

/// The checksum a correct read of `data` must produce, computed without LMDB.
pub fn expected_checksum(w: Workload, data: &Dataset) -> Option<Checksum> {
    let n = data.order.len();
    // LMDB returns keys in its sort order: integer keys numerically, strings bytewise;
    // both equal insertion order here.
    let visit: Box<dyn Iterator<Item = usize>> = match w {
        Workload::ReadKey => Box::new(data.order.iter().map(|&i| i as usize)),
        Workload::ReadSeq | Workload::ReadCrc | Workload::ReadXxh64 => Box::new(0..n),
        Workload::ReadRev => Box::new((0..n).rev()),
        Workload::Write | Workload::Preset(_) => return None,
    };
    let digest = match w {
        Workload::ReadCrc => {
            let mut h = crc32fast::Hasher::new();
            for i in visit {
                h.update(data.key(i));
                h.update(data.value(i));
            }
            h.finalize() as u64
        }
        Workload::ReadXxh64 => visit.fold(0u64, |acc, i| {
            acc.wrapping_add(xxhash_rust::xxh64::xxh64(data.key(i), 0))
                .wrapping_add(xxhash_rust::xxh64::xxh64(data.value(i), 0))
        }),
        _ => {
            let mut h = xxhash_rust::xxh64::Xxh64::new(0);
            for i in visit {
                h.update(data.key(i));
                h.update(data.value(i));
            }
            h.digest()
        }
    };
    Some(Checksum { entries: n as u64, digest })
}
