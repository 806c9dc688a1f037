//! The LMDB calls the workloads make, resolved once from a dynamically loaded library
//! (bindgen's `Lmdb` over libloading) into plain function pointers, so a timed loop pays
//! for the call and nothing else.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::path::Path;
use std::ptr;

use anyhow::{Context, Result};

use crate::ffi::bindings as sys;
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
        }
        impl Api {
            pub fn load(path: &Path) -> Result<Api> {
                // SAFETY: loading liblmdb runs no initialisers that could misbehave.
                let lib = unsafe { sys::Lmdb::new(path) }.with_context(|| format!("cannot load {}", path.display()))?;
                Ok(Api {
                    $($name: *lib.$name.as_ref().map_err(|e| anyhow::anyhow!("{}: no {}: {e}", path.display(), stringify!($name)))?,)*
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
}

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
}

/// How to open an environment, as LmdbJava's benchmark does.
pub struct EnvOptions {
    pub map_size: u64,
    pub writemap: bool,
    pub nosync: bool,
    pub integer_keys: bool,
}

impl<'a> Env<'a> {
    /// Opens (creating) the environment in `dir` and the database "db".
    pub fn open(api: &'a Api, dir: &Path, o: &EnvOptions) -> Result<Env<'a>, LmdbError> {
        let mut env = ptr::null_mut();
        // SAFETY: the standard LMDB opening sequence on pointers we own.
        unsafe {
            api.check("mdb_env_create", (api.mdb_env_create)(&mut env))?;
            let mut e = Env { api, env, dbi: 0 };
            api.check("mdb_env_set_mapsize", (api.mdb_env_set_mapsize)(env, o.map_size as usize))?;
            api.check("mdb_env_set_maxdbs", (api.mdb_env_set_maxdbs)(env, 1))?;
            api.check("mdb_env_set_maxreaders", (api.mdb_env_set_maxreaders)(env, 2))?;
            let mut flags = 0;
            if o.writemap {
                flags |= sys::MDB_WRITEMAP;
            }
            if o.nosync {
                flags |= sys::MDB_NOSYNC;
            }
            let cdir = CString::new(dir.as_os_str().as_encoded_bytes()).expect("no NUL in a temp path");
            api.check("mdb_env_open", (api.mdb_env_open)(env, cdir.as_ptr(), flags, 0o664))?;
            let txn = e.begin(false)?;
            let mut dflags = sys::MDB_CREATE;
            if o.integer_keys {
                dflags |= sys::MDB_INTEGERKEY;
            }
            let rc = (api.mdb_dbi_open)(txn, c"db".as_ptr(), dflags, &mut e.dbi);
            if rc != 0 {
                (api.mdb_txn_abort)(txn);
                api.check("mdb_dbi_open", rc)?;
            }
            api.check("mdb_txn_commit", (api.mdb_txn_commit)(txn))?;
            Ok(e)
        }
    }

    pub fn begin(&self, rdonly: bool) -> Result<*mut MDB_txn, LmdbError> {
        let mut txn = ptr::null_mut();
        let flags = if rdonly { sys::MDB_RDONLY } else { 0 };
        // SAFETY: env is open.
        self.api
            .check("mdb_txn_begin", unsafe { (self.api.mdb_txn_begin)(self.env, ptr::null_mut(), flags, &mut txn) })?;
        Ok(txn)
    }

    pub fn cursor(&self, txn: *mut MDB_txn) -> Result<*mut MDB_cursor, LmdbError> {
        let mut cur = ptr::null_mut();
        // SAFETY: txn belongs to this env.
        self.api.check("mdb_cursor_open", unsafe { (self.api.mdb_cursor_open)(txn, self.dbi, &mut cur) })?;
        Ok(cur)
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
