//! The presets end to end at small size: two registry tags, both engines, checksums that
//! agree with each other and with the definition; migrate's cold samples really cold;
//! every format shows the presets' own tables; bad selections are clear errors.

use crate::common;

use std::path::Path;

use common::*;
use lmdb_regress::workload::presets::{Preset, PresetConfig, PresetWorkload};
use lmdb_regress::workload::{EnvSettings, Workload, WorkloadConfig};
use serde_json::Value;

/// What a correct pass of `w` must produce, as the library computes it without LMDB.
fn expected_checksum(w: PresetWorkload, cfg: &WorkloadConfig) -> String {
    lmdb_regress::workload::expected_checksum(Workload::Preset(w), cfg).expect("every preset pass has one").to_string()
}

const TAGS: [&str; 2] = ["LMDB_0.9.18", "LMDB_0.9.33"];

/// Runs a preset on both tags and engines; returns the summaries and the run file's path.
fn run_preset(dir: &Path, preset: &str, rounds: &str, extra: &[&str]) -> (Vec<Value>, std::path::PathBuf) {
    let file = dir.join(format!("{preset}.jsonl"));
    let mut c = lmdb_regress();
    c.args(["run", "--preset", preset, "--tags", "0.9.18,0.9.33", "--engine", "rust,c", "--rounds", rounds]);
    c.args(["--warmup", "0", "--summary-json", "--out"]).arg(&file).args(extra);
    (json(&run_ok(&mut c)).as_array().unwrap().clone(), file)
}

fn records(file: &Path, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == kind)
        .collect()
}

/// Every workload of the preset measured once per tag and engine, reading or writing
/// exactly what the definition says.
fn assert_agree(rows: &[Value], workloads: &[PresetWorkload], cfg: &WorkloadConfig) {
    for &w in workloads {
        let want = expected_checksum(w, cfg);
        for engine in ["rust", "c"] {
            for tag in TAGS {
                let r = rows
                    .iter()
                    .find(|r| r["engine"] == engine && r["tag"] == tag && r["workload"] == w.name())
                    .unwrap_or_else(|| panic!("no row {engine} {tag} {}: {rows:?}", w.name()));
                assert_eq!((r["n"].as_u64(), r["failures"].as_u64()), (Some(1), Some(0)), "{r}");
                assert_eq!(r["checksum"], want.as_str(), "{engine} {tag} {}", w.name());
            }
        }
    }
}

/// The configuration a run of `preset` at `entries` resolves to, its own parameters tweaked.
fn config(preset: Preset, entries: u32, tweak: impl FnOnce(&mut PresetConfig)) -> WorkloadConfig {
    let mut params = PresetConfig::default();
    tweak(&mut params);
    let env = EnvSettings { entries: Some(entries), ..EnvSettings::default() };
    env.resolve(&WorkloadConfig::default(), &params, Some(preset))
}

#[test]
fn tokyo_cabinet_runs_on_two_tags_and_both_engines_with_agreeing_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, file) = run_preset(dir.path(), "tokyo-cabinet", "1", &["--preset-entries", "2000"]);
    use PresetWorkload::*;
    assert_agree(
        &rows,
        &[TcSuccessiveWrite, TcRandomWrite, TcSuccessiveRead, TcRandomRead],
        &config(Preset::TokyoCabinet, 2000, |_| {}),
    );
    let random = rows.iter().find(|r| r["workload"] == "tcRandomRead").unwrap();
    let walk = rows.iter().find(|r| r["workload"] == "tcSuccessiveRead").unwrap();
    assert_ne!(random["checksum"], walk["checksum"], "random reads visit the keys in another order");
    // The run file records the settings the preset used, its defaults made explicit.
    let config = &records(&file, "header")[0]["config"];
    assert_eq!(
        (&config["entries"], &config["map_size"], &config["no_writemap"]),
        (&2000.into(), &(1u64 << 30).into(), &true.into())
    );
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&file)));
    for s in ["Preset tokyo-cabinet", "## Successive Write (rust engine)", "## Random Read (c engine)", "| s/op |"] {
        assert!(md.contains(s), "markdown lacks {s:?}:\n{md}");
    }
}

#[test]
fn open_get_reports_latency_percentiles_size_and_write_time() {
    let dir = tempfile::tempdir().unwrap();
    let args =
        ["--preset-entries", "1500", "--preset-max-value", "300", "--open-get-cycles", "25", "--open-get-key", "7"];
    let (rows, file) = run_preset(dir.path(), "open-get", "1", &args);
    let cfg = config(Preset::OpenGet, 1500, |p| {
        p.max_value = 300;
        p.open_get_cycles = 25;
        p.open_get_key = Some(7);
    });
    assert_agree(&rows, &[PresetWorkload::OpenGet, PresetWorkload::OpenGetWrite], &cfg);
    for s in records(&file, "sample").iter().filter(|s| s["workload"] == "openGet") {
        assert_eq!(s["figures"]["latencies_ns"].as_array().unwrap().len(), 25, "{s}");
        assert!(s["figures"]["db_bytes"].as_u64().unwrap() > 0);
    }
    let out = dir.path().join("out");
    run_ok(
        lmdb_regress().arg("report").arg(&file).args(["--format", "markdown,text,json,csv,svg", "--out-dir"]).arg(&out),
    );
    let md = std::fs::read_to_string(out.join("open-get.md")).unwrap();
    for s in
        ["# Open, Get, Close: latency", "| LMDB Tag | min | mean | p50 | p99 | max | write ms | size MB |", "us/cycle"]
    {
        assert!(md.contains(s), "markdown lacks {s:?}:\n{md}");
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out.join("open-get.json")).unwrap()).unwrap();
    let latency = report["preset"]["latency"].as_array().unwrap();
    assert_eq!(latency.len(), 4, "two tags, two engines");
    for r in latency {
        let l = &r["latency_us"];
        let f = |k: &str| l[k].as_f64().unwrap();
        assert_eq!(l["n"], 25);
        assert!(f("min") <= f("p50") && f("p50") <= f("p99") && f("p99") <= f("max") && f("min") > 0.0, "{r}");
        assert!(r["write_ms"].as_f64().unwrap() > 0.0 && r["db_bytes"].as_u64().unwrap() > 0, "{r}");
    }
    let csv = std::fs::read_to_string(out.join("open-get-latency.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    for svg in ["open-get-latency-rust.svg", "open-get-latency-c.svg", "open-get-openGet-c.svg"] {
        assert!(out.join(svg).is_file(), "{svg}");
    }
    let text = std::fs::read_to_string(out.join("open-get.txt")).unwrap();
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn migrate_copies_and_reads_warm_and_cold_and_cold_is_really_cold() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, file) = run_preset(dir.path(), "migrate", "2", &["--entries", "2500"]);
    let cfg = config(Preset::Migrate, 2500, |_| {});
    use PresetWorkload::*;
    let all = [MigrateCopyWarm, MigrateCopyCold, MigrateReadWarm, MigrateReadCold];
    for w in all {
        for r in rows.iter().filter(|r| r["workload"] == w.name()) {
            assert_eq!((r["n"].as_u64(), r["failures"].as_u64()), (Some(2), Some(0)), "{r}");
            assert_eq!(r["checksum"], expected_checksum(w, &cfg).as_str(), "{r}");
        }
    }
    // mincore, just before each cold region: none of the source file cached; warm: all.
    let samples = records(&file, "sample");
    assert_eq!(samples.len(), 4 * 2 * 2 * 2);
    for s in &samples {
        let r = &s["figures"]["resident"];
        let (resident, total) = (r["resident_pages"].as_u64().unwrap(), r["total_pages"].as_u64().unwrap());
        assert!(total > 0, "{s}");
        let cold = s["workload"].as_str().unwrap().ends_with("Cold");
        assert_eq!(resident, if cold { 0 } else { total }, "{s}");
        let usage = &s["figures"]["usage"];
        assert!(usage["minor_faults"].as_u64().unwrap() > 0 && usage["max_rss_kib"].as_u64().unwrap() > 0, "{s}");
    }
    let text = stdout(&run_ok(lmdb_regress().arg("report").arg(&file).args(["--format", "text"])));
    for s in ["MIGRATION: RESOURCES", "Copy, Cold (c engine)", "wall ms  user ms  sys ms  RSS MiB"] {
        assert!(text.contains(s), "text lacks {s:?}:\n{text}");
    }
    assert!(!text.contains("cold not achieved: "), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn instructions_are_counted_per_cycle_and_per_entry_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    run_ok(
        lmdb_regress()
            .args(["run", "--preset", "open-get", "--tags", "0.9.33", "--engine", "rust,c", "--rounds", "1"])
            .args(["--warmup", "0", "--preset-entries", "800", "--open-get-cycles", "5", "--with-instructions"])
            .args(["--count-entries", "400", "--out"])
            .arg(&file),
    );
    let counted: Vec<Value> = records(&file, "sample").into_iter().filter(|s| s["counted"] == true).collect();
    assert_eq!(counted.len(), 4, "{counted:?}");
    let report = json(&run_ok(lmdb_regress().arg("report").arg(&file).args(["--format", "json"])));
    for s in &counted {
        let ops = if s["workload"] == "openGet" { 5 } else { 400 };
        assert_eq!(s["figures"]["ops"], ops, "{s}");
        let total = s["counts"]["Ir"].as_u64().unwrap();
        assert!(total > 1000 * ops, "{s}");
        // The report divides by the pass's own operations: cycles for openGet, entries else.
        let section = report["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["engine"] == s["engine"] && x["workload"] == s["workload"])
            .unwrap();
        let per = section["ranked"][0]["per_entry"]["instructions"].as_f64().unwrap();
        assert!((per - total as f64 / ops as f64).abs() < 1e-6, "{per} {s}");
    }
}

#[test]
fn the_list_describes_every_preset_and_bad_selections_are_clear_errors() {
    let list = stdout(&run_ok(lmdb_regress().args(["run", "--preset", "list"])));
    for s in [
        "tokyo-cabinet",
        "open-get",
        "migrate",
        "lmdb",
        "fragmentedLarge",
        "tcRandomRead",
        "Successive Write",
        "us/cycle",
        "--open-get-cycles",
    ] {
        assert!(list.contains(s), "the list lacks {s:?}:\n{list}");
    }
    let fails = |args: &[&str], says: &str| {
        let o = lmdb_regress().args(["run", "--tags", "0.9.33", "--rounds", "1"]).args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    };
    fails(
        &["--preset", "rocksdb"],
        "unknown preset rocksdb; known: tokyo-cabinet, open-get, migrate, lmdb, concurrency, list",
    );
    fails(&["--preset", "migrate", "--workloads", "readKey"], "are not all of the preset migrate");
    fails(&["--workloads", "tcRandomWrite,readKey"], "cannot share a run");
    fails(
        &["--preset", "open-get", "--preset-entries", "10", "--open-get-key", "10"],
        "--open-get-key 10 is not below",
    );
    fails(&["--preset", "tokyo-cabinet", "--preset-entries", "0"], "--entries must be at least 1");
    fails(&["--preset", "migrate", "--writemap", "--no-writemap"], "cannot be used with");
}

/// openGet's operation is a cycle (its time is per cycle, its counts cover every cycle):
/// `--summary-json` gives its counts per cycle, as the report does, and every other
/// workload's per entry; both come from the one "per operation".
#[test]
fn summary_json_counts_per_operation_as_the_report_does() {
    let data = lmdb_regress::record::load(&testdata("run-open-get.jsonl")).unwrap();
    let model = lmdb_regress::report::model::build(&data, None).unwrap();
    let rows = lmdb_regress::report::summary_json(&data);
    assert_eq!(rows.len(), 6, "three tags, two workloads");
    for r in &rows {
        let section = model.sections.iter().find(|s| s.workload.to_string() == r.workload).unwrap();
        let ranked = section.ranked.iter().find(|x| x.tag.to_string() == r.tag).unwrap();
        let counted = ranked.per_entry.get(&lmdb_regress::record::Metric::Instructions).copied();
        assert_eq!(r.instructions_per_entry, counted, "{r:?}");
    }
    let per = |w: &str, t: &str| {
        rows.iter().find(|r| r.workload == w && r.tag == t).and_then(|r| r.instructions_per_entry).unwrap()
    };
    // The fixture's counts: 61,000 instructions a cycle over 25 cycles, 2,400 an entry over 400.
    assert_eq!(per("openGet", "LMDB_0.9.18"), 61000.0);
    assert_eq!(per("openGetWrite", "LMDB_0.9.18"), 2400.0);
}
