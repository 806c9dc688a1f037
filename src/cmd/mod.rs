//! One module per command: each wires the pipeline stages together for one job.

pub mod args;
pub mod bisect;
pub mod build;
pub mod cache;
pub mod coverage;
pub mod explain;
pub mod history;
pub mod its10406;
pub mod layouts;
pub mod merge;
pub mod prepare;
pub mod program;
pub mod report;
pub mod request;
pub mod resume;
pub mod room;
pub mod run;
pub mod site;
pub mod suite_budget;
pub mod suites;
pub mod tags;
pub mod workloads;

use std::path::PathBuf;

use anyhow::Result;

use crate::compile::{BuildKind, Toolchain};
use crate::manifest::Manifest;
use crate::matrix::{self, MatrixOptions, MatrixToolchain, Status, TagBuild};
use crate::record::label::Label;
use crate::source::{Resolver, Want};
use args::BuildArgs;

/// The C twin's source, found beside the binary's crate or via LMDB_REGRESS_HARNESS_C.
pub fn harness_c_path() -> Result<PathBuf> {
    Ok(crate::envvars::file("LMDB_REGRESS_HARNESS_C")?
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/harness/workloads.c"))))
}

/// How the builds are made; the cache must be writable (said before any build).
pub fn matrix_options(args: &BuildArgs, kinds: Vec<BuildKind>) -> Result<MatrixOptions> {
    let resolver = Resolver::from_env(args.git.clone())?;
    resolver.cache.check_writable()?;
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
pub fn build_with_progress(wants: &[Want], opts: &MatrixOptions) -> Result<Vec<TagBuild>> {
    let bar = crate::progress::bar(wants.len() as u64, "building");
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let out = matrix::build_all(wants, opts, &|ev| match ev {
        matrix::BuildEvent::Started(label) => bar.set_message(label.to_string()),
        matrix::BuildEvent::Finished(st) => {
            if st.status == Status::Failed {
                bar.suspend(|| eprintln!("{} failed: {}", st.tag, st.reason.as_deref().unwrap_or("")));
            }
            // A patch whose hunks moved says where they went (it never takes fuzz).
            if let Some(moved) = st.builds.first().and_then(|b| b.patch.as_ref()).and_then(|p| p.offsets()) {
                bar.suspend(|| eprintln!("{}: applied with no fuzz, at offsets: {moved}", st.tag));
            }
            bar.inc(1)
        }
    });
    bar.finish_and_clear();
    // After Ctrl-C the builds not started are no tags unavailable here: nothing is summed up.
    if opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst)) {
        let built = out.iter().filter(|r| r.status == Status::Built).count();
        let then = format!(
            "{built} of {} built; the builds that finished are in the cache, and nothing half-built is left",
            out.len()
        );
        return Err(crate::runner::Interrupted { stage: crate::runner::Stage::Building, then }.into());
    }
    let width = crate::terminal::width(crate::terminal::Stream::Stderr);
    for (i, line) in matrix::unavailable_summary(&out).iter().enumerate() {
        let line = if i == 0 { line.clone() } else { format!("  {line}") };
        eprintln!("{}", crate::terminal::wrap(&line, width, "    "));
    }
    Ok(out)
}

/// Writes `files` as one set ([`crate::files::stage`]), with Ctrl-C caught from here on: a
/// Ctrl-C before the set is staged whole places none of it and leaves no temporary file,
/// and the command ends as interrupted.
pub fn write_set(files: &[(PathBuf, Vec<u8>)], existing: crate::files::Existing) -> Result<()> {
    let stop = crate::runner::interrupt_flag();
    let staged = crate::files::stage(files, existing)?;
    if stop.load(std::sync::atomic::Ordering::SeqCst) {
        drop(staged);
        let then = format!("none of the {} files was written", files.len());
        return Err(crate::runner::Interrupted { stage: crate::runner::Stage::Writing, then }.into());
    }
    staged.commit()
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

/// The units `spec` and `sources` name ([`crate::tags::parse_units`]), each name checked to
/// read back as the label it renders.
pub fn units<'a>(
    m: &'a Manifest,
    spec: &str,
    sources: &[PathBuf],
    git: Option<&std::path::Path>,
) -> Result<Vec<Want<'a>>> {
    let wants = crate::tags::parse_units(m, spec, sources, git)?;
    if let Some(w) = wants.iter().find(|w| !Label::reads_back(&w.label())) {
        anyhow::bail!(
            "{:?} cannot name a unit: a label is BASE[ (TOOLCHAIN)][@LAYOUT][~control], so a patch's or \
             directory's name may hold no \" (\", no trailing \"~control\" or \"@NUMBER\" and no control \
             character; rename it",
            w.label()
        );
    }
    Ok(wants)
}

pub fn manifest() -> Result<Manifest> {
    Manifest::from_env_or_builtin()
}

/// Appends `document` to the job's summary in GitHub Actions ($GITHUB_STEP_SUMMARY), when
/// there is one.
pub fn job_summary(document: &str) -> Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let Some(path) = crate::envvars::github_step_summary() else { return Ok(()) };
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .with_context(|| format!("cannot open {} ($GITHUB_STEP_SUMMARY)", path.display()))?;
    f.write_all(document.as_bytes()).with_context(|| format!("cannot append to {}", path.display()))
}

/// A command's result printed in `format` (github's also written to the job's summary).
pub fn print_shown<S: crate::report::document::Shown>(s: &S, format: crate::report::Format) -> Result<()> {
    print_shown_with(s, format, &Default::default())
}

/// [`print_shown`], `--format github` given its gate and links.
pub fn print_shown_with<S: crate::report::document::Shown>(
    s: &S,
    format: crate::report::Format,
    github: &crate::report::github::Github,
) -> Result<()> {
    print_rendered(&crate::report::render_shown(s, format, github)?, format)
}

/// `d` on stdout in `format`; the github format's also appended to the job's summary.
pub fn print_document(
    d: &crate::report::outline::Document,
    format: crate::report::Format,
    github: &crate::report::github::Github,
    m: Option<&crate::report::model::ReportModel>,
) -> Result<()> {
    print_rendered(&crate::report::render_document(d, format, github, m)?, format)
}

/// A rendered document on stdout; github's also appended to the job's summary.
fn print_rendered(text: &str, format: crate::report::Format) -> Result<()> {
    use std::io::Write;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if format == crate::report::Format::Github {
        job_summary(text)?;
    }
    Ok(())
}
