//! GitHub-flavoured Markdown, shaped like LmdbJava's "LMDB Library Performance Analysis".

use std::fmt::Write;

use anyhow::Result;

use super::cells::Cells;
use super::model::ReportModel;
use super::outline::{self, Block, Document};
use super::{Exporter, Output};

pub struct Markdown;

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn table(out: &mut String, c: &Cells) {
    let tag_col = c.tag_col;
    let _ = writeln!(out, "| {} |", c.header.iter().map(|h| escape(h)).collect::<Vec<_>>().join(" | "));
    let align: Vec<&str> = (0..c.header.len()).map(|i| if i < c.text_cols { ":---" } else { "---:" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for (row, hl) in c.rows.iter().zip(&c.highlight) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, v)| match (i == tag_col, hl) {
                (true, true) => format!("**`{}`**", escape(v)),
                (true, false) => format!("`{}`", escape(v)),
                _ => escape(v),
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
                let _ = writeln!(o, "{} {t}\n", "#".repeat(*level as usize));
            }
            Block::Paragraph(t) => {
                let _ = writeln!(o, "{}\n", escape(t));
            }
            Block::Note(t) => {
                let _ = writeln!(o, "> **{}**\n", escape(t));
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(o, "- {}", escape(i));
                }
                o.push('\n');
            }
            Block::Pairs(pairs) => {
                let _ = writeln!(o, "| | |\n|:---|:---|");
                for (k, v) in pairs {
                    let _ = writeln!(o, "| {} | {} |", escape(k), escape(v));
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
