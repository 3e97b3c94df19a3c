/* test_shards.c — SHARDS approximate reuse histograms (replay/reuse/shards.c):
 * rate 1 equals the exact engine, sampling is spatial, the MRC error on
 * uniform random and cyclic streams, the first-bucket adjustment, and the
 * fixed-size variant against a brute-force model of the same algorithm.
 *
 * Accuracy bounds were set from sweeps over SHARDS seeds 1..50 (same
 * streams, stream seed 12345) made while developing; each test states the
 * worst case measured there. All seeds are fixed, so results are
 * deterministic. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "histogram.h"
#include "reuse_distance.h"
#include "shards.h"
#include "reuse_oracle.h"

#define COLD PES_REUSE_COLD
#define BASE UINT64_C(0x7f0000000000)

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

enum stream { UNIFORM, CYCLIC, SKEWED };

/* Byte addresses of n accesses (line granularity 64). UNIFORM: uniform
 * random lines; CYCLIC: 0, 1, ..., lines-1, 0, 1, ...; SKEWED: line =
 * floor(lines * u^4), u uniform in [0,1) — a few very hot lines (line 0
 * alone gets ~3% of the accesses at 1 Mi lines) and a long cold tail. */
static uint64_t *make_stream(enum stream kind, uint64_t n, uint64_t lines)
{
    uint64_t *a = malloc(n * sizeof *a);
    assert_non_null(a);
    uint64_t s = 12345 * UINT64_C(0x9E3779B97F4A7C15) | 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t l;
        if (kind == UNIFORM) {
            l = rng_next(&s) % lines;
        } else if (kind == CYCLIC) {
            l = i % lines;
        } else {
            double u = (double)(rng_next(&s) >> 11) * 0x1p-53;
            l = (uint64_t)((double)lines * u * u * u * u);
        }
        a[i] = BASE + l * 64 + (i & 63); /* any byte of the line */
    }
    return a;
}

/* The exact histogram with the plain engine. */
static void exact_hist(const uint64_t *a, uint64_t n, uint64_t exact_limit, struct pes_rd_hist *h)
{
    struct pes_reuse_options o = {.granule = 64};
    struct pes_reuse *e = pes_reuse_create(&o, NULL);
    assert_non_null(e);
    assert_int_equal(pes_rd_hist_init(h, exact_limit, NULL), 0);
    uint64_t *d = malloc(n * sizeof *d);
    assert_non_null(d);
    assert_int_equal(pes_reuse_push_batch(e, a, n, d), 0);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(pes_rd_hist_add(h, d[i]), 0);
    free(d);
    pes_reuse_destroy(e);
}

static double shards_mae(const uint64_t *a, uint64_t n, const struct pes_rd_hist *ex,
                         const struct pes_shards_options *o)
{
    struct pes_shards *s = pes_shards_create(o, NULL);
    assert_non_null(s);
    assert_int_equal(pes_shards_push_batch(s, a, n), 0);
    struct pes_rd_hist h;
    assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
    double m = pes_shards_mrc_mae(ex, &h, 0, 0);
    pes_rd_hist_free(&h);
    pes_shards_destroy(s);
    return m;
}

/* ------------------------------------------------------------- rate 1 */

/* R = 1 keeps everything with weight 1 and distance scale 1: the output is
 * the exact engine's histogram bin for bin (exact and log2 bins: exact limit
 * 64 so long distances land in log2 bins), with and without the adjustment
 * (Ns = N, so it adds nothing), pushed in one batch or one at a time. */
static void test_rate1_equals_exact(void **state)
{
    (void)state;
    const uint64_t n = 300000;
    uint64_t *a = make_stream(SKEWED, n, 20000);
    struct pes_rd_hist ex;
    exact_hist(a, n, 64, &ex);
    for (int mode = 0; mode < 3; mode++) {
        struct pes_shards_options o = {
            .rate = 1.0, .seed = 7, .exact_limit = 64, .no_adjust = mode == 1};
        struct pes_shards *s = pes_shards_create(&o, NULL);
        assert_non_null(s);
        if (mode == 2) {
            for (uint64_t i = 0; i < n; i++)
                assert_int_equal(pes_shards_push(s, a[i]), 0);
        } else {
            assert_int_equal(pes_shards_push_batch(s, a, n), 0);
        }
        struct pes_rd_hist h;
        assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
        assert_hist_equal(&h, &ex);
        assert_true(pes_shards_mrc_mae(&ex, &h, 0, 0) == 0.0);
        struct pes_shards_stats st;
        pes_shards_stats(s, &st);
        assert_int_equal(st.accesses, n);
        assert_int_equal(st.sampled, n);
        assert_int_equal(st.lines, ex.cold);
        assert_true(st.rate == 1.0 && st.effective_rate == 1.0);
        pes_rd_hist_free(&h);
        pes_shards_destroy(s);
    }
    pes_rd_hist_free(&ex);
    free(a);
}

/* A fixed-size estimator whose s_max is never reached is the same: its own
 * LRU stack (with compactions: W is small) against the exact engine. */
static void test_fixed_size_unreached_equals_exact(void **state)
{
    (void)state;
    const uint64_t n = 200000;
    uint64_t *a = make_stream(UNIFORM, n, 3000);
    struct pes_rd_hist ex;
    exact_hist(a, n, 64, &ex);
    struct pes_shards_options o = {.rate = 1.0, .seed = 3, .exact_limit = 64, .s_max = 3000};
    struct pes_shards *s = pes_shards_create(&o, NULL);
    assert_non_null(s);
    assert_int_equal(pes_shards_push_batch(s, a, n), 0);
    struct pes_rd_hist h;
    assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
    assert_hist_equal(&h, &ex);
    struct pes_shards_stats st;
    pes_shards_stats(s, &st);
    assert_int_equal(st.evictions, 0);
    assert_int_equal(st.lines, 3000);
    pes_rd_hist_free(&h);
    pes_rd_hist_free(&ex);
    pes_shards_destroy(s);
    free(a);
}

/* ------------------------------------------------------------ spatial */

/* Every access of a line is kept or none is: the first access of each line
 * decides its membership (a brute-force set over line numbers), and every
 * later access must agree, seen through the sampled counter one push at a
 * time. The sampled fraction of lines is near R (10000 lines at R = 0.1:
 * binomial sd 30 lines; bound +-150). Different seeds pick different sets. */
static void test_spatial(void **state)
{
    (void)state;
    const uint64_t lines = 10000, n = 200000;
    uint64_t *a = make_stream(UNIFORM, n, lines);
    signed char *in[2];
    uint64_t kept_lines[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        in[k] = malloc(lines);
        assert_non_null(in[k]);
        memset(in[k], -1, lines); /* -1: not seen yet */
        struct pes_shards_options o = {.rate = 0.1, .seed = (uint64_t)k + 1};
        struct pes_shards *s = pes_shards_create(&o, NULL);
        assert_non_null(s);
        uint64_t before = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t line = (a[i] - BASE) / 64;
            assert_int_equal(pes_shards_push(s, a[i]), 0);
            struct pes_shards_stats st;
            pes_shards_stats(s, &st);
            int kept = st.sampled != before;
            before = st.sampled;
            if (in[k][line] < 0) {
                in[k][line] = (signed char)kept;
                kept_lines[k] += (uint64_t)kept;
            }
            assert_int_equal(kept, in[k][line]);
            assert_int_equal(pes_shards_sampled(s, (BASE >> 6) + line), kept);
        }
        struct pes_shards_stats st;
        pes_shards_stats(s, &st);
        assert_int_equal(st.lines, kept_lines[k]);
        pes_shards_destroy(s);
        assert_true(kept_lines[k] > 850 && kept_lines[k] < 1150);
    }
    uint64_t differ = 0;
    for (uint64_t l = 0; l < lines; l++)
        differ += in[0][l] != in[1][l];
    assert_true(differ > 1000); /* independent sets: ~1800 expected */
    free(in[0]);
    free(in[1]);
    free(a);
}

/* ------------------------------------------------------------ accuracy */

/* Uniform random, 2 Mi accesses over 200 000 lines, without the adjustment.
 * Measured (seeds 1..50): R = 0.01 mean MAE 0.0016, worst 0.0034 (seed 46);
 * R = 0.1 mean 0.00046, worst 0.0011 (seed 9). Here seeds 1..10 (worst
 * 0.0029 and 0.0011). Bound 0.01 as issue 11 asks; ~3x margin. */
static void test_mae_uniform(void **state)
{
    (void)state;
    const uint64_t n = 2000000;
    uint64_t *a = make_stream(UNIFORM, n, 200000);
    struct pes_rd_hist ex;
    exact_hist(a, n, 0, &ex);
    assert_int_equal(pes_shards_mrc_grid(&ex, 0, 0), 19); /* 1 .. 2^18 >= 200000 */
    const double rates[2] = {0.01, 0.1};
    for (int r = 0; r < 2; r++)
        for (uint64_t seed = 1; seed <= 10; seed++) {
            struct pes_shards_options o = {.rate = rates[r], .seed = seed, .no_adjust = 1};
            double m = shards_mae(a, n, &ex, &o);
            assert_true(m <= 0.01);
        }
    pes_rd_hist_free(&ex);
    free(a);
}

/* Cyclic, 2 Mi accesses over 100 000 lines (every reuse at distance 99 999),
 * without the adjustment. The estimated step lies between the grid points
 * 2^16 and 2^17 for every seed measured (1..50), so the MAE is the cold-miss
 * error only: worst 0.000001 at R = 0.01 and 0.1. The mean finite distance
 * (the step's position) is checked too: within 10% of 99 999 (measured
 * sd ~3% at R = 0.01, 1000 sampled lines). */
static void test_mae_cyclic(void **state)
{
    (void)state;
    const uint64_t n = 2000000;
    uint64_t *a = make_stream(CYCLIC, n, 100000);
    struct pes_rd_hist ex;
    exact_hist(a, n, 0, &ex);
    const double rates[2] = {0.01, 0.1};
    for (int r = 0; r < 2; r++)
        for (uint64_t seed = 1; seed <= 10; seed++) {
            struct pes_shards_options o = {.rate = rates[r], .seed = seed, .no_adjust = 1};
            struct pes_shards *s = pes_shards_create(&o, NULL);
            assert_non_null(s);
            assert_int_equal(pes_shards_push_batch(s, a, n), 0);
            struct pes_rd_hist h;
            assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
            assert_true(pes_shards_mrc_mae(&ex, &h, 0, 0) <= 0.01);
            assert_true(fabs(pes_rd_hist_mean(&h) - 99999.0) < 10000.0);
            pes_rd_hist_free(&h);
            pes_shards_destroy(s);
        }
    pes_rd_hist_free(&ex);
    free(a);
}

/* ---------------------------------------------------------- adjustment */

/* Definition: the adjusted histogram differs from the plain one only in
 * distance 0 (when Ns < N R) or in the shortest distances (Ns > N R), and
 * its total is N. Then usefulness: on the skewed stream (2 Mi accesses over
 * 1 Mi lines) the adjustment lowers the MAE at R = 0.01 — seeds 1..50: mean
 * 0.028 with vs 0.063 without, worst 0.074 vs 0.55; seeds 1..10 (used
 * here): mean 0.023 vs 0.038 (checked: sum with < 0.8 x sum without),
 * worst 0.045 with (bound 0.06). On uniform and cyclic
 * streams it costs accuracy instead (seeds 1..50, R = 0.01: uniform mean
 * 0.011 vs 0.0016, cyclic 0.0078 vs 0.0000): their Ns deviates because the
 * number of sampled lines does, not their mix of hot and cold lines, which
 * is what the correction assumes. */
static void test_adjustment(void **state)
{
    (void)state;
    const uint64_t n = 2000000;
    uint64_t *a = make_stream(SKEWED, n, 1u << 20);
    struct pes_rd_hist ex;
    exact_hist(a, n, 0, &ex);
    double sum_adj = 0, sum_plain = 0;
    int seen_low = 0, seen_high = 0;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        struct pes_rd_hist h[2];
        struct pes_shards_stats st;
        for (int adj = 0; adj < 2; adj++) {
            struct pes_shards_options o = {.rate = 0.01, .seed = seed, .no_adjust = !adj};
            struct pes_shards *s = pes_shards_create(&o, NULL);
            assert_non_null(s);
            assert_int_equal(pes_shards_push_batch(s, a, n), 0);
            assert_int_equal(pes_shards_finish(s, &h[adj], NULL), 0);
            pes_shards_stats(s, &st);
            pes_shards_destroy(s);
        }
        assert_int_equal(h[1].total, n);
        double diff = (double)n - (double)st.sampled / 0.01; /* N - Ns/R */
        /* plain total is round(Ns / R) */
        assert_true(fabs((double)h[0].total - (double)st.sampled / 0.01) <= 1.0);
        if (diff >= 0) {
            seen_low = 1;
            assert_true(fabs((double)pes_rd_hist_exact(&h[1], 0) -
                             (double)pes_rd_hist_exact(&h[0], 0) - diff) <= 2.0);
            for (uint64_t d = 1; d < h[1].exact_limit; d++)
                assert_true(llabs((long long)pes_rd_hist_exact(&h[1], d) -
                                  (long long)pes_rd_hist_exact(&h[0], d)) <= 1);
        } else {
            seen_high = 1;
            /* taken from the shortest distances: the first nonzero bin
             * shrinks, and later bins never grow */
            for (uint64_t d = 0; d < h[1].exact_limit; d++)
                assert_true(pes_rd_hist_exact(&h[1], d) <= pes_rd_hist_exact(&h[0], d) + 1);
        }
        assert_int_equal(h[1].cold, h[0].cold);
        double m_adj = pes_shards_mrc_mae(&ex, &h[1], 0, 0),
               m_plain = pes_shards_mrc_mae(&ex, &h[0], 0, 0);
        assert_true(m_adj <= 0.06);
        sum_adj += m_adj;
        sum_plain += m_plain;
        pes_rd_hist_free(&h[0]);
        pes_rd_hist_free(&h[1]);
    }
    assert_true(seen_low && seen_high); /* both branches ran */
    assert_true(sum_adj < 0.8 * sum_plain);
    pes_rd_hist_free(&ex);
    free(a);
}

/* ---------------------------------------------------------- fixed size */

/* Brute-force model of SHARDS fixed size: an LRU list (most recent first),
 * the tracked set = the list, T lowered to the largest hash when the list
 * outgrows s_max, lines with hash >= T dropped. Weights 1/R_i, distances
 * round(d / R_i), accumulated as real numbers; below(c) = weight of finite
 * scaled distances < c. */
struct model {
    uint64_t *list, n, T, sampled, evictions;
    double w_below[40], w_total;
};

static void model_run(struct model *m, const uint64_t *a, uint64_t n, uint64_t seed, uint64_t s_max,
                      double rate)
{
    memset(m, 0, sizeof *m);
    m->list = malloc((s_max + 2) * sizeof *m->list);
    assert_non_null(m->list);
    m->T = (uint64_t)nearbyint(rate * (double)PES_SHARDS_MODULUS);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = a[i] >> 6, h = pes_shards_hash(key, seed);
        if (h >= m->T)
            continue;
        m->sampled++;
        double inv = (double)PES_SHARDS_MODULUS / (double)m->T;
        uint64_t p = 0;
        while (p < m->n && m->list[p] != key)
            p++;
        int cold = p == m->n;
        if (cold)
            m->n++;
        memmove(&m->list[1], &m->list[0], p * sizeof *m->list);
        m->list[0] = key;
        m->w_total += inv;
        if (!cold) {
            double d = nearbyint((double)p * inv);
            for (int b = 0; b < 40; b++)
                if (d < (double)(UINT64_C(1) << b))
                    m->w_below[b] += inv;
        }
        if (m->n > s_max) {
            uint64_t T = 0;
            for (uint64_t j = 0; j < m->n; j++) {
                uint64_t hj = pes_shards_hash(m->list[j], seed);
                if (hj > T)
                    T = hj;
            }
            uint64_t k = 0;
            for (uint64_t j = 0; j < m->n; j++) {
                if (pes_shards_hash(m->list[j], seed) >= T)
                    m->evictions++;
                else
                    m->list[k++] = m->list[j];
            }
            m->n = k;
            m->T = T;
        }
    }
}

/* The fixed-size estimator against the model (s_max 50 and 300 over 20 000
 * lines, starting at R = 1 and 0.5; small s_max means many compactions of
 * its time axis): same sampled count, evictions and final T; never more than
 * s_max lines; every MRC point within rounding (0.5) of the model's. */
static void test_fixed_size_model(void **state)
{
    (void)state;
    const uint64_t n = 200000;
    uint64_t *a = make_stream(SKEWED, n, 20000);
    const uint64_t smax[2] = {50, 300};
    const double rate[2] = {1.0, 0.5};
    for (int c = 0; c < 2; c++) {
        struct model m;
        model_run(&m, a, n, 11, smax[c], rate[c]);
        struct pes_shards_options o = {
            .rate = rate[c], .seed = 11, .s_max = smax[c], .no_adjust = 1};
        struct pes_shards *s = pes_shards_create(&o, NULL);
        assert_non_null(s);
        for (uint64_t i = 0; i < n; i += 1000) {
            assert_int_equal(pes_shards_push_batch(s, a + i, 1000), 0);
            struct pes_shards_stats st;
            pes_shards_stats(s, &st);
            assert_true(st.lines <= smax[c]);
        }
        struct pes_shards_stats st;
        pes_shards_stats(s, &st);
        assert_int_equal(st.sampled, m.sampled);
        assert_int_equal(st.evictions, m.evictions);
        assert_int_equal(st.threshold, m.T);
        assert_int_equal(st.lines, m.n);
        assert_true(st.evictions > 0 && st.rate < rate[c]);
        struct pes_rd_hist h;
        assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
        assert_true(fabs((double)h.total - m.w_total) <= 0.5 + 1e-6 * m.w_total);
        for (int b = 0; b < 40; b++)
            assert_true(fabs(pes_rd_hist_below(&h, UINT64_C(1) << b) - m.w_below[b]) <=
                        0.5 + 1e-9 * m.w_total);
        pes_rd_hist_free(&h);
        pes_shards_destroy(s);
        free(m.list);
    }
    free(a);
}

/* Fixed size on the accuracy streams: s_max 2000 from R = 1 keeps at most
 * 2000 lines (the rate falls to ~0.01 on uniform 200 000 lines, ~0.02 on
 * cyclic 100 000) and, without the adjustment, the MAE stays small:
 * seeds 1..50 worst 0.0029 (uniform), 0.0001 (cyclic). */
static void test_fixed_size_accuracy(void **state)
{
    (void)state;
    const uint64_t n = 2000000;
    for (int k = 0; k < 2; k++) {
        uint64_t *a = make_stream(k ? CYCLIC : UNIFORM, n, k ? 100000 : 200000);
        struct pes_rd_hist ex;
        exact_hist(a, n, 0, &ex);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            struct pes_shards_options o = {
                .rate = 1.0, .seed = seed, .s_max = 2000, .no_adjust = 1};
            struct pes_shards *s = pes_shards_create(&o, NULL);
            assert_non_null(s);
            assert_int_equal(pes_shards_push_batch(s, a, n), 0);
            struct pes_shards_stats st;
            pes_shards_stats(s, &st);
            assert_true(st.lines <= 2000 && st.lines > 1900);
            assert_true(st.rate < 0.03);
            struct pes_rd_hist h;
            assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
            assert_true(pes_shards_mrc_mae(&ex, &h, 0, 0) <= 0.01);
            pes_rd_hist_free(&h);
            pes_shards_destroy(s);
        }
        pes_rd_hist_free(&ex);
        free(a);
    }
}

/* ------------------------------------------------------------- helpers */

/* MRC definitions on a hand-made histogram: distances 0, 1, 3, 3, 9 and 3
 * cold (total 8). Grid for max = cold (3): 1, 2, 4 (3 points). */
static void test_mrc_helpers(void **state)
{
    (void)state;
    struct pes_rd_hist a, b;
    assert_int_equal(pes_rd_hist_init(&a, 4, NULL), 0);
    assert_int_equal(pes_rd_hist_init(&b, 4, NULL), 0);
    const uint64_t d[8] = {0, 1, 3, 3, 9, COLD, COLD, COLD};
    for (int i = 0; i < 8; i++)
        assert_int_equal(pes_rd_hist_add(&a, d[i]), 0);
    assert_true(pes_shards_miss_ratio(&a, 1) == 7.0 / 8);
    assert_true(pes_shards_miss_ratio(&a, 2) == 6.0 / 8);
    assert_true(pes_shards_miss_ratio(&a, 4) == 4.0 / 8);
    assert_true(pes_shards_miss_ratio(&a, 16) == 3.0 / 8);
    assert_true(pes_shards_miss_ratio(&b, 16) == 0.0); /* empty */
    assert_int_equal(pes_shards_mrc_grid(&a, 0, 0), 3);
    assert_int_equal(pes_shards_mrc_grid(&a, 1, 16), 5);
    assert_int_equal(pes_shards_mrc_grid(&a, 0, 17), 6);
    assert_int_equal(pes_shards_mrc_grid(&a, 2, 0), 2);  /* 2, 4 */
    assert_int_equal(pes_shards_mrc_grid(&a, 3, 0), 1);  /* 4 */
    assert_int_equal(pes_shards_mrc_grid(&a, 64, 0), 1); /* 64: min wins */
    assert_int_equal(pes_shards_mrc_grid(&b, 0, 0), 1);  /* at least c = 1 */
    /* b: everything cold (miss ratio 1): errors 1/8, 2/8, 4/8 -> mean 7/24 */
    assert_int_equal(pes_rd_hist_add_n(&b, COLD, 8), 0);
    assert_true(fabs(pes_shards_mrc_mae(&a, &b, 0, 0) - 7.0 / 24) < 1e-12);
    assert_true(fabs(pes_shards_mrc_mae(&a, &b, 2, 0) - 3.0 / 8) < 1e-12);
    assert_true(pes_shards_mrc_mae(&a, &a, 0, 0) == 0.0);
    pes_rd_hist_free(&a);
    pes_rd_hist_free(&b);
}

static void test_bad_options(void **state)
{
    (void)state;
    struct pes_error err;
    struct pes_shards_options o = {.rate = 0};
    assert_null(pes_shards_create(&o, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    o.rate = 1.5;
    assert_null(pes_shards_create(&o, &err));
    o.rate = NAN;
    assert_null(pes_shards_create(&o, &err));
    o.rate = 0.5;
    o.granule = 48;
    assert_null(pes_shards_create(&o, &err));
    o.granule = 8;
    o.rate = 1.0;
    struct pes_shards *s = pes_shards_create(&o, &err);
    assert_non_null(s);
    struct pes_rd_hist h;
    assert_int_equal(pes_shards_finish(s, &h, NULL), 0); /* empty */
    assert_int_equal(h.total, 0);
    pes_rd_hist_free(&h);
    /* granule 8: addresses 0 and 7 are one line, 8 another: 0 7 8 0 ->
     * cold, 0, cold, 1 */
    const uint64_t addr[4] = {0, 7, 8, 0};
    assert_int_equal(pes_shards_push_batch(s, addr, 4), 0);
    assert_int_equal(pes_shards_finish(s, &h, NULL), 0);
    assert_int_equal(h.cold, 2);
    assert_int_equal(pes_rd_hist_exact(&h, 0), 1);
    assert_int_equal(pes_rd_hist_exact(&h, 1), 1);
    pes_rd_hist_free(&h);
    pes_shards_destroy(s);
    o.granule = 64;
    o.rate = 0.5;
    s = pes_shards_create(&o, &err);
    assert_non_null(s);
    assert_int_equal(pes_shards_finish(s, &h, NULL), 0); /* empty */
    assert_int_equal(h.total, 0);
    pes_rd_hist_free(&h);
    pes_shards_destroy(s);
}

/* The filter a text reader runs where it parses (pes_shards_filter_records,
 * pes_text_reader_set_filter) keeps exactly the lines an estimator with the
 * same options samples, in order, on 1 and 3 parsing threads, and counts the
 * others by id; an estimator fed the kept records plus pes_shards_skip of
 * the dropped ones gives the histogram of one fed everything. */
static void test_text_filter(void **state)
{
    (void)state;
    enum { N = 300000 };
    char path[] = "/tmp/pes_test_shards_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    uint64_t *addr = malloc(N * sizeof *addr);
    uint8_t *wr = malloc(N);
    uint64_t x = 7;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        addr[i] = (x >> 20) % (1u << 22); /* 64 K lines of 64 bytes */
        wr[i] = (x >> 7) & 1;
        fprintf(f, "%llx%s\n", (unsigned long long)addr[i], wr[i] ? " W" : "");
    }
    fclose(f);
    struct pes_error err;
    struct pes_shards_options o = {.granule = 64, .rate = 0.05, .seed = 3};
    struct pes_shards *ref = pes_shards_create(&o, &err);
    assert_non_null(ref);
    assert_int_equal(pes_shards_push_batch(ref, addr, N), 0);
    struct pes_rd_hist want;
    assert_int_equal(pes_shards_finish(ref, &want, &err), 0);
    struct pes_shards_filter sf;
    assert_int_equal(pes_shards_filter_init(&sf, &o, &err), 0);
    struct pes_text_filter tf = {pes_shards_filter_records, &sf};
    struct pes_record *rec = malloc(N * sizeof *rec);
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        struct pes_text_reader *t = pes_text_reader_open(path, &err);
        assert_non_null(t);
        assert_int_equal(pes_text_reader_set_filter(t, &tf, &err), 0);
        assert_int_equal(pes_text_reader_set_threads(t, threads, &err), 0);
        assert_int_equal(pes_text_reader_set_filter(t, &tf, &err), threads > 1 ? -1 : 0);
        size_t n = 0;
        long got;
        while ((got = pes_text_reader_read(t, rec + n, 1000, &err)) > 0)
            n += (size_t)got;
        assert_int_equal(got, 0);
        uint64_t dropped[2] = {0, 0}, want_dropped[2] = {0, 0};
        pes_text_reader_dropped(t, dropped);
        size_t j = 0;
        for (size_t i = 0; i < N; i++) {
            if (!pes_shards_sampled(ref, addr[i] >> 6)) {
                want_dropped[wr[i]]++;
                continue;
            }
            assert_true(j < n);
            assert_int_equal(rec[j].addr, addr[i]);
            assert_int_equal(rec[j].id, wr[i] ? PES_TEXT_WRITE_SITE : PES_TEXT_READ_SITE);
            j++;
        }
        assert_int_equal(j, n);
        assert_true(n > N / 40 && n < N / 10);
        assert_int_equal(dropped[0], want_dropped[0]);
        assert_int_equal(dropped[1], want_dropped[1]);
        pes_text_reader_close(t);

        struct pes_shards *s = pes_shards_create(&o, &err);
        assert_non_null(s);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(pes_shards_push(s, rec[i].addr), 0);
        assert_int_equal(pes_shards_skip(s, dropped[0] + dropped[1]), 0);
        struct pes_rd_hist got_h;
        assert_int_equal(pes_shards_finish(s, &got_h, &err), 0);
        assert_int_equal(got_h.total, want.total);
        assert_int_equal(got_h.cold, want.cold);
        for (uint64_t d = 0; d < 1u << 20; d++)
            assert_int_equal(pes_rd_hist_exact(&got_h, d), pes_rd_hist_exact(&want, d));
        assert_memory_equal(got_h.log2, want.log2, sizeof want.log2);
        pes_rd_hist_free(&got_h);
        pes_shards_destroy(s);
    }
    struct pes_shards_options sized = o;
    sized.s_max = 100;
    assert_int_equal(pes_shards_filter_init(&sf, &sized, &err), -1);
    unlink(path);
    free(rec);
    free(addr);
    free(wr);
    pes_rd_hist_free(&want);
    pes_shards_destroy(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate1_equals_exact),
        cmocka_unit_test(test_fixed_size_unreached_equals_exact),
        cmocka_unit_test(test_spatial),
        cmocka_unit_test(test_mae_uniform),
        cmocka_unit_test(test_mae_cyclic),
        cmocka_unit_test(test_adjustment),
        cmocka_unit_test(test_fixed_size_model),
        cmocka_unit_test(test_fixed_size_accuracy),
        cmocka_unit_test(test_mrc_helpers),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_text_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
