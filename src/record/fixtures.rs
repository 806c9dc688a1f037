//! Run files for the record's tests: the committed run, every label form, and files
//! written as a run writes them.

use std::path::{Path, PathBuf};

use super::label::Label;
use super::metric::Counts;
use super::plan::Plan;
use super::reader::{load, RunData};
use super::schema::*;
use super::writer::RunWriter;
use crate::files::Existing;
use crate::workload::presets::Figures;
use crate::workload::Workload;

pub(super) fn committed() -> RunData {
    load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/run-fixed.jsonl"))).unwrap()
}

/// Every form a label takes, and two whose text the label grammar reads otherwise (a
/// layout that is no number, a commit whose name ends like a control's label).
pub(super) fn every_form() -> Vec<Label> {
    let b = Label::build;
    vec![
        b("LMDB_0.9.33", None),
        b("LMDB_1.0.1", Some("clang -O2")),
        b("LMDB_0.9.33", Some("gcc -O3")).control(),
        b("1a2b3c4d5e", None).control(),
        b("mdb.RE/0.9 @ 1a2b3c4d", None),
        b("mdb.RE/0.9 @ 1a2b3c4d", Some("clang -O2")),
        b("LMDB_0.9.20", None).in_layout("01".into()),
        b("LMDB_0.9.20", Some("clang -O2")).in_layout("03".into()).control(),
        b("LMDB_0.9.20", None).in_layout("x1".into()),
        b("deadbeef~control", None),
    ]
}

/// The committed run's header as a schema-4 header listing `labels` (controls by their
/// labels' tags) and declaring them.
pub(super) fn header_of(labels: &[Label]) -> Header {
    let h = committed().header;
    let row = |l: &Label| TagStatus { label: l.clone(), ..h.tags[0].clone() };
    let rows: Vec<Label> = labels.iter().map(|l| l.controlled().unwrap_or_else(|| l.clone())).collect();
    let tags = Declared::each(&rows).iter().map(|d| row(&d.value)).collect();
    Header { schema: SCHEMA, tags, units: Declared::each(labels.iter().chain(&rows)), ..h }
}

/// A time sample of `unit`'s Rust unit (a plain tag's label, as text), of a fixed layout,
/// in round 0.
pub(super) fn time_sample(unit: &str) -> Sample {
    unit_sample(&Label::parse(unit))
}

/// A time sample of `unit` on the Rust engine, of a fixed layout, in round 0.
pub(crate) fn unit_sample(unit: &Label) -> Sample {
    Sample {
        round: 0,
        engine: Engine::Rust,
        unit: unit.clone(),
        workload: Workload::ReadSeq,
        ns: 5,
        counts: Counts::default(),
        checksum: None,
        counted: false,
        figures: Figures::default(),
        layout: None,
        harness: None,
        chunks_ns: Vec::new(),
        space: None,
        io: None,
        major_faults: None,
    }
}

pub(super) fn sample(tag: &str) -> Record {
    Record::Sample(time_sample(tag))
}

/// A run file of `labels`, one sample each, written as a run writes it.
pub(super) fn written(dir: &Path, labels: &[Label]) -> PathBuf {
    let path = dir.join("run.jsonl");
    let mut w = RunWriter::create(&path, &header_of(labels), Existing::Replace).unwrap();
    for l in labels {
        w.append(&Record::Sample(unit_sample(l))).unwrap();
    }
    path
}

/// The committed run's header as a schema-4 file of `plan`, with `records` after it.
pub(super) fn file_of(dir: &Path, plan: Plan, records: &[Record]) -> PathBuf {
    let labels = [Label::build("LMDB_0.9.33", None)];
    let path = dir.join("phases.jsonl");
    let mut w = RunWriter::create(&path, &Header { plan, ..header_of(&labels) }, Existing::Replace).unwrap();
    records.iter().for_each(|r| w.append(r).unwrap());
    path
}

pub(super) fn end(reason: EndReason, rounds: u32, wall: f64, timed: f64) -> Record {
    Record::End(End {
        reason,
        rounds,
        finished: "2026-01-01T00:00:00Z".into(),
        wall_s: Some(wall),
        timed_s: Some(timed),
    })
}

pub(super) fn check(kind: CheckKind) -> Record {
    Record::Check(RunCheck { what: "a check".into(), passed: true, detail: String::new(), kind: Some(kind) })
}
