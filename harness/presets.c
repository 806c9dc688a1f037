/*
 * lmdb-regress C twin, presets: tokyo-cabinet, open-get and migrate as
 * src/workload/presets/ defines them: the same data from the same seed, the same timed
 * regions (named timed_* for callgrind), the same checksums and the same JSON lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common.h"
#include "lmdb.h"
#include "presets.h"
#include "results.h"

#define TC_KEY 8
#define COLD_NOT_ACHIEVED "cold not achieved"

/* The options, checked for the suite's preset (run_each, prepare_with). */
static struct settings P;

/* How every preset environment is opened: the unnamed database (store.rs). */
static unsigned preset_flags(void) { return env_flags(P.writemap, P.sync, P.nordahead); }

static int preset_open(const char *dir, unsigned flags, struct env *e, const char **call) {
    return env_open(dir, P.map_size, flags, flags & MDB_RDONLY ? 0 : txn_flags(P.sync), 0, 0, e, call);
}

/* ---- data (src/workload/presets/data.rs) ---- */

static unsigned char *tc_successive(uint32_t n) {
    unsigned char *k = xmalloc((size_t)n * TC_KEY + 1);
    for (uint32_t i = 0; i < n; i++) snprintf((char *)k + (size_t)i * TC_KEY, TC_KEY + 1, "%08" PRIu32, i);
    return k;
}

static unsigned char *tc_random(const unsigned char *successive, uint32_t n, uint64_t seed) {
    uint32_t *order = xmalloc((size_t)n * sizeof *order);
    unsigned char *k = xmalloc((size_t)n * TC_KEY);
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = n - 1; i >= 1; i--) {
        size_t j = (size_t)(splitmix64(&seed) % (uint64_t)(i + 1));
        uint32_t t = order[i]; order[i] = order[j]; order[j] = t;
    }
    for (uint32_t i = 0; i < n; i++) memcpy(k + (size_t)i * TC_KEY, successive + (size_t)order[i] * TC_KEY, TC_KEY);
    free(order);
    return k;
}

struct docs { size_t n; unsigned char *keys, *bytes; size_t *ends; };

static void docs_generate(struct docs *d) {
    uint64_t rng = P.seed;
    size_t cap = 1 << 20, used = 0;
    d->n = P.entries;
    d->keys = xmalloc(d->n * 4);
    d->ends = xmalloc(d->n * sizeof *d->ends);
    d->bytes = xmalloc(cap);
    for (size_t i = 0; i < d->n; i++) {
        uint32_t be = __builtin_bswap32((uint32_t)i);
        memcpy(d->keys + i * 4, &be, 4);
        size_t len = (size_t)(splitmix64(&rng) % (P.max_value + 1ull));
        while (used + len > cap) { cap *= 2; d->bytes = realloc(d->bytes, cap); if (!d->bytes) exit(3); }
        for (size_t f = 0; f < len; f += 8) {
            uint64_t r = splitmix64(&rng);
            for (size_t b = 0; b < 8 && f + b < len; b++) d->bytes[used + f + b] = (unsigned char)(' ' + ((r >> (8 * b)) & 0xff) % 95);
        }
        used += len;
        d->ends[i] = used;
    }
}

static void docs_free(struct docs *d) { free(d->keys); free(d->bytes); free(d->ends); }

/* ---- timed regions: the workload and nothing else (callgrind: --toggle-collect=timed_*) ---- */

__attribute__((noinline)) int timed_tc_write(struct env *e, const unsigned char *keys, size_t n, const char **call) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc = begin_cursor(e, 0, &txn, &cur, call);
    if (rc) return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        k.mv_size = v.mv_size = TC_KEY;
        k.mv_data = v.mv_data = (void *)(keys + i * TC_KEY);
        if ((rc = mdb_cursor_put(cur, &k, &v, 0))) *call = "mdb_cursor_put";
    }
    return end_cursor(txn, cur, 1, rc, call);
}

/* Successive (keys NULL: a cursor walk) or random (every key looked up) read in one read
 * transaction; *sum is the key and value lengths added up, as Xodus's result. */
__attribute__((noinline)) int timed_tc_read(struct env *e, const unsigned char *keys, size_t n, uint64_t *sum, const char **call) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc = begin_cursor(e, MDB_RDONLY, &txn, &cur, call);
    *sum = 0;
    if (rc) return rc;
    if (!keys) {
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) *sum += k.mv_size + v.mv_size;
        if (rc == MDB_NOTFOUND) rc = 0;
        *call = "mdb_cursor_get(MDB_NEXT)";
    } else {
        for (size_t i = 0; i < n; i++) {
            k.mv_size = TC_KEY; k.mv_data = (void *)(keys + i * TC_KEY);
            if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY))) break;
            *sum += k.mv_size + v.mv_size;
        }
        *call = "mdb_cursor_get(MDB_SET_KEY)";
    }
    return end_cursor(txn, cur, 0, rc, call);
}

__attribute__((noinline)) int timed_docs_write(struct env *e, const struct docs *d, const char **call) {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    size_t start = 0;
    int rc = begin_cursor(e, 0, &txn, &cur, call);
    if (rc) return rc;
    for (size_t i = 0; i < d->n && !rc; i++) {
        k.mv_size = 4; k.mv_data = d->keys + i * 4;
        v.mv_size = d->ends[i] - start; v.mv_data = d->bytes + start;
        start = d->ends[i];
        if ((rc = mdb_cursor_put(cur, &k, &v, 0))) *call = "mdb_cursor_put";
    }
    return end_cursor(txn, cur, 1, rc, call);
}

/* One cycle: open read-only, begin, get, end, close. */
__attribute__((noinline)) int timed_open_get(const char *dir, unsigned flags, unsigned char *key, const char **call) {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {4, key}, v;
    int rc;
    if ((rc = mdb_env_create(&env))) { *call = "mdb_env_create"; return rc; }
    if ((rc = mdb_env_set_mapsize(env, P.map_size))) *call = "mdb_env_set_mapsize";
    else if ((rc = mdb_env_open(env, dir, flags | MDB_RDONLY, 0664))) *call = "mdb_env_open";
    else if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))) *call = "mdb_txn_begin";
    else {
        if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi))) *call = "mdb_dbi_open";
        else if ((rc = mdb_get(txn, dbi, &k, &v))) *call = "mdb_get";
        __asm__ volatile("" : : "g"(&v) : "memory");
        mdb_txn_abort(txn);
    }
    mdb_env_close(env);
    return rc;
}

/* migrate: every entry of src, put into dst (dst NULL: only read, a byte of every page
 * of each value touched); *n counts them. */
__attribute__((noinline)) int timed_migrate(struct env *src, struct env *dst, unsigned flags, uint64_t *n, const char **call) {
    MDB_txn *rtxn, *wtxn = NULL;
    MDB_cursor *rcur, *wcur = NULL;
    MDB_val k, v;
    int rc = begin_cursor(src, MDB_RDONLY, &rtxn, &rcur, call);
    *n = 0;
    if (rc) return rc;
    if (dst && (rc = begin_cursor(dst, 0, &wtxn, &wcur, call))) return end_cursor(rtxn, rcur, 0, rc, call);
    *call = "mdb_cursor_get(MDB_NEXT)";
    for (rc = mdb_cursor_get(rcur, &k, &v, MDB_FIRST); !rc; rc = mdb_cursor_get(rcur, &k, &v, MDB_NEXT)) {
        if (dst && (rc = mdb_cursor_put(wcur, &k, &v, flags))) { *call = "mdb_cursor_put"; break; }
        if (!dst)
            for (size_t off = 0; off < v.mv_size; off += 4096) (void)*(volatile unsigned char *)((unsigned char *)v.mv_data + off);
        ++*n;
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    if (dst) rc = end_cursor(wtxn, wcur, 1, rc, call);
    return end_cursor(rtxn, rcur, 0, rc, call);
}

/* ---- tokyo-cabinet ---- */

static int tc_prepare(const char *dir, const char **call) {
    struct env e;
    unsigned char *keys = tc_successive(P.entries);
    int rc = preset_open(dir, preset_flags(), &e, call);
    if (!rc) {
        rc = timed_tc_write(&e, keys, P.entries, call);
        mdb_env_close(e.env);
    }
    free(keys);
    return rc;
}

/* What a write pass puts: Tokyo Cabinet's keys (docs NULL) or documents. */
struct write_job { const unsigned char *keys; const struct docs *docs; };

static int write_pass(struct env *e, const struct write_job *j, const char **call) {
    return j->docs ? timed_docs_write(e, j->docs, call) : timed_tc_write(e, j->keys, P.entries, call);
}

/* Times the write on a fresh environment in scratch, `iterations` times (fresh_writes). */
static int fresh_writes(struct result *r, const char *scratch, const struct write_job *j, unsigned iterations) {
    for (unsigned it = 0; it < iterations; it++) {
        char dir[4096];
        struct env e;
        const char *call = "";
        uint64_t entries, digest;
        snprintf(dir, sizeof dir, "%s/cpreset-XXXXXX", scratch);
        if (!mkdtemp(dir)) return print_error(r->workload, "mkdtemp failed", 0);
        int rc = preset_open(dir, preset_flags(), &e, &call);
        if (rc) { remove_env_dir(dir); return print_error(r->workload, call, rc); }
        uint64_t t0 = now_ns();
        rc = write_pass(&e, j, &call);
        uint64_t ns = now_ns() - t0;
        if (!rc && (rc = walk_checksum(&e, &entries, &digest))) call = "mdb_cursor_get";
        struct space space;
        if (!rc) rc = space_of(&TWIN_SPACE_CALLS, &e, dir, &space, &call);
        mdb_env_close(e.env);
        struct figures f = no_figures(j->docs ? j->docs->n : P.entries);
        f.db_bytes = size_on_disk(dir);
        remove_env_dir(dir);
        if (rc) return print_error(r->workload, call, rc);
        if (result_push(r, ns, entries, digest, f)) return 1;
        r->space[r->n - 1] = space;
        r->has_space = 1;
    }
    return 0;
}

/* Entry count and XXH64 of each key then the value found for it, in `keys`' order. */
static int lookup_checksum(struct env *e, const unsigned char *keys, size_t n, uint64_t *digest) {
    MDB_txn *txn;
    MDB_val k, v;
    int rc;
    if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn))) return rc;
    XXH64_state_t *xx = XXH64_createState();
    XXH64_reset(xx, 0);
    for (size_t i = 0; i < n && !rc; i++) {
        k.mv_size = TC_KEY; k.mv_data = (void *)(keys + i * TC_KEY);
        if ((rc = mdb_get(txn, e->dbi, &k, &v))) break;
        XXH64_update(xx, keys + i * TC_KEY, TC_KEY);
        XXH64_update(xx, v.mv_data, v.mv_size);
    }
    *digest = XXH64_digest(xx);
    XXH64_freeState(xx);
    mdb_txn_abort(txn);
    return rc;
}

static int tc_read(struct result *r, const char *dir, const unsigned char *random, unsigned iterations) {
    uint64_t *ns = xmalloc(iterations * sizeof *ns), sum, entries = P.entries, digest;
    struct env e;
    const char *call = "";
    int rc = 0;
    for (unsigned it = 0; it < iterations && !rc; it++) {
        if ((rc = preset_open(dir, preset_flags() | MDB_RDONLY, &e, &call))) break;
        uint64_t t0 = now_ns();
        rc = timed_tc_read(&e, random, P.entries, &sum, &call);
        ns[it] = now_ns() - t0;
        mdb_env_close(e.env);
        if (!rc && sum != 2ull * TC_KEY * P.entries) { free(ns); return print_error(r->workload, "the timed pass read the wrong number of bytes", 0); }
    }
    if (!rc && !(rc = preset_open(dir, preset_flags() | MDB_RDONLY, &e, &call))) {
        rc = random ? lookup_checksum(&e, random, P.entries, &digest) : walk_checksum(&e, &entries, &digest);
        call = random ? "mdb_get" : "mdb_cursor_get";
        mdb_env_close(e.env);
    }
    for (unsigned it = 0; it < iterations && !rc; it++)
        if (result_push(r, ns[it], entries, digest, no_figures(P.entries))) { free(ns); return 1; }
    free(ns);
    return rc ? print_error(r->workload, call, rc) : 0;
}

static int tc_run(struct result *r, const char *dir, const char *scratch, unsigned iterations) {
    unsigned char *successive = tc_successive(P.entries), *random = tc_random(successive, P.entries, P.seed);
    const char *w = r->workload;
    int failed;
    struct write_job job = {!strcmp(w, "tcRandomWrite") ? random : successive, NULL};
    if (strstr(w, "Write")) failed = fresh_writes(r, scratch, &job, iterations);
    else if (!dir) failed = print_error(w, "this preset workload reads the prepared database: it needs --dir", 0);
    else failed = tc_read(r, dir, strcmp(w, "tcRandomRead") ? NULL : random, iterations);
    free(successive);
    free(random);
    return failed;
}

/* ---- open-get ---- */

static int docs_prepare(const char *dir, const char **call) {
    struct docs d;
    struct env e;
    docs_generate(&d);
    int rc = preset_open(dir, preset_flags(), &e, call);
    if (!rc) {
        rc = timed_docs_write(&e, &d, call);
        mdb_env_close(e.env);
    }
    docs_free(&d);
    return rc;
}

static int docs_write(struct result *r, const char *scratch, unsigned iterations) {
    struct docs d;
    docs_generate(&d);
    struct write_job job = {NULL, &d};
    int failed = fresh_writes(r, scratch, &job, iterations);
    docs_free(&d);
    return failed;
}

/* One entry: XXH64 of the key then the value found for it. */
static int get_checksum(const char *dir, unsigned char *key, uint64_t *digest) {
    struct env e;
    MDB_txn *txn;
    MDB_val k = {4, key}, v;
    const char *call;
    int rc = preset_open(dir, preset_flags() | MDB_RDONLY, &e, &call);
    if (rc) return rc;
    if (!(rc = mdb_txn_begin(e.env, NULL, MDB_RDONLY, &txn))) {
        if (!(rc = mdb_get(txn, e.dbi, &k, &v))) {
            XXH64_state_t *xx = XXH64_createState();
            XXH64_reset(xx, 0);
            XXH64_update(xx, key, 4);
            XXH64_update(xx, v.mv_data, v.mv_size);
            *digest = XXH64_digest(xx);
            XXH64_freeState(xx);
        }
        mdb_txn_abort(txn);
    }
    mdb_env_close(e.env);
    return rc;
}

static int open_get(struct result *r, const char *dir, unsigned iterations) {
    uint32_t be = __builtin_bswap32(P.key);
    unsigned char key[4];
    uint64_t digest;
    memcpy(key, &be, 4);
    for (unsigned it = 0; it < iterations; it++) {
        struct figures f = no_figures(P.cycles);
        uint64_t total = 0;
        f.latencies = xmalloc(P.cycles * sizeof *f.latencies);
        f.nlat = P.cycles;
        for (uint32_t c = 0; c < P.cycles; c++) {
            const char *call = "";
            uint64_t t0 = now_ns();
            int rc = timed_open_get(dir, preset_flags(), key, &call);
            total += f.latencies[c] = now_ns() - t0;
            if (rc) { free(f.latencies); return print_error(r->workload, call, rc); }
        }
        int rc = get_checksum(dir, key, &digest);
        if (rc) { free(f.latencies); return print_error(r->workload, "mdb_get", rc); }
        f.db_bytes = size_on_disk(dir);
        if (result_push(r, total / P.cycles, 1, digest, f)) return 1;
    }
    return 0;
}

static int open_get_run(struct result *r, const char *dir, const char *scratch, unsigned iterations) {
    if (!strcmp(r->workload, "openGetWrite")) return docs_write(r, scratch, iterations);
    if (!dir) return print_error(r->workload, "this preset workload reads the prepared database: it needs --dir", 0);
    return open_get(r, dir, iterations);
}

/* ---- migrate: the page cache (pagecache.rs) and resource usage (usage.rs) ---- */

static int residency(const char *path, uint64_t *resident, uint64_t *total) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) { if (fd >= 0) close(fd); return -1; }
    size_t len = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE);
    *total = (len + page - 1) / page;
    *resident = 0;
    if (!len) { close(fd); return 0; }
    void *addr = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0); /* nothing reads it in, not even valgrind */
    close(fd);
    if (addr == MAP_FAILED) return -1;
    unsigned char *vec = xmalloc(*total);
    int rc = mincore(addr, len, vec);
    munmap(addr, len);
    for (uint64_t i = 0; !rc && i < *total; i++) *resident += vec[i] & 1;
    free(vec);
    return rc;
}

static int64_t peak_kib(void) {
    char line[256];
    long long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

static int reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return 0;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static uint64_t micros(struct timeval t) { return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_usec; }

static void usage_between(struct figures *f, const struct rusage *a, const struct rusage *b, int reset) {
    f->has_usage = 1;
    f->user_us = micros(b->ru_utime) - micros(a->ru_utime);
    f->sys_us = micros(b->ru_stime) - micros(a->ru_stime);
    f->major = (uint64_t)(b->ru_majflt - a->ru_majflt);
    f->minor = (uint64_t)(b->ru_minflt - a->ru_minflt);
    f->max_rss_kib = reset ? peak_kib() : -1;
}

/* Puts the source file in the page cache, or takes it out and checks it is out. */
static int cache_state(struct result *r, const char *file, int cold, struct figures *f) {
    char msg[512];
    if (cold ? evict_file(file) : warm_file_head(file, UINT64_MAX)) return print_error(r->workload, cold ? "cannot sync and evict the data file" : "cannot read the data file", 0);
    if (residency(file, &f->resident, &f->total)) return print_error(r->workload, "mincore failed on the data file", 0);
    f->has_resident = 1;
    if (!cold || !f->resident) return 0;
    snprintf(msg, sizeof msg, COLD_NOT_ACHIEVED ": %" PRIu64 " of %" PRIu64 " pages of %s still resident after fsync and POSIX_FADV_DONTNEED",
             f->resident, f->total, file);
    return print_error(r->workload, msg, 0);
}

static int migrate_once(struct result *r, const char *dir, const char *scratch, int copy, int cold) {
    char fresh[4096], *file = data_file(dir);
    struct figures f = no_figures(P.entries);
    struct env src, dst;
    struct rusage before, after;
    const char *call = "";
    uint64_t n, entries, digest;
    int failed = cache_state(r, file, cold, &f);
    free(file);
    if (failed) return 1;
    int rc = preset_open(dir, preset_flags() | MDB_RDONLY, &src, &call);
    if (rc) return print_error(r->workload, call, rc);
    snprintf(fresh, sizeof fresh, "%s/cpreset-XXXXXX", scratch);
    if (copy && !mkdtemp(fresh)) { mdb_env_close(src.env); return print_error(r->workload, "mkdtemp failed", 0); }
    if (copy && (rc = preset_open(fresh, preset_flags(), &dst, &call))) { mdb_env_close(src.env); remove_env_dir(fresh); return print_error(r->workload, call, rc); }
    int reset = reset_peak();
    getrusage(RUSAGE_SELF, &before);
    uint64_t t0 = now_ns();
    rc = timed_migrate(&src, copy ? &dst : NULL, P.append ? MDB_APPEND : 0, &n, &call);
    uint64_t ns = now_ns() - t0;
    getrusage(RUSAGE_SELF, &after);
    usage_between(&f, &before, &after, reset);
    if (!rc && (rc = walk_checksum(copy ? &dst : &src, &entries, &digest))) call = "mdb_cursor_get";
    if (copy) { mdb_env_close(dst.env); remove_env_dir(fresh); }
    mdb_env_close(src.env);
    if (rc) return print_error(r->workload, call, rc);
    if (n != P.entries) return print_error(r->workload, "the timed pass visited the wrong number of entries", 0);
    return result_push(r, ns, entries, digest, f);
}

static int migrate_run(struct result *r, const char *dir, const char *scratch, unsigned iterations) {
    int copy = !strncmp(r->workload, "migrateCopy", 11), cold = strstr(r->workload, "Cold") != NULL;
    if (!dir) return print_error(r->workload, "this preset workload reads the prepared database: it needs --dir", 0);
    for (unsigned it = 0; it < iterations; it++)
        if (migrate_once(r, dir, scratch, copy, cold)) return 1;
    return 0;
}

/* ---- the three suites ---- */

/* The options, checked for tokyo-cabinet's limits or the others'. */
static void setup(const struct settings *s, int tokyo_cabinet) {
    P = *s;
    check_preset(&P, tokyo_cabinet);
}

/* `prepare`: writes the preset's database with `write`; the exit status. */
static int prepare_with(const struct settings *s, int tokyo_cabinet, int (*write)(const char *dir, const char **call)) {
    const char *call = "";
    setup(s, tokyo_cabinet);
    if (!s->dir) { fprintf(stderr, "prepare needs --dir\n"); return 2; }
    int rc = write(s->dir, &call);
    if (rc) print_error(NULL, call, rc);
    else printf("{\"prepared\":true}\n");
    return 0;
}

typedef int run_fn(struct result *r, const char *dir, const char *scratch, unsigned iterations);

/* `run`: times each of s->workloads with `run_one` and prints its line. */
static void run_each(const struct settings *s, int tokyo_cabinet, run_fn *run_one) {
    char *list = strdup(s->workloads), *save = NULL;
    setup(s, tokyo_cabinet);
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        struct result r;
        result_init(&r, w, s->iterations);
        if (!run_one(&r, s->dir, s->scratch, s->iterations)) result_print(&r);
        result_free(&r);
    }
    free(list);
}

static int tc_prepare_suite(const struct settings *s) { return prepare_with(s, 1, tc_prepare); }
static int docs_prepare_suite(const struct settings *s) { return prepare_with(s, 0, docs_prepare); }
static void tc_run_all(const struct settings *s) { run_each(s, 1, tc_run); }
static void open_get_run_all(const struct settings *s) { run_each(s, 0, open_get_run); }
static void migrate_run_all(const struct settings *s) { run_each(s, 0, migrate_run); }

/* Presets check their checksums inside each timed pass: no verify step. */
const struct suite TOKYO_CABINET_SUITE = {
    "tokyo-cabinet", "tcSuccessiveWrite,tcRandomWrite,tcSuccessiveRead,tcRandomRead", tc_prepare_suite, NULL, tc_run_all,
};
const struct suite OPEN_GET_SUITE = {"open-get", "openGet,openGetWrite", docs_prepare_suite, NULL, open_get_run_all};
const struct suite MIGRATE_SUITE = {
    "migrate", "migrateCopyWarm,migrateCopyCold,migrateReadWarm,migrateReadCold", docs_prepare_suite, NULL, migrate_run_all,
};
