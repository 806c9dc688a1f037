//! ITS#10406 ("Write regression since 0.9.19", LmdbJava through JNI): the report's write
//! benchmark measured natively, its table beside ours, and a verdict on each claim that
//! judges the size of the effect, not only its direction.

use serde::Serialize;

use crate::record::BuildStatus;
use crate::record::{Engine, Label, Metric, ReferenceLayouts, Sample, Target};
use crate::report::cells::{self, Cells};
use crate::report::document::Shown;
use crate::report::explain::Attribution;
use crate::report::html::{self, Item};
use crate::report::model::{Blocks, ReportModel};
use crate::report::outline::{Block, Document};
use crate::report::svg::{self, RatioChart, RatioPoint};
use crate::runner::adaptive::Progress;
use crate::stats::looks::{self, At};
use crate::stats::{family, stop};
use crate::stats::{Comparison, Verdict};
use crate::workload::Workload;

/// The report's figures: LmdbJava, ms/op of 1M MDB_APPEND writes.
pub const REPORTED: [(&str, f64); 14] = [
    ("LMDB_0.9.17", 75.790),
    ("LMDB_0.9.18", 74.909),
    ("LMDB_0.9.19", 81.404),
    ("LMDB_0.9.20", 83.459),
    ("LMDB_0.9.21", 83.237),
    ("LMDB_0.9.22", 83.027),
    ("LMDB_0.9.23", 82.870),
    ("LMDB_0.9.24", 82.952),
    ("LMDB_0.9.27", 82.989),
    ("LMDB_0.9.28", 83.025),
    ("LMDB_0.9.29", 83.063),
    ("LMDB_0.9.30", 83.237),
    ("LMDB_0.9.31", 88.419),
    ("LMDB_0.9.33", 83.304),
];

pub const BASELINE: &str = "LMDB_0.9.17";

/// The claims the report makes, as (from, to).
pub const CLAIMS: [(&str, &str); 3] =
    [("LMDB_0.9.18", "LMDB_0.9.19"), ("LMDB_0.9.18", "LMDB_0.9.20"), ("LMDB_0.9.17", "LMDB_0.9.33")];

/// What the runner judges still undecided in an its-10406 run: every comparison with the
/// baseline ([`stop::progress`]), and each claim's two tags in every round until the claim
/// is itself closed at a look. A claim between two tags other than the baseline would
/// otherwise be judged on the few rounds both were measured in before either's comparison
/// with the baseline closed.
pub fn progress(
    samples: &[Sample],
    baseline: Option<&str>,
    target: Option<Target>,
    (metric, min_effect): (Metric, f64),
    horizon: Option<f64>,
    layouts: ReferenceLayouts,
) -> Progress {
    let sections = stop::compared(samples, baseline, metric);
    let mut progress = stop::progress_of(samples, &sections, target, (metric, min_effect), horizon, layouts);
    let rule = family::Rule::of_run(min_effect, metric, sections.len());
    let rounds = stop::rounds(samples);
    for (key, (_, blocks)) in &sections {
        let Some(section) = progress.sections.get_mut(key) else { continue };
        for (from, to) in CLAIMS.map(|(f, t)| (Label::build(f, None), Label::build(t, None))) {
            let (Some(a), Some(b)) = (blocks.get(&from), blocks.get(&to)) else { continue };
            let stand = looks::stand(a, b, CLAIMS.len(), &rule, target, rounds, At::going_on(rounds, horizon));
            if stand.is_some_and(|s| s.decided_at.is_some()) {
                continue;
            }
            for label in [from, to].into_iter().filter(|l| *l != section.reference) {
                section.closed.remove(&label);
                section.open.insert(label, 1.0);
            }
        }
    }
    progress
}

pub fn reported(tag: &str) -> Option<f64> {
    REPORTED.iter().find(|(t, _)| *t == tag).map(|(_, v)| *v)
}

/// What our measurement says of a claimed slowdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClaimVerdict {
    /// Slower, and the interval holds the claimed size.
    #[serde(rename = "reproduces")]
    Reproduces,
    /// Slower, with the whole interval below the claimed size.
    #[serde(rename = "reproduces, but smaller")]
    Smaller,
    /// Slower, with the whole interval above the claimed size.
    #[serde(rename = "reproduces, but larger")]
    Larger,
    /// Same within ±min-effect, or faster.
    #[serde(rename = "does not reproduce")]
    DoesNotReproduce,
    /// Not resolved as slower or same, but the whole interval lies below the claimed size:
    /// the claim as stated is ruled out, whether a smaller slowdown remains is not.
    #[serde(rename = "smaller than claimed, if any")]
    RuledOut,
    /// Not resolved: neither slower nor within ±min-effect.
    #[serde(rename = "inconclusive")]
    Inconclusive,
    /// A tag of the claim was not measured.
    #[serde(rename = "not measured")]
    NotMeasured,
}

impl ClaimVerdict {
    pub fn words(self) -> &'static str {
        match self {
            ClaimVerdict::Reproduces => "reproduces",
            ClaimVerdict::Smaller => "reproduces, but smaller",
            ClaimVerdict::Larger => "reproduces, but larger",
            ClaimVerdict::DoesNotReproduce => "does not reproduce",
            ClaimVerdict::RuledOut => "smaller than claimed, if any",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::NotMeasured => "not measured",
        }
    }
}

/// The verdict on a claimed ratio from a measured comparison.
pub fn judge_claim(c: Option<&Comparison>, claimed_ratio: f64) -> ClaimVerdict {
    let Some(c) = c else { return ClaimVerdict::NotMeasured };
    match (c.verdict, c.ci) {
        (Verdict::Slower, Some(ci)) if ci.hi < claimed_ratio => ClaimVerdict::Smaller,
        (Verdict::Slower, Some(ci)) if ci.lo > claimed_ratio => ClaimVerdict::Larger,
        (Verdict::Slower, _) => ClaimVerdict::Reproduces,
        (Verdict::Same | Verdict::Faster, _) => ClaimVerdict::DoesNotReproduce,
        (Verdict::Inconclusive, Some(ci)) if ci.hi < claimed_ratio => ClaimVerdict::RuledOut,
        (Verdict::Inconclusive, _) => ClaimVerdict::Inconclusive,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub from: String,
    pub to: String,
    pub reported_pct: f64,
    pub ratio: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub verdict: ClaimVerdict,
    pub instructions_ratio: Option<f64>,
    pub time_only: bool,
    pub measured: Option<Comparison>,
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EngineResult {
    pub engine: Engine,
    pub claims: Vec<Claim>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ItsReport {
    pub unit: &'static str,
    pub engines: Vec<EngineResult>,
    /// Tags of the range that were not built, with the reason and how to supply them.
    pub missing: Vec<(String, String)>,
}

fn pct(a: f64, b: f64) -> f64 {
    100.0 * (b / a - 1.0)
}

fn short(t: &str) -> &str {
    cells::short_tag(t)
}

fn claim(b: &Blocks, from: &str, to: &str, m: &ReportModel) -> Claim {
    let reported_pct = pct(reported(from).unwrap(), reported(to).unwrap());
    let claimed = 1.0 + reported_pct / 100.0;
    let (a, z) = (Label::build(from, None), Label::build(to, None));
    let measured = match (b.compared.get(&a), b.compared.get(&z)) {
        // A run that stopped at looks reports a claim as it reports a comparison: at the
        // look that closed it, else at the level the looks left its last round.
        (Some(x), Some(y)) if m.plan.spends_at_looks() => {
            let rounds = b.compared.values().filter_map(|r| r.keys().last()).max().map_or(0, |r| r + 1);
            looks::stand(x, y, CLAIMS.len(), &m.rule, m.plan.target(), rounds, At::Last).map(|s| s.comparison)
        }
        (Some(x), Some(y)) => family::compare(x, y, CLAIMS.len(), &m.rule),
        _ => None,
    };
    let work = b.counts.get(&Metric::Instructions);
    let instr = match (work.and_then(|c| c.get(&a)), work.and_then(|c| c.get(&z))) {
        (Some(x), Some(y)) if !m.rule.counts => family::compare(x, y, 1, &m.rule.for_counts()),
        _ => None,
    };
    let verdict = judge_claim(measured.as_ref(), claimed);
    let time_only =
        measured.is_some_and(|c| c.verdict.is_change()) && instr.is_some_and(|i| i.verdict == Verdict::Same);
    // "+9.1% [+1.6%, +19.4%]": the verdict is said in words around it.
    let ours = measured.as_ref().map(|c| format!("{} {}", cells::delta(c), cells::interval(c))).unwrap_or_default();
    let sentence = match verdict {
        ClaimVerdict::NotMeasured => format!(
            "{} -> {} (reported {reported_pct:+.1}%) is not measured here: supply the missing tag with --git.",
            short(from),
            short(to)
        ),
        ClaimVerdict::Inconclusive => format!(
            "{} -> {} (reported {reported_pct:+.1}%): inconclusive, {ours}; this run resolves {}, more rounds may decide it.",
            short(from),
            short(to),
            measured.and_then(|c| c.half_width()).map_or("nothing".into(), |h| cells::within(100.0 * h))
        ),
        v => format!("{} -> {} (reported {reported_pct:+.1}% through Java): {}, natively {ours}.", short(from), short(to), v.words()),
    };
    Claim {
        from: from.into(),
        to: to.into(),
        reported_pct,
        ratio: measured.map(|c| c.ratio),
        ci_low: measured.and_then(|c| c.ci.map(|i| i.lo)),
        ci_high: measured.and_then(|c| c.ci.map(|i| i.hi)),
        verdict,
        instructions_ratio: instr.map(|i| i.ratio),
        time_only,
        measured,
        sentence,
    }
}

pub fn build(m: &ReportModel) -> ItsReport {
    let engines = m
        .engines()
        .into_iter()
        .map(|engine| {
            let empty = Blocks::default();
            let b = m.blocks.get(&(engine, Workload::Write)).unwrap_or(&empty);
            EngineResult { engine, claims: CLAIMS.iter().map(|(f, t)| claim(b, f, t, m)).collect() }
        })
        .collect();
    let missing = m
        .tags
        .iter()
        .filter(|t| t.status != BuildStatus::Built)
        .map(|t| (t.label.to_string(), t.reason.clone().unwrap_or_default()))
        .collect();
    ItsReport { unit: m.unit.label, engines, missing }
}

/// Our baseline table with the report's two columns beside it.
fn table(m: &ReportModel, engine: Engine) -> Option<Cells> {
    let s = m.section(engine, Workload::Write)?;
    let mut c = cells::baseline_cells(m, s);
    c.header.extend(["Reported ms/op".to_string(), format!("Reported vs {}", short(BASELINE))]);
    for (row, r) in c.rows.iter_mut().zip(&s.vs_baseline) {
        // The report measured the default builds of its tags.
        let rep = (r.tag == Label::build(&r.tag.base, None)).then(|| reported(&r.tag.base)).flatten();
        row.push(rep.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into()));
        row.push(match rep {
            Some(_) if r.tag.base == BASELINE => "baseline".into(),
            Some(v) => cells::percent(pct(reported(BASELINE).unwrap(), v)),
            None => "-".into(),
        });
    }
    Some(c)
}

/// What was found, in the title: how many claims reproduce, per engine.
pub fn title(r: &ItsReport) -> String {
    let several = r.engines.len() > 1;
    let found: Vec<String> = r
        .engines
        .iter()
        .map(|e| {
            let n = |want: &[ClaimVerdict]| e.claims.iter().filter(|c| want.contains(&c.verdict)).count();
            use ClaimVerdict::*;
            let yes = n(&[Reproduces, Smaller, Larger]);
            let verb = if yes == 1 { "reproduces" } else { "reproduce" };
            let mut parts = vec![format!("{yes} of {} claims {verb}", e.claims.len())];
            for (v, words) in [
                (DoesNotReproduce, "not reproduced"),
                (RuledOut, "smaller than claimed, if any"),
                (Inconclusive, "inconclusive"),
                (NotMeasured, "not measured"),
            ] {
                let k = n(&[v]);
                if k > 0 {
                    parts.push(format!("{k} {words}"));
                }
            }
            let engine = if several { format!(" ({} engine)", e.engine) } else { String::new() };
            format!("{}{engine}", parts.join(", "))
        })
        .collect();
    format!("ITS#10406 natively (MDB_APPEND writes per tag): {}", found.join("; "))
}

/// The page: the report's table with ours beside it, the verdicts, what is missing.
pub fn outline(r: &ItsReport, m: &ReportModel) -> Document {
    let findings = r.engines.iter().flat_map(|e| e.claims.iter().map(|c| c.sentence.clone())).collect();
    let machine = Some(crate::report::outline::machine(&m.environment));
    let mut d = Document { findings, machine, ..Document::default() };
    d.heading(1, title(r));
    d.para(format!(
        "{} entries, 4-byte integer keys (MDB_INTEGERKEY), {}-byte values, one cursor with \
         MDB_APPEND, MDB_WRITEMAP|MDB_NOSYNC; median {} with its 95% interval over interleaved \
         rounds, deltas against {} as in the report. \"Reported\" is the ITS#10406 table \
         (LmdbJava through JNI, Ryzen 9 7900).",
        m.config.entries, m.config.value_size, r.unit, m.baseline
    ));
    for e in &r.engines {
        d.heading(2, format!("Write Entry, {} engine", e.engine));
        if let Some(t) = table(m, e.engine) {
            d.table(t);
            d.chart(e.engine, Workload::Write);
        }
        if let Some(s) = m.section(e.engine, Workload::Write) {
            d.list(cells::section_notes(m, s));
        }
        d.heading(3, CLAIMS_HEADING);
        d.list(e.claims.iter().map(|c| c.sentence.clone()).collect());
        d.para(format!(
            "Claims are judged by size, simultaneous at 95% over the {} claims: reproduces (slower, the \
             interval holds the claimed size), reproduces but smaller/larger (the whole interval \
             below/above it), does not reproduce (within {}, or faster), smaller than claimed, if \
             any (not resolved, but the whole interval below the claimed size), inconclusive (not \
             resolved).",
            CLAIMS.len(),
            cells::within(100.0 * m.rule.min_effect)
        ));
        let time_only: Vec<String> = e
            .claims
            .iter()
            .filter(|c| c.time_only)
            .map(|c| {
                format!(
                    "{} -> {}: time only (instructions {}).",
                    short(&c.from),
                    short(&c.to),
                    c.instructions_ratio.map(cells::ratio_percent).unwrap_or_default()
                )
            })
            .collect();
        d.list(time_only);
    }
    if !r.missing.is_empty() {
        d.heading(2, "Not measured");
        d.list(r.missing.iter().map(|(t, why)| format!("{t}: {why}")).collect());
    }
    d.heading(2, "Method");
    d.list(crate::report::method::method_lines(m));
    d.environment(m);
    d
}

const CLAIMS_HEADING: &str = "The report's claims";

/// Each measured claim against its own baseline: the model's estimate and interval, the
/// size claimed beside it, instructions per entry where counted; None when none was measured.
pub fn claims_chart(e: &EngineResult, m: &ReportModel) -> anyhow::Result<Option<String>> {
    let points: Vec<RatioPoint> = e
        .claims
        .iter()
        .filter(|c| c.measured.is_some())
        .map(|c| RatioPoint {
            label: format!("{} → {}", short(&c.from), short(&c.to)),
            comparison: c.measured.clone(),
            time_only: c.time_only,
            instructions: c.instructions_ratio,
            claimed: Some(1.0 + c.reported_pct / 100.0),
            newest: false,
            side: None,
            tip: c.sentence.clone(),
        })
        .collect();
    if points.is_empty() {
        return Ok(None);
    }
    let chart = RatioChart {
        title: format!("ITS#10406's claims, {} engine, each against its own baseline", e.engine),
        against: "each claim's baseline".into(),
        x_desc: "claim".into(),
        min_effect: m.rule.min_effect,
        points,
    };
    svg::ratios(&chart).map(Some)
}

/// The command's result: the claims judged, each reproduced one attributed to functions,
/// and the run's report.
pub struct ItsResult<'m> {
    pub report: ItsReport,
    pub attributions: Vec<Attribution>,
    pub model: &'m ReportModel,
}

/// A claim as scripts read it: its engine beside its fields.
#[derive(Serialize)]
struct EngineClaim<'a> {
    engine: Engine,
    #[serde(flatten)]
    claim: &'a Claim,
}

impl Serialize for ItsResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeStruct};
        let claims: Vec<EngineClaim> = (self.report.engines.iter())
            .flat_map(|e| e.claims.iter().map(|claim| EngineClaim { engine: e.engine, claim }))
            .collect();
        let report: serde_json::Value = crate::report::json::render(self.model)
            .and_then(|j| Ok(serde_json::from_str(&j)?))
            .map_err(|e| S::Error::custom(format!("{e:#}")))?;
        let mut st = s.serialize_struct("ItsResult", 4)?;
        st.serialize_field("claims", &claims)?;
        st.serialize_field("its_10406", &self.report)?;
        st.serialize_field("attributions", &self.attributions)?;
        st.serialize_field("report", &report)?;
        st.end()
    }
}

impl Shown for ItsResult<'_> {
    const KIND: &'static str = "lmdb-regress-its-10406";
    const SCHEMA: u32 = 2;

    /// The report's table with ours beside it, the verdicts, what is missing, then where
    /// the instructions of each reproduced claim went.
    fn outline(&self) -> Document {
        let mut d = outline(&self.report, self.model);
        for a in &self.attributions {
            d.heading(2, format!("Where the instructions went: {} against {}", a.bad, a.good));
            d.list(a.lines(ATTRIBUTED));
        }
        d
    }

    /// The outline's items, each engine's claims chart after its claims.
    fn html_items<'d>(&self, d: &'d Document) -> anyhow::Result<Vec<Item<'d>>> {
        let mut items = html::items(d, Some(self.model))?;
        let headings: Vec<usize> = (0..items.len())
            .filter(|&i| matches!(items[i], Item::Block(Block::Heading(3, t)) if t == CLAIMS_HEADING))
            .collect();
        // After each heading's list of claims; from the last, so earlier positions hold.
        for (&at, e) in headings.iter().zip(&self.report.engines).rev() {
            if let Some(svg) = claims_chart(e, self.model)? {
                items.insert((at + 2).min(items.len()), Item::Markup(html::figure(&svg)));
            }
        }
        Ok(items)
    }
}

/// Functions named for each claim that reproduces.
pub const ATTRIBUTED: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Interval, Method};

    fn cmp(lo: f64, hi: f64) -> Comparison {
        let ci = Some(Interval { lo, hi });
        Comparison {
            ratio: (lo + hi) / 2.0,
            ci,
            confidence: 0.983,
            n: 20,
            method: Method::Paired,
            verdict: crate::stats::ratio::judge(ci, 0.02),
        }
    }

    fn sample(tag: &str, round: u32, ns: f64) -> Sample {
        let unit = crate::record::fixtures::unit_sample(&Label::build(tag, None));
        Sample { round, workload: Workload::Write, ns: ns as u64, ..unit }
    }

    /// Twelve rounds in which 0.9.18 and 0.9.20 each move ±0.6% against 0.9.17, in
    /// opposite directions, so each comparison with the baseline closes within ±1% at its
    /// first look while the claim between them moves ±1.2% and does not: the baseline's
    /// judgement alone would stop measuring both, the claims' keeps both in every round.
    /// 0.9.19 moves with 0.9.18 and 0.9.33 not at all: their claims close.
    #[test]
    fn a_claims_tags_are_measured_until_the_claim_closes() {
        let wobble = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8, 0.2, -0.2, 1.0, -1.0, 0.3];
        let mut samples = Vec::new();
        for (r, w) in (0..12u32).zip(wobble) {
            let (base, e) = (1e8 * (1.0 + 0.01 * r as f64), 0.006 * w);
            samples.push(sample("LMDB_0.9.17", r, base));
            samples.push(sample("LMDB_0.9.18", r, base * (1.0 + e)));
            samples.push(sample("LMDB_0.9.19", r, base * (1.0 + e)));
            samples.push(sample("LMDB_0.9.20", r, base * 1.08 * (1.0 - e)));
            samples.push(sample("LMDB_0.9.33", r, base * 1.08));
        }
        let target = Some(Target { percent: 1.0, closing: crate::record::Closing::DecidedAndWithin });
        let args = (&samples[..], None, target, (Metric::Time, 0.02), None, ReferenceLayouts::Exactly(1));
        let key = (Engine::Rust, Workload::Write);
        let tag = |t: &str| Label::build(t, None);
        let baseline = stop::progress(args.0, args.1, args.2, args.3, args.4, args.5);
        assert_eq!(baseline.sections[&key].closed.len(), 4, "{baseline:?}");
        assert!(baseline.settled());
        let claims = progress(args.0, args.1, args.2, args.3, args.4, args.5);
        let s = &claims.sections[&key];
        assert_eq!(s.open, [(tag("LMDB_0.9.18"), 1.0), (tag("LMDB_0.9.20"), 1.0)].into(), "{s:?}");
        assert_eq!(s.closed, [tag("LMDB_0.9.19"), tag("LMDB_0.9.33")].into());
        assert!(!claims.settled());
    }

    #[test]
    fn claims_are_judged_by_size() {
        let claimed = 1.114;
        assert_eq!(judge_claim(Some(&cmp(1.132, 1.280)), claimed), ClaimVerdict::Larger);
        assert_eq!(judge_claim(Some(&cmp(1.063, 1.113)), claimed), ClaimVerdict::Smaller);
        assert_eq!(judge_claim(Some(&cmp(1.08, 1.15)), claimed), ClaimVerdict::Reproduces);
        assert_eq!(judge_claim(Some(&cmp(0.99, 1.01)), claimed), ClaimVerdict::DoesNotReproduce);
        assert_eq!(judge_claim(Some(&cmp(0.97, 1.05)), claimed), ClaimVerdict::RuledOut);
        assert_eq!(judge_claim(Some(&cmp(0.97, 1.12)), claimed), ClaimVerdict::Inconclusive);
        assert_eq!(judge_claim(None, claimed), ClaimVerdict::NotMeasured);
    }
}
