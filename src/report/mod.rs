//! How results are shown: one model ([`model`]), one outline of headings, paragraphs and
//! tables ([`outline`], its cells from [`cells`]), one trait ([`Exporter`]), one file per
//! format. Markdown, text and HTML lay out the same outline (HTML with the SVG charts
//! inline); JSON, CSV and SVG render the model.

pub mod cells;
pub mod compare;
pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod outline;
pub mod presets;
pub mod site;
pub mod svg;
pub mod text;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::files::Existing;
use model::ReportModel;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Markdown,
    Text,
    Json,
    Csv,
    Svg,
    Html,
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
        Format::Html => Box::new(html::Html),
    }
}

impl Format {
    /// Whether the format is always one document: CSV is two tables (summaries and
    /// samples, more for a preset), SVG one chart per workload.
    pub fn single_document(self) -> bool {
        !matches!(self, Format::Csv | Format::Svg)
    }

    /// The name `--format` takes.
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self).map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

/// The one format stdout can take: stdout holds one valid document, so several formats,
/// or a format of several documents, are refused with the option that writes them.
pub fn stdout_format(formats: &[Format]) -> Result<Format> {
    match formats {
        [f] if f.single_document() => Ok(*f),
        [f] => anyhow::bail!(
            "--format {} makes several files ({}), which stdout cannot hold as one document;              add --out-dir DIR to write them",
            f.name(),
            if *f == Format::Csv { "-summary.csv and -samples.csv" } else { "one .svg per workload" }
        ),
        several => anyhow::bail!(
            "--format {} names {} formats, and stdout holds one document; print one format              at a time, or add --out-dir DIR to write every one",
            several.iter().map(|f| f.name()).collect::<Vec<_>>().join(","),
            several.len()
        ),
    }
}

/// A single-document format's output, for stdout.
pub fn render(m: &ReportModel, f: Format) -> Result<Vec<u8>> {
    let mut outputs = exporter(f).export(m)?;
    anyhow::ensure!(outputs.len() == 1, "{} gave {} documents where one was expected", f.name(), outputs.len());
    Ok(outputs.remove(0).bytes)
}

/// Writes every output of every format as `<dir>/<stem><suffix>`, each atomically, after
/// all are rendered; an existing file is replaced only when `existing` says so, and then
/// none is written. Returns the paths.
pub fn write_all(
    m: &ReportModel,
    formats: &[Format],
    dir: &Path,
    stem: &str,
    existing: Existing,
) -> Result<Vec<PathBuf>> {
    let mut outputs = Vec::new();
    for &f in formats {
        for o in exporter(f).export(m)? {
            outputs.push((dir.join(format!("{stem}{}", o.suffix)), o.bytes));
        }
    }
    crate::files::write_each(&outputs, existing)?;
    Ok(outputs.into_iter().map(|(p, _)| p).collect())
}

/// `run --summary-json`: one object per (engine, tag, workload); names are a script interface.
/// Times are those of the timed rounds (null in an instruction run, where they were taken
/// under the counter); counts come from the instruction run or the counting pass.
#[derive(Debug, serde::Serialize)]
pub struct SummaryRow {
    pub engine: String,
    pub tag: String,
    pub workload: String,
    /// Samples in the run's metric.
    pub n: usize,
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    /// Instructions of the whole timed region, and per entry.
    pub median_instructions: Option<f64>,
    pub instructions_per_entry: Option<f64>,
    pub checksum: Option<String>,
    pub failures: usize,
}

/// One group's samples: times, and counts with the entries they covered.
#[derive(Default)]
struct SummaryGroup {
    ms: Vec<f64>,
    counts: Vec<(f64, u32)>,
    checksum: Option<String>,
}

pub fn summary_json(data: &crate::runner::runfile::RunData) -> Vec<SummaryRow> {
    use crate::runner::runfile::Metric;
    use std::collections::BTreeMap;
    let timed = data.header.plan.metric == Metric::Time;
    let mut groups: BTreeMap<(String, String, String), SummaryGroup> = BTreeMap::new();
    for s in &data.samples {
        let g = groups.entry((s.engine.to_string(), s.tag.clone(), s.workload.to_string())).or_default();
        if timed && !s.counted {
            g.ms.push(s.ms());
        }
        if let Some(i) = s.instructions.filter(|_| s.counted || !timed) {
            g.counts.push((i as f64, data.entries_of(s)));
        }
        if g.checksum.is_none() && !s.counted {
            g.checksum = s.checksum.map(|c| c.to_string());
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
        .map(|((engine, tag, workload), g)| {
            let s = crate::stats::summarize(&g.ms);
            let counts: Vec<f64> = g.counts.iter().map(|c| c.0).collect();
            let per_entry: Vec<f64> = g.counts.iter().map(|(i, e)| i / f64::from((*e).max(1))).collect();
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
                n: if timed { g.ms.len() } else { counts.len() },
                median_ms: s.as_ref().map(|s| s.median),
                min_ms: s.as_ref().map(|s| s.min),
                median_instructions: (!counts.is_empty()).then(|| crate::stats::median(&counts)),
                instructions_per_entry: (!per_entry.is_empty()).then(|| crate::stats::median(&per_entry)),
                checksum: g.checksum,
                failures,
                engine,
                tag,
                workload,
            }
        })
        .collect()
}
