//! What a correct read returns: the [`Checksum`] both engines report and every tag must
//! agree on, and the hash most workloads' checksums are (xxHash64 of every key, then its
//! value, in visiting order). Each dataset computes what its workloads must give
//! (`dataset::expected_checksums`, the presets' modules); `workload::expected_checksum`
//! is the one way to ask for it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a read returned: every tag must agree on it for the same configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checksum {
    pub entries: u64,
    /// readCrc: the CRC32; readXxh64: the sum; the others: xxHash64 of every key then
    /// value in visiting order (computed once per tag, by the `verify` worker).
    pub digest: u64,
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:016x}", self.entries, self.digest)
    }
}

/// Entry count and xxHash64 of every key then value handed to it.
pub struct Hasher {
    h: xxhash_rust::xxh64::Xxh64,
    entries: u64,
}

impl Default for Hasher {
    fn default() -> Self {
        Hasher { h: xxhash_rust::xxh64::Xxh64::new(0), entries: 0 }
    }
}

impl Hasher {
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.h.update(key);
        self.h.update(value);
        self.entries += 1;
    }

    pub fn finish(&self) -> Checksum {
        Checksum { entries: self.entries, digest: self.h.digest() }
    }
}

/// The checksum of `pairs`, as a walk of a database holding them computes it, without LMDB.
pub fn checksum_of<'d>(pairs: impl Iterator<Item = (&'d [u8], &'d [u8])>) -> Checksum {
    let mut h = Hasher::default();
    pairs.for_each(|(k, v)| h.add(k, v));
    h.finish()
}
