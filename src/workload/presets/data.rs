//! The presets' datasets, laid out before any timing starts. The same seed gives the
//! C twin (harness/presets.c) the same bytes: splitmix64, consumed in the same order.

use crate::workload::SplitMix64;

/// Width of a Tokyo Cabinet key: "00000000" … "99999999".
pub const TC_KEY: usize = 8;

/// Tokyo Cabinet's keys, 8 decimal digits each, in two visiting orders; each value equals
/// its key.
pub struct TcKeys {
    /// Key i at `successive[i*8..]`.
    pub successive: Vec<u8>,
    /// The same keys shuffled (Fisher–Yates from the top, seeded).
    pub random: Vec<u8>,
}

/// A seeded permutation of 0..n: the same generator and draws as the default dataset's.
pub fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64(seed);
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

impl TcKeys {
    pub fn generate(n: u32, seed: u64) -> TcKeys {
        let mut successive = Vec::with_capacity(n as usize * TC_KEY);
        for i in 0..n {
            successive.extend_from_slice(format!("{i:08}").as_bytes());
        }
        let mut random = Vec::with_capacity(successive.len());
        for i in shuffled(n as usize, seed) {
            let at = i as usize * TC_KEY;
            random.extend_from_slice(&successive[at..at + TC_KEY]);
        }
        TcKeys { successive, random }
    }
}

/// The documents of open-get and migrate: 4-byte big-endian keys 0..n (so bytewise order
/// is numeric order), values random printable ASCII strings of 0..=max bytes.
pub struct Docs {
    /// Key i at `keys[i*4..]`.
    pub keys: Vec<u8>,
    /// Value i is `bytes[ends[i-1]..ends[i]]` (from 0 for the first).
    pub bytes: Vec<u8>,
    pub ends: Vec<usize>,
}

/// Generates documents one at a time, for passes that need not hold them all.
pub struct DocStream {
    rng: SplitMix64,
    max_value: u32,
}

impl DocStream {
    pub fn new(seed: u64, max_value: u32) -> DocStream {
        DocStream { rng: SplitMix64(seed), max_value }
    }

    /// Appends the next value to `out`: its length, then eight characters per draw, each
    /// byte mapped onto ' '..='~'.
    pub fn next_value(&mut self, out: &mut Vec<u8>) {
        let len = (self.rng.next_u64() % (self.max_value as u64 + 1)) as usize;
        let start = out.len();
        while out.len() - start < len {
            let r = self.rng.next_u64().to_le_bytes();
            let take = (len - (out.len() - start)).min(8);
            out.extend(r[..take].iter().map(|b| b' ' + b % 95));
        }
    }
}

impl Docs {
    pub fn generate(n: u32, max_value: u32, seed: u64) -> Docs {
        let mut stream = DocStream::new(seed, max_value);
        let mut keys = Vec::with_capacity(n as usize * 4);
        let mut bytes = Vec::with_capacity(n as usize * (max_value as usize / 2 + 1));
        let mut ends = Vec::with_capacity(n as usize);
        for i in 0..n {
            keys.extend_from_slice(&i.to_be_bytes());
            stream.next_value(&mut bytes);
            ends.push(bytes.len());
        }
        Docs { keys, bytes, ends }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn key(&self, i: usize) -> &[u8] {
        &self.keys[i * 4..i * 4 + 4]
    }

    pub fn value(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokyo_cabinet_keys_are_eight_digits_and_the_random_order_is_a_permutation() {
        let k = TcKeys::generate(1000, 42);
        assert_eq!(&k.successive[..16], b"0000000000000001");
        assert_eq!(&k.successive[999 * 8..], b"00000999");
        let mut r: Vec<&[u8]> = k.random.chunks(8).collect();
        assert_ne!(r, k.successive.chunks(8).collect::<Vec<_>>(), "shuffled");
        r.sort();
        assert_eq!(r, k.successive.chunks(8).collect::<Vec<_>>());
    }

    #[test]
    fn documents_are_printable_within_their_bounds_and_reproducible() {
        let d = Docs::generate(500, 40, 7);
        assert_eq!(d.len(), 500);
        assert_eq!(d.key(258), [0, 0, 1, 2]);
        assert!((0..500).all(|i| d.value(i).len() <= 40 && d.value(i).iter().all(|b| (b' '..=b'~').contains(b))));
        assert!((0..500).any(|i| d.value(i).is_empty()) && (0..500).any(|i| d.value(i).len() == 40));
        let mut again = DocStream::new(7, 40);
        let mut v = Vec::new();
        for i in 0..3 {
            v.clear();
            again.next_value(&mut v);
            assert_eq!(v, d.value(i));
        }
    }
}
