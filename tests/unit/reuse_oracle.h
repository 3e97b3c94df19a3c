/*
 * reuse_oracle.h — what the reuse tests share: a brute-force LRU stack (the
 * oracle every engine is checked against) and a bin-by-bin histogram
 * comparison. Header-only; include after <cmocka.h>.
 */
#ifndef PES_TEST_REUSE_ORACLE_H
#define PES_TEST_REUSE_ORACLE_H

#include <stdint.h>
#include <string.h>

#include "histogram.h"
#include "reuse_distance.h"

/* LRU stack as an array, most recent first: the distance is the position.
 * O(N*M); keys must hold one slot per distinct key. */
struct lru {
    uint64_t *keys;
    size_t n;
};

/* The distance key would have now, the stack left as it is. */
static inline uint64_t lru_peek(const struct lru *s, uint64_t key)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->keys[i] == key)
            return i;
    return PES_REUSE_COLD;
}

static inline uint64_t lru_push(struct lru *s, uint64_t key)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        if (s->keys[i] == key)
            break;
    uint64_t d = i < s->n ? i : PES_REUSE_COLD;
    if (i == s->n)
        s->n++;
    memmove(&s->keys[1], &s->keys[0], i * sizeof *s->keys);
    s->keys[0] = key;
    return d;
}

/* Every bin, the cold and total counts and the distance sum equal. */
static inline void assert_hist_equal(const struct pes_rd_hist *a, const struct pes_rd_hist *b)
{
    assert_int_equal(a->exact_limit, b->exact_limit);
    for (uint64_t d = 0; d < a->exact_limit; d++)
        assert_int_equal(pes_rd_hist_exact(a, d), pes_rd_hist_exact(b, d));
    for (int k = 0; k < PES_RD_HIST_LOG2_BINS; k++)
        assert_int_equal(a->log2[k], b->log2[k]);
    assert_int_equal(a->cold, b->cold);
    assert_int_equal(a->total, b->total);
    assert_true(a->sum == b->sum);
}

#endif
