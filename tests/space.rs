//! Space as metrics: what each write pass left (file size, last page, pages by kind, depth,
//! freelist pages), read by both engines alike, repeating across runs, layouts and pairing;
//! shown beside the run's metric, named in findings, and a metric of its own.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::Value;

const FIGURES: [&str; 7] =
    ["file-size", "last-page", "branch-pages", "leaf-pages", "overflow-pages", "depth", "free-pages"];

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write_run(out: &Path, extra: &[&str]) {
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--workloads", "write,readSeq", "--entries", "3000", "--warmup", "0"]);
    run_ok(c.args(extra).arg("--out").arg(out));
}

/// tag → every distinct space its write samples carry; a read sample carries none.
fn spaces(path: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in records(path).into_iter().filter(|r| r["type"] == "sample") {
        if r["workload"] != "write" {
            assert!(r.get("space").is_none(), "a read holds no space: {r}");
            continue;
        }
        let seen = out.entry(r["tag"].as_str().unwrap().into()).or_default();
        if !seen.contains(&r["space"]) {
            seen.push(r["space"].clone());
        }
    }
    out
}

#[test]
fn space_repeats_across_runs_layouts_pairing_and_engines() {
    let dir = tempfile::tempdir().unwrap();
    let (paired, counted) = (dir.path().join("paired.jsonl"), dir.path().join("counted.jsonl"));
    // Time in paired chunks, each round its own random layout, both engines.
    write_run(&paired, &["--rounds", "3", "--engine", "rust,c"]);
    // Whole passes in a process each, counted under the fixed builds.
    write_run(&counted, &["--metric", "instructions", "--engine", "rust,c"]);
    let (a, b) = (spaces(&paired), spaces(&counted));
    assert_eq!(a.len(), 2, "{a:?}");
    let layouts: std::collections::BTreeSet<String> =
        records(&paired).iter().filter(|r| r["type"] == "sample").map(|r| r["layout"].to_string()).collect();
    assert!(layouts.len() > 2, "random layouts: {layouts:?}");
    for (tag, seen) in &a {
        assert_eq!(seen.len(), 1, "{tag}: one space over rounds, layouts and engines, got {seen:?}");
        assert_eq!(seen, &b[tag], "{tag}: paired chunks and whole counted passes");
        let s = &seen[0];
        let n = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{tag}: no {k} in {s}"));
        assert!(FIGURES.iter().all(|k| s[k].is_u64()), "{s}");
        // 3,000 entries of 100 bytes: tens of leaves under one branch, inside the file.
        assert!(n("leaf-pages") > 50 && n("branch-pages") >= 1 && n("depth") == 2, "{tag}: {s}");
        assert!(n("last-page") >= n("leaf-pages") + n("branch-pages") && n("file-size") > 4096 * n("last-page"));
    }
}

#[test]
fn space_is_a_column_a_finding_and_a_metric_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    write_run(&run, &["--rounds", "2", "--pairing", "process"]);
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(md.contains("| leaf |") && md.contains("| leaf pages |"), "leaf pages beside time:\n{md}");
    // 0.9.33's write planted with twice the leaf pages: a finding of the same data.
    let mut rs = records(&run);
    for r in rs.iter_mut().filter(|r| r["tag"] == "LMDB_0.9.33" && r["workload"] == "write") {
        let leaves = r["space"]["leaf-pages"].as_u64().unwrap();
        r["space"]["leaf-pages"] = (leaves * 2).into();
    }
    let planted = dir.path().join("planted.jsonl");
    std::fs::write(&planted, rs.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&planted)));
    let finding = md.lines().find(|l| l.contains("leaf pages for the same data at `LMDB_0.9.33`"));
    assert!(finding.is_some_and(|l| l.contains("write: +")), "{md}");
    assert!(!md.contains("branch pages for the same data"), "{md}");

    // The report by leaf pages: the finding is the step; JSON and CSV keyed by its name;
    // the gate fails on it.
    let out = dir.path().join("by-leaves");
    let mut c = lmdb_regress();
    run_ok(c.args(["report", "--metric", "leaf-pages", "--format", "json,csv", "--out-dir"]).arg(&out).arg(&planted));
    let json = std::fs::read_to_string(out.join("planted.json")).unwrap();
    assert!(json.contains("leaf-pages") || json.contains("leaf pages"), "{json}");
    let csv = std::fs::read_to_string(out.join("planted-samples.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("leaf_pages"), "{csv}");
    let md = stdout(&run_ok(lmdb_regress().args(["report", "--metric", "leaf-pages"]).arg(&planted)));
    assert!(md.contains("write: +100.0% leaf pages for the same data at `LMDB_0.9.33`"), "{md}");
    let gate =
        lmdb_regress().args(["report", "--metric", "leaf-pages", "--fail-on", "slower:5%"]).arg(&planted).output();
    assert_eq!(gate.unwrap().status.code(), Some(3), "twice the leaf pages fail a gate of 5% as a regression");
}

#[test]
fn a_space_metric_asked_of_a_run_without_it_says_how_to_take_it() {
    // A run file from before space was measured (schema 1): it reports as before, and by
    // a space metric it says how to measure one.
    let old = testdata("run-fixed.jsonl");
    let out = lmdb_regress().args(["report", "--metric", "free-pages"]).arg(&old).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no space figures") && stderr(&out).contains("--workloads write"), "{out:?}");
    let out = lmdb_regress().args(["run", "--tags", "0.9.33", "--workloads", "readSeq", "--metric", "depth"]).output();
    let out = out.unwrap();
    assert!(
        !out.status.success() && stderr(&out).contains("add write (or a preset's write) to --workloads"),
        "{out:?}"
    );
}

#[test]
fn bisect_judges_by_a_space_metric() {
    // Two tags that write the same pages: bisect measures both by leaf pages, exactly, and
    // finds nothing to bisect.
    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.current_dir(dir.path()).args(["bisect", "--good", "LMDB_0.9.18", "--bad", "LMDB_0.9.33"]);
    let out = c.args(["--metric", "leaf-pages", "--entries", "3000"]).output().unwrap();
    let (err, text) = (stderr(&out), stdout(&out));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("exact same") && err.contains("nothing to bisect"), "{err}");
    assert!(text.contains("leaf pages n=1 vs LMDB_0.9.33"), "{text}");
}
