//! What a pass asks the kernel to write and to make durable, counted exactly. The binary
//! defines fdatasync, fsync, msync, pwrite, write and writev and exports them (build.rs),
//! so the liblmdb a worker loads calls these: each counts, then forwards to libc's own
//! (dlsym RTLD_NEXT). The counts are read before and after a timed region, never in it.
//!
//! A sync is an fdatasync, an fsync, an msync with MS_SYNC, or a write through a
//! descriptor opened with O_DSYNC or O_SYNC (LMDB writes its meta page through one when
//! it syncs meta pages, instead of a second fdatasync). Bytes are what write, pwrite and
//! writev wrote; under MDB_WRITEMAP LMDB writes through its map, and they are 0.

use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

static SYNCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// Whether a descriptor was opened to sync every write: 0 not known yet, 1 no, 2 yes.
/// Descriptors past the table are asked each time.
const KNOWN: usize = 1024;
static DSYNC: [AtomicU8; KNOWN] = [const { AtomicU8::new(0) }; KNOWN];

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    syncs: u64,
    bytes: u64,
}

impl Mark {
    pub fn now() -> Mark {
        Mark { syncs: SYNCS.load(Ordering::SeqCst), bytes: BYTES.load(Ordering::SeqCst) }
    }

    /// The syncs and bytes since this mark.
    pub fn since(self) -> (u64, u64) {
        let now = Mark::now();
        (now.syncs - self.syncs, now.bytes - self.bytes)
    }
}

/// A write pass's I/O, each figure exact: what its timed region synced and wrote, and the
/// write transactions it committed (the environment's last transaction id before and after).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Io {
    pub syncs: u64,
    pub bytes: u64,
    pub commits: u64,
}

/// Forgets what is known of every descriptor: a newly opened environment may reuse a
/// closed one's number with other flags. Called untimed, when an environment opens, and
/// looks up libc's own functions there, not at a timed region's first call.
pub fn forget_descriptors() {
    for d in &DSYNC {
        d.store(0, Ordering::Relaxed);
    }
    // SAFETY: no valid descriptor and nothing to sync: each call only fails, uncounted.
    unsafe {
        fdatasync(-1);
        fsync(-1);
        msync(std::ptr::null_mut(), 0, 0);
        write(-1, std::ptr::null(), 0);
        pwrite(-1, std::ptr::null(), 0, 0);
        pwrite64(-1, std::ptr::null(), 0, 0);
        writev(-1, std::ptr::null(), 0);
    }
}

/// Asks each descriptor the process holds now whether it syncs every write (untimed,
/// after an environment has opened its files), so that a timed region's first write
/// through one asks nothing.
pub fn learn_descriptors() {
    let Ok(open) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds = open.flatten().filter_map(|e| e.file_name().to_str()?.parse::<c_int>().ok());
    for fd in fds.filter(|fd| usize::try_from(*fd).is_ok_and(|i| i < KNOWN)) {
        syncs_each_write(fd);
    }
}

/// Whether writes through `fd` are synced as they are made.
fn syncs_each_write(fd: c_int) -> bool {
    let ask = || {
        // SAFETY: F_GETFL reads a descriptor's status flags; any fd is safe to ask.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        flags != -1 && flags & libc::O_DSYNC != 0
    };
    let Some(slot) = usize::try_from(fd).ok().and_then(|i| DSYNC.get(i)) else { return ask() };
    match slot.load(Ordering::Relaxed) {
        0 => {
            let yes = ask();
            slot.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
        known => known == 2,
    }
}

fn wrote(fd: c_int, n: isize) {
    if n > 0 {
        BYTES.fetch_add(n as u64, Ordering::Relaxed);
        if syncs_each_write(fd) {
            SYNCS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// libc's own `name`, looked up once.
fn next(slot: &AtomicUsize, name: &CStr) -> usize {
    match slot.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: dlsym with RTLD_NEXT finds the definition after this binary's.
            let f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
            assert_ne!(f, 0, "libc has no {name:?}");
            slot.store(f, Ordering::Relaxed);
            f
        }
        f => f,
    }
}

/// Defines an exported libc function that counts through `$count`, then calls libc's.
macro_rules! forward {
    ($name:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, $count:expr) => {
        /// Counted, then libc's (see the module).
        ///
        /// # Safety
        /// As libc's.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let name = CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()).expect("a C name");
            // SAFETY: the address dlsym gave for this very name, of this very type.
            let libc_own: unsafe extern "C" fn($($ty),*) -> $ret = std::mem::transmute(next(&NEXT, name));
            let r = libc_own($($arg),*);
            $count(r);
            r
        }
    };
}

fn synced(r: c_int) {
    if r == 0 {
        SYNCS.fetch_add(1, Ordering::Relaxed);
    }
}

forward!(fdatasync, (fd: c_int) -> c_int, synced);
forward!(fsync, (fd: c_int) -> c_int, synced);
forward!(msync, (addr: *mut c_void, len: usize, flags: c_int) -> c_int, |r| if flags & libc::MS_SYNC != 0 {
    synced(r)
});
forward!(write, (fd: c_int, buf: *const c_void, n: usize) -> isize, |r| wrote(fd, r));
forward!(pwrite, (fd: c_int, buf: *const c_void, n: usize, off: libc::off_t) -> isize, |r| wrote(fd, r));
forward!(pwrite64, (fd: c_int, buf: *const c_void, n: usize, off: libc::off64_t) -> isize, |r| wrote(fd, r));
forward!(writev, (fd: c_int, iov: *const libc::iovec, n: c_int) -> isize, |r| wrote(fd, r));

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;

    /// Counts read around the calls this process makes itself (its own calls bind to
    /// these definitions as the loaded library's do).
    #[test]
    fn syncs_and_bytes_are_counted_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let mut plain = std::fs::File::create(dir.path().join("plain")).unwrap();
        let mut dsync = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(libc::O_DSYNC)
            .open(dir.path().join("d"))
            .unwrap();
        forget_descriptors();
        learn_descriptors();
        let known = |f: &std::fs::File| DSYNC[usize::try_from(f.as_raw_fd()).unwrap()].load(Ordering::Relaxed);
        assert_eq!((known(&plain), known(&dsync)), (1, 2), "learnt before any write");
        let mark = Mark::now();
        plain.write_all(&[1; 100]).unwrap();
        plain.sync_data().unwrap();
        plain.sync_all().unwrap();
        dsync.write_all(&[2; 28]).unwrap();
        let (syncs, bytes) = mark.since();
        // Other test threads may write and sync meanwhile: at least ours (the worker's
        // exact counts are tested through LMDB, in a process of their own).
        assert!(syncs >= 3, "{syncs}");
        assert!(bytes >= 128, "{bytes}");
    }
}
