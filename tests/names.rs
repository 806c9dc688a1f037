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

/// run-fixed.jsonl with its newest unit a patch named `x.patch` whose SHA-256 is `sha256`.
fn patched_run(dir: &Path, name: &str, sha256: &str) -> PathBuf {
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let text = text.replace("\"LMDB_0.9.33", "\"LMDB_0.9.33 + x.patch");
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(first).unwrap();
    let tag = header["tags"].as_array_mut().unwrap().iter_mut().find(|t| t["tag"] == "LMDB_0.9.33 + x.patch").unwrap();
    tag["builds"] = serde_json::json!([{
        "label": "LMDB_0.9.33 + x.patch", "commit": null, "kind": "shared-library", "build_id": "b",
        "artifact": "liblmdb.so", "lmdb_version": "LMDB 0.9.33: (May 21, 2024)", "files": {},
        "provenance": {"origin": "patch", "detail": "x.patch", "cached": false}, "match": "patched",
        "toolchain": {"compiler": "cc", "version": "cc", "cflags": []}, "built_at": "2026-01-01T00:00:00Z",
        "patch": {"file": "x.patch", "sha256": sha256, "base": "LMDB_0.9.33", "base_commit": null,
                  "base_files": {}, "base_match": "identical", "hunks": [],
                  "base_provenance": {"origin": "registry", "detail": "x", "cached": false}}
    }]);
    let path = dir.join(name);
    std::fs::write(&path, format!("{header}\n{rest}")).unwrap();
    path
}

/// Two runs whose units of one name are different patches: `compare` keeps them apart,
/// says so, and its gate does not judge them; the same patch in both is compared.
#[test]
fn compare_keeps_apart_same_named_units_that_are_different_patches() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ("a".repeat(64), "b".repeat(64));
    let (old, new, same) = (
        patched_run(dir.path(), "old.jsonl", &a),
        patched_run(dir.path(), "new.jsonl", &b),
        patched_run(dir.path(), "same.jsonl", &a),
    );
    let compare = |x: &Path, y: &Path, gate: &[&str]| {
        lmdb_regress().arg("compare").arg(x).arg(y).args(["--format", "text"]).args(gate).output().unwrap()
    };
    let o = compare(&old, &new, &[]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let note = "LMDB_0.9.33 + x.patch is a different patch in each run (SHA-256 aaaaaaaaaaaa… in the old, bbbbbbbbbbbb… in the new)";
    assert!(words.contains(note) && words.contains("kept apart"), "{out}");
    assert!(!out.lines().any(|l| l.contains("x.patch") && l.contains('%')), "no row compares it: {out}");
    let o = compare(&old, &new, &["--fail-on", "slower:1%"]);
    let err = stderr(&o);
    let apart = "not judged: LMDB_0.9.33 + x.patch, LMDB_0.9.33 + x.patch~control (a different patch in each run)";
    assert!(err.contains(apart) && err.contains("; 2 units a different patch in each run, kept apart"), "{err}");
    let o = compare(&old, &same, &[]);
    assert!(o.status.success() && !stdout(&o).contains("kept apart"), "{}", stdout(&o));
    assert!(stdout(&o).lines().any(|l| l.contains("x.patch") && l.contains('%')), "{}", stdout(&o));
}
