//! Which layouts a run links: each unit draws its seeds from a sequence of its own, the same
//! in every run, without repeat within the run, those already linked first. A set of
//! distinct draws from independent layouts is itself independent, whichever draws were
//! linked before, so a run's layouts are as random as freshly seeded ones; but a run finds
//! most of them in the cache instead of paying lld for each (about 20 ms of a core), and the
//! cache stops growing with every run.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{Label, Unit};
use crate::layout::{self, Source};
use crate::record::{Engine, Sample};

/// A unit's sequence is searched this far for layouts linked earlier, and then on while
/// they are: enough for 16 layouts a unit in each of 64 rounds.
const SEARCHED: u32 = 1024;

type UnitKey = (Engine, Label);

/// The run's draws, unit by unit.
pub(super) struct Draws {
    run_seed: u64,
    queues: Mutex<BTreeMap<UnitKey, Queue>>,
    /// Seeds the run's samples so far ran (a resumed run), drawn no more.
    taken: BTreeMap<UnitKey, BTreeSet<u32>>,
}

impl Draws {
    /// The draws of a run with seed `run_seed` whose samples so far are `prior`.
    pub(super) fn new(run_seed: u64, prior: &[Sample]) -> Draws {
        let mut taken: BTreeMap<UnitKey, BTreeSet<u32>> = BTreeMap::new();
        for s in prior {
            if let Some(seed) = s.layout {
                taken.entry((s.engine, s.unit.clone())).or_default().insert(seed);
            }
        }
        Draws { run_seed, queues: Mutex::new(BTreeMap::new()), taken }
    }

    /// The next seed of `unit`, whose layouts `source` links.
    pub(super) fn next(&self, unit: &Unit, source: &Source) -> u32 {
        let key = (unit.engine, unit.label.clone());
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let queue = queues.entry(key.clone()).or_insert_with(|| {
            let taken = self.taken.get(&key).cloned().unwrap_or_default();
            Queue::new(&key, self.run_seed, |seed| source.is_linked(seed), taken)
        });
        queue.next()
    }
}

/// The `i`-th seed of a unit's sequence: its engine and label name it, not the run.
fn sequence_seed((engine, label): &UnitKey, i: u32) -> u32 {
    layout::seed(0, &[&engine.to_string(), &label.to_string(), &i.to_string()])
}

/// One unit's order of draws: the linked seeds of its sequence, then the rest of the
/// searched part, each part shuffled by the run's seed; past it, the sequence in order.
struct Queue {
    key: UnitKey,
    order: std::vec::IntoIter<u32>,
    beyond: u32,
    taken: BTreeSet<u32>,
}

impl Queue {
    fn new(key: &UnitKey, run_seed: u64, linked: impl Fn(u32) -> bool, taken: BTreeSet<u32>) -> Queue {
        let (mut found, mut unlinked): (Vec<u32>, Vec<u32>) =
            (0..SEARCHED).map(|i| sequence_seed(key, i)).partition(|s| linked(*s));
        let mut beyond = SEARCHED;
        while linked(sequence_seed(key, beyond)) {
            found.push(sequence_seed(key, beyond));
            beyond += 1;
        }
        let order_seed = layout::seed(run_seed, &[&key.0.to_string(), &key.1.to_string(), "order"]);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(u64::from(order_seed));
        found.shuffle(&mut rng);
        unlinked.shuffle(&mut rng);
        found.extend(unlinked);
        Queue { key: key.clone(), order: found.into_iter(), beyond, taken }
    }

    /// A seed this run has not drawn for the unit.
    fn next(&mut self) -> u32 {
        loop {
            let seed = self.order.next().unwrap_or_else(|| {
                self.beyond += 1;
                sequence_seed(&self.key, self.beyond - 1)
            });
            if self.taken.insert(seed) {
                return seed;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(label: &str) -> UnitKey {
        (Engine::Rust, Label::parse(label))
    }

    fn draws(q: &mut Queue, n: usize) -> Vec<u32> {
        (0..n).map(|_| q.next()).collect()
    }

    #[test]
    fn a_run_draws_the_linked_seeds_first_and_none_twice() {
        let k = key("LMDB_0.9.18");
        let linked: BTreeSet<u32> = [3, 7, 500, 1024, 1025].map(|i| sequence_seed(&k, i)).into();
        let mut q = Queue::new(&k, 1, |s| linked.contains(&s), BTreeSet::new());
        let first: BTreeSet<u32> = draws(&mut q, 5).into_iter().collect();
        assert_eq!(first, linked, "the five linked layouts come first, those past the searched part too");
        let rest = draws(&mut q, 2000);
        let all: BTreeSet<u32> = rest.iter().chain(&first).copied().collect();
        assert_eq!(all.len(), 2005, "no seed twice, past the sequence's searched part too");
    }

    #[test]
    fn the_runs_seed_orders_the_draws_and_the_unit_owns_its_sequence() {
        let (a, b) = (key("LMDB_0.9.18"), key("LMDB_0.9.33"));
        let none = |_| false;
        let of = |k: &UnitKey, run| draws(&mut Queue::new(k, run, none, BTreeSet::new()), 50);
        assert_eq!(of(&a, 1), of(&a, 1), "the same run seed draws the same layouts");
        assert_ne!(of(&a, 1), of(&a, 2), "another run draws in another order");
        let (x, y): (BTreeSet<u32>, BTreeSet<u32>) = (of(&a, 1).into_iter().collect(), of(&b, 1).into_iter().collect());
        assert!(x.is_disjoint(&y), "two units never share a seed");
        let searched: BTreeSet<u32> = (0..SEARCHED).map(|i| sequence_seed(&a, i)).collect();
        assert!(x.is_subset(&searched), "a run draws from the unit's sequence, where a later run finds them");
    }

    #[test]
    fn a_resumed_run_draws_none_of_the_seeds_its_samples_ran() {
        let k = key("LMDB_0.9.18");
        let ran: BTreeSet<u32> = (0..SEARCHED).step_by(2).map(|i| sequence_seed(&k, i)).collect();
        let mut q = Queue::new(&k, 4, |s| ran.contains(&s), ran.clone());
        assert!(draws(&mut q, 600).iter().all(|s| !ran.contains(s)));
    }
}
