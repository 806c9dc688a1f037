//! A unit's identity as a value: the tag or commit it measures, the toolchain that built it,
//! whether it is the run's A/A control, in a layout study which layout, and in a run of
//! readers beside a writer how many reader threads, under a `--sync` axis how commits
//! are made durable, under `--memory-limit` the memory its process was held to, and under
//! `--readahead on,off` whether its map's faults read ahead.
//! Labels are rendered from it
//! (`Display`) and never read back: a run file (schema 4) declares each unit's value field
//! by field (`runfile::Declared`). [`Label::parse`], the one reader of the label grammar
//! `BASE[ (TOOLCHAIN)][ [N readers]][ [SYNC]][ [SIZE limit]][ [readahead ON|OFF]][@LAYOUT][~control]`, is left for the run files of
//! schema 3 and before, which hold labels as text only, and for a label typed on the
//! command line (`report --baseline`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::manifest::parse_version;
use crate::workload::{MemoryLimit, Readahead, SyncMode};

/// What a control's label ends with.
const CONTROL: &str = "~control";

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Label {
    /// A pinned tag (`LMDB_0.9.33`), a commit as asked for (`1a2b3c4d`, `mdb.RE/0.9 @ 1a2b3c4d`),
    /// either with a patch (`LMDB_0.9.33 + revert-8557.patch`), or a directory (`local:DIR`).
    pub base: String,
    /// The toolchain's name when not the default (`clang -O2`).
    pub toolchain: Option<String>,
    /// The layout of a layout study (`01`), as its label numbers it.
    pub layout: Option<String>,
    /// Measured a second time as the run's own A/A control.
    pub control: bool,
    /// Reader threads beside the writer (`run --suite concurrency --readers LIST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readers: Option<u32>,
    /// How its commits are made durable (`run --sync nosync,nometasync,sync`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncMode>,
    /// The memory its measuring process, page cache included, was held to
    /// (`run --memory-limit 256M,1G`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    /// Whether its map's faults read ahead (`run --readahead on,off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readahead: Option<Readahead>,
}

impl Label {
    /// A build of `base` by `toolchain` (None: the default toolchain).
    pub fn build(base: &str, toolchain: Option<&str>) -> Label {
        Label {
            base: base.to_string(),
            toolchain: toolchain.map(str::to_string),
            layout: None,
            control: false,
            readers: None,
            sync: None,
            memory_limit: None,
            readahead: None,
        }
    }

    /// This unit with `n` reader threads beside its writer.
    pub fn with_readers(&self, n: u32) -> Label {
        Label { readers: Some(n), ..self.clone() }
    }

    /// This unit with its commits made durable as `mode` says.
    pub fn with_sync(&self, mode: SyncMode) -> Label {
        Label { sync: Some(mode), ..self.clone() }
    }

    /// This unit measured in a process held to `limit`.
    pub fn with_memory_limit(&self, limit: MemoryLimit) -> Label {
        Label { memory_limit: Some(limit), ..self.clone() }
    }

    /// This unit with its map's faults reading ahead or not.
    pub fn with_readahead(&self, readahead: Readahead) -> Label {
        Label { readahead: Some(readahead), ..self.clone() }
    }

    /// The build this label measures: no layout, no control, and none of its axes.
    pub fn built(&self) -> Label {
        Label { layout: None, control: false, ..self.without_axes() }
    }

    /// This label without its axes: reader count, sync mode, memory limit, readahead.
    pub fn without_axes(&self) -> Label {
        Label { readers: None, sync: None, memory_limit: None, readahead: None, ..self.clone() }
    }

    /// Its axes: reader count, sync mode, memory limit, readahead. Units of one axes run
    /// the same work (a crew of one shape, commits of one mode), so they pair with each other.
    pub fn axes(&self) -> Axes {
        (self.readers, self.sync, self.memory_limit, self.readahead)
    }

    /// What it is compared within: its reader count, sync mode, memory limit and
    /// readahead, the baseline's label at the same ones being its reference.
    pub fn beside(&self, base: &str, toolchain: Option<&str>) -> Label {
        let (readers, sync, memory_limit, readahead) = (self.readers, self.sync, self.memory_limit, self.readahead);
        Label { readers, sync, memory_limit, readahead, ..Label::build(base, toolchain) }
    }

    /// This label measured again as its control.
    pub fn control(&self) -> Label {
        Label { control: true, ..self.clone() }
    }

    /// The label a control measures again; None for an ordinary label.
    pub fn controlled(&self) -> Option<Label> {
        self.control.then(|| Label { control: false, ..self.clone() })
    }

    /// This build under layout `layout` of a study.
    pub fn in_layout(&self, layout: String) -> Label {
        Label { layout: Some(layout), ..self.clone() }
    }

    /// Reads a label's text, as run files of schema 3 and before hold it, into its value.
    pub fn parse(text: &str) -> Label {
        let (rest, control) = match text.strip_suffix(CONTROL) {
            Some(b) => (b, true),
            None => (text, false),
        };
        // A layout's number follows the last '@' directly; a ref's " @ commit" has a space.
        let (rest, layout) = match rest.rsplit_once('@') {
            Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) && !b.ends_with(' ') => {
                (b, Some(n.to_string()))
            }
            _ => (rest, None),
        };
        let readahead = Readahead::ALL.into_iter().find(|r| rest.ends_with(&format!(" [readahead {r}]")));
        let rest = readahead.map_or(rest, |r| &rest[..rest.len() - r.name().len() - " [readahead ]".len()]);
        let (rest, memory_limit) = match rest.strip_suffix(" limit]").and_then(|r| r.rsplit_once(" [")) {
            Some((b, size)) => match size.parse::<MemoryLimit>() {
                Ok(l) => (b, Some(l)),
                Err(_) => (rest, None),
            },
            None => (rest, None),
        };
        let sync = SyncMode::ALL.into_iter().find(|m| rest.ends_with(&format!(" [{m}]")));
        let rest = sync.map_or(rest, |m| &rest[..rest.len() - m.name().len() - 3]);
        let (rest, readers) = match rest.strip_suffix(" readers]").or_else(|| rest.strip_suffix(" reader]")) {
            Some(r) => match r.rsplit_once(" [").and_then(|(b, n)| Some((b, n.parse::<u32>().ok()?))) {
                Some((b, n)) => (b, Some(n)),
                None => (rest, None),
            },
            None => (rest, None),
        };
        // Tags and commit ids hold no space, so the first " (" starts a toolchain's name.
        let (base, toolchain) = match rest.split_once(" (").and_then(|(b, r)| Some((b, r.strip_suffix(')')?))) {
            Some((b, name)) => (b, Some(name.to_string())),
            None => (rest, None),
        };
        Label { base: base.to_string(), toolchain, layout, control, readers, sync, memory_limit, readahead }
    }

    /// Whether a unit's base (a patch's or a directory's name in it) reads back as itself
    /// in every label built on it (with a toolchain, as a control), and holds no control
    /// character: ` (`, a trailing `~control` or `@NUMBER` would be read as a label's parts.
    pub fn reads_back(base: &str) -> bool {
        let every = Label {
            base: base.to_string(),
            toolchain: Some("cc".into()),
            layout: None,
            control: true,
            readers: Some(2),
            sync: Some(SyncMode::Nometasync),
            memory_limit: Some(MemoryLimit(256 << 20)),
            readahead: Some(Readahead::Off),
        };
        !base.chars().any(char::is_control)
            && Label::parse(base) == Label::build(base, None)
            && Label::parse(&every.to_string()) == every
    }

    /// The pinned version this label measures, if it is a tag's (a study's layouts are not).
    pub fn version(&self) -> Option<(i32, i32, i32)> {
        parse_version(&self.base).filter(|_| self.layout.is_none())
    }

    /// The label comparisons are made with among `labels`: the oldest of the `baseline`'s
    /// labels, else the oldest of all.
    pub fn reference_among<'a>(
        labels: impl Iterator<Item = &'a Label> + Clone,
        baseline: Option<&str>,
    ) -> Option<Label> {
        let is_baseline = |t: &&Label| baseline.is_none_or(|b| t.compared_as().0 == b);
        let oldest = |keys: &mut dyn Iterator<Item = &'a Label>| keys.min_by_key(|t| t.release_key()).cloned();
        oldest(&mut labels.clone().filter(is_baseline)).or_else(|| oldest(&mut labels.clone()))
    }

    /// What the report compares a label's builds by: its tag or commit, and its toolchain.
    /// In a layout study each layout is a unit of its own, compared by its whole label
    /// (its control aside), with no toolchain of its own.
    pub fn compared_as(&self) -> (String, Option<&str>) {
        match &self.layout {
            None => (self.base.clone(), self.toolchain.as_deref()),
            Some(_) => (Label { control: false, ..self.clone() }.to_string(), None),
        }
    }

    /// A pinned release tag as such: no other toolchain, no layout, no control.
    pub fn is_plain_release(&self) -> bool {
        self.version().is_some() && self.toolchain.is_none() && !self.control
    }

    /// Release order: pinned tags by version, then anything else (commits, a study's
    /// layouts) by name; under one tag the default toolchain first, then the others by
    /// name, then by reader count, sync mode, memory limit and readahead (as numbers and in
    /// the modes' order, not as text); a control right after the label it repeats.
    pub fn release_key(&self) -> (u8, (i32, i32, i32), String, String, Axes, bool) {
        let toolchain = self.toolchain.clone().unwrap_or_default();
        let axes = self.axes();
        match (self.version(), &self.layout) {
            (Some(v), _) => (0, v, String::new(), toolchain, axes, self.control),
            (None, None) => (1, (0, 0, 0), self.base.clone(), toolchain, axes, self.control),
            // A layout's label is ordered by its whole text, toolchain and number included.
            (None, Some(_)) => {
                let text = Label { control: false, ..self.clone() }.to_string();
                (1, (0, 0, 0), text, String::new(), axes, self.control)
            }
        }
    }
}

/// A label's axes in the order units sort by: reader count, sync mode, memory limit,
/// readahead.
pub type Axes = (Option<u32>, Option<SyncMode>, Option<MemoryLimit>, Option<Readahead>);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)?;
        if let Some(name) = &self.toolchain {
            write!(f, " ({name})")?;
        }
        match self.readers {
            Some(1) => f.write_str(" [1 reader]")?,
            Some(n) => write!(f, " [{n} readers]")?,
            None => {}
        }
        if let Some(mode) = self.sync {
            write!(f, " [{mode}]")?;
        }
        if let Some(limit) = self.memory_limit {
            write!(f, " [{limit} limit]")?;
        }
        if let Some(r) = self.readahead {
            write!(f, " [readahead {r}]")?;
        }
        if let Some(n) = &self.layout {
            write!(f, "@{n}")?;
        }
        if self.control {
            f.write_str(CONTROL)?;
        }
        Ok(())
    }
}

/// A unit's base as a run's plan names it (its baseline, the tag its control repeats, a
/// shard's tags): a tag or commit as asked for (`LMDB_0.9.33`, `1a2b3c4d`), what a
/// label's `base` holds. Written as its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Base(String);

impl Base {
    pub fn new(text: impl Into<String>) -> Base {
        Base(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Base {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A label written as its text, as reports and their JSON name a unit (`serialize_with`).
pub fn as_text<S: serde::Serializer>(label: &Label, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(label)
}

/// [`as_text`] for an optional label.
pub fn as_text_opt<S: serde::Serializer>(label: &Option<Label>, s: S) -> Result<S::Ok, S::Error> {
    match label {
        Some(l) => s.collect_str(l),
        None => s.serialize_none(),
    }
}

/// [`as_text`] for a list of labels.
pub fn as_texts<S: serde::Serializer>(labels: &[Label], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(labels.iter().map(Label::to_string))
}

/// Serde for the units a run file's header names by their labels' text beyond its tag rows
/// (a layout study's tag and layouts, a merged run's parts, the builds a program was
/// compiled against): written as the text, read as the value the header declares, which
/// the reader (`record::reader`) puts in the text's place before serde sees it. JSON keys
/// are text only, so a map keyed by unit is read as a list of (value, entry) pairs.
pub mod by_text {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Label;

    /// One unit.
    pub mod one {
        use super::*;

        pub use super::super::as_text as serialize;

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Label, D::Error> {
            Label::deserialize(d)
        }
    }

    /// A list of units.
    pub mod list {
        use super::*;

        pub use super::super::as_texts as serialize;

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Label>, D::Error> {
            Vec::deserialize(d)
        }
    }

    /// A list of units, each with its entry: `[[label, entry], ...]`.
    pub mod pairs {
        use super::*;

        pub fn serialize<S: Serializer, V: Serialize>(units: &[(Label, V)], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(units.iter().map(|(unit, v)| (unit.to_string(), v)))
        }

        pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(d: D) -> Result<Vec<(Label, V)>, D::Error> {
            Vec::deserialize(d)
        }
    }

    /// Units' entries, keyed by unit: `{"label": entry, ...}`.
    pub mod keyed {
        use super::*;

        pub fn serialize<S: Serializer, V: Serialize>(map: &BTreeMap<Label, V>, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(map.iter().map(|(unit, v)| (unit.to_string(), v)))
        }

        pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
            d: D,
        ) -> Result<BTreeMap<Label, V>, D::Error> {
            Ok(Vec::<(Label, V)>::deserialize(d)?.into_iter().collect())
        }
    }
}

/// The base (tag or commit, as [`Label::compared_as`] gives it) that `asked` names among
/// `bases`: a label as written, or a pinned tag by its short name (`0.9.33`).
pub fn find_base(asked: &str, bases: &[String]) -> Option<String> {
    let b = Label::parse(asked).compared_as().0;
    let full = match crate::manifest::parse_version(&b).is_none() && !bases.contains(&b) {
        true => crate::manifest::normalize_tag(&b),
        false => b,
    };
    bases.contains(&full).then_some(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABELS: [&str; 23] = [
        "LMDB_0.9.33 [1 reader]",
        "LMDB_0.9.33 [nometasync]",
        "LMDB_0.9.33 [256M limit]",
        "LMDB_1.0.1 [sync] [1536K limit]@02",
        "LMDB_1.0.1 (clang -O2) [2 readers] [sync]@01~control",
        "LMDB_1.0.1 (clang -O2) [4 readers]",
        "LMDB_1.0.1 [txn-nometasync] [1536K limit]",
        "LMDB_0.9.33 [2 readers]~control",
        "LMDB_0.9.33",
        "LMDB_0.9.9",
        "LMDB_1.0.1 (clang -O2)",
        "LMDB_0.9.33~control",
        "LMDB_0.9.33 (gcc -O3)~control",
        "1a2b3c4d5e",
        "mdb.RE/0.9 @ 1a2b3c4d",
        "mdb.RE/0.9 @ 1a2b3c4d (clang -O2)",
        "LMDB_0.9.20@01",
        "LMDB_0.9.20@12~control",
        "LMDB_0.9.20 (clang -O2)@03",
        "abc1234~control",
        "LMDB_0.9.33 + revert-8557.patch",
        "LMDB_0.9.33 + revert-8557.patch (clang -O2)~control",
        "local:../lmdb/libraries/liblmdb",
    ];

    #[test]
    fn every_label_reads_back_into_the_value_it_was_rendered_from() {
        for text in LABELS {
            assert_eq!(Label::parse(text).to_string(), text);
        }
        let patched = Label::parse("LMDB_0.9.33 + revert-8557.patch (clang -O2)~control");
        assert_eq!((patched.base.as_str(), patched.version()), ("LMDB_0.9.33 + revert-8557.patch", None));
        let l = Label::parse("LMDB_1.0.1 (clang -O2)~control");
        assert_eq!((l.base.as_str(), l.toolchain.as_deref(), l.control), ("LMDB_1.0.1", Some("clang -O2"), true));
        assert_eq!(l.controlled(), Some(Label::build("LMDB_1.0.1", Some("clang -O2"))));
        assert_eq!(Label::parse("mdb.RE/0.9 @ 1a2b3c4d").base, "mdb.RE/0.9 @ 1a2b3c4d");
        assert_eq!(Label::parse("LMDB_1.0.1 [txn-nosync]").sync, Some(SyncMode::TxnNosync));
        assert_eq!(Label::parse("LMDB_1.0.1 [nosync]").sync, Some(SyncMode::Nosync));
        assert_eq!(Label::parse("LMDB_0.9.20@01").layout.as_deref(), Some("01"));
        let l = Label::parse("LMDB_1.0.1 [sync] [1536K limit] [readahead off]@02");
        assert_eq!(
            (l.sync, l.memory_limit, l.readahead, l.built()),
            (Some(SyncMode::Sync), Some(MemoryLimit(3 << 19)), Some(Readahead::Off), Label::build("LMDB_1.0.1", None))
        );
        assert_eq!(
            ["1g", "256M", "1048576"].map(|t| t.parse::<MemoryLimit>().unwrap().to_string()),
            ["1G", "256M", "1M"]
        );
        for bad in ["512K", "12X", "", "99999999999G"] {
            assert!(bad.parse::<MemoryLimit>().is_err(), "{bad}");
        }
        assert_eq!(Label::parse("x [12X limit]").base, "x [12X limit]", "not a size: part of the base");
    }

    #[test]
    fn a_base_the_grammar_would_misread_is_told_apart() {
        for good in ["LMDB_0.9.33 + revert-8557.patch", "local:../a b/liblmdb", "mdb.RE/0.9 @ 1a2b3c4d", "x@y.patch"] {
            assert!(Label::reads_back(good), "{good}");
        }
        for bad in ["LMDB_0.9.33 + x~control", "LMDB_0.9.33 + x.patch (gcc -O3)", "LMDB + a (b", "LMDB + x@01", "a\nb"]
        {
            assert!(!Label::reads_back(bad), "{bad}");
        }
    }

    #[test]
    fn release_order() {
        // Version order across series: 1.0.0 comes after 0.9.36, never between 0.9.1 and 0.9.2.
        assert!(Label::build("LMDB_1.0.0", None).release_key() > Label::build("LMDB_0.9.36", None).release_key());
        let (two, ten) = (Label::parse("LMDB_0.9.33 [2 readers]"), Label::parse("LMDB_0.9.33 [10 readers]"));
        assert!(two.release_key() < ten.release_key(), "reader counts as numbers");
        let modes = ["nosync", "nometasync", "sync"].map(|m| Label::parse(&format!("LMDB_0.9.33 [{m}]")).release_key());
        assert!(modes.is_sorted(), "sync modes in their order");
        let mut labels = vec![
            "deadbeef",
            "LMDB_0.9.33 (gcc -O3)",
            "LMDB_0.9.33 (clang -O2)~control",
            "LMDB_0.9.20@02",
            "LMDB_0.9.33",
            "LMDB_0.9.33 (clang -O2)",
            "LMDB_0.9.20@01~control",
            "LMDB_0.9.9 (clang -O2)",
            "LMDB_0.9.33~control",
            "LMDB_0.9.20@01",
        ];
        labels.sort_by_key(|l| Label::parse(l).release_key());
        assert_eq!(
            labels,
            [
                "LMDB_0.9.9 (clang -O2)",
                "LMDB_0.9.33",
                "LMDB_0.9.33~control",
                "LMDB_0.9.33 (clang -O2)",
                "LMDB_0.9.33 (clang -O2)~control",
                "LMDB_0.9.33 (gcc -O3)",
                "LMDB_0.9.20@01",
                "LMDB_0.9.20@01~control",
                "LMDB_0.9.20@02",
                "deadbeef"
            ]
        );
    }

    #[test]
    fn reports_compare_a_build_by_its_tag_and_toolchain_and_a_layout_as_a_whole() {
        let of = |t: &str| Label::parse(t).compared_as().0;
        assert_eq!(of("LMDB_0.9.33 (clang -O2)~control"), "LMDB_0.9.33");
        assert_eq!(of("deadbeef (gcc -O3)"), "deadbeef");
        assert_eq!(of("LMDB_0.9.20 (clang -O2)@03~control"), "LMDB_0.9.20 (clang -O2)@03");
        assert_eq!(Label::parse("LMDB_0.9.33 (gcc -O3)").compared_as().1, Some("gcc -O3"));
        assert_eq!(Label::parse("LMDB_0.9.20 (clang -O2)@03").compared_as().1, None);
        let plain: Vec<&str> = LABELS.into_iter().filter(|t| Label::parse(t).is_plain_release()).collect();
        let expected = [
            "LMDB_0.9.33 [1 reader]",
            "LMDB_0.9.33 [nometasync]",
            "LMDB_0.9.33 [256M limit]",
            "LMDB_1.0.1 [txn-nometasync] [1536K limit]",
        ];
        assert_eq!(plain, [&expected[..], &["LMDB_0.9.33", "LMDB_0.9.9"]].concat());
    }
}
