//! Options shared by several commands, defined below `cli.rs` so that `cmd/` never
//! reaches up to it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::builder::{EnumValueParser, TypedValueParser};
use clap::{Args, ValueEnum};

use crate::compile::ToolchainSpec;
use crate::record::{Adaptive, Engine, FigureUnit, Layouts, Metric, Pairing, ReferenceLayouts};
use crate::workload::suite::Suite;
use crate::workload::{EnvSettings, SyncMode};

/// Where sources come from and how they are compiled: shared by every command that builds.
#[derive(Args, Debug, Clone, Default)]
pub struct BuildArgs {
    /// A local git repository of OpenLDAP or LMDB (clone or bare); also LMDB_GIT.
    #[arg(long, value_name = "PATH")]
    pub git: Option<PathBuf>,
    /// C compiler (default: as the cc crate finds it: $CC, else cc).
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    /// C flags, replacing the default "-O2 -g -fPIC -shared -pthread".
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub cflags: Option<String>,
    /// Toolchains as a matrix axis: COMPILER:FLAGS, comma-separated, e.g.
    /// gcc:-O2,clang:-O2,gcc:-O3. Each builds every tag (adding -g -fPIC -shared -pthread);
    /// builds are labelled "LMDB_0.9.33 (clang -O2)", gcc -O2's with the plain tag.
    #[arg(long, value_name = "CC:FLAGS,...", allow_hyphen_values = true, value_parser = toolchain_list,
          conflicts_with_all = ["cc", "cflags"])]
    pub toolchain: Option<ToolchainList>,
    /// Parallel jobs for builds and for work that is not timed or is counted (read
    /// databases, verification, instruction counting); timed rounds always run one worker
    /// at a time (default: the number of cores).
    #[arg(long, value_parser = at_least_one)]
    pub jobs: Option<usize>,
}

impl BuildArgs {
    /// `--jobs`, or the number of cores: one answer for builds, untimed and counted work.
    pub fn jobs(&self) -> usize {
        self.jobs.unwrap_or_else(crate::runner::pool::cores)
    }
}

/// The regression gate: shared by every command that reports comparisons.
#[derive(Args, Debug, Clone, Default)]
pub struct GateArgs {
    /// Exit 3 when a comparison is slower beyond PCT (e.g. slower:2%): in time when its whole
    /// interval lies above +PCT, in instructions when every count rose by more; an interval
    /// that reaches past it is a warning. With it, a failure of the tool exits 1.
    #[arg(long, value_name = "slower:PCT%")]
    pub fail_on: Option<crate::report::gate::FailOn>,
}

/// How time samples' code is laid out: shared by every command that measures time.
#[derive(Args, Debug, Clone)]
pub struct LayoutArgs {
    /// random: every time sample runs its own function order, linked by lld (one per unit
    /// and round) from objects compiled once; fixed: each tag's one build, as before.
    /// Instruction counts do not depend on layout and always use the fixed builds.
    #[arg(long, value_parser = layouts(), default_value_t = Layouts::Random)]
    pub layouts: Layouts,
    /// The seed that orders each unit's layouts, drawn from a sequence of seeds of the
    /// unit's own without repeat, those linked by earlier runs first (default: drawn, and
    /// recorded in the run file; each sample records its layout's seed).
    #[arg(long, value_name = "N")]
    pub layout_seed: Option<u64>,
    /// Random layouts of each unit in one paired process (rust engine, time), on the
    /// workloads whose chunks stand alone (readKey, readSeq, readRev): each times every
    /// K-th chunk of the unit's pass (a walk placed before each by an untimed get) and is
    /// its own sample, reading a link to one of its family's read databases; a process's
    /// value for the unit is the mean over its layouts. The checksums and the write run in
    /// the unit's first layout, every chunk timed. Default: 16 (at most one a chunk of a
    /// pass) where they can run, 1 elsewhere.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub layouts_per_process: Option<u32>,
    /// Layouts of the reference (the baseline) in each paired process, on the workloads
    /// timed in chunks, each unit's pass compared with each of them: the reference's layout
    /// is in every comparison of the process. A number from 1 (the default) to 4; or auto:
    /// as many as the run's own rounds say narrow its open comparisons for their time,
    /// which needs a run that judges its intervals as it goes (--adaptive on, or --target-ci).
    #[arg(long, value_name = "auto|N", default_value_t = ReferenceLayouts::default())]
    pub reference_layouts: ReferenceLayouts,
}

impl LayoutArgs {
    /// `--layouts-per-process` for a run of these layouts, pairing and engines, whose
    /// passes are `chunks` chunks: more than one needs random layouts in paired processes
    /// of the Rust engine, one layout of the reference, a workload whose chunks stand alone,
    /// and a chunk for each. Not given, it is [`DEFAULT_LAYOUTS_PER_PROCESS`] where those
    /// hold (at most `chunks`), else 1.
    pub fn per_process(
        &self,
        (layouts, pairing): (Layouts, Pairing),
        engines: &[Engine],
        stand_alone: bool,
        chunks: u32,
    ) -> Result<u32> {
        let why_not = match () {
            _ if layouts != Layouts::Random => Some("random layouts (a time run's --layouts random)"),
            _ if pairing != Pairing::Chunks => Some("paired processes (--pairing chunks)"),
            _ if engines != [Engine::Rust] => {
                Some("the rust engine alone: the C twin's paired worker times every chunk")
            }
            _ if self.reference_layouts != ReferenceLayouts::Exactly(1) => {
                Some("one layout of the reference (--reference-layouts 1)")
            }
            _ if !stand_alone => Some("a workload whose chunks stand alone (readKey, readSeq or readRev)"),
            _ => None,
        };
        match (self.layouts_per_process, why_not) {
            (None, None) => Ok(DEFAULT_LAYOUTS_PER_PROCESS.min(chunks).max(1)),
            (None, Some(_)) | (Some(1), _) => Ok(1),
            (Some(k), Some(why)) => bail!("--layouts-per-process {k} needs {why}"),
            (Some(k), None) if k > chunks => bail!(
                "--layouts-per-process {k} needs {k} chunks a pass or more, and a pass here has {chunks} \
                 (give a smaller --chunk, or at most {chunks} layouts)"
            ),
            (Some(k), None) => Ok(k),
        }
    }

    /// `--reference-layouts` for a run of these layouts, pairing and repetitions: more than
    /// one, or `auto`, needs random layouts in paired processes, one layout of every other
    /// unit and one pass a round (a unit's passes pair with the reference's of their
    /// position); `auto` also needs rounds that are `judged` (adaptive, or a resolution
    /// target), since it chooses from what they leave undecided.
    pub fn reference(
        &self,
        layouts: Layouts,
        pairing: Pairing,
        iterations: u32,
        judged: bool,
    ) -> Result<ReferenceLayouts> {
        let r = self.reference_layouts;
        let why_not = match r {
            ReferenceLayouts::Exactly(1) => None,
            _ if layouts != Layouts::Random => Some("random layouts (a time run's --layouts random)"),
            _ if pairing != Pairing::Chunks => Some("paired processes (--pairing chunks)"),
            _ if self.layouts_per_process.is_some_and(|k| k > 1) => {
                Some("one layout of every other unit (--layouts-per-process 1)")
            }
            _ if iterations > 1 => Some("one pass a round (--iterations 1)"),
            ReferenceLayouts::Auto if !judged => {
                Some("rounds judged as they go, which it chooses from (--adaptive on, or --target-ci)")
            }
            _ => None,
        };
        match why_not {
            Some(why) => bail!("--reference-layouts {r} needs {why}"),
            None => Ok(r),
        }
    }

    /// The layouts of a run by `metric` and its seed: random layouts only for inexact
    /// figures (time); exact counts are taken under each unit's one layout.
    pub fn plan(&self, metric: Metric) -> (Layouts, Option<u64>) {
        if self.layouts == Layouts::Random && !metric.is_exact() {
            (Layouts::Random, Some(self.layout_seed.unwrap_or_else(draw_seed)))
        } else {
            (Layouts::Fixed, None)
        }
    }
}

/// How time samples are paired: `--pairing`, `--chunk`.
#[derive(clap::Args, Debug, Clone)]
pub struct PairingArgs {
    /// chunks: each round is one process per engine holding its units, each workload's
    /// passes alternated between them chunk by chunk (LmdbJava's six, by time; the C twin's
    /// units in its paired worker, on the tags' shared libraries); process: one worker
    /// process per unit and round, its pass whole (the presets and instruction counts
    /// always).
    #[arg(long, value_parser = pairing(), default_value_t = Pairing::Chunks)]
    pub pairing: Pairing,
    /// Operations per chunk with --pairing chunks.
    #[arg(long, default_value_t = crate::runner::DEFAULT_CHUNK, value_parser = clap::value_parser!(u32).range(1..))]
    pub chunk: u32,
}

impl PairingArgs {
    /// The design of a run of `suite`'s workloads by `metric`, and its chunk size: chunks
    /// where they can be had, on every engine, else one process per unit (refused when
    /// asked for in `given`).
    pub fn plan(&self, metric: Metric, suite: Suite, given: &BTreeSet<String>) -> Result<(Pairing, Option<u32>)> {
        let why_not = if metric.is_exact() {
            Some("instruction counts are exact: each unit is counted in a process of its own")
        } else if suite == Suite::Programs {
            Some("a program runs whole, in a process of its own")
        } else if suite != Suite::LmdbJava && suite != Suite::Concurrency {
            Some("a preset's passes are not split into chunks")
        } else {
            None
        };
        match (self.pairing, why_not) {
            (Pairing::Chunks, None) => Ok((Pairing::Chunks, Some(self.chunk))),
            (Pairing::Chunks, Some(why)) if given.contains("pairing") => {
                bail!("--pairing chunks: {why}; give --pairing process")
            }
            _ if given.contains("chunk") => bail!("--chunk needs --pairing chunks"),
            _ => Ok((Pairing::Process, None)),
        }
    }
}

/// A fresh run seed, small enough for any JSON reader to keep exact.
pub fn draw_seed() -> u64 {
    rand::random::<u32>() as u64
}

/// Layouts of each unit in a paired process unless `--layouts-per-process` says otherwise:
/// on an Intel Xeon, 17 tags x 6 workloads in 5 minutes came to +-0.99% at the widest with
/// 16, against +-3.38% with one (reports/README.md, "The state is the file" and "Sixteen
/// layouts by default").
pub const DEFAULT_LAYOUTS_PER_PROCESS: u32 = 16;

/// Entries of an instruction-counting run unless `--entries` says otherwise: counts are
/// exact and reported per entry, and callgrind runs ~50× slower than the machine.
pub const COUNT_ENTRIES: u32 = 100_000;

/// `--toolchain`'s list, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainList(pub Vec<ToolchainSpec>);

impl ToolchainList {
    /// The list as `--toolchain` takes it back.
    pub fn to_arg(&self) -> String {
        self.0.iter().map(ToolchainSpec::to_arg).collect::<Vec<_>>().join(",")
    }
}

pub fn toolchain_list(s: &str) -> Result<ToolchainList, String> {
    ToolchainSpec::parse_list(s).map(ToolchainList)
}

/// `--jobs`: a whole number of at least 1.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?} is not a number of jobs: give 1 or more")),
    }
}

/// `--threshold`: a slowdown in percent, above 0 and at most 1000 (11×).
pub fn threshold_percent(s: &str) -> Result<f64, String> {
    percent_in(s, 1000.0)
}

/// `--target-ci`: a half-width in percent of the median, above 0 and at most 100.
pub fn ci_percent(s: &str) -> Result<f64, String> {
    percent_in(s, 100.0)
}

fn percent_in(s: &str, max: f64) -> Result<f64, String> {
    let v: f64 = s.trim_end_matches('%').parse().map_err(|_| format!("{s:?} is not a number of percent"))?;
    if !(v > 0.0 && v <= max) {
        return Err(format!("{s}% is outside (0, {max}]: give a percentage such as 3"));
    }
    Ok(v)
}

/// The command line's names of the record's values: clap's enums, each read into the
/// record's own, so the run file's types hold no command-line parsing.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum EngineName {
    /// The Rust harness, loading each tag's shared library.
    Rust,
    /// The C twin, statically linked with each tag's sources.
    C,
}

impl From<EngineName> for Engine {
    fn from(n: EngineName) -> Engine {
        match n {
            EngineName::Rust => Engine::Rust,
            EngineName::C => Engine::C,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LayoutsName {
    /// Every (unit, round) runs its own function order, linked by lld from objects compiled once.
    Random,
    /// Each unit's one build, as linked by its compiler.
    Fixed,
}

impl From<LayoutsName> for Layouts {
    fn from(n: LayoutsName) -> Layouts {
        match n {
            LayoutsName::Random => Layouts::Random,
            LayoutsName::Fixed => Layouts::Fixed,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum PairingName {
    /// Each round is one process holding every unit of an engine, each workload's passes
    /// alternated between them chunk by chunk; the process is the unit of replication.
    Chunks,
    /// One worker process per unit and round, its pass whole.
    Process,
}

impl From<PairingName> for Pairing {
    fn from(n: PairingName) -> Pairing {
        match n {
            PairingName::Chunks => Pairing::Chunks,
            PairingName::Process => Pairing::Process,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AdaptiveName {
    /// Rounds measure only the comparisons not yet decided.
    On,
    /// Every round measures every unit on every workload.
    Off,
}

impl From<AdaptiveName> for Adaptive {
    fn from(n: AdaptiveName) -> Adaptive {
        match n {
            AdaptiveName::On => Adaptive::On,
            AdaptiveName::Off => Adaptive::Off,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FigureUnitName {
    S,
    Ms,
    Us,
    Ns,
}

impl From<FigureUnitName> for FigureUnit {
    fn from(n: FigureUnitName) -> FigureUnit {
        match n {
            FigureUnitName::S => FigureUnit::S,
            FigureUnitName::Ms => FigureUnit::Ms,
            FigureUnitName::Us => FigureUnit::Us,
            FigureUnitName::Ns => FigureUnit::Ns,
        }
    }
}

/// A parser of `N`'s names into the record's `T`, listing them in `--help`.
fn names<N, T>() -> impl TypedValueParser<Value = T> + Clone + Send + Sync + 'static
where
    N: ValueEnum + Clone + Send + Sync + 'static,
    T: From<N> + Clone + Send + Sync + 'static,
{
    EnumValueParser::<N>::new().map(T::from)
}

/// `--engine`.
pub fn engine() -> impl TypedValueParser<Value = Engine> + Clone + Send + Sync + 'static {
    names::<EngineName, Engine>()
}

/// `--layouts`.
pub fn layouts() -> impl TypedValueParser<Value = Layouts> + Clone + Send + Sync + 'static {
    names::<LayoutsName, Layouts>()
}

/// `--pairing`.
pub fn pairing() -> impl TypedValueParser<Value = Pairing> + Clone + Send + Sync + 'static {
    names::<PairingName, Pairing>()
}

/// `--adaptive`.
pub fn adaptive() -> impl TypedValueParser<Value = Adaptive> + Clone + Send + Sync + 'static {
    names::<AdaptiveName, Adaptive>()
}

/// `--program-figure-unit`.
pub fn figure_unit() -> impl TypedValueParser<Value = FigureUnit> + Clone + Send + Sync + 'static {
    names::<FigureUnitName, FigureUnit>()
}

/// `K/N` as `run --shard` takes it: 1 ≤ K ≤ N.
pub fn parse_shard(s: &str) -> Result<(u32, u32)> {
    let parsed = s.split_once('/').and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((k, n)) if (1..=n).contains(&k) => Ok((k, n)),
        _ => bail!("expected K/N with 1 ≤ K ≤ N, e.g. 2/4"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_outside_their_range_are_refused() {
        assert_eq!(threshold_percent("3"), Ok(3.0));
        assert_eq!(threshold_percent("2.5%"), Ok(2.5));
        assert_eq!(ci_percent("100"), Ok(100.0));
        for bad in ["-3", "0", "NaN", "inf", "1e9", "x"] {
            assert!(threshold_percent(bad).is_err(), "{bad}");
        }
        assert!(ci_percent("150").unwrap_err().contains("(0, 100]"));
    }

    #[test]
    fn shard_arguments_are_k_of_n() {
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"] {
            let e = parse_shard(bad).unwrap_err().to_string();
            assert!(e.contains("K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_command_line_names_each_record_value_as_the_run_file_does() {
        fn spelt<N: ValueEnum, T: From<N> + serde::Serialize>() {
            for n in N::value_variants() {
                let name = n.to_possible_value().unwrap().get_name().to_string();
                let value = T::from(n.clone());
                assert_eq!(serde_json::to_value(&value).unwrap(), name);
            }
        }
        spelt::<EngineName, Engine>();
        spelt::<LayoutsName, Layouts>();
        spelt::<PairingName, Pairing>();
        spelt::<AdaptiveName, Adaptive>();
        spelt::<FigureUnitName, FigureUnit>();
    }
}

/// Refuses a metric of timed commits where no commit is timed (`run` and `bisect` alike):
/// outside the lmdb suite, whose write rows time them, and without `--sync`, which asks how
/// commits are made durable (a lone `--sync nosync` is the default, which the workers are
/// not told of).
pub fn commits_timed(metric: Metric, env: &EnvSettings, suite: Suite) -> Result<()> {
    if !metric.is_commits() {
        return Ok(());
    }
    let how = "measure the lmdb suite's write rows (fillRandomEach, fillRandom) under --sync sync, nometasync, \
               txn-nosync or txn-nometasync";
    if suite != Suite::Lmdb {
        bail!("--metric {metric}: each commit is timed in the lmdb suite's write rows only: {how}");
    }
    let nosync_alone = env.sync_axis().is_none() && env.sync.iter().all(|m| *m == SyncMode::Nosync);
    if env.sync.is_empty() || nosync_alone {
        bail!("--metric {metric}: commits are timed in a run that asks how they are made durable: {how}");
    }
    Ok(())
}
