//! `lmdb-regress its-10406`: the ITS#10406 write benchmark, natively, on every tag.

use std::path::PathBuf;

use anyhow::Result;

use super::args::{BuildArgs, GateArgs, LayoutArgs, PairingArgs};
use crate::hunt::its10406;
use crate::record::{Adaptive, Engine, Metric};
use crate::report::{self, model};
use crate::workload::EnvSettings;

#[derive(clap::Args, Debug, Clone)]
pub struct ItsArgs {
    /// rust, c, or rust,c (both, interleaved in the same rounds).
    #[arg(long, value_parser = super::args::engine(), value_delimiter = ',', default_value = "rust")]
    pub engine: Vec<Engine>,
    /// Stop after this long, at the end of a round (e.g. 10m).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub time_budget: Option<std::time::Duration>,
    /// Measured rounds (each runs every tag once, in a fresh shuffled order); with
    /// --time-budget and adaptive rounds, no cap unless given: the budget, or every claim
    /// decided, ends the run. Instruction counts are taken once unless given.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Tags to measure (default: the report's range, 0.9.17..0.9.33).
    #[arg(long, default_value = "0.9.17..0.9.33")]
    pub tags: String,
    /// The tag every claim is judged against (default: the report's, LMDB_0.9.17, where
    /// --tags holds it; else the first tag given).
    #[arg(long, value_name = "TAG")]
    pub baseline: Option<String>,
    /// time, or instructions retired in the timed region.
    #[arg(long, value_enum, default_value_t = Metric::Time)]
    pub metric: Metric,
    /// Where reports/its-10406-<date>.{md,txt,json,html,svg} go.
    #[arg(long, default_value = "reports")]
    pub out_dir: PathBuf,
    /// Entries per write, as the report's benchmark (1,000,000).
    #[arg(long, default_value_t = 1_000_000)]
    pub entries: u32,
    /// What is printed: text (default), markdown, html, or github (one Markdown document for a
    /// pull request, the gate's verdict first, also appended to $GITHUB_STEP_SUMMARY when set);
    /// the files in --out-dir are written whichever.
    #[arg(long, value_enum)]
    pub format: Option<crate::report::Format>,
    /// Skip the instruction-counting pass that puts instruction deltas beside time.
    #[arg(long)]
    pub no_instructions: bool,
    /// `same` needs the whole interval within ± this percent.
    #[arg(long, default_value_t = 2.0)]
    pub min_effect: f64,
    /// Continue an interrupted its-10406 run file with its own plan, then write its reports.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub pairing: PairingArgs,
    /// As `run --adaptive`: on, each round measures a tag only while its comparison is
    /// undecided; off (the default), every tag in every round.
    #[arg(long, value_parser = super::args::adaptive(), default_value_t = Adaptive::Off)]
    pub adaptive: Adaptive,
    /// As `run --target-ci`: stop once every claim is decided and resolved to within ± this
    /// percent, at the looks that spend the run's error.
    #[arg(long, value_parser = super::args::ci_percent)]
    pub target_ci: Option<f64>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// With --fail-on: measure what fails again in a second, independent run, and fail only
    /// what both runs fail.
    #[arg(long, requires = "fail_on")]
    pub confirm: bool,
    /// The options given on the command line (set by the CLI, not an option itself).
    #[arg(skip)]
    pub given: std::collections::BTreeSet<String>,
}

/// The flags of a resumed its-10406 held to its run file, as `run --resume` holds them: the
/// report's benchmark is the file's, and only where the reports go is free.
fn resumed_given(args: &ItsArgs) -> std::collections::BTreeSet<String> {
    args.given.iter().filter(|id| !["resume", "out_dir"].contains(&id.as_str())).cloned().collect()
}

/// The options a new its-10406 run takes as given: the report's entries, and for time its
/// warm-up and its rounds, except where the budget, not the rounds, is to end it. Exact
/// counts repeat: counted once, as `run` counts them, unless rounds are asked for.
fn benchmark_given(args: &ItsArgs) -> std::collections::BTreeSet<String> {
    let asked = |id: &str| args.given.contains(id);
    let time = args.metric == Metric::Time;
    let budget_ends = args.time_budget.is_some() && time && !asked("rounds");
    let rounds = ((time && !budget_ends) || asked("rounds")).then_some("rounds");
    let warmup = (time || asked("warmup")).then_some("warmup");
    ["entries"].into_iter().chain(rounds).chain(warmup).map(String::from).collect()
}

/// Refuses to judge ITS#10406's claims from a run file that is not one of its runs.
fn refuse_other_run(file: &std::path::Path) -> Result<()> {
    let data = crate::record::load(file)?;
    let workloads = &data.header.workloads;
    if workloads.as_slice() != [crate::workload::Workload::Write] {
        let names: Vec<String> = workloads.iter().map(|w| w.to_string()).collect();
        anyhow::bail!(
            "{} is no its-10406 run (it measures {}, not the report's write benchmark alone): \
             continue it with `lmdb-regress run --resume {}`",
            file.display(),
            names.join(", "),
            file.display()
        );
    }
    Ok(())
}

/// The report's own baseline where the tags asked for hold it; a resumed run keeps its file's.
fn report_baseline(args: &ItsArgs) -> Option<String> {
    let holds = |m: &crate::manifest::Manifest| {
        let wants = crate::tags::parse_spec(m, &args.tags, args.build.git.as_deref()).ok()?;
        wants.iter().any(|w| w.label() == its10406::BASELINE).then(|| its10406::BASELINE.to_string())
    };
    args.resume.is_none().then(|| super::manifest().ok().as_ref().and_then(holds)).flatten()
}

pub fn run(args: &ItsArgs) -> Result<()> {
    if let Some(file) = &args.resume {
        refuse_other_run(file)?;
    }
    let stamp = super::stamp();
    let run_args = super::request::RunArgs {
        tags: args.tags.clone(),
        workloads: "write".into(),
        engine: args.engine.clone(),
        rounds: args.rounds,
        time_budget: args.time_budget,
        min_effect: args.min_effect,
        with_instructions: !args.no_instructions && args.metric == Metric::Time,
        metric: args.metric,
        default_out: Some((args.out_dir.join("runs"), format!("its-10406-{stamp}"))),
        // The report's benchmark: LmdbJava's defaults.
        env: EnvSettings { entries: Some(args.entries), ..EnvSettings::default() },
        build: args.build.clone(),
        layout: args.layout.clone(),
        pairing: args.pairing.clone(),
        adaptive: args.adaptive,
        target_ci: args.target_ci,
        // The report's benchmark as given, whatever the metric; a resumed one is the file's.
        given: match args.resume {
            Some(_) => resumed_given(args),
            None => benchmark_given(args),
        },
        resume: args.resume.clone(),
        baseline: args.baseline.clone().or_else(|| report_baseline(args)),
        resume_with: Some(super::request::Continue::Resume("its-10406 --resume".into())),
        confirm: args.confirm,
        judge: its10406::progress,
        // One warm-up round, every other option as `run` gives it.
        ..super::request::RunArgs::defaults()
    };
    super::run::refuse_confirm_with_resume(&run_args)?;
    let data = super::run::measure(&run_args)?;
    let m = model::build(&data, None)?;
    let r = its10406::build(&m);
    let format = args.format.unwrap_or(report::Format::Text);
    // Refused before anything is written.
    report::document::refuse_unshown(format)?;
    let attributions = if args.no_instructions { Vec::new() } else { attribute_claims(&r, &args.build) };
    let result = its10406::ItsResult { report: r, attributions, model: &m };
    // The reports take the run file's name (its-10406-<date>, or -2, … when taken).
    let stem = data.path.as_deref().and_then(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned());
    let base = args.out_dir.join(stem.unwrap_or_else(|| format!("its-10406-{stamp}")));
    let mut outputs = Vec::new();
    for f in [report::Format::Markdown, report::Format::Text, report::Format::Json, report::Format::Html] {
        let doc = report::render_shown(&result, f, &Default::default())?;
        outputs.push((base.with_extension(f.extension()), doc.into_bytes()));
    }
    if let Some(s) = m.sections.iter().find(|s| s.workload == crate::workload::Workload::Write) {
        outputs.push((base.with_extension("svg"), report::svg::chart(&m, s)?.into_bytes()));
    }
    crate::files::write_each(&outputs, crate::files::Existing::Refuse)?;
    for (p, _) in &outputs {
        eprintln!("wrote {}", p.display());
    }
    // The reports are written before the gate judges; what is printed opens with its verdict.
    let outcome = match args.gate.fail_on {
        Some(fail_on) => Some(super::run::gate(&run_args, &data, &m, fail_on)?),
        None => None,
    };
    let github = report::github::Github::of_job(outcome.clone(), data.path.as_slice());
    super::print_shown_with(&result, format, &github)?;
    match outcome {
        Some(outcome) => outcome.conclude(),
        None => Ok(()),
    }
}

/// Each claim that reproduces (on any engine), its two tags explained function by function
/// by instructions, as `explain` gives them (the write workload, 100,000 entries); a pair
/// that cannot be profiled is said and left out.
fn attribute_claims(
    r: &its10406::ItsReport,
    build: &super::args::BuildArgs,
) -> Vec<crate::report::explain::Attribution> {
    use its10406::ClaimVerdict::{Larger, Reproduces, Smaller};
    let mut pairs: Vec<(String, String)> = Vec::new();
    for c in r.engines.iter().flat_map(|e| &e.claims).filter(|c| matches!(c.verdict, Reproduces | Smaller | Larger)) {
        if !pairs.contains(&(c.from.clone(), c.to.clone())) {
            pairs.push((c.from.clone(), c.to.clone()));
        }
    }
    let workloads = [crate::workload::Workload::Write];
    let config = match super::prepare::config_of(&EnvSettings::default(), &Default::default(), &workloads) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("note: the claims are not attributed to functions: {e:#}");
            return Vec::new();
        }
    };
    let ask = super::explain::Ask {
        workloads: &workloads,
        config: &config,
        build,
        engine: crate::record::Engine::Rust,
        cache: false,
        top: its10406::ATTRIBUTED,
        listed: 0,
    };
    let mut out = Vec::new();
    for (from, to) in pairs {
        match super::explain::explain_builds(&format!("{from},{to}"), &ask) {
            Ok(e) => out.push(crate::report::explain::Attribution {
                good: from,
                bad: to,
                subject: None,
                explanation: e.model,
            }),
            Err(e) => eprintln!("note: {from} -> {to} not attributed to functions: {e:#}"),
        }
    }
    out
}
