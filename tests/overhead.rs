//! The Rust harness costs what its C twin costs, by instructions per entry (callgrind,
//! exact): what it adds beyond the twin is the checksum crates' own cost, and 1% more.

use crate::common::*;
use serde_json::Value;

/// Per entry, what the Rust engine's checksum crates cost beyond the C twin's (AMD EPYC,
/// release build, 0.9.33, 2,000 and 50,000 entries alike; reports/README.md, "Harness
/// overhead"). readCrc: crc32fast's update beside libdeflate's crc32 (38 out of line, 4 of
/// its length and dispatch inlined into the loop); readXxh64: none, twox-hash's XXH64 inlined
/// as the twin's XXH64 is (29 instructions an entry fewer than the twin's at 50,000 entries).
const CRATES: [(&str, f64); 6] =
    [("readKey", 0.0), ("readSeq", 0.0), ("readRev", 0.0), ("readCrc", 42.0), ("readXxh64", 0.0), ("write", 0.0)];

#[test]
fn the_rust_engine_costs_its_c_twin_and_the_checksum_crates_and_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = lmdb_regress();
    c.args(["run", "--tags", "0.9.33", "--workloads", "all", "--entries", "2000", "--engine", "rust,c"])
        .args(["--metric", "instructions", "--no-coverage", "--summary-json", "--out"])
        .arg(dir.path().join("run.jsonl"));
    let rows: Vec<Value> = json(&run_ok(&mut c)).as_array().unwrap().clone();
    let per_entry = |engine: &str, w: &str| {
        let row = rows.iter().find(|r| r["engine"] == engine && r["workload"] == w);
        row.and_then(|r| r["instructions_per_entry"].as_f64()).unwrap_or_else(|| panic!("no {engine} {w}: {rows:?}"))
    };
    for (w, crates) in CRATES {
        let (rust, twin) = (per_entry("rust", w), per_entry("c", w));
        assert!(
            rust <= 1.01 * (twin + crates),
            "{w}: Rust {rust:.3} instructions an entry, its C twin {twin:.3}: {:+.3} beyond the crates' {crates}",
            rust - twin - crates
        );
    }
}
