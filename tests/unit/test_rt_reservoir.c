/* Reservoir replacement of watch slots (modes/reservoir.c, ReuseTracker Alg. 2)
 * and the randomised sampling period. Fixed seeds; tolerances from the
 * binomial variance (6 sigma), so the tests are deterministic and still fail
 * for a wrong acceptance probability. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"
#include "modes/reservoir.h"

#define MAXN 8

/* Feeds samples 1..n into d fresh slots (no traps); returns which sample each slot holds. */
static void run(uint32_t d, int n, uint64_t *rng, int *held)
{
    struct pes_rt_reservoir_slot slots[4];
    memset(slots, 0, sizeof slots);
    for (uint32_t j = 0; j < d; j++)
        held[j] = 0;
    for (int i = 1; i <= n; i++) {
        int j = pes_rt_reservoir_pick(slots, d, rng);
        if (j >= 0)
            held[j] = i;
    }
}

static void within(double observed, double p, double trials)
{
    double sigma = sqrt(trials * p * (1 - p));
    double dev = fabs(observed - trials * p);
    if (dev > 6 * sigma + 1) {
        print_error("observed %.0f, expected %.1f (sigma %.1f)\n", observed, trials * p, sigma);
        fail();
    }
}

/* One slot is Vitter's reservoir of size one: every sample is kept with probability 1/n. */
static void one_slot_uniform(void **state)
{
    (void)state;
    const int n = 8, trials = 200000;
    uint64_t rng = 0x1234567ull, counts[MAXN + 1] = {0};
    for (int t = 0; t < trials; t++) {
        int held;
        run(1, n, &rng, &held);
        assert_true(held >= 1 && held <= n);
        counts[held]++;
    }
    for (int i = 1; i <= n; i++)
        within((double)counts[i], 1.0 / n, trials);
}

/*
 * Exact distribution for d slots, by enumerating every outcome of the
 * algorithm as the paper states it: slots are offered inactive first, then
 * active, in index order; an offered slot accepts with probability 1/samples
 * and counts the offer either way; the first acceptance takes the sample.
 */
struct st {
    int active[4];
    double samples[4];
    int held[4];
};

static double exact[4][MAXN + 1];

static void enumerate(struct st s, uint32_t d, int i, int n, double p)
{
    if (i > n) {
        for (uint32_t j = 0; j < d; j++)
            exact[j][s.held[j]] += p;
        return;
    }
    double rest = p; /* probability that no slot has accepted yet */
    struct st cur = s;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t j = 0; j < d; j++) {
            if (cur.active[j] != pass)
                continue;
            double acc = 1.0 / cur.samples[j];
            cur.samples[j] += 1;
            struct st took = cur;
            took.active[j] = 1;
            took.held[j] = i;
            enumerate(took, d, i + 1, n, rest * acc);
            rest *= 1 - acc;
        }
    if (rest > 0)
        enumerate(cur, d, i + 1, n, rest); /* dropped */
}

static void two_slots_match_enumeration(void **state)
{
    (void)state;
    const uint32_t d = 2;
    const int n = 6, trials = 200000;
    struct st s0;
    memset(&s0, 0, sizeof s0);
    for (int j = 0; j < 4; j++)
        s0.samples[j] = 1;
    memset(exact, 0, sizeof exact);
    enumerate(s0, d, 1, n, 1.0);
    double total = 0;
    for (int i = 0; i <= n; i++)
        total += exact[0][i];
    assert_true(fabs(total - 1) < 1e-9);

    uint64_t rng = 99, counts[4][MAXN + 1];
    memset(counts, 0, sizeof counts);
    for (int t = 0; t < trials; t++) {
        int held[4];
        run(d, n, &rng, held);
        for (uint32_t j = 0; j < d; j++)
            counts[j][held[j]]++;
    }
    for (uint32_t j = 0; j < d; j++)
        for (int i = 0; i <= n; i++)
            within((double)counts[j][i], exact[j][i], trials);
    /* sanity of the oracle itself: the first two samples fill the two slots */
    assert_true(exact[0][0] == 0 && exact[1][0] == 0);
}

/* Inactive slots are always taken first, and a released slot accepts for sure. */
static void inactive_first_and_release(void **state)
{
    (void)state;
    struct pes_rt_reservoir_slot slots[4];
    memset(slots, 0, sizeof slots);
    uint64_t rng = 5;
    for (int i = 0; i < 4; i++)
        assert_int_equal(pes_rt_reservoir_pick(slots, 4, &rng), i);
    for (int round = 0; round < 1000; round++) {
        int k = round % 4;
        pes_rt_reservoir_release(&slots[k]); /* a trap decided slot k */
        assert_int_equal(pes_rt_reservoir_pick(slots, 4, &rng), k);
    }
}

/* Period jitter: uniform over [P - P/8, P + P/8], so the mean is P. */
static void period_jitter(void **state)
{
    (void)state;
    uint64_t rng = 42, p = 800, lo = p - p / 8, hi = p + p / 8;
    uint64_t counts[201] = {0};
    const int trials = 201 * 2000;
    for (int t = 0; t < trials; t++) {
        uint64_t v = pes_rt_next_period(&rng, p);
        assert_true(v >= lo && v <= hi);
        counts[v - lo]++;
    }
    for (uint64_t k = 0; k <= hi - lo; k++)
        within((double)counts[k], 1.0 / (double)(hi - lo + 1), trials);
    assert_int_equal(pes_rt_next_period(&rng, 1), 1); /* exact for tiny periods */
    assert_int_equal(pes_rt_next_period(&rng, 7), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_slot_uniform),
        cmocka_unit_test(two_slots_match_enumeration),
        cmocka_unit_test(inactive_first_and_release),
        cmocka_unit_test(period_jitter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
