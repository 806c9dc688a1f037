/*
 * LmdbJava's data in the C twin, as src/workload/dataset.rs generates it (dataset.c):
 * the keys in write order, their strings, the value pool, and the reused key and value
 * buffers the timed loops fill. Shared by the twin (workloads.c) and its paired worker
 * (paired.c), so both write and read the same entries in the same order.
 */
#ifndef LMDB_REGRESS_DATASET_H
#define LMDB_REGRESS_DATASET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

#define POOL_BYTES (1u << 20)

/* As src/workload/dataset.rs: keys in write order, their strings, and the value pool. */
struct dataset {
    size_t ks, vs, n;
    int str_keys, random_values;
    uint32_t *keys;         /* integer keys in write order */
    unsigned char *strings; /* 16 bytes per key, for string keys */
    unsigned char *pool;    /* POOL_BYTES, for random values */
};

/* The same data as Dataset::generate: the pool first, then the keys, from one generator. */
void generate(const struct settings *c, struct dataset *d);

static inline const unsigned char *key_bytes(const struct dataset *d, size_t j) {
    return d->str_keys ? d->strings + j * 16 : (const unsigned char *)&d->keys[j];
}

/* Key j into the reused key buffer: fixed-size copies, inlined, as KeyBuffer::fill. */
static inline void fill_key(const struct dataset *d, unsigned char *key, size_t j) {
    if (d->str_keys) memcpy(key, d->strings + j * 16, 16);
    else memcpy(key, &d->keys[j], 4);
}

/* One reused value buffer, filled in write order as LmdbJava's writer fills rwVal. */
struct values { unsigned char *buf; size_t pool_offset; };

static inline const unsigned char *fill_value(const struct dataset *d, struct values *v, size_t j) {
    if (d->random_values) {
        memcpy(v->buf, d->pool + v->pool_offset, d->vs);
        v->pool_offset += d->vs;
        if (v->pool_offset >= POOL_BYTES - d->vs) v->pool_offset = 0;
    } else {
        memcpy(v->buf, &d->keys[j], 4); /* a fixed-size store: validate() ensures 4 bytes */
    }
    return v->buf;
}

#endif
