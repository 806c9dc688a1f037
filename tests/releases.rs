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
}
