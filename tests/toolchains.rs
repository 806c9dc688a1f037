//! Toolchains as a matrix axis: `--toolchain` parsed and refused clearly, each (tag,
//! toolchain) built, loaded and measured under its own label, a missing compiler named
//! with its Debian package, and the report's per-tag toolchain tables judged like tags.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write_lines(path: &Path, records: &[Value]) {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn samples<'a>(records: &'a [Value], tag: &str, workload: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == "sample" && r["tag"] == tag && r["workload"] == workload).collect()
}

#[test]
fn bad_toolchain_lists_are_refused_before_anything_is_built() {
    for (args, says) in [
        (&["--toolchain", "gcc"][..], "a toolchain is COMPILER:FLAGS"),
        (&["--toolchain", "gcc:-O2,-O3"], "\"-O3\": a toolchain is COMPILER:FLAGS"),
        (&["--toolchain", "gcc:"], "no flags after the colon"),
        (&["--toolchain", "gcc:-O2,gcc:-O2"], "named twice"),
        (&["--toolchain", "gcc:-O2", "--cc", "gcc"], "cannot be used with"),
    ] {
        let out = lmdb_regress().args(["build", "--tags", "0.9.33"]).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    // Two spellings of one compiler would give two builds one label.
    let out =
        lmdb_regress().args(["build", "--tags", "0.9.33", "--toolchain", "gcc:-O2,/usr/bin/gcc:-O2"]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("both named \"gcc -O2\""), "{}", stderr(&out));
}

#[test]
fn a_missing_compiler_names_its_debian_package() {
    // A PATH on which gcc is found and clang is not.
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/usr/bin/gcc", bin.path().join("gcc")).unwrap();
    for cmd in ["build", "run"] {
        let out = lmdb_regress()
            .env("PATH", bin.path())
            .args([cmd, "--tags", "0.9.33", "--toolchain", "gcc:-O2,clang:-O2"])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains("C compiler clang not found") && err.contains("apt-get install clang"), "{cmd}: {err}");
    }
}

/// `run` by gcc -O2 and clang -O2 on one tag, small; returns the run file.
fn run_by_two_toolchains(dir: &Path) -> PathBuf {
    let file = dir.join("run.jsonl");
    run_ok(
        lmdb_regress()
            .args(["run", "--tags", "0.9.33", "--toolchain", "gcc:-O2,clang:-O2", "--workloads", "readSeq,write"])
            .args(["--entries", "2000", "--rounds", "2", "--warmup", "0", "--summary-json", "--out"])
            .arg(&file),
    );
    file
}

#[test]
fn each_toolchain_builds_loads_reports_its_version_and_is_measured_under_its_label() {
    let dir = tempfile::tempdir().unwrap();
    let file = run_by_two_toolchains(dir.path());
    let records = lines(&file);
    let tags = records[0]["tags"].as_array().unwrap();
    let labels: Vec<&str> = tags.iter().map(|t| t["tag"].as_str().unwrap()).collect();
    assert_eq!(labels, ["LMDB_0.9.33", "LMDB_0.9.33 (clang -O2)"]);
    for (t, compiler) in tags.iter().zip(["gcc", "clang"]) {
        assert_eq!(t["status"], "built", "{t}");
        let b = &t["builds"][0];
        assert_eq!(b["label"], t["tag"]);
        // The build loaded, and mdb_version() reported the tag's version.
        assert!(b["lmdb_version"].as_str().unwrap().starts_with("LMDB 0.9.33:"), "{b}");
        assert_eq!(b["toolchain"]["compiler"], compiler);
        assert!(b["toolchain"]["version"].as_str().unwrap().contains(compiler), "{b}");
        assert_eq!(b["toolchain"]["cflags"][0], "-O2");
        // Its own build, in a cache entry of its own.
        assert!(Path::new(b["artifact"].as_str().unwrap()).is_file(), "{b}");
    }
    let artifacts: Vec<&str> = tags.iter().map(|t| t["builds"][0]["artifact"].as_str().unwrap()).collect();
    assert_ne!(artifacts[0], artifacts[1]);
    assert_eq!(tags[1]["builds"][0]["toolchain"]["cflags"][2], "-gdwarf-4", "valgrind reads clang's debug info");
    for w in ["readSeq", "write"] {
        let (gcc, clang) = (samples(&records, labels[0], w), samples(&records, labels[1], w));
        assert_eq!((gcc.len(), clang.len()), (2, 2), "{w}");
        assert_eq!(gcc[0]["checksum"], clang[0]["checksum"], "{w}: both builds read the same data");
    }
    let report: Value =
        serde_json::from_slice(&run_ok(lmdb_regress().arg("report").arg(&file).args(["--format", "json"])).stdout)
            .unwrap();
    let table = &report["toolchains"][0];
    assert_eq!((table["tag"].as_str(), table["reference"].as_str()), (Some("LMDB_0.9.33"), Some("gcc -O2")));
    assert_eq!(table["family"], 2);
    for c in table["comparisons"].as_array().unwrap() {
        assert_eq!((c["tag"].as_str(), c["against"].as_str()), (Some(labels[1]), Some(labels[0])));
        assert_eq!(c["kind"], "toolchain");
    }

    // An interrupted run resumes by the same toolchains: drop round 2 and the end.
    let cut: Vec<Value> =
        records.iter().filter(|r| r["type"] != "end" && r["round"].as_u64() != Some(1)).cloned().collect();
    write_lines(&file, &cut);
    run_ok(lmdb_regress().args(["run", "--summary-json", "--resume"]).arg(&file));
    let resumed = lines(&file);
    for label in labels {
        assert_eq!(samples(&resumed, label, "write").len(), 2, "{label} measured again in round 2");
    }
    assert_eq!(resumed.last().unwrap()["reason"], "rounds");
}

#[test]
fn bisect_searches_once_per_toolchain() {
    let src = source_dir("LMDB_0.9.33");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let good = make_repo(&repo, &[("LMDB_0.9.33", &src)])[0].clone();
    let p = repo.join("libraries/liblmdb/mdb.c");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* neutral */\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "neutral"]);
    let bad = git(&repo, &["rev-parse", "HEAD"]);
    let runs = tmp.path().join("runs");
    let out = lmdb_regress()
        .env("LMDB_REGRESS_OFFLINE", "1")
        .args(["bisect", "--good", &good, "--bad", &bad, "--workload", "write", "--entries", "2000"])
        .args(["--metric", "instructions", "--min-rounds", "1", "--max-rounds", "1"])
        .args(["--toolchain", "gcc:-O2,clang:-O2", "--git"])
        .arg(&repo)
        .arg("--out-dir")
        .arg(&runs)
        .output()
        .unwrap();
    let text = stdout(&out);
    // No slowdown to narrow under either toolchain: each search says so, and bisect exits 1.
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(stderr(&out).contains("no slowdown was narrowed down under gcc -O2, clang -O2"), "{}", stderr(&out));
    let (gcc, clang) = text.split_once("== bisecting under clang -O2 ==").unwrap_or_else(|| panic!("{text}"));
    assert!(gcc.contains("== bisecting under gcc -O2 ==") && gcc.contains("toolchain: gcc -O2 (gcc "), "{text}");
    assert!(clang.contains("toolchain: clang -O2 (") && clang.contains("clang version"), "{text}");
    for (part, dir) in [(gcc, "gcc--O2"), (clang, "clang--O2")] {
        assert!(part.contains("nothing to bisect"), "{text}");
        assert!(std::fs::read_dir(runs.join(dir)).unwrap().count() > 0, "{dir}: its runs are kept apart");
    }
}

/// A run file made here: LMDB_0.9.18 and 0.9.33, each by gcc -O2 (plain label) and
/// clang -O2, 10 rounds. clang writes 10% slower than gcc on both tags; readSeq is the
/// same under both; 0.9.33 writes 10% slower than 0.9.18 under both.
fn synthetic_run(dir: &Path) -> PathBuf {
    let fixed =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/run-fixed.jsonl")).unwrap();
    let mut header: Value = serde_json::from_str(fixed.lines().next().unwrap()).unwrap();
    let template = header["tags"][1].clone();
    let mut tags = Vec::new();
    for tag in ["LMDB_0.9.18", "LMDB_0.9.33"] {
        for (suffix, compiler, version) in [
            ("", "gcc", "gcc (Debian 12.2.0-14+deb12u1) 12.2.0"),
            (" (clang -O2)", "clang", "Debian clang version 14.0.6"),
        ] {
            let mut t = template.clone();
            t["tag"] = json!(format!("{tag}{suffix}"));
            // As long as a git checkout's: the text's Builds table must still fit 80 columns.
            t["provenance"] = json!(format!("git commit {} (cache)", "0".repeat(40)));
            t["builds"][0]["label"] = t["tag"].clone();
            t["builds"][0]["toolchain"]["compiler"] = json!(compiler);
            t["builds"][0]["toolchain"]["version"] = json!(version);
            tags.push(t);
        }
    }
    header["tags"] = json!(tags);
    header["plan"]["rounds"] = json!(10);
    let mut records = vec![header];
    let mut seed: u64 = 10406;
    let mut wobble = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        1.0 + 0.004 * ((seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5)
    };
    for round in 0..10u32 {
        let drift = 1.0 + 0.01 * ((round % 3) as f64 - 1.0);
        for t in &tags {
            let label = t["tag"].as_str().unwrap();
            let clang = if label.contains("clang") { 1.10 } else { 1.0 };
            let newer = if label.starts_with("LMDB_0.9.33") { 1.10 } else { 1.0 };
            for (w, ms) in [("readSeq", 20.0), ("write", 80.0 * clang * newer)] {
                let ns = (ms * drift * wobble() * 1e6) as u64;
                let checksum = json!({"entries": 1000000, "digest": 7});
                records.push(json!({"type": "sample", "round": round, "engine": "rust", "tag": label,
                                    "workload": w, "ns": ns, "checksum": checksum}));
            }
        }
    }
    records.push(json!({"type": "end", "reason": "rounds", "rounds": 10, "finished": "2026-01-01T00:10:00Z"}));
    let file = dir.join("toolchains.jsonl");
    write_lines(&file, &records);
    file
}

fn report(file: &Path, args: &[&str]) -> String {
    stdout(&run_ok(lmdb_regress().arg("report").arg(file).args(args)))
}

#[test]
fn toolchain_tables_judge_builds_like_tags() {
    let dir = tempfile::tempdir().unwrap();
    let file = synthetic_run(dir.path());
    let doc: Value = serde_json::from_str(&report(&file, &["--format", "json"])).unwrap();
    let tables = doc["toolchains"].as_array().unwrap();
    assert_eq!(tables.iter().map(|t| t["tag"].as_str().unwrap()).collect::<Vec<_>>(), ["LMDB_0.9.18", "LMDB_0.9.33"]);
    for t in tables {
        assert_eq!(t["reference"], "gcc -O2");
        assert_eq!(t["family"], 2, "one family per table: two workloads, one other toolchain");
        let by: Vec<(&str, &str)> = t["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["workload"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
            .collect();
        assert_eq!(by, [("readSeq", "same"), ("write", "slower")], "{t}");
        let write = &t["comparisons"][1];
        assert!((write["ratio"].as_f64().unwrap() - 1.10).abs() < 0.01, "{write}");
        assert!(write["confidence"].as_f64().unwrap() > 0.97, "Bonferroni over the table: 1 - 0.05/2");
    }
    // Against the baseline tag, each build is compared with the baseline built by its own toolchain.
    let write = doc["sections"].as_array().unwrap().iter().find(|s| s["workload"] == "write").unwrap();
    assert_eq!(write["baseline_family"], 2);
    let pairs: Vec<(&str, &str)> = write["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "baseline")
        .map(|c| (c["tag"].as_str().unwrap(), c["against"].as_str().unwrap()))
        .collect();
    assert_eq!(pairs, [("LMDB_0.9.33", "LMDB_0.9.18"), ("LMDB_0.9.33 (clang -O2)", "LMDB_0.9.18 (clang -O2)")]);
    assert_eq!(doc["baseline"], "LMDB_0.9.18");

    let md = report(&file, &[]);
    assert!(md.contains("# Toolchains") && md.contains("## `LMDB_0.9.33` (reference: `gcc -O2`)"), "{md}");
    assert!(md.contains("| `write, clang -O2` | "), "{md}");
    let text = report(&file, &["--format", "text"]);
    assert!(text.contains("TOOLCHAINS"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "wider than 80 columns: {line}");
    }
    // A baseline named with its toolchain means its tag.
    let other: Value =
        serde_json::from_str(&report(&file, &["--format", "json", "--baseline", "LMDB_0.9.33 (clang -O2)"])).unwrap();
    assert_eq!(other["baseline"], "LMDB_0.9.33");
}
