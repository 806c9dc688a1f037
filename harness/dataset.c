/* LmdbJava's data in the C twin: see dataset.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "dataset.h"

/* Distinct non-negative 31-bit keys, as Rust's HashSet draws them: an open-addressing
 * set of key+1 (0 marks a free slot), at most half full. */
static void distinct_random_keys(uint32_t *keys, size_t n, uint64_t *rng) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    uint32_t *set = xmalloc(cap * sizeof *set);
    for (size_t found = 0; found < n;) {
        uint32_t k = (uint32_t)(splitmix64(rng) >> 33);
        size_t h = ((uint64_t)k * 0x9E3779B97F4A7C15ull) & (cap - 1);
        while (set[h] && set[h] != k + 1) h = (h + 1) & (cap - 1);
        if (!set[h]) { set[h] = k + 1; keys[found++] = k; }
    }
    free(set);
}

void generate(const struct settings *c, struct dataset *d) {
    d->n = c->entries;
    d->ks = c->str_keys ? 16 : 4;
    d->vs = c->value_size;
    d->str_keys = c->str_keys;
    d->random_values = c->random_values;
    d->keys = xmalloc(d->n * sizeof *d->keys);
    d->strings = NULL;
    d->pool = NULL;
    uint64_t rng = c->seed;
    if (c->random_values) {
        d->pool = xmalloc(POOL_BYTES);
        for (size_t off = 0; off < POOL_BYTES; off += 8) {
            uint64_t r = splitmix64(&rng);
            for (int b = 0; b < 8; b++) d->pool[off + b] = (unsigned char)(r >> (8 * b));
        }
    }
    if (c->random_order) distinct_random_keys(d->keys, d->n, &rng);
    else for (size_t j = 0; j < d->n; j++) d->keys[j] = (uint32_t)j;
    if (c->str_keys) {
        d->strings = xmalloc(d->n * 16 + 1);
        for (size_t j = 0; j < d->n; j++) snprintf((char *)d->strings + j * 16, 17, "%016" PRIu32, d->keys[j]);
    }
}
