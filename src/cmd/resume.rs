//! `run --resume FILE` continues with the plan and configuration the run file records. A
//! flag given beside it is compared with the record: one that says otherwise is refused,
//! naming each difference, rather than silently ignored.

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::{json, Value};

use super::request::{control_tag, recorded_toolchains, selection, RunArgs};
use crate::record::{Adaptive, Base, Metric, Pairing, ReferenceLayouts, RunData};
use crate::source::Want;
use crate::workload::suite::Suite;
use crate::workload::WorkloadConfig;

/// Flags that change nothing a sample measures: free to give when resuming (coverage is a
/// pass after the samples). `--source` is checked by [`units`], which takes the directories
/// from it.
const FREE: [&str; 8] = ["resume", "jobs", "git", "summary_json", "fail_on", "watchdog", "source", "no_coverage"];

/// Refuses the flags given with `--resume` whose value differs from the run file's.
pub fn refuse_contradictions(args: &RunArgs, data: &RunData) -> Result<()> {
    let (asked, recorded) = (RunSettings::asked(args)?.by_flag(), RunSettings::recorded(data).by_flag());
    let mut differences = Vec::new();
    for id in args.given.iter().filter(|id| !FREE.contains(&id.as_str())) {
        let flag = format!("--{}", id.replace('_', "-"));
        match (asked.get(id), recorded.get(id)) {
            (Some(a), Some(r)) if a == r => {}
            (Some(a), Some(r)) => differences.push(format!("{flag} {} (the run file: {})", show(a), show(r))),
            _ => differences.push(format!("{flag} (a resumed run keeps its own)")),
        }
    }
    if !differences.is_empty() {
        bail!(
            "{} is continued with the plan and configuration it records, and these flags say otherwise: {}; \
             leave them out, or start a new run",
            data.path.as_deref().unwrap_or(std::path::Path::new("the run file")).display(),
            differences.join("; ")
        );
    }
    Ok(())
}

/// What a run measures by, as the flags given now ask it and as its file records it: one
/// type, so both say every setting, each field named as the option that sets it (a test
/// holds the names to `run`'s options).
#[derive(Debug, Serialize)]
struct RunSettings {
    tags: Vec<String>,
    workloads: Vec<String>,
    preset: Option<String>,
    suite: Option<&'static str>,
    engine: Vec<String>,
    rounds: Option<u32>,
    warmup: u32,
    iterations: u32,
    metric: Metric,
    pairing: Pairing,
    layouts_per_process: u32,
    reference_layouts: ReferenceLayouts,
    adaptive: Adaptive,
    chunk: Option<u32>,
    time_budget: Option<f64>,
    target_ci: Option<f64>,
    min_effect: f64,
    with_instructions: bool,
    with_cache: bool,
    count_entries: Option<u32>,
    shard: Option<String>,
    control: Option<String>,
    baseline: Option<String>,
    toolchain: Option<String>,
    cc: Option<String>,
    cflags: Option<String>,
    /// The workload configuration, by the ids of the options that set it ([`config_values`]).
    #[serde(flatten)]
    config: BTreeMap<String, Value>,
}

impl RunSettings {
    /// What the flags ask for.
    fn asked(args: &RunArgs) -> Result<RunSettings> {
        let args = args.with_instruction_defaults();
        let (workloads, config) = selection(&args)?;
        let manifest = super::manifest()?;
        let git = crate::source::Resolver::from_env(args.build.git.clone())?.git;
        let tags = crate::tags::parse_spec(&manifest, &args.tags, git.as_deref())?;
        Ok(RunSettings {
            tags: sorted(tags.iter().map(|w| w.label())),
            workloads: sorted(workloads.iter().map(|w| w.to_string())),
            preset: args.preset.clone(),
            suite: suite_name(&workloads),
            engine: sorted(args.engine.iter().map(|e| e.to_string())),
            rounds: args.round_cap(),
            warmup: args.warmup,
            iterations: args.iterations,
            metric: args.metric,
            pairing: args.pairing.pairing,
            layouts_per_process: args.layout.layouts_per_process.unwrap_or(1),
            reference_layouts: args.layout.reference_layouts,
            adaptive: args.adaptive_plan(),
            chunk: Some(args.pairing.chunk),
            time_budget: args.time_budget.map(|d| d.as_secs_f64()),
            target_ci: args.target_ci,
            min_effect: args.min_effect / 100.0,
            with_instructions: args.with_instructions || args.with_cache,
            with_cache: args.with_cache,
            count_entries: Some(args.count_entries),
            shard: args.shard.map(|(k, n)| format!("{k}/{n}")),
            control: args.control.as_deref().map(control_tag).transpose()?,
            baseline: args.baseline.as_deref().map(control_tag).transpose()?,
            toolchain: args.build.toolchain.as_ref().map(|t| t.to_arg()),
            cc: args.build.cc.clone(),
            cflags: args.build.cflags.clone(),
            config: config_values(&config),
        })
    }

    /// What the run file records.
    fn recorded(data: &RunData) -> RunSettings {
        let h = &data.header;
        let p = &h.plan;
        let tags: Vec<String> = match &p.shard {
            Some(shard) => shard.tags.iter().map(Base::to_string).collect(),
            None => data.header.tags.iter().map(|t| t.label.base.clone()).collect(),
        };
        let build = recorded_toolchains(data);
        RunSettings {
            tags: sorted(tags.into_iter()),
            workloads: sorted(h.workloads.iter().map(|w| w.to_string())),
            preset: Suite::of(&h.workloads).ok().and_then(Suite::preset).map(|p| p.to_string()),
            suite: suite_name(&h.workloads),
            engine: sorted(h.engines.iter().map(|e| e.to_string())),
            rounds: p.rounds,
            warmup: p.warmup,
            iterations: p.iterations,
            metric: p.metric,
            pairing: p.pairing,
            layouts_per_process: p.layouts_per_process,
            reference_layouts: p.reference_layouts,
            adaptive: p.adaptive,
            chunk: p.chunk,
            time_budget: p.time_budget_s,
            target_ci: p.target_ci,
            min_effect: p.min_effect(),
            with_instructions: p.count_entries.is_some(),
            with_cache: p.cache_sim,
            count_entries: p.count_entries,
            shard: p.shard.as_ref().map(|s| s.to_string()),
            control: p.control.as_ref().map(Base::to_string),
            baseline: p.baseline.as_ref().map(Base::to_string),
            toolchain: build.toolchain.as_ref().map(|t| t.to_arg()),
            cc: build.cc,
            cflags: build.cflags,
            config: config_values(&h.config),
        }
    }

    /// Each setting by the id of the option that sets it.
    fn by_flag(&self) -> BTreeMap<String, Value> {
        let value = serde_json::to_value(self).unwrap_or_default();
        value.as_object().map(|o| o.clone().into_iter().collect()).unwrap_or_default()
    }
}

/// The `--suite` these workloads are, if they are one of its suites.
fn suite_name(workloads: &[crate::workload::Workload]) -> Option<&'static str> {
    match Suite::of(workloads).ok()? {
        Suite::LmdbJava => Some("lmdbjava"),
        Suite::Lmdb => Some("lmdb"),
        Suite::Concurrency => Some("concurrency"),
        _ => None,
    }
}

/// The units a resumed run builds again, from `bases` (its built units' tags, commits,
/// patches and directories): a tag specification and the `--source` directories. A run
/// file records a patch or a directory by its name alone, so their paths come from the
/// flags given now, as the run was started with them (`--tags`, `--source`).
pub fn units(bases: &[&str], args: &RunArgs, path: &Path) -> Result<(String, Vec<PathBuf>)> {
    let same = |d: &Path, named: &str| {
        let real = |p: &Path| std::fs::canonicalize(p).ok();
        d.as_os_str() == named || real(d).is_some_and(|r| Some(r) == real(Path::new(named)))
    };
    let named: Vec<&str> = bases.iter().filter_map(|b| Want::local_dir(b)).collect();
    if let Some(d) = args.source.iter().find(|d| !named.iter().any(|n| same(d, n))) {
        bail!("--source {} is no unit of {}: a resumed run measures the units it records", d.display(), path.display());
    }
    let mut wanted = Vec::new();
    let sources = named
        .iter()
        .filter_map(|n| {
            let found = args.source.iter().find(|d| same(d, n)).cloned();
            wanted.extend(found.is_none().then(|| format!("--source {}", shlex_quote(n))));
            found
        })
        .collect();
    let patched = bases.iter().any(|b| Want::is_patched(b));
    if patched && !args.given.contains("tags") {
        wanted.push("--tags with the patches' paths, as the run was started with".into());
    }
    if !wanted.is_empty() {
        bail!(
            "{} measures units its file names only by name (a patch, a directory): give {} with --resume, \
             from the folder the run was started in",
            path.display(),
            wanted.join(" and ")
        );
    }
    let spec = match patched {
        true => args.tags.clone(),
        false => bases.iter().filter(|b| Want::local_dir(b).is_none()).copied().collect::<Vec<_>>().join(","),
    };
    Ok((spec, sources))
}

/// What `run --resume F` needs beside F to build a run's units again: `--tags` when a unit
/// is a patch, `--source` for each directory (as [`units`] takes them).
pub fn resume_flags(args: &RunArgs, patched: bool) -> String {
    let mut out = String::new();
    if patched {
        out += &format!(" --tags {}", shlex_quote(&args.tags));
    }
    for d in &args.source {
        out += &format!(" --source {}", shlex_quote(&d.to_string_lossy()));
    }
    out
}

fn shlex_quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
}

/// The workload configuration by option id: its fields as this version stores them (an
/// older file's too), `writemap` beside `no_writemap`, and the presets' own under their
/// `preset_` ids where the flag's name says `preset-`.
fn config_values(config: &WorkloadConfig) -> BTreeMap<String, Value> {
    let stored = serde_json::to_value(WorkloadConfig { recorded: None, ..config.clone() }).unwrap_or_default();
    let mut out = BTreeMap::new();
    for (k, v) in stored.as_object().into_iter().flatten().filter(|(k, _)| *k != "preset") {
        out.insert(k.clone(), v.clone());
    }
    out.insert("writemap".into(), json!(!config.no_writemap));
    for (k, v) in serde_json::to_value(&config.preset).unwrap_or_default().as_object().into_iter().flatten() {
        let id = if k.starts_with("open_get") || k.starts_with("migrate") { k.clone() } else { format!("preset_{k}") };
        out.insert(id, v.clone());
    }
    out
}

/// Sorted, each once.
fn sorted(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = items.collect();
    v.sort();
    v.dedup();
    v
}

/// A value as a flag would give it: text unquoted, lists comma-separated, none as "none".
fn show(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::presets::{Preset, PresetConfig};
    use crate::workload::EnvSettings;

    /// A preset run file from before one set of settings compares, flag by flag, with the
    /// flags of either spelling that would start it now.
    #[test]
    fn an_older_preset_file_compares_with_the_flags_that_would_start_it() {
        let older = r#"{"entries":1000000,"value_size":100,"keys":"int","order":"seq","values":"fixed","no_writemap":false,"sync":false,"seed":42,"map_size":null,"preset":{"entries":2000,"max_value":300,"map_size":16777216,"writemap":false,"sync":false,"open_get_cycles":25,"open_get_key":1000,"migrate_append":false}}"#;
        let recorded = config_values(&serde_json::from_str(older).unwrap());
        let env = EnvSettings { entries: Some(2000), map_size: Some(16777216), ..EnvSettings::default() };
        let params = PresetConfig { max_value: 300, open_get_cycles: 25, ..PresetConfig::default() };
        let asked = config_values(&env.resolve(&WorkloadConfig::default(), &params, Some(Preset::OpenGet)));
        assert_eq!(asked, recorded);
        assert_eq!(
            (&recorded["entries"], &recorded["writemap"], &recorded["preset_max_value"]),
            (&json!(2000), &json!(false), &json!(300))
        );
    }

    /// Every setting compared is named as an option of `run`, so that a flag given is
    /// compared with what it sets, never passed over as unknown.
    #[test]
    fn every_setting_is_named_as_the_option_that_sets_it() {
        use clap::Args;
        let run = RunArgs::augment_args(clap::Command::new("run"));
        let ids: Vec<String> = run.get_arguments().map(|a| a.get_id().to_string()).collect();
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/run-fixed.jsonl"));
        let settings = RunSettings::recorded(&crate::record::load(path).unwrap()).by_flag();
        let unnamed: Vec<&String> = settings.keys().filter(|k| !ids.contains(k)).collect();
        assert!(unnamed.is_empty(), "settings no option of run sets: {unnamed:?}");
    }
}
