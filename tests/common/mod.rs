//! Helpers shared by the integration tests: the binary, fetched sources, small git
//! repositories built at test time from fetched copies.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_lmdb-regress");

/// The binary with the upstream archive pointed at a closed loopback port, so tests never
/// wait on DNS and never leave this machine.
pub fn lmdb_regress() -> Command {
    let mut c = Command::new(BIN);
    c.env("LMDB_REGRESS_ARCHIVE_URLS", "http://127.0.0.1:9/{ref}.tar.gz");
    c.env_remove("LMDB_GIT");
    c.env_remove("LMDB_REGRESS_OFFLINE");
    c
}

pub fn run_ok(c: &mut Command) -> Output {
    let out = c.output().expect("binary runs");
    assert!(
        out.status.success(),
        "command failed: {:?}\nstdout:\n{}\nstderr:\n{}",
        c,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Verified sources of a registry-reachable tag, from the shared cache (fetched if needed).
pub fn source_dir(tag: &str) -> PathBuf {
    let out = run_ok(lmdb_regress().args(["source-dir", tag]));
    PathBuf::from(stdout(&out).trim())
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub const FILES: [&str; 4] = ["lmdb.h", "mdb.c", "midl.c", "midl.h"];

/// Copies a source set into `repo/libraries/liblmdb` (OpenLDAP's layout).
pub fn place_sources(repo: &Path, src: &Path) {
    let dest = repo.join("libraries/liblmdb");
    std::fs::create_dir_all(&dest).unwrap();
    for f in FILES {
        std::fs::copy(src.join(f), dest.join(f)).unwrap();
    }
}

/// A repository in OpenLDAP's layout with one commit per (tag, sources), each tagged.
/// Returns the commit ids in order.
pub fn make_repo(repo: &Path, tags: &[(&str, &Path)]) -> Vec<String> {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "master"]);
    std::fs::write(repo.join("README"), "test repository\n").unwrap();
    let mut ids = Vec::new();
    for (tag, src) in tags {
        place_sources(repo, src);
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-q", "-m", &format!("release {tag}")]);
        git(repo, &["tag", tag]);
        ids.push(git(repo, &["rev-parse", "HEAD"]));
    }
    ids
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}
