/*
 * lmdb-regress C twin, the lmdb suite: every row of lmdb_suite.def, as
 * src/workload/presets/lmdb_suite/ runs it: on the plan lmdb_suite_plan.c lays out (the
 * same data from the same seed), the same setup (untimed) and timed regions (timed_lmdb_*,
 * for callgrind), the same checksums; and the driver, each row's passes on fresh
 * environments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "iocount.h"
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PROFILE_PART_END(name) CALLGRIND_DUMP_STATS_AT(name)
#define UNDER_VALGRIND RUNNING_ON_VALGRIND
#else
/* No valgrind here, so no callgrind to count under. */
#define PROFILE_PART_END(name) ((void)(name))
#define UNDER_VALGRIND 0
#endif
#include "lmdb.h"
#include "presets.h"
#include "results.h"

#include "lmdb_suite.h"

#define LMDB_WORKLOAD(name, title, shape, keys, value, batch, share, options, about) \
    {#name, shape, keys, value, batch, share, options},
static const struct row ROWS[] = {
#include "lmdb_suite.def"
};
#undef LMDB_WORKLOAD
#define NROWS (sizeof ROWS / sizeof *ROWS)

#define SETUP_BATCH 1000

static struct settings P;

/* A value's first 8 bytes (fewer: zero-padded), little-endian: what a read's checksum sums. */
static uint64_t head(const unsigned char *v, size_t len) {
    uint64_t h = 0;
    memcpy(&h, v, len < 8 ? len : 8);
    return h;
}

/* ---- passes (pass.rs) ---- */

/* pass.rs's Write. */
struct write { uint32_t batch; int cursor; unsigned flags; int nested, tracked, grow, dupsort, child_open, spill; };

/* SPILL's reserved value (pass.rs's SPILL_BYTES), which LMDB's estimate doubles past the
 * dirty list's room; and the key it goes under, after every key of the suite's. */
#define SPILL_BYTES ((size_t)256 << 20)
static const unsigned char SPILL_KEY[KEY] = "S000000000000000";

/* GROW's first map (mod.rs's GROW_FROM): 256 KiB, doubled as the fill needs. */
#define GROW_FROM (256u << 10)

/* One mdb_put or mdb_del of operation i in txn. */
static int plain_op(struct env *e, MDB_txn *txn, const struct ops *o, size_t i, const struct write *w, int del,
                    const char **call) {
    MDB_val k, v;
    ops_get(o, i, &k, &v);
    if (del) { *call = "mdb_del"; return mdb_del(txn, e->dbi, &k, v.mv_size ? &v : NULL); }
    if (w->flags & MDB_RESERVE) {
        MDB_val room = {v.mv_size, NULL};
        int rc;
        *call = "mdb_put(MDB_RESERVE)";
        if ((rc = mdb_put(txn, e->dbi, &k, &room, w->flags))) return rc;
        memcpy(room.mv_data, v.mv_data, v.mv_size);
        return 0;
    }
    *call = "mdb_put";
    int rc = mdb_put(txn, e->dbi, &k, &v, w->flags);
    /* pass.rs's refused_as_asked: the data is there already, so LMDB must refuse it. */
    if (!(w->flags & (MDB_NOOVERWRITE | MDB_NODUPDATA))) return rc;
    if (!rc) *call = "mdb_put(stored what it had to refuse)";
    return rc == MDB_KEYEXIST ? 0 : rc ? rc : MDB_CORRUPTED;
}

/* plain_op in a child of txn, committed (abort: aborted). */
static int in_child(struct env *e, MDB_txn *txn, const struct ops *o, size_t i, const struct write *w, int del,
                    int abort, const char **call) {
    MDB_txn *child;
    int rc;
    *call = "mdb_txn_begin(child)";
    if ((rc = mdb_txn_begin(e->env, txn, e->txn_flags, &child))) return rc;
    rc = plain_op(e, child, o, i, w, del, call);
    if (rc || abort) { mdb_txn_abort(child); return rc; }
    *call = "mdb_txn_commit(child)";
    return mdb_txn_commit(child);
}

/* plain_op as pass.rs's write_one: the cursor first put on the key (tracked), the
 * operation in a child transaction (nested), every tenth first in one aborted. */
static int write_one(struct env *e, MDB_txn *txn, MDB_cursor *cur, const struct ops *o, size_t i,
                     const struct write *w, int del, const char **call) {
    int rc;
    if (w->tracked) {
        MDB_val k, v;
        ops_get(o, i, &k, &v);
        *call = "mdb_cursor_get(MDB_SET_RANGE)";
        if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE)) && rc != MDB_NOTFOUND) return rc;
    }
    if (!w->nested) return plain_op(e, txn, o, i, w, del, call);
    if (i % 10 == 0 && (rc = in_child(e, txn, o, i, w, del, 1, call))) return rc;
    return in_child(e, txn, o, i, w, del, 0, call);
}

/* One put or delete of operation i, through the cursor or not. */
static int one_op(struct env *e, MDB_txn *txn, MDB_cursor *cur, const struct ops *o, size_t i, const struct write *w,
                  int del, const char **call) {
    MDB_val k, v, found;
    int rc;
    if (!w->cursor) return write_one(e, txn, cur, o, i, w, del, call);
    ops_get(o, i, &k, &v);
    if (del && v.mv_size) {
        *call = "mdb_cursor_get(MDB_GET_BOTH)";
        if ((rc = mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH))) return rc;
    } else if (!del && (w->flags & MDB_CURRENT) && w->dupsort) {
        found = v;
        *call = "mdb_cursor_get(MDB_GET_BOTH)";
        if ((rc = mdb_cursor_get(cur, &k, &found, MDB_GET_BOTH))) return rc;
    } else if (del || (w->flags & MDB_CURRENT)) {
        *call = "mdb_cursor_get(MDB_SET_KEY)";
        if ((rc = mdb_cursor_get(cur, &k, &found, MDB_SET_KEY))) return rc;
    }
    if (del) { *call = "mdb_cursor_del"; return mdb_cursor_del(cur, 0); }
    /* Its own key again: MDB_SET_KEY pointed k into the page, which a resize moves. */
    ops_get(o, i, &k, &v);
    *call = "mdb_cursor_put";
    return mdb_cursor_put(cur, &k, &v, w->flags);
}

/* Doubles the map of e, which has no transaction active (pass.rs's double_map). */
static int double_map(struct env *e, const char **call) {
    MDB_envinfo info;
    int rc;
    *call = "mdb_env_info";
    if ((rc = mdb_env_info(e->env, &info))) return rc;
    *call = "mdb_env_set_mapsize";
    return mdb_env_set_mapsize(e->env, info.me_mapsize * 2);
}

/* Operations [from, to) in txn, through one cursor opened on it (pass.rs's ops_in). */
static int ops_in(struct env *e, MDB_txn *txn, const struct ops *o, size_t from, size_t to, const struct write *w,
                  int del, const char **call) {
    MDB_cursor *cur;
    int rc;
    *call = "mdb_cursor_open";
    if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) return rc;
    for (size_t i = from; !rc && i < to; i++) rc = one_op(e, txn, cur, o, i, w, del, call);
    mdb_cursor_close(cur);
    return rc;
}

/* pass.rs's spill: in a child of txn, operations [from, to) again, the reserved value that
 * makes LMDB spill, the operations once more, and the child aborted. */
static int spill(struct env *e, MDB_txn *txn, const struct ops *o, size_t from, size_t to, const struct write *w,
                 int del, const char **call) {
    MDB_txn *child;
    MDB_val k = {KEY, (void *)SPILL_KEY}, room = {SPILL_BYTES, NULL};
    int rc;
    *call = "mdb_txn_begin(child)";
    if ((rc = mdb_txn_begin(e->env, txn, e->txn_flags, &child))) return rc;
    if (!(rc = ops_in(e, child, o, from, to, w, del, call))) {
        *call = "mdb_put(MDB_RESERVE, spill)";
        if (!(rc = mdb_put(child, e->dbi, &k, &room, MDB_RESERVE))) rc = ops_in(e, child, o, from, to, w, del, call);
    }
    mdb_txn_abort(child);
    return rc;
}

/* ---- each commit's time (commits.rs): the clock read around mdb_txn_commit in a pass
 * that times them (a --sync run, not under valgrind), into room made before the pass ---- */

static uint64_t *commit_times;
static size_t commit_room, commit_n;

/* mdb_txn_commit, its time kept when a pass is armed and has room. */
static int commit_clocked(MDB_txn *txn) {
    if (commit_n >= commit_room) return mdb_txn_commit(txn);
    uint64_t t0 = now_ns();
    int rc = mdb_txn_commit(txn);
    commit_times[commit_n++] = now_ns() - t0;
    return rc;
}

/* commits.rs's settle: what dir's file system holds unwritten written back (syncfs),
 * untimed, before the process's first pass whose commits are timed (once a process: its
 * reasons are there). 0, or errno. */
static int settle(const char *dir) {
    static int settled;
    if (settled) return 0;
    settled = 1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = fd < 0 || syncfs(fd) ? errno : 0;
    if (fd >= 0) close(fd);
    return rc;
}

/* Times the next pass's commits: room for `room` of them (any beyond are not timed). */
static void commits_arm(size_t room) {
    commit_times = xmalloc(room * sizeof *commit_times);
    commit_room = room;
    commit_n = 0;
}

/* commits.rs's histogram: nanoseconds to two significant digits, up to 60 s, each value
 * counted at the highest of its bucket (hdrhistogram's value_iterated_to: 256 sub-buckets,
 * bucket b of width 2^b). */
#define COMMIT_CEILING_NS 60000000000ull
static uint64_t commit_bucket(uint64_t ns) {
    ns = ns < 1 ? 1 : ns > COMMIT_CEILING_NS ? COMMIT_CEILING_NS : ns;
    int b = 56 - __builtin_clzll(ns | 255);
    return ((ns >> b) << b) + ((1ull << b) - 1);
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The armed pass's commits in f: in the order made, and as the histogram's recorded buckets,
 * ascending (commits.rs's take and buckets), disarmed; none when none were timed. */
static void commits_take(struct figures *f) {
    f->commit_ns = NULL;
    f->ncommit = 0;
    f->commit_order_ns = NULL;
    f->ncommit_order = commit_n;
    if (commit_n) {
        f->commit_order_ns = xmalloc(commit_n * sizeof *f->commit_order_ns);
        memcpy(f->commit_order_ns, commit_times, commit_n * sizeof *commit_times);
        qsort(commit_times, commit_n, sizeof *commit_times, by_value);
        f->commit_ns = xmalloc(commit_n * sizeof *f->commit_ns);
    }
    for (size_t i = 0; i < commit_n; i++) {
        uint64_t v = commit_bucket(commit_times[i]);
        if (f->ncommit && f->commit_ns[f->ncommit - 1][0] == v) {
            f->commit_ns[f->ncommit - 1][1]++;
        } else {
            f->commit_ns[f->ncommit][0] = v;
            f->commit_ns[f->ncommit++][1] = 1;
        }
    }
    free(commit_times);
    commit_times = NULL;
    commit_room = commit_n = 0;
}

/* Every operation in transactions of w->batch (0: one for all); with w->grow, a batch that
 * fills the map is aborted, the map doubled and the batch run again; with w->child_open
 * the operations go in a child left open, and every tenth batch is first aborted so. */
static int batched(struct env *e, const struct ops *o, const struct write *w, int del, const char **call) {
    size_t per = w->batch ? w->batch : (o->n ? o->n : 1), i = 0;
    int aborted = 0;
    while (i < o->n) {
        MDB_txn *txn, *work;
        size_t start = i;
        int rc;
        *call = "mdb_txn_begin";
        if ((rc = mdb_txn_begin(e->env, NULL, e->txn_flags, &txn))) return rc;
        work = txn;
        *call = "mdb_txn_begin(child)";
        if (w->child_open && (rc = mdb_txn_begin(e->env, txn, e->txn_flags, &work))) { mdb_txn_abort(txn); return rc; }
        size_t end = i + per < o->n ? i + per : o->n;
        rc = ops_in(e, work, o, start, end, w, del, call);
        if (!rc && w->spill) rc = spill(e, txn, o, start, end, w, del, call);
        i = end;
        if (!rc && w->child_open && !aborted && (start / per) % 10 == 0) {
            mdb_txn_abort(txn);
            aborted = 1;
            i = start;
            continue;
        }
        aborted = 0;
        if (rc) mdb_txn_abort(txn);
        else if ((rc = commit_clocked(txn))) *call = "mdb_txn_commit";
        if (rc == MDB_MAP_FULL && w->grow) {
            if ((rc = double_map(e, call))) return rc;
            i = start;
        } else if (rc) return rc;
    }
    return 0;
}

__attribute__((noinline)) int timed_lmdb_put(struct env *e, const struct ops *o, const struct write *w, const char **call) {
    return batched(e, o, w, 0, call);
}

__attribute__((noinline)) int timed_lmdb_delete(struct env *e, const struct ops *o, const struct write *w, const char **call) {
    return batched(e, o, w, 1, call);
}

static void add_dup(uint64_t *entries, uint64_t *sum, const unsigned char *d) { ++*entries; *sum += head(d, 8); }

/* declared.rs's DupWalk. */
enum dup_walk { FORWARD, BACKWARD, MULTIPLE, MULTIPLE_BACK, COUNTED, RANGED, SCAN_FORWARD, SCAN_BACKWARD, NODUP_FORWARD,
                NODUP_BACKWARD };

/* `step` until MDB_NOTFOUND, every duplicate (or page of them) it returns summed. */
static int steps(MDB_cursor *cur, MDB_val *k, MDB_cursor_op step, uint64_t *entries, uint64_t *sum, const char **call) {
    MDB_val v = {0, NULL};
    int rc;
    while (!(rc = mdb_cursor_get(cur, k, &v, step)))
        for (size_t at = 0; at + 8 <= v.mv_size; at += 8) add_dup(entries, sum, (unsigned char *)v.mv_data + at);
    *call = "mdb_cursor_get";
    return rc == MDB_NOTFOUND ? 0 : rc;
}

#if MDB_VERSION_FULL >= MDB_VERINT(0, 9, 19)
#define PREV_MULTIPLE MDB_PREV_MULTIPLE
#else
#define PREV_MULTIPLE 18 /* not this LMDB's: the runner asks MULTIPLE_BACK of 0.9.19 on only */
#endif

/* The whole database by `step` from the unpositioned cursor, then one step past the end. */
static int whole(MDB_cursor *cur, MDB_cursor_op step, uint64_t *entries, uint64_t *sum, const char **call) {
    MDB_val k = {0, NULL}, v = {0, NULL};
    int rc = steps(cur, &k, step, entries, sum, call);
    if (rc) return rc;
    *call = "mdb_cursor_get(past the end)";
    rc = mdb_cursor_get(cur, &k, &v, step);
    return rc == MDB_NOTFOUND ? 0 : rc ? rc : MDB_CORRUPTED;
}

static int dups_of(MDB_cursor *cur, MDB_val *k, MDB_val *probe, enum dup_walk walk, uint64_t *entries, uint64_t *sum,
                   const char **call) {
    MDB_val v = *probe;
    size_t n;
    int rc;
    MDB_cursor_op at = walk == RANGED ? MDB_GET_BOTH_RANGE : MDB_SET_KEY;
    *call = walk == RANGED ? "mdb_cursor_get(MDB_GET_BOTH_RANGE)" : "mdb_cursor_get(MDB_SET_KEY)";
    if ((rc = mdb_cursor_get(cur, k, &v, at))) return rc;
    if (walk == COUNTED) {
        *call = "mdb_cursor_count";
        if ((rc = mdb_cursor_count(cur, &n))) return rc;
        ++*entries;
        *sum += n;
        return 0;
    }
    int multiple = walk == MULTIPLE || walk == MULTIPLE_BACK;
    MDB_cursor_op first = multiple ? MDB_GET_MULTIPLE : walk == BACKWARD ? MDB_LAST_DUP : MDB_NEXT_DUP;
    MDB_cursor_op step = multiple ? MDB_NEXT_MULTIPLE : walk == BACKWARD ? MDB_PREV_DUP : MDB_NEXT_DUP;
    if (walk == FORWARD || walk == RANGED) add_dup(entries, sum, v.mv_data);
    for (rc = mdb_cursor_get(cur, k, &v, first); !rc; rc = mdb_cursor_get(cur, k, &v, step))
        for (size_t at = 0; at + 8 <= v.mv_size; at += 8) add_dup(entries, sum, (unsigned char *)v.mv_data + at);
    *call = "mdb_cursor_get";
    if (rc == MDB_NOTFOUND && walk == MULTIPLE_BACK) return steps(cur, k, PREV_MULTIPLE, entries, sum, call);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

__attribute__((noinline)) int timed_lmdb_dup_read(struct env *e, const struct ops *o, enum dup_walk walk, uint64_t *entries,
                                                  uint64_t *sum, const char **call) {
    static const MDB_cursor_op whole_step[] = {MDB_NEXT, MDB_PREV, MDB_NEXT_NODUP, MDB_PREV_NODUP};
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v, none = {0, NULL};
    int rc = begin_cursor(e, MDB_RDONLY, &txn, &cur, call);
    if (rc) return rc;
    if (walk >= SCAN_FORWARD) return end_cursor(txn, cur, 0, whole(cur, whole_step[walk - SCAN_FORWARD], entries, sum, call), call);
    if (walk == MULTIPLE_BACK) rc = steps(cur, &none, PREV_MULTIPLE, entries, sum, call);
    for (size_t i = 0; i < o->n && !rc; i++) {
        ops_get(o, i, &k, &v);
        rc = dups_of(cur, &k, &v, walk, entries, sum, call);
    }
    return end_cursor(txn, cur, 0, rc, call);
}

__attribute__((noinline)) int timed_lmdb_renew(struct env *e, MDB_txn *txn, const struct ops *o, uint64_t *entries,
                                               uint64_t *sum, const char **call) {
    MDB_val k, v;
    for (size_t i = 0; i < o->n; i++) {
        int rc;
        *call = "mdb_txn_renew";
        if ((rc = mdb_txn_renew(txn))) return rc;
        ops_get(o, i, &k, &v);
        rc = mdb_get(txn, e->dbi, &k, &v);
        if (!rc) { ++*entries; *sum += head(v.mv_data, v.mv_size); }
        mdb_txn_reset(txn);
        *call = "mdb_get";
        if (rc) return rc;
    }
    return 0;
}

__attribute__((noinline)) int timed_lmdb_copy(struct env *e, const char *to, unsigned flags, const char **call) {
    *call = "mdb_env_copy2";
    return mdb_env_copy2(e->env, to, flags);
}

/* mdb_drop of the database in one transaction; with `named`, del 1, then the named
 * database "db" created again on the handle it had (pass.rs's). */
__attribute__((noinline)) int timed_lmdb_drop(struct env *e, int named, const char **call) {
    MDB_txn *txn;
    MDB_dbi dbi;
    int rc;
    *call = "mdb_txn_begin";
    if ((rc = mdb_txn_begin(e->env, NULL, e->txn_flags, &txn))) return rc;
    *call = "mdb_drop";
    if ((rc = mdb_drop(txn, e->dbi, named))) { mdb_txn_abort(txn); return rc; }
    *call = "mdb_dbi_open(after mdb_drop)";
    if (named && !(rc = mdb_dbi_open(txn, "db", MDB_CREATE, &dbi)) && dbi != e->dbi) {
        *call = "mdb_dbi_open(after mdb_drop): another handle";
        rc = MDB_BAD_DBI;
    }
    if (rc) { mdb_txn_abort(txn); return rc; }
    *call = "mdb_txn_commit";
    return mdb_txn_commit(txn);
}

/* READERS (readers.rs): processes that die holding a reader slot. */
#define STALE 8

static int count_line(const char *msg, void *ctx) { (void)msg; ++*(unsigned *)ctx; return 0; }

/* mdb_reader_check allocates its list of pids inside the timed call, and malloc's path for
 * it depends on the heap the process has made so far: a block of that size freed just
 * before, untimed, gives it the same path every time (readers.rs, prime_pid_list). */
static void prime_pid_list(struct env *e) {
    MDB_envinfo info;
    if (mdb_env_info(e->env, &info)) return;
    void *volatile block = malloc((info.me_numreaders + 1) * sizeof(pid_t));
    free(block);
}

/* mdb_reader_list (each line counted), mdb_reader_check, which must clear `stale` slots,
 * then mdb_env_stat, mdb_env_info and a forced mdb_env_sync. */
__attribute__((noinline)) int timed_lmdb_readers(struct env *e, unsigned stale, const char **call) {
    unsigned lines = 0;
    int dead = 0, rc;
    MDB_stat st;
    MDB_envinfo info;
    *call = "mdb_reader_list";
    if ((rc = mdb_reader_list(e->env, count_line, &lines))) return rc;
    *call = "mdb_reader_check";
    if ((rc = mdb_reader_check(e->env, &dead))) return rc;
    *call = "mdb_reader_check(stale slots)";
    if (lines != stale + 1 || dead != (int)stale) return MDB_CORRUPTED;
    *call = "mdb_env_stat";
    if ((rc = mdb_env_stat(e->env, &st))) return rc;
    *call = "mdb_env_info";
    if ((rc = mdb_env_info(e->env, &info))) return rc;
    *call = "mdb_env_sync";
    return mdb_env_sync(e->env, 1);
}

/* LMDB 1.0's incremental backup: the pages e changed after transaction `since` dumped
 * (mdb_env_incr_dump) to `dump`, then loaded into `backup` (mdb_env_incr_loadfd). */
__attribute__((noinline)) int timed_lmdb_incremental(struct env *e, struct env *backup, const char *dump, size_t since,
                                                     const char **call) {
#if MDB_VERSION_MAJOR >= 1
    int rc, fd;
    *call = "mdb_env_incr_dump";
    if ((rc = mdb_env_incr_dump(e->env, dump, since))) return rc;
    *call = "open(incremental dump)";
    if ((fd = open(dump, O_RDONLY)) < 0) return errno;
    *call = "mdb_env_incr_loadfd";
    rc = mdb_env_incr_loadfd(backup->env, fd);
    close(fd);
    return rc;
#else
    (void)e; (void)backup; (void)dump; (void)since;
    *call = "mdb_env_incr_dump: an LMDB 1.0 call, and this LMDB is older";
    return ENOSYS;
#endif
}

/* ---- one workload (mod.rs) ---- */

/* ---- LMDB 1.0's options (mod.rs's Lmdb10; the runner asks them of 1.0 units only) ---- */

#if MDB_VERSION_MAJOR >= 1
#define PAGE_SIZE_1_0 16384
static const unsigned char CIPHER_KEY[16] = "lmdb-regress-key";

/* A page's checksum: FNV-1a over its bytes, 8 bytes little-endian (lmdb.rs's page_checksum). */
static void page_checksum(const MDB_val *src, MDB_val *dst, const MDB_val *key) {
    uint64_t h = 0xcbf29ce484222325ull;
    (void)key;
    for (size_t i = 0; i < src->mv_size; i++) h = (h ^ ((const unsigned char *)src->mv_data)[i]) * 0x100000001b3ull;
    memcpy(dst->mv_data, &h, dst->mv_size < 8 ? dst->mv_size : 8);
}

/* Each byte XORed with key[0]'s (lmdb.rs's page_cipher): LMDB's encryption paths run. */
static int page_cipher(const MDB_val *src, MDB_val *dst, const MDB_val *key, int encdec) {
    const unsigned char *f = src->mv_data, *k = key[0].mv_data;
    unsigned char *t = dst->mv_data;
    (void)encdec;
    for (size_t i = 0; i < dst->mv_size; i++) t[i] = f[i] ^ k[i % key[0].mv_size];
    return 0;
}
#endif

/* The options of the row open_for opens: set_1_0's argument, as env_open_set's hook takes none. */
static unsigned options_of_open;

static int set_1_0(MDB_env *env, const char **call) {
#if MDB_VERSION_MAJOR >= 1
    int rc = 0;
    MDB_val key = {sizeof CIPHER_KEY, (void *)CIPHER_KEY};
    if ((options_of_open & PAGESIZE) && (rc = mdb_env_set_pagesize(env, PAGE_SIZE_1_0))) *call = "mdb_env_set_pagesize";
    else if ((options_of_open & CHECKSUM) && (rc = mdb_env_set_checksum(env, page_checksum, 8))) *call = "mdb_env_set_checksum";
    else if ((options_of_open & ENCRYPT) && (rc = mdb_env_set_encrypt(env, page_cipher, &key, 0))) *call = "mdb_env_set_encrypt";
    return rc;
#else
    (void)env;
    *call = "an LMDB 1.0 option, and this LMDB is older";
    return options_of_open & (PAGESIZE | CHECKSUM | ENCRYPT | REMAP) ? EINVAL : 0;
#endif
}

static int open_with(const struct row *r, const char *dir, unsigned more, struct env *e, const char **call) {
    /* mod.rs's env_options: spilling is what LMDB does without MDB_WRITEMAP. */
    unsigned flags = env_flags((P.writemap || (r->options & WRITEMAP)) && !(r->options & SPILL), P.sync, P.nordahead) | more;
    unsigned db = (r->shape == DUPFILL || r->shape == DUPREAD || r->shape == DUPDELETE) ? MDB_DUPSORT | (r->options & DUPFIXED ? MDB_DUPFIXED : 0) : 0;
#if MDB_VERSION_MAJOR >= 1
    if (r->options & REMAP) flags |= MDB_REMAP_CHUNKS;
#endif
    options_of_open = r->options;
    int named = !db && (r->options & NAMED);
    if (r->options & REVERSEKEY) db |= MDB_REVERSEKEY;
    uint64_t map = r->options & GROW ? GROW_FROM : r->options & SPILL ? P.map_size + 2 * (uint64_t)SPILL_BYTES : P.map_size;
    return env_open_set(dir, map, flags, txn_flags(P.sync), named, db, set_1_0, e, call);
}

static int open_for(const struct row *r, const char *dir, struct env *e, const char **call) {
    return open_with(r, dir, 0, e, call);
}

/* INCREMENTAL's untimed start (mod.rs's backup): a backup as of the last transaction, then
 * the changes; the backup opened with MDB_WRITEMAP, and the transaction it holds. */
static int backup_of(const struct row *r, struct env *e, const struct plan *p, const char *to, struct env *backup,
                     size_t *since, const char **call) {
    MDB_envinfo info;
    struct write w = {r->batch, 0, 0, 0, 0};
    int rc;
    *call = "mdb_env_info";
    if ((rc = mdb_env_info(e->env, &info))) return rc;
    *since = info.me_last_txnid;
    *call = "mdb_env_copy2";
    if ((rc = mdb_env_copy2(e->env, to, 0))) return rc;
    if ((rc = batched(e, &p->timed, &w, 0, call))) return rc;
    if ((rc = open_with(r, to, MDB_WRITEMAP, backup, call))) backup->env = NULL;
    return rc;
}

static void run_alone(void (*work)(void *), void *arg);

static void take_arena(void *unused) {
    (void)unused;
    void *volatile taken = malloc(8); /* volatile: the compiler keeps the allocation */
    free(taken);
}

/* READERS' untimed start (readers.rs): STALE child processes each open the environment at
 * dir, begin a read transaction and exit holding it; then a thread does so, and LMDB's
 * thread-exit destructor frees its slot. */
static void *begin_read(void *env) {
    MDB_txn *txn = NULL;
    return mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) ? NULL : txn;
}

static int leave_readers(const struct row *r, const char *dir, struct env *e, const char **call) {
    for (unsigned i = 0; i < STALE; i++) {
        pid_t child = fork();
        int status;
        *call = "fork";
        if (child < 0) return errno;
        if (child == 0) {
            struct env c;
            MDB_txn *txn;
            const char *ignored;
            _exit(open_for(r, dir, &c, &ignored) || mdb_txn_begin(c.env, NULL, MDB_RDONLY, &txn));
        }
        *call = "a process meant to hold a reader slot";
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) return ECHILD;
    }
    pthread_t t;
    void *txn = NULL;
    *call = "mdb_txn_begin(in a thread)";
    if (pthread_create(&t, NULL, begin_read, e->env) || pthread_join(t, &txn) || !txn) return EINVAL;
    mdb_txn_abort(txn);
    /* readers.rs: the ended thread's malloc arena, which glibc hands to the next new thread
     * (the next row's), is taken by one that waits: each row starts on a fresh one. */
    if (UNDER_VALGRIND) run_alone(take_arena, NULL);
    return 0;
}

static enum dup_walk dup_walk_of(const struct row *r) {
    int reverse = (r->options & REVERSE) != 0;
    if (r->options & COUNT) return COUNTED;
    if (r->options & DUPFIXED) return reverse ? MULTIPLE_BACK : MULTIPLE;
    if (r->options & SCAN) return reverse ? SCAN_BACKWARD : SCAN_FORWARD;
    if (r->options & NODUP) return reverse ? NODUP_BACKWARD : NODUP_FORWARD;
    if (r->options & RANGE) return RANGED;
    return reverse ? BACKWARD : FORWARD;
}

static struct write write_of(const struct row *r) {
    struct write w = {r->batch, (r->options & CURSOR) != 0, 0, (r->options & NESTED) != 0, (r->options & TRACKED) != 0,
                      (r->options & GROW) != 0, r->shape == DUPFILL, (r->options & CHILDOPEN) != 0,
                      (r->options & SPILL) != 0};
    if (r->options & APPEND) w.flags = MDB_APPEND;
    else if (r->options & NOOVERWRITE) w.flags = r->shape == DUPFILL ? MDB_NODUPDATA : MDB_NOOVERWRITE;
    else if (w.cursor && (r->shape == OVERWRITE || r->shape == DUPFILL)) w.flags = MDB_CURRENT;
    else if (r->options & RESERVE) w.flags = MDB_RESERVE;
    return w;
}

/* The timed region of one pass; a read's checksum in *entries and *sum (*read set). */
/* Where a pass's copies go (mod.rs's Places): COPY's and INCREMENTAL's folder,
 * INCREMENTAL's dump file and its open backup with the transaction it holds. */
struct places { const char *copy, *dump; struct env *backup; size_t since; };

static int timed_pass(const struct row *r, struct env *e, const struct plan *p, const struct places *at, uint64_t *ns,
                      uint64_t *entries, uint64_t *sum, int *read, const char **call) {
    MDB_txn *reader = NULL, *renew = NULL;
    struct write w = write_of(r);
    int rc = 0;
    *call = "mdb_txn_begin";
    if ((r->options & READER) && (rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &reader))) return rc;
    if (r->shape == RENEW && !(rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &renew))) mdb_txn_reset(renew);
    if (rc) return rc;
    *read = r->shape == DUPREAD || r->shape == RENEW;
    if (r->shape == READERS) prime_pid_list(e);
    uint64_t t0 = now_ns();
    switch (r->shape) {
    case FILL: case OVERWRITE: case FRAGMENT: case DUPFILL: rc = timed_lmdb_put(e, &p->timed, &w, call); break;
    case DELETE: case DUPDELETE: rc = timed_lmdb_delete(e, &p->timed, &w, call); break;
    case DUPREAD: rc = timed_lmdb_dup_read(e, &p->timed, dup_walk_of(r), entries, sum, call); break;
    case RENEW: rc = timed_lmdb_renew(e, renew, &p->timed, entries, sum, call); break;
    case COPY: rc = timed_lmdb_copy(e, at->copy, r->options & COMPACT ? MDB_CP_COMPACT : 0, call); break;
    case DROP: rc = timed_lmdb_drop(e, (r->options & NAMED) != 0, call); break;
    case INCREMENTAL: rc = timed_lmdb_incremental(e, at->backup, at->dump, at->since, call); break;
    case READERS: rc = timed_lmdb_readers(e, STALE, call); break;
    }
    *ns = now_ns() - t0;
    if (reader) mdb_txn_abort(reader);
    if (renew) mdb_txn_abort(renew);
    return rc;
}

static int setup(struct env *e, const struct plan *p, const char **call) {
    struct write puts = {0, 0, 0, 0, 0}, deletes = {SETUP_BATCH, 0, 0, 0, 0};
    int rc = batched(e, &p->setup_puts, &puts, 0, call);
    return rc ? rc : batched(e, &p->setup_deletes, &deletes, 1, call);
}

/* One pass on a fresh environment: its time, checksum, figures and space. */
static unsigned row_passes(const struct row *r, const struct settings *s);

static int one_pass(struct result *res, const struct row *r, const struct plan *p, const char *scratch) {
    char dir[4096], copy[4096], dump[4200];
    struct env e, backup = {NULL, 0};
    struct places places = {copy, dump, &backup, 0};
    const char *call = "";
    uint64_t ns = 0, entries = 0, digest = 0;
    int read = 0, rc;
    struct space space;
    struct io io = {0, 0, 0};
    struct figures timed_commits = no_figures(0);
    snprintf(dir, sizeof dir, "%s/clmdb-XXXXXX", scratch);
    snprintf(copy, sizeof copy, "%s/clmdb-copy-XXXXXX", scratch);
    if (!mkdtemp(dir) || !mkdtemp(copy)) return print_error(res->workload, "mkdtemp failed", 0);
    snprintf(dump, sizeof dump, "%s.incremental", dir);
    int copied = r->shape == COPY || r->shape == INCREMENTAL;
    const char *at = copied ? copy : dir;
    io_forget_descriptors();
    if (!(rc = open_for(r, dir, &e, &call))) {
        rc = setup(&e, p, &call);
        if (!rc && r->shape == READERS) rc = leave_readers(r, dir, &e, &call);
        if (!rc && r->shape == INCREMENTAL) rc = backup_of(r, &e, p, copy, &backup, &places.since, &call);
        MDB_envinfo before, after;
        io_learn_descriptors();
        /* mod.rs's passes: a run that asks how commits are made durable times each, where
         * no instruction is counted (the clock's own would be). */
        if (!rc && P.have_sync && !UNDER_VALGRIND && (rc = settle(dir))) call = "syncfs";
        if (P.have_sync && !UNDER_VALGRIND) commits_arm((p->timed.n > p->setup_puts.n ? p->timed.n : p->setup_puts.n) + 1);
        struct io_mark mark = io_now();
        if (!rc) rc = mdb_env_info(e.env, &before);
        if (!rc) rc = timed_pass(r, &e, p, &places, &ns, &entries, &digest, &read, &call);
        struct io_mark done = io_now();
        commits_take(&timed_commits);
        /* mod.rs's passes: the order only where the row repeats its pass (its reasons are there). */
        if (row_passes(r, &P) == 1) {
            free(timed_commits.commit_order_ns);
            timed_commits.commit_order_ns = NULL;
            timed_commits.ncommit_order = 0;
        }
        if (!rc && !(rc = mdb_env_info(e.env, &after))) {
            io.syncs = done.syncs - mark.syncs;
            io.bytes = done.bytes - mark.bytes;
            io.commits = after.me_last_txnid - before.me_last_txnid;
        }
        if (backup.env) mdb_env_close(backup.env);
        if (!rc && copied) {
            /* mod.rs's copy_options: a COPY's copy is verified opened read-only. */
            mdb_env_close(e.env);
            rc = open_with(r, copy, r->shape == COPY ? MDB_RDONLY : 0, &e, &call);
            if (rc) e.env = NULL;
        }
        if (!rc && !read && (rc = walk_checksum(&e, &entries, &digest))) call = "mdb_cursor_get";
        if (!rc) rc = space_of(&TWIN_SPACE_CALLS, &e, at, &space, &call);
        if (e.env) mdb_env_close(e.env);
    }
    struct figures f = no_figures(p->timed.n ? p->timed.n : p->setup_puts.n - p->setup_deletes.n);
    f.db_bytes = size_on_disk(at);
    f.commit_ns = timed_commits.commit_ns;
    f.ncommit = timed_commits.ncommit;
    f.commit_order_ns = timed_commits.commit_order_ns;
    f.ncommit_order = timed_commits.ncommit_order;
    remove_env_dir(dir);
    remove_env_dir(copy);
    unlink(dump);
    if (rc) {
        free(f.commit_ns);
        free(f.commit_order_ns);
        return print_error(res->workload, call, rc);
    }
    if (result_push(res, ns, entries, digest, f)) return 1;
    res->space[res->n - 1] = space;
    res->has_space = 1;
    /* A pass that committed nothing (a read) has no I/O per commit. */
    res->io[res->n - 1] = io;
    res->has_io = io.commits > 0;
    return 0;
}

static const struct row *row_named(const char *name) {
    for (size_t i = 0; i < NROWS; i++)
        if (!strcmp(ROWS[i].name, name)) return &ROWS[i];
    return NULL;
}

/* declared.rs's FEW_COMMITS and MOST_PASSES: a commit-timed pass of fewer commits than
 * the first is made the second's times an iteration (their reasons are there). */
enum { FEW_COMMITS = 100, MOST_PASSES = 5 };

/* declared.rs's commits_a_pass: about how many commits a timed pass makes; 0 for a row
 * whose timed pass commits nothing. */
static uint32_t commits_a_pass(const struct row *r, uint32_t entries) {
    uint32_t touched = entries / r->share ? entries / r->share : 1;
    switch (r->shape) {
    case DUPREAD: case RENEW: case COPY: case READERS: return 0;
    case DROP: case INCREMENTAL: return 1;
    default: return r->batch ? (touched + r->batch - 1) / r->batch : 1;
    }
}

/* declared.rs's passes: the passes one iteration of row r makes. */
static unsigned row_passes(const struct row *r, const struct settings *s) {
    uint32_t commits = commits_a_pass(r, s->entries);
    int timed = s->have_sync && !UNDER_VALGRIND;
    return timed && commits && commits < FEW_COMMITS ? MOST_PASSES : 1;
}

/* One row: its passes, its line, and under callgrind the end of its profile part. */
static void run_row(const char *name, const struct settings *s) {
    const struct row *r = row_named(name);
    struct value_pool v;
    struct plan p;
    struct result res;
    unsigned passes = s->iterations * row_passes(r, s);
    plan_make(&p, r, &v, s);
    result_init(&res, name, passes);
    int failed = 0;
    for (unsigned it = 0; it < passes && !failed; it++) failed = one_pass(&res, r, &p, s->scratch);
    if (!failed) result_print(&res);
    result_free(&res);
    plan_free(&p);
    free(v.pool);
}

/* profile_part.rs's alone: under valgrind each row runs on a thread of its own with a fresh
 * malloc arena (a thread that exits hands its arena on, so it waits instead), glibc's mmap
 * threshold held at its default, so what ran before a row cannot change what it counts. */
struct alone_call { void (*work)(void *); void *arg; sem_t done; };

static void *alone_thread(void *arg) {
    struct alone_call *c = arg;
    c->work(c->arg);
    sem_post(&c->done);
    for (;;) pause();
    return NULL;
}

static void run_alone(void (*work)(void *), void *arg) {
    static int malloc_set;
    if (!malloc_set) {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
        mallopt(M_ARENA_MAX, 4096);
        malloc_set = 1;
    }
    struct alone_call c = {.work = work, .arg = arg};
    pthread_attr_t attr;
    pthread_t t;
    sem_init(&c.done, 0, 0);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8 << 20);
    if (pthread_create(&t, &attr, alone_thread, &c)) work(arg);
    else
        while (sem_wait(&c.done)) {}
    pthread_attr_destroy(&attr);
}

struct row_call { const char *name; const struct settings *s; };

static void row_work(void *arg) {
    struct row_call *c = arg;
    run_row(c->name, c->s);
}

static void lmdb_run(const struct settings *s) {
    char *list = strdup(s->workloads), *save = NULL;
    P = *s;
    check_preset(&P, 0);
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        struct row_call c = {name, s};
        if (UNDER_VALGRIND) run_alone(row_work, &c);
        else run_row(name, s);
        /* mod.rs's run: the row's profile part ends here under callgrind, whatever its passes did. */
        PROFILE_PART_END(name);
    }
    free(list);
}

static int lmdb_prepare(const struct settings *s) {
    (void)s;
    fprintf(stderr, "lmdb's workloads read no prepared database: each pass makes its own\n");
    return 2;
}

/* Every row's name, comma-separated, as struct suite lists them. */
#define LMDB_WORKLOAD(name, title, shape, keys, value, batch, share, options, about) #name ","
const struct suite LMDB_SUITE = {
    "lmdb",
#include "lmdb_suite.def"
    , lmdb_prepare, NULL, lmdb_run,
};
#undef LMDB_WORKLOAD
