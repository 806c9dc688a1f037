//! glibc malloc's parameters, set once for a process's life before anything in it is
//! measured: the one way the tool sets them, for each of its two reasons (a counting
//! process holds them at glibc's defaults, `profile_part`; a paired process keeps what its
//! passes free, [`keep_freed`]).

use anyhow::{bail, Result};

/// The largest mmap threshold mallopt(3) documents on a 64-bit host
/// (`DEFAULT_MMAP_THRESHOLD_MAX`, 32 MiB): more than any one allocation LMDB makes a pass.
const MMAP_THRESHOLD_MAX: i32 = 32 << 20;
/// The trim threshold that turns trimming off (mallopt(3): -1).
const NEVER_TRIM: i32 = -1;

/// Sets each of glibc's malloc parameters in turn, or says which one it refused.
pub fn set(parameters: &[(libc::c_int, libc::c_int)]) -> Result<()> {
    for &(parameter, value) in parameters {
        // SAFETY: mallopt only sets glibc's parameters; it answers 0 for one it refuses.
        if unsafe { libc::mallopt(parameter, value) } == 0 {
            bail!("glibc's mallopt refused parameter {parameter} = {value}");
        }
    }
    Ok(())
}

/// Keeps the memory a pass frees in the process for the next pass, instead of giving it
/// back to the kernel: no trimming of the heap's top, and allocations up to 32 MiB served
/// from the heap rather than from maps of their own that free() unmaps. A page given back
/// costs a fresh-page fault when it is touched again (about 3 µs on a VM whose page-table
/// updates trap, reports/README.md), which is the host's work, not LMDB's: a long-lived
/// process keeps its heap. Made at the worker's start, before anything is loaded or timed,
/// so the timed region holds no call of it. What it moves: a `--no-writemap` write pass
/// mallocs each dirty page and LMDB frees them when its environment closes, so every pass
/// after the first in a process takes none of their faults; with MDB_WRITEMAP (LmdbJava's
/// default) the dirty pages are the data file's, which no malloc setting reaches.
pub fn keep_freed() -> Result<()> {
    set(&[(libc::M_TRIM_THRESHOLD, NEVER_TRIM), (libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's minor page faults so far.
    fn minor_faults() -> i64 {
        use nix::sys::resource::{getrusage, UsageWho};
        getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage").minor_page_faults()
    }

    /// Mallocs `pages` page-sized blocks, as LMDB mallocs its dirty pages, writes each
    /// whole, and frees them all: the faults that took.
    fn one_pass(pages: usize) -> i64 {
        let before = minor_faults();
        let blocks: Vec<Vec<u8>> = (0..pages).map(|_| vec![1u8; 4096]).collect();
        std::hint::black_box(&blocks);
        drop(blocks);
        minor_faults() - before
    }

    #[test]
    fn a_second_pass_reuses_the_pages_the_first_freed() {
        keep_freed().unwrap();
        let pages = 4096;
        one_pass(pages);
        // Trimmed, the freed 16 MiB would be given back and fault in again (one fault a
        // page); kept, the second pass touches only pages already resident.
        let again = one_pass(pages);
        assert!(again < pages as i64 / 16, "{again} faults for {pages} pages the first pass freed");
    }

    #[test]
    fn a_parameter_glibc_refuses_is_said() {
        // The fast bins' largest block: at most 80 words (glibc's MAX_FAST_SIZE).
        let e = set(&[(libc::M_MXFAST, 1000)]).unwrap_err();
        assert!(e.to_string().contains("refused"), "{e}");
    }
}
