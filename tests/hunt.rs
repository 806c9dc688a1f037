//! Regression hunting end to end: bisect over a repository made here, and the ITS#10406
//! reproduction on a tiny entry count.

use crate::common;

use std::path::Path;

use common::*;

const PUT: &str = "mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    unsigned int flags)\n{\n";

fn edit_mdb(repo: &Path, f: impl FnOnce(String) -> String) {
    let p = repo.join("libraries/liblmdb/mdb.c");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, f(text)).unwrap();
}

fn commit(repo: &Path, msg: &str) -> String {
    git(repo, &["commit", "-q", "-am", msg]);
    git(repo, &["rev-parse", "HEAD"])
}

/// `bisect` of the write workload by instruction counts, with only `repo` to build from
/// (a cache of its own beside `out_dir`). Unoptimised: each probe is a build of its own, gcc
/// -O0 compiles mdb.c about five times faster than -O2, and what the tests plant (a spin
/// in every put, a comment) moves the exact counts alike at either level.
fn bisect_command(repo: &Path, good: &str, bad: &str, out_dir: &Path) -> std::process::Command {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_CACHE", out_dir.with_extension("cache"))
        .env("LMDB_REGRESS_OFFLINE", "1")
        .args(["bisect", "--good", good, "--bad", bad, "--workload", "write", "--entries", "2000"])
        .args(["--metric", "instructions", "--cflags", &unoptimised_cflags(), "--git"])
        .arg(repo)
        .arg("--out-dir")
        .arg(out_dir);
    c
}

fn bisect_by_instructions(repo: &Path, good: &str, bad: &str, out_dir: &Path) -> String {
    stdout(&run_ok(&mut bisect_command(repo, good, bad, out_dir)))
}

#[test]
fn bisect_with_instruction_counts_names_the_commit_that_slowed_puts() {
    let src = source_dir("LMDB_0.9.33");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let good = make_repo(&repo, &[("LMDB_0.9.33", &src)])[0].clone();
    let mut ids = Vec::new();
    for i in 0..3 {
        edit_mdb(&repo, |t| format!("{t}\n/* neutral change {i} */\n"));
        ids.push(commit(&repo, &format!("neutral {i}")));
    }
    edit_mdb(&repo, |t| {
        assert!(t.contains(PUT), "mdb_cursor_put's opening changed");
        t.replacen(PUT, &format!("{PUT}\t{{ volatile int spin; for (spin = 0; spin < 300; spin++) ; }}\n"), 1)
    });
    let slow = commit(&repo, "slow down every put");
    for i in 3..6 {
        edit_mdb(&repo, |t| format!("{t}\n/* neutral change {i} */\n"));
        ids.push(commit(&repo, &format!("neutral {i}")));
    }
    let bad = ids.last().unwrap().clone();
    let text = bisect_by_instructions(&repo, &good, &bad, &tmp.path().join("runs"));
    assert!(text.contains("confirm:"), "{text}");
    assert!(text.contains(&format!("commits: first bad is {slow}")), "{text}");
    assert!(text.contains("\"slow down every put\""), "{text}");
    // The commit's id once, and no position printed as "-0.00".
    let found = text.lines().find(|l| l.contains("first bad is")).unwrap();
    assert_eq!(found.matches(slow.as_str()).count(), 1, "{found}");
    assert!(!text.contains("-0.00"), "{text}");
    // 7 commits between: at most 3 probes by halving.
    let probes = text.lines().filter(|l| l.trim_start().starts_with("probe ")).count();
    assert!((1..=3).contains(&probes), "{probes} probes:\n{text}");
    printed_figures_are_the_counts_per_entry(&text, &tmp.path().join("runs"));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("runs/bisect.json")).unwrap()).unwrap();
    assert_eq!(summary["phases"][0]["phase"], "commits");
    let page = std::fs::read_to_string(tmp.path().join("runs/bisect.html")).unwrap();
    assert!(page.contains("Phase: commits") && page.contains(&format!("First bad: {slow}")), "{page}");
    // The step attributed: the function the spin went into first, with its commit's subject.
    let a = &summary["attribution"];
    assert_eq!(a["bad"], slow.as_str(), "{a}");
    assert!(a["subject"].as_str().unwrap().contains("slow down every put"), "{a}");
    let top = &a["workloads"][0]["functions"][0];
    assert_eq!(top["name"], "_mdb_cursor_put", "{a}");
    let grew = top["self"]["b"].as_f64().unwrap() - top["self"]["a"].as_f64().unwrap();
    assert!(grew >= 300.0, "a spin of 300 rounds adds at least 300 instructions per put: {top}");
    assert!(text.contains("Where the instructions of the step went") && text.contains("_mdb_cursor_put"), "{text}");
    assert!(page.contains("Where the instructions went"), "{page}");
}

/// An improvement is bisected as a slowdown is: a spin planted in mdb_cursor_put at the
/// good end, neutral commits, the commit that takes it out, neutral commits; the first
/// "bad" is the commit that made puts faster.
#[test]
fn bisect_finds_the_commit_that_made_puts_faster() {
    let src = source_dir("LMDB_0.9.33");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &src)]);
    let spin = format!("{PUT}\t{{ volatile int spin; for (spin = 0; spin < 300; spin++) ; }}\n");
    edit_mdb(&repo, |t| t.replacen(PUT, &spin, 1));
    let good = commit(&repo, "slow puts");
    for i in 0..2 {
        edit_mdb(&repo, |t| format!("{t}\n/* neutral change {i} */\n"));
        commit(&repo, &format!("neutral {i}"));
    }
    edit_mdb(&repo, |t| t.replacen(&spin, PUT, 1));
    let fast = commit(&repo, "speed up every put");
    edit_mdb(&repo, |t| format!("{t}\n/* neutral change 2 */\n"));
    let bad = commit(&repo, "neutral 2");
    let text = bisect_by_instructions(&repo, &good, &bad, &tmp.path().join("runs"));
    assert!(text.contains("faster: an improvement"), "{text}");
    assert!(text.contains(&format!("commits: first bad is {fast}")), "{text}");
    assert!(text.contains("\"speed up every put\""), "{text}");
}

/// The figures `confirm:` prints are each tag's instructions per entry, read here from the
/// confirming pass's run file itself: every sample's count over the entries its pass ran.
fn printed_figures_are_the_counts_per_entry(text: &str, runs: &Path) {
    let line = text.lines().find(|l| l.starts_with("confirm: ")).unwrap();
    let file = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("01-confirm-"))
        .expect("the confirming pass's run file");
    let records: Vec<serde_json::Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let entries = records[0]["config"]["entries"].as_f64().unwrap();
    let mut per_entry: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for s in records.iter().filter(|r| r["type"] == "sample") {
        let count = s["counts"]["Ir"].as_f64().expect("a counted sample");
        per_entry.entry(s["tag"].as_str().unwrap().to_string()).or_default().push(count / entries);
    }
    assert_eq!(per_entry.len(), 2, "{}", file.display());
    for (tag, values) in per_entry {
        // Exact counts repeat: every round of a tag has the same count.
        assert!(values.iter().all(|v| *v == values[0]), "{tag}: {values:?}");
        let shown = line.split(&format!("{tag} ")).nth(1).and_then(|r| r.split(' ').next()).unwrap();
        let printed: f64 = shown.parse().unwrap_or_else(|_| panic!("{tag}'s figure in {line:?}"));
        // Within the last printed decimal's rounding.
        let decimals = shown.split('.').nth(1).map_or(0, str::len) as i32;
        let within = (printed - values[0]).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9;
        assert!(within, "{tag}: printed {shown}, the run file gives {} ({line})", values[0]);
    }
}

#[test]
fn bisect_exits_1_when_it_cannot_confirm_the_slowdown() {
    let src = source_dir("LMDB_0.9.33");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let good = make_repo(&repo, &[("LMDB_0.9.33", &src)])[0].clone();
    edit_mdb(&repo, |t| format!("{t}\n/* neutral */\n"));
    let bad = commit(&repo, "neutral");
    let runs = tmp.path().join("runs");
    let o = bisect_command(&repo, &good, &bad, &runs).output().unwrap();
    let (text, e) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{text}{e}");
    let said = format!(
        "{bad} against {good} on write: 0.0% exact same: neither slower nor faster by more than 3%: nothing to bisect"
    );
    assert!(e.contains(&said), "{e}");
    assert!(!text.contains("probe 1"), "{text}");
    // What was measured is kept: the confirmation in bisect.json.
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(runs.join("bisect.json")).unwrap()).unwrap();
    assert_eq!(summary["confirmation"]["verdict"], "same", "{summary}");
    assert_eq!(summary["phases"], serde_json::json!([]));

    // The ends must be two commits, the older first: refused before anything is built.
    for (g, b, says) in [(&bad, &good, "it is newer, a descendant of it"), (&good, &good, "are the same commit")] {
        let o = bisect_command(&repo, g, b, &tmp.path().join("refused")).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says) && !tmp.path().join("refused").exists(), "{}", stderr(&o));
    }
}

#[test]
fn its_10406_offline_prints_every_section_and_marks_missing_tags() {
    // A cache holding only what the registries carry (of the claims' tags), built.
    let cache = cache_of(&["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.21", "LMDB_0.9.33"]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_CACHE", cache.path())
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["its-10406", "--entries", "2000", "--rounds", "6", "--target-ci", "1", "--out-dir"])
            .arg(out_dir.path()),
    );
    let text = stdout(&out);
    for section in [
        "ITS#10406 NATIVELY (MDB_APPEND WRITES PER TAG):",
        "Write Entry, rust engine",
        "The report's claims",
        "Not measured",
        "Test Environment",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80), "Bugzilla's 80 columns:\n{text}");
    // The title says what was found: two of the three claims need tags no registry has.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("OF 3 CLAIMS") && flat.contains("2 NOT MEASURED"), "{text}");
    let doc = its_json(out_dir.path());
    let claim = |from: &str, to: &str| -> serde_json::Value {
        doc["claims"].as_array().unwrap().iter().find(|c| c["from"] == from && c["to"] == to).unwrap().clone()
    };
    assert_eq!(claim("LMDB_0.9.18", "LMDB_0.9.19")["verdict"], "not measured");
    assert_eq!(claim("LMDB_0.9.18", "LMDB_0.9.20")["verdict"], "not measured");
    // The measured claim: the Hodges-Lehmann ratio of the per-round pairs in the run file,
    // computed here from the raw samples.
    let measured = claim("LMDB_0.9.17", "LMDB_0.9.33");
    let run = std::fs::read_dir(out_dir.path().join("runs")).unwrap().flatten().next().unwrap().path();
    let per_round = |tag: &str| -> std::collections::BTreeMap<u64, f64> {
        std::fs::read_to_string(&run)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "sample" && r["tag"] == tag && r["counted"] != true)
            .map(|r| (r["round"].as_u64().unwrap(), r["ns"].as_f64().unwrap()))
            .collect()
    };
    let header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&run).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["plan"]["target_ci"], 1.0, "--target-ci reaches the run's plan: {header}");
    let (a, b) = (per_round("LMDB_0.9.17"), per_round("LMDB_0.9.33"));
    assert_eq!(a.len(), 6, "one sample a round");
    let d: Vec<f64> = a.iter().map(|(r, x)| (b[r] / x).ln()).collect();
    let mut walsh: Vec<f64> =
        (0..d.len()).flat_map(|i| (i..d.len()).map(move |j| (i, j))).map(|(i, j)| (d[i] + d[j]) / 2.0).collect();
    walsh.sort_by(f64::total_cmp);
    assert_eq!(walsh.len(), 21);
    let hl = walsh[10].exp();
    assert!((measured["ratio"].as_f64().unwrap() - hl).abs() < 1e-9, "{measured} vs {hl}");
    // Six pairs cannot reach 1 - 0.05/3: no interval, so no claim of any kind.
    assert_eq!(measured["verdict"], "inconclusive", "{measured}");
    assert!(measured["ci_low"].is_null(), "{measured}");
    // Instruction counts stand beside time.
    assert!(measured["instructions_ratio"].as_f64().is_some(), "{measured}");
    assert!(text.contains("LMDB_0.9.19: tried") && text.contains("--git PATH"), "{text}");
    let files: Vec<String> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for ext in ["md", "txt", "json", "html", "svg"] {
        assert!(
            files.iter().any(|f| f.starts_with("its-10406-") && f.ends_with(&format!(".{ext}"))),
            "{ext}: {files:?}"
        );
    }
    let html = files.iter().find(|f| f.ends_with(".html")).unwrap();
    let page = std::fs::read_to_string(out_dir.path().join(html)).unwrap();
    assert!(page.contains("The report's claims"), "{page}");
    assert!(page.contains("<figure class=\"chart\">\n<svg"), "the write chart is inline");
    // The claims chart holds the one measured claim, its claimed size beside it.
    assert!(page.contains("ITS#10406's claims, rust engine, each against its own baseline"), "{page}");
    assert_eq!(page.matches("<line class=\"claimed\" data-label=\"0.9.17 → 0.9.33\"").count(), 1, "{page}");
    assert_eq!(page.matches("class=\"claimed\"").count(), 1, "{page}");
}

#[test]
fn its_10406_attributes_a_claim_that_reproduces_to_the_functions_that_carry_it() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = run_ok(
        lmdb_regress()
            .args(["its-10406", "--metric", "instructions", "--tags", "0.9.17,0.9.33", "--entries", "2000"])
            .arg("--out-dir")
            .arg(out_dir.path()),
    );
    let text = stdout(&out);
    assert!(text.contains("Where the instructions went: LMDB_0.9.33 against LMDB_0.9.17"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let doc = its_json(out_dir.path());
    let a = &doc["attributions"][0];
    assert_eq!((a["good"].as_str(), a["bad"].as_str()), (Some("LMDB_0.9.17"), Some("LMDB_0.9.33")), "{a}");
    let names: Vec<&str> =
        a["workloads"][0]["functions"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    // ITS#8557's search on every append, among the functions that moved most.
    assert!(names[..5].contains(&"mdb_page_search_root"), "{names:?}");
}

/// The JSON document its-10406 wrote into `dir`.
fn its_json(dir: &Path) -> serde_json::Value {
    let doc = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    serde_json::from_slice(&std::fs::read(doc).unwrap()).unwrap()
}
