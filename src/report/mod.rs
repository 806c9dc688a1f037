//! How results are shown: one model ([`model`]), one outline of headings, paragraphs and
//! tables ([`outline`], its cells from [`cells`]), one trait ([`Exporter`]), one file per
//! format. Markdown, text and HTML lay out the same outline (HTML with the SVG charts
//! inline); JSON, CSV and SVG render the model.

pub mod cells;
pub mod charts;
pub mod checksums;
pub mod compare;
pub mod coverage;
pub mod csv;
pub mod document;
pub mod explain;
pub mod extras;
pub mod findings;
pub mod flame;
pub mod gate;
pub mod github;
pub mod history;
pub mod html;
pub mod json;
pub mod markdown;
pub mod method;
pub mod model;
pub mod names;
pub mod numbers;
pub mod outline;
pub mod presets;
pub mod renamed;
pub mod site;
pub mod summary;
pub mod svg;
pub mod text;
pub mod trend;

use std::path::{Path, PathBuf};

use anyhow::Result;

use model::ReportModel;
pub use summary::{summary_json, SummaryRow};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Markdown,
    Text,
    Json,
    Csv,
    Svg,
    Html,
    /// One Markdown document for a pull request's comment or a job's summary.
    Github,
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
        Format::Github => Box::new(github::Github::default()),
    }
}

impl Format {
    /// Whether the format is always one document: CSV is two tables (summaries and
    /// samples, more for a preset), SVG one chart per workload.
    pub fn single_document(self) -> bool {
        !matches!(self, Format::Csv | Format::Svg)
    }

    /// The file name extension of its one document (github's is Markdown, apart from
    /// markdown's own file).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Github => "github.md",
            Format::Text => "txt",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Svg => "svg",
            Format::Html => "html",
        }
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
            "--format {} makes several files ({}), which stdout cannot hold as one document; add --out-dir DIR to write them",
            f.name(),
            if *f == Format::Csv { "-summary.csv and -samples.csv" } else { "one .svg per workload" }
        ),
        several => anyhow::bail!(
            "--format {} names {} formats, and stdout holds one document; print one format at a time, or add --out-dir DIR to write every one",
            several.iter().map(|f| f.name()).collect::<Vec<_>>().join(","),
            several.len()
        ),
    }
}

/// `f`'s exporter, `--format github` with what it says beyond the report.
fn exporter_with(f: Format, github: &github::Github) -> Box<dyn Exporter> {
    match f {
        Format::Github => Box::new(github.clone()),
        f => exporter(f),
    }
}

/// A single-document format's output, for stdout.
pub fn render(m: &ReportModel, f: Format) -> Result<Vec<u8>> {
    render_with(m, f, &github::Github::default())
}

/// [`render`], `--format github` given its gate and links.
pub fn render_with(m: &ReportModel, f: Format, github: &github::Github) -> Result<Vec<u8>> {
    let mut outputs = exporter_with(f, github).export(m)?;
    anyhow::ensure!(outputs.len() == 1, "{} gave {} documents where one was expected", f.name(), outputs.len());
    Ok(outputs.remove(0).bytes)
}

/// Each format once, in the order first named (`--format json,json` is one JSON file).
pub fn distinct(formats: &[Format]) -> Vec<Format> {
    let mut out: Vec<Format> = Vec::new();
    for f in formats {
        if !out.contains(f) {
            out.push(*f);
        }
    }
    out
}

/// Every output of each format (named once, see [`distinct`]), rendered, as the file
/// `<dir>/<stem><suffix>` it is to be written to.
pub fn files_of(m: &ReportModel, formats: &[Format], dir: &Path, stem: &str) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    files_of_with(m, formats, dir, stem, &github::Github::default())
}

/// [`files_of`], `--format github` given its gate and links.
pub fn files_of_with(
    m: &ReportModel,
    formats: &[Format],
    dir: &Path,
    stem: &str,
    github: &github::Github,
) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut outputs = Vec::new();
    for f in distinct(formats) {
        for o in exporter_with(f, github).export(m)? {
            outputs.push((dir.join(format!("{stem}{}", o.suffix)), o.bytes));
        }
    }
    Ok(outputs)
}

/// Any command's document in a single-document human format: Markdown, text, HTML (its
/// charts drawn from `m`, when the document has any) and github are each written once, for
/// every command. JSON, CSV and SVG render a model, not a document: refused here, each
/// command that has them renders them itself.
pub fn render_document(
    d: &outline::Document,
    f: Format,
    github: &github::Github,
    m: Option<&ReportModel>,
) -> Result<String> {
    match f {
        Format::Markdown => Ok(markdown::render_document(d)),
        Format::Text => Ok(text::render_document(d)),
        Format::Html => html::render_document(d, m),
        Format::Github => Ok(github.render_document(d)),
        Format::Json | Format::Csv | Format::Svg => {
            anyhow::bail!("--format {} is not one of this command's: give markdown, text, html or github", f.name())
        }
    }
}

/// `s` in `f`: JSON from its fields, the rest from its outline; CSV and SVG are refused.
pub fn render_shown<S: document::Shown>(s: &S, f: Format, github: &github::Github) -> Result<String> {
    document::refuse_unshown(f)?;
    if f == Format::Json {
        return document::json(s);
    }
    let d = s.outline();
    match f {
        Format::Html => Ok(html::render_items(&s.html_items(&d)?)),
        f => render_document(&d, f, github, None),
    }
}
