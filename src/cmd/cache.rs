//! `lmdb-regress cache`: what the cache holds, folder by folder, and the code layouts no
//! run has used for a while, which it removes when asked. Every random-layout round links
//! or finds a layout of each unit (K of them with `--layouts-per-process K`), and every
//! label draws from a sequence of its own, so the layouts grow with the labels measured.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

use crate::layout::{self, Cached};
use crate::report::cells::plural;
use crate::source::SourceCache;

#[derive(clap::Args, Debug)]
pub struct CacheArgs {
    /// Remove the code layouts no run has used (linked, or found linked) for this many
    /// days. A later run that draws one links it again (about 20 ms of a core each).
    #[arg(long, value_name = "DAYS")]
    pub prune_layouts: Option<u32>,
    /// With --prune-layouts: say what it would remove, and remove nothing.
    #[arg(long, requires = "prune_layouts")]
    pub dry_run: bool,
}

/// Layouts unused this long are counted apart when nothing is pruned.
const UNUSED_DAYS: u32 = 30;

pub fn run(args: &CacheArgs) -> Result<()> {
    let cache = SourceCache::from_env()?;
    println!("cache: {}", cache.root.display());
    for (name, dir) in folders(&cache.root)? {
        let (files, bytes) = usage(&dir)?;
        println!("  {name:<10} {:>10}  {files} files", size_text(bytes));
    }
    let layouts = layout::cached(&cache.layouts_dir())?;
    let days = args.prune_layouts.unwrap_or(UNUSED_DAYS);
    let unused = unused_for(&layouts, days, SystemTime::now());
    let bytes = |ls: &[&Cached]| size_text(ls.iter().map(|c| c.bytes).sum());
    let (all, for_days): (Vec<&Cached>, String) = (layouts.iter().collect(), plural(days as usize, "day"));
    let unused_text = format!("{} ({})", plural(unused.len(), "layout"), bytes(&unused));
    println!("layouts: {} ({}); {unused_text} not used for {for_days}", all.len(), bytes(&all));
    match (args.prune_layouts, args.dry_run) {
        (None, _) if !unused.is_empty() => println!("remove them: lmdb-regress cache --prune-layouts {days}"),
        (Some(_), true) => println!("would remove {unused_text}; --dry-run removed nothing"),
        (Some(_), false) => {
            let bar = crate::progress::bar(unused.len() as u64, "removing layouts");
            for c in &unused {
                layout::remove(c)?;
                bar.inc(1);
            }
            bar.finish_and_clear();
            println!("removed {unused_text}");
        }
        _ => {}
    }
    Ok(())
}

/// The layouts last used more than `days` days before `now`.
fn unused_for(layouts: &[Cached], days: u32, now: SystemTime) -> Vec<&Cached> {
    let cutoff = now.checked_sub(Duration::from_secs(u64::from(days) * 86_400)).unwrap_or(SystemTime::UNIX_EPOCH);
    layouts.iter().filter(|c| c.used < cutoff).collect()
}

/// The cache's folders (sources, builds, layouts, …), by name.
fn folders(root: &Path) -> Result<Vec<(String, std::path::PathBuf)>> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        r => r.with_context(|| format!("cannot read {}", root.display()))?,
    };
    for e in entries {
        let e = e?;
        if e.file_type()?.is_dir() {
            out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Files under `dir` and their bytes (symbolic links not followed).
fn usage(dir: &Path) -> Result<(u64, u64)> {
    let (mut files, mut bytes) = (0, 0);
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let e = e?;
        let t = e.file_type()?;
        if t.is_dir() {
            let (f, b) = usage(&e.path())?;
            (files, bytes) = (files + f, bytes + b);
        } else if t.is_file() {
            (files, bytes) = (files + 1, bytes + e.metadata()?.len());
        }
    }
    Ok((files, bytes))
}

/// "7.7 GiB", "40.2 MiB", "512 B".
fn size_text(bytes: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match units.iter().find(|(_, size)| bytes >= *size) {
        Some((unit, size)) => format!("{:.1} {unit}", bytes as f64 / *size as f64),
        None => format!("{bytes} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(days_ago: u64, now: SystemTime) -> Cached {
        let used = now - Duration::from_secs(days_ago * 86_400 + 60);
        Cached { file: None, record: format!("{days_ago}.json").into(), bytes: 10, used }
    }

    #[test]
    fn layouts_unused_for_the_days_asked_are_the_ones_pruned() {
        let now = SystemTime::now();
        let layouts: Vec<Cached> = [0, 6, 7, 8, 400].map(|d| cached(d, now)).to_vec();
        let names = |days| -> Vec<String> {
            unused_for(&layouts, days, now).iter().map(|c| c.record.display().to_string()).collect()
        };
        assert_eq!(names(7), ["7.json", "8.json", "400.json"]);
        assert_eq!(names(0).len(), 5, "0 days: every layout");
        assert!(names(100_000).is_empty());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(512), "512 B");
        assert_eq!(size_text(41 << 20), "41.0 MiB");
        assert_eq!(size_text(7_700 << 20), "7.5 GiB");
    }
}
