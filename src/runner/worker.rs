//! The Rust worker: a hidden subcommand of the same binary that loads one library,
//! runs what it is told, and prints [`WorkerLine`]s. The C twin takes the same arguments.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::protocol::{DbShape, WorkerLine};
use crate::record::FailureCause;
use crate::workload::lmdb::Api;
use crate::workload::measure::{Outcome, Places};
use crate::workload::perf::PerfCounter;
use crate::workload::presets::ColdNotAchieved;
use crate::workload::suite::{Suite, Verification};
use crate::workload::{presets, EnvSettings, Workload, WorkloadConfig};

/// What a worker process is started for: its first argument, the Rust worker's and the C
/// twin's alike (`prepare`, `verify`, `run`, `version`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerAction {
    /// Write the suite's read database.
    Prepare,
    /// Verify the read database's checksums.
    Verify,
    /// Measure the workloads.
    Run,
    /// Print the version the library reports (the Rust worker only).
    Version,
}

impl WorkerAction {
    /// The argument that names it.
    pub fn name(self) -> &'static str {
        match self {
            WorkerAction::Prepare => "prepare",
            WorkerAction::Verify => "verify",
            WorkerAction::Run => "run",
            WorkerAction::Version => "version",
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    pub action: WorkerAction,
    #[arg(long)]
    pub library: PathBuf,
    /// The library's SHA-256 from the run's record of its build: anything else is not loaded.
    #[arg(long, value_name = "HEX")]
    pub library_sha256: String,
    /// What its `mdb_version()` must say, from the same record: anything else is not measured.
    #[arg(long, value_name = "TEXT")]
    pub library_version: String,
    /// The read database's directory.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Where write samples create their fresh environments.
    #[arg(long)]
    pub scratch: Option<PathBuf>,
    #[arg(long, default_value = "all")]
    pub workloads: String,
    /// Timed repetitions of each workload.
    #[arg(long, default_value_t = 1)]
    pub iterations: u32,
    /// Count instructions in the timed region with perf_event_open.
    #[arg(long)]
    pub count_instructions: bool,
    #[command(flatten)]
    pub settings: WorkerSettings,
    /// The settings resolved (`WorkerSettings::resolve`) before anything runs.
    #[arg(skip)]
    pub cfg: WorkloadConfig,
}

/// A worker's workload settings as the runner passes them: every one explicitly, so the
/// suite's defaults change nothing.
#[derive(clap::Args, Debug)]
pub struct WorkerSettings {
    #[command(flatten)]
    pub cfg: WorkloadConfig,
    #[command(flatten)]
    pub env: EnvSettings,
    #[command(flatten)]
    pub preset: presets::PresetConfig,
}

impl WorkerSettings {
    /// The configuration of a worker of `suite`, refused when bad before anything is
    /// loaded, as the C twin refuses it.
    pub fn resolve(&self, suite: Suite) -> Result<WorkloadConfig> {
        anyhow::ensure!(self.env.sync_axis().is_none(), "a worker takes one --sync mode");
        anyhow::ensure!(self.env.memory_limit.len() <= 1, "a worker takes one --memory-limit");
        anyhow::ensure!(self.env.readahead_axis().is_none(), "a worker takes one --readahead");
        let cfg = self.env.resolve(&self.cfg, &self.preset, suite.preset());
        cfg.validate(suite.preset())?;
        Ok(cfg)
    }
}

pub(super) fn emit(line: &WorkerLine) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(line).expect("serialisable"));
    let _ = out.flush();
}

pub fn main(mut args: WorkerArgs) -> Result<()> {
    let workloads = Workload::parse_list(&args.workloads)?;
    let suite = Suite::of(&workloads)?;
    args.cfg = args.settings.resolve(suite)?;
    // What is loaded is the open file whose bytes were hashed, not whatever the path
    // names by then.
    let library =
        crate::artifact::open_verified(&args.library, &args.library_sha256).context("refusing to load the library")?;
    let api = Api::load(&library.load_path()).with_context(|| format!("cannot load {}", args.library.display()))?;
    let (.., reported) = api.version();
    anyhow::ensure!(
        reported == args.library_version,
        "refusing to measure {}: it reports {reported:?}, but the run records {:?} for it",
        args.library.display(),
        args.library_version
    );
    match args.action {
        WorkerAction::Version => {
            let (a, b, c, s) = api.version();
            println!("{a} {b} {c} {s}");
            Ok(())
        }
        WorkerAction::Prepare => prepare(&api, &args, suite),
        // Suites that check their checksums inside each timed pass have no verify step.
        WorkerAction::Verify if suite.verification() == Verification::Once => verify(&api, &args, suite, &workloads),
        WorkerAction::Verify => {
            anyhow::bail!("the {suite} suite checks its checksums in each timed pass: no verify step")
        }
        WorkerAction::Run => run(&api, &args, suite, &workloads),
    }
}

/// Writes the suite's read database.
fn prepare(api: &Api, args: &WorkerArgs, suite: Suite) -> Result<()> {
    let dir = args.dir.as_deref().ok_or_else(|| anyhow::anyhow!("prepare needs --dir"))?;
    match suite.prepare(api, dir, &args.cfg).and_then(|()| shape(api, dir, &args.cfg, suite)) {
        Ok(db_shape) => emit(&WorkerLine { prepared: true, db_shape, ..Default::default() }),
        Err(e) => emit(&WorkerLine { error: Some(format!("{e:#}")), ..Default::default() }),
    }
    Ok(())
}

/// The shape of LmdbJava's read database as written: which units may read it in a paired
/// process (the presets' are never shared).
fn shape(api: &Api, dir: &std::path::Path, cfg: &WorkloadConfig, suite: Suite) -> Result<Option<DbShape>> {
    if suite != Suite::LmdbJava {
        return Ok(None);
    }
    let env = crate::workload::lmdb::Env::open(api, dir, &crate::workload::native::env_options(cfg))?;
    let pages = env.page_counts()?;
    let (major, minor, _, _) = api.version();
    let data_version = data_version(&first_page(&dir.join("data.mdb"))?).context("data.mdb holds no LMDB meta page")?;
    let (branch, leaf, overflow, entries) = (pages.branch, pages.leaf, pages.overflow, pages.entries);
    Ok(Some(DbShape { format: (major, minor), data_version, branch, leaf, overflow, entries }))
}

/// The file's first 4 KiB, where its first meta page lies: the whole file is the map's
/// size (320 MB at LmdbJava's million entries), which was read and copied once per tag for
/// the 68 bytes `data_version` looks at.
fn first_page(path: &std::path::Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut page = Vec::with_capacity(4096);
    std::fs::File::open(path)?.take(4096).read_to_end(&mut page)?;
    Ok(page)
}

/// The format number in an LMDB data file's first meta page: the word after its magic,
/// wherever the page header of the writer's line ends.
fn data_version(file: &[u8]) -> Option<u32> {
    const MAGIC: u32 = 0xBEEF_C0DE;
    let word = |at: usize| Some(u32::from_ne_bytes(file.get(at..at + 4)?.try_into().ok()?));
    let at = (0..64).step_by(4).find(|&at| word(at) == Some(MAGIC))?;
    word(at + 4)
}

/// Each read workload's checksum through this library, untimed.
fn verify(api: &Api, args: &WorkerArgs, suite: Suite, workloads: &[Workload]) -> Result<()> {
    let dir = args.dir.as_deref().ok_or_else(|| anyhow::anyhow!("verify needs --dir"))?;
    let reads: Vec<Workload> = workloads.iter().copied().filter(|w| w.is_read()).collect();
    suite.verify(api, dir, &args.cfg, &reads, |w, r| {
        emit(&match r {
            Ok(c) => WorkerLine { workload: Some(w), checksum: Some(c), ..Default::default() },
            Err(e) => line(w, Err(e)),
        })
    })
}

/// What a workload measured, or why not, as its line.
pub(super) fn line(w: Workload, r: Result<Outcome, String>) -> WorkerLine {
    match r {
        Ok(o) => WorkerLine {
            workload: Some(w),
            samples_ns: o.samples_ns,
            instructions: o.instructions,
            outputs: o.outputs,
            checksum: o.checksum,
            figures: o.figures,
            chunks_ns: o.chunks_ns,
            space: o.space,
            io: o.io,
            major_faults: o.major_faults,
            ..Default::default()
        },
        Err(error) => WorkerLine { workload: Some(w), error: Some(error), ..Default::default() },
    }
}

/// What a workload's error means to a report, where its type says.
fn cause_of(e: &anyhow::Error) -> Option<FailureCause> {
    e.downcast_ref::<ColdNotAchieved>().map(|_| FailureCause::ColdNotAchieved)
}

/// Times each workload `--iterations` times as its suite runs it, one line each.
fn run(api: &Api, args: &WorkerArgs, suite: Suite, workloads: &[Workload]) -> Result<()> {
    let mut counter = if args.count_instructions { Some(PerfCounter::open()?) } else { None };
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    // The runner has put this process in a cgroup of the limit; the worker's part is to
    // start each read pass with nothing of the read database cached.
    let evict = !args.settings.env.memory_limit.is_empty();
    // A run that asks how commits are made durable is told how long each takes, where no
    // instruction is counted (the clock's own would be).
    let time_commits =
        !args.settings.env.sync.is_empty() && counter.is_none() && !crate::workload::profile_part::under_valgrind();
    let places =
        Places { dir: args.dir.as_deref(), scratch: &scratch, iterations: args.iterations, evict, time_commits };
    suite.run(api, &args.cfg, places, workloads, counter.as_mut(), |w, r| {
        let cause = r.as_ref().err().and_then(cause_of);
        emit(&WorkerLine { cause, ..line(w, r.map_err(|e| format!("{e:#}"))) })
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cold_sample_left_in_the_cache_is_a_cause_through_any_context() {
        let cold = ColdNotAchieved { resident: 3, total: 40, file: "data.mdb".into() };
        let e = anyhow::Error::from(cold).context("migrateReadCold");
        assert_eq!(cause_of(&e), Some(FailureCause::ColdNotAchieved));
        assert!(format!("{e:#}").contains("cold not achieved: 3 of 40 pages of data.mdb"), "{e:#}");
        assert_eq!(cause_of(&anyhow::anyhow!("cold not achieved: said, not typed")), None);
    }

    #[test]
    fn the_data_version_is_read_after_the_magic_wherever_the_page_header_ends() {
        let meta = |header: usize, version: u32| {
            let mut page = vec![0u8; header];
            page.extend(0xBEEF_C0DEu32.to_ne_bytes());
            page.extend(version.to_ne_bytes());
            page
        };
        assert_eq!(data_version(&meta(16, 1)), Some(1), "0.9's 16-byte page header");
        assert_eq!(data_version(&meta(24, 3)), Some(3), "the 1.0 line's, with its txnid");
        assert_eq!(data_version(&[0u8; 4096]), None);
    }
}
