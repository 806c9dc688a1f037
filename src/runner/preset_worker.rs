//! The worker's side of the presets: writes a preset's database (`prepare`) and runs its
//! workloads (`run`), reporting each as a [`WorkerLine`] like the six workloads.

use anyhow::{bail, Result};

use super::protocol::WorkerLine;
use super::worker::{emit, WorkerArgs};
use crate::workload::lmdb::Api;
use crate::workload::perf::PerfCounter;
use crate::workload::presets::{self, Preset};
use crate::workload::Workload;

pub fn main(api: &Api, args: &WorkerArgs, p: Preset) -> Result<()> {
    match args.action.as_str() {
        "prepare" => {
            let Some(dir) = &args.dir else { bail!("prepare needs --dir") };
            match presets::prepare(api, dir, &args.cfg, p) {
                Ok(()) => emit(&WorkerLine { prepared: true, ..Default::default() }),
                Err(e) => emit(&WorkerLine { error: Some(format!("{e:#}")), ..Default::default() }),
            }
            Ok(())
        }
        "run" => run(api, args),
        other => bail!("unknown worker action {other}"),
    }
}

fn run(api: &Api, args: &WorkerArgs) -> Result<()> {
    let mut counter = if args.count_instructions { Some(PerfCounter::open()?) } else { None };
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    for w in Workload::parse_list(&args.workloads)? {
        let Workload::Preset(pw) = w else { bail!("{w} is not a preset workload") };
        let r = presets::run(api, pw, &args.cfg, args.dir.as_deref(), &scratch, args.iterations, counter.as_mut());
        emit(&match r {
            Ok(o) => WorkerLine {
                workload: Some(w),
                samples_ns: o.samples_ns,
                instructions: o.instructions,
                checksum: o.checksum,
                figures: o.figures,
                ..Default::default()
            },
            Err(e) => WorkerLine { workload: Some(w), error: Some(format!("{e:#}")), ..Default::default() },
        });
    }
    Ok(())
}
