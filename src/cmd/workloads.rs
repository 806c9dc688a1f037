//! `lmdb-regress workloads`: every built-in workload, its suite, what it does, whether
//! its passes pair in chunks, and the LMDB flags it sets.

use anyhow::Result;
use serde::Serialize;

use crate::workload::presets::PresetWorkload;
use crate::workload::suite::Suite;
use crate::workload::Workload;

#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadsArgs {
    /// text (80 columns) or json.
    #[arg(long, value_enum, default_value = "text")]
    pub format: WorkloadsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadsFormat {
    Text,
    Json,
}

/// One workload as listed.
#[derive(Debug, Serialize)]
struct Listed {
    name: &'static str,
    suite: String,
    about: &'static str,
    /// Its passes alternate with other units' chunk by chunk, or interval by interval
    /// (`--pairing chunks`).
    chunks: bool,
    mdb_flags: Vec<&'static str>,
}

fn listed(w: Workload) -> Listed {
    let suite = match w.suite() {
        Suite::LmdbJava => "lmdbjava".to_string(),
        s => s.to_string(),
    };
    let (about, mdb_flags) = match w {
        Workload::Preset(PresetWorkload::Lmdb(l)) => (l.declared().about, l.declared().options.mdb_flags()),
        Workload::Write => (w.title(), vec!["MDB_APPEND"]),
        _ => (w.title(), Vec::new()),
    };
    let chunks = matches!(w.suite(), Suite::LmdbJava | Suite::Concurrency);
    Listed { name: w.name(), suite, about, chunks, mdb_flags }
}

pub fn run(args: &WorkloadsArgs) -> Result<()> {
    let all: Vec<Listed> = Suite::ALL.into_iter().flat_map(|s| s.workloads()).map(listed).collect();
    match args.format {
        WorkloadsFormat::Json => println!("{}", serde_json::to_string_pretty(&all)?),
        WorkloadsFormat::Text => print!("{}", text(&all)),
    }
    Ok(())
}

/// A line a workload, its description wrapped under it at 80 columns.
fn text(all: &[Listed]) -> String {
    let mut out = format!("{:<20} {:<14} {:<7} {}\n", "workload", "suite", "pairs", "what it does");
    for l in all {
        let flags = if l.mdb_flags.is_empty() { String::new() } else { format!("{}; ", l.mdb_flags.join(", ")) };
        let what = format!("{flags}{}", l.about);
        let pairs = if l.chunks { "chunks" } else { "whole" };
        let wrapped = textwrap::wrap(&what, 80 - 44);
        for (i, line) in wrapped.iter().enumerate() {
            match i {
                0 => out.push_str(&format!("{:<20} {:<14} {:<7} {line}\n", l.name, l.suite, pairs)),
                _ => out.push_str(&format!("{:44}{line}\n", "")),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_fits_80_columns_and_names_every_workload_once() {
        let all: Vec<Listed> = Suite::ALL.into_iter().flat_map(|s| s.workloads()).map(listed).collect();
        let t = text(&all);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let first_words: Vec<&str> =
            t.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| !w.is_empty()).collect();
        for l in &all {
            assert_eq!(first_words.iter().filter(|w| **w == l.name).count(), 1, "{}", l.name);
        }
    }
}
