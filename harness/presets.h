/*
 * The presets in the C twin (presets.c): tokyo-cabinet, open-get and migrate, as
 * src/workload/presets/ defines them, byte for byte and line for line of output.
 * workloads.c runs every action (one worker path) and hands the presets' workloads,
 * with the parsed settings (common.c), to these.
 */
#ifndef LMDB_REGRESS_PRESETS_H
#define LMDB_REGRESS_PRESETS_H

#include "common.h"

/* 1 if the comma-separated list names a preset's workloads, 0 if LmdbJava's; a mix exits with status 2. */
int presets_selected(const char *workloads);
/* `prepare`: writes the database of the preset s->workloads names; the exit status. */
int presets_prepare(const struct settings *s);
/* `run`: times preset workload w and prints its line. */
void presets_run(const char *w, const struct settings *s);

#endif
