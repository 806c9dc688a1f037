//! `history` over a repository made here: a few commits change a constant in the write path,
//! others change nothing measured or touch no library source; the history finds exactly the
//! planted steps, in one run and in two shards joined by `merge`.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::*;

const PUT: &str = "mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    unsigned int flags)\n{\n";
const SPIN: &str = "\t{ volatile int spin; for (spin = 0; spin < SPINS; spin++) ; }\n";

fn commit(repo: &Path, msg: &str) -> String {
    git(repo, &["commit", "-q", "-am", msg]);
    git(repo, &["rev-parse", "HEAD"])
}

/// Sets the number of idle turns every put takes (the first call adds the loop).
fn set_spins(repo: &Path, spins: u32) {
    let p = repo.join("libraries/liblmdb/mdb.c");
    let text = std::fs::read_to_string(&p).unwrap();
    let text = match text.find("spin < ") {
        Some(at) => {
            let end = at + 7 + text[at + 7..].find(';').unwrap();
            format!("{}spin < {spins}{}", &text[..at], &text[end..])
        }
        None => text.replacen(PUT, &format!("{PUT}{}", SPIN.replace("SPINS", &spins.to_string())), 1),
    };
    std::fs::write(&p, text).unwrap();
}

fn history(repo: &Path, range: &str, out_dir: &Path, extra: &[&str]) -> String {
    stdout(&run_ok(&mut history_command(repo, range, out_dir, extra)))
}

/// `history` of `range` by write at 2000 entries into `out_dir`, with `extra`. Unoptimised
/// (so is every extension, which must give the saved run's flags): each commit is a build
/// of its own, gcc -O0 compiles mdb.c about five times faster than -O2, and what the tests
/// plant (a spin in every put, comments) moves the exact counts alike at either level.
fn history_command(repo: &Path, range: &str, out_dir: &Path, extra: &[&str]) -> std::process::Command {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1")
        .args(["history", "--range", range, "--workloads", "write", "--entries", "2000", "--no-coverage"])
        .args(["--cflags", &unoptimised_cflags(), "--git"])
        .arg(repo)
        .arg("--out-dir")
        .arg(out_dir)
        .args(extra);
    c
}

/// `history --extend` of the history saved in `out_dir`, of write at `entries`, built as
/// [`history_command`] builds.
fn extend_command(repo: &Path, out_dir: &Path, entries: &str) -> std::process::Command {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1")
        .args(["history", "--range", "LMDB_0.9.33..HEAD", "--workloads", "write", "--entries", entries])
        .args(["--no-coverage", "--cflags", &unoptimised_cflags(), "--git"])
        .arg(repo)
        .arg("--extend")
        .arg(out_dir.join("history.json"));
    c
}

fn extend_saved(repo: &Path, out_dir: &Path, entries: &str, extra: &[&str]) -> std::process::Output {
    extend_command(repo, out_dir, entries).args(extra).output().unwrap()
}

/// A repository of LMDB_0.9.33 and one commit after it, and the history of that range saved
/// under `at`: the repository, the history's folder, its history.json and the commit. Each
/// test gets its own copy of one history measured once ([`measured_once`]): the repository
/// and the folder copied, the builds linked into the test's own cache.
pub(crate) fn saved_history(at: &Path) -> (PathBuf, PathBuf, Vec<u8>, String) {
    let (once, last) = measured_once();
    let (repo, out_dir) = (at.join("openldap"), at.join("history"));
    copy_tree(&once.join("openldap"), &repo, false);
    copy_tree(&once.join("history"), &out_dir, false);
    copy_tree(&once.join("cache/builds"), &test_cache().join("builds"), true);
    let saved = std::fs::read(out_dir.join("history.json")).unwrap();
    (repo, out_dir, saved, last.clone())
}

/// The history [`saved_history`] copies, measured by the first test that asks, with a cache
/// of its own (under target/, kept while the tests run); its folder and last commit.
fn measured_once() -> &'static (PathBuf, String) {
    static ONCE: OnceLock<(PathBuf, String)> = OnceLock::new();
    ONCE.get_or_init(|| {
        let at = Path::new(env!("CARGO_TARGET_TMPDIR")).join("saved-history");
        if at.exists() {
            std::fs::remove_dir_all(&at).unwrap();
        }
        let repo = at.join("openldap");
        make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
        let p = repo.join("libraries/liblmdb/mdb.c");
        std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* a comment */\n").unwrap();
        let last = commit(&repo, "a comment in mdb.c");
        let mut c = history_command(&repo, "LMDB_0.9.33..HEAD", &at.join("history"), &[]);
        run_ok(c.env("LMDB_REGRESS_CACHE", at.join("cache")));
        (at, last)
    })
}

fn write_steps(out_dir: &Path) -> Vec<String> {
    let h: serde_json::Value = serde_json::from_slice(&std::fs::read(out_dir.join("history.json")).unwrap()).unwrap();
    let series = h["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{h}");
    series[0]["steps"].as_array().unwrap().iter().map(|s| s["commit"].as_str().unwrap().to_string()).collect()
}

#[test]
fn history_finds_exactly_the_planted_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let p = repo.join("libraries/liblmdb/mdb.c");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* a comment */\n").unwrap();
    commit(&repo, "a comment in mdb.c");
    std::fs::write(repo.join("README"), "not a library source\n").unwrap();
    let readme = commit(&repo, "docs only");
    set_spins(&repo, 200);
    let first = commit(&repo, "ITS#1234 spin in every put");
    let p = repo.join("libraries/liblmdb/midl.h");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* a comment */\n").unwrap();
    commit(&repo, "a comment");
    set_spins(&repo, 600);
    let second = commit(&repo, "spin three times as long");
    let out_dir = tmp.path().join("history");
    let text = history(&repo, "LMDB_0.9.33..HEAD", &out_dir, &[]);
    assert_eq!(write_steps(&out_dir), [first.clone(), second.clone()], "{text}");
    // The docs-only commit is no point of the history; the others are (the start and four).
    assert!(text.contains("4 commits from the start, 0 not measured"), "{text}");
    let h = std::fs::read_to_string(out_dir.join("history.json")).unwrap();
    assert!(!h.contains(&readme), "{h}");
    let first_row = text.lines().find(|l| l.contains(&first[..10]) && l.contains(" +"));
    assert!(first_row.is_some_and(|l| l.contains("ITS#1234") && l.contains("ITS#1234 spin")), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let page = std::fs::read_to_string(out_dir.join("history.html")).unwrap();
    assert!(page.contains("<svg") && page.contains(&first[..10]) && page.contains("ITS#1234"), "{page}");
    // Beside each level, every commit against the one before, against a line at 1.0.
    let series = page.matches("<h2").count();
    assert_eq!(page.matches("<svg class=\"ratio-chart\"").count(), series, "{page}");
    assert_eq!(page.matches("<line class=\"reference\" data-ratio=\"1\"").count(), series, "{page}");
    // Each step attributed: the spin went into the put, and nothing else moved much.
    let json: serde_json::Value = serde_json::from_str(&h).unwrap();
    let write = json["series"].as_array().unwrap().iter().find(|s| s["workload"] == "write").unwrap();
    for step in write["steps"].as_array().unwrap() {
        let top = &step["functions"][0];
        assert_eq!(top["name"], "_mdb_cursor_put", "{step}");
        assert!(top["self"]["b"].as_f64() > top["self"]["a"].as_f64(), "{step}");
    }
    assert!(text.contains("_mdb_cursor_put (self "), "{text}");

    // A site holds the history: its page beside the runs, a row in the index.
    let site = tmp.path().join("site");
    run_ok(lmdb_regress().arg("site").arg(&site).arg(out_dir.join("history.json")));
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let page_name = "history-LMDB_0.9.33..HEAD.html";
    assert!(index.contains("Histories") && index.contains(&format!("href=\"{page_name}\"")), "{index}");
    let page = std::fs::read_to_string(site.join(page_name)).unwrap();
    assert!(page.contains("<svg") && page.contains(&first[..10]), "{page}");
    // Another JSON is refused by name, not rendered.
    let stray = tmp.path().join("stray.json");
    std::fs::write(&stray, "{}").unwrap();
    let out = lmdb_regress().arg("site").arg(tmp.path().join("site2")).arg(&stray).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("is not a history.json"), "{err}");

    // Two shards, merged, give the same history.
    let shards = tmp.path().join("shards");
    for k in ["1/2", "2/2"] {
        history(
            &repo,
            "LMDB_0.9.33..HEAD",
            &shards,
            &["--shard", k, "--out", &format!("{}/{}.jsonl", shards.display(), &k[..1])],
        );
    }
    let merged = shards.join("merged.jsonl");
    run_ok(
        lmdb_regress().arg("merge").arg(shards.join("1.jsonl")).arg(shards.join("2.jsonl")).arg("--out").arg(&merged),
    );
    let from = tmp.path().join("from");
    history(&repo, "LMDB_0.9.33..HEAD", &from, &["--from", merged.to_str().unwrap()]);
    assert_eq!(write_steps(&from), [first.clone(), second]);

    // A run file is rendered only as the history of the range it measured.
    let refused = tmp.path().join("refused");
    let sub_range = format!("{first}..HEAD");
    for (range, file, says) in [
        (sub_range.as_str(), merged.clone(), "which the range does not hold"),
        ("LMDB_0.9.33..HEAD", shards.join("1.jsonl"), "a shard's file? `merge` every shard first"),
        ("LMDB_0.9.33..HEAD", testdata("run-fixed.jsonl"), "LMDB_0.9.17, LMDB_0.9.18, LMDB_0.9.19, …"),
    ] {
        let out = lmdb_regress()
            .args(["history", "--range", range, "--git"])
            .arg(&repo)
            .arg("--out-dir")
            .arg(&refused)
            .arg("--from")
            .arg(&file)
            .output()
            .unwrap();
        let e = stderr(&out);
        assert!(!out.status.success() && e.contains(&format!("is not a history of {range}")), "{e}");
        assert!(e.contains(says) && !refused.exists(), "{range}: {e}");
    }
    // Nor written over: --from one of the history's own outputs.
    let e = stderr(
        &lmdb_regress()
            .args(["history", "--range", "LMDB_0.9.33..HEAD", "--force", "--git"])
            .arg(&repo)
            .arg("--out-dir")
            .arg(&from)
            .arg("--from")
            .arg(from.join("history.json"))
            .output()
            .unwrap(),
    );
    assert!(e.contains("which this command reads"), "{e}");
}

/// A history by time with adaptive rounds is refused before anything is built: its steps
/// between neighbouring commits would be judged on the rounds both happened to share. By
/// instructions, history's default, adaptive rounds do not apply and nothing is refused
/// for them (this range fails on its own account).
#[test]
fn history_by_time_refuses_adaptive_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let history = |metric: &[&str]| {
        let out = lmdb_regress()
            .args(["history", "--range", "LMDB_0.9.33..HEAD", "--adaptive", "on"])
            .args(metric)
            .arg("--git")
            .arg(&repo)
            .arg("--out-dir")
            .arg(tmp.path().join("out"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        stderr(&out)
    };
    let e = history(&["--metric", "time"]);
    assert!(e.contains("run history without --adaptive"), "{e}");
    let e = history(&[]);
    assert!(!e.contains("--adaptive") && e.contains("HEAD are the same commit"), "{e}");
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn bad_ranges_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    for (range, says) in [("LMDB_0.9.33", "is not A..B"), ("LMDB_0.9.33..nosuch", "has no commit or tag nosuch")] {
        let out = lmdb_regress().args(["history", "--range", range, "--git"]).arg(&repo).output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(says), "{range}: {}", stderr(&out));
    }
    std::fs::write(repo.join("README"), "not a library source\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "docs only"]);
    for (range, says) in [
        ("LMDB_0.9.33..HEAD", "touches liblmdb's library sources"),
        ("HEAD..LMDB_0.9.33", "runs backwards: LMDB_0.9.33 is older than HEAD (give LMDB_0.9.33..HEAD)"),
        ("HEAD..HEAD", "HEAD and HEAD are the same commit"),
    ] {
        let out = lmdb_regress().args(["history", "--range", range, "--git"]).arg(&repo).output().unwrap();
        assert!(!out.status.success() && stderr(&out).contains(says), "{range}: {}", stderr(&out));
    }
}

#[test]
fn extend_measures_only_the_new_commits_and_gates_their_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, out_dir, saved, saved_last) = saved_history(tmp.path());
    // Commits land after the saved history: a step among them.
    set_spins(&repo, 200);
    let step = commit(&repo, "ITS#1234 spin in every put");
    let p = repo.join("libraries/liblmdb/midl.h");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* a comment */\n").unwrap();
    let quiet = commit(&repo, "a comment");
    let extend = |gate: &str| extend_saved(&repo, &out_dir, "2000", &["--fail-on", gate]);
    let o = extend("slower:2%");
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(3), "{out}\n{err}");
    // Only the new commits were measured, in a run of their own beside the saved one.
    let added = out_dir.join(format!("history-after-{}.jsonl", &saved_last[..10]));
    let run: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&added).unwrap().lines().next().unwrap()).unwrap();
    let tags: Vec<&str> = run["tags"].as_array().unwrap().iter().map(|t| t["tag"].as_str().unwrap()).collect();
    assert_eq!(tags, [&step[..10], &quiet[..10]], "{run}");
    // The step is new, and the gate judged the new commits only.
    assert!(out.contains("extended: 2 new commits after") && out.contains(&format!("{} (new)", &step[..10])), "{out}");
    let failed = format!("failed: write (rust) {} against {}: instructions +", &step[..10], &saved_last[..10]);
    assert!(err.contains(&failed), "{err}");
    // Two commits, each by instructions and the six space figures of its write.
    assert!(err.contains("gate slower:2%: FAILED, 1 of 14 comparisons beyond it"), "{err}");
    let h: serde_json::Value = serde_json::from_slice(&std::fs::read(out_dir.join("history.json")).unwrap()).unwrap();
    assert_eq!(h["points"].as_array().unwrap().len(), 4, "{h}");
    assert_ne!(std::fs::read(out_dir.join("history.json")).unwrap(), saved);
    // Nothing new since: nothing measured, and nothing to fail.
    let o = extend("slower:2%");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to measure"), "{}", stderr(&o));
}

#[test]
fn extend_refuses_another_line_and_leaves_the_history_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, out_dir, saved, _) = saved_history(tmp.path());
    // Another line: the saved commit is no longer on HEAD's first-parent line.
    git(&repo, &["reset", "-q", "--hard", "HEAD~1"]);
    let p = repo.join("libraries/liblmdb/mdb.c");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n/* another */\n").unwrap();
    commit(&repo, "another comment");
    let o = extend_saved(&repo, &out_dir, "2000", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not the line"), "{}", stderr(&o));
    assert_eq!(std::fs::read(out_dir.join("history.json")).unwrap(), saved, "nothing rewritten");
    // A setting that differs from the saved run's is refused, naming it.
    let o = extend_saved(&repo, &out_dir, "4000", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--entries 4000 (the run file: 2000)"), "{}", stderr(&o));
    assert_eq!(std::fs::read(out_dir.join("history.json")).unwrap(), saved, "nothing rewritten");
    // A history measured on another CPU model: refused naming both, unless allowed (then the
    // next check, of the line, speaks).
    let h: serde_json::Value = serde_json::from_slice(&saved).unwrap();
    let run = out_dir.join(h["run"].as_str().unwrap());
    let text = std::fs::read_to_string(&run).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(first).unwrap();
    let here = header["environment"]["cpu_model"].as_str().unwrap().to_string();
    header["environment"]["cpu_model"] = "Planted CPU @ 1.00GHz".into();
    std::fs::write(&run, format!("{header}\n{rest}")).unwrap();
    let extend = |extra: &[&str]| extend_saved(&repo, &out_dir, "2000", extra);
    let o = extend(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let says = format!("was measured on Planted CPU @ 1.00GHz, and this machine is {here}");
    let planted = header["environment"]["processor"].is_object();
    let says = if planted { says.replace(", and", &format!(" ({}), and", processor(&header))) } else { says };
    assert!(stderr(&o).contains(&says) && stderr(&o).contains("--allow-other-cpu"), "{}", stderr(&o));
    // The same model name on another generation (a VM's "AMD EPYC"): refused too.
    if planted {
        header["environment"]["cpu_model"] = here.clone().into();
        header["environment"]["processor"]["model"] = 1.into();
        std::fs::write(&run, format!("{header}\n{rest}")).unwrap();
        let o = extend(&[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let says = format!("was measured on {here} ({}), and this machine is {here} (", processor(&header));
        assert!(stderr(&o).contains(&says), "{}", stderr(&o));
    }
    let o = extend(&["--allow-other-cpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("extending it anyway (--allow-other-cpu)"), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not the line"), "{}", stderr(&o));
    assert_eq!(std::fs::read(out_dir.join("history.json")).unwrap(), saved, "nothing rewritten");
    std::fs::write(&run, text).unwrap();
    // A folder in the way of a file the extension rewrites: refused before anything is
    // measured, and the saved history still names a run file that loads.
    std::fs::remove_file(out_dir.join("history.html")).unwrap();
    std::fs::create_dir(out_dir.join("history.html")).unwrap();
    let o = extend_saved(&repo, &out_dir, "2000", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("history.html is a folder"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("extending"), "nothing measured: {}", stderr(&o));
    assert_eq!(std::fs::read(out_dir.join("history.json")).unwrap(), saved, "nothing rewritten");
    run_ok(lmdb_regress().arg("report").arg(&run).args(["--format", "text"]));
    std::fs::remove_dir(out_dir.join("history.html")).unwrap();
    std::fs::write(out_dir.join("history.html"), "").unwrap();

    // A history whose `run` names a run of tags, not of its commits: refused, nothing measured.
    let tags = out_dir.join("tags.jsonl");
    run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["run", "--tags", "LMDB_0.9.33", "--workloads", "write", "--entries", "2000", "--rounds", "1"])
            .args(["--metric", "instructions", "--cflags", &unoptimised_cflags(), "--git"])
            .arg(&repo)
            .arg("--out")
            .arg(&tags),
    );
    let mut other = h.clone();
    other["run"] = "tags.jsonl".into();
    std::fs::write(out_dir.join("history.json"), serde_json::to_vec_pretty(&other).unwrap()).unwrap();
    let o = extend_saved(&repo, &out_dir, "2000", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let says = format!("its `run` names {}, which is not this history's own run file", tags.display());
    assert!(stderr(&o).contains(&says) && stderr(&o).contains("it measures LMDB_0.9.33"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("extending"), "nothing measured: {}", stderr(&o));
    std::fs::write(out_dir.join("history.json"), &saved).unwrap();

    // `--from` a pipe: refused before it is opened for reading (nothing writes it).
    let fifo = tmp.path().join("run.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a path of our own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let o = lmdb_regress()
        .env("LMDB_REGRESS_OFFLINE", "1")
        .args(["history", "--range", "LMDB_0.9.33..HEAD", "--git"])
        .arg(&repo)
        .arg("--out-dir")
        .arg(tmp.path().join("from"))
        .arg("--from")
        .arg(&fifo)
        .output()
        .unwrap();
    assert!(stderr(&o).contains(&format!("{} is not a regular file", fifo.display())), "{}", stderr(&o));
}

#[test]
fn ctrl_c_during_extend_leaves_the_history_as_it_was_and_says_extend_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, out_dir, saved, _) = saved_history(tmp.path());
    set_spins(&repo, 50);
    commit(&repo, "spin in every put");
    let hold = tmp.path().join("hold");
    std::fs::create_dir(&hold).unwrap();
    let bin = crate::safety::held_valgrind(&hold);
    let c = extend_command(&repo, &out_dir, "2000");
    let o = crate::safety::interrupted_at_first_count(c, &hold, &bin);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("which never joins the history") && e.contains("extend it again with"), "{e}");
    assert!(e.contains("--extend") && !e.contains("run --resume"), "no resume of a file that never joins: {e}");
    assert_eq!(std::fs::read(out_dir.join("history.json")).unwrap(), saved, "the history is as it was");
}

/// A header's recorded processor as reports name it: "family 25, model 17, stepping 1; L1d 32 KiB, …".
fn processor(header: &serde_json::Value) -> String {
    let p: lmdb_regress::environment::Processor =
        serde_json::from_value(header["environment"]["processor"].clone()).unwrap();
    p.to_string()
}
