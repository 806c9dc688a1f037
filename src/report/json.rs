//! A versioned JSON document holding everything: configuration, environment, builds,
//! every raw sample, failures, summaries and comparisons, and first what the run found. Every section carries a flat
//! `comparisons` array (the contract scripts and bug-tracker bots read) and `resolution`.

use anyhow::Result;
use serde::Serialize;

use std::collections::BTreeMap;

use super::model::{Delta, DeltaKind, ReportModel, Section, ToolchainTable};
use super::{Exporter, Output};
use crate::record::Metric;
use crate::stats::Verdict;

/// Bumped on any change a reader could trip over.
pub const REPORT_SCHEMA: u32 = 4;

pub struct Json;

/// One delta as scripts read it.
#[derive(Serialize)]
pub struct ComparisonRecord {
    pub tag: String,
    pub against: String,
    pub kind: DeltaKind,
    pub ratio: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub confidence: f64,
    pub method: crate::stats::Method,
    pub verdict: Verdict,
    /// `instructions_ratio`, and `d1_misses_ratio` and so on for each metric counted.
    #[serde(flatten)]
    pub count_ratios: BTreeMap<String, Option<f64>>,
    pub time_only: bool,
}

impl ComparisonRecord {
    /// The record of `d`, with a ratio for instructions and for each metric in `beside`
    /// (null where `d` has none).
    pub fn of(d: &Delta, beside: &[Metric]) -> Self {
        let c = &d.comparison;
        let metrics = std::iter::once(Metric::Instructions).chain(beside.iter().copied());
        ComparisonRecord {
            tag: d.tag.to_string(),
            against: d.against.to_string(),
            kind: d.kind,
            ratio: c.ratio,
            ci_low: c.ci.map(|i| i.lo),
            ci_high: c.ci.map(|i| i.hi),
            confidence: c.confidence,
            method: c.method,
            verdict: c.verdict,
            count_ratios: metrics.map(|m| (ratio_key(m), d.counts.get(&m).map(|i| i.ratio))).collect(),
            time_only: d.time_only,
        }
    }
}

/// A metric's key in a record of ratios ("d1_misses_ratio").
pub fn ratio_key(m: Metric) -> String {
    format!("{}_ratio", m.key().replace('-', "_"))
}

#[derive(Serialize)]
struct SectionRecord<'a> {
    #[serde(flatten)]
    section: &'a Section,
    /// Present when the section's unit is not the document's (a preset's "s/op").
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<&'static str>,
    comparisons: Vec<ComparisonRecord>,
}

#[derive(Serialize)]
struct ToolchainRecord<'a> {
    #[serde(flatten)]
    table: &'a ToolchainTable,
    comparisons: Vec<ToolchainComparison>,
}

/// A toolchain table's delta: a table spans workloads (and engines), so each says its own.
#[derive(Serialize)]
struct ToolchainComparison {
    engine: crate::record::Engine,
    workload: crate::workload::Workload,
    #[serde(flatten)]
    comparison: ComparisonRecord,
}

/// What the run established: the model's values, and the sentences every prose format
/// opens with.
#[derive(Serialize)]
struct FindingsRecord {
    lines: Vec<String>,
    #[serde(flatten)]
    findings: super::findings::Findings,
}

#[derive(Serialize)]
struct JsonDocument<'a> {
    schema: u32,
    kind: &'static str,
    unit: &'static str,
    partial: bool,
    baseline: &'a str,
    newest: Option<String>,
    findings: FindingsRecord,
    rule: &'a crate::stats::family::Rule,
    method: Vec<String>,
    /// The run's coverage record; null in files from before runs measured it.
    coverage: Option<&'a crate::record::RunCoverage>,
    config: &'a crate::workload::WorkloadConfig,
    plan: &'a crate::record::Plan,
    environment: &'a crate::environment::Environment,
    /// Where the units kept their data files: only in runs that recorded it (schema 15).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    places: &'a [crate::record::Place],
    instruction_counter: Option<&'a str>,
    /// Only in runs whose C units ran in the C paired worker, so other reports keep their shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    c_paired_worker: Option<&'a crate::record::WorkerBuild>,
    tags: &'a [crate::record::TagStatus],
    sections: Vec<SectionRecord<'a>>,
    overhead: &'a [super::model::OverheadRow],
    /// Only in runs with several toolchains, so other reports keep their shape.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    toolchains: Vec<ToolchainRecord<'a>>,
    failures: &'a [crate::record::Failure],
    /// The rows whose worker died running their workload (a crash in LMDB), and how.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    died: &'a [super::model::DiedRow],
    /// The workloads some units cannot run (a 1.0 option on a 0.9 unit), and why.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    not_applicable: &'a [super::model::NotApplicableRow],
    /// What the run checked about itself (instruction counts repeating).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    checks: &'a [crate::record::RunCheck],
    end: Option<&'a crate::record::End>,
    samples: &'a [crate::record::Sample],
    /// A preset's latencies or resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    preset: Option<&'a super::presets::PresetReport>,
}

pub fn render(m: &ReportModel) -> Result<String> {
    let sections = m
        .sections
        .iter()
        .map(|s| SectionRecord {
            section: s,
            unit: Some(m.unit_of(s)).filter(|u| *u != m.unit.label),
            comparisons: s.deltas().map(|d| ComparisonRecord::of(d, &m.beside)).collect(),
        })
        .collect();
    let doc = JsonDocument {
        schema: REPORT_SCHEMA,
        kind: "lmdb-regress-report",
        unit: m.unit.label,
        partial: m.partial(),
        baseline: &m.baseline,
        newest: m.newest.as_ref().map(ToString::to_string),
        findings: FindingsRecord {
            lines: super::outline::findings(m).iter().map(|l| super::names::plain(l)).collect(),
            findings: super::findings::Findings::of(m),
        },
        rule: &m.rule,
        method: super::method::method_lines(m).iter().map(|l| super::names::plain(l)).collect(),
        coverage: m.coverage.as_ref(),
        config: &m.config,
        plan: &m.plan,
        environment: &m.environment,
        places: &m.places,
        instruction_counter: m.instruction_counter.as_deref(),
        c_paired_worker: m.c_paired_worker.as_ref(),
        tags: &m.tags,
        sections,
        overhead: &m.overhead,
        toolchains: m
            .toolchains
            .iter()
            .map(|t| ToolchainRecord {
                table: t,
                comparisons: t
                    .rows
                    .iter()
                    .filter_map(|r| {
                        let comparison = ComparisonRecord::of(r.vs_reference.as_ref()?, &m.beside);
                        Some(ToolchainComparison { engine: r.engine, workload: r.workload, comparison })
                    })
                    .collect(),
            })
            .collect(),
        failures: &m.failures,
        died: &m.died,
        not_applicable: &m.not_applicable,
        checks: &m.checks,
        end: m.end.as_ref(),
        samples: &m.samples,
        preset: m.extras.preset.as_ref(),
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

impl Exporter for Json {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".json".into(), bytes: render(m)?.into_bytes() }])
    }
}
