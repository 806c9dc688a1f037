//! The one place where samples become tables: per (engine, workload), one value per tag
//! and round, summaries, ranks, deltas against the fastest, the baseline and the control,
//! each judged by `stats` with the instruction delta beside it. Formats only lay this out.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use super::checksums::checksum_agreement_by_workload;
pub use super::checksums::ChecksumMismatch;
use crate::environment::Environment;
use crate::record::label::{as_text, as_text_opt, as_texts, Label};
use crate::record::{Adaptive, End, Engine, Failure, Layouts, Metric, Pairing, Phase, Plan, RunCheck, RunData, Sample};
use crate::record::{Base, BuildStatus, TagStatus, Target};
use crate::stats::family::{self, Noise, Rounds, Rule};
use crate::stats::{self, Comparison, Summary, Verdict};
use crate::workload::presets::lmdb_suite::declared::NotApplicable;
use crate::workload::{Checksum, SyncMode, Workload, WorkloadConfig};

mod died;
mod engines;

pub use died::DiedRow;
use engines::{engine_overhead, toolchain_tables};
pub use engines::{toolchain_name, OverheadRow, ToolchainRow, ToolchainTable};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeltaKind {
    Fastest,
    Baseline,
    Control,
    /// A tag's build by another toolchain against its build by the reference toolchain.
    Toolchain,
    /// A commit of a history against the one measured before it.
    Previous,
}

/// One tag against another, in the section's metric, with the counts beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Delta {
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    #[serde(serialize_with = "as_text")]
    pub against: Label,
    pub kind: DeltaKind,
    pub comparison: Comparison,
    /// The same two tags' counts, by each metric the run counted beside the section's own
    /// ([`ReportModel::beside`]); empty when none were counted.
    pub counts: BTreeMap<Metric, Comparison>,
    /// A time change while instructions stay within the count tolerance: the cause is
    /// memory or cache behaviour or noise (and, under fixed layouts, possibly code
    /// placement), not more work in LMDB.
    pub time_only: bool,
}

impl Delta {
    pub fn verdict(&self) -> Verdict {
        self.comparison.verdict
    }

    /// The instruction count beside the section's metric: the measure of work, by which a
    /// time change is told from more work.
    pub fn instructions(&self) -> Option<&Comparison> {
        self.counts.get(&Metric::Instructions)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RankedRow {
    /// 1 + the number of tags measured faster than this one beyond doubt; tags that the
    /// fastest does not resolve share its rank.
    pub rank: usize,
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    /// Over one value per round.
    pub summary: Summary,
    /// Per entry in the timed region, by each metric counted beside the section's own.
    pub per_entry: BTreeMap<Metric, f64>,
    /// Against the fastest; None for the fastest itself.
    pub vs_fastest: Option<Delta>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BaselineRow {
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    pub summary: Summary,
    /// Against the baseline; None for the baseline itself.
    pub vs_baseline: Option<Delta>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub engine: Engine,
    pub workload: Workload,
    /// Fastest first.
    pub ranked: Vec<RankedRow>,
    /// Release order; empty when the baseline tag has no samples here.
    pub vs_baseline: Vec<BaselineRow>,
    /// Each `~control` label against the tag it repeats: the run's own A/A.
    pub controls: Vec<Delta>,
    /// Comparisons in the ranked table's family (all pairs) and the baseline table's.
    pub fastest_family: usize,
    pub baseline_family: usize,
    pub noise: Option<Noise>,
    /// The half-width of a typical comparison's interval (the median over the baseline
    /// table, else the ranked one), as a fraction: smaller differences are not resolved.
    pub resolution: Option<f64>,
    /// The most rounds any tag has here, and how many each kind of interval needs.
    pub rounds: usize,
    pub rounds_needed: family::RoundsNeeded,
    /// How much code layout alone moves this workload's time, as a fraction, when the run
    /// measured it (a layout study, or random layouts with repetitions in each worker);
    /// None when not measured.
    pub layout_spread: Option<f64>,
    /// Round values far slower than their tag and round predict (time only).
    #[serde(serialize_with = "bursts_as_text")]
    pub bursts: Option<stats::burst::Bursts<Label>>,
    /// How the section's time samples were paired: chunks inside one process, or a
    /// process per unit.
    pub pairing: Pairing,
    /// The spread between processes and between chunks (time only).
    #[serde(flatten)]
    pub spreads: stats::chunks::Spreads,
    /// Tags whose checksum differs from the majority's, with theirs and the majority's.
    pub checksum_mismatches: Vec<ChecksumMismatch>,
    pub checksum: Option<Checksum>,
    /// The tags whose comparison with the baseline was decided before the run's last
    /// round, each reported at that look (empty when no comparison was ended early).
    pub stopped_early: Vec<StoppedEarly>,
}

/// A tag whose comparison was decided before the run's last round: at an early look
/// (a run that stops at looks), or, in older adaptive runs, when rounds stopped measuring it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoppedEarly {
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    /// The look (round, counted from 1) that decided it; in older adaptive runs, the last
    /// round that measured it here.
    pub round: u32,
    /// The level of its reported interval: its look's.
    pub confidence: f64,
}

impl Section {
    /// Every delta of the section, ranked table first.
    pub fn deltas(&self) -> impl Iterator<Item = &Delta> {
        self.ranked
            .iter()
            .filter_map(|r| r.vs_fastest.as_ref())
            .chain(self.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()))
            .chain(&self.controls)
    }
}

/// What the figures are and in which unit they are shown.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ColumnUnit {
    pub metric: Metric,
    /// Column heading: "ms/op" or "instr/entry".
    pub label: &'static str,
}

impl ColumnUnit {
    pub fn of(metric: Metric) -> ColumnUnit {
        ColumnUnit { metric, label: metric.unit() }
    }
}

/// The one place a metric's unit is named: its row in [`Metric::info`].
pub fn unit_label(metric: Metric) -> &'static str {
    metric.unit()
}

#[derive(Debug, Clone, Serialize)]
pub struct ReportModel {
    pub unit: ColumnUnit,
    /// The counted metrics standing beside the section's own, in declaration order: what
    /// the run's counted samples hold (instructions; with cache simulation the cache
    /// metrics too), the section's metric left out.
    pub beside: Vec<Metric>,
    pub rule: Rule,
    pub config: WorkloadConfig,
    pub plan: Plan,
    pub environment: Environment,
    /// Where the units kept their data files (none recorded before schema 15).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<crate::record::Place>,
    pub tags: Vec<TagStatus>,
    pub baseline: String,
    /// The newest release tag in the run: highlighted in tables.
    #[serde(serialize_with = "as_text_opt")]
    pub newest: Option<Label>,
    pub sections: Vec<Section>,
    pub failures: Vec<Failure>,
    /// The rows whose worker died running their workload (a crash in LMDB): shown as died
    /// in their section, said once in the findings.
    pub died: Vec<DiedRow>,
    /// The workloads some of the run's units cannot run (a 1.0 option on a 0.9 unit):
    /// not run there, and no failure.
    pub not_applicable: Vec<NotApplicableRow>,
    /// What the run checked about itself (instruction counts repeating exactly).
    pub checks: Vec<RunCheck>,
    pub end: Option<End>,
    /// What the workloads execute of what changed from the baseline to the newest unit;
    /// None in files from before runs measured it.
    pub coverage: Option<crate::record::RunCoverage>,
    /// The first phase of its plan the run lacks (`RunData::left`): None when complete.
    #[serde(skip)]
    pub left: Option<Phase>,
    pub instruction_counter: Option<String>,
    /// The C paired worker the C units ran in (paired rounds with C units).
    pub c_paired_worker: Option<crate::record::WorkerBuild>,
    /// Present when both engines ran: what the Rust harness costs over plain C.
    pub overhead: Vec<OverheadRow>,
    /// One per tag built by more than one toolchain (`--toolchain`), in release order.
    pub toolchains: Vec<ToolchainTable>,
    pub samples: Vec<Sample>,
    /// The per-round values every comparison was made from, for renderers that make
    /// comparisons of their own (the ITS#10406 claims).
    #[serde(skip)]
    pub blocks: BTreeMap<(Engine, Workload), Blocks>,
    /// Content beyond the verdict tables (a preset's latencies, resources), which every
    /// format renders; empty for LmdbJava's six.
    #[serde(skip)]
    pub extras: super::extras::Extras,
    /// The shards a merged run was made of (`K/N`), none for one run.
    #[serde(skip)]
    pub shards: Vec<String>,
}

impl ReportModel {
    /// Whether the run lacks part of its plan: rounds, their closing check, or counts.
    pub fn partial(&self) -> bool {
        self.left.is_some()
    }

    pub fn engines(&self) -> Vec<Engine> {
        let mut e: Vec<Engine> = self.sections.iter().map(|s| s.engine).collect();
        e.dedup();
        e
    }

    pub fn section_title(&self, s: &Section) -> String {
        if self.engines().len() > 1 {
            format!("{} ({} engine)", s.workload.title(), s.engine)
        } else {
            s.workload.title().to_string()
        }
    }

    pub fn section(&self, engine: Engine, workload: Workload) -> Option<&Section> {
        self.sections.iter().find(|s| s.engine == engine && s.workload == workload)
    }

    /// The sections' unit for a sentence: one label, or a word when tables differ.
    pub fn units_in_words(&self) -> &'static str {
        let units: std::collections::BTreeSet<&str> = self.sections.iter().map(|s| self.unit_of(s)).collect();
        match units.len() {
            0 => self.unit.label,
            1 => units.first().copied().unwrap_or(self.unit.label),
            _ => "figure in each table's unit",
        }
    }

    /// The unit of a section's figures.
    pub fn unit_of(&self, s: &Section) -> &'static str {
        self.unit.metric.unit_of(s.workload)
    }

    /// Whether counts stand beside the section's metric.
    pub fn has_counts(&self) -> bool {
        !self.beside.is_empty()
    }
}

/// A section's bursts with their labels written as text, as every other label of a report.
fn bursts_as_text<S: serde::Serializer>(b: &Option<stats::burst::Bursts<Label>>, s: S) -> Result<S::Ok, S::Error> {
    let found = |b: &stats::burst::Bursts<Label>| {
        let text = |x: &stats::burst::Burst<Label>| stats::burst::Burst {
            label: x.label.to_string(),
            round: x.round,
            excess: x.excess,
        };
        stats::burst::Bursts { values: b.values, found: b.found.iter().map(text).collect() }
    };
    b.as_ref().map(found).serialize(s)
}

/// Per-round values of every tag for one (engine, workload), the values comparisons pair
/// (`stats::chunks`), and the counts beside them.
#[derive(Debug, Clone, Default)]
pub struct Blocks {
    pub values: BTreeMap<Label, Rounds>,
    pub compared: BTreeMap<Label, Rounds>,
    pub spreads: stats::chunks::Spreads,
    /// Per entry, by each metric counted beside the section's own.
    pub counts: BTreeMap<Metric, BTreeMap<Label, Rounds>>,
    /// The samples carry chunk times.
    pub chunked: bool,
}

/// Splits a run's samples into per-(engine, workload) blocks under `metric`.
pub fn blocks(data: &RunData, metric: Metric) -> BTreeMap<(Engine, Workload), Blocks> {
    let plan = &data.header.plan;
    let mut groups: BTreeMap<(Engine, Workload), Vec<&Sample>> = BTreeMap::new();
    for s in &data.samples {
        groups.entry((s.engine, s.workload)).or_default().push(s);
    }
    let timed = |s: &Sample| (!s.counted).then(|| data.per_op(s, metric)).flatten();
    // Counts beside the values: the counting pass's, or the run's own when it counted;
    // space, which no counter moves, of every sample.
    let counted = |m: Metric| move |s: &&Sample| s.counted || plan.metric.is_exact() || m.beside_any();
    let beside = beside(data, metric);
    groups
        .into_iter()
        .map(|(k, samples)| {
            let g = stats::chunks::group_by(samples.iter().copied(), timed, metric);
            let counts = beside
                .iter()
                .map(|&m| {
                    let per_op = |s: &Sample| data.per_op(s, m);
                    (m, stats::chunks::by_round(samples.iter().copied().filter(counted(m)), per_op))
                })
                .filter(|(_, v)| !v.is_empty())
                .collect();
            let chunked = samples.iter().any(|s| !s.chunks_ns.is_empty());
            (k, Blocks { values: g.values, compared: g.compared, spreads: g.spreads, counts, chunked })
        })
        .collect()
}

/// The exact metrics of `data` beside `metric`: each count a counted sample holds, and
/// the space any sample holds.
fn beside(data: &RunData, metric: Metric) -> Vec<Metric> {
    let counted = |s: &&Sample| s.counted || data.header.plan.metric.is_exact();
    let held: std::collections::BTreeSet<Metric> =
        data.samples.iter().flat_map(|s| s.exact_metrics().filter(move |m| m.beside_any() || counted(&s))).collect();
    held.into_iter().filter(|m| *m != metric).collect()
}

pub fn build(data: &RunData, baseline: Option<&str>) -> Result<ReportModel> {
    build_with(data, baseline, None)
}

/// `metric` overrides the run's own (instructions need counted samples).
pub fn build_with(data: &RunData, baseline: Option<&str>, metric: Option<Metric>) -> Result<ReportModel> {
    let h = &data.header;
    let metric = metric.unwrap_or(h.plan.metric);
    if let Some(missing) = metric.info().missing.filter(|_| !data.samples.iter().any(|s| s.total(metric).is_some())) {
        bail!("{missing}");
    }
    let measured = measured_tags(data);
    let baseline = pick_baseline(&measured, baseline, h.plan.baseline.as_ref().map(Base::as_str))?;
    let units = Baseline(&baseline);
    let agreement = checksum_agreement_by_workload(&data.samples);
    let blocks = blocks(data, metric);
    let tables = blocks.values().filter(|b| !b.values.is_empty()).count();
    let rule = Rule::of_run(h.plan.min_effect(), metric, tables);
    let looks = h
        .plan
        .spends_at_looks()
        .then(|| Looked { rounds: stats::stop::rounds(&data.samples), target: h.plan.target() });
    let mut sections: Vec<Section> = blocks
        .iter()
        .filter(|(_, b)| !b.values.is_empty())
        .map(|(&(engine, workload), b)| {
            let (checksum, mismatches) = agreement.get(&workload).cloned().unwrap_or_default();
            let mismatches = mismatches.into_iter().filter(|x| x.engine == engine).collect();
            section(engine, workload, b, (&units, &rule, looks), checksum, mismatches)
        })
        .collect();
    // Layout moves times; an exact count it leaves alone.
    for s in sections.iter_mut().filter(|_| !metric.is_exact()) {
        s.layout_spread = layout_spread(data, s.engine, s.workload, &blocks[&(s.engine, s.workload)]);
    }
    let every_round = h.plan.adaptive == Adaptive::On && looks.is_none();
    for s in sections.iter_mut().filter(|_| every_round) {
        let nominal = 1.0 - rule.alpha(s.baseline_family);
        s.stopped_early = stopped_early(data, s.engine, s.workload, nominal);
        // The baseline is measured whenever another tag is: it has no comparison to decide.
        s.stopped_early.retain(|x| x.tag != Label::build(&baseline, None));
    }
    // Sections in LmdbJava's order of workloads.
    sections.sort_by_key(|s| (s.engine, Workload::ALL.iter().position(|w| *w == s.workload)));
    let newest = measured.iter().filter(|t| t.is_plain_release()).last().cloned();
    let mut engines: Vec<Engine> = sections.iter().map(|s| s.engine).collect();
    engines.dedup();
    let extras = super::presets::content::extras(data, &engines, newest.as_ref())?;
    let mut tags: Vec<TagStatus> = h.tags.clone();
    tags.sort_by_key(|t| t.label.release_key());
    let toolchains = toolchain_tables(&sections, &blocks, &tags, &rule);
    Ok(ReportModel {
        unit: ColumnUnit::of(metric),
        beside: beside(data, metric),
        rule,
        config: h.config.clone(),
        plan: h.plan.clone(),
        environment: h.environment.clone(),
        places: h.places.clone(),
        tags,
        newest,
        baseline: baseline.clone(),
        // Its rows are one family over every workload already.
        overhead: engine_overhead(&blocks, &rule.for_tables(1)),
        toolchains,
        sections,
        failures: data.failures.clone(),
        died: died::died_rows(data),
        not_applicable: not_applicable(data),
        checks: data.checks.clone(),
        end: data.end.clone(),
        coverage: data.coverage.clone(),
        left: data.left(),
        instruction_counter: h.instruction_counter.clone(),
        c_paired_worker: h.c_paired_worker.clone(),
        samples: data.samples.clone(),
        blocks,
        extras,
        shards: h.parts.iter().filter_map(|p| p.shard.clone()).collect(),
    })
}

/// A workload that some units of a run cannot run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotApplicableRow {
    pub workload: Workload,
    /// The units, in the header's order.
    #[serde(serialize_with = "as_texts")]
    pub units: Vec<Label>,
    pub why: NotApplicable,
}

/// Which of the header's workloads its built units' LMDB cannot run (by the version their
/// library reports), each tag under each sync mode the run has (a unit's own, else the
/// run's one), as the runner left them unrun.
fn not_applicable(data: &RunData) -> Vec<NotApplicableRow> {
    let h = &data.header;
    let mut modes: Vec<Option<SyncMode>> = h.units.iter().map(|d| d.value.sync).collect();
    modes.sort();
    modes.dedup();
    if modes.is_empty() {
        modes.push(None);
    }
    let units: Vec<(Label, (i32, i32, i32), SyncMode)> = h
        .tags
        .iter()
        .filter(|t| t.status == crate::record::BuildStatus::Built)
        .filter_map(|t| {
            let reported = t.builds.iter().find_map(|b| crate::manifest::reported_version(&b.lmdb_version))?;
            Some(modes.iter().map(move |m| match m {
                Some(m) => (t.label.with_sync(*m), reported, *m),
                None => (t.label.clone(), reported, h.config.sync),
            }))
        })
        .flatten()
        .collect();
    let row = |w: &Workload| {
        let not: Vec<(&Label, NotApplicable)> =
            units.iter().filter_map(|(t, v, m)| w.applies_to(*v, *m).err().map(|why| (t, why))).collect();
        let why = not.first()?.1;
        Some(NotApplicableRow { workload: *w, units: not.iter().map(|(t, _)| (*t).clone()).collect(), why })
    };
    h.workloads.iter().filter_map(row).collect()
}

/// How much layout alone moved one section's times, where the run's design shows it:
/// across a study's layouts, between the layouts of each unit in one process, or between
/// the workers of random layouts that repeat their workload. Computed in `stats::layout`;
/// None when not measured.
fn layout_spread(data: &RunData, engine: Engine, workload: Workload, b: &Blocks) -> Option<f64> {
    let plan = &data.header.plan;
    if plan.layout_study.is_some() {
        let layouts = b.values.iter().filter(|(t, _)| !t.control).map(|(t, r)| (t.clone(), r.clone()));
        return stats::layout::across_layouts(&layouts.collect());
    }
    if plan.layouts_per_process > 1 && workload.chunks_stand_alone() {
        return layouts_in_processes(data, engine, workload);
    }
    if plan.layouts != Layouts::Random || plan.iterations < 2 {
        return None;
    }
    let mut workers: BTreeMap<Label, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for s in data.samples.iter().filter(|s| !s.counted && s.engine == engine && s.workload == workload) {
        let value = data.per_op(s, Metric::Time).filter(|_| s.layout.is_some());
        if let Some(v) = value {
            workers.entry(s.unit.clone()).or_default().entry(s.round).or_default().push(v);
        }
    }
    stats::layout::between_workers(&workers)
}

/// [`stats::layout::within_processes`] of one section: each label's layouts in each
/// process, in their places, over those of the label measured in the most processes.
fn layouts_in_processes(data: &RunData, engine: Engine, workload: Workload) -> Option<f64> {
    let mut passes: BTreeMap<Label, BTreeMap<u32, Vec<Vec<f64>>>> = BTreeMap::new();
    let of = |s: &&Sample| !s.counted && !s.unit.control && s.engine == engine && s.workload == workload;
    for s in data.samples.iter().filter(of) {
        let chunks = s.chunk_values(Metric::Time);
        if !chunks.is_empty() {
            passes.entry(s.unit.clone()).or_default().entry(s.round).or_default().push(chunks);
        }
    }
    let reference = passes.iter().max_by_key(|(l, r)| (r.len(), std::cmp::Reverse(*l)))?.0.clone();
    passes.retain(|l, _| l.axes() == reference.axes());
    stats::layout::within_processes(&passes, &reference)
}

/// Measured tags (controls aside) in release order.
fn measured_tags(data: &RunData) -> Vec<Label> {
    let mut measured: Vec<&Label> = data.samples.iter().map(|s| &s.unit).filter(|u| !u.control).collect();
    measured.sort_by_key(|u| u.release_key());
    measured.dedup();
    measured.into_iter().cloned().collect()
}

/// The baseline tag (or commit): every label is compared with its build by the same
/// toolchain. The one `asked` for, else the one the run `recorded` (its `--baseline`, or
/// its first unit as given), else (files from before runs recorded it) the oldest measured.
fn pick_baseline(measured: &[Label], asked: Option<&str>, recorded: Option<&str>) -> Result<String> {
    let mut bases: Vec<String> = measured.iter().map(|t| t.compared_as().0).collect();
    bases.dedup();
    let Some(b) = asked else {
        return Ok(recorded.map(str::to_string).or_else(|| bases.first().cloned()).unwrap_or_default());
    };
    // The one label not read from the run file: the one asked for on the command line.
    crate::record::label::find_base(b, &bases).with_context(|| {
        let b = Label::parse(b).compared_as().0;
        let b = if crate::manifest::parse_version(&b).is_none() { crate::manifest::normalize_tag(&b) } else { b };
        format!("baseline {b} is not in this run; measured tags: {}", bases.join(", "))
    })
}

/// The base (tag or commit) every label is compared with.
struct Baseline<'a>(&'a str);

impl Baseline<'_> {
    /// The label of the baseline built by `label`'s toolchain, with its reader threads and
    /// sync mode.
    fn of(&self, label: &Label) -> Label {
        label.beside(self.0, label.compared_as().1)
    }
}

/// Each label of `order` (a history's commits, oldest first) against the one measured
/// before it in section `s`, one family over the section's pairs: the comparisons a
/// history's steps and its gate read, made here as every other.
pub fn consecutive(m: &ReportModel, s: &Section, order: &[&Label]) -> Vec<Delta> {
    let Some(b) = m.blocks.get(&(s.engine, s.workload)) else { return Vec::new() };
    let measured: Vec<&Label> = order.iter().copied().filter(|l| b.compared.contains_key(*l)).collect();
    let k = measured.len().saturating_sub(1);
    measured.windows(2).filter_map(|w| delta(b, w[0], w[1], DeltaKind::Previous, k, &m.rule)).collect()
}

/// The comparison of `tag` against `against` in a family of `k`, with counts beside.
fn delta(b: &Blocks, against: &Label, tag: &Label, kind: DeltaKind, k: usize, rule: &Rule) -> Option<Delta> {
    let comparison = family::compare(b.compared.get(against)?, b.compared.get(tag)?, k, rule)?;
    Some(with_counts(b, against, tag, kind, comparison, rule))
}

/// A run that ended comparisons early at looks that spend its error: how it reports them.
#[derive(Debug, Clone, Copy)]
struct Looked {
    /// The run's last round, counted from 1.
    rounds: u32,
    target: Option<Target>,
}

/// `tag` against the baseline in a family of `k`, as a run that stops at looks reports
/// it: at the look that decided it (which it returns), else at the last look's level.
fn looked_delta(
    b: &Blocks,
    against: &Label,
    tag: &Label,
    k: usize,
    rule: &Rule,
    l: Looked,
) -> Option<(Delta, Option<u32>)> {
    let at = stats::looks::At::Last;
    let stand = stats::looks::stand(b.compared.get(against)?, b.compared.get(tag)?, k, rule, l.target, l.rounds, at)?;
    Some((with_counts(b, against, tag, DeltaKind::Baseline, stand.comparison, rule), stand.decided_at))
}

/// `comparison` of `tag` against `against` as a delta, with counts beside.
fn with_counts(
    b: &Blocks,
    against: &Label,
    tag: &Label,
    kind: DeltaKind,
    comparison: Comparison,
    rule: &Rule,
) -> Delta {
    let counts: BTreeMap<Metric, Comparison> = b
        .counts
        .iter()
        .filter_map(|(m, c)| Some((*m, family::compare(c.get(against)?, c.get(tag)?, 1, &rule.for_counts())?)))
        .collect();
    let work_same = counts.get(&Metric::Instructions).is_some_and(|i| i.verdict == Verdict::Same);
    let time_only = !rule.counts && comparison.verdict.is_change() && work_same;
    Delta { tag: tag.clone(), against: against.clone(), kind, comparison, counts, time_only }
}

fn section(
    engine: Engine,
    workload: Workload,
    b: &Blocks,
    (units, rule, looks): (&Baseline, &Rule, Option<Looked>),
    checksum: Option<Checksum>,
    checksum_mismatches: Vec<ChecksumMismatch>,
) -> Section {
    let tags: Vec<&Label> = b.values.keys().filter(|t| !t.control).collect();
    let summaries: BTreeMap<&Label, Summary> = tags
        .iter()
        .filter_map(|t| stats::summarize(&b.values[*t].values().copied().collect::<Vec<_>>()).map(|s| (*t, s)))
        .collect();
    let ranked = ranked_rows(b, &summaries, rule);
    let mut release = tags.clone();
    release.sort_by_key(|t| t.release_key());
    let k = tags.len().saturating_sub(1);
    // Each label against the baseline built by its own toolchain; a label whose
    // toolchain has no baseline here has no row.
    let own_baseline = |t: &Label| units.of(t);
    release.retain(|t| summaries.contains_key(&own_baseline(t)));
    let baseline_family = release.iter().filter(|t| ***t != own_baseline(t)).count();
    let mut stopped_early = Vec::new();
    let mut against_baseline = |t: &Label| match looks {
        None => delta(b, &own_baseline(t), t, DeltaKind::Baseline, baseline_family, rule),
        Some(l) => looked_delta(b, &own_baseline(t), t, baseline_family, rule, l).map(|(d, at)| {
            let early = at.map(|round| StoppedEarly { tag: t.clone(), round, confidence: d.comparison.confidence });
            stopped_early.extend(early);
            d
        }),
    };
    let vs_baseline: Vec<BaselineRow> = release
        .iter()
        .map(|t| BaselineRow {
            tag: (*t).clone(),
            summary: summaries[t].clone(),
            vs_baseline: (**t != own_baseline(t)).then(|| against_baseline(t)).flatten(),
        })
        .collect();
    let controls: Vec<Delta> = b
        .values
        .keys()
        .filter_map(|c| c.controlled().and_then(|base| delta(b, &base, c, DeltaKind::Control, k.max(1), rule)))
        .collect();
    let half_widths = |ds: Vec<&Delta>| -> Option<f64> {
        let hw: Vec<f64> = ds.iter().filter_map(|d| d.comparison.half_width()).collect();
        (!hw.is_empty()).then(|| stats::median(&hw))
    };
    let resolution = half_widths(vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).collect())
        .or_else(|| half_widths(ranked.iter().filter_map(|r| r.vs_fastest.as_ref()).collect()));
    let real: BTreeMap<Label, Rounds> = tags.iter().map(|t| ((*t).clone(), b.values[*t].clone())).collect();
    Section {
        engine,
        workload,
        ranked,
        vs_baseline,
        controls,
        fastest_family: family::all_pairs(tags.len()),
        baseline_family,
        noise: if rule.counts { None } else { family::noise(&real) },
        bursts: if rule.counts { None } else { stats::burst::bursts(&real) },
        pairing: if b.chunked { Pairing::Chunks } else { Pairing::Process },
        spreads: if rule.counts { Default::default() } else { b.spreads },
        resolution,
        rounds: summaries.values().map(|s| s.n).max().unwrap_or(0),
        rounds_needed: family::RoundsNeeded::of(family::all_pairs(tags.len()), baseline_family, rule),
        layout_spread: None,
        checksum_mismatches,
        checksum,
        stopped_early,
    }
}

/// The tags adaptive rounds that decided after every round (older runs) stopped measuring
/// on `engine`'s `workload` before the run's last measured round: each one's last round,
/// its interval at the nominal `level`; a tag that failed there is not among them.
fn stopped_early(data: &RunData, engine: Engine, workload: Workload, level: f64) -> Vec<StoppedEarly> {
    let timed = |s: &&Sample| !s.counted;
    let Some(last) = data.samples.iter().filter(timed).map(|s| s.round).max() else { return Vec::new() };
    let mut rounds: BTreeMap<Label, u32> = BTreeMap::new();
    for s in data.samples.iter().filter(timed).filter(|s| s.engine == engine && s.workload == workload) {
        let r = rounds.entry(s.unit.clone()).or_default();
        *r = (*r).max(s.round);
    }
    let failed = |tag: &Label| {
        data.failures.iter().any(|f| f.engine == engine && f.workload.is_none_or(|w| w == workload) && f.unit == *tag)
    };
    rounds
        .into_iter()
        .filter(|(tag, r)| *r < last && !failed(tag))
        .map(|(tag, r)| StoppedEarly { tag, round: r + 1, confidence: level })
        .collect()
}

/// Order, ranks and the fastest as `stats` decides them from the paired estimate; every
/// pair is compared in one family, so the comparison with the fastest (chosen after seeing
/// the data) keeps its level.
fn ranked_rows(b: &Blocks, summaries: &BTreeMap<&Label, Summary>, rule: &Rule) -> Vec<RankedRow> {
    let measured: BTreeMap<&Label, Rounds> =
        summaries.keys().filter_map(|t| Some((*t, b.compared.get(*t)?.clone()))).collect();
    let ranking = family::ranking(&measured, rule);
    let Some(fastest) = ranking.first().map(|r| r.label) else { return Vec::new() };
    let pairs = family::all_pairs(ranking.len());
    ranking
        .into_iter()
        .map(|r| RankedRow {
            rank: r.rank,
            summary: summaries[r.label].clone(),
            per_entry: count_medians(b, r.label),
            vs_fastest: r.vs_fastest.and_then(|_| delta(b, fastest, r.label, DeltaKind::Fastest, pairs, rule)),
            tag: r.label.clone(),
        })
        .collect()
}

/// A label's counts per entry, by each metric counted.
fn count_medians(b: &Blocks, label: &Label) -> BTreeMap<Metric, f64> {
    let median = |c: &Rounds| stats::median(&c.values().copied().collect::<Vec<_>>());
    b.counts.iter().filter_map(|(m, c)| Some((*m, median(c.get(label)?)))).collect()
}

/// Rows of tags that were asked for but not measured.
pub fn unmeasured(m: &ReportModel) -> Vec<&TagStatus> {
    m.tags.iter().filter(|t| t.status != BuildStatus::Built).collect()
}
