//! What a pair's workloads reach of what changed between A and B: the lines of mdb.c and
//! midl.c they execute, the executable lines of B that differ from A (a line diff of the
//! two verified sources, laid on the lines gcov marks executable in B) and how many of
//! them ran, and the changed functions that never ran, largest change first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::report::cells::Cells;
use crate::report::document::Shown;
use crate::report::outline::Document;

pub use crate::record::Lines;
use crate::report::numbers::line_share as words;
pub use crate::runner::coverage::NotRun;
use crate::runner::gcov::FileCoverage;
use crate::workload::Workload;

/// The library's sources whose lines are counted.
pub const FILES: [&str; 2] = ["mdb.c", "midl.c"];

/// A function of B with changed lines that no workload executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missed {
    pub function: String,
    pub changed_lines: usize,
}

/// `coverage`'s answer; its JSON is a script interface (issue 37's names).
#[derive(Debug, Clone, Serialize)]
pub struct ChangeCoverage {
    pub a: String,
    pub b: String,
    pub suite: &'static str,
    pub workloads: Vec<String>,
    /// B's lines, per file of [`FILES`].
    pub files: BTreeMap<String, Lines>,
    /// The executable lines of B that differ from A.
    pub changed: Lines,
    pub missed: Vec<Missed>,
    /// The workloads whose run failed on a unit: their lines are not counted.
    pub not_run: Vec<NotRun>,
    /// A's lines, shown beside B's in text and Markdown.
    #[serde(skip)]
    pub files_a: BTreeMap<String, Lines>,
}

/// One build of the pair: its label, gcov's account of its run, its verified sources.
pub struct CoveredBuild<'a> {
    pub label: String,
    pub files: &'a BTreeMap<String, FileCoverage>,
    pub sources: PathBuf,
}

impl CoveredBuild<'_> {
    fn file(&self, name: &str) -> Result<&FileCoverage> {
        self.files.get(name).with_context(|| format!("gcov gave no account of {name} for {}", self.label))
    }

    fn source(&self, name: &str) -> Result<String> {
        let path = self.sources.join(name);
        std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))
    }
}

/// The numbers (from 1) of `b`'s lines that are not `a`'s: inserted or changed.
pub fn changed_lines(a: &str, b: &str) -> BTreeSet<u32> {
    let patch = diffy::DiffOptions::new().set_context_len(0).create_patch(a, b);
    let mut out = BTreeSet::new();
    for hunk in patch.hunks() {
        let mut line = hunk.new_range().start() as u32;
        for l in hunk.lines() {
            match l {
                diffy::Line::Insert(_) => {
                    out.insert(line);
                    line += 1;
                }
                diffy::Line::Context(_) => line += 1,
                diffy::Line::Delete(_) => {}
            }
        }
    }
    out
}

/// The changed lines of one file of B laid on its executable lines: how many ran, and per
/// function that never ran, how many of its executable lines changed.
fn changed_in(file: &FileCoverage, changed: &BTreeSet<u32>) -> (Lines, BTreeMap<String, usize>) {
    let mut lines = Lines::default();
    let mut missed: BTreeMap<String, usize> = BTreeMap::new();
    for (line, ran) in file.lines.iter().filter(|(n, _)| changed.contains(n)) {
        lines.executable += 1;
        lines.executed += usize::from(*ran);
        if let Some(f) = file.function_at(*line).filter(|f| !f.executed) {
            *missed.entry(f.name.clone()).or_default() += 1;
        }
    }
    (lines, missed)
}

/// The coverage of `b`'s run over what changed from `a`.
pub fn build(
    a: &CoveredBuild,
    b: &CoveredBuild,
    suite: &'static str,
    workloads: &[Workload],
    not_run: Vec<NotRun>,
) -> Result<ChangeCoverage> {
    let (mut files, mut files_a) = (BTreeMap::new(), BTreeMap::new());
    let mut changed = Lines::default();
    let mut missed: BTreeMap<String, usize> = BTreeMap::new();
    for name in FILES {
        let file = b.file(name)?;
        files.insert(name.to_string(), file.lines());
        files_a.insert(name.to_string(), a.file(name)?.lines());
        let (lines, never) = changed_in(file, &changed_lines(&a.source(name)?, &b.source(name)?));
        changed.executable += lines.executable;
        changed.executed += lines.executed;
        for (f, n) in never {
            *missed.entry(f).or_default() += n;
        }
    }
    let mut missed: Vec<Missed> =
        missed.into_iter().map(|(function, changed_lines)| Missed { function, changed_lines }).collect();
    missed.sort_by(|x, y| y.changed_lines.cmp(&x.changed_lines).then_with(|| x.function.cmp(&y.function)));
    Ok(ChangeCoverage {
        a: a.label.clone(),
        b: b.label.clone(),
        suite,
        workloads: workloads.iter().map(|w| w.name().to_string()).collect(),
        files,
        changed,
        missed,
        not_run,
        files_a,
    })
}

impl Shown for ChangeCoverage {
    const KIND: &'static str = "lmdb-regress-coverage";
    const SCHEMA: u32 = 2;

    /// A's and B's lines per file, the changed lines run, the failed workloads, then the
    /// changed functions never executed.
    fn outline(&self) -> Document {
        let mut d = Document { findings: vec![self.changed_sentence()], ..Document::default() };
        d.heading(1, format!("Coverage of {} → {} by {}", self.a, self.b, self.workloads.join(", ")));
        let mut t = Cells::new(&["lines", &self.a, &self.b], 0, 3);
        for name in FILES {
            t.push(vec![name.to_string(), words(self.files_a[name]), words(self.files[name])], false);
        }
        d.table(t);
        d.para(self.changed_sentence());
        if !self.not_run.is_empty() {
            d.para(format!("{} workload run(s) failed; the lines they would run are not counted:", self.not_run.len()));
            d.list(self.not_run.iter().map(|n| format!("{} on {}: {}", n.workload, n.unit, n.error)).collect());
        }
        if self.missed.is_empty() {
            d.para("Every changed function was executed.");
            return d;
        }
        d.para(format!("Changed functions never executed ({}), by changed lines:", self.missed.len()));
        let mut t = Cells::new(&["function", "changed lines"], 0, 1);
        for m in &self.missed {
            t.push(vec![m.function.clone(), m.changed_lines.to_string()], false);
        }
        d.table(t);
        d
    }
}

impl ChangeCoverage {
    /// The sentence every format says first.
    fn changed_sentence(&self) -> String {
        format!(
            "Of the executable lines of {} that changed from {}, the workloads executed {}.",
            self.b,
            self.a,
            words(self.changed)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Format;
    use crate::runner::gcov::FunctionCoverage;
    use crate::runner::Label;

    fn shown(c: &ChangeCoverage, f: Format) -> String {
        crate::report::render_shown(c, f, &Default::default()).unwrap()
    }

    #[test]
    fn changed_lines_are_bs_inserted_and_replaced_lines() {
        let a = "one\ntwo\nthree\nfour\nfive\n";
        let b = "one\nTWO\nthree\nnew\nfour\n";
        assert_eq!(changed_lines(a, b), BTreeSet::from([2, 4]));
        assert_eq!(changed_lines(a, a), BTreeSet::new());
        assert_eq!(changed_lines("", "x\ny\n"), BTreeSet::from([1, 2]));
        assert_eq!(changed_lines(a, "one\nfive\n"), BTreeSet::new());
    }

    fn function(name: &str, start: u32, end: u32, executed: bool) -> FunctionCoverage {
        FunctionCoverage { name: name.into(), start, end, executed }
    }

    #[test]
    fn changed_lines_count_where_gcov_marks_b_executable() {
        let file = FileCoverage {
            lines: BTreeMap::from([(2, true), (3, false), (5, false), (6, false), (9, false)]),
            functions: vec![function("run", 1, 4, true), function("never", 5, 7, false)],
        };
        // Line 4 changed but is not executable; 9 is in no function.
        let (lines, missed) = changed_in(&file, &BTreeSet::from([2, 3, 4, 5, 6, 9]));
        assert_eq!(lines, Lines { executable: 5, executed: 1 });
        assert_eq!(missed, BTreeMap::from([("never".to_string(), 2)]));
        assert_eq!(words(Lines { executable: 4275, executed: 1254 }), "1,254 of 4,275 (29.3%)");
    }

    /// A folder of sources: `mdb` as mdb.c, one line as midl.c.
    fn sources(dir: &std::path::Path, name: &str, mdb: &str) -> PathBuf {
        let at = dir.join(name);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join("mdb.c"), mdb).unwrap();
        std::fs::write(at.join("midl.c"), "x\n").unwrap();
        at
    }

    /// gcov's account: mdb.c's `lines` and `functions`, midl.c's one line, which ran.
    fn account(lines: &[(u32, bool)], functions: Vec<FunctionCoverage>) -> BTreeMap<String, FileCoverage> {
        BTreeMap::from([
            ("mdb.c".to_string(), FileCoverage { lines: lines.iter().copied().collect(), functions }),
            ("midl.c".to_string(), FileCoverage { lines: BTreeMap::from([(1, true)]), functions: Vec::new() }),
        ])
    }

    #[test]
    fn a_pair_gives_bs_lines_its_changed_lines_and_the_largest_misses_first() {
        let dir = tempfile::tempdir().unwrap();
        let a_files = account(&[(1, true), (2, false)], Vec::new());
        let a =
            CoveredBuild { label: "A".into(), files: &a_files, sources: sources(dir.path(), "a", "a\nb\nc\nd\ne\n") };
        let fs = vec![function("put", 1, 2, true), function("copy", 3, 4, false), function("drop", 5, 7, false)];
        let b_files = account(&[(1, true), (2, true), (3, false), (5, false), (6, false), (7, false)], fs);
        let b = CoveredBuild {
            label: "B".into(),
            files: &b_files,
            sources: sources(dir.path(), "b", "a\nB\nC\nd\nE\nF\nG\n"),
        };
        let c = build(&a, &b, "lmdbjava", &[Workload::Write], Vec::new()).unwrap();
        assert_eq!(c.files["mdb.c"], Lines { executable: 6, executed: 2 });
        assert_eq!(c.files_a["mdb.c"], Lines { executable: 2, executed: 1 });
        assert_eq!(c.changed, Lines { executable: 5, executed: 1 });
        let missed: Vec<(&str, usize)> = c.missed.iter().map(|m| (m.function.as_str(), m.changed_lines)).collect();
        assert_eq!(missed, [("drop", 3), ("copy", 1)]);
        let json: serde_json::Value = serde_json::from_str(&shown(&c, Format::Json)).unwrap();
        assert_eq!(json["missed"][0], serde_json::json!({"function": "drop", "changed_lines": 3}));
        assert_eq!(json["files"]["midl.c"], serde_json::json!({"executable": 1, "executed": 1}));
        assert_eq!(json["kind"], "lmdb-regress-coverage");
        let text = shown(&c, Format::Text);
        assert!(text.replace('\n', " ").contains("executed 1 of 5 (20.0%).") && text.contains("drop"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        let markdown = shown(&c, Format::Markdown);
        assert!(markdown.contains("| `drop` | 3 |"), "{markdown}");
    }

    #[test]
    fn a_workload_that_failed_is_named_in_every_format_as_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let files = account(&[(1, true)], Vec::new());
        let side = |l: &str| CoveredBuild { label: l.into(), files: &files, sources: sources(dir.path(), l, "a\n") };
        let failed =
            NotRun { unit: Label::build("B", None), workload: Workload::Write, error: "killed by signal 6".into() };
        let c = build(&side("A"), &side("B"), "lmdbjava", &[Workload::Write], vec![failed]).unwrap();
        let json: serde_json::Value = serde_json::from_str(&shown(&c, Format::Json)).unwrap();
        assert_eq!(
            json["not_run"],
            serde_json::json!([{"unit": "B", "workload": "write", "error": "killed by signal 6"}])
        );
        for doc in [Format::Text, Format::Markdown, Format::Html].map(|f| shown(&c, f)) {
            assert!(doc.contains("not counted") && doc.contains("write on B: killed by signal 6"), "{doc}");
        }
    }
}
