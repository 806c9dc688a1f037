//! The machine a run happened on, as every report states it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub cpu_model: String,
    pub cores: usize,
    /// cpufreq's scaling governor, where the kernel exposes it.
    pub governor: Option<String>,
    pub kernel: String,
    pub os: String,
    pub harness_version: String,
    pub date: String,
    pub command_line: Vec<String>,
    /// The file system and device of the data folders (where every environment is made):
    /// what a sync waits for. None in runs from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Environment {
    pub fn capture() -> Environment {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let os = read_trim("/etc/os-release")
            .and_then(|s| {
                s.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        Environment {
            cpu_model,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            os,
            harness_version: env!("CARGO_PKG_VERSION").to_string(),
            date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            command_line: scrub_command_line(std::env::args()),
            storage: storage(),
        }
    }
}

/// The file system and device holding the scratch folder (`LMDB_REGRESS_SCRATCH`, else the
/// temporary folder), where runs make their environments: `ext4 on /dev/vda (non-rotational)`.
fn storage() -> Option<String> {
    let base = crate::envvars::dir("LMDB_REGRESS_SCRATCH").ok().flatten().unwrap_or_else(std::env::temp_dir);
    let (device, fs) = mount_of(&base.canonicalize().ok()?, &std::fs::read_to_string("/proc/self/mounts").ok()?)?;
    let name = std::path::Path::new(&device).file_name()?.to_string_lossy().into_owned();
    // A partition's queue is its disk's.
    let rotational = ["queue/rotational", "../queue/rotational"]
        .iter()
        .find_map(|q| read_trim(&format!("/sys/class/block/{name}/{q}")));
    let kind = match rotational.as_deref() {
        Some("0") => " (non-rotational)",
        Some("1") => " (rotational)",
        _ => "",
    };
    Some(format!("{fs} on {device}{kind}"))
}

/// The device and file system type of the mount that holds `path` (the longest mount
/// point it lies under), from a mount table's lines.
pub fn mount_of(path: &std::path::Path, mounts: &str) -> Option<(String, String)> {
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3 && path.starts_with(f[1])).then(|| (f[1].len(), f[0].to_string(), f[2].to_string()))
        })
        .max_by_key(|(len, ..)| *len)
        .map(|(_, device, fs)| (device, fs))
}

/// Flags whose value is a local path, hidden whole.
const PATH_FLAGS: [&str; 5] = ["--git", "--out", "--resume", "--out-dir", "--source"];
/// Flags whose value is a local file whose name the report uses (a program's workload is
/// named after it): its folder hidden, its name kept.
const FILE_FLAGS: [&str; 1] = ["--program"];

/// The command line without local paths of repositories, sources, patches, programs and
/// files: reports get pasted into public trackers.
pub fn scrub_command_line(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut value_of: Option<String> = None;
    for (i, a) in args.enumerate() {
        if i == 0 {
            out.push("lmdb-regress".into());
        } else if let Some(flag) = value_of.take() {
            out.push(scrub_value(&flag, &a));
        } else if PATH_FLAGS.contains(&a.as_str()) || FILE_FLAGS.contains(&a.as_str()) || a == "--tags" {
            value_of = Some(a.clone());
            out.push(a);
        } else if let Some((flag, value)) = a.split_once('=').filter(|(f, _)| f.starts_with("--")) {
            out.push(format!("{flag}={}", scrub_value(flag, value)));
        } else {
            out.push(a);
        }
    }
    out
}

/// One flag's value with its local paths hidden.
fn scrub_value(flag: &str, value: &str) -> String {
    if PATH_FLAGS.contains(&flag) {
        "<path>".into()
    } else if FILE_FLAGS.contains(&flag) {
        file_name_only(value)
    } else if flag == "--tags" {
        // BASE+FILE: a patch's folder hidden, its name (the label's) kept.
        let each = value.split(',').map(|t| match t.split_once('+') {
            Some((base, patch)) => format!("{base}+{}", file_name_only(patch)),
            None => t.to_string(),
        });
        each.collect::<Vec<_>>().join(",")
    } else {
        value.to_string()
    }
}

/// `dir/name` as `<path>/name`; a bare name as it is.
fn file_name_only(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((_, name)) => format!("<path>/{name}"),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_of_sources_patches_programs_and_files_are_scrubbed() {
        let args = [
            "/usr/bin/lmdb-regress",
            "run",
            "--git",
            "/home/me/openldap",
            "--source",
            "/home/me/lmdb/libraries/liblmdb",
            "--source=../mine",
            "--tags",
            "0.9.17,0.9.33+/home/me/fix.patch,0.9.33+plain.patch",
            "--program=/home/me/progs/append1000.c",
            "--out",
            "/home/me/run.jsonl",
            "--workloads",
            "write",
        ];
        let scrubbed = scrub_command_line(args.iter().map(|a| a.to_string())).join(" ");
        assert_eq!(
            scrubbed,
            "lmdb-regress run --git <path> --source <path> --source=<path> --tags \
             0.9.17,0.9.33+<path>/fix.patch,0.9.33+plain.patch --program=<path>/append1000.c --out <path> \
             --workloads write"
        );
        assert!(!scrubbed.contains("/home/me"));
    }

    #[test]
    fn a_path_is_on_the_longest_mount_point_it_lies_under() {
        let mounts = "/dev/vda / ext4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n/dev/vdb1 /work/data xfs rw 0 0\n";
        let on = |p: &str| mount_of(std::path::Path::new(p), mounts).map(|(d, f)| format!("{f} {d}"));
        assert_eq!(on("/work/data/scratch").as_deref(), Some("xfs /dev/vdb1"));
        assert_eq!(on("/work/database").as_deref(), Some("ext4 /dev/vda"), "a component, not a prefix of text");
        assert_eq!(on("/tmp/x").as_deref(), Some("tmpfs tmpfs"));
    }
}
