//! Nothing a user measured is lost or silently replaced, and nothing unverified is loaded:
//! real faults (a file-size limit standing in for a full disk, SIGKILL, a torn line, two
//! writers, a tampered cache, Ctrl-C during a build) and defective run files, each met by
//! a clear error that names the file, with every earlier result intact.

use crate::common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A small time run: two tags, one read, a thousand entries.
pub(crate) fn small_run(out: &Path, rounds: &str) -> Command {
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--entries", "1000", "--workloads", "readKey", "--warmup", "0"]);
    c.args(["--rounds", rounds, "--out"]).arg(out);
    c
}

/// For a run whose file, not its layouts, a test is about: each unit's one build, so no
/// layouts are linked and no layout check counts (random layouts have tests of their own).
const FIXED: [&str; 2] = ["--layouts", "fixed"];

pub(crate) fn fails(c: &mut Command) -> String {
    let o = c.output().unwrap();
    assert!(!o.status.success(), "should fail: {c:?}\n{}", stdout(&o));
    stderr(&o)
}

/// The command with its files limited to `bytes` (RLIMIT_FSIZE): a full disk for every
/// file it writes, no root needed.
fn limited(mut c: Command, bytes: u64) -> Output {
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().unwrap()
}

pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

pub(crate) fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

pub(crate) fn samples(path: &Path) -> usize {
    records(path).iter().filter(|r| r["type"] == "sample").count()
}

/// Starts a long run on `out` and returns once it has written `n` samples.
pub(crate) fn start_long_run(out: &Path, n: usize, envs: &[(&str, &Path)]) -> Child {
    let mut c = small_run(out, "100000");
    for (k, v) in envs {
        c.env(k, v);
    }
    let child = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    while !out.exists() || samples(out) < n {
        assert!(start.elapsed() < Duration::from_secs(60), "no samples appeared in {}", out.display());
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

pub(crate) fn signal(child: &Child, sig: i32) {
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn results_are_replaced_only_with_force_and_default_names_never_collide() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    run_ok(small_run(&run, "2").args(FIXED));
    let first = std::fs::read(&run).unwrap();

    let e = fails(small_run(&run, "2").args(FIXED));
    assert!(e.contains("run.jsonl already exists") && e.contains("--force"), "{e}");
    assert_eq!(std::fs::read(&run).unwrap(), first);
    run_ok(small_run(&run, "2").args(FIXED).arg("--force"));
    assert_ne!(std::fs::read(&run).unwrap(), first, "--force replaces");

    let merged = dir.path().join("merged.jsonl");
    std::fs::write(&merged, "the user's own file\n").unwrap();
    let e = fails(lmdb_regress().arg("merge").arg(&run).arg("--out").arg(&merged));
    assert!(e.contains("merged.jsonl already exists"), "{e}");
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), "the user's own file\n");
    run_ok(lmdb_regress().arg("merge").arg(&run).arg("--out").arg(&merged).arg("--force"));

    let reports = dir.path().join("reports");
    let report = |extra: &[&str]| {
        let mut c = lmdb_regress();
        c.arg("report").arg(&run).args(["--format", "markdown,json", "--out-dir"]).arg(&reports).args(extra);
        c
    };
    run_ok(&mut report(&[]));
    std::fs::write(reports.join("run.md"), "edited by hand\n").unwrap();
    let e = fails(&mut report(&[]));
    assert!(e.contains("run.json already exists") || e.contains("run.md already exists"), "{e}");
    assert_eq!(std::fs::read_to_string(reports.join("run.md")).unwrap(), "edited by hand\n");
    run_ok(&mut report(&["--force"]));

    // A site rewrites its own pages, but not a file of the user's in its folder.
    let site = dir.path().join("site");
    run_ok(lmdb_regress().arg("site").arg(&site).arg(&run));
    run_ok(lmdb_regress().arg("site").arg(&site).arg(&run));
    std::fs::write(site.join("index.html"), "<p>my own page</p>\n").unwrap();
    let e = fails(lmdb_regress().arg("site").arg(&site).arg(&run));
    assert!(e.contains("index.html exists and is not a page lmdb-regress wrote"), "{e}");
    assert_eq!(std::fs::read_to_string(site.join("index.html")).unwrap(), "<p>my own page</p>\n");

    // A bisect folder that holds an earlier search is refused before anything is built.
    let searched = dir.path().join("search");
    std::fs::create_dir(&searched).unwrap();
    std::fs::write(searched.join("bisect.json"), "{}").unwrap();
    let mut c = lmdb_regress();
    c.args(["bisect", "--good", "0.9.18", "--bad", "0.9.33", "--out-dir"]).arg(&searched);
    let e = fails(&mut c);
    assert!(e.contains("holds an earlier search") && e.contains("--force"), "{e}");

    // Runs started at once without --out each keep a file of their own.
    let cwd = dir.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let start = || {
        let mut c = lmdb_regress();
        c.current_dir(&cwd).args(["run", "--tags", "0.9.33", "--entries", "1000", "--workloads", "readKey"]);
        c.args(["--rounds", "1", "--warmup", "0"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
    };
    let (a, b) = (start(), start());
    for mut child in [a, b] {
        assert!(child.wait().unwrap().success());
    }
    let runs = cwd.join("reports/runs");
    assert_eq!(names(&runs).len(), 2, "{:?}", names(&runs));
    for name in names(&runs) {
        let ended = records(&runs.join(&name)).iter().any(|r| r["type"] == "end");
        assert!(ended, "{name} is complete");
    }
}

#[test]
fn a_full_disk_loses_nothing_and_leaves_no_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    run_ok(small_run(&run, "2").args(FIXED));

    // merge and report replace only whole files: the old ones stay, nothing else is left.
    let merged = dir.path().join("merged.jsonl");
    std::fs::copy(&run, &merged).unwrap();
    let before = std::fs::read(&merged).unwrap();
    let mut c = lmdb_regress();
    c.arg("merge").arg(&run).arg("--out").arg(&merged).arg("--force");
    let o = limited(c, 2000);
    assert!(!o.status.success() && stderr(&o).contains("File too large"), "{}", stderr(&o));
    assert!(stderr(&o).contains("merged.jsonl (nothing was replaced)"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&merged).unwrap(), before);
    assert_eq!(names(dir.path()), ["merged.jsonl", "run.jsonl"]);

    let reports = dir.path().join("reports");
    run_ok(lmdb_regress().arg("report").arg(&run).args(["--format", "markdown,json", "--out-dir"]).arg(&reports));
    let old: Vec<Vec<u8>> = names(&reports).iter().map(|n| std::fs::read(reports.join(n)).unwrap()).collect();
    let mut c = lmdb_regress();
    c.arg("report").arg(&run).args(["--format", "markdown,json", "--force", "--out-dir"]).arg(&reports);
    let o = limited(c, 1000);
    assert!(!o.status.success() && stderr(&o).contains("File too large"), "{}", stderr(&o));
    assert_eq!(names(&reports), ["run.json", "run.md"]);
    let now: Vec<Vec<u8>> = names(&reports).iter().map(|n| std::fs::read(reports.join(n)).unwrap()).collect();
    assert_eq!(now, old);

    // The run file fills up mid-line (workers write small databases without MDB_WRITEMAP):
    // the run stops with the file named, resume cuts the torn line and finishes the run.
    let filled = dir.path().join("filled.jsonl");
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.18,0.9.33", "--entries", "10", "--no-writemap", "--workloads", "readKey"]);
    // Fixed layouts: the limit is for the run file, not for the layouts a run links.
    // Every round writes every tag's sample, until the file is full.
    c.args(["--rounds", "300", "--warmup", "0", "--layouts", "fixed", "--adaptive", "off", "--out"]).arg(&filled);
    let o = limited(c, 40_000);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot write") && stderr(&o).contains("filled.jsonl: File too large"),
        "{}",
        stderr(&o)
    );
    // The limit cuts a line, unless it falls exactly between two: then tear one by hand.
    if std::fs::read(&filled).unwrap().ends_with(b"\n") {
        std::fs::OpenOptions::new().append(true).open(&filled).unwrap().write_all(b"{\"type\":\"sam").unwrap();
    }
    let kept = samples(&filled);
    assert!(kept > 10, "{kept}");
    let o = run_ok(lmdb_regress().arg("report").arg(&filled));
    assert!(stderr(&o).contains("a torn last line") && stdout(&o).contains("Partial run"), "{}", stderr(&o));
    let o = run_ok(lmdb_regress().args(["run", "--summary-json", "--resume"]).arg(&filled));
    assert!(stderr(&o).contains("cut a torn last line"), "{}", stderr(&o));
    let rounds: std::collections::BTreeSet<u64> =
        records(&filled).iter().filter(|r| r["type"] == "sample").map(|r| r["round"].as_u64().unwrap()).collect();
    assert_eq!(rounds, (0..300).collect(), "every round");
    let o = run_ok(lmdb_regress().arg("report").arg(&filled));
    assert!(!stdout(&o).contains("Partial run") && stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn a_killed_run_resumes_and_only_dead_runs_scratch_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    let run = dir.path().join("run.jsonl");
    let mut child = start_long_run(&run, 6, &[("LMDB_REGRESS_SCRATCH", &scratch)]);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let left = names(&scratch);
    assert_eq!(left.len(), 1, "the killed run's scratch stays until the next run: {left:?}");

    // A folder whose run is alive (its owner file locked) and one without an owner file.
    let alive = scratch.join("lmdb-regress-alive");
    std::fs::create_dir(&alive).unwrap();
    std::fs::write(alive.join("owner"), "1\n").unwrap();
    let owner = std::fs::File::open(alive.join("owner")).unwrap();
    owner.try_lock().unwrap();
    std::fs::create_dir(scratch.join("lmdb-regress-unknown")).unwrap();

    let before = samples(&run);
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_SCRATCH", &scratch).args(["run", "--summary-json", "--resume"]).arg(&run);
    // The plan holds 100000 rounds: the resumed run is stopped once it has gone on.
    let mut resumed = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while samples(&run) < before + 4 {
        assert!(start.elapsed() < Duration::from_secs(60), "the resumed run wrote nothing");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&resumed, libc::SIGINT);
    resumed.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(resumed.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains(&format!("removed {}", scratch.join(&left[0]).display())), "{err}");
    assert_eq!(names(&scratch), ["lmdb-regress-alive", "lmdb-regress-unknown"], "{err}");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(md.contains("Read by Key") && md.contains("Partial run"), "{md}");
}

#[test]
fn one_writer_per_run_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    let mut first = start_long_run(&run, 2, &[]);
    let holder = format!("is being written by process {}", first.id());
    let e = fails(small_run(&run, "2").arg("--force"));
    assert!(e.contains(&holder), "{e}");
    let e = fails(lmdb_regress().args(["run", "--resume"]).arg(&run));
    assert!(e.contains(&holder), "{e}");
    signal(&first, libc::SIGINT);
    assert!(!first.wait().unwrap().success());
    let rs = records(&run);
    assert_eq!(rs.iter().filter(|r| r["type"] == "header").count(), 1);
    assert_eq!(rs.last().unwrap()["reason"], "interrupted", "the first writer ended its file itself");

    // The interrupted run resumes only with its own plan; a finished one not at all.
    let unchanged = std::fs::read(&run).unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--entries", "2000", "--rounds", "3", "--jobs", "1", "--resume"]).arg(&run);
    let e = fails(&mut c);
    assert!(
        e.contains("--entries 2000 (the run file: 1000)") && e.contains("--rounds 3 (the run file: 100000)"),
        "{e}"
    );
    assert!(!e.contains("--jobs"), "{e}");
    assert_eq!(std::fs::read(&run).unwrap(), unchanged);
    let done = dir.path().join("done.jsonl");
    run_ok(small_run(&done, "1").args(FIXED));
    let finished = std::fs::read(&done).unwrap();
    let e = fails(lmdb_regress().args(["run", "--resume"]).arg(&done));
    assert!(e.contains("done.jsonl is finished") && e.contains("nothing appended"), "{e}");
    assert_eq!(std::fs::read(&done).unwrap(), finished);
}

#[test]
fn a_run_file_of_schema_3_resumes_in_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    run_ok(&mut small_run(&run, "2"));
    // As an older lmdb-regress leaves a run stopped after its first round: no units declared.
    let mut rs = records(&run);
    assert_eq!(rs[0]["schema"], lmdb_regress::record::SCHEMA);
    rs[0]["schema"] = 3.into();
    rs[0].as_object_mut().unwrap().remove("units");
    rs.retain(|r| r["type"] != "end" && r["round"] != 1);
    rs.push(
        serde_json::json!({"type": "end", "reason": "interrupted", "rounds": 1, "finished": "2026-01-01T00:00:00Z"}),
    );
    std::fs::write(&run, rs.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
    let kept = samples(&run);
    assert_eq!(kept, 2, "one round of two tags");

    // Continued as it was written: the labels as text, read from it by the older grammar.
    run_ok(lmdb_regress().args(["run", "--summary-json", "--resume"]).arg(&run));
    let rs = records(&run);
    assert_eq!((rs[0]["schema"].as_u64(), rs[0].get("units")), (Some(3), None));
    let mut units: Vec<(String, u64)> = rs
        .iter()
        .filter(|r| r["type"] == "sample")
        .map(|r| (r["tag"].as_str().unwrap().to_string(), r["round"].as_u64().unwrap()))
        .collect();
    units.sort();
    let want = [("LMDB_0.9.18", 0), ("LMDB_0.9.18", 1), ("LMDB_0.9.33", 0), ("LMDB_0.9.33", 1)];
    assert_eq!(units, want.map(|(t, r)| (t.to_string(), r)));
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(md.contains("LMDB_0.9.33") && !md.contains("Partial run"), "{md}");
}

/// The committed run file with `edit` applied to its lines.
fn defective(dir: &Path, name: &str, edit: impl Fn(&mut Vec<String>)) -> PathBuf {
    let fixed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/run-fixed.jsonl"));
    let mut lines: Vec<String> = fixed.unwrap().lines().map(String::from).collect();
    edit(&mut lines);
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn every_run_file_defect_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fn sample(tag: &str, ns: &str) -> String {
        format!(r#"{{"type":"sample","round":0,"engine":"rust","tag":"{tag}","workload":"readSeq","ns":{ns}}}"#)
    }
    let end = r#"{"type":"end","reason":"rounds","rounds":8,"finished":"2026-01-01T00:20:00Z"}"#;
    // The end record's line.
    let last = records(&defective(dir.path(), "whole.jsonl", |_| {})).len();
    type Edit = Box<dyn Fn(&mut Vec<String>)>;
    let cases: Vec<(&str, Edit, String)> = vec![
        (
            "unknown-tag",
            Box::new(|l| l.insert(1, sample("LMDB_0.9.99", "5"))),
            "2: tag LMDB_0.9.99 is not among the header's tags".into(),
        ),
        ("zero-time", Box::new(|l| l.insert(1, sample("LMDB_0.9.33", "0"))), "2: a sample of 0 ns".into()),
        (
            "negative-time",
            Box::new(|l| l.insert(1, sample("LMDB_0.9.33", "-5"))),
            "2: corrupt line: a sample's time must be a positive whole number of ns, not -5".into(),
        ),
        (
            "after-end",
            Box::new(|l| l.push(sample("LMDB_0.9.33", "5"))),
            format!("{}: a measured sample after the run's end record (line {last})", last + 1),
        ),
        (
            "second-end",
            Box::new(move |l| l.push(end.to_string())),
            format!("{}: a second end record (the run ended at line {last})", last + 1),
        ),
        ("second-header", Box::new(|l| l.insert(2, l[0].clone())), "3: a second header".into()),
        (
            // One iteration a pass: a second line of one unit, workload and round is a copy.
            "duplicated-sample",
            Box::new(|l| l.insert(3, l[1].clone())),
            "4: one sample too many of rust LMDB_0.9.17 readSeq in round 1: the run takes 1 per pass \
             (one per iteration), and line(s) 2 hold them"
                .into(),
        ),
        (
            "unknown-workload",
            Box::new(|l| l.insert(1, sample("LMDB_0.9.33", "5").replace("readSeq", "readKey"))),
            "2: workload readKey is not among the header's workloads".into(),
        ),
    ];
    for (name, edit, want) in cases {
        let p = defective(dir.path(), &format!("{name}.jsonl"), edit);
        let e = fails(lmdb_regress().arg("report").arg(&p));
        assert!(e.contains(&format!("{}:{want}", p.display())), "{name}: {e}");
    }
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, b"\x89PNG\r\n\x1a\n\x00\xff").unwrap();
    let e = fails(lmdb_regress().arg("report").arg(&garbage));
    assert!(e.contains(&format!("{}:1: not UTF-8", garbage.display())), "{e}");
    let e = fails(lmdb_regress().arg("report").arg(dir.path()));
    assert!(e.contains(&format!("{} is a directory, not a run file", dir.path().display())), "{e}");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert!(fails(lmdb_regress().arg("report").arg(&empty)).contains("empty.jsonl is empty"));

    // A torn last line is a run stopped while writing: read, and said so.
    let torn = defective(dir.path(), "torn.jsonl", |l| l[last - 1].truncate(20));
    let text = std::fs::read_to_string(&torn).unwrap();
    std::fs::write(&torn, text.trim_end()).unwrap();
    let o = run_ok(lmdb_regress().arg("report").arg(&torn));
    assert!(stderr(&o).contains(&format!("{}:{last}: a torn last line", torn.display())), "{}", stderr(&o));
    // A header cut off while it was written (a full disk) is called torn, never "not a run file".
    let header = dir.path().join("torn-header.jsonl");
    std::fs::write(&header, &text.lines().next().unwrap()[..200]).unwrap();
    let e = fails(lmdb_regress().arg("report").arg(&header));
    assert!(e.contains("torn-header.jsonl:1: the header is torn (200 bytes"), "{e}");
    let e = fails(lmdb_regress().args(["run", "--resume"]).arg(&header));
    assert!(e.contains("the header is torn"), "{e}");
    // A corrupt line that is not the last (or ends in a newline) is no torn write.
    let corrupt = defective(dir.path(), "corrupt.jsonl", |l| l[last - 1].truncate(20));
    assert!(fails(lmdb_regress().arg("report").arg(&corrupt)).contains(&format!("corrupt.jsonl:{last}: corrupt line")));
}

#[test]
fn what_is_read_as_a_file_must_be_a_regular_file_never_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a path of our own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let good = testdata("run-fixed.jsonl");
    let site = dir.path().join("site");
    let history = dir.path().join("history.json");
    std::os::unix::fs::symlink(&fifo, &history).unwrap();
    // Nothing writes the pipe: a command that opened it for reading would wait forever.
    let commands: Vec<(Vec<std::ffi::OsString>, &Path)> = vec![
        (vec!["report".into(), fifo.clone().into()], &fifo),
        (vec!["merge".into(), good.clone().into(), fifo.clone().into(), "--out".into(), site.join("m").into()], &fifo),
        (vec!["compare".into(), good.clone().into(), fifo.clone().into()], &fifo),
        (vec!["site".into(), site.clone().into(), fifo.clone().into()], &fifo),
        (vec!["site".into(), site.clone().into(), history.clone().into()], &history),
    ];
    for (args, named) in commands {
        let e = fails(lmdb_regress().args(&args));
        assert!(e.contains(&format!("{} is not a regular file", named.display())), "{args:?}: {e}");
    }
}

#[test]
fn values_are_refused_rather_than_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.jsonl");
    let run = |args: &[&str]| {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", "0.9.33", "--entries", "1000", "--workloads", "readKey", "--out"])
            .arg(&out)
            .args(args);
        c
    };
    for (args, want) in [
        (&["--iterations", "0"][..], "--iterations"),
        (&["--rounds", "0"], "--rounds"),
        (&["--jobs", "0"], "not a number of jobs: give 1 or more"),
        (&["--count-entries", "0", "--with-instructions"], "--count-entries"),
        (&["--count-entries", "500"], "--with-instructions"),
        (
            &["--count-entries", "5000", "--with-instructions"],
            "--count-entries 5000 is more than the run's 1000 entries",
        ),
        (&["--map-size", "0"], "--map-size 0 cannot hold 1000 entries"),
    ] {
        let e = fails(&mut run(args));
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("listed above"), "{args:?}: {e}");
    }
    for (var, value, want) in [
        ("LMDB_REGRESS_COUNTER", "bogus", "LMDB_REGRESS_COUNTER=bogus is not one of auto, callgrind"),
        ("LMDB_REGRESS_OFFLINE", "banana", "LMDB_REGRESS_OFFLINE=banana is not a yes/no value"),
        ("LMDB_REGRESS_ARCHIVE_URLS", "ftp://example.invalid/x", "LMDB_REGRESS_ARCHIVE_URLS"),
        ("LMDB_REGRESS_SCRATCH", "/dev/null", "LMDB_REGRESS_SCRATCH=/dev/null is not a folder"),
        ("LMDB_REGRESS_TAGS", "/nonexistent/lmdb-tags", "LMDB_REGRESS_TAGS=/nonexistent/lmdb-tags is not a file"),
    ] {
        let e = fails(run(&[]).env(var, value));
        assert!(e.contains(want), "{var}={value}: {e}");
    }
    assert!(!out.exists(), "every refusal came before the run file");

    // The default map holds any data, however little.
    let o = run_ok(
        lmdb_regress().args(["run", "--tags", "0.9.33", "--entries", "10", "--summary-json", "--out"]).arg(&out),
    );
    let rows = json(&o);
    assert!(rows.as_array().unwrap().iter().all(|r| r["failures"] == 0 && r["n"] == 20), "{rows}");

    // An unwritable cache is the reason given, not advice to pass --git. (A folder below
    // a file cannot be made even by root.)
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let o = run(&["--force"]).env("LMDB_REGRESS_CACHE", file.join("cache")).output().unwrap();
    let text = stderr(&o);
    assert!(!o.status.success() && text.contains("cannot be written") && !text.contains("--git"), "{text}");
}

#[test]
fn no_command_writes_over_what_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    run_ok(small_run(&run, "2").args(FIXED));
    let original = std::fs::read(&run).unwrap();

    // A run file whose name is a report's: --force does not make it an output.
    let named = dir.path().join("x.json");
    std::fs::copy(&run, &named).unwrap();
    let mut c = lmdb_regress();
    c.arg("report").arg(&named).args(["--format", "json,markdown", "--force", "--out-dir"]).arg(dir.path());
    let e = fails(&mut c);
    assert!(e.contains("which this command reads") && e.contains("x.json"), "{e}");
    assert_eq!(std::fs::read(&named).unwrap(), original);
    assert!(!dir.path().join("x.md").exists(), "nothing of the set was written");

    // Another spelling of an input is the input: merge, and a site's page.
    let dotted = dir.path().join(".").join("run.jsonl");
    let e = fails(lmdb_regress().arg("merge").arg(&run).arg("--out").arg(&dotted).arg("--force"));
    assert!(e.contains("which this command reads"), "{e}");
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let page_named = site.join("r.html");
    std::fs::copy(&run, &page_named).unwrap();
    let e = fails(lmdb_regress().arg("site").arg(&site).arg(&page_named).arg("--force"));
    assert!(e.contains("which this command reads"), "{e}");
    assert_eq!(std::fs::read(&page_named).unwrap(), original);
    assert_eq!(std::fs::read(&run).unwrap(), original);

    // A format named twice is one file.
    let twice = dir.path().join("twice");
    let o = run_ok(lmdb_regress().arg("report").arg(&run).args(["--format", "json,json", "--out-dir"]).arg(&twice));
    assert_eq!(names(&twice), ["run.json"], "{}", stdout(&o));

    // A set the disk cannot hold is written not at all: no temporary file, no part of the
    // set to stand in the way of the next try (without --force).
    let sizes = names(&twice).iter().map(|n| std::fs::metadata(twice.join(n)).unwrap().len()).sum::<u64>();
    let reports = dir.path().join("reports");
    let report = || {
        let mut c = lmdb_regress();
        c.arg("report").arg(&run).args(["--format", "markdown,json", "--out-dir"]).arg(&reports);
        c
    };
    // The Markdown fits under the limit, the JSON (written second) does not.
    let o = limited(report(), sizes - 1);
    assert!(!o.status.success() && stderr(&o).contains("File too large"), "{}", stderr(&o));
    assert!(names(&reports).is_empty(), "{:?}", names(&reports));
    run_ok(&mut report());
    assert_eq!(names(&reports), ["run.json", "run.md"]);
}

#[test]
fn a_whole_last_line_without_its_newline_is_kept_by_resume() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    run_ok(small_run(&run, "3").args(["--layouts", "fixed"]));
    // As a run stopped between a sample and its newline leaves it: two rounds, no end.
    let text = std::fs::read_to_string(&run).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            !l.contains("\"type\":\"end\"") && !l.contains("\"type\":\"coverage\"") && !l.contains("\"round\":2")
        })
        .collect();
    let last = kept.last().unwrap().to_string();
    assert!(last.contains("\"type\":\"sample\""), "{last}");
    std::fs::write(&run, kept.join("\n")).unwrap();
    let o = run_ok(lmdb_regress().args(["run", "--summary-json", "--resume"]).arg(&run));
    assert!(stderr(&o).contains(":5: the last line is a whole record without its newline: kept"), "{}", stderr(&o));
    assert!(stderr(&o).contains("at round 3 of 3"), "{}", stderr(&o));
    let text = std::fs::read_to_string(&run).unwrap();
    assert!(text.lines().any(|l| l == last), "the sample is still there:\n{text}");
    assert_eq!(samples(&run), 6, "three rounds of two tags:\n{text}");
}

/// `valgrind` for the counter, stopped before each count until `dir/go` exists, having
/// said so in `dir/started`: Ctrl-C then lands in a known phase.
pub(crate) fn held_valgrind(dir: &Path) -> PathBuf {
    let real = Command::new("sh").args(["-c", "command -v valgrind"]).output().unwrap();
    let real = String::from_utf8(real.stdout).unwrap().trim().to_string();
    assert!(!real.is_empty(), "valgrind is installed (make deps)");
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in --version) exec {real} \"$@\";; esac\ntouch {d}/started\n\
         while [ ! -e {d}/go ]; do sleep 0.02; done\nexec {real} \"$@\"\n",
        d = dir.display()
    );
    std::fs::write(bin.join("valgrind"), script).unwrap();
    let mut perms = std::fs::metadata(bin.join("valgrind")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(bin.join("valgrind"), perms).unwrap();
    bin
}

/// Runs `c` with the held counter, sends Ctrl-C once the first count is under way, lets
/// the counts go on, and returns how the command ended.
pub(crate) fn interrupted_at_first_count(mut c: Command, hold: &Path, bin: &Path) -> Output {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    c.env("PATH", path).env("LMDB_REGRESS_COUNTER", "callgrind");
    let child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while !hold.join("started").exists() {
        assert!(start.elapsed() < Duration::from_secs(120), "no count started");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&child, libc::SIGINT);
    std::fs::write(hold.join("go"), "").unwrap();
    let o = child.wait_with_output().unwrap();
    std::fs::remove_file(hold.join("started")).unwrap();
    o
}

#[test]
fn ctrl_c_in_the_counting_pass_or_the_layout_check_exits_130_and_resumes_into_it() {
    let dir = tempfile::tempdir().unwrap();
    let hold = dir.path().join("hold");
    std::fs::create_dir(&hold).unwrap();
    let bin = held_valgrind(&hold);

    // The counting pass: rounds complete, no count taken, exit 130 naming the phase.
    let run = dir.path().join("counted.jsonl");
    let mut c = small_run(&run, "2");
    c.args(["--layouts", "fixed", "--with-instructions", "--count-entries", "1000"]);
    let o = interrupted_at_first_count(c, &hold, &bin);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("interrupted during the instruction-counting pass") && e.contains("run --resume"), "{e}");
    let rs = records(&run);
    assert_eq!(rs.iter().filter(|r| r["counted"] == true).count(), 0, "a count under way is not kept");
    assert!(rs.iter().all(|r| r["type"] != "check"), "no check of counts not taken");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(md.contains("Partial counts: the instruction-counting pass was interrupted after 0 of 2"), "{md}");
    let resume = |run: &Path| {
        let mut c = lmdb_regress();
        c.env("LMDB_REGRESS_COUNTER", "callgrind").args(["run", "--summary-json", "--resume"]).arg(run);
        run_ok(&mut c)
    };
    let o = resume(&run);
    assert!(stderr(&o).contains("the instruction-counting pass is left"), "{}", stderr(&o));
    let rs = records(&run);
    assert_eq!(rs.iter().filter(|r| r["counted"] == true).count(), 2, "both units counted once");
    assert_eq!(rs.iter().filter(|r| r["type"] == "sample" && r["counted"] != true).count(), 4, "no round added");
    assert!(rs.iter().any(|r| r["type"] == "check" && r["kind"] == "repeat" && r["passed"] == true));
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(!md.contains("Partial"), "{md}");
    let e = fails(lmdb_regress().args(["run", "--resume"]).arg(&run));
    assert!(e.contains("is finished"), "{e}");

    // The layout check of a random-layout run: resumed into the check, not into round 3 of 2.
    let run = dir.path().join("layouts.jsonl");
    std::fs::remove_file(hold.join("go")).unwrap();
    let o = interrupted_at_first_count(small_run(&run, "2"), &hold, &bin);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("interrupted during the layout check"), "{e}");
    assert_eq!(records(&run).last().unwrap()["reason"], "interrupted");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&run)));
    assert!(md.contains("every round was measured, but the layout check"), "{md}");
    let before = samples(&run);
    let o = resume(&run);
    assert!(stderr(&o).contains("every round is measured; the layout check"), "{}", stderr(&o));
    assert_eq!(samples(&run), before, "no round added");
    let rs = records(&run);
    assert!(rs.iter().any(|r| r["type"] == "check" && r["kind"] == "layouts"), "{rs:?}");
    assert_eq!(rs.last().unwrap()["reason"], "rounds");
}

#[test]
fn what_run_resume_cannot_continue_names_what_does() {
    let dir = tempfile::tempdir().unwrap();
    // An interrupted its-10406 continues as its-10406, which then writes its reports.
    let out_dir = dir.path().join("its");
    let mut c = lmdb_regress();
    c.args(["its-10406", "--tags", "0.9.18,0.9.33", "--entries", "1000", "--rounds", "20", "--no-instructions"]);
    let child = c.args(["--layouts", "fixed", "--out-dir"]).arg(&out_dir).stdout(Stdio::null()).stderr(Stdio::piped());
    let child = child.spawn().unwrap();
    let runs = out_dir.join("runs");
    let start = Instant::now();
    let run = loop {
        let file = std::fs::read_dir(&runs).into_iter().flatten().flatten().map(|e| e.path()).next();
        if let Some(f) = file.filter(|f| samples(f) >= 2) {
            break f;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no samples appeared in {}", runs.display());
        std::thread::sleep(Duration::from_millis(20));
    };
    signal(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let hint = format!("continue with `lmdb-regress its-10406 --resume {}`", run.display());
    assert!(
        stderr(&o).contains("interrupted during the measured rounds") && stderr(&o).contains(&hint),
        "{}",
        stderr(&o)
    );
    assert_eq!(names(&out_dir), ["runs"], "no report of a partial reproduction");
    let o = run_ok(lmdb_regress().args(["its-10406", "--resume"]).arg(&run).arg("--out-dir").arg(&out_dir));
    assert!(stdout(&o).contains("The report's claims"), "{}", stdout(&o));
    let stem = run.file_stem().unwrap().to_string_lossy().into_owned();
    for ext in ["md", "txt", "json", "html", "svg"] {
        assert!(out_dir.join(format!("{stem}.{ext}")).is_file(), "{ext}: {:?}", names(&out_dir));
    }
    let plain = dir.path().join("plain.jsonl");
    run_ok(&mut small_run(&plain, "1"));
    let e = fails(lmdb_regress().args(["its-10406", "--resume"]).arg(&plain));
    assert!(e.contains("is no its-10406 run") && e.contains("run --resume"), "{e}");

    // A layout study is refused, with the command that measures its layouts again.
    let study = dir.path().join("study.jsonl");
    let mut c = lmdb_regress();
    c.args(["layouts", "--tag", "0.9.33", "--count", "2", "--rounds", "2", "--warmup", "0", "--entries", "1000"]);
    run_ok(c.args(["--workloads", "readKey", "--layout-seed", "7", "--out"]).arg(&study));
    let e = fails(lmdb_regress().args(["run", "--resume"]).arg(&study));
    let again =
        "lmdb-regress layouts --tag LMDB_0.9.33 --count 2 --rounds 2 --warmup 0 --layout-seed 7 --workloads readKey";
    assert!(e.contains("is a layout study") && e.contains(again), "{e}");
}
