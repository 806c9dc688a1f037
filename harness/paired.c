/*
 * lmdb-regress C paired worker: the C twin's six workloads (workloads.c) against liblmdb
 * builds loaded at run time, several side by side in one process, as the Rust paired
 * worker (src/runner/paired_worker.rs, src/workload/paired.rs) runs them. It takes that
 * worker's arguments and prints the same JSON lines, so the Rust/C overhead compares two
 * harnesses that reach the same libraries the same way. Compiled once per run against a
 * verified lmdb.h (its types and constants; every build's layout is checked against them),
 * linked with no liblmdb: each slot's calls go through the table dlsym filled for it
 * (paired_load.c).
 *
 *   lmdb-paired-c prepare --library L --library-sha256 S --library-version V --dir D [config]
 *   lmdb-paired-c verify  --library L ... --dir D --workloads LIST [config]
 *   lmdb-paired-c run     --library L ... --dir D --scratch S --workloads LIST --iterations K [config]
 *   lmdb-paired-c paired  --slots F --scratch S --workloads LIST --chunk N --iterations K
 *                         --rotation-seed R [config]
 *
 * The slots file: one line per slot, tab-separated: library, SHA-256, the text its
 * mdb_version() must report, the read database's directory (or -), the workloads it runs
 * (comma-separated, among --workloads). The runner checks each
 * library's SHA-256 before it starts this worker (as it checks the twin's executable).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common.h"
#include "dataset.h"
#include "iocount.h"
#include "lmdb.h"
#include "paired.h"

#define CONSUME(p) __asm__ volatile("" : : "g"(p) : "memory")

/* The slot whose library is running, for the crash report (-1: none). */
static volatile sig_atomic_t running = -1;

/* On a fatal signal (or the watchdog's SIGTERM), names the running slot on stdout as the
 * Rust worker does, then raises the signal again: reset by SA_RESETHAND, it then takes its
 * default course (SIGTERM would otherwise return into the stalled chunk). */
static void on_fatal(int sig) {
    long k = running;
    if (k >= 0) {
        char buf[40], digits[20];
        int n = 0, at = 0;
        do { digits[n++] = (char)('0' + k % 10); k /= 10; } while (k);
        memcpy(buf, "\n{\"crashed\":", 12);
        at = 12;
        while (n) buf[at++] = digits[--n];
        buf[at++] = '}';
        buf[at++] = '\n';
        ssize_t ignored = write(1, buf, (size_t)at);
        (void)ignored;
    }
    raise(sig);
}

static void report_crashes(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &sa, NULL);
}

/* ---- JSON lines ---- */

/* A JSON string's contents: quotes, backslashes and control characters escaped. */
static void print_json_text(const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
}

/* `{"workload":w,"slot":k,` (each part only when given). */
static void line_start(const char *w, int slot) {
    printf("{");
    if (w) printf("\"workload\":\"%s\",", w);
    if (slot >= 0) printf("\"slot\":%d,", slot);
}

/* A failure line: `what`, then `: mdb_strerror (rc)` when rc is an LMDB code. */
static void print_failure(const char *w, int slot, const struct api *a, const char *what, int rc) {
    line_start(w, slot);
    printf("\"error\":\"");
    print_json_text(what);
    if (rc) {
        printf(": ");
        print_json_text(a ? a->mdb_strerror(rc) : strerror(rc));
        printf(" (%d)", rc);
    }
    printf("\"}\n");
    fflush(stdout);
}

/* ---- environments, through a slot's table (as common.c's env_open) ---- */

static int open_env(const struct api *a, const struct settings *c, const char *dir, unsigned extra, struct env *e,
                    const char **call) {
    unsigned flags = env_flags(c->writemap, c->sync, c->nordahead) | extra;
    int rc, rdonly = (extra & MDB_RDONLY) != 0, major, minor, patch;
    MDB_txn *txn;
    e->txn_flags = rdonly ? 0 : txn_flags(c->sync);
    a->mdb_version(&major, &minor, &patch);
    if (e->txn_flags && MDB_VERINT(major, minor, patch) < PER_TXN_SYNC_SINCE) {
        *call = "mdb_txn_begin (this LMDB drops MDB_NOSYNC and MDB_NOMETASYNC given to it; LMDB has them from 0.9.70)";
        return EINVAL;
    }
    if ((rc = a->mdb_env_create(&e->env))) { *call = "mdb_env_create"; return rc; }
    if ((rc = a->mdb_env_set_mapsize(e->env, c->map_size))) { *call = "mdb_env_set_mapsize"; goto fail; }
    if ((rc = a->mdb_env_set_maxdbs(e->env, 1))) { *call = "mdb_env_set_maxdbs"; goto fail; }
    if ((rc = a->mdb_env_set_maxreaders(e->env, 2))) { *call = "mdb_env_set_maxreaders"; goto fail; }
    if ((rc = a->mdb_env_open(e->env, dir, flags, 0664))) { *call = "mdb_env_open"; goto fail; }
    if ((rc = a->mdb_txn_begin(e->env, NULL, rdonly ? MDB_RDONLY : e->txn_flags, &txn))) { *call = "mdb_txn_begin"; goto fail; }
    /* LmdbJava's database "db", MDB_INTEGERKEY for integer keys. */
    unsigned db_flags = (rdonly ? 0 : MDB_CREATE) | (c->str_keys ? 0 : MDB_INTEGERKEY);
    if ((rc = a->mdb_dbi_open(txn, "db", db_flags, &e->dbi))) { a->mdb_txn_abort(txn); *call = "mdb_dbi_open"; goto fail; }
    if ((rc = a->mdb_txn_commit(txn))) { *call = "mdb_txn_commit"; goto fail; }
    return 0;
fail:
    a->mdb_env_close(e->env);
    return rc;
}

/* One untimed walk, so timed passes take no page faults (as native::fault_in). */
static int fault_in(const struct api *a, struct env *e) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if ((rc = a->mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) return rc;
    if ((rc = a->mdb_cursor_open(txn, e->dbi, &cur))) { a->mdb_txn_abort(txn); return rc; }
    rc = a->mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    while (rc == 0) {
        for (size_t i = 0; i < v.mv_size; i += 4096) (void)((const volatile unsigned char *)v.mv_data)[i];
        rc = a->mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    a->mdb_cursor_close(cur);
    a->mdb_txn_abort(txn);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* ---- timed regions: one chunk of a pass and nothing else (a whole pass is its one chunk;
 * callgrind: --toggle-collect=timed_*, the names of the twin's) ---- */

typedef __typeof__(mdb_cursor_get) *cursor_get_fn;
typedef __typeof__(mdb_cursor_put) *cursor_put_fn;

/* A walk under way: its first step is `first`, then `step`, until MDB_NOTFOUND. */
struct walk { int started, done; uint64_t visited; };

static inline __attribute__((always_inline)) int
body_read_key(cursor_get_fn get, MDB_cursor *cur, const struct dataset *d, unsigned char *key, size_t from, size_t to) {
    MDB_val k, v;
    for (size_t j = from; j < to; j++) {
        fill_key(d, key, j);
        k.mv_size = d->ks; k.mv_data = key;
        int rc = get(cur, &k, &v, MDB_SET_KEY);
        if (rc) return rc;
        CONSUME(&v);
    }
    return 0;
}

/* Up to n more entries of the walk w, each consumed; MDB_NOTFOUND ends the walk. */
#define WALK(get, cur, w, n, first, step, each)                                                     \
    do {                                                                                           \
        MDB_val k, v;                                                                              \
        for (size_t i = 0; i < (n); i++) {                                                         \
            int rc = get(cur, &k, &v, (w)->started ? (step) : (first));                            \
            (w)->started = 1;                                                                      \
            if (rc == MDB_NOTFOUND) { (w)->done = 1; break; }                                      \
            if (rc) return rc;                                                                     \
            each;                                                                                  \
            (w)->visited++;                                                                        \
        }                                                                                          \
        return 0;                                                                                  \
    } while (0)

static inline __attribute__((always_inline)) int
body_read_seq(cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n) {
    WALK(get, cur, w, n, MDB_FIRST, MDB_NEXT, { CONSUME(&k); CONSUME(&v); });
}

static inline __attribute__((always_inline)) int
body_read_rev(cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n) {
    WALK(get, cur, w, n, MDB_LAST, MDB_PREV, { CONSUME(&k); CONSUME(&v); });
}

static inline __attribute__((always_inline)) int
body_read_crc(cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n, uint32_t *crc) {
    WALK(get, cur, w, n, MDB_FIRST, MDB_NEXT,
         {
             *crc = libdeflate_crc32(*crc, k.mv_data, k.mv_size);
             *crc = libdeflate_crc32(*crc, v.mv_data, v.mv_size);
         });
}

static inline __attribute__((always_inline)) int
body_read_xxh64(cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n, uint64_t *sum) {
    WALK(get, cur, w, n, MDB_FIRST, MDB_NEXT,
         {
             *sum += XXH64(k.mv_data, k.mv_size, 0);
             *sum += XXH64(v.mv_data, v.mv_size, 0);
         });
}

/* The write's transaction and cursor, open from its first chunk to its last. */
struct write_txn { MDB_txn *txn; MDB_cursor *cur; };

/* Write positions [from, to), each entry built in the reused buffers as LmdbJava's writer
 * builds it: the chunk holding position 0 begins the pass's one transaction and opens its
 * one cursor, the one holding the last position commits it. */
static inline __attribute__((always_inline)) int
body_write(const struct api *a, struct env *e, cursor_put_fn put, const struct dataset *d, unsigned char *key,
           struct values *vals, struct write_txn *t, unsigned flags, size_t from, size_t to, const char **call) {
    MDB_val k, v;
    int rc = 0;
    if (from == 0) {
        if ((rc = a->mdb_txn_begin(e->env, NULL, e->txn_flags, &t->txn))) { *call = "mdb_txn_begin"; return rc; }
        if ((rc = a->mdb_cursor_open(t->txn, e->dbi, &t->cur))) {
            a->mdb_txn_abort(t->txn); t->txn = NULL; *call = "mdb_cursor_open"; return rc;
        }
    }
    if (!t->txn) { *call = "mdb_cursor_put (no transaction)"; return EINVAL; }
    for (size_t j = from; j < to; j++) {
        fill_key(d, key, j);
        k.mv_size = d->ks; k.mv_data = key;
        v.mv_size = d->vs; v.mv_data = (void *)fill_value(d, vals, j);
        if ((rc = put(t->cur, &k, &v, flags))) { *call = "mdb_cursor_put"; break; }
    }
    if (rc || to == d->n) {
        a->mdb_cursor_close(t->cur);
        if (rc) a->mdb_txn_abort(t->txn);
        else if ((rc = a->mdb_txn_commit(t->txn))) *call = "mdb_txn_commit";
        t->txn = NULL;
    }
    return rc;
}

/* Copies of each timed function, as the Rust worker's (src/workload/native.rs,
 * TIMED_COPIES): lld places each apart, and chunk i runs in copy i mod TIMED_COPIES, every
 * slot alike, so one process times its chunks in several placements of the loop. Copy 0
 * keeps the plain name; each copy carries an assembly comment of its own name, so no pass
 * of the compiler folds the copies into one. */
#define TIMED_COPIES 4
#define TIMED_COPY(name, copy, params, args)                                                       \
    __attribute__((noinline)) int timed_##name##copy params {                                      \
        __asm__("# timed_" #name #copy);                                                           \
        return body_##name args;                                                                   \
    }
#define TIMED_COPIES_OF(name, params, args)                                                        \
    TIMED_COPY(name, , params, args)                                                               \
    TIMED_COPY(name, _1, params, args)                                                             \
    TIMED_COPY(name, _2, params, args)                                                             \
    TIMED_COPY(name, _3, params, args)                                                             \
    static int (*const timed_##name##_copies[TIMED_COPIES]) params = {                              \
        timed_##name, timed_##name##_1, timed_##name##_2, timed_##name##_3};

TIMED_COPIES_OF(read_key,
                (cursor_get_fn get, MDB_cursor *cur, const struct dataset *d, unsigned char *key, size_t from,
                 size_t to),
                (get, cur, d, key, from, to))
TIMED_COPIES_OF(read_seq, (cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n), (get, cur, w, n))
TIMED_COPIES_OF(read_rev, (cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n), (get, cur, w, n))
TIMED_COPIES_OF(read_crc, (cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n, uint32_t *crc),
                (get, cur, w, n, crc))
TIMED_COPIES_OF(read_xxh64, (cursor_get_fn get, MDB_cursor *cur, struct walk *w, size_t n, uint64_t *sum),
                (get, cur, w, n, sum))
TIMED_COPIES_OF(write,
                (const struct api *a, struct env *e, cursor_put_fn put, const struct dataset *d, unsigned char *key,
                 struct values *vals, struct write_txn *t, unsigned flags, size_t from, size_t to,
                 const char **call),
                (a, e, put, d, key, vals, t, flags, from, to, call))

/* ---- a pass: opened untimed, run chunk by chunk, ended untimed (src/workload/pass.rs) ---- */

enum kind { READ_KEY, READ_SEQ, READ_REV, READ_CRC, READ_XXH64, WRITE };

static int kind_of(const char *w) {
    static const char *const names[] = {"readKey", "readSeq", "readRev", "readCrc", "readXxh64", "write"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(w, names[i])) return i;
    return -1;
}

/* A slot: a loaded library, its read database (opened and faulted in once), its errors. */
struct slot {
    int id;
    const char *library, *version, *dir;
    const char *workloads;     /* the comma-separated workloads it runs; NULL: all */
    struct api api;
    void *handle;
    char load_error[1024];
    struct env reads;
    int have_reads;
    char reads_error[512];
};

struct pass {
    struct slot *s;
    enum kind kind;
    const struct dataset *d;
    int live;                  /* opened, and no chunk has failed */
    MDB_txn *txn;              /* reads: the pass's read transaction */
    MDB_cursor *cur;           /* reads: its cursor */
    struct walk walk;
    uint32_t crc;
    uint64_t sum;
    struct env env;            /* write: the fresh environment */
    char dir[4096];            /* write: its folder */
    struct write_txn wt;
    uint64_t txnid;            /* write: the environment's last transaction when opened */
    struct io io;              /* write: what its chunks synced and wrote, and its commits */
    struct values vals;
    unsigned char key[16];
    unsigned flags;
    const char *call;          /* the failing call */
    int rc;
};

/* Chunk i of `size` operations, in copy `copy` of its timed function: readKey and the write
 * by position, walks by steps (the last chunk walks on to the end, where a whole pass ends). */
static inline int run_chunk(struct pass *p, size_t size, size_t count, size_t i, size_t copy) {
    size_t from = i * size, to = from + size < p->d->n ? from + size : p->d->n;
    size_t steps = i + 1 == count ? SIZE_MAX : size;
    cursor_get_fn get = p->s->api.mdb_cursor_get;
    switch (p->kind) {
    case READ_KEY: return timed_read_key_copies[copy](get, p->cur, p->d, p->key, from, to);
    case READ_SEQ: return timed_read_seq_copies[copy](get, p->cur, &p->walk, steps);
    case READ_REV: return timed_read_rev_copies[copy](get, p->cur, &p->walk, steps);
    case READ_CRC: return timed_read_crc_copies[copy](get, p->cur, &p->walk, steps, &p->crc);
    case READ_XXH64: return timed_read_xxh64_copies[copy](get, p->cur, &p->walk, steps, &p->sum);
    case WRITE:
        return timed_write_copies[copy](&p->s->api, &p->env, p->s->api.mdb_cursor_put, p->d, p->key, &p->vals, &p->wt, p->flags,
                           from, to, &p->call);
    }
    return EINVAL;
}

/* Opens a pass (untimed): a read transaction and cursor on the slot's read database, or a
 * fresh environment in `scratch` for the write. 0, or the failure in p->call and p->rc. */
static int open_pass(struct pass *p, struct slot *s, enum kind kind, const struct dataset *d,
                     const struct settings *c, const char *scratch) {
    memset(p, 0, sizeof *p);
    p->s = s; p->kind = kind; p->d = d; p->call = "mdb_cursor_get";
    const struct api *a = &s->api;
    if (kind == WRITE) {
        snprintf(p->dir, sizeof p->dir, "%s/cpaired-XXXXXX", scratch);
        if (!mkdtemp(p->dir)) { p->call = "mkdtemp"; p->rc = errno; p->dir[0] = 0; return -1; }
        io_forget_descriptors();
        if ((p->rc = open_env(a, c, p->dir, 0, &p->env, &p->call))) { remove_env_dir(p->dir); p->dir[0] = 0; return -1; }
        io_learn_descriptors();
        MDB_envinfo info;
        if ((p->rc = a->mdb_env_info(p->env.env, &info))) {
            p->call = "mdb_env_info"; a->mdb_env_close(p->env.env); remove_env_dir(p->dir); p->dir[0] = 0; return -1;
        }
        p->txnid = info.me_last_txnid;
        p->vals.buf = xmalloc(d->vs);
        p->flags = c->random_order ? 0 : MDB_APPEND;
        p->call = "mdb_cursor_put";
    } else {
        if ((p->rc = a->mdb_txn_begin(s->reads.env, NULL, MDB_RDONLY, &p->txn))) { p->call = "mdb_txn_begin"; return -1; }
        if ((p->rc = a->mdb_cursor_open(p->txn, s->reads.dbi, &p->cur))) {
            a->mdb_txn_abort(p->txn); p->txn = NULL; p->call = "mdb_cursor_open"; return -1;
        }
        if (kind == READ_KEY) p->call = "mdb_cursor_get(MDB_SET_KEY)";
    }
    p->live = 1;
    return 0;
}

/* The space a write pass left, read through the slot's table (common.c's space_of). */
static int pass_space(struct pass *p, struct space *space, char *why, size_t cap) {
    const struct api *a = &p->s->api;
    const struct space_calls f = {
        a->mdb_env_info, a->mdb_txn_begin, a->mdb_txn_abort, a->mdb_stat, a->mdb_cursor_open, a->mdb_cursor_get,
        a->mdb_cursor_close,
    };
    const char *call = "";
    int rc = space_of(&f, &p->env, p->dir, space, &call);
    if (rc) snprintf(why, cap, "%s: %s (%d)", call, a->mdb_strerror(rc), rc);
    return rc ? -1 : 0;
}

/* A write pass's I/O: its chunks' syncs and bytes, and the transactions it committed (the
 * environment's last transaction id less the one it opened at), as src/workload/pass.rs. */
static int pass_commits(struct pass *p, struct io *io, char *why, size_t cap) {
    const struct api *a = &p->s->api;
    MDB_envinfo info;
    int rc = a->mdb_env_info(p->env.env, &info);
    if (rc) { snprintf(why, cap, "mdb_env_info: %s (%d)", a->mdb_strerror(rc), rc); return -1; }
    *io = p->io;
    io->commits = info.me_last_txnid - p->txnid;
    return 0;
}

/* Ends a pass (untimed): its transaction closed, the space a write left in *space and its
 * I/O in *io, its folder removed; what it computed in *out. 0, or why the whole pass is
 * not what a whole pass is in `why`. */
static int close_pass(struct pass *p, uint64_t *out, struct space *space, struct io *io, char *why, size_t cap) {
    const struct api *a = &p->s->api;
    int bad = 0;
    if (p->cur) a->mdb_cursor_close(p->cur);
    if (p->txn) a->mdb_txn_abort(p->txn);
    if (p->kind == WRITE) {
        if (p->wt.txn) { a->mdb_cursor_close(p->wt.cur); a->mdb_txn_abort(p->wt.txn); bad = snprintf(why, cap, "the write pass ended before its last chunk"); }
        else if (p->live && p->dir[0]) bad = pass_commits(p, io, why, cap) || pass_space(p, space, why, cap);
        if (p->dir[0]) { a->mdb_env_close(p->env.env); remove_env_dir(p->dir); }
        free(p->vals.buf);
    } else if (p->kind != READ_KEY && (!p->walk.done || p->walk.visited != p->d->n)) {
        static const char *const names[] = {"readKey", "readSeq", "readRev", "readCrc", "readXxh64", "write"};
        bad = snprintf(why, cap, "%s visited %" PRIu64 " of %zu entries", names[p->kind], p->walk.visited, p->d->n);
    }
    *out = p->kind == READ_CRC ? p->crc : p->kind == READ_XXH64 ? p->sum : 0;
    return bad ? -1 : 0;
}

/* A shuffled order of n indices (Fisher-Yates on the worker's generator). */
static void shuffle(int *order, int n, uint64_t *rng) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(splitmix64(rng) % (uint64_t)(i + 1));
        int t = order[i]; order[i] = order[j]; order[j] = t;
    }
}

/* Whether slot s runs workload w: an adaptive round leaves a unit out of the workloads
 * whose comparison is decided. */
static int runs(const struct slot *s, const char *w) {
    if (!s->workloads) return 1;
    size_t n = strlen(w);
    for (const char *p = s->workloads; (p = strstr(p, w)); p += n)
        if ((p == s->workloads || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

/* What each slot measured of one workload: per pass its chunk times, their major faults
 * and its output. */
struct outcome {
    int skipped;        /* the slot does not run this workload: no line */
    uint64_t *chunks;   /* passes × count */
    uint64_t *faults;   /* passes: the major faults of its timed chunks */
    uint64_t *outputs;  /* passes */
    struct space *space; /* passes: the write's */
    struct io *io;      /* passes: the write's */
    unsigned done;      /* passes finished */
    char error[1024];   /* set: no samples */
};

static void fail(struct outcome *o, const struct slot *s, const char *what, int rc) {
    if (o->error[0]) return;
    if (rc) snprintf(o->error, sizeof o->error, "%s: %s (%d)", what, s->api.mdb_strerror(rc), rc);
    else snprintf(o->error, sizeof o->error, "%s", what);
}

/* Every live pass's chunks, each round of chunks in a fresh shuffled order of the slots;
 * only the chunk's call is between the two clock reads, and the major faults and the
 * syncs and bytes written (iocount.c) are read outside them (summed per pass, as
 * src/workload/paired.rs's rotate). A failing chunk ends its pass. */
static void rotate(struct pass *passes, int n, size_t size, size_t count, uint64_t *times, uint64_t *faults,
                   uint64_t *rng) {
    int order[MAX_SLOTS], live = 0;
    for (int k = 0; k < n; k++) {
        faults[k] = 0;
        if (passes[k].live) order[live++] = k;
    }
    for (size_t i = 0; i < count; i++) {
        size_t copy = i % TIMED_COPIES; /* every slot's chunk i alike, chosen before the clock */
        shuffle(order, live, rng);
        for (int o = 0; o < live; o++) {
            struct pass *p = &passes[order[o]];
            if (!p->live) continue;
            running = p->s->id;
            struct io_mark m0 = io_now();
            uint64_t f0 = major_faults_now(), t0 = now_ns();
            int rc = run_chunk(p, size, count, i, copy);
            times[(size_t)order[o] * count + i] = now_ns() - t0;
            faults[order[o]] += major_faults_now() - f0;
            struct io_mark m1 = io_now();
            p->io.syncs += m1.syncs - m0.syncs;
            p->io.bytes += m1.bytes - m0.bytes;
            if (rc) { p->live = 0; p->rc = rc; }
        }
        running = -1;
        /* The watchdog's sign of life, between timed chunks. */
        fputs("{\"progress\":true}\n", stdout);
        fflush(stdout);
    }
    running = -1;
}

/* A pass of n operations in chunks of `chunk`: the chunk size (at most the pass) and count. */
static size_t chunk_size(size_t chunk, size_t n) { return chunk < 1 ? 1 : chunk > n ? (n ? n : 1) : chunk; }
static size_t chunk_count(size_t size, size_t n) { return n ? (n + size - 1) / size : 1; }

/* Every slot's `iterations` passes of workload w, chunk by chunk, side by side; a slot
 * not loaded, or without its read database, gets why in its outcome. */
static void run_workload(struct slot *slots, int n, const char *w, const struct dataset *d, const struct settings *c,
                         size_t chunk, uint64_t *rng, struct outcome *out) {
    enum kind kind = (enum kind)kind_of(w);
    size_t size = chunk_size(chunk, d->n), count = chunk_count(size, d->n);
    struct pass *passes = xmalloc((size_t)n * sizeof *passes);
    uint64_t *times = xmalloc((size_t)n * count * sizeof *times), *faults = xmalloc((size_t)n * sizeof *faults);
    for (int k = 0; k < n; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].chunks = xmalloc((size_t)c->iterations * count * sizeof *out[k].chunks);
        out[k].outputs = xmalloc(c->iterations * sizeof *out[k].outputs);
        out[k].faults = xmalloc(c->iterations * sizeof *out[k].faults);
        out[k].space = xmalloc(c->iterations * sizeof *out[k].space);
        out[k].io = xmalloc(c->iterations * sizeof *out[k].io);
        out[k].skipped = !runs(&slots[k], w);
        if (out[k].skipped) continue;
        if (!slots[k].handle) snprintf(out[k].error, sizeof out[k].error, "refusing to load the library: %s", slots[k].load_error);
        else if (kind != WRITE && !slots[k].have_reads) fail(&out[k], &slots[k], slots[k].reads_error, 0);
    }
    for (unsigned it = 0; it < c->iterations; it++) {
        for (int k = 0; k < n; k++) {
            passes[k].live = 0;
            passes[k].s = NULL;
            if (out[k].error[0] || out[k].skipped) continue;
            running = slots[k].id;
            if (open_pass(&passes[k], &slots[k], kind, d, c, c->scratch)) {
                fail(&out[k], &slots[k], passes[k].call, passes[k].rc);
                passes[k].s = NULL;
            }
            running = -1;
        }
        rotate(passes, n, size, count, times, faults, rng);
        for (int k = 0; k < n; k++) {
            if (!passes[k].s) continue;
            int failed = !passes[k].live;
            char why[256] = "";
            uint64_t output = 0;
            struct space space = {0};
            struct io io = {0};
            running = slots[k].id;
            int incomplete = close_pass(&passes[k], &output, &space, &io, why, sizeof why);
            running = -1;
            if (failed) fail(&out[k], &slots[k], passes[k].call, passes[k].rc);
            else if (incomplete) fail(&out[k], &slots[k], why, 0);
            else {
                memcpy(out[k].chunks + (size_t)out[k].done * count, times + (size_t)k * count, count * sizeof *times);
                out[k].space[out[k].done] = space;
                out[k].io[out[k].done] = io;
                out[k].faults[out[k].done] = faults[k];
                out[k].outputs[out[k].done++] = output;
            }
        }
    }
    free(passes);
    free(times);
    free(faults);
}

/* One slot's line for workload w: its samples (each the sum of its chunks), their major
 * faults, their chunks when `chunked`, the outputs of readCrc and readXxh64; or its error. */
static void print_outcome(const char *w, int slot, const struct outcome *o, size_t count, int chunked) {
    if (o->error[0]) { print_failure(w, slot, NULL, o->error, 0); return; }
    line_start(w, slot);
    printf("\"samples_ns\":[");
    for (unsigned p = 0; p < o->done; p++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < count; i++) sum += o->chunks[p * count + i];
        printf("%s%" PRIu64, p ? "," : "", sum);
    }
    printf("],\"major_faults\":");
    print_u64s(o->faults, o->done);
    int kind = kind_of(w);
    if (kind == READ_CRC || kind == READ_XXH64) { printf(",\"outputs\":"); print_u64s(o->outputs, o->done); }
    if (kind == WRITE) print_space(o->space, o->done);
    if (kind == WRITE) print_io(o->io, o->done);
    if (chunked) {
        printf(",\"chunks_ns\":[");
        for (unsigned p = 0; p < o->done; p++) { printf("%s", p ? "," : ""); print_u64s(o->chunks + p * count, count); }
        printf("]");
    }
    printf("}\n");
    fflush(stdout);
}

/* Opens and faults in each loaded slot's read database, once, when reads are measured. */
static void open_reads(struct slot *slots, int n, const struct settings *c) {
    for (int k = 0; k < n; k++) {
        struct slot *s = &slots[k];
        if (!s->handle) continue;
        if (!s->dir) { snprintf(s->reads_error, sizeof s->reads_error, "reads need a read database"); continue; }
        const char *call = "";
        running = s->id;
        int rc = open_env(&s->api, c, s->dir, MDB_RDONLY, &s->reads, &call);
        if (!rc && (rc = fault_in(&s->api, &s->reads))) { call = "mdb_cursor_get"; s->api.mdb_env_close(s->reads.env); }
        running = -1;
        if (rc) snprintf(s->reads_error, sizeof s->reads_error, "%s: %s (%d)", call, s->api.mdb_strerror(rc), rc);
        else s->have_reads = 1;
    }
}

/* Each of the comma-separated workloads, every slot side by side, in chunks of `chunk`
 * (paired: lines name their slot and carry their chunks) or whole (run: one library). */
static int measure(struct slot *slots, int n, const struct settings *c, size_t chunk, uint64_t seed, int paired) {
    struct dataset d;
    generate(c, &d);
    uint64_t rng = seed;
    char *list = strdup(c->workloads), *save = NULL;
    int reads = 0;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (kind_of(w) < 0) { fprintf(stderr, "unknown workload %s; this worker runs %s\n", w, LMDBJAVA_WORKLOADS); return 2; }
        reads |= kind_of(w) != WRITE;
    }
    free(list);
    if (reads) open_reads(slots, n, c);
    size_t size = chunk_size(paired ? chunk : d.n, d.n), count = chunk_count(size, d.n);
    struct outcome *out = xmalloc((size_t)n * sizeof *out);
    list = strdup(c->workloads);
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        run_workload(slots, n, w, &d, c, size, &rng, out);
        for (int k = 0; k < n; k++) {
            if (!out[k].skipped) print_outcome(w, paired ? slots[k].id : -1, &out[k], count, paired);
            free(out[k].chunks);
            free(out[k].outputs);
            free(out[k].faults);
            free(out[k].space);
            free(out[k].io);
        }
    }
    free(list);
    free(out);
    return 0;
}

/* ---- untimed: the read database and verification, through one library ---- */

/* Writes the read database in c->dir, as the write workload writes (untimed). */
static int prepare(struct slot *s, const struct settings *c, const struct dataset *d) {
    struct env e;
    struct write_txn t = {0};
    unsigned char key[16];
    struct values vals = { xmalloc(d->vs), 0 };
    const char *call = "";
    int rc = open_env(&s->api, c, c->dir, 0, &e, &call);
    if (!rc) {
        unsigned flags = c->random_order ? 0 : MDB_APPEND;
        rc = timed_write(&s->api, &e, s->api.mdb_cursor_put, d, key, &vals, &t, flags, 0, d->n, &call);
        s->api.mdb_env_close(e.env);
    }
    free(vals.buf);
    if (rc) print_failure(NULL, -1, &s->api, call, rc);
    else printf("{\"prepared\":true}\n");
    return 0;
}

/* What read workload w visits, hashed as its checksum says (as workloads.c's verify_one). */
static int verify_one(const struct api *a, struct env *e, int kind, const struct dataset *d, uint64_t *entries,
                      uint64_t *digest) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if ((rc = a->mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) return rc;
    if ((rc = a->mdb_cursor_open(txn, e->dbi, &cur))) { a->mdb_txn_abort(txn); return rc; }
    XXH64_state_t *xx = XXH64_createState();
    XXH64_reset(xx, 0);
    uint32_t crc = 0;
    uint64_t sum = 0, n = 0;
    if (kind == READ_KEY) {
        for (size_t j = 0; j < d->n; j++) {
            k.mv_size = d->ks; k.mv_data = (void *)key_bytes(d, j);
            if ((rc = a->mdb_cursor_get(cur, &k, &v, MDB_SET_KEY))) break;
            XXH64_update(xx, key_bytes(d, j), d->ks);
            XXH64_update(xx, v.mv_data, v.mv_size);
            n++;
        }
    } else {
        int rev = kind == READ_REV;
        rc = a->mdb_cursor_get(cur, &k, &v, rev ? MDB_LAST : MDB_FIRST);
        while (rc == 0) {
            XXH64_update(xx, k.mv_data, k.mv_size);
            XXH64_update(xx, v.mv_data, v.mv_size);
            crc = libdeflate_crc32(crc, k.mv_data, k.mv_size);
            crc = libdeflate_crc32(crc, v.mv_data, v.mv_size);
            sum += XXH64(k.mv_data, k.mv_size, 0) + XXH64(v.mv_data, v.mv_size, 0);
            n++;
            rc = a->mdb_cursor_get(cur, &k, &v, rev ? MDB_PREV : MDB_NEXT);
        }
        if (rc == MDB_NOTFOUND) rc = 0;
    }
    a->mdb_cursor_close(cur);
    a->mdb_txn_abort(txn);
    *entries = n;
    *digest = kind == READ_CRC ? crc : kind == READ_XXH64 ? sum : XXH64_digest(xx);
    XXH64_freeState(xx);
    return rc;
}

static int verify(struct slot *s, const struct settings *c, const struct dataset *d) {
    char *list = strdup(c->workloads), *save = NULL;
    struct env e;
    const char *call = "";
    int rc = open_env(&s->api, c, c->dir, MDB_RDONLY, &e, &call);
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int kind = kind_of(w);
        if (kind == WRITE) continue;
        if (kind < 0) { fprintf(stderr, "unknown workload %s\n", w); free(list); return 2; }
        if (rc) { print_failure(w, -1, &s->api, call, rc); continue; }
        uint64_t entries, digest;
        int vrc = verify_one(&s->api, &e, kind, d, &entries, &digest);
        if (vrc) { print_failure(w, -1, &s->api, "mdb_cursor_get", vrc); continue; }
        printf("{\"workload\":\"%s\",\"checksum\":{\"entries\":%" PRIu64 ",\"digest\":%" PRIu64 "}}\n", w, entries, digest);
        fflush(stdout);
    }
    if (!rc) s->api.mdb_env_close(e.env);
    free(list);
    return 0;
}

/* ---- arguments ---- */

/* This worker's own options, taken out of argv; the rest go to parse_settings. */
struct own {
    const char *slots, *library, *sha256, *version;
    uint64_t chunk, rotation_seed;
    int have_chunk;
};

static int take_own(int *argc, char **argv, struct own *o) {
    int out = 2;
    for (int i = 2; i < *argc; i++) {
        const char *a = argv[i], *v = i + 1 < *argc ? argv[i + 1] : NULL;
        const char **text = !strcmp(a, "--slots") ? &o->slots : !strcmp(a, "--library") ? &o->library
                          : !strcmp(a, "--library-sha256") ? &o->sha256 : !strcmp(a, "--library-version") ? &o->version : NULL;
        int number = !strcmp(a, "--chunk") || !strcmp(a, "--rotation-seed");
        if (!text && !number) { argv[out++] = argv[i]; continue; }
        if (!v) { fprintf(stderr, "%s needs a value\n", a); return 0; }
        i++;
        if (text) { *text = v; continue; }
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (!*v || *end || errno || v[0] == '-') { fprintf(stderr, "%s: %s is not a whole number\n", a, v); return 0; }
        if (!strcmp(a, "--chunk")) { o->chunk = x; o->have_chunk = 1; }
        else o->rotation_seed = x;
    }
    *argc = out;
    return 1;
}

/* The slots file's lines, each into a slot (its fields point into `text`). */
static int read_slots(const char *path, struct slot *slots, char **text) {
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno)); return -1; }
    size_t cap = 0;
    ssize_t got = getdelim(text, &cap, '\0', f);
    fclose(f);
    if (got < 0) { *text = strdup(""); }
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (n == MAX_SLOTS) { fprintf(stderr, "more than %d slots\n", MAX_SLOTS); return -1; }
        char *field[5], *fs = NULL;
        int m = 0;
        for (char *p = strtok_r(line, "\t", &fs); p && m < 5; p = strtok_r(NULL, "\t", &fs)) field[m++] = p;
        if (m != 5) { fprintf(stderr, "a slot line has 5 tab-separated fields: %s\n", line); return -1; }
        memset(&slots[n], 0, sizeof slots[n]);
        slots[n].id = n;
        slots[n].library = field[0];
        slots[n].version = field[2];
        slots[n].dir = strcmp(field[3], "-") ? field[3] : NULL;
        slots[n].workloads = field[4];
        n++;
    }
    return n;
}

static void load_slot(struct slot *s) {
    running = s->id;
    s->handle = load_library(s->library, s->version, &s->api, s->load_error, sizeof s->load_error);
    running = -1;
}

/* Keeps the memory a pass frees in the process for the next pass, as the Rust paired worker
 * does (src/workload/malloc.rs, keep_freed, the same two settings): no trimming of the heap's
 * top, and allocations up to 32 MiB (glibc's most) from the heap, not from maps free()
 * unmaps. A page given back costs a fresh-page fault when touched again, the host's work,
 * not LMDB's: a long-lived process keeps its heap. 0, or the setting glibc refused. */
static const char *keep_freed(void) {
    if (!mallopt(M_TRIM_THRESHOLD, -1)) return "glibc's mallopt refused M_TRIM_THRESHOLD -1";
    if (!mallopt(M_MMAP_THRESHOLD, 32 << 20)) return "glibc's mallopt refused M_MMAP_THRESHOLD 32 MiB";
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s prepare|verify|run|paired [options]\n", argv[0]); return 2; }
    const char *action = argv[1];
    int paired = !strcmp(action, "paired");
    if (!paired && strcmp(action, "prepare") && strcmp(action, "verify") && strcmp(action, "run")) {
        fprintf(stderr, "unknown action %s\n", action);
        return 2;
    }
    struct own o = {0};
    struct settings s;
    if (!take_own(&argc, argv, &o) || !parse_settings(argc, argv, &s) || !settings_given(&s)) return 2;
    report_crashes();
    static struct slot slots[MAX_SLOTS];
    char *text = NULL;
    int n;
    if (paired) {
        if (!o.slots || !o.have_chunk) { fprintf(stderr, "paired needs --slots and --chunk\n"); return 2; }
        /* Before any library is loaded or any pass timed. */
        const char *refused = keep_freed();
        if (refused) { print_failure(NULL, -1, NULL, refused, 0); return 1; }
        if ((n = read_slots(o.slots, slots, &text)) < 0) return 2;
    } else {
        if (!o.library || !o.version) { fprintf(stderr, "%s needs --library and --library-version\n", action); return 2; }
        n = 1;
        slots[0].id = 0; slots[0].library = o.library; slots[0].version = o.version; slots[0].dir = s.dir;
    }
    for (int k = 0; k < n; k++) load_slot(&slots[k]);
    if (!paired && !slots[0].handle) {
        char why[1100];
        snprintf(why, sizeof why, "refusing to load the library: %s", slots[0].load_error);
        print_failure(NULL, -1, NULL, why, 0);
        return 1;
    }
    if (!strcmp(action, "prepare") || !strcmp(action, "verify")) {
        struct dataset d;
        generate(&s, &d);
        if (!s.dir) { fprintf(stderr, "%s needs --dir\n", action); return 2; }
        return !strcmp(action, "prepare") ? prepare(&slots[0], &s, &d) : verify(&slots[0], &s, &d);
    }
    int rc = measure(slots, n, &s, o.chunk, o.rotation_seed, paired);
    free(text);
    return rc;
}
