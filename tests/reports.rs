//! Reports: golden files for every format, rendered from one fixed run file; `compare`;
//! clear errors for bad input.

mod common;

use std::path::{Path, PathBuf};

use common::*;

fn testdata(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(p)
}

/// Compares with the golden file, or rewrites it when UPDATE_GOLDEN=1.
fn golden(name: &str, actual: &str) {
    let path = testdata(&format!("golden/{name}"));
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no golden file {}", path.display()));
    if expected != actual {
        let diff = expected.lines().zip(actual.lines()).enumerate().find(|(_, (a, b))| a != b);
        panic!("{name} differs from its golden file (UPDATE_GOLDEN=1 rewrites it); first difference: {diff:?}");
    }
}

#[test]
fn every_format_matches_its_golden_file() {
    let out = tempfile::tempdir().unwrap();
    let o = run_ok(
        lmdb_regress()
            .arg("report")
            .arg(testdata("run-fixed.jsonl"))
            .args(["--format", "markdown,text,json,csv,svg", "--out-dir"])
            .arg(out.path()),
    );
    let written = stdout(&o);
    let names = [
        "run-fixed.md",
        "run-fixed.txt",
        "run-fixed.json",
        "run-fixed-summary.csv",
        "run-fixed-samples.csv",
        "run-fixed-readSeq.svg",
        "run-fixed-write.svg",
    ];
    assert_eq!(written.lines().count(), names.len(), "{written}");
    for n in names {
        golden(n, &std::fs::read_to_string(out.path().join(n)).unwrap());
    }
    // Printing gives the same as writing.
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl"))));
    assert_eq!(md, std::fs::read_to_string(out.path().join("run-fixed.md")).unwrap());
}

#[test]
fn the_golden_reports_say_what_matters() {
    let md = std::fs::read_to_string(testdata("golden/run-fixed.md")).unwrap();
    for s in [
        "## Iterate Sequentially",
        "## Write Entry",
        "| Rank | LMDB Tag | ms/op |",
        "**`LMDB_0.9.33`**",
        "baseline",
        "# Against LMDB_0.9.17",
    ] {
        assert!(md.contains(s), "markdown lacks {s:?}");
    }
    assert!(md.contains("CHECKSUM MISMATCH: LMDB_0.9.33 readSeq"), "a disagreeing tag is named");
    assert!(md.contains("LMDB_0.9.19 not measured"));
    assert!(md.contains("signal 6 (SIGABRT)"));
    assert!(md.contains("PyPI sdist lmdb 0.88 | equivalent"));
    let txt = std::fs::read_to_string(testdata("golden/run-fixed.txt")).unwrap();
    assert!(!txt.contains('|') && !txt.contains("**") && !txt.contains('`'), "plain text has no Markdown");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(testdata("golden/run-fixed.json")).unwrap()).unwrap();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["samples"].as_array().unwrap().len(), 48, "every raw sample");
    let svg = std::fs::read_to_string(testdata("golden/run-fixed-write.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("0.9.33") && svg.contains("Write Entry"));
}

#[test]
fn baseline_is_chosen_and_checked() {
    let txt = stdout(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args([
        "--format",
        "text",
        "--baseline",
        "0.9.18",
    ])));
    assert!(txt.contains("AGAINST LMDB_0.9.18") && txt.contains("vs 0.9.18"), "{txt}");
    let o =
        lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--baseline", "0.9.21"]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .contains("baseline LMDB_0.9.21 is not in this run; measured tags: LMDB_0.9.17, LMDB_0.9.18, LMDB_0.9.33"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_run_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = |p: &Path| {
        let o = lmdb_regress().arg("report").arg(p).output().unwrap();
        assert!(!o.status.success());
        stderr(&o)
    };
    assert!(err(&dir.path().join("missing.jsonl")).contains("cannot open run file"));
    let corrupt = dir.path().join("corrupt.jsonl");
    std::fs::write(&corrupt, "this is not json\n").unwrap();
    assert!(err(&corrupt).contains("not a lmdb-regress run file"));
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let newer = dir.path().join("newer.jsonl");
    std::fs::write(&newer, text.replacen("\"schema\":1", "\"schema\":99", 1)).unwrap();
    assert!(err(&newer).contains("schema 99, newer than this lmdb-regress reads (1)"));
    let mid = dir.path().join("mid.jsonl");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[10] = "{\"type\":\"sample\",\"round\":";
    std::fs::write(&mid, lines.join("\n")).unwrap();
    assert!(err(&mid).contains("mid.jsonl:11: corrupt line"));
}

/// A copy of the fixed run with one tag's samples scaled.
fn scaled(dir: &Path, tag: &str, factor: f64) -> PathBuf {
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["type"] == "sample" && v["tag"] == tag {
                v["ns"] = serde_json::json!((v["ns"].as_f64().unwrap() * factor).round() as u64);
            }
            v.to_string()
        })
        .collect();
    let p = dir.join(format!("scaled-{tag}.jsonl"));
    std::fs::write(&p, out.join("\n") + "\n").unwrap();
    p
}

#[test]
fn compare_flags_exactly_what_changed() {
    let f = testdata("run-fixed.jsonl");
    let same = stdout(&run_ok(lmdb_regress().arg("compare").arg(&f).arg(&f)));
    let rows: Vec<&str> = same.lines().filter(|l| l.starts_with("LMDB_")).collect();
    assert_eq!(rows.len(), 6, "{same}");
    for r in &rows {
        assert!(r.split_whitespace().any(|c| c == "~"), "a run against itself is ~ everywhere: {r}");
    }
    let dir = tempfile::tempdir().unwrap();
    let slower = scaled(dir.path(), "LMDB_0.9.18", 1.2);
    let text = stdout(&run_ok(lmdb_regress().arg("compare").arg(&f).arg(&slower)));
    for r in text.lines().filter(|l| l.starts_with("LMDB_")) {
        let flagged = !r.split_whitespace().any(|c| c == "~");
        assert_eq!(flagged, r.starts_with("LMDB_0.9.18"), "{r}");
        if flagged {
            assert!(r.contains("+20.0%"), "{r}");
        }
    }
    let json: serde_json::Value = json(&run_ok(lmdb_regress().arg("compare").arg(&f).arg(&slower).arg("--json")));
    let sig: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["change"]["significant"] == true)
        .map(|r| r["tag"].as_str().unwrap())
        .collect();
    assert_eq!(sig, ["LMDB_0.9.18", "LMDB_0.9.18"]);
}
