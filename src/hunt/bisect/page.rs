//! Bisect's page: each phase's probes as a table and a chart, what each phase found, and
//! the attribution of the step.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::{BadIf, Found, SearchPhase};
use crate::hunt::search::ProbeVerdict;
use crate::record::Metric;
use crate::report::cells;
use crate::report::document::Shown;
use crate::report::html::{self, Item};
use crate::report::outline::{Block, Document};
use crate::report::svg::{self, RatioChart, RatioPoint, Side};
use crate::stats::Comparison;
use crate::workload::Workload;

/// A phase's heading on bisect's page: its chart of probes follows the table under it.
pub fn phase_heading(phase: SearchPhase) -> String {
    format!("Phase: {phase}")
}

/// A candidate as a chart's axis names it: a tag without its prefix, a commit by 7 digits.
fn axis_label(candidate: &str) -> String {
    match crate::tags::looks_like_commit(candidate) {
        true => candidate[..7].to_string(),
        false => cells::short_tag(candidate).to_string(),
    }
}

/// The side a probe was judged on; None for one skipped.
fn side(v: &ProbeVerdict) -> Option<Side> {
    match v {
        ProbeVerdict::Good => Some(Side::Good),
        ProbeVerdict::Bad => Some(Side::Bad),
        ProbeVerdict::Undecided => Some(Side::Undecided),
        ProbeVerdict::Skipped(_) => None,
    }
}

/// A phase's probes against its good end, in the candidates' order (release order for
/// tags, commit order for commits): the good end at 0%, each measured probe's ratio with
/// its interval coloured by the side it was judged on, and the bad end. None before any
/// probe was measured.
pub fn probes_chart(f: &Found, min_effect: f64) -> Result<Option<String>> {
    if f.vs_good.is_empty() {
        return Ok(None);
    }
    let (good, last) = (&f.candidates[0], f.candidates.len() - 1);
    let judged = |c: &str| f.outcome.steps.iter().find(|s| s.candidate == c).and_then(|s| side(&s.verdict));
    let points = f.candidates.iter().enumerate().filter_map(|(i, c)| {
        let (comparison, side) = match i {
            0 => (None, None),
            i if i == last => (Some(f.bad_vs_good.clone()?), Some(Side::Bad)),
            _ => (Some(f.vs_good.get(c)?.clone()), judged(c)),
        };
        let tip = match (&comparison, side) {
            (Some(k), Some(s)) => format!("{c}: {} against {good}; {}", cells::delta_line(k), s.word()),
            (Some(k), None) => format!("{c}: {} against {good}", cells::delta_line(k)),
            (None, _) => format!("{c}: the good end"),
        };
        let (time_only, instructions, claimed, newest) = (false, None, None, false);
        Some(RatioPoint { label: axis_label(c), comparison, time_only, instructions, claimed, newest, side, tip })
    });
    let chart = RatioChart {
        title: format!("Bisect, {}: each probe against the good end", f.phase),
        against: axis_label(good),
        x_desc: f.phase.candidates().into(),
        min_effect,
        points: points.collect(),
    };
    svg::ratios(&chart).map(Some)
}

/// One search's account: every phase's probes with their verdicts, what each found, the
/// attribution of the step, and every line printed.
#[derive(Serialize)]
pub struct BisectSummary<'a> {
    pub workload: Workload,
    pub bad_if: BadIf,
    pub metric: Metric,
    pub threshold_percent: f64,
    pub run_dir: PathBuf,
    pub wall_seconds: f64,
    pub log: &'a [String],
    pub confirmation: Option<&'a Comparison>,
    pub phases: &'a [Found],
    pub attribution: Option<&'a crate::report::explain::Attribution>,
    /// The smallest change a chart marks.
    #[serde(skip)]
    pub min_effect: f64,
}

/// Functions named for the step found.
pub const ATTRIBUTED: usize = 5;

impl Shown for BisectSummary<'_> {
    const KIND: &'static str = "lmdb-regress-bisect";
    const SCHEMA: u32 = 1;

    fn outline(&self) -> Document {
        let mut d = Document::default();
        d.heading(1, format!("Bisect: {} workload", self.workload));
        d.blocks.push(Block::Pairs(vec![
            ("Bad if".into(), self.bad_if.describe().into()),
            ("Metric".into(), self.metric.key().into()),
            ("Threshold".into(), format!("{}%", self.threshold_percent)),
            ("Runs saved in".into(), self.run_dir.display().to_string()),
            ("Wall time".into(), cells::seconds(self.wall_seconds)),
        ]));
        for f in self.phases {
            d.heading(2, phase_heading(f.phase));
            d.table(probes_table(f));
            let found = found_sentence(f);
            d.findings.push(format!("{}: {found}", f.phase));
            d.para(found);
        }
        if let Some(a) = self.attribution {
            d.heading(2, format!("Where the instructions went: {} against {}", a.bad, a.good));
            d.list(a.lines(ATTRIBUTED));
        }
        d.heading(2, "Log");
        d.list(self.log.to_vec());
        d
    }

    /// The outline's items, each phase's chart of probes after its table.
    fn html_items<'d>(&self, d: &'d Document) -> Result<Vec<Item<'d>>> {
        let mut items = html::items(d, None)?;
        // From the last phase, so that the earlier ones' positions hold.
        for f in self.phases.iter().rev() {
            let heading = phase_heading(f.phase);
            let at = items.iter().position(|i| matches!(i, Item::Block(Block::Heading(2, t)) if *t == heading));
            if let (Some(at), Some(svg)) = (at, probes_chart(f, self.min_effect)?) {
                items.insert((at + 2).min(items.len()), Item::Markup(html::figure(&svg)));
            }
        }
        Ok(items)
    }
}

/// A phase's probes, each with its verdict and what decided it.
fn probes_table(f: &Found) -> cells::Cells {
    let mut t = cells::Cells::new(&["candidate", "verdict", "detail"], 0, 3);
    for step in &f.outcome.steps {
        let verdict = match &step.verdict {
            ProbeVerdict::Good => "good".to_string(),
            ProbeVerdict::Bad => "bad".into(),
            ProbeVerdict::Undecided => "undecided".into(),
            ProbeVerdict::Skipped(why) => format!("skipped: {why}"),
        };
        t.push(vec![step.candidate.clone(), verdict, step.detail.clone()], false);
    }
    t
}

/// What a phase found: its first bad candidate and the step to it, or where it stopped.
fn found_sentence(f: &Found) -> String {
    let (lg, fb) = (&f.candidates[f.outcome.last_good], &f.candidates[f.outcome.first_bad]);
    match (&f.first_bad_info, &f.step) {
        (Some(info), step) => format!(
            "First bad: {fb} ({info}); the step from {lg}: {}.",
            step.as_ref().map(cells::delta_line).unwrap_or_else(|| "not measured".into())
        ),
        (None, _) => format!("Not resolved: the first bad one is after {lg}, at {fb} at the latest."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::search::{self, SearchOutcome};

    fn cmp(lo: f64, hi: f64) -> Comparison {
        let ci = Some(crate::stats::Interval { lo, hi });
        let verdict = crate::stats::ratio::judge(ci, 0.02);
        Comparison {
            ratio: (lo + hi) / 2.0,
            ci,
            confidence: 0.95,
            n: 12,
            method: crate::stats::Method::Paired,
            verdict,
        }
    }

    /// Probes at candidates 3 (good) and 1 (bad) of good, 4 commits, bad; 2 skipped.
    fn phase() -> Found {
        let c: Vec<String> = ["LMDB_0.9.20", "1111111aaaa", "2222222bbbb", "3333333cccc", "LMDB_0.9.21"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let step = |i: usize, verdict| search::ProbeStep { candidate: c[i].clone(), verdict, detail: String::new() };
        let steps = vec![
            step(2, ProbeVerdict::Skipped("not built".into())),
            step(3, ProbeVerdict::Bad),
            step(1, ProbeVerdict::Good),
        ];
        let outcome =
            SearchOutcome { last_good: 1, first_bad: 3, steps, skipped_between: vec![2], stopped_undecided: false };
        let vs_good = [(c[3].clone(), cmp(1.08, 1.12)), (c[1].clone(), cmp(0.99, 1.01))].into_iter().collect();
        Found {
            phase: SearchPhase::Commits,
            outcome,
            candidates: c,
            step: None,
            first_bad_info: None,
            interrupted: false,
            vs_good,
            bad_vs_good: Some(cmp(1.09, 1.11)),
        }
    }

    #[test]
    fn the_probes_chart_holds_each_measured_probe_in_commit_order_by_its_side() {
        let svg = probes_chart(&phase(), 0.02).unwrap().unwrap();
        let marks: Vec<&str> = svg.match_indices("<circle class=\"estimate ").map(|(i, _)| &svg[i..i + 80]).collect();
        let labels: Vec<&str> =
            marks.iter().map(|m| m.split("data-label=\"").nth(1).unwrap().split('"').next().unwrap()).collect();
        assert_eq!(labels, ["1111111", "3333333", "0.9.21"], "{svg}");
        let sides: Vec<&str> =
            marks.iter().map(|m| m["<circle class=\"estimate ".len()..].split('"').next().unwrap()).collect();
        assert_eq!(sides, ["good", "bad", "bad"]);
        assert_eq!(svg.matches("class=\"reference-point\" data-label=\"0.9.20\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("<g class=\"interval ").count(), 3);
        assert!(svg.contains("<line class=\"reference\" data-ratio=\"1\""), "{svg}");
        assert!(svg.contains("coloured by the probe's side"), "{svg}");
    }

    #[test]
    fn the_page_puts_each_phase_chart_after_its_table() {
        let phases = [phase()];
        let summary = BisectSummary {
            workload: Workload::Write,
            bad_if: BadIf::Change,
            metric: Metric::Time,
            threshold_percent: 2.0,
            run_dir: PathBuf::from("runs"),
            wall_seconds: 1.0,
            log: &[],
            confirmation: None,
            phases: &phases,
            attribution: None,
            min_effect: 0.02,
        };
        let page = crate::report::render_shown(&summary, crate::report::Format::Html, &Default::default()).unwrap();
        let (table, chart, after) = (
            page.rfind("</table>").unwrap(),
            page.find("<svg class=\"ratio-chart\"").unwrap(),
            page.find("Not resolved").unwrap(),
        );
        assert!(table < chart && chart < after, "{page}");
    }
}
