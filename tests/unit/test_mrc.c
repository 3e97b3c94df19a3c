/* The report's miss-ratio curves (replay_mrc_compute, reuse_model.h; issue 13)
 * against hand values, an explicit Eq. 1 sum and pes's cache simulator
 * (replay/sim/cachesim.c) fed the same access stream:
 *  - a cyclic scan of K lines: fully associative miss ratio 1 below K lines,
 *    cold only from K lines on; direct-mapped SDCM 1 - (R-1)/R ((B-1)/B)^(K-1);
 *    4-way SDCM the Eq. 1 sum at D = K - 1;
 *  - distances inside a log2 bin: SDCM is the mean of Eq. 1 over the bin;
 *  - a random stream: the fully associative curve equals the miss count of a
 *    fully associative LRU cache simulated access by access (exactly), and
 *    SDCM's 8-way curve is within 0.02 of an 8-way set-associative LRU cache
 *    simulated with lines placed in sets by their (random) number. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cachesim.h"
#include "reuse_model.h"
#include "reuse_oracle.h"

static void near_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        print_error("%.17g != %.17g (tolerance %g)\n", a, b, tol);
        _fail(file, line);
    }
}
#define assert_near(a, b, tol) near_((a), (b), (tol), __FILE__, __LINE__)

/* Eq. 1 written out: sum_{a<A} C(D,a) (A/B)^a ((B-A)/B)^(D-a), in long double logs. */
static double eq1_sum(uint64_t D, uint64_t B, uint64_t A)
{
    if (A >= B)
        return D < B ? 1.0 : 0.0; /* one set: fully associative */
    long double p = (long double)A / (long double)B, s = 0;
    for (uint64_t a = 0; a < A && a <= D; a++) {
        long double lc = lgammal((long double)D + 1) - lgammal((long double)a + 1) -
                         lgammal((long double)(D - a) + 1);
        s += expl(lc + (long double)a * logl(p) + (long double)(D - a) * log1pl(-p));
    }
    return (double)s;
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The histogram of a stream of line numbers, by the brute-force LRU stack. */
static void hist_of(struct pes_rd_hist *h, const uint64_t *lines, size_t n, size_t distinct)
{
    struct pes_error err = {0};
    assert_int_equal(pes_rd_hist_init(h, 0, &err), 0);
    struct lru s = {.keys = calloc(distinct, sizeof(uint64_t)), .n = 0};
    assert_non_null(s.keys);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pes_rd_hist_add(h, lru_push(&s, lines[i])), 0);
    free(s.keys);
}

static void cyclic_scan(void **state)
{
    (void)state;
    enum { K = 100, R = 50 };
    static uint64_t lines[K * R];
    for (size_t i = 0; i < K * R; i++)
        lines[i] = i % K;
    struct pes_rd_hist h;
    hist_of(&h, lines, K * R, K);
    assert_int_equal(h.cold, K);
    assert_int_equal(pes_rd_hist_exact(&h, K - 1), (R - 1) * K);
    struct pes_error err = {0};
    for (uint32_t ways = 0; ways <= 4; ways++) {
        struct replay_mrc m;
        assert_int_equal(replay_mrc_compute(&m, &h, ways, 1, &err), 0);
        assert_int_equal(m.n, 8); /* 1 .. 128 lines: the first power of two above distance 99 */
        assert_int_equal(m.ways, ways);
        for (size_t k = 0; k < m.n; k++) {
            uint64_t c = (uint64_t)1 << k;
            assert_int_equal(m.lines[k], c);
            /* fully associative: every reuse misses below K lines, only the cold accesses from K on */
            assert_near(m.fully_associative[k], c < K ? 1.0 : 1.0 / R, 1e-15);
            double hit; /* P(hit | D = K - 1) by hand or by the explicit sum */
            if (ways == 0 || ways >= c)
                hit = c > K - 1 ? 1.0 : 0.0;
            else if (ways == 1)
                hit = pow((double)(c - 1) / (double)c, K - 1);
            else
                hit = eq1_sum(K - 1, c, ways);
            assert_near(m.sdcm[k], 1.0 - (double)(R - 1) / R * hit, 1e-12);
        }
    }
    /* min_lines stretches the curve to the largest cache */
    struct replay_mrc m;
    assert_int_equal(replay_mrc_compute(&m, &h, 8, 5000, &err), 0);
    assert_int_equal(m.n, 14); /* 8192 lines */
    assert_near(m.sdcm[13], 1.0 - (double)(R - 1) / R * eq1_sum(K - 1, 8192, 8), 1e-12);
    assert_near(m.fully_associative[13], 1.0 / R, 1e-15);
    pes_rd_hist_free(&h);
}

/* Distances in the log2 bin [4096, 8192): SDCM takes the mean of Eq. 1 over
 * the bin (distances uniform inside it, as the model's hit rates do). */
static void log2_bin(void **state)
{
    (void)state;
    struct pes_rd_hist h;
    struct pes_error err = {0};
    assert_int_equal(pes_rd_hist_init(&h, 0, &err), 0);
    assert_int_equal(pes_rd_hist_add_n(&h, 5000, 30), 0);
    assert_int_equal(pes_rd_hist_add_n(&h, 3, 60), 0);
    assert_int_equal(pes_rd_hist_add_n(&h, PES_REUSE_COLD, 10), 0);
    struct replay_mrc m;
    assert_int_equal(replay_mrc_compute(&m, &h, 8, 1, &err), 0);
    assert_int_equal(m.n, 14);
    for (size_t k = 0; k < m.n; k++) {
        uint64_t c = m.lines[k];
        double fa = (10 + (c <= 3 ? 60 : 0) + (c <= 5000 ? 30 : 0)) / 100.0;
        assert_near(m.fully_associative[k], fa, 1e-15);
        double mean = 0;
        for (uint64_t d = 4096; d < 8192; d++)
            mean += eq1_sum(d, c, 8);
        mean /= 4096;
        assert_near(m.sdcm[k], 1.0 - (60 * eq1_sum(3, c, 8) + 30 * mean) / 100.0, 1e-9);
    }
    pes_rd_hist_free(&h);
}

/* A random stream over random line numbers, against cachesim. */
static void random_stream_vs_cachesim(void **state)
{
    (void)state;
    enum { DISTINCT = 1024, N = 100000 };
    uint64_t *pool = malloc(DISTINCT * sizeof *pool), *lines = malloc(N * sizeof *lines), x = 42;
    assert_non_null(pool);
    assert_non_null(lines);
    for (size_t i = 0; i < DISTINCT; i++)
        pool[i] = splitmix(&x) >> 20;
    /* skewed: half the accesses to an eighth of the lines, so the curve has a shape */
    for (size_t i = 0; i < N; i++) {
        uint64_t r = splitmix(&x);
        lines[i] = pool[(r & 1) ? (r >> 8) % (DISTINCT / 8) : (r >> 8) % DISTINCT];
    }
    struct pes_rd_hist h;
    hist_of(&h, lines, N, DISTINCT);
    struct pes_error err = {0};
    struct replay_mrc fa, sa;
    assert_int_equal(replay_mrc_compute(&fa, &h, 0, 1, &err), 0);
    assert_int_equal(replay_mrc_compute(&sa, &h, 8, 1, &err), 0);
    assert_int_equal(fa.n, 11); /* up to 1024 lines */
    double worst = 0;
    for (size_t k = 0; k < fa.n; k++) {
        uint64_t c = fa.lines[k];
        for (int assoc = 0; assoc < 2; assoc++) {
            uint32_t ways = assoc ? (c < 8 ? (uint32_t)c : 8) : 0;
            if (!assoc && c > 512)
                continue; /* a fully associative cachesim scans its ways */
            struct pes_cache *cache = pes_cache_create(c * 64, ways, 64, &err);
            assert_non_null(cache);
            uint64_t misses = 0, victim;
            for (size_t i = 0; i < N; i++)
                if (!pes_cache_lookup(cache, lines[i])) {
                    misses++;
                    pes_cache_insert(cache, lines[i], &victim);
                }
            pes_cache_destroy(cache);
            double sim = (double)misses / N;
            if (!assoc) {
                assert_near(fa.fully_associative[k], sim, 1e-15); /* both exact */
                assert_near(fa.sdcm[k], sim, 1e-12); /* ways 0: SDCM is fully associative */
            } else {
                assert_near(sa.sdcm[k], sim, 0.02);
                if (fabs(sa.sdcm[k] - sim) > worst)
                    worst = fabs(sa.sdcm[k] - sim);
            }
        }
    }
    print_message("SDCM 8-way vs cachesim: largest |difference| %.4f over %zu sizes\n", worst,
                  sa.n);
    pes_rd_hist_free(&h);
    free(pool);
    free(lines);
}

/* An empty histogram has no curve; a histogram below the model's exact range is refused. */
static void edges(void **state)
{
    (void)state;
    struct pes_rd_hist h;
    struct pes_error err = {0};
    struct replay_mrc m;
    assert_int_equal(pes_rd_hist_init(&h, 0, &err), 0);
    assert_int_equal(replay_mrc_compute(&m, &h, 8, 1024, &err), 0);
    assert_int_equal(m.n, 0);
    pes_rd_hist_free(&h);
    assert_int_equal(pes_rd_hist_init(&h, 64, &err), 0);
    assert_int_equal(pes_rd_hist_add(&h, 3), 0);
    assert_int_equal(replay_mrc_compute(&m, &h, 8, 1, &err), -1);
    assert_non_null(strstr(err.message, "exact range"));
    pes_rd_hist_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cyclic_scan),
        cmocka_unit_test(log2_bin),
        cmocka_unit_test(random_stream_vs_cachesim),
        cmocka_unit_test(edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
