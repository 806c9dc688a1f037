//! Builds the default tag range at `cargo build`, with the very modules the binary uses.
//! A tag that cannot be had never fails the build: it becomes one warning naming what
//! was tried. Set LMDB_REGRESS_SKIP_MATRIX=1 to skip.
#![allow(dead_code, unused_imports)]

#[path = "src/abi.rs"]
mod abi;
#[path = "src/artifact.rs"]
mod artifact;
#[path = "src/children.rs"]
mod children;
#[path = "src/compile.rs"]
mod compile;
#[path = "src/envvars.rs"]
mod envvars;
#[path = "src/files.rs"]
mod files;
#[path = "src/harness.rs"]
mod harness;
#[path = "src/manifest.rs"]
mod manifest;
#[path = "src/matrix.rs"]
mod matrix;
#[path = "src/mtest.rs"]
mod mtest;
#[path = "src/source/mod.rs"]
mod source;
#[path = "src/stage.rs"]
mod stage;
#[path = "src/tags.rs"]
mod tags;

fn main() {
    for p in [
        "lmdb-tags",
        "src/artifact.rs",
        "src/children.rs",
        "src/compile.rs",
        "src/envvars.rs",
        "src/files.rs",
        "src/harness.rs",
        "src/manifest.rs",
        "src/matrix.rs",
        "src/mtest.rs",
        "src/source",
        "src/stage.rs",
        "src/tags.rs",
    ] {
        println!("cargo:rerun-if-changed={p}");
    }
    let checked = [
        "LMDB_REGRESS_COUNTER",
        "LMDB_REGRESS_SCRATCH",
        "LMDB_REGRESS_TAGS",
        "LMDB_REGRESS_HARNESS_C",
        envvars::PROGRESS_INTERVAL,
    ];
    let read = ["LMDB_REGRESS_CACHE", "LMDB_GIT", "LMDB_REGRESS_OFFLINE", "LMDB_REGRESS_ARCHIVE_URLS"];
    for v in read.into_iter().chain(checked).chain(["LMDB_REGRESS_SKIP_MATRIX", "CC"]) {
        println!("cargo:rerun-if-env-changed={v}");
    }
    // The liblmdb a worker loads calls the binary's counting I/O functions
    // (src/workload/iocount.rs): they must be in its dynamic symbol table.
    for f in ["fdatasync", "fsync", "msync", "write", "pwrite", "pwrite64", "writev"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={f}");
    }
    harness_orders();
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=LMDB_REGRESS_TARGET={target}");
    // A bad LMDB_REGRESS_* value fails the build with its error, as it fails every command.
    match envvars::check_all().and_then(|()| envvars::flag("LMDB_REGRESS_SKIP_MATRIX")) {
        Ok(true) => return,
        Ok(false) => {}
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
    if let Err(e) = build_matrix(&target) {
        println!("cargo:warning=lmdb-regress: the LMDB build matrix was not built: {e:#}");
    }
}

/// Links each of the binary's function orders (src/harness.rs) by lld, shuffled by its own
/// seed. Without lld they are linked as the main binary is, and the crate is told that no
/// order may be drawn.
fn harness_orders() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let lld = std::process::Command::new(&cc)
        .args(["-fuse-ld=lld", "-Wl,--version"])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("LLD"));
    if !lld {
        println!("cargo:rustc-env={}=1", harness::UNSHUFFLED_ENV);
        println!(
            "cargo:warning=lmdb-regress: {cc} cannot link with lld: the tool's own code stays in one placement \
             (install Debian's package lld; `make deps` does)"
        );
        return;
    }
    for n in 1..=harness::ORDERS {
        let bin = harness::binary_name(n);
        println!("cargo:rustc-link-arg-bin={bin}=-fuse-ld=lld");
        println!("cargo:rustc-link-arg-bin={bin}=-Wl,--shuffle-sections=.text*={}", harness::seed(n));
    }
}

/// The tags whose coverage builds the fixture holds.
const COVERED_IN_TESTS: [&str; 2] = ["LMDB_0.9.18", "LMDB_0.9.33"];

fn build_matrix(target: &str) -> anyhow::Result<()> {
    let m = manifest::Manifest::builtin();
    let resolver = source::Resolver::from_env(None)?;
    let wants = tags::parse_spec(&m, &m.default, resolver.git.as_deref())?;
    let opts = matrix::MatrixOptions {
        resolver,
        toolchains: vec![matrix::MatrixToolchain::only(compile::Toolchain::detect(target, None, None)?)],
        kinds: vec![compile::BuildKind::SharedLibrary],
        harness_c: None,
        stop: None,
        jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
    };
    let results = matrix::build_all(&wants, &opts, &|_| {});
    // The coverage builds every `run` of the tests makes for its method's figure, of the
    // two tags most tests run: built once here, not once per test.
    let covered: Vec<_> = wants.iter().filter(|w| COVERED_IN_TESTS.contains(&w.label().as_str())).cloned().collect();
    let coverage = compile::Toolchain::of(&compile::ToolchainSpec::coverage("gcc"))?;
    let opts = matrix::MatrixOptions { toolchains: matrix::MatrixToolchain::named(vec![coverage])?, ..opts };
    matrix::build_all(&covered, &opts, &|_| {});
    // Unavailable tags: one short block, as every command gives it.
    for line in matrix::unavailable_summary(&results) {
        println!("cargo:warning=lmdb-regress: {line}");
    }
    for r in results.iter().filter(|r| r.status == matrix::Status::Failed) {
        for line in r.reason.as_deref().unwrap_or("").lines() {
            println!("cargo:warning={} failed: {line}", r.tag);
        }
    }
    Ok(())
}
