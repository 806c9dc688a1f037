/* The helpers of common.h that call LMDB: linked with a tag's liblmdb in the twin, never
 * in the paired worker (paired.c), which calls each loaded library through its own table. */
#include <errno.h>
#include <stdio.h>

#include "common.h"

int env_open(const char *dir, uint64_t map_size, unsigned flags, unsigned txn_flags, int named, unsigned db_flags,
             struct env *e, const char **call) {
    return env_open_set(dir, map_size, flags, txn_flags, named, db_flags, NULL, e, call);
}

int env_open_set(const char *dir, uint64_t map_size, unsigned flags, unsigned txn_flags, int named,
                 unsigned db_flags, int (*set)(MDB_env *, const char **), struct env *e, const char **call) {
    int rc, rdonly = (flags & MDB_RDONLY) != 0, major, minor, patch;
    mdb_version(&major, &minor, &patch);
    if (txn_flags && MDB_VERINT(major, minor, patch) < PER_TXN_SYNC_SINCE) {
        *call = "mdb_txn_begin (this LMDB drops MDB_NOSYNC and MDB_NOMETASYNC given to it; LMDB has them from 0.9.70)";
        return EINVAL;
    }
    e->txn_flags = txn_flags;
    MDB_txn *txn;
    if ((rc = mdb_env_create(&e->env))) { *call = "mdb_env_create"; return rc; }
    if (set && (rc = set(e->env, call))) goto fail;
    if ((rc = mdb_env_set_mapsize(e->env, map_size))) { *call = "mdb_env_set_mapsize"; goto fail; }
    if (named && (rc = mdb_env_set_maxdbs(e->env, 1))) { *call = "mdb_env_set_maxdbs"; goto fail; }
    if (named && (rc = mdb_env_set_maxreaders(e->env, 2))) { *call = "mdb_env_set_maxreaders"; goto fail; }
    if ((rc = mdb_env_open(e->env, dir, flags, 0664))) { *call = "mdb_env_open"; goto fail; }
    if ((rc = mdb_txn_begin(e->env, NULL, rdonly ? MDB_RDONLY : txn_flags, &txn))) { *call = "mdb_txn_begin"; goto fail; }
    if ((rc = mdb_dbi_open(txn, named ? "db" : NULL, (rdonly ? 0 : MDB_CREATE) | db_flags, &e->dbi))) {
        mdb_txn_abort(txn); *call = "mdb_dbi_open"; goto fail;
    }
    if ((rc = mdb_txn_commit(txn))) { *call = "mdb_txn_commit"; goto fail; }
    return 0;
fail:
    mdb_env_close(e->env);
    return rc;
}

const struct space_calls TWIN_SPACE_CALLS = {
    mdb_env_info, mdb_txn_begin, mdb_txn_abort, mdb_stat, mdb_cursor_open, mdb_cursor_get, mdb_cursor_close,
};

/* ---- JSON lines ---- */

int print_error(const char *workload, const char *what, int rc) {
    if (workload) printf("{\"workload\":\"%s\",", workload);
    else printf("{");
    if (rc) printf("\"error\":\"%s: %s (%d)\"}\n", what, mdb_strerror(rc), rc);
    else printf("\"error\":\"%s\"}\n", what);
    fflush(stdout);
    return 1;
}
