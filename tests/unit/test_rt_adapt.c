/* The adaptive period of pes-collect --samples (rt_adapt.h), as the soft
 * sampler and the PEBS/IBS backends use it: the periods of each level
 * (computed by hand), the level decision, and a synthetic thread driven
 * through the schedule the way a backend drives it (a sample each time the
 * countdown of the period in effect expires, jittered by +-1/8 as the soft
 * sampler draws it; a PMU backend would program the same period with
 * PERF_EVENT_IOC_PERIOD). Checked: at least N decided outcomes once the
 * thread is long enough, the sample-count bound of docs/accuracy.md, and
 * periods that only grow and never pass the cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/rt_adapt.h"
#include "core/core.h"

static void test_periods(void **state)
{
    (void)state;
    /* 100000 / 64 = 1562.5, halved six times from the cap */
    const uint64_t want[] = {1562, 3125, 6250, 12500, 25000, 50000, 100000};
    for (uint32_t k = 0; k <= PES_RT_ADAPT_LEVELS; k++)
        assert_int_equal(pes_rt_adapt_period(100000, k), want[k]);
    assert_int_equal(pes_rt_adapt_period(100000, 7), 100000); /* beyond the last level: the cap */
    assert_int_equal(pes_rt_adapt_period(0, 0), 0);           /* that type is not sampled */
    assert_int_equal(pes_rt_adapt_period(10, 0), 1);          /* never 0 */
    assert_int_equal(pes_rt_adapt_period(10, 3), 1);          /* 10 >> 3 */
    assert_int_equal(pes_rt_adapt_period(10, 4), 2);
}

static void test_next(void **state)
{
    (void)state;
    assert_int_equal(pes_rt_adapt_next(0, 0, 1000, 0), 0); /* no target: fixed */
    assert_int_equal(pes_rt_adapt_next(0, 0, 199, 200), 0);
    assert_int_equal(pes_rt_adapt_next(0, 0, 200, 200), 1);
    assert_int_equal(pes_rt_adapt_next(0, 0, 10000, 200), 1); /* one level per call */
    assert_int_equal(pes_rt_adapt_next(3, 600, 799, 200), 3);
    assert_int_equal(pes_rt_adapt_next(3, 600, 800, 200), 4);
    assert_int_equal(pes_rt_adapt_next(PES_RT_ADAPT_LEVELS, 0, 1u << 30, 1), PES_RT_ADAPT_LEVELS);
    assert_int_equal(pes_rt_adapt_next(2, 500, 400, 10),
                     2); /* a counter behind its mark: no move */
}

struct run {
    uint64_t samples, decided, changes;
    uint64_t samples_at[PES_RT_ADAPT_LEVELS + 1];
    uint32_t level;
};

/* One thread of `len` accesses, period cap `cap`, target n. A sample is
 * decided `delay` samples later (0: at once) with probability 1/`every`
 * (rng), as a watch that a trap decides. The schedule is checked after each
 * sample, as pes_rt_sample_record does. */
static struct run simulate(uint64_t len, uint64_t cap, uint64_t n, uint32_t every, uint32_t delay,
                           uint64_t seed)
{
    struct run r;
    memset(&r, 0, sizeof r);
    uint64_t rng = seed | 1, mark = 0, pending[64] = {0};
    uint64_t period = pes_rt_adapt_period(cap, 0), prev_period = period;
    uint64_t cd = pes_rt_next_period(&rng, period);
    for (uint64_t a = 0; a < len; a++) {
        if (--cd)
            continue;
        cd = pes_rt_next_period(&rng, period);
        r.samples++;
        r.samples_at[r.level]++;
        /* this sample's outcome lands `delay` samples later */
        uint64_t slot = (r.samples + delay) % 64;
        if (pes_rt_rand_below(&rng, every) == 0)
            pending[slot]++;
        r.decided += pending[r.samples % 64];
        pending[r.samples % 64] = 0;
        uint32_t next = pes_rt_adapt_next(r.level, mark, r.decided, n);
        if (next != r.level) {
            r.level = next;
            mark = r.decided;
            period = pes_rt_adapt_period(cap, next);
            assert_true(period > prev_period && period <= cap);
            prev_period = period;
            cd = pes_rt_next_period(&rng, period);
            r.changes++;
        }
    }
    return r;
}

static void test_guarantee(void **state)
{
    (void)state;
    const uint64_t cap = 64000, n = 50, p0 = cap >> PES_RT_ADAPT_LEVELS;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        /* every sample decided at once: long enough = (n + 1) samples at the
         * longest jittered period of level 0 */
        uint64_t enough = (n + 1) * (p0 + p0 / 8);
        for (uint64_t len = enough; len < 40 * enough; len = len * 3 / 2) {
            struct run r = simulate(len, cap, n, 1, 0, seed);
            assert_true(r.decided >= n);
            /* the bound (docs/accuracy.md): levels below the cap take n
             * samples each when every sample is decided, then one sample per
             * (7/8) cap accesses at most */
            assert_true(r.samples <= PES_RT_ADAPT_LEVELS * n + len * 8 / (7 * cap) + 1);
            for (uint32_t k = 0; k < r.level; k++)
                assert_int_equal(r.samples_at[k], n);
        }
        /* a thread too short for level 0: fewer than n, and no change */
        struct run s = simulate((n - 1) * (p0 - p0 / 8), cap, n, 1, 0, seed);
        assert_true(s.decided < n);
        assert_int_equal(s.changes, 0);
        /* half the watches decided, each 3 samples late: still >= n when the
         * thread is long enough (4n samples at level 0 is ample: 6 sigma) */
        struct run h = simulate(4 * n * (p0 + p0 / 8) + 10 * p0, cap, n, 2, 3, seed);
        assert_true(h.decided >= n);
        for (uint32_t k = 0; k < h.level; k++)
            assert_true(h.samples_at[k] >= n); /* fewer decided than samples */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periods),
        cmocka_unit_test(test_next),
        cmocka_unit_test(test_guarantee),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
