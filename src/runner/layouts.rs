//! Random layouts in the schedule: each round's layouts are linked on every core before the
//! round's first timed worker starts (never beside one), and once per run one unit is
//! counted under two layouts, which must give the same instruction counts.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use super::runfile::{Layouts, Metric, Plan, Record, RunWriter};
use super::{counter, counts_agree, pool, scratch_root, Ready, Schedule, Unit};
use crate::layout::{self, Layout};

/// Entries of the layout check's counts: callgrind runs ~50 times slower than the machine.
const CHECK_ENTRIES: u32 = 10_000;

/// Every unit that links layouts gets its own for `slot` ("round 3", "warm-up 0"), seeded
/// from the run's seed, its engine and label, and the slot. Returns the units to measure,
/// in the order given, and those whose layout could not be had, with why.
pub(super) fn link_round(
    units: &[Unit],
    run_seed: u64,
    slot: &str,
    jobs: usize,
    interrupted: &AtomicBool,
) -> (Vec<Unit>, Vec<(Unit, String)>) {
    let items: Vec<(usize, &Unit)> = units.iter().enumerate().filter(|(_, u)| u.relink.is_some()).collect();
    let mut linked: Vec<Option<Result<Layout, String>>> = vec![None; units.len()];
    let link = |&(_, u): &(usize, &Unit)| -> Result<Layout, String> {
        if interrupted.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        let seed = layout::seed(run_seed, &[&u.engine.to_string(), &u.tag, slot]);
        u.relink.as_ref().expect("filtered above").link(seed).map_err(|e| format!("{e:#}"))
    };
    pool::for_each(&items, jobs, link, |&(i, _), r| {
        linked[i] = Some(r);
        Ok(())
    })
    .expect("collecting results cannot fail");
    let (mut ready, mut failed) = (Vec::new(), Vec::new());
    for (u, l) in units.iter().zip(linked) {
        match l {
            None => ready.push(u.clone()),
            Some(Ok(l)) => ready.push(u.with_layout(l)),
            Some(Err(e)) => failed.push((u.clone(), e)),
        }
    }
    (ready, failed)
}

/// Instruction counts are the same under every layout, which is why counting passes run
/// the fixed builds: checked once per run by counting one unit's first workload under two
/// layouts (at a small size), and recorded as a check. Without a counter it is skipped,
/// saying so.
pub(super) fn check_counts(s: &Schedule, run_seed: u64, w: &mut RunWriter) -> Result<()> {
    let (Some(unit), Some(&workload)) = (s.units.iter().find(|u| u.relink.is_some()), s.workloads.first()) else {
        return Ok(());
    };
    let counter = match counter::detect() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("layouts not checked for equal instruction counts: {e:#}");
            return Ok(());
        }
    };
    let cfg = s.cfg.with_entries(&[workload], CHECK_ENTRIES.min(s.cfg.data_entries()).max(1))?;
    let plan = Plan {
        metric: Metric::Instructions,
        rounds: 1,
        warmup: 0,
        iterations: 1,
        layouts: Layouts::Fixed,
        layout_seed: None,
        ..s.plan.clone()
    };
    let check = Schedule {
        units: Vec::new(),
        workloads: vec![workload],
        cfg: &cfg,
        plan: &plan,
        start_round: 0,
        prior: Vec::new(),
        interrupted: s.interrupted.clone(),
        counter: Some(counter),
        stop_when: None,
        counted: true,
        jobs: 1,
    };
    let (a, b) = two_seeds(run_seed);
    let what = format!("{} {} {workload} counted under layouts {a} and {b}", unit.engine, unit.tag);
    eprintln!("checking that layouts change no instruction count: {what}");
    let scratch = scratch_root()?;
    let mut ready = Ready::default();
    if workload.is_read() {
        match check.prepare_one(unit, scratch.path()) {
            Ok(dir) => {
                ready.dbs.insert(unit.tag.clone(), dir);
            }
            Err(e) => return w.append(&Record::Check(counts_agree(what, Err(e.clone()), Err(e)))),
        }
    }
    let count = |seed: u32| -> Result<u64, String> {
        let linked = unit.relink.as_ref().expect("found above").link(seed).map_err(|e| format!("{e:#}"))?;
        check.count_once(&unit.with_layout(linked), workload, &ready, scratch.path())
    };
    let (first, second) = (count(a), count(b));
    if s.interrupted.load(Ordering::SeqCst) {
        return Ok(());
    }
    w.append(&Record::Check(counts_agree(format!("{what} ({} entries)", cfg.data_entries()), first, second)))
}

/// Two different layout seeds for the check, from the run's seed.
fn two_seeds(run_seed: u64) -> (u32, u32) {
    let a = layout::seed(run_seed, &["instruction check"]);
    let b = (0..).map(|i: u32| layout::seed(run_seed, &["instruction check", &i.to_string()])).find(|b| *b != a);
    (a, b.expect("seeds differ"))
}
