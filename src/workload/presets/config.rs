//! Every preset parameter, each a flag; a preset's own defaults fill what is not given,
//! and are made explicit (`resolve`) before a run, so the run file records them.

use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};

use super::Preset;
use crate::workload::lmdb::{self, Database, EnvOptions};

/// Every preset parameter; a preset's own defaults fill what is not given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct PresetConfig {
    /// Presets: entries of the preset's database (default: the preset's own, see `run --preset list`).
    #[arg(id = "preset_entries", long = "preset-entries", value_name = "N")]
    pub entries: Option<u32>,
    /// Presets open-get and migrate: values are random printable strings of 0 to this many bytes.
    #[arg(id = "preset_max_value", long = "preset-max-value", value_name = "BYTES", default_value_t = 2000)]
    pub max_value: u32,
    /// Presets: map size in bytes (default: 1 GiB for tokyo-cabinet, as Xodus; else room for twice the data).
    #[arg(id = "preset_map_size", long = "preset-map-size", value_name = "BYTES")]
    pub map_size: Option<u64>,
    /// Presets: open environments with MDB_WRITEMAP (default: without, as Xodus).
    #[arg(id = "preset_writemap", long = "preset-writemap")]
    pub writemap: bool,
    /// Presets: open environments without MDB_NOSYNC (default: with, as Xodus).
    #[arg(id = "preset_sync", long = "preset-sync")]
    pub sync: bool,
    /// Preset open-get: open-get-close cycles per sample.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub open_get_cycles: u32,
    /// Preset open-get: the key every cycle gets (default: the middle entry).
    #[arg(long, value_name = "K")]
    pub open_get_key: Option<u32>,
    /// Preset migrate: put with MDB_APPEND (the keys arrive sorted) instead of plain puts.
    #[arg(long)]
    pub migrate_append: bool,
}

impl Default for PresetConfig {
    fn default() -> Self {
        PresetConfig {
            entries: None,
            max_value: 2000,
            map_size: None,
            writemap: false,
            sync: false,
            open_get_cycles: 1000,
            open_get_key: None,
            migrate_append: false,
        }
    }
}

/// Largest value: a value of at most 1 MiB keeps every database within reach of a test.
const MAX_VALUE_LIMIT: u32 = 1 << 20;

impl PresetConfig {
    pub fn is_default(&self) -> bool {
        *self == PresetConfig::default()
    }

    /// Every default made explicit for preset `p`, so the run file and both engines see
    /// the same numbers.
    pub fn resolve(&self, p: Preset) -> PresetConfig {
        let entries = self.entries.unwrap_or(p.default_entries());
        let data = entries as u64 * (self.max_value as u64 + 64);
        let map_size = self.map_size.unwrap_or(match p {
            Preset::TokyoCabinet => 1 << 30,
            Preset::OpenGet | Preset::Migrate => (2 * data).max(64 << 20).next_multiple_of(1 << 20),
        });
        PresetConfig {
            entries: Some(entries),
            map_size: Some(map_size),
            open_get_key: Some(self.open_get_key.unwrap_or(entries / 2)),
            ..self.clone()
        }
    }

    pub fn validate(&self, p: Preset) -> Result<()> {
        let r = self.resolve(p);
        let n = r.entries.expect("resolved");
        ensure!(n > 0, "--preset-entries must be at least 1");
        if p == Preset::TokyoCabinet {
            ensure!(n <= 100_000_000, "--preset-entries: tokyo-cabinet's 8-digit keys allow at most 100000000");
        }
        ensure!(r.max_value <= MAX_VALUE_LIMIT, "--preset-max-value must be at most {MAX_VALUE_LIMIT}");
        ensure!(r.open_get_cycles > 0, "--open-get-cycles must be at least 1");
        let key = r.open_get_key.expect("resolved");
        ensure!(key < n, "--open-get-key {key} is not below the entry count {n}");
        Ok(())
    }

    /// The entries of the preset's database (after `resolve`).
    pub fn n(&self) -> u32 {
        self.entries.expect("a resolved preset configuration")
    }

    /// How every preset environment is opened (after `resolve`): the unnamed database.
    pub fn env_options(&self) -> EnvOptions {
        let map_size = self.map_size.expect("a resolved preset configuration");
        EnvOptions { map_size, flags: lmdb::env_flags(self.writemap, self.sync), db: Database::Unnamed }
    }

    /// The options that differ from the defaults, as worker arguments (Rust or C).
    pub fn to_args(&self) -> Vec<String> {
        let d = PresetConfig::default();
        let mut a: Vec<String> = Vec::new();
        let mut opt = |flag: &str, v: Option<String>| a.extend(v.into_iter().flat_map(|v| [flag.to_string(), v]));
        opt("--preset-entries", self.entries.map(|v| v.to_string()));
        opt("--preset-max-value", (self.max_value != d.max_value).then(|| self.max_value.to_string()));
        opt("--preset-map-size", self.map_size.map(|v| v.to_string()));
        opt("--open-get-cycles", (self.open_get_cycles != d.open_get_cycles).then(|| self.open_get_cycles.to_string()));
        opt("--open-get-key", self.open_get_key.map(|v| v.to_string()));
        for (on, flag) in [
            (self.writemap, "--preset-writemap"),
            (self.sync, "--preset-sync"),
            (self.migrate_append, "--migrate-append"),
        ] {
            if on {
                a.push(flag.into());
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolving_fills_the_presets_defaults_and_checks_them() {
        let r = PresetConfig::default().resolve(Preset::OpenGet);
        assert_eq!((r.entries, r.open_get_key), (Some(100_000), Some(50_000)));
        assert_eq!(PresetConfig::default().resolve(Preset::TokyoCabinet).map_size, Some(1 << 30));
        assert_eq!(r.resolve(Preset::OpenGet), r, "resolving twice changes nothing");
        let bad = PresetConfig { entries: Some(10), open_get_key: Some(10), ..Default::default() };
        assert!(bad.validate(Preset::OpenGet).unwrap_err().to_string().contains("--open-get-key 10"));
        let huge = PresetConfig { entries: Some(100_000_001), ..Default::default() };
        assert!(huge.validate(Preset::TokyoCabinet).is_err());
        assert!(PresetConfig { entries: Some(0), ..Default::default() }.validate(Preset::Migrate).is_err());
    }

    #[test]
    fn only_options_that_differ_from_the_defaults_become_arguments() {
        assert!(PresetConfig::default().to_args().is_empty());
        let c = PresetConfig { entries: Some(7), sync: true, open_get_cycles: 5, ..Default::default() };
        assert_eq!(c.to_args(), ["--preset-entries", "7", "--open-get-cycles", "5", "--preset-sync"]);
    }
}
