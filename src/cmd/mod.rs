//! One module per command: each wires the pipeline stages together for one job.

pub mod args;
pub mod bisect;
pub mod build;
pub mod history;
pub mod its10406;
pub mod layouts;
pub mod merge;
pub mod report;
pub mod request;
pub mod resume;
pub mod run;
pub mod site;
pub mod tags;

use std::path::PathBuf;

use anyhow::Result;

use crate::compile::{BuildKind, Toolchain};
use crate::manifest::Manifest;
use crate::matrix::{self, MatrixOptions, MatrixToolchain, Status, TagStatus};
use crate::source::{Resolver, Want};
use args::BuildArgs;

/// The C twin's source, found beside the binary's crate or via LMDB_REGRESS_HARNESS_C.
pub fn harness_c_path() -> Result<PathBuf> {
    Ok(crate::envvars::file("LMDB_REGRESS_HARNESS_C")?
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/harness/workloads.c"))))
}

pub fn matrix_options(args: &BuildArgs, kinds: Vec<BuildKind>) -> Result<MatrixOptions> {
    let resolver = Resolver::from_env(args.git.clone())?;
    let toolchains = match &args.toolchain {
        Some(list) => MatrixToolchain::named(list.0.iter().map(Toolchain::of).collect::<Result<_>>()?)?,
        None => {
            vec![MatrixToolchain::only(Toolchain::detect(crate::TARGET, args.cc.as_deref(), args.cflags.as_deref())?)]
        }
    };
    Ok(MatrixOptions {
        resolver,
        toolchains,
        harness_c: kinds.contains(&BuildKind::CHarness).then(harness_c_path).transpose()?,
        kinds,
        jobs: args.jobs(),
        stop: Some(crate::runner::interrupt_flag()),
    })
}

/// Builds `wants` with a progress bar on stderr; then says once which were unavailable.
/// After Ctrl-C the builds under way end (a staging folder is removed, a finished build
/// installed whole) and no other starts.
pub fn build_with_progress(wants: &[Want], opts: &MatrixOptions) -> Result<Vec<TagStatus>> {
    let bar = crate::progress::bar(wants.len() as u64, "building");
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let out = matrix::build_all(wants, opts, &|ev| match ev {
        matrix::Event::Started(label) => bar.set_message(label.to_string()),
        matrix::Event::Finished(st) => {
            if st.status == Status::Failed {
                bar.suspend(|| eprintln!("{} failed: {}", st.tag, st.reason.as_deref().unwrap_or("")));
            }
            bar.inc(1)
        }
    });
    bar.finish_and_clear();
    let width = crate::terminal::width(crate::terminal::Stream::Stderr);
    for (i, line) in matrix::unavailable_summary(&out).iter().enumerate() {
        let line = if i == 0 { line.clone() } else { format!("  {line}") };
        eprintln!("{}", crate::terminal::wrap(&line, width, "    "));
    }
    if opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst)) {
        anyhow::bail!(
            "interrupted while building: the builds that finished are in the cache, and nothing half-built is left"
        );
    }
    Ok(out)
}

/// The target and toolchain of the build matrix's row `i`: rows come target by target,
/// each built by every toolchain in turn.
pub fn row_origin<'a, 'w>(
    i: usize,
    wants: &'a [Want<'w>],
    opts: &'a MatrixOptions,
) -> (&'a Want<'w>, &'a MatrixToolchain) {
    let nt = opts.toolchains.len().max(1);
    (&wants[i / nt], &opts.toolchains[i % nt])
}

/// The date and time in the names of the files a command writes (UTC, `20250131-235959`).
pub fn stamp() -> String {
    chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string()
}

pub fn manifest() -> Result<Manifest> {
    Manifest::from_env_or_builtin()
}
