//! Command-line interface: argument definitions and dispatch, nothing else.

use std::path::PathBuf;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cmd;
use crate::cmd::args::BuildArgs;

#[derive(Parser)]
#[command(
    name = "lmdb-regress",
    version,
    about = "Did LMDB get slower? In which release, in which commit, by how much, and how sure are we?"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// List every tag in lmdb-tags: where its sources would come from and which builds are
    /// cached. Fetches and builds nothing (`build` does).
    Tags {
        /// A local git repository of OpenLDAP or LMDB (clone or bare); also LMDB_GIT.
        #[arg(long, value_name = "PATH")]
        git: Option<PathBuf>,
        /// Print one JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Fetch, verify and compile tags or commits.
    Build {
        /// Tags: 0.9.17..0.9.33, LMDB_0.9.19, 0.9.18,0.9.21, all, default, or commit ids with --git;
        /// BASE+FILE is BASE with the patch FILE applied (0.9.33+revert-8557.patch).
        #[arg(long, default_value = "default")]
        tags: String,
        /// Also a unit built from this directory's lmdb.h, mdb.c, midl.c, midl.h (and 1.0's
        /// module.c), as they are now; repeatable.
        #[arg(long, value_name = "DIR")]
        source: Vec<PathBuf>,
        #[command(flatten)]
        build: BuildArgs,
        /// Also build the C twin of the harness for each tag.
        #[arg(long)]
        c_harness: bool,
        /// Print one JSON array (a row per tag and toolchain) instead of a table.
        #[arg(long)]
        json: bool,
        /// Also compile the objects random layouts are linked from (-ffunction-sections), as `run` does.
        #[arg(long)]
        layout_objects: bool,
    },
    /// Measure the six workloads on every built tag, interleaved, and report.
    Run(Box<cmd::request::RunArgs>),
    /// Render a saved run (finished or interrupted) in one or more formats.
    Report {
        /// The run file (.jsonl) written by `run`.
        file: PathBuf,
        /// markdown, text, json, csv, svg, html, github (several: comma-separated); github is
        /// one Markdown document for a pull request's comment, the gate's verdict first, also
        /// appended to $GITHUB_STEP_SUMMARY when set.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "markdown")]
        format: Vec<crate::report::Format>,
        /// The tag every other is compared with (default: the run's own, `run --baseline` or
        /// its first unit as given; in files from before runs recorded it, the oldest).
        #[arg(long)]
        baseline: Option<String>,
        /// Write every format here (as <run name>.<ext>) instead of printing.
        #[arg(long)]
        out_dir: Option<PathBuf>,
        /// Replace existing files in --out-dir.
        #[arg(long)]
        force: bool,
        /// Rank by time or by instructions (default: the run's metric).
        #[arg(long, value_enum)]
        metric: Option<crate::record::Metric>,
        #[command(flatten)]
        gate: cmd::args::GateArgs,
    },
    /// Merge run files (the shards of one run) into one run file, for `report`.
    Merge(cmd::merge::MergeArgs),
    /// Write a static site of saved runs: each run's HTML report, each history's step
    /// charts, and an index with trends.
    Site {
        /// The folder to write (created if needed); ready for GitHub Pages as it is.
        dir: PathBuf,
        /// Run files (.jsonl) written by `run`, and histories (history.json) written by `history`.
        runs: Vec<PathBuf>,
        /// Also replace files in DIR that are not pages lmdb-regress wrote.
        #[arg(long)]
        force: bool,
    },
    /// Compare two saved runs tag by tag, as benchstat does.
    Compare {
        /// The earlier run file (.jsonl): the reference.
        old: PathBuf,
        /// The later run file (.jsonl), compared with OLD tag by tag and workload by workload.
        new: PathBuf,
        /// Print JSON instead of text (as --format json).
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// text (default), markdown, html, json or github: one Markdown document for a pull
        /// request's comment, the gate's verdict first, also appended to $GITHUB_STEP_SUMMARY.
        #[arg(long, value_enum)]
        format: Option<crate::report::Format>,
        #[command(flatten)]
        gate: cmd::args::GateArgs,
    },
    /// Narrow a slowdown between two tags down to a tag, and with --git to the commit.
    Bisect(Box<cmd::bisect::BisectArgs>),
    /// Reproduce ITS#10406 (writes slower since 0.9.19) natively, with verdicts on its claims.
    #[command(name = "its-10406")]
    Its10406(Box<cmd::its10406::ItsArgs>),
    /// How much code layout alone moves each workload: one tag under N layouts, interleaved.
    Layouts(Box<cmd::layouts::LayoutsArgs>),
    /// What the cache holds, folder by folder; removes the code layouts no run has used for
    /// a number of days.
    Cache(cmd::cache::CacheArgs),
    /// Where two builds' instructions differ, function by function: both profiled under
    /// callgrind (the timed function only), per entry, with the top functions' source lines.
    Explain(Box<cmd::explain::ExplainArgs>),
    /// How much of what changed from A to B the workloads execute: both built with gcc
    /// --coverage, run once, the executed lines of mdb.c and midl.c and of B's changed lines.
    Coverage(Box<cmd::coverage::CoverageArgs>),
    /// Every built-in workload: its suite, what it does, whether it pairs in chunks, its
    /// LMDB flags.
    Workloads(cmd::workloads::WorkloadsArgs),
    /// The performance history of a range of commits: every commit touching liblmdb's library
    /// sources, measured (instructions per entry by default), its steps listed and charted.
    History(Box<cmd::history::HistoryArgs>),
    /// The worker process (internal).
    #[command(hide = true)]
    Worker(crate::runner::worker::WorkerArgs),
    /// The paired worker process: several libraries side by side (internal).
    #[command(hide = true, name = "paired-worker")]
    PairedWorker(crate::runner::paired_worker::PairedWorkerArgs),
    /// A reader process of a paired worker (`--reader-procs`).
    #[command(hide = true, name = "reader-proc")]
    ReaderProc(crate::runner::paired_worker::ReaderProcArgs),
    /// Print the directory of a tag's verified sources (fetching them if needed).
    #[command(hide = true)]
    SourceDir {
        /// A tag spec, as `build --tags` takes it.
        tag: String,
        /// A local git repository of OpenLDAP or LMDB (clone or bare); also LMDB_GIT.
        #[arg(long, value_name = "PATH")]
        git: Option<PathBuf>,
    },
}

/// The options the user gave on the command line (not defaults), by id: some defaults
/// depend on other options (instruction runs count 100k entries once). The groups clap
/// makes of flattened structs (`BuildArgs`) are no options.
fn given(matches: &clap::ArgMatches) -> std::collections::BTreeSet<String> {
    let Some((_, sub)) = matches.subcommand() else { return Default::default() };
    sub.ids()
        .filter(|id| !id.as_str().starts_with(char::is_uppercase))
        .filter(|id| sub.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| id.to_string())
        .collect()
}

/// A failure of the tool in a gated command (`--fail-on`): its exit status is 1, so that
/// CI tells it from a regression (3).
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct GatedFailure(anyhow::Error);

/// The exit status of a command that ended with `e`: 130 when Ctrl-C stopped it (as a shell
/// reports SIGINT), 3 when the gate found a regression beyond it, 1 when bisect could not
/// confirm or narrow the slowdown it was given or a gated command failed, 2 for any other
/// error. Success is 0.
pub fn exit_status(e: &anyhow::Error) -> i32 {
    if e.is::<crate::runner::Interrupted>() {
        130
    } else if e.is::<crate::report::gate::GateFailed>() {
        3
    } else if e.is::<cmd::bisect::NotFound>() || e.is::<GatedFailure>() {
        1
    } else {
        2
    }
}

/// Whether `e` is an error of the tool (said as "error: …"), not a finding or an interruption.
pub fn is_tool_error(e: &anyhow::Error) -> bool {
    e.is::<GatedFailure>() || exit_status(e) == 2
}

impl Command {
    /// The gate the command was given, if any.
    fn fail_on(&self) -> Option<crate::report::gate::FailOn> {
        match self {
            Command::Run(a) => a.gate.fail_on,
            Command::History(a) => a.run.gate.fail_on,
            Command::Its10406(a) => a.gate.fail_on,
            Command::Report { gate, .. } | Command::Compare { gate, .. } => gate.fail_on,
            _ => None,
        }
    }
}

/// A command line clap refuses: its usage error, with status 1 under a gate as every other
/// failure of the tool there (clap's own 2 otherwise); help and version as clap gives them.
fn refused(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let gated = std::env::args().any(|a| a == "--fail-on" || a.starts_with("--fail-on="));
    if gated && !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        std::process::exit(1);
    }
    e.exit()
}

/// Under a gate, every error but the gate's own and an interruption is the tool's: status 1.
fn gated(e: anyhow::Error) -> anyhow::Error {
    if exit_status(&e) == 2 {
        GatedFailure(e).into()
    } else {
        e
    }
}

pub fn main() -> Result<()> {
    // Past a file-size limit (RLIMIT_FSIZE) a write then fails with "File too large", which
    // is reported like a full disk, instead of the signal killing the process mid-write.
    // SAFETY: ignoring a signal installs no handler code.
    let _ =
        unsafe { nix::sys::signal::signal(nix::sys::signal::Signal::SIGXFSZ, nix::sys::signal::SigHandler::SigIgn) };
    // Help fits the console as tables do.
    let width = crate::terminal::width(crate::terminal::Stream::Stdout);
    // A negative number is a value, refused by its flag's parser with the flag named
    // (`--entries -5`), never taken for an unknown option.
    let negative = |a: clap::Arg| if a.get_action().takes_values() { a.allow_negative_numbers(true) } else { a };
    let cli = Cli::command().mut_subcommands(|c| c.mut_args(negative));
    let matches = cli.term_width(width).max_term_width(width).try_get_matches().unwrap_or_else(|e| refused(e));
    let given = given(&matches);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let gate = cli.command.fail_on();
    let result = dispatch(cli.command, given);
    match gate {
        Some(_) => result.map_err(gated),
        None => result,
    }
}

fn dispatch(command: Command, given: std::collections::BTreeSet<String>) -> Result<()> {
    crate::envvars::check_all()?;
    match command {
        Command::Tags { git, json } => cmd::tags::run(git, json),
        Command::Build { tags, source, build, c_harness, json, layout_objects } => {
            cmd::build::run(&tags, &source, &build, c_harness, json, layout_objects)
        }
        Command::SourceDir { tag, git } => cmd::build::source_dir(&tag, git),
        Command::Run(mut args) => {
            args.given = given;
            match args.suite {
                Some(crate::workload::suite::SuiteChoice::All) => cmd::suites::run(&args),
                _ => cmd::run::run(&args),
            }
        }
        Command::Report { file, format, baseline, out_dir, force, metric, gate } => cmd::report::run(
            &file,
            &format,
            baseline.as_deref(),
            out_dir.as_deref(),
            metric,
            crate::files::Existing::forced(force),
            gate.fail_on,
        ),
        Command::Merge(args) => cmd::merge::run(&args),
        Command::Site { dir, runs, force } => cmd::site::run(&dir, &runs, force),
        Command::Compare { old, new, json, format, gate } => {
            let format = if json { crate::report::Format::Json } else { format.unwrap_or(crate::report::Format::Text) };
            cmd::report::compare(&old, &new, format, gate.fail_on)
        }
        Command::Worker(args) => crate::runner::worker::main(args),
        Command::PairedWorker(args) => crate::runner::paired_worker::main(args),
        Command::ReaderProc(args) => crate::runner::paired_worker::reader_main(args),
        Command::Bisect(mut args) => {
            args.given = given;
            cmd::bisect::run(&args)
        }
        Command::Its10406(mut args) => {
            args.given = given;
            cmd::its10406::run(&args)
        }
        Command::History(mut args) => {
            args.run.given = given;
            cmd::history::run(&args)
        }
        Command::Layouts(args) => cmd::layouts::run(&args),
        Command::Cache(args) => cmd::cache::run(&args),
        Command::Explain(args) => cmd::explain::run(&args),
        Command::Coverage(args) => cmd::coverage::run(&args),
        Command::Workloads(args) => cmd::workloads::run(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every visible option and argument of every visible command, with its command's path.
    fn arguments(c: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
        for a in c.get_arguments().filter(|a| !a.is_hide_set()) {
            out.push((path.to_string(), a.clone()));
        }
        for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
            arguments(s, &format!("{path} {}", s.get_name()), out);
        }
    }

    #[test]
    fn every_option_and_argument_has_help() {
        let mut all = Vec::new();
        arguments(&Cli::command(), "lmdb-regress", &mut all);
        assert!(all.len() > 50, "the walk reaches every command: {}", all.len());
        let missing: Vec<String> = all
            .iter()
            .filter(|(_, a)| a.get_help().is_none() && a.get_long_help().is_none())
            .map(|(path, a)| format!("{path} {}", a.get_id()))
            .collect();
        assert!(missing.is_empty(), "without help text: {missing:?}");
    }

    #[test]
    fn commands_show_only_options_they_use() {
        let cli = Cli::command();
        let args = |name: &str| -> Vec<clap::Arg> {
            cli.find_subcommand(name).unwrap_or_else(|| panic!("no command {name}")).get_arguments().cloned().collect()
        };
        let ids = |name: &str| -> Vec<String> { args(name).iter().map(|a| a.get_id().to_string()).collect() };
        // Presets are `run`'s alone (the older --preset-* names of every suite's settings
        // are hidden); `tags` builds nothing, so takes no compiler options.
        for name in ["bisect", "its-10406", "build", "tags"] {
            let preset: Vec<String> = args(name)
                .iter()
                .filter(|a| {
                    let id = a.get_id().as_str();
                    let shown = a.get_visible_aliases().unwrap_or_default();
                    id.starts_with("preset") || id.contains("open_get") || shown.iter().any(|s| s.starts_with("preset"))
                })
                .map(|a| a.get_id().to_string())
                .collect();
            assert!(preset.is_empty(), "{name} lists preset options it ignores: {preset:?}");
        }
        assert!(ids("run").iter().any(|id| id == "preset_max_value"));
        let entries = args("run").into_iter().find(|a| a.get_id() == "entries").expect("run --entries");
        assert_eq!(entries.get_all_aliases(), Some(vec!["preset-entries"]), "the older name still works");
        for unused in ["cc", "cflags", "toolchain", "jobs"] {
            assert!(!ids("tags").iter().any(|id| id == unused), "tags lists --{unused}");
        }
    }
}
