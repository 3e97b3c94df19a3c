/* test_reuse_distance.c — exact reuse distance engine, histograms and PRD/CRD
 * profiles against hand-derived answers (PPT-Multicore Tables 1-3) and a
 * brute-force LRU stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "histogram.h"
#include "profiles.h"
#include "reuse_distance.h"
#include "reuse_oracle.h"

#define COLD PES_REUSE_COLD

/* ---------------------------------------------------------- brute force */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---------------------------------------------------------- Table 1 / 2 */

/* PPT-Multicore Table 1: w x w y x z z w -> inf inf 1 inf 2 inf 0 3. */
static void test_table1(void **state)
{
    (void)state;
    struct pes_reuse_options o = {.granule = 64};
    struct pes_reuse *e = pes_reuse_create(&o, NULL);
    assert_non_null(e);
    const uint64_t w = 0, x = 64, y = 128, z = 192;
    const uint64_t trace[8] = {w, x, w, y, x, z, z, w};
    const uint64_t want[8] = {COLD, COLD, 1, COLD, 2, COLD, 0, 3};
    for (int i = 0; i < 8; i++) {
        uint64_t d;
        assert_int_equal(pes_reuse_push(e, trace[i] + 5, &d), 0); /* +5: same line */
        assert_true(d == want[i]);
    }
    assert_int_equal(pes_reuse_distinct(e), 4);
    pes_reuse_destroy(e);
}

/* Table 2: the profile of Table 1 is 1,1,1,1 at D = 0..3 and 4 cold. */
static void test_table2_profile(void **state)
{
    (void)state;
    struct pes_profiles_options o = {.granule = 8, .n_streams = 1};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    const uint64_t trace[8] = {'w' * 8, 'x' * 8, 'w' * 8, 'y' * 8,
                               'x' * 8, 'z' * 8, 'z' * 8, 'w' * 8};
    for (int i = 0; i < 8; i++)
        assert_int_equal(pes_profiles_push(p, 0, trace[i], 8, 0, NULL, NULL, NULL), 0);
    const struct pes_rd_hist *h = pes_profiles_prd(p, 0);
    assert_int_equal(h->total, 8);
    assert_int_equal(h->cold, 4);
    for (int d = 0; d < 4; d++)
        assert_int_equal(pes_rd_hist_exact(h, d), 1);
    assert_int_equal(pes_rd_hist_exact(h, 4), 0);
    assert_true(pes_rd_hist_mean(h) == 1.5); /* (0+1+2+3)/4 */
    /* fully associative cache of 4 lines: all 4 reuses hit (paper §2.3) */
    assert_true(pes_rd_hist_below(h, 4) == 4.0);
    assert_true(pes_rd_hist_below(h, 2) == 2.0);
    assert_null(pes_profiles_crd(p, 0)); /* no groups asked */
    pes_profiles_destroy(p);
}

/* ---------------------------------------------------------- Table 3 */

/* Two cores sharing a cache; distances worked out by hand from Table 3:
 *   time   1 2 3 4 5 6 7 8 9 10
 *   core   1 2 1 1 1 2 2 1 1 1
 *   addr   u w v u y x v x u v
 * CRD (one stack, all):  inf inf inf 2 inf inf 3 1 3 2
 *   u@4: {w,v}=2 > PRD 1 (dilation); u@9: {y,x,v}=3 though 4 references lie
 *   between (overlap: x from both cores); v@10: {x,u}=2 < PRD 3 (v shared).
 * PRD core 1 (u v u y x u v): inf inf 1 inf inf 2 3; core 2 (w x v): all inf. */
static void test_table3_concurrent(void **state)
{
    (void)state;
    struct pes_profiles_options o = {.granule = 64, .n_streams = 2, .n_groups = 1};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    const char addr[10] = {'u', 'w', 'v', 'u', 'y', 'x', 'v', 'x', 'u', 'v'};
    const uint32_t core[10] = {0, 1, 0, 0, 0, 1, 1, 0, 0, 0};
    const uint64_t crd[10] = {COLD, COLD, COLD, 2, COLD, COLD, 3, 1, 3, 2};
    const uint64_t prd[10] = {COLD, COLD, COLD, 1, COLD, COLD, COLD, COLD, 2, 3};
    for (int i = 0; i < 10; i++) {
        uint64_t dp, dc;
        assert_int_equal(
            pes_profiles_push(p, core[i], (uint64_t)addr[i] * 64, 4, 0, &dp, &dc, NULL), 0);
        assert_true(dp == prd[i]);
        assert_true(dc == crd[i]);
    }
    const struct pes_rd_hist *c = pes_profiles_crd(p, 0);
    assert_int_equal(c->total, 10);
    assert_int_equal(c->cold, 5);
    assert_int_equal(pes_rd_hist_exact(c, 1), 1);
    assert_int_equal(pes_rd_hist_exact(c, 2), 2);
    assert_int_equal(pes_rd_hist_exact(c, 3), 2);
    const struct pes_rd_hist *p0 = pes_profiles_prd(p, 0), *p1 = pes_profiles_prd(p, 1);
    assert_int_equal(p0->total, 7);
    assert_int_equal(p0->cold, 4);
    assert_int_equal(p1->total, 3);
    assert_int_equal(p1->cold, 3);
    struct pes_rd_hist all;
    assert_int_equal(pes_rd_hist_init(&all, 0, NULL), 0);
    assert_int_equal(pes_profiles_prd_total(p, &all), 0);
    assert_int_equal(all.total, 10);
    assert_int_equal(all.cold, 7);
    pes_rd_hist_free(&all);
    pes_profiles_destroy(p);
}

/* Two shared caches (sockets): streams 0,1 -> cache 0, streams 2,3 -> cache 1,
 * stream 4 private only. Each cache sees only its own streams' accesses. */
static void test_two_groups(void **state)
{
    (void)state;
    const uint32_t group_of[5] = {0, 0, 1, 1, PES_PROFILES_NO_GROUP};
    struct pes_profiles_options o = {
        .granule = 64, .n_streams = 5, .n_groups = 2, .group_of = group_of};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    const uint64_t A = 0, B = 64, C = 128;
    /* (stream, addr) -> expected (PRD, CRD) */
    const struct {
        uint32_t st;
        uint64_t a, prd, crd;
    } steps[] = {
        {0, A, COLD, COLD}, {2, A, COLD, COLD},                     /* cache 1 has not seen A */
        {1, B, COLD, COLD}, {3, C, COLD, COLD}, {4, B, COLD, COLD}, /* no shared cache */
        {0, A, 0, 1},    /* cache 0: A B A; C and stream 4 elsewhere */
        {3, A, COLD, 1}, /* cache 1: A C A */
    };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        uint64_t dp, dc;
        assert_int_equal(pes_profiles_push(p, steps[i].st, steps[i].a, 8, 0, &dp, &dc, NULL), 0);
        assert_true(dp == steps[i].prd);
        assert_true(dc == steps[i].crd);
    }
    assert_int_equal(pes_profiles_crd(p, 0)->total, 3);
    assert_int_equal(pes_profiles_crd(p, 1)->total, 3);
    assert_null(pes_profiles_crd(p, 2));
    assert_int_equal(pes_profiles_groups(p), 2);
    pes_profiles_destroy(p);
}

/* ---------------------------------------------------------- random vs brute force */

static void check_random(uint64_t seed, size_t n, uint64_t space, uint32_t granule,
                         uint32_t min_window, int strided)
{
    struct pes_reuse_options o = {.granule = granule, .min_window = min_window};
    struct pes_reuse *e = pes_reuse_create(&o, NULL);
    assert_non_null(e);
    struct lru s = {calloc(n, sizeof(uint64_t)), 0};
    assert_non_null(s.keys);
    unsigned shift = (unsigned)__builtin_ctz(granule);
    uint64_t st = seed * 2654435761u + 1, base = 0x7f0000000000u;
    for (size_t i = 0; i < n; i++) {
        uint64_t a;
        if (strided) /* sweeps with a random restart: long and short reuses */
            a = (i % 7 == 0) ? rng_next(&st) % space : (i * 8) % space;
        else
            a = rng_next(&st) % space;
        a += base;
        uint64_t d;
        /* a peek at another key (rt_truth's reuse of a watched use) leaves the stack alone */
        uint64_t other = (rng_next(&st) % space + base) >> shift;
        assert_int_equal(pes_reuse_peek_key(e, other, &d), 0);
        if (d != lru_peek(&s, other))
            fail_msg("seed %llu step %zu peek %llx: got %llu want %llu", (unsigned long long)seed,
                     i, (unsigned long long)other, (unsigned long long)d,
                     (unsigned long long)lru_peek(&s, other));
        assert_int_equal(pes_reuse_push(e, a, &d), 0);
        uint64_t want = lru_push(&s, a >> shift);
        if (d != want)
            fail_msg("seed %llu step %zu addr %llx: got %llu want %llu", (unsigned long long)seed,
                     i, (unsigned long long)a, (unsigned long long)d, (unsigned long long)want);
    }
    assert_int_equal(pes_reuse_distinct(e), s.n);
    if (min_window && min_window < n / 4)
        assert_true(pes_reuse_compactions(e) > 0);
    free(s.keys);
    pes_reuse_destroy(e);
}

static void test_random_small_space(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        check_random(seed, 20000, 16, 1, 0, 0);
        check_random(seed, 20000, 200, 1, 64, 0); /* tiny window: constant compaction */
        check_random(seed, 20000, 2000, 8, 128, 0);
        check_random(seed, 20000, 64 * 300, 64, 0, 0);
    }
}

static void test_random_large_space(void **state)
{
    (void)state;
    for (uint64_t seed = 11; seed <= 13; seed++) {
        check_random(seed, 6000, UINT64_C(1) << 20, 1, 0, 0); /* mostly cold */
        check_random(seed, 6000, 3000 * 8, 8, 640, 0);        /* distances span many words */
        check_random(seed, 6000, 4000 * 64, 64, 1024, 1);
        check_random(seed, 6000, 2500, 1, 64, 1);
    }
}

/* A key that stays on top of the stack gets distance 0 without moving time. */
static void test_repeats_and_long_run(void **state)
{
    (void)state;
    struct pes_reuse_options o = {.granule = 1, .min_window = 64};
    struct pes_reuse *e = pes_reuse_create(&o, NULL);
    assert_non_null(e);
    uint64_t d;
    for (int round = 0; round < 1000; round++)
        for (uint64_t k = 0; k < 50; k++)
            for (int rep = 0; rep < 3; rep++) {
                assert_int_equal(pes_reuse_push_key(e, k, &d), 0);
                if (rep > 0)
                    assert_true(d == 0);
                else if (round == 0)
                    assert_true(d == COLD);
                else
                    assert_true(d == 49); /* cyclic sweep over 50 keys */
            }
    assert_true(pes_reuse_compactions(e) > 100);
    assert_true(pes_reuse_memory(e) < 64 * 1024); /* O(distinct), not O(trace) */
    pes_reuse_destroy(e);
}

/* Analytic ground truth on a table big enough for the huge-page path and the
 * tree (not popcount) path: a cyclic sweep over K keys has distance K-1 after
 * the first round; sweeping back down, key k has distance K-1-k. The batch
 * API must agree with one-at-a-time pushes. */
static void test_sweeps_batch(void **state)
{
    (void)state;
    enum { K = 400000 };
    struct pes_reuse_options o = {.granule = 8};
    struct pes_reuse *e = pes_reuse_create(&o, NULL);
    struct pes_reuse *one = pes_reuse_create(&o, NULL);
    assert_non_null(e);
    assert_non_null(one);
    uint64_t *addr = malloc(K * sizeof *addr), *dist = malloc(K * sizeof *dist);
    assert_non_null(addr);
    assert_non_null(dist);
    for (int round = 0; round < 3; round++) {
        for (uint64_t k = 0; k < K; k++)
            addr[k] = 0x5000000 + 8 * k;
        assert_int_equal(pes_reuse_push_batch(e, addr, K, dist), 0);
        for (uint64_t k = 0; k < K; k++) {
            uint64_t d1;
            assert_int_equal(pes_reuse_push(one, addr[k], &d1), 0);
            if (dist[k] != (round == 0 ? COLD : K - 1) || d1 != dist[k])
                fail_msg("round %d key %llu: batch %llu single %llu", round, (unsigned long long)k,
                         (unsigned long long)dist[k], (unsigned long long)d1);
        }
    }
    for (uint64_t k = 0; k < K; k++)
        addr[k] = 0x5000000 + 8 * (K - 1 - k);
    assert_int_equal(pes_reuse_push_batch(e, addr, K, dist), 0);
    for (uint64_t i = 0; i < K; i++)
        if (dist[i] != i) /* key K-1-i: K-1-(K-1-i) = i */
            fail_msg("down sweep %llu: got %llu", (unsigned long long)i,
                     (unsigned long long)dist[i]);
    assert_int_equal(pes_reuse_distinct(e), K);
    free(addr);
    free(dist);
    pes_reuse_destroy(e);
    pes_reuse_destroy(one);
}

static void test_bad_options(void **state)
{
    (void)state;
    struct pes_error err = {0};
    struct pes_reuse_options o = {.granule = 48};
    assert_null(pes_reuse_create(&o, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_non_null(strstr(err.message, "power of two"));

    struct pes_profiles_options po = {.n_streams = 0};
    assert_null(pes_profiles_create(&po, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    uint32_t groups[2] = {0, 5};
    struct pes_profiles_options po2 = {.n_streams = 2, .n_groups = 1, .group_of = groups};
    assert_null(pes_profiles_create(&po2, &err));
    assert_int_equal(err.code, PES_ERR_ARG);

    /* fails midway (second histogram): the partial object is torn down */
    struct pes_profiles_options po4 = {
        .n_streams = 3, .n_groups = 1, .exact_limit = UINT64_C(1) << 30};
    assert_null(pes_profiles_create(&po4, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    struct pes_profiles_options po5 = {.n_streams = 2, .granule = 3};
    assert_null(pes_profiles_create(&po5, &err));
    assert_int_equal(err.code, PES_ERR_ARG);

    struct pes_profiles_options po3 = {.n_streams = 1};
    struct pes_profiles *p = pes_profiles_create(&po3, NULL);
    assert_non_null(p);
    assert_int_equal(pes_profiles_push(p, 3, 0, 8, 0, NULL, NULL, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    pes_profiles_destroy(p);
}

/* ---------------------------------------------------------- ranges, histogram, sites */

static void test_ranges(void **state)
{
    (void)state;
    struct pes_profiles_options o = {.granule = 64, .n_streams = 1};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    uint64_t d;
    /* 8 bytes at 60 touch lines 0 and 1: two cold accesses */
    assert_int_equal(pes_profiles_push(p, 0, 60, 8, 0, &d, NULL, NULL), 0);
    assert_true(d == COLD);
    assert_int_equal(pes_profiles_prd(p, 0)->total, 2);
    assert_int_equal(pes_profiles_push(p, 0, 64, 1, 0, &d, NULL, NULL), 0);
    assert_true(d == 0);
    assert_int_equal(pes_profiles_push(p, 0, 0, 1, 0, &d, NULL, NULL), 0);
    assert_true(d == 1);
    /* a 256-byte memcpy range from line 0: lines 0,1,2,3 -> 0, 1, cold, cold */
    assert_int_equal(pes_profiles_push(p, 0, 0, 256, 0, &d, NULL, NULL), 0);
    const struct pes_rd_hist *h = pes_profiles_prd(p, 0);
    assert_int_equal(h->total, 8);
    assert_int_equal(h->cold, 4);
    assert_int_equal(pes_rd_hist_exact(h, 0), 2);
    assert_int_equal(pes_rd_hist_exact(h, 1), 2);
    /* size 0 touches nothing; a range at the top of the space does not wrap */
    assert_int_equal(pes_profiles_push(p, 0, 128, 0, 0, NULL, NULL, NULL), 0);
    assert_int_equal(h->total, 8);
    assert_int_equal(pes_profiles_push(p, 0, UINT64_MAX - 3, 64, 0, NULL, NULL, NULL), 0);
    assert_int_equal(h->total, 9);
    pes_profiles_destroy(p);
}

static void test_histogram_bins(void **state)
{
    (void)state;
    struct pes_rd_hist h;
    assert_int_equal(pes_rd_hist_init(&h, 100, NULL), 0);
    assert_int_equal(h.exact_limit, 128); /* rounded up to a power of two */
    pes_rd_hist_add(&h, 0);
    pes_rd_hist_add(&h, 127);
    pes_rd_hist_add(&h, 128); /* bin 7: [128, 256) */
    pes_rd_hist_add(&h, 255);
    pes_rd_hist_add(&h, 256);            /* bin 8 */
    pes_rd_hist_add(&h, UINT64_MAX - 1); /* bin 63 */
    pes_rd_hist_add(&h, COLD);
    assert_int_equal(pes_rd_hist_exact(&h, 0), 1);
    assert_int_equal(pes_rd_hist_exact(&h, 127), 1);
    assert_int_equal(h.log2[7], 2);
    assert_int_equal(h.log2[8], 1);
    assert_int_equal(h.log2[63], 1);
    assert_int_equal(h.cold, 1);
    assert_int_equal(h.total, 7);
    assert_true(pes_rd_hist_below(&h, 128) == 2.0);
    assert_true(pes_rd_hist_below(&h, 256) == 4.0);
    assert_true(pes_rd_hist_below(&h, 192) == 3.0); /* half of bin 7, uniform split */
    struct pes_rd_hist g;
    assert_int_equal(pes_rd_hist_init(&g, 128, NULL), 0);
    assert_int_equal(pes_rd_hist_merge(&g, &h), 0);
    assert_int_equal(pes_rd_hist_merge(&g, &h), 0);
    assert_int_equal(g.log2[7], 4);
    assert_int_equal(g.total, 14);
    struct pes_rd_hist k;
    assert_int_equal(pes_rd_hist_init(&k, 16, NULL), 0);
    assert_int_equal(pes_rd_hist_merge(&k, &h), -1);
    pes_rd_hist_free(&k);
    pes_rd_hist_free(&g);
    pes_rd_hist_free(&h);
}

/* Adapter to the model's fixed layout: exact 0..1023, log2 bins 2^10..2^47. */
static void test_to_model_profile(void **state)
{
    (void)state;
    struct pes_rd_hist h;
    struct pes_reuse_profile *m = malloc(sizeof *m);
    assert_non_null(m);
    assert_int_equal(pes_rd_hist_init(&h, 4096, NULL), 0);
    pes_rd_hist_add(&h, 3);
    pes_rd_hist_add(&h, 1023);
    pes_rd_hist_add(&h, 1024); /* exact here, model bin 2^10 */
    pes_rd_hist_add(&h, 2047);
    pes_rd_hist_add(&h, 3000);              /* model bin 2^11 */
    pes_rd_hist_add(&h, 5000);              /* our log2 bin 12 */
    pes_rd_hist_add(&h, UINT64_C(1) << 50); /* clamped into 2^47 */
    pes_rd_hist_add(&h, COLD);
    assert_int_equal(pes_rd_hist_to_profile(&h, m), 0);
    assert_int_equal(m->exact[3], 1);
    assert_int_equal(m->exact[1023], 1);
    assert_int_equal(m->log2[0], 2);
    assert_int_equal(m->log2[1], 1);
    assert_int_equal(m->log2[2], 1);
    assert_int_equal(m->log2[PES_PROFILE_LOG2_BINS - 1], 1);
    assert_int_equal(m->cold, 1);
    uint64_t sum = m->cold;
    for (unsigned i = 0; i < PES_PROFILE_EXACT; i++)
        sum += m->exact[i];
    for (unsigned i = 0; i < PES_PROFILE_LOG2_BINS; i++)
        sum += m->log2[i];
    assert_int_equal(sum, h.total);
    pes_rd_hist_free(&h);
    assert_int_equal(pes_rd_hist_init(&h, 512, NULL), 0);
    assert_int_equal(pes_rd_hist_to_profile(&h, m), -1); /* cannot invent exact bins */
    pes_rd_hist_free(&h);
    free(m);
}

static void test_per_site(void **state)
{
    (void)state;
    struct pes_profiles_options o = {.granule = 64, .n_streams = 2, .n_groups = 1, .per_site = 1};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    /* site 7 on core 0: a b a (PRD inf inf 1); site 9 on core 1: a (PRD inf),
     * then core 0 site 7: a.  CRD of the pushes: inf inf 1 0 0;  PRD of the last: 0 */
    assert_int_equal(pes_profiles_push(p, 0, 0, 8, 7, NULL, NULL, NULL), 0);
    assert_int_equal(pes_profiles_push(p, 0, 64, 8, 7, NULL, NULL, NULL), 0);
    assert_int_equal(pes_profiles_push(p, 0, 0, 8, 7, NULL, NULL, NULL), 0);
    assert_int_equal(pes_profiles_push(p, 1, 0, 8, 9, NULL, NULL, NULL), 0);
    assert_int_equal(pes_profiles_push(p, 0, 0, 8, 7, NULL, NULL, NULL), 0);
    /* many more sites force the site table to grow */
    for (uint32_t s = 100; s < 1100; s++)
        assert_int_equal(pes_profiles_push(p, 1, 4096, 8, s, NULL, NULL, NULL), 0);
    size_t n;
    const struct pes_site_reuse *rows = pes_profiles_sites(p, &n);
    assert_int_equal(n, 1002);
    assert_int_equal(rows[0].site, 7);
    assert_int_equal(rows[0].accesses, 4);
    assert_int_equal(rows[0].prd_cold, 2);
    assert_true(rows[0].prd_sum == 1.0);
    assert_int_equal(rows[0].crd_cold, 2);
    assert_true(rows[0].crd_sum == 1.0);
    assert_int_equal(rows[1].site, 9);
    assert_int_equal(rows[1].accesses, 1);
    assert_int_equal(rows[1].prd_cold, 1);
    assert_int_equal(rows[1].crd_cold, 0);
    assert_int_equal(rows[2].site, 100);
    assert_int_equal(rows[2].prd_cold, 0 + 1);
    assert_int_equal(rows[3].site, 101);
    assert_int_equal(rows[3].prd_cold, 0);
    pes_profiles_destroy(p);
}

/* pes_profiles_push_batch against brute-force LRU stacks: 3 streams on 2
 * shared caches, many ranges over several lines, empty accesses, site ids in the
 * flat range, far beyond it and UINT32_MAX; batches of random sizes. */
enum { BT_N = 6000, BT_SITES = 5 };
static void test_batch_vs_brute(void **state)
{
    (void)state;
    const uint32_t group_of[3] = {0, 0, 1};
    struct pes_profiles_options o = {.granule = 64,
                                     .n_streams = 3,
                                     .n_groups = 2,
                                     .group_of = group_of,
                                     .per_site = 1,
                                     .min_window = 64};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    const uint32_t site_ids[BT_SITES] = {0, 3, 1u << 23, 17, UINT32_MAX};
    static uint32_t st[BT_N], sz[BT_N], si[BT_N];
    static uint64_t ad[BT_N];
    uint64_t seed = 77;
    for (size_t i = 0; i < BT_N; i++) {
        st[i] = (uint32_t)(rng_next(&seed) % 3);
        ad[i] = rng_next(&seed) % (300 * 64);
        sz[i] = (uint32_t)(rng_next(&seed) % 2 == 0 ? rng_next(&seed) % 1000 : 8);
        si[i] = site_ids[rng_next(&seed) % BT_SITES];
    }
    for (size_t i = 0; i < BT_N;) {
        /* one big batch first: its ranges outgrow the lanes' first allocation */
        size_t k = i == 0 ? 5000 : 1 + rng_next(&seed) % 300;
        if (k > BT_N - i)
            k = BT_N - i;
        assert_int_equal(pes_profiles_push_batch(p, st + i, ad + i, sz + i, si + i, k, NULL), 0);
        i += k;
    }
    /* brute force */
    struct lru prd[3], crd[2];
    for (int k = 0; k < 3; k++)
        prd[k] = (struct lru){calloc(400, sizeof(uint64_t)), 0};
    for (int k = 0; k < 2; k++)
        crd[k] = (struct lru){calloc(400, sizeof(uint64_t)), 0};
    uint64_t pcold[3] = {0}, ptot[3] = {0}, ccold[2] = {0}, ctot[2] = {0};
    double psum[3] = {0}, csum[2] = {0};
    uint64_t s_acc[BT_SITES] = {0}, s_pc[BT_SITES] = {0}, s_cc[BT_SITES] = {0};
    double s_ps[BT_SITES] = {0}, s_cs[BT_SITES] = {0};
    for (size_t i = 0; i < BT_N; i++) {
        if (sz[i] == 0)
            continue;
        size_t w = 0;
        while (site_ids[w] != si[i])
            w++;
        for (uint64_t line = ad[i] / 64; line <= (ad[i] + sz[i] - 1) / 64; line++) {
            uint64_t d = lru_push(&prd[st[i]], line);
            ptot[st[i]]++;
            s_acc[w]++;
            if (d == COLD) {
                pcold[st[i]]++;
                s_pc[w]++;
            } else {
                psum[st[i]] += (double)d;
                s_ps[w] += (double)d;
            }
            uint32_t g = group_of[st[i]];
            d = lru_push(&crd[g], line);
            ctot[g]++;
            if (d == COLD) {
                ccold[g]++;
                s_cc[w]++;
            } else {
                csum[g] += (double)d;
                s_cs[w] += (double)d;
            }
        }
    }
    for (int k = 0; k < 3; k++) {
        const struct pes_rd_hist *h = pes_profiles_prd(p, (uint32_t)k);
        assert_int_equal(h->total, ptot[k]);
        assert_int_equal(h->cold, pcold[k]);
        assert_true(h->sum == psum[k]);
        free(prd[k].keys);
    }
    for (int k = 0; k < 2; k++) {
        const struct pes_rd_hist *h = pes_profiles_crd(p, (uint32_t)k);
        assert_int_equal(h->total, ctot[k]);
        assert_int_equal(h->cold, ccold[k]);
        assert_true(h->sum == csum[k]);
        free(crd[k].keys);
    }
    size_t nrows;
    const struct pes_site_reuse *rows = pes_profiles_sites(p, &nrows);
    assert_int_equal(nrows, BT_SITES);
    for (size_t r = 0; r < nrows; r++) {
        size_t w = 0;
        uint32_t want = rows[r].site == UINT32_MAX - 1 ? UINT32_MAX : rows[r].site;
        while (w < BT_SITES && site_ids[w] != want)
            w++;
        assert_true(w < BT_SITES);
        assert_int_equal(rows[r].accesses, s_acc[w]);
        assert_int_equal(rows[r].prd_cold, s_pc[w]);
        assert_int_equal(rows[r].crd_cold, s_cc[w]);
        assert_true(rows[r].prd_sum == s_ps[w]);
        assert_true(rows[r].crd_sum == s_cs[w]);
    }
    /* a bad stream index is rejected before anything is applied */
    struct pes_error err;
    uint32_t bad[2] = {0, 3};
    assert_int_equal(pes_profiles_push_batch(p, bad, ad, sz, si, 2, &err), -1);
    assert_int_equal(pes_profiles_prd(p, 0)->total, ptot[0]);
    pes_profiles_destroy(p);
}

/* Batches whose granules overflow the shared scratch (drained mid-batch),
 * a stream in no group, two groups, and a stream ended halfway: every exact
 * and log2 bin of every PRD and CRD equals brute-force LRU stacks; the ended
 * stream keeps its histogram and refuses further accesses, as does every
 * stream after pes_profiles_finish. */
enum { BD_N = 3000, BD_STREAMS = 4 };
struct bd_hist {
    uint64_t exact[1024], log2[64], cold, total;
};
static void bd_add(struct bd_hist *h, uint64_t d)
{
    h->total++;
    if (d == COLD)
        h->cold++;
    else if (d < 1024)
        h->exact[d]++;
    else
        h->log2[63 - __builtin_clzll(d)]++;
}
static void bd_check(const struct pes_rd_hist *h, const struct bd_hist *want)
{
    assert_int_equal(h->total, want->total);
    assert_int_equal(h->cold, want->cold);
    assert_int_equal(h->exact_limit, 1024);
    for (uint64_t d = 0; d < 1024; d++)
        assert_int_equal(pes_rd_hist_exact(h, d), want->exact[d]);
    for (int b = 0; b < 64; b++)
        assert_int_equal(h->log2[b], want->log2[b]);
}

static void test_batch_drains_and_ends(void **state)
{
    (void)state;
    const uint32_t group_of[BD_STREAMS] = {0, PES_PROFILES_NO_GROUP, 1, 0};
    struct pes_profiles_options o = {
        .granule = 64, .n_streams = BD_STREAMS, .n_groups = 2, .group_of = group_of};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    static uint32_t st[BD_N], sz[BD_N], si[BD_N];
    static uint64_t ad[BD_N];
    uint64_t seed = 4242;
    for (size_t i = 0; i < BD_N; i++) {
        /* stream 3 only in the first half */
        st[i] = (uint32_t)(rng_next(&seed) % (i < BD_N / 2 ? 4 : 3));
        ad[i] = rng_next(&seed) % (2000 * 64);
        sz[i] = (uint32_t)(rng_next(&seed) % 4 == 0 ? 64 * (1 + rng_next(&seed) % 1000) : 8);
    }
    static struct bd_hist prd[BD_STREAMS], crd[2];
    memset(prd, 0, sizeof prd);
    memset(crd, 0, sizeof crd);
    struct lru bp[BD_STREAMS], bc[2];
    for (int k = 0; k < BD_STREAMS; k++)
        bp[k] = (struct lru){calloc(4000, sizeof(uint64_t)), 0};
    for (int k = 0; k < 2; k++)
        bc[k] = (struct lru){calloc(4000, sizeof(uint64_t)), 0};
    for (size_t i = 0; i < BD_N; i++)
        for (uint64_t line = ad[i] / 64; line <= (ad[i] + sz[i] - 1) / 64; line++) {
            bd_add(&prd[st[i]], lru_push(&bp[st[i]], line));
            if (group_of[st[i]] != PES_PROFILES_NO_GROUP)
                bd_add(&crd[group_of[st[i]]], lru_push(&bc[group_of[st[i]]], line));
        }
    size_t most = 0; /* granules in the largest batch */
    for (size_t i = 0; i < BD_N; i++) {
        size_t k = i == 0 ? 1200 : 1 + rng_next(&seed) % 400, granules = 0;
        if (i < BD_N / 2 && i + k > BD_N / 2)
            k = BD_N / 2 - i; /* the first half ends a batch */
        if (k > BD_N - i)
            k = BD_N - i;
        for (size_t j = i; j < i + k; j++)
            granules += (ad[j] + sz[j] - 1) / 64 - ad[j] / 64 + 1;
        if (granules > most)
            most = granules;
        assert_int_equal(pes_profiles_push_batch(p, st + i, ad + i, sz + i, si + i, k, NULL), 0);
        i += k - 1;
        if (i + 1 == BD_N / 2)
            assert_int_equal(pes_profiles_end_stream(p, 3, NULL), 0);
    }
    assert_true(most > 65536); /* the scratch was drained inside a batch */
    struct pes_error err;
    uint32_t three = 3, sz8 = 8, site0 = 0;
    uint64_t a0 = 0;
    assert_int_equal(pes_profiles_push_batch(p, &three, &a0, &sz8, &site0, 1, &err), -1);
    assert_non_null(strstr(err.message, "stream 3 has ended"));
    assert_int_equal(pes_profiles_push(p, 3, 0, 8, 0, NULL, NULL, &err), -1);
    for (int k = 0; k < BD_STREAMS; k++)
        bd_check(pes_profiles_prd(p, (uint32_t)k), &prd[k]);
    for (int k = 0; k < 2; k++)
        bd_check(pes_profiles_crd(p, (uint32_t)k), &crd[k]);
    pes_profiles_finish(p);
    for (int k = 0; k < BD_STREAMS; k++)
        bd_check(pes_profiles_prd(p, (uint32_t)k), &prd[k]);
    assert_int_equal(pes_profiles_push(p, 0, 0, 8, 0, NULL, NULL, &err), -1);
    for (int k = 0; k < BD_STREAMS; k++)
        free(bp[k].keys);
    for (int k = 0; k < 2; k++)
        free(bc[k].keys);
    pes_profiles_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table1),
        cmocka_unit_test(test_table2_profile),
        cmocka_unit_test(test_table3_concurrent),
        cmocka_unit_test(test_two_groups),
        cmocka_unit_test(test_random_small_space),
        cmocka_unit_test(test_random_large_space),
        cmocka_unit_test(test_repeats_and_long_run),
        cmocka_unit_test(test_sweeps_batch),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_histogram_bins),
        cmocka_unit_test(test_to_model_profile),
        cmocka_unit_test(test_per_site),
        cmocka_unit_test(test_batch_vs_brute),
        cmocka_unit_test(test_batch_drains_and_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
