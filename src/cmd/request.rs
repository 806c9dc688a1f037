//! What `run` is asked for: its flags (`RunArgs`), and what they select: the workloads
//! and their configuration, a control's tag, and (for a resumed run) the toolchains its
//! run file records. Both `run` and `resume` read them here.

use std::path::PathBuf;

use anyhow::{bail, Result};

use super::args::{BuildArgs, GateArgs, LayoutArgs, PairingArgs};
use crate::record::{self, Adaptive, Engine, Metric, RunData};
use crate::workload::presets::{self, Preset};
use crate::workload::suite::SuiteChoice;
use crate::workload::{EnvSettings, Workload, WorkloadConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// Tags: 0.9.17..0.9.33, LMDB_0.9.19, 0.9.18,0.9.21, all, default, or commits with --git;
    /// BASE+FILE is BASE with the patch FILE applied (0.9.33+revert-8557.patch).
    #[arg(long, default_value = "default")]
    pub tags: String,
    /// Also a unit built from this directory's lmdb.h, mdb.c, midl.c, midl.h (and 1.0's
    /// module.c), as they are now; repeatable.
    #[arg(long, value_name = "DIR")]
    pub source: Vec<PathBuf>,
    /// Workloads: all, or a list of readKey, readSeq, readRev, readCrc, readXxh64, write (or of the preset's).
    #[arg(long, default_value = "all")]
    pub workloads: String,
    /// A C program to measure as a workload, named after its file (append1000.c:
    /// append1000): compiled against each unit's lmdb.h and library with its compiler and
    /// flags, and run whole in a fresh empty folder per sample, timed from its start to
    /// its exit; repeatable. A run of programs holds programs only.
    #[arg(long, value_name = "FILE.c")]
    pub program: Vec<PathBuf>,
    /// The arguments every run of every program gets, split into words as a shell splits
    /// them (quotes kept together); no shell runs.
    #[arg(long, value_name = "ARGS", requires = "program", allow_hyphen_values = true)]
    pub program_args: Option<String>,
    /// Seconds one run of a program may take: beyond it, it is killed and that sample is
    /// a recorded failure.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::runner::program::DEFAULT_TIMEOUT_S)]
    pub program_timeout: f64,
    /// Each sample takes this figure from the program's output instead of its wall time: the
    /// regular expression's first group, in the last line of standard output that matches
    /// (e.g. 'in ([0-9.]+) ?sec'), in --program-figure-unit.
    #[arg(long, value_name = "REGEX", requires = "program")]
    pub program_figure: Option<String>,
    /// The unit of --program-figure's figure: s, ms, us or ns.
    #[arg(long, value_parser = super::args::figure_unit(), default_value = "s", requires = "program_figure")]
    pub program_figure_unit: record::FigureUnit,
    /// Run a preset (tokyo-cabinet, open-get, migrate, lmdb) instead of LmdbJava's six; `list` describes them.
    #[arg(long, value_name = "NAME|list")]
    pub preset: Option<String>,
    /// lmdbjava (LmdbJava's six, the default), lmdb (LMDB's own shapes, the same as
    /// --preset lmdb), concurrency (readers beside a writer, with --readers), or all: each
    /// of the three a run of its own, one after another over the same tags and builds, into
    /// its own run file (--out NAME.jsonl: NAME-lmdbjava.jsonl, NAME-lmdb.jsonl,
    /// NAME-concurrency.jsonl; else run-<date>-SUITE.jsonl in reports/runs), each resumed on
    /// its own; --time-budget shared among those that run (--suite-budget); --workloads and the flags
    /// only some suites take apply to those, and a suite the flags leave out is said
    /// (`lmdb-regress workloads` lists each suite's).
    #[arg(long, value_enum, conflicts_with = "preset")]
    pub suite: Option<SuiteChoice>,
    /// rust, c, or rust,c (both, interleaved in the same rounds).
    #[arg(long, value_parser = super::args::engine(), value_delimiter = ',', default_value = "rust")]
    pub engine: Vec<Engine>,
    /// Measured rounds (each runs every tag once, in a fresh shuffled order); with
    /// --time-budget and adaptive rounds, no cap unless given: the budget, or every
    /// comparison decided, ends the run.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Warm-up rounds, run first and not recorded.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Stop after this long (e.g. 10m, 90s), at the end of a round; counted from the start
    /// of the schedule (read databases and their verification included), not the builds.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub time_budget: Option<std::time::Duration>,
    /// With --suite all: each suite's budget, SUITE=DURATION for each suite that runs
    /// (lmdbjava=11m,lmdb=2m,concurrency=2m), adding up to --time-budget when both are
    /// given. Without it --time-budget is shared in parts 11:2:2 (lmdbjava:lmdb:concurrency).
    /// Either way each suite's share is taken as it starts from what is left, in proportion
    /// to its part among the suites still to run: time one does not spend goes to those after it.
    #[arg(long, value_name = "SUITE=D,...", value_delimiter = ',', value_parser = super::suite_budget::parse_share)]
    pub suite_budget: Vec<super::suite_budget::SuiteShare>,
    /// A worker printing nothing for longer than this (in seconds) is killed, and its unit
    /// named and left out: the least limit, raised to ten times the slowest earlier stretch
    /// between a worker's lines (a paired worker prints one after every round of chunks).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::runner::watchdog::DEFAULT_FLOOR_S,
          value_parser = |s: &str| crate::runner::watchdog::parse_floor(s).map(|d| d.as_secs_f64()))]
    pub watchdog: f64,
    /// Resolution target in percent (0 to 100): stop once every comparison with the oldest
    /// tag is decided (slower, faster or same) and resolved to within ± this percent, at the
    /// looks that spend the run's error; with `--adaptive on`, rounds go to the comparisons
    /// furthest from it.
    #[arg(long, value_parser = super::args::ci_percent)]
    pub target_ci: Option<f64>,
    /// on: after the rounds every interval needs, each round measures a workload's tag only
    /// while its comparison is undecided at the looks that spend the run's error, the
    /// furthest from decided every round and the others in proportion (the baseline
    /// whenever any other tag is); a comparison decided at a look is reported at that
    /// look's level. off (the default): every tag in every round (on stops a decided
    /// comparison with its first deciding look's wider interval; reports/README.md,
    /// "Stopping that spends its error over the looks"). Time runs only; a resumed run
    /// keeps its own.
    #[arg(long, value_parser = super::args::adaptive(), default_value_t = Adaptive::Off)]
    pub adaptive: Adaptive,
    /// `same` needs the whole interval within ± this percent.
    #[arg(long, default_value_t = 2.0)]
    pub min_effect: f64,
    /// After the timed rounds, count each (engine, tag, workload)'s instructions once, so
    /// every time delta shows the instruction delta beside it.
    #[arg(long)]
    pub with_instructions: bool,
    /// Entries of the instruction-counting pass (counts are reported per entry); default:
    /// the suite's counting size (LmdbJava's six 100000, the lmdb suite 10000), else 100000.
    #[arg(long, default_value_t = super::args::COUNT_ENTRIES, requires = "with_instructions", value_parser = clap::value_parser!(u32).range(1..))]
    pub count_entries: u32,
    /// Skip the coverage pass after the run (what its workloads execute of the lines that
    /// changed from the baseline to the newest unit, on coverage builds of the two).
    #[arg(long)]
    pub no_coverage: bool,
    /// Count under callgrind's cache simulation, so that D1 and LL misses and estimated
    /// cycles stand beside instructions (implies --with-instructions for a time run).
    #[arg(long)]
    pub with_cache: bool,
    /// The tag or commit every other unit is compared with, and the gate judges against
    /// (default: the first unit as given, whatever its id; a pull request's gate names its
    /// merge base here).
    #[arg(long, value_name = "TAG")]
    pub baseline: Option<String>,
    /// Measure this tag a second time under the label TAG~control: the run's own A/A.
    #[arg(long, value_name = "TAG")]
    pub control: Option<String>,
    /// Timed repetitions per workload inside each worker.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// time, or a count of the timed region: instructions retired, or from callgrind's
    /// cache simulation d1-misses, ll-misses or estimated-cycles.
    #[arg(long, value_enum, default_value_t = Metric::Time)]
    pub metric: Metric,
    /// Suite concurrency: reader threads beside the writer, a unit of each count (1,2,4);
    /// the label says it ([2 readers]). Its metric is reader-ops unless --metric says.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "1",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub readers: Vec<u32>,
    /// The run file (JSON Lines), appended as samples arrive. Default: reports/runs/run-<date>.jsonl
    /// (run-<date>-2.jsonl, … when taken). An existing file is refused unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing --out file.
    #[arg(long)]
    pub force: bool,
    /// Continue an interrupted run file with its own plan and configuration (a flag that
    /// says otherwise is refused).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Print one JSON array of summaries instead of the report.
    #[arg(long, conflicts_with = "format")]
    pub summary_json: bool,
    /// The report printed: markdown (run's default), text, html, json, or github (one Markdown
    /// document for a pull request, the gate's verdict first, also appended to
    /// $GITHUB_STEP_SUMMARY when set); history's default is text.
    #[arg(long, value_enum)]
    pub format: Option<crate::report::Format>,
    /// Measure only shard K of N (e.g. 2/4): the tags in release order, every N-th from
    /// the K-th; `merge` joins the shards' run files.
    #[arg(long, value_name = "K/N", value_parser = |s: &str| super::args::parse_shard(s))]
    pub shard: Option<(u32, u32)>,
    #[command(flatten)]
    pub workload: WorkloadConfig,
    /// Entries, map size, MDB_WRITEMAP and sync: every suite's, with its defaults.
    #[command(flatten)]
    pub env: EnvSettings,
    /// The presets' own parameters (with `--preset`).
    #[command(flatten)]
    pub preset_cfg: presets::PresetConfig,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub pairing: PairingArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// With --fail-on: measure what fails again in a second, independent run (the baseline
    /// and the failing tags and workloads only), and fail only what both runs fail.
    #[arg(long, requires = "fail_on")]
    pub confirm: bool,
    /// The options given on the command line (set by the CLI, not an option itself).
    #[arg(skip)]
    pub given: std::collections::BTreeSet<String>,
    /// What the runner judges still undecided: every comparison with the baseline, or a
    /// command's own judgement that knows more (its-10406's claims between two tags).
    #[arg(skip = crate::stats::stop::progress as crate::runner::Judge)]
    pub judge: crate::runner::Judge,
    /// Where a run without --out goes: a folder and a name (set by commands that run for
    /// the user, as its-10406 does; not an option itself). Default: reports/runs, run-<date>.
    #[arg(skip)]
    pub default_out: Option<(PathBuf, String)>,
    /// The command that continues an interrupted run, but its file (set by commands that
    /// run for the user; not an option itself). Default: `run --resume`.
    #[arg(skip)]
    pub resume_with: Option<Continue>,
    /// The run files of the same `run --suite all` measured after this one, each written
    /// with its header and left to resume after an interruption (set by it; not an option).
    #[arg(skip)]
    pub later: Vec<PathBuf>,
}

/// How a command measuring a run goes on after Ctrl-C, when not by `run --resume FILE`.
#[derive(Debug, Clone, PartialEq)]
pub enum Continue {
    /// Its own command, given the run file (`its-10406 --resume`).
    Resume(String),
    /// Advice of its own, said after where the measurements are: the run file is not one
    /// that command continues.
    Again(String),
}

impl RunArgs {
    /// The plan's adaptive rounds: as asked for time; exact counts are decided in one round.
    pub(super) fn adaptive_plan(&self) -> Adaptive {
        if self.metric.is_exact() {
            Adaptive::Off
        } else {
            self.adaptive
        }
    }

    /// The plan's cap on measured rounds: none for an adaptive run given a time budget and
    /// no `--rounds`, which spends its budget on what is undecided.
    pub(super) fn round_cap(&self) -> Option<u32> {
        let budget_ends = self.adaptive_plan() == Adaptive::On && self.time_budget.is_some();
        (self.given.contains("rounds") || !budget_ends).then_some(self.rounds)
    }

    /// Instruction counts are exact: unless told otherwise, count each unit once (one
    /// round, no warm-up), at the suite's counting size (LmdbJava's six at 100k entries);
    /// the report gives counts per entry.
    pub(super) fn with_instruction_defaults(&self) -> RunArgs {
        let mut a = self.clone();
        if !self.given.contains("metric") && self.is_concurrency() {
            a.metric = Metric::ReaderOps;
        }
        if a.metric.is_exact() {
            let default = |id: &str| !self.given.contains(id);
            if let Some(n) = self.suite_count_entries().filter(|_| default("entries")) {
                a.env.entries = Some(n);
            }
            if default("rounds") {
                a.rounds = 1;
            }
            if default("warmup") {
                a.warmup = 0;
            }
        }
        a
    }

    /// The entries of the counting pass of a time run `--with-instructions`: as given, else
    /// the suite's counting size (or [`super::args::COUNT_ENTRIES`]); at most `entries`.
    pub(super) fn count_entries_of(&self, entries: u32) -> u32 {
        let n = match self.given.contains("count_entries") {
            true => self.count_entries,
            false => self.suite_count_entries().unwrap_or(self.count_entries),
        };
        n.min(entries)
    }

    /// The counting size of the suite it selects ([`crate::workload::suite::Suite::count_entries`]).
    fn suite_count_entries(&self) -> Option<u32> {
        let (workloads, _) = suite(self).ok()?;
        crate::workload::suite::Suite::of(&workloads).ok()?.count_entries()
    }

    /// Whether it runs readers beside a writer (`--suite concurrency`).
    pub fn is_concurrency(&self) -> bool {
        matches!(suite(self), Ok((_, Some(Preset::Concurrency))))
    }

    pub fn jobs(&self) -> usize {
        self.build.jobs()
    }

    /// `run` with no option given: each field as its option's default says.
    pub fn defaults() -> RunArgs {
        #[derive(clap::Parser)]
        struct Run {
            #[command(flatten)]
            args: RunArgs,
        }
        <Run as clap::Parser>::parse_from(["run"]).args
    }
}

/// `--control`'s tag as the run file records it: a pinned tag by its full name.
pub(super) fn control_tag(tag: &str) -> Result<String> {
    Ok(super::manifest()?.find(tag).map_or(tag.to_string(), |t| t.name.clone()))
}

/// The toolchains a run file's builds were made by: `--toolchain` again when its labels
/// name toolchains, else the one compiler and flags.
/// The builds `data` records, with `given`'s source of commits and jobs: how a resumed or
/// extended run builds its units again, and what it attributes steps with.
pub(super) fn recorded_build(given: &BuildArgs, data: &RunData) -> BuildArgs {
    BuildArgs { git: given.git.clone(), jobs: given.jobs, ..recorded_toolchains(data) }
}

pub(super) fn recorded_toolchains(data: &RunData) -> BuildArgs {
    let tags = &data.header.tags;
    let first = |t: &record::TagStatus| t.builds.first().map(|b| b.toolchain.clone());
    if !tags.iter().any(|t| t.label.toolchain.is_some()) {
        let tc = tags.iter().find_map(first);
        return BuildArgs {
            cc: tc.as_ref().map(|t| t.compiler.display().to_string()),
            cflags: tc.map(|t| t.cflags.join(" ")),
            ..BuildArgs::default()
        };
    }
    let mut specs: Vec<crate::compile::ToolchainSpec> = Vec::new();
    for spec in tags.iter().filter_map(first).map(|t| crate::compile::ToolchainSpec::of(&t)) {
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    BuildArgs { toolchain: Some(super::args::ToolchainList(specs)), ..BuildArgs::default() }
}

/// The programs `--program` names, as the run file records them: each named after its
/// file, no two alike, none a built-in workload's name; refused with what a run of
/// programs does not do yet.
pub(super) fn programs(args: &RunArgs) -> Result<Vec<record::ProgramRecord>> {
    if args.program.is_empty() {
        return Ok(Vec::new());
    }
    let refuse = |what: &str| bail!("--program: {what}");
    if args.given.contains("workloads") || args.preset.is_some() || args.suite.is_some() {
        refuse("a run of programs holds programs only; leave out --workloads, --preset and --suite")?;
    }
    if args.engine != [Engine::Rust] {
        refuse("a program loads each unit's shared library, as the rust engine does: leave out --engine")?;
    }
    crate::runner::program::timeout(args.program_timeout)?;
    let words = match &args.program_args {
        None => Vec::new(),
        Some(a) => shlex::split(a).ok_or_else(|| anyhow::anyhow!("--program-args {a:?}: an unclosed quote"))?,
    };
    let mut out: Vec<record::ProgramRecord> = Vec::new();
    for path in &args.program {
        let figure =
            args.program_figure.clone().map(|pattern| record::Figure { pattern, unit: args.program_figure_unit });
        let p = crate::runner::program::record(path, words.clone(), args.program_timeout, figure)?;
        if let Some(other) = out.iter().find(|o| o.name.eq_ignore_ascii_case(&p.name)) {
            bail!(
                "--program {} and --program {} would both be the workload {}: rename one",
                other.source.display(),
                path.display(),
                p.name
            );
        }
        out.push(p);
    }
    Ok(out)
}

/// The workloads to run and their configuration: LmdbJava's six, or a preset's (the
/// suite's defaults made explicit, so the run file records them), or the programs; checked.
pub(super) fn selection(args: &RunArgs) -> Result<(Vec<Workload>, WorkloadConfig)> {
    let programs = programs(args)?;
    if !programs.is_empty() {
        let config = args.env.resolve(&args.workload, &args.preset_cfg, None);
        return Ok((programs.iter().map(crate::runner::program::workload_of).collect(), config));
    }
    let (workloads, suite) = suite(args)?;
    let config = args.env.resolve(&args.workload, &args.preset_cfg, suite);
    config.validate(suite)?;
    Ok((workloads, config))
}

/// The workloads `--preset` and `--workloads` name, and their suite: a preset, or None
/// for LmdbJava's six.
fn suite(args: &RunArgs) -> Result<(Vec<Workload>, Option<Preset>)> {
    let preset = match args.suite.map(SuiteChoice::single) {
        None => args.preset.as_deref().map(str::parse::<Preset>).transpose()?,
        Some(Some(preset)) => preset,
        Some(None) => bail!(
            "--suite all: a run holds one suite, so that every comparison is inside one run; \
             give lmdbjava, lmdb or concurrency here (`run --suite all` measures each as a run of its own)"
        ),
    };
    crate::workload::suite::workloads_of(preset, &args.workloads)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commands that start a run through `run` (its-10406) take every option they do not
    /// set from here: these must be the options' own defaults.
    #[test]
    fn defaults_are_what_run_gives_without_options() {
        let d = RunArgs::defaults();
        assert_eq!(
            (d.tags.as_str(), d.workloads.as_str(), d.engine.as_slice()),
            ("default", "all", &[Engine::Rust][..])
        );
        assert_eq!((d.rounds, d.warmup, d.iterations, d.metric), (20, 1, 1, Metric::Time));
        assert_eq!((d.count_entries, d.min_effect), (super::super::args::COUNT_ENTRIES, 2.0));
        assert!(d.preset.is_none() && d.control.is_none() && d.shard.is_none() && d.resume.is_none());
        assert!(!d.with_instructions && !d.force && !d.summary_json && d.out.is_none() && d.given.is_empty());
        assert_eq!(d.env.resolve(&d.workload, &d.preset_cfg, None), WorkloadConfig::default());
        assert!(d.preset_cfg.is_default() && d.env == EnvSettings::default());
    }

    /// A time budget, not the default rounds, ends an adaptive run; --rounds given, or
    /// rounds measuring every unit, keep the cap.
    #[test]
    fn the_budget_lifts_the_default_cap_of_an_adaptive_run() {
        let budget = Some(std::time::Duration::from_secs(60));
        let with = |edit: &dyn Fn(&mut RunArgs)| {
            let mut a = RunArgs { time_budget: budget, adaptive: Adaptive::On, ..RunArgs::defaults() };
            edit(&mut a);
            a.round_cap()
        };
        assert_eq!(with(&|_| {}), None);
        assert_eq!(with(&|a| a.time_budget = None), Some(20));
        assert_eq!(with(&|a| _ = a.given.insert("rounds".into())), Some(20));
        assert_eq!(with(&|a| a.adaptive = Adaptive::Off), Some(20));
        assert_eq!(with(&|a| a.metric = Metric::Instructions), Some(20));
    }
}
