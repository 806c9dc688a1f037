//! The presets' own parameters, each a flag; the environment settings every suite shares
//! (entries, map size, MDB_WRITEMAP, sync) are `workload::settings::EnvSettings`, and a
//! preset's defaults for both are made explicit before a run, so the run file records them.

use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};

use super::Preset;
use crate::workload::lmdb::{self, Database, EnvOptions};
use crate::workload::WorkloadConfig;

/// Every parameter of the presets' own; a preset's defaults fill what is not given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct PresetConfig {
    /// Presets open-get and migrate: values are random printable strings of 0 to this many bytes.
    #[arg(id = "preset_max_value", long = "preset-max-value", value_name = "BYTES", default_value_t = 2000)]
    pub max_value: u32,
    /// Preset open-get: open-get-close cycles per sample.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub open_get_cycles: u32,
    /// Preset open-get: the key every cycle gets (default: the middle entry).
    #[arg(long, value_name = "K")]
    pub open_get_key: Option<u32>,
    /// Preset migrate: put with MDB_APPEND (the keys arrive sorted) instead of plain puts.
    #[arg(long)]
    pub migrate_append: bool,
    /// Suite concurrency: the length of an interval (a chunk of paired rounds), in milliseconds.
    #[arg(id = "preset_interval_ms", long = "interval-ms", value_name = "MS", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    pub interval_ms: u32,
    /// Suite concurrency: intervals per pass.
    #[arg(id = "preset_intervals", long = "intervals", value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub intervals: u32,
    /// Suite concurrency: the writer's puts per write transaction.
    #[arg(id = "preset_puts_per_txn", long = "puts-per-txn", value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub puts_per_txn: u32,
    /// Suite concurrency: the writer's puts per second at most (LMDB dbbench's
    /// --writes_per_second); unlimited when not given.
    #[arg(id = "preset_writes_per_second", long = "writes-per-second", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub writes_per_second: Option<u32>,
    /// Suite concurrency: the writer's puts per interval at most, then it rests until the
    /// interval ends (stalereader: 1000 unless given; readwhilewriting: no limit).
    #[arg(id = "preset_puts_per_interval", long = "puts-per-interval", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub puts_per_interval: Option<u32>,
    /// Suite concurrency: each reader a process of its own (one reader thread each)
    /// beside the writer's, sharing the environment's lock file and reader table as a
    /// multi-process deployment does; reader threads of the paired worker otherwise.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reader_procs: bool,
    /// Suite concurrency: reader threads of the unit a worker runs (the runner sets it
    /// from the unit's label; `run --readers` is the list).
    #[arg(long, hide = true, value_name = "N", default_value_t = 1)]
    #[serde(skip)]
    pub crew_readers: u32,
}

impl Default for PresetConfig {
    fn default() -> Self {
        PresetConfig {
            max_value: 2000,
            open_get_cycles: 1000,
            open_get_key: None,
            migrate_append: false,
            interval_ms: 200,
            intervals: 5,
            puts_per_txn: 1,
            writes_per_second: None,
            puts_per_interval: None,
            reader_procs: false,
            crew_readers: 1,
        }
    }
}

/// Largest value: a value of at most 1 MiB keeps every database within reach of a test.
const MAX_VALUE_LIMIT: u32 = 1 << 20;

impl PresetConfig {
    pub fn is_default(&self) -> bool {
        *self == PresetConfig::default()
    }

    /// Checks these parameters (resolved) for preset `p` on `n` entries.
    pub fn validate(&self, p: Preset, n: u32) -> Result<()> {
        if p == Preset::TokyoCabinet {
            ensure!(n <= 100_000_000, "--entries: tokyo-cabinet's 8-digit keys allow at most 100000000");
        }
        ensure!(self.max_value <= MAX_VALUE_LIMIT, "--preset-max-value must be at most {MAX_VALUE_LIMIT}");
        ensure!(self.open_get_cycles > 0, "--open-get-cycles must be at least 1");
        let key = self.open_get_key.expect("resolved");
        ensure!(key < n, "--open-get-key {key} is not below the entry count {n}");
        Ok(())
    }

    /// The options that differ from the defaults, as worker arguments (Rust or C).
    pub fn to_args(&self) -> Vec<String> {
        let d = PresetConfig::default();
        let mut a: Vec<String> = Vec::new();
        let mut opt = |flag: &str, v: Option<String>| a.extend(v.into_iter().flat_map(|v| [flag.to_string(), v]));
        opt("--preset-max-value", (self.max_value != d.max_value).then(|| self.max_value.to_string()));
        opt("--open-get-cycles", (self.open_get_cycles != d.open_get_cycles).then(|| self.open_get_cycles.to_string()));
        opt("--open-get-key", self.open_get_key.map(|v| v.to_string()));
        opt("--interval-ms", (self.interval_ms != d.interval_ms).then(|| self.interval_ms.to_string()));
        opt("--intervals", (self.intervals != d.intervals).then(|| self.intervals.to_string()));
        opt("--puts-per-txn", (self.puts_per_txn != d.puts_per_txn).then(|| self.puts_per_txn.to_string()));
        opt("--writes-per-second", self.writes_per_second.map(|v| v.to_string()));
        opt("--puts-per-interval", self.puts_per_interval.map(|v| v.to_string()));
        if self.migrate_append {
            a.push("--migrate-append".into());
        }
        if self.reader_procs {
            a.push("--reader-procs".into());
        }
        a
    }
}

/// How every preset environment is opened (a resolved configuration): the unnamed database.
pub fn env_options(cfg: &WorkloadConfig) -> EnvOptions {
    let map_size = cfg.map_size.expect("a resolved preset configuration");
    let flags = lmdb::env_flags(!cfg.no_writemap, cfg.sync, cfg.readahead);
    EnvOptions { map_size, flags, txn_flags: cfg.sync.txn_flags(), db: Database::Unnamed, lmdb10: Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::settings::EnvSettings;

    fn resolved(env: EnvSettings, params: PresetConfig, p: Preset) -> WorkloadConfig {
        env.resolve(&WorkloadConfig::default(), &params, Some(p))
    }

    #[test]
    fn resolving_fills_the_presets_defaults_and_checks_them() {
        let r = resolved(EnvSettings::default(), PresetConfig::default(), Preset::OpenGet);
        assert_eq!((r.entries, r.preset.open_get_key), (100_000, Some(50_000)));
        let tc = resolved(EnvSettings::default(), PresetConfig::default(), Preset::TokyoCabinet);
        assert_eq!((tc.entries, tc.map_size), (1_000_000, Some(1 << 30)));
        let ten = EnvSettings { entries: Some(10), ..Default::default() };
        let bad = resolved(ten, PresetConfig { open_get_key: Some(10), ..Default::default() }, Preset::OpenGet);
        assert!(bad.validate(Some(Preset::OpenGet)).unwrap_err().to_string().contains("--open-get-key 10"));
        let huge = resolved(
            EnvSettings { entries: Some(100_000_001), ..Default::default() },
            PresetConfig::default(),
            Preset::TokyoCabinet,
        );
        assert!(huge.validate(Some(Preset::TokyoCabinet)).is_err());
        let none =
            resolved(EnvSettings { entries: Some(0), ..Default::default() }, PresetConfig::default(), Preset::Migrate);
        assert!(none.validate(Some(Preset::Migrate)).unwrap_err().to_string().contains("--entries must be at least 1"));
    }

    #[test]
    fn only_options_that_differ_from_the_defaults_become_arguments() {
        assert!(PresetConfig::default().to_args().is_empty());
        let c = PresetConfig { open_get_cycles: 5, migrate_append: true, ..Default::default() };
        assert_eq!(c.to_args(), ["--open-get-cycles", "5", "--migrate-append"]);
    }
}
