/*
 * test_survival — the censoring-aware reuse estimator and the stated
 * intervals (replay/sampling/survival.c, analyses/sampled_reuse.c; docs/accuracy.md
 * "Censored watches", "Stated uncertainty").
 *
 * Oracles: Kaplan–Meier computed by hand on tiny cases; synthetic samples
 * drawn from known distributions (geometric reuse times, exponential and
 * uniform censoring) whose exact binned histogram is known in closed form;
 * interval coverage counted over 1000 seeds. No timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampled_run.h"
#include "survival.h"

#define CLOSE(a, b) assert_true(fabs((a) - (b)) < 1e-12)

/* ------------------------------------------------------------ random numbers */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)
{
    return ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* Geometric on {0, 1, 2, ...}: P(X = k) = (1 - q)^k q. */
static uint64_t geometric(uint64_t *s, double q)
{
    return (uint64_t)floor(log(uniform01(s)) / log(1 - q));
}

/* ------------------------------------------------------------ hand-computed KM */

static void test_km_hand(void **state)
{
    (void)state;
    /* times 1 R, 2 C, 3 R, 3 I, 4 C, 5 R (n = 6):
     *  t=1: at risk 6, one outcome: mass 1/6, S = 5/6
     *  t=2: censored, at risk 5 -> 4
     *  t=3: at risk 4, two outcomes: each S/4 = 5/24, S = 5/6 * 2/4 = 5/12
     *  t=4: censored, at risk 2 -> 1
     *  t=5: at risk 1: mass 5/12, S = 0 */
    const struct pes_surv_obs o[] = {
        {3, 1, PES_SURV_REUSE}, {1, 1, PES_SURV_REUSE},        {2, 1, PES_SURV_CENSORED},
        {5, 1, PES_SURV_REUSE}, {3, 1, PES_SURV_INVALIDATION}, {4, 1, PES_SURV_CENSORED},
    };
    double m[6];
    struct pes_surv_result r;
    assert_int_equal(pes_surv_km(o, 6, m, &r), 0);
    CLOSE(m[1], 1.0 / 6);
    CLOSE(m[0], 5.0 / 24);
    CLOSE(m[4], 5.0 / 24);
    CLOSE(m[3], 5.0 / 12);
    CLOSE(m[2], 0);
    CLOSE(m[5], 0);
    CLOSE(r.residual, 0);
    CLOSE(r.last_time, 5);
    CLOSE(r.total, 6);

    /* the last observation censored: its mass stays beyond (residual) */
    const struct pes_surv_obs p[] = {{1, 1, PES_SURV_REUSE}, {2, 1, PES_SURV_CENSORED}};
    assert_int_equal(pes_surv_km(p, 2, m, &r), 0);
    CLOSE(m[0], 0.5);
    CLOSE(r.residual, 0.5);
    CLOSE(r.last_time, 2);

    /* a tie: censored at 1 is still at risk at 1 (decided first):
     * t=1: at risk 3, mass 1/3, S = 2/3; both leave; t=2: at risk 1, mass 2/3 */
    const struct pes_surv_obs q[] = {
        {1, 1, PES_SURV_CENSORED}, {1, 1, PES_SURV_REUSE}, {2, 1, PES_SURV_REUSE}};
    assert_int_equal(pes_surv_km(q, 3, m, &r), 0);
    CLOSE(m[1], 1.0 / 3);
    CLOSE(m[2], 2.0 / 3);
    CLOSE(r.residual, 0);

    /* censored before any outcome (time -1: survived nothing) changes nothing */
    const struct pes_surv_obs u[] = {
        {-1, 1, PES_SURV_CENSORED}, {4, 1, PES_SURV_REUSE}, {7, 1, PES_SURV_REUSE}};
    assert_int_equal(pes_surv_km(u, 3, m, &r), 0);
    CLOSE(m[1], 0.5);
    CLOSE(m[2], 0.5);

    /* case weights: an observation of weight 2 counts as two */
    const struct pes_surv_obs w[] = {
        {1, 2, PES_SURV_REUSE}, {2, 1, PES_SURV_CENSORED}, {3, 1, PES_SURV_REUSE}};
    assert_int_equal(pes_surv_km(w, 3, m, &r), 0);
    CLOSE(m[0], 0.5); /* 2 of 4 at risk */
    CLOSE(m[2], 0.5); /* S = 1/2, at risk 1 */
    CLOSE(r.total, 4);
    assert_int_equal(pes_surv_km(w, 0, m, &r), 0);
    CLOSE(r.residual, 1);
}

/* Without censoring the masses are the empirical distribution. */
static void test_km_uncensored(void **state)
{
    (void)state;
    uint64_t seed = 7;
    struct pes_surv_obs o[500];
    double m[500];
    for (size_t i = 0; i < 500; i++)
        o[i] = (struct pes_surv_obs){(double)geometric(&seed, 0.1), 1,
                                     i % 7 ? PES_SURV_REUSE : PES_SURV_INVALIDATION};
    struct pes_surv_result r;
    assert_int_equal(pes_surv_km(o, 500, m, &r), 0);
    for (size_t i = 0; i < 500; i++)
        CLOSE(m[i], 1.0 / 500);
    CLOSE(r.residual, 0);
}

/* ------------------------------------------------------------ synthetic censoring */

enum censoring { EXPONENTIAL, UNIFORM };

/* Draws n watches: reuse time X ~ geometric(q) (accesses strictly between),
 * censoring time C ~ exponential(mean) or uniform{0..2 mean}; observed
 * min(X, C) (decided if X < C, i.e. the reuse came before the watch ended).
 * Fills the binned (pes_rt_bin) KM masses and the decided-only histogram,
 * both as fractions, and the KM's residual. */
static void draw(uint64_t seed, size_t n, double q, enum censoring cens, double mean, double *km,
                 double *decided, double *residual, double *beyond_from, struct pes_surv_obs *o,
                 double *m)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = geometric(&seed, q);
        double c = cens == EXPONENTIAL ? -mean * log(uniform01(&seed))
                                       : floor(uniform01(&seed) * 2 * mean);
        /* the watch survived floor(c) accesses without the reuse: X > floor(c) - 1 */
        double cut = floor(c);
        if ((double)x < cut)
            o[i] = (struct pes_surv_obs){(double)x, 1, PES_SURV_REUSE};
        else
            o[i] = (struct pes_surv_obs){cut - 1, 1, PES_SURV_CENSORED};
    }
    struct pes_surv_result r;
    assert_int_equal(pes_surv_km(o, n, m, &r), 0);
    memset(km, 0, PES_RT_BINS * sizeof *km);
    memset(decided, 0, PES_RT_BINS * sizeof *decided);
    double nd = 0;
    for (size_t i = 0; i < n; i++) {
        if (o[i].kind == PES_SURV_CENSORED)
            continue;
        km[pes_rt_bin((uint64_t)o[i].time)] += m[i];
        decided[pes_rt_bin((uint64_t)o[i].time)] += 1;
        nd++;
    }
    for (size_t b = 0; b < PES_RT_BINS; b++)
        decided[b] /= nd;
    *residual = r.residual;
    *beyond_from = r.last_time + 1;
}

/* P(lo <= X < hi) for geometric(q). */
static double geo_range(double q, uint64_t lo, uint64_t hi)
{
    return pow(1 - q, (double)lo) - pow(1 - q, (double)hi);
}

/* Half the L1 distance of a binned estimate (plus its mass beyond `from`)
 * from the exact geometric histogram: 1 - S. */
static double distance(const double *est, double residual, double from, double q)
{
    double d = 0, tail_true = pow(1 - q, from), tail_est = residual;
    for (size_t b = 0; b < PES_RT_BINS; b++) {
        uint64_t lo, hi;
        pes_rt_bin_range(b, &lo, &hi);
        if ((double)lo >= from) { /* past the last observed time: all of it is "beyond" */
            tail_est += est[b];
            continue;
        }
        double hi_c = (double)hi < from ? (double)hi : from;
        d += fabs(est[b] - geo_range(q, lo, (uint64_t)hi_c));
    }
    return (d + fabs(tail_est - tail_true)) / 2;
}

static void test_km_converges(void **state)
{
    (void)state;
    const double q = 1.0 / 64; /* mean reuse time 63 accesses */
    static struct pes_surv_obs o[200000];
    static double m[200000];
    double km[PES_RT_BINS], dec[PES_RT_BINS], res, from;
    for (int cens = EXPONENTIAL; cens <= UNIFORM; cens++) {
        double prev = 1;
        for (size_t n = 1000; n <= 100000; n *= 10) {
            /* several seeds per n: the mean error, so "converges" does not
             * hinge on one draw */
            double err = 0, bias = 0;
            for (uint64_t seed = 1; seed <= 5; seed++) {
                draw(seed * 1000003 + n, n, q, (enum censoring)cens, 100, km, dec, &res, &from, o,
                     m);
                err += distance(km, res, from, q) / 5;
                bias += distance(dec, 0, 1e18, q) / 5;
            }
            printf("censoring %s n %zu: KM 1-S %.4f, decided-only 1-S %.4f\n",
                   cens == EXPONENTIAL ? "exp" : "uniform", n, err, bias);
            /* sampling error of a histogram from n draws: E[1-S] <= sqrt(k/n)/2
             * (k ~ 10 occupied bins), inflated by censoring (about half the
             * watches are censored here): allow 3x that */
            assert_true(err < 3 * 0.5 * sqrt(10.0 / (0.5 * (double)n)));
            assert_true(err < prev);
            prev = err;
            /* the decided-only histogram is biased towards short reuses, and
             * more data does not fix it */
            assert_true(bias > 0.1);
        }
        assert_true(prev < 0.02);
    }
}

/* ------------------------------------------------------------ intervals */

/* 1000 seeds of n draws: how often the 90 % Wilson interval of the share of
 * an outcome of probability p holds p. Weighted: each draw has weight 1 or
 * `heavy`, independent of the outcome, and the interval uses Kish's n_eff. */
static double coverage(double p, size_t n, double heavy)
{
    size_t hit = 0;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        uint64_t s = seed * 7919;
        double in = 0, all = 0, w2 = 0;
        for (size_t i = 0; i < n; i++) {
            double w = heavy > 1 && uniform01(&s) < 0.5 ? heavy : 1;
            all += w;
            w2 += w * w;
            if (uniform01(&s) < p)
                in += w;
        }
        double lo, hi;
        pes_surv_wilson(in / all, pes_surv_kish_sums(all, w2), PES_SURV_Z90, &lo, &hi);
        hit += lo <= p && p <= hi;
    }
    return (double)hit / 1000;
}

static void test_wilson(void **state)
{
    (void)state;
    double lo, hi;
    /* Wilson's interval, z = 1.644854 (z^2 = 2.705543), p = 0.3, n = 100:
     * centre = (0.3 + z^2/200) / (1 + z^2/100) = 0.313528 / 1.027055 = 0.305269,
     * half = z / 1.027055 * sqrt(0.0021 + z^2/40000) = 1.601524 * 0.046558 = 0.074564 */
    pes_surv_wilson(0.3, 100, PES_SURV_Z90, &lo, &hi);
    assert_true(fabs(lo - 0.230705) < 1e-5);
    assert_true(fabs(hi - 0.379832) < 1e-5);
    pes_surv_wilson(0, 50, PES_SURV_Z90, &lo, &hi); /* p = 0: [0, z^2 / (n + z^2)] */
    CLOSE(lo, 0);
    assert_true(fabs(hi - 2.70554 / 52.70554) < 1e-5);
    pes_surv_wilson(0.5, 0, PES_SURV_Z90, &lo, &hi); /* no observations: anything */
    CLOSE(lo, 0);
    CLOSE(hi, 1);
    CLOSE(pes_surv_kish_sums(4, 4), 4); /* four weights 1 */
    const double w[] = {1, 1, 4};
    CLOSE(pes_surv_kish(w, 3), 36.0 / 18);
}

static void test_wilson_coverage(void **state)
{
    (void)state;
    const double ps[] = {0.05, 0.2, 0.5};
    for (size_t i = 0; i < 3; i++)
        for (int weighted = 0; weighted < 2; weighted++) {
            double c = coverage(ps[i], 200, weighted ? 5 : 1);
            printf("p %.2f n 200 %s: coverage %.3f\n", ps[i],
                   weighted ? "weights 1|5" : "unweighted", c);
            assert_true(c >= 0.85 && c <= 0.95);
        }
}

/* The censored estimator's interval: KM masses as weights of the decided
 * reuses, Kish's n_eff of them, Wilson for each bin's share of the binned
 * histogram (normalised over the decided mass, as the report does); the
 * truth is the geometric histogram restricted the same way. */
static void test_km_interval_coverage(void **state)
{
    (void)state;
    const double q = 1.0 / 64;
    const size_t n = 300;
    static struct pes_surv_obs o[300];
    static double m[300];
    size_t checked = 0, hit = 0;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        double km[PES_RT_BINS], dec[PES_RT_BINS], res, from;
        draw(seed * 104729, n, q, EXPONENTIAL, 100, km, dec, &res, &from, o, m);
        double w = 0, w2 = 0;
        for (size_t i = 0; i < n; i++)
            if (o[i].kind != PES_SURV_CENSORED) {
                w += m[i];
                w2 += m[i] * m[i];
            }
        double n_eff = pes_surv_kish_sums(w, w2), truth_total = 1 - pow(1 - q, from);
        for (size_t b = 0; b < PES_RT_BINS; b++) {
            uint64_t lo, hi;
            pes_rt_bin_range(b, &lo, &hi);
            if ((double)lo >= from)
                break;
            double hi_c = (double)hi < from ? (double)hi : from;
            double truth = geo_range(q, lo, (uint64_t)hi_c) / truth_total;
            if (truth < 0.02)
                continue; /* the bins that matter */
            double l, h;
            pes_surv_wilson(km[b] / w, n_eff, PES_SURV_Z90, &l, &h);
            checked++;
            hit += l <= truth && truth <= h;
        }
    }
    double c = (double)hit / (double)checked;
    printf("KM bins, n %zu, exponential censoring: %zu checked, coverage %.3f\n", n, checked, c);
    assert_true(c >= 0.85 && c <= 0.95);
}

/* ------------------------------------------------------------ the sampled analyses */

static struct pes_event event(uint8_t kind, uint32_t thread, uint64_t distance, uint64_t aux)
{
    return (struct pes_event){.kind = kind,
                              .size = 8,
                              .thread = thread,
                              .other_thread = thread,
                              .site = 0,
                              .addr = 0x1000,
                              .distance = distance,
                              .aux = aux};
}

static void run(const char *config, int estimator, struct replay_sampled *s)
{
    struct pes_error err = {0};
    struct pes_knobs k = {.reuse_estimator = sampled_run_estimator(estimator)};
    /* thread 0, collector distances (1 + accesses between): reuses at 2, 4,
     * 6 (aux 3), a censored watch that survived 3 accesses (so > 2 between),
     * an invalidation after 5, a censored one that survived 10 */
    const struct pes_event e[] = {
        event(PES_EV_REUSE, 0, 2, 1), event(PES_EV_WATCH_EXPIRED, 0, 3, 2),
        event(PES_EV_REUSE, 0, 4, 1), event(PES_EV_INVALIDATION, 0, 5, 1),
        event(PES_EV_REUSE, 0, 6, 3), event(PES_EV_WATCH_EXPIRED, 0, 10, 1),
        event(PES_EV_REUSE, 1, 2, 1),
    };
    const struct pes_event *blocks[] = {e};
    size_t n[] = {sizeof e / sizeof e[0]};
    assert_int_equal(sampled_run(config, 2, &k, blocks, n, 1, s, NULL, &err), 0);
}

static void test_builder(void **state)
{
    (void)state;
    const char *with = "mode=reuse\nperiod=100\ncensoring=watch_expired\n",
               *without = "mode=reuse\nperiod=100\n";
    struct replay_sampled s;
    /* auto, old trace: decided, weighted by aux */
    run(without, REPLAY_EST_AUTO, &s);
    assert_int_equal(s.estimator, REPLAY_EST_DECIDED);
    assert_int_equal(s.censored[0], 2);
    assert_int_equal(s.expired, 2);
    CLOSE(s.temporal[0][1], 2); /* thread 0 and 1, distance 1 */
    CLOSE(s.temporal[0][3], 1);
    CLOSE(s.temporal[0][5], 3);
    CLOSE(s.inval_weight[0], 1);
    CLOSE(s.hist_neff[0][0], 36.0 / 12); /* weights 1, 1, 3, 1 */
    CLOSE(s.decided_neff[0], 49.0 / 13);
    replay_sampled_free(&s);

    /* auto on a trace that records censoring: Kaplan–Meier per thread.
     * Thread 0, times (accesses between): R1, C2, R3, I4, R5, C9; n = 6:
     *  t=1: 6 at risk: 1/6, S = 5/6; C2 leaves -> 4
     *  t=3: 4 at risk: 5/24, S = 5/8; t=4: 3 at risk: I 5/24, S = 5/12
     *  t=5: 2 at risk: 5/24, S = 5/24; C9 leaves: residual 5/24
     * counts = mass x 6: R1 1, R3 1.25, I4 1.25, R5 1.25, beyond 1.25 from 10.
     * Thread 1: R1 alone, 1. */
    run(with, REPLAY_EST_AUTO, &s);
    assert_int_equal(s.estimator, REPLAY_EST_CENSORED);
    CLOSE(s.temporal[0][1], 2);
    CLOSE(s.temporal[0][3], 1.25);
    CLOSE(s.temporal[0][5], 1.25);
    CLOSE(s.inval_weight[0], 1.25);
    CLOSE(s.reuse_weight[0], 4.5);
    CLOSE(s.beyond[0][0], 1.25);
    assert_int_equal(s.beyond_from[0][0], 10);
    CLOSE(s.hist_neff[0][0], 4.5 * 4.5 / (1 + 1.5625 + 1.5625 + 1));
    replay_sampled_free(&s);

    /* asked for explicitly, either way round */
    run(with, REPLAY_EST_DECIDED, &s);
    assert_int_equal(s.estimator, REPLAY_EST_DECIDED);
    CLOSE(s.temporal[0][5], 3);
    replay_sampled_free(&s);
    run(without, REPLAY_EST_CENSORED, &s);
    assert_int_equal(s.estimator, REPLAY_EST_CENSORED);
    CLOSE(s.temporal[0][3], 1.25);
    replay_sampled_free(&s);

    assert_int_equal(replay_reuse_estimator_parse(NULL), REPLAY_EST_AUTO);
    assert_int_equal(replay_reuse_estimator_parse("censored"), REPLAY_EST_CENSORED);
    assert_int_equal(replay_reuse_estimator_parse("decided"), REPLAY_EST_DECIDED);
    assert_int_equal(replay_reuse_estimator_parse("km"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_km_hand),         cmocka_unit_test(test_km_uncensored),
        cmocka_unit_test(test_km_converges),    cmocka_unit_test(test_wilson),
        cmocka_unit_test(test_wilson_coverage), cmocka_unit_test(test_km_interval_coverage),
        cmocka_unit_test(test_builder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
