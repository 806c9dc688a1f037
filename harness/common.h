/*
 * What the C twin's two halves share (common.c): allocation, the clock, the generator,
 * opening an environment, the JSON lines' error and number lists, the suites' one
 * structure and the choice among them, and the worker's
 * settings: every option, parsed once, and the presets' defaults filled in (as
 * WorkloadConfig and PresetConfig::resolve in src/workload/).
 */
#ifndef LMDB_REGRESS_COMMON_H
#define LMDB_REGRESS_COMMON_H

#include <stdint.h>
#include <time.h>

#include "lmdb.h"

/* The presets' options; 0 in a `have_` field means "the preset's default" (resolve_preset). */
struct preset_settings {
    uint32_t entries, max_value, cycles, key;
    uint64_t map_size, seed;
    int have_entries, have_key, writemap, sync, append;
};

/* Every worker option: the action's arguments, LmdbJava's configuration, the presets'. */
struct settings {
    const char *dir, *scratch, *workloads;
    unsigned iterations;
    uint32_t entries, value_size;
    int str_keys, random_order, random_values, writemap, nosync;
    uint64_t seed, map_size;
    struct preset_settings preset;
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

/* The generator both engines draw every random byte from (SplitMix64 in dataset.rs). */
uint64_t splitmix64(uint64_t *s);

/* Parses the options after the action into s (defaults first); 0, with a message on
 * stderr, if one is bad. The workload names are the caller's to check. */
int parse_settings(int argc, char **argv, struct settings *s);
/* Fills the preset's defaults (tokyo-cabinet's when `tokyo_cabinet`) and checks them;
 * a bad value exits with status 2. */
void resolve_preset(struct preset_settings *p, int tokyo_cabinet);

struct env { MDB_env *env; MDB_dbi dbi; };

/* mdb_env_open's flags: MDB_WRITEMAP with writemap, MDB_NOSYNC without sync. */
unsigned env_flags(int writemap, int sync);
/* Opens the environment in dir and its database, creating both unless flags has
 * MDB_RDONLY: "db" with db_flags as LmdbJava opens it (one named database, two readers)
 * when `named`, else the unnamed one. On failure *call names the call, the environment
 * is closed, and the code is returned. */
int env_open(const char *dir, uint64_t map_size, unsigned flags, int named, unsigned db_flags, struct env *e,
             const char **call);
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

/* Prints a failure as a JSON line: `what: mdb_strerror (rc)`, or `what` alone when rc is
 * 0; of a workload, or of the action when workload is NULL. Returns 1. */
int print_error(const char *workload, const char *what, int rc);
/* Prints a JSON array of numbers. */
void print_u64s(const uint64_t *a, uint64_t n);

#endif
