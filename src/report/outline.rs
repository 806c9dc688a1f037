//! One outline for every human format (hyperfine's markup-table idea): headings,
//! paragraphs, lists and tables. Markdown and text lay out the same blocks; the report
//! and the ITS#10406 page are both built as outlines.

use super::cells::{self, label, named, num, partial_note, Cells};
use super::extras::{Cell, ExtraPart, ExtraTable};
use super::findings::{Findings, StepBy, TagStep, Unresolved};
use super::model::{Delta, ReportModel};
use crate::environment::Environment;
use crate::record::{Engine, Label, Metric};
use crate::stats::Verdict;
use crate::workload::Workload;

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Level 1 is the document's title.
    Heading(u8, String),
    Paragraph(String),
    /// A quoted warning ("partial run").
    Note(String),
    List(Vec<String>),
    /// Key: value lines.
    Pairs(Vec<(String, String)>),
    Table(Cells),
    /// Lines shown as they are, in a fixed-width font (a source listing, a diff).
    Code(Vec<String>),
    /// A chart of the model, drawn where a format can draw (HTML); Markdown and text
    /// leave it out.
    Chart(Chart),
    /// Where a format that lists the document's contents puts them (HTML: after the
    /// findings); a document without one gets them after its title.
    Contents,
}

/// Which of the model's charts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chart {
    /// One section's.
    Section(Engine, Workload),
    /// One of the extra content's ([`super::extras::Extras::charts`]).
    Extra(usize),
}

/// What a command reports, in one shape for every human format: its blocks, which
/// Markdown, text and HTML lay out, and what the github format puts before them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub blocks: Vec<Block>,
    /// What the command found, in sentences: what the github format puts first when no gate
    /// judged it.
    pub findings: Vec<String>,
    /// The machine it was measured on, in a sentence ("Measured on …."), which the github
    /// format names.
    pub machine: Option<String>,
}

impl Document {
    pub fn heading(&mut self, level: u8, t: impl Into<String>) {
        self.blocks.push(Block::Heading(level, t.into()));
    }

    pub fn code(&mut self, lines: Vec<String>) {
        self.blocks.push(Block::Code(lines));
    }

    pub fn para(&mut self, t: impl Into<String>) {
        self.blocks.push(Block::Paragraph(t.into()));
    }

    pub fn list(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
    }

    pub fn table(&mut self, c: Cells) {
        self.blocks.push(Block::Table(c));
    }

    pub fn chart(&mut self, engine: Engine, workload: Workload) {
        self.blocks.push(Block::Chart(Chart::Section(engine, workload)));
    }

    /// One part of the model's extra content: its heading, what it shows, each table under
    /// its own heading with its chart, then its notes.
    pub fn extra_part(&mut self, m: &ReportModel, part: &ExtraPart) {
        self.heading(1, part.title.as_str());
        self.para(part.about.as_str());
        for t in &part.tables {
            self.heading(2, t.heading.as_str());
            self.table(extra_cells(m, t));
            if let Some(i) = t.chart {
                self.blocks.push(Block::Chart(Chart::Extra(i)));
            }
        }
        self.list(part.notes.iter().map(|(tag, words)| format!("{} {words}", named(tag))).collect());
    }

    /// The environment, the builds and the method: the tail every report carries.
    pub fn environment(&mut self, m: &ReportModel) {
        self.heading(2, "Test Environment");
        self.blocks.push(Block::Pairs(cells::environment_lines(m)));
        self.heading(3, "Builds");
        self.table(cells::provenance_cells(m));
    }
}

/// An extra table's cells: tags as labels (the newest marked), figures with the report's decimals.
fn extra_cells(m: &ReportModel, t: &ExtraTable) -> Cells {
    let mut c = Cells::new(&t.columns.iter().map(String::as_str).collect::<Vec<_>>(), 0, 1);
    for row in &t.rows {
        let newest = row.iter().any(|x| matches!(x, Cell::Tag(tag) if m.newest.as_ref() == Some(tag)));
        let cells = row.iter().map(|x| match x {
            Cell::Tag(tag) => label(tag),
            Cell::Num(v) => num(*v),
            Cell::Text(s) => s.clone(),
        });
        c.push(cells.collect(), newest);
    }
    c
}

/// "Measured on Fixture CPU (2 cores), Debian GNU/Linux 12 (bookworm), kernel 6.0.0;
/// lmdb-regress 0.1.0."
pub fn machine(e: &Environment) -> String {
    format!(
        "Measured on {} ({}), {}, kernel {}; lmdb-regress {}.",
        e.cpu(),
        cells::plural(e.cores, "core"),
        e.os,
        e.kernel,
        e.harness_version
    )
}

/// The report: ranked tables, baseline tables, overhead, problems, method, environment.
pub fn report(m: &ReportModel) -> Document {
    let mut d = Document { findings: findings(m), machine: Some(machine(&m.environment)), ..Document::default() };
    d.heading(1, "LMDB Library Performance Analysis");
    if let Some(note) = partial_note(m) {
        d.blocks.push(Block::Note(note));
    }
    d.blocks.extend(findings_section(m).blocks);
    d.blocks.push(Block::Contents);
    let newest = m.newest.as_ref().map(|n| format!(" The newest tag ({}) is marked.", named(n))).unwrap_or_default();
    d.para(if m.rule.counts {
        format!(
            "Each workload's tags ranked by {} (exact counts; smaller is less work): \"vs Fastest\" \
             is each tag's count against the fewest.{newest}",
            m.units_in_words()
        )
    } else {
        format!(
            "Each workload's tags ranked by one estimator, the Hodges-Lehmann estimate of the \
             per-round ratio (smaller is faster): the fastest is the tag no other beats by it, \
             \"vs Fastest\" is each tag's estimate against the fastest, and rows go by rank, then \
             by that estimate. The median {}, its ± (the half-width of the median's 95% interval) \
             and min describe each tag alone and may order differently.{newest}",
            m.units_in_words()
        )
    });
    for p in &m.extras.intro {
        d.para(p.as_str());
    }
    if let Some(study) = &m.plan.layout_study {
        d.heading(1, "Layout sensitivity");
        d.para(format!(
            "{} under {} code layouts of one build (lld's seeded shuffle of its functions), each \
             measured in every round with the same layout. Layout spread: how much identical code \
             moves between layouts on this machine, beyond the per-sample noise; the tables below \
             rank the layouts.",
            named(&study.tag),
            study.layouts.len()
        ));
        d.table(cells::layout_study_cells(m));
    }
    for s in &m.sections {
        d.heading(2, m.section_title(s));
        d.table(cells::ranked_cells(m, s));
        d.chart(s.engine, s.workload);
        d.list(cells::section_notes(m, s));
    }
    if m.sections.iter().any(|s| !s.vs_baseline.is_empty()) {
        d.heading(1, format!("Against {}", cells::baseline_named(m)));
    }
    for s in m.sections.iter().filter(|s| !s.vs_baseline.is_empty()) {
        d.heading(2, m.section_title(s));
        d.table(cells::baseline_cells(m, s));
    }
    for part in &m.extras.parts {
        d.extra_part(m, part);
    }
    if !m.toolchains.is_empty() {
        d.heading(1, "Toolchains");
        d.para(
            "Each tag built by several toolchains: every workload's builds against the reference \
             toolchain's build of the same tag, in the same rounds; intervals simultaneous at 95% per table.",
        );
    }
    for t in &m.toolchains {
        d.heading(2, format!("{} (reference: {})", named(&t.tag), super::names::name(&t.reference)));
        d.table(cells::toolchain_cells(m, t));
    }
    if !m.overhead.is_empty() {
        d.heading(1, "Harness overhead (Rust / C)");
        d.para(format!(
            "The Rust harness against its plain-C twin on the same tags, in the same rounds; 1.000 means no overhead. {}",
            super::method::overhead_design(m)
        ));
        d.table(cells::overhead_cells(m));
    }
    let problems = cells::problem_lines(m);
    if !problems.is_empty() {
        d.heading(1, "Problems");
        d.list(problems);
    }
    d.heading(1, "Method");
    d.list(super::method::method_lines(m));
    d.environment(m);
    d
}

/// The findings under their heading, as every report opens with them.
pub fn findings_section(m: &ReportModel) -> Document {
    let mut d = Document::default();
    d.heading(2, "Findings");
    d.list(findings(m));
    d
}

/// What the run established, in sentences: each resolved step, what time left open and
/// the rounds that would close it, what failed.
pub fn findings(m: &ReportModel) -> Vec<String> {
    let f = &Findings::of(m);
    let mut v = Vec::new();
    if !f.any() {
        v.push(nothing_resolved(m));
    }
    v.extend(f.steps.iter().map(|s| step_line(m, s)));
    v.extend(space_lines(m));
    v.extend(super::coverage::same_finding(m));
    v.extend(unresolved_line(m, f));
    v.extend(died_lines(m));
    v.extend(failures_line(m, f));
    v.extend(not_applicable_lines(m));
    v
}

/// The rows whose worker died (a crash in LMDB), grouped by unit, engine, rounds and how:
/// said once each, with what the rest of the run did.
fn died_lines(m: &ReportModel) -> Vec<String> {
    let mut groups: Vec<(&super::model::DiedRow, Vec<String>)> = Vec::new();
    for d in &m.died {
        let same = |g: &&mut (&super::model::DiedRow, Vec<String>)| {
            let k = g.0;
            (&k.unit, k.engine, k.rounds_died, k.rounds, &k.how) == (&d.unit, d.engine, d.rounds_died, d.rounds, &d.how)
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.1.push(d.workload.to_string()),
            None => groups.push((d, vec![d.workload.to_string()])),
        }
    }
    groups
        .into_iter()
        .map(|(d, ws)| {
            let when = match d.always() {
                true => format!("in every round it ran ({} of {})", d.rounds_died, d.rounds),
                false => format!("in {} of {} rounds", d.rounds_died, d.rounds),
            };
            let left = match d.always() {
                true => "it has no figure there; the other rows were measured",
                false => "its figure there is of the rounds it survived",
            };
            format!("Died: {} on {} ({} engine) {when}: {}; {left}.", ws.join(", "), named(&d.unit), d.engine, d.how)
        })
        .collect()
}

/// The workloads some units cannot run, grouped by units and why: said once each.
fn not_applicable_lines(m: &ReportModel) -> Vec<String> {
    let mut groups: Vec<(&[Label], String, Vec<String>)> = Vec::new();
    for n in &m.not_applicable {
        match groups.iter_mut().find(|(u, why, _)| *u == n.units.as_slice() && *why == n.why.to_string()) {
            Some(g) => g.2.push(n.workload.to_string()),
            None => groups.push((&n.units, n.why.to_string(), vec![n.workload.to_string()])),
        }
    }
    groups
        .into_iter()
        .map(|(units, why, ws)| {
            let on: Vec<String> = units.iter().map(named).collect();
            format!("{} on {}: {why}; they did not run there.", ws.join(", "), on.join(", "))
        })
        .collect()
}

/// Each space figure beside the section's metric that differs from the baseline's, the
/// tags with the same change together: "write: +12.0% leaf pages for the same data at
/// 1.0.0 and 1.0.1".
fn space_lines(m: &ReportModel) -> Vec<String> {
    let mut v = Vec::new();
    for (s, metric) in m.sections.iter().flat_map(|s| m.beside.iter().filter(|x| x.is_space()).map(move |x| (s, *x))) {
        let mut by_change: Vec<(String, Vec<String>)> = Vec::new();
        for d in s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()) {
            let Some(c) = d.counts.get(&metric).filter(|c| c.verdict.is_change()) else { continue };
            let (moved, tag) = (cells::delta(c), named(&d.tag));
            match by_change.iter_mut().find(|(k, _)| *k == moved) {
                Some((_, tags)) => tags.push(tag),
                None => by_change.push((moved, vec![tag])),
            }
        }
        let name = section_name(m, s.engine, s.workload);
        v.extend(by_change.into_iter().map(|(moved, tags)| {
            format!("{name}: {moved} {} for the same data at {}.", metric.name(), and_list(&tags))
        }));
    }
    v
}

fn nothing_resolved(m: &ReportModel) -> String {
    let b = cells::baseline_named(m);
    let compared = m.sections.iter().any(|s| s.vs_baseline.iter().any(|r| r.vs_baseline.is_some()));
    match (compared, m.rule.counts, m.has_counts()) {
        (false, ..) => "Nothing was compared: the run measured one tag.".into(),
        (_, true, _) => {
            let what = match m.unit.metric {
                Metric::Instructions => "instruction count".to_string(),
                other => format!("count of {}", other.name()),
            };
            format!("No {what} differs from {b}'s beyond {}.", cells::within(100.0 * m.rule.count_tolerance))
        }
        (_, _, true) => format!("No difference against {b} resolved, in {} or in instructions.", timed_figure(m)),
        _ => format!("No difference against {b} resolved in {} (no instructions were counted).", timed_figure(m)),
    }
}

/// A section as a finding names it: its workload, and its engine when there are several.
fn section_name(m: &ReportModel, engine: Engine, workload: Workload) -> String {
    match m.engines().len() > 1 {
        true => format!("{workload} ({engine} engine)"),
        false => workload.to_string(),
    }
}

/// "at X", "from X on", "from X to Y".
fn span(s: &TagStep) -> String {
    let (first, last) = (named(&s.first().tag), named(&s.last().tag));
    match (s.deltas.len(), s.to_last) {
        (1, _) => format!("at {first}"),
        (_, true) => format!("from {first} on"),
        (_, false) => format!("from {first} to {last}"),
    }
}

/// " (0.9.19 and 0.9.20 not measured)": where else the step may lie.
fn not_measured(s: &TagStep) -> String {
    let tags: Vec<String> = s.not_measured.iter().map(|t| super::names::name(cells::short_tag(t))).collect();
    match tags.is_empty() {
        true => String::new(),
        false => format!(" ({} not measured)", and_list(&tags)),
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How time judged a step's tags: "slower at all 8 tags", "faster at both tags", "slower
/// at 5, inconclusive at 3 of the 8 tags".
fn tally(deltas: &[Delta]) -> String {
    let all = [Verdict::Slower, Verdict::Faster, Verdict::Same, Verdict::Inconclusive];
    let counted: Vec<(Verdict, usize)> =
        all.iter().map(|v| (*v, deltas.iter().filter(|d| d.verdict() == *v).count())).filter(|(_, n)| *n > 0).collect();
    match (counted.as_slice(), deltas.len()) {
        ([(v, _)], 2) => format!("{v} at both tags"),
        ([(v, n)], _) => format!("{v} at all {n} tags"),
        (several, n) => {
            let parts: Vec<String> = several.iter().map(|(v, k)| format!("{v} at {k}")).collect();
            format!("{} of the {n} tags", parts.join(", "))
        }
    }
}

fn step_line(m: &ReportModel, s: &TagStep) -> String {
    let name = section_name(m, s.engine, s.workload);
    let (first, at, elsewhere) = (s.first(), span(s), not_measured(s));
    let first_tag = named(&first.tag);
    let time = &first.comparison;
    let line = match s.by {
        StepBy::Instructions => {
            let counts = if m.rule.counts { Some(time) } else { first.instructions() };
            let counted = if m.rule.counts { m.unit.metric } else { Metric::Instructions };
            let per = if counted.unit_of(s.workload).ends_with("/cycle") { "cycle" } else { "entry" };
            let words = match counted.is_space() {
                true => format!("{} for the same data", counted.name()),
                false => format!("{} per {per}", counted.name()),
            };
            let moved = counts.map(cells::delta).unwrap_or_default();
            let mut line = format!("{name}: {moved} {words} {at}{elsewhere}");
            let timed = timed_figure(m);
            match (m.rule.counts, s.deltas.len()) {
                (true, _) => {}
                (false, 1) => line.push_str(&format!("; {timed} {}", cells::delta_line(time))),
                (false, _) => line.push_str(&format!(
                    "; {timed} {} {} at {first_tag}, {}",
                    cells::delta(time),
                    cells::interval(time),
                    tally(&s.deltas)
                )),
            }
            line
        }
        StepBy::Time => {
            let figure = format!("{} {}", cells::delta(time), cells::interval(time));
            let timed = timed_figure(m);
            let mut line = match s.deltas.len() {
                1 => format!("{name}: {timed} {figure} {at}{elsewhere}"),
                _ => format!("{name}: {timed} {figure} at {first_tag}, {} {at}{elsewhere}", tally(&s.deltas)),
            };
            if first.time_only {
                let moved = first.instructions().map(cells::delta).unwrap_or_default();
                line.push_str(&format!("; instructions unchanged ({moved}): time only"));
                if let Some(c) = first.counts.get(&Metric::EstimatedCycles) {
                    line.push_str(&format!("; estimated cycles {} ({})", cells::delta(c), c.verdict));
                }
            }
            line
        }
    };
    format!("{line}.")
}

/// What a clock-judged run's figure is called in a sentence: time, or the metric's own
/// name where it is another figure judged as time is (a pass's median commit, a reader's
/// time per get).
fn timed_figure(m: &ReportModel) -> &'static str {
    match m.unit.metric {
        Metric::Time => "time",
        other => other.name(),
    }
}

/// What time left open, where, and how many rounds would resolve ±min-effect.
fn unresolved_line(m: &ReportModel, f: &Findings) -> Option<String> {
    let open: &[Unresolved] = &f.unresolved;
    let least = open.iter().map(|u| u.rounds_for_intervals).max()?;
    let (k, n): (usize, usize) = open.iter().fold((0, 0), |(k, n), u| (k + u.inconclusive, n + u.of));
    let rounds = open.iter().map(|u| u.rounds).max().unwrap_or(0);
    let each: Vec<String> = open
        .iter()
        .map(|u| {
            let r = u
                .resolution
                .map(|r| format!("at {}", cells::within(100.0 * r)))
                .unwrap_or_else(|| "intervals n/a".into());
            format!("{} {} of {} {r}", section_name(m, u.engine, u.workload), u.inconclusive, u.of)
        })
        .collect();
    let cost = |most: usize| {
        f.seconds_per_round
            .map(|s| {
                format!(" (about {} at this run's {} a round)", cells::seconds(s * most as f64), cells::seconds(s))
            })
            .unwrap_or_default()
    };
    let next = match open.iter().filter_map(|u| u.rounds_to_resolve).max().map(two_digits) {
        Some(most) => format!(
            "about {most} rounds would resolve differences of {}{}",
            cells::within(100.0 * m.rule.min_effect),
            cost(most)
        ),
        None => format!("the intervals need at least {least} rounds before they exist{}", cost(least)),
    };
    let timed = timed_figure(m);
    let capital = timed[..1].to_uppercase() + &timed[1..];
    Some(format!(
        "{capital} did not resolve {k} of {n} deltas against {} after {} ({}); {next}.",
        cells::baseline_named(m),
        cells::plural(rounds, "round"),
        each.join(", "),
    ))
}

/// A projected count rounded up to two significant digits (419 → 420): a projection is
/// no more exact than that.
fn two_digits(n: usize) -> usize {
    let unit = 10usize.pow((n.max(1).ilog10()).saturating_sub(1));
    n.div_ceil(unit) * unit
}

/// What failed, counted, the first few named, and the tags not measured; the Problems
/// section tells each in full.
fn failures_line(m: &ReportModel, f: &Findings) -> Option<String> {
    let mut failed = Vec::new();
    // A row whose worker died is said by its own line (died_lines).
    let said_died = |x: &&crate::record::Failure| {
        x.died && m.died.iter().any(|d| (d.engine, Some(d.workload), &d.unit) == (x.engine, x.workload, &x.unit))
    };
    let others: Vec<&crate::record::Failure> = m.failures.iter().filter(|x| !said_died(x)).collect();
    let failures = others.len();
    if failures > 0 {
        let mut named: Vec<String> = others
            .iter()
            .take(3)
            .map(|x| {
                let tag = named(&x.unit);
                let what = x.workload.map(|w| w.to_string()).unwrap_or_else(|| x.stage.to_string());
                let round = x.round.map(|r| format!(", round {}", r + 1)).unwrap_or_default();
                format!("{tag} {what}{round}")
            })
            .collect();
        if failures > 3 {
            named.push(format!("{} more", failures - 3));
        }
        failed.push(format!("{} ({})", cells::plural(failures, "failure"), named.join("; ")));
    }
    match f.checksum_mismatches {
        0 => {}
        1 => failed.push("1 checksum mismatch".into()),
        n => failed.push(format!("{n} checksum mismatches")),
    }
    if f.failed_checks > 0 {
        failed.push(cells::plural(f.failed_checks, "failed check"));
    }
    let mut said = Vec::new();
    if !failed.is_empty() {
        said.push(format!("Failures: {}.", failed.join("; ")));
    }
    if !f.not_measured.is_empty() {
        let names: Vec<String> = f.not_measured.iter().map(|t| super::names::name(t)).collect();
        said.push(format!("Not measured: {}.", names.join(", ")));
    }
    (!said.is_empty()).then(|| format!("{} Each in full under Problems.", said.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projections_round_up_to_two_digits() {
        assert_eq!([7, 10, 12, 419, 420, 1017, 99_001].map(two_digits), [7, 10, 12, 420, 420, 1100, 100_000]);
    }
}
