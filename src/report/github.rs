//! `--format github`: one Markdown document for a pull request's comment or a job's summary,
//! at most [`LIMIT`] characters (GitHub's cap on a comment): the gate's verdict first, a
//! short table of what failed or warned, then the whole report collapsed in `<details>`,
//! with the machine named and the run's artifacts linked.

use std::fmt::Write as _;

use super::gate::{self, Outcome};
use super::model::ReportModel;
use super::{cells, Exporter, Output};

/// The most characters a pull request's comment holds.
pub const LIMIT: usize = 65_536;

/// The most failures and warnings the table lists: a short table, the rest in the log.
const ROWS: usize = 20;

/// What the document says beyond the report: the gate's outcome (when `--fail-on` was
/// given) and where the run's files are (a CI run's artifacts page).
#[derive(Debug, Clone, Default)]
pub struct Github {
    pub gate: Option<Outcome>,
    pub artifacts: Option<String>,
    /// The run file's name, as the artifacts hold it.
    pub run_file: Option<String>,
}

impl Exporter for Github {
    fn export(&self, m: &ReportModel) -> anyhow::Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".github.md".into(), bytes: self.render(m).into_bytes() }])
    }
}

impl Github {
    pub fn render(&self, m: &ReportModel) -> String {
        let mut head = self.verdict(m);
        head += &machine(m);
        head += &self.files();
        let report = super::markdown::render(m);
        let open = "<details>\n<summary>The whole report</summary>\n\n";
        let close = "\n</details>\n";
        let room = LIMIT.saturating_sub(head.len() + open.len() + close.len());
        format!("{head}{open}{}{close}", cut(&report, room))
    }

    /// The verdict, and a table of what failed or warned; without a gate, the findings.
    fn verdict(&self, m: &ReportModel) -> String {
        let Some(outcome) = &self.gate else {
            let mut o = "### lmdb-regress: no gate was given (`--fail-on slower:PCT%`)\n\n".to_string();
            for line in super::outline::findings(m) {
                let _ = writeln!(o, "- {line}");
            }
            o.push('\n');
            return o;
        };
        let mut o = format!("### {}\n\n", outcome.verdict());
        let listed: Vec<&gate::Check> = outcome.failed().chain(outcome.warned()).collect();
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
        for n in &outcome.not_judged {
            let _ = writeln!(o, "- not judged: {}", escape(n));
        }
        if !outcome.not_judged.is_empty() {
            o.push('\n');
        }
        o
    }

    /// Where the run's files are.
    fn files(&self) -> String {
        match (&self.run_file, &self.artifacts) {
            (Some(f), Some(url)) => format!("Run file: `{f}`, in [this run's artifacts]({url}).\n\n"),
            (Some(f), None) => format!("Run file: `{f}`.\n\n"),
            (None, Some(url)) => format!("The run's files: [artifacts]({url}).\n\n"),
            (None, None) => String::new(),
        }
    }
}

/// "Measured on Fixture CPU (2 cores), Debian GNU/Linux 12 (bookworm), kernel 6.0.0."
fn machine(m: &ReportModel) -> String {
    let e = &m.environment;
    format!(
        "Measured on {} ({}), {}, kernel {}; lmdb-regress {}.\n\n",
        e.cpu_model,
        cells::plural(e.cores, "core"),
        e.os,
        e.kernel,
        e.harness_version
    )
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `text` whole when it fits in `room` characters, else cut at the last line that does,
/// saying so.
fn cut(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_string();
    }
    let note = "\n… cut here to fit a comment: the whole report is `lmdb-regress report RUN` of the run file.\n";
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
        assert!(short.ends_with("of the run file.\n") && short.starts_with("a line\na line\n"), "{short}");
    }
}
