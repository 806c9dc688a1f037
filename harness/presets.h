/*
 * The presets in the C twin (presets.c): tokyo-cabinet, open-get and migrate, as
 * src/workload/presets/ defines them, byte for byte and line for line of output.
 * workloads.c's worker asks the suite its workloads name (one worker path, common.c's
 * suite_of) and hands it the parsed settings.
 */
#ifndef LMDB_REGRESS_PRESETS_H
#define LMDB_REGRESS_PRESETS_H

#include "common.h"

/* The presets' suites (struct suite, common.h): each prepares its database, checks its
 * checksums inside each timed pass, and runs its workloads. */
extern const struct suite TOKYO_CABINET_SUITE, OPEN_GET_SUITE, MIGRATE_SUITE;
/* The lmdb suite (lmdb_suite.c): every row of lmdb_suite.def. */
extern const struct suite LMDB_SUITE;

#endif
