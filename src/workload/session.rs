//! One worker's whole passes of the six (`--pairing process`, and counting): the data
//! generated once, the read database opened and faulted in once (under a memory limit,
//! evicted and read through again before each read pass instead), each pass timed whole
//! as its one chunk, its major page faults read around it.

use std::path::Path;

use anyhow::Result;

use super::iocount::Mark;
use super::lmdb::{Api, Env};
use super::measure::Ended;
use super::measure::{timed, Outcome, Places};
use super::native::{env_options, fault_in};
use super::pass::{Chunks, Pass};
use super::perf::PerfCounter;
use super::presets::{pagecache, usage};
use super::{Dataset, Workload, WorkloadConfig};

/// Opens the read database and faults its pages in, once per worker (not when each pass
/// will evict them).
pub(super) fn open_reads<'a>(
    api: &'a Api,
    cfg: &WorkloadConfig,
    dir: Option<&Path>,
    evict: bool,
) -> Result<Env<'a>, String> {
    let dir = dir.ok_or("reads need --dir")?;
    let env = Env::open(api, dir, &env_options(cfg)).map_err(|e| e.to_string())?;
    if !evict {
        fault_in(&env, dir).map_err(|e| format!("{e:#}"))?;
    }
    Ok(env)
}

/// Drops the read database from this process's map and from the page cache (pages cached
/// by another process would be read without being charged to this one's limit), then reads
/// its pages in use through once (not the map's unused tail, which would push them out): a
/// pass starts with as much of it cached as the limit holds, which for gets spread over the
/// whole data is where the pass's own misses would take the cache, so a limit that holds the
/// data shows no device reads and one that does not shows its misses.
fn refill_reads(env: &Env, dir: &Path) -> Result<()> {
    let file = dir.join("data.mdb");
    pagecache::unmap_pages(&file)?;
    pagecache::evict(&file)?;
    pagecache::warm_head(&file, env.used_bytes()?)
}

/// One worker's passes of the six: the data generated once, the read database opened
/// (and faulted in) once, and only if a read is asked for.
pub struct Session<'a> {
    api: &'a Api,
    cfg: &'a WorkloadConfig,
    places: Places<'a>,
    data: std::cell::OnceCell<Dataset>,
    reads_env: Option<Result<Env<'a>, String>>,
}

impl<'a> Session<'a> {
    pub fn new(api: &'a Api, cfg: &'a WorkloadConfig, places: Places<'a>) -> Session<'a> {
        Session { api, cfg, places, data: std::cell::OnceCell::new(), reads_env: None }
    }

    /// Times `w` `places.iterations` times: a read on the read database, the write on
    /// fresh environments.
    pub fn run(&mut self, w: Workload, counter: Option<&mut PerfCounter>) -> Result<Outcome> {
        let (api, cfg, places) = (self.api, self.cfg, self.places);
        let data = self.data.get_or_init(|| Dataset::generate(cfg));
        match w {
            Workload::Preset(_) | Workload::Program(_) => {
                Err(anyhow::anyhow!("{w} is not one of LmdbJava's workloads"))
            }
            Workload::Write => {
                run_passes(w, places.iterations, counter, || Pass::write(api, places.scratch, cfg, data))
            }
            _ => match self.reads_env.get_or_insert_with(|| open_reads(api, cfg, places.dir, places.evict)) {
                Ok(env) => run_passes(w, places.iterations, counter, || {
                    if let Some(dir) = places.dir.filter(|_| places.evict) {
                        refill_reads(env, dir)?;
                    }
                    Pass::read(api, env, w, data, cfg.key_gets())
                }),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            },
        }
    }
}

/// Times `iterations` passes of `w`, each opened by `open` (a read on the open read
/// database, the write on a fresh environment; untimed) and timed whole; readCrc and
/// readXxh64 also report what each pass computed, the write the space it left.
fn run_passes<'a>(
    w: Workload,
    iterations: u32,
    mut counter: Option<&mut PerfCounter>,
    open: impl Fn() -> Result<Pass<'a>>,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    for _ in 0..iterations {
        let (ns, instructions, ended, faults) = time_whole(open()?, counter.as_deref_mut())?;
        out.push_ended(ns, instructions, ended, w);
        out.major_faults.push(faults);
    }
    Ok(out)
}

/// Times `pass` as its one chunk: the pass's time, its instructions when counted, what it
/// computed and left, and its major page faults (read before and after, not timed).
fn time_whole(mut pass: Pass, counter: Option<&mut PerfCounter>) -> Result<(u64, Option<u64>, Ended, u64)> {
    let whole = Chunks::whole(pass.len());
    pass.enter(&whole, 0).map_err(|e| pass.failure(e))?;
    let before = usage::snapshot()?;
    let mark = Mark::now();
    let (ns, instructions, r) = timed(counter, || pass.chunk(&whole, 0, 0))?;
    pass.count_io(mark);
    let faults = usage::snapshot()?.major_faults() - before.major_faults();
    r.map_err(|e| pass.failure(e))?;
    Ok((ns, instructions, pass.finish()?, faults))
}
