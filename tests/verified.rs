//! What was verified is what is compiled, loaded and measured, as faults show: a source
//! changed while the compiler runs (a stand-in compiler opens the window at the moment it
//! compiles), a library swapped under a forged build record, a library swapped between two
//! sessions of a resumed run, a read-only cache, a killed build whose compiler's children
//! must not outlive it, and what is refused before anything is built.

use crate::build_cache::tampered_library;
use crate::common;
use crate::safety::{fails, names, records, signal, small_run, start_long_run};

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A C compiler, `dir/name`, that runs the shell `fault` (its arguments in "$@") when its
/// arguments match the shell pattern `when`, then compiles as cc does.
fn faulty_cc(dir: &Path, name: &str, when: &str, fault: &str) -> PathBuf {
    let path = dir.join(name);
    let script = format!("#!/bin/sh\ncase \" $* \" in {when}) {fault} ;; esac\nexec cc \"$@\"\n");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Shell appending a constructor that writes `$MARKER` when loaded to each file of `files`
/// (a shell word list; staged copies are read-only, so each is made writable first).
fn add_constructor(files: &str) -> String {
    let c = "#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void swapped_in(void) \
             { const char *p = getenv(\"MARKER\"); FILE *f = p ? fopen(p, \"w\") : NULL; if (f) fclose(f); }\n";
    format!("for f in {files}; do chmod u+w \"$f\"; printf '%s' '{c}' >> \"$f\"; done")
}

/// Shell adding the constructor to the compiler's own input named `*/file`.
fn add_constructor_to_argument(file: &str) -> String {
    format!("for a in \"$@\"; do case \"$a\" in */{file}) {} ;; esac; done", add_constructor("\"$a\""))
}

fn build_with(cc: &Path, extra: &[&str]) -> Output {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["build", "--tags", "0.9.33", "--json", "--cc"]).arg(cc).args(extra);
    c.output().unwrap()
}

/// [`build_with`] at -O0: what the compiler is given and what the build records are
/// checked alike at any level, and -O0 compiles mdb.c several times faster.
fn unoptimised_build_with(cc: &Path, extra: &[&str]) -> Output {
    build_with(cc, &[&["--cflags", &unoptimised_cflags()][..], extra].concat())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn sha256(path: &Path) -> String {
    hex::encode(<sha2::Sha256 as sha2::Digest>::digest(std::fs::read(path).unwrap()))
}

/// Replaces `path` (a hard link into the shared fixture: never written through).
fn replace(path: &Path, bytes: &[u8]) {
    std::fs::remove_file(path).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn edit_record(folder: &Path, edit: impl Fn(&mut Value)) {
    let mut rec: Value = serde_json::from_slice(&std::fs::read(folder.join("build.json")).unwrap()).unwrap();
    edit(&mut rec);
    replace(&folder.join("build.json"), rec.to_string().as_bytes());
}

#[test]
fn a_source_changed_while_the_compiler_runs_is_never_compiled() {
    let dir = tempfile::tempdir().unwrap();
    let builds = test_cache().join("builds");
    let pattern = "*/mdb.c\\ *";

    // The copy the compiler was given, changed as it starts: the build fails, naming it.
    let cc = faulty_cc(dir.path(), "cc-changes-its-input", pattern, &add_constructor_to_argument("midl.c"));
    let o = unoptimised_build_with(&cc, &[]);
    assert!(!o.status.success(), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("src/midl.c has SHA-256") && e.contains("it is not the verified file"), "{e}");
    assert!(!names(&builds).iter().any(|n| n.starts_with('.')), "staging left: {:?}", names(&builds));

    // The same for the objects random layouts link, the C twin and LMDB's own test programs.
    let objects = "*-ffunction-sections*/midl.c\\ *";
    let cc = faulty_cc(dir.path(), "cc-changes-objects", objects, &add_constructor_to_argument("midl.c"));
    let e = stderr(&unoptimised_build_with(&cc, &["--layout-objects"]));
    assert!(e.contains("objects for random layouts") && e.contains("src/midl.c has SHA-256"), "{e}");
    let cc =
        faulty_cc(dir.path(), "cc-changes-the-twin", "*/workloads.c\\ *", &add_constructor_to_argument("workloads.c"));
    let o = unoptimised_build_with(&cc, &["--c-harness"]);
    let failed = json(&o)[0]["failed_builds"][0]["reason"].as_str().unwrap_or_default().to_string();
    assert!(failed.contains("harness/workloads.c has SHA-256"), "{}", stdout(&o));
    let repo = dir.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    std::fs::write(repo.join("libraries/liblmdb/mtest.c"), "#include \"lmdb.h\"\nint main(void) { return 0; }\n")
        .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "a test program"]);
    git(&repo, &["tag", "-f", "LMDB_0.9.33"]);
    let cc = faulty_cc(dir.path(), "cc-changes-mtest", "*/mtest.c\\ *", &add_constructor_to_argument("mtest.c"));
    let e = stderr(&unoptimised_build_with(&cc, &["--git", repo.to_str().unwrap()]));
    assert!(e.contains("mtest.c") && e.contains("after compiling, but the commit's program is"), "{e}");

    // The fault: while the compiler runs, a constructor goes into the cached midl.c.
    // The build compiles its own verified copies, and records what it read.
    let cached = format!("{}/sources/*/midl.c", test_cache().display());
    let cc = faulty_cc(dir.path(), "cc-changes-the-cache", pattern, &add_constructor(&cached));
    let o = unoptimised_build_with(&cc, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let swapped = names(&test_cache().join("sources")).iter().any(|k| {
        std::fs::read_to_string(test_cache().join("sources").join(k).join("midl.c"))
            .is_ok_and(|t| t.contains("swapped_in"))
    });
    assert!(swapped, "the fault did not fire");
    let row = &json(&o)[0];
    let library = &row["builds"][0];
    assert_eq!(library["compiled"]["src/midl.c"], row["files"]["midl.c"], "{library}");
    let artifact = PathBuf::from(library["artifact"].as_str().unwrap());
    assert!(!contains(&std::fs::read(&artifact).unwrap(), b"swapped_in"), "the changed midl.c was compiled");
    assert_eq!(sha256(&artifact.parent().unwrap().join("src/midl.c")), row["files"]["midl.c"].as_str().unwrap());
    let marker = dir.path().join("marker");
    let mut c = lmdb_regress();
    c.env("MARKER", &marker).args(["worker", "version", "--library"]).arg(&artifact);
    run_ok(
        c.args(["--library-sha256", library["sha256"].as_str().unwrap()])
            .args(["--library-version", library["lmdb_version"].as_str().unwrap()]),
    );
    assert!(!marker.exists(), "the constructor ran");
    // The changed cache copy is refused from now on.
    let mut c = lmdb_regress();
    let e = fails(c.env("LMDB_REGRESS_OFFLINE", "1").args(["source-dir", "0.9.33"]));
    assert!(e.contains("do not match the pinned hashes") && e.contains("midl.c"), "{e}");
}

#[test]
fn a_library_swapped_under_a_forged_record_is_rebuilt_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (b33, b18) = (build_folder("0.9.33"), build_folder("0.9.18"));
    let record: Value = serde_json::from_slice(&std::fs::read(b33.join("build.json")).unwrap()).unwrap();
    let (built, lib18) = (record["sha256"].as_str().unwrap().to_string(), b18.join("liblmdb.so"));

    // The worker measures only a library that reports the version the run records for it.
    let mut c = lmdb_regress();
    c.args(["worker", "version", "--library"]).arg(&lib18).args(["--library-sha256", &sha256(&lib18)]);
    let e = fails(c.args(["--library-version", record["lmdb_version"].as_str().unwrap()]));
    assert!(e.contains("refusing to measure") && e.contains("reports \"LMDB 0.9.18"), "{e}");

    // The fault: 0.9.18's library in 0.9.33's folder, the record's SHA-256 made to match.
    replace(&b33.join("liblmdb.so"), &std::fs::read(&lib18).unwrap());
    edit_record(&b33, |r| r["sha256"] = sha256(&lib18).into());
    let run = |name: &str| {
        let mut c = lmdb_regress();
        c.args(["run", "--tags", "0.9.33", "--layouts", "fixed", "--entries", "1000", "--workloads", "readKey"]);
        let out = dir.path().join(name);
        let o = run_ok(c.args(["--rounds", "1", "--warmup", "0", "--out"]).arg(&out));
        (stderr(&o), records(&out)[0]["tags"][0]["builds"][0].clone())
    };
    let (e, header) = run("a.jsonl");
    assert!(e.contains("is not used") && e.contains("is not LMDB 0.9.33: (") && e.contains("rebuilding"), "{e}");
    // Rebuilt from the same verified copies: the same bytes as first built.
    assert_eq!(header["sha256"], built.as_str());
    assert_eq!(header["lmdb_version"], record["lmdb_version"]);

    // A forged commit is not copied into the run's header: the tag's pinned commit is.
    edit_record(&b33, |r| r["commit"] = "0".repeat(40).into());
    let (e, header) = run("b.jsonl");
    assert!(!e.contains("rebuilding"), "{e}");
    assert_eq!(header["commit"], record["commit"]);

    // A record whose sources, or whose id, are not its folder's is rebuilt; so is a build
    // whose kept copy of its sources changed.
    let rebuilt = |why: &str| {
        let o = build_with(Path::new("cc"), &[]);
        assert!(stderr(&o).contains("is not used") && stderr(&o).contains(why), "{why}: {}", stderr(&o));
    };
    edit_record(&b33, |r| r["files"]["midl.c"] = "0".repeat(64).into());
    rebuilt("its record's source hashes are not those it was compiled from");
    edit_record(&b33, |r| r["build_id"] = "0123456789abcdef".into());
    rebuilt("but its record names build 0123456789abcdef");
    let copy = b33.join("src/midl.c");
    let text = std::fs::read(&copy).unwrap();
    replace(&copy, &[text.as_slice(), b"\n/* edited */\n"].concat());
    rebuilt("src/midl.c has SHA-256");
}

#[test]
fn a_library_swapped_between_two_sessions_is_refused_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let evil = tampered_library(dir.path());
    let marker = dir.path().join("marker");
    let run = dir.path().join("run.jsonl");
    let mut first = start_long_run(&run, 2, &[]);
    signal(&first, libc::SIGKILL);
    first.wait().unwrap();

    // Same version, other bytes, and a record made to match them.
    let b33 = build_folder("0.9.33");
    let built = sha256(&b33.join("liblmdb.so"));
    replace(&b33.join("liblmdb.so"), &std::fs::read(&evil).unwrap());
    edit_record(&b33, |r| r["sha256"] = sha256(&evil).into());
    let before = std::fs::read(&run).unwrap();
    let mut c = lmdb_regress();
    let e = fails(c.env("MARKER", &marker).args(["run", "--resume"]).arg(&run));
    assert!(e.contains("run.jsonl cannot be resumed") && e.contains("LMDB_0.9.33 on the rust engine"), "{e}");
    assert!(e.contains(&built) && e.contains(&sha256(&evil)), "both hashes: {e}");
    assert_eq!(std::fs::read(&run).unwrap(), before, "nothing appended");
    assert!(!marker.exists(), "the swapped library was loaded");
}

/// `c` without the capabilities that let root write where permissions say no (none to
/// drop for another user, whom the permissions stop anyway).
fn as_permissions_say(c: &mut Command) -> &mut Command {
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            // CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER (linux/capability.h).
            for cap in [1, 2, 3] {
                libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong);
            }
            Ok(())
        })
    }
}

#[test]
fn a_read_only_cache_is_refused_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let chmod = |mode: &str| run_ok(Command::new("chmod").args(["-R", mode]).arg(&cache));
    run_ok(Command::new("cp").arg("-a").arg(test_cache()).arg(&cache));
    chmod("a-w");
    let probe = as_permissions_say(Command::new("touch").arg(cache.join("builds/x"))).output().unwrap();
    assert!(!probe.status.success(), "the copy is writable: no fault to test");

    let out = dir.path().join("run.jsonl");
    let mut run = small_run(&out, "1");
    let e = fails(as_permissions_say(run.env("LMDB_REGRESS_CACHE", &cache)));
    assert!(e.contains(&format!("the cache {} cannot be written", cache.display())), "{e}");
    assert!(e.contains("set LMDB_REGRESS_CACHE") && !e.contains("sample"), "{e}");
    assert!(!out.exists(), "refused before the run file");
    chmod("u+w");
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

#[test]
fn a_killed_build_leaves_no_compiler_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // The compiler starts a child of its own (as gcc starts cc1) and hangs.
    let hang = format!("sleep 600 & echo $$ $! > {0}.new; mv {0}.new {0}; wait", pids.display());
    let cc = faulty_cc(dir.path(), "cc-that-hangs", "*/mdb.c\\ *", &hang);
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["build", "--tags", "0.9.33", "--cc"]).arg(&cc);
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    while !pids.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "the compiler never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started: Vec<u32> =
        std::fs::read_to_string(&pids).unwrap().split_whitespace().map(|p| p.parse().unwrap()).collect();
    assert_eq!(started.len(), 2);
    assert!(started.iter().all(|&p| alive(p)));
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let start = Instant::now();
    while started.iter().any(|&p| alive(p)) {
        assert!(start.elapsed() < Duration::from_secs(60), "outlived the killed build: {started:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn what_cannot_be_had_is_refused_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    // Every tag is cached, and still a --git that is no repository is refused.
    let mut c = lmdb_regress();
    let e = fails(c.args(["build", "--tags", "0.9.33", "--git", "/nonexistent"]));
    assert!(e.contains("--git /nonexistent is not a git repository"), "{e}");
    let mut c = lmdb_regress();
    let e = fails(c.env("LMDB_GIT", "/nonexistent").args(["build", "--tags", "0.9.33"]));
    assert!(e.contains("LMDB_GIT /nonexistent is not a git repository"), "{e}");

    // A history range whose start is not on its end's line, or that runs backwards.
    let repo = dir.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    let mdb = repo.join("libraries/liblmdb/mdb.c");
    let touch = |msg: &str| {
        std::fs::write(&mdb, std::fs::read_to_string(&mdb).unwrap() + &format!("\n/* {msg} */\n")).unwrap();
        git(&repo, &["commit", "-q", "-am", msg]);
    };
    git(&repo, &["checkout", "-q", "-b", "side"]);
    touch("on a side branch");
    git(&repo, &["checkout", "-q", "master"]);
    touch("on master");
    let out_dir = dir.path().join("history");
    let history = |range: &str| {
        let mut c = lmdb_regress();
        c.args(["history", "--range", range, "--git"]).arg(&repo).arg("--out-dir").arg(&out_dir);
        fails(&mut c)
    };
    let e = history("side..master");
    assert!(e.contains("is not an ancestor of") && e.contains("the two lines parted at"), "{e}");
    let e = history("master..LMDB_0.9.33");
    assert!(e.contains("runs backwards"), "{e}");
    assert!(!out_dir.exists(), "refused before anything was measured");
}
