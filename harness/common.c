/* What the C twin's halves share: see common.h. Nothing here calls LMDB (lmdb_calls.c
 * does), so the paired worker, which reaches each library through dlsym, links it too. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define POOL_BYTES (1u << 20)
#define MAX_VALUE_LIMIT (1u << 20)

const char *const ALL_WORKLOADS = LMDBJAVA_WORKLOADS;

void *xmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(3); }
    return p;
}

uint64_t major_faults_now(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) ? 0 : (uint64_t)u.ru_majflt;
}

uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- settings: the Rust worker's checks (WorkloadConfig::validate) ---- */

static int parse_u64(const char *opt, const char *v, uint64_t max, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || x > max) {
        fprintf(stderr, "%s: %s is not a whole number from 0 to %" PRIu64 "\n", opt, v, max);
        return 0;
    }
    *out = x;
    return 1;
}

static int parse_u32(const char *opt, const char *v, uint32_t *out) {
    uint64_t x;
    if (!parse_u64(opt, v, UINT32_MAX, &x)) return 0;
    *out = (uint32_t)x;
    return 1;
}

static int one_of(const char *opt, const char *v, const char *a, const char *b, int *is_b) {
    if (!strcmp(v, a) || !strcmp(v, b)) { *is_b = !strcmp(v, b); return 1; }
    fprintf(stderr, "%s: %s is neither %s nor %s\n", opt, v, a, b);
    return 0;
}

static int validate(const struct settings *s) {
    if (s->have_entries && s->entries == 0) { fprintf(stderr, "--entries must be at least 1\n"); return 0; }
    if (!s->random_values && s->value_size < 4) {
        fprintf(stderr, "--value-size must be at least 4 with --values fixed (each value begins with its 4-byte integer key)\n");
        return 0;
    }
    if (s->value_size < 1 || s->value_size >= POOL_BYTES) {
        fprintf(stderr, "--value-size must be 1 byte to under 1 MiB\n");
        return 0;
    }
    return 1;
}

/* The runner gives both; the suites' defaults are its (src/workload/settings.rs). */
int settings_given(const struct settings *s) {
    if (s->have_entries && s->map_size) return 1;
    fprintf(stderr, "--entries and --map-size are required (the runner resolves them)\n");
    return 0;
}

/* An option without a value: 1 if it is one. */
static int flag(struct settings *s, const char *a) {
    if (!strcmp(a, "--writemap")) s->writemap = 1;
    else if (!strcmp(a, "--no-writemap")) s->writemap = 0;
    else if (!strcmp(a, "--sync") || !strcmp(a, "--sync=sync")) s->sync = SYNC_ALL, s->have_sync = 1;
    else if (!strcmp(a, "--sync=nometasync")) s->sync = SYNC_DATA, s->have_sync = 1;
    else if (!strcmp(a, "--sync=nosync")) s->sync = SYNC_NONE, s->have_sync = 1;
    else if (!strcmp(a, "--sync=txn-nosync")) s->sync = SYNC_TXN_NONE, s->have_sync = 1;
    else if (!strcmp(a, "--sync=txn-nometasync")) s->sync = SYNC_TXN_DATA, s->have_sync = 1;
    else if (!strcmp(a, "--readahead=on")) s->nordahead = 0;
    else if (!strcmp(a, "--readahead=off")) s->nordahead = 1;
    else if (!strcmp(a, "--migrate-append")) s->append = 1;
    /* The runner's SIZE (256M, 1G, bytes); its cgroup holds the number. */
    else if (!strncmp(a, "--memory-limit=", 15) && a[15]) s->limited = 1;
    else return 0;
    return 1;
}

/* An option with a value: 0 if it is bad or unknown. */
static int option(struct settings *s, const char *a, const char *v) {
    uint64_t x = 0;
    int is_b = 0;
    if (!strcmp(a, "--entries")) { s->have_entries = 1; return parse_u32(a, v, &s->entries); }
    if (!strcmp(a, "--map-size")) return parse_u64(a, v, UINT64_MAX, &s->map_size);
    if (!strcmp(a, "--preset-max-value")) return parse_u32(a, v, &s->max_value);
    if (!strcmp(a, "--open-get-cycles")) return parse_u32(a, v, &s->cycles);
    if (!strcmp(a, "--open-get-key")) { s->have_key = 1; return parse_u32(a, v, &s->key); }
    if (!strcmp(a, "--value-size")) return parse_u32(a, v, &s->value_size);
    if (!strcmp(a, "--keys")) { if (!one_of(a, v, "int", "str16", &is_b)) return 0; s->str_keys = is_b; return 1; }
    if (!strcmp(a, "--order")) { if (!one_of(a, v, "seq", "random", &is_b)) return 0; s->random_order = is_b; return 1; }
    if (!strcmp(a, "--values")) { if (!one_of(a, v, "fixed", "random", &is_b)) return 0; s->random_values = is_b; return 1; }
    if (!strcmp(a, "--seed")) return parse_u64(a, v, UINT64_MAX, &s->seed);
    if (!strcmp(a, "--dir")) { s->dir = v; return 1; }
    if (!strcmp(a, "--scratch")) { s->scratch = v; return 1; }
    if (!strcmp(a, "--workloads")) { s->workloads = !strcmp(v, "all") ? ALL_WORKLOADS : v; return 1; }
    if (!strcmp(a, "--iterations")) {
        if (!parse_u64(a, v, 1000000, &x) || x == 0) { fprintf(stderr, "--iterations must be at least 1\n"); return 0; }
        s->iterations = (unsigned)x;
        return 1;
    }
    if (!strcmp(a, "--library")) return 1; /* the Rust worker's; the C twin is its own library */
    fprintf(stderr, "unknown option %s\n", a);
    return 0;
}

int parse_settings(int argc, char **argv, struct settings *s) {
    /* The flags' own defaults, as the Rust worker's; never a suite's. */
    static const struct settings defaults = {
        .scratch = "/tmp", .iterations = 1, .value_size = 100, .writemap = 1, .seed = 42,
        .max_value = 2000, .cycles = 1000,
    };
    *s = defaults;
    s->workloads = ALL_WORKLOADS;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (flag(s, a)) continue;
        if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", a); return 0; }
        if (!option(s, a, argv[++i])) return 0;
    }
    return validate(s);
}

void die(const char *what, const char *why) {
    fprintf(stderr, "%s: %s\n", what, why);
    exit(2);
}

void check_preset(const struct settings *s, int tokyo_cabinet) {
    if (tokyo_cabinet && s->entries > 100000000) die("--entries", "tokyo-cabinet's 8-digit keys allow at most 100000000");
    if (s->max_value > MAX_VALUE_LIMIT) die("--preset-max-value", "must be at most 1048576");
    if (!s->cycles) die("--open-get-cycles", "must be at least 1");
    if (!s->have_key) die("--open-get-key", "is required (the runner resolves it)");
    if (s->key >= s->entries) die("--open-get-key", "is not below the entry count");
}

/* ---- suites ---- */

/* 1 if `name` is one of the comma-separated `list`. */
static int listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list;; p++) {
        if (!strncmp(p, name, n) && (p[n] == ',' || !p[n])) return 1;
        if (!(p = strchr(p, ','))) return 0;
    }
}

const struct suite *suite_of(const struct suite *const *all, size_t n, const char *list) {
    char *copy = strdup(list), *save = NULL, *first = NULL;
    const struct suite *found = NULL;
    int ok = 1;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        const struct suite *s = NULL;
        for (size_t i = 0; i < n && !s; i++)
            if (listed(all[i]->workloads, w)) s = all[i];
        if (!s) {
            fprintf(stderr, "unknown workload %s; known: %s\n", w, ALL_WORKLOADS);
            ok = 0;
        } else if (found && s != found) {
            fprintf(stderr, "--workloads: workloads of different presets (or of a preset and LmdbJava's) cannot share a run: "
                            "%s is %s's, %s is %s's\n", first, found->name, w, s->name);
            ok = 0;
        } else if (!found) {
            found = s;
            first = w;
        }
    }
    if (ok && !found) fprintf(stderr, "no workload named in \"%s\"\n", list);
    free(copy);
    return ok ? found : NULL;
}

/* ---- environments ---- */

unsigned env_flags(int writemap, int sync, int nordahead) {
    return (writemap ? MDB_WRITEMAP : 0) | (sync == SYNC_NONE ? MDB_NOSYNC : sync == SYNC_DATA ? MDB_NOMETASYNC : 0) |
           (nordahead ? MDB_NORDAHEAD : 0);
}

unsigned txn_flags(int sync) {
    return sync == SYNC_TXN_NONE ? MDB_NOSYNC : sync == SYNC_TXN_DATA ? MDB_NOMETASYNC : 0;
}

void remove_env_dir(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dir); unlink(path);
    snprintf(path, sizeof path, "%s/lock.mdb", dir); unlink(path);
    rmdir(dir);
}

/* ---- JSON lines ---- */

void print_u64s(const uint64_t *a, uint64_t n) {
    printf("[");
    for (uint64_t i = 0; i < n; i++) printf("%s%" PRIu64, i ? "," : "", a[i]);
    printf("]");
}

/* ---- space ---- */

/* The page numbers of every freelist record (FREE_DBI, database 0): each record is an ID
 * list whose first word is its length. */
static int freelist_pages(const struct space_calls *f, MDB_txn *txn, uint64_t *pages, const char **call) {
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    *pages = 0;
    if ((rc = f->cursor_open(txn, 0, &cur))) { *call = "mdb_cursor_open(FREE_DBI)"; return rc; }
    for (MDB_cursor_op op = MDB_FIRST; !(rc = f->cursor_get(cur, &k, &v, op)); op = MDB_NEXT) {
        size_t len;
        if (v.mv_size < sizeof len) { rc = EINVAL; break; }
        memcpy(&len, v.mv_data, sizeof len);
        *pages += len;
    }
    f->cursor_close(cur);
    if (rc == MDB_NOTFOUND) return 0;
    *call = rc == EINVAL ? "a freelist record shorter than its length" : "mdb_cursor_get(FREE_DBI)";
    return rc;
}

int space_of(const struct space_calls *f, const struct env *e, const char *dir, struct space *out, const char **call) {
    char path[4096];
    struct stat st;
    MDB_envinfo info;
    MDB_stat ms;
    MDB_txn *txn;
    int rc;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (stat(path, &st)) { *call = "stat(data.mdb)"; return errno; }
    if ((rc = f->env_info(e->env, &info))) { *call = "mdb_env_info"; return rc; }
    if ((rc = f->txn_begin(e->env, NULL, MDB_RDONLY, &txn))) { *call = "mdb_txn_begin"; return rc; }
    if ((rc = f->stat(txn, e->dbi, &ms))) *call = "mdb_stat";
    else rc = freelist_pages(f, txn, &out->free_pages, call);
    f->txn_abort(txn);
    if (rc) return rc;
    out->file_size = (uint64_t)st.st_size;
    out->last_page = info.me_last_pgno;
    out->branch_pages = ms.ms_branch_pages;
    out->leaf_pages = ms.ms_leaf_pages;
    out->overflow_pages = ms.ms_overflow_pages;
    out->depth = ms.ms_depth;
    return 0;
}

void print_space(const struct space *s, unsigned n) {
    printf(",\"space\":[");
    for (unsigned i = 0; i < n; i++)
        printf("%s{\"file-size\":%" PRIu64 ",\"last-page\":%" PRIu64 ",\"branch-pages\":%" PRIu64
               ",\"leaf-pages\":%" PRIu64 ",\"overflow-pages\":%" PRIu64 ",\"depth\":%" PRIu64
               ",\"free-pages\":%" PRIu64 "}",
               i ? "," : "", s[i].file_size, s[i].last_page, s[i].branch_pages, s[i].leaf_pages, s[i].overflow_pages,
               s[i].depth, s[i].free_pages);
    printf("]");
}

/* ---- the page cache ---- */

int evict_file(const char *path) {
    int fd = open(path, O_RDONLY), rc = -1;
    if (fd >= 0 && !fsync(fd)) {
        rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (rc) errno = rc, rc = -1;
    }
    if (fd >= 0) close(fd);
    return rc;
}

int warm_file_head(const char *path, uint64_t bytes) {
    static char buf[1 << 20];
    int fd = open(path, O_RDONLY);
    ssize_t got = 0;
    if (fd < 0) return -1;
    while (bytes && (got = read(fd, buf, bytes < sizeof buf ? (size_t)bytes : sizeof buf)) > 0) bytes -= (uint64_t)got;
    close(fd);
    return got < 0 ? -1 : 0;
}

int unmap_file_pages(const char *path) {
    char file[PATH_MAX], line[PATH_MAX + 256];
    if (!realpath(path, file)) return -1;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return -1;
    size_t n = strlen(file);
    int rc = 0;
    while (!rc && fgets(line, sizeof line, maps)) {
        size_t len = strcspn(line, "\n");
        line[len] = 0;
        if (len < n || strcmp(line + len - n, file)) continue;
        unsigned long from, to;
        if (sscanf(line, "%lx-%lx", &from, &to) != 2) { errno = EINVAL; rc = -1; break; }
        /* A shared file mapping: MADV_DONTNEED drops this process's references, never the file's data. */
        rc = madvise((void *)from, to - from, MADV_DONTNEED);
    }
    fclose(maps);
    return rc;
}
