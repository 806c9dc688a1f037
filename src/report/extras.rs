//! Content beyond the verdict tables (a preset's latencies and resources): part of the
//! one model, as data every format renders. The outline lays out its parts (headings,
//! a paragraph, tables, notes, and a chart block where a table has a chart), so Markdown,
//! text and HTML show the same; SVG draws its charts, CSV writes its data files, JSON
//! carries its rows as they are.

use super::presets::PresetReport;
use crate::record::{Engine, Label};
use crate::workload::Workload;

#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The preset's rows as JSON shows them, and what it is (the environment's workload line).
    pub preset: Option<PresetReport>,
    /// Paragraphs after the report's opening one.
    pub intro: Vec<String>,
    /// Parts after the verdict tables.
    pub parts: Vec<ExtraPart>,
    /// Charts the parts' tables name, by index.
    pub charts: Vec<ExtraChart>,
    /// Tables for scripts (CSV), each a file of its own.
    pub files: Vec<DataFile>,
}

/// A heading, what the part shows, its tables and its notes.
#[derive(Debug, Clone)]
pub struct ExtraPart {
    pub title: String,
    pub about: String,
    pub tables: Vec<ExtraTable>,
    /// Notes after the tables, each about one tag: its label, then the words.
    pub notes: Vec<(Label, String)>,
}

/// A table under its own heading; its first column names the tag.
#[derive(Debug, Clone)]
pub struct ExtraTable {
    pub heading: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// The chart of the same figures, an index into [`Extras::charts`].
    pub chart: Option<usize>,
}

impl ExtraTable {
    /// One table per workload and engine of `rows` (sorted by them), headed by the
    /// workload's title: each of `columns`, and each row's `cells`.
    pub fn by_workload<R>(
        rows: &[R],
        key: impl Fn(&R) -> (Engine, Workload),
        columns: &[&str],
        cells: impl Fn(&R) -> Vec<Cell>,
        heading: &dyn Fn(Engine, &str) -> String,
    ) -> Vec<ExtraTable> {
        let mut keys: Vec<(Engine, Workload)> = rows.iter().map(&key).collect();
        keys.dedup();
        keys.into_iter()
            .map(|(e, w)| ExtraTable {
                heading: heading(e, w.title()),
                columns: columns.iter().map(|c| c.to_string()).collect(),
                rows: rows.iter().filter(|r| key(r) == (e, w)).map(&cells).collect(),
                chart: None,
            })
            .collect()
    }
}

/// A cell as data: the formats decide how tags and figures are written.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Tag(Label),
    /// A figure, written with the report's decimals.
    Num(f64),
    /// Anything already in words ("-", "1.0", "cold not achieved").
    Text(String),
}

/// One chart of whiskers: a column per tag.
#[derive(Debug, Clone)]
pub struct ExtraChart {
    /// Appended to the report's stem when written as a file of its own.
    pub suffix: String,
    pub title: String,
    pub unit: String,
    pub columns: Vec<Whisker>,
}

/// One tag's column in a chart: a whisker from `lo` to `hi`, a dot at `mid`, a cross at `mark`.
#[derive(Debug, Clone)]
pub struct Whisker {
    pub tag: String,
    pub lo: f64,
    pub mid: f64,
    pub hi: f64,
    pub mark: f64,
    pub newest: bool,
}

/// A file for scripts: `suffix` is appended to the report's stem.
#[derive(Debug, Clone)]
pub struct DataFile {
    pub suffix: String,
    pub bytes: Vec<u8>,
}
