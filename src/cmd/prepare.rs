//! What a measuring command builds before it measures: the units of a run with their
//! builds and layouts, the configuration a single-sitting count runs, and a new run file.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::args::BuildArgs;
use crate::compile::BuildKind;
use crate::files::Existing;
use crate::layout::{self, Linker};
use crate::matrix::{MatrixOptions, Status, TagBuild};
use crate::record::{self, Engine, Failure, FailureStage, Header, Layouts, Pairing, Record, RunWriter};
use crate::runner::{Label, Unit};
use crate::source::Want;
use crate::workload::presets::PresetConfig;
use crate::workload::{EnvSettings, Workload, WorkloadConfig};

/// The default folder and name stem of a new run file: `reports/runs/PREFIX-<date>`.
pub fn default_out(prefix: &str) -> (PathBuf, String) {
    (PathBuf::from("reports/runs"), format!("{prefix}-{}", super::stamp()))
}

/// A new run file holding its header and the failures of the builds: at `out` (an existing
/// file only replaced when `existing` allows), else a fresh numbered name from `default`.
pub fn create_run_file(
    out: Option<&std::path::Path>,
    existing: Existing,
    (dir, stem): (PathBuf, String),
    header: &Header,
    failures: Vec<Failure>,
) -> Result<RunWriter> {
    let mut writer = match out {
        Some(out) => RunWriter::create(out, header, existing)?,
        None => RunWriter::create_numbered(&dir, &stem, header)?,
    };
    eprintln!("run file: {}", writer.path.display());
    for f in failures {
        writer.append(&Record::Failure(f))?;
    }
    Ok(writer)
}

/// What the builds gave a run: every requested tag as the run file records it (its label's
/// value with it), the units to measure, and the builds that failed for one engine only
/// (recorded as failures).
pub struct Prepared {
    pub tags: Vec<record::TagStatus>,
    pub units: Vec<Unit>,
    pub failures: Vec<Failure>,
    /// The C paired worker the C units run in, when paired rounds have C units.
    pub c_paired_worker: Option<record::WorkerBuild>,
}

/// Builds what the run needs. A tag whose C twin does not build keeps its Rust unit. With
/// random layouts, each unit also gets the objects its layouts are linked from. Paired
/// rounds (`pairing` chunks) run every C unit in the C paired worker, built once, on the
/// tag's shared library; a process per unit runs each tag's own C twin.
pub fn prepare_units(
    spec: &str,
    sources: &[PathBuf],
    engines: &[Engine],
    build: &BuildArgs,
    layouts: Layouts,
    pairing: Pairing,
) -> Result<Prepared> {
    let m = super::manifest()?;
    let twins = engines.contains(&Engine::C) && pairing == Pairing::Process;
    let kinds =
        if twins { vec![BuildKind::SharedLibrary, BuildKind::CHarness] } else { vec![BuildKind::SharedLibrary] };
    let opts = super::matrix_options(build, kinds)?;
    let wants = super::units(&m, spec, sources, opts.resolver.git.as_deref())?;
    prepare_wants(&wants, &opts, engines, layouts)
}

/// [`prepare_units`] of the units `wants` names, built with `opts`: each tag's C twin when
/// `opts` builds them (a process per unit), else the C paired worker.
pub fn prepare_wants(wants: &[Want], opts: &MatrixOptions, engines: &[Engine], layouts: Layouts) -> Result<Prepared> {
    let twins = opts.kinds.contains(&BuildKind::CHarness);
    // Before any build: random layouts need lld.
    let linkers: Option<Vec<Linker>> = match layouts {
        Layouts::Random => Some(opts.toolchains.iter().map(|t| Linker::probe(&t.toolchain)).collect::<Result<_>>()?),
        Layouts::Fixed => None,
    };
    let rows = super::build_with_progress(wants, opts)?;
    let mut units = Vec::new();
    let mut failures = Vec::new();
    let labels: Vec<Label> = (0..rows.len())
        .map(|i| super::row_origin(i, wants, opts))
        .map(|(want, toolchain)| Label::build(&want.label(), toolchain.name.as_deref()))
        .collect();
    // Paired rounds run every C unit in the C paired worker: Some when asked for, Err
    // when it did not build.
    let twin = (engines.contains(&Engine::C) && !twins).then(|| paired_twin(&rows, opts));
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.status == Status::Built) {
        let label = labels[i].clone();
        debug_assert_eq!(label.to_string(), r.tag, "the matrix labels its rows so");
        for &e in engines {
            match unit_of(e, label.clone(), r, twin.as_ref())? {
                Ok(u) => units.extend(u),
                Err(error) => failures.push(Failure {
                    round: None,
                    engine: e,
                    unit: label.clone(),
                    workload: None,
                    stage: FailureStage::Build,
                    error,
                    died: false,
                    cause: None,
                }),
            }
        }
        for f in r.failed_builds.iter().filter(|f| f.kind == BuildKind::CHarness) {
            eprintln!("not measured: {} on the c engine (its C twin did not build): {}", r.tag, f.reason);
            failures.push(Failure {
                round: None,
                engine: Engine::C,
                unit: labels[i].clone(),
                workload: None,
                stage: FailureStage::Build,
                error: f.reason.clone(),
                died: false,
                cause: None,
            });
        }
    }
    // Unavailable tags were summed up by the build; a failed build printed its compiler's words.
    for r in rows.iter().filter(|r| r.status == Status::Failed) {
        eprintln!("not measured: {} (its build failed, above)", r.tag);
    }
    if let Some(linkers) = linkers {
        units = layout_sources(units, &labels, wants, opts, &linkers, &mut failures)?;
    }
    let c_paired_worker = twin.as_ref().and_then(|t| t.as_ref().ok()).map(worker_build);
    let tags = rows.iter().zip(labels).map(|(r, label)| run_file_tag(r, label)).collect();
    Ok(Prepared { tags, units, failures, c_paired_worker })
}

/// Each unit with the source of its random layouts: its objects compiled once (on every
/// core), the fixed build read for the symbols each layout must export. A unit whose objects
/// cannot be had is not measured and is recorded as a failure, as a C twin that does not build.
fn layout_sources(
    units: Vec<Unit>,
    labels: &[Label],
    wants: &[Want],
    opts: &MatrixOptions,
    linkers: &[Linker],
    failures: &mut Vec<Failure>,
) -> Result<Vec<Unit>> {
    let work = |u: &Unit| -> Result<layout::Source> {
        let i = labels.iter().position(|l| *l == u.label).context("a unit without its build")?;
        let kind = u.kind();
        let fixed = u.library.as_deref().unwrap_or(u.program.as_path());
        let (want, toolchain) = super::row_origin(i, wants, opts);
        layout::prepare(want, &toolchain.toolchain, &linkers[i % linkers.len()], kind, opts, fixed)
    };
    let bar = crate::progress::bar(units.len() as u64, "compiling objects for random layouts");
    let mut out = Vec::new();
    crate::runner::pool::for_each(&units, opts.jobs, work, |u, source| {
        bar.inc(1);
        match source {
            Ok(source) => out.push(Unit { relink: Some(std::sync::Arc::new(source)), ..u.clone() }),
            Err(e) => {
                bar.suspend(|| eprintln!("not measured: {} on the {} engine (no layouts): {e:#}", u.label, u.engine));
                failures.push(Failure {
                    round: None,
                    engine: u.engine,
                    unit: u.label.clone(),
                    workload: None,
                    stage: FailureStage::Layout,
                    error: format!("{e:#}"),
                    died: false,
                    cause: None,
                });
            }
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    // The order the matrix gave, whatever order the objects finished in.
    out.sort_by_key(|u| units.iter().position(|v| v.engine == u.engine && v.label == u.label));
    Ok(out)
}

/// `engine`'s unit of the built row `r`, if its build is there: the Rust worker on the tag's
/// library; in paired runs (`twin`) the C paired worker on it, or why there is none; else the
/// tag's C twin.
fn unit_of(
    engine: Engine,
    label: Label,
    r: &TagBuild,
    twin: Option<&Result<crate::paired_twin::PairedTwin>>,
) -> Result<Result<Option<Unit>, String>> {
    let library = r.build(BuildKind::SharedLibrary);
    Ok(Ok(match (engine, twin) {
        (Engine::Rust, _) => library.map(|b| Unit::of_build(engine, label, b)).transpose()?,
        (Engine::C, Some(Ok(twin))) => library.map(|b| Unit::paired_twin(label, b, twin)),
        (Engine::C, Some(Err(e))) => return Ok(Err(format!("{e:#}"))),
        (Engine::C, None) => r.build(BuildKind::CHarness).map(|b| Unit::of_build(engine, label, b)).transpose()?,
    }))
}

/// The C paired worker, built by the first toolchain against the first shared library's
/// lmdb.h (every build's ABI is the bindings'), when a library was built; Err says why the
/// C units cannot be measured. One worker for every toolchain's C units, so that they share
/// one process and are paired: each unit's library is still its own toolchain's build.
fn paired_twin(rows: &[TagBuild], opts: &MatrixOptions) -> Result<crate::paired_twin::PairedTwin> {
    let library = rows.iter().find_map(|r| r.build(BuildKind::SharedLibrary)).context("no library was built")?;
    let main = super::harness_c_path()?.with_file_name(crate::paired_twin::MAIN);
    let tc = &opts.toolchains.first().context("no toolchain")?.toolchain;
    let twin = crate::paired_twin::build(&main, library, tc, &opts.resolver.cache.builds_dir())
        .context("the C paired worker did not build, so no C unit is measured");
    if let Err(e) = &twin {
        eprintln!("not measured: every tag on the c engine: {e:#}");
    }
    twin
}

/// The C paired worker as the run file's header records it.
fn worker_build(twin: &crate::paired_twin::PairedTwin) -> record::WorkerBuild {
    let tc = &twin.toolchain;
    let toolchain = format!("{} {}", tc.version, tc.cflags.join(" "));
    record::WorkerBuild { sha256: twin.sha256.clone(), build_id: twin.build_id.clone(), toolchain }
}

/// The build matrix's row, labelled `label`, as the run file records it.
fn run_file_tag(r: &TagBuild, label: Label) -> record::TagStatus {
    record::TagStatus {
        label,
        commit: r.commit.clone(),
        status: match r.status {
            Status::Built => record::BuildStatus::Built,
            Status::Unavailable => record::BuildStatus::Unavailable,
            Status::Failed => record::BuildStatus::Failed,
        },
        library: r.library.clone(),
        provenance: r.provenance.clone(),
        matches: r.matches,
        files: r.files.clone(),
        reason: r.reason.clone(),
        builds: r.builds.clone(),
    }
}

/// The configuration an explanation (or a coverage pass) runs: `env`'s, at the entries its
/// suite is counted at unless it says, so that it profiles what `run` and bisect counted.
pub fn config_of(env: &EnvSettings, workload: &WorkloadConfig, workloads: &[Workload]) -> Result<WorkloadConfig> {
    let suite = crate::workload::suite::Suite::of(workloads)?;
    let counted = suite.count_entries().unwrap_or(super::args::COUNT_ENTRIES);
    let env = EnvSettings { entries: Some(env.entries.unwrap_or(counted)), ..env.clone() };
    let preset = suite.preset();
    let config = env.resolve(workload, &PresetConfig::default(), preset);
    config.validate(preset)?;
    super::room::check(&config, workloads)?;
    Ok(config)
}
