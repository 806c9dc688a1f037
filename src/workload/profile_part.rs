//! Counting several workloads in one worker under callgrind, each exactly as if alone: a
//! client request ends each workload's profile part, named by it, and each workload runs on
//! a thread of its own, with a stack and a malloc arena no other workload touched, so what
//! ran before it cannot move where its buffers land (which changes what memcpy and malloc
//! count). Outside valgrind the requests are a few instructions that do nothing and
//! workloads run on the worker's thread.

use std::ffi::CString;
use std::sync::mpsc;
use std::sync::Once;

/// valgrind's "running on valgrind" request: non-zero under valgrind.
const RUNNING_ON_VALGRIND: usize = 0x1001;
/// callgrind's "dump stats at" request (valgrind's `VG_USERREQ_TOOL_BASE('C','T') + 3`).
const DUMP_STATS_AT: usize = 0x4354_0003;

/// A workload's thread's stack: the main thread's, 8 MiB.
const STACK: usize = 8 << 20;
/// glibc's default threshold for serving an allocation by mmap, held fixed.
const MMAP_THRESHOLD: i32 = 128 << 10;
/// Arenas enough that every workload's thread gets a fresh one (glibc's default: 8 a core).
const ARENAS: i32 = 4096;

/// Whether this process runs under valgrind.
pub fn under_valgrind() -> bool {
    client_request(0, &[RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0]) != 0
}

/// Dumps callgrind's counts since the last dump as a part whose trigger names `workload`
/// (`desc: Trigger: Client Request: <workload>`).
pub fn dump(workload: &str) {
    let name = CString::new(workload).expect("a workload's name holds no NUL");
    client_request(0, &[DUMP_STATS_AT, name.as_ptr() as usize, 0, 0, 0, 0]);
}

/// Runs `work` on a fresh thread whose malloc arena is new, and returns what it returned.
/// The thread then waits for the process to end: a thread that exits hands its arena to
/// the next new thread. glibc's mmap threshold is held at its default, which it otherwise
/// raises after a large free, for every later allocation of the process.
pub fn alone<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static MALLOC: Once = Once::new();
    MALLOC.call_once(|| {
        let fixed = [(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD), (libc::M_ARENA_MAX, ARENAS)];
        super::malloc::set(&fixed).expect("glibc takes its default mmap threshold and an arena limit");
    });
    let (tx, rx) = mpsc::sync_channel(1);
    let thread = std::thread::Builder::new().stack_size(STACK).name("workload".into());
    // SAFETY: the thread uses what `work` borrows only until it sends its result, which
    // is received below before this function returns; then it only parks.
    let spawned = unsafe {
        thread.spawn_unchecked(move || -> () {
            let _ = tx.send(work());
            loop {
                std::thread::park();
            }
        })
    };
    spawned.expect("a thread for a workload");
    rx.recv().expect("a workload's thread sends its result")
}

/// valgrind's client request on x86-64: `rax` points at the request and its five
/// arguments; four rotations of `rdi` that add up to a whole turn, then `xchg rbx, rbx`,
/// which valgrind alone reads as a request (a CPU sees no-ops). valgrind answers in `rdx`,
/// which otherwise keeps `default`.
#[cfg(target_arch = "x86_64")]
fn client_request(default: usize, args: &[usize; 6]) -> usize {
    let answer;
    // SAFETY: the sequence leaves every register as it found it but the flags and rdx
    // (declared); valgrind only reads the six words `args` points at.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") default => answer,
            options(nostack),
        );
    }
    answer
}

/// Elsewhere callgrind is not run: no request is answered.
#[cfg(not(target_arch = "x86_64"))]
fn client_request(default: usize, _args: &[usize; 6]) -> usize {
    default
}
