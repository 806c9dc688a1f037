//! Reports: golden files for every format, rendered from one fixed run file; `compare`;
//! clear errors for bad input.

use crate::common;

use std::path::Path;

use common::*;

/// `report` of a committed run file in every format into `out`; what it printed.
fn every_format(run: &str, out: &Path) -> String {
    let all = ["--format", "markdown,text,json,csv,svg,html", "--out-dir"];
    stdout(&run_ok(lmdb_regress().arg("report").arg(testdata(run)).args(all).arg(out)))
}

#[test]
fn every_format_matches_its_golden_file() {
    let out = tempfile::tempdir().unwrap();
    let written = every_format("run-fixed.jsonl", out.path());
    let names = [
        "run-fixed.md",
        "run-fixed.txt",
        "run-fixed.json",
        "run-fixed-summary.csv",
        "run-fixed-samples.csv",
        "run-fixed-readSeq.svg",
        "run-fixed-write.svg",
        "run-fixed.html",
    ];
    assert_eq!(written.lines().count(), names.len(), "{written}");
    for n in names {
        golden(n, &std::fs::read_to_string(out.path().join(n)).unwrap());
    }
    // Printing gives the same as writing.
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl"))));
    assert_eq!(md, std::fs::read_to_string(out.path().join("run-fixed.md")).unwrap());
}

/// A preset's run (open-get, with a counting pass): its latency table, CSV and chart are
/// model content, so every format has them, and the page draws every chart.
#[test]
fn a_preset_run_matches_its_golden_files_in_every_format() {
    let out = tempfile::tempdir().unwrap();
    every_format("run-open-get.jsonl", out.path());
    let mut names: Vec<String> =
        std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let suffixes = [".html", ".json", ".md", ".txt", "-latency.csv", "-latency.svg", "-openGet.svg"];
    let want = suffixes.iter().chain(&["-openGetWrite.svg", "-samples.csv", "-summary.csv"]);
    let mut want: Vec<String> = want.map(|s| format!("run-open-get{s}")).collect();
    want.sort();
    assert_eq!(names, want);
    for n in &names {
        golden(n, &std::fs::read_to_string(out.path().join(n)).unwrap());
    }
    let page = std::fs::read_to_string(out.path().join("run-open-get.html")).unwrap();
    let svgs = names.iter().filter(|n| n.ends_with(".svg")).count();
    assert_eq!(page.matches("<figure class=\"chart\">").count(), svgs, "the page lacks a chart");
    assert!(page.contains("Open, Get, Close (rust engine) — p50 per cycle"), "no latency chart on the page");
}

fn report(format: &str) -> String {
    stdout(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--format", format])))
}

#[test]
fn the_report_says_what_matters() {
    let md = report("markdown");
    for s in [
        "## Iterate Sequentially",
        "## Write Entry",
        "| Rank | LMDB Tag | ms/op |",
        "**`LMDB_0.9.33`**",
        "# Against `LMDB_0.9.17`",
        "faster, time only",
        "Control (A/A): `LMDB_0.9.33~control` against `LMDB_0.9.33`",
        "Noise: per-sample spread",
        "Resolution: ±",
        "Bonferroni",
    ] {
        assert!(md.contains(s), "markdown lacks {s:?}");
    }
    assert!(md.contains("CHECKSUM MISMATCH: `LMDB_0.9.33` readSeq"), "a disagreeing tag is named");
    assert!(md.contains("`LMDB_0.9.19` not measured"));
    assert!(md.contains("signal 6 (SIGABRT)"));
    assert!(md.contains("PyPI sdist lmdb 0.88 | equivalent"));
    let txt = report("text");
    assert!(!txt.contains('|') && !txt.contains("**") && !txt.contains('`'), "plain text has no Markdown");
    // A chart per workload is several documents: they go to files, never to stdout.
    let o = lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--format", "svg"]).output().unwrap();
    assert!(!o.status.success() && stderr(&o).contains("--out-dir DIR"), "{}", stderr(&o));
    // A run under several memory limits (testdata/run-memory-limits.jsonl, measured on an
    // AMD EPYC): each tag's median against the limit, in one chart.
    let out = tempfile::tempdir().unwrap();
    let run = testdata("run-memory-limits.jsonl");
    run_ok(lmdb_regress().arg("report").arg(run).args(["--format", "svg", "--out-dir"]).arg(out.path()));
    let svg = std::fs::read_to_string(out.path().join("run-memory-limits-readKey-memory-limits.svg")).unwrap();
    assert!(svg.contains("Read by Key — median ms/op by memory limit") && svg.contains("memory limit"), "{svg}");
    let at = |point: &str| svg.find(point).unwrap_or_else(|| panic!("no point {point}: {svg}"));
    assert!(at("0.9.33 in 256M: median") < at("0.9.33 in 16M: median"), "the largest limit first");
    assert!(at("1.0.1 in 256M: median") < at("1.0.1 in 16M: median"), "a line a tag");
}

/// Every line of every golden text file fits Bugzilla's 80 columns (the commands' too,
/// but for error messages: one sentence each, which a terminal wraps).
#[test]
fn text_fits_80_columns() {
    let golden = |d: &str| std::fs::read_dir(testdata(d)).unwrap().flatten();
    for e in golden("golden").chain(golden("golden/commands")) {
        if e.path().extension().is_some_and(|x| x == "txt") {
            let t = std::fs::read_to_string(e.path()).unwrap();
            for (i, l) in t.lines().enumerate().filter(|(_, l)| !l.starts_with("error: ")) {
                assert!(
                    l.chars().count() <= 80,
                    "{}:{}: {} columns: {l}",
                    e.path().display(),
                    i + 1,
                    l.chars().count()
                );
            }
        }
    }
    for l in report("text").lines() {
        assert!(l.chars().count() <= 80, "{l}");
    }
}

/// The JSON contract, and figures checked against testdata/independent.py, which computes
/// them from the raw samples with none of this program's code.
#[test]
fn json_comparisons_match_independent_figures() {
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    assert_eq!(json["schema"], lmdb_regress::report::json::REPORT_SCHEMA);
    assert_eq!(json["samples"].as_array().unwrap().len(), 70, "every raw sample, counted ones too");
    // (workload, tag, against, ratio, lo, hi) from `python3 testdata/independent.py`.
    let expected = [
        ("readSeq", "LMDB_0.9.18", "LMDB_0.9.17", 1.002398897, 0.981478838, 1.024229467, "inconclusive"),
        ("readSeq", "LMDB_0.9.33", "LMDB_0.9.17", 0.951003136, 0.940236558, 0.965426294, "faster"),
        ("readSeq", "LMDB_0.9.33~control", "LMDB_0.9.33", 0.994179918, 0.973933281, 1.008221019, "inconclusive"),
        ("write", "LMDB_0.9.18", "LMDB_0.9.17", 0.996455493, 0.975654746, 2.497522718, "inconclusive"),
        ("write", "LMDB_0.9.33", "LMDB_0.9.17", 1.100989469, 1.076890530, 1.125444949, "slower"),
        ("write", "LMDB_0.9.33~control", "LMDB_0.9.33", 1.004386263, 0.981803948, 1.025610343, "inconclusive"),
    ];
    let sections = json["sections"].as_array().unwrap();
    for (w, tag, against, ratio, lo, hi, verdict) in expected {
        let s = sections.iter().find(|s| s["workload"] == w).unwrap();
        let c = s["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["tag"] == tag && c["against"] == against && c["kind"] != "fastest")
            .unwrap_or_else(|| panic!("no comparison {w} {tag} vs {against}"));
        let close = |k: &str, v: f64| (c[k].as_f64().unwrap() - v).abs() < 1e-8;
        assert!(close("ratio", ratio) && close("ci_low", lo) && close("ci_high", hi), "{w} {tag}: {c}");
        assert_eq!(c["verdict"], verdict, "{w} {tag}: {c}");
    }
    // Every comparison of every section: the verdict agrees with the interval.
    for s in sections {
        assert!(s["resolution"].as_f64().is_some(), "{}", s["workload"]);
        for c in s["comparisons"].as_array().unwrap() {
            let (lo, hi) = (c["ci_low"].as_f64().unwrap_or(f64::NAN), c["ci_high"].as_f64().unwrap_or(f64::NAN));
            let ok = match c["verdict"].as_str().unwrap() {
                "slower" => lo > 1.0,
                "faster" => hi < 1.0,
                "same" => lo >= 0.98 && hi <= 1.02,
                "inconclusive" => lo.is_nan() || (lo <= 1.0 && hi >= 1.0),
                v => panic!("unknown verdict {v}"),
            };
            assert!(ok, "a verdict disagrees with its interval: {c}");
            if c["time_only"] == true {
                let i = c["instructions_ratio"].as_f64().unwrap();
                assert!((i - 1.0).abs() <= 0.005 && c["verdict"] != "same", "{c}");
            }
        }
    }
}

#[test]
fn baseline_is_chosen_and_checked() {
    let txt = stdout(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args([
        "--format",
        "text",
        "--baseline",
        "0.9.18",
    ])));
    assert!(txt.contains("AGAINST LMDB_0.9.18") && txt.contains("vs 0.9.18"), "{txt}");
    let o =
        lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--baseline", "0.9.21"]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .contains("baseline LMDB_0.9.21 is not in this run; measured tags: LMDB_0.9.17, LMDB_0.9.18, LMDB_0.9.33"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_run_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = |p: &Path| {
        let o = lmdb_regress().arg("report").arg(p).output().unwrap();
        assert!(!o.status.success());
        stderr(&o)
    };
    assert!(err(&dir.path().join("missing.jsonl")).contains("cannot open run file"));
    let corrupt = dir.path().join("corrupt.jsonl");
    std::fs::write(&corrupt, "this is not json\n").unwrap();
    assert!(err(&corrupt).contains("not a lmdb-regress run file"));
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let newer = dir.path().join("newer.jsonl");
    std::fs::write(&newer, text.replacen("\"schema\":1", "\"schema\":99", 1)).unwrap();
    assert!(err(&newer)
        .contains(&format!("schema 99, newer than this lmdb-regress reads ({})", lmdb_regress::record::SCHEMA)));
    let mid = dir.path().join("mid.jsonl");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[10] = "{\"type\":\"sample\",\"round\":";
    std::fs::write(&mid, lines.join("\n")).unwrap();
    assert!(err(&mid).contains("mid.jsonl:11: corrupt line"));
}

#[test]
fn compare_flags_exactly_what_changed() {
    let f = testdata("run-fixed.jsonl");
    // Each row's verdict on `key`: "change" (the tag between the runs), or "vs_baseline"
    // (its comparison with the baseline between the runs; rows without one left out).
    let verdicts = |new: &Path, key: &str| -> Vec<(String, String, String)> {
        let j = json(&run_ok(lmdb_regress().arg("compare").arg(&f).arg(new).arg("--json")));
        j["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_string();
                let change = if key == "change" { &r["change"] } else { &r[key]["change"] };
                Some((s("workload"), s("tag"), change["verdict"].as_str()?.to_string()))
            })
            .collect()
    };
    let same = verdicts(&f, "change");
    assert_eq!(same.len(), 8);
    for (w, tag, v) in &same {
        assert!(v == "same" || v == "inconclusive", "a run against itself shows no change: {w} {tag} {v}");
    }
    // Each tag's comparison with the baseline, between the runs: the baseline has none.
    let agreed = verdicts(&f, "vs_baseline");
    assert_eq!(agreed.len(), 4, "two tags (not the control) × two workloads: {agreed:?}");
    assert!(agreed.iter().all(|(_, tag, _)| tag != "LMDB_0.9.17"), "{agreed:?}");
    for (w, tag, v) in &agreed {
        assert!(v == "same" || v == "inconclusive", "a run agrees with itself: {w} {tag} {v}");
    }
    let dir = tempfile::tempdir().unwrap();
    let slower = scaled(dir.path(), "LMDB_0.9.18", 1.2);
    // A tag 20% slower in the new run: its change, and its comparison with the baseline,
    // which the new run no longer agrees on.
    for key in ["change", "vs_baseline"] {
        for (w, tag, v) in verdicts(&slower, key) {
            match (w.as_str(), tag.as_str()) {
                ("readSeq", "LMDB_0.9.18") => assert_eq!(v, "slower", "{key}"),
                // One round of 0.9.18's writes took 2.5×: eight rounds a run cannot rule out
                // that 1.2× is noise, and the verdict must not pretend otherwise.
                ("write", "LMDB_0.9.18") => assert!(v == "slower" || v == "inconclusive", "{key}: {v}"),
                _ => assert!(v == "same" || v == "inconclusive", "{key}: {w} {tag} {v}"),
            }
        }
    }
    let text = stdout(&run_ok(lmdb_regress().arg("compare").arg(&f).arg(&slower)));
    assert_eq!(text.matches("+20.0%").count(), 4, "the change, and the change against the baseline: {text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn compare_warns_when_the_workloads_differ() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let other = dir.path().join("small.jsonl");
    std::fs::write(&other, text.replacen("\"entries\":1000000", "\"entries\":1000", 1)).unwrap();
    let out = stdout(&run_ok(lmdb_regress().arg("compare").arg(testdata("run-fixed.jsonl")).arg(&other)));
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("!! Warning: the runs used different workload settings (entries: 1000000 → 1000)"), "{out}");
}

/// The fixed run with two more bursts crafted in: LMDB_0.9.33's readSeq 40% slower in rounds 2
/// and 5 (from 1). The report counts them, and the write section's one burst (LMDB_0.9.18,
/// round 6, 2.5 times its tag), in every format from the one statistic.
#[test]
fn bursts_are_counted_and_placed_on_a_crafted_run_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let crafted: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let hit = v["type"] == "sample"
                && v["tag"] == "LMDB_0.9.33"
                && v["workload"] == "readSeq"
                && [1, 4].contains(&v["round"].as_u64().unwrap());
            if hit {
                v["ns"] = serde_json::json!((v["ns"].as_f64().unwrap() * 1.4).round() as u64);
            }
            v.to_string()
        })
        .collect();
    let file = dir.path().join("bursts.jsonl");
    std::fs::write(&file, crafted.join("\n") + "\n").unwrap();
    let json = json(&run_ok(lmdb_regress().arg("report").arg(&file).args(["--format", "json"])));
    let found = |i: usize| -> Vec<(String, u64)> {
        let b = &json["sections"][i]["bursts"];
        assert_eq!(b["values"], 24, "3 tags × 8 rounds, the control apart: {b}");
        let at = b["found"].as_array().unwrap().iter();
        at.map(|x| (x["label"].as_str().unwrap().to_string(), x["round"].as_u64().unwrap())).collect()
    };
    assert_eq!(json["sections"][0]["workload"], "readSeq");
    let mut read = found(0);
    read.sort();
    assert_eq!(read, [("LMDB_0.9.33".to_string(), 1), ("LMDB_0.9.33".to_string(), 4)]);
    assert_eq!(found(1), [("LMDB_0.9.18".to_string(), 5)]);
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&file)));
    assert!(md.contains("- Bursts: 2 of 24 round values more than 4 robust SDs"), "{md}");
    assert!(
        md.contains("`LMDB_0.9.33` round 2 +3") && md.contains("`LMDB_0.9.33` round 5 +3"),
        "about 40% less the round effect: {md}"
    );
    assert!(md.contains("- Bursts: 1 of 24 round values") && md.contains("`LMDB_0.9.18` round 6 +150.7%"), "{md}");
    let untouched = stdout(&run_ok(lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl"))));
    assert!(untouched.contains("- Bursts: none of 24 round values"), "{untouched}");
}

/// The fixed run's write passes given each commit's time (a crafted `figures.commit_ns`:
/// 100 commits a pass about a median of 1 ms, LMDB_0.9.33's and its control's 10% slower),
/// and LMDB_0.9.18's pass of round 6 ten stalls of 20 ms, which treble that pass's mean.
/// `--metric commit-p50` compares the passes' medians with the baseline's by the one method,
/// with an interval, in every format, and the stalls leave the median where it was.
#[test]
fn commit_p50_compares_pass_medians_with_an_interval_and_stalls_do_not_move_them() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let tags = ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.33", "LMDB_0.9.33~control"];
    let crafted: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["type"] == "sample" && v["workload"] == "write" && v["counted"] != true {
                let (round, tag) = (v["round"].as_u64().unwrap(), v["tag"].as_str().unwrap());
                let t = tags.iter().position(|x| *x == tag).unwrap() as u64;
                let slower = if tag.starts_with("LMDB_0.9.33") { 1.10 } else { 1.0 };
                // A pass's own spread: −1% to +1% by round and tag.
                let median = 1e6 * slower * (1.0 + ((round * 7 + t * 3) % 11) as f64 * 0.002 - 0.01);
                let stalls = if tag == "LMDB_0.9.18" && round == 5 { 10 } else { 0 };
                let m = median.round() as u64;
                v["figures"]["commit_ns"] =
                    serde_json::json!([[m * 9 / 10, 45], [m, 10], [m * 11 / 10, 45 - stalls], [20_000_000, stalls]]);
            }
            v.to_string()
        })
        .collect();
    let file = dir.path().join("commits.jsonl");
    std::fs::write(&file, crafted.join("\n") + "\n").unwrap();
    let report = |format: &str| {
        let args = ["--metric", "commit-p50", "--format", format];
        stdout(&run_ok(lmdb_regress().arg("report").arg(&file).args(args)))
    };
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let sections = json["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 1, "only the write passes timed their commits: {sections:?}");
    let against = |tag: &str| {
        let all = sections[0]["comparisons"].as_array().unwrap();
        let c = all.iter().find(|c| c["tag"] == tag && c["kind"] != "fastest").cloned();
        let c = c.unwrap_or_else(|| panic!("no comparison of {tag}: {}", sections[0]));
        (c["ratio"].as_f64().unwrap(), c["ci_low"].as_f64().unwrap(), c["ci_high"].as_f64().unwrap(), c)
    };
    let (ratio, lo, hi, c) = against("LMDB_0.9.33");
    assert!((1.08..1.12).contains(&ratio) && lo > 1.05 && hi < 1.15 && c["verdict"] == "slower", "{c}");
    let (ratio, lo, hi, c) = against("LMDB_0.9.18");
    assert!((0.99..1.01).contains(&ratio) && lo > 0.97 && hi < 1.03 && c["verdict"] != "slower", "the stalls: {c}");
    let md = report("markdown");
    assert!(md.contains("us/commit") && md.contains("; median commit time +1"), "{md}");
    for format in ["text", "html", "github"] {
        assert!(report(format).contains("LMDB_0.9.33"), "{format}");
    }
    let csv = ["--metric", "commit-p50", "--format", "csv", "--out-dir"];
    run_ok(lmdb_regress().arg("report").arg(&file).args(csv).arg(dir.path()));
    let summary = std::fs::read_to_string(dir.path().join("commits-summary.csv")).unwrap();
    assert!(summary.contains("LMDB_0.9.33"), "{summary}");
    // A run that timed no commit says what would.
    let o = lmdb_regress().arg("report").arg(testdata("run-fixed.jsonl")).args(["--metric", "commit-p50"]).output();
    let err = stderr(&o.unwrap());
    assert!(err.contains("this run has no commit times") && err.contains("--sync nosync,nometasync,sync"), "{err}");
}

/// A run records the build of the tool that ran it; the report names it, and comparing
/// runs of two builds cautions that the tool's own placement moves times between them.
#[test]
fn runs_of_two_builds_of_the_tool_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let built = |name: &str, hex: char| {
        let mut lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines[0]["environment"]["tool_sha256"] = hex.to_string().repeat(64).into();
        let path = dir.path().join(name);
        std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        path
    };
    let (a, a2, b) = (built("a.jsonl", 'a'), built("a2.jsonl", 'a'), built("b.jsonl", 'b'));
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&a)));
    assert!(md.contains("| Harness | lmdb-regress 0.1.0, build aaaaaaaaaaaa |"), "{md}");
    let compared = |old: &Path, new: &Path| {
        let out = stdout(&run_ok(lmdb_regress().arg("compare").arg(old).arg(new)));
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let flat = compared(&a, &b);
    assert!(flat.contains("the runs ran different builds of lmdb-regress (aaaaaaaaaaaa → bbbbbbbbbbbb)"), "{flat}");
    assert!(!compared(&a, &a2).contains("different builds"), "one build, no caution");
    assert!(!compared(&testdata("run-fixed.jsonl"), &b).contains("different builds"), "an old run names no build");
}
