//! Compiles verified sources with a real C compiler: one shared library per tag (and,
//! for the C twin, one statically linked harness executable), each in a directory of its
//! own with a JSON build record. Shared with build.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::manifest::{FileHashes, Match};
use crate::source::{Provenance, SourceSet};

pub const DEFAULT_CFLAGS: &str = "-O2 -g -fPIC -shared -pthread";

/// The compiler and flags; part of every build's identity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Toolchain {
    pub compiler: PathBuf,
    /// First line of `compiler --version`.
    pub version: String,
    pub cflags: Vec<String>,
}

impl Toolchain {
    /// Finds the C compiler the way the `cc` crate does (CC, CC_<target>, else cc/gcc),
    /// unless `cc` names one. `target` is the Rust target triple.
    pub fn detect(target: &str, cc: Option<&str>, cflags: Option<&str>) -> Result<Toolchain> {
        let compiler = match cc {
            Some(c) => PathBuf::from(c),
            None => cc::Build::new()
                .target(target)
                .host(target)
                .opt_level(2)
                .cargo_metadata(false)
                .try_get_compiler()
                .context("no C compiler found (install gcc, or pass --cc)")?
                .path()
                .to_path_buf(),
        };
        let out = Command::new(&compiler)
            .arg("--version")
            .output()
            .with_context(|| format!("cannot run C compiler {}", compiler.display()))?;
        if !out.status.success() {
            bail!("{} --version failed", compiler.display());
        }
        let version = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").trim().to_string();
        let cflags = cflags.unwrap_or(DEFAULT_CFLAGS).split_whitespace().map(str::to_string).collect();
        Ok(Toolchain { compiler, version, cflags })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildKind {
    /// liblmdb as a shared library, loaded at run time by the Rust harness.
    SharedLibrary,
    /// harness/workloads.c linked statically with the tag's sources.
    CHarness,
}

/// Everything needed to say which code produced a timing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildRecord {
    pub label: String,
    pub commit: Option<String>,
    pub kind: BuildKind,
    pub build_id: String,
    /// The shared library or executable.
    pub artifact: PathBuf,
    /// What `mdb_version()` reported.
    pub lmdb_version: String,
    pub files: FileHashes,
    pub provenance: Provenance,
    #[serde(rename = "match")]
    pub matches: Match,
    pub toolchain: Toolchain,
    pub built_at: String,
}

/// Files of the C twin beside its main file (harness/workloads.c), compiled and hashed
/// with it when present: a stand-in twin (as in the tests) has none.
const HARNESS_COMPANIONS: [&str; 2] = ["presets.c", "presets.h"];

fn harness_files(harness: &Path) -> Vec<PathBuf> {
    let companions = HARNESS_COMPANIONS.iter().map(|f| harness.with_file_name(f)).filter(|p| p.is_file());
    std::iter::once(harness.to_path_buf()).chain(companions).collect()
}

fn build_id(src: &SourceSet, tc: &Toolchain, kind: BuildKind, harness: Option<&Path>) -> Result<String> {
    let mut h = Sha256::new();
    h.update(format!("{kind:?}\n{}\n{}\n{}\n", src.key(), tc.compiler.display(), tc.version));
    for f in &tc.cflags {
        h.update(f.as_bytes());
        h.update(b"\0");
    }
    for p in harness.map(harness_files).unwrap_or_default() {
        h.update(std::fs::read(&p).with_context(|| format!("cannot read {}", p.display()))?);
    }
    Ok(hex::encode(h.finalize())[..16].to_string())
}

/// Builds (or finds already built) `src` with `tc`. `expect_version` is the tag's
/// (major, minor, patch); the built artifact must report it.
pub fn build(
    src: &SourceSet,
    tc: &Toolchain,
    kind: BuildKind,
    // harness/workloads.c, needed by `BuildKind::CHarness`.
    harness: Option<&Path>,
    builds_dir: &Path,
    expect_version: Option<(i32, i32, i32)>,
) -> Result<BuildRecord> {
    let harness = match (kind, harness) {
        (BuildKind::CHarness, None) => bail!("the C harness build needs harness/workloads.c"),
        (BuildKind::CHarness, h) => h,
        (BuildKind::SharedLibrary, _) => None,
    };
    let id = build_id(src, tc, kind, harness)?;
    let suffix = match kind {
        BuildKind::SharedLibrary => "so",
        BuildKind::CHarness => "c",
    };
    let dir = builds_dir.join(format!("{}-{suffix}-{id}", sanitize(&src.label)));
    if let Some(rec) = already_built(&dir, src) {
        return Ok(rec);
    }

    std::fs::create_dir_all(builds_dir)?;
    let staging = tempfile::tempdir_in(builds_dir)?;
    let (artifact_name, mut cmd) = compile_command(src, tc, kind, harness, staging.path());
    let out = cmd.output().with_context(|| format!("cannot run {}", tc.compiler.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed to compile {}:\n{}",
            tc.compiler.display(),
            src.label,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    let lmdb_version = check_version(kind, &staging.path().join(artifact_name), &src.label, expect_version)?;
    let rec = BuildRecord {
        label: src.label.clone(),
        commit: src.commit.clone(),
        kind,
        build_id: id,
        artifact: dir.join(artifact_name),
        lmdb_version,
        files: src.files.clone(),
        provenance: src.provenance.clone(),
        matches: src.matches,
        toolchain: tc.clone(),
        built_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    std::fs::write(staging.path().join("build.json"), serde_json::to_vec_pretty(&rec)?)?;
    install(staging, &dir, &rec)?;
    Ok(rec)
}

/// The record of an earlier build in `dir` whose artifact is still there. Same sources,
/// compiler and flags: nothing to redo. The label may differ (a commit that is also a
/// tag); the caller's name and provenance win.
fn already_built(dir: &Path, src: &SourceSet) -> Option<BuildRecord> {
    let bytes = std::fs::read(dir.join("build.json")).ok()?;
    let mut rec = serde_json::from_slice::<BuildRecord>(&bytes).ok()?;
    if !rec.artifact.is_file() {
        return None;
    }
    rec.label = src.label.clone();
    rec.provenance = src.provenance.clone();
    Some(rec)
}

/// The compiler invocation for `kind`, writing into `out_dir`, and the artifact's name.
fn compile_command(
    src: &SourceSet,
    tc: &Toolchain,
    kind: BuildKind,
    harness: Option<&Path>,
    out_dir: &Path,
) -> (&'static str, Command) {
    let mut c = Command::new(&tc.compiler);
    match (kind, harness) {
        (BuildKind::CHarness, Some(harness)) => {
            // Same flags, but an executable: -shared would make a library.
            c.args(tc.cflags.iter().filter(|f| f.as_str() != "-shared"));
            c.arg("-I").arg(&src.dir).arg("-o").arg(out_dir.join("lmdb-harness-c"));
            c.args(harness_files(harness).into_iter().filter(|p| p.extension().is_some_and(|e| e == "c")));
            c.arg(src.dir.join("mdb.c")).arg(src.dir.join("midl.c"));
            c.arg("-ldeflate");
            ("lmdb-harness-c", c)
        }
        _ => {
            c.args(&tc.cflags).arg("-o").arg(out_dir.join("liblmdb.so"));
            c.arg(src.dir.join("mdb.c")).arg(src.dir.join("midl.c"));
            ("liblmdb.so", c)
        }
    }
}

/// Asks the built artifact its version; it must be the tag's. Returns mdb_version's text.
fn check_version(kind: BuildKind, artifact: &Path, label: &str, expect: Option<(i32, i32, i32)>) -> Result<String> {
    let ((a, b, c), text) = match kind {
        BuildKind::SharedLibrary => library_version(artifact)?,
        BuildKind::CHarness => harness_version(artifact)?,
    };
    if let Some((ea, eb, ec)) = expect {
        if (a, b, c) != (ea, eb, ec) {
            bail!("{label} reports version {a}.{b}.{c} ({text}), expected {ea}.{eb}.{ec}");
        }
    }
    Ok(text)
}

/// Moves a finished build from `staging` to `dir`, replacing what was there. Losing a race
/// to another process that installed the same build is no failure.
fn install(staging: tempfile::TempDir, dir: &Path, rec: &BuildRecord) -> Result<()> {
    let staged = staging.keep();
    if dir.exists() {
        let _ = std::fs::remove_dir_all(dir);
    }
    if let Err(e) = std::fs::rename(&staged, dir) {
        let _ = std::fs::remove_dir_all(&staged);
        if !rec.artifact.is_file() {
            bail!("cannot move the build into {}: {e}", dir.display());
        }
    }
    Ok(())
}

/// A tag or commit label made safe as a file name: anything but letters, digits, `.` and
/// `_` becomes `-`.
pub fn sanitize(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' }).collect()
}

type Version = ((i32, i32, i32), String);

/// Opens the library and asks it: proves it loads and is the version we think.
pub fn library_version(lib: &Path) -> Result<Version> {
    type MdbVersion = unsafe extern "C" fn(*mut i32, *mut i32, *mut i32) -> *const std::os::raw::c_char;
    // SAFETY: loading liblmdb runs no initialisers of consequence; mdb_version only
    // writes the three ints and returns a static string.
    unsafe {
        let l = libloading::Library::new(lib).with_context(|| format!("cannot load {}", lib.display()))?;
        let f: libloading::Symbol<MdbVersion> = l.get(b"mdb_version\0").context("no mdb_version symbol")?;
        let (mut a, mut b, mut c) = (0, 0, 0);
        let s = f(&mut a, &mut b, &mut c);
        let text = if s.is_null() { String::new() } else { std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned() };
        Ok(((a, b, c), text))
    }
}

/// The C harness prints `major minor patch text` for `version`.
pub fn harness_version(exe: &Path) -> Result<Version> {
    let out = Command::new(exe).arg("version").output().with_context(|| format!("cannot run {}", exe.display()))?;
    if !out.status.success() {
        bail!("{} version failed", exe.display());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.trim().splitn(4, ' ');
    let mut num = || it.next().and_then(|s| s.parse().ok()).context("unexpected version output");
    let v = (num()?, num()?, num()?);
    Ok((v, it.next().unwrap_or("").to_string()))
}
