//! Units side by side in one process: each of the six runs its passes in chunks, every
//! round of chunks visiting every slot (a loaded library with its environment) once, in a
//! fresh shuffled order, each chunk timed on its own. Two chunks a millisecond apart see
//! the same machine, so their ratio cancels what the host's other tenants do to both. A
//! pass's major faults are its timed chunks', each read around the chunk, outside its clock.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::Rng;

use super::iocount::Mark;
use super::lmdb::{Api, Env};
use super::measure::{Figures, Outcome};
use super::native;
use super::pass::{Chunks, Pass};
use super::presets::usage;
use super::session;
use super::{Dataset, Workload, WorkloadConfig};

/// The slot whose library is running (usize::MAX when none is), for a crash report.
pub static RUNNING: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Runs `f` as slot `id`'s: a fatal signal inside it names the slot.
pub fn as_slot<T>(id: usize, f: impl FnOnce() -> T) -> T {
    RUNNING.store(id, Ordering::Relaxed);
    let r = f();
    RUNNING.store(usize::MAX, Ordering::Relaxed);
    r
}

/// One loaded library in the process (`id`: its line of the slots file), its place among
/// its unit's layouts, and its read database opened and faulted in (or why not), when
/// reads are measured.
pub struct Slot<'a> {
    pub id: usize,
    pub api: &'a Api,
    pub layout: Member,
    pub reads: Option<Result<Env<'a>, String>>,
}

impl<'a> Slot<'a> {
    /// A slot of `api`, its read database in `dir` opened and faulted in once.
    pub fn new(id: usize, api: &'a Api, layout: Member, cfg: &WorkloadConfig, dir: Option<&Path>) -> Slot<'a> {
        let reads = as_slot(id, || dir.map(|d| session::open_reads(api, cfg, Some(d), false)));
        Slot { id, api, layout, reads }
    }

    /// Readies a further layout for a pass of `w` (a workload whose chunks stand alone):
    /// its read database in `dir` opened, unless an earlier pass left it open, and faulted
    /// in only where its chunks read. Mapping the whole database in, and out again, for
    /// each further layout cost more than its timed chunks (reports/README.md, "Layouts
    /// found again").
    pub fn further(&mut self, (cfg, w): (&WorkloadConfig, Workload), dir: &Path, (data, chunk): (&Dataset, usize)) {
        let chunks = Chunks::of(chunk, data.len());
        let (api, layout, open) = (self.api, self.layout.on(w), self.reads.take());
        let ready = || -> Result<Env<'a>, String> {
            let env = match open {
                Some(Ok(env)) => env,
                _ => Env::open(api, dir, &native::env_options(cfg)).map_err(|e| e.to_string())?,
            };
            let mine = (0..chunks.count()).filter(|i| layout.times(*i)).map(|i| chunks.range(i));
            native::fault_in_chunks(api, &env, (cfg, data, w), mine).map_err(|e| api.failure(e).to_string())?;
            Ok(env)
        };
        self.reads = Some(as_slot(self.id, ready));
    }
}

/// A slot's place among its unit's layouts in the process (`--layouts-per-process`): of a
/// workload whose chunks stand alone it times chunk `i` when `i % of == index`; of any
/// other, every chunk (only a unit's first layout runs those).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub index: usize,
    pub of: usize,
}

impl Member {
    /// The unit's one layout in the process.
    pub const ALONE: Member = Member { index: 0, of: 1 };

    /// Its place in the passes of `w`.
    fn on(self, w: Workload) -> Member {
        if w.chunks_stand_alone() {
            self
        } else {
            Member::ALONE
        }
    }

    fn times(self, chunk: usize) -> bool {
        chunk % self.of == self.index
    }
}

/// How each workload is split and repeated in the process.
#[derive(Clone, Copy)]
pub struct Rotation<'a> {
    /// Operations per chunk.
    pub chunk: usize,
    /// Passes of each workload per slot.
    pub passes: u32,
    /// Called after every round of chunks, between timed chunks (the worker's sign of life,
    /// which decides itself how often to speak).
    pub after_round: &'a dyn Fn(),
}

/// Every slot's `passes` of `w`, chunk by chunk, side by side: each slot's outcome (its
/// pass times, each pass's chunk times, what each pass computed), or why it has none.
pub fn run(
    slots: &[&Slot],
    cfg: &WorkloadConfig,
    scratch: &Path,
    data: &Dataset,
    w: Workload,
    rotation: Rotation<'_>,
    rng: &mut impl Rng,
) -> Vec<Result<Outcome, String>> {
    // Chunks split every slot's pass alike, over every entry.
    if cfg.key_sample.is_some() {
        return slots
            .iter()
            .map(|_| Err("--key-sample: readKey's passes are timed whole, not in chunks".into()))
            .collect();
    }
    let mut out: Vec<Result<Outcome, String>> = slots.iter().map(|s| ready(s, w)).collect();
    let chunks = Chunks::of(rotation.chunk, data.len());
    for _ in 0..rotation.passes {
        let mut passes: Vec<Option<Pass>> = slots
            .iter()
            .zip(out.iter_mut())
            .map(|(s, o)| o.is_ok().then(|| as_slot(s.id, || open(s, cfg, scratch, data, w))).and_then(|p| keep(p, o)))
            .collect();
        let ids: Vec<usize> = slots.iter().map(|s| s.id).collect();
        let members: Vec<Member> = slots.iter().map(|s| s.layout.on(w)).collect();
        let (times, faults) = rotate(&mut passes, (&ids, &members, rotation), (&chunks, w), &mut out, rng);
        for (k, pass) in passes.into_iter().enumerate() {
            let Some(pass) = pass else { continue };
            match (as_slot(ids[k], || pass.finish()), &mut out[k]) {
                (Ok(ended), Ok(o)) => {
                    o.push_chunks(times[k].clone(), ended, w);
                    o.major_faults.push(faults[k]);
                    if members[k].of > 1 {
                        let ops = timed_ops(&chunks, members[k]);
                        o.figures.push(Figures { ops: Some(ops), ..Figures::default() });
                    }
                }
                (Err(e), o) => *o = Err(format!("{e:#}")),
                (Ok(_), Err(_)) => {}
            }
        }
    }
    out
}

/// The copy of the timed function chunk `i` runs in, every slot alike (so a round's
/// chunks are paired in one copy): the copies by turns, `most` chunks each (the most
/// layouts a unit has in the process), so each layout of a unit times its chunks in all.
fn timed_copy(i: usize, most: usize) -> usize {
    (i / most) % native::TIMED_COPIES
}

/// The operations of the chunks `member` times.
fn timed_ops(chunks: &Chunks, member: Member) -> u64 {
    (member.index..chunks.count()).step_by(member.of).map(|i| chunks.range(i).len() as u64).sum()
}

/// A slot's empty outcome, or why it cannot run `w`.
fn ready(s: &Slot, w: Workload) -> Result<Outcome, String> {
    match (&s.reads, w.is_read()) {
        (Some(Err(e)), true) => Err(e.clone()),
        (None, true) => Err("reads need a read database".into()),
        _ => Ok(Outcome::default()),
    }
}

/// A pass of `w` in slot `s` (untimed).
fn open<'a>(
    s: &Slot<'a>,
    cfg: &WorkloadConfig,
    scratch: &Path,
    data: &'a Dataset,
    w: Workload,
) -> anyhow::Result<Pass<'a>> {
    match &s.reads {
        Some(Ok(env)) if w.is_read() => Pass::read(s.api, env, w, data, data.len()),
        _ => Pass::write(s.api, scratch, cfg, data),
    }
}

/// The pass, or its failure recorded as the slot's outcome.
fn keep<'a>(p: anyhow::Result<Pass<'a>>, o: &mut Result<Outcome, String>) -> Option<Pass<'a>> {
    p.map_err(|e| *o = Err(format!("{e:#}"))).ok()
}

/// Runs every chunk of every live pass, each round of chunks in a fresh shuffled order of
/// the slots; returns each slot's times of the chunks it timed, and their major faults
/// together. A chunk that fails ends its slot's pass. With several layouts of a unit,
/// chunk `i` is timed in one of them; the others skip it where a chunk stands alone
/// ([`Pass::enter`]), else run it untimed after the round's timed chunks, so each pass
/// still walks or writes everything in order.
fn rotate(
    passes: &mut [Option<Pass>],
    (ids, members, rotation): (&[usize], &[Member], Rotation<'_>),
    (chunks, w): (&Chunks, Workload),
    out: &mut [Result<Outcome, String>],
    rng: &mut impl Rng,
) -> (Vec<Vec<u64>>, Vec<u64>) {
    let mut times = vec![Vec::with_capacity(chunks.count()); passes.len()];
    let mut faults = vec![0; passes.len()];
    let mut order: Vec<usize> = (0..passes.len()).filter(|k| passes[*k].is_some()).collect();
    let most = members.iter().map(|m| m.of).max().unwrap_or(1);
    for i in 0..chunks.count() {
        order.shuffle(rng);
        let timed = |k: &usize| members[*k].times(i);
        let copy = timed_copy(i, most);
        for &k in order.iter().filter(|k| timed(k)) {
            let Some(pass) = passes[k].as_mut() else { continue };
            RUNNING.store(ids[k], Ordering::Relaxed);
            if let Err(e) = pass.enter(chunks, i) {
                out[k] = Err(pass.failure(e).to_string());
                passes[k] = None;
                continue;
            }
            let before = usage::snapshot();
            let mark = Mark::now();
            let start = Instant::now();
            let r = pass.chunk(chunks, i, copy);
            times[k].push(start.elapsed().as_nanos() as u64);
            pass.count_io(mark);
            let after = usage::snapshot();
            let r = r.map_err(|e| pass.failure(e).to_string()).and_then(|_| {
                let (before, after) = before.and_then(|b| Ok((b, after?))).map_err(|e| format!("{e:#}"))?;
                faults[k] += after.major_faults() - before.major_faults();
                Ok(())
            });
            if let Err(e) = r {
                out[k] = Err(e);
                passes[k] = None;
            }
        }
        if !w.chunks_stand_alone() {
            for &k in order.iter().filter(|k| !timed(k)) {
                let Some(pass) = passes[k].as_mut() else { continue };
                RUNNING.store(ids[k], Ordering::Relaxed);
                if let Err(e) = pass.enter(chunks, i).and_then(|_| pass.chunk(chunks, i, copy)) {
                    out[k] = Err(pass.failure(e).to_string());
                    passes[k] = None;
                }
            }
        }
        RUNNING.store(usize::MAX, Ordering::Relaxed);
        (rotation.after_round)();
    }
    (times, faults)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the layouts of each unit in the process (K, or one for a unit that measures
    /// no readKey in the round), each layout times its chunks in every copy of the timed
    /// function, and in each about as often.
    #[test]
    fn each_layout_times_its_chunks_in_every_copy() {
        for most in 1..=16 {
            for of in (1..=most).filter(|of| most % of == 0) {
                for index in 0..of {
                    let mut per_copy = [0usize; native::TIMED_COPIES];
                    for i in (0..most * 40).filter(|i| Member { index, of }.times(*i)) {
                        per_copy[timed_copy(i, most)] += 1;
                    }
                    let (least, top) = (per_copy.iter().min().unwrap(), per_copy.iter().max().unwrap());
                    assert!(*least > 0 && top - least <= 1, "{index} of {of}, most {most}: {per_copy:?}");
                }
            }
        }
    }

    #[test]
    fn a_units_layouts_time_every_chunk_once_between_them() {
        for of in 1..=5 {
            for i in 0..40 {
                assert_eq!((0..of).filter(|&index| Member { index, of }.times(i)).count(), 1, "{i} of {of}");
            }
        }
        assert!(Member { index: 2, of: 3 }.on(Workload::ReadCrc) == Member::ALONE);
        assert!(Member { index: 2, of: 3 }.on(Workload::Write) == Member::ALONE);
        for w in [Workload::ReadKey, Workload::ReadSeq, Workload::ReadRev] {
            assert!(Member { index: 2, of: 3 }.on(w) == Member { index: 2, of: 3 }, "{w}");
        }
    }
}
