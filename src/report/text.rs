//! Plain fixed-width text for OpenLDAP's Bugzilla, which wraps comments at 80 columns:
//! no Markdown, every line at most 80 columns. Tables too wide are split into parts that
//! each repeat the tag column; prose is wrapped.

use std::fmt::Write;

use anyhow::Result;
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table};

use super::cells::Cells;
use super::model::ReportModel;
use super::names::plain;
use super::outline::{self, Block, Document};
use super::{Exporter, Output};

pub struct Text;

/// Bugzilla's comment width.
pub const WIDTH: usize = 80;
const RULE: &str = "================================================================================";
/// Top, bottom and header rules; no vertical lines, columns apart by two spaces.
const STYLE: &str = "  -- --      --    ";

fn width(s: &str) -> usize {
    s.chars().count()
}

/// The key columns (the tag's, and what else names a row) plus groups of the other
/// columns, each group fitting `WIDTH`: a part is its columns' widths plus two spaces
/// between neighbours.
fn column_groups(c: &Cells, widths: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
    if total <= WIDTH {
        return vec![(0..widths.len()).collect()];
    }
    let keys_width = c.keys.iter().map(|k| widths[*k]).sum::<usize>() + 2 * (c.keys.len() - 1);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let (mut cur, mut used) = (c.keys.clone(), keys_width);
    for i in (0..widths.len()).filter(|i| !c.keys.contains(i)) {
        if cur.len() > c.keys.len() && used + 2 + widths[i] > WIDTH {
            groups.push(std::mem::replace(&mut cur, c.keys.clone()));
            used = keys_width;
        }
        cur.push(i);
        used += 2 + widths[i];
    }
    groups.push(cur);
    // Keep each part's columns in their original order, the keys where they were.
    for g in &mut groups {
        g.sort();
    }
    groups
}

fn render_part(c: &Cells, rows: &[Vec<String>], cols: &[usize]) -> String {
    let mut out = String::new();
    let mut t = Table::new();
    t.load_preset(STYLE).set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(cols.iter().map(|i| c.header[*i].clone()));
    for r in rows {
        t.add_row(cols.iter().map(|i| r[*i].clone()));
    }
    for (k, i) in cols.iter().enumerate() {
        let col = t.column_mut(k).expect("column exists");
        // One space of padding plus comfy-table's one for the (blank) vertical line.
        col.set_padding((0, if k + 1 == cols.len() { 0 } else { 1 }));
        col.set_cell_alignment(if *i < c.text_cols { CellAlignment::Left } else { CellAlignment::Right });
        col.set_constraint(ColumnConstraint::ContentWidth);
    }
    for line in t.lines() {
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push('\n');
    out
}

/// A table in as many parts as 80 columns need; the newest tag gets " *".
pub fn table(out: &mut String, c: &Cells) {
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .zip(&c.highlight)
        .map(|(r, hl)| {
            let mark =
                |(i, v): (usize, &String)| if i == c.tag_col && *hl { format!("{} *", plain(v)) } else { plain(v) };
            r.iter().enumerate().map(mark).collect()
        })
        .collect();
    let widths: Vec<usize> = (0..c.header.len())
        .map(|i| rows.iter().map(|r| width(&r[i])).chain([width(&c.header[i])]).max().unwrap_or(0))
        .collect();
    for cols in column_groups(c, &widths) {
        out.push_str(&render_part(c, &rows, &cols));
    }
}

fn wrap(out: &mut String, text: &str, first: &str, rest: &str) {
    // Lines break at spaces, never inside "new/old", a path or a hyphenated word; only a
    // word longer than a whole line is cut.
    let opts = textwrap::Options::new(WIDTH)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(true)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    for line in textwrap::wrap(text, opts) {
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

pub fn render_document(d: &Document) -> String {
    let mut o = String::new();
    for b in &d.blocks {
        match b {
            Block::Heading(1, t) => {
                let _ = writeln!(o, "{RULE}");
                wrap(&mut o, &plain(t).to_uppercase(), "", "");
                let _ = writeln!(o, "{RULE}\n");
            }
            Block::Heading(_, t) => {
                let t = plain(t);
                wrap(&mut o, &t, "", "");
                let _ = writeln!(o, "{}", "-".repeat(width(&t).min(WIDTH)));
            }
            Block::Paragraph(t) => {
                wrap(&mut o, &plain(t), "", "");
                o.push('\n');
            }
            Block::Note(t) => {
                wrap(&mut o, &plain(t), "!! ", "   ");
                o.push('\n');
            }
            Block::List(items) => {
                for i in items {
                    wrap(&mut o, &plain(i), "- ", "  ");
                }
                o.push('\n');
            }
            Block::Pairs(pairs) => {
                let w = pairs.iter().map(|(k, _)| width(k)).max().unwrap_or(0).min(24);
                for (k, v) in pairs {
                    let first = format!("{k:<w$}  ");
                    wrap(&mut o, &plain(v), &first, &" ".repeat(w + 2));
                }
                o.push('\n');
            }
            Block::Table(c) => table(&mut o, c),
            Block::Code(lines) => {
                for l in lines {
                    let _ = writeln!(o, "{}", l.trim_end());
                }
                o.push('\n');
            }
            Block::Chart(..) | Block::Contents => {}
        }
    }
    o
}

pub fn render(m: &ReportModel) -> String {
    render_document(&outline::report(m))
}

impl Exporter for Text {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".txt".into(), bytes: render(m).into_bytes() }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_table_is_split_and_repeats_the_tag() {
        let mut c = Cells::new(&["Tag", "a", "b", "c"], 0, 1);
        c.push(vec!["LMDB_0.9.33".into(), "x".repeat(40), "y".repeat(30), "z".repeat(30)], true);
        let mut o = String::new();
        table(&mut o, &c);
        assert!(o.lines().all(|l| width(l) <= WIDTH), "{o}");
        assert_eq!(o.matches("LMDB_0.9.33 *").count(), 2, "{o}");
        assert!(o.contains(&"z".repeat(30)));
    }

    /// A row the tag alone does not name (the overhead table's workload and tag) keeps
    /// every key column in every part.
    #[test]
    fn every_part_repeats_every_key_column() {
        let mut c = Cells::new(&["Workload", "Tag", "a", "b", "c"], 1, 2);
        c.keys = vec![0, 1];
        c.push(vec!["readXxh64".into(), "LMDB_0.9.33".into(), "x".repeat(30), "y".repeat(30), "z".repeat(30)], false);
        let mut o = String::new();
        table(&mut o, &c);
        assert!(o.lines().all(|l| width(l) <= WIDTH), "{o}");
        for figures in ["x", "y", "z"].map(|f| f.repeat(30)) {
            let row = o.lines().find(|l| l.contains(&figures)).unwrap();
            assert!(row.starts_with("readXxh64  LMDB_0.9.33"), "{o}");
        }
    }

    #[test]
    fn parts_fit_exactly_whatever_the_widths() {
        for n in 1..40 {
            let cols = 2 + n % 9;
            let mut c = Cells::new(&vec!["h"; cols], 0, 1);
            let row: Vec<String> = (0..cols).map(|i| "x".repeat(1 + (n * 7 + i * 13) % 30)).collect();
            c.push(row, n % 2 == 0);
            let mut o = String::new();
            table(&mut o, &c);
            assert!(o.lines().all(|l| width(l) <= WIDTH), "{o}");
            // Nothing is lost: every cell is printed.
            assert!(c.rows[0].iter().all(|v| o.contains(v.as_str())));
        }
    }

    #[test]
    fn prose_is_wrapped() {
        let mut d = Document::default();
        d.para("word ".repeat(60));
        d.blocks.push(Block::Pairs(vec![("Command".into(), "x ".repeat(70))]));
        let o = render_document(&d);
        assert!(o.lines().all(|l| width(l) <= WIDTH), "{o}");
    }
}
