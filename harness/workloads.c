/*
 * lmdb-regress C twin: the six workloads of src/workload/native.rs in plain C, linked
 * statically with one tag's liblmdb. It takes the Rust worker's arguments and prints the
 * same JSON lines, so the runner treats both engines alike. The point: if Rust and C agree,
 * the harness adds nothing to what it measures.
 *
 *   lmdb-harness-c version
 *   lmdb-harness-c prepare --dir D [config]
 *   lmdb-harness-c run --dir D --scratch S --workloads LIST --iterations K [config]
 *
 * config: --entries N --value-size V --keys int|str16 --order seq|random
 *         --values fixed|random --seed S --map-size M [--no-writemap] [--sync]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* libdeflate: a PCLMUL-accelerated CRC32 (IEEE), on par with crc32fast; zlib's is ~5x slower. */
#include <libdeflate.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lmdb.h"
#include "presets.h"

#define POOL_BYTES (1u << 20)
#define CONSUME(p) __asm__ volatile("" : : "g"(p) : "memory")

struct config {
    uint32_t entries, value_size;
    int str_keys, random_order, random_values, writemap, nosync;
    uint64_t seed, map_size;
};

struct dataset {
    size_t ks, vs, n;
    unsigned char *keys, *values;
    uint32_t *order;
};

uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void *xmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(3); }
    return p;
}

/* The same data as Dataset::generate, byte for byte. */
static void generate(const struct config *c, struct dataset *d) {
    d->n = c->entries;
    d->ks = c->str_keys ? 16 : 4;
    d->vs = c->value_size;
    d->keys = xmalloc(d->n * d->ks);
    d->values = xmalloc(d->n * d->vs);
    d->order = xmalloc(d->n * sizeof(uint32_t));
    for (size_t i = 0; i < d->n; i++) {
        unsigned char *k = d->keys + i * d->ks;
        if (c->str_keys) {
            char buf[32];
            snprintf(buf, sizeof buf, "%016zu", i);
            memcpy(k, buf, 16);
        } else {
            uint32_t v = (uint32_t)i;
            memcpy(k, &v, 4);
        }
    }
    uint64_t rng = c->seed;
    if (c->random_values) {
        unsigned char *pool = xmalloc(POOL_BYTES);
        for (size_t off = 0; off < POOL_BYTES; off += 8) {
            uint64_t r = splitmix64(&rng);
            for (int b = 0; b < 8 && off + b < POOL_BYTES; b++) pool[off + b] = (unsigned char)(r >> (8 * b));
        }
        uint64_t span = POOL_BYTES - d->vs;
        for (size_t i = 0; i < d->n; i++) memcpy(d->values + i * d->vs, pool + splitmix64(&rng) % span, d->vs);
        free(pool);
    } else {
        for (size_t i = 0; i < d->n; i++) memcpy(d->values + i * d->vs, d->keys + i * d->ks, d->ks);
    }
    for (size_t i = 0; i < d->n; i++) d->order[i] = (uint32_t)i;
    if (c->random_order) {
        for (size_t i = d->n - 1; i >= 1; i--) {
            size_t j = (size_t)(splitmix64(&rng) % (uint64_t)(i + 1));
            uint32_t t = d->order[i]; d->order[i] = d->order[j]; d->order[j] = t;
        }
    }
}

static void json_error(const char *workload, const char *call, int rc) {
    if (workload)
        printf("{\"workload\":\"%s\",\"error\":\"%s: %s (%d)\"}\n", workload, call, mdb_strerror(rc), rc);
    else
        printf("{\"error\":\"%s: %s (%d)\"}\n", call, mdb_strerror(rc), rc);
    fflush(stdout);
}

struct env { MDB_env *env; MDB_dbi dbi; };

static int env_open(const struct config *c, const char *dir, struct env *e, const char **call) {
    int rc;
    MDB_txn *txn;
    unsigned flags = (c->writemap ? MDB_WRITEMAP : 0) | (c->nosync ? MDB_NOSYNC : 0);
    if ((rc = mdb_env_create(&e->env))) { *call = "mdb_env_create"; return rc; }
    if ((rc = mdb_env_set_mapsize(e->env, c->map_size))) { *call = "mdb_env_set_mapsize"; return rc; }
    if ((rc = mdb_env_set_maxdbs(e->env, 1))) { *call = "mdb_env_set_maxdbs"; return rc; }
    if ((rc = mdb_env_set_maxreaders(e->env, 2))) { *call = "mdb_env_set_maxreaders"; return rc; }
    if ((rc = mdb_env_open(e->env, dir, flags, 0664))) { *call = "mdb_env_open"; return rc; }
    if ((rc = mdb_txn_begin(e->env, NULL, 0, &txn))) { *call = "mdb_txn_begin"; return rc; }
    if ((rc = mdb_dbi_open(txn, "db", MDB_CREATE | (c->str_keys ? 0 : MDB_INTEGERKEY), &e->dbi))) {
        mdb_txn_abort(txn); *call = "mdb_dbi_open"; return rc;
    }
    if ((rc = mdb_txn_commit(txn))) { *call = "mdb_txn_commit"; return rc; }
    return 0;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- timed regions: the workload and nothing else (callgrind: --toggle-collect=timed_*) ---- */

__attribute__((noinline)) int timed_read_key(MDB_cursor *cur, const struct dataset *d, const char **call) {
    MDB_val k, v;
    for (size_t n = 0; n < d->n; n++) {
        k.mv_size = d->ks; k.mv_data = d->keys + (size_t)d->order[n] * d->ks;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
        if (rc) { *call = "mdb_cursor_get(MDB_SET_KEY)"; return rc; }
        CONSUME(&v);
    }
    return 0;
}

__attribute__((noinline)) int timed_walk(MDB_cursor *cur, MDB_cursor_op first, MDB_cursor_op step) {
    MDB_val k, v;
    int rc = mdb_cursor_get(cur, &k, &v, first);
    while (rc == 0) {
        CONSUME(&k); CONSUME(&v);
        rc = mdb_cursor_get(cur, &k, &v, step);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

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

__attribute__((noinline)) int timed_write(struct env *e, const struct dataset *d, const uint32_t *order,
                                          unsigned flags, const char **call) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if ((rc = mdb_txn_begin(e->env, NULL, 0, &txn))) { *call = "mdb_txn_begin"; return rc; }
    if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) { mdb_txn_abort(txn); *call = "mdb_cursor_open"; return rc; }
    for (size_t n = 0; n < d->n; n++) {
        size_t i = order[n];
        k.mv_size = d->ks; k.mv_data = d->keys + i * d->ks;
        v.mv_size = d->vs; v.mv_data = d->values + i * d->vs;
        if ((rc = mdb_cursor_put(cur, &k, &v, flags))) {
            mdb_cursor_close(cur); mdb_txn_abort(txn); *call = "mdb_cursor_put"; return rc;
        }
    }
    mdb_cursor_close(cur);
    if ((rc = mdb_txn_commit(txn))) { *call = "mdb_txn_commit"; return rc; }
    return 0;
}

/* ---- untimed: the checksum pass that also faults in every page ---- */

static int checksum_pass(struct env *e, const char *w, const struct dataset *d, uint64_t *entries, uint64_t *digest) {
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
            k.mv_size = d->ks; k.mv_data = d->keys + (size_t)d->order[j] * d->ks;
            if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY))) break;
            XXH64_update(xx, d->keys + (size_t)d->order[j] * d->ks, d->ks);
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

static void print_samples(const char *w, const uint64_t *ns, unsigned n, int with_sum, uint64_t entries, uint64_t digest) {
    printf("{\"workload\":\"%s\",\"samples_ns\":[", w);
    for (unsigned i = 0; i < n; i++) printf("%s%" PRIu64, i ? "," : "", ns[i]);
    printf("]");
    if (with_sum) printf(",\"checksum\":{\"entries\":%" PRIu64 ",\"digest\":%" PRIu64 "}", entries, digest);
    printf("}\n");
    fflush(stdout);
}

static void run_read(struct env *e, const char *w, const struct dataset *d, unsigned iterations) {
    uint64_t entries, digest, *ns = xmalloc(iterations * sizeof *ns);
    int rc = checksum_pass(e, w, d, &entries, &digest);
    if (rc) { json_error(w, "mdb_cursor_get", rc); free(ns); return; }
    for (unsigned it = 0; it < iterations; it++) {
        MDB_txn *txn;
        MDB_cursor *cur;
        const char *call = "mdb_cursor_get";
        uint64_t out = digest;
        if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) { json_error(w, "mdb_txn_begin", rc); free(ns); return; }
        if ((rc = mdb_cursor_open(txn, e->dbi, &cur))) { json_error(w, "mdb_cursor_open", rc); free(ns); return; }
        uint64_t t0 = now_ns();
        if (!strcmp(w, "readKey")) rc = timed_read_key(cur, d, &call);
        else if (!strcmp(w, "readSeq")) rc = timed_walk(cur, MDB_FIRST, MDB_NEXT);
        else if (!strcmp(w, "readRev")) rc = timed_walk(cur, MDB_LAST, MDB_PREV);
        else if (!strcmp(w, "readCrc")) rc = timed_read_crc(cur, &out);
        else rc = timed_read_xxh64(cur, &out);
        ns[it] = now_ns() - t0;
        mdb_cursor_close(cur);
        mdb_txn_abort(txn);
        if (rc) { json_error(w, call, rc); free(ns); return; }
        if (out != digest) {
            printf("{\"workload\":\"%s\",\"error\":\"timed pass computed %016" PRIx64 ", checked pass %016" PRIx64 "\"}\n", w, out, digest);
            free(ns);
            return;
        }
    }
    print_samples(w, ns, iterations, 1, entries, digest);
    free(ns);
}

static void remove_env_dir(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dir); unlink(path);
    snprintf(path, sizeof path, "%s/lock.mdb", dir); unlink(path);
    rmdir(dir);
}

static void run_write(const struct config *c, const char *scratch, const struct dataset *d, unsigned iterations) {
    uint64_t *ns = xmalloc(iterations * sizeof *ns);
    for (unsigned it = 0; it < iterations; it++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/cwrite-XXXXXX", scratch);
        if (!mkdtemp(dir)) { printf("{\"workload\":\"write\",\"error\":\"mkdtemp: %s\"}\n", strerror(errno)); free(ns); return; }
        struct env e;
        const char *call = "";
        int rc = env_open(c, dir, &e, &call);
        if (rc) { json_error("write", call, rc); remove_env_dir(dir); free(ns); return; }
        uint64_t t0 = now_ns();
        rc = timed_write(&e, d, d->order, c->random_order ? 0 : MDB_APPEND, &call);
        ns[it] = now_ns() - t0;
        mdb_env_close(e.env);
        remove_env_dir(dir);
        if (rc) { json_error("write", call, rc); free(ns); return; }
    }
    print_samples("write", ns, iterations, 0, 0, 0);
    free(ns);
}

static const char *ALL = "readKey,readSeq,readRev,readCrc,readXxh64,write";

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s version|prepare|run [options]\n", argv[0]); return 2; }
    const char *action = argv[1];
    if (!strcmp(action, "version")) {
        int a, b, c;
        char *s = mdb_version(&a, &b, &c);
        printf("%d %d %d %s\n", a, b, c, s);
        return 0;
    }
    struct config c = { 1000000, 100, 0, 0, 0, 1, 1, 42, 0 };
    const char *dir = NULL, *scratch = "/tmp", *workloads = ALL;
    unsigned iterations = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--no-writemap")) { c.writemap = 0; continue; }
        if (!strcmp(a, "--sync")) { c.nosync = 0; continue; }
        if (presets_flag(a)) continue;
        if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--entries")) c.entries = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--value-size")) c.value_size = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--keys")) c.str_keys = !strcmp(v, "str16");
        else if (!strcmp(a, "--order")) c.random_order = !strcmp(v, "random");
        else if (!strcmp(a, "--values")) c.random_values = !strcmp(v, "random");
        else if (!strcmp(a, "--seed")) c.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--map-size")) c.map_size = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--dir")) dir = v;
        else if (!strcmp(a, "--scratch")) scratch = v;
        else if (!strcmp(a, "--workloads")) workloads = !strcmp(v, "all") ? ALL : v;
        else if (!strcmp(a, "--iterations")) iterations = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--library")) { /* the Rust worker's; the C twin is its own library */ }
        else if (presets_option(a, v)) { /* harness/presets.c */ }
        else { fprintf(stderr, "unknown option %s\n", a); return 2; }
    }
    if (presets_selected(workloads)) return presets_main(action, dir, scratch, workloads, iterations, c.seed);
    if (!c.map_size) c.map_size = (uint64_t)c.entries * c.value_size * 32 / 10;
    struct dataset d;
    generate(&c, &d);
    if (!strcmp(action, "prepare")) {
        if (!dir) { fprintf(stderr, "prepare needs --dir\n"); return 2; }
        struct env e;
        const char *call = "";
        int rc = env_open(&c, dir, &e, &call);
        if (!rc) {
            uint32_t *sorted = xmalloc(d.n * sizeof *sorted);
            for (size_t i = 0; i < d.n; i++) sorted[i] = (uint32_t)i;
            rc = timed_write(&e, &d, sorted, MDB_APPEND, &call);
            free(sorted);
            mdb_env_close(e.env);
        }
        if (rc) json_error(NULL, call, rc);
        else printf("{\"prepared\":true}\n");
        return 0;
    }
    if (strcmp(action, "run")) { fprintf(stderr, "unknown action %s\n", action); return 2; }
    char *list = strdup(workloads), *save = NULL;
    struct env e;
    int have_env = 0;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!strcmp(w, "write")) { run_write(&c, scratch, &d, iterations); continue; }
        if (!have_env) {
            const char *call = "";
            int rc = dir ? env_open(&c, dir, &e, &call) : EINVAL;
            if (rc) { json_error(w, dir ? call : "--dir missing", rc); continue; }
            have_env = 1;
        }
        run_read(&e, w, &d, iterations);
    }
    if (have_env) mdb_env_close(e.env);
    free(list);
    return 0;
}
