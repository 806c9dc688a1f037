//! Helpers shared by the integration tests: the binary, each test's own cache, fetched
//! sources, small git repositories built at test time from fetched copies.
//!
//! No test writes the user's cache (~/.cache/lmdb-regress). Sources and builds of the
//! registry-reachable tags the tests use are fetched and built once into a shared fixture
//! under target/ (`LMDB_REGRESS_CACHE` when `make test` sets it); every test then runs
//! with a cache of its own, seeded from that fixture.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub const BIN: &str = env!("CARGO_BIN_EXE_lmdb-regress");

/// The tags whose sources the tests read, those they also measure (built with the C twin
/// and with the objects random layouts are linked from), and those measured only by Rust
/// (`its-10406` on the registry's tags).
const FIXTURE_SOURCES: &str = "0.9.17,0.9.18,0.9.21,0.9.33";
const FIXTURE_BUILDS: &str = "0.9.18,0.9.33";
const FIXTURE_OBJECTS: &str = "0.9.17,0.9.21";

/// The default C flags at -O0, for a build whose machine code no assertion reads: gcc
/// compiles mdb.c about five times faster than at -O2.
pub fn unoptimised_cflags() -> String {
    let default = lmdb_regress::compile::DEFAULT_CFLAGS;
    assert!(default.starts_with("-O2 "), "the default flags changed: {default}");
    default.replacen("-O2", "-O0", 1)
}

/// The shared fixture cache, filled once per test binary; tests only read it.
pub fn fixture() -> &'static Path {
    static FIXTURE: OnceLock<PathBuf> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = match std::env::var_os("LMDB_REGRESS_CACHE") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixture-cache"),
        };
        let build = ["build", "--c-harness", "--layout-objects", "--tags", FIXTURE_BUILDS];
        let objects = ["build", "--layout-objects", "--tags", FIXTURE_OBJECTS];
        for args in [&["source-dir", FIXTURE_SOURCES][..], &build, &objects] {
            run_ok(bare_command().env("LMDB_REGRESS_CACHE", &dir).args(args));
        }
        dir
    })
}

/// This test's own cache: a fresh directory per test (tests run on threads of their own),
/// seeded with the fixture's sources (copied) and builds (hard-linked).
pub fn test_cache() -> PathBuf {
    thread_local! {
        static CACHE: tempfile::TempDir = {
            let dir = tempfile::tempdir().expect("a temporary cache");
            copy_tree(&fixture().join("sources"), &dir.path().join("sources"), false);
            copy_tree(&fixture().join("builds"), &dir.path().join("builds"), true);
            dir
        };
    }
    CACHE.with(|d| d.path().to_path_buf())
}

/// A cache of its own holding only `tags` (full names): their sources copied from the
/// fixture and their builds hard-linked, for a test that must see no other tag.
pub fn cache_of(tags: &[&str]) -> tempfile::TempDir {
    let cache = tempfile::tempdir().expect("a temporary cache");
    for tag in tags {
        let dir = source_dir(tag);
        copy_tree(&dir, &cache.path().join("sources").join(dir.file_name().unwrap()), false);
        for e in std::fs::read_dir(fixture().join("builds")).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with(&format!("{tag}-")) {
                copy_tree(&e.path(), &cache.path().join("builds").join(e.file_name()), true);
            }
        }
    }
    cache
}

/// Copies `from` into `to`, its files hard-linked when `link` (copied where a link fails).
pub fn copy_tree(from: &Path, to: &Path, link: bool) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let (src, dest) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dest, link);
        } else if !(link && std::fs::hard_link(&src, &dest).is_ok()) {
            std::fs::copy(&src, &dest).unwrap();
        }
    }
}

/// `program` with the upstream archive pointed at a closed loopback port, so tests never
/// wait on DNS and never leave this machine.
fn bare(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(program);
    c.env("LMDB_REGRESS_ARCHIVE_URLS", "http://127.0.0.1:9/{ref}.tar.gz");
    c.env_remove("LMDB_GIT");
    c.env_remove("LMDB_REGRESS_OFFLINE");
    // Output as a pipe gets it: 80 columns, whatever the terminal that runs the tests.
    c.env_remove("COLUMNS");
    c
}

fn bare_command() -> Command {
    bare(BIN)
}

/// The binary on the shared fixture cache itself: for filling it, never for a test's own work.
pub fn fixture_command() -> Command {
    let mut c = bare_command();
    c.env("LMDB_REGRESS_CACHE", fixture());
    c
}

/// The binary, with this test's own cache (a test may still set LMDB_REGRESS_CACHE itself).
pub fn lmdb_regress() -> Command {
    in_test_env(BIN)
}

/// Any program (a script that runs the binary) in the environment [`lmdb_regress`] gives.
pub fn in_test_env(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = bare(program);
    c.env("LMDB_REGRESS_CACHE", test_cache());
    c
}

/// The folder of `tag`'s fixed build in this test's cache, as the binary finds it (a fixture
/// of an older lmdb-regress may also hold builds made another way).
pub fn build_folder(tag: &str) -> PathBuf {
    library(tag).parent().expect("in its build's folder").to_path_buf()
}

/// `tag`'s fixed build's shared library in this test's cache.
pub fn library(tag: &str) -> PathBuf {
    let o = run_ok(lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args(["build", "--tags", tag, "--json"]));
    json(&o)[0]["library"].as_str().map(PathBuf::from).expect("a library")
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

/// Verified sources of a registry-reachable tag, in the shared fixture: read, never edit.
pub fn source_dir(tag: &str) -> PathBuf {
    let out = run_ok(bare_command().env("LMDB_REGRESS_CACHE", fixture()).args(["source-dir", tag]));
    PathBuf::from(stdout(&out).trim())
}

/// Verified sources of the 1.0 line as the tests have it (no registry carries a 1.0 tag):
/// mdb.master3 at 10161b20fe, from the crate lmdb-master3-sys 0.2.6 (testdata/mdb-master3-tags.toml).
pub fn master3_source_dir() -> PathBuf {
    let tags = testdata("mdb-master3-tags.toml");
    let mut c = bare_command();
    c.env("LMDB_REGRESS_CACHE", fixture()).env("LMDB_REGRESS_TAGS", tags).args(["source-dir", "LMDB_0.9.90"]);
    PathBuf::from(stdout(&run_ok(&mut c)).trim())
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

pub fn testdata(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(p)
}

/// Compares with the golden file testdata/golden/`name`, or rewrites it when UPDATE_GOLDEN=1.
pub fn golden(name: &str, actual: &str) {
    let path = testdata(&format!("golden/{name}"));
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no golden file {}", path.display()));
    if expected != actual {
        let diff = expected.lines().zip(actual.lines()).enumerate().find(|(_, (a, b))| a != b);
        panic!("{name} differs from its golden file (UPDATE_GOLDEN=1 rewrites it); first difference: {diff:?}");
    }
}

/// A copy of the fixed run with one tag's samples scaled, as `dir`/scaled-`tag`.jsonl.
pub fn scaled(dir: &Path, tag: &str, factor: f64) -> PathBuf {
    let text = std::fs::read_to_string(testdata("run-fixed.jsonl")).unwrap();
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["type"] == "sample" && v["tag"] == tag {
                v["ns"] = serde_json::json!((v["ns"].as_f64().unwrap() * factor).round() as u64);
            }
            v.to_string()
        })
        .collect();
    let p = dir.join(format!("scaled-{tag}.jsonl"));
    std::fs::write(&p, out.join("\n") + "\n").unwrap();
    p
}

/// A copy of testdata/`name` keeping only `workload`'s samples (a run of one table), as
/// `dir`/`workload`-`name`.
pub fn one_workload(dir: &Path, name: &str, workload: &str) -> PathBuf {
    let text = std::fs::read_to_string(testdata(name)).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["workload"].as_str().is_none_or(|w| w == workload)
        })
        .collect();
    let p = dir.join(format!("{workload}-{name}"));
    std::fs::write(&p, kept.join("\n") + "\n").unwrap();
    p
}

/// LMDB's own test programs of the 1.0 line (`mtest.c` … `mtest5.c` of mdb.master3 at
/// 10161b20fe), as the crate lmdb-master3-sys 0.2.6 bundles them beside the library
/// sources: vendored from crates.io once (`cargo vendor`, as the registry provider does)
/// into target/, never committed. Name → bytes.
pub fn master3_test_programs() -> Vec<(String, Vec<u8>)> {
    static VENDORED: OnceLock<PathBuf> = OnceLock::new();
    let dir = VENDORED.get_or_init(|| {
        let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vendored-lmdb-master3-sys-0.2.6");
        if !dest.join("mtest.c").is_file() {
            vendor_master3_programs(&dest);
        }
        dest
    });
    ["mtest.c", "mtest2.c", "mtest3.c", "mtest4.c", "mtest5.c"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))))
        .collect()
}

fn vendor_master3_programs(dest: &Path) {
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let manifest = "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2018\"\n\n\
                    [dependencies]\nlmdb-master3-sys = \"=0.2.6\"\n\n[workspace]\n";
    std::fs::create_dir_all(work.path().join("src")).unwrap();
    std::fs::write(work.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::write(work.path().join("src/lib.rs"), "").unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run_ok(
        Command::new(cargo)
            .current_dir(work.path())
            .args(["vendor", "--versioned-dirs", "--quiet", "vendor"])
            .env_remove("CARGO_TARGET_DIR"),
    );
    let programs = work.path().join("vendor/lmdb-master3-sys-0.2.6/lmdb/libraries/liblmdb");
    let staged = work.path().join("programs");
    std::fs::create_dir(&staged).unwrap();
    for e in std::fs::read_dir(&programs).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("mtest") && name.ends_with(".c") {
            std::fs::copy(e.path(), staged.join(&name)).unwrap();
        }
    }
    // Another test binary may have vendored them meanwhile: either copy is the crate's.
    let _ = std::fs::rename(&staged, dest);
}
