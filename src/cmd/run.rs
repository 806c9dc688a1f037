//! `lmdb-regress run`: build, measure, save every sample, and report.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use super::prepare::{create_run_file, default_out, prepare_units, Prepared};
use super::request::{control_tag, selection, Continue, RunArgs};
use crate::files::{self, Existing};
use crate::record::{self, Base, Engine, Failure, Header, Phase, Plan, Record, RunData, RunWriter, Shard};
use crate::report::gate::{self, FailOn};
use crate::report::model::ReportModel;
use crate::runner::{self, Label, RunSpec, Unit};
use crate::source::Want;
use crate::workload::MemoryLimit;

/// A new run file for `args`: `--out` (refused if it exists, unless --force), else a new
/// name in the default folder.
fn create_run_file_for(args: &RunArgs, header: &Header, failures: Vec<Failure>) -> Result<RunWriter> {
    let default = args.default_out.clone().unwrap_or_else(|| default_out("run"));
    create_run_file(args.out.as_deref(), Existing::forced(args.force), default, header, failures)
}

/// That the C paired worker a resumed run would start is the one its earlier sessions ran.
fn same_paired_worker(now: Option<&record::WorkerBuild>, recorded: Option<&record::WorkerBuild>) -> Result<()> {
    match (now, recorded) {
        (Some(now), recorded) if Some(now) != recorded => {
            let recorded = recorded.map_or("none".to_string(), |r| r.to_string());
            bail!(
                "its C units would now run in the C paired worker {now}, but the run file's header records {recorded}"
            )
        }
        _ => Ok(()),
    }
}

/// Refuses to go on with a run recorded by another build of lmdb-regress: the tool's own
/// code placement moves some times by a point or more between builds, and one run's
/// samples are judged as one. Runs that recorded no build are not checked.
fn same_tool(recorded: Option<&str>) -> Result<()> {
    let now = crate::environment::tool_sha256();
    match (now.as_deref(), recorded) {
        (Some(now), Some(recorded)) if now != recorded => bail!(
            "it was measured by another build of lmdb-regress (SHA-256 {recorded}; this one is {now}): \
             resume it with that build, or start a new run"
        ),
        _ => Ok(()),
    }
}

/// Runs a new run into `out` or continues `resume`; returns the run as saved.
pub fn measure(args: &RunArgs) -> Result<RunData> {
    crate::runner::watchdog::set_floor(std::time::Duration::from_secs_f64(args.watchdog));
    if let Some(path) = &args.resume {
        return resume(path, args);
    }
    NewRun::create(args)?.measure()
}

/// A new run whose units are built and whose run file holds its header, not yet measured.
pub struct NewRun {
    args: RunArgs,
    spec: RunSpec,
    writer: RunWriter,
}

impl NewRun {
    /// Builds what `args` ask for and writes the run file's header.
    pub fn create(args: &RunArgs) -> Result<NewRun> {
        let args = args.with_instruction_defaults();
        // Said before anything is built or measured.
        if let Some(out) = &args.out {
            files::refuse_existing(out, Existing::forced(args.force))?;
        }
        let (spec, header, failures) = new_spec(&args)?;
        let writer = create_run_file_for(&args, &header, failures)?;
        Ok(NewRun { args, spec, writer })
    }

    pub fn path(&self) -> &std::path::Path {
        &self.writer.path
    }

    /// Gives the run `budget` in place of the one its header was written with, before
    /// anything is measured: its plan's, and its run file's header restated with it.
    pub fn give_budget(&mut self, budget: std::time::Duration) -> Result<()> {
        self.args.time_budget = Some(budget);
        self.spec.plan.time_budget_s = Some(budget.as_secs_f64());
        self.writer.restate(|h| h.plan.time_budget_s = Some(budget.as_secs_f64()))
    }

    /// After an interruption, `later` (run files measured after this one, their headers
    /// written) are named to resume too.
    pub fn then_resume(&mut self, later: Vec<PathBuf>) {
        self.args.later = later;
    }

    /// Measures the run, then its counting and coverage passes; returns it as saved.
    pub fn measure(self) -> Result<RunData> {
        let NewRun { args, spec, mut writer } = self;
        if args.metric.is_exact() {
            // A program's data is its own.
            let data = match spec.plan.programs.is_empty() {
                true => format!("{} entries", spec.config.entries),
                false => "each program's whole process".to_string(),
            };
            eprintln!(
                "counting {}: {data}, {}, {} at once",
                args.metric.name(),
                crate::report::cells::plural(spec.plan.rounds.unwrap_or(1) as usize, "round"),
                crate::report::cells::plural(spec.jobs, "job")
            );
        }
        let outcome = spec.start(&mut writer)?;
        finish(&spec, outcome.stopped, &mut writer, &[], &args, || Some(coverage_of(&args, &spec)))
    }
}

/// Chunks of a pass of `entries` entries in chunks of `chunk` (or the default).
pub(super) fn chunks_a_pass(entries: u32, chunk: Option<u32>) -> u32 {
    entries.div_ceil(chunk.unwrap_or(crate::runner::DEFAULT_CHUNK).max(1)).max(1)
}

/// The specification of the new run `args` ask for, its units built; with its run file's
/// header (every requested tag, every unit declared) and the builds that failed for one
/// engine only.
fn new_spec(args: &RunArgs) -> Result<(RunSpec, Header, Vec<Failure>)> {
    if !args.suite_budget.is_empty() {
        bail!("--suite-budget shares the budget of --suite all among its suites: give --suite all, or --time-budget alone");
    }
    let (workloads, config) = selection(args)?;
    if args.metric.is_space() && workloads.iter().all(|w| w.is_read() || w.is_program()) {
        bail!("--metric {} is read after each write pass: add write (or a preset's write) to --workloads", args.metric);
    }
    super::room::check(&config, &workloads)?;
    if !(0.0..=50.0).contains(&args.min_effect) {
        bail!("--min-effect {} is not a percentage between 0 and 50", args.min_effect);
    }
    let suite = crate::workload::suite::Suite::of(&workloads)?;
    if args.preset_cfg.reader_procs && suite != crate::workload::suite::Suite::Concurrency {
        bail!("--reader-procs: readers in processes of their own run beside a writer in --suite concurrency only");
    }
    memory_limits_held(args, suite, &args.env.memory_limits())?;
    key_sample_taken(args, &workloads)?;
    super::args::commits_timed(args.metric, &args.env, suite)?;
    let (pairing, chunk) = match whole_passes(args) {
        // The units of a paired process share one configuration and one process.
        Some(why) if suite == crate::workload::suite::Suite::LmdbJava && !args.metric.is_exact() => {
            if args.given.contains("pairing") && args.pairing.pairing == record::Pairing::Chunks {
                bail!("{why}; give --pairing process");
            }
            (record::Pairing::Process, None)
        }
        _ => args.pairing.plan(args.metric, suite, &args.given)?,
    };
    if args.preset_cfg.reader_procs && pairing != record::Pairing::Chunks {
        bail!("--reader-procs: reader processes run beside the paired worker's writer; leave out --pairing process");
    }
    let shard = shard_of(args, pairing)?;
    let spec = shard.as_ref().map_or(args.tags.clone(), |s| bases_text(&s.measured(pairing), ","));
    let (layouts, layout_seed) = args.layout.plan(args.metric);
    let stand_alone = workloads.iter().any(|w| w.chunks_stand_alone());
    let chunks = chunks_a_pass(config.entries, chunk);
    let layouts_per_process = args.layout.per_process((layouts, pairing), &args.engine, stand_alone, chunks)?;
    let judged = args.adaptive_plan() == record::Adaptive::On || args.target_ci.is_some();
    let reference_layouts = args.layout.reference(layouts, pairing, args.iterations, judged)?;
    let Prepared { tags, units, mut failures, c_paired_worker } =
        prepare_units(&spec, &args.source, &args.engine, &args.build, layouts, pairing)?;
    if units.is_empty() {
        bail!("no tag could be built, so nothing can be measured (see the reasons above)");
    }
    let baseline = baseline_of(args.baseline.as_deref(), shard.as_ref(), &tags)?;
    let programs = super::request::programs(args)?;
    let git = args.build.git.as_deref();
    let mut units = super::program::compile_all(&programs, units, &tags, git, args.jobs(), &mut failures)?;
    let control = args.control.as_deref().map(control_tag).transpose()?;
    if let Some(c) = control.as_deref().filter(|c| shard_holds(shard.as_ref(), c)) {
        units.extend(control_units(&units, c)?);
    }
    let units = sync_modes(crews(units, args)?, args)?;
    let units = each_at(units, &args.env.memory_limits(), Label::with_memory_limit);
    let units = each_at(units, &args.env.readahead_axis().unwrap_or_default(), Label::with_readahead);
    let entries = config.entries;
    if args.given.contains("count_entries") && args.count_entries > entries {
        bail!(
            "--count-entries {} is more than the run's {entries} entries: give at most {entries}",
            args.count_entries
        );
    }
    let plan = Plan {
        time_budget_s: args.time_budget.map(|d| d.as_secs_f64()),
        target_ci: args.target_ci,
        iterations: args.iterations,
        min_effect: Some(args.min_effect / 100.0),
        count_entries: ((args.with_instructions || args.with_cache) && !args.metric.is_exact())
            .then(|| args.count_entries_of(entries)),
        cache_sim: args.with_cache,
        shard,
        control: control.map(Base::new),
        layouts,
        layout_seed,
        layouts_per_process,
        reference_layouts,
        pairing,
        adaptive: args.adaptive_plan(),
        chunk,
        programs,
        baseline: Some(Base::new(baseline)),
        rounds: args.round_cap(),
        ..Plan::new(args.rounds, args.warmup, args.metric)
    };
    let counter = runner::instruction_counter(&plan)?;
    let engines = args.engine.clone();
    let spec = RunSpec { units, workloads, engines, config, plan, counter, jobs: args.jobs(), judge: args.judge };
    let mut header = Header { c_paired_worker, ..spec.header(tags)? };
    // The programs as compiled for these units: what every start checks.
    header.plan.programs = runner::program::with_compiled(&header.plan.programs, &spec.units);
    // What every worker is told to load is what the header records.
    for u in &spec.units {
        u.check_recorded(&header.tags)?;
    }
    Ok((spec, header, failures))
}

/// With `--suite concurrency`, each unit once per reader count of `--readers`, the Rust
/// engine's only; `--readers` and the concurrency-only metrics refused elsewhere.
fn crews(units: Vec<Unit>, args: &RunArgs) -> Result<Vec<Unit>> {
    if !args.is_concurrency() {
        if args.given.contains("readers") {
            bail!("--readers: reader threads run beside a writer in --suite concurrency only");
        }
        if args.metric.is_crew() {
            bail!("--metric {}: a figure of readers beside a writer; measure --suite concurrency", args.metric);
        }
        return Ok(units);
    }
    if args.engine.contains(&Engine::C) {
        bail!(
            "--suite concurrency runs on the rust engine only (the C twin has no reader threads): leave out --engine"
        );
    }
    if args.metric.is_exact() && !args.metric.is_space() {
        bail!(
            "--metric {}: readers beside a writer are measured by reader-ops, writer-ops, reader-cpu, writer-cpu, time or a space metric",
            args.metric
        );
    }
    let mut readers = args.readers.clone();
    readers.dedup();
    Ok(each_at(units, &readers, Label::with_readers))
}

/// With `--sync` of several modes, each unit once per mode; the I/O metrics refused
/// where nothing is written.
fn sync_modes(units: Vec<Unit>, args: &RunArgs) -> Result<Vec<Unit>> {
    if args.metric.is_io() && args.is_concurrency() {
        bail!("--metric {}: a figure of a write pass's commits; readers beside a writer have none", args.metric);
    }
    let Some(modes) = args.env.sync_axis() else { return Ok(units) };
    if args.is_concurrency() {
        bail!("--sync with several modes: readers beside a writer take one (--sync MODE)");
    }
    Ok(each_at(units, &modes, Label::with_sync))
}

/// Why a run must time each unit's passes whole, in a process of its own: its units differ
/// in how their environments are opened (sync modes, readahead) or in the process's memory
/// (limits);
/// None when they can share one.
fn whole_passes(args: &RunArgs) -> Option<&'static str> {
    if args.env.sync_axis().is_some() {
        Some("--sync with several modes: each mode opens its environments apart")
    } else if !args.env.memory_limit.is_empty() {
        Some("--memory-limit: each unit's process is held to its limit alone")
    } else if args.env.readahead_axis().is_some() {
        Some("--readahead on,off: each setting opens its environments apart")
    } else if args.workload.key_sample.is_some() {
        Some("--key-sample: readKey's passes are fewer gets than a chunked rotation's")
    } else {
        None
    }
}

/// Refuses `--memory-limit` where it cannot be honoured, before anything is built: outside
/// LmdbJava's six (whose read passes start evicted, on either engine), for a count, and on a
/// host that cannot hold a process to each limit (a cgroup of each is made and removed).
fn memory_limits_held(args: &RunArgs, suite: crate::workload::suite::Suite, limits: &[MemoryLimit]) -> Result<()> {
    if limits.is_empty() {
        return Ok(());
    }
    if suite != crate::workload::suite::Suite::LmdbJava {
        bail!("--memory-limit measures LmdbJava's six (each read pass starts with the read database evicted): leave out --suite and --preset");
    }
    if args.metric.is_exact() && !args.metric.is_faults() {
        bail!(
            "--metric {}: a count no memory limit moves; measure time or major-faults under --memory-limit",
            args.metric
        );
    }
    host_holds(limits)
}

/// Refuses `--key-sample` where nothing would take it: a run without readKey, and the C
/// twin, whose readKey gets every key.
fn key_sample_taken(args: &RunArgs, workloads: &[crate::workload::Workload]) -> Result<()> {
    if args.workload.key_sample.is_none() {
        return Ok(());
    }
    if !workloads.contains(&crate::workload::Workload::ReadKey) {
        bail!("--key-sample samples readKey's gets: add readKey to --workloads");
    }
    if args.engine.contains(&Engine::C) {
        bail!("--key-sample runs on the rust engine only (the C twin's readKey gets every key): leave out --engine");
    }
    Ok(())
}

/// That this host can hold a process to each of `limits`: a cgroup of each made and removed.
fn host_holds(limits: &[MemoryLimit]) -> Result<()> {
    if limits.is_empty() {
        return Ok(());
    }
    let controller = runner::memlimit::Controller::find()?;
    for limit in limits {
        runner::memlimit::Limited::new(&controller, limit.0).with_context(|| format!("--memory-limit {limit}"))?;
    }
    Ok(())
}

/// Each unit once at each of `values` (none given: as they are).
fn each_at<T: Copy>(units: Vec<Unit>, values: &[T], with: impl Fn(&Label, T) -> Label) -> Vec<Unit> {
    if values.is_empty() {
        return units;
    }
    units.iter().flat_map(|u| values.iter().map(|v| Unit { label: with(&u.label, *v), ..u.clone() })).collect()
}

/// A resumed run's units at each value of an axis its header declares (none: as they are).
fn at_declared<T: Copy + Ord>(
    units: Vec<Unit>,
    declared: &[record::Declared],
    of: impl Fn(&Label) -> Option<T>,
    with: impl Fn(&Label, T) -> Label,
) -> Vec<Unit> {
    let values: std::collections::BTreeSet<T> = declared.iter().filter_map(|d| of(&d.value)).collect();
    each_at(units, &values.into_iter().collect::<Vec<_>>(), with)
}

/// The unit the run compares every other with: a shard's (the whole run's), `--baseline`,
/// else the first unit as given that built; never the first as sorted,
/// which for commit ids is whichever id sorts first.
fn baseline_of(asked: Option<&str>, shard: Option<&Shard>, tags: &[record::TagStatus]) -> Result<String> {
    // A shard's was found among the whole run's units; a shard that does not measure it
    // (a process per unit) records it for the merged run.
    if let Some(b) = shard.and_then(Shard::baseline) {
        return Ok(b.to_string());
    }
    let mut given: Vec<String> = tags.iter().map(|t| t.label.compared_as().0).collect();
    given.dedup();
    let built =
        |b: &String| tags.iter().any(|t| t.status == record::BuildStatus::Built && t.label.compared_as().0 == *b);
    let Some(asked) = asked else {
        return given.iter().find(|b| built(b)).cloned().context("no unit of this run built");
    };
    let baseline = named_baseline(asked, &given)?;
    if !built(&baseline) {
        bail!("the baseline {baseline} did not build (see the reasons above), so nothing can be compared with it");
    }
    Ok(baseline)
}

/// The unit `--baseline` names among `given`, or an error listing them.
fn named_baseline(asked: &str, given: &[String]) -> Result<String> {
    crate::record::label::find_base(asked, given)
        .with_context(|| format!("--baseline {asked} names no unit of this run; its units: {}", given.join(", ")))
}

/// A new run of `tags` with the plan, configuration, workloads, engines and toolchains
/// that `recorded` (another run) was measured with, into a new file `stem` in `dir`: what
/// extends a history with its own settings. `args` gives only what changes no sample
/// (--git, --jobs).
pub fn measure_recorded(
    recorded: &RunData,
    tags: &str,
    args: &RunArgs,
    (dir, stem): (PathBuf, String),
) -> Result<RunData> {
    let h = &recorded.header;
    let build = super::request::recorded_build(&args.build, recorded);
    let Prepared { tags, units, mut failures, c_paired_worker } =
        prepare_units(tags, &[], &h.engines, &build, h.plan.layouts, h.plan.pairing)?;
    if units.is_empty() {
        bail!("no tag could be built, so nothing can be measured (see the reasons above)");
    }
    let from = recorded.path.as_deref().unwrap_or(std::path::Path::new("the run file"));
    super::program::check_unchanged(&h.plan.programs, from)?;
    let units =
        super::program::compile_all(&h.plan.programs, units, &tags, build.git.as_deref(), args.jobs(), &mut failures)?;
    let baseline = Some(Base::new(baseline_of(None, None, &tags)?));
    let plan = Plan { shard: None, control: None, baseline, ..h.plan.clone() };
    let spec = RunSpec::recorded(&Header { plan, ..h.clone() }, units, args.jobs(), crate::stats::stop::progress)?;
    let mut header = Header { c_paired_worker, ..spec.header(tags)? };
    // The programs as compiled for these units: what every start checks.
    header.plan.programs = runner::program::with_compiled(&header.plan.programs, &spec.units);
    for u in &spec.units {
        u.check_recorded(&header.tags)?;
    }
    let mut writer = create_run_file(None, Existing::Refuse, (dir, stem), &header, failures)?;
    let outcome = spec.start(&mut writer)?;
    finish(&spec, outcome.stopped, &mut writer, &[], args, || None)
}

/// `--shard K/N` over the tags the spec names.
fn shard_of(args: &RunArgs, pairing: record::Pairing) -> Result<Option<Shard>> {
    let Some((k, n)) = args.shard else { return Ok(None) };
    let m = super::manifest()?;
    let git = crate::source::Resolver::from_env(args.build.git.clone())?.git;
    let wants = super::units(&m, &args.tags, &args.source, git.as_deref())?;
    // A shard names its units by label, and a label does not say where a patch or a
    // directory is.
    if let Some(w) = wants.iter().find(|w| matches!(w, Want::Patched { .. } | Want::Local(_))) {
        bail!("--shard: {} is a patched or local unit, which a sharded run cannot hold yet", w.label());
    }
    let labels: Vec<String> = wants.iter().map(|w| w.label()).collect();
    let baseline = match args.baseline.as_deref() {
        Some(asked) => Some(named_baseline(asked, &labels)?),
        None => labels.first().cloned(),
    };
    let shard = Shard::new(k, n, labels.into_iter().map(Base::new).collect(), baseline.map(Base::new))?;
    eprintln!("shard {shard}: {}", bases_text(&shard.measured(pairing), ", "));
    Ok(Some(shard))
}

/// Bases as text, `separator` between them (`,`: as `--tags` lists them).
fn bases_text(bases: &[&Base], separator: &str) -> String {
    bases.iter().map(|b| b.as_str()).collect::<Vec<_>>().join(separator)
}

/// Whether this run measures `tag` (a control is measured by the shard holding its tag).
fn shard_holds(shard: Option<&Shard>, tag: &str) -> bool {
    let Some(s) = shard else { return true };
    let own = s.own();
    let held = own.iter().any(|b| b.as_str() == tag || b.as_str() == crate::manifest::normalize_tag(tag));
    if !held {
        eprintln!("--control {tag}: measured by the shard that holds {tag}, not by shard {s}");
    }
    held
}

/// The units of `tag` again, labelled as its control.
fn control_units(units: &[Unit], tag: &str) -> Result<Vec<Unit>> {
    // A label typed on the command line: read once, as the label grammar reads it.
    let named = [Label::parse(tag), Label::parse(&crate::manifest::normalize_tag(tag))];
    let of: Vec<Unit> = units
        .iter()
        .filter(|u| named.contains(&u.label))
        .map(|u| Unit { label: u.label.control(), ..u.clone() })
        .collect();
    if of.is_empty() {
        let measured: Vec<String> = units.iter().map(|u| u.label.to_string()).collect();
        bail!("--control {tag}: that tag is not measured in this run ({})", measured.join(", "));
    }
    Ok(of)
}

/// After the rounds and their check (unless Ctrl-C `stopped` them): the counting pass the
/// plan asks for, counting what `prior` (the run file's samples so far) has not; then the
/// coverage record `cover` gives, after everything measured; then the run as saved. Ctrl-C
/// in any phase is an error naming it and the command that goes on; in the coverage pass it
/// leaves the record out.
fn finish(
    spec: &RunSpec,
    stopped: Option<Phase>,
    writer: &mut RunWriter,
    prior: &[record::Sample],
    args: &RunArgs,
    cover: impl FnOnce() -> Option<record::RunCoverage>,
) -> Result<RunData> {
    if let Some(phase) = stopped {
        return Err(interrupted(phase, &writer.path, args));
    }
    spec.count_pass(writer, prior)?;
    if runner::interrupted() {
        return Err(interrupted(Phase::Counting, &writer.path, args));
    }
    if let Some(record) = cover().filter(|_| !runner::interrupted()) {
        writer.append(&Record::Coverage(record))?;
    }
    record::load(&writer.path)
}

/// The coverage record of the new run `spec` that `args` asked for: its figure, or why it
/// has none.
fn coverage_of(args: &RunArgs, spec: &RunSpec) -> record::RunCoverage {
    use record::{CoverageOutcome, RunCoverage};
    if args.no_coverage {
        let why = match args.given.contains("no_coverage") {
            true => "--no-coverage",
            false => "a confirming run: the first run measured it",
        };
        eprintln!("coverage: not measured ({why})");
        return RunCoverage { outcome: CoverageOutcome::Skipped };
    }
    let record = super::manifest().and_then(|m| {
        let git = crate::source::Resolver::from_env(args.build.git.clone())?.git;
        let wants = super::units(&m, &args.tags, &args.source, git.as_deref())?;
        let baseline = spec.plan.baseline.as_ref().context("a new run names its baseline")?;
        Ok(super::coverage::of_run(&wants, baseline.as_str(), &args.build, spec))
    });
    record.unwrap_or_else(|e| RunCoverage { outcome: CoverageOutcome::Failed { error: format!("{e:#}") } })
}

/// Ctrl-C stopped `phase` of the run in `path`: what the file holds, and how to go on.
fn interrupted(phase: Phase, path: &std::path::Path, args: &RunArgs) -> anyhow::Error {
    let plural = crate::report::cells::plural;
    let done = match (phase, record::load(path)) {
        (_, Err(e)) => format!("{e:#}"),
        (Phase::Rounds { .. }, Ok(data)) => format!("{} measured", plural(data.completed_rounds() as usize, "round")),
        (Phase::Check(_), Ok(_)) => "every round is measured, the check is not recorded".into(),
        (Phase::Counting, Ok(data)) => {
            let (taken, of) = record::counts_taken(&data.samples);
            format!("every round is measured; {taken} of {of} counts (tag and workload) taken")
        }
    };
    let path = path.display();
    let then = match &args.resume_with {
        Some(Continue::Resume(with)) => {
            format!("{done}; everything measured is in {path}; continue with `lmdb-regress {with} {path}`")
        }
        Some(Continue::Again(advice)) => format!("{done}; everything measured is in {path}, {advice}"),
        None => {
            let flags = super::resume::resume_flags(args, args.tags.contains('+'));
            let later: String = args
                .later
                .iter()
                .map(|l| format!(", then `lmdb-regress run --resume {}{flags}`", l.display()))
                .collect();
            format!(
                "{done}; everything measured is in {path}; continue with `lmdb-regress run --resume {path}{flags}`{later}"
            )
        }
    };
    runner::Interrupted { stage: runner::Stage::Run(phase), then }.into()
}

fn resume(path: &std::path::Path, args: &RunArgs) -> Result<RunData> {
    // The lock first: a second writer fails at once, before anything is read or built.
    let mut writer = RunWriter::reopen(path)?;
    let data = record::load(path)?;
    refuse_unresumable(&data, path)?;
    let left = data.left();
    if let (Some(end), None) = (data.finished(), left) {
        bail!(
            "{} is finished ({} rounds, ended by {} at {}): nothing to resume, nothing appended; \
             `lmdb-regress report {}` shows it",
            path.display(),
            end.rounds,
            end.reason,
            end.finished,
            path.display()
        );
    }
    super::resume::refuse_contradictions(args, &data)?;
    let h = &data.header;
    same_tool(h.environment.tool_sha256.as_deref()).with_context(|| format!("{} cannot be resumed", path.display()))?;
    super::room::check(&h.config, &h.workloads)?;
    let built = h.tags.iter().filter(|t| t.status == record::BuildStatus::Built);
    let mut tags: Vec<&str> = built.map(|t| t.label.base.as_str()).collect();
    tags.dedup();
    let (spec, sources) = super::resume::units(&tags, args, path)?;
    let build = super::request::recorded_build(&args.build, &data);
    // Counting takes the fixed builds: a run left only its counting pass links no layout.
    let layouts = if left == Some(Phase::Counting) { record::Layouts::Fixed } else { h.plan.layouts };
    super::program::check_unchanged(&h.plan.programs, path)?;
    let Prepared { tags: built, units, mut failures, c_paired_worker, .. } =
        prepare_units(&spec, &sources, &h.engines, &build, layouts, h.plan.pairing)?;
    let git = build.git.as_deref();
    let mut units = super::program::compile_all(&h.plan.programs, units, &built, git, args.jobs(), &mut failures)?;
    same_paired_worker(c_paired_worker.as_ref(), h.c_paired_worker.as_ref())
        .with_context(|| format!("{} cannot be resumed", path.display()))?;
    // A control is no tag of its own: the plan says which tag has one (older files: the samples).
    let held = h.plan.control.as_ref().map(Base::as_str).filter(|c| shard_holds(h.plan.shard.as_ref(), c));
    let sampled = data.samples.iter().filter_map(|s| s.unit.controlled()).map(|l| l.to_string());
    let mut controlled: Vec<String> = held.map(str::to_string).into_iter().chain(sampled).collect();
    controlled.sort();
    controlled.dedup();
    for base in controlled {
        units.extend(control_units(&units, &base)?);
    }
    let units = at_declared(units, &h.units, |l| l.readers, Label::with_readers);
    let units = at_declared(units, &h.units, |l| l.sync, Label::with_sync);
    let units = at_declared(units, &h.units, |l| l.memory_limit, Label::with_memory_limit);
    let units = at_declared(units, &h.units, |l| l.readahead, Label::with_readahead);
    let limits: Vec<MemoryLimit> = units.iter().filter_map(|u| u.label.memory_limit).collect();
    host_holds(&limits).with_context(|| format!("{} cannot be resumed", path.display()))?;
    // Before anything is appended: the builds are the ones the earlier sessions measured.
    for u in &units {
        u.check_recorded(&h.tags).with_context(|| format!("{} cannot be resumed", path.display()))?;
    }
    let spec = RunSpec::recorded(h, units, args.jobs(), args.judge)?;
    spec.check_places(&h.places).with_context(|| format!("{} cannot be resumed", path.display()))?;
    eprintln!("resuming {}: {}", path.display(), resumed_from(left, h.plan.rounds));
    writer.cut_torn_line()?;
    for f in failures {
        writer.append(&Record::Failure(f))?;
    }
    let stopped = match left {
        Some(Phase::Counting) => None,
        _ => spec.resume(&data, &mut writer)?.stopped,
    };
    finish(&spec, stopped, &mut writer, &data.samples, args, || None)
}

/// Where a resumed run goes on, in words.
fn resumed_from(left: Option<Phase>, rounds: Option<u32>) -> String {
    match (left, rounds) {
        (Some(Phase::Rounds { from }), None) => {
            format!("at round {}, until its budget or its decisions end it", from + 1)
        }
        (Some(Phase::Rounds { from }), Some(rounds)) if from < rounds => format!("at round {} of {rounds}", from + 1),
        (Some(Phase::Rounds { .. }), _) => "every round is measured; its end record is left".into(),
        (Some(phase @ Phase::Check(_)), _) => format!("every round is measured; {phase} is left"),
        (Some(Phase::Counting) | None, _) => "its rounds are complete; the instruction-counting pass is left".into(),
    }
}

/// Run files that `run --resume` does not continue, with what does: a layout study, which
/// measures one layout per label (it is measured again with its seed), and a merged file,
/// whose runs each resume on their own.
fn refuse_unresumable(data: &RunData, path: &std::path::Path) -> Result<()> {
    let h = &data.header;
    if let Some(study) = &h.plan.layout_study {
        let mut again = format!(
            "lmdb-regress layouts --tag {} --count {}{} --warmup {}",
            study.tag,
            study.layouts.len(),
            h.plan.rounds.map_or(String::new(), |r| format!(" --rounds {r}")),
            h.plan.warmup
        );
        if let Some(seed) = h.plan.layout_seed {
            again += &format!(" --layout-seed {seed}");
        }
        if h.workloads.len() != crate::workload::Workload::ALL.len() {
            again +=
                &format!(" --workloads {}", h.workloads.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(","));
        }
        if h.engines != [Engine::Rust] {
            again += &format!(" --engine {}", h.engines.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(","));
        }
        bail!(
            "{} is a layout study (`lmdb-regress layouts`), which cannot be resumed: `lmdb-regress report {}` \
             renders its {} (marked partial), and `{again}` measures the same layouts anew (with the \
             study's workload flags, and another --out)",
            path.display(),
            path.display(),
            crate::report::cells::plural(data.completed_rounds() as usize, "round")
        );
    }
    if !h.parts.is_empty() {
        let files: Vec<&str> = h.parts.iter().map(|p| p.file.as_str()).collect();
        bail!(
            "{} was merged from {} ({}): a merged file is not resumed; resume each run it was merged \
             from that is not finished (`lmdb-regress run --resume RUN`), then merge them again",
            path.display(),
            crate::report::cells::plural(files.len(), "run"),
            files.join(", ")
        );
    }
    Ok(())
}

pub fn run(args: &RunArgs) -> Result<()> {
    if args.preset.as_deref() == Some("list") {
        print!("{}", crate::workload::suite::describe_presets());
        return Ok(());
    }
    let format = refuse_before_measuring(args)?;
    let data = measure(args)?;
    let mut summaries = None;
    let shown = show(args, &data, format, &mut summaries);
    if let Some(rows) = summaries {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    }
    match shown? {
        Some(outcome) => outcome.conclude(),
        None => Ok(()),
    }
}

/// What `run` refuses before anything is built or measured; the format its report is printed in.
pub fn refuse_before_measuring(args: &RunArgs) -> Result<crate::report::Format> {
    refuse_confirm_with_resume(args)?;
    refuse_confirm_of_own_code(args)?;
    let format = args.format.unwrap_or(crate::report::Format::Markdown);
    crate::report::stdout_format(&[format])?;
    Ok(format)
}

/// The gate over the run `data` (when `--fail-on` asks), then its report on stdout in
/// `format`, or with `--summary-json` its summaries added to `summaries` (the caller
/// prints them); an error naming every failure when nothing was measured. The gate's
/// outcome is the caller's to conclude.
pub fn show(
    args: &RunArgs,
    data: &RunData,
    format: crate::report::Format,
    summaries: &mut Option<Vec<crate::report::SummaryRow>>,
) -> Result<Option<gate::GateOutcome>> {
    let model = crate::report::model::build(data, None)?;
    // The gate before the report, which a pull request's document opens with.
    let outcome = match args.gate.fail_on {
        Some(fail_on) if !data.samples.is_empty() => Some(gate(args, data, &model, fail_on)?),
        _ => None,
    };
    if args.summary_json {
        summaries.get_or_insert_with(Vec::new).extend(crate::report::summary_json(data));
    } else {
        let github = crate::report::github::Github::of_job(outcome.clone(), data.path.as_slice());
        let text = crate::report::render_with(&model, format, &github)?;
        std::io::Write::write_all(&mut std::io::stdout().lock(), &text)?;
        if format == crate::report::Format::Github {
            super::job_summary(&String::from_utf8_lossy(&text))?;
        }
    }
    if data.samples.is_empty() {
        let problems = crate::report::cells::problem_lines(&model);
        for line in &problems {
            eprintln!("{}", crate::report::names::plain(line));
        }
        if problems.is_empty() && !model.not_applicable.is_empty() {
            bail!(
                "no sample was measured: none of the run's workloads applies to any of its units (the report \
                 says which and why)"
            );
        }
        if problems.is_empty() {
            bail!("no sample was measured, and no failure was recorded");
        }
        bail!("no sample was measured; every failure is listed above");
    }
    Ok(outcome)
}

/// `--confirm` measures again with the flags given, which a resumed run does not follow
/// (its file's plan does): said before anything is measured.
pub fn refuse_confirm_with_resume(args: &RunArgs) -> Result<()> {
    if args.confirm && args.resume.is_some() {
        bail!(
            "--confirm measures the failing comparisons again with the flags given, and a resumed run keeps \
             its file's: resume without --confirm, or confirm with a new run"
        );
    }
    Ok(())
}

/// `--confirm` names the units it measures again by their labels, and a label does not say
/// where a patch or a directory is: refused before anything is measured, as `--shard` is.
fn refuse_confirm_of_own_code(args: &RunArgs) -> Result<()> {
    if !args.confirm {
        return Ok(());
    }
    let m = super::manifest()?;
    let git = crate::source::Resolver::from_env(args.build.git.clone())?.git;
    let wants = super::units(&m, &args.tags, &args.source, git.as_deref())?;
    match wants.iter().find(|w| matches!(w, Want::Patched { .. } | Want::Local(_))) {
        Some(w) => bail!("--confirm: {} is a patched or local unit, which a confirming run cannot name yet", w.label()),
        None => Ok(()),
    }
}

/// The gate over `model`, the report of `data` as `args` measured it; with `--confirm`, its
/// failures measured again in a second, independent run, so that only what both runs fail
/// fails.
pub fn gate(args: &RunArgs, data: &RunData, model: &ReportModel, fail_on: FailOn) -> Result<gate::GateOutcome> {
    let first = gate::of_report(model, fail_on);
    if !args.confirm || first.failed().next().is_none() {
        return Ok(first);
    }
    let again = confirming(args, data, model, &first);
    let tags: Vec<&str> = again.tags.split(',').filter(|t| *t != model.baseline).collect();
    eprintln!(
        "{} beyond the gate {fail_on}: measuring {} again in a second run ({} against {})",
        crate::report::cells::plural(first.failed().count(), "comparison"),
        again.workloads,
        tags.join(", "),
        model.baseline
    );
    let second = measure(&again)?;
    let model = crate::report::model::build(&second, Some(&model.baseline))?;
    Ok(first.confirmed_by(&gate::of_report(&model, fail_on)))
}

/// The run that measures `first`'s failures again: the baseline and the failing tags, the
/// failing workloads and engines, every other flag as given, into a file of its own beside
/// the first run's. Coverage is exact and the first run has it: not measured again.
fn confirming(args: &RunArgs, data: &RunData, model: &ReportModel, first: &gate::GateOutcome) -> RunArgs {
    let failed = first.failed_subjects();
    let mut tags = vec![model.baseline.clone()];
    let mut workloads: Vec<String> = Vec::new();
    let mut engine: Vec<Engine> = Vec::new();
    for s in failed {
        let base = s.tag.base.clone();
        if !tags.contains(&base) {
            tags.push(base);
        }
        if !workloads.contains(&s.workload.to_string()) {
            workloads.push(s.workload.to_string());
        }
        if !engine.contains(&s.engine) {
            engine.push(s.engine);
        }
    }
    let beside = data.path.as_deref().and_then(|p| {
        let stem = p.file_stem()?.to_string_lossy().into_owned();
        Some((p.parent()?.to_path_buf(), format!("{stem}-confirm")))
    });
    RunArgs {
        tags: tags.join(","),
        workloads: workloads.join(","),
        engine,
        out: None,
        force: false,
        resume: None,
        shard: None,
        control: None,
        baseline: Some(model.baseline.clone()),
        no_coverage: true,
        default_out: Some(beside.unwrap_or_else(|| default_out("confirm"))),
        ..args.clone()
    }
}
