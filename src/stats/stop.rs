//! The runner's judgement ([`Judge`](crate::runner::Judge)) of what the measured rounds
//! leave undecided: the `--target-ci` stop rule ends a run when nothing is, and adaptive
//! rounds measure only what is, as often as it is far from decided. Either way a comparison
//! is decided only at the looks that spend the run's error ([`looks`]).

use std::collections::BTreeMap;

use super::family::Rounds;
use super::looks::{self, At};
use super::ratio::Comparison;
use super::reference::Split;
use super::{chunks, family};
use crate::record::{Closing, Engine, Metric, ReferenceLayouts, Sample, Target};
use crate::runner::adaptive::{Progress, SectionProgress};
use crate::runner::Label;
use crate::workload::Workload;

/// The least share of the rounds an undecided comparison is measured in: how far it is
/// from decided is estimated from its interval's width, which wanders from round to round.
pub const MIN_SHARE: f64 = 0.25;

/// In every (engine, workload), each tag's comparison with the `baseline` (the oldest tag
/// when None): closed when decided or resolved to within ±`target` percent, else open, in
/// a share of the coming rounds proportional to the rounds it still needs (of the
/// `horizon`, the rounds the run can still afford, where it is known); with `layouts`
/// auto, how many layouts of the reference each section's paired processes should hold.
pub fn progress(
    samples: &[Sample],
    baseline: Option<&str>,
    target: Option<Target>,
    (metric, min_effect): (Metric, f64),
    horizon: Option<f64>,
    layouts: ReferenceLayouts,
) -> Progress {
    progress_of(samples, &compared(samples, baseline, metric), target, (metric, min_effect), horizon, layouts)
}

/// [`progress`] of `samples` already grouped into their `sections` ([`compared`]).
pub fn progress_of(
    samples: &[Sample],
    sections: &Compared,
    target: Option<Target>,
    (metric, min_effect): (Metric, f64),
    horizon: Option<f64>,
    layouts: ReferenceLayouts,
) -> Progress {
    // The report judges the run's tables together: a comparison is decided at the level
    // the report gives it.
    let rule = family::Rule::of_run(min_effect, metric, sections.len());
    let mut progress = judge(sections, &rule, target, (rounds(samples), horizon));
    if layouts != ReferenceLayouts::Auto {
        return progress;
    }
    for (key, section) in progress.sections.iter_mut() {
        let Some((reference, blocks)) = sections.get(key) else { continue };
        // Each open comparison is measured in its share of the rounds, beside the reference.
        let units = 1.0 + section.open.values().sum::<f64>();
        let split = Split::of(blocks, reference, &layouts_per_round(samples, *key, reference));
        section.reference_layouts = split.filter(|_| !section.open.is_empty()).map_or(1, |s| s.best_layouts(units));
    }
    progress
}

/// How many layouts of `reference` each round held in section `key` (a worker's
/// repetitions run one layout).
fn layouts_per_round(samples: &[Sample], key: (Engine, Workload), reference: &Label) -> BTreeMap<u32, u32> {
    let mut layouts: BTreeMap<u32, std::collections::BTreeSet<Option<u32>>> = BTreeMap::new();
    let of = |s: &&Sample| !s.counted && (s.engine, s.workload) == key && s.unit == *reference;
    for s in samples.iter().filter(of) {
        layouts.entry(s.round).or_default().insert(s.layout);
    }
    layouts.into_iter().map(|(r, l)| (r, l.len() as u32)).collect()
}

/// One (engine, workload)'s reference and each label's values per round as compared.
pub type Compared = BTreeMap<(Engine, Workload), (Label, BTreeMap<Label, Rounds>)>;

/// Every section's values per round as comparisons pair them, with its reference: the
/// oldest of the `baseline`'s labels (the oldest of all when None). Controls and counted
/// samples are not compared.
pub fn compared(samples: &[Sample], baseline: Option<&str>, metric: Metric) -> Compared {
    let mut groups: BTreeMap<(Engine, Workload), Vec<&Sample>> = BTreeMap::new();
    let measured = |s: &&Sample| !s.counted && !s.unit.control;
    for s in samples.iter().filter(measured) {
        groups.entry((s.engine, s.workload)).or_default().push(s);
    }
    groups
        .into_iter()
        .map(|(key, group)| {
            let blocks = chunks::group_by(group, |s| s.value(metric), metric).compared;
            (key, (reference(&blocks, baseline), blocks))
        })
        .collect()
}

/// [`progress`] from values already compared after `rounds` rounds (counted from 1): each
/// section's comparisons closed at a look ([`looks`]) or open, the open ones' shares of the
/// coming rounds in proportion to the rounds they need at the next look's level (or, when
/// the `horizon`, the rounds left, ends the run before that look, at the level the run's
/// last round reports it at), against the most any needs or the horizon, whichever is
/// fewer: a comparison that needs every round the run has left gets every one, however far
/// beyond it another's need lies.
pub fn judge(
    sections: &Compared,
    rule: &family::Rule,
    target: Option<Target>,
    (rounds, horizon): (u32, Option<f64>),
) -> Progress {
    let mut out = BTreeMap::new();
    let mut needs: BTreeMap<(Engine, Workload), BTreeMap<Label, Option<f64>>> = BTreeMap::new();
    // Where the run can afford no further look, an open comparison will be reported at the
    // last round's level, and needs only that level's width.
    let until = At::going_on(rounds, horizon);
    for (&key, (reference, blocks)) in sections {
        let family = blocks.len().saturating_sub(1);
        let mut section = SectionProgress {
            reference: reference.clone(),
            open: BTreeMap::new(),
            closed: Default::default(),
            reference_layouts: 1,
        };
        // A section of one label has nothing compared yet: its label is open.
        for (label, values) in blocks.iter().filter(|(l, _)| *l != reference || blocks.len() < 2) {
            let stand = blocks
                .get(reference)
                .filter(|_| label != reference)
                .and_then(|base| looks::stand(base, values, family, rule, target, rounds, until));
            match stand {
                Some(s) if s.decided_at.is_some() => _ = section.closed.insert(label.clone()),
                s => {
                    let need = s.and_then(|s| rounds_needed(&s.comparison, rule.min_effect, target));
                    needs.entry(key).or_default().insert(label.clone(), need);
                }
            }
        }
        out.insert(key, section);
    }
    let most = needs.values().flat_map(|n| n.values().flatten()).copied().fold(0.0, f64::max);
    let most = horizon.map_or(most, |h| most.min(h.max(1.0)));
    let share = |need: Option<f64>| need.filter(|_| most > 0.0).map_or(1.0, |n| (n / most).clamp(MIN_SHARE, 1.0));
    for (key, open) in needs {
        if let Some(section) = out.get_mut(&key) {
            section.open = open.into_iter().map(|(l, n)| (l, share(n))).collect();
        }
    }
    Progress { sections: out }
}

/// The rounds `samples` hold (their last round, counted from 1).
pub fn rounds(samples: &[Sample]) -> u32 {
    samples.iter().filter(|s| !s.counted).map(|s| s.round + 1).max().unwrap_or(0)
}

/// The label a section's comparisons are made with ([`Label::reference_among`]).
fn reference(blocks: &BTreeMap<Label, family::Rounds>, baseline: Option<&str>) -> Label {
    Label::reference_among(blocks.keys(), baseline).unwrap_or_else(|| Label::build("", None))
}

/// About how many more rounds an open comparison needs: its interval's half-width h (in
/// log terms) shrinks as 1/√n; it is decided once h is below the larger of |m| (the
/// interval's centre: then it excludes 1) and the `same` margin less |m| (then it lies
/// within it), and within the target once h is below it; [`looks::closed`] says which of
/// the two it needs. None without an interval.
fn rounds_needed(c: &Comparison, min_effect: f64, target: Option<Target>) -> Option<f64> {
    let ci = c.ci?;
    let (h, m) = ((ci.hi / ci.lo).ln() / 2.0, (ci.hi * ci.lo).ln().abs() / 2.0);
    let decided = m.max((1.0 + min_effect).ln() - m);
    let goal = match target {
        None => decided,
        Some(t) if t.closing == Closing::DecidedOrWithin => decided.max((1.0 + t.percent / 100.0).ln()),
        Some(t) => decided.min((1.0 + t.percent / 100.0).ln()),
    };
    Some(c.n as f64 * ((h / goal).powi(2) - 1.0).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(tag: &str, round: u32, ns: f64) -> Sample {
        Sample {
            round,
            engine: Engine::Rust,
            unit: Label::build(tag, None),
            workload: Workload::Write,
            ns: ns as u64,
            counts: Default::default(),
            checksum: None,
            counted: false,
            figures: Default::default(),
            layout: None,
            harness: None,
            chunks_ns: Vec::new(),
            space: None,
            io: None,
            major_faults: None,
        }
    }

    /// Twelve rounds of a reference (0.9.17), a tag 8–12% slower (0.9.18), and two tags
    /// within ±3% (0.9.19) and ±2.5% (0.9.20) of it from round to round.
    fn twelve_rounds() -> Vec<Sample> {
        let mut samples = Vec::new();
        for r in 0..12u32 {
            let sign = if r % 2 == 0 { 1.0 } else { -1.0 };
            let base = 1e6 * (1.0 + 0.01 * r as f64);
            samples.push(sample("LMDB_0.9.17", r, base));
            samples.push(sample("LMDB_0.9.18", r, base * (1.10 + sign * 0.02)));
            samples.push(sample("LMDB_0.9.19", r, base * (1.0 + sign * 0.03)));
            samples.push(sample("LMDB_0.9.20", r, base * (1.0 + sign * 0.025)));
        }
        samples
    }

    /// Of [`twelve_rounds`]: the slower is decided, the others are not, the wider
    /// in every round and the narrower in fewer. A 1% target keeps the slower open (decided,
    /// not within it); a 10% target closes them all when either closes (before schema 11).
    #[test]
    fn decided_comparisons_close_and_the_widest_open_one_runs_every_round() {
        let samples = twelve_rounds();
        let tag = |t: &str| Label::build(t, None);
        let p = progress(&samples, None, None, (Metric::Time, 0.02), None, ReferenceLayouts::Exactly(1));
        let s = &p.sections[&(Engine::Rust, Workload::Write)];
        assert_eq!(s.reference, tag("LMDB_0.9.17"));
        assert_eq!(s.closed.iter().collect::<Vec<_>>(), [&tag("LMDB_0.9.18")]);
        assert_eq!(s.open[&tag("LMDB_0.9.19")], 1.0, "{s:?}");
        assert!((MIN_SHARE..1.0).contains(&s.open[&tag("LMDB_0.9.20")]), "{s:?}");
        assert!(!p.settled());
        let target = |percent, closing| Some(Target { percent, closing });
        let p = progress(
            &samples,
            None,
            target(1.0, Closing::DecidedAndWithin),
            (Metric::Time, 0.02),
            None,
            ReferenceLayouts::Exactly(1),
        );
        let s = &p.sections[&(Engine::Rust, Workload::Write)];
        assert!(s.closed.is_empty() && s.open.contains_key(&tag("LMDB_0.9.18")), "{s:?}");
        assert!(progress(
            &samples,
            None,
            target(10.0, Closing::DecidedOrWithin),
            (Metric::Time, 0.02),
            None,
            ReferenceLayouts::Exactly(1)
        )
        .settled());
    }

    /// The runner decides at the report's level: the run's tables share its error. After
    /// ten rounds the slower tag is decided in one table (its first look, round 9, at
    /// 1 − 0.0125/3), and not yet in each of six (round 12, at 1 − 0.0125/18).
    #[test]
    fn many_tables_decide_at_the_runs_level() {
        let ten: Vec<Sample> = twelve_rounds().into_iter().filter(|s| s.round < 10).collect();
        let slower = Label::build("LMDB_0.9.18", None);
        let p = progress(&ten, None, None, (Metric::Time, 0.02), None, ReferenceLayouts::Exactly(1));
        assert!(p.sections[&(Engine::Rust, Workload::Write)].closed.contains(&slower), "{p:?}");
        let six: Vec<Sample> =
            Workload::ALL.iter().flat_map(|w| ten.iter().map(move |s| Sample { workload: *w, ..s.clone() })).collect();
        let p = progress(&six, None, None, (Metric::Time, 0.02), None, ReferenceLayouts::Exactly(1));
        assert_eq!(p.sections.len(), 6);
        for s in p.sections.values() {
            assert!(s.closed.is_empty() && s.open.contains_key(&slower), "{s:?}");
        }
    }

    /// The narrower undecided tag needs fewer rounds than the wider, so without a horizon
    /// it gets a share below 1; once the rounds left are no more than it needs, it gets
    /// every round too, the wider's need beyond the horizon notwithstanding.
    #[test]
    fn a_comparison_that_needs_every_round_left_gets_every_round() {
        let samples = twelve_rounds();
        let narrower = |horizon| {
            let p = progress(&samples, None, None, (Metric::Time, 0.02), horizon, ReferenceLayouts::Exactly(1));
            p.sections[&(Engine::Rust, Workload::Write)].open[&Label::build("LMDB_0.9.20", None)]
        };
        let unbounded = narrower(None);
        assert!(unbounded < 1.0, "{unbounded}");
        assert_eq!(narrower(Some(1.0)), 1.0);
        assert_eq!(narrower(Some(1e9)), unbounded, "a horizon beyond every need changes nothing");
    }

    /// Twelve rounds of a tag 5% slower, its rounds within ±1.8%, beside one that needs every
    /// round: at the next look (round 18) it needs more than the ten rounds a horizon of ten
    /// affords, and gets every one; a run that ends after two more is reported at the last
    /// round's looser level, whose width it already has, and is measured at the least share.
    #[test]
    fn a_comparison_the_run_ends_before_its_next_look_needs_only_the_last_rounds_width() {
        let mut samples = Vec::new();
        for r in 0..12u32 {
            let base = 1e6 * (1.0 + 0.01 * r as f64);
            let wobble = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8, 0.2, -0.2, 1.2, -1.2, 0.3][r as usize];
            let sign = if r % 2 == 0 { 1.0 } else { -1.0 };
            samples.push(sample("LMDB_0.9.17", r, base));
            samples.push(sample("LMDB_0.9.18", r, base * (1.05 + 0.015 * wobble)));
            samples.push(sample("LMDB_0.9.19", r, base * (1.0 + sign * 0.05)));
        }
        let target = Some(Target { percent: 1.0, closing: Closing::DecidedAndWithin });
        let share = |horizon| {
            let p = progress(&samples, None, target, (Metric::Time, 0.02), Some(horizon), ReferenceLayouts::Exactly(1));
            p.sections[&(Engine::Rust, Workload::Write)].open[&Label::build("LMDB_0.9.18", None)]
        };
        assert_eq!(share(10.0), 1.0);
        assert_eq!(share(2.0), MIN_SHARE);
    }
}
