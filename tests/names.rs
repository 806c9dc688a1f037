//! Names a user brings (a patch's or `--source` directory's name, a git ref) rendered in
//! every human format without forging rows, breaking code or injecting markup.

use std::path::{Path, PathBuf};

use crate::common::*;

/// A patch's name holding a backtick run, a newline that would start a forged table row,
/// and markup.
const HOSTILE: &str = "LMDB_0.9.33 + a``b\n| forged | row |<svg/onload=alert(1)>.patch";

/// run-fixed.jsonl with its newest unit renamed to [`HOSTILE`], and the command line
/// holding it too.
fn hostile_run(dir: &Path) -> PathBuf {
    let json = serde_json::to_string(HOSTILE).unwrap();
    let name = &json[1..json.len() - 1];
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let text = text.replace("\"LMDB_0.9.33", &format!("\"{name}")).replace(
        "\"command_line\":[\"lmdb-regress\",\"run\"]",
        &format!("\"command_line\":[\"lmdb-regress\",\"run\",\"--patch\",\"{name}\"]"),
    );
    let path = dir.join("hostile.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn report(run: &Path, format: &str) -> String {
    let o =
        lmdb_regress().arg("report").arg(run).args(["--format", format, "--fail-on", "slower:1%"]).output().unwrap();
    // The gate fails the renamed unit's write (exit 3); the report is written all the same.
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn a_hostile_name_forges_no_row_and_injects_no_markup_in_any_format() {
    let dir = tempfile::tempdir().unwrap();
    let run = hostile_run(dir.path());
    for format in ["markdown", "github", "text"] {
        let doc = report(&run, format);
        assert!(!doc.lines().any(|l| l.starts_with("| forged")), "{format} forged a row:\n{doc}");
        assert!(
            doc.contains("a``b\\n| forged") || doc.contains("a``b\\n\\| forged"),
            "{format}: the newline shown:\n{doc}"
        );
    }
    for format in ["markdown", "github"] {
        let doc = report(&run, format);
        assert!(!outside_code(&doc).contains("<svg"), "{format} holds markup outside code:\n{doc}");
    }
    let md = report(&run, "markdown");
    // The findings and the command row name it in code fenced by three backticks.
    let finding = md.lines().find(|l| l.starts_with("- write:")).expect("a finding of write");
    assert!(finding.contains("```LMDB_0.9.33 + a``b\\n| forged | row |<svg/onload=alert(1)>.patch```"), "{finding}");
    let command = md.lines().find(|l| l.starts_with("| Command |")).expect("the command row");
    assert!(command.contains("```lmdb-regress run --patch LMDB_0.9.33 + a``b\\n\\| forged"), "{command}");
    let html = report(&run, "html");
    assert!(!html.contains("<svg/onload") && html.contains("&lt;svg/onload=alert(1)&gt;"), "html escapes it");
}

/// Markdown without its code spans: a run of backticks opens one, the next run of the
/// same length closes it.
fn outside_code(md: &str) -> String {
    // The text as runs: of backticks, and of anything else.
    let mut runs: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, c) in md.char_indices().skip(1) {
        let prev = md[..i].ends_with('`');
        if (c == '`') != prev {
            runs.push(&md[start..i]);
            start = i;
        }
    }
    runs.push(&md[start..]);
    let (mut out, mut open) = (String::new(), None);
    for run in runs {
        match (open, run.starts_with('`')) {
            (None, true) => open = Some(run.len()),
            (None, false) => out.push_str(run),
            (Some(n), true) if run.len() == n => open = None,
            (Some(_), _) => {}
        }
    }
    out
}

/// A patch's name the label grammar would misread (` (`, `~control`) is refused before any
/// build, naming the label, so two units never share one label.
#[test]
fn a_name_the_label_grammar_would_misread_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["x~control", "x.patch (gcc -O3)", "x@01"] {
        let patch = dir.path().join(name);
        std::fs::write(&patch, "--- a/mdb.c\n+++ b/mdb.c\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
        let tags = format!("0.9.33,0.9.33+{}", patch.display());
        let o = lmdb_regress().args(["run", "--tags", &tags, "--rounds", "1"]).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("\"LMDB_0.9.33 + {name}\" cannot name a unit")) && err.contains("rename it"),
            "{err}"
        );
    }
}
