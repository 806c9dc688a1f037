//! The one place where samples become tables: summaries per (engine, tag, workload),
//! ranking, "vs fastest" and "vs baseline" comparisons, checksum agreement. Every output
//! format renders this model and computes nothing of its own.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::environment::Environment;
use crate::manifest::parse_version;
use crate::runner::runfile::{Status, TagStatus};
use crate::runner::runfile::{End, Engine, Failure, Metric, Plan, RunData, Sample};
use crate::stats::{self, Comparison, Summary};
use crate::workload::{Checksum, Workload, WorkloadConfig};

#[derive(Debug, Clone, Serialize)]
pub struct RankedRow {
    pub rank: usize,
    pub tag: String,
    pub summary: Summary,
    /// Wall time beside an instruction count (None when time is the metric).
    pub time: Option<Summary>,
    /// Against the fastest tag; None for the fastest itself.
    pub vs_fastest: Option<Comparison>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BaselineRow {
    pub tag: String,
    pub summary: Summary,
    /// Against the baseline; None for the baseline itself.
    pub vs_baseline: Option<Comparison>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub engine: Engine,
    pub workload: Workload,
    /// Fastest first.
    pub ranked: Vec<RankedRow>,
    /// Release order; empty when the baseline tag has no samples here.
    pub vs_baseline: Vec<BaselineRow>,
    /// Tags whose checksum differs from the majority's, with theirs and the majority's.
    pub checksum_mismatches: Vec<ChecksumMismatch>,
    pub checksum: Option<Checksum>,
}

/// The Rust harness against the C twin on one tag and workload: ratio = Rust / C.
#[derive(Debug, Clone, Serialize)]
pub struct OverheadRow {
    pub workload: Workload,
    pub tag: String,
    pub rust: Summary,
    pub c: Summary,
    pub ratio: Comparison,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChecksumMismatch {
    pub engine: Engine,
    pub tag: String,
    pub got: Checksum,
    pub expected: Checksum,
}

/// What the figures are and in which unit they are shown.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Unit {
    pub metric: Metric,
    /// Column heading: "ms/op" or "Minstr/op".
    pub label: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReportModel {
    pub unit: Unit,
    pub config: WorkloadConfig,
    pub plan: Plan,
    pub environment: Environment,
    pub tags: Vec<TagStatus>,
    pub baseline: String,
    /// The newest release tag in the run: highlighted in tables.
    pub newest: Option<String>,
    pub sections: Vec<Section>,
    pub failures: Vec<Failure>,
    pub end: Option<End>,
    pub instruction_counter: Option<String>,
    /// Present when both engines ran: what the Rust harness costs over plain C.
    pub overhead: Vec<OverheadRow>,
    pub samples: Vec<Sample>,
}

impl ReportModel {
    pub fn partial(&self) -> bool {
        self.end.as_ref().is_none_or(|e| e.reason == crate::runner::runfile::EndReason::Interrupted)
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
}

/// Release order: pinned tags by version, then anything else (commits) by name.
pub fn release_key(tag: &str) -> (u8, (i32, i32, i32), String) {
    match parse_version(tag) {
        Some(v) => (0, v, String::new()),
        None => (1, (0, 0, 0), tag.to_string()),
    }
}

pub fn build(data: &RunData, baseline: Option<&str>) -> Result<ReportModel> {
    build_with(data, baseline, None)
}

/// `metric` overrides the run's own (instructions need counted samples).
pub fn build_with(data: &RunData, baseline: Option<&str>, metric: Option<Metric>) -> Result<ReportModel> {
    let h = &data.header;
    let metric = metric.unwrap_or(h.plan.metric);
    if metric == Metric::Instructions && !data.samples.iter().any(|s| s.instructions.is_some()) {
        bail!("this run has no instruction counts: measure with `run --metric instructions`");
    }
    let unit = Unit { metric, label: if metric == Metric::Time { "ms/op" } else { "Minstr/op" } };
    let mut groups: Groups = BTreeMap::new();
    for s in &data.samples {
        groups.entry((s.engine, s.workload)).or_default().entry(s.tag.clone()).or_default().push(s);
    }
    let mut measured: Vec<String> = data.samples.iter().map(|s| s.tag.clone()).collect();
    measured.sort_by_key(|t| release_key(t));
    measured.dedup();
    let baseline = match baseline {
        Some(b) => {
            let full = if parse_version(b).is_none() && !measured.iter().any(|t| t == b) {
                crate::manifest::normalize_tag(b)
            } else {
                b.to_string()
            };
            if !measured.contains(&full) {
                bail!("baseline {full} is not in this run; measured tags: {}", measured.join(", "));
            }
            full
        }
        None => measured.first().cloned().unwrap_or_default(),
    };
    let newest = measured.iter().filter(|t| parse_version(t).is_some()).last().cloned();

    // Every engine and tag must read the same data: agreement is judged per workload.
    let mut by_workload: BTreeMap<Workload, Vec<&Sample>> = BTreeMap::new();
    for s in &data.samples {
        by_workload.entry(s.workload).or_default().push(s);
    }
    let agreement: BTreeMap<Workload, (Option<Checksum>, Vec<ChecksumMismatch>)> =
        by_workload.iter().map(|(w, ss)| (*w, checksum_agreement(ss))).collect();

    let mut sections = Vec::new();
    for ((engine, workload), by_tag) in &groups {
        let values: BTreeMap<&str, Vec<f64>> = by_tag
            .iter()
            .map(|(t, ss)| (t.as_str(), ss.iter().filter_map(|s| s.value(metric)).collect::<Vec<f64>>()))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let summaries: BTreeMap<&str, Summary> =
            values.iter().filter_map(|(t, v)| stats::summarize(v).map(|s| (*t, s))).collect();
        let mut order: Vec<&str> = summaries.keys().copied().collect();
        order.sort_by(|a, b| summaries[a].median.total_cmp(&summaries[b].median).then_with(|| a.cmp(b)));
        let fastest = order.first().copied();
        let ranked = order
            .iter()
            .enumerate()
            .map(|(i, t)| RankedRow {
                rank: i + 1,
                tag: t.to_string(),
                summary: summaries[t].clone(),
                time: (metric != Metric::Time)
                    .then(|| stats::summarize(&by_tag[*t].iter().map(|s| s.ms()).collect::<Vec<f64>>()))
                    .flatten(),
                vs_fastest: (Some(*t) != fastest)
                    .then(|| stats::compare(&values[fastest.unwrap()], &values[t]))
                    .flatten(),
            })
            .collect();
        let mut release: Vec<&str> = summaries.keys().copied().collect();
        release.sort_by_key(|t| release_key(t));
        let vs_baseline = match values.get(baseline.as_str()) {
            Some(base) => release
                .iter()
                .map(|t| BaselineRow {
                    tag: t.to_string(),
                    summary: summaries[t].clone(),
                    vs_baseline: (*t != baseline).then(|| stats::compare(base, &values[t])).flatten(),
                })
                .collect(),
            None => Vec::new(),
        };
        let (checksum, checksum_mismatches) = agreement.get(workload).cloned().unwrap_or_default();
        let checksum_mismatches = checksum_mismatches.into_iter().filter(|x| x.engine == *engine).collect();
        sections.push(Section {
            engine: *engine,
            workload: *workload,
            ranked,
            vs_baseline,
            checksum_mismatches,
            checksum,
        });
    }
    // Sections in LmdbJava's order of workloads.
    sections.sort_by_key(|s| (s.engine, Workload::ALL.iter().position(|w| *w == s.workload)));
    let overhead = engine_overhead(&groups, metric);
    let mut tags = h.tags.clone();
    tags.sort_by_key(|t| release_key(&t.tag));
    Ok(ReportModel {
        unit,
        config: h.config.clone(),
        plan: h.plan.clone(),
        environment: h.environment.clone(),
        tags,
        baseline,
        newest,
        sections,
        failures: data.failures.clone(),
        end: data.end.clone(),
        instruction_counter: h.instruction_counter.clone(),
        overhead,
        samples: data.samples.clone(),
    })
}

type Groups<'a> = BTreeMap<(Engine, Workload), BTreeMap<String, Vec<&'a Sample>>>;

fn engine_overhead(groups: &Groups, metric: Metric) -> Vec<OverheadRow> {
    let mut out = Vec::new();
    for w in Workload::ALL {
        let (Some(rust), Some(c)) = (groups.get(&(Engine::Rust, w)), groups.get(&(Engine::C, w))) else { continue };
        let mut tags: Vec<&String> = rust.keys().filter(|t| c.contains_key(*t)).collect();
        tags.sort_by_key(|t| release_key(t));
        for t in tags {
            let vals = |ss: &Vec<&Sample>| ss.iter().filter_map(|s| s.value(metric)).collect::<Vec<f64>>();
            let (r, cv) = (vals(&rust[t]), vals(&c[t]));
            if let (Some(rs), Some(cs), Some(ratio)) =
                (stats::summarize(&r), stats::summarize(&cv), stats::compare(&cv, &r))
            {
                out.push(OverheadRow { workload: w, tag: t.clone(), rust: rs, c: cs, ratio });
            }
        }
    }
    out
}

/// The checksum most (engine, tag) pairs report, and every pair that reports another.
fn checksum_agreement(samples: &[&Sample]) -> (Option<Checksum>, Vec<ChecksumMismatch>) {
    let mut per_unit: Vec<(Engine, &str, Checksum)> = Vec::new();
    for s in samples {
        if let Some(c) = s.checksum {
            if !per_unit.iter().any(|(e, t, pc)| *e == s.engine && *t == s.tag && *pc == c) {
                per_unit.push((s.engine, &s.tag, c));
            }
        }
    }
    let mut counts: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for (_, _, c) in &per_unit {
        *counts.entry((c.entries, c.digest)).or_default() += 1;
    }
    let Some((entries, digest)) = counts.iter().max_by_key(|(_, n)| **n).map(|(k, _)| *k) else {
        return (None, Vec::new());
    };
    let expected = Checksum { entries, digest };
    let mismatches = per_unit
        .into_iter()
        .filter(|(_, _, c)| *c != expected)
        .map(|(engine, t, c)| ChecksumMismatch { engine, tag: t.to_string(), got: c, expected })
        .collect();
    (Some(expected), mismatches)
}

/// Rows of tags that were asked for but not measured.
pub fn unmeasured(m: &ReportModel) -> Vec<&TagStatus> {
    m.tags.iter().filter(|t| t.status != Status::Built).collect()
}
