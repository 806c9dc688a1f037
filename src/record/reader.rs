//! Reading a run file of any schema: the one upgrader, which reads every older record
//! into today's shape, and the rules, which refuse what no run can have written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::label::Label;
use super::metric::Metric;
use super::schema::{
    CheckKind, Declared, End, EndReason, Engine, Failure, Header, Record, RunCheck, RunCoverage, Sample, ADAPTIVE,
    CLOSING, DECLARES_UNITS, SCHEMA, STOPPING,
};
use crate::files;
use crate::workload::Workload;

/// A run as read back: complete or not.
#[derive(Debug, Clone)]
pub struct RunData {
    pub header: Header,
    pub samples: Vec<Sample>,
    pub failures: Vec<Failure>,
    pub checks: Vec<RunCheck>,
    /// Absent when the run was cut off before it could say why it ended.
    pub end: Option<End>,
    /// Absent in files from before runs measured it (schema ≤ 6), and in runs cut off first.
    pub coverage: Option<RunCoverage>,
    pub path: Option<PathBuf>,
    /// Every unit the run names (its header's tags, its samples' and failures'), each read
    /// once, as the file is loaded, into the value its label was rendered from.
    pub units: BTreeSet<Label>,
}

impl RunData {
    /// The entries a sample's pass ran: the counting pass may run fewer than the rounds.
    pub fn entries_of(&self, s: &Sample) -> u32 {
        let h = &self.header;
        if s.counted {
            h.plan.count_entries.unwrap_or(h.config.entries)
        } else {
            h.config.entries
        }
    }

    /// A sample's figure per operation under a metric, over the entries its pass ran.
    pub fn per_op(&self, s: &Sample, metric: Metric) -> Option<f64> {
        s.per_op(metric, self.entries_of(s))
    }
}

/// Reads a run file, finished or not. What a run cannot have written is refused, naming
/// the file and the line: a second header, a sample or failure of a tag, engine or
/// workload the header does not list, a sample of no time, a measured sample or a second
/// end after the run's end; in a file that declares its units (schema 4), a unit not
/// declared, or declared under a label that is not its value's rendering. A torn last line
/// (the run was stopped while writing it) is left out, and said so.
pub fn load(path: &Path) -> Result<RunData> {
    let text = files::read_text(path, "run file")?;
    let mut lines = text.lines().enumerate();
    let Some((_, first)) = lines.next() else { bail!("{} is empty: not a run file", path.display()) };
    let (header, mut units) = read_header(path, first, !text.contains('\n'))?;
    let torn = !text.ends_with('\n');
    let last = text.lines().count();
    let at = |line: usize, e: String| anyhow::anyhow!("{}:{line}: {e}", path.display());
    let mut rules = Rules::of(&header);
    let mut data = RunData {
        header,
        samples: Vec::new(),
        failures: Vec::new(),
        checks: Vec::new(),
        end: None,
        coverage: None,
        path: Some(path.to_path_buf()),
        units: BTreeSet::new(),
    };
    for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let record = match serde_json::from_str::<serde_json::Value>(line).map_err(Unread::Corrupt) {
            Ok(v) => upgrade(v, &mut units),
            Err(e) => Err(e),
        };
        let record = match record {
            Ok(r) => r,
            Err(Unread::Unit(e)) => return Err(at(i + 1, e)),
            Err(Unread::Corrupt(_)) if torn && i + 1 == last => {
                eprintln!(
                    "note: {}:{}: a torn last line (the run was stopped while writing it) is left out",
                    path.display(),
                    i + 1
                );
                continue;
            }
            Err(Unread::Corrupt(e)) => bail!("{}:{}: corrupt line: {}", path.display(), i + 1, bad_record(line, &e)),
        };
        rules.check(&record, i + 1).map_err(|e| at(i + 1, e))?;
        match record {
            Record::Sample(s) => data.samples.push(s),
            Record::Failure(f) => data.failures.push(f),
            Record::Check(c) => {
                let kind = c.kind.or_else(|| Some(legacy_kind(&data.header, rules.ended.is_some())));
                data.checks.push(RunCheck { kind, ..c })
            }
            Record::End(e) => {
                data.end = Some(match data.end.take() {
                    Some(earlier) => e.after(&earlier),
                    None => e,
                })
            }
            Record::Coverage(c) => data.coverage = Some(c),
            Record::Header(_) => unreachable!("refused by the rules"),
        }
    }
    data.units = units.labels.into_values().collect();
    drop_timed_space(&mut data);
    Ok(data)
}

/// Leaves out the space of crews whose writer ran for a time rather than to a quota
/// (`readwhilewriting` without `--puts-per-interval`): what it left in the file measures
/// the host's speed, so no format may show it as a space figure or a step. Workers no
/// longer record it; files of schema 12 written before they stopped may hold it.
fn drop_timed_space(data: &mut RunData) {
    use crate::workload::presets::concurrency::space_is_exact;
    for s in &mut data.samples {
        if let Workload::Preset(p) = s.workload {
            if s.workload.is_crew() && !space_is_exact(p, &data.header.config) {
                s.space = None;
            }
        }
    }
}

/// Why a line was not read: it is no record (or a torn one), or it names a unit its file
/// does not.
#[derive(Debug)]
enum Unread {
    Corrupt(serde_json::Error),
    Unit(String),
}

/// The one upgrader: a record of any schema read into today's shape. A unit named by its
/// label's text (a sample's, a failure's, a header's tag row) becomes the value the header
/// declares (in a file of schema 3 or before, the text read once). Samples written before their counts
/// were values by event (schema ≤ 4) held their instruction count as `instructions`: it is
/// their `Ir`. A failure written before it had a `cause` has the one its error's words
/// name. The header is upgraded by [`upgrade_header`], its part of this upgrader.
fn upgrade(mut v: serde_json::Value, units: &mut UnitLabels) -> std::result::Result<Record, Unread> {
    // A header past the first line is refused by the rules, once read as the header it is.
    if v.get("type").and_then(|t| t.as_str()) == Some("header") {
        let schema = v.get("schema").and_then(|s| s.as_u64()).unwrap_or(0);
        upgrade_header(&mut v, schema);
        units.read_tags(&mut v).map_err(Unread::Unit)?;
    }
    if let Some(record) = v.as_object_mut() {
        let kind = record.get("type").and_then(|t| t.as_str()).unwrap_or_default().to_string();
        if kind == "sample" {
            if let Some(n) = record.remove("instructions").filter(|n| !n.is_null()) {
                record.entry("counts").or_insert_with(|| serde_json::json!({ "Ir": n }));
            }
        }
        if kind == "failure" && !record.contains_key("cause") {
            let error = record.get("error").and_then(|e| e.as_str()).unwrap_or_default();
            if error.starts_with("cold not achieved:") {
                record.insert("cause".into(), "cold-not-achieved".into());
            }
        }
        if let (true, Some(serde_json::Value::String(text))) =
            (kind == "sample" || kind == "failure", record.get("tag"))
        {
            let label = units.name(text).map_err(Unread::Unit)?;
            let value = serde_json::to_value(label).map_err(Unread::Corrupt)?;
            record.insert("tag".into(), value);
        }
    }
    serde_json::from_value(v).map_err(Unread::Corrupt)
}

/// The header of any schema in today's shape: a plan from before schema 8 measured every
/// unit in every round (`adaptive: off`); one from before schema 10 decided comparisons
/// after every round (`stopping: every-round`); one from before schema 11 closed a
/// comparison at its target once decided or within it (`closing: decided-or-within`).
fn upgrade_header(header: &mut serde_json::Value, schema: u64) {
    if let Some(plan) = header.get_mut("plan").and_then(|p| p.as_object_mut()) {
        if schema < ADAPTIVE as u64 {
            plan.entry("adaptive").or_insert_with(|| "off".into());
        }
        if schema < STOPPING as u64 {
            plan.entry("stopping").or_insert_with(|| "every-round".into());
        }
        if schema < CLOSING as u64 {
            plan.entry("closing").or_insert_with(|| "decided-or-within".into());
        }
    }
}

/// Whether `line` is a whole record, whatever units it names: what a line cut off while
/// written is not.
pub(super) fn whole_record(line: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else { return false };
    upgrade(v, &mut UnitLabels::from_text()).is_ok()
}

/// The kind of a check in a file from before checks said it, by where it stands: after the
/// end of the rounds only the counting pass checks (that counts repeat); before it, an
/// instruction run checks that counts repeat, a time run that layouts change none.
fn legacy_kind(h: &Header, after_end: bool) -> CheckKind {
    if after_end || h.plan.metric.is_exact() {
        CheckKind::Repeat
    } else {
        CheckKind::Layouts
    }
}

/// The labels a run file names, as values: declared by its header (schema 4), or in older
/// files read from their text, once each: the one place a run file's label is read back.
pub(super) struct UnitLabels {
    declared: bool,
    labels: BTreeMap<String, Label>,
}

/// What the header says of its units before the rest of it is read: its schema, and the
/// units it declares (schema 4).
#[derive(serde::Deserialize)]
struct Declarations {
    #[serde(default)]
    schema: u32,
    #[serde(default)]
    units: Vec<Declared>,
}

impl UnitLabels {
    /// Labels read from their text whatever the file declares: for a line read alone.
    fn from_text() -> UnitLabels {
        UnitLabels { declared: false, labels: BTreeMap::new() }
    }

    /// The units the header `h` (as JSON) declares, each under its value's rendering; in an
    /// older file, none yet (each is read from its text when named).
    fn declared_by(h: &serde_json::Value) -> std::result::Result<UnitLabels, String> {
        let d = Declarations::deserialize(h).map_err(|e| format!("corrupt header: {e}"))?;
        let declared = d.schema >= DECLARES_UNITS;
        let mut units = UnitLabels { declared, labels: BTreeMap::new() };
        for d in d.units.iter().filter(|_| declared) {
            let rendered = d.value.to_string();
            if d.label != rendered {
                return Err(format!(
                    "unit {:?} is declared with the value of {rendered:?}: a label is its value's rendering",
                    d.label
                ));
            }
            if units.labels.insert(rendered, d.value.clone()).is_some() {
                return Err(format!("unit {} is declared twice", d.label));
            }
        }
        Ok(units)
    }

    /// The header `h` (as JSON) with every unit it names by its label's text read into its
    /// value: each tag row's, its layout study's tag and layouts, its parts' tags, its
    /// places' units, and the
    /// builds its programs were compiled against (a map keyed by text, read into a list of
    /// (value, SHA-256) pairs, as `label::by_text::keyed` reads it). A unit the header does
    /// not declare is refused.
    fn read_tags(&mut self, h: &mut serde_json::Value) -> std::result::Result<(), String> {
        for row in each_mut(h.get_mut("tags")) {
            self.read_unit(row.get_mut("tag"))?;
        }
        if let Some(study) = h.pointer_mut("/plan/layout_study") {
            self.read_unit(study.get_mut("tag"))?;
            for layout in each_mut(study.get_mut("layouts")) {
                self.read_unit(layout.get_mut(0))?;
            }
        }
        for part in each_mut(h.get_mut("parts")) {
            for tag in each_mut(part.get_mut("tags")) {
                self.read_unit(Some(tag))?;
            }
        }
        for place in each_mut(h.get_mut("places")) {
            for unit in each_mut(place.get_mut("units")) {
                self.read_unit(Some(unit))?;
            }
        }
        for program in each_mut(h.pointer_mut("/plan/programs")) {
            let Some(compiled) = program.get_mut("compiled") else { continue };
            let Some(by_text) = compiled.as_object() else { continue };
            let mut pairs = Vec::new();
            for (text, sha) in by_text {
                let unit = serde_json::to_value(self.listed(text)?).map_err(|e| e.to_string())?;
                pairs.push(serde_json::json!([unit, sha]));
            }
            *compiled = pairs.into();
        }
        Ok(())
    }

    /// `text`, a label's text the header lists, replaced by the value it declares.
    fn read_unit(&mut self, text: Option<&mut serde_json::Value>) -> std::result::Result<(), String> {
        if let Some(text) = text {
            if let Some(label) = text.as_str() {
                *text = serde_json::to_value(self.listed(label)?).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// The value of the label `text` the header lists (a tag row, a study's layout).
    fn listed(&mut self, text: &str) -> std::result::Result<&Label, String> {
        let refused = format!("the header lists {text} but does not declare it among its units");
        self.name(text).map_err(|_| refused)
    }

    /// The value of the label `text`: declared, or in an older file read now.
    fn name(&mut self, text: &str) -> std::result::Result<&Label, String> {
        if !self.labels.contains_key(text) {
            if self.declared {
                return Err(format!("unit {text} is not among the units the header declares"));
            }
            self.labels.insert(text.to_string(), Label::parse(text));
        }
        self.labels.get(text).ok_or_else(|| format!("unit {text} has no value"))
    }
}

/// The elements of `array`, when it is one.
fn each_mut(array: Option<&mut serde_json::Value>) -> impl Iterator<Item = &mut serde_json::Value> {
    array.and_then(serde_json::Value::as_array_mut).into_iter().flatten()
}

/// The header on a run file's first line, with the units it declares (its tag rows'
/// labels read); `only_line` when no newline follows it, so that a first line that is no
/// JSON was torn while it was written, not some other file's.
pub(super) fn read_header(path: &Path, first: &str, only_line: bool) -> Result<(Header, UnitLabels)> {
    let mut value: serde_json::Value = match serde_json::from_str(first) {
        Ok(v) => v,
        Err(_) if only_line && torn_header(first) => bail!(
            "{}:1: the header is torn ({} bytes; the run was stopped, or the disk filled, while writing \
             it): nothing was measured into this file; start the run again",
            path.display(),
            first.len()
        ),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("{} is not a lmdb-regress run file (first line is not JSON)", path.display()))
        }
    };
    if value.get("type").and_then(|t| t.as_str()) != Some("header") {
        bail!("{} is not a lmdb-regress run file (no header line)", path.display());
    }
    let schema = value.get("schema").and_then(|s| s.as_u64()).unwrap_or(0);
    if schema > SCHEMA as u64 {
        bail!(
            "{} was written with run-file schema {schema}, newer than this lmdb-regress reads ({SCHEMA}); upgrade lmdb-regress",
            path.display()
        );
    }
    upgrade_header(&mut value, schema);
    let mut units = UnitLabels::declared_by(&value).map_err(|e| anyhow::anyhow!("{}:1: {e}", path.display()))?;
    units.read_tags(&mut value).map_err(|e| anyhow::anyhow!("{}:1: {e}", path.display()))?;
    match serde_json::from_value::<Record>(value).with_context(|| format!("{}:1: corrupt header", path.display()))? {
        Record::Header(h) => Ok((*h, units)),
        _ => unreachable!("checked the type above"),
    }
}

/// Whether `line` is the start of a header line as a run writes it.
fn torn_header(line: &str) -> bool {
    const START: &str = "{\"type\":\"header\"";
    line.starts_with(START) || (!line.is_empty() && START.starts_with(line))
}

/// Why a line is no record, in words for the common case of a time that is no positive
/// whole number.
fn bad_record(line: &str, e: &serde_json::Error) -> String {
    let ns = serde_json::from_str::<serde_json::Value>(line).ok().and_then(|v| v.get("ns").cloned());
    match ns {
        Some(ns) if !ns.is_u64() => format!("a sample's time must be a positive whole number of ns, not {ns}"),
        _ => e.to_string(),
    }
}

/// What a run can write, checked record by record.
struct Rules {
    /// The units the header lists (None for the run files of older bisects, which list none).
    tags: Option<BTreeSet<Label>>,
    engines: Vec<Engine>,
    workloads: Vec<Workload>,
    /// The line of the end record that finished the run (an interrupted run may go on).
    ended: Option<usize>,
    /// Whether a coverage record was read (a run writes one).
    covered: bool,
    /// Samples one pass writes per unit, workload and round: one per iteration and pass.
    iterations: u32,
    /// The workloads that make more than one pass an iteration, and how many.
    passes: BTreeMap<Workload, u32>,
    /// The lines of the samples read so far, by what one pass samples once per iteration.
    sampled: BTreeMap<SampleKey, Vec<usize>>,
}

/// What names a sample but its iteration, which a line does not hold: a pass of one unit
/// (engine, label, layout) on one workload in one round, timed or counted.
type SampleKey = (Engine, Label, Workload, u32, bool, Option<u32>);

impl Rules {
    /// The rules of the run `h` heads (its units read as the header was).
    fn of(h: &Header) -> Rules {
        // A layout study's labels (TAG@01, …) are its tag's layouts, listed in its plan.
        let study = h.plan.layout_study.iter().flat_map(|s| &s.layouts).map(|(unit, _)| unit.clone());
        let tags = (!h.tags.is_empty()).then(|| h.tags.iter().map(|t| t.label.clone()).chain(study).collect());
        let (engines, workloads, iterations) = (h.engines.clone(), h.workloads.clone(), h.plan.iterations.max(1));
        let passes = h.plan.passes.clone();
        Rules { tags, engines, workloads, ended: None, covered: false, iterations, passes, sampled: BTreeMap::new() }
    }

    fn check(&mut self, r: &Record, line: usize) -> std::result::Result<(), String> {
        match r {
            Record::Header(_) => return Err("a second header".into()),
            Record::Sample(s) => {
                self.listed(s.engine, &s.unit, Some(s.workload))?;
                if s.ns == 0 {
                    return Err(format!(
                        "a sample of 0 ns ({} {} {}): every timed region takes time",
                        s.engine, s.unit, s.workload
                    ));
                }
                // Only the counting pass follows the end of the measured rounds.
                match self.ended {
                    Some(end) if !s.counted => {
                        return Err(format!("a measured sample after the run's end record (line {end})"))
                    }
                    _ => {}
                }
                self.once_per_iteration(s, line)?;
            }
            Record::Failure(f) => self.listed(f.engine, &f.unit, f.workload)?,
            Record::Check(_) => {}
            Record::Coverage(_) if self.covered => return Err("a second coverage record".into()),
            Record::Coverage(_) => self.covered = true,
            Record::End(e) => {
                if let Some(end) = self.ended {
                    return Err(format!("a second end record (the run ended at line {end})"));
                }
                if e.reason != EndReason::Interrupted {
                    self.ended = Some(line);
                }
            }
        }
        Ok(())
    }

    /// A unit's process writes one sample per iteration and pass of its workload (the
    /// plan's `passes`; the counting pass makes one): a further one of the same unit,
    /// workload and round is a line written twice (or forged), and would weigh twice in
    /// every statistic.
    fn once_per_iteration(&mut self, s: &Sample, line: usize) -> std::result::Result<(), String> {
        let passes = match s.counted {
            true => 1,
            false => self.passes.get(&s.workload).copied().unwrap_or(1),
        };
        let most = self.iterations * passes;
        let key = (s.engine, s.unit.clone(), s.workload, s.round, s.counted, s.layout);
        let lines = self.sampled.entry(key).or_default();
        if lines.len() as u32 >= most {
            let pass = if s.counted { "the counting pass".to_string() } else { format!("round {}", s.round + 1) };
            let earlier = lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
            let each = match passes {
                1 => "one per iteration".to_string(),
                p => format!("{p} passes per iteration"),
            };
            return Err(format!(
                "one sample too many of {} {} {} in {pass}: the run takes {most} per pass ({each}), \
                 and line(s) {earlier} hold them: a duplicated line",
                s.engine, s.unit, s.workload
            ));
        }
        lines.push(line);
        Ok(())
    }

    fn listed(&self, engine: Engine, unit: &Label, workload: Option<Workload>) -> std::result::Result<(), String> {
        // A control, and a unit at any value of an axis (readers, sync mode, memory limit,
        // readahead), are of a listed tag.
        let of = unit.controlled().unwrap_or_else(|| unit.clone());
        if self.tags.as_ref().is_some_and(|tags| !tags.contains(&of.without_axes())) {
            return Err(format!("tag {unit} is not among the header's tags"));
        }
        if !self.engines.contains(&engine) {
            return Err(format!("engine {engine} is not among the header's engines"));
        }
        match workload {
            Some(w) if !self.workloads.contains(&w) => Err(format!("workload {w} is not among the header's workloads")),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::*;
    use crate::record::metric::Counts;
    use crate::record::plan::{Layouts, Plan};
    use crate::record::schema::BuildStatus;

    #[test]
    fn the_committed_run_file_loads_with_its_tags_and_end() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/run-fixed.jsonl"));
        let data = load(path).unwrap();
        assert!(!data.header.tags.is_empty());
        assert!(data.header.tags.iter().any(|t| t.status == BuildStatus::Built && !t.builds.is_empty()));
        assert!(data.end.is_some());
        // From before layouts were randomised: fixed, every sample of its tag's one build.
        assert_eq!((data.header.plan.layouts, data.header.plan.layout_seed), (Layouts::Fixed, None));
        assert!(data.samples.iter().all(|s| s.layout.is_none()));
    }

    #[test]
    fn units_are_declared_once_as_values_and_loaded_as_they_were_made() {
        let dir = tempfile::tempdir().unwrap();
        let labels = every_form();
        let data = load(&written(dir.path(), &labels)).unwrap();
        for l in &labels {
            assert!(data.units.contains(l), "{l}");
        }
        // The tag rows too: a control's row is its tag's, and each reads as its value.
        let rows: Vec<Label> = data.header.tags.iter().map(|t| t.label.clone()).collect();
        let built: Vec<Label> = labels.iter().map(|l| l.controlled().unwrap_or_else(|| l.clone())).collect();
        assert_eq!(rows, built);
        assert_eq!(data.samples.len(), labels.len());
        // Not read back from the text: the grammar would take these for other units.
        assert_ne!(Label::parse("LMDB_0.9.20@x1"), labels[8]);
        assert_ne!(Label::parse("deadbeef~control"), labels[9]);
        let first = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
        let header: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        assert_eq!(header["schema"], SCHEMA);
        assert_eq!(
            header["units"][2],
            serde_json::json!({"label": "LMDB_0.9.33 (gcc -O3)~control", "base": "LMDB_0.9.33",
                "toolchain": "gcc -O3", "layout": null, "control": true})
        );
    }

    #[test]
    fn units_named_beyond_the_tag_rows_are_written_as_labels_and_read_as_the_values_declared() {
        use crate::record::plan::{LayoutStudy, ProgramRecord};
        use crate::record::schema::Part;
        let dir = tempfile::tempdir().unwrap();
        // Forms the label grammar would read as other units: only the declared values do.
        let labels = every_form();
        let (tag, layout, odd) = (labels[6].clone(), labels[8].clone(), labels[9].clone());
        let mut header = header_of(&labels);
        header.plan.layout_study = Some(LayoutStudy { tag: tag.clone(), layouts: vec![(layout.clone(), 7)] });
        let program = ProgramRecord {
            name: "p".into(),
            source: "p.c".into(),
            sha256: "s".into(),
            args: Vec::new(),
            timeout_s: 1.0,
            figure: None,
            compiled: [(odd.clone(), "c".to_string())].into(),
        };
        header.plan.programs = vec![program];
        let environment = header.environment.clone();
        header.parts = vec![Part { file: "a.jsonl".into(), shard: None, tags: vec![odd.clone()], environment }];
        let medium = crate::record::Medium::Memory;
        header.places = vec![crate::record::Place { medium, storage: None, units: vec![odd.clone(), layout.clone()] }];
        let path = dir.path().join("run.jsonl");
        crate::record::RunWriter::create(&path, &header, crate::files::Existing::Replace).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let json: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let plan = &json["plan"];
        assert_eq!(
            plan["layout_study"],
            serde_json::json!({"tag": "LMDB_0.9.20@01", "layouts": [["LMDB_0.9.20@x1", 7]]})
        );
        assert_eq!(plan["programs"][0]["compiled"], serde_json::json!({"deadbeef~control": "c"}));
        assert_eq!(json["parts"][0]["tags"], serde_json::json!(["deadbeef~control"]));
        assert_eq!(json["places"][0]["units"], serde_json::json!(["deadbeef~control", "LMDB_0.9.20@x1"]));
        let read = load(&path).unwrap().header;
        assert_eq!(read.places, header.places);
        assert_eq!(read.plan.layout_study, header.plan.layout_study);
        assert_eq!(read.plan.programs, header.plan.programs);
        assert_eq!(read.parts[0].tags, vec![odd]);
        // One the header does not declare is refused, as a tag row's is.
        let undeclared = text.replacen(r#""deadbeef~control":"c""#, r#""LMDB_0.9.34":"c""#, 1);
        assert_ne!(undeclared, text);
        std::fs::write(&path, undeclared).unwrap();
        let e = format!("{:#}", load(&path).unwrap_err());
        assert!(e.contains("lists LMDB_0.9.34 but does not declare it"), "{e}");
    }

    /// A row that declares several passes an iteration (fillRandom where its commits are
    /// timed) writes that many samples a unit and round: the header says how many, they
    /// read back, and one more is a duplicated line.
    #[test]
    fn a_rows_declared_passes_read_back_and_one_more_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fill: Workload = "fillRandom".parse().unwrap();
        let unit = Label::build("LMDB_0.9.33", None);
        let mut header = header_of(std::slice::from_ref(&unit));
        header.workloads = vec![Workload::ReadSeq, fill];
        header.plan.iterations = 2;
        header.plan.passes = [(fill, 3)].into();
        let pass = |ns| Record::Sample(Sample { workload: fill, ns, ..unit_sample(&unit) });
        let write = |header: &Header, passes: u64| {
            let path = dir.path().join(format!("{passes}.jsonl"));
            let mut w = crate::record::RunWriter::create(&path, header, crate::files::Existing::Replace).unwrap();
            (1..=passes).for_each(|ns| w.append(&pass(ns)).unwrap());
            w.append(&Record::Sample(unit_sample(&unit))).unwrap();
            path
        };
        let text = std::fs::read_to_string(write(&header, 6)).unwrap();
        assert!(text.lines().next().unwrap().contains(r#""passes":{"fillRandom":3}"#), "{text}");
        let data = load(&dir.path().join("6.jsonl")).unwrap();
        assert_eq!(data.header.plan.passes, header.plan.passes);
        assert_eq!(data.samples.iter().filter(|s| s.workload == fill).count(), 6);
        let e = format!("{:#}", load(&write(&header, 7)).unwrap_err());
        assert!(e.contains("one sample too many of rust LMDB_0.9.33 fillRandom in round 1: the run takes 6 per pass (3 passes per iteration)"), "{e}");
        // Every other workload still takes one per iteration.
        header.plan.passes.clear();
        let e = format!("{:#}", load(&write(&header, 3)).unwrap_err());
        assert!(e.contains("the run takes 2 per pass (one per iteration)"), "{e}");
    }

    /// The error loading the file `edit` makes of a written run of every label form.
    fn refusal(edit: impl Fn(&mut Vec<serde_json::Value>)) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), &every_form());
        let text = std::fs::read_to_string(&path).unwrap();
        let mut records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        edit(&mut records);
        std::fs::write(&path, records.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
        format!("{:#}", load(&path).unwrap_err()).replace(&path.display().to_string(), "F")
    }

    #[test]
    fn a_unit_not_declared_or_declared_under_another_label_is_refused() {
        let e = refusal(|r| r[3]["tag"] = "LMDB_0.9.34".into());
        assert_eq!(e, "F:4: unit LMDB_0.9.34 is not among the units the header declares");
        let e = refusal(|r| r[0]["units"][0]["label"] = "LMDB_0.9.34".into());
        assert_eq!(
            e,
            "F:1: unit \"LMDB_0.9.34\" is declared with the value of \"LMDB_0.9.33\": a label is its value's rendering"
        );
        let e = refusal(|r| r[0]["units"][8]["layout"] = "08".into());
        assert!(e.starts_with("F:1: unit \"LMDB_0.9.20@x1\" is declared with the value of \"LMDB_0.9.20@08\""), "{e}");
        let e = refusal(|r| {
            let twice = r[0]["units"][1].clone();
            r[0]["units"].as_array_mut().unwrap().push(twice)
        });
        assert_eq!(e, "F:1: unit LMDB_1.0.1 (clang -O2) is declared twice");
        let e = refusal(|r| {
            r[0]["units"].as_array_mut().unwrap().remove(0);
        });
        assert_eq!(e, "F:1: the header lists LMDB_0.9.33 but does not declare it among its units");
        let e = refusal(|r| r[0]["schema"] = (SCHEMA + 1).into());
        let newer =
            format!("schema {}, newer than this lmdb-regress reads ({SCHEMA}); upgrade lmdb-regress", SCHEMA + 1);
        assert!(e.contains(&newer), "{e}");
    }

    #[test]
    fn a_plan_before_schema_8_measured_every_unit_before_10_decided_after_every_round_before_11_closed_at_either() {
        use super::super::{Adaptive, Closing, Stopping};
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), &every_form());
        let text = std::fs::read_to_string(&path).unwrap();
        let mut header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        header["plan"]["adaptive"] = "on".into();
        header["plan"]["stopping"] = "looks".into();
        header["plan"]["closing"] = "decided-and-within".into();
        let read = |h: &serde_json::Value| {
            std::fs::write(&path, format!("{h}\n{}", text.split_once('\n').unwrap().1)).unwrap();
            let plan = load(&path).unwrap().header.plan;
            (plan.adaptive, plan.stopping, plan.closing)
        };
        assert_eq!(read(&header), (Adaptive::On, Stopping::Looks, Closing::DecidedAndWithin));
        header["schema"] = 10.into();
        header["plan"].as_object_mut().unwrap().remove("closing");
        assert_eq!(read(&header), (Adaptive::On, Stopping::Looks, Closing::DecidedOrWithin));
        header["schema"] = 9.into();
        header["plan"].as_object_mut().unwrap().remove("stopping");
        assert_eq!(read(&header), (Adaptive::On, Stopping::EveryRound, Closing::DecidedOrWithin));
        header["schema"] = 7.into();
        header["plan"].as_object_mut().unwrap().remove("adaptive");
        assert_eq!(read(&header), (Adaptive::Off, Stopping::EveryRound, Closing::DecidedOrWithin));
    }

    #[test]
    fn a_failure_written_before_causes_has_the_cause_its_error_names() {
        let old = |error: &str| {
            serde_json::json!({"type": "failure", "round": 0, "engine": "rust", "tag": "LMDB_0.9.33",
                "workload": "migrateReadCold", "stage": "run", "error": error})
        };
        let cause = |v| {
            let mut units = UnitLabels::from_text();
            let Record::Failure(f) = upgrade(v, &mut units).unwrap() else { panic!("not a failure") };
            f.cause
        };
        let cold = "cold not achieved: 3 of 40 pages of /d/data.mdb still resident after fsync and POSIX_FADV_DONTNEED";
        assert_eq!(cause(old(cold)), Some(super::super::FailureCause::ColdNotAchieved));
        assert_eq!(cause(old("mdb_get: MDB_NOTFOUND")), None);
        // A cause written is the cause read, whatever the words.
        let mut written = old("mdb_get: MDB_NOTFOUND");
        written["cause"] = "cold-not-achieved".into();
        assert_eq!(cause(written), Some(super::super::FailureCause::ColdNotAchieved));
    }

    #[test]
    fn a_sample_of_an_older_schema_reads_its_instruction_count_as_ir() {
        let old = serde_json::json!({"type": "sample", "round": 0, "engine": "rust", "tag": "LMDB_0.9.33",
            "workload": "readSeq", "ns": 5, "instructions": 31000, "counted": true});
        let mut units = UnitLabels::from_text();
        let Record::Sample(s) = upgrade(old, &mut units).unwrap() else { panic!("not a sample") };
        assert_eq!((s.counts.clone(), s.total(Metric::Instructions)), (Counts::instructions(31000), Some(31000)));
        assert_eq!(s.total(Metric::EstimatedCycles), None);
        // Written back in today's shape, it reads the same.
        let again = serde_json::to_value(Record::Sample(s.clone())).unwrap();
        assert!(again.get("instructions").is_none() && again["counts"]["Ir"] == 31000, "{again}");
        let Record::Sample(t) = upgrade(again, &mut units).unwrap() else { panic!("not a sample") };
        assert_eq!(t, s);
        let timed = serde_json::json!({"type": "sample", "round": 0, "engine": "rust", "tag": "x",
            "workload": "readSeq", "ns": 5, "instructions": null});
        let Record::Sample(u) = upgrade(timed, &mut units).unwrap() else { panic!("not a sample") };
        assert!(u.counts.is_empty());
    }

    #[test]
    fn the_timed_fraction_covers_every_session_and_checks_say_their_kind() {
        let dir = tempfile::tempdir().unwrap();
        let sample = |round| Record::Sample(Sample { round, ..time_sample("LMDB_0.9.33") });
        let records =
            [sample(0), end(EndReason::Interrupted, 1, 10.0, 6.0), sample(1), end(EndReason::Rounds, 2, 30.0, 10.0)];
        let data = load(&file_of(dir.path(), Plan::new(2, 0, Metric::Time), &records)).unwrap();
        let e = data.end.unwrap();
        assert_eq!((e.wall_s, e.timed_s, e.timed_fraction()), (Some(40.0), Some(16.0), Some(0.4)));
        // Written before checks said their kind: a time run's check before its end is the
        // layout check, one after it the counting pass's.
        let path = file_of(dir.path(), Plan { count_entries: Some(10), ..Plan::new(1, 0, Metric::Time) }, &[]);
        let bare = r#"{"type":"check","what":"w","passed":true,"detail":"d"}"#;
        let tail =
            format!("{bare}\n{}\n{bare}\n", serde_json::to_string(&end(EndReason::Rounds, 1, 1.0, 1.0)).unwrap());
        std::fs::write(&path, std::fs::read_to_string(&path).unwrap() + &tail).unwrap();
        let kinds: Vec<Option<CheckKind>> = load(&path).unwrap().checks.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [Some(CheckKind::Layouts), Some(CheckKind::Repeat)]);
    }
}
