//! Cell contents, computed once for every human format: numbers, deltas with their
//! intervals and verdicts, and the tables of a report as plain cells.

use super::model::{Delta, ReportModel, Section, ToolchainTable};
use super::names::name;
use crate::record::label::Label;
use crate::record::{counts_taken, Closing, Engine, Failure, FailureStage, Layouts, Metric, Pairing, Phase, Target};
use crate::stats::{Comparison, Method, Summary, Verdict};
use crate::workload::Workload;

/// A table as header and rows of plain cells, plus which rows to highlight.
#[derive(Debug, Clone, PartialEq)]
pub struct Cells {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub highlight: Vec<bool>,
    /// The column holding the tag (highlighted for the newest tag, repeated when a
    /// text table is split to fit 80 columns).
    pub tag_col: usize,
    /// The columns that name a row (the tag's, and any before it that a row needs to be
    /// told apart, such as the workload), repeated in every part of a split text table.
    pub keys: Vec<usize>,
    /// Columns before this one are text (left-aligned); the rest are figures.
    pub text_cols: usize,
    /// The column holding each row's verdict, and the verdict itself, for formats that
    /// colour it (HTML); text and Markdown show the words alone.
    pub verdict_col: Option<usize>,
    pub judged: Vec<Option<Judged>>,
}

/// How a row's delta was judged, straight from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    pub verdict: Verdict,
    pub time_only: bool,
}

impl Judged {
    pub fn of(d: &Delta) -> Judged {
        Judged { verdict: d.verdict(), time_only: d.time_only }
    }
}

impl Cells {
    pub fn new(header: &[&str], tag_col: usize, text_cols: usize) -> Cells {
        Cells {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            highlight: Vec::new(),
            tag_col,
            keys: vec![tag_col],
            text_cols,
            verdict_col: None,
            judged: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>, highlight: bool) {
        self.push_judged(row, highlight, None);
    }

    pub fn push_judged(&mut self, row: Vec<String>, highlight: bool, judged: Option<Judged>) {
        debug_assert_eq!(row.len(), self.header.len());
        self.rows.push(row);
        self.highlight.push(highlight);
        self.judged.push(judged);
    }
}

/// The decimals a figure is shown with: three, one from 1000 up, four significant digits
/// below 0.1 (a preset's seconds per operation).
fn decimals(v: f64) -> usize {
    if v.abs() >= 1000.0 {
        1
    } else if v != 0.0 && v.abs() < 0.1 {
        (3 - v.abs().log10().floor() as i32).clamp(3, 12) as usize
    } else {
        3
    }
}

/// A figure, with [`decimals`].
pub fn num(v: f64) -> String {
    format!("{v:.*}", decimals(v))
}

/// "±0.123": the half-width of the median's 95% interval, with as many decimals as the
/// median beside it; "n/a" below the rounds it needs (the section's notes say how many).
pub fn plus_minus(s: &Summary) -> String {
    match s.median_ci {
        Some(ci) => format!("±{:.*}", decimals(s.median), ci.half_width()),
        None => "n/a".into(),
    }
}

/// "+3.4%", "-0.7%", and "0.0%" for what rounds to nothing (never "-0.0%").
pub fn percent(p: f64) -> String {
    if (p * 10.0).round() == 0.0 {
        return "0.0%".into();
    }
    format!("{p:+.1}%")
}

/// "±2.0%": a symmetric bound in percent.
pub fn within(p: f64) -> String {
    format!("±{p:.1}%")
}

/// What a partial run lacks, as the note atop its report says it; None when complete.
pub fn partial_note(m: &ReportModel) -> Option<String> {
    let resume = "`lmdb-regress run --resume` on its run file";
    Some(match m.left? {
        Phase::Rounds { .. } => "Partial run: interrupted; figures cover the rounds completed.".into(),
        Phase::Check(_) => {
            format!("Partial run: every round was measured, but {} was not made ({resume} makes it).", m.left?)
        }
        Phase::Counting => {
            let (taken, of) = counts_taken(&m.samples);
            format!(
                "Partial counts: the instruction-counting pass was interrupted after {taken} of {of} counts (tag \
                 and workload); instruction deltas stand only beside tags that were both counted ({resume} \
                 counts the rest)."
            )
        }
    })
}

/// "20 rounds planned", or what ends a plan with no cap on its rounds.
fn planned_rounds(cap: Option<u32>) -> String {
    match cap {
        Some(n) => format!("{} planned", plural(n as usize, "round")),
        None => "rounds until the time budget is spent or every comparison decided".into(),
    }
}

pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A duration in seconds as people read it: "0.4 s", "38 s", "4 min 05 s".
pub fn seconds(s: f64) -> String {
    if s < 9.95 {
        format!("{s:.1} s")
    } else if s < 599.5 {
        format!("{s:.0} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

pub fn ratio_percent(r: f64) -> String {
    percent(100.0 * (r - 1.0))
}

pub fn delta(c: &Comparison) -> String {
    percent(c.delta_percent())
}

/// "[-1.2%, +3.4%]"; for counts "exact" when every repetition agreed.
pub fn interval(c: &Comparison) -> String {
    match c.ci {
        Some(ci) if c.method == Method::Counts && (ci.hi - ci.lo).abs() < 1e-12 => "exact".into(),
        Some(ci) => format!("[{}, {}]", ratio_percent(ci.lo), ratio_percent(ci.hi)),
        None => "n/a".into(),
    }
}

/// The verdict as a reader sees it: "slower, time only" when instructions did not move.
pub fn verdict(d: &Delta) -> String {
    if d.time_only {
        format!("{}, time only", d.verdict())
    } else {
        d.verdict().to_string()
    }
}

/// A count's delta beside a delta in the section's metric; "-" when none was counted.
pub fn count_delta(d: &Delta, metric: Metric) -> String {
    d.counts.get(&metric).map(delta).unwrap_or_else(|| "-".into())
}

/// A label's count per entry under a metric beside the section's; "-" when not counted.
fn per_entry(per_entry: &std::collections::BTreeMap<Metric, f64>, metric: Metric) -> String {
    let figure = |v: f64| if metric.is_space() { format!("{v:.0}") } else { count(v) };
    per_entry.get(&metric).map(|i| figure(*i)).unwrap_or_else(|| "-".into())
}

/// A count per entry to the digits that say something: misses run well below one per entry.
fn count(v: f64) -> String {
    match v.abs() {
        a if a >= 10.0 || a == 0.0 => format!("{v:.1}"),
        a if a >= 0.01 => format!("{v:.3}"),
        _ => format!("{v:.1e}"),
    }
}

/// "+3.4% [+1.0%, +5.9%] slower": a delta in one line, for sentences.
pub fn delta_line(c: &Comparison) -> String {
    format!("{} {} {}", delta(c), interval(c), c.verdict)
}

pub fn short_tag(t: &str) -> &str {
    t.strip_prefix("LMDB_").unwrap_or(t)
}

/// A label as tables show it: tags in full, full commit ids cut to 12 digits (as git
/// does; a shorter id stays as given, so that two ids of one commit read apart), control
/// characters shown (`\n`), never written.
pub fn label(l: &Label) -> String {
    let commit = l.base.len() == 40 && l.base.chars().all(|c| c.is_ascii_hexdigit());
    if commit && l.layout.is_none() {
        super::names::visible(&Label { base: l.base[..12].to_string(), ..l.clone() }.to_string())
    } else {
        super::names::visible(&l.to_string())
    }
}

/// A label as prose names it: [`label`], marked as a name for each format to render.
pub fn named(l: &Label) -> String {
    name(&label(l))
}

/// The baseline as tables show it: a tag or commit, built by the default toolchain.
pub fn baseline_label(m: &ReportModel) -> String {
    label(&Label::build(&m.baseline, None))
}

/// The baseline as prose names it.
pub fn baseline_named(m: &ReportModel) -> String {
    name(&baseline_label(m))
}

/// Where the verdict sits among the delta columns.
const VERDICT_OFFSET: usize = 2;

/// The delta columns: change, interval, verdict, and each count beside them.
fn delta_header(beside: &[Metric], against: &str) -> Vec<String> {
    let mut h = vec![against.to_string(), "interval".into(), "verdict".into()];
    h.extend(beside.iter().map(|m| m.info().short.to_string()));
    h
}

fn delta_cells(beside: &[Metric], d: Option<&Delta>, own: &str) -> Vec<String> {
    let mut v = match d {
        None => vec![own.to_string(), String::new(), String::new()],
        Some(d) => vec![delta(&d.comparison), interval(&d.comparison), verdict(d)],
    };
    v.extend(beside.iter().map(|m| d.map(|d| count_delta(d, *m)).unwrap_or_default()));
    v
}

/// Each tag alone (median, ±, min, each exact metric per entry) beside its change against
/// the fastest. An exact metric shows its value only: its change is the baseline table's
/// (against the reference a count is judged by), and the verdict says "time only" here.
pub fn ranked_cells(m: &ReportModel, s: &Section) -> Cells {
    let beside = &m.beside;
    let mut header = vec!["Rank".to_string(), "LMDB Tag".into(), m.unit_of(s).into(), "±".into(), "min".into()];
    let verdict_col = header.len() + VERDICT_OFFSET;
    header.extend(delta_header(&[], "vs Fastest"));
    header.push("n".into());
    header.extend(beside.iter().map(|c| c.unit_of(s.workload).to_string()));
    let mut c = Cells::new(&header.iter().map(String::as_str).collect::<Vec<_>>(), 1, 2);
    c.verdict_col = Some(verdict_col);
    for r in &s.ranked {
        let mut row = vec![r.rank.to_string(), label(&r.tag), num(r.summary.median), plus_minus(&r.summary)];
        row.push(num(r.summary.min));
        row.extend(delta_cells(&[], r.vs_fastest.as_ref(), "fastest"));
        row.push(r.summary.n.to_string());
        row.extend(beside.iter().map(|c| per_entry(&r.per_entry, *c)));
        c.push_judged(row, m.newest.as_ref() == Some(&r.tag), r.vs_fastest.as_ref().map(Judged::of));
    }
    push_died(&mut c, m, s, (2, verdict_col), Some("–"));
    c
}

/// A row for each unit whose worker died in every round of the section's workload: it has
/// no figure, and the findings say how it died. `cols`: the metric's column and the
/// verdict's; `rank`: the rank column's text, in a table that has one.
fn push_died(
    c: &mut Cells,
    m: &ReportModel,
    s: &Section,
    (value_col, verdict_col): (usize, usize),
    rank: Option<&str>,
) {
    let dead = m.died.iter().filter(|d| d.engine == s.engine && d.workload == s.workload && d.always());
    for d in dead {
        let mut row = vec![String::new(); c.header.len()];
        let tag_col = usize::from(rank.is_some());
        if let Some(r) = rank {
            row[0] = r.to_string();
        }
        row[tag_col] = label(&d.unit);
        row[value_col] = "died".into();
        row[verdict_col] = "died".into();
        if let Some(n) = c.header.iter().position(|h| h == "n") {
            row[n] = "0".into();
        }
        c.push(row, m.newest.as_ref() == Some(&d.unit));
    }
}

pub fn baseline_cells(m: &ReportModel, s: &Section) -> Cells {
    let vs = format!("vs {}", short_tag(&baseline_label(m)));
    let mut header = vec!["Tag".to_string(), m.unit_of(s).into(), "±".into()];
    let verdict_col = header.len() + VERDICT_OFFSET;
    header.extend(delta_header(&m.beside, &vs));
    header.push("n".into());
    let mut c = Cells::new(&header.iter().map(String::as_str).collect::<Vec<_>>(), 0, 1);
    c.verdict_col = Some(verdict_col);
    for r in &s.vs_baseline {
        let mut row = vec![label(&r.tag), num(r.summary.median), plus_minus(&r.summary)];
        row.extend(delta_cells(&m.beside, r.vs_baseline.as_ref(), "baseline"));
        row.push(r.summary.n.to_string());
        c.push_judged(row, m.newest.as_ref() == Some(&r.tag), r.vs_baseline.as_ref().map(Judged::of));
    }
    if !s.vs_baseline.is_empty() {
        push_died(&mut c, m, s, (1, verdict_col), None);
    }
    c
}

/// One tag's builds by several toolchains, workload by workload, against the reference.
pub fn toolchain_cells(m: &ReportModel, t: &ToolchainTable) -> Cells {
    let beside = &m.beside;
    let several_engines = m.engines().len() > 1;
    // Workload and toolchain in one column: the one a split text table repeats.
    let mut header = vec!["Workload, toolchain".to_string(), m.unit.label.into(), "±".into()];
    header.extend(delta_header(beside, &format!("vs {}", t.reference)));
    header.push("n".into());
    header.extend(beside.iter().map(|c| c.unit().to_string()));
    let mut c = Cells::new(&header.iter().map(String::as_str).collect::<Vec<_>>(), 0, 1);
    for r in &t.rows {
        let engine = if several_engines { format!(" ({} engine)", r.engine) } else { String::new() };
        let build = format!("{}{engine}, {}", r.workload, r.toolchain);
        let mut row = vec![build, num(r.summary.median), plus_minus(&r.summary)];
        row.extend(delta_cells(beside, r.vs_reference.as_ref(), "reference"));
        row.push(r.summary.n.to_string());
        row.extend(beside.iter().map(|c| per_entry(&r.per_entry, *c)));
        c.push(row, false);
    }
    c
}

/// Every build: its sources, match, compiler and flags. With several toolchains the tag
/// and the toolchain stand in columns of their own, so that the tag and its sources still
/// fit 80 columns of text.
pub fn provenance_cells(m: &ReportModel) -> Cells {
    let toolchains = m.tags.iter().any(|t| t.label.compared_as().1.is_some());
    let mut header = vec!["Tag", "status", "sources", "match", "compiler", "flags"];
    if toolchains {
        header.insert(1, "toolchain");
    }
    let mut c = Cells::new(&header, 0, header.len());
    for t in &m.tags {
        let b = t.builds.first();
        let mut row = vec![
            super::names::visible(&t.label.to_string()),
            serde_json::to_value(t.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            // Why a tag is missing is told under Problems, in full.
            t.provenance.clone().unwrap_or_else(|| "-".into()),
            t.matches.map(|x| x.to_string()).unwrap_or_default(),
            b.map(|b| b.toolchain.version.clone()).unwrap_or_default(),
            b.map(|b| b.toolchain.cflags.join(" ")).unwrap_or_default(),
        ];
        if toolchains {
            row[0] = super::names::visible(&t.label.compared_as().0);
            row.insert(1, super::model::toolchain_name(&t.label, &m.tags));
        }
        c.push(row, false);
    }
    c
}

/// A layout study's result: each section's layout spread beside its per-sample noise, and
/// how many layouts its ranked table resolves slower than the fastest.
pub fn layout_study_cells(m: &ReportModel) -> Cells {
    let header = ["Workload", "layouts", "layout spread", "per-sample noise", "slower than the fastest"];
    let mut c = Cells::new(&header, 0, 1);
    let pct = |x: Option<f64>| x.map(|x| within(100.0 * x)).unwrap_or_else(|| "n/a".into());
    for s in &m.sections {
        let slower = s.ranked.iter().filter(|r| r.vs_fastest.as_ref().is_some_and(|d| d.verdict().is_change()));
        let row = vec![
            m.section_title(s),
            s.ranked.len().to_string(),
            pct(s.layout_spread),
            pct(s.noise.map(|n| n.spread)),
            slower.count().to_string(),
        ];
        c.push(row, false);
    }
    c
}

/// Rust / C per workload and tag; empty unless both engines ran.
pub fn overhead_cells(m: &ReportModel) -> Cells {
    let mut c = Cells::new(&["Workload", "LMDB Tag", "Rust", "C", "Rust / C", "interval", "verdict"], 1, 2);
    c.verdict_col = Some(6);
    // A row is a workload's tag: a part that showed the tag alone would not say which.
    c.keys = vec![0, 1];
    for r in &m.overhead {
        let row = vec![
            r.workload.to_string(),
            label(&r.tag),
            format!("{} {}", num(r.rust.median), plus_minus(&r.rust)),
            format!("{} {}", num(r.c.median), plus_minus(&r.c)),
            format!("{:.3}", r.ratio.ratio),
            r.ratio.ci.map(|i| format!("[{:.3}, {:.3}]", i.lo, i.hi)).unwrap_or_else(|| "n/a".into()),
            r.ratio.verdict.to_string(),
        ];
        c.push_judged(row, false, Some(Judged { verdict: r.ratio.verdict, time_only: false }));
    }
    c
}

/// Whether every sample ran a code layout of its own (random layouts, not a study).
pub(super) fn per_sample_layouts(m: &ReportModel) -> bool {
    m.plan.layouts == Layouts::Random && m.plan.layout_study.is_none()
}

/// How many function orders of the tool's own binary (src/harness.rs) the run's samples
/// ran; 0 when every one ran the binary as built.
pub(super) fn harness_orders(m: &ReportModel) -> usize {
    m.samples.iter().filter_map(|s| s.harness).collect::<std::collections::BTreeSet<_>>().len()
}

/// The most layouts of one unit a paired process held, and on which workloads it held
/// more than one (`--reference-layouts`): (1, none) when every unit ran one.
pub(super) fn reference_layouts(m: &ReportModel) -> (usize, Vec<crate::workload::Workload>) {
    let mut held: std::collections::BTreeMap<_, std::collections::BTreeSet<u32>> = Default::default();
    for s in m.samples.iter().filter(|s| !s.counted && !s.chunks_ns.is_empty()) {
        held.entry((s.engine, s.workload, &s.unit, s.round)).or_default().extend(s.layout);
    }
    let most = held.values().map(|l| l.len()).max().unwrap_or(1).max(1);
    let mut on: Vec<_> = held.iter().filter(|(_, l)| l.len() > 1).map(|((_, w, ..), _)| *w).collect();
    on.sort();
    on.dedup();
    (most, on)
}

/// "Bursts: 2 of 340 round values …": how many, the statistic, and where (the largest three).
fn bursts_line(b: &crate::stats::burst::Bursts<Label>) -> String {
    use crate::stats::burst::{MIN_EXCESS, ROBUST_SDS};
    let rule = format!(
        "more than {ROBUST_SDS} robust SDs and {:.0}% slower than their tag and round predict (kept, not removed)",
        100.0 * MIN_EXCESS
    );
    if b.found.is_empty() {
        return format!("Bursts: none of {} round values {rule}.", b.values);
    }
    let mut at: Vec<String> = b
        .found
        .iter()
        .take(3)
        .map(|x| format!("{} round {} {}", named(&x.label), x.round + 1, percent(100.0 * x.excess)))
        .collect();
    if b.found.len() > 3 {
        at.push(format!("{} more", b.found.len() - 3));
    }
    format!("Bursts: {} of {} round values {rule}: {}.", b.found.len(), b.values, at.join(", "))
}

/// "Decided at an early look …: 0.9.18 at round 9 (99.38%), …": the comparisons a run
/// ended before its last round, each interval's level beside it.
fn stopped_early_line(m: &ReportModel, s: &Section) -> Option<String> {
    if s.stopped_early.is_empty() {
        return None;
    }
    let level = |c: f64| format!("{:.2}%", 100.0 * c);
    if !m.plan.spends_at_looks() {
        let at: Vec<String> =
            s.stopped_early.iter().map(|x| format!("{} after round {}", named(&x.tag), x.round)).collect();
        return Some(format!(
            "Stopped early, decided at the nominal level {} after any round (adaptive rounds of a run file before \
             schema 10: these intervals do not keep their level; the others were measured to the run's last round): {}.",
            level(s.stopped_early[0].confidence),
            at.join(", ")
        ));
    }
    let at: Vec<String> = s
        .stopped_early
        .iter()
        .map(|x| format!("{} at round {} ({})", named(&x.tag), x.round, level(x.confidence)))
        .collect();
    let early = |d: &&Delta| s.stopped_early.iter().any(|x| x.tag == d.tag);
    let last = s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).find(|d| !early(d));
    let others =
        last.map_or(String::new(), |d| format!("; the others at {}, the last look's", level(d.comparison.confidence)));
    let error = 100.0 * crate::stats::ALPHA;
    Some(format!(
        "{} at an early look (each interval at its look's level, the looks spending the run's {error:.0}% error{others}): {}.",
        closed_by(m.plan.target()),
        at.join(", ")
    ))
}

/// What closed a comparison early, in words: "Decided", and the target as the plan joins it.
fn closed_by(target: Option<Target>) -> String {
    match target {
        None => "Decided".into(),
        Some(t) if t.closing == Closing::DecidedOrWithin => format!("Decided or within ±{}%", t.percent),
        Some(t) => format!("Decided and within ±{}%", t.percent),
    }
}

/// Per section: the noise the run saw, the resolution it reached, the verdict counts,
/// and the control.
pub fn section_notes(m: &ReportModel, s: &Section) -> Vec<String> {
    let mut v = Vec::new();
    // Chunk-paired sections: the two levels the intervals are built on.
    if let (Some(p), Some(c)) = (s.spreads.between_processes, s.spreads.between_chunks) {
        // Process pairing with a spread inside the pass: commits paired by their place.
        let inside = match s.pairing {
            Pairing::Chunks => "chunks",
            Pairing::Process => "the commits of a pass",
        };
        v.push(format!(
            "Spread of the ratios to one tag (robust SD of log ratios): between processes {}, between {inside} {}.",
            within(100.0 * p),
            within(100.0 * c)
        ));
    }
    if let Some(n) = &s.noise {
        v.push(format!(
            "Noise: per-sample spread {} (robust CV), round-to-round drift {}.",
            within(100.0 * n.spread),
            within(100.0 * n.drift)
        ));
    }
    if let Some(b) = &s.bursts {
        v.push(bursts_line(b));
    }
    if let Some(r) = s.resolution {
        let layouts = match per_sample_layouts(m) {
            true => "; layout noise included: each sample ran its own code layout",
            false => "",
        };
        v.push(format!(
            "Resolution: {} (median half-width of the intervals{layouts}); smaller differences are not resolved by this run.",
            within(100.0 * r)
        ));
    }
    if let Some(line) = rounds_line(m, s) {
        v.push(line);
    }
    if let Some(line) = stopped_early_line(m, s) {
        v.push(line);
    }
    if let Some(line) = layout_spread_line(m, s) {
        v.push(line);
    }
    let counts = |ds: Vec<&Delta>| -> String {
        let n = |w: crate::stats::Verdict| ds.iter().filter(|d| d.verdict() == w).count();
        use crate::stats::Verdict::*;
        format!("{} slower, {} faster, {} same, {} inconclusive", n(Slower), n(Faster), n(Same), n(Inconclusive))
    };
    if !s.vs_baseline.is_empty() {
        let ds: Vec<&Delta> = s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).collect();
        v.push(format!("Against {}: {}.", baseline_named(m), counts(ds)));
    }
    for c in &s.controls {
        let warn = if c.verdict().is_change() {
            " WARNING: the control differs from itself; treat every verdict of this section with suspicion."
        } else {
            ""
        };
        v.push(format!(
            "Control (A/A): {} against {}: {}.{warn}",
            named(&c.tag),
            named(&c.against),
            delta_line(&c.comparison)
        ));
    }
    v
}

/// When the section has fewer rounds than some interval needs: which intervals are n/a,
/// how many rounds each needs, and the option that gives them.
fn rounds_line(m: &ReportModel, s: &Section) -> Option<String> {
    let need = s.rounds_needed;
    if m.rule.counts || s.rounds >= need.all() {
        return None;
    }
    let baseline = format!("vs {}", short_tag(&baseline_label(m)));
    let wanted = [("±", need.median), ("vs Fastest", need.ranked), (baseline.as_str(), need.baseline)];
    // Intervals that need the same number of rounds are named together.
    let mut by_need: Vec<(usize, Vec<&str>)> = Vec::new();
    for (what, n) in wanted.into_iter().filter(|(_, n)| *n > s.rounds) {
        match by_need.iter_mut().find(|(k, _)| *k == n) {
            Some((_, whats)) => whats.push(what),
            None => by_need.push((n, vec![what])),
        }
    }
    by_need.sort();
    let needs: Vec<String> = by_need.iter().map(|(n, whats)| format!("{n} ({})", whats.join(", "))).collect();
    Some(format!(
        "Too few rounds for every interval: {} here, and at their tables' levels the intervals \
         need {} rounds; until then they read n/a and verdicts stay inconclusive. Run with \
         --rounds {} or more.",
        plural(s.rounds, "round"),
        needs.join("; "),
        need.all()
    ))
}

/// The section's layout spread, when measured; under random layouts also when not.
fn layout_spread_line(m: &ReportModel, s: &Section) -> Option<String> {
    // Where a process held several layouts of a unit (the run's files say which workloads).
    let in_process = m.plan.layouts_per_process > 1 && reference_layouts(m).1.contains(&s.workload);
    let how = match &m.plan.layout_study {
        Some(study) => format!("across the {} layouts, beyond the per-sample noise", study.layouts.len()),
        None if in_process => "between the layouts of a unit in one process, beyond their chunks' noise".into(),
        None => "between workers, each its own layout, beyond their repetitions (process-to-process effects included)"
            .into(),
    };
    let not_measured = match in_process {
        true => "each layout timed fewer than four chunks a process; a smaller --chunk measures it",
        false => "one timed repetition per worker; --iterations 2 or more, or `lmdb-regress layouts`, measures it",
    };
    match s.layout_spread {
        Some(x) => Some(format!("Layout spread: {} ({how}).", within(100.0 * x))),
        None if per_sample_layouts(m) && !m.unit.metric.is_exact() => {
            Some(format!("Layout spread: not measured ({not_measured})."))
        }
        None => None,
    }
}

/// "lmdb-regress 0.1.0", with its build where the run recorded it: "…, build 1a2b3c4d5e6f".
fn harness_line(e: &crate::environment::Environment) -> String {
    match e.tool_build() {
        Some(build) => format!("lmdb-regress {}, build {build}", e.harness_version),
        None => format!("lmdb-regress {}", e.harness_version),
    }
}

/// The environment block every human format carries.
pub fn environment_lines(m: &ReportModel) -> Vec<(String, String)> {
    let e = &m.environment;
    let mut v = vec![
        ("CPU".into(), format!("{} ({} cores)", e.cpu(), e.cores)),
        ("Frequency governor".into(), e.governor.clone().unwrap_or_else(|| "not readable".into())),
        ("Kernel".into(), e.kernel.clone()),
        ("OS".into(), e.os.clone()),
        ("Harness".into(), harness_line(e)),
        ("Date".into(), e.date.clone()),
        ("Command".into(), name(&e.command_line.join(" "))),
        ("Workload".into(), workload_line(m)),
        (
            "Plan".into(),
            format!(
                "{} warm-up + {}, {}{} per worker (their median is the round's value); ended: {}",
                m.plan.warmup,
                planned_rounds(m.plan.rounds),
                plural(m.plan.iterations as usize, "timed repetition"),
                m.plan.passes.iter().map(|(w, n)| format!(" ({} {n} passes each)", w.name())).collect::<String>(),
                m.end
                    .as_ref()
                    .map(|e| format!("{} after {}", e.reason, plural(e.rounds as usize, "round")))
                    .unwrap_or_else(|| "cut off (partial run)".into())
            ),
        ),
    ];
    if let Some(ic) = &m.instruction_counter {
        v.push(("Instructions counted by".into(), ic.clone()));
    }
    if let Some(w) = &m.c_paired_worker {
        v.push(("C paired worker".into(), w.to_string()));
    }
    for c in &m.checks {
        let outcome = if c.passed { "passed" } else { "FAILED" };
        v.push(("Check".into(), format!("{}: {outcome} ({})", c.what, c.detail)));
    }
    if let Some((fraction, wall)) = m.end.as_ref().and_then(|e| Some((e.timed_fraction()?, e.wall_s?))) {
        v.push((
            "Timed fraction".into(),
            format!(
                "{:.0}% of {} inside timed regions (wall time of read databases, verification, warm-up and rounds; builds and counting not included)",
                fraction * 100.0,
                seconds(wall)
            ),
        ));
    }
    match (places_text(&m.places), &e.storage) {
        (Some(places), _) => v.push(("Data folders".into(), places)),
        (None, Some(storage)) => v.push(("Data folder".into(), storage.clone())),
        (None, None) => {}
    }
    v
}

/// Which units kept their data files where: "every unit: in memory (tmpfs on tmpfs)", or
/// each place's units by label; None for runs that did not record it.
fn places_text(places: &[crate::record::Place]) -> Option<String> {
    let all: usize = places.iter().map(|p| p.units.len()).sum();
    let each = places.iter().map(|p| {
        let units = match p.units.len() == all {
            true => "every unit".to_string(),
            false => p.units.iter().map(|u| u.to_string()).collect::<Vec<_>>().join(", "),
        };
        format!("{units}: {}", p.holder())
    });
    (!places.is_empty()).then(|| each.collect::<Vec<_>>().join("; "))
}

/// Under a `--sync` or `--readahead` axis each unit opens its environments as its label
/// says, not as the configuration's one setting: said after the configuration.
fn env_axes(m: &ReportModel) -> String {
    let modes: std::collections::BTreeSet<_> = m.samples.iter().filter_map(|s| s.unit.sync).collect();
    let readahead: std::collections::BTreeSet<_> = m.samples.iter().filter_map(|s| s.unit.readahead).collect();
    let said = |what: &str, names: Vec<&str>| match names.is_empty() {
        true => String::new(),
        false => format!("; {what} as each unit's label says ({}), not as above", names.join(", ")),
    };
    said("commits synced", modes.iter().map(|m| m.name()).collect())
        + &said("readahead (off: mdb_nordahead)", readahead.iter().map(|r| r.name()).collect())
}

/// The run's data and environment in one line: a preset's, or LmdbJava's workloads'.
fn workload_line(m: &ReportModel) -> String {
    let cfg = &m.config;
    if let Some(p) = &m.extras.preset {
        return format!("preset {}: {}; {}; seed {}{}", p.preset, p.dataset, p.settings, cfg.seed, env_axes(m));
    }
    if !m.plan.programs.is_empty() {
        let one = |p: &crate::record::ProgramRecord| {
            let file = p.source.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            let args = match p.args.is_empty() {
                true => "no arguments".to_string(),
                false => format!("arguments {}", p.args.join(" ")),
            };
            let figure = match &p.figure {
                None => String::new(),
                Some(f) => format!(", its samples the figure /{}/ printed, in {}", f.pattern, f.unit.name()),
            };
            format!("{} ({file}, SHA-256 {}, {args}, limit {} s{figure})", p.name, p.sha256, p.timeout_s)
        };
        let programs: Vec<String> = m.plan.programs.iter().map(one).collect();
        return format!(
            "programs {}; each sample runs one whole in a fresh empty folder, timed from its start to its exit \
             unless a figure it prints is taken",
            programs.join("; ")
        );
    }
    // Said in its own case, after the lowercased line.
    let sample = match cfg.key_sample {
        Some(n) => format!("; readKey gets {n} keys a pass, the first of the write order"),
        None => String::new(),
    };
    format!(
        "{} entries, {:?} keys, {}-byte {:?} values, {:?} order, {}{}{}map {} bytes, seed {}",
        cfg.entries,
        cfg.keys,
        cfg.value_size,
        cfg.values,
        cfg.order,
        if cfg.no_writemap { "" } else { "MDB_WRITEMAP, " },
        match cfg.sync {
            crate::workload::SyncMode::Sync => String::new(),
            m => format!("{}, ", m.flags_named()),
        },
        if cfg.readahead == crate::workload::Readahead::Off { "MDB_NORDAHEAD, " } else { "" },
        cfg.effective_map_size(),
        cfg.seed
    )
    .to_lowercase()
        + &sample
        + &env_axes(m)
}

/// Lines about failures and checksum disagreements; empty when all is well.
pub fn problem_lines(m: &ReportModel) -> Vec<String> {
    let mut out = Vec::new();
    for s in &m.sections {
        for x in &s.checksum_mismatches {
            out.push(format!(
                "CHECKSUM MISMATCH: {} {} ({} engine) read {} but the others read {}",
                name(&x.tag),
                s.workload,
                x.engine,
                x.got,
                x.expected
            ));
        }
        for c in s.controls.iter().filter(|c| c.verdict().is_change()) {
            out.push(format!(
                "CONTROL {}: {} {} against itself ({}); this run's verdicts are not to be trusted",
                c.verdict(),
                s.workload,
                name(&c.against.to_string()),
                delta_line(&c.comparison)
            ));
        }
    }
    for c in m.checks.iter().filter(|c| !c.passed) {
        out.push(format!("CHECK FAILED: {}: {}; instruction counts may not repeat", c.what, c.detail));
    }
    // The same failure in several rounds (a crash LMDB repeats) is one line.
    let mut same: Vec<(&Failure, Vec<u32>)> = Vec::new();
    for f in &m.failures {
        fn key(g: &Failure) -> (&Label, Engine, Option<Workload>, FailureStage, &str) {
            (&g.unit, g.engine, g.workload, g.stage, &g.error)
        }
        match same.iter_mut().find(|(g, _)| key(g) == key(f)) {
            Some((_, rounds)) => rounds.extend(f.round),
            None => same.push((f, f.round.into_iter().collect())),
        }
    }
    for (f, rounds) in same {
        out.push(format!(
            "{} {} {}{}: {}",
            name(&f.unit.to_string()),
            f.engine,
            f.workload.map(|w| w.to_string()).unwrap_or_else(|| f.stage.to_string()),
            rounds_said(&rounds),
            f.error
        ));
    }
    out.extend(unmeasured_lines(m));
    out
}

/// The rounds a failure happened in, counted from 1: " (round 3)", " (rounds 1-20)" when
/// they run on, " (rounds 1, 4, 7)" otherwise; nothing for a failure outside the rounds.
fn rounds_said(rounds: &[u32]) -> String {
    match rounds {
        [] => String::new(),
        [r] => format!(" (round {})", r + 1),
        [first, .., last] if (*last - *first) as usize == rounds.len() - 1 => {
            format!(" (rounds {}-{})", first + 1, last + 1)
        }
        _ => {
            let each: Vec<String> = rounds.iter().map(|r| (r + 1).to_string()).collect();
            format!(" (rounds {})", each.join(", "))
        }
    }
}

/// Tags not measured, each reason said once: tags whose reasons differ only by their own
/// name share a line.
fn unmeasured_lines(m: &ReportModel) -> Vec<String> {
    let mut groups: Vec<(String, Vec<&crate::record::TagStatus>)> = Vec::new();
    for t in super::model::unmeasured(m) {
        let key = t.reason.as_deref().unwrap_or("unknown").replace(&t.label.to_string(), "\0");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, tags)) => tags.push(t),
            None => groups.push((key, vec![t])),
        }
    }
    groups
        .into_iter()
        .map(|(_, tags)| {
            let why = tags[0].reason.as_deref().unwrap_or("unknown");
            match tags.as_slice() {
                [one] => format!("{} not measured: {why}", name(&one.label.to_string())),
                several => format!(
                    "{} not measured, for the same reason (as said of {}): {why}",
                    several.iter().map(|t| name(&t.label.to_string())).collect::<Vec<_>>().join(", "),
                    name(&several[0].label.to_string())
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_failure_in_many_rounds_names_them_once() {
        let said = |r: &[u32]| super::rounds_said(r);
        assert_eq!(
            [said(&[]), said(&[2]), said(&[0, 1, 2]), said(&[0, 3, 6])],
            ["", " (round 3)", " (rounds 1-3)", " (rounds 1, 4, 7)"]
        );
    }

    use super::*;

    #[test]
    fn full_commit_ids_are_cut_to_twelve_digits_and_the_rest_of_the_label_kept() {
        let shown = |t: &str| label(&Label::parse(t));
        let full = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(shown(&format!("{full} (clang -O2)~control")), "0123456789ab (clang -O2)~control");
        assert_eq!(shown(full), "0123456789ab");
        assert_eq!(shown("LMDB_0.9.33 (gcc -O3)~control"), "LMDB_0.9.33 (gcc -O3)~control");
        // Ids as given stay whole: two ids of one commit read apart.
        assert_ne!(shown("8ad7be251041"), shown("8ad7be2510414b"));
        // A layout's label is shown whole.
        assert_eq!(shown(&format!("{full}@01")), format!("{full}@01"));
    }
}
