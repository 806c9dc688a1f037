//! Counts as values by metric: callgrind's cache simulation gives D1 and LL misses and
//! estimated cycles beside instructions, exact and repeating; every format shows what the
//! run holds; and run files from before counts were values load, report and resume.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::Value;

const EVENTS: [&str; 9] = ["Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"];

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write_records(path: &Path, rs: &[Value]) {
    std::fs::write(path, rs.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
}

/// (tag, workload) → the events counted, of every counted sample (an older sample's
/// `instructions` as its `Ir`).
fn counted(path: &Path) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for r in records(path).into_iter().filter(|r| r["type"] == "sample") {
        let counts = match (r.get("counts"), r.get("instructions")) {
            (Some(c), _) => c.clone(),
            (None, Some(n)) => serde_json::json!({ "Ir": n }),
            (None, None) => continue,
        };
        out.insert((r["tag"].as_str().unwrap().into(), r["workload"].as_str().unwrap().into()), counts);
    }
    out
}

/// Whether two counts of the same work agree as the run's check holds them to: instructions
/// exactly, the simulated misses within a few (a buffer placed across one more line).
fn agree(a: &Value, b: &Value) -> bool {
    EVENTS.iter().all(|e| {
        let (x, y) = (a[e].as_u64().unwrap(), b[e].as_u64().unwrap());
        if *e == "Ir" {
            x == y
        } else {
            x.abs_diff(y) <= 4
        }
    })
}

fn cache_run(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--metric", "instructions", "--with-cache", "--entries", "1000"]);
    c.args(["--workloads", "readSeq,write", "--out"]);
    run_ok(c.arg(out).args(extra))
}

/// Iai-callgrind's estimate, computed here from the raw events.
fn estimated_cycles(c: &Value) -> u64 {
    let e = |k: &str| c[k].as_u64().unwrap();
    let ram = e("ILmr") + e("DLmr") + e("DLmw");
    let l1_misses = e("I1mr") + e("D1mr") + e("D1mw");
    let l1_hits = e("Ir") + e("Dr") + e("Dw") - l1_misses;
    l1_hits + 5 * (l1_misses - ram) + 35 * ram
}

#[test]
fn cache_metrics_are_simulated_exactly_and_repeat_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    cache_run(&a, &[]);
    cache_run(&b, &[]);
    let (first, second) = (counted(&a), counted(&b));
    assert_eq!(first.len(), 4, "two tags, two workloads: {first:?}");
    for (unit, counts) in &first {
        for e in EVENTS {
            assert!(counts[e].as_u64().is_some(), "{unit:?} has no {e}: {counts}");
        }
        assert!(agree(counts, &second[unit]), "{unit:?} counted twice: {counts} then {}", second[unit]);
    }
    let rs = records(&a);
    assert!(rs[0]["instruction_counter"].as_str().unwrap().contains("--cache-sim=yes"), "{}", rs[0]);
    let check = rs.iter().find(|r| r["type"] == "check").expect("the closing check");
    assert_eq!(check["passed"], true, "{check}");
    let detail = check["detail"].as_str().unwrap();
    assert!(detail.contains("instructions") && detail.contains("estimated cycles"), "{detail}");

    let json = json(&run_ok(lmdb_regress().arg("report").arg(&a).args(["--format", "json"])));
    let write = json["sections"].as_array().unwrap().iter().find(|s| s["workload"] == "write").unwrap();
    let row = &write["ranked"][0];
    let tag = row["tag"].as_str().unwrap();
    let per = |c: u64| c as f64 / 1000.0;
    let raw = &first[&(tag.to_string(), "write".to_string())];
    assert_eq!(row["per_entry"]["estimated-cycles"].as_f64(), Some(per(estimated_cycles(raw))), "{row}");
    let d1 = raw["D1mr"].as_u64().unwrap() + raw["D1mw"].as_u64().unwrap();
    assert_eq!(row["per_entry"]["d1-misses"].as_f64(), Some(per(d1)), "{row}");
    let comparison = &write["comparisons"][0];
    for key in ["d1_misses_ratio", "ll_misses_ratio", "estimated_cycles_ratio"] {
        assert!(comparison[key].as_f64().is_some(), "{key}: {comparison}");
    }

    let text = stdout(&run_ok(lmdb_regress().arg("report").arg(&a).args(["--format", "text"])));
    assert!(text.contains("D1mis") && text.contains("cycles/entry"), "{text}");
    assert!(text.contains("cache simulation") && text.contains("prefetching"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let csv = std::fs::read_to_string(report_csv(&a, dir.path())).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.contains("estimated_cycles_per_entry") && header.contains("vs_baseline_d1_misses_ratio"),
        "{header}"
    );
}

/// The summary CSV `report --format csv` writes for `run`.
fn report_csv(run: &Path, dir: &Path) -> std::path::PathBuf {
    let out = dir.join("csv");
    run_ok(lmdb_regress().arg("report").arg(run).args(["--format", "csv", "--out-dir"]).arg(&out));
    let found = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path());
    found.into_iter().find(|p| p.to_string_lossy().ends_with("-summary.csv")).expect("a summary CSV")
}

/// (A run without the cache simulation says how to take it: tests/lmdb_suite.rs, the long
/// reader's run.)
#[test]
fn a_cache_metric_is_a_metric_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    cache_run(&a, &[]);
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&a).args(["--metric", "estimated-cycles"])));
    assert!(md.contains("cycles/entry") && md.contains("Counts of estimated cycles"), "{md}");
}

#[test]
fn a_run_file_from_before_counts_were_values_loads_reports_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--workloads", "write", "--entries", "1000", "--rounds", "2"]);
    c.args(["--warmup", "0", "--with-instructions", "--count-entries", "1000", "--out"]);
    run_ok(c.arg(&run));
    let now = counted(&run);
    // As lmdb-regress wrote it before: schema 4, each count as `instructions`; stopped in
    // the counting pass after its first unit (no check, 0.9.33 not counted yet).
    let mut rs = records(&run);
    rs[0]["schema"] = 4.into();
    rs.retain(|r| r["type"] != "check" && !(r["counted"] == true && r["tag"] == "LMDB_0.9.33"));
    for r in rs.iter_mut().filter(|r| r.get("counts").is_some()) {
        let n = r["counts"]["Ir"].clone();
        let o = r.as_object_mut().unwrap();
        o.remove("counts");
        o.insert("instructions".into(), n);
    }
    write_records(&run, &rs);
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(md.contains("Partial counts") && md.contains("instr/entry"), "{md}");

    run_ok(lmdb_regress().args(["run", "--resume"]).arg(&run));
    let after = counted(&run);
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after, now, "the older file's count read as Ir, the new one counted as before");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(!md.contains("Partial"), "{md}");
    let per = format!("{:.1}", now[&("LMDB_0.9.18".into(), "write".into())]["Ir"].as_u64().unwrap() as f64 / 1000.0);
    assert!(md.contains(&per), "0.9.18's count per entry {per} in\n{md}");
}

/// The two figures of `name` in a check's detail ("D1 misses 11236 then 11236").
fn figures(detail: &str, name: &str) -> (u64, u64) {
    let rest = detail.split(&format!("{name} ")).nth(1).unwrap_or_else(|| panic!("no {name} in {detail}"));
    let mut n = rest.split(|c: char| !c.is_ascii_digit()).filter(|x| !x.is_empty()).map(|x| x.parse().unwrap());
    (n.next().unwrap(), n.next().unwrap())
}

#[test]
fn data_cache_figures_do_not_move_with_code_layout_and_are_shown_beside_the_layout_check() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.33", "--layouts", "random", "--layout-seed", "1", "--with-cache"]);
    c.args(["--rounds", "1", "--warmup", "0", "--workloads", "readSeq", "--entries", "2000", "--out"]);
    run_ok(c.arg(&run));
    let rs = records(&run);
    let check = rs.iter().find(|r| r["kind"] == "layouts").expect("the layout check");
    let detail = check["detail"].as_str().unwrap();
    assert_eq!(check["passed"], true, "{detail}");
    let (a, b) = figures(detail, "D1 misses");
    assert_eq!(a, b, "{detail}");
    assert!(a > 0, "{detail}");
    // Shown, not judged: the instruction cache sees code addresses.
    assert!(detail.contains("not judged") && detail.contains("I1 misses"), "{detail}");
}
