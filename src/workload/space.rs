//! What a write pass left on disk, read after the pass (untimed): the data file's size,
//! the last page used, the written database's pages by kind and its depth, and the page
//! numbers the freelist holds. The C twin (harness/common.c `space_of`) reads the same.

use std::path::Path;
use std::ptr;

use serde::{Deserialize, Serialize};

use super::lmdb::{bytes, Env, LmdbError, FORWARD};
use crate::ffi::bindings as sys;

/// LMDB's freelist: database 0 of every environment (FREE_DBI).
const FREE_DBI: sys::MDB_dbi = 0;

/// An ID list's length word (MDB_ID is a size_t).
const WORD: usize = std::mem::size_of::<usize>();

/// One environment's space after a write pass, each figure exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Space {
    /// The data file's size in bytes (st_size).
    pub file_size: u64,
    /// The last page used (mdb_env_info's me_last_pgno).
    pub last_page: u64,
    /// The written database's pages and depth (mdb_stat).
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub depth: u64,
    /// Page numbers held in the freelist: the sum of its records' lengths.
    pub free_pages: u64,
}

impl Env<'_> {
    /// The space of this environment, whose files are in `dir`, in a read transaction of
    /// its own; every write transaction of it has ended.
    pub fn space(&self, dir: &Path) -> anyhow::Result<Space> {
        let file_size = std::fs::metadata(dir.join("data.mdb"))?.len();
        let api = self.api;
        let mut info: sys::MDB_envinfo = unsafe { std::mem::zeroed() };
        // SAFETY: env is open; mdb_env_info fills the struct.
        api.check("mdb_env_info", unsafe { (api.mdb_env_info)(self.env, &mut info) })?;
        let txn = self.begin(true)?;
        // SAFETY: a fresh read transaction, aborted right after.
        let r = unsafe { self.tree_and_freelist(txn) };
        unsafe { (api.mdb_txn_abort)(txn) };
        let (st, free_pages) = r?;
        Ok(Space {
            file_size,
            last_page: info.me_last_pgno as u64,
            branch_pages: st.ms_branch_pages as u64,
            leaf_pages: st.ms_leaf_pages as u64,
            overflow_pages: st.ms_overflow_pages as u64,
            depth: u64::from(st.ms_depth),
            free_pages,
        })
    }

    /// The database's mdb_stat, and the page numbers of every freelist record (each an
    /// ID list whose first word is its length).
    ///
    /// # Safety
    /// `txn` is a live read transaction of this environment.
    unsafe fn tree_and_freelist(&self, txn: *mut sys::MDB_txn) -> Result<(sys::MDB_stat, u64), LmdbError> {
        let api = self.api;
        let mut st: sys::MDB_stat = std::mem::zeroed();
        api.check("mdb_stat", (api.mdb_stat)(txn, self.dbi, &mut st))?;
        let mut cur = ptr::null_mut();
        api.check("mdb_cursor_open(FREE_DBI)", (api.mdb_cursor_open)(txn, FREE_DBI, &mut cur))?;
        let mut free = 0u64;
        let r = super::lmdb::walk(api.mdb_cursor_get, cur, FORWARD, "mdb_cursor_get(FREE_DBI)", |_, v| {
            let word = bytes(v).get(..WORD).ok_or(("a freelist record shorter than its length", libc::EINVAL))?;
            free += usize::from_ne_bytes(word.try_into().expect("one word")) as u64;
            Ok(())
        });
        (api.mdb_cursor_close)(cur);
        r.map_err(|e| api.failure(e))?;
        Ok((st, free))
    }
}
