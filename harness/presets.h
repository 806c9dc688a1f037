/*
 * The presets in the C twin (presets.c): tokyo-cabinet, open-get and migrate, as
 * src/workload/presets/ defines them, byte for byte and line for line of output.
 * workloads.c hands them their options and, when --workloads names a preset's
 * workloads, the whole action.
 */
#ifndef LMDB_REGRESS_PRESETS_H
#define LMDB_REGRESS_PRESETS_H

#include <stdint.h>

/* The generator both engines draw every random byte from (workloads.c). */
uint64_t splitmix64(uint64_t *s);

/* A preset option without a value (--preset-writemap, --preset-sync, --migrate-append): 1 if taken. */
int presets_flag(const char *arg);
/* A preset option with a value: 1 if taken; a bad value exits with status 2. */
int presets_option(const char *arg, const char *value);
/* 1 if the comma-separated list names a preset's workloads, 0 if LmdbJava's; a mix exits with status 2. */
int presets_selected(const char *workloads);
/* Runs `prepare` or `run` for the preset the list names; returns the exit status. */
int presets_main(const char *action, const char *dir, const char *scratch, const char *workloads,
                 unsigned iterations, uint64_t seed);

#endif
