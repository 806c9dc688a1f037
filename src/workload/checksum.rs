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
    h: twox_hash::XxHash64,
    entries: u64,
}

impl Default for Hasher {
    fn default() -> Self {
        Hasher { h: twox_hash::XxHash64::with_seed(0), entries: 0 }
    }
}

impl Hasher {
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        std::hash::Hasher::write(&mut self.h, key);
        std::hash::Hasher::write(&mut self.h, value);
        self.entries += 1;
    }

    pub fn finish(&self) -> Checksum {
        Checksum { entries: self.entries, digest: std::hash::Hasher::finish(&self.h) }
    }
}

/// The checksum of `pairs`, as a walk of a database holding them computes it, without LMDB.
pub fn checksum_of<'d>(pairs: impl Iterator<Item = (&'d [u8], &'d [u8])>) -> Checksum {
    let mut h = Hasher::default();
    pairs.for_each(|(k, v)| h.add(k, v));
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::presets::{Preset, PresetWorkload};
    use crate::workload::{expected_checksum, EnvSettings, Workload, WorkloadConfig};

    #[test]
    fn the_hash_is_of_every_key_then_value_in_order() {
        let pairs: [(&[u8], &[u8]); 2] = [(b"a", b"1"), (b"b", b"22")];
        let digest = twox_hash::XxHash64::oneshot(0, b"a1b22");
        assert_eq!(checksum_of(pairs.into_iter()), Checksum { entries: 2, digest });
        assert_ne!(checksum_of(pairs.into_iter().rev()), checksum_of(pairs.into_iter()));
    }

    #[test]
    fn every_workload_asks_one_function_for_its_checksum() {
        let cfg = WorkloadConfig { entries: 100, ..WorkloadConfig::default() };
        assert_eq!(expected_checksum(Workload::Write, &cfg), None, "LmdbJava's write reads nothing back");
        assert_eq!(expected_checksum(Workload::ReadSeq, &cfg).unwrap().entries, 100);
        let fifty = EnvSettings { entries: Some(50), ..EnvSettings::default() };
        let preset = fifty.resolve(&cfg, &Default::default(), Some(Preset::OpenGet));
        let tc = expected_checksum(Workload::Preset(PresetWorkload::TcRandomRead), &preset).unwrap();
        assert_eq!(tc.entries, 50);
        let og = expected_checksum(Workload::Preset(PresetWorkload::OpenGet), &preset).unwrap();
        assert_eq!(og.entries, 1, "open-get reads one key");
        assert_eq!(PresetWorkload::OpenGet.preset(), Preset::OpenGet);
    }
}
