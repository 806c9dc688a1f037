//! The Rust worker: a hidden subcommand of the same binary that loads one library,
//! runs what it is told, and prints [`WorkerLine`]s. The C twin takes the same arguments.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::protocol::WorkerLine;
use crate::workload::lmdb::{Api, Env};
use crate::workload::perf::PerfCounter;
use crate::workload::{native, presets, Dataset, Workload, WorkloadConfig};

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
    #[command(flatten)]
    pub cfg: WorkloadConfig,
    /// Moved into `cfg.preset` before anything runs.
    #[command(flatten)]
    pub preset: presets::PresetConfig,
}

pub(super) fn emit(line: &WorkerLine) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(line).expect("serialisable"));
    let _ = out.flush();
}

pub fn main(mut args: WorkerArgs) -> Result<()> {
    args.cfg.preset = args.preset.clone();
    // Bad arguments are refused before anything is loaded, as the C twin refuses them.
    args.cfg.validate()?;
    Workload::parse_list(&args.workloads)?;
    // What is loaded is the open file whose bytes were hashed, not whatever the path
    // names by then.
    let library =
        crate::artifact::open_verified(&args.library, &args.library_sha256).context("refusing to load the library")?;
    let api = Api::load(&library.load_path()).with_context(|| format!("cannot load {}", args.library.display()))?;
    if let Some(p) = presets::preset_of(&Workload::parse_list(&args.workloads)?)? {
        if args.action != "version" {
            return super::preset_worker::main(&api, &args, p);
        }
    }
    match args.action.as_str() {
        "version" => {
            let (a, b, c, s) = api.version();
            println!("{a} {b} {c} {s}");
            Ok(())
        }
        "prepare" => {
            let dir = args.dir.clone().ok_or_else(|| anyhow::anyhow!("prepare needs --dir"))?;
            let data = Dataset::generate(&args.cfg);
            match native::prepare(&api, &dir, &args.cfg, &data) {
                Ok(()) => emit(&WorkerLine { prepared: true, ..Default::default() }),
                Err(e) => emit(&WorkerLine { error: Some(format!("{e:#}")), ..Default::default() }),
            }
            Ok(())
        }
        "verify" => verify(&api, &args),
        "run" => run(&api, &args),
        other => anyhow::bail!("unknown worker action {other}"),
    }
}

/// Each read workload's checksum through this library, untimed.
fn verify(api: &Api, args: &WorkerArgs) -> Result<()> {
    let data = Dataset::generate(&args.cfg);
    let dir = args.dir.as_deref().ok_or_else(|| anyhow::anyhow!("verify needs --dir"))?;
    let reads: Vec<Workload> = Workload::parse_list(&args.workloads)?.into_iter().filter(|w| w.is_read()).collect();
    let env = Env::open(api, dir, &native::env_options(&args.cfg));
    for w in reads {
        let line = match &env {
            Ok(env) => match native::verify(api, env, w, &data) {
                Ok(c) => WorkerLine { workload: Some(w), checksum: Some(c), ..Default::default() },
                Err(e) => failed(w, format!("{e:#}")),
            },
            Err(e) => failed(w, e.to_string()),
        };
        emit(&line);
    }
    Ok(())
}

fn failed(w: Workload, error: String) -> WorkerLine {
    WorkerLine { workload: Some(w), error: Some(error), ..Default::default() }
}

/// Opens the read database and faults its pages in, once per worker.
fn open_reads<'a>(api: &'a Api, args: &WorkerArgs) -> Result<Env<'a>, String> {
    let dir = args.dir.as_deref().ok_or("reads need --dir")?;
    let env = Env::open(api, dir, &native::env_options(&args.cfg)).map_err(|e| e.to_string())?;
    native::fault_in(api, &env).map_err(|e| format!("{e:#}"))?;
    Ok(env)
}

fn run(api: &Api, args: &WorkerArgs) -> Result<()> {
    let workloads = Workload::parse_list(&args.workloads)?;
    let data = Dataset::generate(&args.cfg);
    let mut counter = if args.count_instructions { Some(PerfCounter::open()?) } else { None };
    let mut reads_env: Option<Result<Env, String>> = None;
    for w in workloads {
        let line = if w.is_read() {
            match reads_env.get_or_insert_with(|| open_reads(api, args)) {
                Ok(env) => read_line(api, env, w, &data, args.iterations, counter.as_mut()),
                Err(e) => failed(w, e.clone()),
            }
        } else {
            write_line(api, args, &data, counter.as_mut())
        };
        emit(&line);
    }
    Ok(())
}

fn write_line(api: &Api, args: &WorkerArgs, data: &Dataset, mut counter: Option<&mut PerfCounter>) -> WorkerLine {
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let mut line = WorkerLine { workload: Some(Workload::Write), ..Default::default() };
    for _ in 0..args.iterations {
        match native::time_write(api, &scratch, &args.cfg, data, counter.as_deref_mut()) {
            Ok(m) => {
                line.samples_ns.push(m.nanos);
                line.instructions.extend(m.instructions);
            }
            Err(e) => return failed(Workload::Write, format!("{e:#}")),
        }
    }
    line
}

fn read_line(
    api: &Api,
    env: &Env,
    w: Workload,
    data: &Dataset,
    iterations: u32,
    mut counter: Option<&mut PerfCounter>,
) -> WorkerLine {
    let mut line = WorkerLine { workload: Some(w), ..Default::default() };
    for _ in 0..iterations {
        match native::time_read(api, env, w, data, counter.as_deref_mut()) {
            Ok((m, out)) => {
                line.samples_ns.push(m.nanos);
                line.instructions.extend(m.instructions);
                if matches!(w, Workload::ReadCrc | Workload::ReadXxh64) {
                    line.outputs.push(out);
                }
            }
            Err(e) => return failed(w, format!("{e:#}")),
        }
    }
    line
}
