//! Prints the figure behind reports/README.md's "Stopping that spends its error over the
//! looks": a run file's processes (rounds) drawn again with replacement, each resample run
//! through the adaptive stopping rule, and the coverage of the intervals it reports (each
//! at its look's level) against the whole run's estimates, with the same resamples
//! measured in every round at the nominal level beside it. Seeded. TARGET (percent) judges
//! as a run given `--target-ci TARGET` now closes comparisons (decided and within it);
//! without it, as the file's own plan.
//!
//!     cargo run --release --example adaptive_coverage -- RUN.jsonl [RESAMPLES] [SEED] [TARGET]

use rand::SeedableRng;

use lmdb_regress::record::{self, Closing, Target};
use lmdb_regress::stats::{adaptive, family, stop};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        anyhow::bail!("usage: adaptive_coverage RUN.jsonl [RESAMPLES] [SEED] [TARGET]")
    };
    let resamples: usize = args.get(1).map_or(Ok(1000), |a| a.parse())?;
    let seed: u64 = args.get(2).map_or(Ok(1), |a| a.parse())?;
    let percent: Option<f64> = args.get(3).map(|a| a.parse()).transpose()?;
    let data = record::load(std::path::Path::new(path))?;
    let plan = &data.header.plan;
    let target = percent.map(|percent| Target { percent, closing: Closing::DecidedAndWithin }).or(plan.target());
    let compared = stop::compared(&data.samples, plan.baseline.as_ref().map(record::Base::as_str), plan.metric);
    let rule = family::Rule { min_effect: plan.min_effect(), ..Default::default() }
        .for_metric(plan.metric)
        .for_tables(compared.len());
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let c = adaptive::coverage(&compared, &rule, target, resamples, &mut rng);
    println!("{}", serde_json::to_string_pretty(&c)?);
    Ok(())
}
