//! A performance history: a run whose units are commits, in commit order. One model, built
//! from the report model of that run; rendered as 80-column text, JSON, and an HTML page
//! with a step chart (SVG) per engine and workload.

use std::fmt::Write as _;

use html_escape::encode_text as esc;
use serde::{Deserialize, Serialize};

use super::cells::Cells;
use super::model::ReportModel;
use super::outline::Document;
use super::svg::{RatioChart, RatioPoint};
use crate::record::{BuildStatus, Engine, Label, Metric};
use crate::stats::history::steps;
use crate::stats::Comparison;
use crate::workload::Workload;

/// One commit of the history, oldest first; the first is the range's start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub commit: String,
    /// Its label in the run file.
    pub label: String,
    pub subject: String,
    /// `ITS#NNNN` when the subject names one.
    pub its: Option<String>,
    /// Why it was not measured (did not build, unavailable), when it was not.
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRow {
    pub commit: String,
    pub subject: String,
    pub its: Option<String>,
    /// The commit measured before it.
    pub after: String,
    pub before_value: f64,
    pub value: f64,
    pub change_percent: f64,
    /// The functions that carry it, by |self difference| (as `explain` gives them), when
    /// the history attributed its steps (by a count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<super::explain::FunctionRow>,
}

/// A commit against the one measured before it, as the report model compared them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Change {
    pub commit: String,
    /// The commit measured before it.
    pub after: String,
    /// In the history's metric.
    pub comparison: Comparison,
    /// The counts beside its metric, by metric (histories saved before counts were values
    /// held `instructions` here; they are measured again from their run, not read).
    #[serde(default)]
    pub counts: std::collections::BTreeMap<crate::record::Metric, Comparison>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Series {
    pub engine: Engine,
    pub workload: Workload,
    /// One value per point (the median over its samples); None: not measured.
    pub values: Vec<Option<f64>>,
    pub steps: Vec<StepRow>,
    /// Every measured commit against the one before it (histories written before the gate
    /// have none).
    #[serde(default)]
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct History {
    pub range: String,
    pub unit: String,
    /// What its values are (histories written before the gate: time, and no changes).
    #[serde(default)]
    pub metric: Metric,
    /// Changes within ± this fraction are no step.
    pub tolerance: f64,
    pub points: Vec<Point>,
    pub series: Vec<Series>,
    /// The run file its values come from, relative to the history's folder when it lies
    /// there (histories written before `--extend`: none).
    #[serde(default)]
    pub run: Option<String>,
    /// With `--extend`: the index of the first point this extension measured; the points
    /// before it were the saved history's.
    #[serde(default)]
    pub new_from: Option<usize>,
    /// The machine it was measured on, in a sentence (histories written before: none).
    #[serde(default)]
    pub machine: Option<String>,
}

/// `ITS#8557` from a subject such as "ITS#8557 fix ...".
pub fn its_of(subject: &str) -> Option<String> {
    let at = subject.find("ITS#")?;
    let digits: String = subject[at + 4..].chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then(|| format!("ITS#{digits}"))
}

impl super::document::Shown for History {
    const KIND: &'static str = "lmdb-regress-history";
    const SCHEMA: u32 = 1;

    /// Its range, what was not measured, then each series' steps in a table, and the
    /// functions that carry each step when the history attributed them.
    fn outline(&self) -> Document {
        let mut d = Document { findings: self.findings(), machine: self.machine.clone(), ..Document::default() };
        d.heading(1, format!("History {}", self.range));
        d.para(format!(
            "{} from the start, {} not measured; steps are changes beyond {} in {}.",
            super::cells::plural(self.points.len().saturating_sub(1), "commit"),
            self.skipped(),
            super::cells::within(self.tolerance * 100.0),
            self.unit
        ));
        if let Some(line) = self.extended() {
            d.para(line);
        }
        d.list(
            self.points
                .iter()
                .filter_map(|p| {
                    Some(format!("not measured: {} {}: {}", short(&p.commit), p.subject, p.skipped.as_deref()?))
                })
                .collect(),
        );
        for s in &self.series {
            d.heading(2, format!("{} {}: {}", s.engine, s.workload, super::cells::plural(s.steps.len(), "step")));
            if s.steps.is_empty() {
                continue;
            }
            d.table(self.steps_table(s));
            d.list(s.steps.iter().flat_map(step_functions).collect());
        }
        d
    }

    /// The outline's items, each series' charts after its heading: the level with its
    /// steps, and each commit against the one before.
    fn html_items<'d>(&self, d: &'d Document) -> anyhow::Result<Vec<super::html::Item<'d>>> {
        use super::html::{figure, Item};
        let mut items = Vec::new();
        let mut series = self.series.iter();
        for item in super::html::items(d, None)? {
            let heading = matches!(item, Item::Block(super::outline::Block::Heading(2, _)));
            items.push(item);
            if let Some(s) = heading.then(|| series.next()).flatten() {
                items.push(Item::Markup(figure(&self.chart(s))));
                if let Some(svg) = self.changes_chart(s)? {
                    items.push(Item::Markup(figure(&svg)));
                }
            }
        }
        Ok(items)
    }
}

/// Each function that carries `st`, in a line: its self cost before and after.
fn step_functions(st: &StepRow) -> Vec<String> {
    st.functions
        .iter()
        .filter(|f| f.self_cost.diff() != 0.0)
        .map(|f| {
            let (a, b) = (f.self_cost.a, f.self_cost.b);
            format!("{}: {:+.1} {} (self {a:.1} -> {b:.1})", short(&st.commit), f.self_cost.diff(), f.name)
        })
        .collect()
}

impl History {
    /// A series' steps, the new ones marked.
    fn steps_table(&self, s: &Series) -> Cells {
        let mut t = Cells::new(&["commit", "change", "before", "after", "ITS", "subject"], 0, 2);
        for st in &s.steps {
            let new = if self.is_new(&st.commit) { " (new)" } else { "" };
            t.push(
                vec![
                    format!("{}{new}", short(&st.commit)),
                    format!("{:+.1}%", st.change_percent),
                    super::cells::num(st.before_value),
                    super::cells::num(st.value),
                    st.its.clone().unwrap_or_default(),
                    st.subject.clone(),
                ],
                self.is_new(&st.commit),
            );
        }
        t
    }

    /// The history of `points` (labels of the run's tags) from the report of their run.
    pub fn of(range: &str, mut points: Vec<Point>, model: &ReportModel) -> History {
        // A history's units are its commits, each built by the default toolchain.
        let units: Vec<Label> = points.iter().map(|p| Label::build(&p.label, None)).collect();
        for (p, unit) in points.iter_mut().zip(&units) {
            p.skipped = model.tags.iter().find(|t| t.label == *unit).and_then(|t| match t.status {
                BuildStatus::Built => None,
                _ => Some(t.reason.as_deref().map_or_else(|| format!("{:?}", t.status).to_lowercase(), brief)),
            });
        }
        let tolerance = model.rule.tolerance();
        let series = model
            .sections
            .iter()
            .map(|s| {
                let value = |label: &Label| s.ranked.iter().find(|r| r.tag == *label).map(|r| r.summary.median);
                let values: Vec<Option<f64>> = units.iter().map(value).collect();
                let steps = steps(&values, tolerance)
                    .into_iter()
                    .map(|st| StepRow {
                        commit: points[st.to].commit.clone(),
                        subject: points[st.to].subject.clone(),
                        its: points[st.to].its.clone(),
                        after: points[st.from].commit.clone(),
                        before_value: values[st.from].unwrap_or_default(),
                        value: values[st.to].unwrap_or_default(),
                        change_percent: (st.ratio - 1.0) * 100.0,
                        functions: Vec::new(),
                    })
                    .collect();
                let order: Vec<&Label> = units.iter().collect();
                let commit = |label: &Label| units.iter().position(|u| u == label).map(|i| points[i].commit.clone());
                let changes = super::model::consecutive(model, s, &order)
                    .into_iter()
                    .filter_map(|d| {
                        Some(Change {
                            commit: commit(&d.tag)?,
                            after: commit(&d.against)?,
                            comparison: d.comparison,
                            counts: d.counts,
                        })
                    })
                    .collect();
                Series { engine: s.engine, workload: s.workload, values, steps, changes }
            })
            .collect();
        History {
            range: range.to_string(),
            unit: model.unit.label.to_string(),
            metric: model.unit.metric,
            tolerance,
            points,
            series,
            run: None,
            new_from: None,
            machine: Some(super::outline::machine(&model.environment)),
        }
    }

    /// Whether `commit` is one this extension added (none is, unless extended).
    pub fn is_new(&self, commit: &str) -> bool {
        let Some(from) = self.new_from else { return false };
        self.points.iter().position(|p| p.commit == commit).is_some_and(|i| i >= from)
    }

    /// Every step in a sentence (the new ones marked), or that there is none.
    fn findings(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .series
            .iter()
            .flat_map(|s| s.steps.iter().map(move |st| (s, st)))
            .map(|(s, st)| {
                let its = st.its.as_deref().map(|i| format!(" ({i})")).unwrap_or_default();
                let new = if self.is_new(&st.commit) { "new step: " } else { "" };
                format!(
                    "{new}{} {}: {:+.1}% {} at {}{its}, {}.",
                    s.engine,
                    s.workload,
                    st.change_percent,
                    self.unit,
                    short(&st.commit),
                    st.subject
                )
            })
            .collect();
        if v.is_empty() {
            v.push(format!(
                "No step beyond {} in {} over {}.",
                super::cells::within(self.tolerance * 100.0),
                self.unit,
                super::cells::plural(self.points.len().saturating_sub(1), "commit")
            ));
        }
        v.extend(self.extended());
        v
    }

    /// With `--extend`: how many commits and steps it added.
    fn extended(&self) -> Option<String> {
        let from = self.new_from?;
        let new_steps = self.series.iter().flat_map(|s| &s.steps).filter(|st| self.is_new(&st.commit)).count();
        Some(format!(
            "extended: {} after {}, {} among them (marked new).",
            super::cells::plural(self.points.len().saturating_sub(from), "new commit"),
            self.points.get(from.saturating_sub(1)).map_or("the start", |p| short(&p.commit)),
            super::cells::plural(new_steps, "step")
        ))
    }

    /// Beside the level, each measured commit's ratio to the one measured before it, the
    /// model's estimate and interval; None for a history saved without its changes.
    fn changes_chart(&self, s: &Series) -> anyhow::Result<Option<String>> {
        if s.changes.is_empty() {
            return Ok(None);
        }
        let measured = self.points.iter().zip(&s.values).filter(|(_, v)| v.is_some());
        let points = measured
            .map(|(p, _)| {
                let change = s.changes.iter().find(|c| c.commit == p.commit);
                RatioPoint {
                    label: short(&p.commit)[..7.min(p.commit.len())].to_string(),
                    comparison: change.map(|c| c.comparison.clone()),
                    time_only: false,
                    instructions: change.and_then(|c| c.counts.get(&Metric::Instructions)).map(|c| c.ratio),
                    claimed: None,
                    newest: false,
                    side: None,
                    tip: match change {
                        Some(c) => format!(
                            "{}: {} after {}",
                            short(&p.commit),
                            super::cells::delta_line(&c.comparison),
                            short(&c.after)
                        ),
                        None => format!("{}: the first commit measured", short(&p.commit)),
                    },
                }
            })
            .collect();
        let chart = RatioChart {
            title: format!("{} {}: each commit against the one before", s.engine, s.workload),
            against: "the commit before".into(),
            x_desc: "commit".into(),
            min_effect: self.tolerance,
            points,
        };
        super::svg::ratios(&chart).map(Some)
    }

    /// How many steps all series hold.
    pub fn step_count(&self) -> usize {
        self.series.iter().map(|s| s.steps.len()).sum()
    }

    /// How many of its commits were not measured.
    pub fn skipped(&self) -> usize {
        self.points.iter().filter(|p| p.skipped.is_some()).count()
    }

    /// A step chart of one series: the value after each commit, a marker at each step with
    /// its commit, subject and ITS number.
    fn chart(&self, s: &Series) -> String {
        let (w, h, pad) = (760.0, 220.0, 40.0);
        let vals: Vec<f64> = s.values.iter().flatten().copied().collect();
        let (lo, hi) = vals.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
        if vals.is_empty() {
            return "<p>nothing measured</p>".into();
        }
        let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) * 0.01 };
        let n = s.values.len().max(2) as f64 - 1.0;
        let x = |i: usize| pad + (w - 2.0 * pad) * i as f64 / n;
        let y = |v: f64| h - pad - (h - 2.0 * pad) * (v - lo) / span;
        let mut path = String::new();
        let mut last: Option<f64> = None;
        for (i, v) in s.values.iter().enumerate() {
            let Some(v) = v else { continue };
            match last {
                None => write!(path, "M{:.1},{:.1}", x(i), y(*v)),
                Some(_) => write!(path, " H{:.1} V{:.1}", x(i), y(*v)),
            }
            .expect("writing to a String");
            last = Some(*v);
        }
        let mut o = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" \
             aria-label=\"{} {} in {}\"><text x=\"4\" y=\"14\" font-size=\"12\">{} to {} {}</text>\
             <path d=\"{path}\" fill=\"none\" stroke=\"#246\" stroke-width=\"1.5\"/>",
            esc(&s.engine.to_string()),
            esc(&s.workload.to_string()),
            esc(&self.unit),
            super::cells::num(lo),
            super::cells::num(hi),
            esc(&self.unit)
        );
        for st in &s.steps {
            let Some(i) = self.points.iter().position(|p| p.commit == st.commit) else { continue };
            let its = st.its.as_deref().unwrap_or("");
            let _ = write!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#c33\"><title>{} {:+.1}% {} {}</title></circle>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{} {}</text>",
                x(i),
                y(st.value),
                short(&st.commit),
                st.change_percent,
                esc(its),
                esc(&st.subject),
                x(i) + 5.0,
                y(st.value) - 6.0,
                short(&st.commit),
                esc(its)
            );
        }
        o.push_str("</svg>");
        o
    }
}

/// A build failure in a line: what failed, and the compiler's first error with its file by
/// name (not the cache's path, which says nothing to a reader elsewhere).
fn brief(reason: &str) -> String {
    let mut lines = reason.lines();
    let head = lines.next().unwrap_or_default().trim_end_matches(':').to_string();
    let error = lines.find(|l| l.contains("error:")).map(|l| {
        let l = l.trim();
        let file = l.split_whitespace().next().unwrap_or_default();
        let name = file.rsplit('/').next().unwrap_or(file);
        format!("{name}{}", &l[file.len()..])
    });
    match error {
        Some(e) => format!("{head}: {e}"),
        None => head,
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_numbers_come_from_subjects() {
        assert_eq!(its_of("ITS#8557 fix mdb_cursor_put").as_deref(), Some("ITS#8557"));
        assert_eq!(its_of("Fix ITS#10406, again").as_deref(), Some("ITS#10406"));
        assert_eq!(its_of("ITS# nothing"), None);
        assert_eq!(its_of("plain subject"), None);
    }

    #[test]
    fn a_build_failure_is_one_line_without_the_cache_path() {
        let reason =
            "cc failed to compile 34f572e7a5:\n/home/u/.cache/lmdb-regress/sources/ab12/mdb.c: In function 'f':\n\
                      /home/u/.cache/lmdb-regress/sources/ab12/mdb.c:4013:36: error: expected ';'\n  4013 | x";
        assert_eq!(brief(reason), "cc failed to compile 34f572e7a5: mdb.c:4013:36: error: expected ';'");
        assert_eq!(brief("no provider had it"), "no provider had it");
    }
}
