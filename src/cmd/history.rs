//! `lmdb-regress history`: the performance history of a range of commits. The history is a
//! run (the run pipeline, its run file, resume, shards and merge) whose units are commits;
//! this command picks the commits and renders the result in commit order.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::args::BuildArgs;
use super::request::RunArgs;
use crate::record::{self, Base, Engine, Metric};
use crate::report::document;
use crate::report::gate::{Against, FailOn, GateOutcome};
use crate::report::history::{its_of, History, Point};
use crate::report::render_shown as render;
use crate::report::Format;
use crate::source::GitRepo;
use crate::workload::WorkloadConfig;

#[derive(clap::Args, Debug, Clone)]
pub struct HistoryArgs {
    /// A..B: the commits after A up to B on B's first-parent line that touch liblmdb's
    /// library sources (tags, branches or commit ids of --git); A is measured as the start.
    #[arg(long, value_name = "A..B")]
    pub range: String,
    /// Where history.txt, history.json and history.html (and the run file) go.
    #[arg(long, default_value = "reports/history")]
    pub out_dir: PathBuf,
    /// Render the history from this run file (e.g. shards joined by `merge`) instead of measuring.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Extend this saved history (its history.json) with the commits of --range after its
    /// last one: only those are measured, with the settings of its run file; its files are
    /// rewritten only once they are.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["from", "out_dir", "resume", "shard"])]
    pub extend: Option<PathBuf>,
    /// Extend a history measured on another CPU model than this machine's (refused without
    /// it: libc picks its routines by CPU, so counts of the two may differ by that alone).
    #[arg(long, requires = "extend")]
    pub allow_other_cpu: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

/// What a history writes into --out-dir beside its run file, in the order they are placed:
/// history.json, which names the run file, last.
const OUTPUTS: [&str; 3] = ["history.txt", "history.html", "history.json"];

/// The history's files, in [`OUTPUTS`]' order.
fn documents(history: &History) -> Result<Vec<Vec<u8>>> {
    [Format::Text, Format::Html, Format::Json]
        .into_iter()
        .map(|f| Ok(render(history, f, &Default::default())?.into_bytes()))
        .collect()
}

/// The range's start and its commits, each as a point labelled by its first 10 digits.
fn points(repo: &GitRepo, range: &str) -> Result<Vec<Point>> {
    let Some((a, b)) = range.split_once("..").filter(|(a, b)| !a.is_empty() && !b.is_empty()) else {
        bail!("--range {range:?} is not A..B (e.g. LMDB_0.9.17..LMDB_0.9.33, or two commit ids)");
    };
    let (start, end) = (repo.resolve(a)?, repo.resolve(b)?);
    if start == end {
        bail!("--range {range}: {a} and {b} are the same commit ({start}), so the range holds none");
    }
    if repo.is_ancestor(&end, &start)? {
        bail!("--range {range} runs backwards: {b} is older than {a} (give {b}..{a})");
    }
    let commits = repo.commits_touching_library(&start, &end)?;
    if commits.is_empty() {
        bail!("no commit after {a} up to {b} on {b}'s first-parent line touches liblmdb's library sources");
    }
    std::iter::once(start)
        .chain(commits)
        .map(|id| {
            let info = repo.info(&id)?;
            Ok(Point {
                label: id[..10].to_string(),
                its: its_of(&info.subject),
                subject: info.subject,
                commit: id,
                skipped: None,
            })
        })
        .collect()
}

pub fn run(args: &HistoryArgs) -> Result<()> {
    let git = crate::source::Resolver::from_env(args.run.build.git.clone())?.git;
    let Some(git) = git else {
        bail!("history needs --git PATH (or LMDB_GIT): a clone of OpenLDAP's or LMDB's repository")
    };
    if args.run.given.contains("tags") {
        bail!("history measures the commits of --range; --tags is run's option, not history's");
    }
    if let Some(f) = args.run.format {
        crate::report::document::refuse_unshown(f)?;
    }
    // By instructions (history's default) adaptive rounds do not apply.
    let by_time = args.run.given.contains("metric") && !args.run.metric.is_exact();
    if by_time && args.run.adaptive == record::Adaptive::On {
        bail!(
            "history judges each step between neighbouring commits, and adaptive rounds stop measuring a \
             commit once its comparison with the range's start is decided, leaving its steps to the rounds both \
             happened to share: run history without --adaptive (every commit in every round)"
        );
    }
    let repo = GitRepo::open(&git)?;
    let points = points(&repo, &args.range)?;
    if let Some(file) = &args.extend {
        return extend(args, file, points);
    }
    let existing = crate::files::Existing::forced(args.run.force);
    let shard = args.run.shard.is_some() && args.from.is_none();
    super::run::refuse_confirm_with_resume(&args.run)?;
    if args.run.confirm && shard {
        bail!("--confirm measures a history's failing steps again, and a shard's history has no steps to judge");
    }
    if shard && args.run.gate.fail_on.is_some() {
        bail!(
            "a shard measures part of a history, whose steps the gate cannot judge: `merge` the shards' run \
             files, then give --fail-on to `history --from MERGED`"
        );
    }
    // Said before anything is measured.
    let outputs: Vec<PathBuf> = OUTPUTS.iter().map(|name| args.out_dir.join(name)).collect();
    for out in outputs.iter().filter(|_| !shard) {
        crate::files::refuse_existing(out, existing)?;
    }
    if let Some(file) = args.from.as_ref().or(args.run.resume.as_ref()) {
        crate::files::refuse_inputs(outputs.iter().map(PathBuf::as_path), &[file])?;
        of_range(&record::load(file)?, file, &args.range, &points, args.from.is_none())?;
    }
    let data = match &args.from {
        Some(file) => record::load(file)?,
        None => crate::cmd::run::measure(&history_run(args, &git, &points))?,
    };
    if shard {
        eprintln!("a shard's history is partial: `merge` the shards' run files, then `history --from MERGED`");
        return Ok(());
    }
    let model = crate::report::model::build(&data, None)?;
    let mut history = History::of(&args.range, points, &model);
    history.run = data.path.as_deref().map(|p| run_name(p, &args.out_dir));
    attribute_steps(&mut history, &args.run.build, &data.header.config, |_| true);
    std::fs::create_dir_all(&args.out_dir).with_context(|| format!("cannot create {}", args.out_dir.display()))?;
    super::write_set(&outputs.into_iter().zip(documents(&history)?).collect::<Vec<_>>(), existing)?;
    let again = |points: &[Point], (workloads, engine): (String, Vec<Engine>)| {
        let run = RunArgs { workloads, engine, ..history_run(args, &git, points) };
        // Coverage is exact and the first run has it.
        let out = Some((args.out_dir.clone(), "history-confirm".into()));
        let run = RunArgs { resume_with: None, no_coverage: true, default_out: out, ..run };
        crate::cmd::run::measure(&run)
    };
    let outcome = match args.run.gate.fail_on {
        Some(fail_on) => Some(gate(&history, fail_on, |_| true, args.run.confirm, again)?),
        None => None,
    };
    conclude(&history, data.path.as_slice(), args.run.format, outcome)
}

/// `history` printed as `--format` says (80-column text by default), then the gate's exit.
fn conclude(
    history: &History,
    run_files: &[PathBuf],
    format: Option<crate::report::Format>,
    outcome: Option<GateOutcome>,
) -> Result<()> {
    let github = crate::report::github::Github::of_job(outcome.clone(), run_files);
    super::print_shown_with(history, format.unwrap_or(Format::Text), &github)?;
    match outcome {
        Some(outcome) => outcome.conclude(),
        None => Ok(()),
    }
}

/// The gate over `history`, judging the commits `gated` names. With `confirm`, its failing
/// steps (each a commit against the one before it) are measured again by `measure`, in a
/// second, independent run of those commits and the failing workloads and engines alone,
/// so that a step fails only when both runs fail it.
fn gate(
    history: &History,
    fail_on: FailOn,
    gated: impl Fn(&str) -> bool,
    confirm: bool,
    measure: impl FnOnce(&[Point], (String, Vec<Engine>)) -> Result<record::RunData>,
) -> Result<GateOutcome> {
    let first = crate::report::gate::of_history(history, fail_on, &gated);
    if !confirm || first.failed().next().is_none() {
        return Ok(first);
    }
    let failed = first.failed_subjects();
    // Each failing commit with the one before it, in the history's order: consecutive in the
    // second run too, so that each is compared with the same commit as in the first.
    let mut wanted: BTreeSet<&str> = BTreeSet::new();
    let (mut workloads, mut engines): (Vec<String>, Vec<Engine>) = (Vec::new(), Vec::new());
    for s in &failed {
        wanted.insert(&s.tag.base);
        if let Against::Tag(before) = &s.against {
            wanted.insert(before);
        }
        if !workloads.contains(&s.workload.to_string()) {
            workloads.push(s.workload.to_string());
        }
        if !engines.contains(&s.engine) {
            engines.push(s.engine);
        }
    }
    let points: Vec<Point> = history
        .points
        .iter()
        .filter(|p| wanted.contains(short(&p.commit)))
        .map(|p| Point { skipped: None, ..p.clone() })
        .collect();
    let steps: Vec<String> = failed.iter().map(|s| s.tag.to_string()).collect::<BTreeSet<_>>().into_iter().collect();
    eprintln!(
        "{} beyond the gate {fail_on}: measuring {} again in a second run ({} against the commit before {})",
        crate::report::cells::plural(first.failed().count(), "comparison"),
        workloads.join(","),
        steps.join(", "),
        if steps.len() == 1 { "it" } else { "each" }
    );
    let data = measure(&points, (workloads.join(","), engines))?;
    let model = crate::report::model::build(&data, None)?;
    let second = History::of(&history.range, points, &model);
    let again = crate::report::gate::of_history(&second, fail_on, |c| steps.iter().any(|s| s == short(c)));
    Ok(first.confirmed_by(&again))
}

/// How a history names its run file: by its name when it lies in the history's folder,
/// else by its path.
fn run_name(run: &Path, dir: &Path) -> String {
    let beside = run.parent().zip(run.file_name()).filter(|(parent, _)| same_dir(parent, dir));
    match beside {
        Some((_, name)) => name.to_string_lossy().into_owned(),
        None => std::path::absolute(run).unwrap_or_else(|_| run.to_path_buf()).display().to_string(),
    }
}

/// What to do after Ctrl-C stopped an extension: its run file never joins the history
/// (only a whole extension is merged into it), so the extension is made again.
fn extend_again(args: &HistoryArgs, file: &Path) -> super::request::Continue {
    let git = args.run.build.git.as_ref().map_or(String::new(), |g| format!(" --git {}", g.display()));
    super::request::Continue::Again(format!(
        "which never joins the history: {} is as it was; extend it again with `lmdb-regress history{git} \
         --range {} --extend {}` (the new commits are measured anew; the interrupted run's file may be removed)",
        file.display(),
        args.range,
        file.display()
    ))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(if p.as_os_str().is_empty() { Path::new(".") } else { p }).ok();
    canonical(a).is_some_and(|a| Some(a) == canonical(b))
}

/// `history --extend FILE`: the commits of `points` after the saved history's last one,
/// measured with its run file's settings; then its run joined with theirs (by `merge`, which
/// checks that every setting agrees) and its files written again, all or none.
fn extend(args: &HistoryArgs, file: &Path, points: Vec<Point>) -> Result<()> {
    let saved: History = document::read(&crate::files::read_text(file, "history")?, &file.display().to_string())
        .with_context(|| format!("{} is not a history.json written by `lmdb-regress history`", file.display()))?;
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let Some(run) = saved.run.as_deref().map(|r| dir.join(r)) else {
        bail!(
            "{} names no run file (it was written before histories could be extended): measure its range again \
             with `history --range {}`",
            file.display(),
            saved.range
        )
    };
    let old = record::load(&run)?;
    // Its run must be its own: the saved points' commits, each measured there.
    of_range(&old, &run, &saved.range, &saved.points, false).map_err(|e| {
        anyhow::anyhow!(
            "{} cannot be extended: its `run` names {}, which is not this history's own run file ({e}); \
             restore the run file it was written with, or measure the range again with `history --range {}`",
            file.display(),
            run.display(),
            saved.range
        )
    })?;
    // Said before anything is measured: a folder in the way of a file to be rewritten.
    for out in OUTPUTS {
        crate::files::refuse_existing(&dir.join(out), crate::files::Existing::Replace)?;
    }
    if !old.header.plan.metric.is_exact() {
        bail!(
            "{} is a history by time: its new commits would be compared with the saved ones across two runs, \
             which measures the moments, not LMDB; extend histories by instructions, or measure the range again",
            file.display()
        );
    }
    same_cpu(&old, &run, args.allow_other_cpu)?;
    let given = RunArgs { given: extension_flags(&args.run), ..args.run.clone() };
    super::resume::refuse_contradictions(&given, &old)?;
    let new = new_points(&saved, &points, &args.range, file)?;
    let last = short(&saved.points[saved.points.len() - 1].commit).to_string();
    if new.is_empty() {
        eprintln!(
            "{}: no commit after {last} up to the end of --range {}: nothing to measure, and nothing for a gate to judge",
            file.display(),
            args.range
        );
        return Ok(());
    }
    let merged_run = dir.join(format!("history-through-{}.jsonl", short(&points[points.len() - 1].commit)));
    let existing = crate::files::Existing::forced(args.run.force);
    crate::files::refuse_existing(&merged_run, existing)?;
    let tags: Vec<&str> = new.iter().map(|p| p.label.as_str()).collect();
    eprintln!("extending {}: {} after {last}", file.display(), crate::report::cells::plural(new.len(), "new commit"));
    let added = crate::cmd::run::measure_recorded(
        &old,
        &tags.join(","),
        &RunArgs { resume_with: Some(extend_again(args, file)), ..args.run.clone() },
        (dir.clone(), format!("history-after-{last}")),
    )?;
    let merged = crate::runner::merge::merge(vec![old, added], false)?;
    let model = crate::report::model::build(&merged, None)?;
    let mut history = History::of(&args.range, points, &model);
    history.run = Some(run_name(&merged_run, &dir));
    history.new_from = Some(saved.points.len());
    let new: Vec<String> = history.points[saved.points.len()..].iter().map(|p| p.commit.clone()).collect();
    // Attributed from the builds the history measured, whatever flags this command was given.
    let build = super::request::recorded_build(&args.run.build, &merged);
    attribute_steps(&mut history, &build, &merged.header.config, |c| new.iter().any(|n| n == c));
    // Placed in this order, and taken back whole should one not go: history.json, which
    // names the run file, goes after it, so that it never names a file not yet in place.
    let mut files = vec![(merged_run.clone(), merged.text()?.into_bytes())];
    files.extend(OUTPUTS.iter().map(|name| dir.join(name)).zip(documents(&history)?));
    // The saved history's own files are what an extension replaces.
    super::write_set(&files, crate::files::Existing::Replace)?;
    let again = |points: &[Point], _: (String, Vec<Engine>)| {
        // With the saved run's settings, as the extension was measured; every workload of it.
        let tags: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
        let recorded = record::load(&run)?;
        crate::cmd::run::measure_recorded(
            &recorded,
            &tags.join(","),
            &args.run,
            (dir.clone(), "history-confirm".into()),
        )
    };
    let outcome = match args.run.gate.fail_on {
        Some(fail_on) => Some(gate(&history, fail_on, |c| history.is_new(c), args.run.confirm, again)?),
        None => None,
    };
    conclude(&history, &[merged_run], args.run.format, outcome)
}

/// Functions a history names for each step it attributes.
const ATTRIBUTED: usize = 5;

/// Each step of a history by a count (the commits `wanted` names) with the functions that
/// carry it: the commit before and the step's own, profiled as `explain` profiles them on
/// the history's own configuration, so that the totals are the history's counts. A step
/// whose builds cannot be profiled is said and left without them.
fn attribute_steps(history: &mut History, build: &BuildArgs, config: &WorkloadConfig, wanted: impl Fn(&str) -> bool) {
    if !history.metric.is_exact() {
        return;
    }
    let label = |points: &[Point], commit: &str| points.iter().find(|p| p.commit == commit).map(|p| p.label.clone());
    let points = history.points.clone();
    for s in &mut history.series {
        for st in s.steps.iter_mut().filter(|st| wanted(&st.commit)) {
            let (Some(before), Some(after)) = (label(&points, &st.after), label(&points, &st.commit)) else { continue };
            let workloads = [s.workload];
            let ask = crate::cmd::explain::Ask {
                workloads: &workloads,
                config,
                build,
                engine: s.engine,
                cache: false,
                top: ATTRIBUTED,
                listed: 0,
            };
            match crate::cmd::explain::explain_builds(&format!("{before},{after}"), &ask) {
                Ok(e) => {
                    let functions = e.model.workloads.into_iter().next().map(|w| w.functions).unwrap_or_default();
                    st.functions = functions.into_iter().take(ATTRIBUTED).collect();
                }
                Err(e) => eprintln!("note: step {after} of {} not attributed to functions: {e:#}", s.workload),
            }
        }
    }
}

/// Refuses to extend a history measured on another CPU model than this machine's, unless
/// `allowed`: the new commits are compared with the saved ones across the two machines, and
/// libc picks its string routines by CPU, so their counts may differ by that alone.
fn same_cpu(saved: &record::RunData, run: &Path, allowed: bool) -> Result<()> {
    let machine = crate::environment::Environment::capture();
    let here = machine.cpu();
    let mut saved_on: Vec<&crate::environment::Environment> =
        saved.header.parts.iter().map(|p| &p.environment).collect();
    if saved_on.is_empty() {
        saved_on.push(&saved.header.environment);
    }
    let mut others: Vec<String> = saved_on.into_iter().filter(|e| !e.same_cpu(&machine)).map(|e| e.cpu()).collect();
    others.sort_unstable();
    others.dedup();
    match (others.is_empty(), allowed) {
        (true, _) => Ok(()),
        (false, true) => {
            eprintln!(
                "note: {} was measured on {}, this machine is {here}: extending it anyway (--allow-other-cpu); \
                 its new commits' counts may differ from the saved ones' by the CPU too",
                run.display(),
                others.join("; ")
            );
            Ok(())
        }
        (false, false) => bail!(
            "{} was measured on {}, and this machine is {here}: the new commits would be compared with the \
             saved ones across two CPU models, whose counts may differ by the CPU alone (libc picks its string \
             routines by CPU); extend it on a machine of that model, or give --allow-other-cpu to extend it anyway",
            run.display(),
            others.join("; ")
        ),
    }
}

/// The points of `range` after the saved history's: the saved commits must be where the
/// range begins, on its first-parent line.
fn new_points(saved: &History, points: &[Point], range: &str, file: &Path) -> Result<Vec<Point>> {
    let differs = saved.points.iter().zip(points).position(|(s, p)| s.commit != p.commit);
    match differs {
        None if points.len() >= saved.points.len() => Ok(points[saved.points.len()..].to_vec()),
        None => bail!(
            "--range {range} ends before {} does ({} commits, the saved history {}): give a range that reaches past its last commit",
            file.display(),
            points.len(),
            saved.points.len()
        ),
        Some(i) => bail!(
            "--range {range} is not the line {} was measured on: its commit {} is {} there, {} in the range; \
             give its own start ({}) and an end on the same first-parent line",
            file.display(),
            i + 1,
            short(&saved.points[i].commit),
            short(&points[i].commit),
            saved.range
        ),
    }
}

/// The flags given to an extension that could change what a sample measures: the
/// history's own (range, extend) and those of the gate change nothing.
fn extension_flags(run: &RunArgs) -> BTreeSet<String> {
    let own = ["range", "extend", "allow_other_cpu", "out_dir", "from", "force", "confirm"];
    run.given.iter().filter(|id| !own.contains(&id.as_str())).cloned().collect()
}

/// Refuses a run file that is no history of `range`: its units must be the range's
/// commits, every one (another range's file, or a run of tags, is not; nor is a shard's
/// file, unless `resuming` it: then its plan's list of the whole run's tags counts).
fn of_range(
    data: &record::RunData,
    file: &std::path::Path,
    range: &str,
    points: &[Point],
    resuming: bool,
) -> Result<()> {
    let measured: BTreeSet<&str> = match &data.header.plan.shard {
        Some(shard) if resuming => shard.tags.iter().map(Base::as_str).collect(),
        _ => data.header.tags.iter().map(|t| t.label.base.as_str()).collect(),
    };
    let commits: BTreeSet<&str> = points.iter().map(|p| p.label.as_str()).collect();
    if measured == commits {
        return Ok(());
    }
    let some = |set: Vec<&&str>| {
        let shown: Vec<&str> = set.iter().take(3).map(|s| **s).collect();
        format!(
            "{}{}",
            shown.join(", "),
            if set.len() > 3 { format!(", … ({} in all)", set.len()) } else { String::new() }
        )
    };
    let missing: Vec<&&str> = commits.difference(&measured).collect();
    let extra: Vec<&&str> = measured.difference(&commits).collect();
    let what = match (missing.is_empty(), extra.is_empty()) {
        (_, false) if missing.len() == commits.len() => {
            format!("it measures {}, none of the range's {} commits", some(extra), commits.len())
        }
        (_, false) => format!("it measures {}, which the range does not hold", some(extra)),
        (false, true) => format!(
            "it lacks {} of the range's {} commits ({}): a shard's file? `merge` every shard first",
            missing.len(),
            commits.len(),
            some(missing)
        ),
        (true, true) => unreachable!("the sets differ"),
    };
    bail!("{} is not a history of {range}: {what}; give the --range it was measured with", file.display())
}

/// The run a history measures: its commits as tags, by instructions unless told otherwise;
/// history's own flags are no run's, and are given again to continue it.
fn history_run(args: &HistoryArgs, git: &std::path::Path, points: &[Point]) -> RunArgs {
    let mut run = args.run.clone();
    run.given.retain(|id| !["range", "out_dir", "from"].contains(&id.as_str()));
    run.resume_with = Some(super::request::Continue::Resume(format!(
        "history --git {} --range {} --out-dir {} --resume",
        git.display(),
        args.range,
        args.out_dir.display()
    )));
    run.tags = points.iter().map(|p| p.label.as_str()).collect::<Vec<_>>().join(",");
    if !run.given.contains("metric") {
        run.metric = Metric::Instructions;
    }
    if !run.metric.is_exact() {
        eprintln!(
            "history by time: each of {} commits is built, its objects compiled and its layouts linked for each of \
             {} rounds (up to 16 a round where --layouts-per-process applies), every round runs every commit; \
             counting instructions (the default) needs one pass",
            points.len(),
            run.rounds
        );
    }
    run.default_out = Some((args.out_dir.clone(), "history".into()));
    run
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}
