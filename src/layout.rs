//! Code layout as a random variable. Each (tag, toolchain) is compiled once into objects
//! with one section per function (`-ffunction-sections`); lld then links them into as many
//! function orders as a run needs, one per seeded shuffle (`--shuffle-sections`). A time
//! difference measured over many layouts describes LMDB, not one arbitrary binary. The fixed
//! build (compile.rs) stays exactly as it was, so old runs reproduce.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use anyhow::{bail, ensure, Context, Result};
use object::{Object, ObjectSymbol, SymbolKind, SymbolScope};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::compile::{self, BuildKind, Toolchain};
use crate::manifest::FileHashes;
use crate::matrix::MatrixOptions;
use crate::source::{sha256_file, Resolution, SourceSet, Want};
use crate::stage;

/// The Debian package that brings lld.
pub const LLD_PACKAGE: &str = "lld";
/// Beyond the toolchain's flags: one section per function, which is what lld shuffles.
const OBJECT_FLAGS: [&str; 2] = ["-ffunction-sections", "-c"];
/// Seeds stay below 2^31: lld reads them as 32 bits and takes 0 for "random", -1 for "reverse".
const SEED_MASK: u32 = 0x7fff_ffff;
/// What the C twin links beside its objects, as compile.rs links the fixed twin.
const HARNESS_LIBS: [&str; 1] = ["-ldeflate"];
const OBJECTS_RECORD: &str = "objects.json";

/// lld, as the toolchain's compiler drives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Linker {
    /// The line `-Wl,--version` prints, e.g. "Debian LLD 14.0.6 (compatible with GNU linkers)".
    pub version: String,
}

impl Linker {
    /// Asks `tc`'s compiler to run lld; when it cannot, the error names the package.
    pub fn probe(tc: &Toolchain) -> Result<Linker> {
        let out = crate::children::output(Command::new(&tc.compiler).args(["-fuse-ld=lld", "-Wl,--version"]))
            .with_context(|| format!("cannot run {}", tc.compiler.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        match stdout.lines().find(|l| l.contains("LLD")) {
            Some(line) if out.status.success() => Ok(Linker { version: line.trim().to_string() }),
            _ => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let why = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no LLD version line");
                bail!(
                    "random layouts are linked by lld, which {} cannot run ({}): install Debian's package \
                     {LLD_PACKAGE} (apt-get install {LLD_PACKAGE}; `make deps` installs it), or measure one \
                     fixed build per tag with --layouts fixed",
                    tc.compiler.display(),
                    why.trim()
                )
            }
        }
    }
}

/// One (tag, toolchain)'s objects for one kind of build, compiled once and cached beside its
/// builds (`builds/<tag>-<so|c>-objects-<id>/` with `objects.json`, and the sources they were
/// compiled from, as a build keeps them: `crate::stage`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObjectSet {
    pub label: String,
    pub kind: BuildKind,
    pub id: String,
    pub dir: PathBuf,
    /// Each object's file name and SHA-256, in link order.
    pub objects: Vec<(String, String)>,
    pub toolchain: Toolchain,
    /// What the compiler read, as a build records it (`compile::BuildRecord::compiled`).
    #[serde(default)]
    pub compiled: FileHashes,
}

/// The fixed build's id with the object flags: what the objects depend on.
fn objects_id(inputs: &FileHashes, tc: &Toolchain, kind: BuildKind) -> String {
    let build = compile::build_id(inputs, tc, kind);
    let digest = Sha256::digest(format!("{build}\n{}\n", OBJECT_FLAGS.join(" ")));
    hex::encode(digest)[..16].to_string()
}

/// Compiles (or finds compiled) `src`'s objects for `kind` with `tc`'s flags and
/// [`OBJECT_FLAGS`], from copies of the verified inputs staged beside them; `harness` is the
/// C twin's main file, needed for `BuildKind::CHarness`.
pub fn compile_objects(
    src: &SourceSet,
    tc: &Toolchain,
    kind: BuildKind,
    harness: Option<&Path>,
    builds_dir: &Path,
) -> Result<ObjectSet> {
    ensure!(kind == BuildKind::SharedLibrary || harness.is_some(), "the C twin's objects need harness/workloads.c");
    let inputs = compile::inputs(src, kind, harness)?;
    let compiled = inputs.hashes();
    let id = objects_id(&compiled, tc, kind);
    let suffix = if kind == BuildKind::SharedLibrary { "so" } else { "c" };
    let dir = builds_dir.join(format!("{}-{suffix}-objects-{id}", compile::sanitize(&src.label)));
    if let Some(set) = already_compiled(&dir, &id) {
        return Ok(ObjectSet { label: src.label.clone(), ..set });
    }
    std::fs::create_dir_all(builds_dir).with_context(|| format!("cannot create {}", builds_dir.display()))?;
    let staging = tempfile::tempdir_in(builds_dir)?;
    let at = staging.path();
    inputs.stage(at)?;
    let mut objects = Vec::new();
    for c in inputs.c_files(kind == BuildKind::CHarness) {
        let name = format!("{}.o", c.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default());
        let mut cmd = stage::compiler_in(at, &tc.compiler);
        cmd.args(tc.cflags.iter().filter(|f| f.as_str() != "-shared")).args(OBJECT_FLAGS);
        cmd.args(["-I", stage::SRC, "-o", &name]).arg(&c);
        run(&mut cmd, &format!("compile {} of {}", c.display(), src.label))?;
        objects.push((name.clone(), sha256_file(&at.join(&name))?));
    }
    // What the compiler read must be what was verified.
    stage::check(at, &compiled)?;
    let set = ObjectSet {
        label: src.label.clone(),
        kind,
        id: id.clone(),
        dir: dir.clone(),
        objects,
        toolchain: tc.clone(),
        compiled,
    };
    std::fs::write(at.join(OBJECTS_RECORD), serde_json::to_vec_pretty(&set)?)?;
    install(staging, &dir, &id)?;
    Ok(set)
}

/// The record of objects compiled earlier in `dir`, the folder of objects `id`, when it is
/// what that id says (its inputs and toolchain hash to it), the sources it keeps are still
/// those inputs, and every object is still there unchanged.
fn already_compiled(dir: &Path, id: &str) -> Option<ObjectSet> {
    let set: ObjectSet = serde_json::from_slice(&std::fs::read(dir.join(OBJECTS_RECORD)).ok()?).ok()?;
    let described = set.id == id && objects_id(&set.compiled, &set.toolchain, set.kind) == id;
    let sources = stage::check(dir, &set.compiled).is_ok();
    let intact = set.objects.iter().all(|(name, sha)| sha256_file(&dir.join(name)).is_ok_and(|h| h == *sha));
    (described && sources && intact).then(|| ObjectSet { dir: dir.to_path_buf(), ..set })
}

/// Moves finished objects into place whole; losing a race to another process that
/// compiled the same objects is no failure.
fn install(staging: tempfile::TempDir, dir: &Path, id: &str) -> Result<()> {
    let staged = staging.keep();
    if dir.exists() {
        let _ = std::fs::remove_dir_all(dir);
    }
    if let Err(e) = std::fs::rename(&staged, dir) {
        let _ = std::fs::remove_dir_all(&staged);
        if already_compiled(dir, id).is_none() {
            bail!("cannot move the objects into {}: {e}", dir.display());
        }
    }
    Ok(())
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = crate::children::output(cmd).with_context(|| format!("cannot {what}: {cmd:?} does not start"))?;
    if !out.status.success() {
        bail!("cannot {what}:\n{}", String::from_utf8_lossy(&out.stderr).trim_end());
    }
    Ok(())
}

/// One linked layout: its seed, its file and that file's SHA-256 when it was linked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    pub seed: u32,
    pub path: PathBuf,
    pub sha256: String,
}

impl Layout {
    /// Before each use: the file is still the one that was linked and verified.
    pub fn check(&self) -> Result<()> {
        let now = sha256_file(&self.path)?;
        ensure!(
            now == self.sha256,
            "layout {} ({}) changed on disk since it was linked and verified (SHA-256 {} then, {now} now): \
             delete it, and it is linked again",
            self.seed,
            self.path.display(),
            self.sha256
        );
        Ok(())
    }
}

/// What a layout's file is, written beside it: how it was linked, and its SHA-256.
#[derive(Debug, Serialize, Deserialize)]
struct LayoutRecord {
    seed: u32,
    sha256: String,
    objects: Vec<(String, String)>,
    linker: Linker,
    compiler: PathBuf,
    compiler_version: String,
    args: Vec<String>,
}

/// What one unit's layouts are linked from, and what each must export: the fixed build's
/// symbols.
#[derive(Debug)]
pub struct Source {
    pub objects: ObjectSet,
    pub linker: Linker,
    exports: BTreeSet<String>,
    /// `<cache>/layouts`: every layout linked, named by the hash of what made it.
    dir: PathBuf,
}

impl Source {
    /// `fixed` is the unit's fixed build (its library or C twin); `cache_root` the cache.
    pub fn new(objects: ObjectSet, linker: Linker, fixed: &Path, cache_root: &Path) -> Result<Source> {
        let exports = exports(fixed, objects.kind)?;
        ensure!(!exports.is_empty(), "{} exports no symbol: not a build to lay out again", fixed.display());
        Ok(Source { objects, linker, exports, dir: crate::source::SourceCache::at(cache_root).layouts_dir() })
    }

    /// The compiler's arguments that link the objects in the order `seed` shuffles them:
    /// the toolchain's flags (as the fixed build's one command had them), lld on one thread
    /// (layouts are linked one per core), no debug information (callgrind's toggles need only
    /// the symbol table).
    fn link_args(&self, seed: u32) -> Vec<String> {
        let tc = &self.objects.toolchain;
        let shared = self.objects.kind == BuildKind::SharedLibrary;
        let mut args: Vec<String> = tc.cflags.iter().filter(|f| shared || f.as_str() != "-shared").cloned().collect();
        args.extend(["-fuse-ld=lld", "-Wl,--threads=1", "-Wl,--strip-debug"].map(String::from));
        args.push(format!("-Wl,--shuffle-sections=.text.*={seed}"));
        args
    }

    fn record(&self, seed: u32, sha256: String) -> LayoutRecord {
        let tc = &self.objects.toolchain;
        LayoutRecord {
            seed,
            sha256,
            objects: self.objects.objects.clone(),
            linker: self.linker.clone(),
            compiler: tc.compiler.clone(),
            compiler_version: tc.version.clone(),
            args: self.link_args(seed),
        }
    }

    /// Where the layout of `seed` is kept: named by the hash of the objects, the seed, the
    /// linker, the compiler and the link flags, so equal inputs find it again.
    fn path(&self, seed: u32) -> Result<PathBuf> {
        let key = Sha256::digest(serde_json::to_vec(&self.record(seed, String::new()))?);
        let (suffix, ext) = if self.objects.kind == BuildKind::SharedLibrary { ("so", "so") } else { ("c", "exe") };
        let name = format!("{}-{suffix}-{}.{ext}", compile::sanitize(&self.objects.label), &hex::encode(key)[..16]);
        Ok(self.dir.join(name))
    }

    /// The layout of `seed`, linked now or found linked; either way verified: it exports
    /// exactly the fixed build's symbols, and its file has the SHA-256 recorded when linked.
    pub fn link(&self, seed: u32) -> Result<Layout> {
        ensure!((1..=SEED_MASK).contains(&seed), "layout seed {seed} is outside 1..={SEED_MASK}");
        let path = self.path(seed)?;
        if let Some(found) = self.linked(&path, seed) {
            return Ok(found);
        }
        std::fs::create_dir_all(&self.dir).with_context(|| format!("cannot create {}", self.dir.display()))?;
        let staging = tempfile::Builder::new().prefix(".link-").tempdir_in(&self.dir)?;
        let out = staging.path().join("out");
        let mut cmd = Command::new(&self.objects.toolchain.compiler);
        cmd.args(self.link_args(seed)).arg("-o").arg(&out);
        cmd.args(self.objects.objects.iter().map(|(name, _)| self.objects.dir.join(name)));
        cmd.args(compile::system_libs(self.objects.objects.iter().map(|(name, _)| name)));
        if self.objects.kind == BuildKind::CHarness {
            cmd.args(HARNESS_LIBS);
        }
        run(&mut cmd, &format!("link layout {seed} of {}", self.objects.label))?;
        self.same_exports(&out, seed)?;
        let sha256 = sha256_file(&out)?;
        // The file, then its record, each renamed into place whole.
        std::fs::rename(&out, &path).with_context(|| format!("cannot move a layout to {}", path.display()))?;
        let record = staging.path().join("record");
        std::fs::write(&record, serde_json::to_vec_pretty(&self.record(seed, sha256.clone()))?)?;
        std::fs::rename(&record, path.with_extension("json"))?;
        Ok(Layout { seed, path, sha256 })
    }

    /// Whether the layout of `seed` was linked earlier (its file and record are there): a
    /// quick look, unverified; [`Source::link`] verifies what it finds.
    pub fn is_linked(&self, seed: u32) -> bool {
        self.path(seed).is_ok_and(|p| p.exists() && p.with_extension("json").exists())
    }

    /// A layout linked earlier whose file still has its recorded SHA-256, marked used.
    fn linked(&self, path: &Path, seed: u32) -> Option<Layout> {
        let record = path.with_extension("json");
        let rec: LayoutRecord = serde_json::from_slice(&std::fs::read(&record).ok()?).ok()?;
        let layout = Layout { seed, path: path.to_path_buf(), sha256: rec.sha256 };
        let found = rec.seed == seed && layout.check().is_ok();
        // When a run last used it, for `lmdb-regress cache` (a cache it cannot write is no error).
        if found {
            let _ = std::fs::File::options().write(true).open(&record).and_then(|f| f.set_modified(SystemTime::now()));
        }
        found.then_some(layout)
    }

    fn same_exports(&self, linked: &Path, seed: u32) -> Result<()> {
        let got = exports(linked, self.objects.kind)?;
        if got == self.exports {
            return Ok(());
        }
        let few = |s: BTreeSet<&String>| s.into_iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        bail!(
            "layout {seed} of {} does not export what its fixed build exports (missing: {}; extra: {})",
            self.objects.label,
            few(self.exports.difference(&got).collect()),
            few(got.difference(&self.exports).collect())
        )
    }
}

/// A layout in the cache folder: its file and record, their bytes, and when a run last
/// used it (linked it, or found it linked: its record's time).
#[derive(Debug, Clone)]
pub struct Cached {
    pub file: Option<PathBuf>,
    pub record: PathBuf,
    pub bytes: u64,
    pub used: SystemTime,
}

/// Every layout in the cache folder `dir` (none when there is none). A file without its
/// record (a link cut short) is one too, its own time its last use.
pub fn cached(dir: &Path) -> Result<Vec<Cached>> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        r => r.with_context(|| format!("cannot read {}", dir.display()))?,
    };
    let mut by_stem: std::collections::BTreeMap<PathBuf, Vec<(PathBuf, std::fs::Metadata)>> = Default::default();
    for e in entries {
        let e = e?;
        let (path, meta) = (e.path(), e.metadata()?);
        let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("");
        if meta.is_file() && ["json", "so", "exe"].contains(&ext) {
            by_stem.entry(path.with_extension("")).or_default().push((path, meta));
        }
    }
    let mut out = Vec::new();
    for files in by_stem.into_values() {
        let record = files.iter().find(|(p, _)| p.extension().is_some_and(|x| x == "json"));
        let file = files.iter().find(|(p, _)| p.extension().is_some_and(|x| x != "json"));
        let Some((first, meta)) = record.or(file) else { continue };
        out.push(Cached {
            file: file.map(|(p, _)| p.clone()),
            // A name holds the tag's dots: the record is the file's name with .json for its extension.
            record: record.map_or_else(|| first.with_extension("json"), |(p, _)| p.clone()),
            bytes: files.iter().map(|(_, m)| m.len()).sum(),
            used: meta.modified()?,
        });
    }
    Ok(out)
}

/// Removes a cached layout: its record first, so that no run takes the file for linked
/// while it goes (a run that read the record before finds the file gone, or changed, and
/// links it again).
pub fn remove(c: &Cached) -> Result<()> {
    for path in std::iter::once(&c.record).chain(&c.file) {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The symbols a build offers others: a shared library's dynamic symbols; for an
/// executable (the C twin, which exports none) its global symbols. Only defined functions
/// and data of default visibility: what linkers define themselves (`_end`, `__bss_start`, …)
/// differs between bfd, which links the fixed build, and lld.
pub fn exports(path: &Path, kind: BuildKind) -> Result<BTreeSet<String>> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = object::File::parse(&*data).with_context(|| format!("{} is not an object file", path.display()))?;
    let symbols: Vec<object::Symbol> = match kind {
        BuildKind::SharedLibrary => file.dynamic_symbols().collect(),
        BuildKind::CHarness => file.symbols().collect(),
    };
    let offered = |s: &object::Symbol| {
        !s.is_undefined()
            && s.scope() == SymbolScope::Dynamic
            && matches!(s.kind(), SymbolKind::Text | SymbolKind::Data | SymbolKind::Tls)
    };
    symbols.iter().filter(|s| offered(s)).map(|s| Ok(s.name()?.to_string())).collect()
}

/// A layout's seed for lld, from the run's seed and what names one link (e.g. engine,
/// label and round): the same inputs give the same seed, so a run can be reproduced.
pub fn seed(run: u64, parts: &[&str]) -> u32 {
    let mut h = Sha256::new();
    h.update(run.to_le_bytes());
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    let d = h.finalize();
    (u32::from_le_bytes([d[0], d[1], d[2], d[3]]) & SEED_MASK).max(1)
}

/// The objects of `want`'s `kind` build by `toolchain`: its sources found again (in the
/// cache, verified), the objects compiled or found.
pub fn objects_of(want: &Want, toolchain: &Toolchain, kind: BuildKind, opts: &MatrixOptions) -> Result<ObjectSet> {
    let src = match opts.resolver.resolve(want) {
        Resolution::Found(src) => src,
        other => bail!("the sources of {} are gone: {}", want.label(), other.why().unwrap_or_default()),
    };
    // Only the C twin's objects depend on the harness: a library's are the same in every run.
    let harness = opts.harness_c.as_deref().filter(|_| kind == BuildKind::CHarness);
    compile_objects(&src, toolchain, kind, harness, &opts.resolver.cache.builds_dir())
}

/// The layout source of `want`'s `kind` build by `toolchain`, whose fixed build is `fixed`.
pub fn prepare(
    want: &Want,
    toolchain: &Toolchain,
    linker: &Linker,
    kind: BuildKind,
    opts: &MatrixOptions,
    fixed: &Path,
) -> Result<Source> {
    Source::new(objects_of(want, toolchain, kind, opts)?, linker.clone(), fixed, &opts.resolver.cache.root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_reproducible_nonzero_and_below_lld_s_special_values() {
        assert_eq!(seed(7, &["rust", "LMDB_0.9.18", "round 3"]), seed(7, &["rust", "LMDB_0.9.18", "round 3"]));
        assert_ne!(seed(7, &["rust", "LMDB_0.9.18", "round 3"]), seed(7, &["rust", "LMDB_0.9.18", "round 4"]));
        assert_ne!(seed(7, &["rust", "LMDB_0.9.18"]), seed(8, &["rust", "LMDB_0.9.18"]));
        // The parts are kept apart: ("ab", "c") is not ("a", "bc").
        assert_ne!(seed(1, &["ab", "c"]), seed(1, &["a", "bc"]));
        for i in 0..2000u64 {
            let s = seed(i, &["x"]);
            assert!((1..=SEED_MASK).contains(&s), "{s}");
        }
    }
}
