//! GitHub-flavoured Markdown, shaped like LmdbJava's "LMDB Library Performance Analysis".

use std::fmt::Write;

use anyhow::Result;

use super::model::ReportModel;
use super::{Cells, Exporter, Output};

pub struct Markdown;

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn table(out: &mut String, c: &Cells) {
    let tag_col = c.tag_col;
    let _ = writeln!(out, "| {} |", c.header.iter().map(|h| escape(h)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(
        out,
        "|{}|",
        c.header
            .iter()
            .enumerate()
            .map(|(i, _)| if i < c.text_cols { ":---" } else { "---:" })
            .collect::<Vec<_>>()
            .join("|")
    );
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

pub fn render(m: &ReportModel) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# LMDB Library Performance Analysis\n");
    if m.partial() {
        let _ = writeln!(o, "> **Partial run**: the run was interrupted; figures cover the rounds completed.\n");
    }
    let _ = writeln!(
        o,
        "Each workload's tags ranked by median {} (smaller is better), with the difference from the fastest. \
         ± is the half-width of the median's 95% interval; `~` marks differences that are not significant (Mann-Whitney U, p ≥ 0.05).{}\n",
        m.unit.label,
        m.newest.as_deref().map(|n| format!(" The newest tag ({n}) is in bold.")).unwrap_or_default()
    );
    for s in &m.sections {
        let _ = writeln!(o, "## {}\n", m.section_title(s));
        table(&mut o, &super::ranked_cells(m, s));
    }
    if m.sections.iter().any(|s| !s.vs_baseline.is_empty()) {
        let _ = writeln!(o, "# Against {}\n", m.baseline);
    }
    for s in m.sections.iter().filter(|s| !s.vs_baseline.is_empty()) {
        let _ = writeln!(o, "## {}\n", m.section_title(s));
        table(&mut o, &super::baseline_cells(m, s));
    }
    if !m.overhead.is_empty() {
        let _ = writeln!(o, "# Harness overhead (Rust / C)\n");
        let _ = writeln!(o, "The Rust harness against its plain-C twin on the same tags, in the same rounds; 1.000 means no overhead.\n");
        table(&mut o, &super::overhead_cells(m));
    }
    let problems = super::problem_lines(m);
    if !problems.is_empty() {
        let _ = writeln!(o, "# Problems\n");
        for p in problems {
            let _ = writeln!(o, "- {}", escape(&p));
        }
        o.push('\n');
    }
    let _ = writeln!(o, "# Test Environment\n");
    let _ = writeln!(o, "| | |\n|:---|:---|");
    for (k, v) in super::environment_lines(m) {
        let _ = writeln!(o, "| {} | {} |", escape(&k), escape(&v));
    }
    o.push('\n');
    let _ = writeln!(o, "## Builds\n");
    table(&mut o, &super::provenance_cells(m));
    o
}

impl Exporter for Markdown {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".md".into(), bytes: render(m).into_bytes() }])
    }
}
