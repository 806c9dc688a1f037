//! The build cache holds only what it verified: a tampered library is detected and
//! rebuilt, a moved cache is used where it now is, and Ctrl-C during a build leaves nothing
//! half-made in it.

use crate::common;
use crate::safety::{fails, names, records, signal};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// The fixture's 0.9.33 library, rebuilt from its verified sources with a constructor
/// that writes the file `$MARKER`: what an attacker could put in a cache.
pub(crate) fn tampered_library(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir(&src).unwrap();
    for f in FILES {
        std::fs::copy(source_dir("0.9.33").join(f), src.join(f)).unwrap();
    }
    let mut mdb = std::fs::read_to_string(src.join("mdb.c")).unwrap();
    mdb.push_str(
        "\n#include <stdio.h>\n__attribute__((constructor)) static void tampered(void) {\n\
         const char *p = getenv(\"MARKER\"); FILE *f = p ? fopen(p, \"w\") : NULL; if (f) fclose(f); }\n",
    );
    std::fs::write(src.join("mdb.c"), mdb).unwrap();
    let lib = dir.join("liblmdb.so");
    let o = Command::new("cc")
        // Unoptimised: it is refused, never measured.
        .args(["-O0", "-g", "-fPIC", "-shared", "-pthread", "-o"])
        .arg(&lib)
        .arg(src.join("mdb.c"))
        .arg(src.join("midl.c"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    lib
}

#[test]
fn a_tampered_cache_is_detected_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let evil = tampered_library(dir.path());
    let marker = dir.path().join("marker");
    let build = build_folder("0.9.33");
    let cached = build.join("liblmdb.so");
    let record: Value = serde_json::from_slice(&std::fs::read(build.join("build.json")).unwrap()).unwrap();
    assert_eq!(record["artifact"], "liblmdb.so", "relative to the build's folder");
    let recorded = record["sha256"].as_str().unwrap().to_string();
    let version = record["lmdb_version"].as_str().unwrap();

    // The worker refuses a library whose bytes are not the recorded ones, before loading it.
    let mut c = lmdb_regress();
    c.env("MARKER", &marker).args(["worker", "version", "--library"]).arg(&evil);
    let e = fails(c.args(["--library-sha256", &recorded, "--library-version", version]));
    assert!(e.contains("refusing to load") && e.contains(&recorded), "{e}");
    assert!(!marker.exists(), "the tampered library was loaded");

    // Fixed layouts: the worker loads the cached library itself, so a tampered one that
    // passed would run its constructor (random layouts link their own from the objects).
    let run = |name: &str| {
        let mut c = lmdb_regress();
        c.env("MARKER", &marker).args(["run", "--tags", "0.9.33", "--entries", "1000", "--workloads", "readKey"]);
        c.args(["--layouts", "fixed"]);
        run_ok(c.args(["--rounds", "1", "--warmup", "0", "--out"]).arg(dir.path().join(name)))
    };
    // The cached file is a hard link into the shared fixture: replace it, never write through it.
    std::fs::remove_file(&cached).unwrap();
    std::fs::copy(&evil, &cached).unwrap();
    let e = stderr(&run("a.jsonl"));
    assert!(e.contains("is not used") && e.contains("has SHA-256") && e.contains("rebuilding"), "{e}");
    assert!(!marker.exists(), "the tampered library was loaded");

    std::fs::remove_file(&cached).unwrap();
    std::os::unix::fs::symlink(&evil, &cached).unwrap();
    let e = stderr(&run("b.jsonl"));
    assert!(e.contains("is a symbolic link (to") && e.contains("rebuilding"), "{e}");
    assert!(!marker.exists(), "the library behind the symbolic link was loaded");

    // A record from before hashes (an absolute path, no SHA-256) is rebuilt too.
    let mut old = record.clone();
    old["artifact"] = Value::String(cached.display().to_string());
    old.as_object_mut().unwrap().remove("sha256");
    std::fs::remove_file(build.join("build.json")).unwrap();
    std::fs::write(build.join("build.json"), old.to_string()).unwrap();
    let e = stderr(&run("c.jsonl"));
    assert!(e.contains("an older build record"), "{e}");
    // The run file records the hash of the library it measured.
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(std::fs::read(&cached).unwrap()));
    assert_eq!(records(&dir.path().join("c.jsonl"))[0]["tags"][0]["builds"][0]["sha256"], digest.as_str());
}

#[test]
fn a_moved_cache_is_used_where_it_now_is() {
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("moved-cache");
    let o = Command::new("cp").arg("-a").arg(test_cache()).arg(&moved).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("run.jsonl");
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_CACHE", &moved).args([
        "run",
        "--tags",
        "0.9.33",
        "--entries",
        "1000",
        "--workloads",
        "readKey",
    ]);
    let o = run_ok(c.args(["--rounds", "1", "--warmup", "0", "--out"]).arg(&out));
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    let library = records(&out)[0]["tags"][0]["library"].as_str().unwrap().to_string();
    assert!(library.starts_with(&moved.display().to_string()), "{library}");
}

#[test]
fn ctrl_c_during_a_build_leaves_nothing_in_the_cache() {
    let cache = test_cache();
    // Flags no cached build has: each tag is compiled anew, one at a time.
    let mut c = lmdb_regress();
    c.args(["build", "--tags", "0.9.18,0.9.33", "--jobs", "1", "--cflags", "-O1 -g -fPIC -shared -pthread"]);
    let builds = cache.join("builds");
    let before = names(&builds).len();
    let child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while !names(&builds).iter().any(|n| n.starts_with(".tmp")) {
        assert!(start.elapsed() < Duration::from_secs(60), "no build started");
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    // The build under way failed whole (0 built) or, its compiler not yet started, finished (1).
    let said = ["0 of 2 built", "1 of 2 built"].map(|n| format!("interrupted while building: {n}"));
    assert!(said.iter().any(|s| stderr(&o).contains(s.as_str())), "{}", stderr(&o));
    assert!(!stderr(&o).contains("unavailable"), "a build not started is no tag unavailable: {}", stderr(&o));
    let left: Vec<String> = names(&builds).into_iter().filter(|n| n.starts_with('.')).collect();
    assert!(left.is_empty(), "staging folders left: {left:?}");
    for n in names(&builds) {
        // A build, or the objects random layouts link from: each complete with its record.
        let record = if n.contains("-objects-") { "objects.json" } else { "build.json" };
        assert!(builds.join(&n).join(record).is_file(), "{n} is half-built");
    }
    // Ctrl-C reaches the compiler as it would from the terminal (`children::interrupt`): the
    // build under way failed whole, or (had its compiler not yet started) finished; no other started.
    let after = names(&builds).len();
    assert!((before..=before + 1).contains(&after), "{before} builds before, {after} after");
    let tmp = cache.join("tmp");
    assert!(!tmp.exists() || names(&tmp).is_empty(), "{:?}", names(&tmp));
}
