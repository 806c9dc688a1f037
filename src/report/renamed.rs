//! Functions renamed between two builds (`mdb_cursor_put` in A, its body `_mdb_cursor_put`
//! in B): found so that `explain` pairs them into one row naming both, rather than lead
//! with a rename's two halves (+185.7 against −184.7) as if they were two changes.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// A function of A and the one of B it was renamed to, as paired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renamed {
    pub a: String,
    pub b: String,
}

/// What pairing reads of one function's row: its self cost in A and B, its inclusive cost
/// in A, its source file.
pub struct Costs<'a> {
    pub self_a: f64,
    pub self_b: f64,
    pub inclusive_a: f64,
    pub file: Option<&'a str>,
}

/// How near two costs must be to be one function's: within a tenth of the larger.
const NEAR: f64 = 0.1;

/// Pairs each function new in B (no cost in A) with the function of A, in the same source
/// file, whose self cost it took over: one left with at most a tenth of its cost in B, its
/// loss within a tenth of the new one's cost (the nearest first, larger new ones first).
/// Returns (A's, B's) indices into `rows`.
pub fn pairs(rows: &[Costs]) -> Vec<(usize, usize)> {
    let new = |f: &Costs| f.self_a == 0.0 && f.inclusive_a == 0.0 && f.self_b > 0.0;
    let lost = |f: &Costs| f.self_a - f.self_b;
    let gone = |f: &Costs| f.self_a > 0.0 && f.self_b <= NEAR * f.self_a;
    let mut fresh: Vec<usize> = (0..rows.len()).filter(|&i| new(&rows[i])).collect();
    fresh.sort_by(|&x, &y| rows[y].self_b.total_cmp(&rows[x].self_b));
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for n in fresh {
        let b = rows[n].self_b;
        let off = |o: usize| (lost(&rows[o]) - b).abs();
        let candidates = (0..rows.len()).filter(|&o| {
            let f = &rows[o];
            let near = off(o) <= NEAR * lost(f).max(b);
            !taken.contains(&o) && gone(f) && f.file.is_some() && f.file == rows[n].file && near
        });
        if let Some(o) = candidates.min_by(|&x, &y| off(x).total_cmp(&off(y))) {
            taken.extend([o, n]);
            out.push((o, n));
        }
    }
    out
}

/// What a workload's table says of its paired rows, or None when it has none.
pub fn sentence<'a>(renamed: impl Iterator<Item = &'a Renamed>) -> Option<String> {
    let pairs: Vec<String> = renamed.map(|r| format!("{} (A) → {} (B)", r.a, r.b)).collect();
    (!pairs.is_empty()).then(|| {
        format!(
            "Renamed between A and B, so one row each: {} (paired by their source file and by the self \
             cost one lost and the other gained, within {:.0}%).",
            pairs.join(", "),
            100.0 * NEAR
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(self_a: f64, self_b: f64, file: &str) -> Costs<'_> {
        Costs { self_a, self_b, inclusive_a: self_a, file: Some(file) }
    }

    #[test]
    fn a_new_function_is_paired_with_the_one_whose_cost_it_took_in_its_file() {
        let rows = [
            row(184.7, 0.0, "mdb.c"), // mdb_cursor_put, gone
            row(0.0, 185.7, "mdb.c"), // _mdb_cursor_put, new
            row(0.0, 20.0, "mdb.c"),  // new, nothing lost near it
            row(30.0, 0.0, "midl.c"), // gone, but in another file than any new one near it
            row(0.0, 30.0, "mdb.c"),
        ];
        assert_eq!(pairs(&rows), [(0, 1)]);
    }
}
