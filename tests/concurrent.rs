//! Readers beside a writer (workload::concurrent): crews that take turns in one process.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common;
use lmdb_regress::ffi::bindings::{Lmdb, MDB_envinfo, MDB_NOSYNC, MDB_RDONLY};
use lmdb_regress::runner::paired_worker::SlotSpec;
use lmdb_regress::workload::concurrent::{self, Crew, ReaderTxn, RemoteReaders, Writer};
use lmdb_regress::workload::lmdb::{Api, Database, Env, EnvOptions, MDB_txn};
use lmdb_regress::workload::reader_procs::ReaderProcs;
use lmdb_regress::workload::Workload;

const KEYS: u32 = 5_000;

fn crew(readers: u32, writer: Option<Writer>) -> Crew {
    Crew { readers, reader_txn: ReaderTxn::PerGet, writer, keys: KEYS }
}

#[test]
fn crews_take_turns_and_no_interval_overlaps_another() {
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let writer = Some(Writer { puts_per_txn: 10, rate: None, quota: None });
    let crews = [crew(2, writer), crew(1, writer), crew(2, None)];
    let envs: Vec<_> = (0..crews.len())
        .map(|i| {
            let dir = tmp.path().join(i.to_string());
            std::fs::create_dir(&dir).unwrap();
            concurrent::fill(&api, &dir, KEYS, MDB_NOSYNC).unwrap()
        })
        .collect();
    let orders = [vec![0, 1, 2], vec![2, 0, 1], vec![1, 2, 0]];
    let out =
        concurrent::alternate(&envs, &crews, (3, Duration::from_millis(30)), |r| orders[r as usize].clone()).unwrap();
    // Every thread of every crew worked in every interval, and only there.
    for (unit, intervals) in out.iter().enumerate() {
        assert_eq!(intervals.len(), 3);
        for i in intervals {
            assert_eq!(i.readers.len(), crews[unit].readers as usize);
            assert_eq!(i.writer.is_some(), crews[unit].writer.is_some());
            assert!(i.readers.iter().chain(&i.writer).all(|w| w.ops > 0 && w.first <= w.last), "{i:?}");
            assert!(i.readers.iter().all(|w| w.latency.as_ref().unwrap().len() == w.ops));
            // A thread's CPU time is its own work inside its span, so never more than the
            // span (the process's clock would be: the crew's threads run at once), give or
            // take the clock read just after the span's end.
            let own =
                |w: &concurrent::Work| w.cpu > Duration::ZERO && w.cpu <= w.last - w.first + Duration::from_micros(100);
            assert!(i.readers.iter().chain(&i.writer).all(own), "{i:?}");
        }
    }
    // In the order run, each interval's last operation ends before the next one's first.
    let mut spans: Vec<_> = Vec::new();
    for (round, order) in orders.iter().enumerate() {
        spans.extend(order.iter().map(|&unit| out[unit][round].span()));
    }
    for pair in spans.windows(2) {
        assert!(pair[0].1 < pair[1].0, "an interval overlaps the next: {pair:?}");
    }
}

#[test]
fn a_rate_limited_writer_keeps_to_its_rate_and_a_failing_crew_says_why() {
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let env = concurrent::fill(&api, tmp.path(), KEYS, MDB_NOSYNC).unwrap();
    let slow = crew(1, Some(Writer { puts_per_txn: 5, rate: Some(1_000), quota: None }));
    let length = Duration::from_millis(50);
    let out = concurrent::alternate(std::slice::from_ref(&env), &[slow], (2, length), |_| vec![0]).unwrap();
    for i in &out[0] {
        let w = i.writer.as_ref().unwrap();
        // Puts are made a transaction at a time, each after the limiter allowed the last.
        let allowed = (w.last - w.first).as_secs_f64() * 1_000.0 + 5.0;
        assert!(w.ops as f64 <= allowed, "{} puts in {:?}", w.ops, w.last - w.first);
    }
    // A crew whose keys are not all in the database: its readers' failure is the error.
    let absent = Crew { keys: KEYS * 10, ..crew(1, None) };
    let e = concurrent::alternate(&[env], &[absent], (1, length), |_| vec![0]).unwrap_err();
    assert!(e.to_string().contains("mdb_get") && e.to_string().contains("MDB_NOTFOUND"), "{e}");
}

/// A reader that holds one read transaction for the interval keeps every page the writer
/// frees meanwhile from reuse, so the file grows by about what each commit dirties; with
/// the reader renewing per get, the same commits reuse the freed pages. Measured, on one
/// environment: stale first, then renewing.
#[test]
fn a_reader_held_open_stops_page_reuse_and_the_pages_are_reused_after() {
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let env = concurrent::fill(&api, tmp.path(), KEYS, MDB_NOSYNC).unwrap();
    // A quota, not the clock, sets the commits: a writer starved of its CPU by other work
    // still makes them within the interval (60 ms left it one commit under load).
    let writer = Some(Writer { puts_per_txn: 10, rate: Some(20_000), quota: Some(300) });
    let growth_per_commit = |reader_txn| {
        let before = env.space(tmp.path()).unwrap().last_page;
        let crew = Crew { reader_txn, ..crew(1, writer) };
        let out =
            concurrent::alternate(std::slice::from_ref(&env), &[crew], (1, Duration::from_millis(600)), |_| vec![0])
                .unwrap();
        let commits = out[0][0].writer.as_ref().unwrap().ops.div_ceil(10);
        assert!(commits >= 20, "{commits} commits");
        (env.space(tmp.path()).unwrap().last_page - before) as f64 / commits as f64
    };
    let held = growth_per_commit(ReaderTxn::PerInterval);
    let renewed = growth_per_commit(ReaderTxn::PerGet);
    assert!(held >= 5.0, "a held reader: {held:.2} new pages a commit");
    assert!(renewed <= 1.0, "renewed per get, after: {renewed:.2} new pages a commit");
}

/// Ageing holds a reader over its commits, as a stalled reader would: every page they
/// free waits in the freelist (a commit frees at least the leaf it copied and the root),
/// and once the reader is gone the next commits reuse them rather than grow the file.
#[test]
fn ageing_leaves_the_pages_a_held_reader_kept_in_the_freelist() {
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let env = concurrent::fill(&api, tmp.path(), KEYS, MDB_NOSYNC).unwrap();
    let fresh = env.space(tmp.path()).unwrap();
    let puts = 100;
    concurrent::age(&env, KEYS, puts).unwrap();
    let aged = env.space(tmp.path()).unwrap();
    assert!(aged.free_pages >= 2 * u64::from(puts), "{fresh:?} then {aged:?}");
    concurrent::age(&env, KEYS, 0).unwrap();
    let writer = Some(Writer { puts_per_txn: 1, rate: None, quota: Some(50) });
    concurrent::alternate(std::slice::from_ref(&env), &[crew(1, writer)], (1, Duration::from_millis(5)), |_| vec![0])
        .unwrap();
    let after = env.space(tmp.path()).unwrap();
    assert!(after.last_page <= aged.last_page + 2, "reused, not grown: {aged:?} then {after:?}");
}

/// Reader processes of `tags`' libraries, one slot each (as a paired worker starts them),
/// `count` of them, their board in `dir`.
fn reader_procs(tags: &[&str], count: u32, dir: &Path) -> ReaderProcs {
    let mut slots = String::new();
    for tag in tags {
        let library = common::library(tag);
        let sha256 = lmdb_regress::artifact::sha256(&library).unwrap();
        let version = Api::load(&library).unwrap().version().3;
        slots += &SlotSpec {
            library,
            sha256,
            version,
            dir: None,
            workloads: Workload::parse_list("readwhilewriting").unwrap(),
            readers: None,
            layout: 0,
        }
        .line()
        .unwrap();
    }
    let file = dir.join("slots");
    std::fs::write(&file, slots).unwrap();
    ReaderProcs::start(count, dir, |k, board| {
        let mut c = Command::new(common::BIN);
        c.arg("reader-proc").arg("--slots").arg(&file).arg("--board").arg(board).args(["--index", &k.to_string()]);
        c
    })
    .unwrap()
}

/// Every reader process opens each crew's environment, as a paired worker's pass does.
fn open_everywhere(procs: &mut ReaderProcs, dirs: &[std::path::PathBuf]) {
    open_everywhere_with(procs, dirs, MDB_NOSYNC);
}

/// [`open_everywhere`] with the environments' `flags`.
fn open_everywhere_with(procs: &mut ReaderProcs, dirs: &[std::path::PathBuf], flags: u32) {
    for (unit, d) in dirs.iter().enumerate() {
        procs.open(unit, unit, d, &reader_env(flags)).unwrap();
    }
}

/// How a reader process opens a crew's environment of `flags`.
fn reader_env(flags: u32) -> EnvOptions {
    EnvOptions {
        map_size: concurrent::map_size(KEYS),
        flags,
        txn_flags: 0,
        db: Database::Unnamed,
        lmdb10: Default::default(),
    }
}

/// Readers in processes of their own (`--reader-procs`): every crew's readers work in
/// every interval beside its writer, all of them at once (their spans, compared as
/// CLOCK_MONOTONIC across processes, share a moment), and no interval overlaps the next.
/// A reader process holding its read transaction for the interval keeps the writer's
/// freed pages from reuse: its slot in the lock file's reader table is the writer's to see.
#[test]
fn reader_processes_work_beside_the_writer_and_no_interval_overlaps_another() {
    let tmp = tempfile::tempdir().unwrap();
    let tags = ["0.9.18", "0.9.33"];
    let apis: Vec<Api> = tags.iter().map(|t| Api::load(&common::library(t)).unwrap()).collect();
    let dirs: Vec<_> = (0..2).map(|i| tmp.path().join(i.to_string())).collect();
    let envs: Vec<_> = apis
        .iter()
        .zip(&dirs)
        .map(|(api, dir)| {
            std::fs::create_dir(dir).unwrap();
            concurrent::fill(api, dir, KEYS, MDB_NOSYNC).unwrap()
        })
        .collect();
    let mut procs = reader_procs(&tags, 2, tmp.path());
    open_everywhere(&mut procs, &dirs);
    let writer = Some(Writer { puts_per_txn: 10, rate: Some(20_000), quota: None });
    let crews = [crew(2, writer), Crew { reader_txn: ReaderTxn::PerInterval, ..crew(1, writer) }];
    let before = envs[1].space(&dirs[1]).unwrap().last_page;
    let orders = [vec![0, 1], vec![1, 0], vec![0, 1]];
    let length = Duration::from_millis(30);
    let remote = Some(&mut procs as &mut dyn RemoteReaders);
    let out = concurrent::alternate_with(&envs, &crews, remote, (3, length), |r| orders[r as usize].clone()).unwrap();
    for (unit, intervals) in out.iter().enumerate() {
        for i in intervals {
            assert_eq!(i.readers.len(), crews[unit].readers as usize);
            let all = || i.readers.iter().chain(&i.writer);
            assert!(all().all(|w| w.ops > 0 && w.first <= w.last), "{i:?}");
            assert!(i.readers.iter().all(|w| w.latency.as_ref().unwrap().len() == w.ops));
            let own = |w: &concurrent::Work| w.cpu <= w.last - w.first + Duration::from_micros(100);
            assert!(i.readers.iter().all(own), "a reader's CPU time is its own: {i:?}");
            let (started, stopped) = (all().map(|w| w.first).max().unwrap(), all().map(|w| w.last).min().unwrap());
            assert!(started < stopped, "the readers and the writer were all at work at once: {i:?}");
        }
    }
    let mut spans: Vec<_> = Vec::new();
    for (round, order) in orders.iter().enumerate() {
        spans.extend(order.iter().map(|&unit| out[unit][round].span()));
    }
    for pair in spans.windows(2) {
        assert!(pair[0].1 < pair[1].0, "an interval overlaps the next: {pair:?}");
    }
    let commits: u64 = out[1].iter().map(|i| i.writer.as_ref().unwrap().ops.div_ceil(10)).sum();
    let grown = envs[1].space(&dirs[1]).unwrap().last_page - before;
    // Renewed per get, the same commits reuse what they free: a page a commit at most.
    assert!(grown as f64 >= 3.0 * commits as f64, "{grown} pages for {commits} commits beside a held reader");
}

/// A reader process that ends mid-run fails the crew's interval, saying which process
/// and how it ended; once the reader processes are dropped, none is left.
#[test]
fn a_reader_process_that_ends_fails_the_crew_and_none_is_left_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let dir = tmp.path().join("0");
    std::fs::create_dir(&dir).unwrap();
    let env = concurrent::fill(&api, &dir, KEYS, MDB_NOSYNC).unwrap();
    let mut procs = reader_procs(&["0.9.33"], 2, tmp.path());
    open_everywhere(&mut procs, std::slice::from_ref(&dir));
    let pids = procs.pids();
    let kill = |round: u32| {
        if round == 2 {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pids[1] as i32), nix::sys::signal::SIGKILL).unwrap();
        }
        vec![0]
    };
    let writer = Some(Writer { puts_per_txn: 1, rate: None, quota: None });
    let remote = Some(&mut procs as &mut dyn RemoteReaders);
    let e = concurrent::alternate_with(
        std::slice::from_ref(&env),
        &[crew(2, writer)],
        remote,
        (4, Duration::from_millis(5)),
        kill,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("reader process 1 of 2") && e.contains("SIGKILL"), "{e}");
    drop(procs);
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "reader process {pid} is left");
    }
}

/// `run --reader-procs` end to end: the plan records it as a value, every crew's figures
/// come from its reader processes (one list entry a reader, every interval), the stale
/// readers' space is exact as with threads, and the report's method and Test Environment
/// say the readers were processes.
#[test]
fn a_run_with_reader_processes_records_and_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let mut c = common::lmdb_regress();
    c.args(["run", "--suite", "concurrency", "--workloads", "stalereader", "--tags", "0.9.18,0.9.33"])
        .args(["--readers", "2", "--reader-procs", "--rounds", "2", "--warmup", "0", "--entries", "2000"])
        .args(["--intervals", "3", "--interval-ms", "5", "--puts-per-interval", "40", "--layouts", "fixed"])
        .args(["--no-coverage", "--out"])
        .arg(&file);
    let md = String::from_utf8_lossy(&common::run_ok(&mut c).stdout).to_string();
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["config"]["preset"]["reader_procs"], true, "{}", lines[0]);
    let samples: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "sample").collect();
    assert_eq!(samples.len(), 2 * 2, "tags × rounds: {samples:?}");
    let mut files = std::collections::BTreeSet::new();
    for s in &samples {
        let crew = &s["figures"]["crew"];
        let ops = crew["reader_ops"].as_array().unwrap();
        assert!(ops.len() == 3 && ops.iter().all(|i| i.as_array().unwrap().len() == 2), "{s}");
        assert!(crew["writer_ops"].as_array().unwrap().iter().all(|n| n == 40), "the quota: {s}");
        files.insert(s["space"]["file-size"].as_u64().unwrap());
    }
    assert_eq!(files.len(), 1, "a stale reader's file is the same size for every unit and round");
    assert!(md.contains("Readers in processes (--reader-procs)"), "{md}");
    assert!(md.contains("each reader a process of its own (--reader-procs)"), "{md}");
}

/// `--reader-procs` on a suite without readers, or where a unit's process holds no
/// writer to run them beside (`--pairing process`), is refused before anything is built.
#[test]
fn reader_processes_are_refused_where_no_crew_runs_them() {
    let refused = |args: &[&str]| {
        let out =
            common::lmdb_regress().args(["run", "--tags", "0.9.33", "--reader-procs"]).args(args).output().unwrap();
        assert!(!out.status.success());
        common::stderr(&out)
    };
    let e = refused(&["--workloads", "readKey"]);
    assert!(e.contains("--reader-procs") && e.contains("--suite concurrency only"), "{e}");
    let e = refused(&["--suite", "concurrency", "--pairing", "process"]);
    assert!(e.contains("--reader-procs") && e.contains("--pairing process"), "{e}");
}

/// `run --suite concurrency` end to end: a unit per tag and reader count, paired by
/// interval, each sample with its crew's figures and its intervals as chunks; the stale
/// reader's space is exact (the same for every unit of one format, and in every round);
/// every format's report shows gets per second and the scaling against one reader.
#[test]
fn a_concurrency_run_pairs_units_of_each_reader_count_by_interval() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let mut c = common::lmdb_regress();
    c.args(["run", "--suite", "concurrency", "--tags", "0.9.18,0.9.33", "--readers", "1,2", "--rounds", "2"])
        .args(["--warmup", "0", "--entries", "2000", "--intervals", "3", "--interval-ms", "20"])
        .args(["--puts-per-interval", "40", "--layouts", "fixed", "--no-coverage", "--format", "json", "--out"])
        .arg(&file);
    let report = common::json(&common::run_ok(&mut c));
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["plan"]["metric"], "reader-ops", "the suite's metric unless --metric says");
    let samples: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "sample").collect();
    assert_eq!(samples.len(), 2 * 2 * 3 * 2, "tags × readers × workloads × rounds: {samples:?}");
    let mut stale_files = std::collections::BTreeSet::new();
    for s in &samples {
        let crew = &s["figures"]["crew"];
        let readers = if s["tag"].as_str().unwrap().ends_with("[2 readers]") { 2 } else { 1 };
        assert_eq!(crew["readers"], readers, "{s}");
        assert_eq!(s["chunks_ns"].as_array().unwrap().len(), 3, "an interval a chunk: {s}");
        assert!(crew["reader_ops"].as_array().unwrap().iter().all(|i| i.as_array().unwrap().len() == readers));
        let cpu = crew["reader_cpu_ns"].as_array().unwrap();
        assert!(cpu.len() == 3 && cpu.iter().all(|i| i.as_array().unwrap().len() == readers), "{s}");
        assert_eq!(crew["writer_cpu_ns"].as_array().unwrap().len(), 3, "{s}");
        if s["workload"] == "stalereader" {
            assert!(crew["writer_ops"].as_array().unwrap().iter().all(|n| n == 40), "the quota: {s}");
            stale_files.insert(s["space"]["file-size"].as_u64().unwrap());
        }
    }
    assert_eq!(stale_files.len(), 1, "a stale reader's file is the same size for every unit and round");
    let text = report.to_string();
    assert!(text.contains("reader_ops_per_s") && text.contains("scaling"), "{text}");
    let md = common::run_ok(common::lmdb_regress().args(["report", "--format", "markdown"]).arg(&file));
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("LMDB_0.9.33 [2 readers]") && md.contains("vs 1 reader") && md.contains("ns/get"), "{md}");
    // The gate finds 0.9.33's comparisons at each reader count: none is "not judged", and
    // each names its metric.
    let gate = common::lmdb_regress().args(["report", "--fail-on", "slower:1000%"]).arg(&file).output().unwrap();
    let said = common::stderr(&gate);
    assert!(!said.contains("not judged") && said.contains("reader time per get"), "{said}");
}

/// A writer without a quota puts what its intervals' time allows, so the file it leaves
/// measures the host's speed: the worker does not record it, and a file written before it
/// stopped (which holds it) shows it in no format as a space figure (a column, a ratio, a
/// step), as it shows a quota's exact space.
#[test]
fn a_writer_run_for_a_time_leaves_no_space_figure_in_any_format() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    let mut c = common::lmdb_regress();
    c.args(["run", "--suite", "concurrency", "--workloads", "readwhilewriting", "--tags", "0.9.18,0.9.33"])
        .args(["--rounds", "3", "--warmup", "0", "--entries", "2000", "--intervals", "3", "--interval-ms", "5"])
        .args(["--layouts", "fixed", "--no-coverage", "--out"])
        .arg(&file);
    common::run_ok(&mut c);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("\"file-size\""), "no space recorded for a writer run for a time: {text}");
    std::fs::write(&file, with_space_on_every_sample(&text)).unwrap();
    // Every format, each to its files (csv makes two).
    let out = dir.path().join("report");
    let formats = "markdown,text,json,csv,svg,html,github";
    common::run_ok(common::lmdb_regress().args(["report", "--format", formats, "--out-dir"]).arg(&out).arg(&file));
    let written: Vec<std::path::PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(written.len() >= 7, "a file a format at least: {written:?}");
    for path in written {
        let text = std::fs::read_to_string(&path).unwrap();
        for space in ["file bytes", "file-size", "file_size", "free pages", "free-pages", "leaf pages", "leaf-pages"] {
            assert!(!text.contains(space), "{} shows {space}: {text}", path.display());
        }
        assert!(text.contains("0.9.33"), "{} reports the run: {text}", path.display());
    }
}

/// The run file as a worker that recorded every pass's space wrote it.
fn with_space_on_every_sample(text: &str) -> String {
    let space = serde_json::json!({"file-size": 1_048_576, "last-page": 255, "branch-pages": 1,
        "leaf-pages": 200, "overflow-pages": 0, "depth": 2, "free-pages": 40});
    let lines = text.lines().map(|line| {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "sample" {
            v["space"] = space.clone();
        }
        v.to_string()
    });
    lines.map(|l| l + "\n").collect()
}

/// The reader table of `env` as mdb_reader_list prints it: a line for every slot a reader
/// holds (its pid, thread and snapshot, "-" between transactions), in the table's order.
fn reader_slots(lmdb: &Lmdb, env: &Env) -> Vec<String> {
    unsafe extern "C" fn line(msg: *const std::ffi::c_char, ctx: *mut std::ffi::c_void) -> std::ffi::c_int {
        let lines = &mut *(ctx as *mut Vec<String>);
        lines.push(std::ffi::CStr::from_ptr(msg).to_string_lossy().into_owned());
        0
    }
    let mut lines: Vec<String> = Vec::new();
    let rc = unsafe { lmdb.mdb_reader_list(env.env, Some(line), &mut lines as *mut Vec<String> as *mut _) };
    assert!(rc >= 0, "mdb_reader_list: {rc}");
    // Its header, or "(no active readers)", is no slot.
    lines.into_iter().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).collect()
}

/// The slots of `env`'s reader table ever used (mdb_env_info's me_numreaders): LMDB takes
/// the first free one, so a slot released and taken again does not add one.
fn slots_used(env: &Env) -> u32 {
    let mut info = std::mem::MaybeUninit::<MDB_envinfo>::zeroed();
    assert_eq!(unsafe { (env.api.mdb_env_info)(env.env, info.as_mut_ptr()) }, 0);
    unsafe { info.assume_init() }.me_numreaders
}

/// A read transaction of this thread on `env`, held until aborted.
fn hold(env: &Env) -> *mut MDB_txn {
    let mut txn = std::ptr::null_mut();
    assert_eq!(unsafe { (env.api.mdb_txn_begin)(env.env, std::ptr::null_mut(), MDB_RDONLY, &mut txn) }, 0);
    txn
}

/// slotwhilewriting's get, step by step against the reader table: each get leaves no slot
/// held, and the slot it took is free for the next reader, who takes it (the table uses
/// no more slots than readers held at once); readwhilewriting's reset and renew keeps the
/// slot between gets in the same environment (MDB_NOTLS), so the first check can fail.
#[test]
fn a_reader_that_claims_a_slot_per_get_releases_it_each_get() {
    for tag in ["0.9.18", "0.9.33"] {
        let library = common::library(tag);
        let api = Api::load(&library).unwrap();
        // SAFETY: the library Api loaded: dlopen shares it, and its env is the same.
        let lmdb = unsafe { Lmdb::new(&library) }.unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let env = concurrent::fill(&api, tmp.path(), KEYS, MDB_NOSYNC | ReaderTxn::SlotPerGet.env_flags()).unwrap();
        let mut held = Vec::new();
        for i in 0..4 {
            concurrent::get_once(&env, std::ptr::null_mut(), i, ReaderTxn::SlotPerGet).unwrap();
            assert_eq!(reader_slots(&lmdb, &env).len(), held.len(), "{tag}: get {i} left its slot held");
            held.push(hold(&env));
            assert_eq!(slots_used(&env), held.len() as u32, "{tag}: get {i}'s slot was not taken again");
        }
        let renewed = hold(&env);
        concurrent::get_once(&env, renewed, 0, ReaderTxn::PerGet).unwrap();
        assert_eq!(reader_slots(&lmdb, &env).len(), held.len() + 1, "{tag}: reset and renew keep the slot");
        for txn in held.into_iter().chain([renewed]) {
            unsafe { (api.mdb_txn_abort)(txn) };
        }
        assert_eq!(reader_slots(&lmdb, &env), Vec::<String>::new(), "{tag}");
    }
}

/// A slotwhilewriting crew, as threads and as reader processes, leaves no reader slot held
/// between intervals (looked at between rounds, its threads or processes parked with their
/// environments open); a readwhilewriting crew's readers keep theirs (a thread's in its
/// thread-local key, a process's for its environment) for their next interval.
#[test]
fn a_crew_that_claims_a_slot_per_get_holds_none_between_intervals_in_threads_and_processes() {
    let library = common::library("0.9.33");
    let api = Api::load(&library).unwrap();
    let lmdb = unsafe { Lmdb::new(&library) }.unwrap();
    let writer = Some(Writer { puts_per_txn: 1, rate: None, quota: None });
    for (reader_txn, slots) in [(ReaderTxn::SlotPerGet, 0), (ReaderTxn::PerGet, 2)] {
        for processes in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("0");
            std::fs::create_dir(&dir).unwrap();
            let flags = MDB_NOSYNC | reader_txn.env_flags();
            let env = concurrent::fill(&api, &dir, KEYS, flags).unwrap();
            let mut procs = processes.then(|| reader_procs(&["0.9.33"], 2, tmp.path()));
            if let Some(p) = procs.as_mut() {
                open_everywhere_with(p, std::slice::from_ref(&dir), flags);
            }
            let seen = std::cell::RefCell::new(Vec::new());
            let look = |round: u32| {
                if round > 0 {
                    seen.borrow_mut().push(reader_slots(&lmdb, &env).len());
                }
                vec![0]
            };
            let crew = Crew { reader_txn, ..crew(2, writer) };
            let remote = procs.as_mut().map(|p| p as &mut dyn RemoteReaders);
            let length = Duration::from_millis(10);
            let out =
                concurrent::alternate_with(std::slice::from_ref(&env), &[crew], remote, (3, length), look).unwrap();
            // Every reader got at least once in every interval, so slots were claimed (a
            // reader scheduled late in a loaded host may get only once).
            assert!(out[0].iter().all(|i| i.readers.len() == 2 && i.readers.iter().all(|w| w.ops > 0)));
            assert_eq!(*seen.borrow(), [slots, slots], "{reader_txn:?}, processes {processes}: slots held between");
        }
    }
}

/// A reader process that hangs (stopped by SIGSTOP before an interval) fails the crew's
/// interval once the grace after the interval's end has passed, named by its index, pid
/// and unit, well before any watchdog (a grace of 0.5 s here; 5 s in a run, whose watchdog
/// waits 60 s at least); every reader process is killed at once, so none is left. Beside
/// readers that claim a slot per get, whose writer ends at the deadline, and beside stale
/// readers, whose writer waits for the hung one to begin.
#[test]
fn a_reader_process_that_hangs_fails_the_crew_named_and_none_is_left_behind() {
    let api = Api::load(&common::library("0.9.33")).unwrap();
    for reader_txn in [ReaderTxn::SlotPerGet, ReaderTxn::PerInterval] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("0");
        std::fs::create_dir(&dir).unwrap();
        let flags = MDB_NOSYNC | reader_txn.env_flags();
        let env = concurrent::fill(&api, &dir, KEYS, flags).unwrap();
        let mut procs = reader_procs(&["0.9.33"], 2, tmp.path());
        open_everywhere_with(&mut procs, std::slice::from_ref(&dir), flags);
        procs.set_grace(Duration::from_millis(500));
        let pids = procs.pids();
        let stop = |round: u32| {
            if round == 2 {
                let pid = nix::unistd::Pid::from_raw(pids[1] as i32);
                nix::sys::signal::kill(pid, nix::sys::signal::SIGSTOP).unwrap();
            }
            vec![0]
        };
        let writer = Some(Writer { puts_per_txn: 1, rate: None, quota: None });
        let crew = Crew { reader_txn, ..crew(2, writer) };
        let remote = Some(&mut procs as &mut dyn RemoteReaders);
        let e = concurrent::alternate_with(
            std::slice::from_ref(&env),
            &[crew],
            remote,
            (4, Duration::from_millis(5)),
            stop,
        )
        .unwrap_err()
        .to_string();
        let named = format!("reader process 1 of 2 (pid {}) hung on unit 0 (slot 0)", pids[1]);
        assert!(e.contains(&named) && e.contains("never began its reads"), "{reader_txn:?}: {e}");
        for pid in &pids {
            assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{reader_txn:?}: reader process {pid} is left");
        }
        let again = procs.open(1, 0, &dir, &reader_env(flags));
        assert!(again.unwrap_err().to_string().contains("hung on unit 0"), "{reader_txn:?}: later orders say why");
    }
}

/// A reader process that hangs outside an interval (stopped before the order to open a
/// unit's environment) fails the order named, by its index, pid and the order, once six
/// graces have passed (3 s here; 30 s in a run, half the watchdog's floor), and every
/// reader process is killed, so none is left.
#[test]
fn a_reader_process_that_hangs_on_an_order_is_named_and_none_is_left_behind() {
    let api = Api::load(&common::library("0.9.33")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("0");
    std::fs::create_dir(&dir).unwrap();
    let _env = concurrent::fill(&api, &dir, KEYS, MDB_NOSYNC).unwrap();
    let mut procs = reader_procs(&["0.9.33"], 2, tmp.path());
    procs.set_grace(Duration::from_millis(500));
    let pids = procs.pids();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pids[1] as i32), nix::sys::signal::SIGSTOP).unwrap();
    let e = procs.open(0, 0, &dir, &reader_env(MDB_NOSYNC)).unwrap_err().to_string();
    let named = format!("reader process 1 of 2 (pid {}) hung: no answer to its order to open unit 0 (slot 0)", pids[1]);
    assert!(e.contains(&named), "{e}");
    for pid in &pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "reader process {pid} is left");
    }
}
