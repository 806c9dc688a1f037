//! ITS#10406 ("Write regression since 0.9.19", LmdbJava through JNI): the report's write
//! benchmark measured natively, its table beside ours, and a verdict on each claim.

use std::fmt::Write;

use serde::Serialize;

use crate::runner::runfile::Status;
use crate::report::model::ReportModel;
use crate::report::{fmt_p, num, plus_minus, Cells};
use crate::runner::runfile::Engine;
use crate::stats::{self, Comparison, Summary};
use crate::workload::Workload;

/// The report's figures: LmdbJava, ms/op of 1M MDB_APPEND writes.
pub const REPORTED: [(&str, f64); 14] = [
    ("LMDB_0.9.17", 75.790),
    ("LMDB_0.9.18", 74.909),
    ("LMDB_0.9.19", 81.404),
    ("LMDB_0.9.20", 83.459),
    ("LMDB_0.9.21", 83.237),
    ("LMDB_0.9.22", 83.027),
    ("LMDB_0.9.23", 82.870),
    ("LMDB_0.9.24", 82.952),
    ("LMDB_0.9.27", 82.989),
    ("LMDB_0.9.28", 83.025),
    ("LMDB_0.9.29", 83.063),
    ("LMDB_0.9.30", 83.237),
    ("LMDB_0.9.31", 88.419),
    ("LMDB_0.9.33", 83.304),
];

pub const BASELINE: &str = "LMDB_0.9.17";

/// The claims the report makes, as (from, to).
pub const CLAIMS: [(&str, &str); 3] =
    [("LMDB_0.9.18", "LMDB_0.9.19"), ("LMDB_0.9.18", "LMDB_0.9.20"), ("LMDB_0.9.17", "LMDB_0.9.33")];

pub fn reported(tag: &str) -> Option<f64> {
    REPORTED.iter().find(|(t, _)| *t == tag).map(|(_, v)| *v)
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub tag: String,
    pub ours: Option<Summary>,
    pub vs_baseline: Option<Comparison>,
    pub reported_ms: Option<f64>,
    pub reported_vs_baseline_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub from: String,
    pub to: String,
    pub reported_pct: f64,
    pub measured: Option<Comparison>,
    /// "slower by …", "no significant difference …", or "not measured …".
    pub finding: String,
    /// Some(true) reproduces, Some(false) does not, None not measured.
    pub reproduces: Option<bool>,
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EngineResult {
    pub engine: Engine,
    pub rows: Vec<Row>,
    pub verdicts: Vec<Verdict>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ItsReport {
    pub unit: &'static str,
    pub engines: Vec<EngineResult>,
    /// Tags of the range that were not built, with the reason and how to supply them.
    pub missing: Vec<(String, String)>,
}

fn pct(a: f64, b: f64) -> f64 {
    100.0 * (b / a - 1.0)
}

pub fn build(m: &ReportModel) -> ItsReport {
    let mut engines = Vec::new();
    for engine in m.engines() {
        let vals = |tag: &str| -> Vec<f64> {
            m.samples
                .iter()
                .filter(|s| s.engine == engine && s.workload == Workload::Write && s.tag == tag)
                .filter_map(|s| s.value(m.unit.metric))
                .collect()
        };
        let base = vals(BASELINE);
        let rows = m
            .tags
            .iter()
            .map(|t| {
                let v = vals(&t.tag);
                Row {
                    tag: t.tag.clone(),
                    ours: stats::summarize(&v),
                    vs_baseline: if t.tag == BASELINE { None } else { stats::compare(&base, &v) },
                    reported_ms: reported(&t.tag),
                    reported_vs_baseline_pct: reported(&t.tag).map(|r| pct(reported(BASELINE).unwrap(), r)),
                }
            })
            .collect();
        let verdicts = CLAIMS
            .iter()
            .map(|(from, to)| {
                let reported_pct = pct(reported(from).unwrap(), reported(to).unwrap());
                let (a, b) = (vals(from), vals(to));
                let missing: Vec<&str> = [*from, *to].into_iter().filter(|t| vals(t).is_empty()).collect();
                let measured = stats::compare(&a, &b);
                let (finding, reproduces) = match &measured {
                    None => (format!("not measured ({} unavailable)", missing.join(" and ")), None),
                    Some(c) => {
                        let ci = crate::report::delta_interval(c);
                        if c.significant && c.ratio > 1.0 {
                            (format!("slower by {:.1}% {ci}, p={}", c.delta_percent(), fmt_p(c.p_value().unwrap_or(1.0))), Some(true))
                        } else if c.significant {
                            (format!("faster by {:.1}% {ci}, p={}", -c.delta_percent(), fmt_p(c.p_value().unwrap_or(1.0))), Some(false))
                        } else {
                            (format!("no significant difference ({:+.1}% {ci})", c.delta_percent()), Some(false))
                        }
                    }
                };
                let short = |t: &str| t.trim_start_matches("LMDB_").to_string();
                let sentence = match reproduces {
                    None => format!(
                        "The report's {} → {} claim ({reported_pct:+.1}%) is not measured here: supply the missing tag with --git.",
                        short(from),
                        short(to)
                    ),
                    Some(true) => format!(
                        "The report's {} → {} slowdown ({reported_pct:+.1}% through Java) reproduces natively: {:+.1}%.",
                        short(from),
                        short(to),
                        measured.as_ref().unwrap().delta_percent()
                    ),
                    Some(false) => format!(
                        "The report's {} → {} slowdown ({reported_pct:+.1}% through Java) does not reproduce natively.",
                        short(from),
                        short(to)
                    ),
                };
                Verdict { from: from.to_string(), to: to.to_string(), reported_pct, measured, finding, reproduces, sentence }
            })
            .collect();
        engines.push(EngineResult { engine, rows, verdicts });
    }
    let missing = m
        .tags
        .iter()
        .filter(|t| t.status != Status::Built)
        .map(|t| (t.tag.clone(), t.reason.clone().unwrap_or_default()))
        .collect();
    ItsReport { unit: m.unit.label, engines, missing }
}

/// The report's table with ours beside it, the verdicts, what is missing. `md` adds
/// Markdown table syntax; without it the text is fixed-width for Bugzilla.
pub fn render(r: &ItsReport, m: &ReportModel, md: bool) -> String {
    let mut o = String::new();
    let h = |o: &mut String, level: usize, t: &str| {
        if md {
            let _ = writeln!(o, "{} {t}\n", "#".repeat(level));
        } else {
            let _ = writeln!(o, "{}\n{}\n", t.to_uppercase(), "=".repeat(t.len()));
        }
    };
    h(&mut o, 1, "ITS#10406 reproduced natively: MDB_APPEND writes per LMDB tag");
    let cfg = &m.config;
    let _ = writeln!(
        o,
        "{} entries, 4-byte integer keys (MDB_INTEGERKEY), {}-byte values, one cursor with MDB_APPEND, \
         MDB_WRITEMAP|MDB_NOSYNC; median {} with its 95% interval over interleaved rounds. \
         \"Reported\" is the ITS#10406 table (LmdbJava through JNI, Ryzen 9 7900).\n",
        cfg.entries, cfg.value_size, r.unit
    );
    for e in &r.engines {
        h(&mut o, 2, &format!("Write Entry, {} engine", e.engine));
        let header = ["Tag", r.unit, "±", "vs 0.9.17", "95% CI", "p", "Reported ms/op", "Reported vs 0.9.17"];
        let rows: Vec<Vec<String>> = e
            .rows
            .iter()
            .map(|row| {
                let (d, ci, p) = match (&row.ours, &row.vs_baseline) {
                    (None, _) => ("not measured".into(), String::new(), String::new()),
                    (Some(_), None) if row.tag == BASELINE => ("baseline".into(), String::new(), String::new()),
                    (Some(_), None) => ("n/a".into(), String::new(), String::new()),
                    (Some(_), Some(c)) => (
                        crate::report::delta(c),
                        crate::report::delta_interval(c),
                        crate::report::significance_in(m, c),
                    ),
                };
                vec![
                    row.tag.clone(),
                    row.ours.as_ref().map(|s| num(s.median)).unwrap_or_else(|| "-".into()),
                    row.ours.as_ref().map(plus_minus).unwrap_or_default(),
                    d,
                    ci,
                    p,
                    row.reported_ms.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into()),
                    row.reported_vs_baseline_pct
                        .map(|v| if row.tag == BASELINE { "baseline".into() } else { format!("{v:+.1}%") })
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        let cells = Cells {
            header: header.iter().map(|h| h.to_string()).collect(),
            highlight: vec![false; rows.len()],
            rows,
            tag_col: 0,
            text_cols: 1,
        };
        if md {
            crate::report::markdown::table(&mut o, &cells);
        } else {
            crate::report::text::table(&mut o, &cells);
        }
        h(&mut o, 3, "The report's claims");
        for v in &e.verdicts {
            let _ = writeln!(
                o,
                "{} {} → {} (reported {:+.1}%): {}.",
                if md { "-" } else { "*" },
                v.from,
                v.to,
                v.reported_pct,
                v.finding
            );
            let _ = writeln!(o, "  {}", v.sentence);
        }
        o.push('\n');
    }
    if !r.missing.is_empty() {
        h(&mut o, 2, "Not measured");
        for (t, why) in &r.missing {
            let _ = writeln!(o, "{} {t}: {why}", if md { "-" } else { "*" });
        }
        o.push('\n');
    }
    h(&mut o, 2, "Environment");
    for (k, v) in crate::report::environment_lines(m) {
        let _ = writeln!(o, "{}{k}: {v}", if md { "- " } else { "" });
    }
    o
}
