//! How results are shown: one model ([`model`]), one trait ([`Exporter`]), one file per
//! format. Cell contents are computed here once; formats only lay them out.

pub mod compare;
pub mod csv;
pub mod json;
pub mod markdown;
pub mod model;
pub mod svg;
pub mod text;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::stats::{Comparison, Summary};
use model::{ReportModel, Section};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Markdown,
    Text,
    Json,
    Csv,
    Svg,
}

/// One file an exporter produces: `suffix` is appended to the report's stem.
pub struct Output {
    pub suffix: String,
    pub bytes: Vec<u8>,
}

pub trait Exporter {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>>;
}

pub fn exporter(f: Format) -> Box<dyn Exporter> {
    match f {
        Format::Markdown => Box::new(markdown::Markdown),
        Format::Text => Box::new(text::Text),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
        Format::Svg => Box::new(svg::Svg),
    }
}

/// All of a format's outputs concatenated, for stdout.
pub fn render(m: &ReportModel, f: Format) -> Result<Vec<u8>> {
    Ok(exporter(f).export(m)?.into_iter().flat_map(|o| o.bytes).collect())
}

/// Writes every output of every format as `<dir>/<stem><suffix>`; returns the paths.
pub fn write_all(m: &ReportModel, formats: &[Format], dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut paths = Vec::new();
    for &f in formats {
        for o in exporter(f).export(m)? {
            let p = dir.join(format!("{stem}{}", o.suffix));
            std::fs::write(&p, &o.bytes).with_context(|| format!("cannot write {}", p.display()))?;
            paths.push(p);
        }
    }
    Ok(paths)
}

// ---- cell contents shared by the human formats ----

pub fn num(v: f64) -> String {
    format!("{v:.3}")
}

/// "±0.123" from the median's interval, "±n/a" below six samples.
pub fn plus_minus(s: &Summary) -> String {
    match s.median_ci {
        Some(ci) => format!("±{:.3}", ci.half_width()),
        None => "±n/a".into(),
    }
}

pub fn percent(p: f64) -> String {
    format!("{p:+.1}%")
}

pub fn delta(c: &Comparison) -> String {
    percent(c.delta_percent())
}

pub fn delta_interval(c: &Comparison) -> String {
    match c.ratio_ci {
        Some(ci) => format!("[{}, {}]", percent(100.0 * (ci.lo - 1.0)), percent(100.0 * (ci.hi - 1.0))),
        None => "n/a".into(),
    }
}

/// benchstat's mark: the p-value, and "~" when the difference is not significant.
pub fn significance(c: &Comparison) -> String {
    match c.p_value() {
        Some(p) if c.significant => format!("p={}", fmt_p(p)),
        Some(p) => format!("~ (p={})", fmt_p(p)),
        None => "~ (no test)".into(),
    }
}

/// Instruction counts repeat exactly, so a rank test over a few of them says nothing:
/// their cells say "counts" instead of a p-value.
pub fn significance_in(m: &ReportModel, c: &Comparison) -> String {
    match m.unit.metric {
        crate::runner::runfile::Metric::Instructions => "counts".into(),
        crate::runner::runfile::Metric::Time => significance(c),
    }
}

pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A table as header and rows of plain cells, plus which rows to highlight.
pub struct Cells {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub highlight: Vec<bool>,
    /// The column holding the tag (highlighted for the newest tag).
    pub tag_col: usize,
    /// Columns before this one are text (left-aligned); the rest are figures.
    pub text_cols: usize,
}

pub fn ranked_cells(m: &ReportModel, s: &Section) -> Cells {
    let mut c = Cells {
        header: ["Rank", "LMDB Tag", m.unit.label, "±", "min", "vs Fastest", "95% CI", "vs Fastest sig.", "n"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
        highlight: Vec::new(),
        tag_col: 1,
        text_cols: 2,
    };
    let beside_time = m.unit.metric != crate::runner::runfile::Metric::Time;
    if beside_time {
        c.header.push("time ms/op".into());
    }
    for r in &s.ranked {
        let (d, ci, sig) = match &r.vs_fastest {
            None => ("baseline".into(), String::new(), String::new()),
            Some(cmp) => (delta(cmp), delta_interval(cmp), significance_in(m, cmp)),
        };
        c.rows.push(vec![
            r.rank.to_string(),
            r.tag.clone(),
            num(r.summary.median),
            plus_minus(&r.summary),
            num(r.summary.min),
            d,
            ci,
            sig,
            r.summary.n.to_string(),
        ]);
        if beside_time {
            c.rows.last_mut().unwrap().push(r.time.as_ref().map(|t| num(t.median)).unwrap_or_default());
        }
        c.highlight.push(m.newest.as_deref() == Some(r.tag.as_str()));
    }
    c
}

pub fn short_tag(t: &str) -> &str {
    t.strip_prefix("LMDB_").unwrap_or(t)
}

pub fn baseline_cells(m: &ReportModel, s: &Section) -> Cells {
    let vs = format!("vs {}", short_tag(&m.baseline));
    let mut c = Cells {
        header: ["Tag", m.unit.label, "±", &vs, "95% CI", "p", "n"].map(String::from).to_vec(),
        rows: Vec::new(),
        highlight: Vec::new(),
        tag_col: 0,
        text_cols: 1,
    };
    for r in &s.vs_baseline {
        let (d, ci, sig) = match &r.vs_baseline {
            None => ("baseline".into(), String::new(), String::new()),
            Some(cmp) => (delta(cmp), delta_interval(cmp), significance_in(m, cmp)),
        };
        c.rows.push(vec![
            r.tag.clone(),
            num(r.summary.median),
            plus_minus(&r.summary),
            d,
            ci,
            sig,
            r.summary.n.to_string(),
        ]);
        c.highlight.push(m.newest.as_deref() == Some(r.tag.as_str()));
    }
    c
}

pub fn provenance_cells(m: &ReportModel) -> Cells {
    let mut c = Cells {
        header: ["Tag", "status", "sources", "match", "compiler", "flags"].map(String::from).to_vec(),
        rows: Vec::new(),
        highlight: Vec::new(),
        tag_col: 0,
        text_cols: 6,
    };
    for t in &m.tags {
        let b = t.builds.first();
        c.rows.push(vec![
            t.tag.clone(),
            serde_json::to_value(t.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            // Why a tag is missing is told under Problems, in full.
            t.provenance.clone().unwrap_or_else(|| "-".into()),
            t.matches.map(|x| x.to_string()).unwrap_or_default(),
            b.map(|b| b.toolchain.version.clone()).unwrap_or_default(),
            b.map(|b| b.toolchain.cflags.join(" ")).unwrap_or_default(),
        ]);
        c.highlight.push(false);
    }
    c
}

/// Rust / C per workload and tag; empty unless both engines ran.
pub fn overhead_cells(m: &ReportModel) -> Cells {
    let mut c = Cells {
        header: ["Workload", "LMDB Tag", "Rust", "C", "Rust / C", "95% CI", "p"].map(String::from).to_vec(),
        rows: Vec::new(),
        highlight: Vec::new(),
        tag_col: 1,
        text_cols: 2,
    };
    for r in &m.overhead {
        c.rows.push(vec![
            r.workload.to_string(),
            r.tag.clone(),
            format!("{} {}", num(r.rust.median), plus_minus(&r.rust)),
            format!("{} {}", num(r.c.median), plus_minus(&r.c)),
            format!("{:.3}", r.ratio.ratio),
            r.ratio.ratio_ci.map(|i| format!("[{:.3}, {:.3}]", i.lo, i.hi)).unwrap_or_else(|| "n/a".into()),
            significance_in(m, &r.ratio),
        ]);
        c.highlight.push(false);
    }
    c
}

/// The environment block every human format carries.
pub fn environment_lines(m: &ReportModel) -> Vec<(String, String)> {
    let e = &m.environment;
    let cfg = &m.config;
    let mut v = vec![
        ("CPU".into(), format!("{} ({} cores)", e.cpu_model, e.cores)),
        ("Frequency governor".into(), e.governor.clone().unwrap_or_else(|| "not readable".into())),
        ("Kernel".into(), e.kernel.clone()),
        ("OS".into(), e.os.clone()),
        ("Harness".into(), format!("lmdb-regress {}", e.harness_version)),
        ("Date".into(), e.date.clone()),
        ("Command".into(), e.command_line.join(" ")),
        (
            "Workload".into(),
            format!(
                "{} entries, {:?} keys, {}-byte {:?} values, {:?} order, {}{}map {} bytes, seed {}",
                cfg.entries,
                cfg.keys,
                cfg.value_size,
                cfg.values,
                cfg.order,
                if cfg.no_writemap { "" } else { "MDB_WRITEMAP, " },
                if cfg.sync { "" } else { "MDB_NOSYNC, " },
                cfg.effective_map_size(),
                cfg.seed
            )
            .to_lowercase(),
        ),
        (
            "Plan".into(),
            format!(
                "{} warm-up + {} rounds planned, {} timed repetition(s) per worker; ended: {}",
                m.plan.warmup,
                m.plan.rounds,
                m.plan.iterations,
                m.end.as_ref().map(|e| format!("{} after {} rounds", e.reason, e.rounds)).unwrap_or_else(|| "cut off (partial run)".into())
            ),
        ),
        ("Statistics".into(), "median with 95% order-statistic interval; deltas are ratios of medians with propagated intervals; p from Mann-Whitney U; ~ = not significant at 0.05".into()),
    ];
    if let Some(ic) = &m.instruction_counter {
        v.push(("Instructions counted by".into(), ic.clone()));
    }
    v
}

/// Lines about failures and checksum disagreements; empty when all is well.
pub fn problem_lines(m: &ReportModel) -> Vec<String> {
    let mut out = Vec::new();
    for s in &m.sections {
        for x in &s.checksum_mismatches {
            out.push(format!(
                "CHECKSUM MISMATCH: {} {} ({} engine) read {} but the others read {}",
                x.tag, s.workload, x.engine, x.got, x.expected
            ));
        }
    }
    for f in &m.failures {
        out.push(format!(
            "{} {} {}{}: {}",
            f.tag,
            f.engine,
            f.workload.map(|w| w.to_string()).unwrap_or_else(|| f.stage.clone()),
            f.round.map(|r| format!(" (round {})", r + 1)).unwrap_or_default(),
            f.error
        ));
    }
    for t in model::unmeasured(m) {
        out.push(format!("{} not measured: {}", t.tag, t.reason.as_deref().unwrap_or("unknown")));
    }
    out
}

/// `run --summary-json`: one object per (engine, tag, workload); names are a script interface.
#[derive(Debug, Serialize)]
pub struct SummaryRow {
    pub engine: String,
    pub tag: String,
    pub workload: String,
    pub n: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub checksum: Option<String>,
    pub failures: usize,
}

pub fn summary_json(data: &crate::runner::runfile::RunData) -> Vec<SummaryRow> {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<(String, String, String), (Vec<f64>, Option<String>)> = BTreeMap::new();
    for s in &data.samples {
        let g = groups.entry((s.engine.to_string(), s.tag.clone(), s.workload.to_string())).or_default();
        g.0.push(s.ms());
        if g.1.is_none() {
            g.1 = s.checksum.map(|c| c.to_string());
        }
    }
    for f in &data.failures {
        for w in f
            .workload
            .map(|w| vec![w])
            .unwrap_or_else(|| data.header.workloads.iter().copied().filter(|w| w.is_read()).collect())
        {
            groups.entry((f.engine.to_string(), f.tag.clone(), w.to_string())).or_default();
        }
    }
    groups
        .into_iter()
        .map(|((engine, tag, workload), (xs, checksum))| {
            let s = crate::stats::summarize(&xs);
            let failures = data
                .failures
                .iter()
                .filter(|f| {
                    f.engine.to_string() == engine
                        && f.tag == tag
                        && f.workload.is_none_or(|w| w.to_string() == workload)
                })
                .count();
            SummaryRow {
                n: xs.len(),
                median_ms: s.as_ref().map(|s| s.median).unwrap_or(f64::NAN),
                min_ms: s.as_ref().map(|s| s.min).unwrap_or(f64::NAN),
                checksum,
                failures,
                engine,
                tag,
                workload,
            }
        })
        .collect()
}
