//! `site DIR RUN...`: a page per run, an index with headlines, trends for runs on the same
//! host with the same settings, ready for GitHub Pages; clear errors for bad input.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run_ok, stderr, stdout};

fn fixed_run() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/run-fixed.jsonl")).unwrap()
}

/// A copy of the fixed run named `name`, its header edited by `edit`.
fn run_file(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = fixed_run();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut header: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    edit(&mut header);
    lines[0] = header.to_string();
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn site() -> Command {
    let mut c = Command::new(common::BIN);
    c.arg("site");
    c
}

#[test]
fn a_site_holds_every_run_an_index_and_trends_for_comparable_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let older = run_file(tmp.path(), "older.jsonl", |h| h["environment"]["date"] = "2025-12-01T10:00:00Z".into());
    let newer = run_file(tmp.path(), "newer.jsonl", |_| {});
    // Made in the same minute as `newer`: the trends tell them apart by their own names.
    let twin = run_file(tmp.path(), "newer-twin.jsonl", |_| {});
    let elsewhere = run_file(tmp.path(), "elsewhere.jsonl", |h| h["environment"]["cpu_model"] = "Other CPU".into());
    let out = tmp.path().join("site");
    let written = stdout(&run_ok(site().arg(&out).args([&older, &newer, &twin, &elsewhere])));
    assert_eq!(written.lines().count(), 6, "{written}");
    for f in ["older.html", "newer.html", "newer-twin.html", "elsewhere.html", "index.html", ".nojekyll"] {
        assert!(out.join(f).exists(), "{f} missing:\n{written}");
    }
    let page = std::fs::read_to_string(out.join("newer.html")).unwrap();
    assert!(page.contains("<h1 id=\"lmdb-library-performance-analysis\">") && page.contains("<svg"));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    // Relative links only, newest first.
    let (a, b) = (index.find("href=\"newer.html\"").unwrap(), index.find("href=\"older.html\"").unwrap());
    assert!(a < b && index.contains("href=\"elsewhere.html\""), "{index}");
    assert!(!index.contains("href=\"/") && !index.contains("href=\"http"), "links must be relative");
    for s in [
        "2026-01-01 00:00",
        "Fixture CPU (2 cores)",
        "0.9.17 … 0.9.33 (3)",
        "readSeq, write",
        "Iterate Sequentially: 1 faster (1 time only); Write Entry: 1 slower",
    ] {
        assert!(index.contains(s), "the index lacks {s:?}");
    }
    // Two runs share host and settings: one trend section, two charts per workload: each
    // run's newest tag against its baseline, a point per run, and each tag a line with a
    // point per run; the run on another host has none.
    assert_eq!(index.matches("<h2 id=").count(), 1, "{index}");
    assert!(index.contains("Trends on Fixture CPU (2 cores)") && !index.contains("Trends on Other CPU"));
    assert_eq!(index.matches("<figure class=\"chart\">").count(), 4);
    assert_eq!(index.matches("<svg class=\"ratio-chart\"").count(), 2);
    assert_eq!(index.matches("<g class=\"interval ").count(), 2 * 3, "an interval per run and workload");
    assert!(index.contains("older: 0.9.33 against 0.9.17: "), "a tooltip per run's ratio");
    assert!(index.contains("0.9.33 in older: median 19.026 ms/op"), "a tooltip per point");
    assert!(index.contains("0.9.33 in newer: median") && index.contains("0.9.33 in newer-twin: median"));
}

#[test]
fn bad_input_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_file(tmp.path(), "run.jsonl", |_| {});
    std::fs::create_dir(tmp.path().join("other")).unwrap();
    let b = run_file(&tmp.path().join("other"), "run.jsonl", |_| {});
    let o = site().arg(tmp.path().join("site")).args([&a, &b]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("two inputs would both be written as run.html"), "{}", stderr(&o));
    let index = run_file(tmp.path(), "index.jsonl", |_| {});
    assert!(stderr(&site().arg(tmp.path().join("site")).arg(&index).output().unwrap()).contains("index.html"));
    let o = site().arg(tmp.path().join("site")).arg(tmp.path().join("missing.jsonl")).output().unwrap();
    assert!(!o.status.success() && stderr(&o).contains("cannot open run file"), "{}", stderr(&o));
    let o = site().arg(tmp.path().join("site")).output().unwrap();
    assert!(!o.status.success() && stderr(&o).contains("name the run files"), "{}", stderr(&o));
}
