//! Prints what a time budget buys under each way of sharing rounds (`stats::budget`): a
//! run measured in every round (adaptive off) resampled by processes, each resample run to
//! the budget with every measurement costing what it cost in the run (its median seconds)
//! and every round the run's untimed seconds a round. Seeded. BUDGET is in seconds (the
//! run's own wall time when 0); TARGET (percent) closes comparisons as `--target-ci` does.
//!
//!     cargo run --release --example adaptive_budget -- RUN.jsonl [BUDGET] [RESAMPLES] [SEED] [TARGET]

use std::collections::BTreeMap;

use rand::SeedableRng;

use lmdb_regress::record::{self, Closing, Target};
use lmdb_regress::stats::budget::{self, Costs, Sharing};
use lmdb_regress::stats::{family, median, stop};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        anyhow::bail!("usage: adaptive_budget RUN.jsonl [BUDGET] [RESAMPLES] [SEED] [TARGET]")
    };
    let arg = |i: usize, default: f64| args.get(i).map_or(Ok(default), |a| a.parse::<f64>());
    let (budget, resamples, seed) = (arg(1, 0.0)?, arg(2, 200.0)? as usize, arg(3, 1.0)? as u64);
    let target = args
        .get(4)
        .map(|a| a.parse())
        .transpose()?
        .map(|percent| Target { percent, closing: Closing::DecidedAndWithin });
    let data = record::load(std::path::Path::new(path))?;
    let end = data.end.as_ref().ok_or_else(|| anyhow::anyhow!("{path} has no end record"))?;
    let plan = &data.header.plan;
    let mut seconds: BTreeMap<_, BTreeMap<_, Vec<f64>>> = BTreeMap::new();
    for s in data.samples.iter().filter(|s| !s.counted && !s.unit.control) {
        seconds.entry((s.engine, s.workload)).or_default().entry(s.unit.clone()).or_default().push(s.ns as f64 / 1e9);
    }
    let each = seconds.into_iter().map(|(k, by)| (k, by.into_iter().map(|(l, v)| (l, median(&v))).collect())).collect();
    let (Some(wall), Some(timed)) = (end.wall_s, end.timed_s) else {
        anyhow::bail!("{path}'s end record has no wall or timed seconds")
    };
    let costs = Costs { each, round: (wall - timed) / f64::from(end.rounds.max(1)) };
    let budget = if budget > 0.0 { budget } else { wall };
    let compared = stop::compared(&data.samples, plan.baseline.as_ref().map(record::Base::as_str), plan.metric);
    let rule = family::Rule { min_effect: plan.min_effect(), ..Default::default() }.for_metric(plan.metric);
    for sharing in [Sharing::EveryRound, Sharing::Horizon, Sharing::Need] {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let b = budget::bought(&compared, &costs, (budget, sharing), (&rule, target), resamples, &mut rng);
        println!("{}", serde_json::to_string(&b)?);
    }
    Ok(())
}
