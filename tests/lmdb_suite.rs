//! The lmdb suite end to end at small size: every row of harness/lmdb_suite.def gives the
//! checksum its definition does, in both engines, with the same space; space is exact
//! across runs and layouts; a long-lived reader keeps freed pages from reuse (measured);
//! coverage runs the suite; `--suite` and `workloads` say what they hold.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use lmdb_regress::workload::presets::lmdb_suite::LmdbWorkload;
use lmdb_regress::workload::presets::{Preset, PresetConfig, PresetWorkload};
use lmdb_regress::workload::{EnvSettings, Workload, WorkloadConfig};
use serde_json::Value;

const ENTRIES: u32 = 2000;

fn config(entries: u32) -> WorkloadConfig {
    let env = EnvSettings { entries: Some(entries), ..EnvSettings::default() };
    env.resolve(&WorkloadConfig::default(), &PresetConfig::default(), Some(Preset::Lmdb))
}

/// The run file's samples and failures of `run --suite lmdb` with `extra` flags.
fn records(dir: &Path, name: &str, extra: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let file = dir.join(format!("{name}.jsonl"));
    let mut c = lmdb_regress();
    c.args(["run", "--suite", "lmdb", "--warmup", "0", "--no-coverage", "--out"]).arg(&file).args(extra);
    run_ok(&mut c);
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (samples, rest) = records.into_iter().partition(|r| r["type"] == "sample");
    (samples, rest.into_iter().filter(|r| r["type"] == "failure").collect())
}

/// The run file's samples of `run --suite lmdb` with `extra` flags, none failing.
fn samples(dir: &Path, name: &str, extra: &[&str]) -> Vec<Value> {
    let (samples, failures) = records(dir, name, extra);
    assert!(failures.is_empty(), "{failures:?}");
    samples
}

/// LMDB 0.9.18's MDB_PREV through sorted duplicates returns 2,009 of 2,000 (measured in
/// both engines); 0.9.33's returns each once.
const REVERSE_SCAN_ON_0_9_18: &str = "the pass left 2009:b5831c8113a8c94c, but the data written gives 2000:";

#[test]
fn every_lmdb_workload_gives_its_definitions_checksum_and_space_in_both_engines() {
    let tmp = tempfile::tempdir().unwrap();
    let entries = ENTRIES.to_string();
    let (s, failures) = records(
        tmp.path(),
        "both",
        &["--tags", "0.9.18,0.9.33", "--engine", "rust,c", "--rounds", "1", "--entries", &entries],
    );
    let failed: Vec<(&str, &str)> =
        failures.iter().map(|f| (f["workload"].as_str().unwrap(), f["tag"].as_str().unwrap())).collect();
    assert_eq!(failed, [("dupsortScanReverse", "LMDB_0.9.18"); 2], "{failures:?}");
    assert!(failures.iter().all(|f| f["error"].as_str().unwrap().starts_with(REVERSE_SCAN_ON_0_9_18)), "{failures:?}");
    let cfg = config(ENTRIES);
    for w in LmdbWorkload::all() {
        let want = lmdb_regress::workload::expected_checksum(Workload::Preset(PresetWorkload::Lmdb(w)), &cfg).unwrap();
        let of: Vec<&Value> = s.iter().filter(|r| r["workload"] == w.name()).collect();
        let tags: Vec<&str> = [("LMDB_0.9.18", (0, 9, 18)), ("LMDB_0.9.33", (0, 9, 33))]
            .into_iter()
            .filter(|(t, v)| w.declared().applies_to(*v).is_ok() && !failed.contains(&(w.name(), *t)))
            .map(|(t, _)| t)
            .collect();
        assert_eq!(of.len(), 2 * tags.len(), "{w}: {tags:?} by two engines");
        if tags.is_empty() {
            continue;
        }
        for r in &of {
            let got = (r["checksum"]["entries"].as_u64(), r["checksum"]["digest"].as_u64());
            assert_eq!(got, (Some(want.entries), Some(want.digest)), "{w} {} {}", r["engine"], r["tag"]);
        }
        for tag in tags {
            let space: Vec<&Value> = of.iter().filter(|r| r["tag"] == tag).map(|r| &r["space"]).collect();
            assert!(space[0]["leaf-pages"].as_u64().is_some(), "{w}: {:?}", space[0]);
            assert_eq!(space[0], space[1], "{w} {tag}: the engines make the same calls, so the same pages");
        }
    }
}

#[test]
fn space_is_exact_across_rounds_and_layouts() {
    let tmp = tempfile::tempdir().unwrap();
    let s = samples(
        tmp.path(),
        "layouts",
        &[
            "--tags",
            "0.9.33",
            "--workloads",
            "fillRandom,deleteReader",
            "--layouts",
            "random",
            "--rounds",
            "3",
            "--entries",
            "3000",
        ],
    );
    let mut by: BTreeMap<String, Vec<(&Value, &Value)>> = BTreeMap::new();
    for r in &s {
        by.entry(r["workload"].as_str().unwrap().to_string()).or_default().push((&r["space"], &r["layout"]));
    }
    for (w, rows) in by {
        assert_eq!(rows.len(), 3, "{w}");
        let layouts: std::collections::BTreeSet<String> = rows.iter().map(|(_, l)| l.to_string()).collect();
        assert_eq!(layouts.len(), 3, "{w}: each round its own layout");
        assert!(rows.iter().all(|(space, _)| *space == rows[0].0), "{w}: {rows:?}");
    }
}

/// Counted by instructions, as a counting pass counts, the rows of a unit share one worker;
/// its closing check counts the last row again alone, which must give the same count: no
/// row's count depends on the rows before it. Measured by `run --suite all`: each suite
/// the workloads name a run of its own, in its own file beside --out, the other said.
#[test]
fn a_long_reader_keeps_freed_pages_from_reuse_and_the_file_grows() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = ["--workloads", "write,fill100K,overwrite,overwriteReader", "--metric", "instructions"];
    let mut c = lmdb_regress();
    c.args(["run", "--suite", "all", "--no-coverage", "--tags", "0.9.33", "--entries", "5000", "--out"]);
    let said = stderr(&run_ok(c.arg(tmp.path().join("reader.jsonl")).args(rows)));
    assert!(said.contains("concurrency: left out (--workloads write,fill100K"), "{said}");
    assert!(said.contains("lmdb (2 of 2): measuring into"), "{said}");
    let lmdbjava = crate::safety::records(&tmp.path().join("reader-lmdbjava.jsonl"));
    let written: Vec<&Value> = lmdbjava.iter().filter(|r| r["type"] == "sample").collect();
    assert_eq!((written.len(), &written[0]["workload"]), (1, &Value::from("write")), "{lmdbjava:?}");
    // A count without the cache simulation says how to take one.
    let mut report = lmdb_regress();
    let o = report.arg("report").arg(tmp.path().join("reader-lmdbjava.jsonl")).args(["--metric", "d1-misses"]);
    let o = o.output().unwrap();
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("no cache simulation") && e.contains("--with-cache"), "{e}");
    let lmdb = crate::safety::records(&tmp.path().join("reader-lmdb.jsonl"));
    assert_eq!(lmdb[0]["config"]["entries"], 5000, "{}", lmdb[0]);
    let s: Vec<&Value> = lmdb.iter().filter(|r| r["type"] == "sample").collect();
    let check = lmdb.iter().find(|r| r["type"] == "check").unwrap();
    assert_eq!(check["what"], "rust LMDB_0.9.33 overwriteReader counted twice", "{check}");
    let counted = s.iter().find(|r| r["workload"] == "overwriteReader").unwrap()["counts"]["Ir"].as_u64().unwrap();
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("{counted} then {counted} instructions")),
        "after two rows, then alone: {check}"
    );
    let space = |w: &str| s.iter().find(|r| r["workload"] == w).map(|r| r["space"].clone()).unwrap();
    let (free, held) = (space("overwrite"), space("overwriteReader"));
    let pages = |v: &Value, k: &str| v[k].as_u64().unwrap();
    // The same data in both: only where its pages came from differs.
    assert_eq!(pages(&free, "leaf-pages"), pages(&held, "leaf-pages"), "{free} {held}");
    assert!(
        pages(&held, "last-page") > pages(&free, "last-page") * 3 / 2,
        "the reader's snapshot keeps the pages it sees: {free} {held}"
    );
    assert!(pages(&held, "file-size") > pages(&free, "file-size"), "{free} {held}");
}

/// `--metric commit-p50` is refused, before anything is built, where no commit is timed:
/// outside the lmdb suite, and without `--sync` (or with nosync alone, the default).
#[test]
fn commit_p50_is_refused_where_no_commit_is_timed() {
    let refused = |args: &[&str], why: &str| {
        let out =
            lmdb_regress().args(["run", "--tags", "0.9.33", "--metric", "commit-p50"]).args(args).output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    };
    refused(&["--workloads", "write", "--sync", "sync"], "each commit is timed in the lmdb suite's write rows only");
    let why = "commits are timed in a run that asks how they are made durable";
    refused(&["--suite", "lmdb", "--workloads", "fillRandomEach"], why);
    refused(&["--suite", "lmdb", "--workloads", "fillRandomEach", "--sync", "nosync"], why);
}

/// `run --suite all` refuses, before anything is built, what it cannot split by suite, and a
/// `--suite-budget` that does not add up or names no suite of it; no other run takes one.
#[test]
fn the_suite_is_chosen_by_name_and_all_runs_each_on_its_own() {
    let refused = |args: &[&str], why: &str| {
        let out = lmdb_regress().args(["run", "--suite", "all", "--tags", "0.9.33"]).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    };
    refused(&["--memory-limit", "256M"], "--memory-limit measures LmdbJava's six: give --suite lmdbjava");
    refused(&["--resume", "x.jsonl"], "resume each on its own");
    refused(&["--workloads", "tcRandomWrite"], "tcRandomWrite is tokyo-cabinet's, not of --suite all");
    refused(
        &["--time-budget", "5m", "--suite-budget", "lmdbjava=3m,lmdb=1m,concurrency=30s"],
        "--suite-budget adds up to 4m 30s (lmdbjava 3m + lmdb 1m + concurrency 30s), not --time-budget 5m",
    );
    refused(&["--suite-budget", "lmdb=1m,readers=1m"], "\"readers\" is no suite of --suite all");
    let one = lmdb_regress().args(["run", "--suite", "lmdb", "--tags", "0.9.33", "--suite-budget", "lmdb=1m"]).output();
    let e = stderr(one.as_ref().unwrap());
    assert_eq!(one.as_ref().unwrap().status.code(), Some(2), "{e}");
    assert!(e.contains("--suite-budget shares the budget of --suite all among its suites"), "{e}");
    let both = lmdb_regress().args(["run", "--suite", "lmdb", "--preset", "migrate"]).output().unwrap();
    assert!(stderr(&both).contains("cannot be used with"), "{}", stderr(&both));
    let wrong = lmdb_regress()
        .args(["coverage", "0.9.17", "0.9.33", "--suite", "lmdb", "--workloads", "write"])
        .output()
        .unwrap();
    assert!(stderr(&wrong).contains("write is LmdbJava's, not of --suite lmdb"), "{}", stderr(&wrong));
}

/// `run --suite all --time-budget`: time a suite does not spend goes to the suites after
/// it. LmdbJava's six, planned 11 of the 13 parts of 10 minutes, end after their one
/// round; the lmdb suite then takes all that is left rather than its planned 2 parts, and
/// its run file, its header restated with that budget, is an ordinary run file.
#[test]
fn time_a_suite_does_not_spend_goes_to_the_suites_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--suite", "all", "--no-coverage", "--tags", "0.9.33", "--entries", "2000", "--warmup", "0"]);
    c.args(["--rounds", "1", "--workloads", "readSeq,fillSeqAppend", "--time-budget", "10m", "--out"]);
    let said = stderr(&run_ok(c.arg(tmp.path().join("flow.jsonl"))));
    assert!(said.contains("(parts: lmdbjava 11, lmdb 2)"), "{said}");
    assert!(said.contains("lmdbjava (1 of 2): budget 8m 28s (planned 8m 28s)"), "{said}");
    let budget = |suite: &str| {
        let path = tmp.path().join(format!("flow-{suite}.jsonl"));
        crate::safety::records(&path)[0]["plan"]["time_budget_s"].as_f64().unwrap()
    };
    assert_eq!(budget("lmdbjava"), 508.0);
    let lmdb = budget("lmdb");
    assert!(lmdb > 92.0 && lmdb <= 600.0, "planned 92 s, given what is left of 600 s: {lmdb}");
    assert!(
        said.contains(&format!(
            "lmdb (2 of 2): budget {}",
            humantime::format_duration(std::time::Duration::from_secs(lmdb as u64))
        )),
        "{said}"
    );
    assert!(said.contains("(planned 1m 32s): 2 of the 2 parts left"), "{said}");
    let report =
        run_ok(lmdb_regress().arg("report").arg(tmp.path().join("flow-lmdb.jsonl")).args(["--format", "json"]));
    let json: Value = serde_json::from_str(&stdout(&report)).unwrap();
    assert!(json.to_string().contains("fillSeqAppend"), "{json}");
}

/// bisect and history take --suite as run does, refused before anything is built.
#[test]
fn bisect_and_history_take_the_suite_as_run_does() {
    let refused = |args: &[&str], why: &str| {
        let out = lmdb_regress().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    };
    let bisect = ["bisect", "--good", "0.9.17", "--bad", "0.9.33", "--suite"];
    refused(&[&bisect[..], &["lmdb"]].concat(), "--suite lmdb: name the workload to bisect");
    refused(&[&bisect[..], &["lmdb", "--workload", "write"]].concat(), "write is LmdbJava's, not of --suite lmdb");
    refused(
        &[&bisect[..], &["lmdbjava", "--workload", "fillRandom"]].concat(),
        "fillRandom is lmdb's, not of --suite lmdbjava",
    );
    refused(&[&bisect[..], &["all", "--workload", "fillRandom"]].concat(), "--suite all: bisect follows one workload");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.18", &source_dir("LMDB_0.9.18")), ("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let out = tmp.path().join("history");
    let history = ["history", "--range", "LMDB_0.9.18..LMDB_0.9.33", "--git", repo.to_str().unwrap(), "--out-dir"];
    let history = [&history[..], &[out.to_str().unwrap(), "--suite"]].concat();
    refused(
        &[&history[..], &["lmdb", "--workloads", "write"]].concat(),
        "--workloads write are not all of the preset lmdb",
    );
    refused(&[&history[..], &["all"]].concat(), "--suite all: a run holds one suite");
    assert!(!out.exists(), "refused before it measured or wrote anything");
}

#[test]
fn workloads_lists_every_suite_with_its_flags() {
    let text = stdout(&run_ok(lmdb_regress().args(["workloads"])));
    for w in LmdbWorkload::all() {
        assert!(text.lines().any(|l| l.starts_with(w.name()) && l.contains("lmdb")), "{w}: {text}");
    }
    assert!(text.lines().any(|l| l.starts_with("readKey") && l.contains("lmdbjava") && l.contains("chunks")), "{text}");
    let fill = text.lines().find(|l| l.starts_with("fillSeqAppend ")).unwrap();
    assert!(fill.contains("MDB_APPEND") && fill.contains("whole"), "{fill}");
    let json: Value =
        serde_json::from_str(&stdout(&run_ok(lmdb_regress().args(["workloads", "--format", "json"])))).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 6 + PresetWorkload::all().count(), "the six and every preset's");
    let copy = rows.iter().find(|r| r["name"] == "copyCompact").unwrap();
    assert_eq!((copy["suite"].as_str(), copy["chunks"].as_bool()), (Some("lmdb"), Some(false)), "{copy}");
    assert_eq!(copy["mdb_flags"], serde_json::json!(["MDB_CP_COMPACT"]));
}

/// A repository at `repo` holding LMDB_0.9.33, a commit that adds a comment to mdb.c, and a
/// commit after it with `lines` planted at the top of mdb_env_copy2, which only the lmdb
/// suite's copies call; that commit's id.
fn planted_in_env_copy2(repo: &Path, lines: &str) -> String {
    planted_in(repo, "mdb_env_copy2(MDB_env *env, const char *path, unsigned int flags)\n{\n", lines)
}

/// A repository of LMDB_0.9.33, a commit adding a comment, and one planting `lines` after
/// `at` in mdb.c; the planted commit.
fn planted_in(repo: &Path, at: &str, lines: &str) -> String {
    make_repo(repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let p = repo.join("libraries/liblmdb/mdb.c");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "/* a comment */\n").unwrap();
    git(repo, &["commit", "-q", "-am", "a comment"]);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(at));
    std::fs::write(&p, text.replacen(at, &format!("{at}{lines}"), 1)).unwrap();
    git(repo, &["commit", "-q", "-am", "planted lines"]);
    git(repo, &["rev-parse", "HEAD"])
}

/// Two lines planted in mdb_env_copy2: the six never run them, the lmdb suite's copy does.
#[test]
fn coverage_of_the_lmdb_suite_reaches_what_lmdbjavas_six_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let b = planted_in_env_copy2(&repo, &"\t{ volatile int planted = 1; (void)planted; }\n".repeat(2));
    let cover = |suite: &str, workloads: &str| {
        let mut c = lmdb_regress();
        c.env("LMDB_REGRESS_OFFLINE", "1").args(["coverage", "LMDB_0.9.33", &b, "--suite", suite]);
        c.args(["--workloads", workloads, "--entries", "1000", "--format", "json", "--git"]).arg(&repo);
        json(&run_ok(&mut c))
    };
    let six = cover("lmdbjava", "write");
    assert_eq!(six["changed"], serde_json::json!({"executable": 2, "executed": 0}), "{six}");
    let all = cover("all", "write,copy");
    assert_eq!((all["suite"].as_str(), all["workloads"].to_string().as_str()), (Some("all"), r#"["write","copy"]"#));
    assert_eq!(all["changed"], serde_json::json!({"executable": 2, "executed": 2}), "{all}");
    let more = |c: &Value| c["files"]["mdb.c"]["executed"].as_u64().unwrap();
    assert!(more(&all) > more(&six), "the copy runs lines the write does not: {} {}", more(&all), more(&six));
}

/// LMDB_0.9.33 with an abort() planted in mdb_env_copy2, which only copy calls: the worker
/// dies in copy, and overwrite, after it in the same batch, still runs, in a fresh worker;
/// copy is not run again in the second round (a crash repeats), the others are;
/// `bisect --bad-if crash` of copy finds the commit that planted it, the commit before it
/// running.
#[test]
fn a_worker_that_dies_takes_down_only_the_workload_it_was_running() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let b = planted_in_env_copy2(&repo, "\tabort();\n");
    let file = tmp.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--suite", "lmdb", "--tags", &b, "--git"]).arg(&repo);
    c.args(["--workloads", "fillRandom,copy,overwrite", "--rounds", "2", "--warmup", "0", "--entries", "1000"]);
    // Unoptimised, the unit's one build: which workload its worker dies in is checked.
    c.args(["--layouts", "fixed", "--cflags", &unoptimised_cflags()]);
    c.args(["--no-coverage", "--out"]).arg(&file);
    let out = c.output().unwrap();
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let of = |kind: &str| -> Vec<String> {
        let rows = records.iter().filter(|r| r["type"] == kind);
        rows.map(|r| r["workload"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(of("sample"), ["fillRandom", "overwrite", "fillRandom", "overwrite"], "{text}");
    assert_eq!(of("failure"), ["copy"], "{text}");
    assert!(text.contains("SIGABRT"), "{text}");
    let died = records.iter().find(|r| r["type"] == "failure").unwrap();
    assert_eq!(died["died"], true, "{died}");
    // The report says the row died, how, and that the rest was measured, once.
    let report = stdout(&out);
    let line = report.lines().find(|l| l.starts_with("- Died: copy on ")).unwrap_or_else(|| panic!("{report}"));
    assert!(line.contains("(1 of 1): worker killed by signal 6 (SIGABRT)"), "{line}");
    assert!(!report.contains("Failures:"), "the death is said once: {report}");
    bisect_finds_the_commit_whose_worker_dies(&repo, &b, tmp.path());
}

fn bisect_finds_the_commit_whose_worker_dies(repo: &Path, planted: &str, tmp: &Path) {
    let bisect = |extra: &[&str]| {
        let mut c = lmdb_regress();
        c.env("LMDB_REGRESS_OFFLINE", "1").args(["bisect", "--good", "LMDB_0.9.33", "--bad", planted]);
        c.args(["--bad-if", "crash", "--suite", "lmdb", "--workload", "copy", "--entries", "1000"]);
        c.args(["--cflags", &unoptimised_cflags(), "--git"]);
        c.arg(repo).args(extra);
        c
    };
    let refused = bisect(&["--metric", "instructions"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--bad-if crash decides a probe by whether its worker dies"),
        "{}",
        stderr(&refused)
    );
    let out = tmp.join("bisect");
    let text = stdout(&run_ok(&mut bisect(&["--out-dir", out.to_str().unwrap()])));
    let before = git(repo, &["rev-parse", &format!("{planted}~1")]);
    assert!(text.contains("confirm: LMDB_0.9.33 ran; ") && text.contains("died (worker killed by signal"), "{text}");
    assert!(text.contains(&format!("probe 1: {before}: ran → good")), "{text}");
    assert!(text.contains(&format!("commits: first bad is {planted}")), "{text}");
    let summary: Value = serde_json::from_slice(&std::fs::read(out.join("bisect.json")).unwrap()).unwrap();
    assert_eq!(
        (summary["bad_if"].as_str(), summary["phases"][0]["outcome"]["steps"][0]["verdict"].as_str()),
        (Some("crash"), Some("Good"))
    );
    counted_bisect_takes_the_suites_counting_size(repo, planted, tmp);
}

/// `bisect --metric commit-p50` refuses as `run` does where no commit is timed, and finds the
/// commit that planted a 20 ms sleep in mdb_txn_commit by the passes' median commit (about
/// 8 ms with a sync on this VM's disk before it: a step far past any noise).
#[test]
fn bisect_by_commit_p50_finds_the_commit_that_slowed_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let planted = planted_in(&repo, "mdb_txn_commit(MDB_txn *txn)\n{\n", "\tusleep(20000);\n");
    let bisect = |extra: &[&str]| {
        let mut c = lmdb_regress();
        c.env("LMDB_REGRESS_OFFLINE", "1").args(["bisect", "--good", "LMDB_0.9.33", "--bad", &planted]);
        c.args(["--metric", "commit-p50", "--entries", "100", "--layouts", "fixed"]);
        c.args(["--cflags", &unoptimised_cflags(), "--git"]).arg(&repo).args(extra);
        c
    };
    let durable = "commits are timed in a run that asks how they are made durable";
    for (extra, why) in [
        (&["--workload", "write", "--sync", "sync"][..], "each commit is timed in the lmdb suite's write rows only"),
        (&["--suite", "lmdb", "--workload", "fillRandomEach"][..], durable),
        (&["--suite", "lmdb", "--workload", "fillRandomEach", "--sync", "nosync"][..], durable),
    ] {
        let refused = bisect(extra).output().unwrap();
        assert_eq!(refused.status.code(), Some(2), "{extra:?}: {}", stderr(&refused));
        assert!(stderr(&refused).contains(why), "{extra:?}: {}", stderr(&refused));
    }
    let out = tmp.path().join("bisect");
    let flags = ["--suite", "lmdb", "--workload", "fillRandomEach", "--sync", "nometasync", "--threshold", "50"];
    let text = stdout(&run_ok(&mut bisect(&[&flags[..], &["--out-dir", out.to_str().unwrap()]].concat())));
    assert!(text.contains("us/commit"), "judged by the median commit: {text}");
    assert!(text.contains(&format!("commits: first bad is {planted}")), "{text}");
}

/// Without --entries, a bisect by instructions counts an lmdb-suite row at the suite's
/// counting size with the suite's settings resolved for it: both ends are counted (the
/// planted abort is in a function drop never calls, so they count the same).
fn counted_bisect_takes_the_suites_counting_size(repo: &Path, planted: &str, tmp: &Path) {
    let out = tmp.join("bisect-counted");
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["bisect", "--good", "LMDB_0.9.33", "--bad", planted]);
    c.args(["--suite", "lmdb", "--workload", "drop", "--metric", "instructions"]);
    c.args(["--cflags", &unoptimised_cflags(), "--git"]).arg(repo);
    let o = c.arg("--out-dir").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("exact same") && stderr(&o).contains("nothing to bisect"), "{}", stderr(&o));
    let first =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension() == Some("jsonl".as_ref()));
    let header: Value =
        serde_json::from_str(std::fs::read_to_string(first.unwrap()).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(
        header["plan"]["count_entries"].as_u64().or(header["config"]["entries"].as_u64()),
        Some(10_000),
        "{header}"
    );
}

/// Rows with LMDB 1.0's options on a 0.9 unit: not run, no failure, and every format of the
/// report says so, naming what they need.
#[test]
fn a_1_0_option_asked_of_a_0_9_unit_is_not_applicable_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("na.jsonl");
    let workloads = "fillRandom,fillRandomRemap,fillRandomChecksum";
    let mut c = lmdb_regress();
    c.args(["run", "--suite", "lmdb", "--tags", "0.9.33", "--workloads", workloads, "--rounds", "1"]);
    c.args(["--warmup", "0", "--entries", "500", "--no-coverage", "--out"]).arg(&file);
    run_ok(&mut c);
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(records.iter().all(|r| r["type"] != "failure"), "{text}");
    let ran: Vec<&str> =
        records.iter().filter(|r| r["type"] == "sample").map(|r| r["workload"].as_str().unwrap()).collect();
    assert_eq!(ran, ["fillRandom"], "{text}");
    let out = tmp.path().join("out");
    let mut r = lmdb_regress();
    r.args(["report", "--format", "text,markdown,json,csv,html,github", "--out-dir"]).arg(&out).arg(&file);
    run_ok(&mut r);
    let mut formats = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let doc = std::fs::read_to_string(&path).unwrap();
        if path.to_string_lossy().ends_with("-samples.csv") {
            continue;
        }
        formats += 1;
        for (w, needs) in [("fillRandomRemap", "MDB_REMAP_CHUNKS"), ("fillRandomChecksum", "mdb_env_set_checksum")] {
            assert!(
                doc.contains(w) && doc.contains(needs) || path.extension().is_some_and(|e| e == "csv"),
                "{}: {doc}",
                path.display()
            );
        }
        assert!(doc.contains("not applicable"), "{}: {doc}", path.display());
    }
    assert_eq!(formats, 6, "text, markdown, json, the summary csv, html, github");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("na.json")).unwrap()).unwrap();
    let remap = &json["not_applicable"][0];
    assert_eq!(
        (remap["workload"].as_str(), remap["why"]["needs"].as_str()),
        (Some("fillRandomRemap"), Some("MDB_REMAP_CHUNKS"))
    );
    assert_eq!(remap["units"], serde_json::json!(["LMDB_0.9.33"]));
}

/// Under each sync mode, a commit's syncs are exact and LMDB's: MDB_NOSYNC none,
/// MDB_NOMETASYNC the data's fdatasync, full sync that and the meta page's write through
/// its O_DSYNC descriptor; one put a transaction or 1,000, the same in both engines, and a
/// metric of the report. Both engines open them with MDB_NORDAHEAD when asked (no
/// readahead changes what a commit writes), which the run file and report record. Both
/// engines time each commit into the same histogram's buckets, and the report shows their
/// percentiles and judges the passes' medians (`--metric commit-p50`). A row of fewer
/// than 100 commits a pass (fillRandom's one) makes its declared passes in each process,
/// in both engines, and the header says how many; fillRandomEach's 100 make one.
#[test]
fn sync_modes_give_exact_syncs_per_commit_in_both_engines() {
    let tmp = tempfile::tempdir().unwrap();
    let workloads = "fillRandomEach,fillRandom";
    let flags =
        ["--tags", "0.9.33", "--workloads", workloads, "--sync", "nosync,nometasync,sync", "--readahead", "off"];
    let s = samples(
        tmp.path(),
        "sync",
        &[&flags[..], &["--engine", "rust,c", "--rounds", "1", "--entries", "1000", "--layouts", "fixed"]].concat(),
    );
    // fillRandomEach: a tenth of the keys, one put a commit; fillRandom: 1,000 puts a commit.
    let commits = BTreeMap::from([("fillRandomEach", 100), ("fillRandom", 1)]);
    let fill_random: Workload = "fillRandom".parse().unwrap();
    let passes = BTreeMap::from([("fillRandomEach", 1), ("fillRandom", fill_random.passes(1000, true) as usize)]);
    assert_eq!(passes["fillRandom"], 5);
    let mut io: BTreeMap<(String, String), Vec<Value>> = BTreeMap::new();
    let mut checksums: BTreeMap<(String, &str, String), Vec<Value>> = BTreeMap::new();
    for x in &s {
        let (tag, w) = (x["tag"].as_str().unwrap(), x["workload"].as_str().unwrap());
        let per = match tag.rsplit_once(" [").map(|(_, m)| m) {
            Some("nosync]") => 0,
            Some("nometasync]") => 1,
            Some("sync]") => 2,
            _ => panic!("a unit of each sync mode: {tag}"),
        };
        assert_eq!(
            (x["io"]["commits"].as_u64(), x["io"]["syncs"].as_u64()),
            (Some(commits[w]), Some(per * commits[w]))
        );
        assert!(x["io"]["bytes"].as_u64().unwrap() >= 4096 * commits[w], "{x}");
        // Both engines' timed passes time each commit; a count does not.
        let buckets = x["figures"]["commit_ns"].as_array().cloned().unwrap_or_default();
        let timed: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(timed, if x["counted"] != true { commits[w] } else { 0 }, "{x}");
        // Each bucket is one the Rust engine's histogram makes: it reads back as itself.
        for b in &buckets {
            let ns = b[0].as_u64().unwrap();
            assert_eq!(lmdb_regress::workload::presets::lmdb_suite::commits::median_ns(&[(ns, 1)]), Some(ns), "{x}");
        }
        // The same commits in the order made, one a commit, in both engines, where the row
        // repeats its pass (fillRandom): their buckets are the histogram's.
        let order: Vec<u64> = x["figures"]["commit_order_ns"]
            .as_array()
            .map_or_else(Vec::new, |o| o.iter().map(|ns| ns.as_u64().unwrap()).collect());
        assert_eq!(order.len() as u64, if passes[w] > 1 { timed } else { 0 }, "{x}");
        let histogram: Vec<(u64, u64)> =
            buckets.iter().map(|b| (b[0].as_u64().unwrap(), b[1].as_u64().unwrap())).collect();
        if !order.is_empty() {
            assert_eq!(lmdb_regress::workload::presets::lmdb_suite::commits::buckets(&order), histogram, "{x}");
        }
        io.entry((tag.into(), w.into())).or_default().push(x["io"].clone());
        let engine = x["engine"].as_str().unwrap().to_string();
        checksums.entry((tag.to_string(), w, engine)).or_default().push(x["checksum"].clone());
    }
    assert_eq!(io.len(), 6, "{io:?}");
    for ((tag, w), each) in &io {
        assert_eq!(each.len(), 2 * passes[w.as_str()], "{tag} {w}: the declared passes in each engine: {each:?}");
        assert!(each.iter().all(|x| *x == each[0]), "the passes or engines differ: {io:?}");
    }
    // Each pass of a unit and row in either engine leaves the same data.
    for ((tag, w, engine), each) in &checksums {
        let rust = &checksums[&(tag.clone(), *w, "rust".to_string())][0];
        assert_eq!(each.len(), passes[*w], "{engine} {tag} {w}");
        assert!(each.iter().all(|c| c == rust), "{engine} {tag} {w}: {each:?}");
    }
    let md = stdout(&run_ok(
        lmdb_regress().args(["report", "--metric", "syncs-per-commit"]).arg(tmp.path().join("sync.jsonl")),
    ));
    assert!(md.contains("| syncs/commit |") && md.contains("`LMDB_0.9.33 [nometasync]` | 1.000"), "{md}");
    assert!(md.contains("MDB_NORDAHEAD"), "{md}");
    assert!(md.contains("Time per commit") && md.contains("| LMDB Tag | commits | p50 us | p99 us |"), "{md}");
    let p50 =
        stdout(&run_ok(lmdb_regress().args(["report", "--metric", "commit-p50"]).arg(tmp.path().join("sync.jsonl"))));
    assert!(p50.contains("us/commit") && p50.contains("`LMDB_0.9.33 [sync]`"), "{p50}");
    assert!(p50.contains("Passes: ") && p50.contains("(fillRandom 5 an iteration)"), "{p50}");
    assert!(p50.contains("Commits paired by their place in the pass (fillRandom):"), "{p50}");
    let header = std::fs::read_to_string(tmp.path().join("sync.jsonl")).unwrap();
    let header = header.lines().next().unwrap();
    assert!(header.contains(r#""nordahead":true"#), "{header}");
    assert!(header.contains(r#""passes":{"fillRandom":5}"#), "{header}");
}

fn assert_shm_is_a_tmpfs() {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(
        mounts.lines().any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.contains(" tmpfs ")),
        "this test needs /dev/shm mounted as a tmpfs:\n{mounts}"
    );
}

/// A run that syncs needs a disk, and so does a cold migrate pass (it evicts its file from
/// the page cache): with LMDB_REGRESS_SCRATCH in memory (a tmpfs under /dev/shm) each is
/// refused before anything is measured, saying which unit, why, and what to set.
#[test]
fn a_sync_run_with_its_scratch_in_memory_is_refused() {
    assert_shm_is_a_tmpfs();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = shm.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_SCRATCH", shm.path()).env("LMDB_REGRESS_OFFLINE", "1");
    c.args(["run", "--suite", "lmdb", "--tags", "0.9.33", "--workloads", "fillRandomEach", "--sync", "nosync,sync"]);
    c.args(["--rounds", "1", "--warmup", "0", "--entries", "1000", "--no-coverage", "--out"]).arg(&file);
    let out = c.output().unwrap();
    let err = stderr(&out);
    assert!(!out.status.success() && err.contains("needs a disk") && err.contains("LMDB_REGRESS_SCRATCH"), "{err}");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(!text.contains("\"type\":\"sample\""), "nothing measured: {text}");
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_SCRATCH", shm.path()).env("LMDB_REGRESS_OFFLINE", "1");
    c.args(["run", "--preset", "migrate", "--tags", "0.9.33", "--workloads", "migrateCopyWarm,migrateReadCold"]);
    c.args(["--rounds", "1", "--warmup", "0", "--entries", "200", "--no-coverage", "--out"]).arg(&file);
    let err = stderr(&c.output().unwrap());
    assert!(err.contains("needs a disk (migrateReadCold evicts its file from the page cache"), "{err}");
}

/// Without LMDB_REGRESS_SCRATCH each unit goes where what it measures needs: in one run
/// the nosync unit to memory (/dev/shm), its sync twin to a disk (the temporary folder);
/// the header records each place and the report's Test Environment says it.
#[test]
fn a_runs_nosync_unit_goes_to_memory_and_its_sync_unit_to_a_disk() {
    assert_shm_is_a_tmpfs();
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = disk.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.env_remove("LMDB_REGRESS_SCRATCH").env("TMPDIR", disk.path()).env("LMDB_REGRESS_OFFLINE", "1");
    c.args(["run", "--suite", "lmdb", "--tags", "0.9.33", "--workloads", "fillRandomEach", "--sync", "nosync,sync"]);
    c.args(["--rounds", "1", "--warmup", "0", "--entries", "200", "--layouts", "fixed", "--no-coverage", "--out"]);
    run_ok(c.arg(&file));
    let text = std::fs::read_to_string(&file).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let places: BTreeMap<&str, &Value> =
        header["places"].as_array().unwrap().iter().map(|p| (p["medium"].as_str().unwrap(), &p["units"])).collect();
    assert_eq!(places["memory"], &serde_json::json!(["LMDB_0.9.33 [nosync]"]), "{header}");
    assert_eq!(places["disk"], &serde_json::json!(["LMDB_0.9.33 [sync]"]), "{header}");
    let tool = <sha2::Sha256 as sha2::Digest>::digest(std::fs::read(BIN).unwrap());
    assert_eq!(header["environment"]["tool_sha256"], hex::encode(tool), "the run names the tool's build");
    for unit in ["LMDB_0.9.33 [nosync]", "LMDB_0.9.33 [sync]"] {
        assert!(text.contains(&format!("\"tag\":\"{unit}\"")), "{unit} measured: {text}");
    }
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&file)));
    let line = md.lines().find(|l| l.starts_with("| Data folders |")).unwrap_or_else(|| panic!("{md}"));
    assert!(line.contains("LMDB_0.9.33 [nosync]: in memory (tmpfs on "), "{line}");
    assert!(line.contains("LMDB_0.9.33 [sync]: on a disk ("), "{line}");
    let json: Value =
        serde_json::from_str(&stdout(&run_ok(lmdb_regress().args(["report", "--format", "json"]).arg(&file)))).unwrap();
    assert_eq!(json["places"], header["places"], "the report's JSON carries the header's places");
}

/// A resumed run keeps each unit's data files where its samples so far were measured, and
/// the build of the tool that measured them: a header whose place for a unit is not where
/// the unit would now go, or that names another build, is refused before anything is
/// appended.
#[test]
fn a_resume_that_would_move_a_units_data_files_is_refused() {
    assert_shm_is_a_tmpfs();
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = disk.path().join("run.jsonl");
    let placed = |c: &mut std::process::Command| {
        c.env_remove("LMDB_REGRESS_SCRATCH").env("TMPDIR", disk.path()).env("LMDB_REGRESS_OFFLINE", "1");
    };
    let mut c = lmdb_regress();
    placed(&mut c);
    c.args(["run", "--suite", "lmdb", "--tags", "0.9.33", "--workloads", "fillRandomEach", "--rounds", "2"]);
    c.args(["--warmup", "0", "--entries", "200", "--layouts", "fixed", "--no-coverage", "--out"]);
    run_ok(c.arg(&file));
    let kept: Vec<Value> = crate::safety::records(&file)
        .into_iter()
        .filter(|r| r["type"] != "end" && !(r["type"] == "sample" && r["round"] == 1))
        .collect();
    assert_eq!(kept[0]["places"][0]["medium"], "memory", "{}", kept[0]);
    let refused = |forge: &dyn Fn(&mut Value)| {
        let mut forged = kept.clone();
        forge(&mut forged[0]);
        let text: String = forged.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&file, &text).unwrap();
        let mut c = lmdb_regress();
        placed(&mut c);
        let out = c.args(["run", "--resume"]).arg(&file).output().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "nothing appended");
        assert!(!out.status.success(), "refused");
        stderr(&out)
    };
    let err = refused(&|h| {
        h["places"][0]["medium"] = "disk".into();
        h["places"][0]["storage"] = "ext4 on /dev/forged".into();
    });
    assert!(err.contains("cannot be resumed"), "{err}");
    assert!(err.contains("on a disk (ext4 on /dev/forged)") && err.contains("would now keep them in memory"), "{err}");
    // Nor by another build of the tool, whose own placement moves times.
    let err = refused(&|h| h["environment"]["tool_sha256"] = "f".repeat(64).into());
    assert!(err.contains("cannot be resumed") && err.contains("another build of lmdb-regress"), "{err}");
}
