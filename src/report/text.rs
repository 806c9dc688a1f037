//! Plain fixed-width text for OpenLDAP's Bugzilla: no Markdown, nothing wider than needed.

use std::fmt::Write;

use anyhow::Result;

use super::model::ReportModel;
use super::{Cells, Exporter, Output};

pub struct Text;

const RULE: &str = "==============================================";

/// Left-aligned first columns up to `left`, the rest right-aligned; the newest tag gets " *".
pub fn table(out: &mut String, c: &Cells) {
    let tag_col = c.tag_col;
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .zip(&c.highlight)
        .map(|(r, hl)| {
            r.iter().enumerate().map(|(i, v)| if i == tag_col && *hl { format!("{v} *") } else { v.clone() }).collect()
        })
        .collect();
    let widths: Vec<usize> = (0..c.header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([c.header[i].chars().count()]).max().unwrap_or(0))
        .collect();
    let line =
        |cells: &[String]| -> String {
            cells
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    if i < c.text_cols {
                        format!("{v:<w$}", w = widths[i])
                    } else {
                        format!("{v:>w$}", w = widths[i])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
    let total = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    let _ = writeln!(out, "{}", "-".repeat(total));
    let _ = writeln!(out, "{}", line(&c.header));
    let _ = writeln!(out, "{}", "-".repeat(total));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    let _ = writeln!(out, "{}\n", "-".repeat(total));
}

pub fn render(m: &ReportModel) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{RULE}\nLMDB LIBRARY PERFORMANCE ANALYSIS (lmdb-regress, native)\n{RULE}");
    if m.partial() {
        let _ = writeln!(o, "PARTIAL RUN: interrupted; figures cover the rounds completed.");
    }
    let _ = writeln!(
        o,
        "Median {} per tag (smaller is better). +- is the half-width of the\nmedian's 95% interval; ~ marks a difference that is not significant\n(Mann-Whitney U, p >= 0.05).{}\n",
        m.unit.label,
        m.newest.as_deref().map(|n| format!(" * marks the newest tag, {n}.")).unwrap_or_default()
    );
    for s in &m.sections {
        let _ = writeln!(o, "{}", m.section_title(s));
        table(&mut o, &super::ranked_cells(m, s));
    }
    if m.sections.iter().any(|s| !s.vs_baseline.is_empty()) {
        let _ = writeln!(o, "{RULE}\nAGAINST {}\n{RULE}", m.baseline);
    }
    for s in m.sections.iter().filter(|s| !s.vs_baseline.is_empty()) {
        let _ = writeln!(o, "{}", m.section_title(s));
        table(&mut o, &super::baseline_cells(m, s));
    }
    if !m.overhead.is_empty() {
        let _ = writeln!(o, "{RULE}\nHARNESS OVERHEAD (RUST / C, 1.000 = none)\n{RULE}");
        table(&mut o, &super::overhead_cells(m));
    }
    let problems = super::problem_lines(m);
    if !problems.is_empty() {
        let _ = writeln!(o, "{RULE}\nPROBLEMS\n{RULE}");
        for p in problems {
            let _ = writeln!(o, "- {p}");
        }
        o.push('\n');
    }
    let _ = writeln!(o, "{RULE}\nTEST ENVIRONMENT\n{RULE}");
    let lines = super::environment_lines(m);
    let w = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in lines {
        let _ = writeln!(o, "{k:<w$}  {v}");
    }
    o.push('\n');
    let _ = writeln!(o, "BUILDS");
    table(&mut o, &super::provenance_cells(m));
    o
}

impl Exporter for Text {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".txt".into(), bytes: render(m).into_bytes() }])
    }
}
