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
        }
    }
}

/// The command line without local paths of repositories and files: reports get pasted
/// into public trackers.
pub fn scrub_command_line(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut hide_next = false;
    for (i, a) in args.enumerate() {
        if i == 0 {
            out.push("lmdb-regress".into());
        } else if hide_next {
            out.push("<path>".into());
            hide_next = false;
        } else if a == "--git" || a == "--out" || a == "--resume" || a == "--out-dir" {
            out.push(a);
            hide_next = true;
        } else if let Some((flag, _)) =
            a.split_once('=').filter(|(f, _)| matches!(*f, "--git" | "--out" | "--resume" | "--out-dir"))
        {
            out.push(format!("{flag}=<path>"));
        } else {
            out.push(a);
        }
    }
    out
}
