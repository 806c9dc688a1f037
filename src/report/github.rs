//! `--format github`: one Markdown document for a pull request's comment or a job's summary,
//! at most [`LIMIT`] characters (GitHub's cap on a comment): the gate's verdict first, a
//! short table of what failed or warned, then the whole report collapsed in `<details>`,
//! with the machine named and the run's artifacts linked.

use std::fmt::Write as _;

use super::gate::{self, GateOutcome};
use super::model::ReportModel;
use super::names::{self, code_span, Place};
use super::outline::Document;
use super::{Exporter, Output};

/// The most characters a pull request's comment holds.
pub const LIMIT: usize = 65_536;

/// The most failures and warnings the table lists: a short table, the rest in the log.
const ROWS: usize = 20;

/// What the document says beyond the command's own: the gate's outcome (when `--fail-on` was
/// given) and where the run's files are (a CI run's artifacts page).
#[derive(Debug, Clone, Default)]
pub struct Github {
    pub gate: Option<GateOutcome>,
    pub artifacts: Option<String>,
    /// The run files' names, as the artifacts hold them.
    pub run_files: Vec<String>,
    /// Without a gate, the document's first line (default: that no gate was given); for a
    /// command that takes none (bisect), what it decided.
    pub headline: Option<String>,
}

impl Exporter for Github {
    fn export(&self, m: &ReportModel) -> anyhow::Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".github.md".into(), bytes: self.render(m).into_bytes() }])
    }
}

impl Github {
    /// The gate and links of a CI job: the artifacts page of this run when GitHub Actions
    /// names one, the run files by name.
    pub fn of_job<P: AsRef<std::path::Path>>(gate: Option<GateOutcome>, run_files: &[P]) -> Github {
        let name = |p: &P| p.as_ref().file_name().map(|n| n.to_string_lossy().into_owned());
        Github {
            gate,
            artifacts: crate::envvars::github_run_url(),
            run_files: run_files.iter().filter_map(name).collect(),
            headline: None,
        }
    }

    pub fn render(&self, m: &ReportModel) -> String {
        self.render_document(&super::outline::report(m))
    }

    /// Any command's document: the verdict (or its findings) first, the machine, the run
    /// files, then the whole document collapsed, at most [`LIMIT`] characters.
    pub fn render_document(&self, d: &Document) -> String {
        let mut head = self.verdict(d);
        if let Some(machine) = &d.machine {
            head += &format!("{machine}\n\n");
        }
        head += &self.files();
        let report = super::markdown::render_document(d);
        let open = "<details>\n<summary>The whole report</summary>\n\n";
        let close = "\n</details>\n";
        // A verdict of many findings gives way to the document before it takes it all.
        let head = cut(&head, LIMIT / 2);
        let room = LIMIT.saturating_sub(head.len() + open.len() + close.len());
        format!("{head}{open}{}{close}", cut(&report, room))
    }

    /// The verdict, and a table of what failed or warned; without a gate, the findings.
    fn verdict(&self, d: &Document) -> String {
        let Some(outcome) = &self.gate else {
            let headline =
                self.headline.as_deref().unwrap_or("lmdb-regress: no gate was given (`--fail-on slower:PCT%`)");
            let mut o = format!("### {headline}\n\n");
            for line in &d.findings {
                let _ = writeln!(o, "- {}", names::markdown(line, Place::Prose));
            }
            o.push('\n');
            return o;
        };
        let mut o = format!("### {}\n\n", outcome.verdict());
        let listed: Vec<&gate::GateCheck> = outcome.failed().chain(outcome.warned()).collect();
        if !listed.is_empty() {
            o += "| | comparison | change | why |\n|---|---|---|---|\n";
            for c in listed.iter().take(ROWS) {
                let mark = if c.judgement == gate::Judgement::Beyond { "failed" } else { "warning" };
                let _ = writeln!(
                    o,
                    "| {mark} | {} | {} | {} |",
                    escape(&c.subject.to_string()),
                    escape(&gate::figures(c.metric, &c.comparison)),
                    escape(&outcome.reason(c))
                );
            }
            if listed.len() > ROWS {
                let _ = writeln!(o, "\n{} more: the gate's lines in the job's log.", listed.len() - ROWS);
            }
            o.push('\n');
        }
        for n in [gate::not_judged_lines(&outcome.not_judged), gate::not_judged_lines(&outcome.apart)].concat() {
            let _ = writeln!(o, "- not judged: {}", names::markdown(&n, Place::Prose));
        }
        if !outcome.not_judged.is_empty() || !outcome.apart.is_empty() {
            o.push('\n');
        }
        o
    }

    /// Where the run's files are.
    fn files(&self) -> String {
        let names: Vec<String> = self.run_files.iter().map(|f| code_span(f, Place::Prose)).collect();
        let (what, names) = match names.len() {
            1 => ("Run file", names[0].clone()),
            _ => ("Run files", names.join(", ")),
        };
        match (names.is_empty(), &self.artifacts) {
            (false, Some(url)) => format!("{what}: {names}, in [this run's artifacts]({url}).\n\n"),
            (false, None) => format!("{what}: {names}.\n\n"),
            (true, Some(url)) => format!("The run's files: [artifacts]({url}).\n\n"),
            (true, None) => String::new(),
        }
    }
}

/// A cell of the gate's table: our words, names among them as code.
fn escape(s: &str) -> String {
    names::markdown(s, Place::Cell)
}

/// `text` whole when it fits in `room` characters, else cut at the last line that does,
/// saying so.
fn cut(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_string();
    }
    let note = "\n… cut here to fit a comment: the whole report is in the command's files (`lmdb-regress report RUN` renders a run file).\n";
    let budget = room.saturating_sub(note.len());
    let mut budget = budget.min(text.len());
    while !text.is_char_boundary(budget) {
        budget -= 1;
    }
    let end = text[..budget].rfind('\n').unwrap_or(0);
    format!("{}{note}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_too_long_is_cut_at_a_line_and_says_so() {
        let text = "a line\n".repeat(100);
        assert_eq!(cut(&text, 1000), text);
        let short = cut(&text, 200);
        assert!(short.len() <= 200, "{}", short.len());
        assert!(short.ends_with("renders a run file).\n") && short.starts_with("a line\na line\n"), "{short}");
    }
}
