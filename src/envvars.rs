//! The LMDB_REGRESS_* environment variables, read and checked in one place: a value the
//! tool cannot use is an error naming the variable and what it takes, never a silent
//! default. Shared with build.rs, so it refers to no other module of the crate.

use std::path::PathBuf;

use anyhow::{bail, Result};

/// A yes/no switch: 1, true, yes, on; or 0, false, no, off (unset or empty: no).
pub fn flag(name: &str) -> Result<bool> {
    Ok(match text(name)?.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("" | "0" | "false" | "no" | "off") => false,
        Some("1" | "true" | "yes" | "on") => true,
        Some(other) => bail!("{name}={other} is not a yes/no value: set it to 1 (or true, yes, on) or 0, or unset it"),
    })
}

/// One of `allowed` (case as given), or None when unset or empty.
pub fn one_of(name: &str, allowed: &[&'static str]) -> Result<Option<&'static str>> {
    match text(name)?.filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => match allowed.iter().find(|a| **a == v) {
            Some(a) => Ok(Some(*a)),
            None => bail!("{name}={v} is not one of {}; unset it for the default", allowed.join(", ")),
        },
    }
}

/// A path, or None when unset or empty.
pub fn path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// A folder: None when unset; an error when it names something that is not a folder.
pub fn dir(name: &str) -> Result<Option<PathBuf>> {
    let Some(p) = path(name) else { return Ok(None) };
    if p.exists() && !p.is_dir() {
        bail!("{name}={} is not a folder: point it at a folder (it is created if missing)", p.display());
    }
    Ok(Some(p))
}

/// A file that must exist: None when unset.
pub fn file(name: &str) -> Result<Option<PathBuf>> {
    let Some(p) = path(name) else { return Ok(None) };
    if !p.is_file() {
        bail!("{name}={} is not a file: point it at one, or unset it", p.display());
    }
    Ok(Some(p))
}

/// A whole number of seconds, at least 1: None when unset or empty.
pub fn seconds(name: &str) -> Result<Option<u64>> {
    match text(name)?.filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => bail!("{name}={v} is not a whole number of seconds: set it to 1 or more, or unset it"),
        },
    }
}

/// GitHub Actions' own variables, set in its jobs: the file a job's summary is appended to.
pub fn github_step_summary() -> Option<PathBuf> {
    path("GITHUB_STEP_SUMMARY")
}

/// The page of the GitHub Actions run this job belongs to, where its artifacts are listed.
pub fn github_run_url() -> Option<String> {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let (server, repository, run) = (var("GITHUB_SERVER_URL")?, var("GITHUB_REPOSITORY")?, var("GITHUB_RUN_ID")?);
    Some(format!("{server}/{repository}/actions/runs/{run}#artifacts"))
}

/// `LMDB_REGRESS_PROGRESS_INTERVAL`: seconds between progress lines when stderr is no
/// terminal (tests shorten it).
pub const PROGRESS_INTERVAL: &str = "LMDB_REGRESS_PROGRESS_INTERVAL";

/// `LMDB_REGRESS_ARCHIVE_URLS`: comma-separated http(s) URL templates, each with `{ref}`.
pub fn archive_urls() -> Result<Option<Vec<String>>> {
    let name = "LMDB_REGRESS_ARCHIVE_URLS";
    let Some(v) = text(name)?.filter(|v| !v.trim().is_empty()) else { return Ok(None) };
    let urls: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
    for u in &urls {
        if !(u.starts_with("https://") || u.starts_with("http://")) || !u.contains("{ref}") {
            bail!("{name}: {u:?} is no URL template: each must be http:// or https:// and hold {{ref}} (the tag)");
        }
    }
    Ok(Some(urls))
}

/// Every variable that takes a value from a set or names a path, checked at once, so a
/// command refuses a bad one before it does anything.
pub fn check_all() -> Result<()> {
    for name in ["LMDB_REGRESS_OFFLINE", "LMDB_REGRESS_SKIP_MATRIX"] {
        flag(name)?;
    }
    one_of("LMDB_REGRESS_COUNTER", COUNTERS)?;
    for name in ["LMDB_REGRESS_CACHE", "LMDB_REGRESS_SCRATCH"] {
        dir(name)?;
    }
    for name in ["LMDB_REGRESS_TAGS", "LMDB_REGRESS_HARNESS_C"] {
        file(name)?;
    }
    archive_urls()?;
    seconds(PROGRESS_INTERVAL)?;
    Ok(())
}

/// `LMDB_REGRESS_COUNTER`'s values: auto (the default: perf where allowed) or callgrind.
pub const COUNTERS: &[&str] = &["auto", "callgrind"];

fn text(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => bail!("{name}={} is not UTF-8 text", v.to_string_lossy()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each test uses variables of its own: tests run on threads of one process.
    #[test]
    fn switches_take_yes_or_no_and_nothing_else() {
        let name = "LMDB_REGRESS_TEST_SWITCH";
        for (v, want) in [("1", true), ("true", true), ("ON", true), ("0", false), ("", false), ("no", false)] {
            std::env::set_var(name, v);
            assert_eq!(flag(name).unwrap(), want, "{v}");
        }
        std::env::set_var(name, "banana");
        let e = flag(name).unwrap_err().to_string();
        assert!(e.contains("LMDB_REGRESS_TEST_SWITCH=banana") && e.contains("set it to 1"), "{e}");
        std::env::remove_var(name);
        assert!(!flag(name).unwrap());
    }

    #[test]
    fn choices_and_paths_are_checked() {
        let name = "LMDB_REGRESS_TEST_CHOICE";
        std::env::set_var(name, "bogus");
        let e = one_of(name, COUNTERS).unwrap_err().to_string();
        assert!(e.contains("bogus is not one of auto, callgrind"), "{e}");
        std::env::set_var(name, "callgrind");
        assert_eq!(one_of(name, COUNTERS).unwrap(), Some("callgrind"));
        let f = tempfile::NamedTempFile::new().unwrap();
        std::env::set_var(name, f.path());
        assert!(dir(name).unwrap_err().to_string().contains("is not a folder"));
        assert_eq!(file(name).unwrap().as_deref(), Some(f.path()));
        std::env::set_var(name, f.path().join("missing"));
        assert!(file(name).unwrap_err().to_string().contains("is not a file"));
        std::env::remove_var(name);
    }

    #[test]
    fn seconds_are_whole_and_positive() {
        let name = "LMDB_REGRESS_TEST_SECONDS";
        std::env::set_var(name, "30");
        assert_eq!(seconds(name).unwrap(), Some(30));
        for bad in ["0", "1.5", "30s", "-1"] {
            std::env::set_var(name, bad);
            let e = seconds(name).unwrap_err().to_string();
            assert!(e.contains(&format!("{name}={bad} is not a whole number of seconds")), "{e}");
        }
        std::env::remove_var(name);
        assert_eq!(seconds(name).unwrap(), None);
    }
}
