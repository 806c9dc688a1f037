//! The lmdb suite's data, byte for byte what the C twin (harness/lmdb_suite.c) makes from
//! the same seed: keys of 16 decimal digits (db_bench's), values cut from one random pool,
//! the orders the timed operations visit them in, and what a correct pass leaves.

use super::declared::{DupWalk, Keys, Options, Shape, SuiteRow, RANGE_FROM};
use crate::workload::checksum::{checksum_of, Checksum};
use crate::workload::dataset::SplitMix64;

pub const KEY: usize = 16;
/// The pool values are cut from (every value starts inside it).
const POOL: usize = 1 << 20;
/// The largest value a row may ask for.
pub const MAX_VALUE: usize = 128 << 10;
/// FRAGMENT's small values, which its deletes leave holes between.
pub const SMALL_VALUE: u32 = 100;
/// Mixed values: 8 to 1,200 bytes.
const MIXED: (u64, u64) = (8, 1200);

/// Which values a key has: as first written, as overwritten, as FRAGMENT's large ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    First = 0,
    Overwritten = 1,
    Large = 2,
}

/// Key `i`: 16 decimal digits, or FRAGMENT's large keys, "L" and 15 digits (after them all).
pub fn key(i: u32, large: bool) -> [u8; KEY] {
    let mut k = [0u8; KEY];
    let s = if large { format!("L{i:015}") } else { format!("{i:016}") };
    k.copy_from_slice(s.as_bytes());
    k
}

/// DUPFILL's duplicate `j` of key `i`: its index first, so duplicates sort by it.
pub fn dup(seed: u64, i: u32, j: u32) -> [u8; 8] {
    let mut s = SplitMix64(seed ^ ((i as u64) << 20) ^ ((j as u64) << 44));
    let mut d = s.next_u64().to_le_bytes();
    d[0] = j as u8;
    d
}

/// The random pool, and where each value of it starts.
pub struct Values {
    pool: Vec<u8>,
    seed: u64,
    /// 0: mixed.
    size: u32,
}

impl Values {
    pub fn new(seed: u64, size: u32) -> Values {
        let mut s = SplitMix64(seed);
        let mut pool = Vec::with_capacity(POOL + MAX_VALUE);
        while pool.len() < POOL + MAX_VALUE {
            pool.extend_from_slice(&s.next_u64().to_le_bytes());
        }
        Values { pool, seed, size }
    }

    /// The value of key `i` in generation `g`.
    pub fn of(&self, i: u32, g: Generation) -> &[u8] {
        let mut s = SplitMix64(self.seed ^ ((i as u64) << 20) ^ g as u64);
        let (at, len) = (s.next_u64(), s.next_u64());
        let len = match self.size {
            0 => MIXED.0 + len % (MIXED.1 - MIXED.0 + 1),
            n => n as u64,
        };
        let at = (at % POOL as u64) as usize;
        &self.pool[at..at + len as usize]
    }
}

/// `0..n` in the row's order: ascending, or shuffled (Fisher-Yates on splitmix64).
pub fn order(n: u32, keys: Keys, seed: u64) -> Vec<u32> {
    let mut o: Vec<u32> = (0..n).collect();
    if keys == Keys::Random {
        let mut s = SplitMix64(seed ^ 0x6f72_6465_72);
        for i in (1..o.len()).rev() {
            let j = (s.next_u64() % (i as u64 + 1)) as usize;
            o.swap(i, j);
        }
    }
    o
}

/// How many keys a row's timed operations touch, of `entries`.
pub fn keys_touched(d: &SuiteRow, entries: u32) -> u32 {
    (entries / d.share).max(1)
}

/// DUPFILL/DUPREAD: the keys that hold duplicates.
pub fn dup_keys(d: &SuiteRow, entries: u32) -> u32 {
    (keys_touched(d, entries) / d.dups()).max(1)
}

/// What a correct pass of row `d` leaves (or, for reads, returns), without LMDB.
pub fn expected(d: &SuiteRow, entries: u32, seed: u64) -> Checksum {
    let m = keys_touched(d, entries);
    let values = Values::new(seed, d.value);
    let small = Values::new(seed, SMALL_VALUE);
    let first = |i: u32| (key(i, false), values.of(i, Generation::First));
    let walk = |mut pairs: Vec<([u8; KEY], &[u8])>| {
        if d.options.has(Options::REVERSEKEY) {
            pairs.sort_by_key(|(k, _)| k.iter().rev().copied().collect::<Vec<u8>>());
        }
        checksum_of(pairs.iter().map(|(k, v)| (&k[..], *v)))
    };
    match d.shape {
        Shape::Fill => walk((0..m).map(first).collect()),
        Shape::Overwrite => walk((0..m).map(|i| (key(i, false), values.of(i, Generation::Overwritten))).collect()),
        Shape::Delete => walk((0..m).filter(|&i| !d.deletes(i)).map(first).collect()),
        Shape::Copy => walk((0..m).filter(|i| i % 2 == 1).map(first).collect()),
        Shape::Drop => checksum_of(std::iter::empty()),
        Shape::Readers => walk((0..m).map(first).collect()),
        Shape::Incremental => walk(
            (0..m)
                .map(|i| match i % 2 {
                    0 => (key(i, false), values.of(i, Generation::Overwritten)),
                    _ => first(i),
                })
                .collect(),
        ),
        Shape::Fragment => {
            let odd = (0..entries).filter(|i| i % 2 == 1).map(|i| (key(i, false), small.of(i, Generation::First)));
            let large = (0..m).map(|i| (key(i, true), values.of(i, Generation::Large)));
            walk(odd.chain(large).collect())
        }
        Shape::DupFill => dups_left(d, entries, seed, &|_, _| true),
        Shape::DupRead => dup_read(d, dup_keys(d, entries), seed),
        Shape::DupDelete if d.options.has(Options::MOST) => dups_left(d, entries, seed, &|i, _| !d.deletes(i)),
        Shape::DupDelete => dups_left(d, entries, seed, &|i, j| !d.deletes_dup(i, j)),
        Shape::Renew => {
            let digest = (0..m).fold(0u64, |s, i| s.wrapping_add(head(values.of(i, Generation::First))));
            Checksum { entries: m as u64, digest }
        }
    }
}

/// The checksum of the duplicates of row `d` that `kept(key, duplicate)` keeps.
fn dups_left(d: &SuiteRow, entries: u32, seed: u64, kept: &dyn Fn(u32, u32) -> bool) -> Checksum {
    let n = dup_keys(d, entries);
    let pairs = (0..n).flat_map(|i| (0..d.dups()).map(move |j| (i, j)));
    let dups: Vec<([u8; KEY], [u8; 8])> =
        pairs.filter(|&(i, j)| kept(i, j)).map(|(i, j)| (key(i, false), dup(seed, i, j))).collect();
    checksum_of(dups.iter().map(|(k, v)| (&k[..], &v[..])))
}

/// What a DUPREAD row's walk of `keys` keys returns: the count and sum of the duplicates
/// it visits (COUNT: of each key's count).
fn dup_read(d: &SuiteRow, keys: u32, seed: u64) -> Checksum {
    let sum = |dups: &dyn Fn(u32) -> std::ops::Range<u32>| {
        let visited = (0..keys).flat_map(|i| dups(i).map(move |j| dup(seed, i, j)));
        visited.fold(Checksum { entries: 0, digest: 0 }, |c, d| Checksum {
            entries: c.entries + 1,
            digest: c.digest.wrapping_add(u64::from_le_bytes(d)),
        })
    };
    let n = d.dups();
    match d.dup_walk() {
        Some(DupWalk::Count) => Checksum { entries: keys as u64, digest: keys as u64 * n as u64 },
        Some(DupWalk::Range) => sum(&|_| RANGE_FROM..n),
        Some(DupWalk::NoDup { reverse: false }) => sum(&|_| 0..1),
        Some(DupWalk::NoDup { reverse: true }) => sum(&|_| n - 1..n),
        _ => sum(&|_| 0..n),
    }
}

/// A value's first 8 bytes, little-endian (fewer, zero-filled): what a lookup adds up.
pub fn head(v: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = v.len().min(8);
    b[..n].copy_from_slice(&v[..n]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_as_their_numbers_and_large_keys_after_them() {
        assert_eq!(&key(42, false), b"0000000000000042");
        assert_eq!(&key(7, true), b"L000000000000007");
        assert!(key(9, false) < key(10, false) && key(99_999, false) < key(0, true));
    }

    #[test]
    fn values_are_fixed_or_mixed_and_generations_differ() {
        let v = Values::new(1, 100);
        assert_eq!(v.of(3, Generation::First).len(), 100);
        assert_ne!(v.of(3, Generation::First), v.of(3, Generation::Overwritten));
        assert_eq!(v.of(3, Generation::First), Values::new(1, 100).of(3, Generation::First), "a seed makes them");
        let mixed = Values::new(1, 0);
        let lens: Vec<usize> = (0..1000).map(|i| mixed.of(i, Generation::First).len()).collect();
        assert!(lens.iter().all(|&l| (8..=1200).contains(&l)));
        assert!(lens.iter().min() < Some(&50) && lens.iter().max() > Some(&1150));
        assert_eq!(Values::new(1, MAX_VALUE as u32).of(5, Generation::Large).len(), MAX_VALUE);
    }

    #[test]
    fn orders_are_permutations_and_duplicates_sort_by_index() {
        let mut o = order(1000, Keys::Random, 9);
        assert_ne!(o, order(1000, Keys::Sequential, 9));
        o.sort();
        assert_eq!(o, order(1000, Keys::Sequential, 9));
        let d: Vec<[u8; 8]> = (0..super::super::declared::DUPS).map(|j| dup(3, 5, j)).collect();
        assert!(d.windows(2).all(|w| w[0] < w[1]), "distinct, in index order");
    }
}
