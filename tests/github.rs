//! `--format github` from every command that reports (run, compare, its-10406, bisect and
//! history; report's own is in tests/gate.rs): one Markdown document through the one shared
//! renderer, its verdict first, at most 65,536 characters, the machine named, and the same
//! document appended to $GITHUB_STEP_SUMMARY when that is set.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// `cmd` as a GitHub Actions job runs it (a summary file, a run's artifacts page): its
/// status and the document it printed, checked to be one bounded document, the machine
/// named, and the one the job's summary got.
pub fn github_document(cmd: &mut Command, dir: &Path) -> (Option<i32>, String) {
    let summary = dir.join("step-summary.md");
    let o = cmd
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_REPOSITORY", "owner/binding")
        .env("GITHUB_RUN_ID", "42")
        .output()
        .expect("binary runs");
    let (doc, err) = (stdout(&o), stderr(&o));
    assert!(doc.starts_with("### "), "the verdict first:\n{doc}\n{err}");
    assert!(doc.len() <= lmdb_regress::report::github::LIMIT, "{} characters", doc.len());
    assert_eq!(doc.matches("<details>").count(), 1, "one document:\n{doc}");
    assert!(doc.trim_end().ends_with("</details>"), "{doc}");
    assert!(doc.contains("Measured on ") && doc.contains(" core"), "the machine named:\n{doc}");
    assert_eq!(std::fs::read_to_string(&summary).unwrap_or_default(), doc, "the job's summary holds the document");
    (o.status.code(), doc)
}

fn findings(name: &str) -> String {
    testdata(&format!("findings-{name}.jsonl")).display().to_string()
}

#[test]
fn compare_in_the_github_format_gives_the_gate_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = lmdb_regress();
    cmd.args(["compare", &findings("none"), &findings("step"), "--format", "github", "--fail-on", "slower:2%"]);
    let (status, doc) = github_document(&mut cmd, dir.path());
    assert_eq!(status, Some(3), "{doc}");
    assert!(doc.starts_with("### gate slower:2%: FAILED, 3 of 10 comparisons beyond it"), "{doc}");
    let failed = doc.find("| failed | write (rust) LMDB_0.9.21, new run against old | time +").unwrap();
    assert!(failed < doc.find("<details>").unwrap(), "{doc}");
    assert!(doc.contains("Run files: `findings-none.jsonl`, `findings-step.jsonl`, in [this run's artifacts]("));
    golden("compare-github.md", &doc);
    // Without a gate: what changed, first.
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = lmdb_regress();
    cmd.args(["compare", &findings("none"), &findings("step"), "--format", "github"]);
    let (status, doc) = github_document(&mut cmd, dir.path());
    assert_eq!(status, Some(0), "{doc}");
    assert!(
        doc.starts_with("### lmdb-regress: no gate was given (`--fail-on slower:PCT%`)\n\n- write (rust) "),
        "{doc}"
    );
    // The other formats are the same document laid out: Markdown is what github collapses.
    let md =
        stdout(&run_ok(lmdb_regress().args(["compare", &findings("none"), &findings("step"), "--format", "markdown"])));
    assert!(doc.contains(&md), "{md}");
    let refused =
        lmdb_regress().args(["compare", &findings("none"), &findings("step"), "--format", "csv"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("--format csv is not one of this command's"), "{}", stderr(&refused));
}

#[test]
fn run_in_the_github_format_gives_the_gate_first() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("pr.jsonl");
    let mut cmd = lmdb_regress();
    cmd.env("LMDB_REGRESS_OFFLINE", "1")
        .args(["run", "--tags", "0.9.18,0.9.33", "--workloads", "write", "--entries", "2000", "--rounds", "6"])
        .args(["--layouts", "fixed", "--fail-on", "slower:50%", "--format", "github", "--out"])
        .arg(&run);
    let (status, doc) = github_document(&mut cmd, dir.path());
    assert_eq!(status, Some(0), "{doc}");
    // One pair: its time and, beside it, the six space figures a write leaves.
    assert!(doc.starts_with("### gate slower:50%: passed, none of 7 comparisons beyond it"), "{doc}");
    assert!(doc.contains("Run file: `pr.jsonl`, in [this run's artifacts](https://github.example/owner/binding/actions/runs/42#artifacts)."));
    assert!(doc.contains("# LMDB Library Performance Analysis"), "the report collapsed: {doc}");
}

#[test]
fn history_and_bisect_in_the_github_format_give_their_verdict_first() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let good = make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))])[0].clone();
    let p = repo.join("libraries/liblmdb/mdb.c");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* a comment */\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "a comment in mdb.c"]);
    let bad = git(&repo, &["rev-parse", "HEAD"]);
    // History: the gate's verdict over its one step that is none. Both commands build the
    // two commits unoptimised: gcc -O0 compiles mdb.c about five times faster, and a comment
    // moves no count at either level.
    let out = tmp.path().join("history");
    let mut cmd = lmdb_regress();
    cmd.env("LMDB_REGRESS_OFFLINE", "1")
        .args(["history", "--range", "LMDB_0.9.33..HEAD", "--workloads", "write", "--entries", "2000"])
        .args(["--fail-on", "slower:2%", "--format", "github", "--no-coverage", "--cflags", &unoptimised_cflags()])
        .arg("--git")
        .arg(&repo)
        .arg("--out-dir")
        .arg(&out);
    let (status, doc) = github_document(&mut cmd, tmp.path());
    assert_eq!(status, Some(0), "{doc}");
    assert!(doc.starts_with("### gate slower:2%: passed, none of 7 comparisons beyond it"), "{doc}");
    assert!(doc.contains("# History LMDB_0.9.33..HEAD") && doc.contains("Run file: `history.jsonl`"), "{doc}");
    assert!(out.join("history.txt").is_file(), "its files are written whatever is printed");
    // Bisect: a slowdown that is none is not confirmed (status 1), said first.
    std::fs::remove_file(tmp.path().join("step-summary.md")).unwrap();
    let mut cmd = lmdb_regress();
    cmd.env("LMDB_REGRESS_OFFLINE", "1")
        .args(["bisect", "--good", &good, "--bad", &bad, "--workload", "write", "--entries", "2000"])
        .args(["--metric", "instructions", "--format", "github", "--cflags", &unoptimised_cflags(), "--git"])
        .arg(&repo)
        .arg("--out-dir")
        .arg(tmp.path().join("bisect"));
    let (status, doc) = github_document(&mut cmd, tmp.path());
    assert_eq!(status, Some(1), "{doc}");
    assert!(doc.starts_with("### lmdb-regress bisect: the slowdown on write not narrowed down\n\n- "), "{doc}");
    assert!(doc.contains("neither slower nor faster by more than 3%: nothing to bisect"), "{doc}");
    assert!(doc.contains("# Bisect: write workload") && doc.contains("Run file: `bisect`"), "{doc}");
}
