//! `lmdb-regress coverage A B`: how much of what changed from A to B the workloads execute.
//! Both builds are made for it (gcc -O0 --coverage, a toolchain of their own, so cached
//! apart and never timed), each unit's workloads run once by its worker, and gcov's
//! account of B is laid on the lines that differ from A.

use anyhow::{bail, Context, Result};

use super::args::{BuildArgs, ToolchainList};
use crate::compile::{BuildKind, ToolchainSpec, COVERAGE_FLAGS};
use crate::hunt::coverage::{self, CoveredBuild, FILES};
use crate::matrix::MatrixOptions;
use crate::record::{CoverageOutcome, Engine, Layouts, Metric, Plan, RunCoverage};
use crate::runner::{Label, RunSpec};
use crate::source::Want;
use crate::workload::suite::{Suite, SuiteChoice};
use crate::workload::{EnvSettings, Workload, WorkloadConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct CoverageArgs {
    /// Build A: a tag (0.9.17, LMDB_0.9.17), a commit with --git, or BASE+FILE.patch.
    pub a: String,
    /// Build B, as A: its changed lines are those that differ from A's.
    pub b: String,
    /// Workloads: all (the suite's), or a list of names (`lmdb-regress workloads`).
    #[arg(long, default_value = "all")]
    pub workloads: String,
    /// lmdbjava (LmdbJava's six), lmdb (LMDB's own shapes) or all (both).
    #[arg(long, value_enum, default_value_t = SuiteChoice::Lmdbjava)]
    pub suite: SuiteChoice,
    /// text (80 columns), markdown, html, json or github.
    #[arg(long, value_enum, default_value = "text")]
    pub format: crate::report::Format,
    #[command(flatten)]
    pub workload: WorkloadConfig,
    /// Entries (default here: the suite's counting size, LmdbJava's 100000, the lmdb
    /// suite's 10000), map size, MDB_WRITEMAP and sync.
    #[command(flatten)]
    pub env: EnvSettings,
    /// --git, --cc (a gcc: its gcov reads the counts) and --jobs; coverage builds have
    /// their own flags.
    #[command(flatten)]
    pub build: BuildArgs,
}

/// The build options of coverage builds: the user's sources and jobs, gcc (or `--cc`) with
/// [`COVERAGE_FLAGS`]; and the gcov of that gcc.
fn coverage_build(build: &BuildArgs) -> Result<(BuildArgs, String)> {
    if build.toolchain.is_some() || build.cflags.is_some() {
        bail!("coverage builds with gcc {}: it takes no --toolchain or --cflags", COVERAGE_FLAGS.join(" "));
    }
    let compiler = build.cc.clone().unwrap_or_else(|| "gcc".into());
    let gcov = crate::runner::gcov::gcov_of(std::path::Path::new(&compiler))?;
    let spec = ToolchainSpec::coverage(&compiler);
    Ok((BuildArgs { toolchain: Some(ToolchainList(vec![spec])), cc: None, ..build.clone() }, gcov))
}

pub fn run(args: &CoverageArgs) -> Result<()> {
    crate::report::document::refuse_unshown(args.format)?;
    let groups = selection(args)?;
    let (build, gcov) = coverage_build(&args.build)?;
    let opts = super::matrix_options(&build, vec![BuildKind::SharedLibrary])?;
    let m = super::manifest()?;
    let spec = format!("{},{}", args.a, args.b);
    let wants = super::units(&m, &spec, &[], opts.resolver.git.as_deref())?;
    if wants.len() != 2 {
        bail!("coverage compares two builds, and {spec:?} names {} (A and B must differ)", wants.len());
    }
    let model = cover(&wants, &opts, &gcov, args.suite.name(), &groups)?;
    super::print_shown(&model, args.format)
}

/// The workloads coverage runs, a group per suite with that suite's configuration.
fn selection(args: &CoverageArgs) -> Result<Vec<(Vec<Workload>, WorkloadConfig)>> {
    let mut groups = Vec::new();
    for (_, of) in args.suite.split(&args.workloads)? {
        let config = super::prepare::config_of(&args.env, &args.workload, &of)?;
        groups.push((of, config));
    }
    Ok(groups)
}

/// The coverage of the second of `wants` over what changed from the first: both built for
/// coverage by `opts`, each group's workloads run once on each (with its configuration),
/// their counts summed, read by `gcov`.
fn cover(
    wants: &[Want],
    opts: &MatrixOptions,
    gcov: &str,
    suite: &'static str,
    groups: &[(Vec<Workload>, WorkloadConfig)],
) -> Result<coverage::ChangeCoverage> {
    let prepared = super::prepare::prepare_wants(wants, opts, &[Engine::Rust], Layouts::Fixed)?;
    if prepared.units.len() != 2 {
        bail!("coverage needs both builds, and {} of them did not build (see above)", 2 - prepared.units.len());
    }
    let spec = |(workloads, config): &(Vec<Workload>, WorkloadConfig)| RunSpec {
        units: prepared.units.clone(),
        workloads: workloads.clone(),
        engines: vec![Engine::Rust],
        config: config.clone(),
        plan: Plan::new(1, 0, Metric::Instructions).counting(),
        counter: None,
        jobs: 1,
        judge: crate::stats::stop::progress,
    };
    let specs: Vec<RunSpec> = groups.iter().map(spec).collect();
    let counts = tempfile::tempdir().context("cannot create a temporary folder for the counts")?;
    let mut not_run = Vec::new();
    for (rs, (workloads, config)) in specs.iter().zip(groups) {
        eprintln!(
            "coverage: running {} {} workload(s) of {} and {} once, {} entries",
            workloads.len(),
            workloads[0].suite(),
            prepared.tags[0].label.base,
            prepared.tags[1].label.base,
            config.entries
        );
        not_run.extend(rs.run_covered(counts.path())?);
    }
    for n in &not_run {
        eprintln!("coverage: {} on {} failed, its lines not counted: {}", n.workload, n.unit, n.error);
    }
    let rs = specs.first().context("no workloads to run")?;
    let files = rs.read_covered(counts.path(), gcov, &FILES)?;
    let side = |i: usize| -> Result<CoveredBuild> {
        let library = rs.units[i].library.as_ref().context("a coverage unit loads its library")?;
        let sources = library.parent().context("a library has a folder")?.join(crate::stage::SRC);
        Ok(CoveredBuild { label: prepared.tags[i].label.base.clone(), files: &files[i], sources })
    };
    let workloads: Vec<Workload> = groups.iter().flat_map(|(w, _)| w.clone()).collect();
    coverage::build(&side(0)?, &side(1)?, suite, &workloads, not_run)
}

/// The entries a run's coverage pass runs at most: enough for every page split and tree
/// level the workloads reach at the run's size, in seconds on coverage builds.
pub const RUN_ENTRIES: u32 = 10_000;

/// A run's own figure, after its measured phases: what its LmdbJava workloads execute, at
/// [`RUN_ENTRIES`] entries at most, of the lines that changed from its `baseline` to its
/// newest unit (in release order) among `wants` (the run's units as given). Why there is
/// none, when there is none.
pub fn of_run(wants: &[Want], baseline: &str, build: &BuildArgs, spec: &RunSpec) -> RunCoverage {
    let outcome = run_outcome(wants, baseline, build, spec).unwrap_or_else(|e| {
        eprintln!("coverage: not measured: {e:#}");
        CoverageOutcome::Failed { error: format!("{e:#}") }
    });
    RunCoverage { outcome }
}

fn run_outcome(wants: &[Want], baseline: &str, build: &BuildArgs, spec: &RunSpec) -> Result<CoverageOutcome> {
    let workloads: Vec<Workload> =
        spec.workloads.iter().copied().filter(|w| matches!(w.suite(), Suite::LmdbJava | Suite::Lmdb)).collect();
    if workloads.is_empty() {
        return Ok(CoverageOutcome::NoWorkloads);
    }
    let Some(at) = wants.iter().position(|w| w.label() == baseline) else {
        bail!("the baseline {baseline} is none of the run's units as given")
    };
    let newest = wants
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .max_by_key(|(i, w)| (Label::parse(&w.label()).release_key(), *i));
    let Some((_, newest)) = newest else { return Ok(CoverageOutcome::OneUnit) };
    let own = BuildArgs { git: build.git.clone(), jobs: build.jobs, ..BuildArgs::default() };
    let (own, gcov) = coverage_build(&own)?;
    let opts = super::matrix_options(&own, vec![BuildKind::SharedLibrary])?;
    let config = WorkloadConfig { entries: spec.config.entries.min(RUN_ENTRIES), ..spec.config.clone() };
    let suite = if workloads[0].suite() == Suite::Lmdb { "lmdb" } else { "lmdbjava" };
    let groups = [(workloads.clone(), config.clone())];
    let c = cover(&[wants[at].clone(), newest.clone()], &opts, &gcov, suite, &groups)?;
    Ok(CoverageOutcome::Measured {
        baseline: c.a,
        newest: c.b,
        workloads,
        entries: config.entries,
        changed: c.changed,
        mdb: c.files["mdb.c"],
    })
}
