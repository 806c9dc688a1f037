//! The model's comparisons across builds of one tag: toolchains against the reference
//! toolchain's build, and the Rust harness against its C twin.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{count_medians, delta, Blocks, Delta, DeltaKind, Section};
use crate::record::label::{as_text, Label};
use crate::record::TagStatus;
use crate::record::{Engine, Metric};
use crate::stats::family::{self, Rounds, Rule};
use crate::stats::{self, Comparison, Summary};
use crate::workload::Workload;

/// One tag built by several toolchains: every workload's builds against the reference
/// toolchain's, one family per table.
#[derive(Debug, Clone, Serialize)]
pub struct ToolchainTable {
    /// The base its builds share, by the default toolchain.
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    /// The toolchain every other is compared with: the default (the plain tag's build)
    /// when it was measured, else the first by name.
    pub reference: String,
    /// Section by section; in each, the reference first, then the others by name.
    pub rows: Vec<ToolchainRow>,
    /// Comparisons in this table's family.
    pub family: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolchainRow {
    pub engine: Engine,
    pub workload: Workload,
    /// "clang -O2"; the default toolchain's name for the plain tag.
    pub toolchain: String,
    #[serde(serialize_with = "as_text")]
    pub label: Label,
    pub summary: Summary,
    pub per_entry: BTreeMap<Metric, f64>,
    /// Against the reference toolchain's build; None for the reference itself.
    pub vs_reference: Option<Delta>,
}

/// The Rust harness against the C twin on one tag and workload: ratio = Rust / C.
#[derive(Debug, Clone, Serialize)]
pub struct OverheadRow {
    pub workload: Workload,
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    pub rust: Summary,
    pub c: Summary,
    pub ratio: Comparison,
}

/// Per tag measured under several toolchains: each section's builds against the
/// reference toolchain's, the whole table one family.
pub(super) fn toolchain_tables(
    sections: &[Section],
    all: &BTreeMap<(Engine, Workload), Blocks>,
    tags: &[TagStatus],
    rule: &Rule,
) -> Vec<ToolchainTable> {
    let mut by_tag: BTreeMap<Label, Vec<&Label>> = BTreeMap::new();
    for s in sections {
        for t in all[&(s.engine, s.workload)].values.keys().filter(|t| !t.control) {
            // Reader counts and sync modes are units of their own, compared with the
            // baseline's same count and mode.
            let labels = by_tag.entry(t.beside(&t.compared_as().0, None)).or_default();
            if !labels.contains(&t) {
                labels.push(t);
            }
        }
    }
    let mut out: Vec<ToolchainTable> = by_tag
        .into_iter()
        .filter(|(_, labels)| labels.len() > 1)
        .map(|(tag, mut labels)| {
            labels.sort_by_key(|l| l.release_key());
            toolchain_table(tag, &labels, sections, all, tags, rule)
        })
        .collect();
    // A table's tag is the base its builds share, ordered as its default build.
    out.sort_by_key(|t| t.tag.release_key());
    out
}

/// One tag's table; `labels` are its builds in release order (the default first).
fn toolchain_table(
    tag: Label,
    labels: &[&Label],
    sections: &[Section],
    all: &BTreeMap<(Engine, Workload), Blocks>,
    tags: &[TagStatus],
    rule: &Rule,
) -> ToolchainTable {
    let reference = labels[0];
    let blocks = |s: &Section| &all[&(s.engine, s.workload)];
    let family: usize = sections
        .iter()
        .filter(|s| blocks(s).values.contains_key(reference))
        .map(|s| labels[1..].iter().filter(|l| blocks(s).values.contains_key(**l)).count())
        .sum();
    let mut rows = Vec::new();
    // A section without the reference's build has nothing to compare with.
    for s in sections.iter().filter(|s| blocks(s).values.contains_key(reference)) {
        let b = blocks(s);
        for l in labels.iter().copied().filter(|l| b.values.contains_key(*l)) {
            let Some(summary) = stats::summarize(&b.values[l].values().copied().collect::<Vec<_>>()) else { continue };
            rows.push(ToolchainRow {
                engine: s.engine,
                workload: s.workload,
                toolchain: toolchain_name(l, tags),
                label: l.clone(),
                summary,
                per_entry: count_medians(b, l),
                vs_reference: (l != reference)
                    .then(|| delta(b, reference, l, DeltaKind::Toolchain, family, rule))
                    .flatten(),
            });
        }
    }
    ToolchainTable { tag, reference: toolchain_name(reference, tags), rows, family }
}

/// The toolchain a label was built by: its suffix, or for a plain tag its build record's.
pub fn toolchain_name(label: &Label, tags: &[TagStatus]) -> String {
    if let Some(name) = label.compared_as().1 {
        return name.to_string();
    }
    let record = tags.iter().find(|t| t.label == *label).and_then(|t| t.builds.first());
    record.map(|b| b.toolchain.name()).unwrap_or_else(|| "default".into())
}

/// Rust against C on each tag both engines measured; one family over all rows.
pub(super) fn engine_overhead(all: &BTreeMap<(Engine, Workload), Blocks>, rule: &Rule) -> Vec<OverheadRow> {
    let mut pairs: Vec<(Workload, &Label)> = Vec::new();
    let workloads: std::collections::BTreeSet<Workload> = all.keys().map(|(_, w)| *w).collect();
    for w in workloads {
        let (Some(rust), Some(c)) = (all.get(&(Engine::Rust, w)), all.get(&(Engine::C, w))) else { continue };
        let mut tags: Vec<&Label> = rust.values.keys().filter(|t| c.values.contains_key(*t)).collect();
        tags.sort_by_key(|t| t.release_key());
        pairs.extend(tags.into_iter().map(|t| (w, t)));
    }
    let k = pairs.len();
    pairs
        .into_iter()
        .filter_map(|(w, t)| {
            let of = |e: Engine| all.get(&(e, w))?.values.get(t);
            let (r, c) = (of(Engine::Rust)?, of(Engine::C)?);
            let vals = |x: &Rounds| x.values().copied().collect::<Vec<f64>>();
            Some(OverheadRow {
                workload: w,
                tag: t.clone(),
                rust: stats::summarize(&vals(r))?,
                c: stats::summarize(&vals(c))?,
                ratio: family::compare(c, r, k, rule)?,
            })
        })
        .collect()
}
