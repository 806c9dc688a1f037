/*
 * What a pass asks the kernel to write and sync, counted as the Rust engine counts it
 * (src/workload/iocount.rs): this program defines fdatasync, fsync, msync, write, pwrite
 * and writev, which the LMDB compiled into it calls (the C twin), or each liblmdb it loads
 * calls (the C paired worker, which exports them: src/paired_twin.rs); each counts, then
 * calls libc's.
 */
#ifndef LMDB_REGRESS_IOCOUNT_H
#define LMDB_REGRESS_IOCOUNT_H

#include <stdint.h>

/* Syncs (fdatasync, fsync, msync with MS_SYNC, a write through an O_DSYNC descriptor)
 * and bytes written, since the program began. */
struct io_mark { uint64_t syncs, bytes; };
struct io_mark io_now(void);
/* A write pass's syncs and bytes, and the transactions it committed (me_last_txnid after
 * less before). */
struct io { uint64_t syncs, bytes, commits; };
/* `,"io":[…]`, one object per pass, as the Rust worker's line holds them. */
void print_io(const struct io *io, unsigned n);
/* Forgets which descriptors sync each write: a new environment may reuse a number. */
void io_forget_descriptors(void);
/* Asks every open descriptor whether it syncs each write, once an environment is open. */
void io_learn_descriptors(void);

#endif
