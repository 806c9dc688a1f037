//! Compiles verified sources with a real C compiler: one shared library per tag (and,
//! for the C twin, one statically linked harness executable), each in a directory of its
//! own with a JSON build record. Shared with build.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::manifest::{FileHashes, Match};
use crate::mtest::TestPrograms;
use crate::source::{Provenance, SourceSet};
use crate::stage::{HeaderVersion, Inputs, SRC};

/// The default flags: LmdbJava's `make OPT=-O2` with what every build adds.
pub const DEFAULT_CFLAGS: &str = "-O2 -g -fPIC -shared -pthread";
/// What every toolchain's build adds after its own flags (as LMDB's Makefile puts OPT
/// first): debug symbols, for perf and callgrind to name the timed functions; a
/// position-independent shared library; threads.
pub const BASE_CFLAGS: [&str; 4] = ["-g", "-fPIC", "-shared", "-pthread"];
/// Added after `-g` for clang: valgrind 3.19 (Debian 12), which counts instructions
/// where perf cannot, gives up on clang 14's DWARF 5.
pub const CLANG_DWARF: &str = "-gdwarf-4";
/// The name of the default toolchain: its builds keep the plain tag as their label.
pub const DEFAULT_TOOLCHAIN: &str = "gcc -O2";

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
        let version = version_line(&compiler)?;
        let cflags = match cflags {
            Some(own) => own.split_whitespace().map(str::to_string).collect(),
            None => with_base_flags(DEFAULT_CFLAGS.split_whitespace().take(1), &version),
        };
        Ok(Toolchain { compiler, version, cflags })
    }

    /// The toolchain `--toolchain` names: its compiler, its flags, then [`BASE_CFLAGS`].
    pub fn of(spec: &ToolchainSpec) -> Result<Toolchain> {
        let compiler = PathBuf::from(&spec.compiler);
        let version = version_line(&compiler)?;
        let cflags = with_base_flags(spec.flags.iter().map(String::as_str), &version);
        Ok(Toolchain { compiler, version, cflags })
    }

    /// "clang -O2": the compiler's file name and its flags beyond [`BASE_CFLAGS`]. Labels
    /// of builds by any toolchain but the default carry it.
    pub fn name(&self) -> String {
        let cc = self.compiler.file_name().map(|f| f.to_string_lossy()).unwrap_or_default();
        let own = self.cflags.iter().filter(|f| !is_base_flag(f));
        std::iter::once(cc.as_ref()).chain(own.map(String::as_str)).collect::<Vec<_>>().join(" ")
    }

    /// gcc -O2, LmdbJava's build: its builds are labelled with the plain tag.
    pub fn is_default(&self) -> bool {
        self.name() == DEFAULT_TOOLCHAIN
    }
}

/// A toolchain's own flags, then [`BASE_CFLAGS`] (with [`CLANG_DWARF`] for clang, told
/// by its version line).
fn with_base_flags<'a>(own: impl Iterator<Item = &'a str>, version: &str) -> Vec<String> {
    let clang = version.contains("clang").then_some(CLANG_DWARF);
    let base = BASE_CFLAGS.iter().take(1).copied().chain(clang).chain(BASE_CFLAGS.iter().skip(1).copied());
    let mut out: Vec<String> = Vec::new();
    for f in own.chain(base) {
        if !(is_base_flag(f) && out.iter().any(|o| o == f)) {
            out.push(f.to_string());
        }
    }
    out
}

fn is_base_flag(f: &str) -> bool {
    BASE_CFLAGS.contains(&f) || f == CLANG_DWARF
}

/// The first line of `compiler --version`; a compiler that is not installed is an error
/// naming the Debian package that brings it.
fn version_line(compiler: &Path) -> Result<String> {
    let out = match crate::children::output(Command::new(compiler).arg("--version")) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!("{}", missing_compiler(compiler)),
        other => other.with_context(|| format!("cannot run C compiler {}", compiler.display()))?,
    };
    if !out.status.success() {
        bail!("{} --version failed", compiler.display());
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").trim().to_string())
}

fn missing_compiler(compiler: &Path) -> String {
    let name = compiler.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    match debian_package(&name) {
        Some(pkg) => format!(
            "C compiler {} not found: install Debian's package {pkg} (apt-get install {pkg}; `make deps` installs gcc, `make deps-test` clang too)",
            compiler.display()
        ),
        None => format!("C compiler {} not found: install it, or give its full path", compiler.display()),
    }
}

/// The Debian package that installs a compiler of this name, when there is one to name.
pub fn debian_package(compiler: &str) -> Option<String> {
    let versioned = |prefix: &str| {
        compiler.strip_prefix(prefix).is_some_and(|v| v.is_empty() || v.chars().all(|c| c.is_ascii_digit()))
    };
    match compiler {
        "cc" | "c89" | "c99" => Some("gcc".into()),
        _ if compiler == "gcc" || compiler == "clang" || versioned("gcc-") || versioned("clang-") => {
            Some(compiler.to_string())
        }
        _ => None,
    }
}

/// The flags of coverage builds: -O0, so that every line gcov counts is one of the source's
/// (4,275 executable lines of 0.9.33's mdb.c, as optimised builds merge and drop lines).
pub const COVERAGE_FLAGS: [&str; 2] = ["-O0", "--coverage"];

/// A toolchain as `--toolchain` names it: `COMPILER:FLAGS`, e.g. `clang:-O2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainSpec {
    pub compiler: String,
    pub flags: Vec<String>,
}

impl ToolchainSpec {
    /// `compiler` (a gcc, whose gcov reads the counts) with [`COVERAGE_FLAGS`].
    pub fn coverage(compiler: &str) -> ToolchainSpec {
        ToolchainSpec { compiler: compiler.to_string(), flags: COVERAGE_FLAGS.iter().map(|f| f.to_string()).collect() }
    }

    /// `gcc:-O2,clang:-O2,gcc:-O3`: toolchains apart by commas, each a compiler, a colon
    /// and its flags (flags apart by spaces; they cannot hold a comma).
    pub fn parse_list(s: &str) -> std::result::Result<Vec<ToolchainSpec>, String> {
        if s.trim().is_empty() {
            return Err("--toolchain names no toolchain: give e.g. gcc:-O2,clang:-O2".into());
        }
        let specs = s.split(',').map(ToolchainSpec::parse).collect::<std::result::Result<Vec<_>, _>>()?;
        for (i, a) in specs.iter().enumerate() {
            if specs[..i].contains(a) {
                return Err(format!("toolchain {}:{} is named twice", a.compiler, a.flags.join(" ")));
            }
        }
        Ok(specs)
    }

    fn parse(item: &str) -> std::result::Result<ToolchainSpec, String> {
        let form = "a toolchain is COMPILER:FLAGS, e.g. clang:-O2 (commas separate toolchains)";
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("an empty toolchain between commas; {form}"));
        }
        let Some((compiler, flags)) = item.split_once(':') else {
            return Err(format!("{item:?}: {form}"));
        };
        let compiler = compiler.trim();
        if compiler.is_empty() || compiler.starts_with('-') || compiler.contains(char::is_whitespace) {
            return Err(format!("{item:?}: no compiler before the colon; {form}"));
        }
        let flags: Vec<String> = flags.split_whitespace().map(str::to_string).collect();
        if flags.is_empty() {
            return Err(format!("{item:?}: no flags after the colon; {form}"));
        }
        Ok(ToolchainSpec { compiler: compiler.to_string(), flags })
    }

    /// The spec that gives `tc` again: its compiler and its flags beyond [`BASE_CFLAGS`].
    pub fn of(tc: &Toolchain) -> ToolchainSpec {
        let flags = tc.cflags.iter().filter(|f| !is_base_flag(f)).cloned().collect();
        ToolchainSpec { compiler: tc.compiler.display().to_string(), flags }
    }

    /// `clang:-O2`, as `--toolchain` takes it.
    pub fn to_arg(&self) -> String {
        format!("{}:{}", self.compiler, self.flags.join(" "))
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
    /// The shared library or executable (in build.json: its name, relative to the
    /// build's folder, so that a cache can move).
    pub artifact: PathBuf,
    /// The artifact's SHA-256: every load is checked against it (`crate::artifact`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sha256: String,
    /// What `mdb_version()` reported.
    pub lmdb_version: String,
    pub files: FileHashes,
    /// What the compiler read: each input's path in the build's folder (`src/mdb.c`,
    /// `harness/workloads.c`, kept there) and its SHA-256 once the compiler was done.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub compiled: FileHashes,
    pub provenance: Provenance,
    #[serde(rename = "match")]
    pub matches: Match,
    pub toolchain: Toolchain,
    pub built_at: String,
    /// What the ABI probe printed against this build's lmdb.h (`crate::abi`): a build
    /// whose layout is not the bindings' is never loaded.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub abi: crate::abi::AbiLayout,
    /// What LMDB's own test programs said of the shared library (`crate::mtest`); none
    /// for the C twin, which is no library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtest: Option<crate::mtest::MtestVerdict>,
    /// A patched unit's patch: its SHA-256, its base's hashes, where each hunk went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<crate::source::PatchRecord>,
}

/// Files of the C twin beside its main file (harness/workloads.c), compiled and hashed
/// with it when present: a stand-in twin (as in the tests) has none.
const HARNESS_COMPANIONS: [&str; 15] = [
    "common.c",
    "common.h",
    "iocount.c",
    "iocount.h",
    "dataset.c",
    "dataset.h",
    "lmdb_calls.c",
    "presets.c",
    "presets.h",
    "results.c",
    "results.h",
    "lmdb_suite.c",
    "lmdb_suite.h",
    "lmdb_suite_plan.c",
    "lmdb_suite.def",
];

pub fn harness_files(harness: &Path) -> Vec<PathBuf> {
    let companions = HARNESS_COMPANIONS.iter().map(|f| harness.with_file_name(f)).filter(|p| p.is_file());
    std::iter::once(harness.to_path_buf()).chain(companions).collect()
}

/// How builds are made, beyond their toolchain: compiled from copies staged in the build's
/// own folder (`crate::stage`). Part of every id, so no build made another way is taken
/// for one of these.
const RECIPE: &str = "staged sources 1";

/// A build's id: the hash of its inputs (`crate::stage::Inputs::hashes`), its kind, compiler,
/// compiler version and flags, and [`RECIPE`].
pub fn build_id(inputs: &FileHashes, tc: &Toolchain, kind: BuildKind) -> String {
    let mut h = Sha256::new();
    h.update(format!("{RECIPE}\n{kind:?}\n{}\n{}\n", tc.compiler.display(), tc.version));
    for f in &tc.cflags {
        h.update(f.as_bytes());
        h.update(b"\0");
    }
    for (path, sha) in inputs {
        h.update(format!("{path}={sha}\n"));
    }
    hex::encode(h.finalize())[..16].to_string()
}

/// What a kind of build reads: `src`'s sources, and for the C twin its files (`harness`,
/// its main file) too.
pub fn inputs(src: &SourceSet, kind: BuildKind, harness: Option<&Path>) -> Result<Inputs> {
    let twin = match (kind, harness) {
        (BuildKind::CHarness, Some(h)) => harness_files(h),
        (BuildKind::CHarness, None) => bail!("the C harness build needs harness/workloads.c"),
        (BuildKind::SharedLibrary, _) => Vec::new(),
    };
    Inputs::read(src, &twin)
}

/// Builds (or finds already built) `src` with `tc`. `expect_version` is the tag's
/// (major, minor, patch); the built artifact must report it, and the version its lmdb.h
/// declares. A shared library is checked with `programs` (LMDB's mtest), a cached one when
/// its record asks for it.
pub fn build(
    src: &SourceSet,
    tc: &Toolchain,
    kind: BuildKind,
    // harness/workloads.c, needed by `BuildKind::CHarness`.
    harness: Option<&Path>,
    builds_dir: &Path,
    expect_version: Option<(i32, i32, i32)>,
    programs: &TestPrograms,
) -> Result<BuildRecord> {
    let inputs = inputs(src, kind, harness)?;
    let id = build_id(&inputs.hashes(), tc, kind);
    let suffix = match kind {
        BuildKind::SharedLibrary => "so",
        BuildKind::CHarness => "c",
    };
    let dir = builds_dir.join(format!("{}-{suffix}-{id}", sanitize(&src.label)));
    match already_built(&dir, &id, src) {
        Ok(Some(rec)) if kind == BuildKind::CHarness || !crate::mtest::needs_check(rec.mtest.as_ref(), programs) => {
            return Ok(rec)
        }
        Ok(Some(rec)) => return check_cached_with_mtest(src, tc, rec, programs, builds_dir),
        Ok(None) => {}
        Err(why) => eprintln!(
            "{}: the cached build in {} is not used ({why:#}); rebuilding it from verified sources",
            src.label,
            dir.display()
        ),
    }

    let writable = || format!("cannot write in {} (is the cache writable? LMDB_REGRESS_CACHE)", builds_dir.display());
    std::fs::create_dir_all(builds_dir).with_context(writable)?;
    let staging = tempfile::tempdir_in(builds_dir).with_context(writable)?;
    let at = staging.path();
    inputs.stage(at)?;
    let (artifact_name, mut cmd) = compile_command(&inputs, tc, kind, at);
    let out = crate::children::output(&mut cmd).with_context(|| format!("cannot run {}", tc.compiler.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed to compile {}:\n{}",
            tc.compiler.display(),
            src.label,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    // What the compiler read must be what was verified.
    let compiled = inputs.hashes();
    crate::stage::check(at, &compiled)?;
    let built = at.join(artifact_name);
    let lmdb_version = check_version(kind, &built, &src.label, expect_version, &at.join(SRC))?;
    let abi = crate::abi::probe(&at.join(SRC), &tc.compiler, &tc.cflags, at)?;
    crate::abi::check(&src.label, &abi)?;
    let mtest = match kind {
        BuildKind::SharedLibrary => {
            Some(crate::mtest::check(&src.label, &at.join(SRC), at, &tc.compiler, &tc.cflags, programs, builds_dir)?)
        }
        BuildKind::CHarness => None,
    };
    let rec = BuildRecord {
        label: src.label.clone(),
        commit: src.commit.clone(),
        kind,
        build_id: id,
        artifact: dir.join(artifact_name),
        sha256: crate::artifact::sha256(&built)?,
        lmdb_version,
        files: src.files.clone(),
        compiled,
        provenance: src.provenance.clone(),
        matches: src.matches,
        toolchain: tc.clone(),
        built_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        abi,
        mtest,
        patch: src.patch.clone(),
    };
    write_record(at, &rec, crate::files::Existing::Refuse)?;
    install(staging, &dir, &rec)?;
    Ok(rec)
}

/// Writes `rec` as `dir`/build.json, its artifact named relative to `dir`.
fn write_record(dir: &Path, rec: &BuildRecord, existing: crate::files::Existing) -> Result<()> {
    let name = rec.artifact.file_name().context("a build's artifact has no file name")?;
    let on_disk = BuildRecord { artifact: PathBuf::from(name), ..rec.clone() };
    crate::files::write_atomic(&dir.join("build.json"), &serde_json::to_vec_pretty(&on_disk)?, existing)
}

/// A cached library its record says was never checked with `programs` (a record from
/// before mtest, or from sources without them): checked now, in place, and its record
/// rewritten; rebuilding would give the same bytes.
fn check_cached_with_mtest(
    src: &SourceSet,
    tc: &Toolchain,
    mut rec: BuildRecord,
    programs: &TestPrograms,
    builds_dir: &Path,
) -> Result<BuildRecord> {
    let dir = rec.artifact.parent().context("a build's artifact has no folder")?.to_path_buf();
    let verdict =
        crate::mtest::check(&src.label, &dir.join(SRC), &dir, &tc.compiler, &tc.cflags, programs, builds_dir)?;
    rec.mtest = Some(verdict);
    // The record on disk keeps the build's own label and provenance, as written when built.
    let mut on_disk: BuildRecord = serde_json::from_slice(&std::fs::read(dir.join("build.json"))?)
        .with_context(|| format!("{} is corrupt", dir.join("build.json").display()))?;
    on_disk.artifact = rec.artifact.clone();
    on_disk.mtest = rec.mtest.clone();
    write_record(&dir, &on_disk, crate::files::Existing::Replace)?;
    Ok(rec)
}

/// The record of an earlier build in `dir`, the folder of build `id` (None when there is
/// none), when it can be trusted. Same inputs, compiler and flags: nothing to redo. The
/// label, commit and provenance are the caller's (a commit may share a tag's files).
/// Err says why the build cannot be trusted: it is then rebuilt.
fn already_built(dir: &Path, id: &str, src: &SourceSet) -> Result<Option<BuildRecord>> {
    let path = dir.join("build.json");
    let bytes = match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        other => other.with_context(|| format!("cannot read {}", path.display()))?,
    };
    let mut rec: BuildRecord =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is corrupt", path.display()))?;
    if rec.sha256.is_empty() || rec.artifact.is_absolute() {
        bail!("{} is an older build record, without the artifact's SHA-256", path.display());
    }
    rec.artifact = dir.join(&rec.artifact);
    trusted(&rec, dir, id, src)?;
    rec.label = src.label.clone();
    rec.commit = src.commit.clone();
    rec.provenance = src.provenance.clone();
    rec.matches = src.matches;
    rec.patch = src.patch.clone();
    Ok(Some(rec))
}

/// Whether a cached build is what its folder's id says: its record's inputs, kind and
/// toolchain hash to that id, its sources are `src`'s, the copies it was compiled from are
/// still those inputs, its artifact still has the recorded SHA-256 and ABI, and holds the
/// version its lmdb.h declares (read, not loaded).
fn trusted(rec: &BuildRecord, dir: &Path, id: &str, src: &SourceSet) -> Result<()> {
    let recorded = build_id(&rec.compiled, &rec.toolchain, rec.kind);
    if rec.build_id != id || recorded != id {
        bail!(
            "{} is the folder of build {id}, but its record names build {} and describes build {recorded}",
            dir.display(),
            rec.build_id
        );
    }
    if crate::stage::library_files(&rec.compiled) != rec.files || rec.files != src.files {
        bail!("{}: its record's source hashes are not those it was compiled from", dir.display());
    }
    crate::stage::check(dir, &rec.compiled)?;
    crate::artifact::verify(&rec.artifact, &rec.sha256)?;
    crate::abi::check(&src.label, &rec.abi)?;
    let declared = HeaderVersion::of(&dir.join(SRC))?;
    if rec.lmdb_version != declared.text || !declared.is_in(&rec.artifact)? {
        bail!(
            "{} is not {} (its record says {:?}): not a build of its sources",
            rec.artifact.display(),
            declared.text,
            rec.lmdb_version
        );
    }
    Ok(())
}

/// Every shared-library build in `builds_dir` whose library is still there, by its record
/// (what `tags` lists as cached, building nothing), by toolchain name: those made as builds
/// are now made (their record's inputs hash to their folder's id).
pub fn cached_builds(builds_dir: &Path) -> Vec<BuildRecord> {
    // build.json names the artifact relative to its folder (a cache can move).
    let record = |dir: &Path| {
        let mut rec = serde_json::from_slice::<BuildRecord>(&std::fs::read(dir.join("build.json")).ok()?).ok()?;
        let id = build_id(&rec.compiled, &rec.toolchain, rec.kind);
        if rec.build_id != id || !dir.to_string_lossy().ends_with(&id) {
            return None;
        }
        rec.artifact = dir.join(&rec.artifact);
        Some(rec)
    };
    let mut out: Vec<BuildRecord> = std::fs::read_dir(builds_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| record(&e.path()))
        .filter(|r| r.kind == BuildKind::SharedLibrary && !r.sha256.is_empty() && r.artifact.is_file())
        .collect();
    out.sort_by_key(|r| r.toolchain.name());
    out
}

/// The compiler invocation for `kind` from the inputs staged in `staging`, writing there,
/// and the artifact's name.
fn compile_command(inputs: &Inputs, tc: &Toolchain, kind: BuildKind, staging: &Path) -> (&'static str, Command) {
    let mut c = crate::stage::compiler_in(staging, &tc.compiler);
    let (name, flags): (&str, Vec<&String>) = match kind {
        // Same flags, but an executable: -shared would make a library.
        BuildKind::CHarness => ("lmdb-harness-c", tc.cflags.iter().filter(|f| f.as_str() != "-shared").collect()),
        BuildKind::SharedLibrary => ("liblmdb.so", tc.cflags.iter().collect()),
    };
    let c_files = inputs.c_files(kind == BuildKind::CHarness);
    let names: Vec<String> =
        c_files.iter().filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned())).collect();
    c.args(flags).args(["-I", SRC, "-o", name]).args(&c_files).args(system_libs(&names));
    if kind == BuildKind::CHarness {
        c.arg("-ldeflate");
    }
    (name, c)
}

/// The system libraries liblmdb's files (sources or their objects, by name) link with:
/// 1.0's module.c loads modules with dlopen, so upstream's Makefile adds `-ldl`.
pub fn system_libs<'a>(files: impl IntoIterator<Item = &'a String>) -> Option<&'static str> {
    let stem = |f: &String| f.rsplit_once('.').map_or(f.clone(), |(s, _)| s.to_string());
    files.into_iter().any(|f| stem(f) == "module").then_some("-ldl")
}

/// Asks the built artifact its version: it must be the tag's (`expect`) and the one the
/// lmdb.h in `sources` declares. Returns mdb_version's text.
fn check_version(
    kind: BuildKind,
    artifact: &Path,
    label: &str,
    expect: Option<(i32, i32, i32)>,
    sources: &Path,
) -> Result<String> {
    let ((a, b, c), text) = match kind {
        BuildKind::SharedLibrary => library_version(artifact)?,
        BuildKind::CHarness => harness_version(artifact)?,
    };
    if let Some((ea, eb, ec)) = expect {
        if (a, b, c) != (ea, eb, ec) {
            bail!("{label} reports version {a}.{b}.{c} ({text}), expected {ea}.{eb}.{ec}");
        }
    }
    let declared = HeaderVersion::of(sources)?;
    if ((a, b, c), text.as_str()) != (declared.numbers, declared.text.as_str()) {
        bail!("{label} reports version {a}.{b}.{c} ({text}), but its lmdb.h declares {:?}", declared.text);
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

/// The most characters of a label a file name keeps: with what callers add around it
/// (a build's kind and id, a workload), well inside NAME_MAX (255 bytes).
const NAME_KEPT: usize = 64;

/// A tag or commit label made safe as a file name: anything but letters, digits, `.` and
/// `_` becomes `-`; a label longer than [`NAME_KEPT`] is cut and the SHA-256 of the whole
/// label appended, so that long labels stay apart.
pub fn sanitize(label: &str) -> String {
    let safe: String =
        label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' }).collect();
    if safe.len() <= NAME_KEPT {
        return safe;
    }
    let hash = hex::encode(Sha256::digest(label.as_bytes()));
    format!("{}-{}", &safe[..NAME_KEPT - 17], &hash[..16])
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
    let out = crate::children::output(Command::new(exe).arg("version"))
        .with_context(|| format!("cannot run {}", exe.display()))?;
    if !out.status.success() {
        bail!("{} version failed", exe.display());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.trim().splitn(4, ' ');
    let mut num = || it.next().and_then(|s| s.parse().ok()).context("unexpected version output");
    let v = (num()?, num()?, num()?);
    Ok((v, it.next().unwrap_or("").to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_label_becomes_a_short_file_name_of_its_own() {
        assert_eq!(sanitize("LMDB_0.9.33 + x.patch (clang -O2)"), "LMDB_0.9.33---x.patch--clang--O2-");
        let long = |c: &str| sanitize(&format!("LMDB_0.9.33 + {}.patch", c.repeat(300)));
        let (a, b) = (long("a"), long("b"));
        assert!(a.len() <= NAME_KEPT && b.len() <= NAME_KEPT && a != b, "{a} {b}");
        let alike = |end: &str| sanitize(&format!("{}{end}", "x".repeat(100)));
        assert_ne!(alike("1"), alike("2"), "labels alike in their first characters stay apart");
    }

    fn spec(compiler: &str, flags: &str) -> ToolchainSpec {
        ToolchainSpec { compiler: compiler.into(), flags: flags.split_whitespace().map(str::to_string).collect() }
    }

    #[test]
    fn toolchain_lists_parse() {
        assert_eq!(
            ToolchainSpec::parse_list("gcc:-O2,clang:-O2,gcc:-O3").unwrap(),
            [spec("gcc", "-O2"), spec("clang", "-O2"), spec("gcc", "-O3")]
        );
        assert_eq!(
            ToolchainSpec::parse_list(" /usr/bin/clang-14 : -O3 -march=x86-64-v2 ").unwrap(),
            [spec("/usr/bin/clang-14", "-O3 -march=x86-64-v2")]
        );
        assert_eq!(spec("clang", "-O2").to_arg(), "clang:-O2");
    }

    #[test]
    fn bad_toolchain_lists_say_why() {
        let err = |s: &str| ToolchainSpec::parse_list(s).unwrap_err();
        assert!(err("").contains("names no toolchain"));
        assert!(err("gcc").contains("COMPILER:FLAGS"), "{}", err("gcc"));
        assert!(err(":-O2").contains("no compiler before the colon"));
        assert!(err("gcc:-O2,-O3").starts_with("\"-O3\": a toolchain is COMPILER:FLAGS"), "{}", err("gcc:-O2,-O3"));
        assert!(err("gcc:").contains("no flags after the colon"));
        assert!(err("gcc:-O2,,clang:-O2").contains("empty toolchain"));
        assert!(err("my gcc:-O2").contains("no compiler"));
        assert!(err("gcc:-O2,gcc:-O2").contains("named twice"));
    }

    #[test]
    fn names_leave_out_the_flags_every_build_has() {
        let tc = |c: &str, f: &str| Toolchain {
            compiler: c.into(),
            version: String::new(),
            cflags: f.split_whitespace().map(str::to_string).collect(),
        };
        assert_eq!(DEFAULT_CFLAGS.split_whitespace().skip(1).collect::<Vec<_>>(), BASE_CFLAGS);
        assert_eq!(tc("/usr/bin/gcc", DEFAULT_CFLAGS).name(), DEFAULT_TOOLCHAIN);
        assert!(tc("gcc", DEFAULT_CFLAGS).is_default());
        assert!(!tc("cc", DEFAULT_CFLAGS).is_default());
        let clang = tc("clang", "-O3 -march=native -g -gdwarf-4 -fPIC -shared -pthread");
        assert_eq!(clang.name(), "clang -O3 -march=native");
        assert_eq!(ToolchainSpec::of(&clang), spec("clang", "-O3 -march=native"));
    }

    #[test]
    fn every_build_gets_the_base_flags_once() {
        let gcc = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0";
        assert_eq!(with_base_flags(["-O2"].into_iter(), gcc).join(" "), DEFAULT_CFLAGS);
        assert_eq!(with_base_flags(["-O2", "-g"].into_iter(), gcc).join(" "), DEFAULT_CFLAGS);
        let clang = with_base_flags(["-O3"].into_iter(), "Debian clang version 14.0.6");
        assert_eq!(clang.join(" "), "-O3 -g -gdwarf-4 -fPIC -shared -pthread");
    }

    #[test]
    fn missing_compilers_name_their_package() {
        assert_eq!(debian_package("clang").as_deref(), Some("clang"));
        assert_eq!(debian_package("clang-16").as_deref(), Some("clang-16"));
        assert_eq!(debian_package("gcc-13").as_deref(), Some("gcc-13"));
        assert_eq!(debian_package("cc").as_deref(), Some("gcc"));
        assert_eq!(debian_package("icx"), None);
        let e = Toolchain::of(&spec("clang-99", "-O2")).unwrap_err().to_string();
        assert!(e.contains("clang-99 not found") && e.contains("apt-get install clang-99"), "{e}");
    }
}
