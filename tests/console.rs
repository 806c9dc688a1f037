//! Console output where nobody watches a terminal, and where somebody does: progress lines
//! in a log (stderr to a file), long errors wrapped between words on a terminal only.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use crate::common::*;

/// A run with stderr to a file: its progress lines, the schedule's wall time from the run
/// file, and the whole command's time around it.
fn run_to_log(dir: &Path, name: &str, interval: Option<&str>, args: &[&str]) -> (Vec<String>, f64, f64) {
    let (log, file) = (dir.join(format!("{name}.log")), dir.join(format!("{name}.jsonl")));
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--workloads", "readSeq,write", "--entries", "2000", "--warmup", "0"]);
    // Each unit's one build: no layout check after the rounds, whose lines are the point.
    c.args(["--layouts", "fixed"]);
    c.args(args).arg("--out").arg(&file).stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    if let Some(i) = interval {
        c.env("LMDB_REGRESS_PROGRESS_INTERVAL", i);
    }
    let began = Instant::now();
    let status = c.status().unwrap();
    let took = began.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    let end: serde_json::Value = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .find(|r: &serde_json::Value| r["type"] == "end")
        .expect("an end record");
    let lines = text.lines().filter(|l| l.starts_with("progress: ")).map(String::from).collect();
    (lines, end["wall_s"].as_f64().unwrap(), took)
}

/// "elapsed 12s" → 12.
fn elapsed(line: &str) -> u64 {
    let word = line.split(", ").find_map(|p| p.strip_prefix("elapsed ")).unwrap_or_else(|| panic!("{line}"));
    word.strip_suffix('s').and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("seconds only: {line}"))
}

/// A line per interval of the schedule (each interval ends with one, so n intervals give at
/// least n lines and at most as many as the whole command lasted), counted against the
/// run's own clock; with the default 30 s, a shorter run prints none.
#[test]
fn a_log_gets_a_progress_line_per_interval_and_a_short_run_none() {
    let dir = tempfile::tempdir().unwrap();
    // Rounds until a 2 s budget has no room for another: a round here takes a fraction of a
    // second, so the schedule lasts more than 1 s.
    let (lines, wall, took) = run_to_log(dir.path(), "long", Some("1"), &["--rounds", "1000", "--time-budget", "2s"]);
    assert!(wall >= 1.0, "the budget holds the schedule until a round no longer fits in 2 s: {wall}");
    assert!(lines.len() as f64 >= wall.floor() && lines.len() as f64 <= took.floor(), "{wall} s, {took} s: {lines:#?}");
    for l in &lines {
        let tail = l.ends_with(" units failed") || l.ends_with(" unit failed");
        assert!(l.contains(", budget left ") && tail, "{l}");
    }
    // Measuring says which round, of about how many the budget allows.
    let measuring = lines.iter().filter(|l| l.starts_with("progress: measuring, round "));
    assert!(measuring.clone().count() >= 1 && measuring.clone().all(|l| l.contains(" of about ")), "{lines:#?}");
    let clock: Vec<u64> = lines.iter().map(|l| elapsed(l)).collect();
    assert!(clock.windows(2).all(|w| w[1] > w[0]), "one line a second: {clock:?}");

    let (lines, _, took) = run_to_log(dir.path(), "short", None, &["--rounds", "1"]);
    assert!(lines.len() as f64 <= (took / 30.0).floor(), "a run of {took} s: {lines:#?}");
}

/// `script` gives the command a terminal; COLUMNS its width.
#[test]
fn a_long_error_wraps_between_words_on_a_terminal_and_stays_one_line_in_a_log() {
    let missing = "/nonexistent/never-made.jsonl";
    let piped = lmdb_regress().args(["report", missing]).output().unwrap();
    let message = stderr(&piped);
    assert!(message.starts_with("error: cannot open run file") && message.lines().count() == 1, "{message}");
    assert!(message.trim_end().chars().count() > 40, "long enough to wrap: {message}");
    let on_terminal = in_test_env("script")
        .args(["-qec", &format!("{BIN} report {missing}"), "/dev/null"])
        .env("COLUMNS", "40")
        .output()
        .unwrap();
    assert!(!on_terminal.status.success());
    let shown = stdout(&on_terminal).replace('\r', "");
    assert!(shown.lines().count() > 1 && shown.lines().all(|l| l.chars().count() <= 40), "{shown}");
    let words = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(words(&shown), words(&message), "every word whole, none lost");
}
