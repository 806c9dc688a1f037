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
pub mod site;
pub mod svg;
pub mod text;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

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

/// `run --summary-json`: one object per (engine, tag, workload); names are a script interface.
#[derive(Debug, serde::Serialize)]
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
