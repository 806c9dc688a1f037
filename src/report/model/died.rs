//! The units whose worker died running a workload (a crash in LMDB such as SIGSEGV, a
//! non-zero exit, the watchdog): the report shows each such row as died and says how once,
//! and every other row stays measured.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::record::label::{as_text, Label};
use crate::record::{Engine, FailureStage, RunData};
use crate::workload::Workload;

/// One unit's row of one workload whose worker died in some of its rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiedRow {
    pub engine: Engine,
    pub workload: Workload,
    #[serde(serialize_with = "as_text")]
    pub unit: Label,
    /// The rounds its worker died in, and the rounds it ran in at all (died or measured).
    pub rounds_died: usize,
    pub rounds: usize,
    /// How it died the first time, as the runner said it ("worker killed by signal 11
    /// (SIGSEGV)"): the signal, the exit status or the watchdog's reason.
    pub how: String,
}

impl DiedRow {
    /// It died in every round it ran: no figure of it exists.
    pub fn always(&self) -> bool {
        self.rounds_died == self.rounds
    }
}

/// Every (engine, workload, unit) whose measured pass's worker died, in the run file's
/// order of first death.
pub fn died_rows(data: &RunData) -> Vec<DiedRow> {
    type Key = (Engine, Workload, Label);
    let mut order: Vec<Key> = Vec::new();
    let mut died: BTreeMap<Key, (BTreeSet<u32>, String)> = BTreeMap::new();
    for f in data.failures.iter().filter(|f| f.died && f.stage == FailureStage::Run) {
        let (Some(workload), Some(round)) = (f.workload, f.round) else { continue };
        let key = (f.engine, workload, f.unit.clone());
        let entry = died.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (BTreeSet::new(), f.error.clone())
        });
        entry.0.insert(round);
    }
    let mut measured: BTreeMap<&Key, BTreeSet<u32>> = BTreeMap::new();
    for s in data.samples.iter().filter(|s| !s.counted) {
        let key = (s.engine, s.workload, s.unit.clone());
        if let Some((k, _)) = died.get_key_value(&key) {
            measured.entry(k).or_default().insert(s.round);
        }
    }
    order
        .iter()
        .map(|key| {
            let (rounds, how) = &died[key];
            let ran = rounds.union(measured.get(key).unwrap_or(&BTreeSet::new())).count();
            DiedRow {
                engine: key.0,
                workload: key.1,
                unit: key.2.clone(),
                rounds_died: rounds.len(),
                rounds: ran,
                how: how.clone(),
            }
        })
        .collect()
}
