//! The LMDB C API, as bindgen generates it (see `make bindings`).

// Generated: formatting it would make it differ from a fresh generation.
#[rustfmt::skip]
pub mod bindings;

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::bindings::*;

    /// `crate::abi::EXPECTED` is what each build's lmdb.h is held to: it must be the
    /// bindings' own layout, figure by figure.
    #[test]
    fn expected_abi_is_the_bindings_layout() {
        let ours: Vec<(&str, i64)> = vec![
            ("sizeof(MDB_val)", size_of::<MDB_val>() as i64),
            ("offsetof(MDB_val.mv_size)", offset_of!(MDB_val, mv_size) as i64),
            ("offsetof(MDB_val.mv_data)", offset_of!(MDB_val, mv_data) as i64),
            ("sizeof(MDB_stat)", size_of::<MDB_stat>() as i64),
            ("offsetof(MDB_stat.ms_psize)", offset_of!(MDB_stat, ms_psize) as i64),
            ("offsetof(MDB_stat.ms_depth)", offset_of!(MDB_stat, ms_depth) as i64),
            ("offsetof(MDB_stat.ms_branch_pages)", offset_of!(MDB_stat, ms_branch_pages) as i64),
            ("offsetof(MDB_stat.ms_leaf_pages)", offset_of!(MDB_stat, ms_leaf_pages) as i64),
            ("offsetof(MDB_stat.ms_overflow_pages)", offset_of!(MDB_stat, ms_overflow_pages) as i64),
            ("offsetof(MDB_stat.ms_entries)", offset_of!(MDB_stat, ms_entries) as i64),
            ("sizeof(MDB_envinfo)", size_of::<MDB_envinfo>() as i64),
            ("offsetof(MDB_envinfo.me_mapaddr)", offset_of!(MDB_envinfo, me_mapaddr) as i64),
            ("offsetof(MDB_envinfo.me_mapsize)", offset_of!(MDB_envinfo, me_mapsize) as i64),
            ("offsetof(MDB_envinfo.me_last_pgno)", offset_of!(MDB_envinfo, me_last_pgno) as i64),
            ("offsetof(MDB_envinfo.me_last_txnid)", offset_of!(MDB_envinfo, me_last_txnid) as i64),
            ("offsetof(MDB_envinfo.me_maxreaders)", offset_of!(MDB_envinfo, me_maxreaders) as i64),
            ("offsetof(MDB_envinfo.me_numreaders)", offset_of!(MDB_envinfo, me_numreaders) as i64),
            // The workloads pass mdb_env_set_mapsize a usize (src/workload/lmdb.rs).
            ("sizeof(size type)", size_of::<usize>() as i64),
            ("sizeof(MDB_dbi)", size_of::<MDB_dbi>() as i64),
            ("MDB_FIRST", MDB_cursor_op_MDB_FIRST as i64),
            ("MDB_LAST", MDB_cursor_op_MDB_LAST as i64),
            ("MDB_NEXT", MDB_cursor_op_MDB_NEXT as i64),
            ("MDB_PREV", MDB_cursor_op_MDB_PREV as i64),
            ("MDB_SET_KEY", MDB_cursor_op_MDB_SET_KEY as i64),
            ("MDB_NOSYNC", MDB_NOSYNC as i64),
            ("MDB_RDONLY", MDB_RDONLY as i64),
            ("MDB_WRITEMAP", MDB_WRITEMAP as i64),
            ("MDB_INTEGERKEY", MDB_INTEGERKEY as i64),
            ("MDB_CREATE", MDB_CREATE as i64),
            ("MDB_APPEND", MDB_APPEND as i64),
        ];
        assert_eq!(ours, crate::abi::EXPECTED.to_vec());
    }
}
