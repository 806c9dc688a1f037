//! `lmdb-regress explain A B`: where two builds' instructions differ, function by function.
//! Both builds are profiled under callgrind exactly as `run --metric instructions` counts
//! them (the timed function only), so each workload's total is the count `run` reports.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use super::args::BuildArgs;
use crate::files::Existing;
use crate::record::{Engine, Metric, Plan};
use crate::report::explain::{self, ProfiledBuild};
use crate::report::render_shown as render;
use crate::runner::profiling::{self, WorkloadProfile};
use crate::runner::{sanitize, RunSpec};
use crate::workload::suite::SuiteChoice;
use crate::workload::{EnvSettings, Workload, WorkloadConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct ExplainArgs {
    /// Build A: a tag (0.9.33, LMDB_0.9.33), a commit with --git, or BASE+FILE.patch.
    pub a: String,
    /// Build B, as A; leave it out to compare A built by the two toolchains of --toolchain.
    pub b: Option<String>,
    /// Workloads: all (the suite's), or a list of the suite's (`lmdb-regress workloads`).
    #[arg(long, default_value = "all")]
    pub workloads: String,
    /// lmdbjava (LmdbJava's six, the default) or lmdb (LMDB's own shapes): one suite, as
    /// one run holds.
    #[arg(long, value_enum, default_value_t = SuiteChoice::Lmdbjava)]
    pub suite: SuiteChoice,
    /// The engine both builds run on: rust (this program loading each library) or c (each
    /// build's C twin).
    #[arg(long, value_parser = super::args::engine(), default_value = "rust")]
    pub engine: Engine,
    /// text (80 columns), markdown, json, html, github (several: comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "text")]
    pub format: Vec<crate::report::Format>,
    /// Write explain.<ext> for every format here, and each workload's callgrind profiles
    /// under profiles/, instead of printing.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Replace existing files in --out-dir.
    #[arg(long)]
    pub force: bool,
    /// Functions shown per workload in text, Markdown and HTML (JSON lists every function).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Of the functions that differ most, this many are shown line by line, A's source
    /// aligned with B's.
    #[arg(long, default_value_t = 3)]
    pub listed: usize,
    /// Also simulate the caches (callgrind's --cache-sim=yes, the host's caches, as `run
    /// --with-cache`) and show per function the estimated cycles, D1 and LL misses per entry.
    #[arg(long)]
    pub cache: bool,
    #[command(flatten)]
    pub workload: WorkloadConfig,
    /// Entries (default here: the suite's counting size, LmdbJava's 100000, the lmdb
    /// suite's 10000), map size, MDB_WRITEMAP and sync.
    #[command(flatten)]
    pub env: EnvSettings,
    #[command(flatten)]
    pub build: BuildArgs,
}

/// The tag spec of the two builds, refused unless it names exactly two.
fn spec_of(args: &ExplainArgs) -> Result<String> {
    let toolchains = args.build.toolchain.as_ref().map_or(1, |t| t.0.len());
    let items = |s: &str| s.contains(',') || s.contains("..") || ["all", "default"].contains(&s.trim());
    for s in std::iter::once(&args.a).chain(&args.b) {
        if items(s) {
            bail!("explain compares two builds: {s:?} names several (give one tag, commit or BASE+FILE.patch each)");
        }
    }
    match (&args.b, toolchains) {
        (Some(b), 1) => Ok(format!("{},{b}", args.a)),
        (None, 2) => Ok(args.a.clone()),
        (Some(_), n) => bail!(
            "explain compares two builds: A and B with one toolchain, or A alone with two in --toolchain (not {n})"
        ),
        (None, n) => bail!("explain needs B, or A alone with two toolchains in --toolchain (it has {n})"),
    }
}

/// What an explanation of two builds is asked for beyond the builds themselves.
pub struct Ask<'a> {
    pub workloads: &'a [Workload],
    pub config: &'a WorkloadConfig,
    pub build: &'a BuildArgs,
    pub engine: Engine,
    pub cache: bool,
    /// Functions shown per workload, and of them listed line by line.
    pub top: usize,
    pub listed: usize,
}

/// Two builds explained, with each build's label and profiles (one per workload).
pub struct Explained {
    pub model: explain::Explanation,
    pub profiles: Vec<(String, Vec<WorkloadProfile>)>,
}

/// The two builds `spec` names (as `run --tags` takes them) profiled under callgrind as
/// the counting pass counts them, and their difference function by function: what
/// `explain` prints, and what bisect and history say of a step they name.
pub fn explain_builds(spec: &str, ask: &Ask) -> Result<Explained> {
    let counter = profiling::callgrind(ask.cache)?;
    let prepared = super::prepare::prepare_units(
        spec,
        &[],
        &[ask.engine],
        ask.build,
        crate::record::Layouts::Fixed,
        crate::record::Pairing::Process,
    )?;
    if prepared.tags.len() != 2 {
        bail!("explain compares two builds, and {spec:?} names {} (A and B must differ)", prepared.tags.len());
    }
    if prepared.units.len() != 2 {
        bail!("explain needs both builds, and {} of them did not build (see above)", 2 - prepared.units.len());
    }
    let units = prepared.units;
    let sources: Vec<Option<PathBuf>> = units
        .iter()
        .map(|u| u.library.as_ref().or(Some(&u.program)).and_then(|p| p.parent()).map(|d| d.join("src")))
        .collect();
    let rs = RunSpec {
        units: units.clone(),
        workloads: ask.workloads.to_vec(),
        engines: vec![ask.engine],
        config: ask.config.clone(),
        plan: Plan::new(1, 0, Metric::Instructions).counting(),
        counter: Some(counter),
        jobs: ask.build.jobs(),
        judge: crate::stats::stop::progress,
    };
    eprintln!(
        "explain: profiling {} workload(s) of {} and {} under callgrind, {} entries",
        ask.workloads.len(),
        units[0].label,
        units[1].label,
        ask.config.entries
    );
    let mut profiles: Vec<Vec<WorkloadProfile>> = Vec::new();
    for (u, result) in units.iter().zip(rs.profile_units()?) {
        match result {
            Ok(p) => profiles.push(p),
            Err(e) => bail!("{} could not be profiled: {e}", u.label),
        }
    }
    let side = |i: usize| ProfiledBuild {
        label: units[i].label.to_string(),
        profiles: &profiles[i],
        sources: sources[i].clone(),
    };
    let mut model = explain::build(&side(0), &side(1), ask.config.entries, ask.top, ask.listed);
    if let Some(crate::runner::counter::Counter::Callgrind { caches: Some(c), .. }) = &rs.counter {
        model.caches = Some(c.describe());
    }
    let profiles = units.iter().map(|u| u.label.to_string()).zip(profiles).collect();
    Ok(Explained { model, profiles })
}

pub fn run(args: &ExplainArgs) -> Result<()> {
    let spec = spec_of(args)?;
    let Some(preset) = args.suite.single() else {
        bail!("--suite all: explain profiles one suite, as one run holds (give lmdbjava or lmdb)");
    };
    let (workloads, _) = crate::workload::suite::workloads_of(preset, &args.workloads)?;
    if let Some(w) = workloads.iter().find(|w| w.is_crew()) {
        bail!("{w}: explain counts instructions, and what reader threads do in an interval is set by the clock");
    }
    let config = super::prepare::config_of(&args.env, &args.workload, &workloads)?;
    let formats = crate::report::distinct(&args.format);
    for f in &formats {
        crate::report::document::refuse_unshown(*f)?;
    }
    let outputs: Vec<PathBuf> = match &args.out_dir {
        Some(dir) => formats.iter().map(|f| dir.join(format!("explain.{}", f.extension()))).collect(),
        None => Vec::new(),
    };
    for out in &outputs {
        crate::files::refuse_existing(out, Existing::forced(args.force))?;
    }
    let ask = Ask {
        workloads: &workloads,
        config: &config,
        build: &args.build,
        engine: args.engine,
        cache: args.cache,
        top: args.top,
        listed: args.listed,
    };
    let Explained { model, profiles } = explain_builds(&spec, &ask)?;
    let Some(dir) = &args.out_dir else {
        let [format] = formats[..] else {
            bail!("--format names {} formats, and stdout holds one document: add --out-dir DIR", formats.len());
        };
        return super::print_shown(&model, format);
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (path, f) in outputs.iter().zip(&formats) {
        files.push((path.clone(), render(&model, *f, &Default::default())?.into_bytes()));
    }
    for (label, ps) in &profiles {
        for p in ps {
            let name = format!("{}.{}.callgrind.out", sanitize(label), p.workload.name());
            files.push((dir.join("profiles").join(name), p.part.clone()));
        }
    }
    std::fs::create_dir_all(dir.join("profiles")).with_context(|| format!("cannot create {}", dir.display()))?;
    super::write_set(&files, Existing::forced(args.force))?;
    for p in &outputs {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
