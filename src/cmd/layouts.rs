//! `lmdb-regress layouts`: how much code layout alone moves each workload on this machine.
//! One tag is linked into N layouts, each a label of its own (`TAG@01`, …) measured with the
//! same layout in every round, all interleaved like the tags of a run; the report ranks the
//! layouts and gives each workload's layout spread beside its per-sample noise.

use std::path::PathBuf;

use anyhow::{bail, ensure, Context, Result};

use super::args::{BuildArgs, PairingArgs};
use super::prepare::{prepare_units, Prepared};
use crate::layout;
use crate::record::{Engine, Header, Label, LayoutStudy, Layouts, Metric, Plan};
use crate::runner::{RunSpec, Unit};
use crate::workload::suite::Suite;
use crate::workload::{EnvSettings, Workload, WorkloadConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct LayoutsArgs {
    /// The tag (or, with --git, commit) to study: one.
    #[arg(long)]
    pub tag: String,
    /// How many layouts (2 to 99), each measured in every round.
    #[arg(long, default_value_t = 8)]
    pub count: u32,
    /// Measured rounds (each runs every layout once, in a fresh shuffled order).
    #[arg(long, default_value_t = 20)]
    pub rounds: u32,
    /// Warm-up rounds, run first and not recorded.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Workloads: all, or a list of readKey, readSeq, readRev, readCrc, readXxh64, write.
    #[arg(long, default_value = "all")]
    pub workloads: String,
    /// rust, c, or rust,c.
    #[arg(long, value_parser = super::args::engine(), value_delimiter = ',', default_value = "rust")]
    pub engine: Vec<Engine>,
    /// The seed the layouts derive from (default: drawn, and recorded in the run file).
    #[arg(long, value_name = "N")]
    pub layout_seed: Option<u64>,
    /// The run file. Default: reports/runs/layouts-<date>.jsonl (-2, -3, … when taken).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the --out file when it exists (it is refused otherwise).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub workload: WorkloadConfig,
    #[command(flatten)]
    pub env: EnvSettings,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub pairing: PairingArgs,
}

pub fn run(args: &LayoutsArgs) -> Result<()> {
    // LmdbJava's six alone (refused below otherwise), so its defaults.
    let config = args.env.resolve(&args.workload, &Default::default(), None);
    config.validate(None)?;
    super::room::check(&config, &Workload::parse_list(&args.workloads)?)?;
    ensure!((2..=99).contains(&args.count), "--count {}: a study needs 2 to 99 layouts", args.count);
    if args.tag.contains(',') || args.tag.contains("..") || args.tag == "all" || args.tag == "default" {
        bail!("--tag {}: a layout study measures one tag (e.g. --tag 0.9.20)", args.tag);
    }
    let workloads = Workload::parse_list(&args.workloads)?;
    if workloads.iter().any(|w| matches!(w, Workload::Preset(_))) {
        bail!("--workloads {}: a layout study measures LmdbJava's six workloads", args.workloads);
    }
    let (pairing, chunk) = args.pairing.plan(Metric::Time, Suite::LmdbJava, &Default::default())?;
    let Prepared { tags, units, failures, c_paired_worker } =
        prepare_units(&args.tag, &[], &args.engine, &args.build, Layouts::Random, pairing)?;
    let Some(tag) = units.first().map(|u| u.label.clone()) else {
        bail!("{} could not be built or laid out, so nothing can be measured (see the reasons above)", args.tag);
    };
    let seed = args.layout_seed.unwrap_or_else(super::args::draw_seed);
    let (units, study) = study_units(&units, args.count, seed)?;
    let plan = Plan {
        pairing,
        chunk,
        layouts: Layouts::Random,
        layout_seed: Some(seed),
        layout_study: Some(LayoutStudy { tag, layouts: study }),
        ..Plan::new(args.rounds, args.warmup, Metric::Time)
    };
    let (engines, jobs) = (args.engine.clone(), args.build.jobs());
    let judge = crate::stats::stop::progress;
    let spec = RunSpec { units, workloads, engines, config, plan, counter: None, jobs, judge };
    let existing = crate::files::Existing::forced(args.force);
    let default = super::prepare::default_out("layouts");
    let header = Header { c_paired_worker, ..spec.header(tags)? };
    let mut writer = super::prepare::create_run_file(args.out.as_deref(), existing, default, &header, failures)?;
    let out = writer.path.clone();
    let outcome = spec.start(&mut writer)?;
    let data = crate::record::load(&out)?;
    let model = crate::report::model::build(&data, None)?;
    print!("{}", String::from_utf8(crate::report::render(&model, crate::report::Format::Markdown)?)?);
    if let Some(phase) = outcome.stopped {
        let then = format!(
            "{} measured; everything measured is in {}; a layout study cannot be resumed, and the report above \
             (`lmdb-regress report {}`) covers the rounds measured",
            crate::report::cells::plural(data.completed_rounds() as usize, "round"),
            out.display(),
            out.display()
        );
        return Err(crate::runner::Interrupted { stage: crate::runner::Stage::Run(phase), then }.into());
    }
    Ok(())
}

/// Each label of a study with its layout's seed.
type Labels = Vec<(Label, u32)>;

/// `count` layouts of each unit, labelled `TAG@01`, `TAG@02`, …, each of its own seed
/// (every engine's unit of layout i shares it). Returns the units and each label's seed.
fn study_units(units: &[Unit], count: u32, run_seed: u64) -> Result<(Vec<Unit>, Labels)> {
    let width = count.to_string().len().max(2);
    let (mut out, mut study): (Vec<Unit>, Labels) = (Vec::new(), Vec::new());
    for i in 1..=count {
        let fresh = |s: &u32| !study.iter().any(|(_, used)| used == s);
        let candidates = (0..).map(|j: u32| layout::seed(run_seed, &["study", &i.to_string(), &j.to_string()]));
        let seed = candidates.into_iter().find(fresh).expect("seeds differ");
        let label = units[0].label.in_layout(format!("{i:0width$}"));
        for u in units {
            let linked = u.relink.as_ref().context("a unit without objects to lay out")?.link(seed)?;
            out.push(Unit { label: label.clone(), relink: None, ..u.with_layout(linked) });
        }
        study.push((label, seed));
    }
    Ok((out, study))
}
