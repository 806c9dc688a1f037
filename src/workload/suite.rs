//! Suites: LmdbJava's six workloads, and each preset, as one abstraction with one
//! lifecycle: prepare (once per run and tag), verify (once per run and unit, before
//! timing, or inside every timed pass), run. Each suite declares its workloads, the read
//! database it writes, how its reads are verified, how it runs, the timed functions an
//! instruction counter looks for, and the checksums a correct pass must produce. The
//! runner and the worker ask the suite; neither tells presets from the six.

use std::fmt;
use std::path::Path;

use anyhow::{bail, Result};

use super::lmdb::Api;
use super::measure::{Outcome, Places, TimedFunctions};
use super::perf::PerfCounter;
use super::presets::{self, Preset, PresetConfig};
use super::settings::EnvSettings;
use super::{dataset, native, session, Checksum, Dataset, Workload, WorkloadConfig};

/// The lmdb suite's counting size: [`Suite::count_entries`].
pub const LMDB_COUNT_ENTRIES: u32 = 10_000;

/// A set of workloads that share a dataset, a read database and a way to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suite {
    /// LmdbJava's six workloads (`native`, harness/workloads.c).
    LmdbJava,
    /// The presets (`presets`, harness/presets.c).
    TokyoCabinet,
    OpenGet,
    Migrate,
    /// LMDB's own shapes (`presets::lmdb_suite`, harness/lmdb_suite.c), one row each of
    /// harness/lmdb_suite.def.
    Lmdb,
    /// Readers beside a writer (`presets::concurrency`), the Rust engine's only.
    Concurrency,
    /// Programs of the user's (`run --program`): each run whole by the runner, in a
    /// process of its own; no read database, nothing to verify, no worker.
    Programs,
}

/// What `--suite` names: LmdbJava's six, the lmdb suite, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SuiteChoice {
    Lmdbjava,
    Lmdb,
    Concurrency,
    All,
}

impl SuiteChoice {
    pub fn suites(self) -> Vec<Suite> {
        match self {
            SuiteChoice::Lmdbjava => vec![Suite::LmdbJava],
            SuiteChoice::Lmdb => vec![Suite::Lmdb],
            SuiteChoice::Concurrency => vec![Suite::Concurrency],
            SuiteChoice::All => vec![Suite::LmdbJava, Suite::Lmdb, Suite::Concurrency],
        }
    }

    /// The choice of `suite` alone, where `--suite` can name it.
    pub fn one(suite: Suite) -> Option<SuiteChoice> {
        [SuiteChoice::Lmdbjava, SuiteChoice::Lmdb, SuiteChoice::Concurrency].into_iter().find(|c| c.suites() == [suite])
    }

    /// The preset of a one-suite choice (None: LmdbJava's six); None for `all`.
    pub fn single(self) -> Option<Option<Preset>> {
        match self {
            SuiteChoice::Lmdbjava => Some(None),
            SuiteChoice::Lmdb => Some(Some(Preset::Lmdb)),
            SuiteChoice::Concurrency => Some(Some(Preset::Concurrency)),
            SuiteChoice::All => None,
        }
    }

    /// Refuses a workload that is none of this choice's suites'.
    pub fn holds(self, workloads: &[Workload]) -> Result<()> {
        let suites = self.suites();
        match workloads.iter().find(|w| !suites.contains(&w.suite())) {
            Some(w) => bail!(
                "{w} is {}'s, not of --suite {} (lmdb-regress workloads lists each suite's)",
                w.suite(),
                self.name()
            ),
            None => Ok(()),
        }
    }

    /// The workloads `list` names (`all`: every workload of this choice's suites), a
    /// group per suite in this choice's order; suites none of whose workloads it names
    /// are left out, and a name of another suite is refused.
    pub fn split(self, list: &str) -> Result<Vec<(Suite, Vec<Workload>)>> {
        let suites = self.suites();
        let workloads: Vec<Workload> = match list.trim() {
            "all" => suites.iter().flat_map(|s| s.workloads()).collect(),
            list => Workload::parse_list(list)?,
        };
        self.holds(&workloads)?;
        let of = |s: &Suite| workloads.iter().copied().filter(|w| w.suite() == *s).collect::<Vec<_>>();
        Ok(suites.iter().map(|s| (*s, of(s))).filter(|(_, w)| !w.is_empty()).collect())
    }

    pub fn name(self) -> &'static str {
        match self {
            SuiteChoice::Lmdbjava => "lmdbjava",
            SuiteChoice::Lmdb => "lmdb",
            SuiteChoice::Concurrency => "concurrency",
            SuiteChoice::All => "all",
        }
    }
}

/// The workloads `list` names (or `all` of them) in `preset`'s suite (None: LmdbJava's
/// six), and the suite they are of; names of another suite are refused.
pub fn workloads_of(preset: Option<Preset>, list: &str) -> Result<(Vec<Workload>, Option<Preset>)> {
    let workloads = match preset {
        Some(p) if list.trim() == "all" => p.workloads(),
        _ => Workload::parse_list(list)?,
    };
    match (preset, Suite::of(&workloads)?.preset()) {
        (Some(asked), found) if found != Some(asked) => {
            bail!("--workloads {list} are not all of the preset {asked} (`lmdb-regress workloads` lists each suite's)")
        }
        (_, found) => Ok((workloads, found)),
    }
}

/// When a suite's read checksums are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// Once per run and unit, before timing: the worker's `verify` step walks each read
    /// untimed, the runner holds it to the expected checksum, and timed passes that
    /// compute an output are held to what it read.
    Once,
    /// Inside every timed pass: each pass reports its checksum, every pass must report
    /// the first one's, and the samples carry it. There is no `verify` step.
    EachPass,
}

impl Suite {
    pub const ALL: [Suite; 6] =
        [Suite::LmdbJava, Suite::TokyoCabinet, Suite::OpenGet, Suite::Migrate, Suite::Lmdb, Suite::Concurrency];

    /// The entries a count of its workloads takes unless `--entries` (a time run's
    /// `--count-entries`) says: counts are exact and given per entry, and callgrind runs
    /// ~50 times slower than the machine. None: the suite's own default entries.
    pub fn count_entries(self) -> Option<u32> {
        match self {
            Suite::LmdbJava => Some(100_000),
            // Its rows are whole passes of many shapes, ~18 G instructions a unit at
            // 100,000 (reports/README.md, "run --suite all"), and four of its DUPSORT rows
            // crash LMDB 0.9.27-0.9.36 from 50,000 (reports/README.md, "LMDB 0.9.27–0.9.36
            // crash on four DUPSORT rows").
            Suite::Lmdb => Some(LMDB_COUNT_ENTRIES),
            Suite::TokyoCabinet | Suite::OpenGet | Suite::Migrate | Suite::Concurrency | Suite::Programs => None,
        }
    }

    /// The preset this suite is, None for LmdbJava's.
    pub fn preset(self) -> Option<Preset> {
        match self {
            Suite::LmdbJava | Suite::Programs => None,
            Suite::TokyoCabinet => Some(Preset::TokyoCabinet),
            Suite::OpenGet => Some(Preset::OpenGet),
            Suite::Migrate => Some(Preset::Migrate),
            Suite::Lmdb => Some(Preset::Lmdb),
            Suite::Concurrency => Some(Preset::Concurrency),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Suite::Programs => "programs",
            _ => self.preset().map_or("LmdbJava", Preset::name),
        }
    }

    /// Its workloads, in the order their sections are shown (a run names its programs).
    pub fn workloads(self) -> Vec<Workload> {
        match (self, self.preset()) {
            (Suite::Programs, _) => Vec::new(),
            (_, None) => Workload::ALL.to_vec(),
            (_, Some(p)) => p.workloads(),
        }
    }

    /// The one suite all `workloads` belong to: a run, a worker and a read database hold
    /// one suite's workloads only.
    pub fn of(workloads: &[Workload]) -> Result<Suite> {
        let Some(first) = workloads.first() else { bail!("no workloads: a suite needs at least one") };
        if let Some(other) = workloads.iter().find(|w| w.suite() != first.suite()) {
            if first.is_program() || other.is_program() {
                bail!("a run of programs (--program) holds programs only: {first} and {other} cannot share it yet");
            }
            bail!(
                "workloads of different presets (or of a preset and LmdbJava's) cannot share a run: \
                 {first} is {}'s, {other} is {}'s",
                first.suite(),
                other.suite()
            );
        }
        Ok(first.suite())
    }

    pub fn verification(self) -> Verification {
        match self {
            Suite::LmdbJava => Verification::Once,
            Suite::TokyoCabinet
            | Suite::OpenGet
            | Suite::Migrate
            | Suite::Lmdb
            | Suite::Concurrency
            | Suite::Programs => Verification::EachPass,
        }
    }

    /// How an instruction counter under callgrind finds `w`'s timed region.
    pub fn timed_functions(self, w: Workload) -> TimedFunctions {
        match self {
            Suite::LmdbJava => native::timed_functions(w),
            // Its rows share their shape's timed function, and a row's part ends as it does.
            Suite::Lmdb => TimedFunctions::NamedParts,
            // open-get times a call per cycle, a thousand to a sample; tokyo-cabinet's
            // writes share one function, migrate's passes another pair.
            Suite::TokyoCabinet | Suite::OpenGet | Suite::Migrate | Suite::Concurrency | Suite::Programs => {
                TimedFunctions::ManyPerPass
            }
        }
    }

    /// Writes the suite's read database into `dir`, untimed, once per run and tag.
    pub fn prepare(self, api: &Api, dir: &Path, cfg: &WorkloadConfig) -> Result<()> {
        match (self, self.preset()) {
            (Suite::Programs, _) => bail!("programs read no database: there is nothing to prepare"),
            (_, None) => native::prepare(api, dir, cfg, &Dataset::generate(cfg)),
            (_, Some(p)) => presets::prepare(api, dir, cfg, p),
        }
    }

    /// The `verify` step of a suite verified [`Verification::Once`]: each of `reads`
    /// walked untimed on the read database in `dir`, its checksum handed to `report`.
    pub fn verify(
        self,
        api: &Api,
        dir: &Path,
        cfg: &WorkloadConfig,
        reads: &[Workload],
        report: impl FnMut(Workload, Result<Checksum, String>),
    ) -> Result<()> {
        match self {
            Suite::LmdbJava => native::verify_all(api, dir, cfg, reads, report),
            Suite::TokyoCabinet
            | Suite::OpenGet
            | Suite::Migrate
            | Suite::Lmdb
            | Suite::Concurrency
            | Suite::Programs => {
                bail!("{self} checks its checksums in each timed pass: it has no verify step")
            }
        }
        Ok(())
    }

    /// Times each of `workloads` (this suite's) and hands `report` what each measured.
    pub fn run(
        self,
        api: &Api,
        cfg: &WorkloadConfig,
        places: Places,
        workloads: &[Workload],
        mut counter: Option<&mut PerfCounter>,
        mut report: impl FnMut(Workload, Result<Outcome>),
    ) {
        let mut lmdbjava = session::Session::new(api, cfg, places);
        for &w in workloads {
            let counter = counter.as_deref_mut();
            let r = match w {
                _ if w.suite() != self => Err(anyhow::anyhow!("{w} is not one of {self}'s workloads")),
                Workload::Preset(p) => presets::run(api, p, cfg, places, counter),
                Workload::Program(p) => Err(anyhow::anyhow!("{p} is a program: the runner runs it, not a worker")),
                _ => lmdbjava.run(w, counter),
            };
            report(w, r);
        }
    }

    /// The checksums correct passes of `workloads` (this suite's) must produce, computed
    /// without LMDB; LmdbJava's write reads nothing back and has none.
    pub fn expected_checksums(self, workloads: &[Workload], cfg: &WorkloadConfig) -> Vec<(Workload, Checksum)> {
        match self.preset() {
            None if self == Suite::Programs => Vec::new(),
            None => dataset::expected_checksums(workloads, &Dataset::generate(cfg)),
            Some(_) => workloads
                .iter()
                .filter_map(|&w| match w {
                    Workload::Preset(p) => Some((w, presets::expected_checksum(p, cfg)?)),
                    _ => None,
                })
                .collect(),
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Workload {
    /// The suite this workload belongs to.
    pub fn suite(self) -> Suite {
        match self {
            // The suite that is its preset (Suite::preset is the one mapping).
            Workload::Preset(p) => {
                Suite::ALL.into_iter().find(|s| s.preset() == Some(p.preset())).expect("every preset is a suite")
            }
            Workload::Program(_) => Suite::Programs,
            _ => Suite::LmdbJava,
        }
    }

    /// Its checksum is read once per run and unit before timing: a read of a suite
    /// verified [`Verification::Once`].
    pub fn verified_once(self) -> bool {
        self.is_read() && self.suite().verification() == Verification::Once
    }

    /// How an instruction counter under callgrind finds its timed region.
    pub fn timed_functions(self) -> TimedFunctions {
        self.suite().timed_functions(self)
    }
}

/// What `run --preset list` prints: each preset suite, its data at its defaults, its
/// workloads and its flags.
pub fn describe_presets() -> String {
    let d = |p| EnvSettings::default().resolve(&WorkloadConfig::default(), &PresetConfig::default(), Some(p));
    // Flags stay whole: no breaking at their hyphens.
    let fill = |t: &str, width| {
        textwrap::fill(t, textwrap::Options::new(width).word_splitter(textwrap::WordSplitter::NoHyphenation))
    };
    let para = |t: &str| textwrap::indent(&fill(t, 76), "    ") + "\n";
    let mut out = String::new();
    for p in Preset::ALL {
        out.push_str(&format!("{p}\n{}", para(p.about())));
        out.push_str(&para(&format!("Data: {}.", p.dataset(&d(p)))));
        for w in p.workloads() {
            out.push_str(&format!("    {:<18} {:<20} {}\n", w.name(), w.title(), w.time_unit().label));
        }
        out.push_str(&para(&format!("Flags (defaults): {}.", p.flags())));
        out.push('\n');
    }
    out.push_str(&fill(
        "Every preset: --seed (the random order and values), --entries, --map-size, --writemap, \
         --sync (also spelt --preset-entries, --preset-map-size, --preset-writemap, --preset-sync); \
         environments are opened with MDB_NOSYNC and without MDB_WRITEMAP unless those say \
         otherwise, and use the unnamed database. --workloads picks some of a preset's workloads.",
        80,
    ));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::presets::PresetWorkload;

    fn every_workload() -> Vec<Workload> {
        Workload::ALL.into_iter().chain(PresetWorkload::all().map(Workload::Preset)).collect()
    }

    #[test]
    fn every_workload_belongs_to_exactly_one_suite() {
        for w in every_workload() {
            let holders: Vec<Suite> = Suite::ALL.into_iter().filter(|s| s.workloads().contains(&w)).collect();
            assert_eq!(holders, [w.suite()], "{w}");
        }
        let listed: usize = Suite::ALL.iter().map(|s| s.workloads().len()).sum();
        assert_eq!(listed, every_workload().len());
        for p in Preset::ALL {
            assert_eq!(Suite::ALL.iter().filter(|s| s.preset() == Some(p)).count(), 1, "{p} is one suite");
        }
        for s in Suite::ALL {
            assert_eq!(Suite::of(&s.workloads()).unwrap(), s);
            assert_eq!(s.preset().map(|p| p.workloads()), s.preset().map(|_| s.workloads()));
        }
    }

    #[test]
    fn a_run_holds_one_suite_and_a_mix_says_which() {
        let tc = Suite::TokyoCabinet.workloads();
        assert_eq!(Suite::of(&tc[1..]).unwrap(), Suite::TokyoCabinet);
        assert_eq!(Suite::of(&[Workload::Write]).unwrap(), Suite::LmdbJava);
        let mixed = Suite::of(&[Workload::ReadKey, tc[1]]).unwrap_err().to_string();
        assert!(mixed.contains("cannot share a run"), "{mixed}");
        assert!(mixed.contains("readKey is LmdbJava's, tcRandomWrite is tokyo-cabinet's"), "{mixed}");
        let two = Suite::of(&[tc[0], Suite::Migrate.workloads()[0]]).unwrap_err().to_string();
        assert!(two.contains("tcSuccessiveWrite is tokyo-cabinet's, migrateCopyWarm is migrate's"), "{two}");
        assert!(Suite::of(&[]).unwrap_err().to_string().contains("no workloads"));
    }

    #[test]
    fn lmdbjava_verifies_once_and_presets_in_each_pass() {
        assert_eq!(Suite::LmdbJava.verification(), Verification::Once);
        let once: Vec<Workload> = every_workload().into_iter().filter(|w| w.verified_once()).collect();
        assert_eq!(
            once,
            [Workload::ReadKey, Workload::ReadSeq, Workload::ReadRev, Workload::ReadCrc, Workload::ReadXxh64]
        );
        for s in &Suite::ALL[1..] {
            assert_eq!(s.verification(), Verification::EachPass, "{s}");
        }
    }

    #[test]
    fn each_of_the_six_names_its_own_timed_function_and_presets_count_totals() {
        let mut names = std::collections::BTreeSet::new();
        for w in Workload::ALL {
            let TimedFunctions::OnePerPass { rust, c } = w.timed_functions() else { panic!("{w}: no function") };
            assert_eq!(rust, format!("lmdbregress_{c}"), "{w}: the Rust engine's name is the C twin's, prefixed");
            assert!(c.starts_with("timed_") && names.insert(c), "{w}: {c}");
        }
        for w in PresetWorkload::all().map(Workload::Preset) {
            let parts = if w.suite() == Suite::Lmdb { TimedFunctions::NamedParts } else { TimedFunctions::ManyPerPass };
            assert_eq!(w.timed_functions(), parts, "{w}");
        }
    }

    #[test]
    fn expected_checksums_come_from_the_suite() {
        let cfg = WorkloadConfig { entries: 100, ..WorkloadConfig::default() };
        let six = Suite::LmdbJava.expected_checksums(&Workload::ALL, &cfg);
        let named: Vec<Workload> = six.iter().map(|(w, _)| *w).collect();
        assert_eq!(named, &Workload::ALL[..5], "every read, and not the write");
        assert!(six.iter().all(|(_, c)| c.entries == 100));
        let env = crate::workload::EnvSettings { entries: Some(50), ..Default::default() };
        let small = env.resolve(&cfg, &Default::default(), Some(crate::workload::presets::Preset::OpenGet));
        let og = Suite::OpenGet.expected_checksums(&Suite::OpenGet.workloads(), &small);
        assert_eq!(og.iter().map(|(_, c)| c.entries).collect::<Vec<_>>(), [1, 50], "one key read; every entry written");
    }
}
