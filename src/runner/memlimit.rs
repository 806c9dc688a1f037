//! A memory limit that a measuring process and its page cache are charged to: a cgroup
//! of its own under the host's memory controller (cgroup v2, else v1), so that a
//! database larger than the limit is read from the device, as on a smaller machine.
//! Where there is no controller, or the tool may not make a cgroup, it refuses: nothing
//! is measured without the limit it names.

use std::fs::{self, File};
use std::io;
use std::os::unix::io::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Why no limit can be set on this host.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(
        "--memory-limit needs a cgroup memory controller, and this host mounts none (no cgroup2 \
         mount with the memory controller, no cgroup v1 `memory` hierarchy in /proc/self/mounts)"
    )]
    NoController,
    #[error(
        "--memory-limit: this user may not make a cgroup in {dir} ({source}); run as root or delegate that cgroup"
    )]
    NotPermitted { dir: PathBuf, source: io::Error },
    #[error("--memory-limit: {what} in {dir}: {source}")]
    Failed { what: &'static str, dir: PathBuf, source: io::Error },
    #[error("--memory-limit {asked} bytes: the kernel set {set} instead")]
    NotHeld { asked: u64, set: u64 },
    #[error(
        "{CGROUP}={} is not a folder of a mounted cgroup memory controller (cgroup2, or v1's `memory`): \
         point it at a cgroup delegated to this user, or unset it",
        dir.display()
    )]
    NotACgroup { dir: PathBuf },
}

/// Which cgroup interface a controller speaks: the files that hold the limit differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hierarchy {
    V2,
    V1,
}

impl Hierarchy {
    fn limit_file(self) -> &'static str {
        match self {
            Hierarchy::V2 => "memory.max",
            Hierarchy::V1 => "memory.limit_in_bytes",
        }
    }

    /// Swap would hide the limit: the cgroup's pages would move to swap, not be dropped.
    fn swap_file(self) -> &'static str {
        match self {
            Hierarchy::V2 => "memory.swap.max",
            Hierarchy::V1 => "memory.memsw.limit_in_bytes",
        }
    }

    /// Where the kernel counts the processes its OOM killer ended, in an `oom_kill N` line.
    fn events_file(self) -> &'static str {
        match self {
            Hierarchy::V2 => "memory.events",
            Hierarchy::V1 => "memory.oom_control",
        }
    }

    fn peak_file(self) -> &'static str {
        match self {
            Hierarchy::V2 => "memory.peak",
            Hierarchy::V1 => "memory.max_usage_in_bytes",
        }
    }
}

/// The memory controller's root: where limited cgroups are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    pub hierarchy: Hierarchy,
    pub root: PathBuf,
}

/// The variable naming the cgroup under which limited cgroups are made.
pub const CGROUP: &str = "LMDB_REGRESS_CGROUP";

impl Controller {
    /// Where limited cgroups are made: the cgroup `LMDB_REGRESS_CGROUP` names (one
    /// delegated to a user who may not write the root), else the host's memory
    /// controller's root, from /proc/self/mounts.
    pub fn find() -> Result<Controller, Refusal> {
        let mounts = fs::read_to_string("/proc/self/mounts").map_err(|source| Refusal::Failed {
            what: "reading the mounts",
            dir: "/proc/self".into(),
            source,
        })?;
        match crate::envvars::path(CGROUP) {
            Some(dir) => Controller::at(&dir, &mounts),
            None => Controller::in_mounts(&mounts, |root| fs::read_to_string(root.join("cgroup.controllers")).ok()),
        }
    }

    /// `dir` as the root of limited cgroups: inside the cgroup2 mount, or v1's memory
    /// mount, that holds it.
    pub fn at(dir: &Path, mounts: &str) -> Result<Controller, Refusal> {
        let dir = fs::canonicalize(dir).map_err(|_| Refusal::NotACgroup { dir: dir.to_path_buf() })?;
        let holding = mounts.lines().filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let hierarchy = match (f.get(2).copied(), f.get(3)) {
                (Some("cgroup2"), _) => Hierarchy::V2,
                (Some("cgroup"), Some(o)) if o.split(',').any(|o| o == "memory") => Hierarchy::V1,
                _ => return None,
            };
            let root = PathBuf::from(f[1]);
            dir.starts_with(&root).then_some((root.components().count(), hierarchy))
        });
        match holding.max_by_key(|(depth, _)| *depth) {
            Some((_, hierarchy)) => Ok(Controller { hierarchy, root: dir }),
            None => Err(Refusal::NotACgroup { dir }),
        }
    }

    /// The controller a mount table offers: a cgroup2 mount whose root lists the memory
    /// controller (`controllers` reads its cgroup.controllers), else a v1 `memory` mount.
    pub fn in_mounts(mounts: &str, controllers: impl Fn(&Path) -> Option<String>) -> Result<Controller, Refusal> {
        let fields = mounts.lines().filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4).then(|| (PathBuf::from(f[1]), f[2].to_string(), f[3].to_string()))
        });
        let (mut v2, mut v1) = (None, None);
        for (root, kind, options) in fields {
            match kind.as_str() {
                "cgroup2" if controllers(&root).is_some_and(|c| c.split_whitespace().any(|c| c == "memory")) => {
                    v2.get_or_insert(root);
                }
                "cgroup" if options.split(',').any(|o| o == "memory") => {
                    v1.get_or_insert(root);
                }
                _ => {}
            }
        }
        v2.map(|root| Controller { hierarchy: Hierarchy::V2, root })
            .or(v1.map(|root| Controller { hierarchy: Hierarchy::V1, root }))
            .ok_or(Refusal::NoController)
    }
}

/// One limited cgroup, removed when dropped (after the processes in it have ended).
pub struct Limited {
    hierarchy: Hierarchy,
    dir: PathBuf,
    limit: u64,
    procs: File,
}

impl Limited {
    /// A new cgroup under `controller` whose memory, page cache included, is held to
    /// `limit` bytes (the kernel rounds down to a page; anything else is refused).
    pub fn new(controller: &Controller, limit: u64) -> Result<Limited, Refusal> {
        static MADE: AtomicU32 = AtomicU32::new(0);
        let name = format!("lmdb-regress-{}-{}", std::process::id(), MADE.fetch_add(1, Ordering::Relaxed));
        let dir = controller.root.join(name);
        fs::create_dir(&dir).map_err(|source| match source.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                Refusal::NotPermitted { dir: controller.root.clone(), source }
            }
            _ => Refusal::Failed { what: "making a cgroup", dir: controller.root.clone(), source },
        })?;
        let made = Limited::configure(controller.hierarchy, &dir, limit);
        if made.is_err() {
            let _ = fs::remove_dir(&dir);
        }
        made
    }

    fn configure(hierarchy: Hierarchy, dir: &Path, limit: u64) -> Result<Limited, Refusal> {
        let failed = |what| move |source| Refusal::Failed { what, dir: dir.to_path_buf(), source };
        fs::write(dir.join(hierarchy.limit_file()), limit.to_string()).map_err(failed("setting the limit"))?;
        let set = read_bytes(&dir.join(hierarchy.limit_file())).map_err(failed("reading the limit back"))?;
        if set > limit || set + 4096 * 16 < limit {
            return Err(Refusal::NotHeld { asked: limit, set });
        }
        let swap = dir.join(hierarchy.swap_file());
        if swap.exists() {
            let value = if hierarchy == Hierarchy::V2 { "0".to_string() } else { set.to_string() };
            fs::write(&swap, value).map_err(failed("forbidding swap"))?;
        }
        let procs =
            File::options().write(true).open(dir.join("cgroup.procs")).map_err(failed("opening cgroup.procs"))?;
        Ok(Limited { hierarchy, dir: dir.to_path_buf(), limit: set, procs })
    }

    /// The limit as the kernel holds it, in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most memory the cgroup was charged at once, page cache included.
    pub fn peak(&self) -> io::Result<u64> {
        read_bytes(&self.dir.join(self.hierarchy.peak_file()))
    }

    /// How many of its processes the kernel's OOM killer has ended (0 where the kernel
    /// does not say).
    pub fn oom_kills(&self) -> u64 {
        let events = fs::read_to_string(self.dir.join(self.hierarchy.events_file())).unwrap_or_default();
        events.lines().find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok()).unwrap_or(0)
    }

    /// Makes `cmd`'s process join this cgroup before it runs anything, so that all it
    /// maps and reads is charged here: the child writes "0" (itself) to cgroup.procs,
    /// through a descriptor opened beforehand (after fork only a write is safe).
    pub fn confine(&self, cmd: &mut Command) {
        let fd = self.procs.as_raw_fd();
        // SAFETY: the closure calls write(2) alone, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                if written == 1 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            });
        }
    }
}

impl Drop for Limited {
    fn drop(&mut self) {
        // The kernel moves what is still charged to the parent; a cgroup with a live
        // process is busy, and is left for the host to see rather than waited on.
        let _ = fs::remove_dir(&self.dir);
    }
}

fn read_bytes(path: &Path) -> io::Result<u64> {
    let text = fs::read_to_string(path)?;
    match text.trim() {
        "max" => Ok(u64::MAX),
        n => n.parse().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n\
        cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
        cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
        cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
    const UNIFIED: &str = "proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec 0 0\n";

    #[test]
    fn a_hybrid_host_without_v2_memory_uses_the_v1_hierarchy() {
        let c = Controller::in_mounts(HYBRID, |_| Some(String::new())).unwrap();
        assert_eq!(c, Controller { hierarchy: Hierarchy::V1, root: "/sys/fs/cgroup/memory".into() });
    }

    #[test]
    fn a_unified_host_with_the_memory_controller_uses_v2() {
        let listed = |_: &Path| Some("cpuset cpu io memory pids\n".to_string());
        let c = Controller::in_mounts(UNIFIED, listed).unwrap();
        assert_eq!(c, Controller { hierarchy: Hierarchy::V2, root: "/sys/fs/cgroup".into() });
        let c = Controller::in_mounts(HYBRID, |p| (p == Path::new("/sys/fs/cgroup/unified")).then(|| "memory".into()));
        assert_eq!(c.unwrap().hierarchy, Hierarchy::V2);
    }

    #[test]
    fn a_named_cgroup_is_of_the_mount_that_holds_it_and_a_plain_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (root, sub) = (fs::canonicalize(dir.path()).unwrap(), dir.path().join("delegated"));
        fs::create_dir(&sub).unwrap();
        let mounts = format!("{HYBRID}cgroup2 {} cgroup2 rw 0 0\n", root.display());
        let c = Controller::at(&sub, &mounts).unwrap();
        assert_eq!(c, Controller { hierarchy: Hierarchy::V2, root: root.join("delegated") });
        let e = Controller::at(&sub, HYBRID).unwrap_err();
        assert!(e.to_string().contains("LMDB_REGRESS_CGROUP=") && e.to_string().contains("delegated"), "{e}");
    }

    #[test]
    fn no_memory_controller_is_refused_clearly() {
        let none = Controller::in_mounts(UNIFIED, |_| Some("cpu io pids".into())).unwrap_err();
        assert!(matches!(none, Refusal::NoController));
        assert!(none.to_string().contains("needs a cgroup memory controller"), "{none}");
        let cpu_only = "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu,cpuacct 0 0\n";
        assert!(matches!(Controller::in_mounts(cpu_only, |_| None), Err(Refusal::NoController)));
    }

    #[test]
    fn a_controller_root_that_cannot_be_written_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("absent").join("memory");
        let c = Controller { hierarchy: Hierarchy::V1, root: root.clone() };
        let e = Limited::new(&c, 64 << 20).err().unwrap();
        assert!(e.to_string().contains(&root.display().to_string()), "{e}");
    }

    #[test]
    fn a_folder_that_is_not_a_cgroup_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let c = Controller { hierarchy: Hierarchy::V2, root: dir.path().to_path_buf() };
        let made = Limited::new(&c, 1 << 30);
        // A plain folder has no cgroup.procs: nothing could be confined to it.
        assert!(matches!(made, Err(Refusal::Failed { what: "opening cgroup.procs", .. })), "{:?}", made.err());
    }

    /// On this host: a child held to 16 MiB writes 64 MiB and reads it back, and most of
    /// it comes from the device, where without the limit it would come from the cache.
    /// A host without a controller, or a user without permission, must give the refusal
    /// that its mount table and its user call for.
    #[test]
    fn a_confined_child_reads_back_from_the_device_what_its_limit_could_not_cache() {
        let limited = Controller::find().and_then(|c| Limited::new(&c, 16 << 20));
        let limited = match limited {
            Ok(l) => l,
            Err(Refusal::NoController) => {
                let mounts = fs::read_to_string("/proc/self/mounts").unwrap();
                return assert!(!mounts.lines().any(|l| l.contains(" cgroup ") && l.contains("memory")), "{mounts}");
            }
            Err(Refusal::NotPermitted { .. }) => return assert_ne!(unsafe { libc::geteuid() }, 0),
            Err(e) => panic!("{e}"),
        };
        let scratch = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let script = "dd if=/dev/zero of=data bs=1M count=64 conv=fsync 2>/dev/null && cat data > /dev/null \
                      && grep read_bytes /proc/$$/io";
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).current_dir(scratch.path());
        limited.confine(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let read: u64 = text.trim().trim_start_matches("read_bytes:").trim().parse().unwrap();
        assert!(read >= 40 << 20, "read {read} bytes from the device: {text}");
        let peak = limited.peak().unwrap();
        assert!(peak <= limited.limit(), "peak {peak} over the limit {}", limited.limit());
    }
}
