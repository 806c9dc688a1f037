//! What a pass of an lmdb-suite workload does, laid out before the clock starts: its
//! untimed setup and its timed operations, each a key and a value, in visiting order.

use super::data::{self, dup, key, keys_touched, order, Generation, Values, KEY, SMALL_VALUE};
use super::declared::{DupWalk, Keys, Options, Shape, SuiteRow, RANGE_FROM};

/// DUPREAD's Range: the data MDB_GET_BOTH_RANGE looks for, below duplicate [`RANGE_FROM`]
/// of any key and above those before it (a duplicate's first byte is its index).
const RANGE_PROBE: [u8; 8] = [RANGE_FROM as u8, 0, 0, 0, 0, 0, 0, 0];

/// Operations as one buffer: each is a 16-byte key, then its value (maybe empty).
#[derive(Debug, Default, Clone)]
pub struct Ops {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Ops {
    fn push(&mut self, k: &[u8; KEY], v: &[u8]) {
        self.bytes.extend_from_slice(k);
        self.bytes.extend_from_slice(v);
        self.ends.push(self.bytes.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Operation `i`: its key and value.
    #[inline(always)]
    pub fn get(&self, i: usize) -> (&[u8], &[u8]) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let op = &self.bytes[start..self.ends[i]];
        op.split_at(KEY)
    }
}

/// A pass's operations: what is written first (untimed), what is deleted then (untimed),
/// and what the clock times.
#[derive(Debug, Default)]
pub struct RowOps {
    pub setup_puts: Ops,
    pub setup_deletes: Ops,
    /// The operations the clock times; INCREMENTAL's, the changes made (untimed) after its
    /// backup, which its timed dump and load carry over.
    pub timed: Ops,
}

/// Setup deletes go 1,000 to a transaction.
pub const SETUP_BATCH: u32 = 1000;

impl RowOps {
    pub fn new(d: &SuiteRow, entries: u32, seed: u64) -> RowOps {
        let m = keys_touched(d, entries);
        let values = Values::new(seed, d.value);
        let mut p = RowOps::default();
        let each = |ops: &mut Ops, it: &mut dyn Iterator<Item = u32>, g: Generation| {
            it.for_each(|i| ops.push(&key(i, g == Generation::Large), values.of(i, g)))
        };
        let visit = order(m, d.keys, seed);
        match d.shape {
            Shape::Fill => each(&mut p.timed, &mut visit.into_iter(), Generation::First),
            Shape::Overwrite => {
                each(&mut p.setup_puts, &mut (0..m), Generation::First);
                each(&mut p.timed, &mut visit.into_iter(), Generation::Overwritten);
            }
            Shape::Delete => {
                each(&mut p.setup_puts, &mut (0..m), Generation::First);
                visit.into_iter().filter(|&i| d.deletes(i)).for_each(|i| p.timed.push(&key(i, false), &[]));
            }
            Shape::Fragment => {
                let small = Values::new(seed, SMALL_VALUE);
                (0..entries).for_each(|i| p.setup_puts.push(&key(i, false), small.of(i, Generation::First)));
                (0..entries).filter(|i| i % 2 == 0).for_each(|i| p.setup_deletes.push(&key(i, false), &[]));
                each(&mut p.timed, &mut visit.into_iter(), Generation::Large);
            }
            Shape::DupFill => dups(&mut p.timed, d, entries, d.keys, seed),
            Shape::DupRead => {
                let n = data::dup_keys(d, entries);
                dups(&mut p.setup_puts, d, entries, Keys::Sequential, seed);
                let probe: &[u8] = match d.dup_walk() {
                    Some(DupWalk::Range) => &RANGE_PROBE,
                    _ => &[],
                };
                order(n, d.keys, seed).into_iter().for_each(|i| p.timed.push(&key(i, false), probe));
            }
            Shape::DupDelete if d.options.has(Options::MOST) => {
                let n = data::dup_keys(d, entries);
                dups(&mut p.setup_puts, d, entries, Keys::Sequential, seed);
                let deleted = order(n, d.keys, seed).into_iter().filter(|&i| d.deletes(i));
                deleted.for_each(|i| p.timed.push(&key(i, false), &[]));
            }
            Shape::DupDelete => {
                let n = data::dup_keys(d, entries);
                dups(&mut p.setup_puts, d, entries, Keys::Sequential, seed);
                for i in order(n, d.keys, seed) {
                    let deleted = (0..d.dups()).filter(|&j| d.deletes_dup(i, j));
                    deleted.for_each(|j| p.timed.push(&key(i, false), &dup(seed, i, j)));
                }
            }
            Shape::Renew => {
                each(&mut p.setup_puts, &mut (0..m), Generation::First);
                visit.into_iter().for_each(|i| p.timed.push(&key(i, false), &[]));
            }
            Shape::Copy => {
                each(&mut p.setup_puts, &mut (0..m), Generation::First);
                (0..m).filter(|i| i % 2 == 0).for_each(|i| p.setup_deletes.push(&key(i, false), &[]));
            }
            Shape::Drop | Shape::Readers => each(&mut p.setup_puts, &mut (0..m), Generation::First),
            Shape::Incremental => {
                each(&mut p.setup_puts, &mut (0..m), Generation::First);
                each(&mut p.timed, &mut visit.into_iter().filter(|i| i % 2 == 0), Generation::Overwritten);
            }
        }
        if d.options.has(Options::NOOVERWRITE) || rewrites_in_place(d) {
            p.setup_puts = p.timed.clone();
        }
        p
    }
}

/// DUPFILL with CURSOR: each duplicate, put first by the setup, is rewritten where it is
/// (MDB_CURRENT).
pub fn rewrites_in_place(d: &SuiteRow) -> bool {
    d.shape == Shape::DupFill && d.options.has(Options::CURSOR)
}

/// Every duplicate of row `d`'s keys, in `keys`' order over (key, duplicate) pairs.
fn dups(ops: &mut Ops, d: &SuiteRow, entries: u32, keys: Keys, seed: u64) {
    let (n, per) = (data::dup_keys(d, entries), d.dups());
    for o in order(n * per, keys, seed) {
        ops.push(&key(o / per, false), &dup(seed, o / per, o % per));
    }
}

#[cfg(test)]
mod tests {
    use super::super::declared::LmdbWorkload;
    use super::*;

    fn plan(name: &str, entries: u32) -> RowOps {
        RowOps::new(LmdbWorkload::named(name).unwrap().declared(), entries, 7)
    }

    #[test]
    fn each_shape_lays_out_its_setup_and_its_timed_operations() {
        let fill = plan("fillSeqAppend", 100);
        assert_eq!((fill.setup_puts.len(), fill.timed.len()), (0, 100));
        assert_eq!(fill.timed.get(3).0, b"0000000000000003");
        assert_eq!(fill.timed.get(3).1.len(), 100);
        let del = plan("delete", 100);
        assert_eq!((del.setup_puts.len(), del.timed.len()), (100, 50));
        let frag = plan("fragmentedLarge", 1000);
        assert_eq!((frag.setup_puts.len(), frag.setup_deletes.len(), frag.timed.len()), (1000, 500, 10));
        assert_eq!(frag.timed.get(0).1.len(), 16384);
        let dup = plan("dupsortWalk", 200);
        assert_eq!((dup.setup_puts.len(), dup.timed.len()), (200, 20));
        assert_eq!(plan("fill100K", 1000).timed.len(), 10, "a hundredth of the keys");
    }
}
