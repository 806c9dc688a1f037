/* The preset suites' results (results.h). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lmdb.h"
#include "results.h"

/* ---- environments (store.rs) ---- */

/* A transaction (read-only with MDB_RDONLY in flags, else a write transaction with e's
 * txn_flags too) and a cursor on e's database. */
int begin_cursor(struct env *e, unsigned flags, MDB_txn **txn, MDB_cursor **cur, const char **call) {
    int rc;
    if (!(flags & MDB_RDONLY)) flags |= e->txn_flags;
    if ((rc = mdb_txn_begin(e->env, NULL, flags, txn))) { *call = "mdb_txn_begin"; return rc; }
    if ((rc = mdb_cursor_open(*txn, e->dbi, cur))) { mdb_txn_abort(*txn); *call = "mdb_cursor_open"; }
    return rc;
}

/* Closes the cursor, then commits a write transaction that succeeded, else aborts. */
int end_cursor(MDB_txn *txn, MDB_cursor *cur, int commit, int rc, const char **call) {
    mdb_cursor_close(cur);
    if (commit && !rc) {
        if ((rc = mdb_txn_commit(txn))) *call = "mdb_txn_commit";
    } else {
        mdb_txn_abort(txn);
    }
    return rc;
}

/* Entry count and XXH64 of every key then value in key order (store::walk_checksum). */
int walk_checksum(struct env *e, uint64_t *entries, uint64_t *digest) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    const char *call;
    int rc = begin_cursor(e, MDB_RDONLY, &txn, &cur, &call);
    if (rc) return rc;
    XXH64_state_t *xx = XXH64_createState();
    XXH64_reset(xx, 0);
    *entries = 0;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        XXH64_update(xx, k.mv_data, k.mv_size);
        XXH64_update(xx, v.mv_data, v.mv_size);
        ++*entries;
    }
    *digest = XXH64_digest(xx);
    XXH64_freeState(xx);
    return end_cursor(txn, cur, 0, rc == MDB_NOTFOUND ? 0 : rc, &call);
}

char *data_file(const char *dir) {
    char *p = xmalloc(strlen(dir) + 16);
    sprintf(p, "%s/data.mdb", dir);
    return p;
}

int64_t size_on_disk(const char *dir) {
    struct stat st;
    char *f = data_file(dir);
    int rc = stat(f, &st);
    free(f);
    return rc ? -1 : (int64_t)st.st_blocks * 512;
}

void result_init(struct result *r, const char *w, unsigned iterations) {
    memset(r, 0, sizeof *r);
    r->workload = w;
    r->ns = xmalloc(iterations * sizeof *r->ns);
    r->fig = calloc(iterations ? iterations : 1, sizeof *r->fig);
    if (!r->fig) exit(3);
    r->space = xmalloc((iterations ? iterations : 1) * sizeof *r->space);
    r->io = xmalloc((iterations ? iterations : 1) * sizeof *r->io);
}

void result_free(struct result *r) {
    for (unsigned i = 0; i < r->n; i++) {
        free(r->fig[i].latencies);
        free(r->fig[i].commit_ns);
        free(r->fig[i].commit_order_ns);
    }
    free(r->ns);
    free(r->fig);
    free(r->space);
    free(r->io);
}

/* Records a pass; every pass must produce the first one's checksum. */
int result_push(struct result *r, uint64_t ns, uint64_t entries, uint64_t digest, struct figures f) {
    if (r->has_checksum && (entries != r->entries || digest != r->digest)) {
        printf("{\"workload\":\"%s\",\"error\":\"pass %u produced checksum %" PRIu64 ":%016" PRIx64 ", the first %" PRIu64 ":%016" PRIx64 "\"}\n",
               r->workload, r->n + 1, entries, digest, r->entries, r->digest);
        free(f.latencies);
        free(f.commit_ns);
        free(f.commit_order_ns);
        return 1;
    }
    r->has_checksum = 1;
    r->entries = entries;
    r->digest = digest;
    r->ns[r->n] = ns;
    r->fig[r->n++] = f;
    return 0;
}

void print_figures(const struct figures *f) {
    printf("{\"ops\":%" PRIu64, f->ops);
    if (f->nlat) {
        printf(",\"latencies_ns\":");
        print_u64s(f->latencies, f->nlat);
    }
    if (f->db_bytes >= 0) printf(",\"db_bytes\":%" PRId64, f->db_bytes);
    if (f->ncommit) {
        printf(",\"commit_ns\":[");
        for (uint64_t i = 0; i < f->ncommit; i++)
            printf("%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", f->commit_ns[i][0], f->commit_ns[i][1]);
        printf("]");
    }
    if (f->ncommit_order) {
        printf(",\"commit_order_ns\":");
        print_u64s(f->commit_order_ns, f->ncommit_order);
    }
    if (f->has_usage) {
        printf(",\"usage\":{\"user_us\":%" PRIu64 ",\"sys_us\":%" PRIu64 ",", f->user_us, f->sys_us);
        if (f->max_rss_kib >= 0) printf("\"max_rss_kib\":%" PRId64 ",", f->max_rss_kib);
        printf("\"major_faults\":%" PRIu64 ",\"minor_faults\":%" PRIu64 "}", f->major, f->minor);
    }
    if (f->has_resident)
        printf(",\"resident\":{\"resident_pages\":%" PRIu64 ",\"total_pages\":%" PRIu64 "}", f->resident, f->total);
    printf("}");
}

void result_print(const struct result *r) {
    printf("{\"workload\":\"%s\",\"samples_ns\":", r->workload);
    print_u64s(r->ns, r->n);
    printf(",\"checksum\":{\"entries\":%" PRIu64 ",\"digest\":%" PRIu64 "},\"figures\":[", r->entries, r->digest);
    for (unsigned i = 0; i < r->n; i++) {
        if (i) printf(",");
        print_figures(&r->fig[i]);
    }
    printf("]");
    if (r->has_space) print_space(r->space, r->n);
    if (r->has_io) print_io(r->io, r->n);
    printf("}\n");
    fflush(stdout);
}

struct figures no_figures(uint64_t ops) {
    struct figures f;
    memset(&f, 0, sizeof f);
    f.ops = ops;
    f.db_bytes = f.max_rss_kib = -1;
    return f;
}

