//! Each commit's time in a pass that times them (`--sync` time runs): the clock read around
//! mdb_txn_commit inside the timed region, written into storage sized before the pass, so
//! the region allocates nothing; after it, the times are kept in the order made (stats
//! pair commit k of a unit with commit k of the reference) and as a histogram, from which
//! a pass's median (`--metric commit-p50`) is read back.

use std::cell::RefCell;
use std::time::Instant;

use hdrhistogram::Histogram;

use crate::workload::lmdb::{ok, Api, Failed, MDB_txn};

/// The longest commit a histogram holds exactly; longer ones are counted at it.
const CEILING_NS: u64 = 60_000_000_000;

thread_local! {
    /// The armed pass's commit times; None when commits are not timed.
    static TIMES: RefCell<Option<Vec<u64>>> = const { RefCell::new(None) };
}

/// Times the next pass's commits on this thread: room for `commits` of them (any beyond
/// are not timed, never allocated for).
pub fn arm(commits: usize) {
    TIMES.with(|t| *t.borrow_mut() = Some(Vec::with_capacity(commits)));
}

/// The armed pass's commit times in nanoseconds, in the order made, disarmed; empty when
/// none were timed.
pub fn take() -> Vec<u64> {
    TIMES.with(|t| t.borrow_mut().take()).unwrap_or_default()
}

/// Commit times as a histogram's recorded buckets (nanoseconds, how many).
pub fn buckets(times: &[u64]) -> Vec<(u64, u64)> {
    let mut h = histogram();
    for &ns in times {
        h.saturating_record(ns.max(1));
    }
    h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
}

/// The histogram a pass's commits are recorded in: nanoseconds to two significant digits
/// (each bucket within 0.8% of its values), up to [`CEILING_NS`]. harness/lmdb_suite.c
/// buckets its commits the same way.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, CEILING_NS, 2).expect("valid bounds")
}

/// A pass's median commit from its buckets ([`take`]'s): the bucket that holds its middle
/// commit, as the histogram reads it (value_at_quantile(0.5)); None when it timed none.
/// The pass's own figure, as its time is: what is computed across passes is `stats`'.
pub fn median_ns(buckets: &[(u64, u64)]) -> Option<u64> {
    let mut h = histogram();
    for &(ns, n) in buckets {
        h.saturating_record_n(ns, n);
    }
    (h.len() > 0).then(|| h.value_at_quantile(0.5))
}

/// Writes back what `dir`'s file system holds unwritten (syncfs), untimed, before the
/// process's first pass whose commits are timed: a sync commit waits for the disk, and the
/// writeback of what came before the process (the round's linked layouts, other processes'
/// writes) would otherwise fall into whichever commits it met. Once a process: its later
/// passes follow each other, and the files of the pass before are deleted, their unwritten
/// pages with them, so a settle before each found little of its own to write and, under
/// load, waited for the other processes' writeback (most of a round).
pub fn settle(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    static SETTLED: AtomicBool = AtomicBool::new(false);
    if SETTLED.swap(true, Ordering::Relaxed) {
        return Ok(());
    }
    let folder = std::fs::File::open(dir)?;
    // SAFETY: syncfs on a descriptor this function holds open.
    if unsafe { libc::syncfs(folder.as_raw_fd()) } != 0 {
        anyhow::bail!("syncfs on {}: {}", dir.display(), std::io::Error::last_os_error());
    }
    Ok(())
}

/// mdb_txn_commit, its time kept when a pass is armed and has room.
///
/// # Safety
/// `txn` is a live write transaction of an environment `api` opened.
#[inline(always)]
pub unsafe fn commit(api: &Api, txn: *mut MDB_txn) -> Result<(), Failed> {
    let armed = TIMES.with(|t| t.borrow().as_ref().is_some_and(|v| v.len() < v.capacity()));
    if !armed {
        return ok("mdb_txn_commit", (api.mdb_txn_commit)(txn));
    }
    let began = Instant::now();
    let r = ok("mdb_txn_commit", (api.mdb_txn_commit)(txn));
    let ns = began.elapsed().as_nanos() as u64;
    TIMES.with(|t| t.borrow_mut().as_mut().map(|v| v.push(ns)));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_armed_pass_keeps_times_and_never_beyond_its_room() {
        assert!(take().is_empty(), "not armed");
        arm(2);
        TIMES.with(|t| t.borrow_mut().as_mut().unwrap().extend([1500, 1500]));
        let kept = TIMES.with(|t| t.borrow().as_ref().is_some_and(|v| v.len() < v.capacity()));
        assert!(!kept, "full: a third commit is not timed");
        let buckets = buckets(&take());
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), 2, "{buckets:?}");
        assert!(buckets.iter().all(|b| (1500..1520).contains(&b.0)), "two significant digits: {buckets:?}");
        assert!(take().is_empty(), "disarmed");
    }

    #[test]
    fn a_pass_median_is_its_middle_commit_and_a_stall_does_not_move_it() {
        // 5 commits: 99, 100 and 101 µs, and 2 stalls of 20 ms; the mean is 8 ms.
        arm(5);
        TIMES.with(|t| t.borrow_mut().as_mut().unwrap().extend([100_000, 20_000_000, 101_000, 20_000_000, 99_000]));
        let order = take();
        assert_eq!(order, [100_000, 20_000_000, 101_000, 20_000_000, 99_000], "kept in the order made");
        let buckets = buckets(&order);
        let median = median_ns(&buckets).unwrap();
        assert!((101_000..101_512).contains(&median), "the third of five, in its bucket: {median} {buckets:?}");
        assert_eq!(median_ns(&[]), None);
        // A stored bucket reads back as itself: the C twin's buckets, made by the same rule.
        for (ns, _) in &buckets {
            assert_eq!(median_ns(&[(*ns, 1)]), Some(*ns));
        }
    }
}
