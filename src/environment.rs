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
    /// Which CPU behind the model name: a VM's "AMD EPYC" is every EPYC generation, whose
    /// caches differ. None in runs from before it was recorded, or where it is not readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor: Option<Processor>,
    /// The SHA-256 of the lmdb-regress executable that ran the run: the tool's own code
    /// placement moves some comparisons by a point or more between its builds (reports/
    /// README.md, "The tool's own build"), so runs of two builds are told apart. None in
    /// runs from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_sha256: Option<String>,
}

/// A CPU's family, model and stepping (as /proc/cpuinfo numbers them) and cpu0's caches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Processor {
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub caches: Vec<Cache>,
}

/// One cache of cpu0, as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u8,
    pub kind: CacheKind,
    pub kib: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

/// The SHA-256 of the running lmdb-regress executable, where it can be read.
pub fn tool_sha256() -> Option<String> {
    std::env::current_exe().ok().and_then(|exe| crate::artifact::sha256(&exe).ok())
}

impl Environment {
    /// The tool's build as reports name it: the first 12 hex digits of its SHA-256.
    pub fn tool_build(&self) -> Option<&str> {
        self.tool_sha256.as_deref().map(|h| h.get(..12).unwrap_or(h))
    }
}

impl std::fmt::Display for Processor {
    /// "family 25, model 17, stepping 1; L1d 32 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB"
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "family {}, model {}, stepping {}", self.family, self.model, self.stepping)?;
        for (i, c) in self.caches.iter().enumerate() {
            let suffix = match c.kind {
                CacheKind::Data => "d",
                CacheKind::Instruction => "i",
                CacheKind::Unified => "",
            };
            let size = if c.kib % 1024 == 0 { format!("{} MiB", c.kib / 1024) } else { format!("{} KiB", c.kib) };
            write!(f, "{}L{}{suffix} {size}", if i == 0 { "; " } else { ", " }, c.level)?;
        }
        Ok(())
    }
}

/// The first processor's family, model and stepping in a /proc/cpuinfo text (x86's
/// fields; None where they are missing, as on other architectures).
pub fn processor_of(cpuinfo: &str) -> Option<(u32, u32, u32)> {
    let field = |name: &str| {
        cpuinfo.lines().take_while(|l| !l.trim().is_empty()).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().parse().ok()).flatten()
        })
    };
    Some((field("cpu family")?, field("model")?, field("stepping")?))
}

/// A cache from sysfs's `level`, `type` and `size` ("1024K") files' contents.
pub fn cache_of(level: &str, kind: &str, size: &str) -> Option<Cache> {
    let kind = match kind.trim() {
        "Data" => CacheKind::Data,
        "Instruction" => CacheKind::Instruction,
        "Unified" => CacheKind::Unified,
        _ => return None,
    };
    let size = size.trim();
    let kib = match size.strip_suffix('K') {
        Some(k) => k.parse().ok()?,
        None => size.strip_suffix('M')?.parse::<u64>().ok()? * 1024,
    };
    Some(Cache { level: level.trim().parse().ok()?, kind, kib })
}

/// cpu0's caches, level by level, from sysfs.
fn caches() -> Vec<Cache> {
    let dir = "/sys/devices/system/cpu/cpu0/cache";
    let mut caches: Vec<Cache> = (0..)
        .map(|i| format!("{dir}/index{i}"))
        .take_while(|d| std::path::Path::new(d).exists())
        .filter_map(|d| {
            let read = |f: &str| std::fs::read_to_string(format!("{d}/{f}")).ok();
            cache_of(&read("level")?, &read("type")?, &read("size")?)
        })
        .collect();
    caches.sort_by_key(|c| (c.level, c.kind as u8));
    caches
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Environment {
    /// The CPU as every report names it: the model name, and which one behind it where known.
    pub fn cpu(&self) -> String {
        match &self.processor {
            Some(p) => format!("{} ({p})", self.cpu_model),
            None => self.cpu_model.clone(),
        }
    }

    /// Whether two runs' CPUs are one kind: the same model name, and the same family, model,
    /// stepping and caches where both runs recorded them (older runs did not).
    pub fn same_cpu(&self, other: &Environment) -> bool {
        self.cpu_model == other.cpu_model
            && match (&self.processor, &other.processor) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// This machine, now.
    pub fn capture() -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let processor = processor_of(&cpuinfo).map(|(family, model, stepping)| Processor {
            family,
            model,
            stepping,
            caches: caches(),
        });
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or_else(|| "unknown".into(), |(_, v)| v.trim().to_string());
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
            processor,
            tool_sha256: tool_sha256(),
        }
    }
}

/// The file system and device holding the scratch folder (`LMDB_REGRESS_SCRATCH`, else the
/// temporary folder), where runs make the environments of units that need a disk.
fn storage() -> Option<String> {
    storage_of(&crate::envvars::dir("LMDB_REGRESS_SCRATCH").ok().flatten().unwrap_or_else(std::env::temp_dir))
}

/// The file system and device holding `base`: `ext4 on /dev/vda (non-rotational)`.
pub fn storage_of(base: &std::path::Path) -> Option<String> {
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

/// MemAvailable from /proc/meminfo, in bytes.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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

    /// The first processor's block of /proc/cpuinfo on this project's two hosts (trimmed).
    const EPYC: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n\
        model name\t: AMD EPYC\nstepping\t: 1\nmicrocode\t: 0x1000065\ncache size\t: 1024 KB\n\n\
        processor\t: 1\ncpu family\t: 23\nmodel\t\t: 49\nstepping\t: 0\n";
    const XEON: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n\
        model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\nstepping\t: 8\n\n";

    #[test]
    fn family_model_and_stepping_come_from_the_first_processor_on_both_hosts() {
        assert_eq!(processor_of(EPYC), Some((25, 17, 1)));
        assert_eq!(processor_of(XEON), Some((6, 143, 8)));
        assert_eq!(processor_of("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n"), None);
    }

    #[test]
    fn caches_are_read_from_sysfs_sizes_and_named_by_level_and_kind() {
        let c = |l, t, s| cache_of(l, t, s).unwrap();
        let caches = vec![
            c("1\n", "Data\n", "32K\n"),
            c("1", "Instruction", "32K"),
            c("2", "Unified", "1024K"),
            c("3", "Unified", "32768K"),
        ];
        assert_eq!(caches[3], Cache { level: 3, kind: CacheKind::Unified, kib: 32768 });
        assert_eq!(cache_of("2", "Unified", "2M").map(|c| c.kib), Some(2048));
        assert_eq!(cache_of("1", "Trace", "12K"), None);
        let p = Processor { family: 25, model: 17, stepping: 1, caches };
        assert_eq!(p.to_string(), "family 25, model 17, stepping 1; L1d 32 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB");
    }

    #[test]
    fn two_epycs_of_one_name_are_told_apart_where_both_runs_recorded_which() {
        let zen = |model| Environment {
            cpu_model: "AMD EPYC".into(),
            processor: Some(Processor { family: 25, model, stepping: 1, caches: Vec::new() }),
            ..Environment::default()
        };
        let older = Environment { cpu_model: "AMD EPYC".into(), ..Environment::default() };
        assert!(zen(17).same_cpu(&zen(17)) && !zen(17).same_cpu(&zen(1)));
        assert!(older.same_cpu(&zen(17)) && zen(1).same_cpu(&older));
        assert_eq!(
            (older.cpu(), zen(17).cpu()),
            ("AMD EPYC".into(), "AMD EPYC (family 25, model 17, stepping 1)".into())
        );
    }

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
