//! A newcomer's first hour, command by command: one golden file per command from small fixed
//! inputs (testdata/golden/commands/, in benchstat's manner), tables that fit 80 columns
//! when piped and the width `COLUMNS` gives, and stdout that holds one valid document.
//! `report`'s own goldens are testdata/golden/run-fixed.* (tests/reports.rs).

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// Both streams of a command, with this test's temporary paths named for what they are.
fn transcript(o: &Output, paths: &[(&Path, &str)]) -> String {
    let mut t =
        format!("--- stdout\n{}--- stderr\n{}--- exit: {}\n", stdout(o), stderr(o), o.status.code().unwrap_or(-1));
    for (p, name) in paths {
        t = t.replace(&p.display().to_string(), name);
    }
    t
}

fn offline(cache: &Path) -> Command {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_CACHE", cache).env("LMDB_REGRESS_OFFLINE", "1");
    c
}

#[test]
fn tags_lists_an_empty_cache() {
    let cache = tempfile::tempdir().unwrap();
    let o = run_ok(offline(cache.path()).arg("tags"));
    golden("commands/tags.txt", &transcript(&o, &[(cache.path(), "<cache>")]));
}

#[test]
fn build_offline_says_once_what_is_missing_and_how_to_get_it() {
    let cache = tempfile::tempdir().unwrap();
    let o = offline(cache.path()).args(["build", "--tags", "0.9.18..0.9.20"]).output().unwrap();
    golden("commands/build-offline.txt", &transcript(&o, &[(cache.path(), "<cache>")]));
}

#[test]
fn run_offline_without_sources_stops_with_the_fix() {
    let cache = tempfile::tempdir().unwrap();
    let o = offline(cache.path()).args(["run", "--tags", "0.9.19,0.9.20", "--rounds", "1"]).output().unwrap();
    golden("commands/run-offline.txt", &transcript(&o, &[(cache.path(), "<cache>")]));
}

#[test]
fn compare_two_fixed_runs() {
    let dir = tempfile::tempdir().unwrap();
    let slower = scaled(dir.path(), "LMDB_0.9.18", 1.2);
    let o = run_ok(lmdb_regress().arg("compare").arg(testdata("run-fixed.jsonl")).arg(&slower));
    golden("commands/compare.txt", &stdout(&o));
}

#[test]
fn merge_of_counts_reports_like_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join("merged.jsonl");
    let o = run_ok(
        lmdb_regress().arg("merge").arg(testdata("run-fixed.jsonl")).arg("--drop-time").arg("--out").arg(&merged),
    );
    let report = run_ok(lmdb_regress().arg("report").arg(&merged).args(["--format", "text"]));
    let t = transcript(&o, &[(dir.path(), "<dir>")]) + &stdout(&report);
    golden("commands/merge-drop-time.txt", &t);
}

#[test]
fn site_of_two_runs_of_the_same_minute() {
    let dir = tempfile::tempdir().unwrap();
    let twin = dir.path().join("run-fixed-twin.jsonl");
    std::fs::copy(testdata("run-fixed.jsonl"), &twin).unwrap();
    let site = dir.path().join("site");
    run_ok(lmdb_regress().arg("site").arg(&site).arg(testdata("run-fixed.jsonl")).arg(&twin));
    golden("commands/site-index.html", &std::fs::read_to_string(site.join("index.html")).unwrap());
}

#[test]
fn its_10406_of_the_fixed_run() {
    // The command measures; its page is rendered from the model, as here.
    let data = lmdb_regress::record::load(&testdata("run-fixed.jsonl")).unwrap();
    let m = lmdb_regress::report::model::build(&data, Some("LMDB_0.9.17")).unwrap();
    let report = lmdb_regress::hunt::its10406::build(&m);
    let result = lmdb_regress::hunt::its10406::ItsResult { report, attributions: Vec::new(), model: &m };
    let text = lmdb_regress::report::render_shown(&result, lmdb_regress::report::Format::Text, &Default::default());
    golden("commands/its-10406.txt", &text.unwrap());
}

#[test]
fn bisect_refuses_what_it_cannot_search_and_says_why() {
    let mut t = String::new();
    for args in [
        &["--good", "0.9.18", "--bad", "0.9.21", "--workload", "all"][..],
        &["--good", "0.9.99", "--bad", "0.9.21"],
        &["--good", "0.9.21", "--bad", "0.9.18"],
    ] {
        let o = lmdb_regress().arg("bisect").args(args).output().unwrap();
        t += &format!("$ lmdb-regress bisect {}\n{}", args.join(" "), transcript(&o, &[]));
    }
    golden("commands/bisect-errors.txt", &t);
}

#[test]
fn unclear_inputs_are_named_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let fixed = testdata("run-fixed.jsonl");
    let header_only = dir.path().join("header-only.jsonl");
    let first = std::fs::read_to_string(&fixed).unwrap().lines().next().unwrap().to_string();
    std::fs::write(&header_only, format!("{first}\n")).unwrap();
    let merged = dir.path().join("merged.jsonl");
    run_ok(lmdb_regress().arg("merge").arg(&fixed).arg("--drop-time").arg("--out").arg(&merged));
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let [h, m, f, x] = [&header_only, &merged, &folder, &fixed].map(|p| p.to_str().unwrap());
    let mut t = String::new();
    for args in [
        &["compare", x, h][..],
        &["site", x],
        &["run", "--tags", "0.9.33", "--out", f, "--force"],
        &["run", "--tags", "0.9.33", "--entries", "-5"],
        &["run", "--resume", m],
    ] {
        let o = lmdb_regress().args(args).output().unwrap();
        t += &format!("$ lmdb-regress {}\n{}", args.join(" "), transcript(&o, &[]));
    }
    let t = t.replace(&dir.path().display().to_string(), "<dir>");
    golden("commands/unclear-inputs.txt", &t.replace(&testdata("").display().to_string(), "<testdata>/"));
}

#[test]
fn console_tables_fit_80_columns_piped_and_the_width_columns_gives() {
    // This test's cache holds built tags: rows with sources, matches and build ids.
    for (columns, width) in [(None, 80), (Some("80"), 80), (Some("100"), 100), (Some("60"), 60)] {
        for args in [&["tags"][..], &["build", "--tags", "0.9.18,0.9.33,0.9.19"]] {
            let mut c = lmdb_regress();
            c.env("LMDB_REGRESS_OFFLINE", "1").args(args);
            if let Some(n) = columns {
                c.env("COLUMNS", n);
            }
            let o = c.output().unwrap();
            let all = format!("{}{}", stdout(&o), stderr(&o));
            assert!(all.contains("LMDB_0.9.33"), "{all}");
            for l in all.lines() {
                assert!(
                    l.chars().count() <= width,
                    "{args:?} under COLUMNS={columns:?}: {} > {width}: {l}",
                    l.chars().count()
                );
            }
        }
    }
}

#[test]
fn stdout_holds_exactly_one_document() {
    let report = |format: &str| {
        lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--format", format]).output().unwrap()
    };
    for several in ["csv", "svg", "text,json", "markdown,html"] {
        let o = report(several);
        assert!(!o.status.success() && stdout(&o).is_empty(), "{several} must be refused");
        assert!(stderr(&o).contains("--out-dir DIR"), "{several}: {}", stderr(&o));
    }
    let json: serde_json::Value = serde_json::from_slice(&report("json").stdout).expect("one JSON document");
    assert_eq!(json["schema"], lmdb_regress::report::json::REPORT_SCHEMA);
    let html = stdout(&report("html"));
    assert_eq!(html.matches("<!DOCTYPE html>").count(), 1, "one page");
    // CSV goes to files, each one table that the csv crate reads with one header.
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        lmdb_regress()
            .arg("report")
            .arg(testdata("run-fixed.jsonl"))
            .args(["--format", "csv", "--out-dir"])
            .arg(dir.path()),
    );
    for (name, rows) in [("run-fixed-summary.csv", 6), ("run-fixed-samples.csv", 70)] {
        let mut r = csv::Reader::from_path(dir.path().join(name)).unwrap();
        let width = r.headers().unwrap().len();
        let records: Vec<csv::StringRecord> = r.records().map(|x| x.expect("a well-formed row")).collect();
        assert_eq!(records.len(), rows, "{name}");
        assert!(records.iter().all(|x| x.len() == width), "{name}: one table, one width");
    }
}
