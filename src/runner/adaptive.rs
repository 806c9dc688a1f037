//! Adaptive rounds (`plan.adaptive: on`): what the statistics say is still undecided
//! ([`Progress`], from the run's [`Judge`](super::Judge)) turned into which units a round
//! measures on which workload ([`Selection`]).

use std::collections::{BTreeMap, BTreeSet};

use super::Unit;
use crate::record::{Engine, Label};
use crate::workload::Workload;

/// What the measured rounds leave to learn, section by section.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    pub sections: BTreeMap<(Engine, Workload), SectionProgress>,
}

/// One (engine, workload)'s comparisons with its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionProgress {
    /// The label every other is compared with.
    pub reference: Label,
    /// Labels whose comparison is undecided (or not yet made), each with the share of the
    /// coming rounds it is measured in, in (0, 1]: 1 for the furthest from decided.
    pub open: BTreeMap<Label, f64>,
    /// Labels whose comparison is decided, or resolved to the run's target.
    pub closed: BTreeSet<Label>,
    /// Layouts of the reference a paired process should hold for this workload (1: its
    /// own unit's alone), where more of them narrow the open comparisons for their time.
    pub reference_layouts: u32,
}

impl Progress {
    /// True when every section's comparisons are decided: more rounds would change no verdict.
    pub fn settled(&self) -> bool {
        !self.sections.is_empty() && self.sections.values().all(|s| s.open.is_empty())
    }

    /// The units round `round` (counted from 0) measures on each workload: in each section
    /// the open labels drawn for it (each in its share of rounds), the units never measured
    /// there, and the reference when any other is.
    pub fn selection(&self, round: u32, units: &[Unit]) -> Selection {
        let mut measured = BTreeMap::new();
        for (&key, s) in &self.sections {
            let known = |l: &Label| s.open.contains_key(l) || s.closed.contains(l) || *l == s.reference;
            let fresh = units.iter().filter(|u| u.engine == key.0).map(|u| u.label.clone()).filter(|l| !known(l));
            let drawn = s.open.iter().filter(|(_, share)| drawn(round, **share)).map(|(l, _)| l.clone());
            let mut labels: BTreeSet<Label> = fresh.chain(drawn).collect();
            if !labels.is_empty() {
                labels.insert(s.reference.clone());
            }
            measured.insert(key, labels);
        }
        Selection { measured }
    }
}

/// Whether round `round` is one of a `share` of the rounds: evenly spread, so that a label
/// at share ½ is measured every other round and labels of one share in the same rounds.
pub fn drawn(round: u32, share: f64) -> bool {
    let at = |r: u32| (r as f64 * share.clamp(0.0, 1.0)).floor();
    at(round + 1) > at(round)
}

/// References that paired rounds hold in more than one layout, by engine and label, with
/// how many layouts of each every workload wants in all.
pub type LayoutsWanted = BTreeMap<(Engine, Label), BTreeMap<Workload, u32>>;

impl Progress {
    /// Each engine's references that paired rounds should hold in more than one layout,
    /// with how many on each workload.
    pub fn reference_layouts(&self) -> LayoutsWanted {
        let mut out = LayoutsWanted::new();
        for (&(engine, w), s) in self.sections.iter().filter(|(_, s)| s.reference_layouts > 1) {
            out.entry((engine, s.reference.clone())).or_default().insert(w, s.reference_layouts);
        }
        out
    }
}

/// The units a round measures on each workload; a workload it does not name is measured
/// on every unit (nothing of it is known yet).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    measured: BTreeMap<(Engine, Workload), BTreeSet<Label>>,
}

impl Selection {
    pub fn measures(&self, u: &Unit, w: Workload) -> bool {
        self.measured.get(&(u.engine, w)).is_none_or(|labels| labels.contains(&u.label))
    }

    /// `u`'s workloads among `batch` that this round measures.
    pub fn of(&self, u: &Unit, batch: &[Workload]) -> Vec<Workload> {
        batch.iter().copied().filter(|w| self.measures(u, *w)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(tag: &str) -> Unit {
        Unit {
            engine: Engine::Rust,
            label: Label::build(tag, None),
            program: "x".into(),
            program_sha256: None,
            library: Some("lib".into()),
            sha256: "0".into(),
            version: "LMDB".into(),
            layout: None,
            relink: None,
            orders: std::sync::Arc::from([]),
            harness: None,
            programs: Default::default(),
        }
    }

    #[test]
    fn a_round_measures_the_undecided_the_new_and_their_reference() {
        let units: Vec<Unit> = ["a", "b", "c", "d"].map(unit).to_vec();
        let label = |l: &str| Label::build(l, None);
        let open = |o: &[(&str, f64)]| o.iter().map(|(l, s)| (label(l), *s)).collect();
        let closed = |c: &[&str]| c.iter().map(|l| label(l)).collect();
        let section =
            |o, c| SectionProgress { reference: label("a"), open: open(o), closed: closed(c), reference_layouts: 1 };
        let progress = Progress {
            sections: BTreeMap::from([
                // c undecided, in half the rounds; b decided; d never measured here.
                ((Engine::Rust, Workload::ReadKey), section(&[("c", 0.5)], &["b"])),
                ((Engine::Rust, Workload::Write), section(&[], &["b", "c", "d"])),
            ]),
        };
        assert!(!progress.settled());
        let measured = |round, w| -> Vec<&str> {
            let s = progress.selection(round, &units);
            units.iter().filter(|u| s.measures(u, w)).map(|u| u.label.base.as_str()).collect()
        };
        assert_eq!(measured(0, Workload::ReadKey), ["a", "d"]);
        assert_eq!(measured(1, Workload::ReadKey), ["a", "c", "d"]);
        assert!(measured(1, Workload::Write).is_empty(), "a workload with nothing undecided is not run");
        assert_eq!(measured(0, Workload::ReadSeq).len(), 4, "nothing known of readSeq yet");
    }

    #[test]
    fn a_share_spreads_its_rounds_evenly() {
        let rounds = |share| (0..12).filter(|r| drawn(*r, share)).collect::<Vec<u32>>();
        assert_eq!(rounds(1.0).len(), 12);
        assert_eq!(rounds(0.5), [1, 3, 5, 7, 9, 11]);
        assert_eq!(rounds(0.25), [3, 7, 11]);
    }
}
