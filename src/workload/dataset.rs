//! The data the workloads write and read, as LmdbJava's benchmark defines it, and the
//! checksum a correct read must produce. Nothing here is per entry in memory but the key
//! list: each value is built from its key (or slice of the random pool) when it is
//! written, in one reused buffer, as LmdbJava's writer does.

use std::collections::HashSet;

use super::checksum::Checksum;
use super::{KeyKind, Order, ValueKind, Workload, WorkloadConfig};

/// Size of the random-value pool (LmdbJava's `RND_MB`).
pub const POOL_BYTES: usize = 1 << 20;

/// Bytes of an integer key, and of the integer every fixed value begins with.
pub const INT_BYTES: usize = 4;

/// Bytes of a string key: the integer, zero-padded in decimal (LmdbJava's `padKey`).
pub const STRING_KEY_BYTES: usize = 16;

/// splitmix64: tiny, and bit-identical in the C twin, so both engines see the same data.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The keys of a configuration, in the order they are written (and read by key), and
/// what every value is made of.
pub struct Dataset {
    pub key_kind: KeyKind,
    pub values: ValueKind,
    pub value_size: usize,
    /// The integer keys in write order: 0..n for `seq`; for `random`, distinct random
    /// non-negative 31-bit integers, as LmdbJava's `Common.setup` draws them.
    pub keys: Vec<u32>,
    /// For string keys: key j's 16 bytes at `key_strings[j*16..]`, built before timing
    /// (LmdbJava formats them inside its loop; formatting is not LMDB's work).
    pub key_strings: Vec<u8>,
    /// For random values: LmdbJava's 1 MiB pool, read in consecutive slices.
    pub pool: Vec<u8>,
    /// The write positions in the order a walk visits them, for keys written out of order
    /// (empty: in order). A plain field: a cell here (a lazy one) would let the timed
    /// loops assume less of `&Dataset`, and cost readKey 5 instructions an entry, the
    /// write 8 (callgrind).
    walk_order: Vec<u32>,
}

impl Dataset {
    /// Draws the pool first (random values only), then the keys (random order only), from
    /// one generator seeded with `cfg.seed`; the C twin draws in the same order.
    pub fn generate(cfg: &WorkloadConfig) -> Dataset {
        let n = cfg.entries as usize;
        let mut rng = SplitMix64(cfg.seed);
        let pool = match cfg.values {
            ValueKind::Fixed => Vec::new(),
            ValueKind::Random => (0..POOL_BYTES / 8).flat_map(|_| rng.next_u64().to_le_bytes()).collect(),
        };
        let keys = match cfg.order {
            Order::Seq => (0..n as u32).collect(),
            Order::Random => distinct_random_keys(n, &mut rng),
        };
        let key_strings = match cfg.keys {
            KeyKind::Int => Vec::new(),
            KeyKind::Str16 => keys.iter().flat_map(|k| format!("{k:016}").into_bytes()).collect(),
        };
        let mut data = Dataset {
            key_kind: cfg.keys,
            values: cfg.values,
            value_size: cfg.value_size as usize,
            keys,
            key_strings,
            pool,
            walk_order: Vec::new(),
        };
        if cfg.order == Order::Random {
            data.walk_order = data.sorted_positions();
        }
        data
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn key_size(&self) -> usize {
        match self.key_kind {
            KeyKind::Int => INT_BYTES,
            KeyKind::Str16 => STRING_KEY_BYTES,
        }
    }

    /// The bytes of the key written at position `j`.
    pub fn key(&self, j: usize) -> &[u8] {
        match self.key_kind {
            KeyKind::Int => bytemuck_u32(&self.keys[j]),
            KeyKind::Str16 => &self.key_strings[j * STRING_KEY_BYTES..(j + 1) * STRING_KEY_BYTES],
        }
    }

    /// A value builder positioned before the first entry.
    pub fn values(&self) -> ValueWriter<'_> {
        ValueWriter { data: self, buf: vec![0u8; self.value_size], pool_offset: 0 }
    }

    /// Write positions in the order a cursor walks the database: by key (numerically,
    /// which is also the byte order of the zero-padded strings).
    pub fn sorted_positions(&self) -> Vec<u32> {
        let mut p: Vec<u32> = (0..self.keys.len() as u32).collect();
        p.sort_unstable_by_key(|&j| self.keys[j as usize]);
        p
    }

    /// The write position of the entry a walk visits `index`-th, counting from 0:
    /// `forward` in key order, else from the last key back.
    pub fn walked(&self, index: usize, forward: bool) -> usize {
        let at = if forward { index } else { self.len() - 1 - index };
        self.walk_order.get(at).map_or(at, |&j| j as usize)
    }
}

fn bytemuck_u32(k: &u32) -> &[u8] {
    // SAFETY: a u32 is four initialised bytes in native order, as MDB_INTEGERKEY expects.
    unsafe { std::slice::from_raw_parts(k as *const u32 as *const u8, INT_BYTES) }
}

/// Distinct non-negative 31-bit integers, drawn until `n` are found; any set gives the
/// same sequence, so the C twin's open-addressing table agrees with this HashSet.
fn distinct_random_keys(n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut seen = HashSet::with_capacity(n);
    let mut keys = Vec::with_capacity(n);
    while keys.len() < n {
        let k = (rng.next_u64() >> 33) as u32;
        if seen.insert(k) {
            keys.push(k);
        }
    }
    keys
}

/// One reused value buffer, filled for each entry in write order, as LmdbJava's writer
/// fills `rwVal`: fixed values keep zeros after the 4-byte integer key; random values are
/// consecutive slices of the pool, restarting at 0 once the offset reaches the last slice.
pub struct ValueWriter<'a> {
    data: &'a Dataset,
    buf: Vec<u8>,
    pool_offset: usize,
}

impl ValueWriter<'_> {
    /// Fills the buffer with the value of the entry at write position `j` (positions must
    /// come in order 0, 1, 2, … for random values) and returns it.
    #[inline(always)]
    pub fn fill(&mut self, j: usize) -> &[u8] {
        match self.data.values {
            // A fixed-size store (validate() guarantees 4 bytes), not a call to memcpy.
            ValueKind::Fixed => self.buf[..INT_BYTES].copy_from_slice(&self.data.keys[j].to_ne_bytes()),
            ValueKind::Random => {
                let vs = self.buf.len();
                self.buf.copy_from_slice(&self.data.pool[self.pool_offset..self.pool_offset + vs]);
                self.pool_offset += vs;
                if self.pool_offset >= POOL_BYTES - vs {
                    self.pool_offset = 0;
                }
            }
        }
        &self.buf
    }
}

/// The checksums of several reads. Values are rebuilt per visit (random ones from each
/// write position's pool offset), so memory stays at a few bytes an entry.
pub fn expected_checksums(reads: &[Workload], data: &Dataset) -> Vec<(Workload, Checksum)> {
    let (n, vs) = (data.len(), data.value_size);
    let offsets: Vec<u32> = match data.values {
        ValueKind::Fixed => Vec::new(),
        ValueKind::Random => {
            let mut w = data.values();
            (0..n)
                .map(|j| {
                    let at = w.pool_offset as u32;
                    w.fill(j);
                    at
                })
                .collect()
        }
    };
    let mut fixed = vec![0u8; vs];
    let mut out = Vec::new();
    for &w in reads {
        let visit: Box<dyn Iterator<Item = usize>> = match w {
            Workload::ReadKey => Box::new(0..n),
            Workload::ReadSeq | Workload::ReadCrc | Workload::ReadXxh64 => {
                Box::new((0..n).map(|i| data.walked(i, true)))
            }
            Workload::ReadRev => Box::new((0..n).map(|i| data.walked(i, false))),
            Workload::Write | Workload::Preset(_) | Workload::Program(_) => continue,
        };
        let digest = match w {
            Workload::ReadCrc => {
                let mut h = crc32fast::Hasher::new();
                visit.for_each(|j| {
                    h.update(data.key(j));
                    h.update(value_at(data, &offsets, &mut fixed, j));
                });
                h.finalize() as u64
            }
            Workload::ReadXxh64 => visit.fold(0u64, |acc, j| {
                acc.wrapping_add(twox_hash::XxHash64::oneshot(0, data.key(j)))
                    .wrapping_add(twox_hash::XxHash64::oneshot(0, value_at(data, &offsets, &mut fixed, j)))
            }),
            _ => {
                let mut h = super::checksum::Hasher::default();
                visit.for_each(|j| h.add(data.key(j), value_at(data, &offsets, &mut fixed, j)));
                h.finish().digest
            }
        };
        out.push((w, Checksum { entries: n as u64, digest }));
    }
    out
}

/// The value written at position `j`: fixed values in `fixed` (zeros after the key),
/// random ones straight from the pool.
fn value_at<'a>(data: &'a Dataset, offsets: &[u32], fixed: &'a mut [u8], j: usize) -> &'a [u8] {
    match data.values {
        ValueKind::Fixed => {
            fixed[..INT_BYTES].copy_from_slice(&data.keys[j].to_ne_bytes());
            fixed
        }
        ValueKind::Random => &data.pool[offsets[j] as usize..offsets[j] as usize + data.value_size],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(order: Order, values: ValueKind, keys: KeyKind) -> WorkloadConfig {
        WorkloadConfig { entries: 5000, value_size: 10, order, values, keys, ..WorkloadConfig::default() }
    }

    #[test]
    fn random_keys_are_distinct_non_negative_and_not_a_permutation() {
        let d = Dataset::generate(&cfg(Order::Random, ValueKind::Fixed, KeyKind::Int));
        let set: HashSet<u32> = d.keys.iter().copied().collect();
        assert_eq!(set.len(), d.len());
        assert!(d.keys.iter().all(|&k| k < 1 << 31));
        // Drawn from the whole 31-bit range, unlike a permutation of 0..n.
        assert!(d.keys.iter().any(|&k| k >= d.len() as u32));
    }

    #[test]
    fn fixed_values_begin_with_the_integer_key_even_for_string_keys() {
        let d = Dataset::generate(&cfg(Order::Random, ValueKind::Fixed, KeyKind::Str16));
        let mut w = d.values();
        let v = w.fill(7).to_vec();
        assert_eq!(&v[..4], &d.keys[7].to_ne_bytes());
        assert!(v[4..].iter().all(|&b| b == 0));
        assert_eq!(d.key(7), format!("{:016}", d.keys[7]).as_bytes());
    }

    #[test]
    fn a_walk_visits_the_keys_in_order_forward_and_back() {
        for order in [Order::Seq, Order::Random] {
            let d = Dataset::generate(&cfg(order, ValueKind::Fixed, KeyKind::Int));
            let forward: Vec<u32> = (0..d.len()).map(|i| d.keys[d.walked(i, true)]).collect();
            let back: Vec<u32> = (0..d.len()).map(|i| d.keys[d.walked(i, false)]).rev().collect();
            assert!(forward.windows(2).all(|w| w[0] < w[1]), "{order:?}");
            assert_eq!(forward, back, "{order:?}");
            assert_eq!(forward.len(), d.len());
        }
    }

    #[test]
    fn random_values_are_consecutive_pool_slices_that_wrap() {
        let c = WorkloadConfig { value_size: 300_000, ..cfg(Order::Seq, ValueKind::Random, KeyKind::Int) };
        let d = Dataset::generate(&c);
        let mut w = d.values();
        let offsets = [0usize, 300_000, 600_000, 0];
        for (j, off) in offsets.into_iter().enumerate() {
            assert_eq!(w.fill(j), &d.pool[off..off + 300_000], "entry {j}");
        }
    }
}
