//! A timed pass of one of the six, whole or in chunks: opened untimed, run chunk by chunk
//! (a whole pass is its one chunk), ended untimed. Splitting a pass changes nothing it
//! does: the same keys, values and order, reads inside one read transaction, the write
//! inside one write transaction through one cursor. Only the calls of [`Pass::chunk`] are
//! timed.

use std::ops::Range;
use std::path::Path;

use anyhow::{bail, Result};

use super::dataset::ValueWriter;
use super::iocount::{Io, Mark};
use super::lmdb::{begin_cursor, end_cursor, Api, Env, MDB_cursor, MDB_txn, Walk};
use super::measure::Ended;
use super::native::{self, KeyBuffer, Timed};
use super::{Dataset, Workload, WorkloadConfig};
use crate::ffi::bindings as sys;

/// How a pass of `len` operations is split: chunks of `size`, the last one shorter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunks {
    pub size: usize,
    pub len: usize,
}

impl Chunks {
    /// The whole pass as one chunk.
    pub fn whole(len: usize) -> Chunks {
        Chunks { size: len.max(1), len }
    }

    /// Chunks of `size` operations (at most the pass).
    pub fn of(size: usize, len: usize) -> Chunks {
        Chunks { size: size.clamp(1, len.max(1)), len }
    }

    pub fn count(&self) -> usize {
        self.len.div_ceil(self.size).max(1)
    }

    /// Chunk `i`'s write positions.
    pub fn range(&self, i: usize) -> Range<usize> {
        (i * self.size).min(self.len)..((i + 1) * self.size).min(self.len)
    }

    /// Chunk `i`'s walk steps: the last one walks on to the end, where the whole pass ends.
    pub fn steps(&self, i: usize) -> usize {
        if i + 1 == self.count() {
            usize::MAX
        } else {
            self.size
        }
    }
}

type TxnCursor = (*mut MDB_txn, *mut MDB_cursor);

/// What a walk computes as it goes.
enum Hash {
    Nothing,
    Crc(crc32fast::Hasher),
    Xxh64(u64),
}

enum Kind<'a> {
    Key {
        tc: Option<TxnCursor>,
        key: KeyBuffer,
        /// The pass's gets: the first of the write order (`WorkloadConfig::key_gets`).
        gets: usize,
    },
    Walk {
        tc: Option<TxnCursor>,
        walk: Walk,
        hash: Hash,
        /// The key a chunk entered in its middle is found after ([`Pass::enter`]).
        key: KeyBuffer,
    },
    // `env` is declared before `dir`: it closes before its folder is removed.
    Write {
        env: Env<'a>,
        /// The environment's last transaction id when the pass began.
        txnid: u64,
        dir: tempfile::TempDir,
        key: KeyBuffer,
        values: ValueWriter<'a>,
        tc: Option<TxnCursor>,
        flags: u32,
    },
}

/// One pass under way.
pub struct Pass<'a> {
    api: &'a Api,
    data: &'a Dataset,
    workload: Workload,
    kind: Kind<'a>,
    /// The syncs and bytes its chunks made, counted around each (`iocount`).
    io: (u64, u64),
    /// The chunks entered ([`Pass::enter`]): their entries, whether the last was among
    /// them, and the chunk a walk goes on into.
    entered: Entered,
}

#[derive(Default)]
struct Entered {
    entries: u64,
    last: bool,
    next: usize,
}

impl<'a> Pass<'a> {
    /// A pass of read workload `w` on the open read database: its read transaction and
    /// cursor opened, as LmdbJava holds them open around the timed loop.
    pub fn read(api: &'a Api, env: &Env, w: Workload, data: &'a Dataset, gets: usize) -> Result<Pass<'a>> {
        // SAFETY: a fresh read transaction of an open environment; Pass ends it once.
        let tc = Some(unsafe { begin_cursor(api, env, sys::MDB_RDONLY) }.map_err(|e| api.failure(e))?);
        let walk = |hash| Kind::Walk { tc, walk: Walk::default(), hash, key: KeyBuffer::new(data) };
        let kind = match w {
            Workload::ReadKey => Kind::Key { tc, key: KeyBuffer::new(data), gets: gets.min(data.len()) },
            Workload::ReadSeq | Workload::ReadRev => walk(Hash::Nothing),
            Workload::ReadCrc => walk(Hash::Crc(crc32fast::Hasher::new())),
            Workload::ReadXxh64 => walk(Hash::Xxh64(0)),
            Workload::Write | Workload::Preset(_) | Workload::Program(_) => bail!("{w} is not one of the five reads"),
        };
        Ok(Pass { api, data, workload: w, kind, io: (0, 0), entered: Entered::default() })
    }

    /// A write pass on a fresh environment in `scratch` (created untimed).
    pub fn write(api: &'a Api, scratch: &Path, cfg: &WorkloadConfig, data: &'a Dataset) -> Result<Pass<'a>> {
        let dir = tempfile::tempdir_in(scratch)?;
        let env = Env::open(api, dir.path(), &native::env_options(cfg))?;
        let (key, values, flags) = (KeyBuffer::new(data), data.values(), native::write_flags(cfg));
        let txnid = env.last_txnid()?;
        let kind = Kind::Write { env, txnid, dir, key, values, tc: None, flags };
        Ok(Pass { api, data, workload: Workload::Write, kind, io: (0, 0), entered: Entered::default() })
    }

    /// Readies chunk `i` of `chunks`, untimed, before it runs: a walk that did not run the
    /// chunk before it (another layout of the unit times that one) is placed by a get of
    /// the key that chunk ends on, so that this chunk's timed calls are those of a walk
    /// through every chunk. Only readSeq and readRev enter a chunk so: a checksum would
    /// miss the entries passed over.
    pub fn enter(&mut self, chunks: &Chunks, i: usize) -> Result<(), super::lmdb::Failed> {
        let (api, data, forward) = (self.api, self.data, self.workload != Workload::ReadRev);
        let skips = i != self.entered.next;
        if let Kind::Walk { tc: Some(tc), walk, key, .. } = &mut self.kind {
            if skips && !self.workload.chunks_stand_alone() {
                return Err(("a walk that computes what it visits cannot pass over a chunk", libc::EINVAL));
            }
            if skips {
                let before = chunks.range(i).start.checked_sub(1).map(|b| key.fill(data, data.walked(b, forward)));
                // SAFETY: the pass's own cursor; the key is one of the data set's.
                unsafe { walk.enter(api.mdb_cursor_get, tc.1, before)? };
            }
        }
        self.entered.entries += chunks.range(i).len() as u64;
        self.entered.last = i + 1 == chunks.count();
        self.entered.next = i + 1;
        Ok(())
    }

    /// Runs chunk `i` of `chunks` in copy `copy` of the workload's timed function
    /// ([`native::TIMED_COPIES`]; 0 is the one counted): the timed call, and nothing else.
    #[inline(always)]
    pub fn chunk(&mut self, chunks: &Chunks, i: usize, copy: usize) -> Timed {
        let (api, data) = (self.api, self.data);
        let get = api.mdb_cursor_get;
        let missing = Err(("a pass that has ended", libc::EINVAL));
        // SAFETY: each cursor belongs to this pass's live transaction; a walk goes on
        // on the cursor it began on; the write's transaction is only touched here.
        unsafe {
            match &mut self.kind {
                Kind::Key { tc: Some(tc), key, .. } => native::READ_KEY[copy](get, tc.1, data, key, chunks.range(i)),
                Kind::Walk { tc: Some(tc), walk, hash, .. } => {
                    let n = chunks.steps(i);
                    match (self.workload, hash) {
                        (Workload::ReadCrc, Hash::Crc(h)) => native::READ_CRC[copy](get, tc.1, walk, n, h),
                        (Workload::ReadXxh64, Hash::Xxh64(s)) => native::READ_XXH64[copy](get, tc.1, walk, n, s),
                        (Workload::ReadRev, _) => native::READ_REV[copy](get, tc.1, walk, n),
                        _ => native::READ_SEQ[copy](get, tc.1, walk, n),
                    }
                }
                Kind::Write { env, key, values, tc, flags, .. } => {
                    let put = api.mdb_cursor_put;
                    native::WRITE[copy](api, env, put, data, (key, values), (tc, *flags), chunks.range(i))
                }
                _ => missing,
            }
        }
    }

    /// Adds what was synced and written since `mark` (taken before a chunk's clock
    /// started, read after it stopped) to this pass's.
    pub fn count_io(&mut self, mark: Mark) {
        let (syncs, bytes) = mark.since();
        self.io = (self.io.0 + syncs, self.io.1 + bytes);
    }

    /// Operations in the whole pass: a readKey pass's gets, else every entry.
    pub fn len(&self) -> usize {
        match self.kind {
            Kind::Key { gets, .. } => gets,
            _ => self.data.len(),
        }
    }

    /// A chunk's failure, with `mdb_strerror`'s text.
    pub fn failure(&self, f: super::lmdb::Failed) -> super::lmdb::LmdbError {
        self.api.failure(f)
    }

    /// Ends the pass (untimed): its read transaction closed, and what it computed
    /// (readCrc, readXxh64; 0 otherwise), with the space a write left. A walk that did not
    /// visit every entry of the chunks it entered, or ends where they do not, fails.
    pub fn finish(mut self) -> Result<Ended> {
        let (wanted, last) = (self.entered.entries, self.entered.last);
        let out = match &mut self.kind {
            Kind::Walk { walk, .. } if walk.done != last || walk.visited != wanted => {
                bail!("{} visited {} of the {wanted} entries of its chunks", self.workload, walk.visited)
            }
            Kind::Walk { hash: Hash::Crc(h), .. } => h.clone().finalize() as u64,
            Kind::Walk { hash: Hash::Xxh64(s), .. } => *s,
            Kind::Write { tc: Some(_), .. } => bail!("the write pass ended before its last chunk"),
            _ => 0,
        };
        let (space, io) = match &self.kind {
            Kind::Write { env, dir, txnid, .. } => {
                let commits = env.last_txnid()? - txnid;
                (Some(env.space(dir.path())?), Some(Io { syncs: self.io.0, bytes: self.io.1, commits }))
            }
            _ => (None, None),
        };
        // A sample of the keys says how many it got, which figures per get are over.
        let ops = match self.kind {
            Kind::Key { gets, .. } if gets != self.data.len() => Some(gets as u64),
            _ => None,
        };
        Ok(Ended { output: out, space, io, ops })
    }
}

impl Drop for Pass<'_> {
    /// A pass dropped before its end (a failure) still closes its transaction.
    fn drop(&mut self) {
        let tc = match &mut self.kind {
            Kind::Key { tc, .. } | Kind::Walk { tc, .. } | Kind::Write { tc, .. } => tc.take(),
        };
        if let Some(tc) = tc {
            // SAFETY: the pass's own transaction and cursor, not used again.
            let _ = unsafe { end_cursor(self.api, tc, false, Ok(())) };
        }
    }
}
