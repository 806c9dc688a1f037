//! `lmdb-regress bisect`: confirm a slowdown between two tags, narrow it to a tag, then
//! (with a git repository) to the commit — each probe decided by an interleaved run
//! against both ends, built on demand, skipped when it cannot be built or measured.
//! Ctrl-C is no skip: it stops the search, which returns what it decided so far.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use anyhow::Result;
use serde::Serialize;

use super::search::{self, decide, ProbeVerdict, SearchOutcome};
use crate::compile::{BuildKind, Toolchain};
use crate::layout::{self, Linker};
use crate::manifest::Manifest;
use crate::matrix::{self, MatrixOptions, MatrixToolchain, Status};
use crate::record::{self, EndReason, Engine, Layouts, Metric, Pairing, Plan, RunWriter, Sample, TagStatus};
use crate::report::cells;
use crate::runner::counter::Counter;
pub use crate::runner::SearchPhase;
use crate::runner::{self, Interrupted, Label, RunSpec, SearchStep, Stage, Unit};
use crate::source::{GitRepo, Want};
use crate::stats::family::{self, Rounds, Rule};
use crate::stats::{self, Comparison};
use crate::workload::{Workload, WorkloadConfig};

mod crash;
mod page;

pub use page::{phase_heading, probes_chart, BisectSummary, ATTRIBUTED};

/// What makes a probe bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BadIf {
    /// It differs from the good end by the threshold, as the bad end does (slower, or
    /// faster by its inverse).
    Change,
    /// Its worker dies running the workload (a signal such as an abort, a non-zero exit,
    /// the watchdog), as the bad end's does; it is good when it gives a sample.
    Crash,
}

pub struct Settings {
    /// Progress lines to stderr, leaving stdout to the one document printed at the end.
    pub progress_to_stderr: bool,
    pub bad_if: BadIf,
    pub workload: Workload,
    pub cfg: WorkloadConfig,
    pub metric: Metric,
    /// Percent by which bad must be slower than good to be worth bisecting.
    pub threshold: f64,
    pub min_rounds: u32,
    pub max_rounds: u32,
    pub warmup: u32,
    /// Where each interleaved run's file goes.
    pub run_dir: PathBuf,
    pub rule: Rule,
    /// `--metric auto`: a probe time leaves undecided at the round cap is decided by
    /// instruction counts with this counter.
    pub fallback: Option<Counter>,
    /// Entries of every counted run (counts are exact and reported per entry).
    pub count_entries: u32,
    /// Worker processes at once for untimed and counted work.
    pub jobs: usize,
    /// Random layouts for the timed runs (counting runs use the fixed builds), each run's
    /// seed derived from this one and the run's name.
    pub layouts: Layouts,
    pub layout_seed: u64,
    /// Layouts of each probe in a timed run's paired process (`--layouts-per-process`).
    pub layouts_per_process: u32,
    /// How the timed runs pair their samples, and their chunk size.
    pub pairing: (Pairing, Option<u32>),
    /// Whether run files left in `run_dir` by an earlier search may be replaced (`--force`).
    pub existing: crate::files::Existing,
}

/// A probe as its run file's header lists it: built, with its library (the build records
/// are in the search's log and bisect.json).
fn probe_status(u: &Unit) -> TagStatus {
    TagStatus {
        label: u.label.clone(),
        commit: None,
        status: record::BuildStatus::Built,
        library: u.library.clone(),
        provenance: None,
        matches: None,
        files: Default::default(),
        reason: None,
        builds: Vec::new(),
    }
}

/// Builds and measures; owns everything a probe needs.
pub struct Bisector<'a> {
    pub manifest: &'a Manifest,
    pub opts: MatrixOptions,
    pub settings: Settings,
    pub counter: Option<Counter>,
    pub git: Option<GitRepo>,
    /// Every line printed, for the caller to keep.
    pub log: Vec<String>,
    runs: usize,
    /// Instruction counts already taken in this search, by label: they repeat (every
    /// counting run checks so), so the ends are counted once, not at every probe.
    counted: BTreeMap<Label, Vec<Sample>>,
    /// lld, when the timed runs link random layouts.
    linker: Option<Linker>,
}

/// The end of a search phase, with the measured step.
#[derive(Debug, Serialize)]
pub struct Found {
    pub phase: SearchPhase,
    pub outcome: SearchOutcome,
    pub candidates: Vec<String>,
    /// Last good → first bad, from a final interleaved run (None if unresolved).
    pub step: Option<Comparison>,
    pub first_bad_info: Option<String>,
    /// Ctrl-C stopped this phase: `outcome` holds what was decided before it.
    pub interrupted: bool,
    /// Each measured probe against the good end, as its own run compared them, by candidate.
    pub vs_good: BTreeMap<String, Comparison>,
    /// The bad end against the good end, in the last probe's run.
    pub bad_vs_good: Option<Comparison>,
}

/// A probe's run, compared to the good end: the probe's ratio and the bad end's.
#[derive(Default)]
struct ToGood {
    probe: Option<Comparison>,
    bad: Option<Comparison>,
}

impl<'a> Bisector<'a> {
    pub fn new(
        manifest: &'a Manifest,
        opts: MatrixOptions,
        settings: Settings,
        counter: Option<Counter>,
    ) -> Result<Self> {
        if opts.toolchains.len() != 1 {
            anyhow::bail!("a bisection builds every probe by one toolchain, not {}", opts.toolchains.len());
        }
        let git = match &opts.resolver.git {
            Some(p) => Some(GitRepo::open(p)?),
            None => None,
        };
        let linker = match settings.layouts {
            Layouts::Random => Some(Linker::probe(&opts.toolchains[0].toolchain)?),
            Layouts::Fixed => None,
        };
        let (log, counted) = (Vec::new(), BTreeMap::new());
        Ok(Bisector { manifest, opts, settings, counter, git, log, runs: 0, counted, linker })
    }

    /// Ctrl-C during `step`: an error that ends the search, never a skipped probe.
    fn stopped(&self, step: SearchStep) -> Interrupted {
        let then = format!("the runs so far are in {}", self.settings.run_dir.display());
        Interrupted { stage: Stage::Search(step), then }
    }

    fn say(&mut self, line: String) {
        match self.settings.progress_to_stderr {
            true => eprintln!("{line}"),
            false => println!("{line}"),
        }
        self.log.push(line);
    }

    fn want(&self, label: &str) -> Want<'a> {
        match self.manifest.find(label) {
            Some(t) => Want::Tag(t),
            None => Want::Commit(label.to_string()),
        }
    }

    /// Builds one candidate (and with random layouts its objects); Err is the reason to skip it.
    pub fn unit(&self, label: &str) -> Result<Unit, String> {
        // Probes keep their plain labels: the one toolchain is in the log and bisect.json.
        let want = self.want(label);
        let st = matrix::build_one(&want, &MatrixToolchain::only(self.toolchain().clone()), &self.opts);
        let build = match (st.status, st.build(BuildKind::SharedLibrary)) {
            (Status::Built, Some(b)) => b,
            (status, _) => return Err(format!("{status:?}: {}", st.reason.unwrap_or_default())),
        };
        let lib = build.artifact.clone();
        let mut unit = Unit::of_build(Engine::Rust, Label::build(label, None), build).map_err(|e| format!("{e:#}"))?;
        if let Some(linker) = &self.linker {
            let source = layout::prepare(&want, self.toolchain(), linker, BuildKind::SharedLibrary, &self.opts, &lib)
                .map_err(|e| format!("no layouts: {e:#}"))?;
            unit.relink = Some(std::sync::Arc::new(source));
        }
        Ok(unit)
    }

    /// The toolchain every probe is built by.
    pub fn toolchain(&self) -> &Toolchain {
        &self.opts.toolchains[0].toolchain
    }

    fn values(&self, samples: &[Sample], label: &Label) -> Rounds {
        tag_values(samples, label, self.settings.metric)
    }

    /// The rule a metric is judged by.
    fn rule(&self) -> Rule {
        self.settings.rule.for_metric(self.settings.metric)
    }

    /// The entries a pass by `metric` runs: exact counts repeat, so a counting pass runs
    /// the fewer entries of `--count-entries`.
    fn entries_for(&self, metric: Metric) -> u32 {
        if metric.is_exact() {
            self.settings.count_entries
        } else {
            self.settings.cfg.entries
        }
    }

    /// How many probe decisions share the error rate: the search's expected depth.
    fn probe_family(candidates: usize) -> usize {
        (usize::BITS - candidates.max(2).leading_zeros()) as usize
    }

    /// One interleaved run of `units`, by the search's metric, until `stop` says so or the
    /// round cap.
    fn interleave(
        &mut self,
        name: &str,
        units: Vec<Unit>,
        stop: &(dyn Fn(&[Sample]) -> bool + Sync),
    ) -> Result<Vec<Sample>> {
        let s = &self.settings;
        let pass = PassSettings {
            metric: s.metric,
            counter: self.counter.clone(),
            min_rounds: s.min_rounds,
            max_rounds: s.max_rounds,
            warmup: s.warmup,
        };
        // Exact counts repeat: each unit is counted once, and its samples kept for later runs.
        if !s.metric.is_exact() {
            return Ok(self.run_pass(name, units, stop, pass)?.samples);
        }
        let fresh: Vec<Unit> = units.iter().filter(|u| !self.counted.contains_key(&u.label)).cloned().collect();
        if !fresh.is_empty() {
            for x in self.run_pass(name, fresh, stop, pass)?.samples {
                self.counted.entry(x.unit.clone()).or_default().push(x);
            }
        }
        Ok(units.iter().filter_map(|u| self.counted.get(&u.label)).flatten().cloned().collect())
    }

    fn run_pass(
        &mut self,
        name: &str,
        units: Vec<Unit>,
        stop: &(dyn Fn(&[Sample]) -> bool + Sync),
        pass: PassSettings,
    ) -> Result<record::RunData> {
        self.runs += 1;
        let entries = self.entries_for(pass.metric);
        let s = &self.settings;
        // Exact counts are taken under each unit's one layout, as `run` takes them.
        let random = !pass.metric.is_exact() && s.layouts == Layouts::Random;
        let plan = Plan {
            min_effect: Some(s.rule.min_effect),
            layouts: if random { Layouts::Random } else { Layouts::Fixed },
            layout_seed: random.then(|| layout::seed(s.layout_seed, &[name]) as u64),
            pairing: if pass.metric.is_exact() { Pairing::Process } else { s.pairing.0 },
            chunk: if pass.metric.is_exact() { None } else { s.pairing.1 },
            layouts_per_process: if random { s.layouts_per_process } else { 1 },
            ..Plan::new(pass.max_rounds, pass.warmup, pass.metric)
        };
        // At the counting size a preset's own settings follow the entries (open-get's key).
        let config = s.cfg.with_entries(&[s.workload], entries)?;
        let spec = RunSpec {
            units,
            workloads: vec![s.workload],
            engines: vec![Engine::Rust],
            config,
            plan,
            counter: pass.counter,
            jobs: s.jobs,
            judge: crate::stats::stop::progress,
        };
        // The probes as tags, so that the run file lists every tag its samples name.
        let header = spec.header(spec.units.iter().map(probe_status).collect())?;
        let path = s.run_dir.join(format!("{:02}-{}.jsonl", self.runs, runner::sanitize(name)));
        let mut w = RunWriter::create(&path, &header, s.existing)?;
        let min_rounds = pass.min_rounds;
        let enough = |xs: &[Sample]| xs.iter().map(|x| x.round + 1).max().unwrap_or(0) >= min_rounds && stop(xs);
        let out = spec.start_until(&enough, &mut w)?;
        if out.end.reason == EndReason::Interrupted {
            let newest = header
                .tags
                .last()
                .map(|t| t.label.clone())
                .ok_or_else(|| anyhow::anyhow!("a probe run measures its probes"))?;
            return Err(self.stopped(SearchStep::Measuring(newest)).into());
        }
        crate::record::load(&path)
    }

    /// A tag's median per operation, as every report shows it (`Sample::per_op`, over the
    /// entries the search's passes ran), with its unit and number of rounds.
    fn fmt_values(&self, samples: &[Sample], label: &Label) -> String {
        let (metric, workload) = (self.settings.metric, self.settings.workload);
        let entries = self.entries_for(metric);
        let per_op =
            samples.iter().filter(|s| s.unit == *label).filter_map(|s| Some((s.round, s.per_op(metric, entries)?)));
        let v: Vec<f64> = family::per_round(per_op).into_values().collect();
        let unit = metric.unit_of(workload);
        match stats::summarize(&v) {
            Some(s) => format!("{} {unit} n={}", cells::num(s.median), s.n),
            None => "no samples".into(),
        }
    }

    /// A against B: true when B differs, beyond doubt, by at least the threshold: slower by
    /// it, or faster by its inverse (an improvement, searched as a slowdown is: its first
    /// commit is the first "bad").
    pub fn confirm(&mut self, good: &Unit, bad: &Unit) -> Result<(bool, Option<Comparison>)> {
        if self.settings.bad_if == BadIf::Crash {
            return Ok((self.confirm_crash(good, bad)?, None));
        }
        let (g, b) = (&good.label, &bad.label);
        let thr = 1.0 + self.settings.threshold / 100.0;
        let (metric, rule) = (self.settings.metric, self.rule());
        // Decided once the interval lies wholly on one side of each threshold.
        let stop = |xs: &[Sample]| {
            let v = |t: &Label| tag_values(xs, t, metric);
            let decided = |i: stats::Interval| [thr, 1.0 / thr].iter().all(|t| i.lo > *t || i.hi < *t);
            family::compare(&v(g), &v(b), 1, &rule).and_then(|c| c.ci).is_some_and(decided)
        };
        let samples = self.interleave(&format!("confirm-{g}-{b}"), vec![good.clone(), bad.clone()], &stop)?;
        let (gv, bv) = (self.values(&samples, g), self.values(&samples, b));
        let cmp = family::compare(&gv, &bv, 1, &rule);
        let line = format!(
            "confirm: {g} {} vs {b} {}: {}",
            self.fmt_values(&samples, g),
            self.fmt_values(&samples, b),
            cmp.as_ref().map(cells::delta_line).unwrap_or_else(|| "not measured".into())
        );
        self.say(line);
        let changed = cmp.as_ref().is_some_and(|c| match c.verdict {
            stats::Verdict::Slower => c.ratio >= thr,
            stats::Verdict::Faster => c.ratio <= 1.0 / thr,
            _ => false,
        });
        if changed && cmp.as_ref().is_some_and(|c| c.verdict == stats::Verdict::Faster) {
            self.say(format!(
                "{b} is faster: an improvement, searched as a slowdown is (its first commit is the first bad)"
            ));
        }
        Ok((changed, cmp))
    }

    /// Ctrl-C (before, or while building or measuring) is an `Interrupted` error.
    fn probe(&mut self, good: &Unit, bad: &Unit, label: &str, family: usize) -> Result<(ProbeVerdict, String, ToGood)> {
        let interrupted = || runner::interrupt_flag().load(Ordering::SeqCst);
        let stop_here = || self.stopped(SearchStep::Measuring(Label::build(label, None)));
        if interrupted() {
            return Err(stop_here().into());
        }
        let unit = match self.unit(label) {
            Ok(u) => u,
            // Ctrl-C reaches the compiler too: its failure is no reason to skip.
            Err(_) if interrupted() => return Err(stop_here().into()),
            Err(e) => return Ok((ProbeVerdict::Skipped(format!("not built: {e}")), String::new(), ToGood::default())),
        };
        if self.settings.bad_if == BadIf::Crash {
            let (verdict, detail) = self.probe_crash(unit)?;
            return Ok((verdict, detail, ToGood::default()));
        }
        let (g, b, p) = (good.label.clone(), bad.label.clone(), unit.label.clone());
        let (metric, rule) = (self.settings.metric, self.rule());
        let stop = |xs: &[Sample]| {
            let v = |t: &Label| tag_values(xs, t, metric);
            decide(&v(&g), &v(&b), &v(&p), family, &rule).0.is_some()
        };
        let units = vec![good.clone(), bad.clone(), unit];
        let samples = match self.interleave(&format!("probe-{label}"), units.clone(), &stop) {
            Ok(s) => s,
            Err(e) if e.is::<Interrupted>() => return Err(e),
            Err(e) => return Ok((ProbeVerdict::Skipped(format!("{e:#}")), String::new(), ToGood::default())),
        };
        let pv = self.values(&samples, &p);
        if pv.is_empty() {
            let why = "no sample: the probe's worker failed (see its run file)";
            return Ok((ProbeVerdict::Skipped(why.into()), String::new(), ToGood::default()));
        }
        let (gv, bv) = (self.values(&samples, &g), self.values(&samples, &b));
        let to_good =
            ToGood { probe: family::compare(&gv, &pv, family, &rule), bad: family::compare(&gv, &bv, family, &rule) };
        let (verdict, pos) = decide(&gv, &bv, &pv, family, &rule);
        let mut detail = format!(
            "{}{}",
            self.fmt_values(&samples, &p),
            pos.map(|p| format!(", position {} from good (0) to bad (1)", position(&p))).unwrap_or_default()
        );
        if verdict.is_none() {
            if let Some(v) = self.decide_by_counts(units, &g, &b, &p, &mut detail)? {
                return Ok((v, detail, to_good));
            }
        }
        Ok((verdict.unwrap_or(ProbeVerdict::Undecided), detail, to_good))
    }

    /// `--metric auto`: time left the probe undecided, so one counting run decides it.
    /// Ctrl-C propagates; a counting run that fails leaves the probe undecided, and says so.
    fn decide_by_counts(
        &mut self,
        units: Vec<Unit>,
        g: &Label,
        b: &Label,
        p: &Label,
        detail: &mut String,
    ) -> Result<Option<ProbeVerdict>> {
        let Some(counter) = self.settings.fallback.clone() else { return Ok(None) };
        let pass = PassSettings {
            metric: Metric::Instructions,
            counter: Some(counter),
            min_rounds: 1,
            max_rounds: 1,
            warmup: 0,
        };
        let samples = match self.run_pass(&format!("probe-{p}-instructions"), units, &|_| true, pass) {
            Ok(run) => run.samples,
            Err(e) if e.is::<Interrupted>() => return Err(e),
            Err(e) => {
                detail.push_str(&format!("; counting instructions failed too: {e:#}"));
                return Ok(None);
            }
        };
        let v = |t: &Label| tag_values(&samples, t, Metric::Instructions);
        let rule = self.settings.rule.for_metric(Metric::Instructions);
        let (verdict, pos) = decide(&v(g), &v(b), &v(p), 1, &rule);
        detail.push_str(&format!(
            "; undecided by time at the round cap, so decided by instruction counts{}",
            pos.map(|x| format!(" (position {})", position(&x))).unwrap_or_default()
        ));
        Ok(verdict)
    }

    /// Searches `candidates` (first good, last bad), printing every step.
    pub fn search(&mut self, phase: SearchPhase, candidates: Vec<String>, good: &Unit, bad: &Unit) -> Result<Found> {
        let total = candidates.len().saturating_sub(2);
        self.say(format!(
            "{phase}: {} between {} and {}",
            cells::plural(total, "candidate"),
            candidates[0],
            candidates[candidates.len() - 1]
        ));
        let mut n = 0;
        let family = Self::probe_family(total);
        let mut interrupted = false;
        let (mut vs_good, mut bad_vs_good) = (BTreeMap::new(), None);
        let mut probe = |label: &str| {
            n += 1;
            let (v, detail, to_good) = match self.probe(good, bad, label, family) {
                Ok(measured) => measured,
                // Undecided ends the search at once; the step is taken back below.
                Err(_) => {
                    interrupted = true;
                    return (ProbeVerdict::Undecided, String::new());
                }
            };
            let verdict = match &v {
                ProbeVerdict::Skipped(why) => format!("skipped ({why})"),
                other => format!("{other:?}").to_lowercase(),
            };
            self.say(format!("  probe {n}: {label}: {detail} → {verdict}"));
            if let Some(c) = to_good.probe {
                vs_good.insert(label.to_string(), c);
            }
            bad_vs_good = to_good.bad.or(bad_vs_good.take());
            (v, detail)
        };
        let mut outcome = search::bisect(&candidates, &mut probe);
        if interrupted {
            // The interrupted probe decided nothing.
            outcome.steps.pop();
            outcome.stopped_undecided = false;
        }
        let (lg, fb) = (candidates[outcome.last_good].clone(), candidates[outcome.first_bad].clone());
        let mut found =
            Found { phase, outcome, candidates, step: None, first_bad_info: None, interrupted, vs_good, bad_vs_good };
        if interrupted {
            self.say(format!(
                "{phase}: interrupted; decided so far: the first bad one is after {lg}, at {fb} at the latest"
            ));
            return Ok(found);
        }
        if !found.outcome.resolved() {
            let between: Vec<&str> = found.candidates[found.outcome.last_good + 1..found.outcome.first_bad]
                .iter()
                .map(String::as_str)
                .collect();
            self.say(format!(
                "{phase}: unresolved{}: the first bad one is {fb} or one of [{}] after {lg}",
                if found.outcome.stopped_undecided { " (a probe stayed undecided at the round cap)" } else { "" },
                between.join(", ")
            ));
            return Ok(found);
        }
        if self.settings.bad_if == BadIf::Crash {
            found.first_bad_info = Some(self.describe(&fb));
            let info = found.first_bad_info.as_deref().unwrap_or("");
            let w = self.settings.workload;
            self.say(format!("{phase}: first bad is {fb} ({info}): the worker dies there on {w}, and ran at {lg}"));
            return Ok(found);
        }
        // The step itself, measured head to head.
        let (ul, ub) = (self.unit(&lg).map_err(anyhow::Error::msg)?, self.unit(&fb).map_err(anyhow::Error::msg)?);
        let (good, bad) = (ul.label.clone(), ub.label.clone());
        let (metric, rule) = (self.settings.metric, self.rule());
        let stop = |xs: &[Sample]| {
            let v = |t: &Label| tag_values(xs, t, metric);
            family::compare(&v(&good), &v(&bad), 1, &rule).is_some_and(|c| c.verdict.is_change())
        };
        let samples = match self.interleave(&format!("step-{lg}-{fb}"), vec![ul, ub], &stop) {
            Ok(s) => s,
            Err(e) if e.is::<Interrupted>() => {
                found.interrupted = true;
                self.say(format!("{phase}: first bad is {fb}; interrupted before the step from {lg} was measured"));
                return Ok(found);
            }
            Err(e) => return Err(e),
        };
        let (gv, bv) = (self.values(&samples, &good), self.values(&samples, &bad));
        found.step = family::compare(&gv, &bv, 1, &rule);
        found.first_bad_info = Some(self.describe(&fb));
        self.say(format!(
            "{phase}: first bad is {fb} ({}); step from {lg}: {}",
            found.first_bad_info.as_deref().unwrap_or(""),
            found.step.as_ref().map(cells::delta_line).unwrap_or_else(|| "not measured".into())
        ));
        Ok(found)
    }

    /// Subject and author date of a tag or commit, with the commit id unless the label is
    /// that id already.
    pub fn describe(&self, label: &str) -> String {
        let rev = match self.manifest.find(label) {
            Some(t) => t.commit.clone(),
            None => label.to_string(),
        };
        let id = (!rev.starts_with(label)).then(|| format!("commit {rev}"));
        let info = self.git.as_ref().and_then(|g| g.resolve(&rev).ok().and_then(|id| g.info(&id).ok()));
        let said = info.map(|i| format!("\"{}\", {}", i.subject, i.author_date));
        [id, said].into_iter().flatten().collect::<Vec<_>>().join(", ")
    }

    /// The liblmdb commits after `good` up to `bad` (first-parent), as candidates.
    pub fn commit_candidates(&self, good: &str, bad: &str) -> Result<Vec<String>> {
        let git = self.git.as_ref().ok_or_else(|| anyhow::anyhow!("commits need --git"))?;
        let rev = |l: &str| -> Result<String> {
            match self.manifest.find(l) {
                Some(t) => git.resolve(&t.name).or_else(|_| git.resolve(&t.commit)),
                None => git.resolve(l),
            }
        };
        let (g, b) = (rev(good)?, rev(bad)?);
        let mut commits = git.commits_between(&g, &b)?;
        // The bad end is known bad: it closes the list under its own name.
        if commits.last() == Some(&b) {
            commits.pop();
        }
        let mut out = vec![good.to_string()];
        out.extend(commits);
        out.push(bad.to_string());
        Ok(out)
    }
}

/// How one interleaved run measures: by which metric, with which counter, how long.
struct PassSettings {
    metric: Metric,
    counter: Option<Counter>,
    min_rounds: u32,
    max_rounds: u32,
    warmup: u32,
}

/// Where a probe lies from good (0) to bad (1), never "-0.00".
fn position(p: &search::Position) -> String {
    let at = if p.at.abs() < 0.005 { 0.0 } else { p.at };
    format!("{at:.2}")
}

/// One tag's values under a metric, one per round, as comparisons pair them (chunk-paired
/// samples against the run's other units: `stats::chunks`).
fn tag_values(samples: &[Sample], label: &Label, metric: Metric) -> Rounds {
    let mut grouped = stats::chunks::group_by(samples, |s| s.value(metric), metric).compared;
    grouped.remove(label).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_never_read_minus_zero() {
        let at = |at: f64| position(&search::Position { at });
        assert_eq!(
            (at(-0.0001), at(0.0), at(0.999), at(0.5)),
            ("0.00".into(), "0.00".into(), "1.00".into(), "0.50".into())
        );
        assert_eq!(at(-0.25), "-0.25");
    }
}
