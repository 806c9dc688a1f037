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
    assert!(err.contains("gate slower:2%: FAILED, 6 of 16 comparisons beyond it"), "{err}");
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
    assert!(err.starts_with("gate slower:2%: passed, none of 16 comparisons beyond it\n"), "{err}");
    assert!(!err.contains("warning:"), "the intervals lie wholly inside the gate:\n{err}");
    // The same change is beyond a gate below it: the file does hold a resolved slowdown.
    let o = gated(&["report", &file("just-inside"), "--fail-on", "slower:0.5%"]);
    assert_eq!(status(&o), Some(3), "{}", stderr(&o));
}

#[test]
fn an_undecided_comparison_warns_with_the_rounds_that_would_decide_it() {
    let o = gated(&["report", &file("none"), "--fail-on", "slower:2%"]);
    let err = stderr(&o);
    assert_eq!(status(&o), Some(0), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert!(!warnings.is_empty(), "eight noisy rounds leave intervals that reach past +2%:\n{err}");
    let head = format!("gate slower:2%: passed, none of 16 comparisons beyond it, {} undecided\n", warnings.len());
    assert!(err.starts_with(&head), "{err}");
    for w in &warnings {
        assert!(w.contains(": time ") && w.contains("the interval reaches past +2.0%: about "), "{w}");
        assert!(w.ends_with("rounds would decide it (this comparison has 8)"), "{w}");
    }
    // Instruction counts are flat: none of them warns.
    assert!(!warnings.iter().any(|w| w.contains("instructions")), "{err}");
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
