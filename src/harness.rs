//! The tool's own code placement as a random variable. The Rust worker is this binary: its
//! timed loops and the checksum crates sit wherever the linker put them, the same for every
//! process of one build, and that placement moves some tags' times by a few percent against
//! others (reports/README.md). So the binary is also linked in `ORDERS` function orders
//! (`src/bin/lmdb-regress-harness-N.rs`, shuffled by lld as build.rs asks), and each timed
//! process runs one of them drawn at random: the placement is then sampled across processes,
//! as LMDB's own layout is, and its spread enters the intervals instead of biasing them.
//! The C paired worker is linked in as many orders (`crate::paired_twin`), drawn the same way.

use std::path::{Path, PathBuf};

/// How many function orders of the binary are linked beside it.
pub const ORDERS: u32 = 16;

/// What build.rs tells the crate, through the environment, when lld was not there to shuffle
/// the orders (they are then copies of one placement, and none is drawn).
pub const UNSHUFFLED_ENV: &str = "LMDB_REGRESS_HARNESS_UNSHUFFLED";

/// The binary of function order `n` (1..=ORDERS).
pub fn binary_name(n: u32) -> String {
    format!("lmdb-regress-harness-{n}")
}

/// The seed lld shuffles order `n` by: fixed, so a build's orders are known from `n` alone
/// (lld reads 0 as "random" and -1 as "reverse").
pub fn seed(n: u32) -> u32 {
    0x5eed_0000 + n
}

/// One function order of a worker (this binary, or the C paired worker), ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarnessOrder {
    /// Which order (1..=ORDERS), as the run file records it.
    pub n: u32,
    pub program: PathBuf,
    /// What `program` must hash to before each start (the C paired worker's orders); None for
    /// this binary's, which are this build.
    pub sha256: Option<String>,
}

impl HarnessOrder {
    /// Order `n` of a program checked before each start: `program` must hash to `sha256`.
    pub fn checked(n: u32, program: PathBuf, sha256: String) -> HarnessOrder {
        HarnessOrder { n, program, sha256: Some(sha256) }
    }

    /// That the program is still the one built, when it has a recorded SHA-256.
    pub fn check(&self) -> anyhow::Result<()> {
        match &self.sha256 {
            Some(sha) => crate::artifact::verify(&self.program, sha),
            None => Ok(()),
        }
    }
}

/// The orders linked beside `exe` that are there to run; none when they were linked unshuffled.
pub fn orders_beside(exe: &Path, shuffled: bool) -> Vec<HarnessOrder> {
    let Some(dir) = exe.parent().filter(|_| shuffled) else {
        return Vec::new();
    };
    (1..=ORDERS)
        .map(|n| HarnessOrder { n, program: dir.join(binary_name(n)), sha256: None })
        .filter(|o| o.program.is_file())
        .collect()
}

/// Whether this binary's orders were linked shuffled (build.rs found lld).
pub fn built_shuffled() -> bool {
    option_env!("LMDB_REGRESS_HARNESS_UNSHUFFLED").is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_the_binaries_that_exist_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("lmdb-regress");
        for n in [1, 3] {
            std::fs::write(dir.path().join(binary_name(n)), b"").unwrap();
        }
        let found: Vec<u32> = orders_beside(&exe, true).iter().map(|o| o.n).collect();
        assert_eq!(found, vec![1, 3]);
        assert!(orders_beside(&exe, false).is_empty(), "unshuffled copies are no orders");
    }

    #[test]
    fn seeds_are_distinct_and_never_lld_specials() {
        let seeds: std::collections::BTreeSet<u32> = (1..=ORDERS).map(seed).collect();
        assert_eq!(seeds.len(), ORDERS as usize);
        assert!(seeds.iter().all(|s| *s != 0 && *s < 0x7fff_ffff));
    }
}
