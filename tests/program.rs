//! A program as a workload (issue #29, item 2): `run --program FILE.c`. Every program
//! and every planted build is made here, at test time; the append benchmark is the
//! project's own (programs/append.c).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::*;

/// A program that makes `argv[1]` commits of one put each in `./testdb`: short, and a
/// planted delay per commit shows at once.
const COMMITS: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "lmdb.h"
#define CHECK(x) do { int rc = (x); if (rc) { fprintf(stderr, "%s: %s\n", #x, mdb_strerror(rc)); return 2; } } while (0)
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1;
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi;
    mkdir("testdb", 0755);
    CHECK(mdb_env_create(&env));
    CHECK(mdb_env_set_mapsize(env, 1 << 24));
    CHECK(mdb_env_open(env, "./testdb", MDB_NOSYNC, 0664));
    for (int i = 0; i < n; i++) {
        unsigned char k[4] = {i >> 24, i >> 16, i >> 8, i};
        char v[100] = {0};
        MDB_val key = {4, k}, val = {100, v};
        CHECK(mdb_txn_begin(env, NULL, 0, &txn));
        CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
        CHECK(mdb_put(txn, dbi, &key, &val, MDB_APPEND));
        CHECK(mdb_txn_commit(txn));
    }
    mdb_env_close(env);
    return 0;
}
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn records(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn of_type<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

/// `run` of `program` on `tags`, `rounds` rounds, fixed layouts unless `extra` says.
fn run_program(tags: &str, program: &Path, rounds: &str, out: &Path, extra: &[&str]) -> Output {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--tags", tags, "--program"]).arg(program);
    c.args(["--rounds", rounds, "--warmup", "0", "--out"]).arg(out).args(extra);
    if !extra.contains(&"--layouts") {
        c.args(["--layouts", "fixed"]);
    }
    c.output().unwrap()
}

/// LMDB_0.9.33's sources in `dir/slow`, `code` planted at the start of every commit: a
/// directory unit.
fn planted(dir: &Path, code: &str) -> PathBuf {
    let slow = dir.join("slow");
    std::fs::create_dir(&slow).unwrap();
    let base = source_dir("LMDB_0.9.33");
    for f in FILES {
        std::fs::copy(base.join(f), slow.join(f)).unwrap();
    }
    let mdb = std::fs::read_to_string(slow.join("mdb.c")).unwrap();
    let with = format!("mdb_txn_commit(MDB_txn *txn)\n{{\n\t{code} /* planted */\n");
    let planted = mdb.replacen("mdb_txn_commit(MDB_txn *txn)\n{\n", &with, 1);
    assert_ne!(planted, mdb, "the commit is where the test expects it");
    std::fs::write(slow.join("mdb.c"), planted).unwrap();
    slow
}

#[test]
fn a_planted_slow_commit_is_ranked_slower_by_the_append_program() {
    let dir = tempfile::tempdir().unwrap();
    // LMDB_0.9.33 with 20 ms more in every commit: a directory unit.
    let slow = planted(dir.path(), "usleep(20000);");
    let append = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/append.c");
    let out = dir.path().join("run.jsonl");
    // 10,000 appends: ten commits, 200 ms planted in each sample of the slow unit.
    let slow_arg = slow.to_str().unwrap();
    let o = run_program("0.9.33", &append, "6", &out, &["--source", slow_arg, "--program-args", "10000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = records(&out);
    let samples = of_type(&records, "sample");
    assert!(of_type(&records, "failure").is_empty(), "{records:?}");
    let local = samples.iter().map(|s| s["tag"].as_str().unwrap()).find(|t| *t != "LMDB_0.9.33").unwrap().to_string();
    let median = |tag: &str| {
        let mut ns: Vec<u64> = samples.iter().filter(|s| s["tag"] == tag).map(|s| s["ns"].as_u64().unwrap()).collect();
        assert_eq!(ns.len(), 6, "{tag}: a sample a round");
        ns.sort();
        ns[3]
    };
    assert!(median(&local) > median("LMDB_0.9.33") + 150_000_000, "{local} carries 200 ms more a sample");
    assert!(samples.iter().all(|s| s["workload"] == "append"));

    // The report's verdict: the planted unit slower, whichever is the baseline.
    let mut report = lmdb_regress();
    let json = run_ok(report.args(["report", "--format", "json"]).arg(&out));
    let report = json_of(&json);
    let section = &report["sections"][0];
    assert_eq!(section["workload"], "append");
    let rows = section["vs_baseline"].as_array().unwrap();
    let row = rows.iter().find(|r| !r["vs_baseline"].is_null()).unwrap_or_else(|| panic!("{rows:?}"));
    let expected = if row["tag"] == local.as_str() { "slower" } else { "faster" };
    assert_eq!(row["vs_baseline"]["comparison"]["verdict"], expected, "{row}");
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn a_program_that_exits_1_in_one_unit_fails_that_unit_alone() {
    let dir = tempfile::tempdir().unwrap();
    let refusing = COMMITS.replace(
        "    int n = argc > 1",
        "    int major, minor, patch;\n    mdb_version(&major, &minor, &patch);\n    \
         if (patch == 18) { fprintf(stderr, \"planted: refusing 0.9.18\\n\"); return 1; }\n    int n = argc > 1",
    );
    let program = write(dir.path(), "refuse18.c", &refusing);
    let out = dir.path().join("run.jsonl");
    let o = run_program("0.9.18,0.9.33", &program, "2", &out, &[]);
    let records = records(&out);
    let samples = of_type(&records, "sample");
    assert_eq!(samples.len(), 2, "0.9.33's two rounds: {}", stderr(&o));
    assert!(samples.iter().all(|s| s["tag"] == "LMDB_0.9.33" && s["workload"] == "refuse18"));
    let failures = of_type(&records, "failure");
    assert_eq!(failures.len(), 2, "0.9.18's two samples: {failures:?}");
    for f in &failures {
        assert_eq!(
            (f["tag"].as_str(), f["workload"].as_str(), f["stage"].as_str()),
            (Some("LMDB_0.9.18"), Some("refuse18"), Some("run"))
        );
        let error = f["error"].as_str().unwrap();
        assert!(error.contains("refuse18 on LMDB_0.9.18"), "the unit named: {error}");
        assert!(error.contains("exited with status 1"), "{error}");
        assert!(error.contains("planted: refusing 0.9.18"), "its last words: {error}");
        assert!(f["round"].is_u64(), "{f}");
    }
    let rounds: std::collections::BTreeSet<String> = failures
        .iter()
        .map(|f| {
            f["error"].as_str().unwrap().split("failed in ").nth(1).unwrap().split(':').next().unwrap().to_string()
        })
        .collect();
    assert_eq!(rounds.into_iter().collect::<Vec<_>>(), ["the sample of round 1", "the sample of round 2"]);
}

#[test]
fn a_program_that_does_not_compile_against_a_unit_fails_it_with_the_compilers_message() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        format!("#include \"lmdb.h\"\n#if MDB_VERSION_PATCH == 18\n#error planted: no 0.9.18 here\n#endif\n{COMMITS}");
    let program = write(dir.path(), "not18.c", &text);
    let out = dir.path().join("run.jsonl");
    let o = run_program("0.9.18,0.9.33", &program, "1", &out, &[]);
    assert!(stderr(&o).contains("not measured: not18 on LMDB_0.9.18"), "{}", stderr(&o));
    let records = records(&out);
    let failures = of_type(&records, "failure");
    assert_eq!(failures.len(), 1, "{failures:?}");
    let f = failures[0];
    assert_eq!(
        (f["tag"].as_str(), f["stage"].as_str(), f["workload"].as_str()),
        (Some("LMDB_0.9.18"), Some("compile"), Some("not18"))
    );
    assert!(f["error"].as_str().unwrap().contains("#error planted: no 0.9.18 here"), "the compiler's message: {f}");
    let samples = of_type(&records, "sample");
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0]["tag"], "LMDB_0.9.33");
}

#[test]
fn the_programs_hash_is_recorded_and_reported_and_a_changed_source_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "commits.c", COMMITS);
    let sha = hex::encode(Sha256::digest(COMMITS.as_bytes()));
    let out = dir.path().join("run.jsonl");
    let o = run_program("0.9.33", &program, "2", &out, &["--program-args", "3 'two words'", "--layouts", "random"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = records(&out);
    let header = &all[0];
    assert_eq!(header["workloads"], serde_json::json!(["commits"]));
    let recorded = &header["plan"]["programs"][0];
    assert_eq!((recorded["name"].as_str(), recorded["sha256"].as_str()), (Some("commits"), Some(sha.as_str())));
    assert_eq!(recorded["args"], serde_json::json!(["3", "two words"]));
    let samples = of_type(&all, "sample");
    assert_eq!(samples.len(), 2);
    assert!(samples.iter().all(|s| s["layout"].is_u64()), "each sample ran its own layout: {samples:?}");
    assert!(stdout(&o).contains(&sha), "the report names the program's SHA-256:\n{}", stdout(&o));

    // The run cut after its first round, as Ctrl-C leaves one; the program then edited.
    let text = std::fs::read_to_string(&out).unwrap();
    let kept: Vec<&str> =
        text.lines().filter(|l| !l.contains("\"type\":\"end\"") && !l.contains("\"round\":1,")).collect();
    std::fs::write(&out, kept.join("\n") + "\n").unwrap();
    std::fs::write(&program, format!("{COMMITS}/* edited */\n")).unwrap();
    let o = lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--resume"]).arg(&out).output().unwrap();
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("cannot be resumed") && err.contains("commits"), "{err}");
    let now = hex::encode(Sha256::digest(format!("{COMMITS}/* edited */\n").as_bytes()));
    assert!(err.contains(&sha) && err.contains(&now), "both hashes: {err}");

    // Restored, it resumes: the program compiled before is reused.
    std::fs::write(&program, COMMITS).unwrap();
    let o = lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--resume"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(of_type(&records(&out), "sample").len(), 2);
}

#[test]
fn a_program_named_like_a_built_in_workload_or_another_program_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let write_c = write(dir.path(), "readKey.c", COMMITS);
    let o = run_program("0.9.33", &write_c, "1", &dir.path().join("a.jsonl"), &[]);
    assert!(stderr(&o).contains("built-in workload"), "{}", stderr(&o));
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let (a, b) = (write(dir.path(), "twice.c", COMMITS), write(&other, "twice.c", COMMITS));
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.33", "--program"]).arg(&a).arg("--program").arg(&b);
    let o = c.arg("--out").arg(dir.path().join("b.jsonl")).output().unwrap();
    assert!(stderr(&o).contains("would both be the workload twice"), "{}", stderr(&o));
}

#[test]
fn a_printed_figure_is_taken_in_place_of_the_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        COMMITS.replace("    mdb_env_close(env);\n", "    mdb_env_close(env);\n    printf(\"put in 0.25 sec\\n\");\n");
    let program = write(dir.path(), "prints.c", &text);
    let out = dir.path().join("run.jsonl");
    let figure = ["--program-figure", "in ([0-9.]+) sec", "--program-figure-unit", "ms"];
    let o = run_program("0.9.33", &program, "1", &out, &figure);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = records(&out);
    assert_eq!(
        all[0]["plan"]["programs"][0]["figure"],
        serde_json::json!({"pattern": "in ([0-9.]+) sec", "unit": "ms"})
    );
    let samples = of_type(&all, "sample");
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0]["ns"], 250_000, "0.25 ms, as printed");
}

#[test]
fn a_planted_busy_commit_is_counted_slower_in_instructions() {
    let dir = tempfile::tempdir().unwrap();
    // 100,000 iterations more in every commit: some 0.5 million instructions each.
    let slow = planted(dir.path(), "for (volatile int planted = 0; planted < 100000; planted++) ;");
    let program = write(dir.path(), "commits.c", COMMITS);
    let out = dir.path().join("run.jsonl");
    let args = ["--source", slow.to_str().unwrap(), "--program-args", "10", "--metric", "instructions"];
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").env("LMDB_REGRESS_COUNTER", "callgrind");
    c.args(["run", "--tags", "0.9.33", "--program"]).arg(&program).args(args).arg("--out").arg(&out);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let records = records(&out);
    let samples = of_type(&records, "sample");
    assert_eq!(samples.len(), 2, "one count a unit: {records:?}");
    let ir = |fast: bool| {
        let s = samples.iter().find(|s| (s["tag"] == "LMDB_0.9.33") == fast).unwrap();
        s["counts"]["Ir"].as_u64().unwrap_or_else(|| panic!("{s}"))
    };
    assert!(
        ir(false) > ir(true) + 10 * 400_000,
        "ten commits, each 100,000 iterations more: {} {}",
        ir(false),
        ir(true)
    );
    let check = of_type(&records, "check");
    assert!(check.iter().all(|c| c["passed"] == true), "the counts repeat: {check:?}");
    let report = json_of(&run_ok(lmdb_regress().args(["report", "--format", "json"]).arg(&out)));
    let rows = report["sections"][0]["vs_baseline"].as_array().unwrap().clone();
    let row = rows.iter().find(|r| !r["vs_baseline"].is_null()).unwrap_or_else(|| panic!("{rows:?}"));
    let local = row["tag"] != "LMDB_0.9.33";
    assert_eq!(row["vs_baseline"]["comparison"]["verdict"], if local { "slower" } else { "faster" }, "{row}");
}

/// Prints `took 0.5 s` on every unit but 0.9.18, where its first sample prints `took 0 s`
/// and its second bytes that are not UTF-8 and no figure (`argv[1]` counts its samples).
const FIGURES: &str = r#"#include <stdio.h>
#include "lmdb.h"
int main(int argc, char **argv) {
    int major, minor, patch;
    mdb_version(&major, &minor, &patch);
    if (patch != 18) { printf("took 0.5 s\n"); return 0; }
    FILE *f = fopen(argv[1], "a");
    long before = ftell(f);
    fputc('x', f);
    fclose(f);
    if (before == 0) printf("took 0 s\n");
    else printf("\xff\xfe planted bytes\n");
    return 0;
}
"#;

#[test]
fn a_figure_of_no_time_fails_its_sample_alone_and_output_that_is_no_utf8_is_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "figures.c", FIGURES);
    let (out, count) = (dir.path().join("run.jsonl"), dir.path().join("count"));
    let count = count.to_str().unwrap();
    let figure = ["--program-figure", "took ([0-9.]+) s", "--program-args", count];
    let o = run_program("0.9.18,0.9.33", &program, "2", &out, &figure);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = records(&out);
    let samples = of_type(&records, "sample");
    assert!(samples.iter().all(|s| s["tag"] == "LMDB_0.9.33" && s["ns"] == 500_000_000), "{samples:?}");
    assert_eq!(samples.len(), 2);
    let errors: Vec<&str> = of_type(&records, "failure").iter().map(|f| f["error"].as_str().unwrap()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("figures on LMDB_0.9.18 failed in the sample of round 1"), "{}", errors[0]);
    assert!(errors[0].contains("took \"0\" from its output, which is 0 ns: a sample takes some time"), "{}", errors[0]);
    assert!(errors[1].contains("round 2: no line of its output matches"), "{}", errors[1]);
    assert!(errors[1].contains("\u{fffd}\u{fffd} planted bytes"), "what it printed, quoted: {}", errors[1]);
    assert!(errors[1].contains("its output is not UTF-8") && errors[1].contains("quoted lossily"), "{}", errors[1]);
    // The file holds nothing its own reader refuses.
    run_ok(lmdb_regress().arg("report").arg(&out));
}

#[test]
fn a_timeout_beyond_any_duration_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "commits.c", COMMITS);
    let out = dir.path().join("run.jsonl");
    for (gate, code) in [(&[][..], 2), (&["--fail-on", "slower:1%"][..], 1)] {
        let extra = [&["--program-timeout", "1e20"][..], gate].concat();
        let o = run_program("0.9.33", &program, "1", &out, &extra);
        assert_eq!(o.status.code(), Some(code), "{gate:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--program-timeout 100000000000000000000 is not a number of seconds"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists(), "nothing measured");
    }
}

#[test]
fn the_compiled_programs_hash_is_recorded_and_a_forged_one_is_never_run() {
    let dir = tempfile::tempdir().unwrap();
    // A source of this test's own: its compiled folder in the cache is no other test's.
    let program = write(dir.path(), "forged.c", &format!("{COMMITS}/* the forged test's */\n"));
    let out = dir.path().join("run.jsonl");
    let o = run_program("0.9.33", &program, "2", &out, &["--program-args", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recorded = records(&out)[0]["plan"]["programs"][0]["compiled"]["LMDB_0.9.33"].as_str().unwrap().to_string();
    let folders: Vec<PathBuf> = std::fs::read_dir(test_cache().join("programs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("forged-"))
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let exe = folders[0].join("forged");
    assert_eq!(hex::encode(Sha256::digest(std::fs::read(&exe).unwrap())), recorded);

    // Cut after its first round, as Ctrl-C leaves it; then the cached program and its
    // SHA-256 file replaced by another program, which would leave a mark if it ran.
    let text = std::fs::read_to_string(&out).unwrap();
    let kept: Vec<&str> =
        text.lines().filter(|l| !l.contains("\"type\":\"end\"") && !l.contains("\"round\":1,")).collect();
    std::fs::write(&out, kept.join("\n") + "\n").unwrap();
    let mark = dir.path().join("forged-ran");
    let forged = format!("#!/bin/sh\ntouch {}\n", mark.display());
    std::fs::write(&exe, &forged).unwrap();
    std::fs::write(folders[0].join("sha256"), hex::encode(Sha256::digest(forged.as_bytes())) + "\n").unwrap();
    let o = lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--resume"]).arg(&out).output().unwrap();
    assert!(!mark.exists(), "the forged program ran: {}", stderr(&o));
    // Compiled again; the same bytes as recorded (then measured), or refused, naming both.
    let now = hex::encode(Sha256::digest(std::fs::read(&exe).unwrap()));
    let all = records(&out);
    match now == recorded {
        true => assert_eq!(of_type(&all, "sample").len(), 2, "{}", stderr(&o)),
        false => {
            let failures = of_type(&all, "failure");
            let error = failures.last().map_or("", |f| f["error"].as_str().unwrap());
            assert!(error.contains("not the program that was measured") && error.contains(&recorded), "{error}");
        }
    }
}
