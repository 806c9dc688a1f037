//! The lmdb suite's workloads as harness/lmdb_suite.def declares them: one row each, read
//! here and by the C twin's X-macro, so the two engines run the same table.

use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

const TABLE: &str = include_str!("../../../../harness/lmdb_suite.def");

/// What a workload's pass does (the table's comment says each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Fill,
    Overwrite,
    Delete,
    Fragment,
    DupFill,
    DupRead,
    DupDelete,
    Renew,
    Copy,
    Drop,
    Incremental,
    Readers,
}

/// The order the timed operations visit the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    Sequential,
    Random,
}

/// A workload's options, a set of the table's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options(u32);

impl Options {
    pub const APPEND: Options = Options(1);
    pub const CURSOR: Options = Options(2);
    pub const READER: Options = Options(4);
    pub const WRITEMAP: Options = Options(8);
    pub const DUPFIXED: Options = Options(16);
    pub const COMPACT: Options = Options(32);
    pub const REVERSE: Options = Options(64);
    pub const MOST: Options = Options(128);
    pub const COUNT: Options = Options(256);
    pub const NESTED: Options = Options(512);
    pub const TRACKED: Options = Options(1024);
    pub const REMAP: Options = Options(2048);
    pub const PAGESIZE: Options = Options(4096);
    pub const CHECKSUM: Options = Options(8192);
    pub const ENCRYPT: Options = Options(16384);
    pub const SCAN: Options = Options(1 << 15);
    pub const NODUP: Options = Options(1 << 16);
    pub const RANGE: Options = Options(1 << 17);
    pub const NOOVERWRITE: Options = Options(1 << 18);
    pub const GROW: Options = Options(1 << 19);
    pub const NAMED: Options = Options(1 << 20);
    pub const REVERSEKEY: Options = Options(1 << 21);
    pub const RESERVE: Options = Options(1 << 22);
    pub const SINGLE: Options = Options(1 << 23);
    pub const CHILDOPEN: Options = Options(1 << 24);
    pub const SPILL: Options = Options(1 << 25);
    const NAMES: [(&'static str, Options); 26] = [
        ("APPEND", Options::APPEND),
        ("CURSOR", Options::CURSOR),
        ("READER", Options::READER),
        ("WRITEMAP", Options::WRITEMAP),
        ("DUPFIXED", Options::DUPFIXED),
        ("COMPACT", Options::COMPACT),
        ("REVERSE", Options::REVERSE),
        ("MOST", Options::MOST),
        ("COUNT", Options::COUNT),
        ("NESTED", Options::NESTED),
        ("TRACKED", Options::TRACKED),
        ("REMAP", Options::REMAP),
        ("PAGESIZE", Options::PAGESIZE),
        ("CHECKSUM", Options::CHECKSUM),
        ("ENCRYPT", Options::ENCRYPT),
        ("SCAN", Options::SCAN),
        ("NODUP", Options::NODUP),
        ("RANGE", Options::RANGE),
        ("NOOVERWRITE", Options::NOOVERWRITE),
        ("GROW", Options::GROW),
        ("NAMED", Options::NAMED),
        ("REVERSEKEY", Options::REVERSEKEY),
        ("RESERVE", Options::RESERVE),
        ("SINGLE", Options::SINGLE),
        ("CHILDOPEN", Options::CHILDOPEN),
        ("SPILL", Options::SPILL),
    ];
    /// The options only LMDB 1.0 has, each by what it calls.
    const SINCE_1_0: [(Options, &'static str); 4] = [
        (Options::REMAP, "MDB_REMAP_CHUNKS"),
        (Options::PAGESIZE, "mdb_env_set_pagesize"),
        (Options::CHECKSUM, "mdb_env_set_checksum"),
        (Options::ENCRYPT, "mdb_env_set_encrypt"),
    ];

    pub fn has(self, o: Options) -> bool {
        self.0 & o.0 != 0
    }

    /// The LMDB flags these options set, as `workloads` lists them.
    pub fn mdb_flags(self) -> Vec<&'static str> {
        let names = [
            (Options::APPEND, "MDB_APPEND"),
            (Options::RESERVE, "MDB_RESERVE"),
            (Options::WRITEMAP, "MDB_WRITEMAP"),
            (Options::DUPFIXED, "MDB_DUPFIXED"),
            (Options::COMPACT, "MDB_CP_COMPACT"),
            (Options::REMAP, "MDB_REMAP_CHUNKS"),
        ];
        names.into_iter().filter(|(o, _)| self.has(*o)).map(|(_, n)| n).collect()
    }
}

/// Why a row cannot run on a unit: it asks for what the unit's LMDB has not got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NotApplicable {
    /// The call or flag the row needs.
    pub needs: &'static str,
    /// The first LMDB version that has it.
    pub since: (i32, i32, i32),
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b, c) = self.since;
        write!(f, "not applicable: needs {}, which LMDB has from {a}.{b}.{c}", self.needs)
    }
}

/// How a DUPREAD row walks the duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DupWalk {
    /// Each key: MDB_SET_KEY, then MDB_NEXT_DUP from its first.
    Forward,
    /// Each key: MDB_SET_KEY, MDB_LAST_DUP, then MDB_PREV_DUP.
    Reverse,
    /// Each key a page at a time: MDB_SET_KEY, MDB_GET_MULTIPLE, MDB_NEXT_MULTIPLE
    /// (MDB_DUPFIXED).
    Multiple,
    /// As Multiple, then MDB_PREV_MULTIPLE back to the key's first page, after one
    /// MDB_PREV_MULTIPLE on the unpositioned cursor (LMDB has it from 0.9.19). With the
    /// suite's ten duplicates a key (one sub-page) neither finds a page before it.
    MultipleBack,
    /// Each key: MDB_SET_KEY, then only mdb_cursor_count.
    Count,
    /// Each key: MDB_GET_BOTH_RANGE at [`RANGE_FROM`]'s first byte, then MDB_NEXT_DUP.
    Range,
    /// Every duplicate of every key: MDB_NEXT from the unpositioned cursor (MDB_PREV with
    /// `reverse`), then one step past the end.
    Scan { reverse: bool },
    /// Each key's first duplicate: MDB_NEXT_NODUP from the unpositioned cursor (with
    /// `reverse` its last, MDB_PREV_NODUP), then one step past the end.
    NoDup { reverse: bool },
}

/// DUPFILL, DUPREAD, DUPDELETE: duplicates under each key (SINGLE: one).
pub const DUPS: u32 = 10;

/// Range: the duplicates from this index on are found by MDB_GET_BOTH_RANGE.
pub const RANGE_FROM: u32 = 5;

/// A commit-timed pass of fewer commits than this is repeated ([`SuiteRow::passes`]): its
/// median commit is the median of so few that a stretch of disturbed commits (the disk
/// busy with another process's writeback) moves it. In the closing run of 2026-12-05
/// (102 rounds, reports/README.md "Per-row passes"), a round's ratio to the baseline
/// spread 33 / 23 / 10% (sync / nometasync / nosync) for fillRandom's 20 commits a pass,
/// 5 / 4 / 2% for fillRandomEach's 2,000.
pub const FEW_COMMITS: u32 = 100;

/// The passes a row of few commits makes an iteration: the median of 5 pass medians,
/// emulated on that run from consecutive rounds, spread 10 / 12 / 6% where 3 left
/// 22 / 18 / 8% and 7 gave 11 / 9 / 4% at 1.5 times 5's extra cost (about 45 ms a
/// fillRandom pass, its untimed setup besides).
pub const MOST_PASSES: u32 = 5;

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteRow {
    pub name: &'static str,
    pub title: &'static str,
    pub shape: Shape,
    pub keys: Keys,
    /// Value bytes; 0: mixed, 8 to 1,200.
    pub value: u32,
    /// Operations per write transaction; 0: one for all.
    pub batch: u32,
    /// The timed operations touch `entries / share` keys.
    pub share: u32,
    pub options: Options,
    pub about: &'static str,
}

impl SuiteRow {
    /// Whether the row runs on an LMDB of `version`; why not, when not.
    pub fn applies_to(&self, version: (i32, i32, i32)) -> Result<(), NotApplicable> {
        match self.needs() {
            Some(n) if version < n.since => Err(n),
            _ => Ok(()),
        }
    }

    /// What the row calls that not every LMDB has, and from which version it has it.
    fn needs(&self) -> Option<NotApplicable> {
        let shape = (self.shape == Shape::Incremental).then_some("mdb_env_incr_dump");
        let option = Options::SINCE_1_0.iter().find(|(o, _)| self.options.has(*o)).map(|(_, needs)| *needs);
        if let Some(needs) = shape.or(option) {
            return Some(NotApplicable { needs, since: (1, 0, 0) });
        }
        (self.dup_walk() == Some(DupWalk::MultipleBack))
            .then_some(NotApplicable { needs: "MDB_PREV_MULTIPLE", since: (0, 9, 19) })
    }

    /// How many passes one iteration of the row makes: [`MOST_PASSES`] where its commits
    /// are timed and a pass commits few of them, so that a unit's round is the median of
    /// that many passes' median commits (stats takes a round's repetitions so); one
    /// otherwise. harness/lmdb_suite.c's `row_passes` is the same rule.
    pub fn passes(&self, entries: u32, commits_timed: bool) -> u32 {
        match self.commits_a_pass(entries) {
            Some(commits) if commits_timed && commits < FEW_COMMITS => MOST_PASSES,
            _ => 1,
        }
    }

    /// About how many commits a timed pass makes at `entries`: the keys it touches over
    /// its batch (one transaction for batch 0), at most twice the count for a row that
    /// deletes every other key; None for a row whose timed pass commits nothing (reads,
    /// copies, the reader table).
    pub fn commits_a_pass(&self, entries: u32) -> Option<u32> {
        let touched = (entries / self.share).max(1);
        match self.shape {
            Shape::DupRead | Shape::Renew | Shape::Copy | Shape::Readers => None,
            Shape::Drop | Shape::Incremental => Some(1),
            _ if self.batch == 0 => Some(1),
            _ => Some(touched.div_ceil(self.batch)),
        }
    }

    /// DUPREAD: how it walks the duplicates; None for other shapes.
    pub fn dup_walk(&self) -> Option<DupWalk> {
        let has = |o| self.options.has(o);
        let reverse = has(Options::REVERSE);
        let walk = match () {
            _ if has(Options::COUNT) => DupWalk::Count,
            _ if has(Options::DUPFIXED) && reverse => DupWalk::MultipleBack,
            _ if has(Options::DUPFIXED) => DupWalk::Multiple,
            _ if has(Options::SCAN) => DupWalk::Scan { reverse },
            _ if has(Options::NODUP) => DupWalk::NoDup { reverse },
            _ if has(Options::RANGE) => DupWalk::Range,
            _ if reverse => DupWalk::Reverse,
            _ => DupWalk::Forward,
        };
        (self.shape == Shape::DupRead).then_some(walk)
    }

    /// DUPFILL, DUPREAD, DUPDELETE: the duplicates each key holds (SINGLE: one).
    pub fn dups(&self) -> u32 {
        match self.options.has(Options::SINGLE) {
            true => 1,
            false => DUPS,
        }
    }

    /// DUPDELETE: whether duplicate `j` of key `i` is deleted: every other (key, duplicate)
    /// pair, so every other duplicate of each key, or with SINGLE every other key.
    pub fn deletes_dup(&self, i: u32, j: u32) -> bool {
        (i * self.dups() + j) % 2 == 0
    }

    /// DELETE: whether key `i` is deleted (every other, or with MOST all but every tenth).
    pub fn deletes(&self, i: u32) -> bool {
        match self.options.has(Options::MOST) {
            true => i % 10 != 0,
            false => i % 2 == 0,
        }
    }
}

static DECLARED: LazyLock<Vec<SuiteRow>> = LazyLock::new(|| {
    let rows = TABLE.lines().map(str::trim).filter(|l| l.starts_with("LMDB_WORKLOAD("));
    rows.map(|l| parse_row(l).unwrap_or_else(|e| panic!("harness/lmdb_suite.def: {e}: {l}"))).collect()
});

/// Every row, in the table's order (the order sections are shown).
pub fn declared() -> &'static [SuiteRow] {
    &DECLARED
}

fn parse_row(line: &'static str) -> Result<SuiteRow, String> {
    let inner = line.strip_prefix("LMDB_WORKLOAD(").and_then(|l| l.strip_suffix(')')).ok_or("not one row")?;
    let f = fields(inner)?;
    let [name, title, shape, keys, value, batch, share, options, about] = f[..] else {
        return Err(format!("{} fields, not 9", f.len()));
    };
    let number = |s: &str| s.parse::<u32>().map_err(|_| format!("{s} is not a number"));
    let share = number(share)?;
    if share == 0 {
        return Err("share must be at least 1".into());
    }
    Ok(SuiteRow {
        name,
        title: quoted(title)?,
        shape: shape_of(shape)?,
        keys: match keys {
            "SEQUENTIAL" => Keys::Sequential,
            "RANDOM" => Keys::Random,
            k => return Err(format!("unknown key order {k}")),
        },
        value: number(value)?,
        batch: number(batch)?,
        share,
        options: options_of(options)?,
        about: quoted(about)?,
    })
}

/// The row's fields, split at the commas outside quotes.
fn fields(inner: &'static str) -> Result<Vec<&'static str>, String> {
    let (mut out, mut start, mut in_quote) = (Vec::new(), 0, false);
    for (i, c) in inner.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            ',' if !in_quote => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if in_quote {
        return Err("an unclosed quote".into());
    }
    out.push(inner[start..].trim());
    Ok(out)
}

fn quoted(s: &'static str) -> Result<&'static str, String> {
    s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).ok_or_else(|| format!("{s} is not quoted"))
}

fn shape_of(s: &str) -> Result<Shape, String> {
    use Shape::*;
    let all = [
        ("FILL", Fill),
        ("OVERWRITE", Overwrite),
        ("DELETE", Delete),
        ("FRAGMENT", Fragment),
        ("DUPFILL", DupFill),
        ("DUPREAD", DupRead),
        ("DUPDELETE", DupDelete),
        ("RENEW", Renew),
        ("COPY", Copy),
        ("DROP", Drop),
        ("INCREMENTAL", Incremental),
        ("READERS", Readers),
    ];
    all.into_iter().find(|(n, _)| *n == s).map(|(_, v)| v).ok_or_else(|| format!("unknown shape {s}"))
}

fn options_of(s: &str) -> Result<Options, String> {
    if s == "0" {
        return Ok(Options::default());
    }
    s.split('|').map(str::trim).try_fold(Options::default(), |acc, n| {
        let (_, o) = Options::NAMES.iter().find(|(name, _)| *name == n).ok_or_else(|| format!("unknown option {n}"))?;
        Ok(Options(acc.0 | o.0))
    })
}

/// A workload of the lmdb suite: a row of the table, named by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LmdbWorkload(u16);

impl LmdbWorkload {
    pub fn all() -> impl Iterator<Item = LmdbWorkload> {
        (0..declared().len() as u16).map(LmdbWorkload)
    }

    pub fn declared(self) -> &'static SuiteRow {
        &declared()[self.0 as usize]
    }

    pub fn name(self) -> &'static str {
        self.declared().name
    }

    pub fn named(name: &str) -> Option<LmdbWorkload> {
        LmdbWorkload::all().find(|w| w.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for LmdbWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for LmdbWorkload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for LmdbWorkload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        LmdbWorkload::named(&name).ok_or_else(|| serde::de::Error::custom(format!("no lmdb workload {name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where commits are timed, a row of few commits a pass makes MOST_PASSES of them;
    /// a row of many, a read, and any row where commits are not timed, one.
    #[test]
    fn a_row_of_few_commits_repeats_its_pass_where_commits_are_timed() {
        let row = |name: &str| declared().iter().find(|d| d.name == name).unwrap();
        let (fill, each) = (row("fillRandom"), row("fillRandomEach"));
        assert_eq!((fill.commits_a_pass(20_000), each.commits_a_pass(20_000)), (Some(20), Some(2_000)));
        assert_eq!((fill.passes(20_000, true), fill.passes(20_000, false)), (MOST_PASSES, 1));
        assert_eq!(each.passes(20_000, true), 1);
        // fillRandom at a million entries commits 1,000 times a pass: one is enough.
        assert_eq!(fill.passes(1_000_000, true), 1);
        let one_txn = declared().iter().find(|d| d.shape == Shape::Fill && d.batch == 0).unwrap();
        assert_eq!((one_txn.commits_a_pass(20_000), one_txn.passes(20_000, true)), (Some(1), MOST_PASSES));
        let read = declared().iter().find(|d| d.shape == Shape::DupRead).unwrap();
        assert_eq!((read.commits_a_pass(20_000), read.passes(20_000, true)), (None, 1));
    }

    #[test]
    fn every_row_parses_and_names_are_unique() {
        let rows = declared();
        assert!(rows.len() >= 20, "{} rows", rows.len());
        let names: std::collections::BTreeSet<&str> =
            rows.iter().map(|d| d.name.to_ascii_lowercase().leak() as &str).collect();
        assert_eq!(names.len(), rows.len(), "names are unique, whatever their case");
        let fill = LmdbWorkload::named("fillSeqAppend").unwrap().declared();
        assert_eq!(
            (fill.shape, fill.keys, fill.value, fill.batch, fill.share),
            (Shape::Fill, Keys::Sequential, 100, 1000, 1)
        );
        assert!(fill.options.has(Options::APPEND) && !fill.options.has(Options::CURSOR));
        for d in rows.iter().filter(|d| d.options.has(Options::APPEND)) {
            assert_eq!(d.keys, Keys::Sequential, "{}: MDB_APPEND needs keys in order", d.name);
        }
    }

    #[test]
    fn a_bad_row_says_what_is_wrong() {
        let e = |l: &'static str| parse_row(l).unwrap_err();
        assert!(e(r#"LMDB_WORKLOAD(x, "X", SPIN, RANDOM, 1, 1, 1, 0, "a")"#).contains("unknown shape SPIN"));
        assert!(e(r#"LMDB_WORKLOAD(x, "X", FILL, RANDOM, 1, 1, 1, FAST, "a")"#).contains("unknown option FAST"));
        assert!(e(r#"LMDB_WORKLOAD(x, "X", FILL, RANDOM, 1, 1, 0, 0, "a")"#).contains("share"));
        assert!(e(r#"LMDB_WORKLOAD(x, "X, FILL)"#).contains("unclosed quote"));
        let ok = parse_row(r#"LMDB_WORKLOAD(x, "X, y", FILL, RANDOM, 1, 1, 1, CURSOR|READER, "a, b")"#).unwrap();
        assert_eq!((ok.title, ok.about), ("X, y", "a, b"));
        assert!(ok.options.has(Options::CURSOR) && ok.options.has(Options::READER));
    }

    #[test]
    fn a_1_0_option_does_not_apply_before_1_0() {
        let row = |o: Options| SuiteRow { options: o, ..LmdbWorkload::named("fillRandom").unwrap().declared().clone() };
        assert_eq!(row(Options::default()).applies_to((0, 9, 17)), Ok(()));
        let remap = row(Options::REMAP).applies_to((0, 9, 33)).unwrap_err();
        assert_eq!(remap.to_string(), "not applicable: needs MDB_REMAP_CHUNKS, which LMDB has from 1.0.0");
        assert_eq!(row(Options::CHECKSUM).applies_to((1, 0, 1)), Ok(()));
        let back = LmdbWorkload::named("dupfixedMultipleBack").unwrap().declared();
        let why = back.applies_to((0, 9, 18)).unwrap_err();
        assert_eq!(why.to_string(), "not applicable: needs MDB_PREV_MULTIPLE, which LMDB has from 0.9.19");
        assert_eq!(back.applies_to((0, 9, 19)), Ok(()));
    }

    #[test]
    fn workloads_serialise_by_name() {
        let w = LmdbWorkload::named("overwrite").unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), "\"overwrite\"");
        assert_eq!(serde_json::from_str::<LmdbWorkload>("\"overwrite\"").unwrap(), w);
        assert!(serde_json::from_str::<LmdbWorkload>("\"nope\"").is_err());
    }
}
