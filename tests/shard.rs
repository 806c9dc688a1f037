//! Shards and merging: the shards of a run measure exactly its units, their merged
//! instruction counts are the unsharded run's, and `merge` refuses what cannot be
//! compared. Instruction counts under callgrind are exact, so the round trip compares
//! them for equality.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::Value;

const TAGS: &str = "0.9.18,0.9.21,0.9.33";
const ENTRIES: &str = "1000";

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write_records(path: &Path, rs: &[Value]) {
    let text: String = rs.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn header(path: &Path) -> Value {
    records(path).swap_remove(0)
}

/// (engine, tag, workload) → instructions, of every sample.
fn counts(path: &Path) -> BTreeMap<(String, String, String), u64> {
    let mut out = BTreeMap::new();
    for r in records(path).into_iter().filter(|r| r["type"] == "sample") {
        let text = |k: &str| r[k].as_str().unwrap().to_string();
        let key = (text("engine"), text("tag"), text("workload"));
        let n = r["counts"]["Ir"].as_u64().unwrap_or_else(|| panic!("a sample without a count: {r}"));
        assert!(out.insert(key, n).is_none(), "one sample per unit and workload: {r}");
    }
    out
}

/// A tiny instruction run under callgrind (exact counts), with `extra` arguments.
fn count_run(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_COUNTER", "callgrind");
    c.args(["run", "--tags", TAGS, "--control", "0.9.21", "--metric", "instructions", "--entries", ENTRIES]);
    c.args(["--rounds", "1", "--warmup", "0", "--workloads", "write", "--out"]);
    run_ok(c.arg(out).args(extra))
}

#[test]
fn two_shards_merge_into_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.jsonl");
    count_run(&whole, &[]);
    let shards: Vec<_> = (1..=2).map(|k| dir.path().join(format!("shard-{k}.jsonl"))).collect();
    for (k, path) in shards.iter().enumerate() {
        count_run(path, &["--shard", &format!("{}/2", k + 1)]);
    }

    // Release order, round robin; the control stays with its tag.
    let own = |p: &Path| -> Vec<String> { counts(p).into_keys().map(|(_, t, _)| t).collect() };
    assert_eq!(own(&shards[0]), ["LMDB_0.9.18", "LMDB_0.9.33"]);
    assert_eq!(own(&shards[1]), ["LMDB_0.9.21", "LMDB_0.9.21~control"]);
    let plan = &header(&shards[1])["plan"];
    assert_eq!((plan["shard"]["index"].as_u64(), plan["shard"]["count"].as_u64()), (Some(2), Some(2)), "{plan}");

    let merged = dir.path().join("merged.jsonl");
    let e = merge_err(&[&shards[0]], &[], &merged);
    assert!(e.contains("missing shard(s) 2/2"), "{e}");
    let e = merge_err(&[&shards[0], &shards[1], &shards[0]], &[], &merged);
    assert!(e.contains("shard 1/2 is given twice"), "{e}");
    let mut merge = lmdb_regress();
    run_ok(merge.arg("merge").args(&shards).arg("--out").arg(&merged));
    assert_eq!(counts(&merged), counts(&whole), "the same units, the same counts");
    let (m, w) = (header(&merged), header(&whole));
    let labels = |h: &Value| -> Vec<Value> { h["tags"].as_array().unwrap().iter().map(|t| t["tag"].clone()).collect() };
    assert_eq!(labels(&m), labels(&w));
    // Every unit of the shards declared once, as the value its label was rendered from.
    let units = |h: &Value| -> Vec<Value> {
        let mut v = h["units"].as_array().unwrap().clone();
        v.sort_by_key(|u| u["label"].to_string());
        v
    };
    assert_eq!((m["schema"].as_u64(), units(&m)), (Some(u64::from(lmdb_regress::record::SCHEMA)), units(&w)));
    let control = serde_json::json!({"label": "LMDB_0.9.21~control", "base": "LMDB_0.9.21", "toolchain": null,
        "layout": null, "control": true});
    assert!(units(&m).contains(&control), "{}", m["units"]);
    assert!(m["plan"].get("shard").is_none(), "a merged run is no shard: {}", m["plan"]);
    assert_eq!(m["parts"].as_array().map(Vec::len), Some(2));
    // The end, then the one coverage record every shard measured of the whole run's pair.
    let last: Vec<Value> = records(&merged).iter().rev().take(2).map(|r| r["type"].clone()).collect();
    assert_eq!(last, ["coverage", "end"]);

    // `report` renders it like any other run.
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&merged)));
    assert!(md.contains("LMDB_0.9.21~control") && md.contains("Write Entry"), "{md}");
}

#[test]
fn summary_json_carries_instruction_counts() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| -> Vec<Value> {
        let mut c = lmdb_regress();
        c.env("LMDB_REGRESS_COUNTER", "callgrind");
        c.args(["run", "--summary-json", "--tags", "0.9.33", "--entries", "2000", "--rounds", "1", "--warmup", "0"]);
        c.args(["--workloads", "write", "--force", "--out"]).arg(dir.path().join("run.jsonl")).args(extra);
        json(&run_ok(&mut c)).as_array().unwrap().clone()
    };
    // An instruction run: counts, per entry of the run's entries; no times taken under the counter.
    let rows = run(&["--metric", "instructions"]);
    let counted = counts(&dir.path().join("run.jsonl"));
    let (r, n) = (&rows[0], *counted.values().next().unwrap());
    assert_eq!((rows.len(), r["n"].as_u64()), (1, Some(1)), "{rows:?}");
    assert_eq!(r["median_instructions"].as_f64(), Some(n as f64), "{r}");
    assert_eq!(r["instructions_per_entry"].as_f64(), Some(n as f64 / 2000.0), "{r}");
    assert!(r["median_ms"].is_null() && r["min_ms"].is_null(), "{r}");

    // Time with a counting pass: times from the rounds, counts per entry of the pass.
    let rows = run(&["--with-instructions", "--count-entries", "500"]);
    let r = &rows[0];
    assert_eq!(r["n"].as_u64(), Some(1), "the counting pass is no time sample: {r}");
    assert!(r["median_ms"].as_f64().unwrap() > 0.0, "{r}");
    let i = r["median_instructions"].as_f64().unwrap();
    assert_eq!(r["instructions_per_entry"].as_f64(), Some(i / 500.0), "{r}");
    assert!(i < n as f64 / 2.0, "500 entries take fewer instructions than 2000: {i} against {n}");
}

/// The committed time run (with a counting pass), split into two runs by tag.
fn split_fixed(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let all = records(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/run-fixed.jsonl")));
    let first = |t: &str| t == "LMDB_0.9.17" || t == "LMDB_0.9.19";
    let part = |mine: bool| -> Vec<Value> {
        let mut h = all[0].clone();
        h["tags"].as_array_mut().unwrap().retain(|t| first(t["tag"].as_str().unwrap()) == mine);
        let rest = all[1..].iter().filter(|r| r["type"] == "end" || first(r["tag"].as_str().unwrap()) == mine);
        std::iter::once(h).chain(rest.cloned()).collect()
    };
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    write_records(&a, &part(true));
    write_records(&b, &part(false));
    (a, b)
}

fn merge_err(runs: &[&Path], extra: &[&str], out: &Path) -> String {
    let o = lmdb_regress().arg("merge").args(runs).arg("--out").arg(out).args(extra).output().unwrap();
    assert!(!o.status.success(), "merge should refuse: {}", stdout(&o));
    stderr(&o)
}

#[test]
fn time_runs_merge_only_their_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = split_fixed(dir.path());
    let out = dir.path().join("merged.jsonl");
    let e = merge_err(&[&a, &b], &[], &out);
    assert!(e.contains("time samples from separate runs cannot be merged") && e.contains("--drop-time"), "{e}");

    run_ok(lmdb_regress().arg("merge").arg(&a).arg(&b).arg("--out").arg(&out).arg("--drop-time"));
    let rs = records(&out);
    assert_eq!(rs[0]["plan"]["metric"], "instructions");
    assert_eq!(rs[0]["config"]["entries"], 100_000, "the counting pass's entries");
    let samples: Vec<&Value> = rs.iter().filter(|r| r["type"] == "sample").collect();
    assert_eq!(samples.len(), 6, "the counting pass of three tags, two workloads");
    assert!(samples.iter().all(|s| s.get("counted").is_none() && s["counts"]["Ir"].as_u64().is_some()));
    assert_eq!(rs.iter().filter(|r| r["type"] == "failure").count(), 1, "every failure is kept");
    let tags: Vec<&str> = rs[0]["tags"].as_array().unwrap().iter().map(|t| t["tag"].as_str().unwrap()).collect();
    assert_eq!(tags, ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.19", "LMDB_0.9.33"], "every tag status is kept");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&out)));
    assert!(md.contains("instr/entry") && md.contains("LMDB_0.9.19"), "{md}");

    // Time runs without a counting pass leave nothing to merge.
    let uncounted = |p: &Path| {
        let mut rs = records(p);
        rs[0]["plan"].as_object_mut().unwrap().remove("count_entries");
        rs.retain(|r| r.get("counted").is_none());
        write_records(p, &rs);
    };
    uncounted(&a);
    uncounted(&b);
    let e = merge_err(&[&a, &b], &["--drop-time"], &dir.path().join("none.jsonl"));
    assert!(e.contains("a.jsonl has no instruction counts"), "{e}");
}

#[test]
fn merge_names_what_differs_and_refuses_a_tag_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = split_fixed(dir.path());
    let out = dir.path().join("merged.jsonl");
    let mut other = records(&b);
    other[0]["config"]["value_size"] = 200.into();
    let c = dir.path().join("c.jsonl");
    write_records(&c, &other);
    let e = merge_err(&[&a, &c], &["--drop-time"], &out);
    assert!(e.contains("config.value_size differs") && e.contains("100") && e.contains("200"), "{e}");

    let e = merge_err(&[&a, &b, &a], &["--drop-time"], &out);
    assert!(e.contains("LMDB_0.9.17 is measured in both a.jsonl and a.jsonl"), "{e}");
    assert!(!out.exists(), "nothing is written when merge refuses");
}

#[test]
fn shards_are_checked_before_anything_is_built() {
    let out = lmdb_regress().args(["run", "--shard", "3/3", "--tags", "0.9.18,0.9.33"]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("shard 3/3 holds no tag: the run has 2 tag(s)"), "{}", stderr(&out));
    let out = lmdb_regress().args(["run", "--shard", "0/2"]).output().unwrap();
    assert!(!out.status.success() && stderr(&out).contains("expected K/N"), "{}", stderr(&out));
}

/// The shards of a chunk-paired time run each measure the baseline beside their own tags,
/// so every comparison with it is made inside one process on one machine; `merge` keeps
/// each shard's rounds apart (a round pairs only what one process measured) and the report
/// compares every tag with the baseline.
#[test]
fn chunk_paired_shards_each_measure_the_baseline_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<_> = (1..=2).map(|k| dir.path().join(format!("shard-{k}.jsonl"))).collect();
    for (k, path) in shards.iter().enumerate() {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", TAGS, "--entries", ENTRIES, "--workloads", "write", "--rounds", "2", "--warmup", "0"]);
        c.args(["--layouts", "fixed", "--shard", &format!("{}/2", k + 1), "--out"]).arg(path);
        run_ok(&mut c);
    }
    let tags = |p: &Path| -> std::collections::BTreeSet<String> {
        records(p)
            .into_iter()
            .filter(|r| r["type"] == "sample")
            .map(|r| r["tag"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(tags(&shards[0]).into_iter().collect::<Vec<_>>(), ["LMDB_0.9.18", "LMDB_0.9.33"]);
    assert_eq!(
        tags(&shards[1]).into_iter().collect::<Vec<_>>(),
        ["LMDB_0.9.18", "LMDB_0.9.21"],
        "the baseline beside its own"
    );
    let merged = dir.path().join("merged.jsonl");
    run_ok(lmdb_regress().arg("merge").args(&shards).arg("--out").arg(&merged));
    let rounds = |tag: &str| -> Vec<u64> {
        let r = records(&merged);
        r.iter().filter(|s| s["type"] == "sample" && s["tag"] == tag).map(|s| s["round"].as_u64().unwrap()).collect()
    };
    assert_eq!(rounds("LMDB_0.9.18"), [0, 1, 2, 3], "each shard's processes are rounds of their own");
    assert_eq!((rounds("LMDB_0.9.33"), rounds("LMDB_0.9.21")), (vec![0, 1], vec![2, 3]));
    let report = lmdb_regress()
        .arg("report")
        .arg(&merged)
        .args(["--format", "json", "--out-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("merged.json")).unwrap()).unwrap();
    let baseline: Vec<&Value> =
        doc["sections"][0]["comparisons"].as_array().unwrap().iter().filter(|c| c["kind"] == "baseline").collect();
    let compared: Vec<&str> = baseline.iter().map(|c| c["tag"].as_str().unwrap()).collect();
    assert_eq!(compared, ["LMDB_0.9.21", "LMDB_0.9.33"], "{baseline:?}");
    assert!(baseline.iter().all(|c| c["method"] == "paired"), "each against the baseline of its own shard's rounds");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&merged)));
    assert!(md.contains("Merged from 2 shards, each of which measured `LMDB_0.9.18` beside its own tags"), "{md}");
}
