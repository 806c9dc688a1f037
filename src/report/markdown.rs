//! GitHub-flavoured Markdown, shaped like LmdbJava's "LMDB Library Performance Analysis".

use std::fmt::Write;

use anyhow::Result;

use super::cells::Cells;
use super::model::ReportModel;
use super::names::{self, code_span, Place};
use super::outline::{self, Block, Document};
use super::{Exporter, Output};

pub struct Markdown;

/// Our words and the names among them, in a table's cell.
fn cell(s: &str) -> String {
    names::markdown(s, Place::Cell)
}

/// Our words and the names among them, in prose.
fn prose(s: &str) -> String {
    names::markdown(s, Place::Prose)
}

pub fn table(out: &mut String, c: &Cells) {
    let tag_col = c.tag_col;
    let _ = writeln!(out, "| {} |", c.header.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    let align: Vec<&str> = (0..c.header.len()).map(|i| if i < c.text_cols { ":---" } else { "---:" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for (row, hl) in c.rows.iter().zip(&c.highlight) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, v)| match (i == tag_col, hl) {
                (true, true) => format!("**{}**", code_span(v, Place::Cell)),
                (true, false) => code_span(v, Place::Cell),
                _ => cell(v),
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

pub fn render_document(d: &Document) -> String {
    let mut o = String::new();
    for b in &d.blocks {
        match b {
            Block::Heading(level, t) => {
                let _ = writeln!(o, "{} {}\n", "#".repeat(*level as usize), prose(t));
            }
            Block::Paragraph(t) => {
                let _ = writeln!(o, "{}\n", prose(t));
            }
            Block::Note(t) => {
                let _ = writeln!(o, "> **{}**\n", prose(t));
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(o, "- {}", prose(i));
                }
                o.push('\n');
            }
            Block::Pairs(pairs) => {
                let _ = writeln!(o, "| | |\n|:---|:---|");
                for (k, v) in pairs {
                    let _ = writeln!(o, "| {} | {} |", cell(k), cell(v));
                }
                o.push('\n');
            }
            Block::Table(c) => table(&mut o, c),
            Block::Code(lines) => {
                let _ = writeln!(o, "```\n{}\n```\n", lines.join("\n"));
            }
            Block::Chart(..) | Block::Contents => {}
        }
    }
    o
}

pub fn render(m: &ReportModel) -> String {
    render_document(&outline::report(m))
}

impl Exporter for Markdown {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".md".into(), bytes: render(m).into_bytes() }])
    }
}
