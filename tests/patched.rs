//! Patched and local units (issue #29): `--tags BASE+FILE` and `--source DIR`. Every patch
//! and directory is made here, at test time, from a tag's verified sources in the fixture.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::*;

/// A line planted in mdb.c: it ends up in the library's bytes only if the patch was compiled.
const PLANTED: &str = "const char lmdb_regress_planted[] = \"planted at test time\";\n";

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

/// `mdb.c` of LMDB_0.9.33 with `edit` applied, diffed against the original as OpenLDAP's
/// repository names it (`a/libraries/liblmdb/mdb.c`), into `dir/NAME`.
fn make_patch(dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    make_patch_of("mdb.c", dir, name, edit)
}

/// [`make_patch`] of another of LMDB_0.9.33's files.
fn make_patch_of(file: &str, dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let original = source_dir("LMDB_0.9.33").join(file);
    let edited = dir.join(format!("{name}.{file}"));
    std::fs::write(&edited, edit(&std::fs::read_to_string(&original).unwrap())).unwrap();
    let (a, b) = (format!("a/libraries/liblmdb/{file}"), format!("b/libraries/liblmdb/{file}"));
    let out = Command::new("diff")
        .args(["-u", "--label", &a, "--label", &b])
        .arg(&original)
        .arg(&edited)
        .output()
        .expect("diff runs");
    assert_eq!(out.status.code(), Some(1), "the edit changes {file}: {}", String::from_utf8_lossy(&out.stderr));
    let patch = dir.join(name);
    std::fs::write(&patch, &out.stdout).unwrap();
    patch
}

/// The planted line at the end of mdb.c, outside any `#if`.
fn plant(text: &str) -> String {
    format!("{text}{PLANTED}")
}

/// `build --json` of `args`, unoptimised: what is built from which files and how it is
/// recorded is checked here, never the machine code.
fn build(args: &[&str]) -> std::process::Output {
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["build", "--json", "--cflags", &unoptimised_cflags()]);
    c.args(args).output().unwrap()
}

/// The one row labelled `label` of `build --json`'s output.
fn row(o: &std::process::Output, label: &str) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    let rows = json(o);
    rows.as_array().unwrap().iter().find(|r| r["tag"] == label).cloned().unwrap_or_else(|| panic!("no {label}: {rows}"))
}

fn inode(path: &Value) -> u64 {
    std::fs::metadata(path.as_str().unwrap()).unwrap().ino()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_patch_that_applies_is_built_labelled_recorded_and_then_reused() {
    let dir = tempfile::tempdir().unwrap();
    let patch = make_patch(dir.path(), "plant.patch", plant);
    let spec = format!("0.9.33+{}", patch.display());
    let label = "LMDB_0.9.33 + plant.patch";
    let first = row(&build(&["--tags", &spec]), label);
    assert_eq!(first["status"], "built");
    assert_eq!(first["match"], "patched");
    let library = &first["library"];
    assert!(contains(&std::fs::read(library.as_str().unwrap()).unwrap(), b"planted at test time"), "{first}");

    // The record: the patch's SHA-256, the base's pinned hashes, the patched files' hashes.
    let record = &first["builds"][0];
    let base = source_dir("LMDB_0.9.33");
    assert_eq!(record["patch"]["sha256"], sha256(&patch));
    assert_eq!(record["patch"]["base"], "LMDB_0.9.33");
    assert_eq!(record["patch"]["base_match"], "identical");
    for f in FILES {
        assert_eq!(record["patch"]["base_files"][f], sha256(&base.join(f)), "{f}");
    }
    assert_eq!(record["files"]["mdb.c"], sha256(&dir.path().join("plant.patch.mdb.c")));
    assert_eq!(record["files"]["lmdb.h"], sha256(&base.join("lmdb.h")));
    assert_eq!(record["patch"]["hunks"][0]["offset"], 0);
    assert_eq!(record["match"], "patched");

    // Asked again: the same build, not made again (the library is the same file).
    let again = row(&build(&["--tags", &spec]), label);
    assert_eq!(again["builds"][0]["build_id"], record["build_id"]);
    assert_eq!(inode(&again["library"]), inode(library), "the build was made again");
}

#[test]
fn a_patch_that_does_not_apply_names_its_hunk_and_builds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let patch = make_patch(dir.path(), "stale.patch", plant);
    // The first context line as no 0.9.33 has it: a patch of some other mdb.c.
    let text = std::fs::read_to_string(&patch).unwrap();
    let context = text.lines().position(|l| l.starts_with(' ')).unwrap();
    let stale: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == context { format!(" {l} /* elsewhere */") } else { l.into() })
        .collect();
    std::fs::write(&patch, stale.join("\n") + "\n").unwrap();
    let builds = test_cache().join("builds");
    let before: Vec<_> = std::fs::read_dir(&builds).unwrap().flatten().map(|e| e.file_name()).collect();

    let o = build(&["--tags", &format!("0.9.33+{}", patch.display())]);
    assert!(!o.status.success(), "{}", stdout(&o));
    let e = stderr(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(e.contains("stale.patch: mdb.c hunk #1 (@@ -"), "{e}");
    assert!(e.contains("does not apply to LMDB_0.9.33's mdb.c") && e.contains("no fuzz; nothing is built"), "{e}");
    let after: Vec<_> = std::fs::read_dir(&builds).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(before.len(), after.len(), "a build was made: {after:?}");
}

#[test]
fn a_directory_unit_is_rebuilt_when_one_of_its_files_changes() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("liblmdb");
    std::fs::create_dir(&work).unwrap();
    for f in FILES {
        std::fs::copy(source_dir("LMDB_0.9.33").join(f), work.join(f)).unwrap();
    }
    let label = format!("local:{}", work.display());
    let args = ["--tags", "0.9.33", "--source", work.to_str().unwrap()];
    let first = row(&build(&args), &label);
    assert_eq!((first["status"].as_str(), first["match"].as_str()), (Some("built"), Some("local")));
    let unchanged = row(&build(&args), &label);
    assert_eq!(inode(&unchanged["library"]), inode(&first["library"]), "an unchanged directory was built again");

    // A directory without one of the four files is refused, naming it.
    let bare = dir.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    std::fs::copy(work.join("lmdb.h"), bare.join("lmdb.h")).unwrap();
    let o = build(&["--tags", "0.9.33", "--source", bare.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("holds no mdb.c: a unit's directory holds lmdb.h, mdb.c, midl.c, midl.h"),
        "{}",
        stderr(&o)
    );

    let mdb = work.join("mdb.c");
    std::fs::write(&mdb, plant(&std::fs::read_to_string(&mdb).unwrap())).unwrap();
    let changed = row(&build(&args), &label);
    assert_ne!(changed["builds"][0]["build_id"], first["builds"][0]["build_id"]);
    assert_eq!(changed["builds"][0]["files"]["mdb.c"], sha256(&mdb));
    assert!(contains(&std::fs::read(changed["library"].as_str().unwrap()).unwrap(), b"planted at test time"));
}

#[test]
fn a_directory_unit_records_what_it_read_each_time_and_lends_no_tag_its_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("liblmdb");
    std::fs::create_dir(&work).unwrap();
    for f in FILES {
        std::fs::copy(source_dir("LMDB_0.9.33").join(f), work.join(f)).unwrap();
    }
    // A cache of its own, empty: the directory's copy of 0.9.33's files is the first it holds.
    let cache = cache_of(&[]);
    let build = |args: &[&str]| {
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .env("LMDB_REGRESS_CACHE", cache.path())
            .args(["build", "--json", "--cflags", &unoptimised_cflags()])
            .args(args)
            .output()
            .unwrap()
    };
    let label = format!("local:{}", work.display());
    let source = ["--source", work.to_str().unwrap()];
    let first = row(&build(&source), &label);
    let record = &first["builds"][0];
    assert_eq!((first["status"].as_str(), record["provenance"]["origin"].as_str()), (Some("built"), Some("local")));
    // A plain tag of the same files is not served from the directory's copy, as if it had
    // come from there: offline and with no other copy, it is unavailable.
    let o = build(&["--tags", "0.9.33"]);
    let rows = json(&o);
    let tag = rows.as_array().unwrap().iter().find(|r| r["tag"] == "LMDB_0.9.33").cloned().unwrap();
    assert_ne!(tag["status"], "built", "0.9.33 took the directory's copy: {tag}");
    // Nor from a copy a cache made before such copies were kept apart (in sources/ itself).
    let made = cache.path().join("sources/made");
    let key = std::fs::read_dir(&made).unwrap().flatten().map(|e| e.file_name()).find(|n| n.len() == 64).unwrap();
    let legacy = cache.path().join("sources").join(&key);
    copy_dir(&made.join(&key), &legacy);
    let tag = json(&build(&["--tags", "0.9.33"]));
    let tag = tag.as_array().unwrap().iter().find(|r| r["tag"] == "LMDB_0.9.33").cloned().unwrap();
    assert_ne!(tag["status"], "built", "0.9.33 took an older cache's copy of the directory: {tag}");
    std::fs::remove_dir_all(&legacy).unwrap();

    // Changed: rebuilt, and the record names the file as read now.
    let mdb = work.join("mdb.c");
    let original = std::fs::read_to_string(&mdb).unwrap();
    std::fs::write(&mdb, plant(&original)).unwrap();
    let changed = row(&build(&source), &label);
    assert_ne!(changed["builds"][0]["build_id"], record["build_id"]);
    assert_eq!(changed["builds"][0]["files"]["mdb.c"], sha256(&mdb));
    assert_eq!(changed["builds"][0]["provenance"]["origin"], "local");
    // Changed back: the first build again (not made anew), naming the original file's hash,
    // not the planted copy's that was cached in between.
    std::fs::write(&mdb, &original).unwrap();
    let back = row(&build(&source), &label);
    assert_eq!(back["builds"][0]["build_id"], record["build_id"]);
    assert_eq!(inode(&back["library"]), inode(&first["library"]), "an unchanged directory was built again");
    assert_eq!(back["builds"][0]["files"]["mdb.c"], sha256(&mdb));
    assert_ne!(back["builds"][0]["files"]["mdb.c"], changed["builds"][0]["files"]["mdb.c"]);
}

#[test]
fn a_patched_unit_is_checked_with_its_bases_test_programs() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("openldap");
    crate::mtest::repo_0_9_33_with(&repo, &[("mtest.c", crate::mtest::WRITES_AND_READS)]);
    let patch = make_patch(dir.path(), "plant.patch", plant);
    let spec = format!("0.9.33+{}", patch.display());
    let r = row(&build(&["--tags", &spec, "--git", repo.to_str().unwrap()]), "LMDB_0.9.33 + plant.patch");
    let mtest = &r["builds"][0]["mtest"];
    assert_eq!(mtest["status"], "passed", "{r}");
    assert_eq!(mtest["commit"], git(&repo, &["rev-parse", "LMDB_0.9.33"]), "{r}");
    assert_eq!(mtest["programs"].as_object().unwrap().keys().collect::<Vec<_>>(), ["mtest.c"]);
}

#[test]
fn a_patched_unit_is_measured_under_random_layouts_and_can_be_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let patch = make_patch(dir.path(), "plant.patch", plant);
    let (label, out) = ("LMDB_0.9.33 + plant.patch", dir.path().join("run.jsonl"));
    let mut c = lmdb_regress();
    c.env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--tags", &format!("0.9.33,0.9.33+{}", patch.display())]);
    c.args(["--workloads", "readSeq", "--entries", "1000", "--rounds", "1", "--warmup", "0", "--out"]).arg(&out);
    run_ok(&mut c);
    let records: Vec<Value> =
        std::fs::read_to_string(&out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let header = records.iter().find(|r| r["type"] == "header").unwrap();
    assert_eq!(header["plan"]["layouts"], "random");
    let tag = header["tags"].as_array().unwrap().iter().find(|t| t["tag"] == label).expect("the patched unit");
    assert_eq!(tag["match"], "patched");
    assert_eq!(tag["builds"][0]["patch"]["sha256"], sha256(&patch));
    let samples: Vec<&Value> = records.iter().filter(|r| r["type"] == "sample" && r["tag"] == label).collect();
    assert!(!samples.is_empty() && samples.iter().all(|s| s["layout"].is_u64()), "{samples:?}");

    let report = run_ok(lmdb_regress().arg("report").arg(&out).args(["--baseline", label]));
    assert!(stdout(&report).contains("Against `LMDB_0.9.33 + plant.patch`:"), "{}", stdout(&report));
}

/// `--confirm` names what it measures again by label, which does not say where a patch is:
/// refused before anything is built or measured.
#[test]
fn confirm_refuses_a_patched_unit_before_anything_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let patch = make_patch(dir.path(), "planted.patch", plant);
    let tags = format!("0.9.33,0.9.33+{}", patch.display());
    let out = dir.path().join("run.jsonl");
    let o = lmdb_regress()
        .args(["run", "--tags", &tags, "--fail-on", "slower:2%", "--confirm", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--confirm: LMDB_0.9.33 + planted.patch is a patched or local unit"), "{err}");
    assert!(!out.exists(), "nothing measured");
}

/// A patch that sets lmdb.h's MDB_VERSION_PATCH builds a library reporting another version:
/// measured as a patch of its base, with a note beside its sources saying so.
#[test]
fn a_patch_that_changes_the_version_is_noted_beside_its_sources() {
    let dir = tempfile::tempdir().unwrap();
    let edit = |h: &str| {
        let (from, to) = ("#define MDB_VERSION_PATCH\t33", "#define MDB_VERSION_PATCH\t34");
        assert!(h.contains(from), "lmdb.h declares its patch number");
        h.replace(from, to)
    };
    let patch = make_patch_of("lmdb.h", dir.path(), "m-version.patch", edit);
    let spec = format!("0.9.33+{}", patch.display());
    let r = row(&build(&["--tags", &spec]), "LMDB_0.9.33 + m-version.patch");
    assert_eq!(r["status"], "built", "{r}");
    assert!(r["builds"][0]["lmdb_version"].as_str().unwrap().starts_with("LMDB 0.9.34"), "{r}");
    let note = "note: it reports version 0.9.34, not its base's 0.9.33 (the patch changes lmdb.h's MDB_VERSION_*)";
    assert!(r["provenance"].as_str().unwrap().contains(note), "{r}");
    // An ordinary patch has no such note.
    let plain = make_patch(dir.path(), "plant.patch", plant);
    let r = row(&build(&["--tags", &format!("0.9.33+{}", plain.display())]), "LMDB_0.9.33 + plant.patch");
    assert!(!r["provenance"].as_str().unwrap().contains("note:"), "{r}");
}

/// A run of `--tags 0.9.33 --source lmdb` in `dir` on `run`, its output read once stopped.
fn local_run(dir: &Path, args: &[&str]) -> std::process::Child {
    let mut c = lmdb_regress();
    c.current_dir(dir).env("LMDB_REGRESS_OFFLINE", "1").args(["run", "--summary-json"]).args(args);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap()
}

/// Stops `child` with Ctrl-C once `run` holds more than `samples` samples; its stderr.
fn interrupt_after(mut child: std::process::Child, run: &Path, samples: usize) -> String {
    let start = std::time::Instant::now();
    while !run.exists() || crate::safety::samples(run) <= samples {
        assert!(start.elapsed() < std::time::Duration::from_secs(300), "no samples in {}", run.display());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    crate::safety::signal(&child, libc::SIGINT);
    child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    err
}

/// Ctrl-C of a run with a `--source` unit advises a resume that names the directory, and
/// that resume continues the run (was "unknown tag LMDB_local:…"); without the directory,
/// the resume says what to give.
#[test]
fn a_run_with_a_directory_unit_resumes_as_its_ctrl_c_advice_says() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&source_dir("LMDB_0.9.33"), &dir.path().join("lmdb"));
    let run = dir.path().join("run.jsonl");
    let mut args = vec!["--tags", "0.9.33", "--source", "lmdb", "--entries", "1000", "--workloads", "readKey"];
    args.extend(["--warmup", "0", "--rounds", "100000", "--layouts", "fixed", "--out", "run.jsonl"]);
    let err = interrupt_after(local_run(dir.path(), &args), &run, 1);
    assert!(err.contains("continue with `lmdb-regress run --resume run.jsonl --source lmdb`"), "{err}");
    let o = lmdb_regress().current_dir(dir.path()).args(["run", "--resume", "run.jsonl"]).output().unwrap();
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("give --source lmdb with --resume"), "{e}");
    let before = crate::safety::samples(&run);
    let err = interrupt_after(local_run(dir.path(), &["--resume", "run.jsonl", "--source", "lmdb"]), &run, before + 1);
    assert!(err.contains("resuming run.jsonl") && !err.contains("unknown tag"), "{err}");
    let o = lmdb_regress()
        .current_dir(dir.path())
        .args(["run", "--resume", "run.jsonl", "--source", "elsewhere"])
        .output()
        .unwrap();
    assert!(stderr(&o).contains("--source elsewhere is no unit of run.jsonl"), "{}", stderr(&o));
}

/// One `--source` directory spelled three ways (`lmdb`, `lmdb/`, `./lmdb`) is one unit, and a
/// patch whose label is longer than a file name may be (NAME_MAX) builds in a folder of
/// its own (was "File name too long").
#[test]
fn one_directory_however_spelled_is_one_unit_and_a_long_label_builds() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&source_dir("LMDB_0.9.33"), &dir.path().join("lmdb"));
    let name = format!("{}.patch", "long-".repeat(48));
    let patch = make_patch(dir.path(), &name, plant);
    let spec = format!("0.9.33+{}", patch.display());
    let mut c = lmdb_regress();
    c.current_dir(dir.path()).env("LMDB_REGRESS_OFFLINE", "1").args(["build", "--json", "--tags", &spec]);
    c.args(["--cflags", &unoptimised_cflags()]);
    let o = c.args(["--source", "lmdb", "--source", "lmdb/", "--source", "./lmdb"]).output().unwrap();
    let label = format!("LMDB_0.9.33 + {name}");
    assert!(label.len() > 255, "a label longer than NAME_MAX");
    assert_eq!(row(&o, &label)["status"], "built");
    let rows = json(&o);
    let local: Vec<&Value> =
        rows.as_array().unwrap().iter().filter(|r| r["tag"].as_str().unwrap().starts_with("local:")).collect();
    assert_eq!(local.len(), 1, "{rows}");
    assert_eq!((local[0]["tag"].as_str(), local[0]["status"].as_str()), (Some("local:lmdb"), Some("built")));
}
