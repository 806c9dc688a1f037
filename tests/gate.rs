//! The regression gate (`--fail-on`) on crafted run files (testdata/make-findings-runs.py):
//! exit 3 for a regression beyond it, 0 for one just inside it and for an undecided one
//! (with a warning naming the rounds that would decide it), 1 when the tool fails.

use std::process::Output;

use crate::common::*;

fn gated(args: &[&str]) -> Output {
    lmdb_regress().args(args).output().expect("binary runs")
}

fn file(name: &str) -> String {
    testdata(&format!("findings-{name}.jsonl")).display().to_string()
}

fn status(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn a_clear_regression_fails_the_gate_with_status_3() {
    let o = gated(&["report", &file("step"), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(3), "{err}");
    // write is 10% slower and does 23.3% more instructions from 0.9.21 on: both fail.
    for tag in ["LMDB_0.9.21", "LMDB_0.9.22", "LMDB_0.9.23"] {
        let time = format!("failed: write (rust) {tag} against LMDB_0.9.17: time +10.");
        let counts = format!(
            "failed: write (rust) {tag} against LMDB_0.9.17: instructions +23.3% exact, every count above +2.0%"
        );
        assert!(err.contains(&time) && err.contains(&counts), "{tag}:\n{err}");
    }
    let head = "gate slower:2%: FAILED, 6 of 16 comparisons beyond it; 2 tags not measured, so not judged\n";
    assert!(err.starts_with(head), "{err}");
    // The tags asked for and not built are said, not passed over; their one reason once.
    assert!(
        err.contains("not judged: LMDB_0.9.19, LMDB_0.9.20 (tried registries: no registry package carries this tag"),
        "{err}"
    );
    assert!(
        err.lines().last().unwrap().starts_with("regression beyond the gate slower:2%: 6 of 16 comparisons beyond it"),
        "{err}"
    );
    assert!(!err.contains("error:"), "a regression is no error of the tool's:\n{err}");
    // The report itself is on stdout, as without a gate.
    assert!(stdout(&o).contains("## Findings"));
    // A gate above the step passes it.
    let o = gated(&["report", &file("step"), "--fail-on", "slower:25%"]);
    assert_eq!(status(&o), Some(0), "{}", stderr(&o));
}

#[test]
fn a_change_just_inside_the_gate_passes_it() {
    let o = gated(&["report", &file("just-inside"), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(0), "{err}");
    let head = "gate slower:2%: passed, none of 16 comparisons beyond it; 2 tags not measured, so not judged\n";
    assert!(err.starts_with(head), "{err}");
    assert!(!err.contains("warning:"), "the intervals lie wholly inside the gate:\n{err}");
    // The same change is beyond a gate below it: the file does hold a resolved slowdown.
    let o = gated(&["report", &file("just-inside"), "--fail-on", "slower:0.5%"]);
    assert_eq!(status(&o), Some(3), "{}", stderr(&o));
}

#[test]
fn an_undecided_comparison_warns_with_the_rounds_that_would_decide_it() {
    // One workload of eight noisy rounds: one table, whose intervals reach past +2%.
    let dir = tempfile::tempdir().unwrap();
    let readseq = one_workload(dir.path(), "findings-none.jsonl", "readSeq");
    let o = gated(&["report", readseq.to_str().unwrap(), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(0), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert!(!warnings.is_empty(), "eight noisy rounds leave intervals that reach past +2%:\n{err}");
    let head = format!(
        "gate slower:2%: passed, none of 8 comparisons beyond it; {} warnings; 2 tags not measured, so not judged\n",
        warnings.len()
    );
    assert!(err.starts_with(&head), "{err}");
    for w in &warnings {
        assert!(w.contains(": time ") && w.contains("the interval reaches past +2.0%: about "), "{w}");
        assert!(w.ends_with("rounds would decide it (this comparison has 8)"), "{w}");
    }
    // Instruction counts are flat: none of them warns.
    assert!(!warnings.iter().any(|w| w.contains("instructions")), "{err}");
    // Both workloads are two tables sharing the run's error: eight rounds give no interval
    // at that level, and the gate says so of every time comparison.
    let o = gated(&["report", &file("none"), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(0), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 8, "{err}");
    assert!(warnings.iter().all(|w| w.ends_with("too few rounds (8) for an interval at this level")), "{err}");
}

#[test]
fn compare_gates_the_new_run_against_the_old() {
    let o = gated(&["compare", &file("none"), &file("step"), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    // Two separate runs, and the old one noisy: the gate names what it judged.
    assert!(matches!(status(&o), Some(0 | 3)), "{err}");
    assert!(err.starts_with("gate slower:2%: "), "{err}");
    assert!(err.contains("write (rust) LMDB_0.9.21, new run against old: time"), "{err}");
    let o = gated(&["compare", &file("step"), &file("step"), "--fail-on", "slower:2%"]);
    assert_eq!(status(&o), Some(0), "a run against itself: {}", stderr(&o));
}

#[test]
fn compare_refuses_a_gate_over_runs_measured_differently_and_warns_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.jsonl");
    let text = std::fs::read_to_string(file("step")).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    assert!(header.contains("\"entries\":1000000,") && header.contains("\"metric\":\"time\","), "{header}");
    let header = header
        .replace("\"entries\":1000000,", "\"entries\":2000000,")
        .replace("\"metric\":\"time\",", "\"metric\":\"time\",\"pairing\":\"chunks\",\"chunk\":10000,");
    std::fs::write(&other, format!("{header}\n{rest}")).unwrap();
    let o = gated(&["compare", &file("step"), other.to_str().unwrap(), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(1), "{err}");
    assert!(err.starts_with("error: ") && err.contains("were measured differently ("), "{err}");
    assert!(err.contains("entries: 1000000 → 2000000") && err.contains("pairing: process → chunks"), "{err}");
    assert!(stdout(&o).is_empty(), "no report for a refused gate: {}", stdout(&o));
    // Without a gate: the comparison, with the warnings.
    let o = gated(&["compare", &file("step"), other.to_str().unwrap()]);
    assert_eq!(status(&o), Some(0), "{}", stderr(&o));
    let out = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.contains("Warning: the runs used different workload settings (entries: 1000000 → 2000000)"), "{out}");
    assert!(out.contains("Warning: the runs differ in pairing (old: process, new: chunks)"), "{out}");
}

#[test]
fn a_failure_of_the_tool_under_a_gate_is_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"type\":\"header\",\"schema\":1,\n").unwrap();
    let o = gated(&["report", broken.to_str().unwrap(), "--fail-on", "slower:2%"]);
    assert_eq!(status(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    // Without a gate the same failure keeps its status 2.
    let o = gated(&["report", broken.to_str().unwrap()]);
    assert_eq!(status(&o), Some(2), "{}", stderr(&o));
    let o = gated(&["compare", broken.to_str().unwrap(), &file("step"), "--fail-on", "slower:2%"]);
    assert_eq!(status(&o), Some(1), "{}", stderr(&o));
}

#[test]
fn a_bad_threshold_is_refused_with_what_to_give() {
    for (bad, says) in [
        ("slower:abc", "\"abc\" is not a percentage"),
        ("slower:2", "needs its percent sign (slower:2%)"),
        ("faster:2%", "the gate fails on regressions only"),
        ("slower:-2%", "a finite percentage of 0 or more"),
    ] {
        let o = gated(&["report", &file("step"), "--fail-on", bad]);
        assert_eq!(status(&o), Some(1), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{bad}: {}", stderr(&o));
    }
}

const OPEN: &str = "mdb_env_open(MDB_env *env, const char *path, unsigned int flags, mdb_mode_t mode)\n{\n";
const PUT: &str = "mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    unsigned int flags)\n{\n";

/// A commit after LMDB_0.9.33 whose puts spin whenever `toggle` existed as their environment
/// was opened: a slowdown the test takes away between the two runs of one command.
fn planted(repo: &std::path::Path, toggle: &std::path::Path) -> String {
    make_repo(repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    plant(repo, toggle)
}

/// That spin, committed on top of `repo`'s HEAD.
fn plant(repo: &std::path::Path, toggle: &std::path::Path) -> String {
    let p = repo.join("libraries/liblmdb/mdb.c");
    let text = std::fs::read_to_string(&p).unwrap();
    let check = format!("{OPEN}\tplanted = access(\"{}\", F_OK) == 0;\n", toggle.display());
    let spin = format!("{PUT}\tif (planted) {{ volatile int spin; for (spin = 0; spin < 3000; spin++) ; }}\n");
    let text = text
        .replacen("#include <unistd.h>\n", "#include <unistd.h>\nstatic int planted;\n", 1)
        .replacen(OPEN, &check, 1)
        .replacen(PUT, &spin, 1);
    assert!(text.contains("static int planted;") && text.contains("if (planted)"), "the plant took");
    std::fs::write(&p, text).unwrap();
    git(repo, &["commit", "-q", "-am", "spin in every put while the toggle exists"]);
    git(repo, &["rev-parse", "HEAD"])
}

/// `run --fail-on slower:2% --confirm` over LMDB_0.9.33 and the planted commit; when
/// `take_away`, the toggle is removed as the second run is announced. Its status and stderr.
fn confirmed_run(
    repo: &std::path::Path,
    commit: &str,
    out: &std::path::Path,
    toggle: &std::path::Path,
    take_away: bool,
) -> (Option<i32>, String) {
    let mut cmd = lmdb_regress();
    cmd.args(["run", "--workloads", "write", "--entries", "2000", "--rounds", "12", "--layouts", "fixed"])
        .args(["--fail-on", "slower:2%", "--confirm", "--git"])
        .arg(repo)
        .arg("--tags")
        .arg(format!("LMDB_0.9.33,{commit}"))
        .arg("--out")
        .arg(out);
    toggled(cmd, toggle, take_away)
}

/// `cmd` (offline) run with `toggle` in place; when `take_away`, the toggle is removed as the
/// second run is announced, before it builds or measures anything. Its status and stderr.
fn toggled(mut cmd: std::process::Command, toggle: &std::path::Path, take_away: bool) -> (Option<i32>, String) {
    use std::io::BufRead;
    std::fs::write(toggle, "").unwrap();
    let mut child = cmd
        .env("LMDB_REGRESS_OFFLINE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut err = String::new();
    for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if take_away && line.contains("again in a second run") {
            std::fs::remove_file(toggle).unwrap();
        }
        err += &line;
        err.push('\n');
    }
    (child.wait().unwrap().code(), err)
}

#[test]
fn confirm_fails_only_what_a_second_run_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, toggle) = (tmp.path().join("openldap"), tmp.path().join("slow"));
    let commit = planted(&repo, &toggle);
    // The slowdown is there in the first run only: not counted.
    let (status, err) = confirmed_run(&repo, &commit[..10], &tmp.path().join("once.jsonl"), &toggle, true);
    assert_eq!(status, Some(0), "{err}");
    assert!(err.contains("1 comparison beyond the gate slower:2%: measuring write again in a second run"), "{err}");
    assert!(
        err.contains("beyond +2.0% in the first run, but not in the second that measured it again (time "),
        "{err}"
    );
    assert!(err.contains("gate slower:2%: passed, none of 7 comparisons beyond it; 1 warning"), "{err}");
    assert!(tmp.path().join("once-confirm.jsonl").is_file(), "the second run has a file of its own beside the first");
    assert!(err.contains("coverage: not measured (a confirming run: the first run measured it)"), "{err}");
    // The slowdown stays: both runs fail it.
    let (status, err) = confirmed_run(&repo, &commit[..10], &tmp.path().join("twice.jsonl"), &toggle, false);
    assert_eq!(status, Some(3), "{err}");
    assert!(err.contains("beyond +2.0% in both runs (the second: time +"), "{err}");
}

/// `history --fail-on slower:2% --confirm` from LMDB_0.9.33 to HEAD (with `extra`), into
/// `out_dir`; when `take_away`, the toggle is removed as the second run is announced.
/// Unoptimised, as tests/history.rs's saved history is (an extension gives its flags).
fn confirmed_history(
    repo: &std::path::Path,
    out_dir: &std::path::Path,
    toggle: &std::path::Path,
    take_away: bool,
    extra: &[&std::ffi::OsStr],
) -> (Option<i32>, String) {
    let mut cmd = lmdb_regress();
    cmd.args(["history", "--range", "LMDB_0.9.33..HEAD", "--workloads", "write", "--entries", "2000"])
        .args(["--fail-on", "slower:2%", "--confirm", "--no-coverage", "--cflags", &unoptimised_cflags(), "--git"])
        .arg(repo)
        .args(extra);
    if extra.is_empty() {
        cmd.arg("--out-dir").arg(out_dir);
    }
    toggled(cmd, toggle, take_away)
}

#[test]
fn history_confirm_fails_only_the_steps_a_second_run_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, toggle) = (tmp.path().join("openldap"), tmp.path().join("slow"));
    let commit = planted(&repo, &toggle);
    let step = &commit[..10];
    // The step is there in the first run only: not counted.
    let (status, err) = confirmed_history(&repo, &tmp.path().join("once"), &toggle, true, &[]);
    assert_eq!(status, Some(0), "{err}");
    let again = format!(
        "beyond the gate slower:2%: measuring write again in a second run ({step} against the commit before it)"
    );
    assert!(err.contains(&again), "{err}");
    assert!(err.contains(&format!("write (rust) {step} against ")), "{err}");
    assert!(err.contains("in the first run, but not in the second that measured it again (instructions "), "{err}");
    assert!(err.contains("gate slower:2%: passed, none of "), "{err}");
    assert!(tmp.path().join("once/history-confirm.jsonl").is_file(), "the second run has a file of its own");
    // The step stays: both runs fail it.
    let (status, err) = confirmed_history(&repo, &tmp.path().join("twice"), &toggle, false, &[]);
    assert_eq!(status, Some(3), "{err}");
    assert!(err.contains("in both runs (the second: instructions +"), "{err}");
}

#[test]
fn history_extend_confirm_measures_a_new_failing_step_again() {
    let tmp = tempfile::tempdir().unwrap();
    let toggle = tmp.path().join("slow");
    // LMDB_0.9.33, a comment in mdb.c, and the history of the two, saved.
    let (repo, out_dir, _, _) = crate::history::saved_history(tmp.path());
    // A step lands after the saved history: there in the extension's run only.
    let step = plant(&repo, &toggle);
    let saved = out_dir.join("history.json");
    let (status, err) = confirmed_history(&repo, &out_dir, &toggle, true, &["--extend".as_ref(), saved.as_os_str()]);
    assert_eq!(status, Some(0), "{err}");
    let again = format!("measuring write again in a second run ({} against the commit before it)", &step[..10]);
    assert!(err.contains(&again), "{err}");
    assert!(err.contains("in the first run, but not in the second that measured it again (instructions "), "{err}");
    assert!(out_dir.join("history-confirm.jsonl").is_file(), "the second run has a file of its own");
}

#[test]
fn the_github_format_is_one_bounded_document_with_the_verdict_first() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let github = |file: &str, gate: &[&str]| {
        lmdb_regress()
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_SERVER_URL", "https://github.example")
            .env("GITHUB_REPOSITORY", "owner/binding")
            .env("GITHUB_RUN_ID", "42")
            .args(["report", file, "--format", "github"])
            .args(gate)
            .output()
            .expect("binary runs")
    };
    let o = github(&file("step"), &["--fail-on", "slower:2%"]);
    assert_eq!(status(&o), Some(3), "{}", stderr(&o));
    let doc = stdout(&o);
    assert!(doc.starts_with("### gate slower:2%: FAILED, 6 of 16 comparisons beyond it; 2 tags not"), "{doc}");
    assert!(doc.len() <= lmdb_regress::report::github::LIMIT);
    // What failed in a short table, the whole report collapsed after it.
    let table = doc.find("| failed | write (rust) LMDB_0.9.21 against LMDB_0.9.17 | time +").unwrap();
    let details = doc.find("<details>\n<summary>The whole report</summary>").unwrap();
    assert!(table < details && doc.trim_end().ends_with("</details>"), "{doc}");
    assert!(doc.contains("Run file: `findings-step.jsonl`, in [this run's artifacts](https://github.example/owner/binding/actions/runs/42#artifacts)."));
    // Two tags not built for one reason: the reason is said once, naming both.
    let reason = "(tried registries: no registry package carries this tag; supply it with --git PATH)";
    assert_eq!(doc.matches(reason).count(), 1, "{doc}");
    assert!(doc.contains(&format!("- not judged: LMDB_0.9.19, LMDB_0.9.20 {reason}")), "{doc}");
    golden("findings-step-github.md", &doc);
    // The job's summary gets the same document.
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), doc);
    // Without a gate, the findings stand first.
    let o = github(&file("none"), &[]);
    assert_eq!(status(&o), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("### lmdb-regress: no gate was given (`--fail-on slower:PCT%`)\n\n- "),
        "{}",
        stdout(&o)
    );
}

#[test]
fn its_10406_gates_every_tag_against_its_baseline_after_writing_its_reports() {
    let dir = tempfile::tempdir().unwrap();
    let summary = tempfile::tempdir().unwrap();
    let mut cmd = lmdb_regress();
    cmd.env("LMDB_REGRESS_OFFLINE", "1")
        .args(["its-10406", "--tags", "0.9.18,0.9.33", "--entries", "2000", "--rounds", "6", "--layouts", "fixed"])
        .args(["--no-instructions", "--fail-on", "slower:50%", "--format", "github", "--out-dir"])
        .arg(dir.path());
    // Printed as a pull request's document, the gate's verdict first (tests/github.rs checks it).
    let (code, doc) = crate::github::github_document(&mut cmd, summary.path());
    // One pair: 0.9.33's writes against 0.9.18's (0.9.17 is not measured here), by time and
    // by the six space figures a write leaves.
    assert!(doc.starts_with("### gate slower:50%: passed, none of 7 comparisons beyond it"), "{doc}");
    assert!(doc.contains("# ITS#10406") && doc.contains("Run file: `its-10406-"), "{doc}");
    assert_eq!(code, Some(0), "{doc}");
    let written = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .count();
    assert_eq!(written, 1, "the reports are written before the gate judges");
}

#[test]
fn a_gate_that_judged_nothing_is_no_pass() {
    // The step run with one tag's samples alone: nothing is compared.
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one-tag.jsonl");
    let text = std::fs::read_to_string(file("step")).unwrap();
    let kept: Vec<&str> =
        text.lines().filter(|l| !l.contains("\"type\":\"sample\"") || l.contains("\"tag\":\"LMDB_0.9.17\"")).collect();
    std::fs::write(&one, kept.join("\n") + "\n").unwrap();
    let o = gated(&["report", one.to_str().unwrap(), "--fail-on", "slower:2%"]);
    assert_eq!(status(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error: the gate slower:2% judged no comparison"), "{}", stderr(&o));
}

/// A built tag that lost every sample of a workload (a crash, a checksum refused) has no
/// comparison to judge: the gate names it in its verdict, never passes over it in silence.
#[test]
fn a_built_tag_without_samples_is_named_as_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(file("step")).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            !(l.contains(r#""type":"sample""#)
                && l.contains(r#""tag":"LMDB_0.9.22""#)
                && l.contains(r#""workload":"write""#))
        })
        .collect();
    assert!(kept.len() < text.lines().count(), "the file holds 0.9.22's write samples");
    let run = dir.path().join("lost.jsonl");
    std::fs::write(&run, kept.join("\n") + "\n").unwrap();
    let o = gated(&["report", run.to_str().unwrap(), "--fail-on", "slower:25%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(0), "{err}");
    let head = "gate slower:25%: passed, none of 14 comparisons beyond it; 2 tags not measured, so not judged; \
                1 workload of built tags without a comparison, so not judged\n";
    assert!(err.starts_with(head), "{err}");
    assert!(err.contains("not judged: LMDB_0.9.22 write (rust): no comparison against the baseline"), "{err}");
}

/// A head commit on top of `repo`'s base whose every put does more work, its message made
/// with `nonce` so that its id sorts before the base's or after it, as `before` asks.
fn slower_head(repo: &std::path::Path, base: &str, before: bool) -> String {
    let p = repo.join("libraries/liblmdb/mdb.c");
    for nonce in 0..64 {
        git(repo, &["checkout", "-q", base]);
        let text = std::fs::read_to_string(&p).unwrap();
        let spin = format!("{PUT}\t{{ volatile int spin; for (spin = 0; spin < 300; spin++) ; }}\n");
        std::fs::write(&p, text.replacen(PUT, &spin, 1)).unwrap();
        git(repo, &["commit", "-q", "-am", &format!("more work in every put ({nonce})")]);
        let head = git(repo, &["rev-parse", "HEAD"]);
        if (head < base.to_string()) == before {
            return head;
        }
    }
    panic!("no commit id in 64 sorted {} {base}", if before { "before" } else { "after" });
}

/// An empty commit on `tagged` whose id starts with 4 to b, so that a head's id sorts
/// before it or after it about as often (a base near either end leaves one order rare).
fn mid_sorting_base(repo: &std::path::Path, tagged: &str) -> String {
    for nonce in 0..64 {
        git(repo, &["checkout", "-q", tagged]);
        git(repo, &["commit", "-q", "--allow-empty", "-m", &format!("the base ({nonce})")]);
        let base = git(repo, &["rev-parse", "HEAD"]);
        if ('4'..='b').contains(&base.chars().next().unwrap()) {
            return base;
        }
    }
    panic!("no commit id in 64 started with 4 to b");
}

/// The bump gate of ci/examples/lmdb-bump-gate.yml: the merge base, then the head; built
/// unoptimised (gcc -O0 compiles mdb.c about five times faster; the head's spin is more
/// work per put at either level, and which unit is the baseline is the point).
fn bump_gate(repo: &std::path::Path, base: &str, head: &str, extra: &[&str]) -> Output {
    let mut cmd = lmdb_regress();
    cmd.args(["run", "--workloads", "write", "--entries", "2000", "--metric", "instructions"])
        .args(["--fail-on", "slower:1%", "--no-coverage", "--cflags", &unoptimised_cflags(), "--git"])
        .arg(repo)
        .arg("--tags")
        .arg(format!("{},{}", &base[..12], &head[..12]))
        .args(extra)
        .arg("--out")
        .arg(repo.with_extension(format!("{}-{}.jsonl", &head[..12], extra.len())));
    cmd.env("LMDB_REGRESS_OFFLINE", "1").output().expect("binary runs")
}

#[test]
fn the_bump_gate_judges_the_head_against_the_base_whichever_id_sorts_first() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let tagged = make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]).remove(0);
    let base = mid_sorting_base(&repo, &tagged);
    let mut head = String::new();
    for before in [true, false] {
        head = slower_head(&repo, &base, before);
        let o = bump_gate(&repo, &base, &head, &[]);
        let err = stderr(&o);
        assert_eq!(status(&o), Some(3), "head {head} sorting before the base: {before}\n{err}");
        assert!(err.contains(&format!("baseline: {}, which every comparison", &base[..12])), "{err}");
        assert!(err.contains(&format!("failed: write (rust) {} against {}", &head[..12], &base[..12])), "{err}");
        // Named the other way round, the head is the baseline and the base is faster.
        let o = bump_gate(&repo, &base, &head, &["--baseline", &head[..12]]);
        assert_eq!(status(&o), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("baseline: {}", &head[..12])), "{}", stderr(&o));
    }
    let o = bump_gate(&repo, &base, &head, &["--baseline", "LMDB_0.9.18", "--force"]);
    assert_eq!(status(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--baseline LMDB_0.9.18 names no unit of this run"), "{}", stderr(&o));
}
