//! The run file: JSON Lines, appended as results arrive, so an interrupted run loses
//! nothing. The first line is the header; then samples and failures; then `end`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::label::Label;
pub use super::metric::{Counts, Event, Metric};
use crate::compile::BuildRecord;
use crate::environment::Environment;
use crate::files::{self, Existing};
use crate::manifest::{FileHashes, Match};
use crate::workload::presets::Figures;
use crate::workload::space::Space;
use crate::workload::{Checksum, Workload, WorkloadConfig};

/// Bumped whenever a reader of an older version could misread a newer file (2: samples
/// of the instruction-counting pass, `counted`, which a reader of 1 would take for times;
/// 3: `check` records, such as the determinism check of instruction counts; 4: the
/// header's `units`, each label's value declared field by field, which a reader of 3 would
/// not know to need; 5: a sample's `counts`, its events by name, where a reader of 4 looks
/// for `instructions`; 6: a write sample's `space`, which a reader of 5 would drop on a
/// resume or merge; 7: the `coverage` record, a type a reader of 6 refuses). Layouts (`plan.layouts`, each sample's `layout`) needed no bump: an
/// older reader takes a sample of a random layout for the time sample it is.
pub const SCHEMA: u32 = 7;

/// The first schema whose header declares its units: older files hold labels as text only.
const DECLARES_UNITS: u32 = 4;

/// The first schema with check records.
const CHECKS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The Rust harness, loading each tag's shared library.
    Rust,
    /// The C twin, statically linked with each tag's sources.
    C,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Rust => "rust",
            Engine::C => "c",
        })
    }
}

/// How each time sample's code was laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
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

/// A layout-sensitivity study (`lmdb-regress layouts`): one tag under several layouts, each
/// its own label (`TAG@1`, `TAG@2`, ...) with the same layout in every round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutStudy {
    pub tag: String,
    /// Each label and its layout's seed.
    pub layouts: Vec<(String, u32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub rounds: u32,
    pub warmup: u32,
    pub time_budget_s: Option<f64>,
    pub target_ci: Option<f64>,
    pub iterations: u32,
    pub metric: Metric,
    /// The design of the time samples; runs from before chunks read as `process`.
    #[serde(default)]
    pub pairing: Pairing,
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
    /// Set when the run is a layout-sensitivity study of one tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_study: Option<LayoutStudy>,
    /// The tag measured a second time as its own control (`--control`), when this run
    /// measures it; older run files leave it out (their samples say it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    /// The programs this run measures as workloads (`--program`), each by its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramRecord>,
    /// The tag or commit every other unit is compared with: `--baseline`, or the first unit
    /// as given that built. Older files leave it out: their baseline is the oldest measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
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
    /// The SHA-256 of the program as compiled against each build, by the build's label:
    /// what every start checks, and what a resumed run must compile again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub compiled: BTreeMap<String, String>,
}

/// A figure a program prints (`--program-figure 'in ([0-9.]+) s'`): the pattern's first
/// group, in the last line of its standard output that matches, read in `unit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure {
    pub pattern: String,
    pub unit: FigureUnit,
}

/// The unit a program's printed figure is in (`--program-figure-unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
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

/// The `same` margin of a plan that names none (statistics judge by it: `stats::family`).
pub const MIN_EFFECT: f64 = 0.02;

/// How far apart (a fraction) instruction counts may be and still be the same: statistics
/// judge counts by it, and the runner allows a tenth of it between two counts of one work.
pub const COUNT_TOLERANCE: f64 = 0.005;

impl Plan {
    /// `rounds` measured rounds after `warmup` by `metric`, one repetition per worker, and
    /// nothing more: no budget, no target, the default `same`, fixed layouts, no counting
    /// pass, no shard, study or control.
    pub fn new(rounds: u32, warmup: u32, metric: Metric) -> Plan {
        Plan {
            rounds,
            warmup,
            time_budget_s: None,
            target_ci: None,
            iterations: 1,
            metric,
            pairing: Pairing::Process,
            chunk: None,
            min_effect: None,
            count_entries: None,
            cache_sim: false,
            shard: None,
            layouts: Layouts::Fixed,
            layout_seed: None,
            layout_study: None,
            control: None,
            programs: Vec::new(),
            baseline: None,
        }
    }

    /// This plan's counting pass: instructions, each unit once (one round, no warm-up, one
    /// repetition), from the fixed builds (layouts change no count), no budget or target.
    pub fn counting(&self) -> Plan {
        Plan {
            metric: Metric::Instructions,
            rounds: 1,
            warmup: 0,
            iterations: 1,
            time_budget_s: None,
            target_ci: None,
            count_entries: None,
            layouts: Layouts::Fixed,
            layout_seed: None,
            pairing: Pairing::Process,
            chunk: None,
            ..self.clone()
        }
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
    pub tags: Vec<String>,
    /// The tag every shard of a chunk-paired run measures beside its own: the run's
    /// baseline. Older files leave it out: theirs is the oldest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

impl Shard {
    /// Shard `index`/`count` of `tags`, compared with `baseline` (the oldest when None); an
    /// error when it would hold no tag.
    pub fn new(index: u32, count: u32, mut tags: Vec<String>, baseline: Option<String>) -> Result<Shard> {
        if !(1..=count).contains(&index) {
            bail!("shard {index}/{count}: expected K/N with 1 ≤ K ≤ N");
        }
        tags.sort_by_key(|t| Label::build(t, None).release_key());
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
    pub fn own(&self) -> Vec<&str> {
        self.tags.iter().skip(self.index as usize - 1).step_by(self.count as usize).map(String::as_str).collect()
    }

    /// The tags this shard measures: its own and, in a chunk-paired run, the baseline
    /// beside them, so every comparison with it is made inside one process
    /// on one machine.
    pub fn measured(&self, pairing: Pairing) -> Vec<&str> {
        let mut tags = self.own();
        if let (Pairing::Chunks, Some(first)) = (pairing, self.baseline()) {
            if !tags.contains(&first) {
                tags.insert(0, first);
            }
        }
        tags
    }

    /// The tag every shard of a chunk-paired run measures beside its own.
    pub fn baseline(&self) -> Option<&str> {
        self.baseline.as_deref().or(self.tags.first().map(String::as_str))
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `K/N` as `run --shard` takes it: 1 ≤ K ≤ N.
pub fn parse_shard(s: &str) -> Result<(u32, u32)> {
    let parsed = s.split_once('/').and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((k, n)) if (1..=n).contains(&k) => Ok((k, n)),
        _ => bail!("expected K/N with 1 ≤ K ≤ N, e.g. 2/4"),
    }
}

/// What became of a requested tag, as the run file records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Built,
    Unavailable,
    Failed,
}

/// One requested tag in the header. The run file's own type, not the build matrix's
/// (`matrix::TagStatus`, converted in cmd/run.rs), so the matrix can change without
/// changing the file format; the JSON shape is schema 1's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagStatus {
    pub tag: String,
    pub commit: Option<String>,
    pub status: Status,
    /// Absolute path of the shared library, when built.
    pub library: Option<PathBuf>,
    pub provenance: Option<String>,
    #[serde(rename = "match")]
    pub matches: Option<Match>,
    pub files: FileHashes,
    /// Why it was not built.
    pub reason: Option<String>,
    /// The builds made for the run (shared library, C harness); each is also a build.json.
    #[serde(default)]
    pub builds: Vec<BuildRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub schema: u32,
    pub config: WorkloadConfig,
    pub workloads: Vec<Workload>,
    pub engines: Vec<Engine>,
    pub plan: Plan,
    /// Every requested tag: built ones with their build records, the rest with the reason.
    pub tags: Vec<TagStatus>,
    /// Schema 4: every label the file names (its tags', controls', a study's layouts'),
    /// each declared once as a value; samples and failures name a unit by its label. Empty
    /// in older files, whose labels are read from their text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<Declared>,
    pub environment: Environment,
    /// How instructions were counted, when they were.
    #[serde(default)]
    pub instruction_counter: Option<String>,
    /// The runs this one was merged from (`merge`), each with its own machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// The C paired worker every C unit of paired rounds ran in (none in other runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_paired_worker: Option<WorkerBuild>,
}

/// A worker program built for the run rather than for one tag: what it is, and how built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerBuild {
    pub sha256: String,
    pub build_id: String,
    /// The compiler and flags, as the builds table shows a toolchain.
    pub toolchain: String,
}

impl std::fmt::Display for WorkerBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SHA-256 {} (build {}), {}", self.sha256, self.build_id, self.toolchain)
    }
}

impl Header {
    /// The header of a new run on this machine: current schema, `units` declared (each label
    /// once), the environment captured now, no instruction counter yet and no parts (those
    /// belong to merged files).
    pub fn new(
        config: WorkloadConfig,
        workloads: Vec<Workload>,
        engines: Vec<Engine>,
        plan: Plan,
        tags: Vec<TagStatus>,
        units: &[Label],
    ) -> Self {
        Header {
            schema: SCHEMA,
            config,
            workloads,
            engines,
            plan,
            tags,
            units: Declared::each(units),
            environment: Environment::capture(),
            instruction_counter: None,
            parts: Vec::new(),
            c_paired_worker: None,
        }
    }
}

/// A unit as a run file's header declares it: its label's value, field by field, and the
/// label rendered from it, by which samples and failures name the unit. The label is
/// written for the reader's eye and checked on loading, never parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    pub label: String,
    #[serde(flatten)]
    pub value: Label,
}

impl Declared {
    pub fn of(value: &Label) -> Declared {
        Declared { label: value.to_string(), value: value.clone() }
    }

    /// Each of `labels` declared once, in the order first given.
    pub fn each<'a>(labels: impl IntoIterator<Item = &'a Label>) -> Vec<Declared> {
        let mut seen = BTreeSet::new();
        labels.into_iter().filter(|l| seen.insert(*l)).map(Declared::of).collect()
    }
}

/// One run of a merged file: where it came from and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The run file's name (without its directory).
    pub file: String,
    /// `K/N` when the run was a shard.
    pub shard: Option<String>,
    pub tags: Vec<String>,
    pub environment: Environment,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub round: u32,
    pub engine: Engine,
    pub tag: String,
    pub workload: Workload,
    pub ns: u64,
    /// The events counted in the timed region (none when it was only timed).
    #[serde(default, skip_serializing_if = "Counts::is_empty")]
    pub counts: Counts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
    /// From the instruction-counting pass: its count is exact, its time (under the
    /// counter) is no measurement.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
    /// A preset's figures beside the time (latencies, resources, size on disk).
    #[serde(default, skip_serializing_if = "Figures::is_empty")]
    pub figures: Figures,
    /// The seed of the layout the sample ran (lld's shuffle of the functions); null for the
    /// fixed build, and in runs from before layouts were randomised.
    #[serde(default)]
    pub layout: Option<u32>,
    /// With `pairing: chunks`: the pass's chunk times in nanoseconds, in pass order (`ns`
    /// is their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks_ns: Vec<u64>,
    /// A write's space after its pass (untimed); none for reads, and in runs from before
    /// space was measured (schema ≤ 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<Space>,
}

impl Sample {
    pub fn ms(&self) -> f64 {
        self.ns as f64 / 1e6
    }

    /// The sample's measurement of its whole timed region under a metric, in the metric's
    /// own unit (ns, instructions); None when the sample has none (no count was taken).
    pub fn total(&self, metric: Metric) -> Option<u64> {
        match metric {
            Metric::Time => Some(self.ns),
            m if m.is_space() => m.of_space(self.space.as_ref()?),
            m => m.of_counts(&self.counts),
        }
    }

    /// The exact metrics the sample holds (counts and space), in declaration order.
    pub fn exact_metrics(&self) -> impl Iterator<Item = Metric> + '_ {
        Metric::ALL.into_iter().filter(|m| m.is_exact() && self.total(*m).is_some())
    }

    /// The sample's figure under a metric, in display units (ms, or millions of
    /// instructions); None for a count that was not taken.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        self.total(metric).map(|t| t as f64 / metric.display())
    }

    /// The one "per operation": the sample's figure in its workload's unit under a metric
    /// (time per timed region in the workload's time unit; counts per operation of the
    /// pass). `entries` is what the sample's pass ran; a preset's sample says itself how
    /// many operations it ran (entries, or open-get's cycles), and that wins.
    pub fn per_op(&self, metric: Metric, entries: u32) -> Option<f64> {
        let ops = self.figures.ops.unwrap_or(u64::from(entries));
        Some(metric.per_op(self.total(metric)? as f64, self.workload, ops))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub round: Option<u32>,
    pub engine: Engine,
    pub tag: String,
    pub workload: Option<Workload>,
    /// `prepare` (building the read database), `verify` (its checksums) or `run`.
    pub stage: String,
    pub error: String,
}

impl Failure {
    pub fn in_round(self, round: u32) -> Failure {
        Failure { round: Some(round), ..self }
    }
}

/// Why a run ended; written as `rounds`, `time-budget`, `target-ci`, `interrupted`, `decided`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// Every planned round ran.
    Rounds,
    /// `--time-budget` was spent.
    TimeBudget,
    /// Every median's interval became narrower than `--target-ci`.
    TargetCi,
    /// Ctrl-C.
    Interrupted,
    /// The caller's stop condition held (bisect decided a probe).
    Decided,
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EndReason::Rounds => "rounds",
            EndReason::TimeBudget => "time-budget",
            EndReason::TargetCi => "target-ci",
            EndReason::Interrupted => "interrupted",
            EndReason::Decided => "decided",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub reason: EndReason,
    pub rounds: u32,
    pub finished: String,
    /// Wall time of this session's schedule: read databases, verification, warm-up and
    /// measured rounds (not the builds, not the counting pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// The sum of this session's recorded timed regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_s: Option<f64>,
}

impl End {
    /// The share of the session's wall time spent inside timed regions.
    pub fn timed_fraction(&self) -> Option<f64> {
        Some(self.timed_s? / self.wall_s.filter(|w| *w > 0.0)?)
    }
}

impl End {
    /// This session's end after `earlier` sessions': the run's wall and timed seconds are
    /// those of every session that recorded both (a session killed before its end record
    /// recorded neither).
    fn after(self, earlier: &End) -> End {
        let sum = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
        match (sum(earlier.wall_s, self.wall_s), sum(earlier.timed_s, self.timed_s)) {
            (Some(wall), Some(timed)) => End { wall_s: Some(wall), timed_s: Some(timed), ..self },
            _ => self,
        }
    }
}

/// Something the run checked about itself, e.g. that instruction counts repeat exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub what: String,
    pub passed: bool,
    pub detail: String,
    /// Which check it is; older files leave it out (the reader infers it from where the
    /// check stands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<CheckKind>,
}

/// The checks a run makes of its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckKind {
    /// One unit's workload counted a second time: counts repeat. It closes the counting
    /// pass (`--with-instructions`) and an instruction run's rounds.
    Repeat,
    /// One unit's workload counted under two layouts: layouts change no count. It closes a
    /// random-layout time run's rounds.
    Layouts,
}

/// A phase of a run after its builds, in order: what a resumed run continues with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The measured rounds, from this one (counted from 0).
    Rounds { from: u32 },
    /// The check after the rounds, before the end record.
    Check(CheckKind),
    /// The instruction-counting pass after the end record (`--with-instructions`).
    Counting,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Phase::Rounds { from } => write!(f, "the measured rounds (at round {})", from + 1),
            Phase::Check(CheckKind::Repeat) => f.write_str("the determinism check (one unit counted twice)"),
            Phase::Check(CheckKind::Layouts) => f.write_str("the layout check (one unit counted under two layouts)"),
            Phase::Counting => f.write_str("the instruction-counting pass"),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Header(Box<Header>),
    Sample(Sample),
    Failure(Failure),
    Check(Check),
    End(End),
    Coverage(RunCoverage),
}

/// What the run's workloads execute of what changed from its baseline to its newest unit,
/// measured after every measured phase on coverage builds of the two (never timed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCoverage {
    pub outcome: CoverageOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoverageOutcome {
    Measured {
        baseline: String,
        newest: String,
        workloads: Vec<Workload>,
        entries: u32,
        /// The executable lines of the newest unit's mdb.c and midl.c that differ from the baseline's.
        changed: Lines,
        /// The newest unit's mdb.c.
        mdb: Lines,
    },
    /// `--no-coverage`.
    Skipped,
    /// No workload coverage runs (programs, presets): their code is not LmdbJava's six.
    NoWorkloads,
    /// The run measured one unit: nothing changed between two.
    OneUnit,
    Failed {
        error: String,
    },
}

/// Executable lines, and how many of them ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lines {
    pub executable: usize,
    pub executed: usize,
}

impl Lines {
    /// The executed share in percent; None of no executable line.
    pub fn percent(self) -> Option<f64> {
        (self.executable > 0).then(|| 100.0 * self.executed as f64 / self.executable as f64)
    }
}

impl Record {
    /// The label of the unit a sample or failure is of.
    fn unit(&self) -> Option<&str> {
        match self {
            Record::Sample(Sample { tag, .. }) | Record::Failure(Failure { tag, .. }) => Some(tag),
            _ => None,
        }
    }
}

/// A run as read back: complete or not.
#[derive(Debug, Clone)]
pub struct RunData {
    pub header: Header,
    pub samples: Vec<Sample>,
    pub failures: Vec<Failure>,
    pub checks: Vec<Check>,
    /// Absent when the run was cut off before it could say why it ended.
    pub end: Option<End>,
    /// Absent in files from before runs measured it (schema ≤ 6), and in runs cut off first.
    pub coverage: Option<RunCoverage>,
    pub path: Option<PathBuf>,
    /// Every label the run names (its header's, its samples' and failures'), read once, as
    /// the file is loaded, into the value it was rendered from.
    pub labels: BTreeMap<String, Label>,
}

impl RunData {
    /// Rounds with at least one sample.
    pub fn completed_rounds(&self) -> u32 {
        self.samples.iter().filter(|s| !s.counted).map(|s| s.round + 1).max().unwrap_or(0)
    }

    /// The entries a sample's pass ran: the counting pass may run fewer than the rounds.
    pub fn entries_of(&self, s: &Sample) -> u32 {
        let h = &self.header;
        if s.counted {
            h.plan.count_entries.unwrap_or(h.config.entries)
        } else {
            h.config.entries
        }
    }

    /// A sample's figure per operation under a metric, over the entries its pass ran.
    pub fn per_op(&self, s: &Sample, metric: Metric) -> Option<f64> {
        s.per_op(metric, self.entries_of(s))
    }

    /// The run as a run file's text, written in one piece (`merge`): header, failures,
    /// samples, checks, end.
    pub fn text(&self) -> Result<String> {
        let records = std::iter::once(Record::Header(Box::new(self.header.clone())))
            .chain(self.failures.iter().cloned().map(Record::Failure))
            .chain(self.samples.iter().cloned().map(Record::Sample))
            .chain(self.checks.iter().cloned().map(Record::Check))
            .chain(self.end.iter().cloned().map(Record::End))
            .chain(self.coverage.iter().cloned().map(Record::Coverage));
        records.map(|r| line(&r)).collect::<Result<String>>()
    }

    /// The end record of a run whose rounds ended (not by Ctrl-C); its counting pass may
    /// still be left ([`RunData::left`]).
    pub fn finished(&self) -> Option<&End> {
        self.end.as_ref().filter(|e| e.reason != EndReason::Interrupted)
    }

    /// The check that closes this run's rounds, if its plan makes one: an instruction run
    /// counts one unit twice, a random-layout time run one unit under two layouts.
    pub fn closing_check(&self) -> Option<CheckKind> {
        let plan = &self.header.plan;
        match (plan.metric, plan.layouts) {
            (Metric::Time, Layouts::Random) => Some(CheckKind::Layouts),
            (Metric::Time, Layouts::Fixed) => None,
            (_, _) => Some(CheckKind::Repeat),
        }
    }

    /// The first phase of its plan the run file lacks, None when it is complete: rounds
    /// left (no end record, or Ctrl-C's); the check after every round, when no end record
    /// follows it; the counting pass, when its closing check is not recorded and a
    /// (unit, workload) the rounds measured has no count. (A check skipped for want of a
    /// counter is written by the end record, or by the counting pass as a check that did
    /// not pass.) Files from before check records (schema 2 and older) made no checks:
    /// their counting pass is complete once it counted anything.
    pub fn left(&self) -> Option<Phase> {
        let checks = self.header.schema >= CHECKS;
        let recorded = |kind| !checks || self.checks.iter().any(|c| c.kind == Some(kind));
        if self.finished().is_none() {
            let from = self.completed_rounds();
            if from < self.header.plan.rounds {
                return Some(Phase::Rounds { from });
            }
            return Some(self.closing_check().filter(|k| !recorded(*k)).map_or(Phase::Rounds { from }, Phase::Check));
        }
        let counting = self.header.plan.count_entries.is_some() && self.header.plan.metric == Metric::Time;
        let (taken, measured) = counts_taken(&self.samples);
        let legacy = !checks && taken > 0;
        let counted = (checks && recorded(CheckKind::Repeat)) || legacy || (taken >= measured && taken > 0);
        (counting && !counted).then_some(Phase::Counting)
    }
}

/// How far a counting pass got over `samples`: the (engine, unit, workload)s the rounds
/// measured that it counted, of all those the rounds measured.
pub fn counts_taken(samples: &[Sample]) -> (usize, usize) {
    let of = |counted: bool| -> BTreeSet<_> {
        samples.iter().filter(|s| s.counted == counted).map(|s| (s.engine, &s.tag, s.workload)).collect()
    };
    let measured = of(false);
    (of(true).intersection(&measured).count(), measured.len())
}

/// A record as one line of a run file.
fn line(r: &Record) -> Result<String> {
    let mut line = serde_json::to_string(r)?;
    line.push('\n');
    Ok(line)
}

/// A run file's one writer: it holds an exclusive lock (flock) on the file from opening to
/// the end, so a second writer fails at once, naming the first one's PID.
pub struct RunWriter {
    file: File,
    pub path: PathBuf,
    /// The labels the file's header declares (schema 4): a sample or failure of any other
    /// unit is refused before it is written. None for older files, whose labels are text.
    declared: Option<BTreeSet<String>>,
}

impl RunWriter {
    /// A new run file at `path`, its header written. An existing file is refused unless
    /// `existing` says replace, and one another process is writing is never replaced.
    pub fn create(path: &Path, header: &Header, existing: Existing) -> Result<RunWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let opened = match existing {
            Existing::Refuse => files::create_new(path),
            Existing::Replace => OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path),
        };
        let file = match opened {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(files::exists_error(path)),
            other => other.with_context(|| format!("cannot create run file {}", path.display()))?,
        };
        files::lock_exclusive(&file, path)?;
        file.set_len(0).with_context(|| format!("cannot empty {}", path.display()))?;
        RunWriter::start(file, path.to_path_buf(), header)
    }

    /// A new run file `dir/stem.jsonl`, or `stem-2.jsonl`, `stem-3.jsonl`, …: never an
    /// existing one, so runs started in the same second keep their own files.
    pub fn create_numbered(dir: &Path, stem: &str, header: &Header) -> Result<RunWriter> {
        let (file, path) = files::create_numbered(dir, stem, "jsonl", files::create_new)?;
        files::lock_exclusive(&file, &path)?;
        RunWriter::start(file, path, header)
    }

    fn start(file: File, path: PathBuf, header: &Header) -> Result<RunWriter> {
        let mut w = RunWriter { file, path, declared: declared(header) };
        w.append(&Record::Header(Box::new(header.clone())))?;
        Ok(w)
    }

    /// The run file `path`, locked for this writer, to continue it in the shape its header
    /// says: a file of schema 3 or before goes on naming its units by their labels only
    /// (its reader reads them from their text), a later one only the units it declares.
    /// Nothing in it changes until [`RunWriter::cut_torn_line`] or an append.
    pub fn reopen(path: &Path) -> Result<RunWriter> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open run file {}", path.display()))?;
        files::lock_exclusive(&file, path)?;
        let text = files::read_text(path, "run file")?;
        let header = text.lines().next().map(|first| read_header(path, first, !text.contains('\n'))).transpose()?;
        Ok(RunWriter { file, path: path.to_path_buf(), declared: header.as_ref().and_then(declared) })
    }

    /// Mends a last line without its newline, and says so: one that is a whole record (the
    /// run stopped between writing it and its newline) is kept and given its newline; one
    /// that is not (the run was killed, or the disk filled, while it was written) is cut.
    /// What is appended then starts a line of its own.
    pub fn cut_torn_line(&mut self) -> Result<()> {
        let text = std::fs::read(&self.path).with_context(|| format!("cannot read {}", self.path.display()))?;
        if text.is_empty() || text.ends_with(b"\n") {
            return Ok(());
        }
        let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line_no = text[..keep].iter().filter(|&&b| b == b'\n').count() + 1;
        let at = format!("{}:{line_no}", self.path.display());
        if serde_json::from_slice::<Record>(&text[keep..]).is_ok() {
            self.file.write_all(b"\n").with_context(|| format!("cannot write {}", self.path.display()))?;
            eprintln!("{at}: the last line is a whole record without its newline: kept, its newline added");
            return Ok(());
        }
        self.file.set_len(keep as u64).with_context(|| format!("cannot cut {}", self.path.display()))?;
        eprintln!(
            "{at}: cut a torn last line ({} bytes, written when the run was stopped) before continuing",
            text.len() - keep
        );
        Ok(())
    }

    /// One line, flushed at once: what is written survives a kill. A sample or failure of
    /// a unit the header does not declare is refused, the file unchanged.
    pub fn append(&mut self, r: &Record) -> Result<()> {
        if let (Some(declared), Some(tag)) = (&self.declared, r.unit()) {
            if !declared.contains(tag) {
                bail!(
                    "cannot write {}: unit {tag} is not among the units its header declares \
                     (a file its reader would refuse)",
                    self.path.display()
                );
            }
        }
        let line = line(r)?;
        self.file.write_all(line.as_bytes()).with_context(|| format!("cannot write {}", self.path.display()))?;
        self.file.flush()?;
        Ok(())
    }
}

/// The labels `h` declares, when its schema declares units.
fn declared(h: &Header) -> Option<BTreeSet<String>> {
    (h.schema >= DECLARES_UNITS).then(|| h.units.iter().map(|d| d.label.clone()).collect())
}

/// Reads a run file, finished or not. What a run cannot have written is refused, naming
/// the file and the line: a second header, a sample or failure of a tag, engine or
/// workload the header does not list, a sample of no time, a measured sample or a second
/// end after the run's end; in a file that declares its units (schema 4), a unit not
/// declared, or declared under a label that is not its value's rendering. A torn last line
/// (the run was stopped while writing it) is left out, and said so.
pub fn load(path: &Path) -> Result<RunData> {
    let text = files::read_text(path, "run file")?;
    let mut lines = text.lines().enumerate();
    let Some((_, first)) = lines.next() else { bail!("{} is empty: not a run file", path.display()) };
    let header = read_header(path, first, !text.contains('\n'))?;
    let torn = !text.ends_with('\n');
    let last = text.lines().count();
    let at = |line: usize, e: String| anyhow::anyhow!("{}:{line}: {e}", path.display());
    let mut rules = Rules::of(&header);
    let listed = header.tags.iter().map(|t| &t.tag).chain(rules.tags.iter().flatten());
    let mut units = Units::of(&header, listed).map_err(|e| at(1, e))?;
    let mut data = RunData {
        header,
        samples: Vec::new(),
        failures: Vec::new(),
        checks: Vec::new(),
        end: None,
        coverage: None,
        path: Some(path.to_path_buf()),
        labels: BTreeMap::new(),
    };
    for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let record = match serde_json::from_str::<serde_json::Value>(line).and_then(|v| upgrade(v)) {
            Ok(r) => r,
            Err(_) if torn && i + 1 == last => {
                eprintln!(
                    "note: {}:{}: a torn last line (the run was stopped while writing it) is left out",
                    path.display(),
                    i + 1
                );
                continue;
            }
            Err(e) => bail!("{}:{}: corrupt line: {}", path.display(), i + 1, bad_record(line, &e)),
        };
        if let Some(tag) = record.unit() {
            units.name(tag).map_err(|e| at(i + 1, e))?;
        }
        rules.check(&record, &units.labels, i + 1).map_err(|e| at(i + 1, e))?;
        match record {
            Record::Sample(s) => data.samples.push(s),
            Record::Failure(f) => data.failures.push(f),
            Record::Check(c) => {
                let kind = c.kind.or_else(|| Some(legacy_kind(&data.header, rules.ended.is_some())));
                data.checks.push(Check { kind, ..c })
            }
            Record::End(e) => {
                data.end = Some(match data.end.take() {
                    Some(earlier) => e.after(&earlier),
                    None => e,
                })
            }
            Record::Coverage(c) => data.coverage = Some(c),
            Record::Header(_) => unreachable!("refused by the rules"),
        }
    }
    data.labels = units.labels;
    Ok(data)
}

/// The one upgrader: a record of any schema read into today's shape. Samples written
/// before their counts were values by event (schema ≤ 4) held their instruction count as
/// `instructions`: it is their `Ir`.
fn upgrade(mut v: serde_json::Value) -> serde_json::Result<Record> {
    if let Some(sample) = v.as_object_mut().filter(|o| o.get("type").and_then(|t| t.as_str()) == Some("sample")) {
        if let Some(n) = sample.remove("instructions").filter(|n| !n.is_null()) {
            sample.entry("counts").or_insert_with(|| serde_json::json!({ "Ir": n }));
        }
    }
    serde_json::from_value(v)
}

/// The kind of a check in a file from before checks said it, by where it stands: after the
/// end of the rounds only the counting pass checks (that counts repeat); before it, an
/// instruction run checks that counts repeat, a time run that layouts change none.
fn legacy_kind(h: &Header, after_end: bool) -> CheckKind {
    if after_end || h.plan.metric.is_exact() {
        CheckKind::Repeat
    } else {
        CheckKind::Layouts
    }
}

/// The labels a run file names, as values: declared by its header (schema 4), or in older
/// files read from their text, once each: the one place a run file's label is read back.
struct Units {
    declared: bool,
    labels: BTreeMap<String, Label>,
}

impl Units {
    /// The units `h` declares, each under its value's rendering, with every label the header
    /// lists (`listed`) among them; in an older file, the `listed` labels read.
    fn of<'a>(h: &Header, listed: impl Iterator<Item = &'a String>) -> std::result::Result<Units, String> {
        let declared = h.schema >= DECLARES_UNITS;
        let mut units = Units { declared, labels: BTreeMap::new() };
        for d in h.units.iter().filter(|_| declared) {
            let rendered = d.value.to_string();
            if d.label != rendered {
                return Err(format!(
                    "unit {:?} is declared with the value of {rendered:?}: a label is its value's rendering",
                    d.label
                ));
            }
            if units.labels.insert(rendered, d.value.clone()).is_some() {
                return Err(format!("unit {} is declared twice", d.label));
            }
        }
        for text in listed {
            units.name(text).map_err(|_| format!("the header lists {text} but does not declare it among its units"))?;
        }
        Ok(units)
    }

    /// Makes sure the label `text` has its value: declared, or in an older file read now.
    fn name(&mut self, text: &str) -> std::result::Result<(), String> {
        if self.labels.contains_key(text) {
            return Ok(());
        }
        if self.declared {
            return Err(format!("unit {text} is not among the units the header declares"));
        }
        self.labels.insert(text.to_string(), Label::parse(text));
        Ok(())
    }
}

/// The header on a run file's first line; `only_line` when no newline follows it, so that a
/// first line that is no JSON was torn while it was written, not some other file's.
fn read_header(path: &Path, first: &str, only_line: bool) -> Result<Header> {
    let value: serde_json::Value = match serde_json::from_str(first) {
        Ok(v) => v,
        Err(_) if only_line && torn_header(first) => bail!(
            "{}:1: the header is torn ({} bytes; the run was stopped, or the disk filled, while writing \
             it): nothing was measured into this file; start the run again",
            path.display(),
            first.len()
        ),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("{} is not a lmdb-regress run file (first line is not JSON)", path.display()))
        }
    };
    if value.get("type").and_then(|t| t.as_str()) != Some("header") {
        bail!("{} is not a lmdb-regress run file (no header line)", path.display());
    }
    let schema = value.get("schema").and_then(|s| s.as_u64()).unwrap_or(0);
    if schema > SCHEMA as u64 {
        bail!(
            "{} was written with run-file schema {schema}, newer than this lmdb-regress reads ({SCHEMA}); upgrade lmdb-regress",
            path.display()
        );
    }
    match serde_json::from_value::<Record>(value).with_context(|| format!("{}:1: corrupt header", path.display()))? {
        Record::Header(h) => Ok(*h),
        _ => unreachable!("checked the type above"),
    }
}

/// Whether `line` is the start of a header line as a run writes it.
fn torn_header(line: &str) -> bool {
    const START: &str = "{\"type\":\"header\"";
    line.starts_with(START) || (!line.is_empty() && START.starts_with(line))
}

/// Why a line is no record, in words for the common case of a time that is no positive
/// whole number.
fn bad_record(line: &str, e: &serde_json::Error) -> String {
    let ns = serde_json::from_str::<serde_json::Value>(line).ok().and_then(|v| v.get("ns").cloned());
    match ns {
        Some(ns) if !ns.is_u64() => format!("a sample's time must be a positive whole number of ns, not {ns}"),
        _ => e.to_string(),
    }
}

/// What a run can write, checked record by record.
struct Rules {
    /// The labels the header lists (None for the run files of older bisects, which list none).
    tags: Option<BTreeSet<String>>,
    engines: Vec<Engine>,
    workloads: Vec<Workload>,
    /// The line of the end record that finished the run (an interrupted run may go on).
    ended: Option<usize>,
    /// Whether a coverage record was read (a run writes one).
    covered: bool,
    /// Samples one pass writes per unit, workload and round: one per iteration.
    iterations: u32,
    /// The lines of the samples read so far, by what one pass samples once per iteration.
    sampled: BTreeMap<SampleKey, Vec<usize>>,
}

/// What names a sample but its iteration, which a line does not hold: a pass of one unit
/// (engine, label, layout) on one workload in one round, timed or counted.
type SampleKey = (Engine, String, Workload, u32, bool, Option<u32>);

impl Rules {
    fn of(h: &Header) -> Rules {
        // A layout study's labels (TAG@01, …) are its tag's layouts, listed in its plan.
        let study = h.plan.layout_study.iter().flat_map(|s| s.layouts.iter().map(|(label, _)| label.clone()));
        let tags = (!h.tags.is_empty()).then(|| h.tags.iter().map(|t| t.tag.clone()).chain(study).collect());
        let (engines, workloads, iterations) = (h.engines.clone(), h.workloads.clone(), h.plan.iterations.max(1));
        Rules { tags, engines, workloads, ended: None, covered: false, iterations, sampled: BTreeMap::new() }
    }

    fn check(&mut self, r: &Record, labels: &BTreeMap<String, Label>, line: usize) -> std::result::Result<(), String> {
        match r {
            Record::Header(_) => return Err("a second header".into()),
            Record::Sample(s) => {
                self.listed(s.engine, &s.tag, &labels[&s.tag], Some(s.workload))?;
                if s.ns == 0 {
                    return Err(format!(
                        "a sample of 0 ns ({} {} {}): every timed region takes time",
                        s.engine, s.tag, s.workload
                    ));
                }
                // Only the counting pass follows the end of the measured rounds.
                match self.ended {
                    Some(end) if !s.counted => {
                        return Err(format!("a measured sample after the run's end record (line {end})"))
                    }
                    _ => {}
                }
                self.once_per_iteration(s, line)?;
            }
            Record::Failure(f) => self.listed(f.engine, &f.tag, &labels[&f.tag], f.workload)?,
            Record::Check(_) => {}
            Record::Coverage(_) if self.covered => return Err("a second coverage record".into()),
            Record::Coverage(_) => self.covered = true,
            Record::End(e) => {
                if let Some(end) = self.ended {
                    return Err(format!("a second end record (the run ended at line {end})"));
                }
                if e.reason != EndReason::Interrupted {
                    self.ended = Some(line);
                }
            }
        }
        Ok(())
    }

    /// A pass writes one sample per iteration: a further one of the same unit, workload and
    /// round is a line written twice (or forged), and would weigh twice in every statistic.
    fn once_per_iteration(&mut self, s: &Sample, line: usize) -> std::result::Result<(), String> {
        let key = (s.engine, s.tag.clone(), s.workload, s.round, s.counted, s.layout);
        let lines = self.sampled.entry(key).or_default();
        if lines.len() as u32 >= self.iterations {
            let pass = if s.counted { "the counting pass".to_string() } else { format!("round {}", s.round + 1) };
            let earlier = lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
            return Err(format!(
                "one sample too many of {} {} {} in {pass}: the run takes {} per pass (one per iteration), \
                 and line(s) {earlier} hold them: a duplicated line",
                s.engine, s.tag, s.workload, self.iterations
            ));
        }
        lines.push(line);
        Ok(())
    }

    fn listed(
        &self,
        engine: Engine,
        tag: &str,
        label: &Label,
        workload: Option<Workload>,
    ) -> std::result::Result<(), String> {
        let base = label.controlled().map_or(tag.to_string(), |b| b.to_string());
        if self.tags.as_ref().is_some_and(|tags| !tags.contains(&base)) {
            return Err(format!("tag {tag} is not among the header's tags"));
        }
        if !self.engines.contains(&engine) {
            return Err(format!("engine {engine} is not among the header's engines"));
        }
        match workload {
            Some(w) if !self.workloads.contains(&w) => Err(format!("workload {w} is not among the header's workloads")),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_reasons_are_written_as_the_strings_older_files_hold() {
        for (reason, text) in [
            (EndReason::Rounds, "rounds"),
            (EndReason::TimeBudget, "time-budget"),
            (EndReason::TargetCi, "target-ci"),
            (EndReason::Interrupted, "interrupted"),
            (EndReason::Decided, "decided"),
        ] {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<EndReason>(&json).unwrap(), reason);
            assert_eq!(reason.to_string(), text);
        }
    }

    #[test]
    fn shards_partition_the_tags_round_robin_in_release_order() {
        let tags: Vec<String> =
            ["LMDB_0.9.33", "LMDB_0.9.9", "LMDB_0.9.18", "LMDB_0.9.21", "abc1234"].map(String::from).to_vec();
        let own = |k| Shard::new(k, 2, tags.clone(), None).unwrap().own().join(",");
        assert_eq!(own(1), "LMDB_0.9.9,LMDB_0.9.21,abc1234");
        assert_eq!(own(2), "LMDB_0.9.18,LMDB_0.9.33");
        // The same whatever order the tags were asked in; every tag in exactly one shard.
        let mut reversed = tags.clone();
        reversed.reverse();
        for n in 1..=5 {
            let mut union: Vec<String> = (1..=n)
                .flat_map(|k| {
                    Shard::new(k, n, reversed.clone(), None)
                        .unwrap()
                        .own()
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
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
    fn shard_arguments_are_k_of_n() {
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"] {
            let e = parse_shard(bad).unwrap_err().to_string();
            assert!(e.contains("K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_committed_run_file_loads_with_its_tags_and_end() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/run-fixed.jsonl"));
        let data = load(path).unwrap();
        assert!(!data.header.tags.is_empty());
        assert!(data.header.tags.iter().any(|t| t.status == Status::Built && !t.builds.is_empty()));
        assert!(data.end.is_some());
        // From before layouts were randomised: fixed, every sample of its tag's one build.
        assert_eq!((data.header.plan.layouts, data.header.plan.layout_seed), (Layouts::Fixed, None));
        assert!(data.samples.iter().all(|s| s.layout.is_none()));
    }

    #[test]
    fn every_sample_says_its_layout_even_when_fixed() {
        let s = Sample { workload: Workload::Write, ..time_sample("LMDB_0.9.18") };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["layout"], serde_json::Value::Null);
        let random = serde_json::to_value(Sample { layout: Some(12345), ..s }).unwrap();
        assert_eq!(random["layout"], 12345);
        assert_eq!(serde_json::to_value(Layouts::Random).unwrap(), "random");
    }

    fn committed() -> RunData {
        load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/run-fixed.jsonl"))).unwrap()
    }

    /// Every form a label takes, and two whose text the label grammar reads otherwise (a
    /// layout that is no number, a commit whose name ends like a control's label).
    fn every_form() -> Vec<Label> {
        let b = Label::build;
        vec![
            b("LMDB_0.9.33", None),
            b("LMDB_1.0.1", Some("clang -O2")),
            b("LMDB_0.9.33", Some("gcc -O3")).control(),
            b("1a2b3c4d5e", None).control(),
            b("mdb.RE/0.9 @ 1a2b3c4d", None),
            b("mdb.RE/0.9 @ 1a2b3c4d", Some("clang -O2")),
            b("LMDB_0.9.20", None).in_layout("01".into()),
            b("LMDB_0.9.20", Some("clang -O2")).in_layout("03".into()).control(),
            b("LMDB_0.9.20", None).in_layout("x1".into()),
            b("deadbeef~control", None),
        ]
    }

    /// The committed run's header as a schema-4 header listing `labels` (controls by their
    /// labels' tags) and declaring them.
    fn header_of(labels: &[Label]) -> Header {
        let h = committed().header;
        let row = |l: &Label| TagStatus { tag: l.to_string(), ..h.tags[0].clone() };
        let rows: Vec<Label> = labels.iter().map(|l| l.controlled().unwrap_or_else(|| l.clone())).collect();
        let tags = Declared::each(&rows).iter().map(|d| row(&d.value)).collect();
        Header { schema: SCHEMA, tags, units: Declared::each(labels.iter().chain(&rows)), ..h }
    }

    /// A time sample of `tag`'s Rust unit, of a fixed layout, in round 0.
    fn time_sample(tag: &str) -> Sample {
        Sample {
            round: 0,
            engine: Engine::Rust,
            tag: tag.into(),
            workload: Workload::ReadSeq,
            ns: 5,
            counts: Counts::default(),
            checksum: None,
            counted: false,
            figures: Figures::default(),
            layout: None,
            chunks_ns: Vec::new(),
            space: None,
        }
    }

    fn sample(tag: &str) -> Record {
        Record::Sample(time_sample(tag))
    }

    /// A run file of `labels`, one sample each, written as a run writes it.
    fn written(dir: &Path, labels: &[Label]) -> PathBuf {
        let path = dir.join("run.jsonl");
        let mut w = RunWriter::create(&path, &header_of(labels), Existing::Replace).unwrap();
        for l in labels {
            w.append(&sample(&l.to_string())).unwrap();
        }
        path
    }

    #[test]
    fn units_are_declared_once_as_values_and_loaded_as_they_were_made() {
        let dir = tempfile::tempdir().unwrap();
        let labels = every_form();
        let data = load(&written(dir.path(), &labels)).unwrap();
        for l in &labels {
            assert_eq!(data.labels.get(&l.to_string()), Some(l), "{l}");
        }
        assert_eq!(data.samples.len(), labels.len());
        // Not read back from the text: the grammar would take these for other units.
        assert_ne!(Label::parse("LMDB_0.9.20@x1"), labels[8]);
        assert_ne!(Label::parse("deadbeef~control"), labels[9]);
        let first = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
        let header: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        assert_eq!(header["schema"], SCHEMA);
        assert_eq!(
            header["units"][2],
            serde_json::json!({"label": "LMDB_0.9.33 (gcc -O3)~control", "base": "LMDB_0.9.33",
                "toolchain": "gcc -O3", "layout": null, "control": true})
        );
    }

    /// The error loading the file `edit` makes of a written run of every label form.
    fn refusal(edit: impl Fn(&mut Vec<serde_json::Value>)) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), &every_form());
        let text = std::fs::read_to_string(&path).unwrap();
        let mut records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        edit(&mut records);
        std::fs::write(&path, records.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
        format!("{:#}", load(&path).unwrap_err()).replace(&path.display().to_string(), "F")
    }

    #[test]
    fn a_unit_not_declared_or_declared_under_another_label_is_refused() {
        let e = refusal(|r| r[3]["tag"] = "LMDB_0.9.34".into());
        assert_eq!(e, "F:4: unit LMDB_0.9.34 is not among the units the header declares");
        let e = refusal(|r| r[0]["units"][0]["label"] = "LMDB_0.9.34".into());
        assert_eq!(
            e,
            "F:1: unit \"LMDB_0.9.34\" is declared with the value of \"LMDB_0.9.33\": a label is its value's rendering"
        );
        let e = refusal(|r| r[0]["units"][8]["layout"] = "08".into());
        assert!(e.starts_with("F:1: unit \"LMDB_0.9.20@x1\" is declared with the value of \"LMDB_0.9.20@08\""), "{e}");
        let e = refusal(|r| {
            let twice = r[0]["units"][1].clone();
            r[0]["units"].as_array_mut().unwrap().push(twice)
        });
        assert_eq!(e, "F:1: unit LMDB_1.0.1 (clang -O2) is declared twice");
        let e = refusal(|r| {
            r[0]["units"].as_array_mut().unwrap().remove(0);
        });
        assert_eq!(e, "F:1: the header lists LMDB_0.9.33 but does not declare it among its units");
        let e = refusal(|r| r[0]["schema"] = (SCHEMA + 1).into());
        let newer =
            format!("schema {}, newer than this lmdb-regress reads ({SCHEMA}); upgrade lmdb-regress", SCHEMA + 1);
        assert!(e.contains(&newer), "{e}");
    }

    #[test]
    fn a_writer_writes_no_unit_its_file_does_not_declare() {
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), &every_form()[..2]);
        let before = std::fs::read(&path).unwrap();
        for mut w in [
            RunWriter::create(&dir.path().join("new.jsonl"), &header_of(&[]), Existing::Refuse).unwrap(),
            RunWriter::reopen(&path).unwrap(),
        ] {
            let e = w.append(&sample("LMDB_0.9.18")).unwrap_err().to_string();
            assert!(e.contains("unit LMDB_0.9.18 is not among the units its header declares"), "{e}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert!(load(&path).is_ok());
    }

    /// The committed run's header as a schema-4 file of `plan`, with `records` after it.
    fn file_of(dir: &Path, plan: Plan, records: &[Record]) -> PathBuf {
        let labels = [Label::build("LMDB_0.9.33", None)];
        let path = dir.join("phases.jsonl");
        let mut w = RunWriter::create(&path, &Header { plan, ..header_of(&labels) }, Existing::Replace).unwrap();
        records.iter().for_each(|r| w.append(r).unwrap());
        path
    }

    fn end(reason: EndReason, rounds: u32, wall: f64, timed: f64) -> Record {
        Record::End(End {
            reason,
            rounds,
            finished: "2026-01-01T00:00:00Z".into(),
            wall_s: Some(wall),
            timed_s: Some(timed),
        })
    }

    fn check(kind: CheckKind) -> Record {
        Record::Check(Check { what: "a check".into(), passed: true, detail: String::new(), kind: Some(kind) })
    }

    #[test]
    fn a_sample_of_an_older_schema_reads_its_instruction_count_as_ir() {
        let old = serde_json::json!({"type": "sample", "round": 0, "engine": "rust", "tag": "LMDB_0.9.33",
            "workload": "readSeq", "ns": 5, "instructions": 31000, "counted": true});
        let Record::Sample(s) = upgrade(old).unwrap() else { panic!("not a sample") };
        assert_eq!((s.counts.clone(), s.total(Metric::Instructions)), (Counts::instructions(31000), Some(31000)));
        assert_eq!(s.total(Metric::EstimatedCycles), None);
        // Written back in today's shape, it reads the same.
        let again = serde_json::to_value(Record::Sample(s.clone())).unwrap();
        assert!(again.get("instructions").is_none() && again["counts"]["Ir"] == 31000, "{again}");
        let Record::Sample(t) = upgrade(again).unwrap() else { panic!("not a sample") };
        assert_eq!(t, s);
        let timed = serde_json::json!({"type": "sample", "round": 0, "engine": "rust", "tag": "x",
            "workload": "readSeq", "ns": 5, "instructions": null});
        let Record::Sample(u) = upgrade(timed).unwrap() else { panic!("not a sample") };
        assert!(u.counts.is_empty());
    }

    #[test]
    fn a_run_lacks_the_first_phase_its_file_does_not_record() {
        let dir = tempfile::tempdir().unwrap();
        let sample = |round| Record::Sample(Sample { round, ..time_sample("LMDB_0.9.33") });
        let random = Plan { layouts: Layouts::Random, layout_seed: Some(1), ..Plan::new(2, 0, Metric::Time) };
        let counting = Plan { count_entries: Some(1000), ..Plan::new(2, 0, Metric::Time) };
        let counted =
            Record::Sample(Sample { counted: true, counts: Counts::instructions(9), ..time_sample("LMDB_0.9.33") });
        let left = |plan: &Plan, records: &[Record]| load(&file_of(dir.path(), plan.clone(), records)).unwrap().left();
        let interrupted = end(EndReason::Interrupted, 1, 1.0, 0.5);
        assert_eq!(left(&random, &[sample(0), interrupted.clone()]), Some(Phase::Rounds { from: 1 }));
        // Every round measured, the check after them not: killed, or Ctrl-C in it.
        let both = [sample(0), sample(1)];
        assert_eq!(left(&random, &both), Some(Phase::Check(CheckKind::Layouts)));
        assert_eq!(left(&random, &[sample(0), sample(1), interrupted]), Some(Phase::Check(CheckKind::Layouts)));
        let done = [sample(0), sample(1), check(CheckKind::Layouts), end(EndReason::Rounds, 2, 1.0, 0.5)];
        assert_eq!(left(&random, &done), None);
        // A run that ended without the check (no counter) lacks nothing.
        assert_eq!(left(&random, &[sample(0), sample(1), end(EndReason::Rounds, 2, 1.0, 0.5)]), None);
        let write = Record::Sample(Sample { workload: Workload::Write, ..time_sample("LMDB_0.9.33") });
        let ended = [sample(0), write, sample(1), end(EndReason::Rounds, 2, 1.0, 0.5), counted.clone()];
        assert_eq!(left(&counting, &ended), Some(Phase::Counting));
        // Every count taken, the pass's check not (killed just before it): nothing is missing.
        let all = [sample(0), sample(1), end(EndReason::Rounds, 2, 1.0, 0.5), counted];
        assert_eq!(left(&counting, &all), None);
        let with_check: Vec<Record> = ended.iter().cloned().chain([check(CheckKind::Repeat)]).collect();
        assert_eq!(left(&counting, &with_check), None);
        let instructions = Plan::new(1, 0, Metric::Instructions);
        assert_eq!(left(&instructions, &[sample(0)]), Some(Phase::Check(CheckKind::Repeat)));
    }

    #[test]
    fn the_timed_fraction_covers_every_session_and_checks_say_their_kind() {
        let dir = tempfile::tempdir().unwrap();
        let sample = |round| Record::Sample(Sample { round, ..time_sample("LMDB_0.9.33") });
        let records =
            [sample(0), end(EndReason::Interrupted, 1, 10.0, 6.0), sample(1), end(EndReason::Rounds, 2, 30.0, 10.0)];
        let data = load(&file_of(dir.path(), Plan::new(2, 0, Metric::Time), &records)).unwrap();
        let e = data.end.unwrap();
        assert_eq!((e.wall_s, e.timed_s, e.timed_fraction()), (Some(40.0), Some(16.0), Some(0.4)));
        // Written before checks said their kind: a time run's check before its end is the
        // layout check, one after it the counting pass's.
        let path = file_of(dir.path(), Plan { count_entries: Some(10), ..Plan::new(1, 0, Metric::Time) }, &[]);
        let bare = r#"{"type":"check","what":"w","passed":true,"detail":"d"}"#;
        let tail =
            format!("{bare}\n{}\n{bare}\n", serde_json::to_string(&end(EndReason::Rounds, 1, 1.0, 1.0)).unwrap());
        std::fs::write(&path, std::fs::read_to_string(&path).unwrap() + &tail).unwrap();
        let kinds: Vec<Option<CheckKind>> = load(&path).unwrap().checks.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [Some(CheckKind::Layouts), Some(CheckKind::Repeat)]);
    }

    #[test]
    fn a_whole_last_line_is_mended_and_a_torn_one_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_of(dir.path(), Plan::new(2, 0, Metric::Time), &[sample("LMDB_0.9.33")]);
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, whole.trim_end()).unwrap();
        RunWriter::reopen(&path).unwrap().cut_torn_line().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        std::fs::write(&path, &whole[..whole.len() - 10]).unwrap();
        RunWriter::reopen(&path).unwrap().cut_torn_line().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1, "the header alone");
        // A header cut off is torn, whatever the reader.
        let header = whole.lines().next().unwrap();
        for cut in [5, 300] {
            std::fs::write(&path, &header[..cut]).unwrap();
            let e = format!("{:#}", load(&path).unwrap_err());
            assert!(e.contains(":1: the header is torn"), "{e}");
        }
        std::fs::write(&path, "{\"no\": 1\n").unwrap();
        assert!(format!("{:#}", load(&path).unwrap_err()).contains("is not a lmdb-regress run file"));
    }

    #[test]
    fn an_older_file_is_continued_in_its_own_shape_and_read_from_its_labels() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        let mut h = committed().header;
        assert!(h.schema < DECLARES_UNITS && h.units.is_empty());
        h.schema = 3;
        let control = Label::build("LMDB_0.9.33", None).control();
        RunWriter::create(&old, &h, Existing::Refuse).unwrap();
        // As `run --resume` continues it: no declarations appended, the labels as text.
        let mut w = RunWriter::reopen(&old).unwrap();
        w.append(&sample("LMDB_0.9.33")).unwrap();
        w.append(&sample(&control.to_string())).unwrap();
        let text = std::fs::read_to_string(&old).unwrap();
        assert!(!text.contains("\"units\"") && text.contains("\"schema\":3"), "{text}");
        let data = load(&old).unwrap();
        assert_eq!(data.labels["LMDB_0.9.33~control"], control);
        assert_eq!(data.samples.len(), 2);
    }
}
