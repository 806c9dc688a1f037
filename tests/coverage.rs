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

/// A repository holding LMDB_0.9.33 and a commit after it with two lines planted in the put
/// every write makes and three in mdb_env_copy, which no workload calls; and that commit.
fn planted_repo(at: &std::path::Path) -> (std::path::PathBuf, String) {
    let repo = at.join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let p = repo.join("libraries/liblmdb/mdb.c");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, plant(&plant(&text, PUT, 2), COPY, 3)).unwrap();
    git(&repo, &["commit", "-q", "-am", "planted lines"]);
    let b = git(&repo, &["rev-parse", "HEAD"]);
    (repo, b)
}

#[test]
fn planted_lines_count_as_executed_where_the_workload_runs_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, b) = planted_repo(tmp.path());
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

/// `run` of LMDB_0.9.33 and the planted commit, one round of write, its JSON report, with `extra` flags.
fn planted_run(repo: &std::path::Path, b: &str, out: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let tags = format!("LMDB_0.9.33,{b}");
    let o = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["run", "--tags", &tags, "--workloads", "write", "--entries", "2000", "--rounds", "1"])
            .args(["--format", "json", "--git"])
            .arg(repo)
            .arg("--out")
            .arg(out)
            .args(extra),
    );
    json(&o)
}

/// The report's Method line about coverage.
fn coverage_line(report: &serde_json::Value) -> String {
    let method = report["method"].as_array().unwrap();
    let lines: Vec<&str> = method.iter().filter_map(|l| l.as_str()).filter(|l| l.starts_with("Coverage:")).collect();
    assert_eq!(lines.len(), 1, "{method:?}");
    lines[0].to_string()
}

#[test]
fn a_runs_method_and_json_give_its_own_coverage_figure_or_say_why_not() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, b) = planted_repo(tmp.path());
    let report = planted_run(&repo, &b, &tmp.path().join("run.jsonl"), &[]);
    let measured = &report["coverage"]["outcome"]["measured"];
    assert_eq!((measured["baseline"].as_str(), measured["newest"].as_str()), (Some("LMDB_0.9.33"), Some(b.as_str())));
    assert_eq!(measured["changed"], serde_json::json!({"executable": 5, "executed": 2}), "{report}");
    assert_eq!(measured["mdb"]["executable"], 4275 + 5, "{report}");
    assert_eq!((measured["workloads"].to_string(), &measured["entries"]), (r#"["write"]"#.into(), &2000.into()));
    let line = coverage_line(&report);
    let said = format!("the workloads executed 40.0% (2 of 5) of the executable lines of mdb.c and midl.c that changed between LMDB_0.9.33 and {b}");
    assert!(line.contains(&said), "{line}");
    // Read back from the run file, as report renders it.
    let again =
        json(&run_ok(lmdb_regress().arg("report").arg(tmp.path().join("run.jsonl")).args(["--format", "json"])));
    assert_eq!(again["coverage"], report["coverage"]);

    let skipped = planted_run(&repo, &b, &tmp.path().join("skipped.jsonl"), &["--no-coverage"]);
    assert_eq!(skipped["coverage"], serde_json::json!({"outcome": "skipped"}), "{skipped}");
    assert!(
        coverage_line(&skipped).starts_with("Coverage: not measured (--no-coverage)"),
        "{}",
        coverage_line(&skipped)
    );
}

#[test]
fn a_run_file_from_before_coverage_records_still_reports_and_says_it_has_none() {
    let report =
        json(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--format", "json"])));
    assert!(report["coverage"].is_null(), "{}", report["coverage"]);
    assert!(coverage_line(&report).contains("this run file records none"), "{}", coverage_line(&report));
}

#[test]
fn coverage_builds_take_no_other_flags_and_need_gcc() {
    for (extra, says) in [(["--cflags", "-O2"], "takes no --toolchain or --cflags"), (["--cc", "clang"], "is not gcc")]
    {
        let out = lmdb_regress().args(["coverage", "LMDB_0.9.33", "LMDB_0.9.18"]).args(extra).output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(says), "{extra:?}: {}", stderr(&out));
    }
}
