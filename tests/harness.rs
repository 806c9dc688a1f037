//! The native harness and the runner, on tiny data: correct results from both engines,
//! failures contained, interrupted runs resumed.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use lmdb_regress::workload::{expected_checksum, Dataset, KeyKind, Workload, WorkloadConfig};
use serde_json::Value;

const READS: [&str; 5] = ["readKey", "readSeq", "readRev", "readCrc", "readXxh64"];

fn summary(args: &[&str], envs: &[(&str, &str)]) -> (Vec<Value>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--warmup", "0", "--summary-json", "--out"]).arg(dir.path().join("run.jsonl")).args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = run_ok(&mut c);
    (json(&out).as_array().unwrap().clone(), dir)
}

fn find<'a>(rows: &'a [Value], engine: &str, tag: &str, workload: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["engine"] == engine && r["tag"] == tag && r["workload"] == workload)
        .unwrap_or_else(|| panic!("no row {engine} {tag} {workload} in {rows:?}"))
}

/// What each read must return, as the library computes it without LMDB.
fn expected(workload: &str, cfg: &WorkloadConfig) -> String {
    let w: Workload = workload.parse().unwrap();
    expected_checksum(w, cfg).expect("a read").to_string()
}

#[test]
fn every_workload_returns_the_right_count_and_checksum_on_both_engines() {
    let n = 3000u32;
    let (rows, _d) =
        summary(&["--tags", "0.9.18,0.9.33", "--entries", &n.to_string(), "--rounds", "1", "--engine", "rust,c"], &[]);
    let cfg = WorkloadConfig { entries: n, ..WorkloadConfig::default() };
    for engine in ["rust", "c"] {
        for tag in ["LMDB_0.9.18", "LMDB_0.9.33"] {
            for w in READS {
                let r = find(&rows, engine, tag, w);
                assert_eq!(r["n"], 1, "{r}");
                assert_eq!(r["failures"], 0, "{r}");
                assert_eq!(r["checksum"], expected(w, &cfg), "{engine} {tag} {w}");
                assert!(r["median_ms"].as_f64().unwrap() > 0.0);
            }
            let wr = find(&rows, engine, tag, "write");
            assert!(wr["checksum"].is_null());
            assert_eq!(wr["n"], 1);
        }
    }
}

#[test]
fn string_keys_random_order_and_random_values() {
    // String keys with LmdbJava's values: checked against the definition.
    let n = 1500u32;
    let (rows, _d) = summary(
        &[
            "--tags",
            "0.9.18,0.9.33",
            "--entries",
            &n.to_string(),
            "--rounds",
            "1",
            "--keys",
            "str16",
            "--engine",
            "rust,c",
        ],
        &[],
    );
    let cfg = WorkloadConfig { entries: n, keys: KeyKind::Str16, ..WorkloadConfig::default() };
    for engine in ["rust", "c"] {
        for w in READS {
            assert_eq!(find(&rows, engine, "LMDB_0.9.33", w)["checksum"], expected(w, &cfg), "{engine} {w}");
        }
    }
    // Random order and values: two engines and two tags must agree, and count every entry.
    let (rows, _d) = summary(
        &[
            "--tags",
            "0.9.18,0.9.33",
            "--entries",
            &n.to_string(),
            "--rounds",
            "1",
            "--order",
            "random",
            "--values",
            "random",
            "--engine",
            "rust,c",
        ],
        &[],
    );
    for w in READS {
        let sums: Vec<&Value> = rows.iter().filter(|r| r["workload"] == w).map(|r| &r["checksum"]).collect();
        assert_eq!(sums.len(), 4, "{w}");
        assert!(sums.iter().all(|s| *s == sums[0]), "{w}: {sums:?}");
        assert!(sums[0].as_str().unwrap().starts_with(&format!("{n}:")));
    }
    // Random reads by key visit a permutation: a different digest from the sequential walk.
    assert_ne!(
        find(&rows, "rust", "LMDB_0.9.33", "readKey")["checksum"],
        find(&rows, "rust", "LMDB_0.9.33", "readSeq")["checksum"]
    );
    for engine in ["rust", "c"] {
        assert_eq!(find(&rows, engine, "LMDB_0.9.18", "write")["n"], 1, "random-order writes (plain puts) work");
    }
}

fn run_file(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("run.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The opening of mdb_cursor_get in mdb.c, where the crashing build gets its fault.
const CURSOR_GET: &str = "mdb_cursor_get(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    MDB_cursor_op op)\n{\n";

#[test]
fn a_crashed_worker_is_recorded_and_the_run_goes_on() {
    // A liblmdb whose every mdb_cursor_get on a database of the user's dereferences a null
    // pointer, as a commit of OpenLDAP's repository made here; the tool builds it like any
    // other commit. The freelist's cursor, which the space read after a write walks, is spared.
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let mdb = repo.join("libraries/liblmdb/mdb.c");
    let text = std::fs::read_to_string(&mdb).unwrap();
    assert!(text.contains(CURSOR_GET), "mdb_cursor_get's opening changed");
    let fault = format!("{CURSOR_GET}\tif (mc->mc_dbi != FREE_DBI) {{ volatile int *crash = 0; *crash = 1; }}\n");
    std::fs::write(&mdb, text.replacen(CURSOR_GET, &fault, 1)).unwrap();
    git(&repo, &["commit", "-q", "-am", "crash in every mdb_cursor_get"]);
    let crashing = git(&repo, &["rev-parse", "HEAD"]);

    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--warmup", "0", "--summary-json", "--out"]).arg(dir.path().join("run.jsonl"));
    c.args(["--entries", "1000", "--rounds", "2", "--workloads", "readSeq,write", "--git"]).arg(&repo);
    c.args(["--tags", &format!("0.9.33,{crashing}")]);
    // Unoptimised, each unit's one build: where the crash lands is checked, not the code.
    c.args(["--layouts", "fixed", "--cflags", &unoptimised_cflags()]);
    let rows = json(&run_ok(&mut c)).as_array().unwrap().clone();
    assert_eq!(find(&rows, "rust", "LMDB_0.9.33", "write")["n"], 2);
    assert_eq!(find(&rows, "rust", "LMDB_0.9.33", "readSeq")["n"], 2);
    // The crashing build wrote its read database (puts only), then died verifying its
    // first read: that read is not measured, and its writes (no mdb_cursor_get) still are.
    let r = find(&rows, "rust", &crashing, "readSeq");
    assert_eq!((r["n"].as_u64(), r["failures"].as_u64()), (Some(0), Some(1)), "{r}");
    let r = find(&rows, "rust", &crashing, "write");
    assert_eq!((r["n"].as_u64(), r["failures"].as_u64()), (Some(2), Some(0)), "{r}");
    let failures: Vec<Value> = run_file(dir.path()).into_iter().filter(|r| r["type"] == "failure").collect();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["tag"], crashing.as_str());
    assert_eq!(failures[0]["stage"], "verify");
    assert!(failures[0]["error"].as_str().unwrap().contains("signal 11 (SIGSEGV)"), "{}", failures[0]);
}

#[test]
fn a_too_small_map_is_a_clear_per_tag_map_full_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = |map: &str| {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", "0.9.18,0.9.33", "--entries", "5000", "--order", "random", "--map-size", map]);
        c.args(["--rounds", "1", "--warmup", "0", "--force", "--out"])
            .arg(dir.path().join("run.jsonl"))
            .output()
            .unwrap()
    };
    // A map that cannot hold the data even packed full is refused before anything runs.
    let out = run("65536");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--map-size 65536 cannot hold 5000 entries") && stderr(&out).contains("at least"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("run.jsonl").exists(), "refused before a run file was made");
    // One that could, but not for random inserts: each tag's MDB_MAP_FULL, with the map that fits.
    let out = run("700000");
    assert!(!out.status.success(), "nothing measured is a failure");
    let text = format!("{}{}", stdout(&out), stderr(&out));
    for tag in ["LMDB_0.9.18", "LMDB_0.9.33"] {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(tag) && l.contains("MDB_MAP_FULL")).collect();
        assert!(lines.len() >= 2, "{tag}: read database and write both report MDB_MAP_FULL:\n{text}");
        assert!(lines.iter().all(|l| l.contains("give --map-size 1433600 or more")), "{lines:?}");
    }
}

/// A run none of whose workloads applies to any unit (1.0's per-transaction sync on a 0.9
/// release) measures nothing and says so: not "no failure was recorded", but that nothing
/// applied, beside the report's line of what did not and why.
#[test]
fn a_run_where_nothing_applies_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18", "--workloads", "write", "--sync", "txn-nosync", "--entries", "100"]);
    let out = c
        .args(["--rounds", "1", "--warmup", "0", "--no-coverage", "--out"])
        .arg(dir.path().join("run.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let e = stderr(&out);
    assert!(e.contains("none of the run's workloads applies to any of its units"), "{e}");
    let why = "write on `LMDB_0.9.18`: not applicable: needs MDB_NOSYNC and MDB_NOMETASYNC on mdb_txn_begin";
    assert!(stdout(&out).contains(why), "{}", stdout(&out));
}

#[test]
fn an_interrupted_run_keeps_its_samples_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let child = lmdb_regress()
        .args([
            "run",
            "--tags",
            "0.9.18,0.9.33",
            "--entries",
            "1000",
            "--workloads",
            "readSeq",
            // An axis of the units: the resumed session must measure each unit both ways.
            "--readahead",
            "on,off",
            "--rounds",
            "40",
            "--warmup",
            "0",
            // Every round measures every tag: the resumed run reaches its last round.
            "--adaptive",
            "off",
            "--out",
        ])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !std::fs::read_to_string(&file).map(|s| s.matches("\"sample\"").count() >= 4).unwrap_or(false) {
        assert!(start.elapsed() < Duration::from_secs(60), "no samples appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
    let before: Vec<Value> = run_file(dir.path());
    let n_before = before.iter().filter(|r| r["type"] == "sample").count();
    assert!(n_before >= 4);
    assert_eq!(before.last().unwrap()["reason"], "interrupted");

    // The partial file renders.
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&file)));
    assert!(md.contains("Partial run") && md.contains("Iterate Sequentially"), "{md}");

    run_ok(lmdb_regress().args(["run", "--summary-json", "--resume"]).arg(&file));
    let after = run_file(dir.path());
    let samples: Vec<&Value> = after.iter().filter(|r| r["type"] == "sample").collect();
    assert!(samples.len() > n_before);
    let rounds: std::collections::BTreeSet<u64> = samples.iter().map(|s| s["round"].as_u64().unwrap()).collect();
    assert_eq!(rounds.iter().max(), Some(&39));
    // The resumed rounds keep the run's random layouts, each sample its own.
    assert_eq!(after[0]["plan"]["layouts"], "random");
    assert!(samples.iter().all(|s| s["layout"].is_u64()), "a resumed sample without its layout");
    // Each unit, read ahead or not, has its 40 rounds, the resumed ones included.
    let mut per_unit = std::collections::BTreeMap::new();
    for s in &samples {
        *per_unit.entry(s["tag"].as_str().unwrap()).or_insert(0) += 1;
    }
    assert_eq!(per_unit.len(), 4, "{per_unit:?}");
    assert!(per_unit.iter().all(|(tag, n)| *n == 40 && tag.contains(" [readahead ")), "{per_unit:?}");
    assert!(samples[n_before..].iter().any(|s| s["tag"].as_str().unwrap().ends_with(" [readahead off]")));
    assert_eq!(after.last().unwrap()["reason"], "rounds");
    // Every sample from before the interruption is still there, unchanged.
    assert_eq!(&after[..before.len()], &before[..]);
}

/// An adaptive run given a time budget and no --rounds has no cap on its rounds: one tag
/// compared with nothing is never decided, so it goes past the default 20 rounds until the
/// budget (here Ctrl-C, once round 21 is written) ends it.
#[test]
fn a_budget_not_the_default_rounds_ends_an_adaptive_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let args = ["run", "--tags", "0.9.33", "--entries", "500", "--workloads", "readSeq", "--warmup", "0"];
    let child = lmdb_regress()
        .args(args)
        .args(["--layouts", "fixed", "--adaptive", "on", "--time-budget", "10m", "--out"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let past_20 = |text: &str| text.lines().any(|l| l.contains("\"sample\"") && l.contains("\"round\":20,"));
    let start = Instant::now();
    while !std::fs::read_to_string(&file).is_ok_and(|s| past_20(&s)) {
        assert!(start.elapsed() < Duration::from_secs(120), "no 21st round");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let records = run_file(dir.path());
    assert_eq!(records[0]["plan"]["rounds"], Value::Null, "no cap on the rounds");
    assert_eq!(records.last().unwrap()["reason"], "interrupted", "{}", stderr(&out));
    // Round 21 (counted from 1) was measured; Ctrl-C may have cut the one under way.
    assert!(records.last().unwrap()["rounds"].as_u64().unwrap() >= 20);
    assert!(records.iter().any(|r| r["type"] == "sample" && r["round"] == 20));
}

#[test]
fn a_c_twin_that_does_not_build_or_reports_nothing_costs_only_the_c_unit() {
    let dir = tempfile::tempdir().unwrap();
    // A twin that does not compile; then one that answers `version` and reports nothing.
    let broken = dir.path().join("broken.c");
    std::fs::write(&broken, "#error this twin does not build\n").unwrap();
    let silent = dir.path().join("silent.c");
    std::fs::write(
        &silent,
        "#include <stdio.h>\n#include <string.h>\n#include \"lmdb.h\"\n\
         int main(int argc, char **argv) {\n\
           int a, b, c; char *s = mdb_version(&a, &b, &c);\n\
           if (argc > 1 && !strcmp(argv[1], \"version\")) printf(\"%d %d %d %s\\n\", a, b, c, s);\n\
           return 0;\n}\n",
    )
    .unwrap();
    // Unoptimised: which unit fails at which stage is checked, not the code.
    let cflags = unoptimised_cflags();
    for (twin, stage, error) in
        [(&broken, "build", "this twin does not build"), (&silent, "run", "without reporting this workload")]
    {
        let (rows, out) = summary(
            // Each tag's own twin runs in processes of its own (paired rounds run the C paired worker).
            &[
                "--cflags",
                &cflags,
                "--tags",
                "0.9.33",
                "--entries",
                "1000",
                "--rounds",
                "1",
                "--workloads",
                "write",
                "--engine",
                "rust,c",
                "--pairing",
                "process",
            ],
            &[("LMDB_REGRESS_HARNESS_C", twin.to_str().unwrap())],
        );
        assert_eq!(find(&rows, "rust", "LMDB_0.9.33", "write")["n"], 1, "the Rust unit is measured");
        let failures: Vec<Value> = run_file(out.path()).into_iter().filter(|r| r["type"] == "failure").collect();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!((failures[0]["engine"].as_str(), failures[0]["stage"].as_str()), (Some("c"), Some(stage)));
        assert!(failures[0]["error"].as_str().unwrap().contains(error), "{}", failures[0]);
    }
}

/// LMDB_0.9.33's shared library, as the build matrix made it for this test's cache.
fn library_0933() -> std::path::PathBuf {
    common::library("0.9.33")
}

#[test]
fn the_write_loop_with_reused_buffers_writes_the_database_the_old_loop_wrote() {
    // The old loop wrote key i (4 native bytes) with the value "key bytes, then zeros"
    // from precomputed arrays. The read database is written by the same loop as the write
    // workload (both engines); its sequential walk must hash to the old definition's.
    let n = 2000u32;
    let (rows, _d) = summary(
        &[
            "--tags",
            "0.9.33",
            "--entries",
            &n.to_string(),
            "--rounds",
            "1",
            "--engine",
            "rust,c",
            "--workloads",
            "readSeq",
        ],
        &[],
    );
    let mut h = twox_hash::XxHash64::with_seed(0);
    for i in 0..n {
        let mut value = vec![0u8; 100];
        value[..4].copy_from_slice(&i.to_ne_bytes());
        std::hash::Hasher::write(&mut h, &i.to_ne_bytes());
        std::hash::Hasher::write(&mut h, &value);
    }
    let old = format!("{n}:{:016x}", std::hash::Hasher::finish(&h));
    for engine in ["rust", "c"] {
        assert_eq!(find(&rows, engine, "LMDB_0.9.33", "readSeq")["checksum"], old.as_str(), "{engine}");
    }
}

#[test]
fn the_random_order_database_is_built_as_lmdbjava_builds_it_with_plain_puts() {
    use lmdb_regress::workload::lmdb::{Api, Env};
    use lmdb_regress::workload::{native, Order};
    let api = Api::load(&library_0933()).unwrap();
    let cfg = WorkloadConfig { entries: 20_000, order: Order::Random, ..WorkloadConfig::default() };
    let data = Dataset::generate(&cfg);
    let tmp = tempfile::tempdir().unwrap();
    // What `prepare` writes for random order: the keys in drawn order, no MDB_APPEND.
    native::prepare(&api, &tmp.path().join("random"), &cfg, &data).unwrap();
    // The same keys sorted and appended, as the sequential database is written.
    let mut sorted = Dataset::generate(&cfg);
    sorted.keys.sort_unstable();
    let append = lmdb_regress::ffi::bindings::MDB_APPEND;
    native::write_database(&api, &tmp.path().join("append"), &cfg, &sorted, append).unwrap();
    let pages =
        |dir: &str| Env::open(&api, &tmp.path().join(dir), &native::env_options(&cfg)).unwrap().page_counts().unwrap();
    let (random, appended) = (pages("random"), pages("append"));
    assert_eq!((random.entries, appended.entries), (20_000, 20_000));
    // Page splits leave pages part full; MDB_APPEND fills each one.
    assert!(random.leaf > appended.leaf * 5 / 4, "random {random:?} vs append {appended:?}");
    // The drawn keys are spread over the 31-bit range, not a permutation of 0..n.
    assert!(data.keys.iter().any(|&k| k >= cfg.entries));
}

#[test]
fn one_opening_and_one_walk_serve_lmdbjavas_database_and_the_presets() {
    use lmdb_regress::ffi::bindings::{MDB_NOSYNC, MDB_RDONLY};
    use lmdb_regress::workload::lmdb::{self, Api, Database, Env, EnvOptions, BACKWARD};
    use lmdb_regress::workload::{native, Order};
    let api = Api::load(&library_0933()).unwrap();
    let cfg = WorkloadConfig { entries: 3000, order: Order::Random, ..WorkloadConfig::default() };
    let data = Dataset::generate(&cfg);
    let tmp = tempfile::tempdir().unwrap();
    native::prepare(&api, tmp.path(), &cfg, &data).unwrap();
    let mut sorted = data.keys.clone();
    sorted.sort_unstable();
    let int = |b: &[u8]| u32::from_ne_bytes(b.try_into().unwrap());
    // LmdbJava's named database, walked forward: every key once, in order, hashed as readSeq's checksum.
    let env = Env::open(&api, tmp.path(), &native::env_options(&cfg)).unwrap();
    let (mut keys, mut h) = (Vec::new(), lmdb_regress::workload::checksum::Hasher::default());
    let n = env
        .walk(|k, v| {
            keys.push(int(k));
            h.add(k, v);
        })
        .unwrap();
    assert_eq!((n, &keys), (3000, &sorted));
    assert_eq!(Some(h.finish()), expected_checksum(Workload::ReadSeq, &cfg));
    // SAFETY: a cursor on a fresh read transaction, ended before the environment closes.
    unsafe {
        let tc = lmdb::begin_cursor(&api, &env, MDB_RDONLY).unwrap();
        let mut back = Vec::new();
        let walked = lmdb::walk(api.mdb_cursor_get, tc.1, BACKWARD, "mdb_cursor_get", |k, _| {
            back.push(int(lmdb::bytes(k)));
            Ok(())
        });
        // A failing step ends the walk with its failure, after the entries it saw.
        let mut seen = 0;
        let stopped = lmdb::walk(api.mdb_cursor_get, tc.1, BACKWARD, "mdb_cursor_get", |_, _| {
            seen += 1;
            if seen == 10 {
                Err(("stop", 1))
            } else {
                Ok(())
            }
        });
        lmdb::end_cursor(&api, tc, false, Ok(())).unwrap();
        assert_eq!(walked, Ok(3000));
        assert!(back.iter().rev().eq(sorted.iter()));
        assert_eq!((stopped, seen), (Err(("stop", 1)), 10));
    }
    drop(env);
    // The presets' unnamed database of the same file, read-only: it holds the named one's record.
    let unnamed = EnvOptions {
        map_size: cfg.effective_map_size(),
        flags: MDB_NOSYNC,
        txn_flags: 0,
        db: Database::Unnamed,
        lmdb10: Default::default(),
    };
    let env = Env::open(&api, tmp.path(), &unnamed.read_only()).unwrap();
    let mut names = Vec::new();
    env.walk(|k, _| names.push(k.to_vec())).unwrap();
    assert_eq!(names, [b"db".to_vec()]);
    // Read-only opens create nothing.
    let empty = tempfile::tempdir().unwrap();
    let e = Env::open(&api, empty.path(), &unnamed.read_only()).err().expect("no environment to open");
    assert_eq!(e.call, "mdb_env_open", "{e}");
    assert!(!empty.path().join("data.mdb").exists());
}

#[test]
fn the_c_twin_rejects_bad_arguments_with_the_rust_workers_messages() {
    // The C twin of LMDB_0.9.33, as a small run of one process per unit records it in its header.
    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--engine", "c", "--tags", "0.9.33", "--entries", "1000", "--rounds", "1", "--warmup", "0"]);
    c.args(["--pairing", "process"]);
    run_ok(c.args(["--workloads", "write", "--summary-json", "--out"]).arg(dir.path().join("run.jsonl")));
    let header = run_file(dir.path()).into_iter().find(|r| r["type"] == "header").unwrap();
    let twin = header["tags"][0]["builds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "c-harness")
        .expect("a C twin build")["artifact"]
        .as_str()
        .unwrap()
        .to_string();
    let rust_worker = |args: &[&str]| {
        let mut c = lmdb_regress();
        c.args(["worker", "run", "--library", "/nonexistent", "--library-sha256", "0", "--library-version", "x"]);
        c.args(args);
        c
    };
    for (args, message) in [
        (&["--entries", "0", "--order", "random"][..], "--entries must be at least 1"),
        (&["--value-size", "2"][..], "--value-size must be at least 4 with --values fixed"),
        (&["--entries", "x3"][..], "--entries"),
        (&["--workloads", "readFoo"][..], "unknown workload readFoo"),
        // One suite per worker: a mix names both suites.
        (
            &["--workloads", "readKey,tcRandomWrite"][..],
            "cannot share a run: readKey is LmdbJava's, tcRandomWrite is tokyo-cabinet's",
        ),
        (&["--order", "sideways"][..], "--order"),
    ] {
        let out = std::process::Command::new(&twin).arg("run").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "C twin {args:?}: {out:?}");
        assert!(stderr(&out).contains(message), "C twin {args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "C twin {args:?} printed {:?}", stdout(&out));
        // The Rust worker refuses the same arguments (its messages come from clap and
        // WorkloadConfig::validate; the C twin's copy them).
        let out = rust_worker(args).output().unwrap();
        assert!(!out.status.success(), "Rust worker accepted {args:?}");
        assert!(stderr(&out).contains(message), "Rust worker {args:?}: {}", stderr(&out));
    }
    // The runner resolves every suite's settings and gives them all: the twin fills in none.
    let out = std::process::Command::new(&twin).args(["run", "--workloads", "write"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "C twin without --entries and --map-size: {out:?}");
    assert!(stderr(&out).contains("--entries and --map-size are required"), "{}", stderr(&out));
}
