/* SDCM (PPT-Multicore Eq. 1–3) against an explicit Eq. 1 sum and against a
 * set-associative LRU cache simulator written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pes/model.h"

/* cmocka 1.1 has no assert_near: |a - b| <= tol, printing both on failure. */
static void near_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        print_error("%.17g != %.17g (tolerance %g)\n", a, b, tol);
        _fail(file, line);
    }
}
#define assert_near(a, b, tol) near_((a), (b), (tol), __FILE__, __LINE__)

/* ------------------------------------------------------------ references */

/* Eq. 1 written out: sum_{a<A} C(D,a) (A/B)^a ((B-A)/B)^(D-a), in long double logs. */
static double eq1_sum(uint64_t D, uint64_t B, uint64_t A)
{
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

/* Set-associative LRU cache: set s holds up to A lines, most recent first. */
struct sim {
    uint64_t sets, ways;
    uint64_t *line; /* sets * ways */
    uint64_t *fill; /* lines held per set */
};

static void sim_init(struct sim *c, uint64_t sets, uint64_t ways)
{
    c->sets = sets;
    c->ways = ways;
    c->line = calloc(sets * ways, sizeof *c->line);
    c->fill = calloc(sets, sizeof *c->fill);
}

static void sim_free(struct sim *c)
{
    free(c->line);
    free(c->fill);
}

/* Returns 1 on a hit. set_of is the line's set (chosen by the caller). */
static int sim_access(struct sim *c, uint64_t line, uint64_t set)
{
    uint64_t *w = c->line + set * c->ways;
    uint64_t n = c->fill[set], i = 0;
    while (i < n && w[i] != line)
        i++;
    int hit = i < n;
    if (!hit) {
        if (n < c->ways)
            c->fill[set] = ++n;
        i = n - 1; /* evict the LRU slot (or use the new one) */
    }
    memmove(w + 1, w, i * sizeof *w);
    w[0] = line;
    return hit;
}

/* Brute-force LRU stack: distance = position of the line in the stack. */
struct stack {
    uint64_t *v;
    size_t n;
};

static uint64_t stack_access(struct stack *s, uint64_t line)
{
    size_t i = 0;
    while (i < s->n && s->v[i] != line)
        i++;
    uint64_t d = i < s->n ? i : PES_DISTANCE_COLD;
    if (i == s->n)
        s->n++;
    memmove(s->v + 1, s->v, (i < s->n ? i : s->n - 1) * sizeof *s->v);
    s->v[0] = line;
    return d;
}

/* ------------------------------------------------------------ Eq. 1 / 2 */

static void test_eq1_against_sum(void **state)
{
    (void)state;
    const uint64_t cfg[][2] = {{512, 8}, {64, 4}, {4096, 16}, {327680, 20}, {16, 2}, {64, 64}};
    for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
        uint64_t B = cfg[k][0], A = cfg[k][1];
        for (uint64_t D = 0; D <= 3 * B && D <= 3000; D += (D < 64 ? 1 : 37)) {
            double got = pes_sdcm_hit_prob(D, B, (uint32_t)A);
            double want = eq1_sum(D, B, A);
            if (fabs(got - want) > 1e-9) {
                fprintf(stderr, "B=%llu A=%llu D=%llu: %.12g vs %.12g\n", (unsigned long long)B,
                        (unsigned long long)A, (unsigned long long)D, got, want);
                fail();
            }
        }
    }
}

static void test_small_distance_hits(void **state)
{
    (void)state;
    /* D < A: at most D other lines can share the set, fewer than A: always a hit */
    for (uint32_t A = 1; A <= 32; A *= 2)
        for (uint64_t D = 0; D < A; D++) {
            assert_true(pes_sdcm_hit_prob(D, 1024, A) == 1.0);
            assert_near(eq1_sum(D, 1024, A), 1.0, 1e-12); /* consistent with Eq. 1 */
        }
    /* at D = A the only miss is all D lines in the same set: (A/B)^A */
    assert_near(1.0 - pes_sdcm_hit_prob(4, 64, 4), pow(4.0 / 64, 4), 1e-15);
}

static void test_direct_mapped(void **state)
{
    (void)state;
    /* Eq. 2 by hand: ((B-1)/B)^D */
    assert_near(pes_sdcm_hit_prob(0, 4, 1), 1.0, 1e-15);
    assert_near(pes_sdcm_hit_prob(1, 4, 1), 0.75, 1e-15);
    assert_near(pes_sdcm_hit_prob(2, 4, 1), 0.5625, 1e-15);
    assert_near(pes_sdcm_hit_prob(3, 2, 1), 0.125, 1e-15);
    assert_near(pes_sdcm_hit_prob(1000, 1000, 1), pow(0.999, 1000), 1e-12);
    /* Eq. 2 is Eq. 1 with A = 1 */
    assert_near(pes_sdcm_hit_prob(77, 256, 1), eq1_sum(77, 256, 1), 1e-12);
    /* bin average = mean of the integer values */
    double s = 0;
    for (uint64_t d = 1024; d < 2048; d++)
        s += pow(1.0 - 1.0 / 4096, (double)d);
    assert_near(pes_sdcm_bin_hit_prob(1024, 2048, 4096, 1), s / 1024, 1e-12);
}

static void test_fully_associative(void **state)
{
    (void)state;
    assert_true(pes_sdcm_hit_prob(0, 8, 0) == 1.0);
    assert_true(pes_sdcm_hit_prob(7, 8, 0) == 1.0);
    assert_true(pes_sdcm_hit_prob(8, 8, 0) == 0.0);
    assert_true(pes_sdcm_hit_prob(1ull << 40, 8, 0) == 0.0);
    /* ways == blocks is also fully associative */
    assert_true(pes_sdcm_hit_prob(7, 8, 8) == 1.0);
    assert_true(pes_sdcm_hit_prob(8, 8, 8) == 0.0);
    /* bins: fraction of [lo,hi) below B */
    assert_near(pes_sdcm_bin_hit_prob(1024, 2048, 1536, 0), 0.5, 1e-15);
    assert_near(pes_sdcm_bin_hit_prob(1024, 2048, 4096, 0), 1.0, 1e-15);
    assert_near(pes_sdcm_bin_hit_prob(1024, 2048, 1000, 0), 0.0, 1e-15);
}

static void test_edges(void **state)
{
    (void)state;
    assert_true(isnan(pes_sdcm_hit_prob(5, 0, 1))); /* no blocks */
    assert_true(isnan(pes_sdcm_hit_prob(5, 4, 8))); /* more ways than blocks */
    /* huge distances (past GSL's unsigned int n) are valid and ~0 */
    double h = pes_sdcm_hit_prob(1ull << 40, 901120, 20);
    assert_true(h >= 0.0 && h < 1e-12);
    h = pes_sdcm_hit_prob(UINT64_MAX - 1, 1ull << 40, 16);
    assert_true(h >= 0.0 && h < 1e-12);
    /* continuity across the 2^32 switch to the beta form: huge cache, mean D*A/B ~ A */
    uint64_t B = 1ull << 32, D = UINT32_MAX;
    double below = pes_sdcm_hit_prob(D, B, 16), above = pes_sdcm_hit_prob(D + 1, B, 16);
    assert_true(below >= above);
    assert_near(below, above, 1e-6);
    assert_true(below > 0.3 && below < 0.8); /* Poisson(16) <= 15 ~ 0.47 */
    /* any valid (A, B, D), huge ones included, gives a probability (no GSL abort) */
    uint64_t x = 7;
    for (int i = 0; i < 20000; i++) {
        uint32_t A = 1 + (uint32_t)(splitmix(&x) % 64);
        uint64_t Bk = (uint64_t)A << (splitmix(&x) % 36);
        uint64_t D = splitmix(&x) >> (splitmix(&x) % 64);
        double v = pes_sdcm_hit_prob(D, Bk, A);
        assert_true(v >= 0.0 && v <= 1.0);
    }
    /* monotone non-increasing in D */
    double prev = 1.0;
    for (uint64_t d = 0; d < 2000; d += 7) {
        double v = pes_sdcm_hit_prob(d, 512, 8);
        assert_true(v <= prev + 1e-15);
        prev = v;
    }
    /* bin average of a wide bin lies between its end values and is close to the exact mean */
    double a = pes_sdcm_hit_prob(8192, 16384, 16), b = pes_sdcm_hit_prob(16383, 16384, 16);
    double m = pes_sdcm_bin_hit_prob(8192, 16384, 16384, 16);
    assert_true(m <= a && m >= b);
    double s = 0;
    for (uint64_t d = 8192; d < 16384; d++)
        s += pes_sdcm_hit_prob(d, 16384, 16);
    assert_near(m, s / 8192, (a - b) / 1024 + 1e-12);
}

static void test_eq3_table2(void **state)
{
    (void)state;
    /* PPT-Multicore Table 2: D = 0,1,2,3 once each, 4 cold. A fully associative
     * cache of 4 lines hits every finite reuse: P(h) = 4/8. */
    static struct pes_reuse_profile p;
    pes_profile_init(&p);
    for (uint64_t d = 0; d < 4; d++)
        pes_profile_add(&p, d, 1);
    pes_profile_add(&p, PES_DISTANCE_COLD, 4);
    struct pes_cache_config fa = {.size = 4 * 64, .ways = 0, .line = 64};
    double h;
    assert_int_equal(pes_sdcm_hit_rate(&p, &fa, &h, NULL), 0);
    assert_near(h, 0.5, 1e-15);
    /* direct-mapped with 2 blocks: (1 + 1/2 + 1/4 + 1/8) / 8 */
    struct pes_cache_config dm = {.size = 2 * 64, .ways = 1, .line = 64};
    assert_int_equal(pes_sdcm_hit_rate(&p, &dm, &h, NULL), 0);
    assert_near(h, (1 + 0.5 + 0.25 + 0.125) / 8, 1e-15);
    /* a bad geometry is an error, not a number */
    struct pes_error err = {0};
    struct pes_cache_config bad = {.size = 1000, .ways = 3, .line = 64};
    assert_int_equal(pes_sdcm_hit_rate(&p, &bad, &h, &err), -1);
    assert_int_not_equal(err.code, 0);
    /* empty profile: 0, not NaN */
    pes_profile_init(&p);
    assert_int_equal(pes_sdcm_hit_rate(&p, &fa, &h, NULL), 0);
    assert_true(h == 0.0);
}

/* ------------------------------------------------------------ model vs simulator */

/* Modelled hit rate of a trace of line ids: exact distances by the brute-force
 * stack, then Eq. 3 for a cache of `blocks` 64-byte lines and `ways` ways. */
static double model_rate(const uint64_t *trace, size_t n, uint64_t blocks, uint32_t ways)
{
    struct stack st = {calloc(n + 1, sizeof(uint64_t)), 0};
    static struct pes_reuse_profile p;
    pes_profile_init(&p);
    for (size_t i = 0; i < n; i++)
        pes_profile_add(&p, stack_access(&st, trace[i]), 1);
    free(st.v);
    struct pes_cache_config cfg = {.size = blocks * 64, .ways = ways, .line = 64};
    double h = -1;
    assert_int_equal(pes_sdcm_hit_rate(&p, &cfg, &h, NULL), 0);
    return h;
}

/* Simulated hit rate. place = 0: set = line mod S (consecutive lines spread
 * evenly); otherwise set = hash(line, place) mod S (a random placement). */
static double sim_rate(const uint64_t *trace, size_t n, uint64_t blocks, uint32_t ways,
                       uint64_t place)
{
    uint64_t sets = ways ? blocks / ways : 1, assoc = ways ? ways : blocks;
    struct sim c;
    sim_init(&c, sets, assoc);
    size_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = trace[i] ^ (place * 0xD1B54A32D192ED03ull);
        uint64_t set = place ? splitmix(&key) % sets : trace[i] % sets;
        hits += (size_t)sim_access(&c, trace[i], set);
    }
    sim_free(&c);
    return (double)hits / (double)n;
}

static void test_cyclic_scan(void **state)
{
    (void)state;
    const size_t n = 20000;
    uint64_t *t = malloc(n * sizeof *t);
    /* M = capacity/4, consecutive lines: every reuse hits once warm */
    for (size_t i = 0; i < n; i++)
        t[i] = i % 128;
    double sim = sim_rate(t, n, 512, 8, 0), model = model_rate(t, n, 512, 8);
    assert_near(sim, (double)(n - 128) / n, 1e-12);
    assert_near(model, sim, 1e-3);
    /* M = 4x capacity: LRU thrashes, nothing hits */
    for (size_t i = 0; i < n; i++)
        t[i] = i % 2048;
    sim = sim_rate(t, n, 512, 8, 0);
    model = model_rate(t, n, 512, 8);
    assert_true(sim == 0.0);
    assert_true(model < 1e-3);
    free(t);
}

#define PLACEMENTS 16
#define RANDOM_TOL 0.015

static void test_random_accesses(void **state)
{
    (void)state;
    /* Uniform random accesses over M lines. For random placement of lines in sets
     * SDCM is exact in expectation: the D distinct lines between two uses of a
     * line each land in its set with probability A/B = 1/S, independently, and LRU
     * hits iff fewer than A do. The gap between model and one simulation is the
     * luck of one placement (set loads vary: the per-placement sd printed below is
     * up to 0.013), so we average the simulation over PLACEMENTS placements of the
     * same trace. Measured: |model - mean| <= 0.003 with standard errors <= 0.0032;
     * RANDOM_TOL = 0.015 is ~4.7 standard errors of the noisiest case. */
    const size_t n = 30000;
    uint64_t *t = malloc(n * sizeof *t);
    const struct {
        uint64_t M, B;
        uint32_t A;
    } cases[] = {
        {600, 512, 8}, {1024, 512, 8}, {400, 256, 1}, {300, 256, 4}, {700, 512, 0}, {512, 1024, 16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t seed = 42 + k;
        for (size_t i = 0; i < n; i++)
            t[i] = 1000 + splitmix(&seed) % cases[k].M;
        double model = model_rate(t, n, cases[k].B, cases[k].A);
        double s = 0, s2 = 0;
        for (uint64_t pl = 1; pl <= PLACEMENTS; pl++) {
            double r = sim_rate(t, n, cases[k].B, cases[k].A, pl);
            s += r;
            s2 += r * r;
        }
        double mean = s / PLACEMENTS;
        double sd = sqrt(fmax(0.0, (s2 - s * s / PLACEMENTS) / (PLACEMENTS - 1)));
        print_message("# M=%llu B=%llu A=%u: simulated %.4f (sd %.4f, se %.4f) model %.4f\n",
                      (unsigned long long)cases[k].M, (unsigned long long)cases[k].B, cases[k].A,
                      mean, sd, sd / sqrt(PLACEMENTS), model);
        if (cases[k].A == 0)
            assert_near(model, mean, 1e-12); /* fully associative: exact for any placement */
        else
            assert_near(model, mean, RANDOM_TOL);
    }
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eq1_against_sum), cmocka_unit_test(test_small_distance_hits),
        cmocka_unit_test(test_direct_mapped),   cmocka_unit_test(test_fully_associative),
        cmocka_unit_test(test_edges),           cmocka_unit_test(test_eq3_table2),
        cmocka_unit_test(test_cyclic_scan),     cmocka_unit_test(test_random_accesses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
