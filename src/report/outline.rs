//! One outline for every human format (hyperfine's markup-table idea): headings,
//! paragraphs, lists and tables. Markdown and text lay out the same blocks; the report
//! and the ITS#10406 page are both built as outlines.

use super::cells::{self, label, num, Cells};
use super::extras::{Cell, ExtraPart, ExtraTable};
use super::model::ReportModel;
use crate::runner::runfile::Engine;
use crate::workload::Workload;

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Level 1 is the document's title.
    Heading(u8, String),
    Paragraph(String),
    /// A quoted warning ("partial run").
    Note(String),
    List(Vec<String>),
    /// Key: value lines.
    Pairs(Vec<(String, String)>),
    Table(Cells),
    /// A chart of the model, drawn where a format can draw (HTML); Markdown and text
    /// leave it out.
    Chart(Chart),
}

/// Which of the model's charts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chart {
    /// One section's.
    Section(Engine, Workload),
    /// One of the extra content's ([`super::extras::Extras::charts`]).
    Extra(usize),
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub blocks: Vec<Block>,
}

impl Document {
    pub fn heading(&mut self, level: u8, t: impl Into<String>) {
        self.blocks.push(Block::Heading(level, t.into()));
    }

    pub fn para(&mut self, t: impl Into<String>) {
        self.blocks.push(Block::Paragraph(t.into()));
    }

    pub fn list(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
    }

    pub fn table(&mut self, c: Cells) {
        self.blocks.push(Block::Table(c));
    }

    pub fn chart(&mut self, engine: Engine, workload: Workload) {
        self.blocks.push(Block::Chart(Chart::Section(engine, workload)));
    }

    /// One part of the model's extra content: its heading, what it shows, each table under
    /// its own heading with its chart, then its notes.
    pub fn extra_part(&mut self, m: &ReportModel, part: &ExtraPart) {
        self.heading(1, part.title.as_str());
        self.para(part.about.as_str());
        for t in &part.tables {
            self.heading(2, t.heading.as_str());
            self.table(extra_cells(m, t));
            if let Some(i) = t.chart {
                self.blocks.push(Block::Chart(Chart::Extra(i)));
            }
        }
        self.list(part.notes.iter().map(|(tag, words)| format!("{} {words}", label(m.label(tag)))).collect());
    }

    /// The environment, the builds and the method: the tail every report carries.
    pub fn environment(&mut self, m: &ReportModel) {
        self.heading(2, "Test Environment");
        self.blocks.push(Block::Pairs(cells::environment_lines(m)));
        self.heading(3, "Builds");
        self.table(cells::provenance_cells(m));
    }
}

/// An extra table's cells: tags as labels (the newest marked), figures with the report's decimals.
fn extra_cells(m: &ReportModel, t: &ExtraTable) -> Cells {
    let mut c = Cells::new(&t.columns.iter().map(String::as_str).collect::<Vec<_>>(), 0, 1);
    for row in &t.rows {
        let newest = row.iter().any(|x| matches!(x, Cell::Tag(tag) if m.newest.as_deref() == Some(tag.as_str())));
        let cells = row.iter().map(|x| match x {
            Cell::Tag(tag) => label(m.label(tag)),
            Cell::Num(v) => num(*v),
            Cell::Text(s) => s.clone(),
        });
        c.push(cells.collect(), newest);
    }
    c
}

/// The report: ranked tables, baseline tables, overhead, problems, method, environment.
pub fn report(m: &ReportModel) -> Document {
    let mut d = Document::default();
    d.heading(1, "LMDB Library Performance Analysis");
    if m.partial() {
        d.blocks.push(Block::Note("Partial run: interrupted; figures cover the rounds completed.".into()));
    }
    let newest = m.newest.as_deref().map(|n| format!(" The newest tag ({n}) is marked.")).unwrap_or_default();
    d.para(if m.rule.counts {
        format!(
            "Each workload's tags ranked by {} (exact counts; smaller is less work): \"vs Fastest\" \
             is each tag's count against the fewest.{newest}",
            m.units_in_words()
        )
    } else {
        format!(
            "Each workload's tags ranked by one estimator, the Hodges-Lehmann estimate of the \
             per-round ratio (smaller is faster): the fastest is the tag no other beats by it, \
             \"vs Fastest\" is each tag's estimate against the fastest, and rows go by rank, then \
             by that estimate. The median {}, its ± (the half-width of the median's 95% interval) \
             and min describe each tag alone and may order differently.{newest}",
            m.units_in_words()
        )
    });
    for p in &m.extras.intro {
        d.para(p.as_str());
    }
    if let Some(study) = &m.plan.layout_study {
        d.heading(1, "Layout sensitivity");
        d.para(format!(
            "{} under {} code layouts of one build (lld's seeded shuffle of its functions), each \
             measured in every round with the same layout. Layout spread: how much identical code \
             moves between layouts on this machine, beyond the per-sample noise; the tables below \
             rank the layouts.",
            label(m.label(&study.tag)),
            study.layouts.len()
        ));
        d.table(cells::layout_study_cells(m));
    }
    for s in &m.sections {
        d.heading(2, m.section_title(s));
        d.table(cells::ranked_cells(m, s));
        d.chart(s.engine, s.workload);
        d.list(cells::section_notes(m, s));
    }
    if m.sections.iter().any(|s| !s.vs_baseline.is_empty()) {
        d.heading(1, format!("Against {}", m.baseline));
    }
    for s in m.sections.iter().filter(|s| !s.vs_baseline.is_empty()) {
        d.heading(2, m.section_title(s));
        d.table(cells::baseline_cells(m, s));
    }
    for part in &m.extras.parts {
        d.extra_part(m, part);
    }
    if !m.toolchains.is_empty() {
        d.heading(1, "Toolchains");
        d.para(
            "Each tag built by several toolchains: every workload's builds against the reference \
             toolchain's build of the same tag, in the same rounds; intervals simultaneous at 95% per table.",
        );
    }
    for t in &m.toolchains {
        d.heading(2, format!("{} (reference: {})", label(m.label(&t.tag)), t.reference));
        d.table(cells::toolchain_cells(m, t));
    }
    if !m.overhead.is_empty() {
        d.heading(1, "Harness overhead (Rust / C)");
        d.para(
            "The Rust harness against its plain-C twin on the same tags, in the same rounds; 1.000 means no overhead.",
        );
        d.table(cells::overhead_cells(m));
    }
    let problems = cells::problem_lines(m);
    if !problems.is_empty() {
        d.heading(1, "Problems");
        d.list(problems);
    }
    d.heading(1, "Method");
    d.list(cells::method_lines(m));
    d.environment(m);
    d
}
