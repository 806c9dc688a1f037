//! Random code layouts: the same seed links the same bytes, different seeds order the
//! functions differently yet count the same instructions, a layout changed on disk is
//! caught, a missing lld is a clear error, `--layouts fixed` runs the fixed builds as before,
//! and a layout study reports each workload's layout spread.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::*;
use lmdb_regress::compile::{BuildKind, Toolchain};
use lmdb_regress::layout::{self, Linker, Source};
use lmdb_regress::manifest::Manifest;
use lmdb_regress::source::{Resolution, Resolver, SourceCache, Want};
use object::{Object, ObjectSymbol, SymbolKind};
use serde_json::Value;

/// The fixed build of `tag` by the default toolchain in this test's cache (the fixture also
/// holds coverage builds of some tags).
fn fixed_library(tag: &str) -> PathBuf {
    library(tag)
}

/// A layout source of `tag`'s library whose layouts go under `root`.
fn source(tag: &str, root: &Path) -> Source {
    let cache = test_cache();
    let resolver = Resolver { cache: SourceCache::at(&cache), git: None, offline: true, archive_urls: Vec::new() };
    let m = Manifest::builtin();
    let Resolution::Found(src) = resolver.resolve(&Want::Tag(m.find(tag).unwrap())) else { panic!("no {tag}") };
    let tc = Toolchain::detect(lmdb_regress::TARGET, None, None).unwrap();
    let objects = layout::compile_objects(&src, &tc, BuildKind::SharedLibrary, None, &cache.join("builds")).unwrap();
    Source::new(objects, Linker::probe(&tc).unwrap(), &fixed_library(tag), root).unwrap()
}

/// LMDB's functions in the order the file lays them out.
fn function_order(path: &Path) -> Vec<String> {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let mut f: Vec<(u64, String)> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && !s.is_undefined())
        .filter_map(|s| Some((s.address(), s.name().ok()?.to_string())))
        .filter(|(_, n)| n.starts_with("mdb_"))
        .collect();
    f.sort();
    f.into_iter().map(|(_, n)| n).collect()
}

#[test]
fn the_same_seed_links_the_same_bytes_and_another_seed_another_order() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (source("LMDB_0.9.18", one.path()), source("LMDB_0.9.18", two.path()));
    let (a7, b7) = (a.link(7).unwrap(), b.link(7).unwrap());
    assert_ne!(a7.path, b7.path, "two caches, two links");
    assert_eq!(std::fs::read(&a7.path).unwrap(), std::fs::read(&b7.path).unwrap(), "seed 7 twice");
    assert_eq!(a7.sha256, b7.sha256);
    let a8 = a.link(8).unwrap();
    let (order7, order8) = (function_order(&a7.path), function_order(&a8.path));
    assert!(order7.len() > 100, "{order7:?}");
    assert_ne!(order7, order8, "seeds 7 and 8 lay the functions out alike");
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(sorted(order7), sorted(order8), "the same functions");
    let fixed = layout::exports(&fixed_library("LMDB_0.9.18"), BuildKind::SharedLibrary).unwrap();
    assert!(fixed.contains("mdb_env_open") && fixed.len() > 50);
    assert_eq!(layout::exports(&a8.path, BuildKind::SharedLibrary).unwrap(), fixed);

    // A layout changed on disk fails its check before use, and is linked again.
    std::fs::write(&a7.path, b"not a library").unwrap();
    let e = a7.check().unwrap_err().to_string();
    assert!(e.contains("changed on disk"), "{e}");
    let again = a.link(7).unwrap();
    assert_eq!(std::fs::read(&again.path).unwrap(), std::fs::read(&b7.path).unwrap());
    again.check().unwrap();
    assert!(a.link(0).is_err(), "seed 0 is lld's \"random\"");
}

/// `cache` counts the layouts and those no run has used for the days asked (a run that finds
/// a layout marks its record used), and `--prune-layouts DAYS` removes those alone, file and
/// record, after a `--dry-run` that removes nothing; a pruned layout is linked again when drawn.
#[test]
fn layouts_unused_for_a_while_are_counted_and_pruned() {
    let root = tempfile::tempdir().unwrap();
    let a = source("LMDB_0.9.18", root.path());
    let (old, recent) = (a.link(7).unwrap(), a.link(8).unwrap());
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    let age = |path: &Path, when| {
        std::fs::File::options().write(true).open(path.with_extension("json")).unwrap().set_modified(when).unwrap()
    };
    age(&old.path, long_ago);
    age(&recent.path, long_ago);
    a.link(8).unwrap();
    let used = std::fs::metadata(recent.path.with_extension("json")).unwrap().modified().unwrap();
    assert!(used > long_ago + std::time::Duration::from_secs(86_400), "finding a layout marks it used");
    let cache =
        |args: &[&str]| stdout(&run_ok(lmdb_regress().arg("cache").args(args).env("LMDB_REGRESS_CACHE", root.path())));
    let shown = cache(&[]);
    assert!(
        shown.contains("layouts: 2 (") && shown.contains("; 1 layout (") && shown.contains("not used for 30 days"),
        "{shown}"
    );
    assert!(shown.contains("--prune-layouts 30"), "{shown}");
    let dry = cache(&["--prune-layouts", "30", "--dry-run"]);
    assert!(dry.contains("would remove 1 layout (") && old.path.exists(), "{dry}");
    let pruned = cache(&["--prune-layouts", "30"]);
    assert!(pruned.contains("removed 1 layout ("), "{pruned}");
    let left: Vec<_> = std::fs::read_dir(root.path().join("layouts")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(left.len(), 2, "the old layout's file and record gone (a tag's dots in their names): {left:?}");
    assert!(!old.path.exists() && !old.path.with_extension("json").exists(), "{left:?}");
    assert!(recent.path.exists() && recent.path.with_extension("json").exists(), "the used one stays");
    assert!(!a.is_linked(7) && a.is_linked(8));
    a.link(7).unwrap().check().unwrap();
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn records<'a>(run: &'a [Value], kind: &str) -> Vec<&'a Value> {
    run.iter().filter(|r| r["type"] == kind).collect()
}

/// Each timed (tag, round) and the layout its samples ran.
fn layouts_by_unit(run: &[Value]) -> BTreeMap<(String, u64), BTreeSet<u64>> {
    let mut out: BTreeMap<(String, u64), BTreeSet<u64>> = BTreeMap::new();
    for s in records(run, "sample").into_iter().filter(|s| s.get("counted").is_none()) {
        let key = (s["tag"].as_str().unwrap().to_string(), s["round"].as_u64().unwrap());
        out.entry(key).or_default().insert(s["layout"].as_u64().expect("a random layout's seed"));
    }
    out
}

fn small_run(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--workloads", "readKey,write", "--entries", "2000"]);
    c.args(["--rounds", "2", "--warmup", "1", "--summary-json", "--out"]).arg(out).args(extra);
    run_ok(&mut c)
}

#[test]
fn random_layouts_are_per_sample_found_again_by_later_runs_and_leave_counts_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second, fixed) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"), dir.path().join("f.jsonl"));
    small_run(&first, &["--layout-seed", "42", "--with-instructions", "--count-entries", "1000"]);
    let run = lines(&first);
    let plan = &run[0]["plan"];
    assert_eq!((plan["layouts"].as_str(), plan["layout_seed"].as_u64()), (Some("random"), Some(42)), "{plan}");
    // One layout per (tag, round), shared by the worker's workloads, none the same.
    let by_unit = layouts_by_unit(&run);
    assert_eq!(by_unit.len(), 4, "{by_unit:?}");
    assert!(by_unit.values().all(|s| s.len() == 1), "{by_unit:?}");
    assert_eq!(by_unit.values().flatten().collect::<BTreeSet<_>>().len(), 4);
    // Counting used the fixed builds; one unit was counted under two layouts, alike.
    let counted: Vec<&Value> = records(&run, "sample").into_iter().filter(|s| s["counted"] == true).collect();
    assert!(!counted.is_empty() && counted.iter().all(|s| s["layout"].is_null()));
    // Each timed process ran one of the binary's function orders, drawn for it; counting, the binary as built.
    assert!(counted.iter().all(|s| s.get("harness").is_none()));
    let mut orders: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for s in records(&run, "sample").into_iter().filter(|s| s.get("counted").is_none()) {
        let n = s["harness"].as_u64().unwrap_or_else(|| panic!("a timed sample without its order: {s}"));
        assert!((1..=lmdb_regress::harness::ORDERS as u64).contains(&n), "{s}");
        orders.entry(s["round"].as_u64().unwrap()).or_default().insert(n);
    }
    assert!(orders.len() == 2 && orders.values().all(|o| o.len() == 1), "one order a paired process: {orders:?}");
    let checks = records(&run, "check");
    let layout_check = checks.iter().find(|c| c["what"].as_str().unwrap().contains("counted under layouts"));
    let layout_check = layout_check.unwrap_or_else(|| panic!("no layout check in {checks:?}"));
    assert_eq!(layout_check["passed"], true, "{layout_check}");
    assert!(records(&run, "failure").is_empty(), "{:?}", records(&run, "failure"));

    // Another seed: other orders of each unit's sequence of layouts, the linked ones first,
    // so a second run finds its layouts in the cache rather than linking them anew.
    let linked = || std::fs::read_dir(test_cache().join("layouts")).unwrap().flatten().count();
    let before = linked();
    small_run(&second, &["--layout-seed", "43"]);
    let again = layouts_by_unit(&lines(&second));
    assert!(again.len() == 4 && again.values().all(|s| s.len() == 1), "{again:?}");
    assert_eq!(again.values().flatten().collect::<BTreeSet<_>>().len(), 4, "none twice in a run: {again:?}");
    assert_eq!(linked(), before, "every layout came from the cache");

    // Fixed: each tag's one build, no layout linked, every sample saying so; `compare` warns.
    let layouts_dir = test_cache().join("layouts");
    std::fs::remove_dir_all(&layouts_dir).unwrap();
    small_run(&fixed, &["--layouts", "fixed"]);
    let run = lines(&fixed);
    assert_eq!(run[0]["plan"]["layouts"], "fixed");
    assert!(run[0]["plan"].get("layout_seed").is_none());
    let samples = records(&run, "sample");
    assert!(!samples.is_empty() && samples.iter().all(|s| s.get("layout") == Some(&Value::Null)), "{samples:?}");
    assert!(samples.iter().all(|s| s.get("harness").is_none()), "a fixed run runs the binary as built");
    assert!(records(&run, "check").is_empty());
    assert!(!layouts_dir.exists(), "a fixed run linked layouts");
    let text = stdout(&run_ok(lmdb_regress().arg("compare").arg(&fixed).arg(&first)));
    assert!(text.contains("differ in layouts (old: fixed, new: random)"), "{text}");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&fixed)));
    assert!(md.contains("Layouts: fixed") && !md.contains("Layout spread"), "{md}");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&first)));
    assert!(md.contains("drawn with the run's seed 42") && md.contains("Layout spread: not measured"), "{md}");
    assert!(md.contains("function orders of its worker's own code"), "{md}");
}

#[test]
fn without_lld_random_layouts_fail_naming_the_package() {
    // A PATH on which the compiler finds no ld.lld, as on a machine without the package.
    let empty = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = lmdb_regress()
        .env("PATH", empty.path())
        .args(["run", "--cc", "/usr/bin/gcc", "--tags", "0.9.18", "--workloads", "write", "--out"])
        .arg(dir.path().join("run.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("lld") && e.contains("apt-get install lld") && e.contains("--layouts fixed"), "{e}");
}

#[test]
fn a_layout_study_ranks_the_layouts_and_gives_their_spread() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("study.jsonl");
    let out = run_ok(
        lmdb_regress()
            .args(["layouts", "--tag", "0.9.18", "--count", "3", "--rounds", "3", "--warmup", "0"])
            .args(["--workloads", "write", "--entries", "2000", "--layout-seed", "5", "--out"])
            .arg(&file),
    );
    let md = stdout(&out);
    assert!(md.contains("# Layout sensitivity") && md.contains("LMDB_0.9.18@03"), "{md}");
    let run = lines(&file);
    let study = &run[0]["plan"]["layout_study"];
    let labels: BTreeMap<String, u64> = study["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l[0].as_str().unwrap().to_string(), l[1].as_u64().unwrap()))
        .collect();
    assert_eq!(labels.keys().cloned().collect::<Vec<_>>(), ["LMDB_0.9.18@01", "LMDB_0.9.18@02", "LMDB_0.9.18@03"]);
    assert_eq!(labels.values().collect::<BTreeSet<_>>().len(), 3, "three different layouts");
    // Every sample ran its label's layout, in each of the three rounds.
    let samples = records(&run, "sample");
    assert_eq!(samples.len(), 9);
    for s in samples {
        assert_eq!(s["layout"].as_u64(), Some(labels[s["tag"].as_str().unwrap()]), "{s}");
    }
    let json = run_ok(lmdb_regress().args(["report", "--format", "json"]).arg(&file));
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(report["sections"][0]["layout_spread"].is_number(), "{}", report["sections"][0]);
}

/// Bisect's timed runs link random layouts, several of each probe a process.
#[test]
fn bisect_times_its_runs_on_random_layouts() {
    let runs = tempfile::tempdir().unwrap();
    let out = lmdb_regress()
        .args(["bisect", "--good", "0.9.18", "--bad", "0.9.33", "--workload", "readSeq", "--metric", "time"])
        .args(["--threshold", "1000", "--min-rounds", "2", "--max-rounds", "2", "--entries", "1000"])
        .args(["--chunk", "250", "--layout-seed", "5", "--out-dir"])
        .arg(runs.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    // Two rounds confirm nothing: bisect says so and exits 1.
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("layouts: random (seed 5") && stderr(&out).contains("nothing was bisected"), "{text}");
    let file = std::fs::read_dir(runs.path()).unwrap().flatten().map(|e| e.path()).find(|p| {
        p.file_name().unwrap().to_string_lossy().contains("confirm") && p.extension().is_some_and(|e| e == "jsonl")
    });
    let run = lines(&file.expect("the confirming run's file"));
    assert_eq!(run[0]["plan"]["layouts"], "random");
    assert!(run[0]["plan"]["layout_seed"].is_u64(), "{}", run[0]["plan"]);
    let samples = records(&run, "sample");
    assert!(!samples.is_empty() && samples.iter().all(|s| s["layout"].is_u64()), "{samples:?}");
    // Four layouts of each probe a process, as `run` holds by default: one a chunk.
    assert_eq!(run[0]["plan"]["layouts_per_process"], 4, "{}", run[0]["plan"]);
    let of = |tag: &str| samples.iter().filter(|s| s["tag"] == tag && s["round"] == 0).count();
    assert_eq!((of("LMDB_0.9.18"), of("LMDB_0.9.33")), (4, 4), "{samples:?}");
}
