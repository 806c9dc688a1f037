//! The Rust worker: a hidden subcommand of the same binary that loads one library,
//! runs what it is told, and prints [`WorkerLine`]s. The C twin takes the same arguments.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::protocol::WorkerLine;
use crate::workload::lmdb::{Api, Env};
use crate::workload::perf::PerfCounter;
use crate::workload::{native, presets, Dataset, Workload, WorkloadConfig};

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// prepare | run | version
    pub action: String,
    #[arg(long)]
    pub library: PathBuf,
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
}

pub(super) fn emit(line: &WorkerLine) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(line).expect("serialisable"));
    let _ = out.flush();
}

pub fn main(args: WorkerArgs) -> Result<()> {
    let api = Api::load(&args.library)?;
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
        "run" => run(&api, &args),
        other => anyhow::bail!("unknown worker action {other}"),
    }
}

fn run(api: &Api, args: &WorkerArgs) -> Result<()> {
    let workloads = Workload::parse_list(&args.workloads)?;
    let data = Dataset::generate(&args.cfg);
    let opts = native::env_options(&args.cfg);
    let mut counter = if args.count_instructions { Some(PerfCounter::open()?) } else { None };
    let mut reads_env: Option<Env> = None;
    for w in workloads {
        let line = if w.is_read() {
            let dir = args.dir.as_deref().ok_or_else(|| anyhow::anyhow!("reads need --dir"))?;
            if reads_env.is_none() {
                match Env::open(api, dir, &opts) {
                    Ok(e) => reads_env = Some(e),
                    Err(e) => {
                        emit(&WorkerLine { workload: Some(w), error: Some(e.to_string()), ..Default::default() });
                        continue;
                    }
                }
            }
            read_line(api, reads_env.as_ref().unwrap(), w, &data, args.iterations, counter.as_mut())
        } else {
            let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
            let mut samples = Vec::new();
            let mut instructions = Vec::new();
            let mut error = None;
            for _ in 0..args.iterations {
                match native::time_write(api, &scratch, &args.cfg, &data, counter.as_mut()) {
                    Ok(m) => {
                        samples.push(m.nanos);
                        instructions.extend(m.instructions);
                    }
                    Err(e) => {
                        error = Some(format!("{e:#}"));
                        break;
                    }
                }
            }
            WorkerLine { workload: Some(w), samples_ns: samples, instructions, error, ..Default::default() }
        };
        emit(&line);
    }
    Ok(())
}

fn read_line(
    api: &Api,
    env: &Env,
    w: Workload,
    data: &Dataset,
    iterations: u32,
    mut counter: Option<&mut PerfCounter>,
) -> WorkerLine {
    let checksum = match native::checksum_pass(api, env, w, data) {
        Ok(c) => c,
        Err(e) => return WorkerLine { workload: Some(w), error: Some(format!("{e:#}")), ..Default::default() },
    };
    let mut samples = Vec::with_capacity(iterations as usize);
    let mut instructions = Vec::new();
    for _ in 0..iterations {
        match native::time_read(api, env, w, data, counter.as_deref_mut()) {
            Ok((m, out)) => {
                // The timed pass must have computed what the checked pass did.
                if matches!(w, Workload::ReadCrc | Workload::ReadXxh64) && out != checksum.digest {
                    return WorkerLine {
                        workload: Some(w),
                        error: Some(format!("timed pass computed {out:016x}, checked pass {:016x}", checksum.digest)),
                        ..Default::default()
                    };
                }
                samples.push(m.nanos);
                instructions.extend(m.instructions);
            }
            Err(e) => return WorkerLine { workload: Some(w), error: Some(format!("{e:#}")), ..Default::default() },
        }
    }
    WorkerLine { workload: Some(w), samples_ns: samples, instructions, checksum: Some(checksum), ..Default::default() }
}
