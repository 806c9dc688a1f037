//! `coverage` over a repository made here: lines planted in a function the write workload
//! runs count as changed and executed, lines planted in one it never runs as changed and
//! missed, each exactly.

use crate::common;

use common::*;

const PUT: &str = "mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    unsigned int flags)\n{\n";
const COPY: &str = "mdb_env_copy(MDB_env *env, const char *path)\n{\n";
/// One executable line.
const PLANTED: &str = "\t{ volatile int planted = 1; (void)planted; }\n";

/// `text` with `lines` planted lines after the first `at`.
fn plant(text: &str, at: &str, lines: usize) -> String {
    assert!(text.contains(at), "no {at:?}");
    text.replacen(at, &format!("{at}{}", PLANTED.repeat(lines)), 1)
}

#[test]
fn planted_lines_count_as_executed_where_the_workload_runs_them() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let p = repo.join("libraries/liblmdb/mdb.c");
    let text = std::fs::read_to_string(&p).unwrap();
    // Two lines in the put every write makes, three in mdb_env_copy, which no workload calls.
    std::fs::write(&p, plant(&plant(&text, PUT, 2), COPY, 3)).unwrap();
    git(&repo, &["commit", "-q", "-am", "planted lines"]);
    let b = git(&repo, &["rev-parse", "HEAD"]);
    let out = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["coverage", "LMDB_0.9.33", &b, "--workloads", "write", "--entries", "2000", "--format", "json"])
            .arg("--git")
            .arg(&repo),
    );
    let c = json(&out);
    assert_eq!(c["a"], "LMDB_0.9.33", "{c}");
    assert_eq!((c["suite"].as_str(), c["workloads"].to_string().as_str()), (Some("lmdbjava"), r#"["write"]"#));
    assert_eq!(c["changed"], serde_json::json!({"executable": 5, "executed": 2}), "{c}");
    assert_eq!(c["missed"], serde_json::json!([{"function": "mdb_env_copy", "changed_lines": 3}]), "{c}");
    // 0.9.33's mdb.c as gcc -O0 marks it, and the five planted lines.
    assert_eq!(c["files"]["mdb.c"]["executable"], 4275 + 5, "{c}");
    let executed = c["files"]["mdb.c"]["executed"].as_u64().unwrap();
    assert!(executed > 500 && executed < 4275, "{c}");
    assert!(c["files"]["midl.c"]["executed"].as_u64().unwrap() > 0, "{c}");
}

#[test]
fn coverage_builds_take_no_other_flags_and_need_gcc() {
    for (extra, says) in [(["--cflags", "-O2"], "takes no --toolchain or --cflags"), (["--cc", "clang"], "is not gcc")]
    {
        let out = lmdb_regress().args(["coverage", "LMDB_0.9.33", "LMDB_0.9.18"]).args(extra).output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(says), "{extra:?}: {}", stderr(&out));
    }
}
