//! Work that is not timed (building read databases, verifying them) or that is counted
//! rather than timed (instructions do not depend on load) runs on every core. Results come
//! back to the calling thread, which alone writes the run file.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use anyhow::Result;

/// Runs `work` on each item with up to `jobs` threads and hands each result to `done` in
/// the calling thread, in completion order. An error from `done` stops handing out items.
pub fn for_each<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    mut done: impl FnMut(&T, R) -> Result<()>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            let (tx, next, work) = (tx.clone(), &next, &work);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                // A closed channel means the caller stopped: take no more items.
                if i >= items.len() || tx.send((i, work(&items[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            done(&items[i], r)?;
        }
        Ok(())
    })
}

/// The number of cores, the default for `--jobs`.
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_done_once_whatever_the_job_count() {
        for jobs in [1, 2, 5, 50] {
            let items: Vec<u32> = (0..40).collect();
            let mut seen = Vec::new();
            for_each(
                &items,
                jobs,
                |x| x * 2,
                |x, r| {
                    assert_eq!(r, x * 2);
                    seen.push(*x);
                    Ok(())
                },
            )
            .unwrap();
            seen.sort();
            assert_eq!(seen, items, "jobs {jobs}");
        }
    }

    #[test]
    fn an_error_from_done_stops_and_is_returned() {
        let items: Vec<u32> = (0..100).collect();
        let mut n = 0;
        let r = for_each(
            &items,
            2,
            |x| *x,
            |_, _| {
                n += 1;
                anyhow::ensure!(n < 3, "stop");
                Ok(())
            },
        );
        assert!(r.is_err());
        assert_eq!(n, 3);
    }
}
