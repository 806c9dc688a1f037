//! Paired measurement: units side by side in one process, their passes alternated chunk by
//! chunk, in the Rust engine and in the C twin's paired worker. Chunked passes compute what
//! whole passes compute, count what whole passes count, `--pairing process` keeps the
//! design of one worker per unit, and a unit that crashes a paired process costs that
//! process's round and nothing already written.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use lmdb_regress::workload::{expected_checksum, Workload, WorkloadConfig};
use serde_json::Value;

const WORKLOADS: [&str; 6] = ["readKey", "readSeq", "readRev", "readCrc", "readXxh64", "write"];

/// A run's summary and its run file's lines.
fn run(args: &[&str], envs: &[(&str, &str)]) -> (Vec<Value>, Vec<Value>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.args(["run", "--warmup", "0", "--summary-json", "--out"]).arg(&file).args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    let rows = json(&run_ok(&mut c)).as_array().unwrap().clone();
    let lines = std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (rows, lines, dir)
}

fn samples<'a>(lines: &'a [Value], tag: &'a str, workload: &'a str) -> impl Iterator<Item = &'a Value> {
    lines.iter().filter(move |l| l["type"] == "sample" && l["tag"] == tag && l["workload"] == workload)
}

/// Chunks of 777 operations (the last one shorter) over 5,000 entries: every read's
/// checksum is the data's, every timed readCrc and readXxh64 pass computed what the untimed
/// whole walk read (the runner refuses a pass that did not), and a pass's time is the sum
/// of its chunks'.
#[test]
fn chunked_passes_compute_what_whole_passes_compute() {
    let n = 5000u32;
    let args =
        ["--tags", "0.9.18,0.9.33", "--entries", "5000", "--chunk", "777", "--rounds", "2", "--layouts", "fixed"];
    let (rows, lines, _d) = run(&args, &[]);
    let plan = &lines[0]["plan"];
    assert_eq!((&plan["pairing"], &plan["chunk"]), (&Value::from("chunks"), &Value::from(777)), "{plan}");
    let cfg = WorkloadConfig { entries: n, ..WorkloadConfig::default() };
    for tag in ["LMDB_0.9.18", "LMDB_0.9.33"] {
        for w in WORKLOADS {
            let row = rows.iter().find(|r| r["tag"] == tag && r["workload"] == w).unwrap();
            assert_eq!((&row["n"], &row["failures"]), (&Value::from(2), &Value::from(0)), "{row}");
            if let Some(c) = expected_checksum(w.parse::<Workload>().unwrap(), &cfg) {
                assert_eq!(row["checksum"], c.to_string(), "{tag} {w}");
            }
            for s in samples(&lines, tag, w) {
                let chunks: Vec<u64> = s["chunks_ns"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
                assert_eq!(chunks.len(), 7, "5000 entries in chunks of 777: {s}");
                assert_eq!(chunks.iter().sum::<u64>(), s["ns"].as_u64().unwrap());
            }
        }
    }
}

/// The C twin's paired worker on its own (`--engine c`: it writes the read databases,
/// verifies them and times the passes): chunks of 777 operations compute what the twin's
/// whole passes compute in processes of their own, every pass is the sum of its chunks,
/// and the plan says chunks.
#[test]
fn chunked_c_passes_compute_what_whole_c_passes_compute() {
    let n = 5000u32;
    let common =
        ["--engine", "c", "--tags", "0.9.18,0.9.33", "--entries", "5000", "--rounds", "2", "--layouts", "fixed"];
    let (chunked, lines, _d) = run(&[&common[..], &["--chunk", "777"]].concat(), &[]);
    let (whole, whole_lines, _e) = run(&[&common[..], &["--pairing", "process"]].concat(), &[]);
    assert_eq!(lines[0]["plan"]["pairing"], "chunks", "{}", lines[0]["plan"]);
    assert_eq!(whole_lines[0]["plan"]["pairing"], "process", "{}", whole_lines[0]["plan"]);
    let cfg = WorkloadConfig { entries: n, ..WorkloadConfig::default() };
    for tag in ["LMDB_0.9.18", "LMDB_0.9.33"] {
        for w in WORKLOADS {
            let row = |rows: &[Value]| rows.iter().find(|r| r["tag"] == tag && r["workload"] == w).cloned().unwrap();
            let (c, p) = (row(&chunked), row(&whole));
            assert_eq!(
                (&c["engine"], &c["n"], &c["failures"]),
                (&Value::from("c"), &Value::from(2), &Value::from(0)),
                "{c}"
            );
            assert_eq!((&p["n"], &p["failures"]), (&Value::from(2), &Value::from(0)), "{p}");
            assert_eq!(c["checksum"], p["checksum"], "{tag} {w}: chunked and whole C passes");
            if let Some(sum) = expected_checksum(w.parse::<Workload>().unwrap(), &cfg) {
                assert_eq!(c["checksum"], sum.to_string(), "{tag} {w}");
            }
            for s in samples(&lines, tag, w) {
                let chunks: Vec<u64> = s["chunks_ns"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
                assert_eq!(chunks.len(), 7, "5000 entries in chunks of 777: {s}");
                assert_eq!(chunks.iter().sum::<u64>(), s["ns"].as_u64().unwrap());
            }
            assert!(samples(&whole_lines, tag, w).all(|s| s.get("chunks_ns").is_none()));
        }
    }
}

/// Both engines in one paired run: each engine's units share a process of their own, and
/// every sample of either engine carries its chunks and their major faults (read around
/// each timed chunk, outside its clock, summed over the pass), in samples of one shape:
/// the same fields, but for `harness`, the function order of each engine's worker drawn for
/// its process (under random layouts, the default), one a process. The write's `io` is
/// counted around each chunk by both (the C paired worker exports harness/iocount.c's
/// functions, so each library it loads calls them): under full sync, without MDB_WRITEMAP
/// (whose writes go through the map, 0 bytes), the same syncs, bytes and commits in both.
#[test]
fn rust_and_c_units_each_run_in_paired_rounds() {
    let flags = ["--engine", "rust,c", "--tags", "0.9.18,0.9.33", "--entries", "2000", "--chunk", "500"];
    let (rows, lines, _d) = run(&[&flags[..], &["--rounds", "1", "--sync", "sync", "--no-writemap"]].concat(), &[]);
    assert!(rows.iter().all(|r| r["n"] == 1 && r["failures"] == 0), "{rows:?}");
    let of = |engine: &'static str| lines.iter().filter(move |l| l["type"] == "sample" && l["engine"] == engine);
    for engine in ["rust", "c"] {
        let of: Vec<&Value> = of(engine).collect();
        assert_eq!(of.len(), 12, "two tags, six workloads on {engine}");
        assert!(of.iter().all(|s| s["chunks_ns"].as_array().is_some_and(|c| c.len() == 4)), "{engine}: {of:?}");
        assert!(of.iter().all(|s| s["major_faults"].is_u64()), "{engine}: {of:?}");
        let orders: std::collections::BTreeSet<u64> = of.iter().filter_map(|s| s["harness"].as_u64()).collect();
        let drawn = orders.len() == 1 && orders.iter().all(|n| (1..=lmdb_regress::harness::ORDERS as u64).contains(n));
        assert!(drawn && of.iter().all(|s| s["harness"].is_u64()), "{engine}: one order for its process: {of:?}");
    }
    let fields = |s: &Value| {
        let named = s.as_object().unwrap().keys().filter(|k| !["engine", "harness"].contains(&k.as_str()));
        (s["tag"].clone(), s["workload"].clone(), named.cloned().collect::<Vec<String>>())
    };
    let (mut rust, mut c): (Vec<_>, Vec<_>) = (of("rust").map(fields).collect(), of("c").map(fields).collect());
    rust.sort_by_key(|f| format!("{f:?}"));
    c.sort_by_key(|f| format!("{f:?}"));
    assert_eq!(rust, c, "the two engines' samples differ in shape");
    let writes = |engine| {
        let mut io: Vec<(Value, Value)> =
            of(engine).filter(|s| s["workload"] == "write").map(|s| (s["tag"].clone(), s["io"].clone())).collect();
        io.sort_by_key(|t| t.0.to_string());
        io
    };
    let rust_io = writes("rust");
    assert_eq!(rust_io.len(), 2, "{rust_io:?}");
    // One transaction a pass, synced twice (its data's fdatasync, its meta page's O_DSYNC
    // write), its pages written by pwrite.
    assert!(rust_io.iter().all(|(_, io)| io["commits"] == 1 && io["syncs"] == 2 && io["bytes"].as_u64() > Some(0)));
    assert_eq!(writes("c"), rust_io, "the engines count a write's I/O differently");
}

/// `--reference-layouts 3`: each paired process holds three layouts of the baseline, in
/// both engines, each its own sample of every workload with a layout of its own, and the
/// report compares the other tag with their mean; a run that cannot hold them is refused.
#[test]
fn a_process_holds_the_layouts_of_the_reference_it_is_asked_for() {
    let flags = ["--engine", "rust,c", "--tags", "0.9.18,0.9.33", "--entries", "2000", "--chunk", "500"];
    let (rows, lines, dir) = run(&[&flags[..], &["--rounds", "2", "--reference-layouts", "3"]].concat(), &[]);
    assert_eq!(lines[0]["plan"]["reference_layouts"], serde_json::json!({ "exactly": 3 }));
    for engine in ["rust", "c"] {
        for w in WORKLOADS {
            for round in 0..2 {
                let of = |tag: &'static str| {
                    let in_round = |s: &&Value| s["engine"] == engine && s["round"] == round;
                    samples(&lines, tag, w).filter(in_round).cloned().collect::<Vec<Value>>()
                };
                let (reference, other) = (of("LMDB_0.9.18"), of("LMDB_0.9.33"));
                let layouts: std::collections::BTreeSet<u64> =
                    reference.iter().filter_map(|s| s["layout"].as_u64()).collect();
                assert_eq!((reference.len(), layouts.len(), other.len()), (3, 3, 1), "{engine} {w} {round}");
                let harness: std::collections::BTreeSet<String> =
                    reference.iter().chain(&other).map(|s| s["harness"].to_string()).collect();
                assert_eq!(harness.len(), 1, "one order of the worker for the whole process: {reference:?}");
            }
        }
    }
    assert!(rows.iter().all(|r| r["failures"] == 0), "{rows:?}");
    let report = run_ok(lmdb_regress().args(["report", "--format", "json"]).arg(dir.path().join("run.jsonl")));
    let sections = json(&report)["sections"].as_array().unwrap().clone();
    assert!(sections.iter().all(|s| s["vs_baseline"].as_array().unwrap().len() == 2), "{sections:?}");
    let text = stdout(&run_ok(lmdb_regress().args(["report", "--format", "text"]).arg(dir.path().join("run.jsonl"))));
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("The reference ran in up to 3 layouts in one paired process on readKey"), "{text}");
    let refused = crate::safety::fails(
        lmdb_regress()
            .args(["run", "--tags", "0.9.18,0.9.33", "--pairing", "process"])
            .args(["--reference-layouts", "2"]),
    );
    assert!(refused.contains("--reference-layouts 2 needs paired processes"), "{refused}");
    let refused = crate::safety::fails(lmdb_regress().args([
        "run",
        "--tags",
        "0.9.18,0.9.33",
        "--adaptive",
        "off",
        "--reference-layouts",
        "auto",
    ]));
    assert!(refused.contains("--reference-layouts auto needs rounds judged as they go"), "{refused}");
}

/// `--pairing process` is the design of every run before chunks: one worker process per
/// unit and round, its pass whole, and a plan that says so. Its passes' major faults are
/// read; under `--memory-limit` (where the host can hold a process to one) each unit's
/// label and the header record the limit, and where it cannot the run is refused, saying why.
/// `--readahead on,off` is an axis: each unit both ways, labelled and declared by it.
#[test]
fn pairing_process_keeps_one_worker_per_unit() {
    use lmdb_regress::runner::memlimit::{Controller, Limited, Refusal};
    let args =
        ["--tags", "0.9.33", "--readahead", "on,off", "--entries", "2000", "--rounds", "2", "--pairing", "process"];
    let held = Controller::find().and_then(|c| Limited::new(&c, 1 << 30)).map(drop);
    let limit: &[&str] = if held.is_ok() { &["--memory-limit", "1G"] } else { &[] };
    let (rows, lines, d) = run(&[&args[..], limit].concat(), &[]);
    let plan = &lines[0]["plan"];
    assert_eq!((&plan["pairing"], &plan["chunk"]), (&Value::from("process"), &Value::Null), "{plan}");
    let samples: Vec<&Value> = lines.iter().filter(|l| l["type"] == "sample").collect();
    assert!(samples.iter().all(|s| s.get("chunks_ns").is_none() && s["major_faults"].is_u64()), "{samples:?}");
    assert!(rows.iter().all(|r| r["n"] == 2 && r["failures"] == 0), "{rows:?}");
    let units = lines[0]["units"].as_array().unwrap();
    let readahead: Vec<&str> = units.iter().filter_map(|u| u["readahead"].as_str()).collect();
    assert_eq!(readahead, ["on", "off"], "{units:?}");
    for s in &samples {
        let tag = s["tag"].as_str().unwrap();
        assert!(tag.ends_with(" [readahead on]") || tag.ends_with(" [readahead off]"), "{tag}");
    }
    let refused = |envs: &[(&str, &str)]| {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", "0.9.33", "--memory-limit", "1G", "--out"]).arg(d.path().join("refused.jsonl"));
        let out = c.envs(envs.iter().copied()).output().unwrap();
        assert!(!out.status.success() && !d.path().join("refused.jsonl").exists());
        stderr(&out)
    };
    match held {
        Ok(()) => {
            let limited: Vec<&Value> =
                units.iter().filter(|u| u["label"].as_str().unwrap().contains("limit")).collect();
            assert!(limited.len() == 2 && limited.iter().all(|u| u["memory_limit"] == 1u64 << 30), "{units:?}");
            assert!(samples.iter().all(|s| s["tag"].as_str().unwrap().contains(" [1G limit] ")), "{samples:?}");
        }
        Err(Refusal::NoController) => assert!(refused(&[]).contains("needs a cgroup memory controller")),
        Err(Refusal::NotPermitted { .. }) => assert!(refused(&[]).contains("may not make a cgroup")),
        Err(e) => assert!(refused(&[]).contains("--memory-limit"), "{e}"),
    }
    let plain = tempfile::tempdir().unwrap();
    let why = refused(&[("LMDB_REGRESS_CGROUP", plain.path().to_str().unwrap())]);
    assert!(why.contains("is not a folder of a mounted cgroup memory controller"), "{why}");
    // The presets cannot be chunked, and say so when chunks are asked for.
    let out = lmdb_regress()
        .args(["run", "--preset", "open-get", "--pairing", "chunks", "--tags", "0.9.18", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("x.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--pairing chunks: a preset's passes are not split into chunks"), "{}", stderr(&out));
}

/// `--memory-limit` on both engines (`--engine rust,c`): each worker, the Rust engine's or
/// the C twin, runs in a cgroup of the limit its label names, and each read pass starts with
/// the read database evicted and read through to what the limit holds; a sequential walk of
/// a database larger than the limit then reads it from the device (readahead off: a major
/// fault a page), about equally on both. Where the host cannot hold a process to a limit,
/// both engines are refused in the same words.
#[test]
fn both_engines_run_under_a_memory_limit_or_are_refused_alike() {
    use lmdb_regress::runner::memlimit::{Controller, Limited};
    let d = tempfile::tempdir().unwrap();
    let refused = |engine: &str, envs: &[(&str, &str)]| {
        let mut c = lmdb_regress();
        c.args(["run", "--engine", engine, "--tags", "0.9.33", "--memory-limit", "8M", "--out"]);
        let out = c.arg(d.path().join("refused.jsonl")).envs(envs.iter().copied()).output().unwrap();
        assert!(!out.status.success() && !d.path().join("refused.jsonl").exists(), "{engine}: {}", stderr(&out));
        stderr(&out)
    };
    let plain = tempfile::tempdir().unwrap();
    let not_a_cgroup = [("LMDB_REGRESS_CGROUP", plain.path().to_str().unwrap())];
    let why = refused("c", &not_a_cgroup);
    assert!(why.contains("is not a folder of a mounted cgroup memory controller"), "{why}");
    assert_eq!(why, refused("rust", &not_a_cgroup), "the engines are refused in other words");
    if let Err(e) = Controller::find().and_then(|c| Limited::new(&c, 8 << 20)) {
        // No limit can be held here: the refusal is the host's, the same on both engines.
        return assert_eq!(refused("c", &[]), refused("rust", &[]), "{e}");
    }
    // 6,000 values of 2,000 bytes: about 12 MB, half again what 8 MiB holds.
    let args = ["--engine", "rust,c", "--tags", "0.9.33", "--memory-limit", "8M", "--readahead", "off"];
    let data = ["--workloads", "readSeq", "--entries", "6000", "--value-size", "2000", "--rounds", "1"];
    let (rows, lines, _e) = run(&[&args[..], &data, &["--layouts", "fixed", "--no-coverage"]].concat(), &[]);
    assert!(rows.iter().all(|r| r["n"] == 1 && r["failures"] == 0), "{rows:?}");
    let units = lines[0]["units"].as_array().unwrap();
    let limited: Vec<&Value> = units.iter().filter(|u| u["label"] == "LMDB_0.9.33 [8M limit]").collect();
    assert!(limited.len() == 1 && limited[0]["memory_limit"] == 8u64 << 20, "{units:?}");
    let faults = |engine: &str| {
        let s: Vec<&Value> = lines.iter().filter(|l| l["type"] == "sample" && l["engine"] == engine).collect();
        assert!(s.len() == 1 && s[0]["tag"] == "LMDB_0.9.33 [8M limit]", "{engine}: {s:?}");
        s[0]["major_faults"].as_u64().unwrap()
    };
    let (rust, c) = (faults("rust"), faults("c"));
    assert!(rust > 0 && c > 0, "a walk of 12 MB under 8 MiB read nothing from the device: rust {rust}, c {c}");
    assert!(c.abs_diff(rust) * 20 <= rust, "major faults: rust {rust}, c {c}");
}

/// `--key-sample N`: readKey's passes get the first N keys of the random write order, as the
/// configuration records and the report says, each pass's ops N (figures per get are over
/// N); its timed region runs a quarter of a whole pass's instructions at a quarter of the
/// keys. It is refused where it would not be a sample, or where nothing would take it.
#[test]
fn a_key_sample_times_its_gets_and_says_so() {
    let args = ["--tags", "0.9.33", "--workloads", "readKey,readSeq", "--order", "random", "--entries", "2000"];
    let (rows, lines, d) = run(&[&args[..], &["--key-sample", "500", "--rounds", "1", "--no-coverage"]].concat(), &[]);
    assert_eq!(lines[0]["config"]["key_sample"], 500, "{}", lines[0]["config"]);
    assert_eq!(lines[0]["plan"]["pairing"], "process", "chunks would split every pass alike");
    assert!(rows.iter().all(|r| r["n"] == 1 && r["failures"] == 0), "{rows:?}");
    assert!(samples(&lines, "LMDB_0.9.33", "readKey").all(|s| s["figures"]["ops"] == 500));
    assert!(samples(&lines, "LMDB_0.9.33", "readSeq").all(|s| s["figures"]["ops"].is_null()));
    let report = run_ok(lmdb_regress().arg("report").arg(d.path().join("run.jsonl")));
    assert!(stdout(&report).contains("readKey gets 500 keys a pass, the first of the write order"));
    // The timed region's instructions, by callgrind, at 500 gets and at every key.
    let (lib, sha, version) = built("0.9.33");
    let db = d.path().join("db");
    let os = |s: &str| std::ffi::OsString::from(s);
    let mut worker = vec![os("worker"), os("prepare"), os("--library"), lib.clone().into(), os("--library-sha256")];
    worker.extend([os(&sha), os("--library-version"), os(&version), os("--dir"), db.clone().into()]);
    worker.extend(["--workloads", "readKey", "--entries", "2000", "--order", "random"].map(os));
    run_ok(Command::new(BIN).args(&worker).env("LMDB_REGRESS_CACHE", test_cache()));
    worker[1] = os("run");
    let every = counted(&worker) as f64;
    let sample = counted(&[&worker[..], &[os("--key-sample"), os("500")]].concat()) as f64;
    assert!((0.2..0.3).contains(&(sample / every)), "{sample} of {every}");
    let refused = |extra: &[&str], why: &str| {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", "0.9.33", "--entries", "2000", "--out"]).arg(d.path().join("refused.jsonl"));
        let out = c.args(extra).output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(why), "{extra:?}: {}", stderr(&out));
    };
    let random = ["--order", "random", "--key-sample"];
    refused(&[&random[..], &["0"]].concat(), "--key-sample must be at least 1 get");
    refused(&[&random[..], &["2001"]].concat(), "--key-sample 2001 is more than the 2000 entries");
    refused(&["--key-sample", "500"], "give --order random");
    refused(&[&random[..], &["500", "--workloads", "readSeq"]].concat(), "add readKey to --workloads");
    refused(&[&random[..], &["500", "--engine", "rust,c"]].concat(), "--key-sample runs on the rust engine only");
    refused(&[&random[..], &["500", "--pairing", "chunks"]].concat(), "give --pairing process");
}

/// What lets units under several memory limits and readahead settings share one read
/// database (`RunSpec::db_key`): the writer leaves the same bytes whatever they are, since
/// a limit holds only the reader's process and MDB_NORDAHEAD is only advice on the map.
#[test]
fn a_read_database_is_the_same_bytes_with_readahead_on_and_off() {
    let (lib, sha, version) = built("0.9.33");
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, extra: &[&str]| {
        let dir = d.path().join(name);
        let mut c = lmdb_regress();
        c.args(["worker", "prepare", "--library"]).arg(&lib);
        c.args(["--library-sha256", &sha, "--library-version", &version, "--dir"]).arg(&dir);
        c.args(["--workloads", "readKey", "--entries", "3000", "--order", "random"]).args(extra);
        assert!(stdout(&run_ok(&mut c)).contains("\"prepared\":true"));
        std::fs::read(dir.join("data.mdb")).unwrap()
    };
    let plain = write("plain", &[]);
    assert_eq!(plain, write("nordahead", &["--readahead=off"]), "MDB_NORDAHEAD changed the file");
    assert_eq!(plain, write("limited", &["--memory-limit=256M"]), "a second write differs");
}

/// Major faults on both engines, read the same way: getrusage's `ru_majflt` before each whole
/// pass's clock starts and after it stops, for reads and the write; none in a read of a
/// database each worker faulted in before its clock.
#[test]
fn both_engines_count_each_passs_major_faults() {
    let args = ["--engine", "rust,c", "--pairing", "process", "--tags", "0.9.33", "--workloads", "readKey,write"];
    let (rows, lines, _d) = run(&[&args[..], &["--entries", "1000", "--rounds", "1", "--no-coverage"]].concat(), &[]);
    assert!(rows.iter().all(|r| r["n"] == 1 && r["failures"] == 0), "{rows:?}");
    for engine in ["rust", "c"] {
        let of: Vec<&Value> = lines.iter().filter(|l| l["type"] == "sample" && l["engine"] == engine).collect();
        assert_eq!(of.len(), 2, "{engine}: {of:?}");
        assert!(of.iter().all(|s| s["major_faults"].is_u64()), "{engine}: {of:?}");
        assert!(of.iter().filter(|s| s["workload"] == "readKey").all(|s| s["major_faults"] == 0), "{engine}: {of:?}");
    }
}

/// The built library of `tag`, its SHA-256 and its version text, from its build record.
fn built(tag: &str) -> (PathBuf, String, String) {
    let out = run_ok(lmdb_regress().args(["build", "--tags", tag, "--json"]));
    let rows = json(&out);
    let row = rows.as_array().and_then(|r| r.first()).cloned().unwrap_or(rows);
    let lib = PathBuf::from(row["library"].as_str().unwrap_or_else(|| panic!("no library in {row}")));
    let version = row["builds"][0]["lmdb_version"].as_str().unwrap().to_string();
    (lib.clone(), sha256(&lib), version)
}

fn sha256(p: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

/// A read database of 2,000 entries written by `lib` into `dir`.
fn prepare(lib: &Path, sha: &str, version: &str, dir: &Path) {
    prepare_data(lib, sha, version, dir, &["--entries", "2000"]);
}

/// A read database of the data `data` names (entries, value size), written by `lib` into `dir`.
fn prepare_data(lib: &Path, sha: &str, version: &str, dir: &Path, data: &[&str]) {
    let mut c = lmdb_regress();
    c.args(["worker", "prepare", "--library"])
        .arg(lib)
        .args(["--library-sha256", sha, "--library-version", version, "--dir"])
        .arg(dir);
    c.args(["--workloads", "readKey"]).args(data);
    let out = run_ok(&mut c);
    assert!(stdout(&out).contains("\"prepared\":true"), "{}", stdout(&out));
}

/// Instructions of the timed readKey region under callgrind (every copy of its function:
/// a paired process times its chunks in each by turns), of `args` run by this binary.
fn counted(args: &[std::ffi::OsString]) -> u64 {
    counted_in(Path::new(BIN), "lmdbregress_timed_read_key*", args)
}

/// Instructions inside the functions `function` (a callgrind pattern) names, of `args` run
/// by `program`.
fn counted_in(program: &Path, function: &str, args: &[std::ffi::OsString]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("cg.out");
    let mut c = Command::new("valgrind");
    c.args(["--tool=callgrind", &format!("--toggle-collect={function}")]);
    c.arg(format!("--callgrind-out-file={}", profile.display())).arg(program).args(args);
    c.env("LMDB_REGRESS_CACHE", test_cache());
    run_ok(&mut c);
    let text = std::fs::read_to_string(&profile).unwrap();
    let line = text.lines().find(|l| l.starts_with("summary:") || l.starts_with("totals:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Two labels of one library, side by side in one paired process (each its own private
/// copy), execute exactly the instructions per entry that one whole pass executes in a
/// process of its own: chunks split the work without adding to it, and the copies do not
/// touch each other.
#[test]
fn two_copies_in_one_process_count_as_one_whole_pass_alone() {
    let TwoCopies { work, slots, db1, lib, sha, version } = two_copies();
    let os = |s: &str| std::ffi::OsString::from(s);
    let common = ["--workloads", "readKey", "--entries", "2000"].map(os);
    let mut paired =
        vec![os("paired-worker"), os("--slots"), slots.clone().into(), os("--scratch"), work.path().into()];
    paired.extend([os("--chunk"), os("300"), os("--rotation-seed"), os("1")]);
    paired.extend(common.clone());
    let mut alone =
        vec![os("worker"), os("run"), os("--library"), lib.clone().into(), os("--library-sha256"), os(&sha)];
    alone.extend([os("--library-version"), os(&version)]);
    alone.extend([os("--dir"), db1.clone().into(), os("--scratch"), work.path().into()]);
    alone.extend(common);
    let (two, one) = (counted(&paired) as f64, counted(&alone) as f64);
    same_per_entry(two, one);
}

/// Two slots of one library (0.9.18), each on a read database of its own.
struct TwoCopies {
    work: tempfile::TempDir,
    slots: PathBuf,
    db1: PathBuf,
    lib: PathBuf,
    sha: String,
    version: String,
}

fn two_copies() -> TwoCopies {
    two_copies_running(["readKey", "readKey"])
}

/// [`two_copies`], each slot running the workloads its line names.
fn two_copies_running(workloads: [&str; 2]) -> TwoCopies {
    let (lib, sha, version) = built("0.9.18");
    let work = tempfile::tempdir().unwrap();
    let (db1, db2) = (work.path().join("db1"), work.path().join("db2"));
    prepare(&lib, &sha, &version, &db1);
    prepare(&lib, &sha, &version, &db2);
    let slots = work.path().join("slots.tsv");
    let line = |db: &Path, w: &str| format!("{}\t{sha}\t{version}\t{}\t{w}\n", lib.display(), db.display());
    std::fs::write(&slots, line(&db1, workloads[0]) + &line(&db2, workloads[1])).unwrap();
    TwoCopies { work, slots, db1, lib, sha, version }
}

/// `two` (both copies' count) per entry is `one`'s (a whole pass alone): each chunk adds only
/// its call's few instructions, 7 chunks of 2,000 entries.
fn same_per_entry(two: f64, one: f64) {
    let (per_entry_two, per_entry_one) = (two / 2.0 / 2000.0, one / 2000.0);
    assert!(
        (per_entry_two / per_entry_one - 1.0).abs() < 0.0005,
        "{per_entry_two} vs {per_entry_one} instructions per entry"
    );
}

/// The C paired worker, as a small C run builds it into this test's cache: the one its
/// run file records (a cache may hold workers of older harness sources beside it).
fn c_paired_worker() -> PathBuf {
    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--engine", "c", "--tags", "0.9.18", "--workloads", "write", "--entries", "100", "--rounds", "1"]);
    let file = dir.path().join("run.jsonl");
    run_ok(c.arg("--out").arg(&file));
    let text = std::fs::read_to_string(&file).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let recorded = header["c_paired_worker"]["sha256"].as_str().unwrap().to_string();
    let builds = std::fs::read_dir(test_cache().join("builds")).unwrap();
    builds
        .flatten()
        .map(|e| e.path().join("lmdb-paired-c"))
        .find(|p| p.is_file() && sha256(p) == recorded)
        .expect("the C paired worker is built")
}

/// The same in the C paired worker: two labels of one library (the second a private copy)
/// side by side in chunks execute the instructions per entry of one whole pass of the C
/// worker alone.
#[test]
fn two_copies_in_the_c_paired_worker_count_as_one_whole_pass_alone() {
    let worker = c_paired_worker();
    let TwoCopies { work, slots, db1, lib, sha, version } = two_copies();
    let os = |s: &str| std::ffi::OsString::from(s);
    let common = ["--workloads", "readKey", "--entries", "2000", "--map-size", "100000000"].map(os);
    let mut paired = vec![os("paired"), os("--slots"), slots.clone().into(), os("--scratch"), work.path().into()];
    paired.extend([os("--chunk"), os("300"), os("--rotation-seed"), os("1")]);
    paired.extend(common.clone());
    let mut alone = vec![os("run"), os("--library"), lib.clone().into(), os("--library-sha256"), os(&sha)];
    alone.extend([os("--library-version"), os(&version), os("--dir"), db1.clone().into()]);
    alone.extend([os("--scratch"), work.path().into()]);
    alone.extend(common);
    let count = |args: &[std::ffi::OsString]| counted_in(&worker, "timed_read_key*", args) as f64;
    let (two, one) = (count(&paired), count(&alone));
    assert!(one > 0.0, "callgrind counted the whole pass");
    same_per_entry(two, one);
}

/// A cold read in chunks, on both paired workers: each worker, held to 8 MiB (the runner's
/// cgroup code), faults in a 12 MB read database evicted before it starts, which pushes its
/// first pages out again, so a sequential walk (readahead off) reads them from the device;
/// each pass's major faults are its timed chunks', neither engine's 0, and about equal.
#[test]
fn both_paired_workers_count_a_cold_reads_major_faults_chunk_by_chunk() {
    use lmdb_regress::runner::memlimit::{Controller, Limited};
    let Ok(limited) = Controller::find().and_then(|c| Limited::new(&c, 8 << 20)) else {
        // both_engines_run_under_a_memory_limit_or_are_refused_alike checks the refusal.
        return;
    };
    let (lib, sha, version) = built("0.9.33");
    let work = tempfile::tempdir().unwrap();
    let (db, slots) = (work.path().join("db"), work.path().join("slots.tsv"));
    let data = ["--entries", "6000", "--value-size", "2000", "--map-size", "100000000", "--readahead=off"];
    prepare_data(&lib, &sha, &version, &db, &data);
    std::fs::write(&slots, format!("{}\t{sha}\t{version}\t{}\treadSeq\n", lib.display(), db.display())).unwrap();
    let mut args: Vec<std::ffi::OsString> = vec!["--slots".into(), slots.into(), "--scratch".into()];
    args.extend([work.path().into(), "--workloads".into(), "readSeq".into(), "--chunk".into(), "500".into()]);
    args.extend(["--rotation-seed", "1"].iter().chain(&data).map(Into::into));
    let faults = |program: &Path, action: &str| {
        // Pages another process cached would be read without being charged to the limit.
        lmdb_regress::workload::presets::pagecache::evict(&db.join("data.mdb")).unwrap();
        let mut c = Command::new(program);
        c.arg(action).args(&args).env("LMDB_REGRESS_CACHE", test_cache());
        limited.confine(&mut c);
        let out = run_ok(&mut c);
        let line = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["workload"] == "readSeq");
        let line = line.unwrap_or_else(|| panic!("{action}: {}", stdout(&out)));
        assert_eq!(line["chunks_ns"][0].as_array().map(Vec::len), Some(12), "{line}");
        line["major_faults"][0].as_u64().unwrap_or_else(|| panic!("{line}"))
    };
    let (rust, c) = (faults(Path::new(BIN), "paired-worker"), faults(&c_paired_worker(), "paired"));
    assert!(rust > 0 && c > 0, "a cold walk of 12 MB under 8 MiB took no major fault: rust {rust}, c {c}");
    assert!(c.abs_diff(rust) * 20 <= rust, "major faults: rust {rust}, c {c}");
}

/// Two layouts of each unit in one process: on readKey and readRev, whose chunks stand
/// alone, each is a sample of its own, timing every other chunk (5 chunks of 1,000: 3 and
/// 2, which its operations say; a walk that entered a chunk anywhere but where it stood
/// visits other entries, and fails); a checksum's walk and the write run in the unit's
/// first layout alone, every chunk timed (the checksum verified as ever), as the report
/// says; one layout per process, the C twin, and more layouts than chunks are refused
/// before anything is built.
#[test]
fn several_layouts_of_a_unit_share_its_chunks_in_one_process() {
    let args = ["--tags", "0.9.18,0.9.33", "--entries", "5000", "--chunk", "1000", "--rounds", "1"];
    let workloads = ["--workloads", "readKey,readRev,readXxh64,write", "--layouts-per-process", "2"];
    let (rows, lines, d) = run(&[&args[..], &workloads].concat(), &[]);
    assert_eq!(lines[0]["plan"]["layouts_per_process"], 2);
    // The report says how the layouts shared the chunks, and why two or three chunks a
    // layout tell no layout spread.
    let text = stdout(&run_ok(lmdb_regress().arg("report").arg(d.path().join("run.jsonl"))));
    assert!(text.contains("Every unit ran in up to 2 layouts in one paired process on readKey, readRev"), "{text}");
    assert!(text.contains("Layout spread: not measured (each layout timed fewer than four chunks"), "{text}");
    for row in &rows {
        // A sample a layout where chunks stand alone, one a unit elsewhere.
        let n = if row["workload"] == "readKey" || row["workload"] == "readRev" { 2 } else { 1 };
        assert_eq!((&row["n"], &row["failures"]), (&Value::from(n), &Value::from(0)), "{row}");
    }
    let shared = &[(Some(2000), 2), (Some(3000), 3)][..];
    for tag in ["LMDB_0.9.18", "LMDB_0.9.33"] {
        for (w, want) in
            [("readKey", shared), ("readRev", shared), ("readXxh64", &[(None, 5)]), ("write", &[(None, 5)])]
        {
            let mut got: Vec<(Option<u64>, usize)> = samples(&lines, tag, w)
                .map(|s| (s["figures"]["ops"].as_u64(), s["chunks_ns"].as_array().unwrap().len()))
                .collect();
            got.sort();
            assert_eq!(got, want, "{tag} {w}");
        }
        let layouts: std::collections::BTreeSet<u64> =
            samples(&lines, tag, "readKey").map(|s| s["layout"].as_u64().unwrap()).collect();
        assert_eq!(layouts.len(), 2, "a layout of its own each");
    }
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--entries", "5000", "--chunk", "1000", "--layouts-per-process", "8"]);
    let out = c.output().unwrap();
    assert!(!out.status.success() && stderr(&out).contains("needs 8 chunks a pass"), "{}", stderr(&out));
    for (more, needs) in [(["--layouts", "fixed"], "random layouts"), (["--engine", "c"], "the rust engine alone")] {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", "0.9.18,0.9.33", "--layouts-per-process", "2"]).args(more);
        let out = c.output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(needs), "{}", stderr(&out));
    }
}

/// Not given, --layouts-per-process is 16 where several layouts can run, at most one a
/// chunk of a pass (three here), and 1 where no workload's chunks stand alone or the C
/// twin runs beside.
#[test]
fn several_layouts_a_process_are_the_default_where_they_can_run() {
    let args = ["--tags", "0.9.18,0.9.33", "--entries", "3000", "--chunk", "1000", "--rounds", "1"];
    for (more, want) in [
        (&["--workloads", "readKey,readCrc"][..], 3),
        (&["--workloads", "readCrc,write"][..], 1),
        (&["--workloads", "readKey", "--engine", "rust,c"][..], 1),
    ] {
        let (_, lines, _d) = run(&[&args[..], more].concat(), &[]);
        // The record leaves out a plan of one layout.
        assert_eq!(lines[0]["plan"]["layouts_per_process"].as_u64().unwrap_or(1), want, "{more:?}");
    }
}

/// A slot runs only the workloads its line names (an adaptive round leaves a unit out of the
/// workloads whose comparison is decided), in the Rust paired worker and in the C twin's.
#[test]
fn a_slot_runs_only_the_workloads_its_line_names() {
    let TwoCopies { work, slots, .. } = two_copies_running(["write", "readKey,write"]);
    let os = |s: &str| std::ffi::OsString::from(s);
    let mut args = vec![os("--slots"), slots.clone().into(), os("--scratch"), work.path().into()];
    args.extend(
        ["--chunk", "500", "--rotation-seed", "1", "--workloads", "readKey,write", "--entries", "2000"].map(os),
    );
    args.extend(["--map-size", "100000000"].map(os));
    let ran = |out: &std::process::Output| -> Vec<(u64, String)> {
        let lines = stdout(out);
        let parsed = lines.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok());
        let mut got: Vec<(u64, String)> = parsed
            .filter(|v| v["samples_ns"].as_array().is_some_and(|s| !s.is_empty()))
            .map(|v| (v["slot"].as_u64().unwrap(), v["workload"].as_str().unwrap().to_string()))
            .collect();
        got.sort();
        got
    };
    let want: Vec<(u64, String)> = [(0, "write"), (1, "readKey"), (1, "write")].map(|(k, w)| (k, w.into())).to_vec();
    let rust = run_ok(lmdb_regress().arg("paired-worker").args(&args));
    assert_eq!(ran(&rust), want, "{}", stdout(&rust));
    let c = run_ok(Command::new(c_paired_worker()).arg("paired").args(&args));
    assert_eq!(ran(&c), want, "{}", stdout(&c));
}

/// A unit of three layouts beside a unit of one (an adaptive round gives further layouts
/// only to the units still measuring readKey): each of the three times a third of readKey's
/// chunks, the unit of one times all of them, and each unit's first layout writes.
#[test]
fn a_process_holds_a_unit_of_three_layouts_beside_a_unit_of_one() {
    let (lib, sha, version) = built("0.9.18");
    let work = tempfile::tempdir().unwrap();
    let dbs: Vec<PathBuf> = (0..4).map(|i| work.path().join(format!("db{i}"))).collect();
    dbs.iter().for_each(|db| prepare(&lib, &sha, &version, db));
    let line = |k: usize, w: &str, layout: u32| {
        let place = if layout > 0 { format!("\t-\t{layout}") } else { String::new() };
        format!("{}\t{sha}\t{version}\t{}\t{w}{place}\n", lib.display(), dbs[k].display())
    };
    let slots = work.path().join("slots.tsv");
    let text = [line(0, "readKey,write", 0), line(1, "readKey", 1), line(2, "readKey", 2), line(3, "readKey,write", 0)];
    std::fs::write(&slots, text.concat()).unwrap();
    let mut c = lmdb_regress();
    c.arg("paired-worker").arg("--slots").arg(&slots).arg("--scratch").arg(work.path());
    c.args(["--chunk", "250", "--rotation-seed", "1", "--workloads", "readKey,write", "--entries", "2000"]);
    let out = run_ok(c.args(["--map-size", "100000000"]));
    let mut got: Vec<(u64, String, usize)> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["workload"].is_string())
        .map(|v| {
            assert!(v["error"].is_null(), "{v}");
            let chunks = v["chunks_ns"][0].as_array().map_or(0, |c| c.len());
            (v["slot"].as_u64().unwrap(), v["workload"].as_str().unwrap().to_string(), chunks)
        })
        .collect();
    got.sort();
    let want =
        [(0, "readKey", 3), (0, "write", 8), (1, "readKey", 3), (2, "readKey", 2), (3, "readKey", 8), (3, "write", 8)];
    assert_eq!(got, want.map(|(k, w, n)| (k, w.to_string(), n)), "{}", stdout(&out));
}

/// The verified sources of 0.9.33 with mdb_cursor_put made to crash the process while it
/// writes anything but a read database (whose folder is `db`), when CRASH_ME is set.
fn crashing_sources(dir: &Path) -> PathBuf {
    let src = source_dir("0.9.33");
    let out = dir.join("crashing");
    std::fs::create_dir_all(&out).unwrap();
    for f in FILES {
        std::fs::copy(src.join(f), out.join(f)).unwrap();
    }
    let mdb = std::fs::read_to_string(out.join("mdb.c")).unwrap();
    let head = "mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    unsigned int flags)\n{\n";
    let at = mdb.find(head).expect("mdb_cursor_put's definition") + head.len();
    let crash =
        "\tif (getenv(\"CRASH_ME\") && !strstr(mc->mc_txn->mt_env->me_path, \"/db\")) *(volatile int *)0 = 0;\n";
    std::fs::write(out.join("mdb.c"), format!("{}{crash}{}", &mdb[..at], &mdb[at..])).unwrap();
    out
}

/// A unit whose library crashes in the paired process: the process's round is lost for
/// every unit in it, the failure names the unit that crashed, the samples written before
/// the crash stay, and the other unit goes on in the next processes without it.
#[test]
fn a_crash_costs_its_process_round_and_names_the_unit() {
    crash_costs_its_process_round("rust");
}

/// As above, in the C twin's paired worker: its signal handler names the slot as the Rust
/// worker's does.
#[test]
fn a_crash_in_the_c_paired_worker_costs_its_process_round() {
    crash_costs_its_process_round("c");
}

fn crash_costs_its_process_round(engine: &str) {
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repo");
    let ids = make_repo(&repo, &[("good", &source_dir("0.9.33")), ("crashing", &crashing_sources(work.path()))]);
    let tags = format!("{},{}", &ids[0][..10], &ids[1][..10]);
    // Unoptimised builds: the units' machine code is no part of what is checked.
    let (git, cflags) = (["--git", repo.to_str().unwrap(), "--engine", engine], unoptimised_cflags());
    let rounds = ["--tags", &tags, "--entries", "3000", "--rounds", "3", "--layouts", "fixed", "--cflags", &cflags];
    let args = [&git[..], &rounds].concat();
    let (_, lines, _d) = run(&args, &[("CRASH_ME", "1")]);
    assert!(lines.iter().filter(|l| l["type"] == "sample").all(|s| s["engine"] == engine));
    let label = |id: &str| {
        lines[0]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["commit"].as_str().is_some_and(|c| c.starts_with(&id[..10])))
            .map(|t| t["tag"].as_str().unwrap().to_string())
            .unwrap()
    };
    let (good, bad) = (label(&ids[0]), label(&ids[1]));
    let failures: Vec<&Value> = lines.iter().filter(|l| l["type"] == "failure").collect();
    let crashed =
        failures.iter().find(|f| f["tag"] == bad.as_str() && f["workload"] == "write").expect("the crash is recorded");
    assert!(crashed["error"].as_str().unwrap().contains("it crashed the paired process"), "{crashed}");
    assert_eq!(crashed["round"], 0);
    let lost: Vec<&&Value> = failures.iter().filter(|f| f["tag"] == good.as_str()).collect();
    assert!(!lost.is_empty() && lost.iter().all(|f| f["round"] == 0), "{lost:?}");
    assert!(lost.iter().all(|f| f["error"].as_str().unwrap().contains(&format!("when {bad} crashed it"))), "{lost:?}");
    // Round 0's samples written before the crash are kept; rounds 1 and 2 measure the good
    // unit alone, every workload of it.
    for w in WORKLOADS {
        let rounds: Vec<u64> = samples(&lines, &good, w).map(|s| s["round"].as_u64().unwrap()).collect();
        let lost_here = lost.iter().any(|f| f["workload"] == w);
        assert_eq!(rounds, if lost_here { vec![1, 2] } else { vec![0, 1, 2] }, "{w}");
        assert!(samples(&lines, &bad, w).all(|s| s["round"] == 0), "{bad} is left out after its crash");
    }
}

/// The run file's header names the C paired worker its C units ran in, and a resumed run
/// refuses to go on in another one, before anything is appended.
#[test]
fn the_c_paired_worker_is_recorded_and_a_resume_in_another_is_refused() {
    let (_, lines, dir) = run(&["--engine", "c", "--tags", "0.9.18", "--workloads", "write", "--entries", "200"], &[]);
    let worker = &lines[0]["c_paired_worker"];
    assert_eq!(worker["sha256"].as_str(), Some(sha256(&c_paired_worker()).as_str()), "{worker}");
    let forged: Vec<String> = lines
        .iter()
        .filter(|l| l["type"] != "end")
        .map(|l| {
            let mut l = l.clone();
            if l.get("c_paired_worker").is_some() {
                l["c_paired_worker"]["sha256"] = Value::from("0".repeat(64));
            }
            l.to_string()
        })
        .collect();
    let file = dir.path().join("run.jsonl");
    std::fs::write(&file, forged.join("\n") + "\n").unwrap();
    let before = std::fs::read(&file).unwrap();
    let out = lmdb_regress().args(["run", "--resume"]).arg(&file).output().unwrap();
    assert!(!out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("cannot be resumed") && said.contains("C paired worker SHA-256"), "{said}");
    assert!(said.contains(&"0".repeat(64)), "the recorded hash is named: {said}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing appended");
}

/// A walk entered at a chunk by a get of the key the chunk before it ends on visits what a
/// walk through every chunk visits there, forward and backward, the last chunk to the end,
/// whatever the cursor did before (the chunks entered last to first on one cursor).
#[test]
fn a_walk_entered_at_a_chunk_visits_what_a_whole_walk_visits_there() {
    use lmdb_regress::ffi::bindings::{MDB_NOSYNC, MDB_RDONLY};
    use lmdb_regress::workload::concurrent;
    use lmdb_regress::workload::lmdb::{begin_cursor, end_cursor, val, Api, MDB_val, Walk, BACKWARD, FORWARD};
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let env = concurrent::fill(&api, tmp.path(), 1000, MDB_NOSYNC).unwrap();
    let get = api.mdb_cursor_get;
    // SAFETY: an MDB_val LMDB handed back, read inside its transaction.
    let bytes = |k: &MDB_val| unsafe { std::slice::from_raw_parts(k.mv_data as *const u8, k.mv_size).to_vec() };
    for way in [FORWARD, BACKWARD] {
        // SAFETY: read transactions and cursors of an open environment, each closed below;
        // every key entered after is one the walk found.
        unsafe {
            let tc = begin_cursor(&api, &env, MDB_RDONLY).unwrap();
            let (mut whole, mut chunks) = (Walk::default(), Vec::new());
            while !whole.done {
                let mut keys = Vec::new();
                whole.next(get, tc.1, way, 300, "walk", |k, _| Ok(keys.push(bytes(k)))).unwrap();
                chunks.extend(Some(keys).filter(|k| !k.is_empty()));
            }
            end_cursor(&api, tc, false, Ok(())).unwrap();
            assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [300, 300, 300, 100]);
            let tc = begin_cursor(&api, &env, MDB_RDONLY).unwrap();
            for i in (0..chunks.len()).rev() {
                let before: Option<Vec<u8>> = i.checked_sub(1).map(|b| chunks[b].last().unwrap().clone());
                let mut walk = Walk::default();
                walk.enter(get, tc.1, before.as_deref().map(val)).unwrap();
                let mut keys = Vec::new();
                let n = if i + 1 == chunks.len() { usize::MAX } else { 300 };
                walk.next(get, tc.1, way, n, "walk", |k, _| Ok(keys.push(bytes(k)))).unwrap();
                assert_eq!(keys, chunks[i], "chunk {i}");
                assert_eq!(walk.done, i + 1 == chunks.len(), "chunk {i}");
            }
            end_cursor(&api, tc, false, Ok(())).unwrap();
        }
    }
}

/// A further layout's fault-in maps every page its chunks read, so that running them
/// faults no page in: the pages of the data file present in this process's page tables
/// (/proc/self/pagemap) are the same before the chunks run and after. Data written in key
/// order, whose chunks lie on runs of pages mapped a run at a time, maps far less than the
/// whole file; data written at random is got key by key.
#[test]
fn a_further_layouts_chunks_fault_no_page_in() {
    use lmdb_regress::workload::lmdb::{Api, Env};
    use lmdb_regress::workload::pass::{Chunks, Pass};
    use lmdb_regress::workload::{native, Dataset, Order};
    let api = Api::load(&common::library("0.9.33")).unwrap();
    for order in [Order::Seq, Order::Random] {
        let cfg = WorkloadConfig { entries: 40_000, order, ..WorkloadConfig::default() };
        let data = Dataset::generate(&cfg);
        let tmp = tempfile::tempdir().unwrap();
        native::prepare(&api, tmp.path(), &cfg, &data).unwrap();
        let file = tmp.path().join("data.mdb");
        let (chunks, mine) = (Chunks::of(5000, data.len()), [1, 2, 6]);
        for w in [Workload::ReadKey, Workload::ReadSeq, Workload::ReadRev] {
            let env = Env::open(&api, tmp.path(), &native::env_options(&cfg)).unwrap();
            native::fault_in_chunks(&api, &env, (&cfg, &data, w), mine.iter().map(|&i| chunks.range(i))).unwrap();
            let mapped = present_pages(&file);
            let mut pass = Pass::read(&api, &env, w, &data, data.len()).unwrap();
            for i in mine {
                pass.enter(&chunks, i).unwrap();
                pass.chunk(&chunks, i, 0).unwrap();
            }
            pass.finish().unwrap();
            assert_eq!(present_pages(&file), mapped, "{order:?} {w}: the chunks faulted pages in");
            let used = env.used_bytes().unwrap() / 4096;
            if order == Order::Seq {
                assert!((mapped.len() as u64) < used / 2, "{w}: {} of {used} pages mapped", mapped.len());
            }
        }
    }
}

/// The pages of `file`'s one mapping in this process that are present in its page tables.
fn present_pages(file: &Path) -> Vec<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let file = std::fs::canonicalize(file).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let lines: Vec<&str> = maps.lines().filter(|l| l.ends_with(&*file.to_string_lossy())).collect();
    let [line] = lines[..] else { panic!("{} is mapped {} times", file.display(), lines.len()) };
    let (from, to) = line.split_whitespace().next().unwrap().split_once('-').unwrap();
    let (from, to) = (u64::from_str_radix(from, 16).unwrap() / 4096, u64::from_str_radix(to, 16).unwrap() / 4096);
    let mut entries = vec![0u8; ((to - from) * 8) as usize];
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
    pagemap.seek(SeekFrom::Start(from * 8)).unwrap();
    pagemap.read_exact(&mut entries).unwrap();
    let present = |e: &[u8]| u64::from_ne_bytes(e.try_into().unwrap()) >> 63 == 1;
    entries.chunks(8).enumerate().filter(|(_, e)| present(e)).map(|(k, _)| k as u64).collect()
}
