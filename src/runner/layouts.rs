//! Random layouts in the schedule: each round's layouts (drawn as `draws.rs` says) are
//! linked on every core before the round's first timed worker starts (never beside one),
//! and once per run one unit is counted under two layouts, which must give the same
//! instruction counts.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use super::adaptive::LayoutsWanted;
use super::count::counts_agree;
use super::draws::Draws;
use super::job::interrupted;
use super::prepare::Ready;
use super::{counter, pool, RunSpec, Unit};
use crate::layout::Layout;
use crate::record::metric::{Counts, Metric};
use crate::record::{CheckKind, Record, RunWriter, Sample};
use crate::workload::Workload;

/// Entries of the layout check's counts: callgrind runs ~50 times slower than the machine.
const CHECK_ENTRIES: u32 = 10_000;

/// Every unit that links layouts gets its own, its next draw. Returns the units to
/// measure, in the order given, and those whose layout could not be had, with why.
fn link_round(
    units: &[Unit],
    draws: &Draws,
    jobs: usize,
    interrupted: &AtomicBool,
) -> (Vec<Unit>, Vec<(Unit, String)>) {
    let items: Vec<&Unit> = units.iter().collect();
    let (mut ready, mut failed) = (Vec::new(), Vec::new());
    for (u, linked) in units.iter().zip(link_each(&items, draws, jobs, interrupted)) {
        match linked {
            Ok(l) => ready.push(l),
            Err(e) => failed.push((u.clone(), e)),
        }
    }
    (ready, failed)
}

/// Each unit linked in a layout of its next draw (as it is when it links none), in the
/// order given, or why its layout could not be had.
fn link_each(items: &[&Unit], draws: &Draws, jobs: usize, interrupted: &AtomicBool) -> Vec<Result<Unit, String>> {
    // Each unit draws from its own sequence, all before any is linked.
    let relinked: Vec<(usize, &Unit, u32)> =
        (items.iter().enumerate()).filter_map(|(i, u)| Some((i, *u, draws.next(u, u.relink.as_ref()?)))).collect();
    let mut linked: Vec<Option<Result<Layout, String>>> = vec![None; items.len()];
    let link = |&(_, u, seed): &(usize, &Unit, u32)| -> Result<Layout, String> {
        if interrupted.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        u.relink.as_ref().expect("filtered above").link(seed).map_err(|e| format!("{e:#}"))
    };
    pool::for_each(&relinked, jobs, link, |&(i, _, _), r| {
        linked[i] = Some(r);
        Ok(())
    })
    .expect("collecting results cannot fail");
    items
        .iter()
        .zip(linked)
        .map(|(u, l)| match l {
            None => Ok((*u).clone()),
            Some(l) => l.map(|l| u.with_layout(l)),
        })
        .collect()
}

/// The further layouts of each reference `wanted` names, linked for a paired round beside
/// the one `units` holds: the j-th (from 1) runs the workloads that want more than j
/// layouts of it. A reference absent from `units` gets none; a layout that cannot be
/// linked is left out (its unit's own layout still measures the round).
pub(super) fn link_reference_layouts(
    units: &[Unit],
    wanted: &LayoutsWanted,
    draws: &Draws,
    jobs: usize,
    interrupted: &AtomicBool,
) -> Vec<(Unit, Vec<Workload>)> {
    let mut items: Vec<(&Unit, Vec<Workload>)> = Vec::new();
    for ((engine, label), each) in wanted {
        let Some(own) = units.iter().find(|u| u.engine == *engine && u.label == *label) else { continue };
        let most = each.values().copied().max().unwrap_or(1);
        for j in 1..most {
            let batch = each.iter().filter(|(_, k)| **k > j).map(|(w, _)| *w).collect();
            items.push((own, batch));
        }
    }
    let references: Vec<&Unit> = items.iter().map(|(u, _)| *u).collect();
    let linked = link_each(&references, draws, jobs, interrupted);
    let mut out = Vec::new();
    for ((u, batch), l) in items.iter().zip(linked) {
        match l {
            Ok(l) => out.push((l, batch.clone())),
            Err(e) => eprintln!("a further layout of the reference {} {} is left out: {e}", u.engine, u.label),
        }
    }
    out
}

/// [`link_round`] with `per_unit[i]` layouts of unit `i`: each unit's layouts side by side
/// (the first as `link_round` links it), a unit left out whole when any of its layouts
/// could not be had.
pub(super) fn link_round_each(
    units: &[Unit],
    (draws, per_unit): (&Draws, &[u32]),
    jobs: usize,
    interrupted: &AtomicBool,
) -> (Vec<Unit>, Vec<(Unit, String)>) {
    let mut copies: Vec<Vec<Unit>> = units.iter().map(|_| Vec::new()).collect();
    let mut failed: Vec<(Unit, String)> = Vec::new();
    for k in 0..per_unit.iter().copied().max().unwrap_or(0) {
        let wanted: Vec<usize> = (0..units.len()).filter(|i| per_unit[*i] > k).collect();
        let these: Vec<Unit> = wanted.iter().map(|i| units[*i].clone()).collect();
        let (linked, lost) = link_round(&these, draws, jobs, interrupted);
        let mut linked = linked.into_iter();
        for (&i, u) in wanted.iter().zip(&these) {
            match lost.iter().find(|(l, _)| l.engine == u.engine && l.label == u.label) {
                Some(f) => failed.push(f.clone()),
                None => copies[i].extend(linked.next()),
            }
        }
    }
    let whole = |(c, k): &(&Vec<Unit>, &u32)| c.len() == **k as usize;
    (copies.iter().zip(per_unit).filter(whole).flat_map(|(c, _)| c).cloned().collect(), failed)
}

/// Instruction counts are the same under every layout, which is why counting passes run
/// the fixed builds: checked once per run by counting the first unit's first workload that
/// was measured under two layouts (at a small size, both at once), and recorded as a check.
/// Without a counter it is skipped, saying so.
pub(super) fn check_counts(s: &RunSpec, draws: &Draws, timed: &[Sample], w: &mut RunWriter) -> Result<()> {
    let measured =
        |u: &Unit, wl: Workload| timed.iter().any(|x| x.engine == u.engine && x.unit == u.label && x.workload == wl);
    let chosen = s.units.iter().filter(|u| u.relink.is_some()).find_map(|u| {
        // A program is timed, never counted here; nor are threads whose work the clock sets.
        let wl = s.workloads.iter().copied().find(|wl| !wl.is_program() && !wl.is_crew() && measured(u, *wl))?;
        Some((u, wl))
    });
    let Some((unit, workload)) = chosen else { return Ok(()) };
    let counter = match counter::detect(s.plan.simulates_caches()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("layouts not checked for equal instruction counts: {e:#}");
            return Ok(());
        }
    };
    let entries = CHECK_ENTRIES.min(s.config.entries).max(1);
    let spec = s.counting(vec![workload], entries, counter)?;
    let relink = unit.relink.as_ref().expect("chosen for it");
    // Two more of the unit's draws: ones an earlier run linked when there are.
    let (a, b) = (draws.next(unit, relink), draws.next(unit, relink));
    let what = format!(
        "{} {} {workload} counted under layouts {a} and {b} ({} entries)",
        unit.engine, unit.label, spec.config.entries
    );
    eprintln!("checking that layouts change no instruction count: {what}");
    let scratch = spec.scratch()?;
    // Both layouts' units are the unit's own, relabelled: placed as it is.
    let folder = scratch.of(&unit.label);
    // Each count in a process of its own, with its own read database and profile file.
    let count = |&seed: &u32| -> Result<Counts, String> {
        let linked = relink.link(seed).map_err(|e| format!("{e:#}"))?;
        let u = Unit { label: unit.label.in_layout(seed.to_string()), ..unit.with_layout(linked) };
        let mut ready = Ready::default();
        if workload.is_read() {
            ready.dbs.insert(u.label.clone(), spec.prepare_one(&u, folder)?.0);
        }
        spec.count_once(&u, workload, &ready, folder)
    };
    let mut counts = std::collections::BTreeMap::new();
    pool::for_each(&[a, b], s.jobs, count, |seed, n| {
        counts.insert(*seed, n);
        Ok(())
    })?;
    if interrupted() {
        return Ok(());
    }
    let mut take = |seed| counts.remove(&seed).unwrap_or_else(|| Err("not counted".into()));
    let (first, second) = (take(a), take(b));
    let moved = match (&first, &second) {
        (Ok(a), Ok(b)) => moved_by_layout(a, b),
        _ => String::new(),
    };
    let mut check = counts_agree(CheckKind::Layouts, what, &[Metric::Instructions], first, second);
    check.detail.push_str(&moved);
    w.append(&Record::Check(check))
}

/// The simulated cache figures of two layouts, shown and not judged: a layout moves code
/// and so its addresses, which the instruction cache sees; empty without simulation.
fn moved_by_layout(a: &Counts, b: &Counts) -> String {
    let i1 = |c: &Counts| c.get(crate::record::metric::Event::I1mr);
    let mut shown: Vec<String> = Vec::new();
    if let (Some(x), Some(y)) = (i1(a), i1(b)) {
        shown.push(format!("I1 misses {x} then {y}"));
    }
    for m in Metric::cache_simulated() {
        if let (Some(x), Some(y)) = (m.of_counts(a), m.of_counts(b)) {
            shown.push(format!("{} {x} then {y}", m.name()));
        }
    }
    match shown.is_empty() {
        true => String::new(),
        false => format!("; not judged, as a layout moves code addresses: {}", shown.join(", ")),
    }
}
