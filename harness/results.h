/*
 * Results of the preset suites' passes (presets.c, lmdb_suite.c): environments walked
 * and measured as src/workload/presets/store.rs does, and one JSON line per workload, as
 * the Rust worker's WorkerLine.
 */
#ifndef LMDB_REGRESS_RESULTS_H
#define LMDB_REGRESS_RESULTS_H

#include <stdint.h>

#include "common.h"
#include "iocount.h"

struct figures {
    uint64_t ops, *latencies, nlat;
    /* the lmdb suite's timed commits: ncommit buckets, each [nanoseconds, how many] */
    uint64_t (*commit_ns)[2], ncommit;
    /* the same commits' times in the order made (ncommit_order of them) */
    uint64_t *commit_order_ns, ncommit_order;
    int64_t db_bytes, max_rss_kib;            /* -1: none */
    int has_usage, has_resident;
    uint64_t user_us, sys_us, major, minor, resident, total;
};

struct result {
    const char *workload;
    unsigned n;
    uint64_t *ns, entries, digest;
    int has_checksum;
    struct figures *fig;
    struct space *space; /* fresh writes: each pass's */
    int has_space;
    struct io *io; /* passes that committed: each one's */
    int has_io;
};

/* A transaction (read-only with MDB_RDONLY in flags) and a cursor on e's database. */
int begin_cursor(struct env *e, unsigned flags, MDB_txn **txn, MDB_cursor **cur, const char **call);
/* Closes the cursor, then commits a write transaction that succeeded, else aborts. */
int end_cursor(MDB_txn *txn, MDB_cursor *cur, int commit, int rc, const char **call);
/* Entry count and XXH64 of every key then value in key order (store::walk_checksum). */
int walk_checksum(struct env *e, uint64_t *entries, uint64_t *digest);
char *data_file(const char *dir);
int64_t size_on_disk(const char *dir);
void result_init(struct result *r, const char *w, unsigned iterations);
void result_free(struct result *r);
/* Records a pass; every pass must produce the first one's checksum. */
int result_push(struct result *r, uint64_t ns, uint64_t entries, uint64_t digest, struct figures f);
void print_figures(const struct figures *f);
void result_print(const struct result *r);
struct figures no_figures(uint64_t ops);

#endif
