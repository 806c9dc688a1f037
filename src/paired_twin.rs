//! The C twin's paired worker (harness/paired.c): one executable for every C unit of a run,
//! which loads each unit's shared library at run time as the Rust paired worker does, so
//! that the Rust/C overhead compares two harnesses reaching the same libraries the same
//! way. It links no liblmdb: the lmdb.h of a verified build gives it LMDB's types and
//! constants (every build's ABI is checked against them), dlsym each library's functions.
//! Built once per (its files, that lmdb.h, compiler and flags), from copies staged in its
//! own folder and hashed again once the compiler is done, as every build is
//! (`crate::stage`); a cached one is checked again before it is used.
//!
//! Its own code placement is sampled as the Rust worker's is (`crate::harness`): beside the
//! worker as compiled by one command (what counting passes and fixed layouts run), the same
//! sources compiled once with one section per function are linked by lld in
//! [`ORDERS`] function orders, and each timed C process under random layouts runs one drawn
//! at random (`crate::runner::unit`). Without lld there are none, and nothing is drawn.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::compile::{BuildRecord, Toolchain};
use crate::harness::{HarnessOrder, ORDERS};
use crate::layout::Linker;
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
/// Part of every id: a worker built another way is never taken for one of these
/// (2: with its function orders beside it; 3: exporting the functions `iocount.c` counts).
const RECIPE: &str = "paired twin 3";
/// Beyond the toolchain's flags, for the orders' objects: one section per function, which is
/// what lld shuffles.
const ORDER_OBJECT_FLAGS: [&str; 2] = ["-ffunction-sections", "-c"];
const LIBS: [&str; 2] = ["-ldeflate", "-ldl"];

/// A built paired worker: the program, its SHA-256 (checked before every start), and what
/// it was compiled from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairedTwin {
    pub program: PathBuf,
    pub sha256: String,
    pub build_id: String,
    pub compiled: FileHashes,
    pub toolchain: Toolchain,
    /// The lld that linked the orders; None: there was none, and so are no orders.
    pub linker: Option<Linker>,
    /// The worker in function orders, each its program `order_program(n)` beside `program`.
    pub orders: Vec<LinkedOrder>,
}

/// One function order of the C paired worker as built: which (1..=ORDERS, lld shuffling by
/// `crate::harness::seed(n)`) and its program's SHA-256, checked before every start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedOrder {
    pub n: u32,
    pub sha256: String,
}

impl PairedTwin {
    /// The orders a timed C process may run, each its program and SHA-256.
    pub fn harness_orders(&self) -> Vec<HarnessOrder> {
        let dir = self.program.parent().unwrap_or(Path::new("."));
        let order = |o: &LinkedOrder| HarnessOrder::checked(o.n, dir.join(order_program(o.n)), o.sha256.clone());
        self.orders.iter().map(order).collect()
    }
}

/// The program of function order `n`.
fn order_program(n: u32) -> String {
    format!("{PROGRAM}-{n}")
}

/// The paired worker for C units, built from `main` (harness/paired.c) and its companions
/// beside it, against the lmdb.h `library` (a shared-library build) was compiled with, by
/// `tc` (without -shared), in `builds_dir`, or found there already built.
pub fn build(main: &Path, library: &BuildRecord, tc: &Toolchain, builds_dir: &Path) -> Result<PairedTwin> {
    let files = inputs(main, library)?;
    let compiled: FileHashes = files.iter().map(|(p, b)| (p.clone(), hex::encode(Sha256::digest(b)))).collect();
    let linker = order_linker(tc);
    let id = build_id(&compiled, tc, linker.as_ref());
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
    let orders = match &linker {
        Some(_) => link_orders(staging.path(), &c_files(&files), tc)?,
        None => Vec::new(),
    };
    stage::check(staging.path(), &compiled)?;
    let built = staging.path().join(PROGRAM);
    let twin = PairedTwin {
        program: dir.join(PROGRAM),
        sha256: crate::artifact::sha256(&built)?,
        build_id: id,
        compiled,
        toolchain: tc.clone(),
        linker,
        orders,
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

/// lld as `tc`'s compiler drives it, to link the orders; without it, one warning (the worker
/// is built once a run) and no orders.
fn order_linker(tc: &Toolchain) -> Option<Linker> {
    match Linker::probe(tc) {
        Ok(linker) => Some(linker),
        Err(_) => {
            eprintln!(
                "warning: {} cannot link with lld: the C paired worker stays in one placement, and no function \
                 order of it is drawn (install Debian's package {}; `make deps` does)",
                tc.compiler.display(),
                crate::layout::LLD_PACKAGE
            );
            None
        }
    }
}

/// What the build depends on: the recipe, compiler, flags, inputs, and the linker and link
/// arguments of its orders (another lld, or none, is another build).
fn build_id(compiled: &FileHashes, tc: &Toolchain, linker: Option<&Linker>) -> String {
    let mut h = Sha256::new();
    h.update(format!("{RECIPE}\n{}\n{}\n", tc.compiler.display(), tc.version));
    for f in compile_flags(tc) {
        h.update(f.as_bytes());
        h.update(b"\0");
    }
    match linker {
        Some(linker) => {
            h.update(format!("orders by {}\n", linker.version));
            for f in (1..=ORDERS).flat_map(order_link_flags).chain(ORDER_OBJECT_FLAGS.map(String::from)) {
                h.update(f.as_bytes());
                h.update(b"\0");
            }
        }
        None => h.update(b"no orders\n"),
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
    c.args(c_files(files)).args(LIBS).args(exported());
    run(&mut c, tc, "compile the C paired worker")
}

/// The C files among the staged inputs, by their path in the staging folder.
fn c_files(files: &[(String, Vec<u8>)]) -> Vec<&str> {
    files.iter().map(|(p, _)| p.as_str()).filter(|p| p.ends_with(".c")).collect()
}

/// The link flags that export [`COUNTED`], so each loaded library's calls reach `iocount.c`.
fn exported() -> impl Iterator<Item = String> {
    COUNTED.iter().map(|f| format!("-Wl,--export-dynamic-symbol={f}"))
}

/// The link flags of order `n`: lld, shuffling every function's section by the order's seed.
fn order_link_flags(n: u32) -> [String; 2] {
    ["-fuse-ld=lld".into(), format!("-Wl,--shuffle-sections=.text.*={}", crate::harness::seed(n))]
}

/// Compiles `sources` (paths in `staging`) once into objects of one section per function,
/// and links them into each of the [`ORDERS`] function orders, `order_program(n)` in
/// `staging`; the objects are removed once linked.
fn link_orders(staging: &Path, sources: &[&str], tc: &Toolchain) -> Result<Vec<LinkedOrder>> {
    let mut c = stage::compiler_in(staging, &tc.compiler);
    c.args(compile_flags(tc)).args(ORDER_OBJECT_FLAGS).args(["-I", SRC, "-I", HARNESS]).args(sources);
    run(&mut c, tc, "compile the C paired worker's objects")?;
    // `-c` leaves each object in the folder it runs in, named after its source.
    let objects: Vec<String> = sources
        .iter()
        .map(|s| Path::new(s).with_extension("o"))
        .map(|p| p.file_name().expect("a source is a file").to_string_lossy().into_owned())
        .collect();
    let mut orders = Vec::new();
    for n in 1..=ORDERS {
        let mut c = stage::compiler_in(staging, &tc.compiler);
        c.args(compile_flags(tc)).args(order_link_flags(n)).args(["-o", &order_program(n)]);
        c.args(&objects).args(LIBS).args(exported());
        run(&mut c, tc, &format!("link function order {n} of the C paired worker"))?;
        orders.push(LinkedOrder { n, sha256: crate::artifact::sha256(&staging.join(order_program(n)))? });
    }
    for o in &objects {
        std::fs::remove_file(staging.join(o)).with_context(|| format!("cannot remove {o}"))?;
    }
    Ok(orders)
}

/// Runs the compiler `c`; its failure names what it was to `what` and what it said.
fn run(c: &mut std::process::Command, tc: &Toolchain, what: &str) -> Result<()> {
    let out = crate::children::output(c).with_context(|| format!("cannot run {}", tc.compiler.display()))?;
    if !out.status.success() {
        bail!("{} failed to {what}:\n{}", tc.compiler.display(), String::from_utf8_lossy(&out.stderr).trim_end());
    }
    Ok(())
}

/// The build in `dir`, when there is one and it is still what its record says: its id,
/// the copies it was compiled from, its program's SHA-256.
fn cached(dir: &Path, id: &str) -> Result<Option<PairedTwin>> {
    let Ok(bytes) = std::fs::read(dir.join("build.json")) else { return Ok(None) };
    let Ok(mut twin) = serde_json::from_slice::<PairedTwin>(&bytes) else { return Ok(None) };
    twin.program = dir.join(PROGRAM);
    let orders_sound = twin.orders.len() == if twin.linker.is_some() { ORDERS as usize } else { 0 }
        && twin.harness_orders().iter().all(|o| o.check().is_ok());
    let sound = twin.build_id == id
        && build_id(&twin.compiled, &twin.toolchain, twin.linker.as_ref()) == id
        && stage::check(dir, &twin.compiled).is_ok()
        && crate::artifact::verify(&twin.program, &twin.sha256).is_ok()
        && orders_sound;
    Ok(sound.then_some(twin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSymbol};

    /// Where `program` placed each of the functions `f0`..: its symbol addresses.
    fn addresses(program: &Path) -> Vec<u64> {
        let data = std::fs::read(program).unwrap();
        let file = object::File::parse(&*data).unwrap();
        let mut by_name: Vec<(String, u64)> = file
            .symbols()
            .filter_map(|s| Some((s.name().ok()?.to_string(), s.address())))
            .filter(|(name, _)| name.starts_with("f") && name[1..].parse::<u32>().is_ok())
            .collect();
        by_name.sort();
        by_name.into_iter().map(|(_, a)| a).collect()
    }

    /// Needs lld (Debian's package, which `make deps` installs) as the default compiler drives it.
    #[test]
    fn the_orders_are_the_same_functions_placed_apart() {
        let tc = Toolchain::detect(crate::TARGET, None, Some("-O1")).unwrap();
        Linker::probe(&tc).expect("lld, to link the orders");
        let dir = tempfile::tempdir().unwrap();
        let functions: String =
            (0..8).map(|i| format!("int f{i}(int x) {{ return x * {i} + f{}(x); }}\n", i + 1)).collect();
        let main = "int f8(int x) { return x; }\nint main(int argc, char **argv) { return f0(argc) > 1000; }\n";
        std::fs::write(dir.path().join("w.c"), functions + main).unwrap();
        let orders = link_orders(dir.path(), &["w.c"], &tc).unwrap();
        assert_eq!(orders.iter().map(|o| o.n).collect::<Vec<_>>(), (1..=ORDERS).collect::<Vec<_>>());
        let placed: Vec<Vec<u64>> = (1..=ORDERS).map(|n| addresses(&dir.path().join(order_program(n)))).collect();
        assert!(placed.iter().all(|a| a.len() == 9), "{placed:?}");
        let distinct: std::collections::BTreeSet<&Vec<u64>> = placed.iter().collect();
        assert!(distinct.len() > ORDERS as usize / 2, "few orders place the functions apart: {placed:?}");
        for o in &orders {
            crate::artifact::verify(&dir.path().join(order_program(o.n)), &o.sha256).unwrap();
        }
        assert!(!dir.path().join("w.o").exists(), "the objects are removed once linked");
    }
}
