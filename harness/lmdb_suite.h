/*
 * The lmdb suite's rows and a pass's operations, as lmdb_suite.c (the passes and the
 * driver) and lmdb_suite_plan.c (the data and the operations laid out before the clock)
 * both know them: a row of lmdb_suite.def, and the operations a plan lays out.
 */
#ifndef LMDB_REGRESS_LMDB_SUITE_H
#define LMDB_REGRESS_LMDB_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "lmdb.h"

enum shape { FILL, OVERWRITE, DELETE, FRAGMENT, DUPFILL, DUPREAD, DUPDELETE, RENEW, COPY, DROP, INCREMENTAL, READERS };
enum keys { SEQUENTIAL, RANDOM };
enum { APPEND = 1, CURSOR = 2, READER = 4, WRITEMAP = 8, DUPFIXED = 16, COMPACT = 32, REVERSE = 64, MOST = 128, COUNT = 256, NESTED = 512, TRACKED = 1024,
       REMAP = 2048, PAGESIZE = 4096, CHECKSUM = 8192, ENCRYPT = 16384, SCAN = 1 << 15, NODUP = 1 << 16, RANGE = 1 << 17,
       NOOVERWRITE = 1 << 18, GROW = 1 << 19, NAMED = 1 << 20, REVERSEKEY = 1 << 21, RESERVE = 1 << 22, SINGLE = 1 << 23,
       CHILDOPEN = 1 << 24, SPILL = 1 << 25 };

struct row { const char *name; enum shape shape; enum keys keys; uint32_t value, batch, share; unsigned options; };

/* Every key's length. */
#define KEY 16

/* ---- operations (ops.rs): each a 16-byte key, then its value ---- */

struct ops { unsigned char *bytes; size_t *ends, n, used, cap, ncap; };

static inline void ops_get(const struct ops *o, size_t i, MDB_val *k, MDB_val *v) {
    size_t start = i ? o->ends[i - 1] : 0;
    k->mv_size = KEY; k->mv_data = o->bytes + start;
    v->mv_size = o->ends[i] - start - KEY; v->mv_data = o->bytes + start + KEY;
}

/* What a pass does: its setup's operations and its timed ones. */
struct plan { struct ops setup_puts, setup_deletes, timed; };

/* The pool a row's values are drawn from (data.rs's Values): its size, 0 for sizes drawn. */
struct value_pool { unsigned char *pool; uint32_t size; };

/* Row r's plan (setup and timed operations) from s's seed and entries (ops.rs's Plan),
 * its values drawn from the pool made in *v, which the caller frees (v->pool) after the
 * plan: the heap the passes' own allocations find, and so what they count, is the one
 * the passes always ran on. */
void plan_make(struct plan *p, const struct row *r, struct value_pool *v, const struct settings *s);
void plan_free(struct plan *p);

#endif
