//! `explain A B`: where two builds' instructions differ, function by function. The model
//! (its JSON is the contract of `explain --format json`) is made from each build's callgrind
//! profiles; text (80 columns, for a Bugzilla comment), Markdown and HTML lay it out, with
//! the top functions' source lines and their costs in both builds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::record::metric::{Counts, Event, Metric};
use crate::report::cells::{num, Cells};
use crate::report::flame::{self, Folded};
use crate::report::outline::Document;
use crate::runner::profile::{FunctionCost, Profile};
use crate::runner::profiling::WorkloadProfile;

/// One figure in build A and in build B.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Pair {
    pub a: f64,
    pub b: f64,
}

impl Pair {
    pub fn diff(&self) -> f64 {
        self.b - self.a
    }
}

/// The whole explanation: `explain --format json` prints exactly this.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub a: String,
    pub b: String,
    pub metric: &'static str,
    pub workloads: Vec<WorkloadExplanation>,
    /// Entries of every workload's pass (figures are per entry).
    #[serde(skip)]
    pub entries: u32,
    /// Rows shown by text, Markdown and HTML per workload.
    #[serde(skip)]
    pub top: usize,
    /// The caches callgrind simulated, when it did (`--cache`).
    #[serde(skip)]
    pub caches: Option<String>,
}

/// A cost vector over `p`'s events as the runner's counts, for its metric formulas.
fn counts_of(p: &Profile, v: &[u64]) -> Counts {
    p.events.iter().zip(v).filter_map(|(e, n)| Some((Event::from_callgrind(e)?, *n))).collect()
}

/// The cache metrics of a cost vector of each build, per entry (by metric key); empty when
/// a profile simulated no caches.
fn cache_pairs(
    pa: &Profile,
    va: &[u64],
    pb: &Profile,
    vb: &[u64],
    per: &dyn Fn(u64) -> f64,
) -> BTreeMap<&'static str, Pair> {
    let (ca, cb) = (counts_of(pa, va), counts_of(pb, vb));
    Metric::cache_simulated()
        .filter_map(|m| Some((m.key(), Pair { a: per(m.of_counts(&ca)?), b: per(m.of_counts(&cb)?) })))
        .collect()
}

/// A step a hunt named (bisect's first bad commit, a history's step) with its top
/// functions by difference: the builds' explanation, and the commit's subject.
#[derive(Debug, Clone, Serialize)]
pub struct Attribution {
    /// The build before the step and the step's own.
    pub good: String,
    pub bad: String,
    /// The step's commit as git describes it ("commit …, \"subject\", date"), when known.
    pub subject: Option<String>,
    #[serde(flatten)]
    pub explanation: Explanation,
}

impl Attribution {
    /// The top `n` functions of each workload by self difference, a line each, for a
    /// report's text: "+151.3 instr/entry  mdb_cursor_put  (97% of the change)".
    pub fn lines(&self, n: usize) -> Vec<String> {
        // Commit ids cut to 12 digits, as git shows them, so that a line fits a Bugzilla comment.
        let short = |l: &str| match l.len() > 12 && l.chars().all(|c| c.is_ascii_hexdigit()) {
            true => l[..12].to_string(),
            false => l.to_string(),
        };
        let mut out = vec![format!("{} against {}", short(&self.bad), short(&self.good))];
        out.extend(self.subject.clone());
        for w in &self.explanation.workloads {
            let total = w.per_entry.diff();
            out.push(format!(
                "{}: {:.1} -> {:.1} instructions per entry ({:+.1})",
                w.workload, w.per_entry.a, w.per_entry.b, total
            ));
            for f in w.functions.iter().take(n).filter(|f| f.self_cost.diff() != 0.0) {
                let share = if total != 0.0 {
                    format!(", {:.0}% of the change", 100.0 * f.self_cost.diff() / total)
                } else {
                    String::new()
                };
                out.push(format!(
                    "  {:+.1} {}  (self {:.1} -> {:.1}{share})",
                    f.self_cost.diff(),
                    f.name,
                    f.self_cost.a,
                    f.self_cost.b
                ));
            }
        }
        out
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadExplanation {
    pub workload: String,
    pub per_entry: Pair,
    /// With `--cache`: the workload's estimated cycles, D1 and LL misses per entry.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub cache: BTreeMap<&'static str, Pair>,
    /// By |self.b − self.a|, largest first (then by |inclusive.b − inclusive.a|, then by name).
    pub functions: Vec<FunctionRow>,
    /// The top functions' source lines.
    #[serde(skip)]
    pub listings: Vec<SourceListing>,
    /// Both builds' stacks, for the differential flame graph.
    #[serde(skip)]
    pub flame: Option<(Folded, Folded)>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct FunctionRow {
    pub name: String,
    #[serde(rename = "self")]
    pub self_cost: Pair,
    pub inclusive: Pair,
    /// With `--cache`: its own (self) estimated cycles, D1 and LL misses per entry.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", skip_deserializing)]
    pub cache: BTreeMap<&'static str, Pair>,
    #[serde(skip)]
    pub file: Option<String>,
    /// A function renamed between A and B, paired into this one row (`super::renamed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed: Option<super::renamed::Renamed>,
}

impl FunctionRow {
    /// The function's name in build A and in build B (two, for a renamed one).
    pub fn names(&self) -> (&str, &str) {
        match &self.renamed {
            Some(r) => (&r.a, &r.b),
            None => (&self.name, &self.name),
        }
    }
}

/// A function's source lines with their costs in both builds, A's lines aligned with B's
/// (a line only in one build is marked as in a diff, `-` A's, `+` B's).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceListing {
    pub function: String,
    pub file: String,
    pub lines: Vec<ListedLine>,
    /// Lines with a cost left out to keep the listing short.
    pub hidden: usize,
    /// The diff of the function's lines (the span of its costed lines) from A's source to
    /// B's, with two lines of context: `@@ A n, B m @@` heads, ` `, `-`, `+` lines. Empty
    /// when the span is the same in both, or one build lacks the function.
    pub diff: Vec<String>,
    /// Diff lines left out past [`DIFF_LINES`].
    pub diff_hidden: usize,
}

/// Lines of a function's diff at most.
pub const DIFF_LINES: usize = 40;

#[derive(Debug, Clone, PartialEq)]
pub struct ListedLine {
    pub a: Option<u32>,
    pub b: Option<u32>,
    pub cost: Pair,
    pub text: String,
}

impl ListedLine {
    pub fn marker(&self) -> char {
        match (self.a, self.b) {
            (Some(_), None) => '-',
            (None, Some(_)) => '+',
            _ => ' ',
        }
    }
}

/// One build's side: its label, its profiles and the folder of its staged sources.
pub struct ProfiledBuild<'a> {
    pub label: String,
    pub profiles: &'a [WorkloadProfile],
    pub sources: Option<PathBuf>,
}

/// The explanation of `a` against `b`: every workload both profiled, per entry of
/// `entries`, with the source listings of the `listed` top functions.
pub fn build(a: &ProfiledBuild, b: &ProfiledBuild, entries: u32, top: usize, listed: usize) -> Explanation {
    let mut workloads = Vec::new();
    for pa in a.profiles {
        let Some(pb) = b.profiles.iter().find(|p| p.workload == pa.workload) else { continue };
        // Per timed operation, as `run` counts (`Sample::per_op`): an entry, unless the
        // worker counted its operations apart; both sides ran the same ones.
        let ops = pa.ops.or(pb.ops).unwrap_or(u64::from(entries));
        let per = |v: u64| v as f64 / ops.max(1) as f64;
        let (ia, ib) = (ir(&pa.profile), ir(&pb.profile));
        let names: BTreeSet<&String> = pa.profile.functions.keys().chain(pb.profile.functions.keys()).collect();
        let cost = |p: &Profile, name: &str, inclusive: bool, i: Option<usize>| -> f64 {
            let f = p.functions.get(name);
            let v = f.zip(i).map(|(f, i)| if inclusive { f.inclusive[i] } else { f.self_cost[i] });
            per(v.unwrap_or(0))
        };
        let own = |p: &Profile, name: &str| -> Vec<u64> {
            p.functions.get(name).map_or(vec![0; p.events.len()], |f| f.self_cost.clone())
        };
        let mut functions: Vec<FunctionRow> = names
            .into_iter()
            .map(|name| FunctionRow {
                name: name.clone(),
                self_cost: Pair { a: cost(&pa.profile, name, false, ia), b: cost(&pb.profile, name, false, ib) },
                inclusive: Pair { a: cost(&pa.profile, name, true, ia), b: cost(&pb.profile, name, true, ib) },
                cache: cache_pairs(&pa.profile, &own(&pa.profile, name), &pb.profile, &own(&pb.profile, name), &per),
                file: file_of(&pa.profile, name).or_else(|| file_of(&pb.profile, name)),
                renamed: None,
            })
            .collect();
        pair_renamed(&mut functions);
        functions.sort_by(|x, y| {
            let key = |f: &FunctionRow| (f.self_cost.diff().abs(), f.inclusive.diff().abs());
            let (kx, ky) = (key(x), key(y));
            ky.0.total_cmp(&kx.0).then(ky.1.total_cmp(&kx.1)).then_with(|| x.name.cmp(&y.name))
        });
        let total = |p: &Profile, i: Option<usize>| per(i.and_then(|i| p.totals.get(i).copied()).unwrap_or(0));
        let listings = functions
            .iter()
            .filter(|f| f.self_cost.diff() != 0.0)
            .take(listed)
            .filter_map(|f| {
                listing(
                    f.names(),
                    (&pa.profile, ia, a.sources.as_deref()),
                    (&pb.profile, ib, b.sources.as_deref()),
                    &per,
                )
            })
            .collect();
        workloads.push(WorkloadExplanation {
            workload: pa.workload.name().to_string(),
            per_entry: Pair { a: total(&pa.profile, ia), b: total(&pb.profile, ib) },
            cache: cache_pairs(&pa.profile, &pa.profile.totals, &pb.profile, &pb.profile.totals, &per),
            functions,
            listings,
            flame: ia.zip(ib).map(|(ia, ib)| (flame::folded(&pa.profile, ia), flame::folded(&pb.profile, ib))),
        });
    }
    Explanation {
        a: a.label.clone(),
        b: b.label.clone(),
        metric: "instructions",
        workloads,
        entries,
        top,
        caches: None,
    }
}

/// Each function renamed between A and B ([`super::renamed::pairs`]) as one row, where A's
/// stood, naming both.
fn pair_renamed(rows: &mut Vec<FunctionRow>) {
    let costs: Vec<_> = rows
        .iter()
        .map(|f| super::renamed::Costs {
            self_a: f.self_cost.a,
            self_b: f.self_cost.b,
            inclusive_a: f.inclusive.a,
            file: f.file.as_deref(),
        })
        .collect();
    let pairs = super::renamed::pairs(&costs);
    for &(o, n) in &pairs {
        rows[o] = merged(&rows[o], &rows[n]);
    }
    let dropped: BTreeSet<usize> = pairs.iter().map(|&(_, n)| n).collect();
    let mut i = 0;
    rows.retain(|_| {
        i += 1;
        !dropped.contains(&(i - 1))
    });
}

/// A's function `o` and B's `n` as one row: their costs summed on each side (inclusive:
/// the larger, as one may call the other), A's file, both names.
fn merged(o: &FunctionRow, n: &FunctionRow) -> FunctionRow {
    let sum = |x: &Pair, y: &Pair| Pair { a: x.a + y.a, b: x.b + y.b };
    let mut cache = o.cache.clone();
    for (k, p) in &n.cache {
        let kept = cache.get(k).copied().unwrap_or(Pair { a: 0.0, b: 0.0 });
        cache.insert(k, sum(&kept, p));
    }
    let renamed = super::renamed::Renamed { a: o.name.clone(), b: n.name.clone() };
    FunctionRow {
        name: format!("{} → {}", renamed.a, renamed.b),
        self_cost: sum(&o.self_cost, &n.self_cost),
        inclusive: Pair { a: o.inclusive.a.max(n.inclusive.a), b: o.inclusive.b.max(n.inclusive.b) },
        cache,
        file: o.file.clone(),
        renamed: Some(renamed),
    }
}

/// What a workload's table says of its renamed rows.
fn renamed_sentence(rows: &[FunctionRow]) -> Option<String> {
    super::renamed::sentence(rows.iter().filter_map(|f| f.renamed.as_ref()))
}

fn ir(p: &Profile) -> Option<usize> {
    p.event("Ir")
}

fn file_of(p: &Profile, name: &str) -> Option<String> {
    p.functions.get(name).and_then(|f| f.file.clone())
}

/// Rows of a listing at most; the rest (the smallest differences) are counted as hidden.
const LISTED_LINES: usize = 24;

/// `name`'s source lines in its file, A's aligned with B's, with each line's cost per entry.
fn listing(
    (name_a, name_b): (&str, &str),
    (pa, ia, sa): (&Profile, Option<usize>, Option<&Path>),
    (pb, ib, sb): (&Profile, Option<usize>, Option<&Path>),
    per: &dyn Fn(u64) -> f64,
) -> Option<SourceListing> {
    let file = file_of(pa, name_a).or_else(|| file_of(pb, name_b))?;
    let side = |p: &Profile, name: &str, i: Option<usize>, src: Option<&Path>| {
        let costs: BTreeMap<u32, f64> = match (p.functions.get(name), i) {
            (Some(f), Some(i)) => costs_in(f, &file, i, per),
            _ => BTreeMap::new(),
        };
        let text = src.and_then(|s| std::fs::read_to_string(s.join(&file)).ok()).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        let span = match (costs.keys().next(), costs.keys().next_back()) {
            (Some(&lo), Some(&hi)) => {
                (lo..=hi).map(|n| (n, all.get(n as usize - 1).map_or(String::new(), |t| t.to_string()))).collect()
            }
            _ => Vec::new(),
        };
        (costs, span)
    };
    let (ca, la): (BTreeMap<u32, f64>, Vec<(u32, String)>) = side(pa, name_a, ia, sa);
    let (cb, lb) = side(pb, name_b, ib, sb);
    // Only where a build's sources are at hand (not for this program's own functions).
    if la.iter().chain(&lb).all(|(_, t)| t.is_empty()) {
        return None;
    }
    let aligned = align(&la, &lb);
    let (diff, diff_hidden) = match la.is_empty() || lb.is_empty() {
        true => (Vec::new(), 0),
        false => diff_of(&aligned, &la, &lb),
    };
    let mut lines: Vec<ListedLine> = aligned
        .into_iter()
        .map(|(x, y)| {
            let a = x.map(|k| la[k].0);
            let b = y.map(|k| lb[k].0);
            let text = x.map(|k| la[k].1.clone()).or_else(|| y.map(|k| lb[k].1.clone())).unwrap_or_default();
            let cost = Pair {
                a: a.and_then(|n| ca.get(&n).copied()).unwrap_or(0.0),
                b: b.and_then(|n| cb.get(&n).copied()).unwrap_or(0.0),
            };
            ListedLine { a, b, cost, text }
        })
        .filter(|l| l.cost.a != 0.0 || l.cost.b != 0.0 || l.marker() != ' ')
        .collect();
    // The lines that moved most (and every changed line, up to the limit), in source order.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&x, &y| {
        let key = |l: &ListedLine| (l.cost.diff().abs(), l.marker() != ' ');
        let (kx, ky) = (key(&lines[x]), key(&lines[y]));
        ky.0.total_cmp(&kx.0).then(ky.1.cmp(&kx.1))
    });
    let keep: BTreeSet<usize> = order.into_iter().take(LISTED_LINES).collect();
    let hidden = lines.len() - keep.len();
    let mut i = 0;
    lines.retain(|_| {
        i += 1;
        keep.contains(&(i - 1))
    });
    let function = if name_a == name_b { name_a.to_string() } else { format!("{name_a} → {name_b}") };
    Some(SourceListing { function, file, lines, hidden, diff, diff_hidden })
}

/// Which side of an aligned pair of lines.
type Pick = fn(&(Option<usize>, Option<usize>)) -> Option<usize>;

/// A unified diff of two aligned runs of lines, two lines of context about each change;
/// at most [`DIFF_LINES`] lines, and how many more there were.
fn diff_of(
    aligned: &[(Option<usize>, Option<usize>)],
    a: &[(u32, String)],
    b: &[(u32, String)],
) -> (Vec<String>, usize) {
    let changed: Vec<bool> = aligned.iter().map(|(x, y)| x.is_none() || y.is_none()).collect();
    let near = |i: usize| (i.saturating_sub(2)..=(i + 2).min(aligned.len() - 1)).any(|j| changed[j]);
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    for (i, (x, y)) in aligned.iter().enumerate().filter(|(i, _)| near(*i)) {
        if last.is_none_or(|l| l + 1 != i) {
            // The hunk's first line in each build: the next line of A and of B from here.
            let first = |side: &[(u32, String)], pick: Pick| {
                aligned[i..].iter().find_map(pick).map_or(String::from("-"), |k| side[k].0.to_string())
            };
            out.push(format!("@@ A {}, B {} @@", first(a, |p| p.0), first(b, |p| p.1)));
        }
        last = Some(i);
        out.push(match (x, y) {
            (Some(k), Some(_)) => format!(" {}", a[*k].1),
            (Some(k), None) => format!("-{}", a[*k].1),
            (None, Some(k)) => format!("+{}", b[*k].1),
            (None, None) => unreachable!("an aligned pair holds a line"),
        });
    }
    let hidden = out.len().saturating_sub(DIFF_LINES);
    out.truncate(DIFF_LINES);
    (out, hidden)
}

/// A function's self cost per line of `file` (event `i`), per entry.
fn costs_in(f: &FunctionCost, file: &str, i: usize, per: &dyn Fn(u64) -> f64) -> BTreeMap<u32, f64> {
    f.lines.iter().filter(|((fl, n), c)| fl == file && *n > 0 && c[i] > 0).map(|((_, n), c)| (*n, per(c[i]))).collect()
}

/// The longest common subsequence of two runs of source lines (by text), as aligned pairs
/// of indices: both for a line in both, one for a line only in one.
fn align(a: &[(u32, String)], b: &[(u32, String)]) -> Vec<(Option<usize>, Option<usize>)> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i][j] = if a[i].1 == b[j].1 { t[i + 1][j + 1] + 1 } else { t[i + 1][j].max(t[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i].1 == b[j].1 {
            out.push((Some(i), Some(j)));
            (i, j) = (i + 1, j + 1);
        } else if j == m || (i < n && t[i + 1][j] >= t[i][j + 1]) {
            out.push((Some(i), None));
            i += 1;
        } else {
            out.push((None, Some(j)));
            j += 1;
        }
    }
    out
}

/// A per-entry figure in at most 8 characters.
fn fig(v: f64) -> String {
    let s = format!("{v:.1}");
    if s.len() <= 8 {
        s
    } else {
        format!("{v:.0}")
    }
}

fn signed(v: f64) -> String {
    let s = fig(v);
    match v > 0.0 && !s.starts_with('-') {
        true => format!("+{s}"),
        false if s == "-0.0" => "0.0".into(),
        false => s,
    }
}

/// A function's share of the workload's whole difference.
fn share(f: &FunctionRow, total: f64) -> String {
    if total == 0.0 {
        return "-".into();
    }
    let s = format!("{:.0}%", 100.0 * f.self_cost.diff() / total);
    match s.as_str() {
        "-0%" => "0%".into(),
        _ => s,
    }
}

fn percent(p: &Pair) -> String {
    if p.a == 0.0 {
        return "-".into();
    }
    format!("{:+.1}%", 100.0 * p.diff() / p.a)
}

/// At most `width` characters of `s` (a cut one ends in `~`).
fn cut(s: &str, width: usize) -> String {
    match s.chars().count() <= width {
        true => s.to_string(),
        false => format!("{}~", s.chars().take(width.saturating_sub(1)).collect::<String>()),
    }
}

/// A function's name in at most `width` characters: a Rust path keeps its end
/// (`~worker::timed_read_key`), a C name its start.
fn cut_name(s: &str, width: usize) -> String {
    let n = s.chars().count();
    match n > width && s.contains("::") {
        true => format!("~{}", s.chars().skip(n + 1 - width).collect::<String>()),
        false => cut(s, width),
    }
}

const NAME: usize = 25;
const CACHE_NAME: usize = 22;

impl Explanation {
    /// 80 columns at most, plain text: for a Bugzilla comment.
    /// The explanation as an outline, which text and Markdown lay out: each workload's
    /// totals, its functions, its cache figures and its top functions' listings.
    pub fn document(&self) -> Document {
        let mut d = Document::default();
        d.heading(1, format!("explain: {} (A) and {} (B)", self.a, self.b));
        d.para(format!(
            "Instructions per entry ({} entries; per timed operation where a workload counts its \
             own, such as a key of duplicates or a copy), counted in the timed function only, as `run \
             --metric instructions` counts them. Functions by |self B - self A|; share: each one's part \
             of the workload's whole B - A.",
            self.entries
        ));
        if let Some(c) = &self.caches {
            d.para(format!("Caches simulated: {c}."));
        }
        for w in &self.workloads {
            let diff = w.per_entry.diff();
            let (a, b) = (fig(w.per_entry.a), fig(w.per_entry.b));
            d.heading(2, format!("{}: A {a}, B {b}, B - A {} ({})", w.workload, signed(diff), percent(&w.per_entry)));
            let mut t = Cells::new(&["function", "self A", "self B", "B - A", "share", "incl A", "incl B"], 0, 1);
            for f in w.functions.iter().take(self.top) {
                let (s, i) = (&f.self_cost, &f.inclusive);
                let row =
                    [cut_name(&f.name, NAME), fig(s.a), fig(s.b), signed(s.diff()), share(f, diff), fig(i.a), fig(i.b)];
                t.push(row.to_vec(), false);
            }
            d.table(t);
            d.blocks.extend(renamed_sentence(&w.functions).map(super::outline::Block::Paragraph));
            if let Some(rest) = self.rest(w) {
                d.para(rest);
            }
            self.cache_blocks(w, &mut d);
            for l in &w.listings {
                d.code(listing_text(l, &w.workload));
            }
        }
        d
    }

    /// The functions past the shown rows, and their difference together.
    fn rest(&self, w: &WorkloadExplanation) -> Option<String> {
        let rest = &w.functions[self.top.min(w.functions.len())..];
        let moved = rest.iter().filter(|f| f.self_cost.diff() != 0.0).count();
        (!rest.is_empty()).then(|| {
            let d: f64 = rest.iter().map(|f| f.self_cost.diff()).sum();
            format!("{} more functions ({moved} with a difference): B - A {} together", rest.len(), signed(d))
        })
    }

    /// The functions by |estimated cycles B − A|, at most `top` (with `--cache`).
    fn by_cycles<'w>(&self, w: &'w WorkloadExplanation) -> Vec<&'w FunctionRow> {
        let key = Metric::EstimatedCycles.key();
        let d = |f: &FunctionRow| f.cache.get(key).map_or(0.0, |p| p.diff().abs());
        let mut rows: Vec<&FunctionRow> = w.functions.iter().filter(|f| f.cache.contains_key(key)).collect();
        rows.sort_by(|x, y| d(y).total_cmp(&d(x)).then_with(|| x.name.cmp(&y.name)));
        rows.truncate(self.top);
        rows
    }

    /// The workload's cache figures in a sentence, each cache metric A and B per entry.
    fn cache_sentence(w: &WorkloadExplanation) -> Option<String> {
        let figures: Vec<String> = Metric::cache_simulated()
            .map(|m| {
                w.cache.get(m.key()).map(|p| format!("{} A {}, B {} ({})", m.name(), num(p.a), num(p.b), percent(p)))
            })
            .collect::<Option<_>>()?;
        Some(format!("Simulated caches, per entry: {}.", figures.join("; ")))
    }

    /// A function's cache cells: each cache metric's A and B per entry.
    fn cache_cells(f: &FunctionRow) -> Vec<String> {
        let get = |m: Metric| f.cache.get(m.key()).copied().unwrap_or(Pair { a: 0.0, b: 0.0 });
        Metric::cache_simulated().flat_map(|m| [num(get(m).a), num(get(m).b)]).collect()
    }

    fn cache_blocks(&self, w: &WorkloadExplanation, d: &mut Document) {
        let Some(sentence) = Self::cache_sentence(w) else { return };
        d.para(sentence);
        let mut header = vec!["function (by cycles)".to_string()];
        header.extend(Metric::cache_simulated().flat_map(|m| ["A", "B"].map(|s| format!("{} {s}", m.info().short))));
        let mut t = Cells::new(&header.iter().map(String::as_str).collect::<Vec<_>>(), 0, 1);
        for f in self.by_cycles(w) {
            let mut row = vec![cut_name(&f.name, CACHE_NAME)];
            row.extend(Self::cache_cells(f));
            t.push(row, false);
        }
        d.table(t);
    }
}

impl super::document::Shown for Explanation {
    const KIND: &'static str = "lmdb-regress-explain";
    const SCHEMA: u32 = 1;

    fn outline(&self) -> Document {
        self.document()
    }

    /// The outline's items, each workload's differential flame graph after its table of
    /// functions.
    fn html_items<'d>(&self, d: &'d Document) -> anyhow::Result<Vec<super::html::Item<'d>>> {
        use super::html::Item;
        use super::outline::Block;
        let mut items = Vec::new();
        let mut workloads = self.workloads.iter();
        let mut pending = None;
        for item in super::html::items(d, None)? {
            let table = matches!(item, Item::Block(Block::Table(_)));
            if matches!(item, Item::Block(Block::Heading(2, _))) {
                pending = workloads.next().and_then(|w| w.flame.as_ref().map(|f| (w, f)));
            }
            items.push(item);
            if let (true, Some((w, (fa, fb)))) = (table, pending.take()) {
                items.push(Item::Markup(format!(
                    "<p>Differential flame graph: each frame as wide as its cost in B, red where its own \
                     (self) cost grew from A to B, blue where it shrank. Stacks are approximated from \
                     callgrind's caller → callee edges: a function with several callers splits its cost \
                     between them as their calls cost.</p>\n{}",
                    flame::svg(&w.workload, fa, fb, self.entries.max(1) as f64)
                )));
            }
        }
        Ok(items)
    }
}

/// A listing in 80 columns: A's and B's line numbers, each line's cost per entry in both,
/// a diff's marker, and the line (tabs as two spaces, cut at the margin).
fn listing_text(l: &SourceListing, workload: &str) -> Vec<String> {
    let mut out = vec![
        cut(&format!("{} ({}), {workload}: instructions per entry by line", l.function, l.file), 80),
        format!("{:>5} {:>5} {:>8} {:>8}   source", "A", "B", "A", "B"),
    ];
    let num = |n: Option<u32>| n.map_or("-".to_string(), |n| n.to_string());
    for line in &l.lines {
        let text = line.text.replace('\t', "  ");
        out.push(format!(
            "{:>5} {:>5} {:>8} {:>8} {} {}",
            num(line.a),
            num(line.b),
            fig(line.cost.a),
            fig(line.cost.b),
            line.marker(),
            cut(text.trim_end(), 80 - 32)
        ));
    }
    if l.hidden > 0 {
        out.push(format!("({} more lines with a cost, with smaller differences)", l.hidden));
    }
    if !l.diff.is_empty() {
        out.push(String::new());
        out.push(cut(&format!("{} ({}): its lines, A's source to B's", l.function, l.file), 80));
        out.extend(l.diff.iter().map(|d| cut(&d.replace('\t', "  "), 80)));
        if l.diff_hidden > 0 {
            out.push(format!("({} more lines of the diff)", l.diff_hidden));
        }
    }
    out.into_iter().map(|s| s.trim_end().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(a: &[&str]) -> Vec<(u32, String)> {
        a.iter().enumerate().map(|(i, t)| (i as u32 + 1, t.to_string())).collect()
    }

    #[test]
    fn source_lines_align_as_a_diff() {
        let a = side(&["x", "y", "z"]);
        let b = side(&["x", "new", "y", "z2"]);
        let got = align(&a, &b);
        assert_eq!(got, [(Some(0), Some(0)), (None, Some(1)), (Some(1), Some(2)), (Some(2), None), (None, Some(3))]);
    }

    #[test]
    fn a_function_diff_has_context_and_hunk_heads() {
        let a = side(&["a", "b", "c", "d", "e", "f", "g", "h"]);
        let mut b = side(&["a", "b", "c", "d", "e", "f", "g", "h2"]);
        b.insert(1, (0, "new".into()));
        for (i, l) in b.iter_mut().enumerate() {
            l.0 = i as u32 + 1;
        }
        let (diff, hidden) = diff_of(&align(&a, &b), &a, &b);
        assert_eq!(hidden, 0);
        assert_eq!(diff, ["@@ A 1, B 1 @@", " a", "+new", " b", " c", "@@ A 6, B 7 @@", " f", " g", "-h", "+h2"]);
    }

    #[test]
    fn figures_fit_their_columns() {
        assert_eq!(fig(1234.56), "1234.6");
        assert_eq!(fig(12345678.9), "12345679");
        assert_eq!(signed(3.0), "+3.0");
        assert_eq!(signed(-0.01), "0.0");
        assert_eq!(cut("abcdef", 4), "abc~");
        assert_eq!(cut_name("lmdb_regress::runner::worker::timed", 12), "~rker::timed");
        assert_eq!(cut_name("mdb_cursor_set", 12), "mdb_cursor_~");
    }
}
