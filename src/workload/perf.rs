//! Instructions retired on this thread, through perf_event_open: the counter the Rust
//! worker wraps around each timed call. Lives beside the workloads that use it; the
//! runner's choice of counter (perf or callgrind) is in `runner::counter`.

use anyhow::{bail, Result};
use perf_event_open_sys as perf;

/// A user-space instruction counter on this thread, disabled until started.
pub struct PerfCounter {
    fd: i32,
}

impl PerfCounter {
    pub fn open() -> Result<PerfCounter> {
        let mut attr = perf::bindings::perf_event_attr {
            type_: perf::bindings::PERF_TYPE_HARDWARE,
            size: std::mem::size_of::<perf::bindings::perf_event_attr>() as u32,
            config: perf::bindings::PERF_COUNT_HW_INSTRUCTIONS as u64,
            ..Default::default()
        };
        attr.set_disabled(1);
        attr.set_exclude_kernel(1);
        attr.set_exclude_hv(1);
        // SAFETY: a valid attr for this process (pid 0), any CPU (-1), no group.
        let fd = unsafe { perf::perf_event_open(&mut attr, 0, -1, -1, 0) };
        if fd < 0 {
            bail!("perf_event_open: {}", std::io::Error::last_os_error());
        }
        Ok(PerfCounter { fd })
    }

    /// Zeroes and enables the counter.
    #[inline(always)]
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: fd is our perf counter.
        let (reset, enable) = unsafe { (perf::ioctls::RESET(self.fd, 0), perf::ioctls::ENABLE(self.fd, 0)) };
        if reset < 0 || enable < 0 {
            bail!("cannot start the perf counter: {}", std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Disables the counter and reads what it counted since `start`. A failed read is an
    /// error, never a count of 0.
    #[inline(always)]
    pub fn stop(&mut self) -> Result<u64> {
        let mut v = 0u64;
        // SAFETY: fd is our perf counter; it reads one u64 into v.
        let (disable, n) = unsafe {
            let d = perf::ioctls::DISABLE(self.fd, 0);
            (d, libc::read(self.fd, &mut v as *mut u64 as *mut libc::c_void, 8))
        };
        if disable < 0 || n < 0 {
            bail!("cannot read the perf counter: {}", std::io::Error::last_os_error());
        }
        if n != 8 {
            bail!("cannot read the perf counter: read {n} of 8 bytes");
        }
        Ok(v)
    }
}

impl Drop for PerfCounter {
    fn drop(&mut self) {
        // SAFETY: closing our own fd.
        unsafe { libc::close(self.fd) };
    }
}
