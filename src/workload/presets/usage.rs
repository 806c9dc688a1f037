//! What a timed region cost the process: getrusage's times and page faults, and the peak
//! resident set. getrusage's own ru_maxrss cannot serve: it is the peak over the
//! process's life and, for a process spawned with vfork, starts from the parent's peak.
//! So the peak is VmHWM, reset just before the region (`/proc/self/clear_refs`, "5").

use anyhow::{bail, Result};

use super::Usage;

/// getrusage(RUSAGE_SELF) at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    user_us: u64,
    sys_us: u64,
    major_faults: u64,
    minor_faults: u64,
}

fn micros(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64
}

impl Snapshot {
    /// Page faults that read from the device, since the process began.
    pub fn major_faults(&self) -> u64 {
        self.major_faults
    }
}

pub fn snapshot() -> Result<Snapshot> {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        bail!("getrusage: {}", std::io::Error::last_os_error());
    }
    Ok(Snapshot {
        user_us: micros(u.ru_utime),
        sys_us: micros(u.ru_stime),
        major_faults: u.ru_majflt as u64,
        minor_faults: u.ru_minflt as u64,
    })
}

/// Resets the peak resident set to the current one; false where the kernel refuses.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// VmHWM in KiB.
pub fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

/// The region between two snapshots; `peak` when the reset before it worked.
pub fn between(before: Snapshot, after: Snapshot, peak: Option<u64>) -> Usage {
    Usage {
        user_us: after.user_us - before.user_us,
        sys_us: after.sys_us - before.sys_us,
        max_rss_kib: peak,
        major_faults: after.major_faults - before.major_faults,
        minor_faults: after.minor_faults - before.minor_faults,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_fresh_memory_shows_as_minor_faults_and_a_higher_peak() {
        assert!(reset_peak(), "this kernel lets a process reset its peak RSS");
        let low = peak_kib().unwrap();
        let before = snapshot().unwrap();
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let u = between(before, snapshot().unwrap(), peak_kib());
        // At least one fault per 2 MiB, even where transparent huge pages serve them.
        assert!(u.minor_faults >= 32, "{u:?}");
        assert!(u.max_rss_kib.unwrap() >= low + 60_000, "{u:?} from {low}");
    }
}
