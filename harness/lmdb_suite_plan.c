/*
 * lmdb-regress C twin, the lmdb suite's plans: the data (data.rs) and the operations a
 * pass makes (ops.rs), laid out before the clock starts, byte for byte what
 * src/workload/presets/lmdb_suite/ lays out from the same seed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmdb_suite.h"

#define POOL (1u << 20)
#define MAX_VALUE (128u << 10)
#define SMALL_VALUE 100
#define DUPS 10
/* DUPREAD's RANGE: MDB_GET_BOTH_RANGE looks for this byte then zeros: duplicate 5 on. */
#define RANGE_FROM 5

/* ---- data (data.rs) ---- */

static void key_of(uint32_t i, int large, unsigned char *k) {
    char s[KEY + 1];
    if (large) snprintf(s, sizeof s, "L%015" PRIu32, i);
    else snprintf(s, sizeof s, "%016" PRIu32, i);
    memcpy(k, s, KEY);
}

static void dup_of(const struct settings *c, uint32_t i, uint32_t j, unsigned char *d) {
    uint64_t s = c->seed ^ ((uint64_t)i << 20) ^ ((uint64_t)j << 44), r = splitmix64(&s);
    memcpy(d, &r, 8);
    d[0] = (unsigned char)j;
}

static void values_init(const struct settings *c, struct value_pool *v, uint32_t size) {
    uint64_t s = c->seed;
    v->pool = xmalloc(POOL + MAX_VALUE);
    v->size = size;
    for (size_t at = 0; at < POOL + MAX_VALUE; at += 8) {
        uint64_t r = splitmix64(&s);
        memcpy(v->pool + at, &r, 8);
    }
}

enum generation { FIRST = 0, OVERWRITTEN = 1, LARGE = 2 };

static const unsigned char *value_of(const struct settings *c, const struct value_pool *v, uint32_t i, enum generation g,
                                     size_t *len) {
    uint64_t s = c->seed ^ ((uint64_t)i << 20) ^ (uint64_t)g;
    uint64_t at = splitmix64(&s), l = splitmix64(&s);
    *len = v->size ? v->size : (size_t)(8 + l % 1193);
    return v->pool + at % POOL;
}

static uint32_t *order(const struct settings *c, uint32_t n, enum keys keys) {
    uint32_t *o = xmalloc((size_t)n * sizeof *o);
    uint64_t s = c->seed ^ 0x6f72646572ull;
    for (uint32_t i = 0; i < n; i++) o[i] = i;
    if (keys == RANDOM)
        for (uint32_t i = n - 1; i >= 1; i--) {
            uint32_t j = (uint32_t)(splitmix64(&s) % ((uint64_t)i + 1)), t = o[i];
            o[i] = o[j]; o[j] = t;
        }
    return o;
}

static uint32_t touched(const struct settings *c, const struct row *r) { uint32_t m = c->entries / r->share; return m ? m : 1; }
/* Duplicates under each key (declared.rs's dups): SINGLE, one. */
static uint32_t dups_per(const struct row *r) { return r->options & SINGLE ? 1 : DUPS; }
static uint32_t dup_keys(const struct settings *c, const struct row *r) { uint32_t m = touched(c, r) / dups_per(r); return m ? m : 1; }
/* DUPDELETE: every other (key, duplicate) pair goes (declared.rs's deletes_dup). */
static int deletes_dup(const struct row *r, uint32_t i, uint32_t j) { return (i * dups_per(r) + j) % 2 == 0; }

/* DELETE: whether key i is deleted (every other, or with MOST all but every tenth). */
static int deletes(const struct row *r, uint32_t i) { return r->options & MOST ? i % 10 != 0 : i % 2 == 0; }

/* ---- operations (ops.rs) ---- */

static void ops_push(struct ops *o, const unsigned char *k, const unsigned char *v, size_t len) {
    while (o->used + KEY + len > o->cap) { o->cap = o->cap ? 2 * o->cap : 1 << 16; o->bytes = realloc(o->bytes, o->cap); if (!o->bytes) exit(3); }
    if (o->n == o->ncap) { o->ncap = o->ncap ? 2 * o->ncap : 1024; o->ends = realloc(o->ends, o->ncap * sizeof *o->ends); if (!o->ends) exit(3); }
    memcpy(o->bytes + o->used, k, KEY);
    if (len) memcpy(o->bytes + o->used + KEY, v, len);
    o->used += KEY + len;
    o->ends[o->n++] = o->used;
}

static void ops_free(struct ops *o) { free(o->bytes); free(o->ends); }

static void push_value(const struct settings *c, struct ops *o, const struct value_pool *v, uint32_t i, enum generation g) {
    unsigned char k[KEY];
    size_t len;
    const unsigned char *val = value_of(c, v, i, g, &len);
    key_of(i, g == LARGE, k);
    ops_push(o, k, val, len);
}

static void push_key(struct ops *o, uint32_t i) { unsigned char k[KEY]; key_of(i, 0, k); ops_push(o, k, NULL, 0); }

static void push_dups(const struct settings *c, struct ops *o, const struct row *r, enum keys keys) {
    uint32_t n = dup_keys(c, r), per = dups_per(r), *visit = order(c, n * per, keys);
    for (uint32_t x = 0; x < n * per; x++) {
        unsigned char k[KEY], d[8];
        key_of(visit[x] / per, 0, k);
        dup_of(c, visit[x] / per, visit[x] % per, d);
        ops_push(o, k, d, 8);
    }
    free(visit);
}

static void plan_of(const struct settings *c, struct plan *p, const struct row *r, const struct value_pool *v) {
    uint32_t m = touched(c, r), *visit = order(c, m, r->keys);
    memset(p, 0, sizeof *p);
    switch (r->shape) {
    case FILL: for (uint32_t x = 0; x < m; x++) push_value(c, &p->timed, v, visit[x], FIRST); break;
    case OVERWRITE:
        for (uint32_t i = 0; i < m; i++) push_value(c, &p->setup_puts, v, i, FIRST);
        for (uint32_t x = 0; x < m; x++) push_value(c, &p->timed, v, visit[x], OVERWRITTEN);
        break;
    case DELETE:
        for (uint32_t i = 0; i < m; i++) push_value(c, &p->setup_puts, v, i, FIRST);
        for (uint32_t x = 0; x < m; x++) if (deletes(r, visit[x])) push_key(&p->timed, visit[x]);
        break;
    case FRAGMENT: {
        struct value_pool small;
        values_init(c, &small, SMALL_VALUE);
        for (uint32_t i = 0; i < c->entries; i++) push_value(c, &p->setup_puts, &small, i, FIRST);
        for (uint32_t i = 0; i < c->entries; i += 2) push_key(&p->setup_deletes, i);
        for (uint32_t x = 0; x < m; x++) push_value(c, &p->timed, v, visit[x], LARGE);
        free(small.pool);
        break;
    }
    case DUPFILL: push_dups(c, &p->timed, r, r->keys); break;
    case DUPREAD: {
        uint32_t n = dup_keys(c, r), *keys = order(c, n, r->keys);
        unsigned char probe[8] = {RANGE_FROM}, k[KEY];
        push_dups(c, &p->setup_puts, r, SEQUENTIAL);
        for (uint32_t x = 0; x < n; x++) {
            key_of(keys[x], 0, k);
            ops_push(&p->timed, k, probe, r->options & RANGE ? 8 : 0);
        }
        free(keys);
        break;
    }
    case DUPDELETE: {
        uint32_t n = dup_keys(c, r), *keys = order(c, n, r->keys);
        push_dups(c, &p->setup_puts, r, SEQUENTIAL);
        for (uint32_t x = 0; x < n; x++)
            if (r->options & MOST) {
                if (deletes(r, keys[x])) push_key(&p->timed, keys[x]);
            } else
            for (uint32_t j = 0; j < dups_per(r); j++) {
                unsigned char k[KEY], d[8];
                if (!deletes_dup(r, keys[x], j)) continue;
                key_of(keys[x], 0, k);
                dup_of(c, keys[x], j, d);
                ops_push(&p->timed, k, d, 8);
            }
        free(keys);
        break;
    }
    case RENEW:
        for (uint32_t i = 0; i < m; i++) push_value(c, &p->setup_puts, v, i, FIRST);
        for (uint32_t x = 0; x < m; x++) push_key(&p->timed, visit[x]);
        break;
    case COPY:
        for (uint32_t i = 0; i < m; i++) push_value(c, &p->setup_puts, v, i, FIRST);
        for (uint32_t i = 0; i < m; i += 2) push_key(&p->setup_deletes, i);
        break;
    case DROP: case READERS: for (uint32_t i = 0; i < m; i++) push_value(c, &p->setup_puts, v, i, FIRST); break;
    case INCREMENTAL:
        for (uint32_t i = 0; i < m; i++) push_value(c, &p->setup_puts, v, i, FIRST);
        for (uint32_t x = 0; x < m; x++) if (visit[x] % 2 == 0) push_value(c, &p->timed, v, visit[x], OVERWRITTEN);
        break;
    }
    /* NOOVERWRITE, and DUPFILL with CURSOR (ops.rs's rewrites_in_place): the setup puts the
     * timed data first. */
    int again = (r->options & NOOVERWRITE) || (r->shape == DUPFILL && (r->options & CURSOR));
    for (size_t i = 0; again && i < p->timed.n; i++) {
        MDB_val k, d;
        ops_get(&p->timed, i, &k, &d);
        ops_push(&p->setup_puts, k.mv_data, d.mv_data, d.mv_size);
    }
    free(visit);
}

void plan_free(struct plan *p) { ops_free(&p->setup_puts); ops_free(&p->setup_deletes); ops_free(&p->timed); }

void plan_make(struct plan *p, const struct row *r, struct value_pool *v, const struct settings *c) {
    values_init(c, v, r->value);
    plan_of(c, p, r, v);
}
