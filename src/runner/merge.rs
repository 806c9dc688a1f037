//! Joining run files — the shards of one run (`run --shard K/N`), or separate runs of one
//! plan — into one run file that `report` renders like any other.
//!
//! Instruction counts merge freely: they do not depend on the machine's load. Time samples
//! do not: every time comparison pairs tags round by round on one machine, and separate
//! runs share neither their rounds nor, usually, their machine. Time runs are therefore
//! refused, or with `drop_time` reduced to their instruction-counting pass.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::Label;
use crate::environment::Environment;
use crate::record::{
    Base, BuildStatus, CoverageOutcome, Declared, End, EndReason, Failure, Header, Pairing, Part, Plan, RunCoverage,
    RunData, Sample, TagStatus, SCHEMA,
};

/// The runs' coverage: each shard measures the whole run's pair, so the first measured
/// figure is every shard's; else the first run's account of why there is none.
fn coverage<'a>(of: impl Iterator<Item = Option<&'a RunCoverage>> + Clone) -> Option<RunCoverage> {
    let measured = of.clone().flatten().find(|c| matches!(c.outcome, CoverageOutcome::Measured { .. }));
    measured.or_else(|| of.flatten().next()).cloned()
}

/// One run file from `runs`, all of the same plan and configuration, each tag from one run.
pub fn merge(runs: Vec<RunData>, drop_time: bool) -> Result<RunData> {
    if runs.is_empty() {
        bail!("nothing to merge: name at least one run file");
    }
    let named: Vec<(String, RunData)> = runs.into_iter().enumerate().map(|(i, r)| (name(&r, i), r)).collect();
    agree(&named)?;
    check_shards(&named)?;
    // Inexact figures (time) vary with the machine and the moment: only exact counts merge,
    // and the shards of one chunk-paired run, each of which measured the baseline beside
    // its own tags: what merges is each shard's comparisons with it, never raw times.
    let time = !named[0].1.header.plan.metric.is_exact();
    let baseline = paired_shards_baseline(&named).filter(|_| time && !drop_time);
    each_tag_once(&named, baseline.as_deref())?;
    if time && named.len() > 1 && !drop_time && baseline.is_none() {
        bail!(
            "these are time runs, and time samples from separate runs cannot be merged: they were not \
             interleaved in one set of rounds and usually come from different machines, so comparing \
             them would measure the machines, not LMDB. Merge their instruction counts only with \
             --drop-time (runs made with --with-instructions), or report each run on its own; the \
             shards of one run merge when it paired its units in chunks (--pairing chunks)"
        );
    }
    let named = if time && drop_time {
        named.into_iter().map(|(n, r)| counts_only(&n, r).map(|r| (n, r))).collect::<Result<Vec<_>>>()?
    } else {
        named
    };
    let tags = tag_statuses(&named);
    // Every run's units, declared again: an older run's as read from its labels' text.
    let units: BTreeSet<Label> = named.iter().flat_map(|(_, r)| r.units.iter().cloned()).collect();
    let mut declared: Vec<&Label> = units.iter().collect();
    declared.sort_by_key(|l| l.release_key());
    let first = &named[0].1.header;
    let header = Header {
        schema: SCHEMA,
        config: first.config.clone(),
        workloads: first.workloads.clone(),
        engines: first.engines.clone(),
        plan: Plan { shard: None, programs: programs(&named), ..first.plan.clone() },
        tags,
        units: Declared::each(declared),
        environment: environment(&named),
        instruction_counter: first.instruction_counter.clone(),
        parts: named.iter().flat_map(|(n, r)| parts(n, r)).collect(),
        c_paired_worker: one_paired_worker(&named),
        places: crate::record::Place::joined(named.iter().map(|(_, r)| r.header.places.as_slice())),
    };
    let offsets = round_offsets(&named);
    let shifted = |r: u32, i: usize| r + offsets[i];
    Ok(RunData {
        header,
        samples: named
            .iter()
            .enumerate()
            .flat_map(|(i, (_, r))| r.samples.iter().map(move |s| Sample { round: shifted(s.round, i), ..s.clone() }))
            .collect(),
        failures: named
            .iter()
            .enumerate()
            .flat_map(|(i, (_, r))| {
                r.failures.iter().map(move |f| Failure { round: f.round.map(|x| shifted(x, i)), ..f.clone() })
            })
            .collect(),
        checks: named.iter().flat_map(|(_, r)| r.checks.clone()).collect(),
        end: end(named.iter().map(|(_, r)| r.end.as_ref())),
        coverage: coverage(named.iter().map(|(_, r)| r.coverage.as_ref())),
        path: None,
        units,
    })
}

/// The runs' programs (the same in each, as `agree` checked), each with what every run
/// compiled of it.
fn programs(runs: &[(String, RunData)]) -> Vec<crate::record::ProgramRecord> {
    let mut programs = runs[0].1.header.plan.programs.clone();
    for p in &mut programs {
        let each = runs.iter().flat_map(|(_, r)| &r.header.plan.programs).filter(|o| o.name == p.name);
        p.compiled = each.flat_map(|o| o.compiled.clone()).collect();
    }
    programs
}

fn name(r: &RunData, i: usize) -> String {
    match r.path.as_deref().and_then(|p| p.file_name()) {
        Some(f) => f.to_string_lossy().into_owned(),
        None => format!("run {}", i + 1),
    }
}

/// Everything that changes what a sample measures, in the order differences are named.
/// The shard's own index (and, with random layouts, the layout seed) is what shards differ
/// in; the baseline changes no sample.
fn fingerprint(h: &Header) -> [(&'static str, Value); 7] {
    let mut plan = serde_json::to_value(&h.plan).expect("a plan serializes");
    if let Some(shard) = plan.get_mut("shard").and_then(Value::as_object_mut) {
        shard.remove("index");
    }
    // Each run draws its own layouts; whether they were random is what matters. Each
    // compiles its programs for its own units. Which unit a report compares with changes
    // no sample: the merged run takes the first's.
    if let Some(plan) = plan.as_object_mut() {
        plan.remove("layout_seed");
        plan.remove("baseline");
        let programs = plan.get_mut("programs").and_then(Value::as_array_mut).into_iter().flatten();
        programs.filter_map(Value::as_object_mut).for_each(|p| drop(p.remove("compiled")));
    }
    let toolchains: BTreeSet<String> = h
        .tags
        .iter()
        .flat_map(|t| &t.builds)
        .map(|b| format!("{} {}", b.toolchain.version, b.toolchain.cflags.join(" ")))
        .collect();
    [
        ("config", json!(h.config)),
        ("workloads", json!(h.workloads)),
        ("engines", json!(h.engines)),
        ("plan", plan),
        ("harness version", json!(h.environment.harness_version)),
        ("instruction counter", json!(h.instruction_counter)),
        ("compiler", json!(toolchains)),
    ]
}

/// The path of the first field in which `a` and `b` differ, with both values.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (u, v) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                first_difference(&format!("{path}.{k}"), u, v)
            })
        }
        _ if a == b => None,
        _ => Some((path.to_string(), a.clone(), b.clone())),
    }
}

fn agree(runs: &[(String, RunData)]) -> Result<()> {
    let (first, reference) = (&runs[0].0, fingerprint(&runs[0].1.header));
    for (n, r) in &runs[1..] {
        let other = fingerprint(&r.header);
        let diff = reference.iter().zip(&other).find_map(|((field, a), (_, b))| first_difference(field, a, b));
        if let Some((field, a, b)) = diff {
            bail!(
                "cannot merge: {field} differs ({first}: {}; {n}: {}); only runs of the same plan, \
                 configuration, harness and compiler merge",
                shorten(&a),
                shorten(&b)
            );
        }
    }
    Ok(())
}

fn shorten(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// Shards must come complete: each of 1..=N exactly once.
fn check_shards(runs: &[(String, RunData)]) -> Result<()> {
    let Some(count) = runs[0].1.header.plan.shard.as_ref().map(|s| s.count) else { return Ok(()) };
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for (n, r) in runs {
        let index = r.header.plan.shard.as_ref().expect("agree() compared the shards").index;
        if let Some(other) = seen.insert(index, n) {
            bail!("shard {index}/{count} is given twice ({other} and {n})");
        }
    }
    let missing: Vec<String> = (1..=count).filter(|k| !seen.contains_key(k)).map(|k| format!("{k}/{count}")).collect();
    if !missing.is_empty() {
        bail!("missing shard(s) {}: merge every shard of the run", missing.join(", "));
    }
    Ok(())
}

/// A time run reduced to its instruction-counting pass, as an instruction run of one round.
fn counts_only(name: &str, mut r: RunData) -> Result<RunData> {
    let entries = r.header.plan.count_entries.filter(|_| r.samples.iter().any(|s| s.counted));
    let Some(entries) = entries else {
        bail!("{name} has no instruction counts (measured without --with-instructions?): --drop-time leaves nothing");
    };
    r.samples.retain(|s| s.counted);
    r.samples.iter_mut().for_each(|s| s.counted = false);
    let h = &mut r.header;
    h.config.entries = entries;
    // Counts were taken from the fixed builds: layouts do not change them.
    h.plan = h.plan.counting();
    // The counting pass runs after the rounds' end record, and only when they ended normally.
    r.end =
        r.end.filter(|e| e.reason != EndReason::Interrupted).map(|e| End { reason: EndReason::Rounds, rounds: 1, ..e });
    Ok(r)
}

/// The baseline every shard measured, when `runs` are the shards of one chunk-paired run.
fn paired_shards_baseline(runs: &[(String, RunData)]) -> Option<String> {
    let plans: Vec<&Plan> = runs.iter().map(|(_, r)| &r.header.plan).collect();
    let shard = plans[0].shard.as_ref()?;
    let paired = plans.iter().all(|p| p.pairing == Pairing::Chunks && p.shard.is_some());
    paired.then(|| shard.baseline().map(Base::to_string)).flatten()
}

/// The C paired worker the merged runs share; none when they ran different ones (shards
/// built on different machines), whose each run file still names its own.
fn one_paired_worker(named: &[(String, RunData)]) -> Option<crate::record::WorkerBuild> {
    let first = named[0].1.header.c_paired_worker.clone();
    named.iter().all(|(_, r)| r.header.c_paired_worker == first).then_some(first).flatten()
}

/// Each run's first round in the merged file: the shards' rounds follow one another, so a
/// round (one process, one machine) pairs only what was measured together.
fn round_offsets(runs: &[(String, RunData)]) -> Vec<u32> {
    let rounds = |r: &RunData| {
        let sampled = r.samples.iter().map(|s| s.round).chain(r.failures.iter().filter_map(|f| f.round));
        sampled.max().map_or(0, |m| m + 1)
    };
    runs.iter()
        .scan(0, |next, (_, r)| {
            let at = *next;
            *next += rounds(r);
            Some(at)
        })
        .collect()
}

/// A tag (or control) is measured, built or sampled, in one run only; `shared`, the
/// baseline of chunk-paired shards, in every one.
fn each_tag_once(runs: &[(String, RunData)], shared: Option<&str>) -> Result<()> {
    let shared = shared.map(|base| Label::build(base, None));
    let mut measured_in: BTreeMap<Label, &str> = BTreeMap::new();
    for (n, r) in runs {
        let built = r.header.tags.iter().filter(|t| t.status == BuildStatus::Built).map(|t| t.label.clone());
        let sampled: BTreeSet<Label> = r.samples.iter().map(|s| s.unit.clone()).chain(built).collect();
        for tag in sampled.into_iter().filter(|t| Some(t) != shared.as_ref()) {
            if let Some(other) = measured_in.insert(tag.clone(), n) {
                bail!("{tag} is measured in both {other} and {n}: each tag must come from one run");
            }
        }
    }
    Ok(())
}

/// Every run's tag statuses; a tag listed unbuilt by several runs (separate runs, not
/// shards) is kept once, the run that built it winning.
fn tag_statuses(runs: &[(String, RunData)]) -> Vec<TagStatus> {
    let mut by_unit: BTreeMap<&Label, &TagStatus> = BTreeMap::new();
    for t in runs.iter().flat_map(|(_, r)| &r.header.tags) {
        let keep = by_unit
            .get(&t.label)
            .is_none_or(|kept| kept.status != BuildStatus::Built && t.status == BuildStatus::Built);
        if keep {
            by_unit.insert(&t.label, t);
        }
    }
    let mut out: Vec<(&Label, &TagStatus)> = by_unit.into_iter().collect();
    out.sort_by_key(|(unit, _)| unit.release_key());
    out.into_iter().map(|(_, t)| t.clone()).collect()
}

/// What a merged file records of each run (a merged run brings its own parts).
fn parts(name: &str, r: &RunData) -> Vec<Part> {
    if !r.header.parts.is_empty() {
        return r.header.parts.clone();
    }
    vec![Part {
        file: name.to_string(),
        shard: r.header.plan.shard.as_ref().map(|s| s.to_string()),
        tags: r.header.tags.iter().map(|t| t.label.clone()).collect(),
        environment: r.header.environment.clone(),
    }]
}

/// The machines of all runs in one environment block: each field's distinct values joined
/// with "; ", the fewest cores, the earliest date, and the first run's command line with
/// its shard written `K/N`. Each run's own environment stays in the header's parts.
fn environment(runs: &[(String, RunData)]) -> Environment {
    let envs: Vec<&Environment> = runs.iter().map(|(_, r)| &r.header.environment).collect();
    let join = |f: &dyn Fn(&Environment) -> Option<&str>| -> Option<String> {
        let mut values: Vec<&str> = envs.iter().filter_map(|e| f(e)).collect();
        let mut seen = BTreeSet::new();
        values.retain(|v| seen.insert(*v));
        (!values.is_empty()).then(|| values.join("; "))
    };
    let text = |f: fn(&Environment) -> &str| join(&|e| Some(f(e))).unwrap_or_default();
    let mut command_line = envs[0].command_line.clone();
    if runs.len() > 1 {
        if let Some(i) = command_line.iter().position(|a| a == "--shard") {
            command_line.get_mut(i + 1).into_iter().for_each(|v| *v = "K/N".into());
        }
        command_line.iter_mut().filter(|a| a.starts_with("--shard=")).for_each(|a| *a = "--shard=K/N".into());
    }
    Environment {
        cpu_model: text(|e| &e.cpu_model),
        cores: envs.iter().map(|e| e.cores).min().unwrap_or(0),
        governor: join(&|e| e.governor.as_deref()),
        kernel: text(|e| &e.kernel),
        os: text(|e| &e.os),
        harness_version: text(|e| &e.harness_version),
        date: envs.iter().map(|e| e.date.clone()).min().unwrap_or_default(),
        command_line,
        storage: join(&|e| e.storage.as_deref()),
        // One CPU for all, or none said here: each part keeps its own.
        processor: envs
            .iter()
            .map(|e| e.processor.clone())
            .reduce(|a, b| a.filter(|a| Some(a) == b.as_ref()))
            .flatten(),
        // One build for all, or none said here: each part keeps its own.
        tool_sha256: envs
            .iter()
            .map(|e| e.tool_sha256.clone())
            .reduce(|a, b| a.filter(|a| Some(a) == b.as_ref()))
            .flatten(),
    }
}

/// The runs' ends as one: cut off if any was, interrupted if any was, else the reason of
/// the run that went furthest.
fn end<'a>(ends: impl Iterator<Item = Option<&'a End>>) -> Option<End> {
    let ends: Vec<&End> = ends.collect::<Option<Vec<_>>>()?;
    let furthest = ends.iter().max_by_key(|e| e.rounds)?;
    let interrupted = ends.iter().any(|e| e.reason == EndReason::Interrupted);
    Some(End {
        reason: if interrupted { EndReason::Interrupted } else { furthest.reason },
        rounds: furthest.rounds,
        finished: ends.iter().map(|e| e.finished.clone()).max().unwrap_or_default(),
        // Each part's timing was its own machine's; a sum over machines means nothing.
        wall_s: None,
        timed_s: None,
    })
}
