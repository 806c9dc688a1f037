//! How a run measures, as its header records it: the plan (rounds, stop conditions,
//! pairing, layouts, counting pass), its shard of a larger run, and the programs it
//! measures as workloads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::label::{by_text, Base, Label};
use super::metric::Metric;
use crate::workload::Workload;

/// Layouts of the reference each paired process holds on a workload timed in chunks: the
/// reference's own layout is in every comparison of its process, so more of them, each
/// compared with every other unit's pass, take that part out of every interval at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceLayouts {
    /// As many (up to four) as the run's own rounds say narrow its open comparisons for
    /// their time, where the run judges its intervals as it goes (`--adaptive on` or a
    /// `--target-ci`); one otherwise.
    Auto,
    /// This many on every such workload.
    Exactly(u32),
}

/// One layout of the reference, as every run before: `auto` narrowed no interval by the
/// 1.3 times in equal time a default must (reports/README.md, "Layouts of the reference").
impl Default for ReferenceLayouts {
    fn default() -> Self {
        ReferenceLayouts::Exactly(1)
    }
}

/// The most layouts of the reference one paired process holds.
pub const MAX_REFERENCE_LAYOUTS: u32 = 4;

impl ReferenceLayouts {
    fn is_one(&self) -> bool {
        *self == ReferenceLayouts::Exactly(1)
    }
}

impl std::fmt::Display for ReferenceLayouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReferenceLayouts::Auto => f.write_str("auto"),
            ReferenceLayouts::Exactly(n) => write!(f, "{n}"),
        }
    }
}

impl std::str::FromStr for ReferenceLayouts {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(ReferenceLayouts::Auto),
            n => match n.parse::<u32>() {
                Ok(k @ 1..=MAX_REFERENCE_LAYOUTS) => Ok(ReferenceLayouts::Exactly(k)),
                _ => Err(format!("{s:?}: auto, or a number of layouts from 1 to {MAX_REFERENCE_LAYOUTS}")),
            },
        }
    }
}

/// How each time sample's code was laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Layouts {
    /// Every (unit, round) runs its own function order, linked by lld from objects compiled once.
    Random,
    /// Each unit's one build, as linked by its compiler (every run before layouts were randomised).
    #[default]
    Fixed,
}

impl std::fmt::Display for Layouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layouts::Random => "random",
            Layouts::Fixed => "fixed",
        })
    }
}

/// How time samples are paired: the measurement design of a run's time sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// Each round is one process holding every unit of an engine, each workload's passes
    /// alternated between them chunk by chunk; the process is the unit of replication.
    Chunks,
    /// One worker process per unit and round, its pass whole (every run before chunks).
    #[default]
    Process,
}

impl std::fmt::Display for Pairing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pairing::Chunks => "chunks",
            Pairing::Process => "process",
        })
    }
}

/// Whether a run's rounds measure only the comparisons not yet decided (`--adaptive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Adaptive {
    /// After the rounds every interval needs, a round measures a workload's unit only while
    /// its comparison is undecided, as often as it is far from decided; the reference
    /// whenever any other unit of the workload is measured.
    On,
    /// Every round measures every unit on every workload (every run before schema 8).
    Off,
}

impl std::fmt::Display for Adaptive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Adaptive::On => "on",
            Adaptive::Off => "off",
        })
    }
}

/// When a run that ends comparisons once they are decided (adaptive rounds, or a
/// `target_ci`) decides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stopping {
    /// Only at looks spaced geometrically in rounds, each spending its share of the run's
    /// error, so that every interval reported keeps its level (`stats::looks`).
    Looks,
    /// At the nominal level after every round (every run before schema 10): an interval
    /// of a comparison closed early does not keep its level.
    EveryRound,
}

/// With a resolution target (`target_ci`), what closes a comparison, so that the run ends
/// or adaptive rounds leave it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Closing {
    /// Decided (slower, faster or same) and its interval within ±the target: every
    /// comparison a run closes has both its verdict and its width.
    DecidedAndWithin,
    /// Decided, or its interval within ±the target (every run before schema 11): a large
    /// change closes at its first deciding look, however wide its interval.
    DecidedOrWithin,
}

/// A run's resolution target: each comparison's half-width within ±`percent` of its
/// ratio, joined to its verdict as `closing` says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub percent: f64,
    pub closing: Closing,
}

/// A layout-sensitivity study (`lmdb-regress layouts`): one tag under several layouts, each
/// its own label (`TAG@1`, `TAG@2`, ...) with the same layout in every round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutStudy {
    /// The tag's unit, written as its label.
    #[serde(with = "by_text::one")]
    pub tag: Label,
    /// Each layout's unit and its layout's seed, written `[label, seed]`.
    #[serde(with = "by_text::pairs")]
    pub layouts: Vec<(Label, u32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Measured rounds at most; None: no cap, the time budget or the decisions end the run
    /// (an adaptive time run given `--time-budget` and no `--rounds`; schema 9).
    pub rounds: Option<u32>,
    pub warmup: u32,
    pub time_budget_s: Option<f64>,
    pub target_ci: Option<f64>,
    pub iterations: u32,
    /// The workloads whose every iteration makes more than one pass (each a sample), and
    /// how many (`Workload::passes`); empty in every other run, and in older files.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub passes: BTreeMap<Workload, u32>,
    pub metric: Metric,
    /// The design of the time samples; runs from before chunks read as `process`.
    #[serde(default)]
    pub pairing: Pairing,
    /// Whether rounds skip the comparisons already decided; the reader gives older files `off`.
    pub adaptive: Adaptive,
    /// When comparisons are decided, where the run ends them early; the reader gives older
    /// files `every-round`.
    pub stopping: Stopping,
    /// What closes a comparison at the `target_ci`; the reader gives older files
    /// `decided-or-within`.
    pub closing: Closing,
    /// Operations per chunk with `pairing: chunks`; null otherwise.
    #[serde(default)]
    pub chunk: Option<u32>,
    /// `same` needs the whole interval within ±this fraction (default 0.02).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<f64>,
    /// Entries of the one instruction-counting pass after the timed rounds
    /// (`--with-instructions`); None when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_entries: Option<u32>,
    /// Counts are taken under callgrind's cache simulation (`--with-cache`, or a cache
    /// metric), so that every sample counted holds the cache metrics' events.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_sim: bool,
    /// Set when this run is one shard of a larger one (`run --shard K/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Time samples' code layouts; runs from before layouts were randomised read as fixed.
    #[serde(default)]
    pub layouts: Layouts,
    /// With random layouts: the seed every sample's layout derives from, with its unit and round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_seed: Option<u64>,
    /// Random layouts of each unit in one paired process, each timing every K-th of the
    /// unit's readKey chunks (each its own sample; in runs before 2026-12-06, of every
    /// workload's); 1, and absent, in every other run.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub layouts_per_process: u32,
    /// Layouts of the reference in each paired process (`--reference-layouts`), absent when
    /// one, as in every older file.
    #[serde(default, skip_serializing_if = "ReferenceLayouts::is_one")]
    pub reference_layouts: ReferenceLayouts,
    /// Set when the run is a layout-sensitivity study of one tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_study: Option<LayoutStudy>,
    /// The tag measured a second time as its own control (`--control`), when this run
    /// measures it; older run files leave it out (their samples say it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Base>,
    /// The programs this run measures as workloads (`--program`), each by its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramRecord>,
    /// The tag or commit every other unit is compared with: `--baseline`, or the first unit
    /// as given that built. Older files leave it out: their baseline is the oldest measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Base>,
}

/// A program measured as a workload (`run --program FILE.c`): its workload's name (the
/// file's stem), the file, its source's SHA-256 when the run began (a resumed run must
/// find the same), the arguments every run of it gets, and how long one run may take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRecord {
    pub name: String,
    pub source: PathBuf,
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    pub timeout_s: f64,
    /// The figure a sample takes from the program's output instead of its wall time
    /// (`--program-figure`); None: the wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<Figure>,
    /// The SHA-256 of the program as compiled against each build, by the build's unit
    /// (written keyed by its label): what every start checks, and what a resumed run must
    /// compile again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", with = "by_text::keyed")]
    pub compiled: BTreeMap<Label, String>,
}

/// A figure a program prints (`--program-figure 'in ([0-9.]+) s'`): the pattern's first
/// group, in the last line of its standard output that matches, read in `unit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure {
    pub pattern: String,
    pub unit: FigureUnit,
}

/// The unit a program's printed figure is in (`--program-figure-unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FigureUnit {
    #[default]
    S,
    Ms,
    Us,
    Ns,
}

impl FigureUnit {
    /// Nanoseconds in one of this unit.
    pub fn ns(self) -> f64 {
        match self {
            FigureUnit::S => 1e9,
            FigureUnit::Ms => 1e6,
            FigureUnit::Us => 1e3,
            FigureUnit::Ns => 1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FigureUnit::S => "s",
            FigureUnit::Ms => "ms",
            FigureUnit::Us => "us",
            FigureUnit::Ns => "ns",
        }
    }
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The `same` margin of a plan that names none (statistics judge by it: `stats::family`).
pub const MIN_EFFECT: f64 = 0.02;

/// How far apart (a fraction) instruction counts may be and still be the same: statistics
/// judge counts by it, and the runner allows a tenth of it between two counts of one work.
pub const COUNT_TOLERANCE: f64 = 0.005;

impl Plan {
    /// `rounds` measured rounds after `warmup` by `metric`, one repetition per worker, and
    /// nothing more: no budget, no target, every unit in every round, the default `same`,
    /// fixed layouts, no counting pass, no shard, study or control.
    pub fn new(rounds: u32, warmup: u32, metric: Metric) -> Plan {
        Plan {
            rounds: Some(rounds),
            warmup,
            time_budget_s: None,
            target_ci: None,
            iterations: 1,
            passes: BTreeMap::new(),
            metric,
            pairing: Pairing::Process,
            adaptive: Adaptive::Off,
            stopping: Stopping::Looks,
            closing: Closing::DecidedAndWithin,
            chunk: None,
            min_effect: None,
            count_entries: None,
            cache_sim: false,
            shard: None,
            layouts: Layouts::Fixed,
            layout_seed: None,
            layouts_per_process: 1,
            reference_layouts: ReferenceLayouts::default(),
            layout_study: None,
            control: None,
            programs: Vec::new(),
            baseline: None,
        }
    }

    /// This plan's counting pass: instructions, each unit once (one round, no warm-up, one
    /// repetition), from the fixed builds (layouts change no count), no budget, target or
    /// adaptive rounds.
    pub fn counting(&self) -> Plan {
        Plan {
            metric: Metric::Instructions,
            rounds: Some(1),
            warmup: 0,
            iterations: 1,
            // A counting pass times no commit, so every row makes one pass.
            passes: BTreeMap::new(),
            time_budget_s: None,
            target_ci: None,
            count_entries: None,
            layouts: Layouts::Fixed,
            layout_seed: None,
            layouts_per_process: 1,
            reference_layouts: ReferenceLayouts::Exactly(1),
            pairing: Pairing::Process,
            adaptive: Adaptive::Off,
            chunk: None,
            ..self.clone()
        }
    }

    /// Whether this run's comparisons were decided at looks that spend its error: it ends
    /// them early (adaptive rounds or a resolution target) and says it stops at looks.
    pub fn spends_at_looks(&self) -> bool {
        self.stopping == Stopping::Looks && (self.adaptive == Adaptive::On || self.target_ci.is_some())
    }

    /// The resolution target the run's comparisons are closed at, if it has one.
    pub fn target(&self) -> Option<Target> {
        self.target_ci.map(|percent| Target { percent, closing: self.closing })
    }

    /// Whether measured round `round` (counted from 0) is one the plan allows.
    pub fn allows_round(&self, round: u32) -> bool {
        self.rounds.is_none_or(|cap| round < cap)
    }

    pub fn min_effect(&self) -> f64 {
        self.min_effect.unwrap_or(MIN_EFFECT)
    }

    /// Whether its counts need callgrind's cache simulation.
    pub fn simulates_caches(&self) -> bool {
        self.cache_sim || self.metric.needs_cache_sim()
    }
}

/// Shard `index` of `count`: the whole run's tags in release order, the i-th (from 0) in
/// shard i mod count + 1. A tag keeps all its engines and its control in one shard, so
/// each tag is built once and what is compared within a tag stays on one machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
    /// Every tag of the whole (unsharded) run, in release order.
    pub tags: Vec<Base>,
    /// The tag every shard of a chunk-paired run measures beside its own: the run's
    /// baseline. Older files leave it out: theirs is the oldest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Base>,
}

impl Shard {
    /// Shard `index`/`count` of `tags`, compared with `baseline` (the oldest when None); an
    /// error when it would hold no tag.
    pub fn new(index: u32, count: u32, mut tags: Vec<Base>, baseline: Option<Base>) -> Result<Shard> {
        if !(1..=count).contains(&index) {
            bail!("shard {index}/{count}: expected K/N with 1 ≤ K ≤ N");
        }
        tags.sort_by_key(|t| Label::build(t.as_str(), None).release_key());
        let shard = Shard { index, count, tags, baseline };
        if shard.own().is_empty() {
            bail!(
                "shard {index}/{count} holds no tag: the run has {} tag(s), so use at most {} shard(s)",
                shard.tags.len(),
                shard.tags.len()
            );
        }
        Ok(shard)
    }

    /// The tags this shard measures for the whole run.
    pub fn own(&self) -> Vec<&Base> {
        self.tags.iter().skip(self.index as usize - 1).step_by(self.count as usize).collect()
    }

    /// The tags this shard measures: its own and, in a chunk-paired run, the baseline
    /// beside them, so every comparison with it is made inside one process
    /// on one machine.
    pub fn measured(&self, pairing: Pairing) -> Vec<&Base> {
        let mut tags = self.own();
        if let (Pairing::Chunks, Some(first)) = (pairing, self.baseline()) {
            if !tags.contains(&first) {
                tags.insert(0, first);
            }
        }
        tags
    }

    /// The tag every shard of a chunk-paired run measures beside its own.
    pub fn baseline(&self) -> Option<&Base> {
        self.baseline.as_ref().or(self.tags.first())
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_tags_round_robin_in_release_order() {
        let tags: Vec<Base> =
            ["LMDB_0.9.33", "LMDB_0.9.9", "LMDB_0.9.18", "LMDB_0.9.21", "abc1234"].map(Base::new).to_vec();
        let own = |k| {
            Shard::new(k, 2, tags.clone(), None)
                .unwrap()
                .own()
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(own(1), "LMDB_0.9.9,LMDB_0.9.21,abc1234");
        assert_eq!(own(2), "LMDB_0.9.18,LMDB_0.9.33");
        // The same whatever order the tags were asked in; every tag in exactly one shard.
        let mut reversed = tags.clone();
        reversed.reverse();
        for n in 1..=5 {
            let mut union: Vec<Base> = (1..=n)
                .flat_map(|k| {
                    Shard::new(k, n, reversed.clone(), None).unwrap().own().into_iter().cloned().collect::<Vec<_>>()
                })
                .collect();
            union.sort();
            let mut all = tags.clone();
            all.sort();
            assert_eq!(union, all, "{n} shards");
        }
        let e = Shard::new(6, 6, tags.clone(), None).unwrap_err().to_string();
        assert!(e.contains("holds no tag") && e.contains("at most 5"), "{e}");
    }

    #[test]
    fn a_shards_bases_are_written_as_their_text_and_read_back() {
        let tags = vec![Base::new("LMDB_0.9.9"), Base::new("abc1234")];
        let shard = Shard::new(1, 2, tags, Some(Base::new("abc1234"))).unwrap();
        let json = serde_json::to_value(&shard).unwrap();
        let text =
            serde_json::json!({"index": 1, "count": 2, "tags": ["LMDB_0.9.9", "abc1234"], "baseline": "abc1234"});
        assert_eq!(json, text);
        assert_eq!(serde_json::from_value::<Shard>(json).unwrap(), shard);
    }
}
