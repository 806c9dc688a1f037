//! Whether every engine and unit read the same data: the checksum most of them report per
//! workload, and each that reports another.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::label::Label;
use crate::record::{Engine, Sample};
use crate::workload::{Checksum, Workload};

#[derive(Debug, Clone, Serialize)]
pub struct ChecksumMismatch {
    pub engine: Engine,
    pub tag: String,
    pub got: Checksum,
    pub expected: Checksum,
}

/// Per workload: every engine and tag must read the same data.
pub fn checksum_agreement_by_workload(
    samples: &[Sample],
) -> BTreeMap<Workload, (Option<Checksum>, Vec<ChecksumMismatch>)> {
    let mut by_workload: BTreeMap<Workload, Vec<&Sample>> = BTreeMap::new();
    for s in samples.iter().filter(|s| !s.counted) {
        by_workload.entry(s.workload).or_default().push(s);
    }
    by_workload.iter().map(|(w, ss)| (*w, checksum_agreement(ss))).collect()
}

/// The checksum most (engine, tag) pairs report, and every pair that reports another.
fn checksum_agreement(samples: &[&Sample]) -> (Option<Checksum>, Vec<ChecksumMismatch>) {
    let mut per_unit: Vec<(Engine, &Label, Checksum)> = Vec::new();
    for s in samples {
        if let Some(c) = s.checksum {
            if !per_unit.iter().any(|(e, t, pc)| *e == s.engine && *t == &s.unit && *pc == c) {
                per_unit.push((s.engine, &s.unit, c));
            }
        }
    }
    let mut counts: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for (_, _, c) in &per_unit {
        *counts.entry((c.entries, c.digest)).or_default() += 1;
    }
    let Some((entries, digest)) = counts.iter().max_by_key(|(_, n)| **n).map(|(k, _)| *k) else {
        return (None, Vec::new());
    };
    let expected = Checksum { entries, digest };
    let mismatches = per_unit
        .into_iter()
        .filter(|(_, _, c)| *c != expected)
        .map(|(engine, t, c)| ChecksumMismatch { engine, tag: t.to_string(), got: c, expected })
        .collect();
    (Some(expected), mismatches)
}
