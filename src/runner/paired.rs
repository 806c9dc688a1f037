//! Paired rounds (`pairing: chunks`): every unit of an engine in one worker process (the
//! Rust paired worker, or the C twin's, harness/paired.c), its workloads alternated between
//! them chunk by chunk, each unit on a read database of its own file family drawn at random
//! for the process. A unit that crashes the process costs that process's round; it is
//! named, and left out of later processes.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use rand::seq::SliceRandom;
use rand::Rng;

use super::adaptive::Selection;
use super::job::Job;
use super::paired_worker::SlotSpec;
use super::prepare::Ready;
use super::protocol::WorkerLine;
use super::watchdog::{self, Killed, Ran, Watched};
use super::{Label, RunSpec, Unit};
use crate::record::{Engine, FailureStage, Record};
use crate::workload::Workload;

/// Units blamed for a paired process's failure (their failure says so), left out of later ones.
#[derive(Default)]
pub(super) struct Excluded(Mutex<BTreeSet<(Engine, Label)>>);

impl Excluded {
    fn contains(&self, u: &Unit) -> bool {
        self.0.lock().expect("not poisoned").contains(&(u.engine, u.label.clone()))
    }

    fn insert(&self, u: &Unit) {
        self.0.lock().expect("not poisoned").insert((u.engine, u.label.clone()));
    }
}

impl RunSpec {
    /// Whether this run's time rounds are paired processes.
    pub(super) fn paired(&self) -> bool {
        self.counter.is_none() && self.plan.pairing == crate::record::Pairing::Chunks
    }

    /// One paired process of `units` (one engine's) for `round`, each on the workloads
    /// `selection` measures (all without one), and of the further layouts of references,
    /// each on those of its workloads its own unit measures: the records to append (none
    /// when warm).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn measure_paired(
        &self,
        (units, further): (&[Unit], &[(Unit, Vec<Workload>)]),
        round: u32,
        warm: bool,
        ready: &Ready,
        scratch: &Path,
        excluded: &Excluded,
        selection: Option<&Selection>,
    ) -> Result<Vec<Record>> {
        // One draw of the worker's order for every slot of the process.
        let all: Vec<Unit> = units.iter().chain(further.iter().map(|(u, _)| u)).cloned().collect();
        let drawn = super::unit::with_drawn_harness(&all, &mut rand::thread_rng());
        let wants = units.iter().map(|_| None).chain(further.iter().map(|(_, w)| Some(w)));
        let live = |u: &Unit| !excluded.contains(u) && !watchdog::hung(u.engine, &u.label);
        // A unit's layouts past its first (`--layouts-per-process`) time only the chunks
        // that stand alone; the references' further layouts have their own `wants`.
        let later_layout = |i: usize| i < units.len() && units[..i].iter().any(|o| o.label == units[i].label);
        let batch = |i: usize, u: &Unit, wants: Option<&Vec<Workload>>| {
            let all = self.measurable(u, ready);
            let measured = selection.map_or(all.clone(), |s| s.of(u, &all));
            let alone = |w: &Workload| !later_layout(i) || w.chunks_stand_alone();
            measured.into_iter().filter(|w| wants.is_none_or(|ws| ws.contains(w)) && alone(w)).collect()
        };
        let jobs: Vec<Job> = drawn
            .iter()
            .zip(wants)
            .enumerate()
            .filter(|(_, (u, _))| live(u))
            .map(|(i, (u, w))| Job { unit: u, batch: batch(i, u, w) })
            .collect();
        let jobs: Vec<Job> = jobs.into_iter().filter(|j| !j.batch.is_empty()).collect();
        // A C unit whose program or library is not as recorded is refused before the start.
        let (jobs, refused) = self.checked(jobs, round, warm);
        if jobs.is_empty() {
            return Ok(refused);
        }
        let ran = self.invoke_paired(&jobs, ready, scratch)?;
        if super::job::interrupted() {
            return Ok(Vec::new());
        }
        let blame = match named_slot(&ran, jobs.len()) {
            Some(k) if matches!(ran.killed, Some(Killed::Stalled(_))) => Some((k, Blame::Stalled)),
            Some(k) => Some((k, Blame::Crashed)),
            None if unreported(&jobs, &ran) && !matches!(ran.killed, Some(Killed::PastBudget(_))) => {
                self.split(&jobs, ready, scratch)?.map(|k| (k, Blame::Split))
            }
            None => None,
        };
        if super::job::interrupted() {
            return Ok(Vec::new());
        }
        if let Some((k, b)) = blame {
            excluded.insert(jobs[k].unit);
            // Nor is a stalled unit counted after the rounds.
            if b == Blame::Stalled {
                watchdog::mark_hung(jobs[k].unit.engine, &jobs[k].unit.label);
            }
        }
        let death = ran.death.or_else(|| blame.map(|_| "it exited with status 0 without its report".to_string()));
        if warm {
            // A warm-up round records nothing, but a unit it leaves out is said.
            let left_out = blame.zip(death.as_ref()).map(|((k, b), d)| {
                let error = format!("{} in a warm-up round, and is left out of the run: {d}", b.verb(true));
                Record::Failure(self.failure(jobs[k].unit, None, FailureStage::Run, error))
            });
            return Ok(left_out.into_iter().collect());
        }
        let mut by_slot: Vec<Vec<WorkerLine>> = vec![Vec::new(); jobs.len()];
        for l in ran.lines.into_iter().filter(|l| l.crashed.is_none()) {
            if let Some(k) = l.slot.map(|k| k as usize).filter(|k| *k < jobs.len()) {
                by_slot[k].push(l);
            }
        }
        let mut out = refused;
        for (k, (job, lines)) in jobs.iter().zip(by_slot).enumerate() {
            let lines: Vec<WorkerLine> =
                lines.into_iter().filter(|l| l.workload.is_some_and(|w| job.batch.contains(&w))).collect();
            let why = death.as_ref().map(|d| death_of(d, k, blame, &jobs));
            out.extend(self.record(job, round, false, ready, lines, why));
        }
        Ok(out)
    }

    /// The unit among `jobs` whose paired process ends without its report (it dies, stalls
    /// outside a chunk, or exits early) though no slot was named: halves of the units run
    /// in processes of their own until one unit is left. None unless exactly one half fails
    /// at each step (the units fail only together, or every one fails alone).
    fn split(&self, jobs: &[Job], ready: &Ready, scratch: &Path) -> Result<Option<usize>> {
        let mut set: Vec<usize> = (0..jobs.len()).collect();
        if set.len() == 1 {
            return Ok(Some(0));
        }
        while set.len() > 1 {
            let (a, b) = set.split_at(set.len() / 2);
            // Both halves failing is no one unit's doing (or more than one's): none is named.
            set = match (self.fails(jobs, a, ready, scratch)?, self.fails(jobs, b, ready, scratch)?) {
                (true, false) => a.to_vec(),
                (false, true) => b.to_vec(),
                _ => return Ok(None),
            };
        }
        Ok(set.first().copied())
    }

    /// Whether a paired process of `jobs`' units `subset` ends without its report (a
    /// process to find a culprit by: nothing it measures is recorded).
    fn fails(&self, jobs: &[Job], subset: &[usize], ready: &Ready, scratch: &Path) -> Result<bool> {
        if super::job::interrupted() {
            return Ok(false);
        }
        let sub: Vec<Job> = subset.iter().map(|&k| jobs[k].clone()).collect();
        let ran = self.invoke_paired(&sub, ready, scratch)?;
        Ok(unreported(&sub, &ran))
    }

    /// The jobs whose C program and library are as recorded, and the others' failures (none
    /// when warm: a later round says them).
    fn checked<'u>(&self, jobs: Vec<Job<'u>>, round: u32, warm: bool) -> (Vec<Job<'u>>, Vec<Record>) {
        let mut refused = Vec::new();
        let mut kept = Vec::new();
        for job in jobs {
            match job.unit.check_c() {
                Ok(()) => kept.push(job),
                Err(e) if !warm => {
                    let error = format!("refusing to load the library: {e:#}");
                    let fail = |w: &Workload| {
                        self.failure(job.unit, Some(*w), FailureStage::Run, error.clone()).in_round(round)
                    };
                    refused.extend(job.batch.iter().map(|w| Record::Failure(fail(w))));
                }
                Err(_) => {}
            }
        }
        (kept, refused)
    }

    /// The workloads `u` can be measured on: those that apply to its LMDB (the report says
    /// which do not), and of reads those with its tag's read database and its verified
    /// checksum (without them they were already reported).
    fn measurable(&self, u: &Unit, ready: &Ready) -> Vec<Workload> {
        let verified = |w: Workload| ready.checksums.contains_key(&(u.engine, u.label.clone(), w));
        self.workloads
            .iter()
            .copied()
            .filter(|w| self.applies(u, *w))
            .filter(|w| !w.is_read() || (ready.dbs.contains_key(&u.label) && verified(*w)))
            .collect()
    }

    /// Runs the paired worker, under the watchdog, on `jobs`' units, each on its batch, the
    /// workloads in a fresh shuffled order.
    fn invoke_paired(&self, jobs: &[Job], ready: &Ready, scratch: &Path) -> Result<Ran> {
        let mut rng = rand::thread_rng();
        // Only units whose every read was verified share their files; the others open none.
        let units: Vec<&Unit> = jobs.iter().map(|j| j.unit).collect();
        let verified: Vec<bool> =
            units.iter().map(|u| self.reads().iter().all(|w| self.measurable(u, ready).contains(w))).collect();
        let dbs = assign_databases(&units, &verified, (ready, self.plan.layouts_per_process > 1), &mut rng);
        let slots = scratch.join("slots.tsv");
        let mut text = String::new();
        for ((j, db), layout) in jobs.iter().zip(dbs).zip(self.layout_places(&units)) {
            let (u, workloads) = (j.unit, j.batch.clone());
            let library = u.library.clone().context("paired processes load units' shared libraries")?;
            let (sha256, version, readers) = (u.sha256.clone(), u.version.clone(), u.label.readers);
            text += &SlotSpec { library, sha256, version, dir: db, workloads, readers, layout }.line()?;
        }
        std::fs::write(&slots, text).with_context(|| format!("cannot write {}", slots.display()))?;
        let mut order: Vec<Workload> =
            self.workloads.iter().copied().filter(|w| jobs.iter().any(|j| j.batch.contains(w))).collect();
        order.shuffle(&mut rng);
        let names: Vec<&str> = order.iter().map(|w| w.name()).collect();
        let mut cmd = paired_worker(&units)?;
        cmd.arg("--slots").arg(&slots).arg("--scratch").arg(scratch);
        cmd.arg("--workloads").arg(names.join(",")).arg("--chunk").arg(self.chunk().to_string());
        cmd.arg("--iterations")
            .arg(self.plan.iterations.to_string())
            .arg("--rotation-seed")
            .arg(rng.gen::<u64>().to_string());
        cmd.args(self.config.to_args());
        Ok(watchdog::run(cmd, Watched::Paired(units[0].engine)))
    }

    /// Each unit's place among its unit's layouts in the process (`--layouts-per-process`):
    /// one of the unit before it is that unit's next layout, however many of a unit's
    /// layouts the round or a process to find a culprit by holds. (The references' further
    /// layouts, which run whole passes, come only with one layout a unit.)
    fn layout_places(&self, units: &[&Unit]) -> Vec<u32> {
        let mut places = vec![0u32; units.len()];
        for k in (1..units.len()).filter(|_| self.plan.layouts_per_process > 1) {
            if (units[k].engine, &units[k].label) == (units[k - 1].engine, &units[k - 1].label) {
                places[k] = places[k - 1] + 1;
            }
        }
        places
    }

    /// Operations per chunk.
    pub(super) fn chunk(&self) -> u32 {
        self.plan.chunk.unwrap_or(DEFAULT_CHUNK)
    }
}

/// The paired worker of `units` (one engine's): this binary's, or the C paired worker
/// every C unit runs.
fn paired_worker(units: &[&Unit]) -> Result<std::process::Command> {
    let first = units.first().context("a paired process of no unit")?;
    if units.iter().any(|u| u.engine != first.engine || u.program != first.program) {
        bail!("a paired process holds the units of one engine, run by one program");
    }
    let mut cmd = std::process::Command::new(&first.program);
    cmd.arg(match first.engine {
        Engine::Rust => "paired-worker",
        Engine::C => "paired",
    });
    Ok(cmd)
}

/// Operations per chunk unless the plan says otherwise.
pub const DEFAULT_CHUNK: u32 = 10_000;

/// Which unit a failed paired process is blamed on, and how it was found.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Blame {
    /// Its slot was running when a fatal signal came.
    Crashed,
    /// Its slot was running when the watchdog killed the stalled process.
    Stalled,
    /// No slot was named: splitting the units found it.
    Split,
}

impl Blame {
    /// What the unit did to the process, as its own failure says it (`own`) or another's.
    fn verb(self, own: bool) -> &'static str {
        match (self, own) {
            (Blame::Crashed, true) => "it crashed the paired process",
            (Blame::Crashed, false) => "crashed it",
            (Blame::Stalled, true) => "it stalled the paired process",
            (Blame::Stalled, false) => "stalled it",
            (Blame::Split, true) => {
                "it ends a paired process without its report (found by running halves of the units apart)"
            }
            (Blame::Split, false) => "ended it without its report",
        }
    }
}

/// The slot a dead paired process named (its signal handler's line), if it died.
fn named_slot(ran: &Ran, slots: usize) -> Option<usize> {
    ran.death.as_ref()?;
    ran.lines.iter().find_map(|l| l.crashed).map(|k| k as usize).filter(|k| *k < slots)
}

/// Whether a paired process died, or left a workload of a unit unreported.
fn unreported(jobs: &[Job], ran: &Ran) -> bool {
    let told = |k: usize, w: Workload| ran.lines.iter().any(|l| l.slot == Some(k as u32) && l.workload == Some(w));
    ran.death.is_some() || jobs.iter().enumerate().any(|(k, j)| j.batch.iter().any(|w| !told(k, *w)))
}

/// Why slot `k`'s missing workloads were not measured when the process failed.
fn death_of(death: &str, k: usize, blame: Option<(usize, Blame)>, jobs: &[Job]) -> String {
    match blame {
        Some((c, b)) if c == k => format!("{}: {death}", b.verb(true)),
        Some((c, b)) => format!("lost with the paired process when {} {}: {death}", jobs[c].unit.label, b.verb(false)),
        None => format!("the paired process died: {death}"),
    }
}

/// Each unit's read database for one process: units whose databases have one shape (one
/// format version, the same page counts) draw their files at random among themselves, so
/// that where a file lies in memory does not follow its unit through the run. With several
/// layouts of each unit (`spread`), the unit at place k of its family reads, in its layout
/// n, the n-th copy (a link) of the file the unit at place k + n drew: a unit's layouts read
/// that many files, each lying where it lies in memory (on a walk that moved a unit's time
/// by ±5% a process: reports/README.md, "What limits the goal on this Xeon"), and the
/// units' layouts n, which time the same chunks, read distinct files, so that no unit's
/// chunk warms another's pages. Otherwise (the reference's further layouts, each timing
/// every chunk) a unit's n-th layout reads the n-th copy of the file its first drew.
fn assign_databases(
    units: &[&Unit],
    verified: &[bool],
    (ready, spread): (&Ready, bool),
    rng: &mut impl Rng,
) -> Vec<Option<PathBuf>> {
    let nth = |i: usize| units[..i].iter().filter(|o| o.label == units[i].label).count();
    let mut out: Vec<Option<PathBuf>> = (0..units.len())
        .map(|i| ready.dbs.get(&units[i].label).filter(|_| verified[i] && nth(i) == 0).cloned())
        .collect();
    let mut families: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for (i, u) in units.iter().enumerate() {
        if let (Some(shape), Some(_)) = (ready.shapes.get(&u.label), &out[i]) {
            families.entry(*shape).or_default().push(i);
        }
    }
    for members in families.values() {
        let mut files: Vec<Option<PathBuf>> = members.iter().map(|&i| out[i].clone()).collect();
        files.shuffle(rng);
        for (&i, f) in members.iter().zip(files) {
            out[i] = f;
        }
    }
    let place: BTreeMap<usize, &Vec<usize>> =
        families.values().flat_map(|members| members.iter().map(move |&i| (i, members))).collect();
    let owner: BTreeMap<&PathBuf, &Label> = ready.dbs.iter().map(|(l, d)| (d, l)).collect();
    for i in (0..units.len()).filter(|&i| nth(i) > 0 && verified[i]) {
        let (first, n) = (units.iter().position(|o| o.label == units[i].label).expect("its first layout"), nth(i));
        let drew = match place.get(&first).filter(|_| spread) {
            Some(members) => {
                let k = members.iter().position(|&m| m == first).expect("a member of its family");
                members[(k + n) % members.len()]
            }
            None => first,
        };
        let copies = out[drew].as_ref().and_then(|d| owner.get(d)).and_then(|l| ready.copies.get(*l));
        out[i] = copies.and_then(|c| c.get(n - 1)).cloned();
    }
    out
}

/// Refuses paired processes the machine's memory cannot hold: every unit maps its read
/// database and writes a database of the same size beside it; a further layout of a unit
/// only reads, a link to the unit's file, or a copy as large where the file system refused
/// the link.
pub(super) fn check_memory(units: usize, ready: &Ready) -> Result<()> {
    let db_bytes = ready.dbs.values().map(|d| dir_bytes(d)).max().unwrap_or(0);
    let copied = |(label, dirs): (&Label, &Vec<PathBuf>)| {
        let file = |d: &Path| std::fs::metadata(d.join("data.mdb")).ok().map(|m| (m.dev(), m.ino()));
        let one = ready.dbs.get(label).and_then(|d| file(d));
        dirs.iter().filter(|d| one.is_none() || file(d) != one).count() as u64
    };
    let need = units as u64 * db_bytes * 2 + ready.copies.iter().map(copied).sum::<u64>() * db_bytes;
    let Some(available) = crate::environment::available_memory() else { return Ok(()) };
    if need > available / 10 * 8 {
        bail!(
            "a paired process of {units} units needs about {} of memory (each maps a read database of {} \
             and writes one as large), and this machine has {} available: measure fewer tags at once \
             (--shard K/N), fewer --entries, or one process per unit (--pairing process)",
            gib(need),
            gib(db_bytes),
            gib(available)
        );
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map(|es| es.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::protocol::DbShape;

    fn unit(tag: &str) -> Unit {
        let (program, library, sha256, version) = ("x".into(), Some("lib".into()), "0".into(), "LMDB".into());
        let (label, program_sha256) = (Label::build(tag, None), None);
        Unit {
            engine: Engine::Rust,
            label,
            program,
            program_sha256,
            library,
            sha256,
            version,
            layout: None,
            relink: None,
            orders: std::sync::Arc::from([]),
            harness: None,
            programs: Default::default(),
        }
    }

    #[test]
    fn databases_are_drawn_within_one_family_only() {
        let tags = ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.33", "LMDB_1.0.1", "mdb.master3"];
        let units: Vec<Unit> = tags.map(unit).to_vec();
        let refs: Vec<&Unit> = units.iter().collect();
        let mut ready = Ready::default();
        let shape =
            |format, data_version| DbShape { format, data_version, branch: 1, leaf: 2, overflow: 0, entries: 3 };
        // mdb.master3 reports 0.9.90 and writes the 1.0 line's files.
        let shapes = [shape((0, 9), 1), shape((0, 9), 1), shape((0, 9), 1), shape((1, 0), 3), shape((0, 9), 3)];
        for (i, u) in units.iter().enumerate() {
            ready.dbs.insert(u.label.clone(), PathBuf::from(format!("db{i}")));
            ready.shapes.insert(u.label.clone(), shapes[i]);
        }
        let mut moved = false;
        for seed in 0..50 {
            let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
            let got = assign_databases(&refs, &[true; 5], (&ready, false), &mut rng);
            assert_eq!(got[3], Some(PathBuf::from("db3")), "1.0 reads its own format only");
            assert_eq!(got[4], Some(PathBuf::from("db4")), "a 1.0 file under a 0.9 version number too");
            let mut first: Vec<_> = got[..3].iter().flatten().cloned().collect();
            first.sort();
            assert_eq!(first, ["db0", "db1", "db2"].map(PathBuf::from), "a permutation of the family's files");
            moved |= got[0] != Some(PathBuf::from("db0"));
        }
        assert!(moved, "files move between the units of a family");
        let unverified =
            assign_databases(&refs, &[true, false, true, true, true], (&ready, false), &mut rand::thread_rng());
        assert_eq!(unverified[1], None, "a unit whose reads were not verified opens no file");
        assert!(!unverified.contains(&Some(PathBuf::from("db1"))), "nor does its file go to another unit");
    }

    /// Three layouts of each of four units of one family: a unit's layouts read three of the
    /// family's files, each through a copy of its own, and the units' layouts of one place
    /// (which time the same chunks) read four distinct files; without `spread` (the
    /// reference's further layouts) a unit's layouts read copies of the file its first drew.
    #[test]
    fn a_units_layouts_read_files_of_their_family_and_no_two_of_one_place_share_one() {
        let units: Vec<Unit> = ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.21", "LMDB_0.9.33"].map(unit).to_vec();
        let refs: Vec<&Unit> = units.iter().flat_map(|u| [u, u, u]).collect();
        let mut ready = Ready::default();
        let shape = DbShape { format: (0, 9), data_version: 1, branch: 1, leaf: 2, overflow: 0, entries: 3 };
        for (i, u) in units.iter().enumerate() {
            ready.dbs.insert(u.label.clone(), PathBuf::from(format!("db{i}")));
            ready.copies.insert(u.label.clone(), (1..3).map(|n| PathBuf::from(format!("db{i}-{n}"))).collect());
            ready.shapes.insert(u.label.clone(), shape);
        }
        let file = |p: &Option<PathBuf>| p.as_ref().unwrap().display().to_string()[..3].to_string();
        let mut moved = false;
        for seed in 0..30 {
            let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
            let got = assign_databases(&refs, &[true; 12], (&ready, true), &mut rng);
            for layouts in got.chunks(3) {
                let files: BTreeSet<String> = layouts.iter().map(file).collect();
                assert_eq!(files.len(), 3, "three files a unit: {got:?}");
                for (n, l) in layouts.iter().enumerate().skip(1) {
                    assert!(l.as_ref().unwrap().display().to_string().ends_with(&format!("-{n}")), "{got:?}");
                }
            }
            for n in 0..3 {
                let files: BTreeSet<String> = got.iter().skip(n).step_by(3).map(file).collect();
                assert_eq!(files.len(), 4, "layouts {n} of the four units read distinct files: {got:?}");
            }
            let alone = assign_databases(&refs, &[true; 12], (&ready, false), &mut rng);
            for layouts in alone.chunks(3) {
                let first = layouts[0].as_ref().unwrap().display().to_string();
                let want: Vec<Option<PathBuf>> = (1..3).map(|n| Some(PathBuf::from(format!("{first}-{n}")))).collect();
                assert_eq!(layouts[1..], want[..], "{alone:?}");
            }
            moved |= got[0] != Some(PathBuf::from("db0"));
        }
        assert!(moved, "files still move between the units of a family");
    }

    #[test]
    fn a_crash_is_named_for_its_unit_and_for_the_others() {
        let units = [unit("LMDB_0.9.17"), unit("LMDB_0.9.18")];
        let jobs: Vec<Job> = units.iter().map(|u| Job { unit: u, batch: vec![Workload::Write] }).collect();
        let crashed = Some((0, Blame::Crashed));
        assert!(death_of("killed", 0, crashed, &jobs).starts_with("it crashed the paired process"));
        assert!(death_of("killed", 1, crashed, &jobs).contains("when LMDB_0.9.17 crashed it"));
        assert!(death_of("killed", 1, Some((0, Blame::Stalled)), &jobs).contains("when LMDB_0.9.17 stalled it"));
        assert!(death_of("killed", 1, None, &jobs).starts_with("the paired process died"));
    }
}
