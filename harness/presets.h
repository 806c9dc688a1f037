/*
 * The presets in the C twin (presets.c): tokyo-cabinet, open-get and migrate, as
 * src/workload/presets/ defines them, byte for byte and line for line of output.
 * workloads.c hands them the parsed settings (common.c) and, when --workloads names a
 * preset's workloads, the whole action.
 */
#ifndef LMDB_REGRESS_PRESETS_H
#define LMDB_REGRESS_PRESETS_H

#include "common.h"

/* 1 if the comma-separated list names a preset's workloads, 0 if LmdbJava's; a mix exits with status 2. */
int presets_selected(const char *workloads);
/* Runs `prepare` or `run` for the preset s->workloads names; returns the exit status. */
int presets_main(const char *action, const struct settings *s);

#endif
