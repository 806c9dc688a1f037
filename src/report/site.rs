//! The index page of a static site of runs (`site DIR RUN...`): one row per run (date,
//! host, tags, workloads, headline verdicts, a link to its own page), for runs made on
//! the same host with the same settings a trend per workload (each run's newest tag against
//! its baseline, then each tag's median per run), and one row per history (range,
//! commits, steps, a link to its step charts).

use anyhow::Result;

use super::cells::{self, short_tag, Cells};
use super::history::History;
use super::html::{self, Item};
use super::model::{ReportModel, Section};
use super::outline::{Block, Document};
use super::svg::{self, RatioChart, RatioPoint};
use super::trend::{self, TrendSeries};
use crate::record::label::Label;
use crate::stats::Verdict;

/// One history of the site: what `history` measured and the file name of its page.
pub struct SiteHistory {
    pub page: String,
    pub history: History,
}

/// One run of the site: its model and the file name of its page.
pub struct SiteRun {
    pub page: String,
    pub model: ReportModel,
}

pub fn index(runs: &[SiteRun], histories: &[SiteHistory]) -> Result<String> {
    let mut order: Vec<&SiteRun> = runs.iter().collect();
    order.sort_by(|a, b| b.model.environment.date.cmp(&a.model.environment.date));
    let mut head = Document::default();
    head.heading(1, "LMDB performance runs");
    head.para(format!(
        "{}, newest first; each links to its full report. Headline: the tags each workload \
         resolved slower or faster than the run's baseline (its oldest tag).",
        cells::plural(runs.len(), "run")
    ));
    let mut items: Vec<Item> = head.blocks.iter().map(Item::Block).collect();
    let links: Vec<Option<String>> = order.iter().map(|r| Some(r.page.clone())).collect();
    items.push(Item::Markup(html::table(&runs_cells(&order), &links, "wrap")));
    let trends = trends(&order)?;
    items.extend(trends.iter().map(|t| match t {
        Trend::Block(b) => Item::Block(b),
        Trend::Chart(svg) => Item::Markup(html::figure(svg)),
    }));
    let heading = Block::Heading(2, "Histories".into());
    let intro =
        Block::Paragraph("Each a range of commits measured one by one; its page charts every workload's steps.".into());
    if !histories.is_empty() {
        items.extend([Item::Block(&heading), Item::Block(&intro)]);
        let links: Vec<Option<String>> = histories.iter().map(|h| Some(h.page.clone())).collect();
        items.push(Item::Markup(html::table(&histories_cells(histories), &links, "wrap")));
    }
    Ok(html::page("LMDB performance runs", &html::body(&items)))
}

fn histories_cells(histories: &[SiteHistory]) -> Cells {
    let mut c = Cells::new(&["Range", "Unit", "Commits", "Not measured", "Steps"], 0, 2);
    for h in histories {
        let h = &h.history;
        c.push(
            vec![
                h.range.clone(),
                h.unit.clone(),
                h.points.len().saturating_sub(1).to_string(),
                h.skipped().to_string(),
                h.step_count().to_string(),
            ],
            false,
        );
    }
    c
}

fn runs_cells(runs: &[&SiteRun]) -> Cells {
    let mut c = Cells::new(&["Run", "Date", "Host", "Tags", "Workloads", "Headline"], 0, 6);
    for r in runs {
        let m = &r.model;
        let workloads: Vec<String> = m.sections.iter().map(|s| s.workload.to_string()).collect();
        c.push(
            vec![run_id(r), short_date(&m.environment.date), host(m), tag_range(m), workloads.join(", "), headline(m)],
            false,
        );
    }
    c
}

fn host(m: &ReportModel) -> String {
    format!("{} ({} cores)", m.environment.cpu(), m.environment.cores)
}

/// "0.9.17 … 0.9.33 (17)": the first and last tag measured, and how many.
fn tag_range(m: &ReportModel) -> String {
    let mut tags: Vec<&Label> = m.sections.iter().flat_map(|s| s.ranked.iter().map(|r| &r.tag)).collect();
    tags.sort_by_key(|t| t.release_key());
    tags.dedup();
    let short = |t: &Label| short_tag(&cells::label(t)).to_string();
    match (tags.first(), tags.last()) {
        (Some(a), Some(b)) if a != b => format!("{} … {} ({})", short(a), short(b), tags.len()),
        (Some(a), _) => short(a),
        _ => "none".into(),
    }
}

/// What each workload resolved against the baseline, the partial mark and a control that
/// differs from itself: "readKey: 6 slower (6 time only)".
fn headline(m: &ReportModel) -> String {
    let mut parts: Vec<String> = m.sections.iter().filter_map(|s| section_headline(m, s)).collect();
    if parts.is_empty() {
        parts.push(format!("nothing resolved slower or faster than {}", short_tag(&cells::baseline_label(m))));
    }
    if m.sections.iter().any(|s| s.controls.iter().any(|c| c.verdict().is_change())) {
        parts.push("WARNING: a control differs from itself".into());
    }
    if m.partial() {
        parts.push("partial run".into());
    }
    parts.join("; ")
}

fn section_headline(m: &ReportModel, s: &Section) -> Option<String> {
    let deltas: Vec<_> = s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).collect();
    let said: Vec<String> = [Verdict::Slower, Verdict::Faster]
        .into_iter()
        .filter_map(|v| {
            let of: Vec<_> = deltas.iter().filter(|d| d.verdict() == v).collect();
            let time_only = of.iter().filter(|d| d.time_only).count();
            match (of.len(), time_only) {
                (0, _) => None,
                (n, 0) => Some(format!("{n} {v}")),
                (n, t) => Some(format!("{n} {v} ({t} time only)")),
            }
        })
        .collect();
    (!said.is_empty()).then(|| format!("{}: {}", m.section_title(s), said.join(", ")))
}

enum Trend {
    Block(Block),
    Chart(String),
}

/// Runs that can be compared over time: same host, settings, metric and engines.
fn same_setup(a: &ReportModel, b: &ReportModel) -> bool {
    a.environment.same_cpu(&b.environment)
        && a.environment.cores == b.environment.cores
        && a.config == b.config
        && a.unit.metric == b.unit.metric
        && a.engines() == b.engines()
}

/// Per group of two or more comparable runs, oldest first, a trend chart per workload.
fn trends(runs: &[&SiteRun]) -> Result<Vec<Trend>> {
    let mut groups: Vec<Vec<&SiteRun>> = Vec::new();
    for r in runs.iter().rev() {
        match groups.iter_mut().find(|g| same_setup(&g[0].model, &r.model)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    let mut out = Vec::new();
    for g in groups.into_iter().filter(|g| g.len() > 1) {
        let m0 = &g[0].model;
        out.push(Trend::Block(Block::Heading(2, format!("Trends on {}", host(m0)))));
        out.push(Trend::Block(Block::Paragraph(format!(
            "{} runs with the same settings ({} entries, same engines and metric), oldest first, each \
             run named by its own file: per workload, each run's newest tag against its baseline \
             (the paired estimate and interval the verdicts rest on), then each tag's median {} per run.",
            g.len(),
            m0.config.entries,
            m0.unit.label
        ))));
        // Runs by their own names: two runs of the same minute share a date, never a name.
        let labels: Vec<String> = g.iter().map(|r| run_id(r)).collect();
        for s in &m0.sections {
            let title = format!("{} — median {} per run", m0.section_title(s), m0.unit.label);
            out.push(Trend::Block(Block::Heading(3, m0.section_title(s))));
            out.push(Trend::Chart(newest_ratios(&g, s, &labels)?));
            out.push(Trend::Chart(trend::trend(&title, m0.unit.label, ("run", &labels), &series(&g, s))?));
        }
    }
    Ok(out)
}

/// Per run of the group, oldest first, its newest tag against its baseline in one
/// (engine, workload): the report's own estimate and interval. A run without that
/// comparison has no point.
fn newest_ratios(g: &[&SiteRun], s: &Section, runs: &[String]) -> Result<String> {
    let mut points = Vec::new();
    for (r, run) in g.iter().zip(runs) {
        let m = &r.model;
        let Some(newest) = m.newest.as_ref() else { continue };
        let row = m.section(s.engine, s.workload).and_then(|s| s.vs_baseline.iter().find(|b| b.tag == *newest));
        let Some(d) = row.and_then(|b| b.vs_baseline.as_ref()) else { continue };
        let (tag, base) = (cells::label(newest), cells::baseline_label(m));
        points.push(RatioPoint {
            label: run.clone(),
            comparison: Some(d.comparison.clone()),
            time_only: d.time_only,
            instructions: d.instructions().map(|c| c.ratio),
            claimed: None,
            newest: false,
            side: None,
            tip: format!(
                "{run}: {} against {}: {}",
                short_tag(&tag),
                short_tag(&base),
                cells::delta_line(&d.comparison)
            ),
        });
    }
    let m0 = &g[0].model;
    svg::ratios(&RatioChart {
        title: format!("{} — each run's newest tag against its baseline", m0.section_title(s)),
        against: "the run's baseline".into(),
        x_desc: "run".into(),
        min_effect: m0.rule.min_effect,
        points,
    })
}

/// A run's own id: its page's (and run file's) name.
fn run_id(r: &SiteRun) -> String {
    r.page.trim_end_matches(".html").to_string()
}

/// "2026-11-29T23:41:00Z" → "2026-11-29 23:41".
fn short_date(iso: &str) -> String {
    iso.get(..16).map(|d| d.replace('T', " ")).unwrap_or_else(|| iso.to_string())
}

/// Each tag's median in each run of the group, for one (engine, workload).
fn series(g: &[&SiteRun], s: &Section) -> Vec<TrendSeries> {
    let sections: Vec<Option<&Section>> = g.iter().map(|r| r.model.section(s.engine, s.workload)).collect();
    let mut tags: Vec<&Label> = sections.iter().flatten().flat_map(|s| s.ranked.iter().map(|r| &r.tag)).collect();
    tags.sort_by_key(|t| t.release_key());
    tags.dedup();
    tags.into_iter()
        .map(|tag| TrendSeries {
            label: tag.clone(),
            medians: sections
                .iter()
                .map(|s| s.and_then(|s| s.ranked.iter().find(|r| r.tag == *tag)).map(|r| r.summary.median))
                .collect(),
        })
        .collect()
}
