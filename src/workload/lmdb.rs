//! The LMDB calls the workloads make, resolved once from a dynamically loaded library
//! (bindgen's `Lmdb` over libloading) into plain function pointers, so a timed loop pays
//! for the call and nothing else.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::path::Path;
use std::ptr;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::ffi::bindings as sys;
use crate::workload::presets::lmdb_suite::declared::NotApplicable;
pub use sys::{MDB_cursor, MDB_dbi, MDB_env, MDB_txn, MDB_val};

/// An LMDB call that returned an error code, with `mdb_strerror`'s text.
#[derive(Debug, thiserror::Error)]
#[error("{call}: {text} ({code})")]
pub struct LmdbError {
    pub call: &'static str,
    pub code: c_int,
    pub text: String,
}

pub type CursorGet = unsafe extern "C" fn(*mut MDB_cursor, *mut MDB_val, *mut MDB_val, sys::MDB_cursor_op) -> c_int;
pub type CursorPut = unsafe extern "C" fn(*mut MDB_cursor, *mut MDB_val, *mut MDB_val, c_uint) -> c_int;

macro_rules! api {
    ($($name:ident : $ty:ty),* $(,)?) => {
        /// Function pointers into one loaded liblmdb.
        pub struct Api {
            _lib: sys::Lmdb,
            $(pub $name: $ty,)*
            /// The calls only LMDB 1.0 has; None before.
            pub v10: Option<Api10>,
        }
        impl Api {
            pub fn load(path: &Path) -> Result<Api> {
                // SAFETY: loading liblmdb runs no initialisers that could misbehave.
                let lib = unsafe { sys::Lmdb::new(path) }.with_context(|| format!("cannot load {}", path.display()))?;
                Ok(Api {
                    $($name: *lib.$name.as_ref().map_err(|e| anyhow::anyhow!("{}: no {}: {e}", path.display(), stringify!($name)))?,)*
                    v10: Api10::load(path)?,
                    _lib: lib,
                })
            }
        }
    };
}

api! {
    mdb_version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int) -> *mut c_char,
    mdb_strerror: unsafe extern "C" fn(c_int) -> *mut c_char,
    mdb_env_create: unsafe extern "C" fn(*mut *mut MDB_env) -> c_int,
    mdb_env_set_mapsize: unsafe extern "C" fn(*mut MDB_env, usize) -> c_int,
    mdb_env_set_maxdbs: unsafe extern "C" fn(*mut MDB_env, MDB_dbi) -> c_int,
    mdb_env_set_maxreaders: unsafe extern "C" fn(*mut MDB_env, c_uint) -> c_int,
    mdb_env_open: unsafe extern "C" fn(*mut MDB_env, *const c_char, c_uint, sys::mdb_mode_t) -> c_int,
    mdb_env_close: unsafe extern "C" fn(*mut MDB_env),
    mdb_txn_begin: unsafe extern "C" fn(*mut MDB_env, *mut MDB_txn, c_uint, *mut *mut MDB_txn) -> c_int,
    mdb_txn_commit: unsafe extern "C" fn(*mut MDB_txn) -> c_int,
    mdb_txn_abort: unsafe extern "C" fn(*mut MDB_txn),
    mdb_dbi_open: unsafe extern "C" fn(*mut MDB_txn, *const c_char, c_uint, *mut MDB_dbi) -> c_int,
    mdb_put: unsafe extern "C" fn(*mut MDB_txn, MDB_dbi, *mut MDB_val, *mut MDB_val, c_uint) -> c_int,
    mdb_get: unsafe extern "C" fn(*mut MDB_txn, MDB_dbi, *mut MDB_val, *mut MDB_val) -> c_int,
    mdb_cursor_open: unsafe extern "C" fn(*mut MDB_txn, MDB_dbi, *mut *mut MDB_cursor) -> c_int,
    mdb_cursor_close: unsafe extern "C" fn(*mut MDB_cursor),
    mdb_cursor_get: CursorGet,
    mdb_cursor_put: CursorPut,
    mdb_stat: unsafe extern "C" fn(*mut MDB_txn, MDB_dbi, *mut sys::MDB_stat) -> c_int,
    mdb_env_info: unsafe extern "C" fn(*mut MDB_env, *mut sys::MDB_envinfo) -> c_int,
    mdb_del: unsafe extern "C" fn(*mut MDB_txn, MDB_dbi, *mut MDB_val, *mut MDB_val) -> c_int,
    mdb_cursor_del: unsafe extern "C" fn(*mut MDB_cursor, c_uint) -> c_int,
    mdb_drop: unsafe extern "C" fn(*mut MDB_txn, MDB_dbi, c_int) -> c_int,
    mdb_env_copy2: unsafe extern "C" fn(*mut MDB_env, *const c_char, c_uint) -> c_int,
    mdb_txn_reset: unsafe extern "C" fn(*mut MDB_txn),
    mdb_txn_renew: unsafe extern "C" fn(*mut MDB_txn) -> c_int,
    mdb_cursor_count: unsafe extern "C" fn(*mut MDB_cursor, *mut usize) -> c_int,
    mdb_env_stat: unsafe extern "C" fn(*mut MDB_env, *mut sys::MDB_stat) -> c_int,
    mdb_env_sync: unsafe extern "C" fn(*mut MDB_env, c_int) -> c_int,
    mdb_reader_list: unsafe extern "C" fn(*mut MDB_env, sys::MDB_msg_func, *mut c_void) -> c_int,
    mdb_reader_check: unsafe extern "C" fn(*mut MDB_env, *mut c_int) -> c_int,
}

/// mdb_env_set_checksum's callback: a page's checksum into `dst`.
pub type SumFunc = unsafe extern "C" fn(*const MDB_val, *mut MDB_val, *const MDB_val);
/// mdb_env_set_encrypt's callback: `src` en- or decrypted into `dst`; 0 on success.
pub type EncFunc = unsafe extern "C" fn(*const MDB_val, *mut MDB_val, *const MDB_val, c_int) -> c_int;

/// The calls of LMDB 1.0 that 0.9 has not got (none are in the bindings, made from 0.9's
/// lmdb.h), loaded when the library has them.
pub struct Api10 {
    _lib: libloading::Library,
    pub mdb_env_set_pagesize: unsafe extern "C" fn(*mut MDB_env, c_int) -> c_int,
    pub mdb_env_set_checksum: unsafe extern "C" fn(*mut MDB_env, SumFunc, c_uint) -> c_int,
    pub mdb_env_set_encrypt: unsafe extern "C" fn(*mut MDB_env, EncFunc, *const MDB_val, c_uint) -> c_int,
    pub mdb_env_incr_dump: unsafe extern "C" fn(*mut MDB_env, *const c_char, usize) -> c_int,
    pub mdb_env_incr_loadfd: unsafe extern "C" fn(*mut MDB_env, c_int) -> c_int,
}

impl Api10 {
    fn load(path: &Path) -> Result<Option<Api10>> {
        // SAFETY: the library is loaded already (by Api::load); the symbols have 1.0's types.
        unsafe {
            let lib = libloading::Library::new(path).with_context(|| format!("cannot load {}", path.display()))?;
            let (Ok(pagesize), Ok(checksum), Ok(encrypt), Ok(dump), Ok(load)) = (
                lib.get(b"mdb_env_set_pagesize\0"),
                lib.get(b"mdb_env_set_checksum\0"),
                lib.get(b"mdb_env_set_encrypt\0"),
                lib.get(b"mdb_env_incr_dump\0"),
                lib.get(b"mdb_env_incr_loadfd\0"),
            ) else {
                return Ok(None);
            };
            let (pagesize, checksum, encrypt, dump, load) = (*pagesize, *checksum, *encrypt, *dump, *load);
            Ok(Some(Api10 {
                _lib: lib,
                mdb_env_set_pagesize: pagesize,
                mdb_env_set_checksum: checksum,
                mdb_env_set_encrypt: encrypt,
                mdb_env_incr_dump: dump,
                mdb_env_incr_loadfd: load,
            }))
        }
    }
}

/// mdb_env_open's flag of LMDB 1.0 that maps the file a chunk at a time (not in 0.9's lmdb.h).
pub const MDB_REMAP_CHUNKS: u32 = 0x400_0000;

impl Api {
    pub fn check(&self, call: &'static str, rc: c_int) -> Result<(), LmdbError> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: mdb_strerror returns a static string (or strerror's) for any code.
        let text = unsafe {
            let p = (self.mdb_strerror)(rc);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(LmdbError { call, code: rc, text })
    }

    /// A timed region's failure, with `mdb_strerror`'s text.
    pub fn failure(&self, (call, rc): Failed) -> LmdbError {
        self.check(call, rc).expect_err("a failure's code is non-zero")
    }

    /// Refuses write transactions' `flags` this LMDB would drop: 0.9's mdb_txn_begin masks
    /// off MDB_NOSYNC and MDB_NOMETASYNC, so a per-transaction mode would sync fully under
    /// its name. The runner leaves such units unrun ([`SyncMode::applies_to`]); this is
    /// the worker's own check.
    pub fn takes_txn_flags(&self, flags: u32) -> Result<(), LmdbError> {
        let (a, b, c, text) = self.version();
        match flags != 0 && (a, b, c) < PER_TXN_SYNC_SINCE {
            true => Err(LmdbError {
                call: "mdb_txn_begin",
                code: libc::EINVAL,
                text: format!(
                    "{text} drops MDB_NOSYNC and MDB_NOMETASYNC given to mdb_txn_begin (LMDB has them from 0.9.70)"
                ),
            }),
            false => Ok(()),
        }
    }

    pub fn version(&self) -> (i32, i32, i32, String) {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: writes three ints, returns a static string.
        let s = unsafe { CStr::from_ptr((self.mdb_version)(&mut a, &mut b, &mut c)) };
        (a, b, c, s.to_string_lossy().into_owned())
    }
}

/// An open environment with its one database; closed on drop.
pub struct Env<'a> {
    pub api: &'a Api,
    pub env: *mut MDB_env,
    pub dbi: MDB_dbi,
    /// mdb_txn_begin's flags for each write transaction ([`EnvOptions::txn_flags`]).
    pub txn_flags: u32,
}

/// Which database an environment's workloads use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Database {
    /// The database "db", as LmdbJava opens it: one named database, two readers, and
    /// MDB_INTEGERKEY for integer keys.
    Named { integer_keys: bool },
    /// The unnamed database, as Xodus opens it (no named-database table).
    Unnamed,
    /// The unnamed database, its keys compared from their last byte (MDB_REVERSEKEY).
    UnnamedReverse,
    /// The unnamed database with sorted duplicates (MDB_DUPSORT), fixed-size with `fixed`.
    UnnamedDup { fixed: bool },
}

/// How to open an environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvOptions {
    pub map_size: u64,
    /// mdb_env_open's flags (MDB_WRITEMAP, MDB_NOSYNC, MDB_RDONLY); without MDB_RDONLY the
    /// database is created when missing.
    pub flags: u32,
    /// mdb_txn_begin's flags for each write transaction (a per-transaction sync mode's,
    /// [`SyncMode::txn_flags`]); 0 for most.
    pub txn_flags: u32,
    pub db: Database,
    /// What only LMDB 1.0 can be asked, set before mdb_env_open.
    pub lmdb10: Lmdb10,
}

/// An environment's settings only LMDB 1.0 has (its MDB_REMAP_CHUNKS is a flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lmdb10 {
    /// mdb_env_set_pagesize.
    pub page_size: Option<u32>,
    /// mdb_env_set_checksum with [`page_checksum`], 8 bytes a page.
    pub checksum: bool,
    /// mdb_env_set_encrypt with [`page_cipher`] and [`CIPHER_KEY`].
    pub encrypt: bool,
}

/// The key [`page_cipher`] XORs with (the C twin's, harness/lmdb_suite.c, the same).
pub const CIPHER_KEY: &[u8; 16] = b"lmdb-regress-key";

/// A page's checksum: FNV-1a over its bytes, 8 bytes little-endian (the C twin's the same).
///
/// # Safety
/// LMDB's arguments: `src` `dst` point at their sizes of bytes, `dst` 8 of them.
pub unsafe extern "C" fn page_checksum(src: *const MDB_val, dst: *mut MDB_val, _key: *const MDB_val) {
    let h = bytes(&*src).iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3));
    let out = std::slice::from_raw_parts_mut((*dst).mv_data as *mut u8, (*dst).mv_size);
    out.copy_from_slice(&h.to_le_bytes()[..out.len().min(8)]);
}

/// A page en- or decrypted: each byte XORed with the key's (`key[0]`), which is its own
/// inverse. No secrecy: it makes LMDB run its encryption paths.
///
/// # Safety
/// LMDB's arguments: `src` and `dst` of `dst`'s size, `key` at least one value.
pub unsafe extern "C" fn page_cipher(
    src: *const MDB_val,
    dst: *mut MDB_val,
    key: *const MDB_val,
    _enc: c_int,
) -> c_int {
    let (k, n) = (bytes(&*key), (*dst).mv_size);
    let (from, to) = (bytes(&*src), std::slice::from_raw_parts_mut((*dst).mv_data as *mut u8, n));
    to.iter_mut().zip(from).enumerate().for_each(|(i, (t, f))| *t = f ^ k[i % k.len()]);
    0
}

impl Lmdb10 {
    fn any(&self) -> bool {
        *self != Lmdb10::default()
    }

    /// # Safety
    /// `env` is created and not yet open.
    unsafe fn set(&self, api: &Api, env: *mut MDB_env) -> Result<(), LmdbError> {
        if !self.any() {
            return Ok(());
        }
        let Some(v) = &api.v10 else {
            return Err(LmdbError {
                call: "mdb_env_set_pagesize",
                code: 0,
                text: "an LMDB 1.0 call, and this LMDB is older".into(),
            });
        };
        if let Some(size) = self.page_size {
            api.check("mdb_env_set_pagesize", (v.mdb_env_set_pagesize)(env, size as c_int))?;
        }
        if self.checksum {
            api.check("mdb_env_set_checksum", (v.mdb_env_set_checksum)(env, page_checksum, 8))?;
        }
        if self.encrypt {
            let key = val(CIPHER_KEY);
            api.check("mdb_env_set_encrypt", (v.mdb_env_set_encrypt)(env, page_cipher, &key, 0))?;
        }
        Ok(())
    }
}

/// How commits are made durable: mdb_env_open's sync flags, or (LMDB 1.0's) each write
/// transaction's, the environment opened to sync fully.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SyncMode {
    /// MDB_NOSYNC: nothing synced at a commit (LmdbJava's benchmark).
    #[default]
    Nosync,
    /// MDB_NOMETASYNC: the data synced at each commit, the meta page left to the next.
    Nometasync,
    /// Data and meta page synced at each commit.
    Sync,
    /// The environment opened to sync, each write transaction begun with MDB_NOSYNC
    /// (LMDB 1.0's mdb_txn_begin takes it; 0.9's drops it and would sync fully).
    TxnNosync,
    /// The environment opened to sync, each write transaction begun with MDB_NOMETASYNC.
    TxnNometasync,
}

/// The first LMDB version whose mdb_txn_begin takes MDB_NOSYNC and MDB_NOMETASYNC: every
/// commit of OpenLDAP's repository that reports 0.9.70 or later has them (mdb.master from
/// 2015, mdb.master3's 0.9.90, the 1.0 releases); every 0.9 release masks them off
/// (MDB_TXN_BEGIN_FLAGS is MDB_RDONLY), and so do mdb.master's commits before 0.9.70,
/// which some of its earlier 0.9 versions had.
pub const PER_TXN_SYNC_SINCE: (i32, i32, i32) = (0, 9, 70);

impl SyncMode {
    pub const ALL: [SyncMode; 5] =
        [SyncMode::Nosync, SyncMode::Nometasync, SyncMode::Sync, SyncMode::TxnNosync, SyncMode::TxnNometasync];

    /// As `--sync` spells it.
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Nosync => "nosync",
            SyncMode::Nometasync => "nometasync",
            SyncMode::Sync => "sync",
            SyncMode::TxnNosync => "txn-nosync",
            SyncMode::TxnNometasync => "txn-nometasync",
        }
    }

    /// Its flags as a configuration line names them.
    pub fn flags_named(self) -> &'static str {
        match self {
            SyncMode::Nosync => "MDB_NOSYNC",
            SyncMode::Nometasync => "MDB_NOMETASYNC",
            SyncMode::Sync => "sync",
            SyncMode::TxnNosync => "sync, MDB_NOSYNC on each write txn",
            SyncMode::TxnNometasync => "sync, MDB_NOMETASYNC on each write txn",
        }
    }

    /// mdb_env_open's flags for it.
    pub fn env_flags(self) -> u32 {
        match self {
            SyncMode::Nosync => sys::MDB_NOSYNC,
            SyncMode::Nometasync => sys::MDB_NOMETASYNC,
            SyncMode::Sync | SyncMode::TxnNosync | SyncMode::TxnNometasync => 0,
        }
    }

    /// mdb_txn_begin's flags for each write transaction (child transactions too).
    pub fn txn_flags(self) -> u32 {
        match self {
            SyncMode::Nosync | SyncMode::Nometasync | SyncMode::Sync => 0,
            SyncMode::TxnNosync => sys::MDB_NOSYNC,
            SyncMode::TxnNometasync => sys::MDB_NOMETASYNC,
        }
    }

    /// Whether an LMDB of `version` does what the mode names: a per-transaction mode needs
    /// [`PER_TXN_SYNC_SINCE`] (before it the flags are dropped, and each commit syncs fully).
    pub fn applies_to(self, version: (i32, i32, i32)) -> Result<(), NotApplicable> {
        // One text for both: a report groups the units of one reason.
        let needs = "MDB_NOSYNC and MDB_NOMETASYNC on mdb_txn_begin";
        match self.txn_flags() != 0 && version < PER_TXN_SYNC_SINCE {
            true => Err(NotApplicable { needs, since: PER_TXN_SYNC_SINCE }),
            false => Ok(()),
        }
    }

    /// The run file's three fields: whether commits sync, whether meta pages are left, and
    /// whether each write transaction asks it (the environment syncing).
    pub(super) fn from_stored(sync: bool, nometasync: bool, per_txn: bool) -> SyncMode {
        match (sync, nometasync, per_txn) {
            (false, _, false) => SyncMode::Nosync,
            (true, true, false) => SyncMode::Nometasync,
            (true, false, false) => SyncMode::Sync,
            (false, _, true) => SyncMode::TxnNosync,
            (true, _, true) => SyncMode::TxnNometasync,
        }
    }

    /// The run file's three fields for it (see [`Self::from_stored`]).
    pub(super) fn stored(self) -> (bool, bool, bool) {
        match self {
            SyncMode::Nosync => (false, false, false),
            SyncMode::Nometasync => (true, true, false),
            SyncMode::Sync => (true, false, false),
            SyncMode::TxnNosync => (false, false, true),
            SyncMode::TxnNometasync => (true, true, true),
        }
    }
}

impl std::fmt::Display for SyncMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the kernel reads ahead around a page the map faults in: on (LMDB's default), or
/// off (MDB_NORDAHEAD: one page a fault, which a database larger than memory read at
/// random needs where the device's readahead window is large).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Readahead {
    /// The kernel's readahead around each fault (LMDB's default).
    #[default]
    On,
    /// MDB_NORDAHEAD.
    Off,
}

impl Readahead {
    pub const ALL: [Readahead; 2] = [Readahead::On, Readahead::Off];

    /// As `--readahead` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Readahead::On => "on",
            Readahead::Off => "off",
        }
    }

    /// mdb_env_open's flag for it.
    pub fn env_flags(self) -> u32 {
        match self {
            Readahead::On => 0,
            Readahead::Off => sys::MDB_NORDAHEAD,
        }
    }
}

impl std::fmt::Display for Readahead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// mdb_env_open's flags for these settings: MDB_WRITEMAP with `writemap`, `sync`'s, and
/// MDB_NORDAHEAD with readahead off.
pub fn env_flags(writemap: bool, sync: SyncMode, readahead: Readahead) -> u32 {
    (if writemap { sys::MDB_WRITEMAP } else { 0 }) | sync.env_flags() | readahead.env_flags()
}

impl EnvOptions {
    /// These options, read-only.
    pub fn read_only(self) -> EnvOptions {
        EnvOptions { flags: self.flags | sys::MDB_RDONLY, ..self }
    }
}

/// A failed LMDB call inside a timed region: the call and its code (no allocation there).
pub type Failed = (&'static str, c_int);

/// An LMDB return code as a result, for timed regions.
#[inline(always)]
pub fn ok(call: &'static str, rc: c_int) -> Result<(), Failed> {
    if rc == 0 {
        Ok(())
    } else {
        Err((call, rc))
    }
}

/// The directory as LMDB takes it.
pub fn c_path(dir: &Path) -> CString {
    CString::new(dir.as_os_str().as_encoded_bytes()).expect("no NUL in a path")
}

impl<'a> Env<'a> {
    /// Opens the environment in `dir` and its database (creating both unless read-only).
    pub fn open(api: &'a Api, dir: &Path, o: &EnvOptions) -> Result<Env<'a>, LmdbError> {
        let rdonly = o.flags & sys::MDB_RDONLY != 0;
        api.takes_txn_flags(o.txn_flags)?;
        // Its descriptors may take closed ones' numbers, with other flags.
        super::iocount::forget_descriptors();
        let mut env = ptr::null_mut();
        // SAFETY: the standard LMDB opening sequence on pointers we own; `e` closes on drop.
        unsafe {
            api.check("mdb_env_create", (api.mdb_env_create)(&mut env))?;
            let mut e = Env { api, env, dbi: 0, txn_flags: o.txn_flags };
            api.check("mdb_env_set_mapsize", (api.mdb_env_set_mapsize)(env, o.map_size as usize))?;
            if let Database::Named { .. } = o.db {
                api.check("mdb_env_set_maxdbs", (api.mdb_env_set_maxdbs)(env, 1))?;
                api.check("mdb_env_set_maxreaders", (api.mdb_env_set_maxreaders)(env, 2))?;
            }
            o.lmdb10.set(api, env)?;
            api.check("mdb_env_open", (api.mdb_env_open)(env, c_path(dir).as_ptr(), o.flags, 0o664))?;
            super::iocount::learn_descriptors();
            let txn = e.begin(rdonly)?;
            let create = if rdonly { 0 } else { sys::MDB_CREATE };
            let rc = match o.db {
                Database::Named { integer_keys } => {
                    let keys = if integer_keys { sys::MDB_INTEGERKEY } else { 0 };
                    (api.mdb_dbi_open)(txn, c"db".as_ptr(), create | keys, &mut e.dbi)
                }
                Database::Unnamed => (api.mdb_dbi_open)(txn, ptr::null(), create, &mut e.dbi),
                Database::UnnamedReverse => {
                    (api.mdb_dbi_open)(txn, ptr::null(), create | sys::MDB_REVERSEKEY, &mut e.dbi)
                }
                Database::UnnamedDup { fixed } => {
                    let dups = sys::MDB_DUPSORT | if fixed { sys::MDB_DUPFIXED } else { 0 };
                    (api.mdb_dbi_open)(txn, ptr::null(), create | if rdonly { 0 } else { dups }, &mut e.dbi)
                }
            };
            if rc != 0 {
                (api.mdb_txn_abort)(txn);
                api.check("mdb_dbi_open", rc)?;
            }
            api.check("mdb_txn_commit", (api.mdb_txn_commit)(txn))?;
            Ok(e)
        }
    }

    /// This environment, its write transactions begun with `flags` from here on (after an
    /// untimed fill under the environment's own flags), where this LMDB takes them.
    pub fn with_txn_flags(mut self, flags: u32) -> Result<Env<'a>, LmdbError> {
        self.api.takes_txn_flags(flags)?;
        self.txn_flags = flags;
        Ok(self)
    }

    /// A read transaction, or a write transaction begun with [`Self::txn_flags`].
    pub fn begin(&self, rdonly: bool) -> Result<*mut MDB_txn, LmdbError> {
        let mut txn = ptr::null_mut();
        let flags = if rdonly { sys::MDB_RDONLY } else { self.txn_flags };
        // SAFETY: env is open.
        self.api
            .check("mdb_txn_begin", unsafe { (self.api.mdb_txn_begin)(self.env, ptr::null_mut(), flags, &mut txn) })?;
        Ok(txn)
    }
}

/// A transaction (read-only with `flags` MDB_RDONLY, else a write transaction with `env`'s
/// [`Env::txn_flags`] too) and a cursor on `env`'s database, for timed regions;
/// [`end_cursor`] closes both.
///
/// # Safety
/// `env` is open and no other write transaction of it is active.
#[inline(always)]
pub unsafe fn begin_cursor(api: &Api, env: &Env, flags: u32) -> Result<(*mut MDB_txn, *mut MDB_cursor), Failed> {
    let flags = if flags & sys::MDB_RDONLY != 0 { flags } else { flags | env.txn_flags };
    let mut txn = ptr::null_mut();
    ok("mdb_txn_begin", (api.mdb_txn_begin)(env.env, ptr::null_mut(), flags, &mut txn))?;
    let mut cur = ptr::null_mut();
    if let Err(e) = ok("mdb_cursor_open", (api.mdb_cursor_open)(txn, env.dbi, &mut cur)) {
        (api.mdb_txn_abort)(txn);
        return Err(e);
    }
    Ok((txn, cur))
}

/// Closes the cursor, then commits the transaction when `r` is a success of a write
/// transaction, else aborts it; returns `r` or the commit's failure.
///
/// # Safety
/// `txn` and `cur` come from [`begin_cursor`] and are not used again.
#[inline(always)]
pub unsafe fn end_cursor<T>(
    api: &Api,
    (txn, cur): (*mut MDB_txn, *mut MDB_cursor),
    commit: bool,
    r: Result<T, Failed>,
) -> Result<T, Failed> {
    (api.mdb_cursor_close)(cur);
    if commit && r.is_ok() {
        ok("mdb_txn_commit", (api.mdb_txn_commit)(txn))?;
    } else {
        (api.mdb_txn_abort)(txn);
    }
    r
}

/// A walk in key order.
pub const FORWARD: (sys::MDB_cursor_op, sys::MDB_cursor_op) =
    (sys::MDB_cursor_op_MDB_FIRST, sys::MDB_cursor_op_MDB_NEXT);
/// A walk in reverse key order.
pub const BACKWARD: (sys::MDB_cursor_op, sys::MDB_cursor_op) =
    (sys::MDB_cursor_op_MDB_LAST, sys::MDB_cursor_op_MDB_PREV);

/// A cursor walk that can stop and go on: each [`Walk::next`] continues where the last
/// one stopped, so a pass can be split into chunks without changing what it visits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk {
    started: bool,
    /// The cursor has passed the last entry.
    pub done: bool,
    /// Entries visited so far.
    pub visited: u64,
}

impl Walk {
    /// Up to `n` more entries from `start` by `step` ([`FORWARD`], [`BACKWARD`]: every
    /// call of one walk gives the same), each handed to `each`; a cursor error other than
    /// the end is `call`'s failure. `n` of `usize::MAX` walks to the end.
    ///
    /// # Safety
    /// `cur` is an open cursor on a live transaction, the one every call of this walk uses.
    #[inline(always)]
    pub unsafe fn next(
        &mut self,
        get: CursorGet,
        cur: *mut MDB_cursor,
        (start, step): (sys::MDB_cursor_op, sys::MDB_cursor_op),
        n: usize,
        call: &'static str,
        mut each: impl FnMut(&mut MDB_val, &mut MDB_val) -> Result<(), Failed>,
    ) -> Result<(), Failed> {
        if n == 0 {
            return Ok(());
        }
        let (mut k, mut v) = (empty_val(), empty_val());
        let mut rc = get(cur, &mut k, &mut v, if self.started { step } else { start });
        self.started = true;
        // Two loops, each in the C twin's shape (the first call before the loop, the step
        // at its end, the count in a register): a walk to the end checks no steps left.
        // Written out, as the compiler does not always split one loop on `n` itself
        // (readCrc's was not: 7 instructions an entry).
        let at = (get, cur, step);
        let (visited, failed) = if n == usize::MAX {
            steps::<false>(at, u64::MAX, (&mut k, &mut v), &mut rc, &mut each)
        } else {
            steps::<true>(at, n as u64, (&mut k, &mut v), &mut rc, &mut each)
        };
        self.visited += visited;
        match (failed, rc) {
            (Some(e), _) => Err(e),
            (None, 0) => Ok(()),
            (None, sys::MDB_NOTFOUND) => {
                self.done = true;
                Ok(())
            }
            (None, rc) => Err((call, rc)),
        }
    }

    /// Places the walk where one that visited every entry up to `before` (its key) stands,
    /// or at its start when None: the next [`Walk::next`] then makes the very calls that
    /// walk would, so a chunk can be entered without walking the ones before it.
    ///
    /// # Safety
    /// As [`Walk::next`]; `before` points at a key of the database.
    pub unsafe fn enter(
        &mut self,
        get: CursorGet,
        cur: *mut MDB_cursor,
        before: Option<MDB_val>,
    ) -> Result<(), Failed> {
        self.done = false;
        self.started = before.is_some();
        let Some(mut key) = before else { return Ok(()) };
        let mut v = empty_val();
        ok("mdb_cursor_get(MDB_SET)", get(cur, &mut key, &mut v, sys::MDB_cursor_op_MDB_SET))
    }
}

/// A walk's loop: entries from the one `rc` found on, each handed to `each`, then `step`,
/// while found (and, `BOUNDED`, fewer than `n` handed on); the entries handed on, and
/// `each`'s failure.
///
/// # Safety
/// As [`Walk::next`]; `k` and `v` hold the entry the last call found.
#[inline(always)]
unsafe fn steps<const BOUNDED: bool>(
    (get, cur, step): (CursorGet, *mut MDB_cursor, sys::MDB_cursor_op),
    n: u64,
    (k, v): (&mut MDB_val, &mut MDB_val),
    rc: &mut c_int,
    each: &mut impl FnMut(&mut MDB_val, &mut MDB_val) -> Result<(), Failed>,
) -> (u64, Option<Failed>) {
    let mut visited = 0u64;
    while *rc == 0 {
        if let Err(e) = each(k, v) {
            return (visited, Some(e));
        }
        visited += 1;
        if BOUNDED && visited == n {
            break;
        }
        *rc = get(cur, k, v, step);
    }
    (visited, None)
}

/// Walks the cursor from `start` by `step` to the end, handing each entry to `each`;
/// returns the entries visited. A cursor error other than the end is `call`'s failure.
///
/// # Safety
/// `cur` is an open cursor on a live transaction.
#[inline(always)]
pub unsafe fn walk(
    get: CursorGet,
    cur: *mut MDB_cursor,
    ops: (sys::MDB_cursor_op, sys::MDB_cursor_op),
    call: &'static str,
    each: impl FnMut(&mut MDB_val, &mut MDB_val) -> Result<(), Failed>,
) -> Result<u64, Failed> {
    let mut w = Walk::default();
    w.next(get, cur, ops, usize::MAX, call, each)?;
    Ok(w.visited)
}

/// Reads one byte of every 4 KiB a value spans: values too large for a leaf live on
/// overflow pages, which a walk alone never touches.
///
/// # Safety
/// `v` points at memory LMDB keeps valid for the transaction.
#[inline(always)]
pub unsafe fn touch(v: &MDB_val) {
    let p = v.mv_data as *const u8;
    let mut off = 0;
    while off < v.mv_size {
        std::ptr::read_volatile(p.add(off));
        off += 4096;
    }
}

impl Env<'_> {
    /// Walks the whole database in key order in a read transaction of its own (untimed).
    pub fn walk(&self, mut each: impl FnMut(&[u8], &[u8])) -> Result<u64, LmdbError> {
        let api = self.api;
        // SAFETY: a cursor on a fresh read transaction, closed right after; each entry's
        // bytes are valid until then.
        unsafe {
            let tc = begin_cursor(api, self, sys::MDB_RDONLY).map_err(|e| api.failure(e))?;
            let r = walk(api.mdb_cursor_get, tc.1, FORWARD, "mdb_cursor_get", |k, v| {
                each(bytes(k), bytes(v));
                Ok(())
            });
            end_cursor(api, tc, false, r).map_err(|e| api.failure(e))
        }
    }
}

/// Page counts of a database, from `mdb_stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCounts {
    pub branch: usize,
    pub leaf: usize,
    pub overflow: usize,
    pub entries: usize,
}

impl Env<'_> {
    /// The id of the last committed write transaction (mdb_env_info's me_last_txnid):
    /// one more at each commit that changed something.
    pub fn last_txnid(&self) -> Result<u64, LmdbError> {
        Ok(self.info()?.me_last_txnid as u64)
    }

    /// The bytes of the data file its pages use, up to the last one written
    /// (me_last_pgno): less than the file where the map sized it beyond the data.
    pub fn used_bytes(&self) -> Result<u64, LmdbError> {
        let mut st = empty_stat();
        // SAFETY: env is open; mdb_env_stat fills the struct.
        self.api.check("mdb_env_stat", unsafe { (self.api.mdb_env_stat)(self.env, &mut st) })?;
        Ok((self.info()?.me_last_pgno as u64 + 1) * st.ms_psize as u64)
    }

    fn info(&self) -> Result<sys::MDB_envinfo, LmdbError> {
        // SAFETY: a plain C struct of integers and a pointer, for mdb_env_info to fill.
        let mut info: sys::MDB_envinfo = unsafe { std::mem::zeroed() };
        // SAFETY: env is open; mdb_env_info fills the struct.
        self.api.check("mdb_env_info", unsafe { (self.api.mdb_env_info)(self.env, &mut info) })?;
        Ok(info)
    }

    /// The database's page counts, in a read transaction of its own.
    pub fn page_counts(&self) -> Result<PageCounts, LmdbError> {
        let txn = self.begin(true)?;
        let mut st = empty_stat();
        // SAFETY: txn is live; it is ended right after.
        let rc = unsafe { (self.api.mdb_stat)(txn, self.dbi, &mut st) };
        unsafe { (self.api.mdb_txn_abort)(txn) };
        self.api.check("mdb_stat", rc)?;
        Ok(PageCounts {
            branch: st.ms_branch_pages,
            leaf: st.ms_leaf_pages,
            overflow: st.ms_overflow_pages,
            entries: st.ms_entries,
        })
    }
}

fn empty_stat() -> sys::MDB_stat {
    sys::MDB_stat {
        ms_psize: 0,
        ms_depth: 0,
        ms_branch_pages: 0,
        ms_leaf_pages: 0,
        ms_overflow_pages: 0,
        ms_entries: 0,
    }
}

impl Drop for Env<'_> {
    fn drop(&mut self) {
        // SAFETY: every transaction of this env has ended by now.
        unsafe { (self.api.mdb_env_close)(self.env) }
    }
}

pub fn val(bytes: &[u8]) -> MDB_val {
    MDB_val { mv_size: bytes.len(), mv_data: bytes.as_ptr() as *mut c_void }
}

pub fn empty_val() -> MDB_val {
    MDB_val { mv_size: 0, mv_data: ptr::null_mut() }
}

/// # Safety
/// `v` must point at memory LMDB keeps valid for the transaction.
pub unsafe fn bytes<'t>(v: &MDB_val) -> &'t [u8] {
    std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A per-transaction mode opens the environment to sync and asks each write
    /// transaction its flag, and runs on no LMDB that drops it (every 0.9 release).
    #[test]
    fn per_transaction_modes_sync_the_environment_and_need_the_flag() {
        let flags: Vec<(u32, u32)> = SyncMode::ALL.iter().map(|m| (m.env_flags(), m.txn_flags())).collect();
        let (nosync, nometa) = (sys::MDB_NOSYNC, sys::MDB_NOMETASYNC);
        assert_eq!(flags, [(nosync, 0), (nometa, 0), (0, 0), (0, nosync), (0, nometa)]);
        for m in SyncMode::ALL {
            assert_eq!(SyncMode::from_stored(m.stored().0, m.stored().1, m.stored().2), m);
            assert_eq!(m.applies_to((0, 9, 33)).is_ok(), m.txn_flags() == 0, "{m}");
            assert_eq!(m.applies_to((1, 0, 1)), Ok(()), "{m}");
            assert_eq!(m.applies_to((0, 9, 90)), Ok(()), "mdb.master3 has them: {m}");
        }
        let why = SyncMode::TxnNosync.applies_to((0, 9, 36)).unwrap_err();
        assert_eq!(
            why.to_string(),
            "not applicable: needs MDB_NOSYNC and MDB_NOMETASYNC on mdb_txn_begin, which LMDB has from 0.9.70"
        );
    }
}
