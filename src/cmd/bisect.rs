//! `lmdb-regress bisect`: which tag, and which commit, made a workload slower (or faster).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::args::{BuildArgs, LayoutArgs, PairingArgs};
use crate::compile::BuildKind;
use crate::files::{self, Existing};
use crate::hunt::bisect::{BadIf, Bisector, Found, SearchPhase, Settings, ATTRIBUTED};
use crate::manifest::Manifest;
use crate::matrix::MatrixOptions;
use crate::record::{Engine, Layouts, Metric, Pairing};
use crate::report::cells;
use crate::report::document::{self, Shown};
use crate::report::explain::Attribution;
use crate::report::outline::Document;
use crate::runner::counter;
use crate::runner::{self, SearchStep, Stage};
use crate::stats::{self, Comparison};
use crate::workload::suite::{Suite, SuiteChoice};
use crate::workload::{EnvSettings, Workload, WorkloadConfig};

/// What a bisect decides its probes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BisectMetric {
    /// Time; instruction counts for probes time cannot decide (when a counter exists).
    Auto,
    /// One metric alone: by time, a probe undecided at --max-rounds stays undecided; by a
    /// count, each probe is counted once, at 100,000 entries unless --entries.
    Only(Metric),
}

impl std::fmt::Display for BisectMetric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BisectMetric::Auto => f.write_str("auto"),
            BisectMetric::Only(m) => m.fmt(f),
        }
    }
}

/// `auto`, or any metric `run --metric` takes.
fn bisect_metric(s: &str) -> Result<BisectMetric, String> {
    if s == "auto" {
        return Ok(BisectMetric::Auto);
    }
    let keys: Vec<&str> = Metric::ALL.iter().map(|m| m.key()).collect();
    Metric::ALL
        .into_iter()
        .find(|m| m.key() == s)
        .map(BisectMetric::Only)
        .ok_or_else(|| format!("{s:?} is no metric: give auto or one of {}", keys.join(", ")))
}

#[derive(clap::Args, Debug, Clone)]
pub struct BisectArgs {
    /// The tag (or, with --git, commit) before the change: the older end.
    #[arg(long)]
    pub good: String,
    /// The tag (or commit) after it: slower, or faster when an improvement is searched.
    #[arg(long)]
    pub bad: String,
    /// The one workload to bisect: readKey, readSeq, readRev, readCrc, readXxh64 or write,
    /// or one of another suite's (`lmdb-regress workloads`); one at a time (`all` is for
    /// `run`).
    #[arg(long, default_value = "write", value_parser = one_workload)]
    pub workload: Workload,
    /// lmdbjava (LmdbJava's six) or lmdb (LMDB's own shapes), as on `run`: --workload must
    /// be of it, and the search runs with that suite's defaults.
    #[arg(long, value_enum)]
    pub suite: Option<SuiteChoice>,
    /// Bad must differ from good by more than this percent (0 to 1000): slower by it, or
    /// faster by its inverse.
    #[arg(long, default_value_t = 3.0, value_parser = super::args::threshold_percent)]
    pub threshold: f64,
    /// change: a probe is bad when it differs from good as bad does (by --metric and
    /// --threshold); crash: when its worker dies running the workload (an abort or another
    /// signal, a non-zero exit, the watchdog), as bad's does, and good when it runs; each
    /// side one process, once.
    #[arg(long, value_enum, default_value = "change")]
    pub bad_if: BadIf,
    /// auto: decide by time, and a probe time leaves undecided by instruction counts.
    /// By a count (instructions, d1-misses, ll-misses, estimated-cycles): each probe counted once.
    #[arg(long, default_value = "auto", value_parser = bisect_metric)]
    pub metric: BisectMetric,
    /// `same` needs the whole interval within ± this percent.
    #[arg(long, default_value_t = 2.0)]
    pub min_effect: f64,
    /// Rounds before a probe may be decided (default: 6 for time, 1 for instructions).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub min_rounds: Option<u32>,
    /// Rounds after which a probe is undecided (default: 30 for time, 1 for instructions).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_rounds: Option<u32>,
    /// Where the interleaved runs are saved (default: reports/runs/bisect-<date>/, or
    /// bisect-<date>-2/, … when taken). A folder holding an earlier search is refused
    /// unless --force.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Replace the files of an earlier search in --out-dir.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub workload_cfg: WorkloadConfig,
    #[command(flatten)]
    pub env: EnvSettings,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub pairing: PairingArgs,
    /// Also print the search as one document at the end: markdown, html, or github (one
    /// Markdown document for a pull request, what the search decided first, also appended to
    /// $GITHUB_STEP_SUMMARY when set); its progress then goes to stderr.
    #[arg(long, value_enum)]
    pub format: Option<crate::report::Format>,
    /// The options given on the command line (set by the CLI, not an option itself).
    #[arg(skip)]
    pub given: std::collections::BTreeSet<String>,
}

impl BisectArgs {
    /// A line of progress: on stdout, unless a document is to be printed there.
    fn say(&self, line: impl std::fmt::Display) {
        match self.format {
            Some(_) => eprintln!("{line}"),
            None => println!("{line}"),
        }
    }

    /// The configuration every run of the search uses: the workload's suite's defaults for
    /// what the flags leave out.
    fn config(&self) -> Result<WorkloadConfig> {
        let measured = ["metric", "threshold", "min_effect", "min_rounds", "max_rounds"];
        if let Some(flag) = measured.iter().find(|f| self.bad_if == BadIf::Crash && self.given.contains(**f)) {
            bail!(
                "--bad-if crash decides a probe by whether its worker dies, once: --{} does not apply",
                flag.replace('_', "-")
            );
        }
        match self.suite {
            Some(SuiteChoice::All) => {
                bail!("--suite all: bisect follows one workload of one suite (give lmdbjava or lmdb)")
            }
            Some(s) if !self.given.contains("workload") && s.holds(&[self.workload]).is_err() => {
                bail!("--suite {}: name the workload to bisect (--workload, `lmdb-regress workloads`)", s.name())
            }
            Some(s) => s.holds(&[self.workload])?,
            None => {}
        }
        if let BisectMetric::Only(metric) = self.metric {
            super::args::commits_timed(metric, &self.env, Suite::of(&[self.workload])?)?;
        }
        let suite = Suite::of(&[self.workload])?.preset();
        let cfg = self.env.resolve(&self.workload_cfg, &Default::default(), suite);
        cfg.validate(suite)?;
        super::room::check(&cfg, &[self.workload])?;
        Ok(cfg)
    }
}

/// `--workload`: a search follows one workload, so `all` is refused with the way out.
fn one_workload(s: &str) -> Result<Workload> {
    if s.trim().eq_ignore_ascii_case("all") {
        bail!("bisect follows one workload at a time: pick one of readKey, readSeq, readRev, readCrc, readXxh64, write (run one bisect per workload)");
    }
    s.parse()
}

/// One search per toolchain (`--toolchain`), each in a folder of its own when there are
/// several.
pub fn run(args: &BisectArgs) -> Result<()> {
    if let Some(f) = args.format {
        // Refused before anything is built.
        crate::report::render_document(&Document::default(), f, &Default::default(), None)
            .map_err(|_| anyhow::anyhow!("--format {}: bisect prints markdown, text, html or github", f.name()))?;
    }
    args.config()?;
    let all = super::matrix_options(&args.build, vec![BuildKind::SharedLibrary])?;
    let root = match &args.out_dir {
        Some(dir) => {
            refuse_earlier_search(dir, Existing::forced(args.force))?;
            dir.clone()
        }
        None => {
            let stem = format!("bisect-{}", super::stamp());
            files::create_numbered(Path::new("reports/runs"), &stem, "", |p| std::fs::create_dir(p))?.1
        }
    };
    let several = all.toolchains.len() > 1;
    // A toolchain whose slowdown is not found is said in its part; the others still search.
    let mut not_found = Vec::new();
    let mut searches = Vec::new();
    let mut ended = Ok(());
    for (i, tc) in all.toolchains.iter().enumerate() {
        let name = tc.toolchain.name();
        let one =
            args.build.toolchain.as_ref().and_then(|l| l.0.get(i)).map(|t| super::args::ToolchainList(vec![t.clone()]));
        let build = BuildArgs { toolchain: one.or_else(|| args.build.toolchain.clone()), ..args.build.clone() };
        if several {
            args.say(format!("== bisecting under {name} =="));
        }
        let run_dir = if several { root.join(crate::compile::sanitize(&name)) } else { root.clone() };
        let opts = MatrixOptions { toolchains: vec![tc.clone()], ..all.clone() };
        let result = bisect_under(args, &build, opts, run_dir, &mut searches);
        if let (Err(e), Some(last)) = (&result, searches.last_mut()) {
            last.findings.push(e.to_string());
        }
        match result {
            Err(e) if several && e.is::<NotFound>() => {
                args.say(&e);
                not_found.push(name);
            }
            Err(e) => {
                ended = Err(e);
                break;
            }
            Ok(()) => {}
        }
    }
    if let Some(format) = args.format {
        print_searches(args, searches, format, ended.is_ok() && not_found.is_empty(), &root)?;
    }
    ended?;
    if !not_found.is_empty() {
        let under = not_found.join(", ");
        return Err(NotFound(format!("no slowdown was narrowed down under {under} (each part above says why)")).into());
    }
    Ok(())
}

/// A folder that holds an earlier search's files (bisect.json, run files, in it or in a
/// toolchain's folder below it) is refused, said before anything is built.
fn refuse_earlier_search(dir: &Path, existing: Existing) -> Result<()> {
    if existing == Existing::Replace {
        return Ok(());
    }
    let entries = |d: &Path| std::fs::read_dir(d).into_iter().flatten().flatten().map(|e| e.path()).collect::<Vec<_>>();
    let top = entries(dir);
    let below = top.iter().filter(|p| p.is_dir()).flat_map(|d| entries(d));
    let earlier = top.iter().cloned().chain(below).find(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        name == "bisect.json" || name.ends_with(".jsonl")
    });
    match earlier {
        Some(p) => bail!(
            "{} holds an earlier search ({}): choose another --out-dir, or pass --force to replace its files",
            dir.display(),
            p.display()
        ),
        None => Ok(()),
    }
}

/// bisect could not do what it was asked: the slowdown between --good and --bad is not
/// confirmed, or the search could not narrow it to one tag or commit. The command exits 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotFound(pub String);

/// The searches' documents as one, printed in `format`: what they decided first.
fn print_searches(
    args: &BisectArgs,
    searches: Vec<Document>,
    format: crate::report::Format,
    found: bool,
    root: &Path,
) -> Result<()> {
    let mut d = Document {
        machine: Some(crate::report::outline::machine(&crate::environment::Environment::capture())),
        ..Document::default()
    };
    for s in searches {
        d.blocks.extend(s.blocks);
        d.findings.extend(s.findings);
    }
    let headline = match found {
        true => format!("lmdb-regress bisect: the slowdown on {} narrowed down", args.workload),
        false => format!("lmdb-regress bisect: the slowdown on {} not narrowed down", args.workload),
    };
    let github = crate::report::github::Github {
        headline: Some(headline),
        ..crate::report::github::Github::of_job(None, &[root])
    };
    super::print_document(&d, format, &github, None)
}

fn bisect_under(
    args: &BisectArgs,
    build: &BuildArgs,
    opts: MatrixOptions,
    run_dir: PathBuf,
    searches: &mut Vec<Document>,
) -> Result<()> {
    let m = super::manifest()?;
    let (gi, bi) = check_range(args, &m, &opts)?;
    let (settings, layout_seed) = settings(args, run_dir)?;
    let exact = settings.metric.is_exact();
    let counter = if exact { Some(counter::detect(settings.metric.needs_cache_sim())?) } else { None };
    let started = std::time::Instant::now();
    let mut b = Bisector::new(&m, opts, settings, counter)?;
    announce(&mut b, layout_seed);
    let norm = |l: &str| m.find(l).map(|t| t.name.clone()).unwrap_or_else(|| l.to_string());
    let (good, bad) = (norm(&args.good), norm(&args.bad));
    let ug = b.unit(&good).map_err(|e| anyhow::anyhow!("--good {good} cannot be built: {e}"))?;
    let ub = b.unit(&bad).map_err(|e| anyhow::anyhow!("--bad {bad} cannot be built: {e}"))?;
    let (changed, confirmation) = match b.confirm(&ug, &ub) {
        Err(e) if e.is::<runner::Interrupted>() => {
            finish(&b, &[], None, None, started, searches)?;
            let stage = Stage::Search(SearchStep::Confirming { good: ug.label.clone(), bad: ub.label.clone() });
            let then = "nothing decided yet; run the same command again".to_string();
            return Err(runner::Interrupted { stage, then }.into());
        }
        other => other?,
    };
    let confirmed = confirmation.as_ref();
    if !changed {
        finish(&b, &[], confirmed, None, started, searches)?;
        let why = match args.bad_if {
            BadIf::Change => unconfirmed(args, &b.settings, (&good, &bad), confirmed),
            BadIf::Crash => format!(
                "on {}, {good}'s worker must run and {bad}'s die, and they did not (the confirm line above; the run                  in {}): nothing to bisect",
                args.workload,
                b.settings.run_dir.display()
            ),
        };
        return Err(NotFound(why).into());
    }
    let mut results = Vec::new();
    let (mut lg, mut fb) = (good.clone(), bad.clone());
    if let (Some(g), Some(bb)) = (gi, bi) {
        let mut cands = vec![good.clone()];
        cands.extend(m.tags[g + 1..bb].iter().map(|t| t.name.clone()));
        cands.push(bad.clone());
        let found = b.search(SearchPhase::Tags, cands, &ug, &ub)?;
        if found.interrupted || !found.outcome.resolved() {
            let ended = ended_unresolved(&b, &found);
            results.push(found);
            finish(&b, &results, confirmed, None, started, searches)?;
            return Err(ended);
        }
        lg = found.candidates[found.outcome.last_good].clone();
        fb = found.candidates[found.outcome.first_bad].clone();
        results.push(found);
    }
    if b.git.is_some() {
        let cands = b.commit_candidates(&lg, &fb)?;
        let (ul, ubad) = (b.unit(&lg).map_err(anyhow::Error::msg)?, b.unit(&fb).map_err(anyhow::Error::msg)?);
        let found = b.search(SearchPhase::Commits, cands, &ul, &ubad)?;
        let ended = (found.interrupted || !found.outcome.resolved()).then(|| ended_unresolved(&b, &found));
        let measured = ended.is_none() && args.bad_if == BadIf::Change;
        let attributed = measured.then(|| attribute(args, build, &b, &found)).flatten();
        results.push(found);
        finish(&b, &results, confirmed, attributed.as_ref(), started, searches)?;
        return ended.map_or(Ok(()), Err);
    }
    args.say(format!("(pass --git PATH to a clone of OpenLDAP to continue from {fb} down to the commit)"));
    let attributed =
        results.last().filter(|_| args.bad_if == BadIf::Change).and_then(|f| attribute(args, build, &b, f));
    finish(&b, &results, confirmed, attributed.as_ref(), started, searches)
}

/// The functions that carry the step a search found (its last good build against its first
/// bad one, by instructions, as `explain` gives them), printed; None, said why, when the
/// builds cannot be profiled (bisect's answer stands without it).
fn attribute(args: &BisectArgs, build: &BuildArgs, b: &Bisector, found: &Found) -> Option<Attribution> {
    let (lg, fb) = (&found.candidates[found.outcome.last_good], &found.candidates[found.outcome.first_bad]);
    let made = || -> Result<Attribution> {
        let workloads = [args.workload];
        let config = super::prepare::config_of(&args.env, &args.workload_cfg, &workloads)?;
        let ask = super::explain::Ask {
            workloads: &workloads,
            config: &config,
            build,
            engine: Engine::Rust,
            cache: false,
            top: ATTRIBUTED,
            listed: 0,
        };
        let explained = super::explain::explain_builds(&format!("{lg},{fb}"), &ask)?;
        let subject = Some(b.describe(fb)).filter(|s| !s.is_empty());
        Ok(Attribution { good: lg.clone(), bad: fb.clone(), subject, explanation: explained.model })
    };
    match made() {
        Ok(a) => {
            args.say("Where the instructions of the step went (lmdb-regress explain A B gives every function):");
            a.lines(ATTRIBUTED).iter().for_each(|l| args.say(format!("  {l}")));
            Some(a)
        }
        Err(e) => {
            args.say(format!("(no per-function attribution of {fb}: {e:#})"));
            None
        }
    }
}

/// Why the slowdown from `good` to `bad` is not confirmed, with the interval measured and
/// what would decide it.
fn unconfirmed(args: &BisectArgs, s: &Settings, (good, bad): (&str, &str), c: Option<&Comparison>) -> String {
    let (thr, w) = (args.threshold, args.workload);
    let Some(c) = c else {
        return format!(
            "{bad} could not be compared with {good} on {w}: no sample of one of them (see the run files in {}): \
             nothing to bisect",
            s.run_dir.display()
        );
    };
    let measured = format!("{bad} against {good} on {w}: {}", cells::delta_line(c));
    let more = format!(
        "More rounds would decide it (the confirmation stopped at --max-rounds {}), or --metric instructions \
         when the slowdown is in the work done; nothing was bisected",
        s.max_rounds
    );
    let t = 1.0 + thr / 100.0;
    match c.ci.map(|i| i.hi < t && i.lo > 1.0 / t) {
        None => format!("{measured}: not confirmed: too few rounds for an interval. {more}"),
        Some(true) if matches!(c.verdict, stats::Verdict::Slower | stats::Verdict::Faster) => format!(
            "{measured}: {}, but by less than the --threshold of {thr}%: nothing to bisect \
             (a smaller --threshold searches it)",
            if c.verdict == stats::Verdict::Slower { "slower" } else { "faster" }
        ),
        Some(true) => format!("{measured}: neither slower nor faster by more than {thr}%: nothing to bisect"),
        Some(false) => format!(
            "{measured}: not confirmed: the interval holds both less and more than the {thr}% threshold. {more}"
        ),
    }
}

/// The error that ends a search phase that Ctrl-C stopped (130), or that could not narrow
/// its range to one candidate (1), naming the range left and how to go on.
fn ended_unresolved(b: &Bisector, found: &Found) -> anyhow::Error {
    if found.interrupted {
        let stage = Stage::Search(SearchStep::Narrowing(found.phase));
        return runner::Interrupted { stage, then: resume_hint(&b.settings.run_dir, found) }.into();
    }
    let (lg, fb) = (&found.candidates[found.outcome.last_good], &found.candidates[found.outcome.first_bad]);
    let why = if found.outcome.stopped_undecided {
        "a probe stayed undecided at --max-rounds (more rounds, or --metric auto with a counter, decide it)"
    } else {
        "the probes between them were skipped (they did not build or measure)"
    };
    NotFound(format!(
        "{}: not narrowed to one: the first bad one is after {lg}, at {fb} at the latest; {why}; what was \
         decided is in {}",
        found.phase,
        b.settings.run_dir.join("bisect.json").display()
    ))
    .into()
}

/// The positions of `--good` and `--bad` among the pinned tags (None for a commit), after
/// checking that each names something buildable and that the range runs forward: for
/// commits, that --good is an ancestor of --bad and not the same commit.
fn check_range(args: &BisectArgs, m: &Manifest, opts: &MatrixOptions) -> Result<(Option<usize>, Option<usize>)> {
    let git = opts.resolver.git.as_deref();
    let (gi, bi) = (m.index_of(&args.good), m.index_of(&args.bad));
    for (label, idx) in [(&args.good, gi), (&args.bad, bi)] {
        if idx.is_none() && !(git.is_some() && crate::tags::looks_like_commit(label)) {
            crate::tags::parse_spec(m, label, git)?; // says why, listing known tags
        }
    }
    if let (Some(g), Some(b)) = (gi, bi) {
        if g >= b {
            bail!("--good {} must be an older tag than --bad {}", m.tags[g].name, m.tags[b].name);
        }
        return Ok((gi, bi));
    }
    let Some(git) = git else { return Ok((gi, bi)) };
    let repo = crate::source::GitRepo::open(git)?;
    let commit = |label: &str, idx: Option<usize>| match idx {
        Some(i) => repo.resolve(&m.tags[i].name).or_else(|_| repo.resolve(&m.tags[i].commit)),
        None => repo.resolve(label),
    };
    let (g, b) = (commit(&args.good, gi)?, commit(&args.bad, bi)?);
    if g == b {
        bail!("--good {} and --bad {} are the same commit ({g}): nothing lies between them", args.good, args.bad);
    }
    if !repo.is_ancestor(&g, &b)? {
        let newer = repo.is_ancestor(&b, &g)?;
        bail!(
            "--good {} must be older than --bad {}: it is {} (give the older one as --good)",
            args.good,
            args.bad,
            if newer { "newer, a descendant of it" } else { "not an ancestor of it (they are on different lines)" }
        );
    }
    Ok((gi, bi))
}

/// The search's settings from the flags, and the layout seed of its timed runs (if random).
fn settings(args: &BisectArgs, run_dir: PathBuf) -> Result<(Settings, Option<u64>)> {
    let metric = match args.metric {
        BisectMetric::Auto => Metric::Time,
        BisectMetric::Only(m) => m,
    };
    let exact = metric.is_exact();
    let crash = args.bad_if == BadIf::Crash;
    // The search's seed: each timed run's own derives from it and the run's name; whether a
    // worker dies needs no layouts.
    let (layouts, layout_seed) = if crash { (Layouts::Fixed, None) } else { args.layout.plan(metric) };
    // auto falls back on counts only where a counter works; say which.
    let fallback = match args.metric {
        BisectMetric::Auto if crash => None,
        BisectMetric::Auto => match counter::detect(false) {
            Ok(c) => Some(c),
            Err(e) => {
                args.say(format!("metric auto: no instruction counter ({e:#}); undecided probes stay undecided"));
                None
            }
        },
        _ => None,
    };
    let cfg = args.config()?;
    let pairing = match crash {
        true => (Pairing::Process, None),
        false => args.pairing.plan(metric, args.workload.suite(), &args.given)?,
    };
    let chunks = super::run::chunks_a_pass(cfg.entries, pairing.1);
    let stand_alone = args.workload.chunks_stand_alone();
    let layouts_per_process = args.layout.per_process((layouts, pairing.0), &[Engine::Rust], stand_alone, chunks)?;
    let settings = Settings {
        progress_to_stderr: args.format.is_some(),
        bad_if: args.bad_if,
        workload: args.workload,
        cfg: cfg.clone(),
        metric,
        threshold: args.threshold,
        // Counts are exact (each run checks that they repeat): one round decides.
        min_rounds: args.min_rounds.unwrap_or(if exact { 1 } else { 6 }),
        max_rounds: args.max_rounds.unwrap_or(if exact { 1 } else { 30 }),
        warmup: if exact { 0 } else { 1 },
        run_dir,
        rule: crate::stats::family::Rule { min_effect: args.min_effect / 100.0, ..Default::default() },
        fallback,
        count_entries: match args.given.contains("entries") {
            true => cfg.entries,
            false => args.workload.suite().count_entries().unwrap_or(super::args::COUNT_ENTRIES),
        },
        jobs: args.build.jobs(),
        layouts,
        layout_seed: layout_seed.unwrap_or_default(),
        layouts_per_process,
        pairing,
        existing: Existing::forced(args.force),
    };
    Ok((settings, layout_seed))
}

/// Prints, and keeps for the summary, what the search measures with.
fn announce(b: &mut Bisector, layout_seed: Option<u64>) {
    let tc = b.toolchain();
    let mut lines = vec![format!("toolchain: {} ({}; flags {})", tc.name(), tc.version, tc.cflags.join(" "))];
    if let Some(seed) = layout_seed {
        lines.push(format!("layouts: random (seed {seed}; counting runs use the fixed builds)"));
    }
    if let Some(c) = &b.counter {
        lines.push(format!("instructions counted by {}", c.describe()));
    }
    for line in lines {
        match b.settings.progress_to_stderr {
            true => eprintln!("{line}"),
            false => println!("{line}"),
        }
        b.log.push(line);
    }
}

/// After Ctrl-C: the narrowed range, as the command that continues from it.
fn resume_hint(run_dir: &std::path::Path, found: &Found) -> String {
    let (lg, fb) = (&found.candidates[found.outcome.last_good], &found.candidates[found.outcome.first_bad]);
    format!(
        "interrupted; what was decided is in {}; to continue, run the same command with --good {lg} --bad {fb}",
        run_dir.join("bisect.json").display()
    )
}

/// Prints the tally and writes bisect.json and bisect.html (the confirmation of the
/// slowdown, every phase with its chart of probes, the log) and each phase's chart as
/// bisect-PHASE.svg; a failure to write them is an error.
fn finish(
    b: &Bisector,
    results: &[Found],
    confirmation: Option<&Comparison>,
    attribution: Option<&Attribution>,
    started: std::time::Instant,
    searches: &mut Vec<Document>,
) -> Result<()> {
    let probes: usize = results.iter().map(|f| f.outcome.steps.len()).sum();
    let tally = format!(
        "{}, {}; runs saved in {}",
        cells::plural(probes, "probe"),
        cells::seconds(started.elapsed().as_secs_f64()),
        b.settings.run_dir.display()
    );
    match b.settings.progress_to_stderr {
        true => eprintln!("{tally}"),
        false => println!("{tally}"),
    }
    let summary = crate::hunt::bisect::BisectSummary {
        workload: b.settings.workload,
        bad_if: b.settings.bad_if,
        metric: b.settings.metric,
        threshold_percent: b.settings.threshold,
        run_dir: b.settings.run_dir.clone(),
        wall_seconds: started.elapsed().as_secs_f64(),
        log: &b.log,
        confirmation,
        phases: results,
        attribution,
        min_effect: b.settings.rule.min_effect,
    };
    // Rendered first: a failure never leaves an empty file behind.
    let json = document::json(&summary).context("cannot serialise the bisect summary")?;
    let page = crate::report::render_shown(&summary, crate::report::Format::Html, &Default::default())?;
    let dir = &b.settings.run_dir;
    let mut outputs = vec![(dir.join("bisect.json"), json.into_bytes()), (dir.join("bisect.html"), page.into_bytes())];
    for f in results {
        if let Some(svg) = crate::hunt::bisect::probes_chart(f, summary.min_effect)? {
            outputs.push((dir.join(format!("bisect-{}.svg", f.phase)), svg.into_bytes()));
        }
    }
    files::write_each(&outputs, b.settings.existing)?;
    searches.push(summary.outline());
    Ok(())
}
