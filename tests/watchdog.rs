//! The watchdog: a unit whose library loops forever inside mdb_cursor_get is killed, named
//! in a failure and left out, in a paired process (Rust and the C twin's) and with
//! `--pairing process`, while the other unit's samples are kept; a unit whose library
//! `_exit(0)`s inside mdb_cursor_put, ending its paired process without a report, is found
//! by running halves of the units apart, named and left out. Each run is guarded by a
//! generous bound (minutes) only so that a hang fails the test instead of stalling it.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const ENTRIES: &str = "3000";

/// 0.9.33's verified sources with `code` put first in `function`'s body (whose definition
/// starts with `head`), in a folder of `dir` named `name`.
fn patched_sources(dir: &Path, name: &str, head: &str, code: &str) -> PathBuf {
    let src = source_dir("0.9.33");
    let out = dir.join(name);
    std::fs::create_dir_all(&out).unwrap();
    for f in FILES {
        std::fs::copy(src.join(f), out.join(f)).unwrap();
    }
    let mdb = std::fs::read_to_string(out.join("mdb.c")).unwrap();
    let at = mdb.find(head).unwrap_or_else(|| panic!("{head:?} in mdb.c")) + head.len();
    std::fs::write(out.join("mdb.c"), format!("{}{code}{}", &mdb[..at], &mdb[at..])).unwrap();
    out
}

/// mdb_cursor_get spins forever from its HANG_AFTER-th call in a process on: past the
/// untimed walk that verifies a read, inside a timed pass.
fn hanging_sources(dir: &Path) -> PathBuf {
    let head = "mdb_cursor_get(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    MDB_cursor_op op)\n{\n";
    let code = "\tstatic long calls;\n\tif (getenv(\"HANG_AFTER\") && ++calls > atol(getenv(\"HANG_AFTER\")))\n\
                \t\tfor (volatile long spin = 0;; spin++) ;\n";
    patched_sources(dir, "hanging", head, code)
}

/// mdb_cursor_put ends the process with status 0 while it writes anything but a read
/// database (whose folder is `db`), when EXIT_ME is set.
fn exiting_sources(dir: &Path) -> PathBuf {
    let head = "mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data,\n    unsigned int flags)\n{\n";
    let code = "\tif (getenv(\"EXIT_ME\") && !strstr(mc->mc_txn->mt_env->me_path, \"/db\")) _exit(0);\n";
    patched_sources(dir, "exiting", head, code)
}

/// A repository of 0.9.33 as released and as `bad` (its sources), and both as `--tags`.
fn two_units(work: &Path, bad: &Path) -> (PathBuf, String, [String; 2]) {
    let repo = work.join("repo");
    let ids = make_repo(&repo, &[("good", &source_dir("0.9.33")), ("bad", bad)]);
    let tags = format!("{},{}", &ids[0][..10], &ids[1][..10]);
    (repo, tags, [ids[0].clone(), ids[1].clone()])
}

/// Runs the tool to its end, or fails the test after `bound`: a hang guard, not a timing.
fn run_guarded(args: &[&str], envs: &[(&str, &str)], bound: Duration) -> (std::process::Output, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut c = lmdb_regress();
    // Unoptimised builds: the units' machine code is no part of what is checked.
    c.args(["run", "--warmup", "0", "--summary-json", "--layouts", "fixed", "--cflags", &unoptimised_cflags()]);
    c.arg("--out").arg(&file).args(args);
    c.envs(envs.iter().copied());
    c.stdout(std::fs::File::create(&out).unwrap()).stderr(std::fs::File::create(&err).unwrap());
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end within {bound:?}: {}", std::fs::read_to_string(&err).unwrap());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let output =
        std::process::Output { status, stdout: std::fs::read(&out).unwrap(), stderr: std::fs::read(&err).unwrap() };
    assert!(status.success(), "{}", stderr(&output));
    let lines = std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (output, lines)
}

/// The label the run file's header gives the commit `id`.
fn label(lines: &[Value], id: &str) -> String {
    let tags = lines[0]["tags"].as_array().unwrap();
    let tag = tags.iter().find(|t| t["commit"].as_str().is_some_and(|c| c.starts_with(&id[..10]))).unwrap();
    tag["tag"].as_str().unwrap().to_string()
}

fn rounds_of(lines: &[Value], tag: &str, workload: &str) -> Vec<u64> {
    let sample = |l: &&Value| l["type"] == "sample" && l["tag"] == tag && l["workload"] == workload;
    lines.iter().filter(sample).map(|s| s["round"].as_u64().unwrap()).collect()
}

fn failures_of<'a>(lines: &'a [Value], tag: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == "failure" && l["tag"] == tag).collect()
}

const BOUND: Duration = Duration::from_secs(300);

/// The looping unit, in paired rounds of `engine` or with `--pairing process`: killed once
/// past its limit (the 3 s floor, unless earlier stretches raise it), named in a failure of
/// round 0, never measured again; the good unit measured in every later round, every
/// workload of it, until the time budget ends the run. A round of the good unit takes well
/// under a second, so 9 s leaves it rounds 1 and 2 after the kill.
fn a_loop_is_killed_named_and_left_out(engine: &str, pairing: &str) {
    let work = tempfile::tempdir().unwrap();
    let (repo, tags, ids) = two_units(work.path(), &hanging_sources(work.path()));
    let git = repo.to_str().unwrap();
    let flags = format!(
        "--engine {engine} --pairing {pairing} --tags {tags} --entries {ENTRIES} --rounds 100000 --iterations 5 \
         --workloads readSeq,write --watchdog 3 --time-budget 9s"
    );
    let args: Vec<&str> = ["--git", git].into_iter().chain(flags.split_whitespace()).collect();
    let (_, lines) = run_guarded(&args, &[("HANG_AFTER", "9000")], BOUND);
    let (good, bad) = (label(&lines, &ids[0]), label(&lines, &ids[1]));
    let named = failures_of(&lines, &bad);
    let killed = named.iter().find(|f| f["workload"] == "readSeq").expect("the stalled workload is a failure");
    let error = killed["error"].as_str().unwrap();
    assert!(error.contains("killed by the watchdog: no progress for"), "{killed}");
    if pairing == "chunks" {
        assert!(error.starts_with("it stalled the paired process"), "{killed}");
    }
    assert_eq!(killed["round"], 0, "{killed}");
    assert!(named.iter().all(|f| f["round"] == 0), "left out after round 0: {named:?}");
    for w in ["readSeq", "write"] {
        assert!(rounds_of(&lines, &bad, w).iter().all(|r| *r == 0), "{bad} is left out after it stalled");
        let kept = rounds_of(&lines, &good, w);
        assert!(kept.contains(&1) && kept.contains(&2), "{good} {w}: {kept:?}");
    }
    let end = lines.iter().find(|l| l["type"] == "end").expect("an end record");
    assert_eq!((&end["type"], &end["reason"]), (&Value::from("end"), &Value::from("time-budget")), "{end}");
}

#[test]
fn a_unit_looping_in_mdb_cursor_get_stalls_its_paired_process_and_is_left_out() {
    a_loop_is_killed_named_and_left_out("rust", "chunks");
}

/// The C twin's paired worker prints its sign of life and names the slot on SIGTERM too.
#[test]
fn a_unit_looping_in_the_c_paired_worker_is_left_out() {
    a_loop_is_killed_named_and_left_out("c", "chunks");
}

#[test]
fn a_unit_looping_in_its_own_worker_is_killed_and_left_out() {
    a_loop_is_killed_named_and_left_out("rust", "process");
}

/// A paired process that exits with status 0 without its report names no slot: halves of
/// its units run apart, and the one whose process ends so is named and left out; the good
/// unit is measured in every round after.
#[test]
fn a_unit_exiting_in_mdb_cursor_put_is_found_by_splitting() {
    let work = tempfile::tempdir().unwrap();
    let (repo, tags, ids) = two_units(work.path(), &exiting_sources(work.path()));
    let flags = format!("--tags {tags} --entries {ENTRIES} --rounds 3 --workloads readSeq,write");
    let args: Vec<&str> = ["--git", repo.to_str().unwrap()].into_iter().chain(flags.split_whitespace()).collect();
    let (_, lines) = run_guarded(&args, &[("EXIT_ME", "1")], BOUND);
    let (good, bad) = (label(&lines, &ids[0]), label(&lines, &ids[1]));
    let named = failures_of(&lines, &bad);
    let found = named.iter().find(|f| f["workload"] == "write").expect("its unreported write is a failure");
    assert!(found["error"].as_str().unwrap().contains("found by running halves of the units apart"), "{found}");
    assert!(named.iter().all(|f| f["round"] == 0), "left out after round 0: {named:?}");
    let lost = failures_of(&lines, &good);
    assert!(lost.iter().all(|f| f["round"] == 0), "{lost:?}");
    assert!(lost.iter().all(|f| f["error"].as_str().unwrap().contains(&format!("when {bad} ended it"))), "{lost:?}");
    for w in ["readSeq", "write"] {
        let kept = rounds_of(&lines, &good, w);
        assert!(kept.contains(&1) && kept.contains(&2), "{good} {w}: {kept:?}");
        assert!(rounds_of(&lines, &bad, w).iter().all(|r| *r == 0), "{bad} is left out");
    }
}

#[test]
fn a_bad_watchdog_is_refused_before_anything_is_built() {
    for bad in ["0", "-3", "nan", "1e20", "soon"] {
        let out = lmdb_regress().args(["run", "--tags", "0.9.33", "--watchdog", bad]).output().unwrap();
        assert!(!out.status.success(), "{bad}");
        assert!(stderr(&out).contains("--watchdog"), "{bad}: {}", stderr(&out));
        let gated = lmdb_regress().args(["run", "--fail-on", "slower:1%", "--watchdog", bad]).output().unwrap();
        assert_eq!(gated.status.code(), Some(1), "{bad} under a gate");
    }
}
