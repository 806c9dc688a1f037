//! `explain A B` over a repository made here: extra work planted in one function is named
//! first, with its count per entry, and the totals are the counts `run --metric
//! instructions` reports for the same builds.

use crate::common;

use std::path::Path;

use common::*;

/// Exactly this many instructions, wherever the assembler puts them.
const PLANTED: u32 = 1000;
const NOPS: &str = "\t__asm__ volatile(\".rept 1000\\n\\tnop\\n\\t.endr\");\n";

/// A static helper readKey calls once per entry (`mdb_cursor_get(MDB_SET_KEY)` calls it),
/// and the exported function readKey calls.
const SET: &str =
    "mdb_cursor_set(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    MDB_cursor_op op, int *exactp)\n{\n";
const GET: &str = "mdb_cursor_get(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    MDB_cursor_op op)\n{\n";

/// `text` with the nops after the declarations of the function that opens with `opening`.
fn plant(text: &str, opening: &str) -> String {
    let start = text.find(opening).unwrap_or_else(|| panic!("mdb.c has no {opening:?}"));
    let body = start + opening.len();
    let declarations = body + text[body..].find("\n\n").expect("a blank line after the declarations") + 1;
    format!("{}{NOPS}{}", &text[..declarations], &text[declarations..])
}

fn commit_mdb(repo: &Path, text: &str, msg: &str) -> String {
    std::fs::write(repo.join("libraries/liblmdb/mdb.c"), text).unwrap();
    git(repo, &["commit", "-q", "-am", msg]);
    git(repo, &["rev-parse", "HEAD"])
}

fn explain(repo: &Path, a: &str, b: &str, args: &[&str]) -> std::process::Output {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["explain", a, b, "--git"]).arg(repo).args(args);
    run_ok(&mut c)
}

fn figure(v: &serde_json::Value) -> (f64, f64) {
    (v["a"].as_f64().unwrap(), v["b"].as_f64().unwrap())
}

#[test]
fn explain_names_the_function_that_received_the_planted_work_and_reconciles_with_run() {
    let src = source_dir("LMDB_0.9.33");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let base = make_repo(&repo, &[("LMDB_0.9.33", &src)])[0].clone();
    let original = std::fs::read_to_string(repo.join("libraries/liblmdb/mdb.c")).unwrap();
    let in_static = commit_mdb(&repo, &plant(&original, SET), "nops in mdb_cursor_set");
    let in_exported = commit_mdb(&repo, &plant(&original, GET), "nops in mdb_cursor_get");
    let entries = ["--entries", "1000"];
    for (planted, function) in [(&in_static, "mdb_cursor_set"), (&in_exported, "mdb_cursor_get")] {
        let dir = tmp.path().join(function);
        let dir_arg = ["--out-dir", dir.to_str().unwrap()];
        explain(
            &repo,
            &base,
            planted,
            &[&entries[..], &["--workloads", "readKey", "--format", "json,text"], &dir_arg].concat(),
        );
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let (json, text) = (read("explain.json"), read("explain.txt"));
        let e: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!((e["kind"].as_str(), e["schema"].as_u64()), (Some("lmdb-regress-explain"), Some(1)));
        assert_eq!(e["metric"], "instructions");
        assert!(e["a"].as_str().unwrap().contains(&base[..8]), "{e}");
        assert!(e["b"].as_str().unwrap().contains(&planted[..8]), "{e}");
        let w = &e["workloads"][0];
        assert_eq!(w["workload"], "readKey");
        let top = &w["functions"][0];
        assert_eq!(top["name"], function, "{w:#}");
        let (a, b) = figure(&top["self"]);
        assert_eq!(b - a, PLANTED as f64, "{function}: self per entry {a} then {b}");
        let (ta, tb) = figure(&w["per_entry"]);
        // Per-entry figures are quotients: their difference is exact to rounding only.
        assert!((tb - ta - PLANTED as f64).abs() < 1e-6, "the whole difference is the planted work: {ta} then {tb}");
        // Every other function's self cost is as it was.
        for f in w["functions"].as_array().unwrap().iter().skip(1) {
            let (x, y) = figure(&f["self"]);
            assert_eq!(x, y, "{f}");
        }
        // The self costs sum to the workload's figure, in each build.
        let sums = w["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| figure(&f["self"]))
            .fold((0.0, 0.0), |s, f| (s.0 + f.0, s.1 + f.1));
        assert!((sums.0 - ta).abs() < 1e-6 && (sums.1 - tb).abs() < 1e-6, "{sums:?} against {ta}, {tb}");
        // The text: 80 columns, the function first with its share, and its planted lines.
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        let row = text.lines().find(|l| l.trim_start().starts_with(function)).unwrap();
        assert!(row.contains("+1000.0") && row.contains("100%"), "{row}\n{text}");
        let nop = text.lines().find(|l| l.contains("__asm__ volatile")).unwrap_or_else(|| panic!("{text}"));
        assert!(nop.contains(" + ") && nop.contains("1000.0"), "{nop}");
        // And the function's diff between the two commits: the planted line, added.
        assert!(text.contains(&format!("{function} (mdb.c): its lines, A's source to B's")), "{text}");
        assert!(text.lines().any(|l| l.starts_with("+  __asm__ volatile")), "{text}");
    }
    // The totals are `run --metric instructions`'s counts per entry, workload by workload;
    // with the caches simulated, so are the cache metrics (within the slack the runner
    // allows two processes: a miss or so moves with where a buffer lands).
    let runs = tmp.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--metric", "instructions", "--with-cache"]);
    c.args(["--workloads", "readKey,write"]).args(entries).args(["--tags", &format!("{base},{in_static}"), "--git"]);
    run_ok(c.arg(&repo).arg("--out").arg(&runs));
    let out_dir = tmp.path().join("explained");
    let args = [&entries[..], &["--workloads", "readKey,write", "--format", "json,text", "--cache"]].concat();
    let o = explain(&repo, &base, &in_static, &[&args[..], &["--out-dir", out_dir.to_str().unwrap()]].concat());
    assert!(stdout(&o).is_empty(), "with --out-dir nothing is printed");
    let e: serde_json::Value = serde_json::from_slice(&std::fs::read(out_dir.join("explain.json")).unwrap()).unwrap();
    let samples: Vec<serde_json::Value> = std::fs::read_to_string(&runs)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "sample")
        .collect();
    let counts = |tag: &serde_json::Value, workload: &str| -> serde_json::Value {
        let s = samples.iter().find(|s| s["workload"] == workload && s["tag"] == *tag);
        s.unwrap_or_else(|| panic!("no sample of {tag} {workload}"))["counts"].clone()
    };
    let per_entry = |c: &serde_json::Value, events: &[&str]| -> f64 {
        events.iter().map(|e| c[*e].as_u64().unwrap_or_else(|| panic!("no {e} in {c}"))).sum::<u64>() as f64 / 1000.0
    };
    for w in e["workloads"].as_array().unwrap() {
        let name = w["workload"].as_str().unwrap();
        let (ca, cb) = (counts(&e["a"], name), counts(&e["b"], name));
        assert_eq!(figure(&w["per_entry"]), (per_entry(&ca, &["Ir"]), per_entry(&cb, &["Ir"])), "{name}");
        let cycles = |c: &serde_json::Value| {
            let ram = per_entry(c, &["ILmr", "DLmr", "DLmw"]);
            let l1_misses = per_entry(c, &["I1mr", "D1mr", "D1mw"]);
            per_entry(c, &["Ir", "Dr", "Dw"]) - l1_misses + 5.0 * (l1_misses - ram) + 35.0 * ram
        };
        let near = |got: (f64, f64), want: (f64, f64), slack: f64, what: &str| {
            let off = (got.0 - want.0).abs().max((got.1 - want.1).abs()) * 1000.0;
            assert!(off <= slack + 1e-6, "{name} {what}: explain {got:?}, run {want:?}");
        };
        let cache = &w["cache"];
        near(
            figure(&cache["d1-misses"]),
            (per_entry(&ca, &["D1mr", "D1mw"]), per_entry(&cb, &["D1mr", "D1mw"])),
            4.0,
            "D1",
        );
        let ll = ["ILmr", "DLmr", "DLmw"];
        near(figure(&cache["ll-misses"]), (per_entry(&ca, &ll), per_entry(&cb, &ll)), 4.0, "LL");
        near(figure(&cache["estimated-cycles"]), (cycles(&ca), cycles(&cb)), 4.0 * 35.0, "estimated cycles");
        // The functions' own cycles sum to the workload's.
        let functions = w["functions"].as_array().unwrap();
        let sum: f64 = functions.iter().map(|f| figure(&f["cache"]["estimated-cycles"]).1).sum();
        assert!((sum - figure(&cache["estimated-cycles"]).1).abs() < 1e-6, "{name}: {sum}");
    }
    assert_eq!(e["workloads"].as_array().unwrap().len(), 2);
    let text = std::fs::read_to_string(out_dir.join("explain.txt")).unwrap();
    assert!(text.contains("Caches simulated: I1 ") && text.contains("function (by cycles)"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    // Each workload's profile of each build is kept beside the report.
    let profiles = std::fs::read_dir(out_dir.join("profiles")).unwrap().count();
    assert_eq!(profiles, 4);
}

#[test]
fn explain_refuses_anything_but_two_builds() {
    for (args, says) in [
        (&["explain", "0.9.33"][..], "explain needs B"),
        (&["explain", "0.9.17..0.9.33", "0.9.18"][..], "names several"),
        (&["explain", "0.9.33", "0.9.18,0.9.21"][..], "names several"),
        (&["explain", "0.9.33", "0.9.18", "--toolchain", "gcc:-O2,gcc:-O1"][..], "A and B with one toolchain"),
        (&["explain", "0.9.33", "0.9.18", "--workloads", "nope"][..], "nope"),
    ] {
        let o = lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

/// A profile of one workload: each function's self cost (Ir) in `file`, its inclusive cost
/// the same.
fn profile(functions: &[(&str, &str, u64)]) -> lmdb_regress::runner::profiling::WorkloadProfile {
    use lmdb_regress::runner::profile::{FunctionCost, Profile};
    let functions = functions
        .iter()
        .map(|&(name, file, ir)| {
            let cost = FunctionCost {
                file: Some(file.into()),
                self_cost: vec![ir],
                inclusive: vec![ir],
                ..Default::default()
            };
            (name.to_string(), cost)
        })
        .collect();
    let total = functions_total(&functions);
    let profile = Profile { events: vec!["Ir".into()], totals: vec![total], functions, ..Default::default() };
    lmdb_regress::runner::profiling::WorkloadProfile {
        workload: lmdb_regress::workload::Workload::Write,
        profile,
        part: Vec::new(),
        instructions: total,
        ops: None,
    }
}

fn functions_total(f: &std::collections::BTreeMap<String, lmdb_regress::runner::profile::FunctionCost>) -> u64 {
    f.values().map(|c| c.self_cost[0]).sum()
}

/// `mdb_cursor_put` in A whose body is `_mdb_cursor_put` in B (the same file, the same cost
/// give or take): one row naming both, and a sentence saying they were paired, never a
/// +185.7 row against a −184.7 one.
#[test]
fn a_function_renamed_between_the_builds_is_one_row_naming_both() {
    use lmdb_regress::report::explain::{build, ProfiledBuild};
    use lmdb_regress::runner::profiling::WorkloadProfile;
    let a =
        [profile(&[("mdb_cursor_put", "mdb.c", 1847), ("mdb_page_search", "mdb.c", 400), ("memcpy", "libc.c", 90)])];
    let b =
        [profile(&[("_mdb_cursor_put", "mdb.c", 1857), ("mdb_page_search", "mdb.c", 400), ("memcpy", "libc.c", 90)])];
    let side = |label: &str, profiles| ProfiledBuild { label: label.into(), profiles, sources: None };
    let e = build(&side("A", &a), &side("B", &b), 10, 10, 0);
    let rows = &e.workloads[0].functions;
    assert_eq!(rows[0].name, "mdb_cursor_put → _mdb_cursor_put", "{rows:?}");
    assert_eq!((rows[0].self_cost.a, rows[0].self_cost.b), (184.7, 185.7));
    assert_eq!(rows.len(), 3, "the two halves are one row: {rows:?}");
    use lmdb_regress::report::{document, Format};
    let text = lmdb_regress::report::render_shown(&e, Format::Text, &Default::default()).unwrap();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("Renamed between A and B, so one row each: mdb_cursor_put (A) → _mdb_cursor_put (B)"),
        "{text}"
    );
    let json = document::json(&e).unwrap();
    assert!(json.contains("\"renamed\""), "{json}");
    // A function new in B that took no function's cost stays a row of its own.
    let c =
        [profile(&[("mdb_cursor_put", "mdb.c", 1847), ("mdb_page_search", "mdb.c", 400), ("mdb_new", "mdb.c", 50)])];
    let e = build(&side("A", &a), &side("C", &c), 10, 10, 0);
    assert!(e.workloads[0].functions.iter().all(|f| f.renamed.is_none()), "{:?}", e.workloads[0].functions);
    // A worker that counted its timed operations apart from the entries (a preset's row):
    // costs per operation, as `run` and bisect count them.
    let per_op = || [WorkloadProfile { ops: Some(5), ..profile(&[("mdb_del", "mdb.c", 1847)]) }];
    let (pa, pb) = (per_op(), per_op());
    let e = build(&side("A", &pa), &side("B", &pb), 10, 10, 0);
    assert_eq!((e.workloads[0].per_entry.a, e.workloads[0].functions[0].self_cost.b), (369.4, 369.4));
}

/// mdb_drop0, which only `mdb_drop` calls: LmdbJava's six never run it, the lmdb suite's
/// `drop` calls it once a pass.
const DROP0: &str = "mdb_drop0(MDB_cursor *mc, int subs)\n{\n";

#[test]
fn explain_of_the_lmdb_suite_names_the_planted_function_the_six_never_run() {
    let src = source_dir("LMDB_0.9.33");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let base = make_repo(&repo, &[("LMDB_0.9.33", &src)])[0].clone();
    let original = std::fs::read_to_string(repo.join("libraries/liblmdb/mdb.c")).unwrap();
    let planted = commit_mdb(&repo, &plant(&original, DROP0), "nops in mdb_drop0");
    let entries = 2000;
    let args = ["--suite", "lmdb", "--workloads", "drop,fillRandom", "--entries", "2000", "--format", "json"];
    let e: serde_json::Value = serde_json::from_str(&stdout(&explain(&repo, &base, &planted, &args))).unwrap();
    let workloads = e["workloads"].as_array().unwrap();
    assert_eq!(workloads.iter().map(|w| w["workload"].as_str().unwrap()).collect::<Vec<_>>(), ["drop", "fillRandom"]);
    let drop = &workloads[0];
    let top = &drop["functions"][0];
    assert_eq!(top["name"], "mdb_drop0", "{drop:#}");
    let (a, b) = figure(&top["self"]);
    // One pass under callgrind, one mdb_drop in it: the planted work once.
    assert!(((b - a) * entries as f64 - PLANTED as f64).abs() < 1e-6, "mdb_drop0 per entry {a} then {b}");
    let (ta, tb) = figure(&drop["per_entry"]);
    assert!(((tb - ta) * entries as f64 - PLANTED as f64).abs() < 1e-6, "drop: {ta} then {tb}");
    // fillRandom never drops: its every function costs what it did.
    for f in workloads[1]["functions"].as_array().unwrap() {
        let (x, y) = figure(&f["self"]);
        assert_eq!(x, y, "{f}");
    }
}

#[test]
fn explain_takes_one_suite_and_its_own_workloads() {
    for (args, says) in [
        (&["explain", "0.9.33", "0.9.18", "--suite", "all"][..], "explain profiles one suite"),
        (
            &["explain", "0.9.33", "0.9.18", "--suite", "lmdb", "--workloads", "readKey"][..],
            "not all of the preset lmdb",
        ),
    ] {
        let o = lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}
