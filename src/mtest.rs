//! LMDB's own test programs (`mtest.c`, `mtest2.c` … `mtest5.c`, those upstream's Makefile
//! builds), compiled against each built library and run: a second client, written by
//! LMDB's authors rather than here, checks every build.
//!
//! The programs come from the git repository (`--git`, `LMDB_GIT`) at the build's commit;
//! they are test programs, not library sources, so no pinned hash covers them: the commit
//! does, and the build record keeps each program's SHA-256. Sources without them (registry
//! packages, the archive's library files) are recorded as "not available", never as passed.
//! Each program runs in a fresh folder of its own with an empty `./testdb`, with a time
//! limit, loading the build's own library. Shared with build.rs.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::source::{GitRepo, Want};

/// The test programs upstream's Makefile builds (`PROGS`), in its order. mtest6 and 1.0's
/// mtest_remap and mtest_enc* are left out as the Makefile leaves them out of `all`: they
/// need extra objects (chacha8.o, a crypto module).
pub const PROGRAMS: [&str; 5] = ["mtest.c", "mtest2.c", "mtest3.c", "mtest4.c", "mtest5.c"];

/// Longer than any mtest takes (milliseconds); a program still running then is a hang.
const TIME_LIMIT: Duration = Duration::from_secs(60);
/// How much of a failed program's output its error shows.
const TAIL_LINES: usize = 12;

/// The test programs a build is checked with, or why there are none.
#[derive(Debug, Clone)]
pub enum TestPrograms {
    Found { commit: String, files: Vec<(String, Vec<u8>)> },
    Missing(String),
}

/// What the build record says of LMDB's test programs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum MtestVerdict {
    /// Every program compiled against the library and exited 0.
    Passed {
        /// The commit the programs were read at.
        commit: String,
        /// Program file → its SHA-256.
        programs: BTreeMap<String, String>,
    },
    /// No program to run, and why: never a pass.
    NotAvailable { reason: String },
}

impl fmt::Display for MtestVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MtestVerdict::Passed { programs, .. } => write!(f, "passed ({})", programs.len()),
            MtestVerdict::NotAvailable { .. } => f.write_str("not available"),
        }
    }
}

/// The programs of [`PROGRAMS`] that the repository `git` holds where the build's sources
/// came from: a tag by its name first, then its pinned commit (as the git provider exports
/// it), a commit by its id. Otherwise why there are none ("source has no mtest.c (…)").
pub fn programs_at(git: Option<&Path>, want: &Want, commit: Option<&str>) -> TestPrograms {
    let missing = |why: String| TestPrograms::Missing(format!("source has no mtest.c ({why})"));
    let Some(git) = git else {
        return missing("LMDB's test programs are read only from a git repository: --git PATH or LMDB_GIT".into());
    };
    let revs: Vec<&str> = match want {
        Want::Tag(t) => vec![t.name.as_str(), t.commit.as_str()],
        Want::Commit(_) => commit.into_iter().collect(),
        // A patched unit is checked with its base's programs: the patch changes the library.
        Want::Patched { base, .. } => return programs_at(Some(git), base, commit),
        Want::Local(dir) => {
            return missing(format!(
                "{} is a directory, not a commit: the programs are read at a commit",
                dir.display()
            ))
        }
    };
    let files = GitRepo::open(git).and_then(|repo| {
        let id = revs
            .iter()
            .find_map(|rev| repo.resolve(rev).ok())
            .with_context(|| format!("the git repository has no {}", revs.join(" nor ")))?;
        Ok((id.clone(), repo.library_folder_files(&id, &PROGRAMS)?))
    });
    match files {
        Ok((id, files)) if files.is_empty() => {
            missing(format!("commit {} has none of {}", short(&id), PROGRAMS.join(", ")))
        }
        Ok((id, files)) => TestPrograms::Found { commit: id, files },
        Err(e) => missing(format!("{e:#}")),
    }
}

/// Whether a build whose record holds `recorded` must be checked (again) with `available`:
/// when it never was, or when programs can now run that differ from those it passed.
pub fn needs_check(recorded: Option<&MtestVerdict>, available: &TestPrograms) -> bool {
    match (recorded, available) {
        (None, _) => true,
        (Some(MtestVerdict::NotAvailable { .. }), TestPrograms::Found { .. }) => true,
        (Some(MtestVerdict::Passed { programs, .. }), TestPrograms::Found { files, .. }) => *programs != hashes(files),
        (Some(_), TestPrograms::Missing(_)) => false,
    }
}

/// Compiles each program against `lmdb.h` in `include_dir` and the `liblmdb.so` in
/// `library_dir`, with the build's compiler and flags, and runs it in a folder of its own
/// under `scratch`. The first program that does not compile, exits non-zero, is killed by
/// a signal or hangs fails the build, with its last lines of output.
pub fn check(
    label: &str,
    include_dir: &Path,
    library_dir: &Path,
    compiler: &Path,
    cflags: &[String],
    programs: &TestPrograms,
    scratch: &Path,
) -> Result<MtestVerdict> {
    let (commit, files) = match programs {
        TestPrograms::Missing(reason) => return Ok(MtestVerdict::NotAvailable { reason: reason.clone() }),
        TestPrograms::Found { commit, files } => (commit, files),
    };
    let writable = || format!("cannot write in {} (is the cache writable? LMDB_REGRESS_CACHE)", scratch.display());
    for (name, bytes) in files {
        let folder = tempfile::tempdir_in(scratch).with_context(writable)?;
        let what = format!("{label}: LMDB's {name} (commit {})", short(commit));
        let exe = compile(
            &what,
            (name.as_str(), bytes.as_slice()),
            include_dir,
            library_dir,
            (compiler, cflags),
            folder.path(),
        )?;
        run(&what, &exe, library_dir, folder.path())?;
    }
    Ok(MtestVerdict::Passed { commit: commit.clone(), programs: hashes(files) })
}

fn hashes(files: &[(String, Vec<u8>)]) -> BTreeMap<String, String> {
    files.iter().map(|(name, bytes)| (name.clone(), hex::encode(Sha256::digest(bytes)))).collect()
}

/// `cc FLAGS -I include mtest.c -o mtest -L lib -llmdb`, as the Makefile links them but
/// against the shared library (less `-shared`: this is a program), with the library's
/// folder as its run path.
fn compile(
    what: &str,
    (name, bytes): (&str, &[u8]),
    include_dir: &Path,
    library_dir: &Path,
    (compiler, cflags): (&Path, &[String]),
    folder: &Path,
) -> Result<std::path::PathBuf> {
    let source = folder.join(name);
    std::fs::write(&source, bytes).with_context(|| format!("cannot write {}", source.display()))?;
    let exe = folder.join(name.trim_end_matches(".c"));
    let mut cmd = Command::new(compiler);
    cmd.args(cflags.iter().filter(|f| f.as_str() != "-shared"))
        .arg("-I")
        .arg(include_dir)
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .arg("-L")
        .arg(library_dir)
        .arg(format!("-Wl,-rpath,{}", library_dir.display()))
        .arg("-llmdb");
    let out = crate::children::output(&mut cmd).with_context(|| format!("cannot run {}", compiler.display()))?;
    if !out.status.success() {
        bail!("{what} does not compile against its build:\n{}", tail(&String::from_utf8_lossy(&out.stderr)));
    }
    // What the compiler read must be the program the verdict names.
    let read = std::fs::read(&source).with_context(|| format!("cannot read {}", source.display()))?;
    let (found, want) = (hex::encode(Sha256::digest(&read)), hex::encode(Sha256::digest(bytes)));
    if found != want {
        bail!("{what}: {} has SHA-256 {found} after compiling, but the commit's program is {want}", source.display());
    }
    Ok(exe)
}

/// Runs `exe` in `folder`, where it finds an empty `./testdb`, loading the library in
/// `library_dir` (also named by LD_LIBRARY_PATH, so that no other liblmdb.so is found).
fn run(what: &str, exe: &Path, library_dir: &Path, folder: &Path) -> Result<()> {
    std::fs::create_dir(folder.join("testdb")).with_context(|| format!("cannot create {}/testdb", folder.display()))?;
    let log_path = folder.join("output");
    let log = File::create(&log_path).with_context(|| format!("cannot write {}", log_path.display()))?;
    let mut cmd = Command::new(exe);
    cmd.current_dir(folder)
        .env("LD_LIBRARY_PATH", library_dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let mut child = crate::children::spawn(&mut cmd).with_context(|| format!("cannot start {}", exe.display()))?;
    let status = wait_with_limit(&mut child)?;
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(()),
        // The first line alone says what failed (history's one-line summary keeps it).
        Some(s) => bail!("{what} {}\nits last lines of output:\n{}", how_it_ended(s), tail(&output)),
        None => bail!(
            "{what} did not finish within {} s and was killed\nits last lines of output:\n{}",
            TIME_LIMIT.as_secs(),
            tail(&output)
        ),
    }
}

/// The child's exit status, or None when it outlived [`TIME_LIMIT`] (it is then killed).
fn wait_with_limit(child: &mut std::process::Child) -> Result<Option<ExitStatus>> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().context("cannot wait for a test program")? {
            return Ok(Some(status));
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How a child process ended, in words: "exited with status 1", "was killed by signal 6
/// (SIGABRT)" (also the runner's, for `--program` runs).
pub fn how_it_ended(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}{}", signal_name(signal)),
        (None, None) => format!("ended with {status}"),
    }
}

/// " (SIGABRT)": the signal's name as nix has it (the runner names a worker's so too),
/// nothing for a number this platform does not name.
fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal).map(|s| format!(" ({})", s.as_str())).unwrap_or_default()
}

/// The last [`TAIL_LINES`] lines of `text`, indented; "(no output)" when empty.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.is_empty() {
        return "  (no output)".into();
    }
    lines[lines.len().saturating_sub(TAIL_LINES)..].iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(body: &[u8]) -> TestPrograms {
        TestPrograms::Found { commit: "c".repeat(40), files: vec![("mtest.c".into(), body.to_vec())] }
    }

    #[test]
    fn a_build_is_checked_again_only_when_it_never_was_or_its_programs_changed() {
        let missing = TestPrograms::Missing("source has no mtest.c (x)".into());
        let passed =
            MtestVerdict::Passed { commit: "c".repeat(40), programs: hashes(&[("mtest.c".into(), b"a".to_vec())]) };
        let not_available = MtestVerdict::NotAvailable { reason: "source has no mtest.c (x)".into() };
        assert!(needs_check(None, &missing));
        assert!(needs_check(None, &found(b"a")));
        assert!(!needs_check(Some(&passed), &found(b"a")));
        assert!(needs_check(Some(&passed), &found(b"b")));
        assert!(!needs_check(Some(&passed), &missing), "a pass is kept when the programs cannot be had now");
        assert!(needs_check(Some(&not_available), &found(b"a")));
        assert!(!needs_check(Some(&not_available), &missing));
    }

    #[test]
    fn verdicts_read_as_the_record_and_the_table_say_them() {
        let json = serde_json::to_string(&MtestVerdict::NotAvailable { reason: "source has no mtest.c (x)".into() });
        assert_eq!(json.unwrap(), r#"{"status":"not_available","reason":"source has no mtest.c (x)"}"#);
        let passed = MtestVerdict::Passed { commit: "c".into(), programs: hashes(&[("mtest.c".into(), vec![])]) };
        assert_eq!(passed.to_string(), "passed (1)");
        let commit = Want::Commit("abc".into());
        assert!(
            matches!(programs_at(None, &commit, Some("abc")), TestPrograms::Missing(r) if r.starts_with("source has no mtest.c ("))
        );
    }

    #[test]
    fn a_failure_shows_its_last_lines_and_how_it_ended() {
        use std::os::unix::process::ExitStatusExt;
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        assert!(tail(&text).starts_with("  line 9\n") && tail(&text).ends_with("line 20"), "{}", tail(&text));
        assert_eq!(tail(""), "  (no output)");
        assert_eq!(how_it_ended(ExitStatus::from_raw(6)), "was killed by signal 6 (SIGABRT)");
        // Every signal nix names, not only a crash's; a number none names stays a number.
        assert_eq!(how_it_ended(ExitStatus::from_raw(15)), "was killed by signal 15 (SIGTERM)");
        assert_eq!(how_it_ended(ExitStatus::from_raw(99)), "was killed by signal 99");
        assert_eq!(how_it_ended(ExitStatus::from_raw(1 << 8)), "exited with status 1");
    }
}
