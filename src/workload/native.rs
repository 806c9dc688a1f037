//! The Rust engine: the six workloads against one loaded liblmdb.
//!
//! Each timed function holds only the workload — no allocation, logging or checksum
//! bookkeeping — and is exported unmangled so an instruction counter (callgrind's
//! `--toggle-collect=lmdbregress_timed_*`) can count exactly its region.

use std::hint::black_box;
use std::path::Path;

use anyhow::Result;

use super::dataset::{self, ValueWriter};
use super::lmdb::{
    self, begin_cursor, bytes, empty_val, end_cursor, touch, val, walk, Api, CursorGet, CursorPut, Database, Env,
    EnvOptions, Failed, MDB_cursor, MDB_txn, MDB_val, Walk, BACKWARD, FORWARD,
};
use super::measure::TimedFunctions;
use super::presets::pagecache;
use super::{Checksum, Dataset, KeyKind, Order, Workload, WorkloadConfig};
use crate::ffi::bindings as sys;

const SET_KEY: sys::MDB_cursor_op = sys::MDB_cursor_op_MDB_SET_KEY;

/// How LmdbJava's benchmark opens its environments: the database "db".
pub fn env_options(cfg: &WorkloadConfig) -> EnvOptions {
    EnvOptions {
        map_size: cfg.effective_map_size(),
        flags: lmdb::env_flags(!cfg.no_writemap, cfg.sync, cfg.readahead),
        txn_flags: cfg.sync.txn_flags(),
        db: Database::Named { integer_keys: cfg.keys == KeyKind::Int },
        lmdb10: Default::default(),
    }
}

/// One reused key buffer, as LmdbJava's `rwKey`: the timed loops write each key into it.
pub struct KeyBuffer {
    bytes: [u8; dataset::STRING_KEY_BYTES],
    size: usize,
}

impl KeyBuffer {
    pub fn new(data: &Dataset) -> KeyBuffer {
        KeyBuffer { bytes: [0; dataset::STRING_KEY_BYTES], size: data.key_size() }
    }

    /// Key `j` (a write position) as an MDB_val over this buffer. Fixed-size copies, so
    /// each is a store or two rather than a call to memcpy.
    #[inline(always)]
    pub(super) fn fill(&mut self, data: &Dataset, j: usize) -> MDB_val {
        match data.key_kind {
            KeyKind::Int => self.bytes[..dataset::INT_BYTES].copy_from_slice(&data.keys[j].to_ne_bytes()),
            KeyKind::Str16 => self.bytes.copy_from_slice(&data.key_strings[j * 16..j * 16 + 16]),
        }
        MDB_val { mv_size: self.size, mv_data: self.bytes.as_mut_ptr() as *mut _ }
    }
}

/// The key and value escape to the optimiser, their bytes unread, as the C twin's
/// CONSUME: a compiler barrier that may read any memory, the two values included (their
/// addresses went to LMDB already). No operand: one in a register costs the loop moves
/// the C twin's `"g"` operand does not.
#[inline(always)]
fn consume(_k: &MDB_val, _v: &MDB_val) {
    // SAFETY: an empty template; it only claims it may read and write memory.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) }
}

/// Result of the timed region: its own output (CRC, xxHash sum) or the failing call.
pub type Timed = Result<u64, Failed>;

/// # Safety (all timed functions)
/// `cur` is an open cursor on a read transaction of the database `data` was written to;
/// a walk is always continued on the cursor it began on.
///
/// Each runs one chunk of a pass (a whole pass is its one chunk): readKey the keys at
/// write positions `range`, the walks up to `n` more entries.
#[inline(always)]
unsafe fn read_key(
    get: CursorGet,
    cur: *mut MDB_cursor,
    data: &Dataset,
    key: &mut KeyBuffer,
    range: std::ops::Range<usize>,
) -> Timed {
    for j in range {
        let mut k = key.fill(data, j);
        let mut v = empty_val();
        let rc = get(cur, &mut k, &mut v, SET_KEY);
        if rc != 0 {
            return Err(("mdb_cursor_get(MDB_SET_KEY)", rc));
        }
        black_box(&v);
    }
    Ok(0)
}

#[inline(always)]
unsafe fn read_seq(get: CursorGet, cur: *mut MDB_cursor, walk: &mut Walk, n: usize) -> Timed {
    walk.next(get, cur, FORWARD, n, "mdb_cursor_get", |k, v| {
        consume(k, v);
        Ok(())
    })?;
    Ok(0)
}

#[inline(always)]
unsafe fn read_rev(get: CursorGet, cur: *mut MDB_cursor, walk: &mut Walk, n: usize) -> Timed {
    walk.next(get, cur, BACKWARD, n, "mdb_cursor_get", |k, v| {
        consume(k, v);
        Ok(())
    })?;
    Ok(0)
}

#[inline(always)]
unsafe fn read_crc(
    get: CursorGet,
    cur: *mut MDB_cursor,
    walk: &mut Walk,
    n: usize,
    h: &mut crc32fast::Hasher,
) -> Timed {
    // The hasher in a local for the chunk, as the C twin's `crc`: through `h` each update
    // stored its state and length back to memory. The closure is inlined: the walk's two
    // loops each hold it, and left to itself the compiler called it, its Result through
    // memory (readCrc cost 12 instructions an entry more than it does now).
    let mut local = h.clone();
    let r = walk.next(
        get,
        cur,
        FORWARD,
        n,
        "mdb_cursor_get",
        #[inline(always)]
        |k, v| {
            local.update(bytes(k));
            local.update(bytes(v));
            Ok(())
        },
    );
    *h = local;
    r.map(|_| 0)
}

#[inline(always)]
unsafe fn read_xxh64(get: CursorGet, cur: *mut MDB_cursor, walk: &mut Walk, n: usize, sum: &mut u64) -> Timed {
    let mut total = *sum;
    // Inlined, as readCrc's: the walk's two loops each hold it. The hash is inlined too
    // (twox-hash's one-shot XXH64 is `#[inline]`, as the C twin's XXH_INLINE_ALL): each
    // copy of this function then holds its own, placed with it (TIMED_COPIES).
    let r = walk.next(
        get,
        cur,
        FORWARD,
        n,
        "mdb_cursor_get",
        #[inline(always)]
        |k, v| {
            total = total
                .wrapping_add(twox_hash::XxHash64::oneshot(0, bytes(k)))
                .wrapping_add(twox_hash::XxHash64::oneshot(0, bytes(v)));
            Ok(())
        },
    );
    *sum = total;
    r.map(|_| 0)
}

/// The write positions `range`, each entry built in the reused key and value buffers as
/// LmdbJava's writer builds it, through `tc`'s cursor: the chunk holding position 0
/// begins the pass's one transaction, the one holding the last position commits it.
///
/// # Safety
/// `env` is open; no other write transaction of it is active; `tc` is None before the
/// first chunk and is only touched by this function.
#[inline(always)]
unsafe fn write(
    api: &Api,
    env: &Env,
    put: CursorPut,
    data: &Dataset,
    buffers: (&mut KeyBuffer, &mut ValueWriter),
    (tc, flags): (&mut Option<(*mut MDB_txn, *mut MDB_cursor)>, u32),
    range: std::ops::Range<usize>,
) -> Timed {
    let (key, values) = buffers;
    let (first, last) = (range.start == 0, range.end == data.len());
    if first {
        *tc = Some(begin_cursor(api, env, 0)?);
    }
    let Some(open) = *tc else { return Err(("mdb_cursor_put (no transaction)", libc::EINVAL)) };
    let mut r = Ok(0);
    for j in range {
        let mut k = key.fill(data, j);
        let mut v = val(values.fill(j));
        let rc = put(open.1, &mut k, &mut v, flags);
        if rc != 0 {
            r = Err(("mdb_cursor_put", rc));
            break;
        }
    }
    if last || r.is_err() {
        *tc = None;
        return end_cursor(api, open, true, r);
    }
    r
}

/// How many copies of each of the six timed functions the binary holds. The linker places
/// each copy apart (in every function order, src/harness.rs), and a paired process times
/// its chunks in the copies by turns, so one process sees several placements of the timed
/// loop instead of one: where a loop sits moves some tags' times against others
/// (reports/README.md, "Where the timed loop sits"), and that spread then shrinks inside
/// each process instead of entering the intervals whole. Copy 0 keeps the plain name,
/// which a counted pass (a whole pass, one chunk) runs and callgrind's part trigger names.
pub const TIMED_COPIES: usize = 4;

/// The copies of one timed function: each unmangled (`lmdbregress_timed_*` for the
/// instruction counter's toggle), `#[inline(never)]`, and marked by an empty assembly
/// comment of its own name, so that the optimiser, which folds functions of one body into
/// one, keeps each; and a table of them by copy.
macro_rules! timed_copies {
    ($table:ident = $body:ident $params:tt -> $ret:ty: [$($copy:ident),+]) => {
        $(timed_copy!($copy $body $params $ret);)+
        timed_table!($table $params $ret [$($copy),+]);
    };
}

macro_rules! timed_copy {
    ($copy:ident $body:ident ($($arg:ident: $ty:ty),*) $ret:ty) => {
        #[no_mangle]
        #[inline(never)]
        pub unsafe fn $copy($($arg: $ty),*) -> $ret {
            // SAFETY: an assembly comment: no instruction, no operand.
            std::arch::asm!(concat!("/* ", stringify!($copy), " */"), options(nomem, nostack, preserves_flags));
            $body($($arg),*)
        }
    };
}

macro_rules! timed_table {
    ($table:ident ($($arg:ident: $ty:ty),*) $ret:ty [$($copy:ident),+]) => {
        /// The copies by number (see [`TIMED_COPIES`]).
        pub const $table: [unsafe fn($($ty),*) -> $ret; TIMED_COPIES] = [$($copy),+];
    };
}

timed_copies!(READ_KEY = read_key(
        get: CursorGet,
        cur: *mut MDB_cursor,
        data: &Dataset,
        key: &mut KeyBuffer,
        range: std::ops::Range<usize>
    ) -> Timed:
    [lmdbregress_timed_read_key, lmdbregress_timed_read_key_1, lmdbregress_timed_read_key_2, lmdbregress_timed_read_key_3]);
timed_copies!(READ_SEQ = read_seq(get: CursorGet, cur: *mut MDB_cursor, walk: &mut Walk, n: usize) -> Timed:
    [lmdbregress_timed_read_seq, lmdbregress_timed_read_seq_1, lmdbregress_timed_read_seq_2, lmdbregress_timed_read_seq_3]);
timed_copies!(READ_REV = read_rev(get: CursorGet, cur: *mut MDB_cursor, walk: &mut Walk, n: usize) -> Timed:
    [lmdbregress_timed_read_rev, lmdbregress_timed_read_rev_1, lmdbregress_timed_read_rev_2, lmdbregress_timed_read_rev_3]);
timed_copies!(READ_CRC = read_crc(
        get: CursorGet,
        cur: *mut MDB_cursor,
        walk: &mut Walk,
        n: usize,
        h: &mut crc32fast::Hasher
    ) -> Timed:
    [lmdbregress_timed_read_crc, lmdbregress_timed_read_crc_1, lmdbregress_timed_read_crc_2, lmdbregress_timed_read_crc_3]);
timed_copies!(READ_XXH64 = read_xxh64(
        get: CursorGet,
        cur: *mut MDB_cursor,
        walk: &mut Walk,
        n: usize,
        sum: &mut u64
    ) -> Timed:
    [lmdbregress_timed_read_xxh64, lmdbregress_timed_read_xxh64_1, lmdbregress_timed_read_xxh64_2, lmdbregress_timed_read_xxh64_3]);
timed_copies!(WRITE = write(
        api: &Api,
        env: &Env,
        put: CursorPut,
        data: &Dataset,
        buffers: (&mut KeyBuffer, &mut ValueWriter),
        open: (&mut Option<(*mut MDB_txn, *mut MDB_cursor)>, u32),
        range: std::ops::Range<usize>
    ) -> Timed:
    [lmdbregress_timed_write, lmdbregress_timed_write_1, lmdbregress_timed_write_2, lmdbregress_timed_write_3]);

/// Each workload's timed function in this engine and in the C twin (harness/workloads.c),
/// called once per repetition.
pub fn timed_functions(w: Workload) -> TimedFunctions {
    let (rust, c) = match w {
        Workload::ReadKey => ("lmdbregress_timed_read_key", "timed_read_key"),
        Workload::ReadSeq => ("lmdbregress_timed_read_seq", "timed_read_seq"),
        Workload::ReadRev => ("lmdbregress_timed_read_rev", "timed_read_rev"),
        Workload::ReadCrc => ("lmdbregress_timed_read_crc", "timed_read_crc"),
        Workload::ReadXxh64 => ("lmdbregress_timed_read_xxh64", "timed_read_xxh64"),
        Workload::Write => ("lmdbregress_timed_write", "timed_write"),
        // Not one of the six: its own suite declares its functions.
        Workload::Preset(_) | Workload::Program(_) => return TimedFunctions::ManyPerPass,
    };
    TimedFunctions::OnePerPass { rust, c }
}

pub(super) fn write_flags(cfg: &WorkloadConfig) -> u32 {
    match cfg.order {
        Order::Seq => sys::MDB_APPEND,
        Order::Random => 0,
    }
}

/// Writes the read database once per run and tag, as the write workload writes: in key
/// order with MDB_APPEND, or (random order) with plain puts, as LmdbJava's reader does.
pub fn prepare(api: &Api, dir: &Path, cfg: &WorkloadConfig, data: &Dataset) -> Result<()> {
    write_database(api, dir, cfg, data, write_flags(cfg))
}

/// Writes every entry of `data` into a new environment in `dir` with `flags` (untimed).
pub fn write_database(api: &Api, dir: &Path, cfg: &WorkloadConfig, data: &Dataset, flags: u32) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let env = Env::open(api, dir, &env_options(cfg))?;
    let (mut key, mut values) = (KeyBuffer::new(data), data.values());
    let range = 0..data.len();
    // SAFETY: env is open and idle.
    unsafe {
        lmdbregress_timed_write(api, &env, api.mdb_cursor_put, data, (&mut key, &mut values), (&mut None, flags), range)
    }
    .map_err(|e| api.failure(e))?;
    Ok(())
}

/// Maps the database (its data file in `dir`) into the process untimed, so the timed
/// passes that follow take no page faults: what LmdbJava's warm-up iterations leave behind.
/// The kernel maps every page in use in one call where it can (as a walk touches them);
/// else one untimed walk touches every entry. (Not a `timed_` function, so instruction
/// counters skip it.) Why not always the walk: with 17 units a paired process walked 17
/// million entries before its first chunk (reports/README.md, "Where a round's time goes").
pub fn fault_in(env: &Env, dir: &Path) -> Result<()> {
    if pagecache::populate_head(&dir.join("data.mdb"), env.used_bytes()?).is_ok() {
        return Ok(());
    }
    // SAFETY: the value's bytes are the transaction's, live during the walk.
    env.walk(|_, v| unsafe { touch(&val(v)) })?;
    Ok(())
}

/// Maps into the process, untimed, the pages that the chunks `ranges` of a pass of `w`
/// read: a further layout faults in what its chunks read, not the whole map. A chunk of
/// data written in key order lies on consecutive pages, so a get every few pages finds
/// them (and the branch pages above them) and the kernel maps the run from the first to
/// the last in one call ([`Span`]). Elsewhere, or where the pages found are not one run or
/// the kernel refuses, a get every few entries ([`read_positions`]), the kernel mapping
/// each faulting page's cached neighbours with it.
pub fn fault_in_chunks(
    api: &Api,
    env: &Env,
    (cfg, data, w): (&WorkloadConfig, &Dataset, Workload),
    ranges: impl Iterator<Item = std::ops::Range<usize>>,
) -> Result<(), Failed> {
    let get = api.mdb_cursor_get;
    let mut key = KeyBuffer::new(data);
    let (page, entry) = (pagecache::page_size(), data.key_size() + data.value_size + 16);
    let fine = fault_stride(cfg, w, page, entry);
    let coarse = (cfg.order == Order::Seq && fine > 1).then_some(fine * 2 * Span::PAGES_A_GET);
    // SAFETY: a fresh read transaction and cursor of an open environment, closed below;
    // every key filled is one of the data set's; a span's pages hold values LMDB handed
    // back, inside its one map of the data file.
    unsafe {
        let tc = begin_cursor(api, env, sys::MDB_RDONLY)?;
        let mut got = |r: &std::ops::Range<usize>, stride: usize| -> Result<Span, Failed> {
            let mut span = Span::default();
            for j in read_positions(data, w, r, stride) {
                let (mut k, mut v) = (key.fill(data, j), empty_val());
                lmdb::ok("mdb_cursor_get(MDB_SET_KEY)", get(tc.1, &mut k, &mut v, SET_KEY))?;
                span.add(v.mv_data as usize / page);
            }
            Ok(span)
        };
        let all = || -> Result<(), Failed> {
            for r in ranges.filter(|r| !r.is_empty()) {
                let most = r.len() * entry * 2 / page + Span::GAP_PAGES;
                let mapped = match coarse {
                    Some(c) => got(&r, c)?.populate(page, most),
                    None => false,
                };
                if !mapped {
                    got(&r, fine)?;
                }
            }
            Ok(())
        };
        let r = all();
        end_cursor(api, tc, false, r)
    }
}

/// The pages a run of gets found their values on, in the order got.
#[derive(Debug, Default)]
struct Span {
    low: usize,
    high: usize,
    last: Option<usize>,
    widest_step: usize,
}

impl Span {
    /// Pages of entries between two gets of a span.
    const PAGES_A_GET: usize = 16;
    /// The most pages two gets of one run may lie apart: a run of leaf pages written in
    /// key order holds a branch page where a branch split.
    const GAP_PAGES: usize = 32;

    fn add(&mut self, page: usize) {
        match self.last {
            None => (self.low, self.high) = (page, page),
            Some(last) => {
                self.widest_step = self.widest_step.max(page.abs_diff(last));
                (self.low, self.high) = (self.low.min(page), self.high.max(page));
            }
        }
        self.last = Some(page);
    }

    /// Whether the pages are one run: no two gets more than [`Span::GAP_PAGES`] apart,
    /// and `most` pages or fewer from the lowest to the highest.
    fn is_run(&self, most: usize) -> bool {
        self.last.is_some() && self.widest_step <= Self::GAP_PAGES && self.high - self.low < most
    }

    /// Maps every page from the lowest to the highest (of `page` bytes) if they are one
    /// run of at most `most`; whether it did.
    ///
    /// # Safety
    /// The pages are of one map, which holds every page between them.
    unsafe fn populate(&self, page: usize, most: usize) -> bool {
        self.is_run(most) && pagecache::populate(self.low * page, (self.high - self.low + 1) * page).is_ok()
    }
}

/// The write positions of the keys whose gets read the pages chunk `r` of a pass of `w`
/// reads: every `stride`-th entry in the order the pass reads them and its last (a chunk
/// of a walk enters after the entry before it, and gets that one too).
fn read_positions<'a>(
    data: &'a Dataset,
    w: Workload,
    r: &std::ops::Range<usize>,
    stride: usize,
) -> impl Iterator<Item = usize> + 'a {
    let walked = move |i: usize| match w {
        Workload::ReadKey => i,
        _ => data.walked(i, w != Workload::ReadRev),
    };
    let before = r.start.checked_sub(1).filter(|_| w != Workload::ReadKey);
    before.into_iter().chain(r.clone().step_by(stride)).chain(Some(r.end - 1)).map(walked)
}

/// Entries apart that [`read_positions`] gets one by one: about two a page of entries
/// (`entry` bytes each: key, value and LMDB's node header) where the pass reads neighbours
/// in the tree (a walk, or gets of keys written in order); every one once values fill half
/// a page, or where the pass gets keys written at random, which lie on pages all over the
/// tree. LMDB's page is the operating system's.
fn fault_stride(cfg: &WorkloadConfig, w: Workload, page: usize, entry: usize) -> usize {
    match (w, cfg.order) {
        (Workload::ReadKey, Order::Random) => 1,
        _ => (page / (2 * entry)).max(1),
    }
}

/// The verify step: each of `reads` walked once through this library, untimed, on the
/// read database in `dir`, and handed to `report` with its checksum or why there is none.
pub fn verify_all(
    api: &Api,
    dir: &Path,
    cfg: &WorkloadConfig,
    reads: &[Workload],
    mut report: impl FnMut(Workload, Result<Checksum, String>),
) {
    let data = Dataset::generate(cfg);
    let env = Env::open(api, dir, &env_options(cfg));
    for &w in reads {
        report(
            w,
            match &env {
                Ok(env) => verify(api, env, w, &data).map_err(|e| format!("{e:#}")),
                Err(e) => Err(e.to_string()),
            },
        );
    }
}

/// The untimed check, once per run for each engine and tag: what each read workload
/// visits, hashed as its [`Checksum`] says, through this library.
pub fn verify(api: &Api, env: &Env, w: Workload, data: &Dataset) -> Result<Checksum> {
    let get = api.mdb_cursor_get;
    let mut xx = crate::workload::checksum::Hasher::default();
    let mut crc = crc32fast::Hasher::new();
    let mut sum = 0u64;
    let mut each = |k: &[u8], v: &[u8]| {
        xx.add(k, v);
        crc.update(k);
        crc.update(v);
        sum = sum.wrapping_add(twox_hash::XxHash64::oneshot(0, k)).wrapping_add(twox_hash::XxHash64::oneshot(0, v));
    };
    // SAFETY: a cursor on a fresh read transaction, closed right after; pointers valid until then.
    unsafe {
        let tc = begin_cursor(api, env, sys::MDB_RDONLY).map_err(|e| api.failure(e))?;
        let mut walked = |k: &mut MDB_val, v: &mut MDB_val| {
            each(bytes(k), bytes(v));
            Ok(())
        };
        let r = match w {
            Workload::ReadKey => by_key(get, tc.1, data, &mut each),
            Workload::ReadRev => walk(get, tc.1, BACKWARD, "mdb_cursor_get", &mut walked).map(drop),
            _ => walk(get, tc.1, FORWARD, "mdb_cursor_get", &mut walked).map(drop),
        };
        end_cursor(api, tc, false, r).map_err(|e| api.failure(e))?;
    }
    let all = xx.finish();
    let digest = match w {
        Workload::ReadCrc => crc.finalize() as u64,
        Workload::ReadXxh64 => sum,
        _ => all.digest,
    };
    Ok(Checksum { entries: all.entries, digest })
}

/// Every key in write order through MDB_SET_KEY, handing each key and found value on.
unsafe fn by_key(
    get: CursorGet,
    cur: *mut MDB_cursor,
    data: &Dataset,
    mut each: impl FnMut(&[u8], &[u8]),
) -> Result<(), Failed> {
    for j in 0..data.len() {
        let mut k = val(data.key(j));
        let mut v = empty_val();
        let rc = get(cur, &mut k, &mut v, SET_KEY);
        if rc != 0 {
            return Err(("mdb_cursor_get(MDB_SET_KEY)", rc));
        }
        each(data.key(j), bytes(&v));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages found in order, or backwards, a few apart, are one run; a step wider than
    /// the gap, a run longer than asked for, or no page at all is not.
    #[test]
    fn a_span_is_one_run_only_of_near_pages_within_its_length() {
        let span = |pages: &[usize]| {
            let mut s = Span::default();
            pages.iter().for_each(|&p| s.add(p));
            s
        };
        assert!(span(&[100, 116, 133, 149]).is_run(60));
        assert!(span(&[149, 133, 116, 100]).is_run(60));
        assert!(!span(&[100, 116, 133, 149]).is_run(49), "longer than asked for");
        assert!(!span(&[100, 116, 100 + Span::GAP_PAGES + 17]).is_run(1000), "a step wider than the gap");
        assert!(!span(&[100, 900, 116]).is_run(1000), "a page far off");
        assert!(!span(&[]).is_run(1000));
    }

    /// Callgrind names each workload's profile part by its timed function, and a process
    /// times its chunks in each copy by turns: two functions of one body would be folded
    /// into one symbol by the optimiser, one workload's count would go missing, and the
    /// copies would be one placement.
    #[test]
    fn the_timed_functions_and_their_copies_are_all_apart() {
        let tables = [
            READ_KEY.map(|f| f as usize),
            READ_SEQ.map(|f| f as usize),
            READ_REV.map(|f| f as usize),
            READ_CRC.map(|f| f as usize),
            READ_XXH64.map(|f| f as usize),
            WRITE.map(|f| f as usize),
        ];
        let distinct: std::collections::BTreeSet<usize> = tables.iter().flatten().copied().collect();
        assert_eq!(distinct.len(), 6 * TIMED_COPIES, "{tables:x?}");
        assert_eq!(READ_CRC[0] as usize, lmdbregress_timed_read_crc as *const () as usize, "copy 0 is the counted one");
    }
}
