//! `run --suite all`: each suite of `--suite all` measured as a run of its own, one after
//! another, over the same tags and builds, each into its own run file, so that every
//! comparison stays inside one run. Every run file is written with its header before any
//! is measured: each is resumed on its own (`run --resume FILE`), as any run is.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};

use super::request::RunArgs;
use super::run::{self, NewRun};
use super::suite_budget::{name, Budgets};
use crate::record::{Engine, Metric};
use crate::report::cells::plural;
use crate::workload::suite::{Suite, SuiteChoice};

/// One suite's place in the set: its run's flags, or why the flags given leave it out.
struct SuiteRun {
    suite: Suite,
    run: Result<RunArgs, String>,
    /// What of the flags given applies to it otherwise than as given.
    notes: Vec<String>,
}

/// The lmdb suite's entries in a time run of `--suite all` unless `--entries` says: its
/// counting size. A time round of its 86 rows costs some 39 times as much at 100,000
/// entries (about 45 minutes over 22 tags at load 8), more than any share of 15; at 10,000
/// it took 32 s at load 3–4 (reports/README.md, "The --suite all budget").
pub const LMDB_TIME_ENTRIES: u32 = crate::workload::suite::LMDB_COUNT_ENTRIES;

pub fn run(args: &RunArgs) -> Result<()> {
    if args.resume.is_some() {
        bail!("--suite all writes a run file per suite: resume each on its own (`lmdb-regress run --resume FILE`)");
    }
    if !args.env.memory_limit.is_empty() {
        bail!("--memory-limit measures LmdbJava's six: give --suite lmdbjava");
    }
    let format = run::refuse_before_measuring(args)?;
    let (parts, budgets) = parts(args)?;
    if let Some(b) = &budgets {
        eprintln!("{}", b.rule());
    }
    for p in &parts {
        eprintln!("{}", p.describe());
    }
    let runs: Vec<(Suite, RunArgs)> = parts.into_iter().filter_map(|p| p.run.ok().map(|r| (p.suite, r))).collect();
    if runs.is_empty() {
        bail!("--suite all: the flags given leave every suite out (see above)");
    }
    for (_, r) in &runs {
        if let Some(out) = &r.out {
            crate::files::refuse_existing(out, crate::files::Existing::forced(r.force))?;
        }
    }
    let mut created = Vec::new();
    for (suite, r) in &runs {
        crate::progress::set_heading(Some(name(*suite).to_string()));
        created.push(NewRun::create(r)?);
    }
    let paths: Vec<PathBuf> = created.iter().map(|c| c.path().to_path_buf()).collect();
    for (i, new) in created.iter_mut().enumerate() {
        new.then_resume(paths[i + 1..].to_vec());
    }
    measure_each(created, &runs, budgets.as_ref(), format)
}

/// Measures each run in turn, its report printed as `run` prints one; an interruption
/// ends them all (its message names every file left to resume). With `budgets`, each run
/// is given its share of what is left as it starts.
fn measure_each(
    created: Vec<NewRun>,
    runs: &[(Suite, RunArgs)],
    budgets: Option<&Budgets>,
    format: crate::report::Format,
) -> Result<()> {
    let mut summaries = None;
    let mut outcomes = Vec::new();
    let mut failed = Vec::new();
    let count = runs.len();
    let began = Instant::now();
    for (i, (mut new, (suite, r))) in created.into_iter().zip(runs).enumerate() {
        let heading = format!("{} ({} of {count})", name(*suite), i + 1);
        crate::progress::set_heading(Some(heading.clone()));
        if let Some(b) = budgets {
            let spent = began.elapsed();
            eprintln!("{heading}: {}", b.given_at(i, spent));
            let share = b.share(i, spent);
            if share != b.planned(i) {
                new.give_budget(share)?;
            }
        }
        eprintln!("{heading}: measuring into {}", new.path().display());
        crate::runner::watchdog::begin_run();
        let data = new.measure()?;
        match run::show(r, &data, format, &mut summaries) {
            Ok(outcome) => outcomes.extend(outcome),
            Err(e) => {
                eprintln!("{heading}: {e:#}");
                failed.push(name(*suite));
            }
        }
    }
    crate::progress::set_heading(None);
    if let Some(rows) = summaries {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    }
    let concluded: Vec<Result<()>> = outcomes.iter().map(|o| o.conclude()).collect();
    if !failed.is_empty() {
        bail!("--suite all: the run of {} failed (see above)", failed.join(" and of "));
    }
    concluded.into_iter().collect()
}

/// Each suite of `--suite all` with its run's flags (or why it is left out), in the order
/// measured, and how the budget is shared among those that run (each run's flags hold its
/// planned share).
fn parts(args: &RunArgs) -> Result<(Vec<SuiteRun>, Option<Budgets>)> {
    let named = SuiteChoice::All.split(&args.workloads)?;
    let mut parts: Vec<SuiteRun> = SuiteChoice::All.suites().into_iter().map(|s| part(args, s, &named)).collect();
    commits_timed_in_lmdb(args, &parts)?;
    let running: Vec<Suite> = parts.iter().filter(|p| p.run.is_ok()).map(|p| p.suite).collect();
    let why_out = |s: Suite| parts.iter().find(|p| p.suite == s).and_then(|p| p.run.as_ref().err().cloned());
    let budgets = Budgets::of(args.time_budget, &args.suite_budget, &running, why_out)?;
    if let Some(b) = &budgets {
        for (i, r) in parts.iter_mut().filter_map(|p| p.run.as_mut().ok()).enumerate() {
            r.time_budget = Some(b.planned(i));
        }
    }
    Ok((parts, budgets))
}

/// A metric of timed commits is the lmdb suite's (the others keep their own): refused, before
/// anything is built or measured, when the flags leave that suite out or its run would
/// refuse it (run's own check).
fn commits_timed_in_lmdb(args: &RunArgs, parts: &[SuiteRun]) -> Result<()> {
    if !args.metric.is_commits() {
        return Ok(());
    }
    match parts.iter().find(|p| p.suite == Suite::Lmdb).map(|p| &p.run) {
        Some(Ok(r)) => super::args::commits_timed(r.metric, &r.env, Suite::Lmdb),
        Some(Err(why)) => bail!(
            "--metric {}: each commit is timed in the lmdb suite's write rows, and the flags leave it out ({why})",
            args.metric
        ),
        None => bail!(
            "--metric {}: each commit is timed in the lmdb suite's write rows, which --suite all lacks",
            args.metric
        ),
    }
}

/// `suite`'s part: the flags given, as they apply to it.
fn part(args: &RunArgs, suite: Suite, named: &[(Suite, Vec<crate::workload::Workload>)]) -> SuiteRun {
    let mut notes = Vec::new();
    let run = left_out(args, suite, named).map_or_else(|| Ok(own_args(args, suite, named, &mut notes)), Err);
    SuiteRun { suite, run, notes }
}

/// Why the flags given leave `suite` out, if they do.
fn left_out(args: &RunArgs, suite: Suite, named: &[(Suite, Vec<crate::workload::Workload>)]) -> Option<String> {
    let given = |id: &str| args.given.contains(id);
    let crew = suite == Suite::Concurrency;
    if !named.iter().any(|(s, _)| *s == suite) {
        return Some(format!("--workloads {} names none of its workloads", args.workloads));
    }
    if given("metric") && crew && args.metric.is_exact() && !args.metric.is_space() {
        return Some(format!(
            "--metric {}: readers beside a writer are measured by reader-ops, writer-ops, reader-cpu, writer-cpu, time or a space metric",
            args.metric
        ));
    }
    if !crew && args.metric.is_crew() {
        return Some(format!("--metric {} is a figure of readers beside a writer", args.metric));
    }
    if crew && args.engine == [Engine::C] {
        return Some("--engine c: the C twin has no reader threads".into());
    }
    if crew && args.env.sync_axis().is_some() {
        return Some("--sync with several modes: readers beside a writer take one".into());
    }
    None
}

/// The flags of `suite`'s own run: its workloads, its own file, and the flags only some
/// suites take applied to those (each said in `notes`).
fn own_args(
    args: &RunArgs,
    suite: Suite,
    named: &[(Suite, Vec<crate::workload::Workload>)],
    notes: &mut Vec<String>,
) -> RunArgs {
    let mut r = args.clone();
    r.suite = SuiteChoice::one(suite);
    r.suite_budget = Vec::new();
    r.given.remove("suite_budget");
    if args.given.contains("workloads") {
        let of = named.iter().find(|(s, _)| *s == suite).map(|(_, w)| w.as_slice()).unwrap_or_default();
        r.workloads = of.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(",");
    }
    if args.metric.is_commits() && suite != Suite::Lmdb {
        // Only the lmdb suite's write rows time each commit: the others are judged by
        // their own metric, not left out.
        r.metric = RunArgs::defaults().metric;
        r.given.remove("metric");
        notes.push(format!("--metric {}: the lmdb suite's only; its own metric here", args.metric));
    }
    let mut drop_given = |id: &str, note: &str| {
        if r.given.remove(id) {
            notes.push(note.to_string());
        }
    };
    if suite != Suite::Concurrency {
        drop_given("readers", "--readers: concurrency's only");
        r.readers = RunArgs::defaults().readers;
        drop_given("reader_procs", "--reader-procs: concurrency's only");
        r.preset_cfg.reader_procs = false;
    }
    if suite == Suite::Lmdb && args.pairing.pairing == crate::record::Pairing::Chunks {
        drop_given("pairing", "--pairing chunks: its rows run whole, a process per unit");
        drop_given("chunk", "--chunk: its rows run whole, a process per unit");
    }
    if suite == Suite::Lmdb && !args.metric.is_exact() && !args.given.contains("entries") {
        r.env.entries = Some(LMDB_TIME_ENTRIES);
        notes.push(format!("{LMDB_TIME_ENTRIES} entries: its time size under --suite all (--entries sets another)"));
    }
    if suite == Suite::Concurrency && args.engine.contains(&Engine::C) {
        r.engine = vec![Engine::Rust];
        notes.push("--engine: the rust engine only (the C twin has no reader threads)".into());
    }
    let (dir, stem) = match &args.out {
        Some(out) => (out.parent().map(Path::to_path_buf).unwrap_or_default(), stem_of(out)),
        None => args.default_out.clone().unwrap_or_else(|| super::prepare::default_out("run")),
    };
    let name = format!("{stem}-{}", name(suite));
    match &args.out {
        Some(_) => r.out = Some(dir.join(format!("{name}.jsonl"))),
        None => r.default_out = Some((dir, name)),
    }
    r
}

/// `NAME` of `--out NAME.jsonl` (or of `--out NAME`).
fn stem_of(out: &Path) -> String {
    match out.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => out.file_stem(),
        _ => out.file_name(),
    }
    .map_or_else(|| "run".to_string(), |s| s.to_string_lossy().into_owned())
}

impl SuiteRun {
    /// "lmdb: 86 workloads; 10000 entries; instructions; into reports/runs/NAME-lmdb.jsonl".
    fn describe(&self) -> String {
        let r = match &self.run {
            Err(why) => return format!("{}: left out ({why})", name(self.suite)),
            Ok(r) => r.with_instruction_defaults(),
        };
        let mut parts = match super::request::selection(&r) {
            Ok((w, config)) => vec![plural(w.len(), "workload"), format!("{} entries", config.entries)],
            Err(e) => vec![format!("{e:#}")],
        };
        parts.push(if r.metric == Metric::Time { "time".to_string() } else { r.metric.to_string() });
        if let Some(b) = r.time_budget {
            parts.push(format!("planned budget {}", super::suite_budget::shown(b)));
        }
        let file = match (&r.out, &r.default_out) {
            (Some(out), _) => out.display().to_string(),
            (None, Some((dir, stem))) => dir.join(format!("{stem}.jsonl")).display().to_string(),
            (None, None) => "a new run file".into(),
        };
        parts.push(format!("into {file}"));
        parts.extend(self.notes.iter().cloned());
        format!("{}: {}", name(self.suite), parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(flags: &[&str]) -> Vec<SuiteRun> {
        parts_or_refusal(flags).unwrap()
    }

    fn parts_or_refusal(flags: &[&str]) -> Result<Vec<SuiteRun>> {
        #[derive(clap::Parser)]
        struct Run {
            #[command(flatten)]
            args: RunArgs,
        }
        let matches = <Run as clap::CommandFactory>::command()
            .try_get_matches_from(std::iter::once("run").chain(flags.iter().copied()))
            .unwrap();
        let mut args = <Run as clap::FromArgMatches>::from_arg_matches(&matches).unwrap().args;
        args.given = matches
            .ids()
            .filter(|id| matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
            .map(|id| id.to_string())
            .collect();
        Ok(parts(&args)?.0)
    }

    fn budgets(parts: &[SuiteRun]) -> Vec<u64> {
        parts.iter().filter_map(|p| p.run.as_ref().ok()).map(|r| r.time_budget.unwrap().as_secs()).collect()
    }

    /// Each suite its own file beside `--out`, each planned its part of the budget (11:2:2),
    /// the lmdb suite timed at its counting size, and the flags only some suites take
    /// applied to those, each said.
    #[test]
    fn each_suite_is_a_run_of_its_own_with_the_flags_it_takes() {
        let flags = ["--suite", "all", "--out", "d/NAME.jsonl", "--time-budget", "10m", "--readers", "2"];
        let parts = parts_of(&[&flags[..], &["--engine", "rust,c", "--chunk", "500"]].concat());
        let runs: Vec<&RunArgs> = parts.iter().map(|p| p.run.as_ref().unwrap()).collect();
        let outs: Vec<&str> = runs.iter().map(|r| r.out.as_ref().unwrap().to_str().unwrap()).collect();
        assert_eq!(outs, ["d/NAME-lmdbjava.jsonl", "d/NAME-lmdb.jsonl", "d/NAME-concurrency.jsonl"]);
        assert_eq!(budgets(&parts), [440, 80, 80]);
        assert_eq!(runs.iter().map(|r| r.env.entries).collect::<Vec<_>>(), [None, Some(10_000), None]);
        let suites: Vec<Option<SuiteChoice>> = runs.iter().map(|r| r.suite).collect();
        assert_eq!(suites, [Some(SuiteChoice::Lmdbjava), Some(SuiteChoice::Lmdb), Some(SuiteChoice::Concurrency)]);
        assert_eq!((runs[0].readers.as_slice(), runs[2].readers.as_slice()), (&[1][..], &[2][..]));
        assert!(!runs[0].given.contains("readers") && runs[2].given.contains("readers"));
        assert_eq!((runs[0].engine.len(), runs[2].engine.as_slice()), (2, &[Engine::Rust][..]));
        assert!(runs[0].given.contains("chunk") && !runs[1].given.contains("chunk"));
        assert_eq!(
            parts[1].notes,
            [
                "--readers: concurrency's only",
                "--chunk: its rows run whole, a process per unit",
                "10000 entries: its time size under --suite all (--entries sets another)"
            ]
        );
        let sized = parts_of(&["--suite", "all", "--entries", "2000"]);
        assert_eq!(sized[1].run.as_ref().unwrap().env.entries, Some(2000));
        assert!(sized[1].notes.is_empty(), "{:?}", sized[1].notes);
        let said = parts[2].describe();
        assert!(!said.contains("--readers") && said.contains("the rust engine only"), "{said}");
        assert!(parts[0].describe().contains("--readers: concurrency's only"), "{}", parts[0].describe());
    }

    /// `--reader-procs` under `--suite all` reaches the readers' run alone, and the others say so.
    #[test]
    fn reader_processes_are_the_concurrency_runs_only() {
        let parts = parts_of(&["--suite", "all", "--out", "d/NAME.jsonl", "--reader-procs"]);
        let runs: Vec<&RunArgs> = parts.iter().map(|p| p.run.as_ref().unwrap()).collect();
        let procs: Vec<bool> = runs.iter().map(|r| r.preset_cfg.reader_procs).collect();
        assert_eq!(procs, [false, false, true]);
        assert!(parts[0].notes.iter().any(|n| n == "--reader-procs: concurrency's only"), "{:?}", parts[0].notes);
        assert!(parts[2].notes.is_empty(), "{:?}", parts[2].notes);
    }

    /// A suite the flags leave out is said, and the budget is split among the others.
    #[test]
    fn a_suite_the_flags_leave_out_is_said_and_takes_no_budget() {
        let flags = ["--suite", "all", "--metric", "instructions", "--workloads", "write,fillRandom"];
        let parts = parts_of(&[&flags[..], &["--time-budget", "5m"]].concat());
        let why = parts[2].run.as_ref().unwrap_err();
        assert!(why.contains("names none of its workloads"), "{why}");
        let lmdb = parts[1].run.as_ref().unwrap();
        assert_eq!((lmdb.workloads.as_str(), lmdb.time_budget.unwrap().as_secs()), ("fillRandom", 46));
        let instructions = parts_of(&["--suite", "all", "--metric", "instructions"]);
        let why = instructions[2].run.as_ref().unwrap_err();
        assert!(why.contains("readers beside a writer are measured by reader-ops"), "{why}");
        assert!(instructions[2].describe().starts_with("concurrency: left out (--metric instructions"));
    }

    /// `--metric commit-p50` judges the lmdb suite's rows by their median commit, and the
    /// other suites by their own metric, each said; it is refused, before anything runs,
    /// where the lmdb suite would refuse it (no --sync) or the flags leave that suite out.
    #[test]
    fn commit_p50_is_the_lmdb_suites_and_the_others_keep_their_own() {
        let parts = parts_of(&["--suite", "all", "--metric", "commit-p50", "--sync", "sync"]);
        let metrics: Vec<Metric> =
            parts.iter().map(|p| p.run.as_ref().unwrap().with_instruction_defaults().metric).collect();
        assert_eq!(metrics, [Metric::Time, Metric::CommitP50, Metric::ReaderOps]);
        assert!(parts[0].notes.contains(&"--metric commit-p50: the lmdb suite's only; its own metric here".into()));
        assert!(parts[1].notes.iter().all(|n| !n.contains("--metric")), "{:?}", parts[1].notes);
        let refused = |flags: &[&str]| {
            let all = [&["--suite", "all", "--metric", "commit-p50"][..], flags].concat();
            format!("{:#}", parts_or_refusal(&all).err().expect("refused"))
        };
        assert!(refused(&[]).contains("commits are timed in a run that asks how they are made durable"));
        let out = refused(&["--sync", "sync", "--workloads", "readKey"]);
        assert!(out.contains("the flags leave it out (--workloads readKey names none of its workloads)"), "{out}");
    }

    /// `--suite-budget` plans each suite its own budget, each run without the flag; it is
    /// refused when a suite it names does not run, before anything is built.
    #[test]
    fn suite_budget_plans_each_suite_its_own() {
        let given = ["--suite", "all", "--suite-budget", "lmdbjava=9m,lmdb=4m,concurrency=2m"];
        let parts = parts_of(&given);
        assert_eq!(budgets(&parts), [540, 240, 120]);
        let lmdb = parts[1].run.as_ref().unwrap();
        assert!(lmdb.suite_budget.is_empty() && !lmdb.given.contains("suite_budget"));
        assert!(parts[0].describe().contains("planned budget 9m"), "{}", parts[0].describe());
        let e = parts_or_refusal(&[&given[..], &["--metric", "instructions"]].concat()).err().unwrap();
        assert!(
            e.to_string()
                .starts_with("--suite-budget gives concurrency a budget, but it does not run: --metric instructions"),
            "{e}"
        );
    }
}
