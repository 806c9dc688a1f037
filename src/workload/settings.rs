//! The environment and data size every suite sets (LmdbJava's six workloads, and each
//! preset): one set of flags, each suite's defaults for what they leave out, resolved once
//! before a run (`EnvSettings::resolve`) so the run file and both engines see the same
//! numbers. Also how a run file records them, older files' shape included.

use serde::{Deserialize, Serialize};

use super::lmdb::{Readahead, SyncMode};
use super::presets::{Preset, PresetConfig};
use super::{KeyKind, Order, ValueKind, WorkloadConfig};

/// The settings of every suite's environments, as flags: what is not given is the suite's
/// default. The `--preset-*` spellings are the older names of the same flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct EnvSettings {
    /// Entries of the data (default: the suite's: 1000000 for LmdbJava's workloads, the
    /// preset's own for a preset, see `run --preset list`; a count by instructions takes the
    /// suite's counting size: 100000 for LmdbJava's, 10000 for the lmdb suite).
    #[arg(long, alias = "preset-entries", value_name = "N")]
    pub entries: Option<u32>,
    /// Map size in bytes (default: the suite's: entries × value size × 32 / 10 as LmdbJava,
    /// or more where that could not hold the data; 1 GiB for tokyo-cabinet, as Xodus; room
    /// for twice the data for open-get and migrate).
    #[arg(long, alias = "preset-map-size", value_name = "BYTES")]
    pub map_size: Option<u64>,
    /// Open environments with MDB_WRITEMAP (the default of LmdbJava's workloads).
    #[arg(long, alias = "preset-writemap", conflicts_with = "no_writemap")]
    pub writemap: bool,
    /// Open environments without MDB_WRITEMAP (the default of presets, as Xodus).
    #[arg(long)]
    pub no_writemap: bool,
    /// How commits are made durable: nosync (MDB_NOSYNC, the default), nometasync
    /// (MDB_NOMETASYNC: data synced at each commit, the meta page not) or sync (both);
    /// `--sync` alone is sync. txn-nosync and txn-nometasync: the environment opened to sync,
    /// each write transaction begun with MDB_NOSYNC or MDB_NOMETASYNC (LMDB 1.0's
    /// mdb_txn_begin; not applicable before 0.9.70, where every 0.9 release drops them). A
    /// list (`nosync,nometasync,sync`) is an axis of `run`: each unit measured under each
    /// mode, labelled by it (`LMDB_0.9.33 [sync]`).
    #[arg(long, alias = "preset-sync", value_name = "MODES", value_delimiter = ',', num_args = 0..=1,
          default_missing_value = "sync")]
    pub sync: Vec<SyncMode>,
    /// Whether the map's page faults read ahead: on (the default) or off (MDB_NORDAHEAD:
    /// one page a fault, for data larger than memory read at random). `on,off` is an axis
    /// of `run`, each unit measured both ways (`LMDB_0.9.33 [readahead off]`).
    #[arg(long, value_name = "ON|OFF", value_delimiter = ',')]
    pub readahead: Vec<Readahead>,
    /// Hold each measuring process, page cache included, to this much memory (256M, 1G:
    /// K, M and G are powers of 1024), in a cgroup of its own (v2, else v1), the read
    /// database evicted from the page cache and read through again before each timed pass,
    /// so each starts with what the limit holds. A list is an axis of
    /// `run`, each unit measured under each limit and labelled by it
    /// (`LMDB_0.9.33 [256M limit]`). Refused where the host has no memory controller or
    /// the tool may not make a cgroup.
    #[arg(long, value_name = "SIZES", value_delimiter = ',')]
    pub memory_limit: Vec<MemoryLimit>,
}

/// A memory limit in bytes, as `--memory-limit` takes it and a label shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemoryLimit(pub u64);

impl MemoryLimit {
    const UNITS: [(char, u32); 3] = [('G', 30), ('M', 20), ('K', 10)];
}

impl std::str::FromStr for MemoryLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<MemoryLimit, String> {
        let t = s.trim();
        let unit = Self::UNITS.iter().find(|(c, _)| t.ends_with([*c, c.to_ascii_lowercase()]));
        let digits = unit.map_or(t, |_| &t[..t.len() - 1]);
        let n: u64 = digits.parse().map_err(|_| format!("{s:?} is not a size (a number, optionally K, M or G)"))?;
        let bytes = n.checked_shl(unit.map_or(0, |(_, shift)| *shift)).filter(|b| b >> unit.map_or(0, |u| u.1) == n);
        match bytes {
            Some(b) if b >= 1 << 20 => Ok(MemoryLimit(b)),
            Some(_) => Err(format!("{s}: a memory limit below 1M would not hold the worker itself")),
            None => Err(format!("{s}: too large")),
        }
    }
}

impl std::fmt::Display for MemoryLimit {
    /// In the largest of G, M and K that divides it, else in bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match Self::UNITS.iter().find(|(_, shift)| self.0 % (1 << shift) == 0) {
            Some((c, shift)) => write!(f, "{}{c}", self.0 >> shift),
            None => write!(f, "{}", self.0),
        }
    }
}

impl EnvSettings {
    /// `--sync`'s modes when they are an axis (two or more); None for one mode or none,
    /// which is the configuration's.
    pub fn sync_axis(&self) -> Option<Vec<SyncMode>> {
        let mut modes = self.sync.clone();
        modes.dedup();
        (modes.len() > 1).then_some(modes)
    }

    /// `--readahead`'s settings when they are an axis (both); None for one or none.
    pub fn readahead_axis(&self) -> Option<Vec<Readahead>> {
        let mut each = self.readahead.clone();
        each.sort();
        each.dedup();
        (each.len() > 1).then_some(each)
    }

    /// `--memory-limit`'s limits, each once, in the order given.
    pub fn memory_limits(&self) -> Vec<MemoryLimit> {
        let mut seen = std::collections::BTreeSet::new();
        self.memory_limit.iter().copied().filter(|l| seen.insert(*l)).collect()
    }

    /// The configuration a run of `suite` (None: LmdbJava's six) uses: `base`'s data
    /// parameters, the preset's own `params`, these settings, and the suite's defaults for
    /// what they leave out, made explicit.
    pub fn resolve(&self, base: &WorkloadConfig, params: &PresetConfig, suite: Option<Preset>) -> WorkloadConfig {
        let writemap = self.writemap || (!self.no_writemap && suite.is_none());
        let entries = self.entries.unwrap_or(match suite {
            // LmdbJava's own, as its configuration's default holds it.
            None => WorkloadConfig::default().entries,
            Some(Preset::TokyoCabinet) => 1_000_000,
            Some(Preset::OpenGet | Preset::Migrate | Preset::Lmdb | Preset::Concurrency) => 100_000,
        });
        let cfg = WorkloadConfig {
            entries,
            map_size: self.map_size,
            no_writemap: !writemap,
            sync: match self.sync[..] {
                [one] => one,
                _ => SyncMode::Nosync,
            },
            readahead: match self.readahead[..] {
                [one] => one,
                _ => Readahead::On,
            },
            preset: params.clone(),
            recorded: None,
            ..base.clone()
        };
        fill_defaults(cfg, suite)
    }
}

/// What follows from the entries, where not given: a preset's map and open-get's key.
/// LmdbJava's map stays unset and follows its entries (`WorkloadConfig::effective_map_size`),
/// so a counting pass's smaller data gets a smaller map; a preset's keeps the run's.
pub(super) fn fill_defaults(mut cfg: WorkloadConfig, suite: Option<Preset>) -> WorkloadConfig {
    let Some(p) = suite else { return cfg };
    let data = cfg.entries as u64 * (cfg.preset.max_value as u64 + 64);
    cfg.map_size = Some(cfg.map_size.unwrap_or(match p {
        Preset::TokyoCabinet => 1 << 30,
        Preset::OpenGet | Preset::Migrate => (2 * data).max(64 << 20).next_multiple_of(1 << 20),
        Preset::Lmdb => super::presets::lmdb_suite::map_size(cfg.entries),
        Preset::Concurrency => super::concurrent::map_size(cfg.entries),
    }));
    cfg.preset.open_get_key = Some(cfg.preset.open_get_key.unwrap_or(cfg.entries / 2));
    cfg
}

/// LmdbJava's four settings as a run file from before one set of settings recorded them
/// beside a preset's own (which the preset used, and which are now the configuration's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superseded {
    entries: u32,
    no_writemap: bool,
    sync: SyncMode,
    map_size: Option<u64>,
}

/// A configuration as a run file stores it.
#[derive(Serialize, Deserialize)]
pub(super) struct Stored {
    entries: u32,
    value_size: u32,
    keys: KeyKind,
    order: Order,
    values: ValueKind,
    no_writemap: bool,
    sync: bool,
    /// With `sync`: MDB_NOMETASYNC (absent in files from before it could be asked).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    nometasync: bool,
    /// The environment opened to sync, each write transaction begun with MDB_NOSYNC (without
    /// `sync`) or MDB_NOMETASYNC (with it): `--sync txn-nosync` or `txn-nometasync` (absent
    /// in files from before it could be asked, and when not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    per_txn: bool,
    /// MDB_NORDAHEAD (absent in files from before it could be asked, and when off).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    nordahead: bool,
    seed: u64,
    /// readKey's gets a pass (absent in files from before it could be asked, and when
    /// every key is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_sample: Option<u32>,
    map_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preset: Option<StoredPreset>,
}

/// The presets' parameters as stored: their own alone, or (older files) with the preset's
/// environment settings among them.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum StoredPreset {
    Older(OlderPreset),
    Own(PresetConfig),
}

/// Every field required (`writemap` and `sync` tell it from the presets' own).
#[derive(Serialize, Deserialize)]
struct OlderPreset {
    entries: Option<u32>,
    max_value: u32,
    map_size: Option<u64>,
    writemap: bool,
    sync: bool,
    open_get_cycles: u32,
    open_get_key: Option<u32>,
    migrate_append: bool,
}

impl From<Stored> for WorkloadConfig {
    fn from(s: Stored) -> WorkloadConfig {
        let sync = SyncMode::from_stored(s.sync, s.nometasync, s.per_txn);
        let top = Superseded { entries: s.entries, no_writemap: s.no_writemap, sync, map_size: s.map_size };
        let cfg = WorkloadConfig {
            entries: s.entries,
            value_size: s.value_size,
            keys: s.keys,
            order: s.order,
            values: s.values,
            no_writemap: s.no_writemap,
            sync,
            readahead: if s.nordahead { Readahead::Off } else { Readahead::On },
            seed: s.seed,
            key_sample: s.key_sample,
            map_size: s.map_size,
            preset: PresetConfig::default(),
            recorded: None,
        };
        let o = match s.preset {
            None => return cfg,
            Some(StoredPreset::Own(preset)) => return WorkloadConfig { preset, ..cfg },
            Some(StoredPreset::Older(o)) => o,
        };
        let preset = PresetConfig {
            max_value: o.max_value,
            open_get_cycles: o.open_get_cycles,
            open_get_key: o.open_get_key,
            migrate_append: o.migrate_append,
            ..PresetConfig::default()
        };
        match (o.entries, o.map_size, o.open_get_key) {
            // A preset's run: its settings were resolved (entries, map and key all given).
            (Some(entries), Some(map_size), Some(_)) => WorkloadConfig {
                entries,
                map_size: Some(map_size),
                no_writemap: !o.writemap,
                sync: SyncMode::from_stored(o.sync, false, false),
                preset,
                recorded: Some(top),
                ..cfg
            },
            // LmdbJava's run, given preset flags it did not use.
            _ => WorkloadConfig { preset, ..cfg },
        }
    }
}

impl From<WorkloadConfig> for Stored {
    fn from(c: WorkloadConfig) -> Stored {
        let own = (!c.preset.is_default()).then(|| StoredPreset::Own(c.preset.clone()));
        let (top, preset) = match &c.recorded {
            None => {
                (Superseded { entries: c.entries, no_writemap: c.no_writemap, sync: c.sync, map_size: c.map_size }, own)
            }
            Some(top) => {
                let p = &c.preset;
                let older = OlderPreset {
                    entries: Some(c.entries),
                    max_value: p.max_value,
                    map_size: c.map_size,
                    writemap: !c.no_writemap,
                    sync: c.sync != SyncMode::Nosync,
                    open_get_cycles: p.open_get_cycles,
                    open_get_key: p.open_get_key,
                    migrate_append: p.migrate_append,
                };
                (top.clone(), Some(StoredPreset::Older(older)))
            }
        };
        let (sync, nometasync, per_txn) = top.sync.stored();
        Stored {
            entries: top.entries,
            value_size: c.value_size,
            keys: c.keys,
            order: c.order,
            values: c.values,
            no_writemap: top.no_writemap,
            sync,
            nometasync,
            per_txn,
            nordahead: c.readahead == Readahead::Off,
            seed: c.seed,
            key_sample: c.key_sample,
            map_size: top.map_size,
            preset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        cfg: WorkloadConfig,
        #[command(flatten)]
        env: EnvSettings,
        #[command(flatten)]
        preset: PresetConfig,
    }

    fn resolved(flags: &[&str], suite: Option<Preset>) -> WorkloadConfig {
        let f = Flags::try_parse_from(std::iter::once("run").chain(flags.iter().copied())).unwrap();
        f.env.resolve(&f.cfg, &f.preset, suite)
    }

    #[test]
    fn each_suite_has_its_defaults() {
        let lmdbjava = resolved(&[], None);
        assert_eq!(lmdbjava, WorkloadConfig::default());
        assert_eq!((lmdbjava.entries, lmdbjava.map_size, lmdbjava.no_writemap), (1_000_000, None, false));
        assert_eq!(lmdbjava.effective_map_size(), 1_000_000 * 100 * 32 / 10, "LmdbJava's rule");
        let tc = resolved(&[], Some(Preset::TokyoCabinet));
        assert_eq!(
            (tc.entries, tc.map_size, tc.no_writemap, tc.sync),
            (1_000_000, Some(1 << 30), true, SyncMode::Nosync)
        );
        for p in [Preset::OpenGet, Preset::Migrate] {
            let c = resolved(&[], Some(p));
            // Twice 100000 entries of at most 2000 + 64 bytes, in whole MiB.
            assert_eq!((c.entries, c.map_size, c.no_writemap), (100_000, Some(394 << 20), true), "{p}");
            assert_eq!(c.preset.open_get_key, Some(50_000));
        }
    }

    #[test]
    fn the_older_preset_flags_are_the_same_flags() {
        for p in [None, Some(Preset::OpenGet), Some(Preset::TokyoCabinet)] {
            assert_eq!(resolved(&["--preset-entries", "7"], p), resolved(&["--entries", "7"], p));
            assert_eq!(resolved(&["--preset-map-size", "99999999"], p), resolved(&["--map-size", "99999999"], p));
            assert_eq!(resolved(&["--preset-writemap"], p), resolved(&["--writemap"], p));
            assert_eq!(resolved(&["--preset-sync"], p), resolved(&["--sync"], p));
        }
        let seven = resolved(&["--entries", "7"], Some(Preset::OpenGet));
        assert_eq!((seven.entries, seven.preset.open_get_key, seven.map_size), (7, Some(3), Some(64 << 20)));
    }

    #[test]
    fn writemap_flags_override_either_default() {
        let writemap = |flags: &[&str], p| !resolved(flags, p).no_writemap;
        assert!(writemap(&[], None) && !writemap(&[], Some(Preset::Migrate)));
        assert!(writemap(&["--writemap"], None) && writemap(&["--writemap"], Some(Preset::Migrate)));
        assert!(!writemap(&["--no-writemap"], None) && !writemap(&["--no-writemap"], Some(Preset::Migrate)));
        assert!(Flags::try_parse_from(["run", "--writemap", "--no-writemap"]).is_err(), "one or the other");
        // The worker is given the resolved state explicitly, so its defaults change nothing.
        for p in [None, Some(Preset::TokyoCabinet)] {
            for flags in [&[][..], &["--writemap"], &["--no-writemap"]] {
                let c = resolved(flags, p);
                let args: Vec<String> = c.to_args();
                let again = resolved(&args.iter().map(String::as_str).collect::<Vec<_>>(), p);
                assert_eq!(again.no_writemap, c.no_writemap, "{p:?} {flags:?}");
                assert_eq!((again.entries, again.effective_map_size()), (c.entries, c.effective_map_size()));
            }
        }
    }

    #[test]
    fn a_counting_pass_shrinks_a_presets_data_and_keeps_its_map() {
        let og = resolved(&["--open-get-key", "60000"], Some(Preset::OpenGet));
        let small = og.with_entries(&Preset::OpenGet.workloads(), 400).unwrap();
        assert_eq!((small.entries, small.map_size, small.preset.open_get_key), (400, og.map_size, Some(200)));
        let lmdbjava = resolved(&[], None).with_entries(&Workload::ALL, 400).unwrap();
        assert_eq!((lmdbjava.entries, lmdbjava.map_size), (400, None), "LmdbJava's map follows its entries");
    }

    #[test]
    fn older_run_files_load_into_one_set_of_settings_and_are_written_back_as_read() {
        let older = r#"{"entries":1000000,"value_size":100,"keys":"int","order":"seq","values":"fixed","no_writemap":false,"sync":false,"seed":42,"map_size":null,"preset":{"entries":2000,"max_value":300,"map_size":16777216,"writemap":false,"sync":false,"open_get_cycles":25,"open_get_key":1000,"migrate_append":false}}"#;
        let c: WorkloadConfig = serde_json::from_str(older).unwrap();
        assert_eq!((c.entries, c.map_size, c.no_writemap, c.sync), (2000, Some(16777216), true, SyncMode::Nosync));
        assert_eq!((c.preset.max_value, c.preset.open_get_cycles, c.preset.open_get_key), (300, 25, Some(1000)));
        assert_eq!(serde_json::to_string(&c).unwrap(), older);
        let lmdbjava = r#"{"entries":5000,"value_size":100,"keys":"int","order":"random","values":"fixed","no_writemap":true,"sync":false,"seed":42,"map_size":null}"#;
        let c: WorkloadConfig = serde_json::from_str(lmdbjava).unwrap();
        assert_eq!((c.entries, c.no_writemap, c.order), (5000, true, Order::Random));
        assert_eq!(serde_json::to_string(&c).unwrap(), lmdbjava);
        // This version's shape: the settings at the top, the presets' own parameters below.
        let now = resolved(&["--entries", "2000", "--preset-max-value", "300"], Some(Preset::OpenGet));
        let text = serde_json::to_string(&now).unwrap();
        assert!(
            text.contains(
                r#""preset":{"max_value":300,"open_get_cycles":1000,"open_get_key":1000,"migrate_append":false,"interval_ms":200,"intervals":5,"puts_per_txn":1,"writes_per_second":null,"puts_per_interval":null}"#
            ),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<WorkloadConfig>(&text).unwrap(), now);
    }

    /// Every sync mode of one run's configuration reads back as itself; a file from before
    /// the per-transaction modes (no `per_txn`) reads as the environment's own.
    #[test]
    fn every_sync_mode_is_stored_and_read_back() {
        for mode in SyncMode::ALL {
            let c = resolved(&["--sync", mode.name()], Some(Preset::Lmdb));
            assert_eq!(c.sync, mode);
            let text = serde_json::to_string(&c).unwrap();
            assert_eq!(text.contains(r#""per_txn":true"#), mode.txn_flags() != 0, "{text}");
            assert_eq!(serde_json::from_str::<WorkloadConfig>(&text).unwrap(), c, "{mode}");
        }
        let older = r#"{"entries":5000,"value_size":100,"keys":"int","order":"random","values":"fixed","no_writemap":true,"sync":true,"nometasync":true,"seed":42,"map_size":null}"#;
        assert_eq!(serde_json::from_str::<WorkloadConfig>(older).unwrap().sync, SyncMode::Nometasync);
    }
}
