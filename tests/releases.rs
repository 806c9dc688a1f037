//! The 1.0 line beside 0.9: five source files, -ldl, its own on-disk format, its layout
//! proved against the bindings; ref names resolved and labelled. No registry carries a 1.0
//! release, so the 1.0 line here is mdb.master3 at 10161b20fe (an ancestor of LMDB_1.0.0)
//! from the crate lmdb-master3-sys 0.2.6, committed to a repository made at test time.

use crate::common;

use std::path::Path;

use common::*;

/// A repository in OpenLDAP's layout: LMDB_0.9.33 tagged on master, then the 1.0 line's
/// files (module.c among them) on the branch mdb.master3. Returns mdb.master3's commit.
fn repo_with_both_lines(repo: &Path) -> String {
    make_repo(repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    git(repo, &["checkout", "-q", "-b", "mdb.master3"]);
    let (src, dest) = (master3_source_dir(), repo.join("libraries/liblmdb"));
    for f in ["lmdb.h", "mdb.c", "midl.c", "midl.h", "module.c"] {
        std::fs::copy(src.join(f), dest.join(f)).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "the 1.0 line (mdb.master3 at 10161b20fe)"]);
    git(repo, &["checkout", "-q", "master"]);
    git(repo, &["rev-parse", "mdb.master3"])
}

/// The 1.0 line builds (library and C twin) with module.c, labelled by its branch, each
/// build recording its proved layout; a name the repository lacks is refused.
fn builds_with_module_c_and_its_layout_proved(repo: &Path, master3: &str) {
    let out = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["build", "--json", "--c-harness", "--cflags", &unoptimised_cflags()])
            .args(["--tags", "0.9.33,mdb.master3", "--git"])
            .arg(repo),
    );
    let rows = json(&out);
    let text = rows.to_string();
    let label = format!("mdb.master3 @ {}", &master3[..8]);
    assert!(text.contains(&label), "{text}");
    assert!(text.contains("module.c") && text.contains(&master3), "{text}");
    // Every build record holds its probe's figures, and they are the bindings'.
    let cache = test_cache();
    let records: Vec<serde_json::Value> = std::fs::read_dir(cache.join("builds"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("build.json")).ok())
        .map(|b| serde_json::from_slice(&b).unwrap())
        .filter(|r: &serde_json::Value| r["label"] == label.as_str())
        .collect();
    assert_eq!(records.len(), 2, "a library and a C twin: {records:?}");
    for r in &records {
        assert_eq!(r["abi"]["sizeof(MDB_stat)"], 40, "{r}");
        assert_eq!(r["abi"]["sizeof(size type)"], 8, "{r}");
        assert_eq!(r["lmdb_version"].as_str().map(|v| v.contains("0.9.90")), Some(true), "{r}");
    }
    // A name the repository does not have says so, and what it knows.
    let bad = lmdb_regress().args(["build", "--tags", "mdb.nosuch", "--git"]).arg(repo).output().unwrap();
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("neither a known tag") && stderr(&bad).contains("mdb.nosuch"), "{}", stderr(&bad));
}

#[test]
fn the_1_0_line_builds_and_runs_every_workload_beside_0_9_with_the_same_checksums() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let master3 = repo_with_both_lines(&repo);
    builds_with_module_c_and_its_layout_proved(&repo, &master3);
    let run = tmp.path().join("run.jsonl");
    // Random layouts: each is linked from the objects, module.o and -ldl among them.
    run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["run", "--engine", "rust,c", "--rounds", "1", "--warmup", "0", "--entries", "2000"])
            // Unoptimised: what builds, links and agrees is checked, not how fast.
            .args(["--cflags", &unoptimised_cflags()])
            .args(["--tags", "LMDB_0.9.33,mdb.master3", "--git"])
            .arg(&repo)
            .arg("--out")
            .arg(&run),
    );
    let label = format!("mdb.master3 @ {}", &master3[..8]);
    let text = std::fs::read_to_string(&run).unwrap();
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!records.iter().any(|r| r["type"] == "failure"), "{text}");
    // Every workload measured for both lines on both engines; 0.9 and 1.0 cannot open each
    // other's files, so a shared read database or environment would have failed here.
    for engine in ["rust", "c"] {
        for workload in ["readKey", "readSeq", "readRev", "readCrc", "readXxh64", "write"] {
            for tag in ["LMDB_0.9.33", label.as_str()] {
                let found = records.iter().any(|r| {
                    r["type"] == "sample" && r["engine"] == engine && r["workload"] == workload && r["tag"] == tag
                });
                assert!(found, "no {engine} {workload} sample of {tag}");
            }
        }
    }
    let report = run_ok(lmdb_regress().args(["report", "--format", "json"]).arg(&run));
    let model = json(&report);
    for s in model["sections"].as_array().unwrap() {
        assert_eq!(s["checksum_mismatches"].as_array().map(Vec::len), Some(0), "{s}");
    }
    per_transaction_sync_is_exact_on_the_1_0_line_and_not_applicable_on_0_9(&repo, &label, tmp.path());
}

/// `--sync txn-nosync,txn-nometasync` on the 1.0 line: each write transaction's flag on an
/// environment opened to sync, so that a commit makes no sync (MDB_NOSYNC) or the data's
/// fdatasync alone (MDB_NOMETASYNC, the meta page written through the plain descriptor),
/// and writes what the environment's full sync writes: exact, the same in both engines.
/// 0.9.33 drops the flags: its per-transaction units run nothing and fail nothing, and
/// every format of the report says they are not applicable, naming what they need.
fn per_transaction_sync_is_exact_on_the_1_0_line_and_not_applicable_on_0_9(repo: &Path, master3: &str, tmp: &Path) {
    let file = tmp.join("txn.jsonl");
    let run = ["--suite", "lmdb", "--workloads", "fillRandomEach", "--entries", "1000", "--layouts", "fixed"];
    let records = run_both_lines(repo, &file, &[&run[..], &["--sync", "sync,txn-nosync,txn-nometasync"]].concat());
    // fillRandomEach at 1,000 entries: 100 commits of one put each.
    let mut io = std::collections::BTreeMap::new();
    for x in records.iter().filter(|r| r["type"] == "sample") {
        let (tag, engine) = (x["tag"].as_str().unwrap(), x["engine"].as_str().unwrap());
        let per = match tag.strip_prefix(master3) {
            Some(" [sync]") => 2,
            Some(" [txn-nometasync]") => 1,
            Some(" [txn-nosync]") => 0,
            _ if tag == "LMDB_0.9.33 [sync]" => 2,
            _ => panic!("no per-transaction unit of 0.9.33 runs: {tag}"),
        };
        assert_eq!((x["io"]["commits"].as_u64(), x["io"]["syncs"].as_u64()), (Some(100), Some(per * 100)), "{x}");
        io.insert((tag.to_string(), engine.to_string()), x["io"]["bytes"].as_u64().unwrap());
    }
    assert_eq!(io.len(), 8, "three modes of the 1.0 line and 0.9.33's sync, in each engine: {io:?}");
    let synced = io[&(format!("{master3} [sync]"), "rust".to_string())];
    for ((tag, engine), bytes) in &io {
        if tag.starts_with(master3) {
            assert_eq!(*bytes, synced, "{tag} {engine}: the same pages written as a full sync's");
        }
    }
    let out = tmp.join("txn-report");
    let formats = "text,markdown,json,csv,html,github";
    run_ok(lmdb_regress().args(["report", "--format", formats, "--out-dir"]).arg(&out).arg(&file));
    let docs: Vec<std::path::PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with("-samples.csv"))
        .collect();
    assert_eq!(docs.len(), 6, "{docs:?}");
    for path in &docs {
        // The text report wraps its lines.
        let doc = std::fs::read_to_string(path).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            doc.contains("not applicable") && doc.contains("LMDB_0.9.33 [txn-nosync]"),
            "{}: {doc}",
            path.display()
        );
        let csv = path.extension().is_some_and(|e| e == "csv");
        assert!(csv || doc.contains("MDB_NOSYNC and MDB_NOMETASYNC on mdb_txn_begin"), "{}: {doc}", path.display());
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("txn.json")).unwrap()).unwrap();
    let row = &json["not_applicable"][0];
    assert_eq!(row["units"], serde_json::json!(["LMDB_0.9.33 [txn-nosync]", "LMDB_0.9.33 [txn-nometasync]"]), "{row}");
    assert_eq!(row["why"]["since"], serde_json::json!([0, 9, 70]), "{row}");
    // One mode, no axis: LmdbJava's write in paired processes, each engine's paired worker
    // given the 1.0 line alone (0.9.33's would refuse the flag and take its process down).
    let file = tmp.join("txn-write.jsonl");
    let records = run_both_lines(repo, &file, &["--workloads", "write", "--sync", "txn-nosync", "--entries", "2000"]);
    let samples: Vec<&serde_json::Value> = records.iter().filter(|r| r["type"] == "sample").collect();
    assert_eq!(samples.len(), 2, "the 1.0 line in each engine: {samples:?}");
    for x in samples {
        assert_eq!(x["tag"], master3, "{x}");
        assert_eq!((x["io"]["commits"].as_u64(), x["io"]["syncs"].as_u64()), (Some(1), Some(0)), "{x}");
    }
}

/// One round of `args` on 0.9.33 and the 1.0 line of `repo` in both engines, unoptimised,
/// into `file`: its records, none of them a failure.
fn run_both_lines(repo: &Path, file: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["run", "--engine", "rust,c", "--rounds", "1", "--warmup", "0", "--no-coverage"])
            .args(args)
            .args(["--cflags", &unoptimised_cflags(), "--tags", "LMDB_0.9.33,mdb.master3", "--git"])
            .arg(repo)
            .arg("--out")
            .arg(file),
    );
    let text = std::fs::read_to_string(file).unwrap();
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(records.iter().all(|r| r["type"] != "failure"), "{text}");
    records
}
