//! The run file's records, as serde reads and writes them: JSON Lines, appended as results
//! arrive, so an interrupted run loses nothing. The first line is the header; then
//! samples and failures; then `end`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::label::Label;
use super::metric::{Counts, Metric};
use super::plan::Plan;
use crate::compile::BuildRecord;
use crate::environment::Environment;
use crate::manifest::{FileHashes, Match};
use crate::workload::iocount::Io;
use crate::workload::presets::Figures;
use crate::workload::space::Space;
use crate::workload::{Checksum, Workload, WorkloadConfig};

/// Bumped whenever a reader of an older version could misread a newer file (2: samples
/// of the instruction-counting pass, `counted`, which a reader of 1 would take for times;
/// 3: `check` records, such as the determinism check of instruction counts; 4: the
/// header's `units`, each label's value declared field by field, which a reader of 3 would
/// not know to need; 5: a sample's `counts`, its events by name, where a reader of 4 looks
/// for `instructions`; 6: a write sample's `space`, which a reader of 5 would drop on a
/// resume or merge; 7: the `coverage` record, a type a reader of 6 refuses; 8: the plan's
/// `adaptive`, whose rounds leave decided comparisons out, which a reader of 7 would resume
/// measuring every unit in every round; 9: a plan's `rounds` may be null, no cap on the
/// rounds, which a reader of 8 cannot read, its `layouts_per_process`, which a reader of 8
/// would resume with one, a write sample's `io`, a unit's `sync` mode and the environment's
/// `storage`, which a reader of 8 would drop on a resume or merge; 10: the plan's
/// `stopping`, decided at looks that spend the run's error, which a reader of 9 would
/// report at the nominal level, a unit's `memory_limit` and a sample's `major_faults`,
/// which a reader of 9 would drop on a resume or merge, resuming a limited unit without its
/// limit; 11: a unit's `readahead` and the configuration's `nordahead`, which a reader of
/// 10 would drop on a resume or merge, resuming a unit without MDB_NORDAHEAD, a sample's
/// commit times, and the plan's `closing`, a resolution target closing a comparison once it
/// is decided and within it, which a reader of 10 would report closed at its first deciding
/// look; 12: the environment's `processor`, family, model, stepping and caches behind the
/// model name, which a reader of 11 would drop on a resume or merge; 13: the configuration's
/// `key_sample`, readKey's gets a pass, which a reader of 12 would drop on a resume or merge
/// and go on with whole passes; 14: a sample's `harness`, the function order of the tool's
/// own binary that ran it, which a reader of 13 would drop on a resume or merge; 15: the
/// plan's `reference_layouts`, a round's several layouts of the reference, each a sample,
/// which a reader of 14 would pair with the first layout alone, and the header's `places`,
/// which units kept their data files in memory and which on a disk, which a reader of 14
/// would drop on a resume or merge; 16: the configuration's `preset.reader_procs`, readers
/// in processes of their own, which a reader of 15 would resume with reader threads, a
/// fillRandom sample's `figures.commit_order_ns`, its commits in the order made, which a
/// reader of 15 would drop on a resume or merge and compare by pass medians, and the
/// environment's `tool_sha256`, the build of the tool, which it would drop; 17: a unit's
/// `sync` of `txn-nosync` or `txn-nometasync` and the configuration's `per_txn`, LMDB 1.0's
/// per-transaction flags on an environment opened to sync, which a reader of 16 would
/// refuse in a unit and misread in the configuration as the environment's MDB_NOSYNC or
/// MDB_NOMETASYNC). Layouts
/// (`plan.layouts`, each sample's `layout`) needed no bump: an older reader takes a sample
/// of a random layout for the time sample it is.
pub const SCHEMA: u32 = 17;

/// The first schema whose plan says whether its rounds were adaptive: older ones were not.
pub(super) const ADAPTIVE: u32 = 8;

/// The first schema whose plan says when comparisons are decided: older ones, after every round.
pub(super) const STOPPING: u32 = 10;

/// The first schema whose header declares its units: older files hold labels as text only.
pub(super) const DECLARES_UNITS: u32 = 4;

/// The first schema whose plan says what closes a comparison at its resolution target:
/// older ones, decided or within it.
pub(super) const CLOSING: u32 = 11;

/// The first schema with check records.
pub(super) const CHECKS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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

/// What became of a requested tag, as the run file records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildStatus {
    Built,
    Unavailable,
    Failed,
}

/// One requested tag in the header. The run file's own type, not the build matrix's
/// (`matrix::TagBuild`, converted in cmd/run.rs), so the matrix can change without
/// changing the file format; the JSON shape is schema 1's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagStatus {
    /// The unit the tag was built as, written as its label under `"tag"` ([`unit_label`]).
    #[serde(rename = "tag", with = "unit_label")]
    pub label: Label,
    pub commit: Option<String>,
    pub status: BuildStatus,
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
    /// Schema 15: where the units kept their data files, each place once; empty in older
    /// files, whose environment's `storage` names the one folder of every unit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<Place>,
}

/// What holds a folder's files: memory (a tmpfs), or a disk behind the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Medium {
    Memory,
    Disk,
}

/// A folder the run kept data files in (read databases, write environments): what holds
/// it, its file system and device as the environment's `storage` names one, and the units
/// whose files it held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Place {
    pub medium: Medium,
    pub storage: Option<String>,
    #[serde(with = "super::label::by_text::list")]
    pub units: Vec<Label>,
}

impl Place {
    /// What holds this folder, as reports say it: "in memory (tmpfs on tmpfs)", "on a disk
    /// (ext4 on /dev/vda)".
    pub fn holder(&self) -> String {
        let medium = match self.medium {
            Medium::Memory => "in memory",
            Medium::Disk => "on a disk",
        };
        let storage = self.storage.as_ref().map_or(String::new(), |s| format!(" ({s})"));
        format!("{medium}{storage}")
    }

    /// The places of several runs as one list: the units of one medium and file system
    /// together, each once.
    pub fn joined<'a>(lists: impl IntoIterator<Item = &'a [Place]>) -> Vec<Place> {
        let mut out: Vec<Place> = Vec::new();
        for p in lists.into_iter().flatten() {
            match out.iter_mut().find(|o| (o.medium, &o.storage) == (p.medium, &p.storage)) {
                Some(o) => {
                    let new: Vec<Label> = p.units.iter().filter(|u| !o.units.contains(u)).cloned().collect();
                    o.units.extend(new)
                }
                None => out.push(p.clone()),
            }
        }
        out
    }
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
            places: Vec::new(),
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
    /// Its tag rows' units, written as their labels.
    #[serde(with = "super::label::by_text::list")]
    pub tags: Vec<Label>,
    pub environment: Environment,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub round: u32,
    pub engine: Engine,
    /// The unit measured, written as its label under `"tag"` ([`unit_label`]).
    #[serde(rename = "tag", with = "unit_label")]
    pub unit: Label,
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
    /// The function order (src/harness.rs) of the worker that ran the sample: the tool's own
    /// binary's (Rust), the C paired worker's (C; src/paired_twin.rs), drawn per process with
    /// random layouts; none for a worker as built, a tag's own C twin, and runs from before it
    /// was drawn (schema ≤ 13; the C engine's, before the C paired worker had orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<u32>,
    /// With `pairing: chunks`: the pass's chunk times in nanoseconds, in pass order (`ns`
    /// is their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks_ns: Vec<u64>,
    /// A write's space after its pass (untimed); none for reads, and in runs from before
    /// space was measured (schema ≤ 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<Space>,
    /// A write's syncs, bytes written and commits in its timed region; none for
    /// reads, and in runs from before they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<Io>,
    /// A whole pass's major page faults, read around its timed region; none for chunked
    /// passes, the C engine's, and in runs from before they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major_faults: Option<u64>,
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
            m if m.is_io() => m.of_io(self.io.as_ref()?),
            m if m.is_faults() => self.major_faults,
            m if m.is_commits() => m.of_commits(&self.figures.commit_ns),
            m if m.is_crew() => self.crew(m).map(|(pass, _)| pass.round() as u64),
            m => m.of_counts(&self.counts),
        }
    }

    /// A crew's figure under a metric of readers beside a writer: of the pass, and of
    /// each interval.
    fn crew(&self, metric: Metric) -> Option<(f64, Vec<f64>)> {
        metric.of_crew(self.figures.crew.as_ref()?)
    }

    /// What paired chunks compare under a metric: a chunked pass's chunk times, or its
    /// crew's figure of each interval (its chunks), or under a metric of commits the pass's
    /// commit times in the order made (commit k is paired with the reference's commit k,
    /// like with like on a pass whose commits ramp with its tree); empty for a pass run
    /// whole (a process of its own), and for an exact figure, which needs no pairing.
    pub fn chunk_values(&self, metric: Metric) -> Vec<f64> {
        match metric {
            m if m.is_commits() => self.figures.commit_order_ns.iter().map(|ns| *ns as f64).collect(),
            _ if self.chunks_ns.is_empty() => Vec::new(),
            Metric::Time => self.chunks_ns.iter().map(|ns| *ns as f64).collect(),
            m if m.is_crew() => self.crew(m).map(|(_, each)| each).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The exact metrics the sample holds (counts and space), in declaration order.
    pub fn exact_metrics(&self) -> impl Iterator<Item = Metric> + '_ {
        Metric::ALL.into_iter().filter(|m| m.is_exact() && self.total(*m).is_some())
    }

    /// The sample's figure under a metric, in display units (ms, or millions of
    /// instructions); None for a count that was not taken.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        match metric.is_crew() {
            true => self.crew(metric).map(|(pass, _)| pass),
            false => self.total(metric).map(|t| t as f64 / metric.display()),
        }
    }

    /// The one "per operation": the sample's figure in its workload's unit under a metric
    /// (time per timed region in the workload's time unit; counts per operation of the
    /// pass). `entries` is what the sample's pass ran; a preset's sample says itself how
    /// many operations it ran (entries, or open-get's cycles), and that wins.
    pub fn per_op(&self, metric: Metric, entries: u32) -> Option<f64> {
        if metric.is_crew() {
            return self.value(metric);
        }
        let ops = match metric.is_io() {
            true => self.io?.commits,
            false => self.figures.ops.unwrap_or(u64::from(entries)),
        };
        Some(metric.per_op(self.total(metric)? as f64, self.workload, ops))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub round: Option<u32>,
    pub engine: Engine,
    /// The unit that failed, written as its label under `"tag"` ([`unit_label`]).
    #[serde(rename = "tag", with = "unit_label")]
    pub unit: Label,
    pub workload: Option<Workload>,
    pub stage: FailureStage,
    pub error: String,
    /// The worker's process ended before it reported the workload: killed by a signal (an
    /// abort, a crash), exited non-zero, or killed by the watchdog. False when the worker
    /// reported the error itself, and in files from before it was written.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub died: bool,
    /// What the failure means to a report, where it means more than its error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<FailureCause>,
}

/// A failure a report shows as a finding of its own rather than an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureCause {
    /// A cold sample's file stayed in the page cache (`workload::presets::ColdNotAchieved`).
    ColdNotAchieved,
}

/// What a unit was failing at, as the run file writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureStage {
    /// Building its library or its C twin.
    Build,
    /// Compiling a measured program (`run --program`) against it.
    Compile,
    /// Linking a random layout of it.
    Layout,
    /// Building the read database.
    Prepare,
    /// Verifying the read database's checksums.
    Verify,
    /// A measured pass.
    Run,
    /// Its coverage build's workloads.
    Coverage,
}

impl std::fmt::Display for FailureStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FailureStage::Build => "build",
            FailureStage::Compile => "compile",
            FailureStage::Layout => "layout",
            FailureStage::Prepare => "prepare",
            FailureStage::Verify => "verify",
            FailureStage::Run => "run",
            FailureStage::Coverage => "coverage",
        })
    }
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
    /// The caller's stop condition held (bisect decided a probe), or adaptive rounds
    /// decided every comparison.
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
    pub(super) fn after(self, earlier: &End) -> End {
        let sum = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
        match (sum(earlier.wall_s, self.wall_s), sum(earlier.timed_s, self.timed_s)) {
            (Some(wall), Some(timed)) => End { wall_s: Some(wall), timed_s: Some(timed), ..self },
            _ => self,
        }
    }
}

/// Something the run checked about itself, e.g. that instruction counts repeat exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCheck {
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Header(Box<Header>),
    Sample(Sample),
    Failure(Failure),
    Check(RunCheck),
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
    pub fn unit(&self) -> Option<&Label> {
        match self {
            Record::Sample(Sample { unit, .. }) | Record::Failure(Failure { unit, .. }) => Some(unit),
            _ => None,
        }
    }
}

/// A unit as a record names it (a sample's, a failure's, a header's tag row): written as
/// the label's text, read as the value the reader's upgrader put in the text's place (the
/// header's declaration of the label, or in a file of schema 3 or before the text read
/// once), never parsed here: a line's text alone cannot say which value a label renders.
pub mod unit_label {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::record::label::Label;

    pub fn serialize<S: Serializer>(unit: &Label, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(unit)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Label, D::Error> {
        Label::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::*;
    use crate::record::plan::Layouts;

    /// Merged runs' places: the units of one medium and file system together, each once.
    #[test]
    fn places_of_merged_runs_join_by_medium_and_file_system() {
        let (a, b, c) = (Label::build("LMDB_0.9.17", None), Label::build("LMDB_0.9.33", None), Label::build("x", None));
        let place = |medium, storage: &str, units: &[&Label]| Place {
            medium,
            storage: Some(storage.into()),
            units: units.iter().map(|l| (*l).clone()).collect(),
        };
        let one = [place(Medium::Memory, "tmpfs on tmpfs", &[&a]), place(Medium::Disk, "ext4 on /dev/vda", &[&c])];
        let two = [place(Medium::Memory, "tmpfs on tmpfs", &[&a, &b]), place(Medium::Disk, "xfs on /dev/vdb", &[&c])];
        let joined = Place::joined([&one[..], &two[..]]);
        assert_eq!(
            joined,
            [
                place(Medium::Memory, "tmpfs on tmpfs", &[&a, &b]),
                place(Medium::Disk, "ext4 on /dev/vda", &[&c]),
                place(Medium::Disk, "xfs on /dev/vdb", &[&c])
            ]
        );
    }

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
    fn every_sample_says_its_layout_even_when_fixed() {
        let s = Sample { workload: Workload::Write, ..time_sample("LMDB_0.9.18") };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["layout"], serde_json::Value::Null);
        let random = serde_json::to_value(Sample { layout: Some(12345), ..s }).unwrap();
        assert_eq!(random["layout"], 12345);
        assert_eq!(serde_json::to_value(Layouts::Random).unwrap(), "random");
    }
}
