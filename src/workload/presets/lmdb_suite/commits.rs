//! Each commit's time in a pass that times them (`--sync` time runs): the clock read around
//! mdb_txn_commit inside the timed region, written into storage sized before the pass, so
//! the region allocates nothing; the histogram is made after it.

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

/// The armed pass's commits as a histogram's recorded buckets (nanoseconds, how many),
/// disarmed; empty when none were timed.
pub fn take() -> Vec<(u64, u64)> {
    let Some(times) = TIMES.with(|t| t.borrow_mut().take()) else { return Vec::new() };
    let mut h = Histogram::<u64>::new_with_bounds(1, CEILING_NS, 2).expect("valid bounds");
    for ns in times {
        h.saturating_record(ns.max(1));
    }
    h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
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
        let buckets = take();
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), 2, "{buckets:?}");
        assert!(buckets.iter().all(|b| (1500..1520).contains(&b.0)), "two significant digits: {buckets:?}");
        assert!(take().is_empty(), "disarmed");
    }
}
