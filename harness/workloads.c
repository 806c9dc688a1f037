/*
 * lmdb-regress C twin: the six workloads of src/workload/native.rs in plain C, linked
 * statically with one tag's liblmdb. It takes the Rust worker's arguments and prints the
 * same JSON lines, so the runner treats both engines alike. The point: if Rust and C agree,
 * the harness adds nothing to what it measures.
 *
 *   lmdb-harness-c version
 *   lmdb-harness-c prepare --dir D [config]
 *   lmdb-harness-c verify --dir D --workloads LIST [config]
 *   lmdb-harness-c run --dir D --scratch S --workloads LIST --iterations K [config]
 *
 * config: --entries N --map-size M --writemap|--no-writemap [--sync[=nometasync|sync]] [--readahead=on|off]
 *         [--memory-limit=SIZE] (the runner's cgroup holds it; each read pass starts evicted)
 *         --value-size V
 *         --keys int|str16 --order seq|random --values fixed|random --seed S, and the
 *         presets' own (common.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libdeflate: a PCLMUL-accelerated CRC32 (IEEE), on par with crc32fast; zlib's is ~5x slower. */
#include <libdeflate.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common.h"
#include "dataset.h"
#include "iocount.h"
#include "lmdb.h"
#include "presets.h"

#define CONSUME(p) __asm__ volatile("" : : "g"(p) : "memory")

/* LmdbJava's environment: the database "db", MDB_INTEGERKEY for integer keys. */
static int lmdbjava_open(const struct settings *c, const char *dir, struct env *e, const char **call) {
    unsigned flags = env_flags(c->writemap, c->sync, c->nordahead);
    return env_open(dir, c->map_size, flags, txn_flags(c->sync), 1, c->str_keys ? 0 : MDB_INTEGERKEY, e, call);
}

/* ---- timed regions: the workload and nothing else (callgrind: --toggle-collect=timed_*) ---- */

__attribute__((noinline)) int timed_read_key(MDB_cursor *cur, const struct dataset *d, unsigned char *key,
                                             const char **call) {
    MDB_val k, v;
    for (size_t j = 0; j < d->n; j++) {
        fill_key(d, key, j);
        k.mv_size = d->ks; k.mv_data = key;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
        if (rc) { *call = "mdb_cursor_get(MDB_SET_KEY)"; return rc; }
        CONSUME(&v);
    }
    return 0;
}

static inline int cursor_walk(MDB_cursor *cur, MDB_cursor_op first, MDB_cursor_op step) {
    MDB_val k, v;
    int rc = mdb_cursor_get(cur, &k, &v, first);
    while (rc == 0) {
        CONSUME(&k); CONSUME(&v);
        rc = mdb_cursor_get(cur, &k, &v, step);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* One timed function per workload, so callgrind's profile parts name their workload. */
__attribute__((noinline)) int timed_read_seq(MDB_cursor *cur) { return cursor_walk(cur, MDB_FIRST, MDB_NEXT); }
__attribute__((noinline)) int timed_read_rev(MDB_cursor *cur) { return cursor_walk(cur, MDB_LAST, MDB_PREV); }

__attribute__((noinline)) int timed_read_crc(MDB_cursor *cur, uint64_t *out) {
    MDB_val k, v;
    uint32_t crc = 0;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    while (rc == 0) {
        crc = libdeflate_crc32(crc, k.mv_data, k.mv_size);
        crc = libdeflate_crc32(crc, v.mv_data, v.mv_size);
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    *out = crc;
    return rc == MDB_NOTFOUND ? 0 : rc;
}

__attribute__((noinline)) int timed_read_xxh64(MDB_cursor *cur, uint64_t *out) {
    MDB_val k, v;
    uint64_t sum = 0;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    while (rc == 0) {
        sum += XXH64(k.mv_data, k.mv_size, 0);
        sum += XXH64(v.mv_data, v.mv_size, 0);
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    *out = sum;
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Every entry in write order, built in one reused key and one reused value buffer. */
__attribute__((noinline)) int timed_write(struct env *e, const struct dataset *d, unsigned char *key,
                                          struct values *vals, unsigned flags, const char **call) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if ((rc = mdb_txn_begin(e->env, NULL, e->txn_flags, &txn))) { *call = "mdb_txn_begin"; return rc; }
    if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) { mdb_txn_abort(txn); *call = "mdb_cursor_open"; return rc; }
    for (size_t j = 0; j < d->n; j++) {
        fill_key(d, key, j);
        k.mv_size = d->ks; k.mv_data = key;
        v.mv_size = d->vs; v.mv_data = (void *)fill_value(d, vals, j);
        if ((rc = mdb_cursor_put(cur, &k, &v, flags))) {
            mdb_cursor_close(cur); mdb_txn_abort(txn); *call = "mdb_cursor_put"; return rc;
        }
    }
    mdb_cursor_close(cur);
    if ((rc = mdb_txn_commit(txn))) { *call = "mdb_txn_commit"; return rc; }
    return 0;
}

/* ---- untimed: verification, once per run and tag, and faulting pages in ---- */

static int verify_one(struct env *e, const char *w, const struct dataset *d, uint64_t *entries, uint64_t *digest) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) return rc;
    if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) { mdb_txn_abort(txn); return rc; }
    XXH64_state_t *xx = XXH64_createState();
    XXH64_reset(xx, 0);
    uint32_t crc = 0;
    uint64_t sum = 0, n = 0;
    if (!strcmp(w, "readKey")) {
        for (size_t j = 0; j < d->n; j++) {
            k.mv_size = d->ks; k.mv_data = (void *)key_bytes(d, j);
            if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY))) break;
            XXH64_update(xx, key_bytes(d, j), d->ks);
            XXH64_update(xx, v.mv_data, v.mv_size);
            n++;
        }
    } else {
        int rev = !strcmp(w, "readRev");
        rc = mdb_cursor_get(cur, &k, &v, rev ? MDB_LAST : MDB_FIRST);
        while (rc == 0) {
            XXH64_update(xx, k.mv_data, k.mv_size);
            XXH64_update(xx, v.mv_data, v.mv_size);
            crc = libdeflate_crc32(crc, k.mv_data, k.mv_size);
            crc = libdeflate_crc32(crc, v.mv_data, v.mv_size);
            sum += XXH64(k.mv_data, k.mv_size, 0) + XXH64(v.mv_data, v.mv_size, 0);
            n++;
            rc = mdb_cursor_get(cur, &k, &v, rev ? MDB_PREV : MDB_NEXT);
        }
        if (rc == MDB_NOTFOUND) rc = 0;
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    *entries = n;
    if (!strcmp(w, "readCrc")) *digest = crc;
    else if (!strcmp(w, "readXxh64")) *digest = sum;
    else *digest = XXH64_digest(xx);
    XXH64_freeState(xx);
    return rc;
}

/* One untimed walk, so timed passes take no page faults (as native::fault_in); not a
 * timed_ function, so callgrind does not count it. */
static int fault_in(struct env *e) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) return rc;
    if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) { mdb_txn_abort(txn); return rc; }
    rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    while (rc == 0) {
        /* one byte of every 4 KiB of each value: overflow pages are not touched by a walk */
        for (size_t i = 0; i < v.mv_size; i += 4096) (void)((const volatile unsigned char *)v.mv_data)[i];
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Under a memory limit, before each read pass (untimed), as session.rs's refill_reads: the
 * read database dropped from this process's map and from the page cache (pages cached by
 * another process would be read without being charged to this one's limit), then its pages
 * in use read through once (not the map's unused tail, which would push them out), so the
 * pass starts with as much of it cached as the limit holds. 0, or why not in `why`. */
static int refill_reads(struct env *e, const char *dir, char *why, size_t cap) {
    char file[4096];
    MDB_envinfo info;
    MDB_stat st;
    int rc;
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    const char *call = "mdb_env_info";
    if ((rc = mdb_env_info(e->env, &info)) || (call = "mdb_env_stat", rc = mdb_env_stat(e->env, &st))) {
        snprintf(why, cap, "%s: %s (%d)", call, mdb_strerror(rc), rc);
        return -1;
    }
    uint64_t used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
    const char *step = unmap_file_pages(file) ? "madvise(MADV_DONTNEED) on its map"
                     : evict_file(file)       ? "fsync and posix_fadvise(POSIX_FADV_DONTNEED)"
                     : warm_file_head(file, used) ? "reading it through" : NULL;
    if (step) snprintf(why, cap, "refilling %s under the memory limit: %s: %s", file, step, strerror(errno));
    return step ? -1 : 0;
}

static void print_samples(const char *w, const uint64_t *ns, const uint64_t *faults, const uint64_t *outputs,
                          const struct space *space, const struct io *io, unsigned n) {
    printf("{\"workload\":\"%s\",\"samples_ns\":", w);
    print_u64s(ns, n);
    printf(",\"major_faults\":");
    print_u64s(faults, n);
    if (outputs) {
        printf(",\"outputs\":");
        print_u64s(outputs, n);
    }
    if (space) print_space(space, n);
    if (io) print_io(io, n);
    printf("}\n");
    fflush(stdout);
}

static void run_read(struct env *e, const char *dir, int limited, const char *w, const struct dataset *d,
                     unsigned iterations) {
    uint64_t *ns = xmalloc(iterations * sizeof *ns), *outputs = xmalloc(iterations * sizeof *outputs);
    uint64_t *faults = xmalloc(iterations * sizeof *faults);
    unsigned char key[16];
    int with_output = !strcmp(w, "readCrc") || !strcmp(w, "readXxh64");
    for (unsigned it = 0; it < iterations; it++) {
        MDB_txn *txn;
        MDB_cursor *cur;
        const char *call = "mdb_cursor_get";
        int rc;
        char why[4400];
        if (limited && refill_reads(e, dir, why, sizeof why)) { print_error(w, why, 0); goto out; }
        if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) { print_error(w, "mdb_txn_begin", rc); goto out; }
        if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) { print_error(w, "mdb_cursor_open", rc); goto out; }
        uint64_t f0 = major_faults_now(), t0 = now_ns();
        if (!strcmp(w, "readKey")) rc = timed_read_key(cur, d, key, &call);
        else if (!strcmp(w, "readSeq")) rc = timed_read_seq(cur);
        else if (!strcmp(w, "readRev")) rc = timed_read_rev(cur);
        else if (!strcmp(w, "readCrc")) rc = timed_read_crc(cur, &outputs[it]);
        else rc = timed_read_xxh64(cur, &outputs[it]);
        ns[it] = now_ns() - t0;
        faults[it] = major_faults_now() - f0;
        mdb_cursor_close(cur);
        mdb_txn_abort(txn);
        if (rc) { print_error(w, call, rc); goto out; }
    }
    print_samples(w, ns, faults, with_output ? outputs : NULL, NULL, NULL, iterations);
out:
    free(ns);
    free(faults);
    free(outputs);
}

/* Writes every entry into the open env (untimed for prepare, timed by run_write). */
static int write_all(struct env *e, const struct settings *c, const struct dataset *d, const char **call) {
    unsigned char key[16];
    struct values vals = { xmalloc(d->vs), 0 };
    int rc = timed_write(e, d, key, &vals, c->random_order ? 0 : MDB_APPEND, call);
    free(vals.buf);
    return rc;
}

static void run_write(const struct settings *c, const char *scratch, const struct dataset *d, unsigned iterations) {
    uint64_t *ns = xmalloc(iterations * sizeof *ns), *faults = xmalloc(iterations * sizeof *faults);
    struct space *space = xmalloc(iterations * sizeof *space);
    struct io *io = xmalloc(iterations * sizeof *io);
    unsigned char key[16];
    struct values vals = { xmalloc(d->vs), 0 };
    for (unsigned it = 0; it < iterations; it++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/cwrite-XXXXXX", scratch);
        if (!mkdtemp(dir)) { printf("{\"workload\":\"write\",\"error\":\"mkdtemp: %s\"}\n", strerror(errno)); goto out; }
        struct env e;
        const char *call = "";
        io_forget_descriptors();
        int rc = lmdbjava_open(c, dir, &e, &call);
        if (rc) { print_error("write", call, rc); remove_env_dir(dir); goto out; }
        io_learn_descriptors();
        vals.pool_offset = 0;
        MDB_envinfo before, after;
        mdb_env_info(e.env, &before);
        uint64_t f0 = major_faults_now();
        struct io_mark mark = io_now();
        uint64_t t0 = now_ns();
        rc = timed_write(&e, d, key, &vals, c->random_order ? 0 : MDB_APPEND, &call);
        ns[it] = now_ns() - t0;
        struct io_mark done = io_now();
        faults[it] = major_faults_now() - f0;
        mdb_env_info(e.env, &after);
        io[it] = (struct io){done.syncs - mark.syncs, done.bytes - mark.bytes, after.me_last_txnid - before.me_last_txnid};
        if (!rc) rc = space_of(&TWIN_SPACE_CALLS, &e, dir, &space[it], &call);
        mdb_env_close(e.env);
        remove_env_dir(dir);
        if (rc) { print_error("write", call, rc); goto out; }
    }
    print_samples("write", ns, faults, NULL, space, io, iterations);
out:
    free(ns);
    free(faults);
    free(space);
    free(io);
    free(vals.buf);
}

static int open_or_report(const struct settings *c, const char *dir, const char *w, struct env *e) {
    const char *call = "";
    int rc = dir ? lmdbjava_open(c, dir, e, &call) : EINVAL;
    if (rc) print_error(w, dir ? call : "--dir missing", rc);
    return rc == 0;
}

static int prepare(const struct settings *c, const char *dir, const struct dataset *d) {
    if (!dir) { fprintf(stderr, "prepare needs --dir\n"); return 2; }
    struct env e;
    const char *call = "";
    int rc = lmdbjava_open(c, dir, &e, &call);
    if (!rc) {
        rc = write_all(&e, c, d, &call);
        mdb_env_close(e.env);
    }
    if (rc) print_error(NULL, call, rc);
    else printf("{\"prepared\":true}\n");
    return 0;
}

static void verify(const struct settings *c, const char *dir, const char *workloads, const struct dataset *d) {
    char *list = strdup(workloads), *save = NULL;
    struct env e;
    int have_env = 0;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!strcmp(w, "write")) continue;
        if (!have_env && !(have_env = open_or_report(c, dir, w, &e))) continue;
        uint64_t entries, digest;
        int rc = verify_one(&e, w, d, &entries, &digest);
        if (rc) { print_error(w, "mdb_cursor_get", rc); continue; }
        printf("{\"workload\":\"%s\",\"checksum\":{\"entries\":%" PRIu64 ",\"digest\":%" PRIu64 "}}\n", w, entries, digest);
        fflush(stdout);
    }
    if (have_env) mdb_env_close(e.env);
    free(list);
}

static void run(const struct settings *c, const char *dir, const char *scratch, const char *workloads,
                unsigned iterations, const struct dataset *d) {
    char *list = strdup(workloads), *save = NULL;
    struct env e;
    int have_env = 0;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!strcmp(w, "write")) { run_write(c, scratch, d, iterations); continue; }
        if (!have_env) {
            if (!(have_env = open_or_report(c, dir, w, &e))) continue;
            /* Under a memory limit each pass refills the cache itself (run_read). */
            int rc = c->limited ? 0 : fault_in(&e);
            if (rc) { print_error(w, "mdb_cursor_get", rc); mdb_env_close(e.env); have_env = 0; continue; }
        }
        run_read(&e, dir, c->limited, w, d, iterations);
    }
    if (have_env) mdb_env_close(e.env);
    free(list);
}

/* ---- LmdbJava's suite: the data generated once per action, then the action ---- */

static int lmdbjava_prepare(const struct settings *s) {
    struct dataset d;
    generate(s, &d);
    return prepare(s, s->dir, &d);
}

static void lmdbjava_verify(const struct settings *s) {
    struct dataset d;
    generate(s, &d);
    verify(s, s->dir, s->workloads, &d);
}

static void lmdbjava_run(const struct settings *s) {
    struct dataset d;
    generate(s, &d);
    run(s, s->dir, s->scratch, s->workloads, s->iterations, &d);
}

static const struct suite LMDBJAVA_SUITE = {"LmdbJava", LMDBJAVA_WORKLOADS, lmdbjava_prepare, lmdbjava_verify, lmdbjava_run};

/* Every suite: a new one is one more entry. */
static const struct suite *const SUITES[] = {&LMDBJAVA_SUITE, &TOKYO_CABINET_SUITE, &OPEN_GET_SUITE, &MIGRATE_SUITE, &LMDB_SUITE};

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s version|prepare|verify|run [options]\n", argv[0]); return 2; }
    const char *action = argv[1];
    if (!strcmp(action, "version")) {
        int a, b, c;
        char *s = mdb_version(&a, &b, &c);
        printf("%d %d %d %s\n", a, b, c, s);
        return 0;
    }
    if (strcmp(action, "prepare") && strcmp(action, "verify") && strcmp(action, "run")) {
        fprintf(stderr, "unknown action %s\n", action);
        return 2;
    }
    struct settings s;
    const struct suite *suite;
    if (!parse_settings(argc, argv, &s) || !(suite = suite_of(SUITES, sizeof SUITES / sizeof *SUITES, s.workloads)) || !settings_given(&s)) return 2;
    if (!strcmp(action, "prepare")) return suite->prepare(&s);
    if (!strcmp(action, "run")) suite->run(&s);
    /* Suites that check their checksums inside each timed pass have no verify step. */
    else if (!suite->verify) { fprintf(stderr, "unknown action %s\n", action); return 2; }
    else suite->verify(&s);
    return 0;
}
