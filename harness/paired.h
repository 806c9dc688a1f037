/*
 * The C paired worker's loaded libraries (paired_load.c): a liblmdb build loaded at run
 * time, with its own copy of every entry point the workloads call, which paired.c calls
 * through.
 */
#ifndef LMDB_REGRESS_PAIRED_H
#define LMDB_REGRESS_PAIRED_H

#include <stddef.h>

#include "lmdb.h"

/* The most libraries one worker loads (the slots file's lines). */
#define MAX_SLOTS 256

/* ---- one loaded library: its own copy of every entry point the workloads call ---- */

#define API_FUNCTIONS(X)                                                                              \
    X(mdb_version) X(mdb_strerror) X(mdb_env_create) X(mdb_env_set_mapsize) X(mdb_env_set_maxdbs)    \
    X(mdb_env_set_maxreaders) X(mdb_env_open) X(mdb_env_close) X(mdb_txn_begin) X(mdb_txn_commit)    \
    X(mdb_txn_abort) X(mdb_dbi_open) X(mdb_cursor_open) X(mdb_cursor_close) X(mdb_cursor_get)        \
    X(mdb_cursor_put) X(mdb_env_info) X(mdb_stat)

struct api {
#define FIELD(f) __typeof__(f) *f;
    API_FUNCTIONS(FIELD)
#undef FIELD
};

/* Loads `library` with RTLD_LOCAL, from its own path, or from a private copy when a slot
 * already loaded that file (kept open for the process); fills `a` and checks the version it
 * reports. NULL, or why not in `why`. */
void *load_library(const char *library, const char *version, struct api *a, char *why, size_t cap);

#endif
