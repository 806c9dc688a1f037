//! The C twin's paired worker (harness/paired.c): one executable for every C unit of a run,
//! which loads each unit's shared library at run time as the Rust paired worker does, so
//! that the Rust/C overhead compares two harnesses reaching the same libraries the same
//! way. It links no liblmdb: the lmdb.h of a verified build gives it LMDB's types and
//! constants (every build's ABI is checked against them), dlsym each library's functions.
//! Built once per (its files, that lmdb.h, compiler and flags), from copies staged in its
//! own folder and hashed again once the compiler is done, as every build is
//! (`crate::stage`); a cached one is checked again before it is used.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::compile::{BuildRecord, Toolchain};
use crate::manifest::FileHashes;
use crate::stage::{self, HARNESS, SRC};

/// The paired worker's main file, beside the C twin's.
pub const MAIN: &str = "paired.c";
/// Its own files beside it (the libraries it loads, `paired_load.c`), and the twin's
/// files it shares: none of them calls LMDB.
const COMPANIONS: [&str; 8] =
    ["paired.h", "paired_load.c", "common.c", "common.h", "dataset.c", "dataset.h", "iocount.c", "iocount.h"];
/// The libc functions `iocount.c` counts through: exported, so that each library the worker
/// loads calls them (the binary's own definitions come first in every library's lookup).
const COUNTED: [&str; 6] = ["fdatasync", "fsync", "msync", "write", "pwrite", "writev"];
const PROGRAM: &str = "lmdb-paired-c";
/// Part of every id: a worker built another way is never taken for one of these.
const RECIPE: &str = "paired twin 2";

/// A built paired worker: the program, its SHA-256 (checked before every start), and what
/// it was compiled from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairedTwin {
    pub program: PathBuf,
    pub sha256: String,
    pub build_id: String,
    pub compiled: FileHashes,
    pub toolchain: Toolchain,
}

/// The paired worker for C units, built from `main` (harness/paired.c) and its companions
/// beside it, against the lmdb.h `library` (a shared-library build) was compiled with, by
/// `tc` (without -shared), in `builds_dir`, or found there already built.
pub fn build(main: &Path, library: &BuildRecord, tc: &Toolchain, builds_dir: &Path) -> Result<PairedTwin> {
    let files = inputs(main, library)?;
    let compiled: FileHashes = files.iter().map(|(p, b)| (p.clone(), hex::encode(Sha256::digest(b)))).collect();
    let id = build_id(&compiled, tc);
    let dir = builds_dir.join(format!("{PROGRAM}-{id}"));
    if let Some(found) = cached(&dir, &id)? {
        return Ok(found);
    }
    std::fs::create_dir_all(builds_dir).with_context(|| format!("cannot write in {}", builds_dir.display()))?;
    let staging = tempfile::tempdir_in(builds_dir)?;
    for (path, bytes) in &files {
        let dest = staging.path().join(path);
        std::fs::create_dir_all(dest.parent().expect("inputs live in a folder"))?;
        std::fs::write(&dest, bytes).with_context(|| format!("cannot write {}", dest.display()))?;
    }
    compile(staging.path(), &files, tc)?;
    stage::check(staging.path(), &compiled)?;
    let built = staging.path().join(PROGRAM);
    let twin = PairedTwin {
        program: dir.join(PROGRAM),
        sha256: crate::artifact::sha256(&built)?,
        build_id: id,
        compiled,
        toolchain: tc.clone(),
    };
    std::fs::write(staging.path().join("build.json"), serde_json::to_vec_pretty(&twin)?)?;
    let staged = staging.keep();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::rename(&staged, &dir) {
        let _ = std::fs::remove_dir_all(&staged);
        // Another process installing the same build first is no failure.
        if !twin.program.is_file() {
            bail!("cannot move the paired worker into {}: {e}", dir.display());
        }
    }
    Ok(twin)
}

/// The worker's files and lmdb.h, by their path in its folder; lmdb.h must still be what
/// `library` was compiled from.
fn inputs(main: &Path, library: &BuildRecord) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    for name in std::iter::once(MAIN).chain(COMPANIONS) {
        let path = main.with_file_name(name);
        let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        files.push((format!("{HARNESS}/{name}"), bytes));
    }
    let header = format!("{SRC}/lmdb.h");
    let verified =
        library.compiled.get(&header).with_context(|| format!("{}'s build records no {header}", library.label))?;
    let folder = library.artifact.parent().context("a build's artifact has no folder")?;
    let bytes =
        std::fs::read(folder.join(&header)).with_context(|| format!("cannot read {}'s {header}", library.label))?;
    let found = hex::encode(Sha256::digest(&bytes));
    if found != *verified {
        bail!("{}'s {header} has SHA-256 {found}, but the library was compiled from {verified}", library.label);
    }
    files.push((header, bytes));
    Ok(files)
}

fn build_id(compiled: &FileHashes, tc: &Toolchain) -> String {
    let mut h = Sha256::new();
    h.update(format!("{RECIPE}\n{}\n{}\n", tc.compiler.display(), tc.version));
    for f in compile_flags(tc) {
        h.update(f.as_bytes());
        h.update(b"\0");
    }
    for (path, sha) in compiled {
        h.update(format!("{path}={sha}\n"));
    }
    hex::encode(h.finalize())[..16].to_string()
}

/// The toolchain's flags for an executable.
fn compile_flags(tc: &Toolchain) -> impl Iterator<Item = &String> {
    tc.cflags.iter().filter(|f| f.as_str() != "-shared")
}

fn compile(staging: &Path, files: &[(String, Vec<u8>)], tc: &Toolchain) -> Result<()> {
    let mut c = stage::compiler_in(staging, &tc.compiler);
    c.args(compile_flags(tc)).args(["-I", SRC, "-I", HARNESS, "-o", PROGRAM]);
    c.args(files.iter().map(|(p, _)| p).filter(|p| p.ends_with(".c")));
    c.args(["-ldeflate", "-ldl"]);
    c.args(COUNTED.iter().map(|f| format!("-Wl,--export-dynamic-symbol={f}")));
    let out = crate::children::output(&mut c).with_context(|| format!("cannot run {}", tc.compiler.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed to compile the C paired worker:\n{}",
            tc.compiler.display(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    Ok(())
}

/// The build in `dir`, when there is one and it is still what its record says: its id,
/// the copies it was compiled from, its program's SHA-256.
fn cached(dir: &Path, id: &str) -> Result<Option<PairedTwin>> {
    let Ok(bytes) = std::fs::read(dir.join("build.json")) else { return Ok(None) };
    let Ok(mut twin) = serde_json::from_slice::<PairedTwin>(&bytes) else { return Ok(None) };
    twin.program = dir.join(PROGRAM);
    let sound = twin.build_id == id
        && build_id(&twin.compiled, &twin.toolchain) == id
        && stage::check(dir, &twin.compiled).is_ok()
        && crate::artifact::verify(&twin.program, &twin.sha256).is_ok();
    Ok(sound.then_some(twin))
}
