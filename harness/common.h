/*
 * What the C twin's two halves share (common.c): allocation, the clock, the generator,
 * opening an environment, the JSON lines' error and number lists, the suites' one
 * structure and the choice among them, and the worker's settings: every option, parsed
 * once into one structure for both halves. The runner resolves every suite's defaults
 * (src/workload/settings.rs) and gives each setting explicitly; the twin fills in none
 * of them.
 */
#ifndef LMDB_REGRESS_COMMON_H
#define LMDB_REGRESS_COMMON_H

#include <stdint.h>
#include <time.h>

#include "lmdb.h"

/* Every worker option: the action's arguments, every suite's environment settings,
 * LmdbJava's data and the presets' own parameters. */
struct settings {
    const char *dir, *scratch, *workloads;
    unsigned iterations;
    /* every suite's: --entries, --map-size, --writemap / --no-writemap, --sync[=MODE],
     * --readahead=on|off */
    uint32_t entries;
    uint64_t map_size;
    /* have_sync: a --sync form was given, so the run asks how commits are made durable */
    int have_entries, writemap, sync, have_sync, nordahead;
    /* --memory-limit=SIZE: the runner put this process in a cgroup of that limit, so each
     * read pass starts with the read database evicted and read through again (the limit
     * itself is the cgroup's, not the worker's to keep) */
    int limited;
    /* LmdbJava's data; the seed is the presets' too */
    uint32_t value_size;
    int str_keys, random_order, random_values;
    uint64_t seed;
    /* the presets' own: --preset-max-value, --open-get-cycles, --open-get-key, --migrate-append */
    uint32_t max_value, cycles, key;
    int have_key, append;
};

/* LmdbJava's six workloads: what --workloads all names. */
#define LMDBJAVA_WORKLOADS "readKey,readSeq,readRev,readCrc,readXxh64,write"
extern const char *const ALL_WORKLOADS;

/* Prints `what: why` on stderr and exits with status 2 (a bad argument). */
void die(const char *what, const char *why);

/* Zeroed memory, or exit status 3. */
void *xmalloc(size_t n);

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The process's major page faults so far (getrusage's ru_majflt), read before and after a
 * timed region outside its clock, as the Rust engine's usage::snapshot reads them. */
uint64_t major_faults_now(void);

/* The generator both engines draw every random byte from (SplitMix64 in dataset.rs). */
uint64_t splitmix64(uint64_t *s);

/* Parses the options after the action into s; 0, with a message on stderr, if one is bad.
 * The workload names are the caller's to check, then settings_given. */
int parse_settings(int argc, char **argv, struct settings *s);
/* 1 if --entries and --map-size were given, else 0 with a message on stderr. */
int settings_given(const struct settings *s);
/* Checks the presets' parameters (tokyo-cabinet's key limit when `tokyo_cabinet`), as
 * PresetConfig::validate; a bad or missing value exits with status 2. */
void check_preset(const struct settings *s, int tokyo_cabinet);

/* An open environment, its database, and mdb_txn_begin's flags for each of its write
 * transactions (a per-transaction sync mode's, txn_flags; 0 for most). */
struct env { MDB_env *env; MDB_dbi dbi; unsigned txn_flags; };

/* How commits are made durable (--sync=MODE): nosync, nometasync, sync, and LMDB 1.0's
 * per-transaction txn-nosync and txn-nometasync (the environment opened to sync). */
enum { SYNC_NONE = 0, SYNC_ALL = 1, SYNC_DATA = 2, SYNC_TXN_NONE = 3, SYNC_TXN_DATA = 4 };
/* mdb_env_open's flags: MDB_WRITEMAP with writemap, sync's (MDB_NOSYNC, MDB_NOMETASYNC),
 * and MDB_NORDAHEAD with nordahead. */
unsigned env_flags(int writemap, int sync, int nordahead);
/* mdb_txn_begin's flags for each write transaction under sync: a per-transaction mode's
 * MDB_NOSYNC or MDB_NOMETASYNC, else 0. */
unsigned txn_flags(int sync);
/* The first LMDB whose mdb_txn_begin takes them (lmdb.rs's PER_TXN_SYNC_SINCE); 0.9's
 * masks them off, and each commit would sync fully under a per-transaction name. */
#define PER_TXN_SYNC_SINCE MDB_VERINT(0, 9, 70)
/* Opens the environment in dir and its database, creating both unless flags has
 * MDB_RDONLY: "db" with db_flags as LmdbJava opens it (one named database, two readers)
 * when `named`, else the unnamed one; its write transactions begin with txn_flags, which
 * an LMDB before PER_TXN_SYNC_SINCE refuses (EINVAL). On failure *call names the call,
 * the environment is closed, and the code is returned. */
int env_open(const char *dir, uint64_t map_size, unsigned flags, unsigned txn_flags, int named, unsigned db_flags,
             struct env *e, const char **call);
/* env_open, `set` (when not NULL) called on the created environment before mdb_env_open. */
int env_open_set(const char *dir, uint64_t map_size, unsigned flags, unsigned txn_flags, int named,
                 unsigned db_flags, int (*set)(MDB_env *, const char **), struct env *e, const char **call);
/* ---- the page cache (src/workload/presets/pagecache.rs): 0, or -1 with errno ---- */

/* Writes the file's dirty pages back (they cannot be dropped), then asks the kernel to drop
 * all of its pages (POSIX_FADV_DONTNEED). */
int evict_file(const char *path);
/* Reads the file's first `bytes` (UINT64_MAX: all of it), so those pages are in the page
 * cache (or, past what a memory limit holds, the last of them). */
int warm_file_head(const char *path, uint64_t bytes);
/* Drops this process's mapped pages of the file (MADV_DONTNEED over each of its ranges in
 * /proc/self/maps), so that the page cache may drop them too: a page some mapping still
 * holds is not evicted. Reads through those mappings fault the pages in again. */
int unmap_file_pages(const char *path);

/* Removes an environment's directory and its two files. */
void remove_env_dir(const char *dir);

/* A suite and its lifecycle, as src/workload/suite.rs declares it: LmdbJava's six
 * (workloads.c), each preset (presets.c). The worker asks the suite its workloads name. */
struct suite {
    const char *name;
    const char *workloads;                    /* comma-separated, in section order */
    int (*prepare)(const struct settings *s); /* writes the read database in s->dir; the exit status */
    void (*verify)(const struct settings *s); /* each read's checksum, untimed; NULL: checked in each pass */
    void (*run)(const struct settings *s);    /* times each of s->workloads, a line each */
};

/* The one suite of `all` (n of them) that every name of the comma-separated list belongs
 * to; NULL, with the Rust worker's message on stderr, for an unknown name or a mix. */
const struct suite *suite_of(const struct suite *const *all, size_t n, const char *list);

/* What a write pass left (src/workload/space.rs): the data file's size, the last page,
 * the written database's pages and depth, and the page numbers on the freelist. */
struct space { uint64_t file_size, last_page, branch_pages, leaf_pages, overflow_pages, depth, free_pages; };
/* The LMDB calls that read it: the twin's own, or a loaded library's table. */
struct space_calls {
    int (*env_info)(MDB_env *, MDB_envinfo *);
    int (*txn_begin)(MDB_env *, MDB_txn *, unsigned, MDB_txn **);
    void (*txn_abort)(MDB_txn *);
    int (*stat)(MDB_txn *, MDB_dbi, MDB_stat *);
    int (*cursor_open)(MDB_txn *, MDB_dbi, MDB_cursor **);
    int (*cursor_get)(MDB_cursor *, MDB_val *, MDB_val *, MDB_cursor_op);
    void (*cursor_close)(MDB_cursor *);
};
/* The twin's own calls (lmdb_calls.c); the paired worker fills one from each library. */
extern const struct space_calls TWIN_SPACE_CALLS;
/* The space of the open environment e in dir, in a read transaction of its own (every
 * write transaction has ended); 0, or the code with *call naming the call. */
int space_of(const struct space_calls *f, const struct env *e, const char *dir, struct space *out, const char **call);
/* Prints `,"space":[…]`, one object per pass, keyed as the Rust worker's. */
void print_space(const struct space *s, unsigned n);

/* Prints a failure as a JSON line: `what: mdb_strerror (rc)`, or `what` alone when rc is
 * 0; of a workload, or of the action when workload is NULL. Returns 1. */
int print_error(const char *workload, const char *what, int rc);
/* Prints a JSON array of numbers. */
void print_u64s(const uint64_t *a, uint64_t n);

#endif
