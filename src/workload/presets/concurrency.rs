//! Readers beside a writer (`--suite concurrency`): db_bench_mdb's readwhilewriting (each
//! reader's get in a read transaction reset and renewed around it, beside one writer of
//! random overwrites), stalereader (the same, each reader holding one read transaction
//! for the whole interval, so the writer cannot reuse the pages it frees) and
//! slotwhilewriting (each get in a read transaction begun and aborted around it, in an
//! environment opened with MDB_NOTLS, so each claims a reader slot). A pass is a
//! number of intervals of one length; side by side, every unit's crew runs its interval in
//! a shuffled order each round, one crew at a time (`workload::concurrent`), as chunks pair
//! the one-thread workloads. Each pass fills a fresh environment first, untimed, and its
//! space is read after it.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};
use rand::seq::SliceRandom;
use rand::Rng;

use super::{Context, PresetWorkload};
use crate::workload::concurrent::{self, Crew, CrewFigures, CrewInterval, ReaderTxn, RemoteReaders, Writer};
use crate::workload::lmdb::{self, Api, Database, Env, EnvOptions};
use crate::workload::measure::{Figures, Outcome};
use crate::workload::reader_procs::ReaderProcs;
use crate::workload::WorkloadConfig;

/// The writer's puts per interval beside stale readers unless `--puts-per-interval` says.
pub const STALE_PUTS: u32 = 1000;

/// The crew a unit of `readers` reader threads runs for `w`.
pub fn crew(w: PresetWorkload, readers: u32, cfg: &WorkloadConfig) -> Crew {
    let reader_txn = match w {
        PresetWorkload::StaleReader => ReaderTxn::PerInterval,
        PresetWorkload::SlotWhileWriting => ReaderTxn::SlotPerGet,
        _ => ReaderTxn::PerGet,
    };
    // A stale reader's file grows with every commit: a quota keeps it in the map, and
    // what the writer leaves the same in every run.
    let quota = match w {
        PresetWorkload::StaleReader => Some(cfg.preset.puts_per_interval.unwrap_or(STALE_PUTS)),
        _ => cfg.preset.puts_per_interval,
    };
    let writer = Writer {
        puts_per_txn: cfg.preset.puts_per_txn,
        rate: cfg.preset.writes_per_second,
        quota: quota.map(u64::from),
    };
    Crew { readers, reader_txn, writer: Some(writer), keys: cfg.entries }
}

/// Whether the space `w`'s crews leave is set by what their writer did rather than by
/// how long it ran: a writer without a quota puts what its intervals' time allows, so its
/// file and pages move with the host's speed, not with a unit's code, and are not "the same
/// data" from unit to unit.
pub fn space_is_exact(w: PresetWorkload, cfg: &WorkloadConfig) -> bool {
    crew(w, 1, cfg).writer.is_none_or(|w| w.quota.is_some())
}

/// One unit of a side-by-side pass: its library, its slot of the paired worker (the
/// library a reader process opens its environment with), and its readers.
#[derive(Clone, Copy)]
pub struct Member<'a> {
    pub api: &'a Api,
    pub slot: usize,
    pub readers: u32,
}

/// `iterations` passes of `w` by every member, side by side: each pass fills every member's
/// environment (untimed), then runs the members' crews interval by interval, each round in
/// a fresh shuffled order; `after_round` is called between rounds. A failing crew fails
/// the pass of every member (they share the process and its rounds). With `procs`, every
/// crew's readers are those reader processes (`--reader-procs`).
pub fn side_by_side(
    members: &[Member],
    cfg: &WorkloadConfig,
    (scratch, mut procs): (&Path, Option<&mut ReaderProcs>),
    (w, iterations): (PresetWorkload, u32),
    rng: &mut impl Rng,
    after_round: impl Fn(),
) -> Vec<Result<Outcome, String>> {
    let mut out: Vec<Result<Outcome, String>> = members.iter().map(|_| Ok(Outcome::default())).collect();
    for _ in 0..iterations {
        let orders: Vec<Vec<usize>> = (0..cfg.preset.intervals)
            .map(|_| {
                let mut o: Vec<usize> = (0..members.len()).collect();
                o.shuffle(rng);
                o
            })
            .collect();
        let order = |round: u32| {
            if round > 0 {
                after_round();
            }
            orders[round as usize].clone()
        };
        match pass(members, cfg, (scratch, procs.as_deref_mut()), w, order) {
            Ok(done) => {
                for (o, (figures, space)) in out.iter_mut().zip(done) {
                    if let Ok(o) = o {
                        push(o, figures, space, true);
                    }
                }
            }
            Err(e) => return members.iter().map(|_| Err(format!("{e:#}"))).collect(),
        }
    }
    out
}

/// `w` by `readers` readers alone, `iterations` passes (one process per unit and round).
pub fn run(ctx: &Context, w: PresetWorkload, readers: u32) -> Result<Outcome> {
    if ctx.cfg.preset.reader_procs {
        bail!("--reader-procs: readers in processes of their own run in the paired worker (--pairing chunks)");
    }
    let mut out = Outcome::default();
    let me = [Member { api: ctx.api, slot: 0, readers }];
    for _ in 0..ctx.iterations {
        let (figures, space) = pass(&me, ctx.cfg, (ctx.scratch, None), w, |_| vec![0])?.remove(0);
        // Alone in its process: no other unit's intervals to pair with.
        push(&mut out, figures, space, false);
    }
    Ok(out)
}

/// Records one pass: its time is its intervals'; side by side, each interval a chunk. Its
/// space only where it is exact (`space_is_exact`): a run file never holds a figure that
/// measures the host's speed as if it were the data's.
fn push(o: &mut Outcome, crew: CrewFigures, space: Option<crate::workload::space::Space>, paired: bool) {
    o.push(crew.intervals_ns.iter().sum(), None);
    if paired {
        o.chunks_ns.push(crew.intervals_ns.clone());
    }
    o.figures.push(Figures { ops: Some(crew.gets()), crew: Some(crew), ..Default::default() });
    o.space.extend(space);
}

/// One pass of every member on a fresh environment of its own: each crew's figures and,
/// where it is exact, the space its environment was left with. With `procs`, each reader
/// process opens every environment once it is filled and aged, and closes it after.
fn pass(
    members: &[Member],
    cfg: &WorkloadConfig,
    (scratch, procs): (&Path, Option<&mut ReaderProcs>),
    w: PresetWorkload,
    order: impl FnMut(u32) -> Vec<usize>,
) -> Result<Vec<(CrewFigures, Option<crate::workload::space::Space>)>> {
    let dirs: Vec<tempfile::TempDir> =
        members.iter().map(|_| tempfile::tempdir_in(scratch)).collect::<Result<_, _>>()?;
    let crews: Vec<Crew> = members.iter().map(|m| crew(w, m.readers, cfg)).collect();
    // Every crew of a pass reads one way (the workload's): its environments' flags are one.
    let flags = lmdb::env_flags(!cfg.no_writemap, cfg.sync, cfg.readahead) | crew(w, 1, cfg).reader_txn.env_flags();
    let envs: Vec<Env> = members
        .iter()
        .zip(&dirs)
        .map(|(m, d)| Ok(concurrent::fill(m.api, d.path(), cfg.entries, flags)?.with_txn_flags(cfg.sync.txn_flags())?))
        .collect::<Result<_>>()?;
    // Readers that end their transaction around every get stall at the scheduler's whim,
    // and the first stall sets the writer's cost for the pass: every unit starts past it.
    // A stale reader's crews measure how the file grows from fresh, and stay fresh.
    if crews.iter().all(|c| c.reader_txn != ReaderTxn::PerInterval && c.writer.is_some()) {
        for env in &envs {
            concurrent::age(env, cfg.entries, concurrent::AGEING_PUTS)?;
        }
    }
    let length = Duration::from_millis(u64::from(cfg.preset.interval_ms));
    let rounds = (cfg.preset.intervals, length);
    let intervals: Vec<Vec<CrewInterval>> = match procs {
        None => concurrent::alternate(&envs, &crews, rounds, order)?,
        Some(procs) => {
            let o = EnvOptions {
                map_size: concurrent::map_size(cfg.entries),
                flags,
                txn_flags: 0,
                db: Database::Unnamed,
                lmdb10: Default::default(),
            };
            for (unit, (m, d)) in members.iter().zip(&dirs).enumerate() {
                procs.open(unit, m.slot, d.path(), &o)?;
            }
            let done =
                concurrent::alternate_with(&envs, &crews, Some(&mut *procs as &mut dyn RemoteReaders), rounds, order)?;
            (0..members.len()).try_for_each(|unit| procs.close(unit))?;
            done
        }
    };
    let exact = space_is_exact(w, cfg);
    let mut out = Vec::new();
    for ((env, d), (m, i)) in envs.iter().zip(&dirs).zip(members.iter().zip(&intervals)) {
        let space = if exact { Some(env.space(d.path())?) } else { None };
        out.push((CrewFigures::of(m.readers, i), space));
    }
    Ok(out)
}
