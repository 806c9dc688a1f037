//! `lmdb-regress merge RUN... --out FILE`: the shards of one run (or runs of one plan) as
//! one run file.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::files::Existing;
use crate::record;
use crate::runner::merge;

#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// The run files (.jsonl) to merge: every shard of a run (`run --shard K/N`).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The merged run file to write (an existing file is refused unless --force).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing --out file.
    #[arg(long)]
    pub force: bool,
    /// Keep only the instruction counts of time runs made with --with-instructions (time
    /// samples of separate runs are never merged).
    #[arg(long)]
    pub drop_time: bool,
}

pub fn run(args: &MergeArgs) -> Result<()> {
    let inputs: Vec<&Path> = args.runs.iter().map(PathBuf::as_path).collect();
    crate::files::refuse_inputs([args.out.as_path()], &inputs)?;
    let existing = Existing::forced(args.force);
    crate::files::refuse_existing(&args.out, existing)?;
    let runs = args.runs.iter().map(|p| record::load(p)).collect::<Result<Vec<_>>>()?;
    let merged = merge::merge(runs, args.drop_time)?;
    let machines: Vec<&crate::environment::Environment> = merged.header.parts.iter().map(|p| &p.environment).collect();
    if machines.iter().any(|e| !e.same_cpu(machines[0])) {
        let mut cpus: Vec<String> = machines.iter().map(|e| e.cpu()).collect();
        cpus.sort_unstable();
        cpus.dedup();
        eprintln!(
            "note: the runs come from different CPUs ({}); libc picks its string routines by CPU, so \
             instruction counts of tags from different runs may differ by that too",
            cpus.join("; ")
        );
    }
    super::write_set(&[(args.out.clone(), merged.text()?.into_bytes())], existing)?;
    let count = |n: usize, word: &str| crate::report::cells::plural(n, word);
    eprintln!(
        "merged {}: {}, {}, {} into {}",
        count(args.runs.len(), "run"),
        count(merged.samples.len(), "sample"),
        count(merged.failures.len(), "failure"),
        count(merged.header.tags.len(), "tag"),
        args.out.display()
    );
    Ok(())
}
