//! `lmdb-regress compare OLD NEW`, in benchstat's manner: per tag and workload, old and
//! new medians and the change with its interval and verdict. Two runs share no rounds,
//! so the comparison is the two-sample form of the one method, Bonferroni over the rows.
//! Each tag's comparison with its run's baseline is compared between the runs too: a run's
//! interval covers the variation between its own processes, and only a second run shows
//! what is held for a whole run (issue 40's readXxh64, reports/README.md).

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde::Serialize;

use super::cells::{self, Cells};
use super::outline::Document;
use crate::environment::Environment;
use crate::record::label::{as_text, Label};
use crate::record::{Engine, Layouts, Metric, Pairing, RunData};
use crate::stats::family::{self, Rounds, Rule};
use crate::stats::{self, Comparison, Summary, Verdict};
use crate::workload::Workload;

#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub engine: Engine,
    pub workload: Workload,
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    pub old: Summary,
    pub new: Summary,
    pub change: Comparison,
    /// Its comparison with the baseline in each run, and whether the runs agree on it;
    /// None for the baseline itself, or when the runs' baselines differ.
    pub vs_baseline: Option<BaselineAgreement>,
}

/// A tag's comparison with its run's baseline, as each run's report makes it, and the
/// change between the runs: each run's ratios to the baseline process by process (round by
/// round), the two samples apart, Bonferroni over the rows that have one. Slower or faster
/// there means the runs disagree beyond what the variation between their processes allows.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineAgreement {
    #[serde(serialize_with = "as_text")]
    pub baseline: Label,
    pub old: Comparison,
    pub new: Comparison,
    pub change: Comparison,
}

/// A tag's comparison with the baseline as its run's report makes it, and its ratios to
/// the baseline round by round.
struct AgainstBaseline {
    baseline: Label,
    comparison: Comparison,
    ratios: Rounds,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparisons {
    pub metric: Metric,
    pub rule: Rule,
    pub rows: Vec<CompareRow>,
    /// Workload settings that differ between the two runs: their figures measure
    /// different things.
    pub config_differences: Vec<String>,
    /// Each run's layouts (old, new): random layouts against one fixed build per tag differ
    /// by more than LMDB.
    pub layouts: (Layouts, Layouts),
    /// Each run's design (old, new): passes alternated chunk by chunk with other units
    /// meet other caches than whole passes alone.
    pub pairing: (Pairing, Pairing),
    /// Units of one name that are different patches in the two runs: kept apart, never
    /// compared as one unit.
    pub apart: Vec<Apart>,
    /// Each run's build of the tool (old, new), where both recorded one and they differ:
    /// its own code placement moves times by more than a run's interval says.
    pub tool_builds: Option<(String, String)>,
}

/// A patched unit named alike in both runs whose patches differ, by their SHA-256.
#[derive(Debug, Clone, Serialize)]
pub struct Apart {
    #[serde(serialize_with = "as_text")]
    pub tag: Label,
    pub old_patch: String,
    pub new_patch: String,
}

impl Apart {
    /// "LMDB_0.9.33 + x.patch is a different patch in each run (SHA-256 1a2b3c4d5e6f… in the
    /// old, …)", the unit marked as a name.
    pub fn describe(&self) -> String {
        format!(
            "{} is a different patch in each run (SHA-256 {}… in the old, {}… in the new)",
            super::names::name(&self.tag.to_string()),
            &self.old_patch[..self.old_patch.len().min(12)],
            &self.new_patch[..self.new_patch.len().min(12)]
        )
    }
}

/// The SHA-256 of the patch the unit `tag` of run `d` applies (its control's, for a control).
fn patch_of<'a>(d: &'a RunData, tag: &Label) -> Option<&'a str> {
    let built = tag.controlled().unwrap_or_else(|| tag.clone());
    let status = d.header.tags.iter().find(|t| t.label == built)?;
    status.builds.iter().find_map(|b| b.patch.as_ref()).map(|p| p.sha256.as_str())
}

/// The units both runs name whose patches differ.
fn apart(old: &RunData, new: &RunData, tags: impl Iterator<Item = Label>) -> Vec<Apart> {
    let mut out: Vec<Apart> = tags
        .filter_map(|tag| match (patch_of(old, &tag), patch_of(new, &tag)) {
            (Some(o), Some(n)) if o != n => Some(Apart { old_patch: o.to_string(), new_patch: n.to_string(), tag }),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.tag.cmp(&b.tag));
    out.dedup_by(|a, b| a.tag == b.tag);
    out
}

/// Each (engine, workload, tag) with its one value per round.
fn groups(d: &RunData) -> BTreeMap<(Engine, Workload, Label), Rounds> {
    let mut out = BTreeMap::new();
    for ((engine, workload), b) in super::model::blocks(d, d.header.plan.metric) {
        for (tag, r) in b.values {
            out.insert((engine, workload, tag), r);
        }
    }
    out
}

/// Each (engine, workload, tag)'s comparison with the run's baseline, from the run's own
/// report model (none when it cannot be built: then compare shows the tags alone).
fn against_baseline(d: &RunData) -> BTreeMap<(Engine, Workload, Label), AgainstBaseline> {
    let Ok(m) = super::model::build(d, None) else { return BTreeMap::new() };
    let mut out = BTreeMap::new();
    for s in &m.sections {
        let Some(b) = m.blocks.get(&(s.engine, s.workload)) else { continue };
        for delta in s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()) {
            let (Some(tag), Some(base)) = (b.compared.get(&delta.tag), b.compared.get(&delta.against)) else {
                continue;
            };
            let ratios: Rounds = tag.iter().filter_map(|(r, x)| base.get(r).map(|y| (*r, x / y))).collect();
            let comparison = delta.comparison;
            let key = (s.engine, s.workload, delta.tag.clone());
            out.insert(key, AgainstBaseline { baseline: delta.against.clone(), comparison, ratios });
        }
    }
    out
}

/// Each row's agreement on its comparison with the baseline, where both runs compared it
/// with the same baseline, Bonferroni over those rows.
fn agreements(old: &RunData, new: &RunData, rows: &mut [CompareRow], rule: &Rule) {
    let (ao, an) = (against_baseline(old), against_baseline(new));
    let key = |r: &CompareRow| (r.engine, r.workload, r.tag.clone());
    let both = |r: &CompareRow| {
        let (o, n) = (ao.get(&key(r))?, an.get(&key(r))?);
        (o.baseline == n.baseline).then_some((o, n))
    };
    let family = rows.iter().filter(|r| both(r).is_some()).count();
    for row in rows.iter_mut() {
        row.vs_baseline = both(row).and_then(|(o, n)| {
            Some(BaselineAgreement {
                baseline: o.baseline.clone(),
                old: o.comparison,
                new: n.comparison,
                change: family::compare_apart(&o.ratios, &n.ratios, family, rule)?,
            })
        });
    }
}

fn config_differences(old: &RunData, new: &RunData) -> Vec<String> {
    let (a, b) = (
        serde_json::to_value(&old.header.config).unwrap_or_default(),
        serde_json::to_value(&new.header.config).unwrap_or_default(),
    );
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else { return Vec::new() };
    a.iter().filter(|(k, v)| b.get(*k) != Some(v)).map(|(k, v)| format!("{k}: {v} → {}", b[k])).collect()
}

pub fn build(old: &RunData, new: &RunData) -> Result<Comparisons> {
    let metric = old.header.plan.metric;
    if metric != new.header.plan.metric {
        bail!("the two runs measured different metrics ({metric:?} and {:?})", new.header.plan.metric);
    }
    let rule = Rule { min_effect: new.header.plan.min_effect(), ..Rule::default() }.for_metric(metric);
    let (go, gn) = (groups(old), groups(new));
    let apart = apart(old, new, go.keys().filter(|k| gn.contains_key(*k)).map(|k| k.2.clone()));
    let kept_apart = |tag: &Label| apart.iter().any(|a| &a.tag == tag);
    let common: Vec<_> = go.keys().filter(|k| gn.contains_key(*k) && !kept_apart(&k.2)).cloned().collect();
    let k = common.len();
    let vals = |r: &Rounds| r.values().copied().collect::<Vec<f64>>();
    let mut rows: Vec<CompareRow> = common
        .into_iter()
        .filter_map(|key| {
            let (o, n) = (&go[&key], &gn[&key]);
            Some(CompareRow {
                old: stats::summarize(&vals(o))?,
                new: stats::summarize(&vals(n))?,
                change: family::compare_apart(o, n, k, &rule)?,
                vs_baseline: None,
                engine: key.0,
                workload: key.1,
                tag: key.2,
            })
        })
        .collect();
    if rows.is_empty() && !apart.is_empty() {
        let why: Vec<String> = apart.iter().map(|a| super::names::plain(&a.describe())).collect();
        bail!("the two runs have no unit in common: {}; a name is one unit only when its patch is", why.join("; "));
    }
    if rows.is_empty() {
        bail!("the two runs have no (engine, tag, workload) in common");
    }
    let order = |r: &CompareRow| (r.engine, Workload::ALL.iter().position(|w| *w == r.workload), r.tag.release_key());
    rows.sort_by_key(order);
    agreements(old, new, &mut rows, &rule);
    let layouts = (old.header.plan.layouts, new.header.plan.layouts);
    let pairing = (old.header.plan.pairing, new.header.plan.pairing);
    let builds = (old.header.environment.tool_build(), new.header.environment.tool_build());
    let tool_builds = match builds {
        (Some(o), Some(n)) if o != n && !metric.is_exact() => Some((o.to_string(), n.to_string())),
        _ => None,
    };
    let config_differences = config_differences(old, new);
    Ok(Comparisons { metric, rule, rows, config_differences, layouts, pairing, apart, tool_builds })
}

impl Comparisons {
    /// What makes the two runs' figures incomparable, each said briefly (`entries: 2000 →
    /// 4000`, `pairing: process → chunks`): their workload settings, and for time their code
    /// layouts and their design (pairing, chunk size). Empty when they measured alike. A
    /// gate over such runs is refused; without one, the report warns.
    pub fn incomparable(&self) -> Vec<String> {
        let mut out = self.config_differences.clone();
        if !self.metric.is_exact() {
            let ((lo, ln), (po, pn)) = (self.layouts, self.pairing);
            if lo != ln {
                out.push(format!("layouts: {lo} → {ln}"));
            }
            if po != pn {
                out.push(format!("pairing: {po} → {pn}"));
            }
        }
        out
    }
}

/// The machine both runs were measured on, or each one's when they differ.
pub fn machine(old: &Environment, new: &Environment) -> String {
    let (o, n) = (super::outline::machine(old), super::outline::machine(new));
    match o == n {
        true => n,
        false => format!("The new run: {n} The old run: {o}"),
    }
}

/// What the comparison found, in sentences: each row time (or a count) resolved as slower
/// or faster, the first few named, or that none was.
pub fn findings(c: &Comparisons) -> Vec<String> {
    let moved: Vec<&CompareRow> =
        c.rows.iter().filter(|r| matches!(r.change.verdict, Verdict::Slower | Verdict::Faster)).collect();
    let open = c.rows.iter().filter(|r| r.change.verdict == Verdict::Inconclusive).count();
    let mut v: Vec<String> = moved
        .iter()
        .take(SHOWN)
        .map(|r| {
            format!(
                "{} ({}) {}: {} {} {}, {}.",
                r.workload,
                r.engine,
                cells::label(&r.tag),
                c.metric.name(),
                cells::delta(&r.change),
                cells::interval(&r.change),
                r.change.verdict
            )
        })
        .collect();
    if moved.len() > SHOWN {
        v.push(format!("{} more under the tables below.", cells::plural(moved.len() - SHOWN, "change")));
    }
    if moved.is_empty() {
        v.push(format!("No change resolved between the two runs, over {}.", cells::plural(c.rows.len(), "comparison")));
    }
    if open > 0 {
        v.push(format!("{} of {} inconclusive.", open, cells::plural(c.rows.len(), "comparison")));
    }
    v
}

/// The most changes [`findings`] names.
const SHOWN: usize = 10;

pub fn outline(c: &Comparisons) -> Document {
    let mut d = Document { findings: findings(c), ..Document::default() };
    for a in &c.apart {
        d.blocks.push(super::outline::Block::Note(format!(
            "Not compared: {}; one name, two units, so it is kept apart.",
            a.describe()
        )));
    }
    if let Some((old, new)) = &c.tool_builds {
        d.blocks.push(super::outline::Block::Note(format!(
            "Caution: the runs ran different builds of lmdb-regress ({old} → {new}); the tool's own code \
             placement moves some times (readCrc, readXxh64) by a point or more between builds, \
             which neither run's interval holds."
        )));
    }
    if !c.config_differences.is_empty() {
        d.blocks.push(super::outline::Block::Note(format!(
            "Warning: the runs used different workload settings ({}); their figures measure different things.",
            c.config_differences.join(", ")
        )));
    }
    let (old, new) = c.layouts;
    if old != new && !c.metric.is_exact() {
        d.blocks.push(super::outline::Block::Note(format!(
            "Warning: the runs differ in layouts (old: {old}, new: {new}): one fixed build per tag \
             against a code layout of its own per sample, so a change may be the fixed layout's \
             code placement, not LMDB's."
        )));
    }
    let (old, new) = c.pairing;
    if old != new && !c.metric.is_exact() {
        d.blocks.push(super::outline::Block::Note(format!(
            "Warning: the runs differ in pairing (old: {old}, new: {new}): a pass alternated chunk \
             by chunk with other units meets other caches than a whole pass alone, so a change may \
             be the design's, not LMDB's."
        )));
    }
    let mut sections: Vec<((Engine, Workload), Vec<&CompareRow>)> = Vec::new();
    for r in &c.rows {
        match sections.last_mut() {
            Some((k, v)) if *k == (r.engine, r.workload) => v.push(r),
            _ => sections.push(((r.engine, r.workload), vec![r])),
        }
    }
    for ((engine, workload), rows) in sections {
        d.heading(2, format!("{} ({engine})", workload.title()));
        let unit = c.metric.unit_of(workload);
        let mut t = Cells::new(
            &["tag", &format!("old {unit}"), &format!("new {unit}"), "delta", "interval", "verdict", "n"],
            0,
            1,
        );
        for r in &rows {
            t.push(
                vec![
                    cells::label(&r.tag),
                    format!("{} {}", cells::num(r.old.median), cells::plus_minus(&r.old)),
                    format!("{} {}", cells::num(r.new.median), cells::plus_minus(&r.new)),
                    cells::delta(&r.change),
                    cells::interval(&r.change),
                    r.change.verdict.to_string(),
                    format!("{}+{}", r.old.n, r.new.n),
                ],
                false,
            );
        }
        d.table(t);
        if let Some(t) = baseline_table(&rows) {
            d.table(t);
        }
    }
    d.para(format!(
        "Two separate runs: each delta is the Hodges-Lehmann estimate of the ratio new/old with \
         the interval that inverts the rank-sum test, simultaneous at 95% over the {} rows \
         (Bonferroni). slower/faster: the interval excludes 1; same: within {}; \
         inconclusive: neither. Different runs may have met different machine conditions.",
        c.rows.len(),
        cells::within(100.0 * c.rule.min_effect)
    ));
    let agreeing = c.rows.iter().filter(|r| r.vs_baseline.is_some()).count();
    if agreeing > 0 {
        d.para(format!(
            "Against the baseline: each tag's comparison with its run's baseline, as each run's \
             report gives it, and the change between the runs: each run's ratios to the baseline \
             process by process, the two samples apart, simultaneous at 95% over the {agreeing} \
             rows. A run's interval covers the variation between its own processes; slower or \
             faster here says the two runs disagree beyond that (something held for a whole run, \
             or the machine between them), so neither run's interval holds for the other."
        ));
    }
    d
}

/// Each tag's comparison with the baseline in the old run and the new, and the change
/// between them; None when no row has one.
fn baseline_table(rows: &[&CompareRow]) -> Option<Cells> {
    let first = rows.iter().find_map(|r| r.vs_baseline.as_ref())?;
    let against = cells::label(&first.baseline);
    let mut t = Cells::new(
        &["tag", &format!("old vs {against}"), &format!("new vs {against}"), "change", "interval", "verdict"],
        0,
        1,
    );
    for (r, a) in rows.iter().filter_map(|r| Some((r, r.vs_baseline.as_ref()?))) {
        let both = |c: &Comparison| format!("{} {}", cells::delta(c), cells::interval(c));
        let row = vec![
            cells::label(&r.tag),
            both(&a.old),
            both(&a.new),
            cells::delta(&a.change),
            cells::interval(&a.change),
            a.change.verdict.to_string(),
        ];
        t.push(row, false);
    }
    Some(t)
}

pub fn render_text(c: &Comparisons) -> String {
    super::text::render_document(&outline(c))
}
