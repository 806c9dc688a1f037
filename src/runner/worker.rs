//! The Rust worker: a hidden subcommand of the same binary that loads one library,
//! runs what it is told, and prints [`WorkerLine`]s. The C twin takes the same arguments.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::protocol::WorkerLine;
use crate::workload::lmdb::{Api, Env};
use crate::workload::measure::Outcome;
use crate::workload::perf::PerfCounter;
use crate::workload::{native, presets, Dataset, EnvSettings, Workload, WorkloadConfig};

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// prepare | verify | run | version
    pub action: String,
    #[arg(long)]
    pub library: PathBuf,
    /// The library's SHA-256 from its build record: anything else is not loaded.
    #[arg(long, value_name = "HEX")]
    pub library_sha256: String,
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
    /// Resolved with `env` and `preset` before anything runs.
    #[command(flatten)]
    pub cfg: WorkloadConfig,
    /// The runner gives every setting explicitly, so the suite's defaults change nothing.
    #[command(flatten)]
    pub env: EnvSettings,
    #[command(flatten)]
    pub preset: presets::PresetConfig,
}

fn emit(line: &WorkerLine) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(line).expect("serialisable"));
    let _ = out.flush();
}

pub fn main(mut args: WorkerArgs) -> Result<()> {
    let workloads = Workload::parse_list(&args.workloads)?;
    let preset = presets::preset_of(&workloads)?;
    args.cfg = args.env.resolve(&args.cfg, &args.preset, preset);
    // Bad arguments are refused before anything is loaded, as the C twin refuses them.
    args.cfg.validate(preset)?;
    // What is loaded is the open file whose bytes were hashed, not whatever the path
    // names by then.
    let library =
        crate::artifact::open_verified(&args.library, &args.library_sha256).context("refusing to load the library")?;
    let api = Api::load(&library.load_path()).with_context(|| format!("cannot load {}", args.library.display()))?;
    match args.action.as_str() {
        "version" => {
            let (a, b, c, s) = api.version();
            println!("{a} {b} {c} {s}");
            Ok(())
        }
        "prepare" => prepare(&api, &args, preset),
        // Presets check their checksums inside each timed pass.
        "verify" if preset.is_none() => verify(&api, &args),
        "run" => run(&api, &args, workloads),
        other => anyhow::bail!("unknown worker action {other}"),
    }
}

/// Writes the read database: LmdbJava's, or the preset's.
fn prepare(api: &Api, args: &WorkerArgs, preset: Option<presets::Preset>) -> Result<()> {
    let dir = args.dir.as_deref().ok_or_else(|| anyhow::anyhow!("prepare needs --dir"))?;
    let r = match preset {
        None => native::prepare(api, dir, &args.cfg, &Dataset::generate(&args.cfg)),
        Some(p) => presets::prepare(api, dir, &args.cfg, p),
    };
    match r {
        Ok(()) => emit(&WorkerLine { prepared: true, ..Default::default() }),
        Err(e) => emit(&WorkerLine { error: Some(format!("{e:#}")), ..Default::default() }),
    }
    Ok(())
}

/// Each read workload's checksum through this library, untimed.
fn verify(api: &Api, args: &WorkerArgs) -> Result<()> {
    let data = Dataset::generate(&args.cfg);
    let dir = args.dir.as_deref().ok_or_else(|| anyhow::anyhow!("verify needs --dir"))?;
    let reads: Vec<Workload> = Workload::parse_list(&args.workloads)?.into_iter().filter(|w| w.is_read()).collect();
    let env = Env::open(api, dir, &native::env_options(&args.cfg));
    for w in reads {
        let r = match &env {
            Ok(env) => native::verify(api, env, w, &data).map_err(|e| format!("{e:#}")),
            Err(e) => Err(e.to_string()),
        };
        emit(&match r {
            Ok(c) => WorkerLine { workload: Some(w), checksum: Some(c), ..Default::default() },
            Err(e) => line(w, Err(e)),
        });
    }
    Ok(())
}

/// What a workload measured, or why not, as its line.
fn line(w: Workload, r: Result<Outcome, String>) -> WorkerLine {
    match r {
        Ok(o) => WorkerLine {
            workload: Some(w),
            samples_ns: o.samples_ns,
            instructions: o.instructions,
            outputs: o.outputs,
            checksum: o.checksum,
            figures: o.figures,
            ..Default::default()
        },
        Err(error) => WorkerLine { workload: Some(w), error: Some(error), ..Default::default() },
    }
}

/// Opens the read database and faults its pages in, once per worker.
fn open_reads<'a>(api: &'a Api, args: &WorkerArgs) -> Result<Env<'a>, String> {
    let dir = args.dir.as_deref().ok_or("reads need --dir")?;
    let env = Env::open(api, dir, &native::env_options(&args.cfg)).map_err(|e| e.to_string())?;
    native::fault_in(&env).map_err(|e| format!("{e:#}"))?;
    Ok(env)
}

/// Times each workload `--iterations` times, one line each: LmdbJava's reads on the read
/// database (opened once), its write and the presets' workloads as they define.
fn run(api: &Api, args: &WorkerArgs, workloads: Vec<Workload>) -> Result<()> {
    let data = std::cell::OnceCell::new();
    let data = || data.get_or_init(|| Dataset::generate(&args.cfg));
    let mut counter = if args.count_instructions { Some(PerfCounter::open()?) } else { None };
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let (dir, iterations) = (args.dir.as_deref(), args.iterations);
    let mut reads_env: Option<Result<Env, String>> = None;
    for w in workloads {
        let counter = counter.as_mut();
        let r = match w {
            Workload::Preset(p) => presets::run(api, p, &args.cfg, dir, &scratch, iterations, counter),
            Workload::Write => native::run_write(api, &scratch, &args.cfg, data(), iterations, counter),
            _ => match reads_env.get_or_insert_with(|| open_reads(api, args)) {
                Ok(env) => native::run_read(api, env, w, data(), iterations, counter),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            },
        };
        emit(&line(w, r.map_err(|e| format!("{e:#}"))));
    }
    Ok(())
}
