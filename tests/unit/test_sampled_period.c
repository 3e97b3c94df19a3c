/*
 * test_sampled_period — the replay's period weights for traces of
 * pes-collect --samples (replay/sampling/weights.c, through the sampled
 * analyses replay/analyses/sampled_*.c; docs/accuracy.md
 * "Enough samples by design"): every observation is weighted by the period
 * its sample was taken at (PERIOD events), relative to the header's period.
 *
 * Oracles: small hand-built event streams whose weighted histograms,
 * Kaplan–Meier masses, Kish sizes and communication volumes are computed by
 * hand below; and a synthetic two-phase program (short reuses first, long
 * ones later, each half of the accesses: the exact share is 1/2) sampled
 * through the adaptive schedule, where the unweighted share is far from 1/2
 * and the weighted one within 4 standard errors of it (from Kish's n_eff).
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

#include "rt_adapt.h"
#include "sampled_run.h"

#define CLOSE(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static struct pes_event ev(uint8_t kind, uint32_t thread, uint64_t time, uint64_t distance,
                           uint64_t aux)
{
    return (struct pes_event){.kind = kind,
                              .size = 8,
                              .thread = thread,
                              .other_thread = thread,
                              .site = 0,
                              .addr = 0x1000,
                              .time = time,
                              .distance = distance,
                              .aux = aux};
}

static struct pes_event period(uint32_t thread, uint64_t time, uint64_t load, uint64_t store)
{
    struct pes_event e = ev(PES_EV_PERIOD, thread, time, store, load);
    e.site = UINT32_MAX;
    return e;
}

/* Feeds the events in two blocks (b1 first), as a reader hands them over. */
static void build(const char *config, uint32_t threads, int estimator, const struct pes_event *b1,
                  size_t n1, const struct pes_event *b2, size_t n2, struct replay_sampled *s)
{
    struct pes_error err = {0};
    /* the period weights of ComDetective's scaling are under test here (the
     * interleave estimator's line shares: test_interleave) */
    struct pes_knobs k = {.reuse_estimator = sampled_run_estimator(estimator),
                          .comm_estimator = "comdetective"};
    const struct pes_event *blocks[] = {b1, b2};
    size_t n[] = {n1, n2};
    assert_int_equal(sampled_run(config, threads, &k, blocks, n, n2 ? 2 : 1, s, NULL, &err), 0);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Cap 1000; thread 0 at 250 from time 10, at 1000 from time 1000. The
 * outcome events come in a block BEFORE the PERIOD events (blocks of
 * different threads interleave arbitrarily), so the weights must wait. */
static void test_decided_weights(void **state)
{
    (void)state;
    const char *cfg = "mode=reuse\nperiod=1000\nsamples_target=2\n";
    const struct pes_event outcomes[] = {
        ev(PES_EV_REUSE, 0, 200, 2, 1),        /* d 1, weight 1 x 250/1000 */
        ev(PES_EV_REUSE, 0, 300, 2, 2),        /* d 1, weight 2 x 1/4 (reservoir offers) */
        ev(PES_EV_INVALIDATION, 0, 500, 0, 1), /* weight 1/4 */
        ev(PES_EV_REUSE, 0, 2000, 100, 1),     /* d 99, weight 1 */
    };
    const struct pes_event periods[] = {period(0, 10, 250, 250), period(0, 1000, 1000, 1000)};
    struct replay_sampled s;
    build(cfg, 2, REPLAY_EST_DECIDED, outcomes, N(outcomes), periods, N(periods), &s);
    assert_int_equal(s.samples_target, 2);
    /* thread 1 took no sample: it ran at the first level, 1000 >> 6 */
    assert_int_equal(s.thread[1].period_first_load, 15);
    assert_int_equal(s.thread[1].period_last_store, 15);
    assert_int_equal(s.thread[1].period_changes, 0);
    CLOSE(s.temporal[0][pes_rt_bin(1)], 0.25 + 0.5);
    CLOSE(s.temporal[0][pes_rt_bin(99)], 1.0);
    CLOSE(s.inval_weight[0], 0.25);
    CLOSE(s.reuse_weight[0], 1.75);
    /* Kish: reuses 0.25, 0.5, 1 -> 1.75^2 / 1.3125; with the invalidation 2^2 / 1.375 */
    CLOSE(s.hist_neff[0][0], 1.75 * 1.75 / 1.3125);
    CLOSE(s.decided_neff[0], 4.0 / 1.375);
    assert_int_equal(s.reuses[0], 3); /* raw counts stay raw */
    assert_int_equal(s.thread[0].period_first_load, 250);
    assert_int_equal(s.thread[0].period_last_load, 1000);
    assert_int_equal(s.thread[0].period_changes, 1);
    replay_sampled_free(&s);

    /* the same events without samples_target: an old trace, weights = aux */
    build("mode=reuse\nperiod=1000\n", 1, REPLAY_EST_DECIDED, outcomes, N(outcomes), periods,
          N(periods), &s);
    CLOSE(s.temporal[0][pes_rt_bin(1)], 3);
    CLOSE(s.temporal[0][pes_rt_bin(99)], 1);
    assert_int_equal(s.thread[0].period_changes, 0);
    assert_int_equal(s.thread[0].period_first_load, 1000);
    replay_sampled_free(&s);
}

/* A PERIOD event of a thread the trace does not announce: refused with the
 * file and the block's offset, before any analysis sees an event; a trace
 * without samples_target ignores PERIOD events, as before. */
static void test_bad_period_thread(void **state)
{
    (void)state;
    const struct pes_event ok[] = {ev(PES_EV_REUSE, 0, 200, 2, 1)},
                           bad[] = {period(5, 10, 250, 250)};
    const struct pes_event *blocks[] = {ok, bad};
    size_t n[] = {1, 1};
    struct pes_knobs k = {0};
    struct pes_error err = {0};
    struct replay_sampled s;
    assert_int_equal(sampled_run("mode=reuse\nperiod=1000\nsamples_target=2\n", 2, &k, blocks, n, 2,
                                 &s, NULL, &err),
                     -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(strstr(err.message, "t.zst: offset 100: event of thread 5"));
    assert_int_equal(sampled_run("mode=reuse\nperiod=1000\n", 2, &k, blocks, n, 2, &s, NULL, &err),
                     0);
    CLOSE(s.temporal[0][pes_rt_bin(1)], 1);
    replay_sampled_free(&s);
}

/* A --samples thread whose PERIOD events were lost (a full buffer) ran at
 * the schedule's first level: cap 64000 >> 6 = 1000, weight 1000 / 64000. */
static void test_no_period_events(void **state)
{
    (void)state;
    const char *cfg = "mode=reuse\nperiod=64000\nsamples_target=2\nperiod_levels=6\n";
    const struct pes_event e[] = {ev(PES_EV_REUSE, 0, 200, 2, 1)};
    struct replay_sampled s;
    build(cfg, 1, REPLAY_EST_DECIDED, e, N(e), NULL, 0, &s);
    CLOSE(s.temporal[0][pes_rt_bin(1)], 1000.0 / 64000);
    replay_sampled_free(&s);
}

/* Kaplan–Meier with the period weights as case weights, by hand: a reuse at
 * d = 1 (weight 1/4), a watch censored after surviving 6 (time 5, weight
 * 1/4, epoch 1), a reuse at d = 99 (weight 1, epoch 2). At risk at 1: 1.5,
 * so S(1) = 5/6 and mass 1/6; the censored one leaves; at 99 the remaining
 * weight 1 is all decided: mass 5/6. Times the total 1.5: 0.25 and 1.25. */
static void test_censored_weights(void **state)
{
    (void)state;
    const char *cfg = "mode=reuse\nperiod=1000\ncensoring=watch_expired\nsamples_target=2\n";
    const struct pes_event e[] = {
        period(0, 10, 250, 250),
        ev(PES_EV_REUSE, 0, 200, 2, 1),
        ev(PES_EV_WATCH_EXPIRED, 0, 900, 6, 1),
        period(0, 1000, 1000, 1000),
        ev(PES_EV_REUSE, 0, 2000, 100, 1),
    };
    struct replay_sampled s;
    build(cfg, 1, REPLAY_EST_AUTO, e, N(e), NULL, 0, &s);
    assert_int_equal(s.estimator, REPLAY_EST_CENSORED);
    CLOSE(s.temporal[0][pes_rt_bin(1)], 0.25);
    CLOSE(s.temporal[0][pes_rt_bin(99)], 1.25);
    CLOSE(s.beyond[0][0], 0);
    replay_sampled_free(&s);
}

/* ComDetective's volume: each detection counts the period in effect. Cap
 * 1000, line 64, 4 registers x 8 bytes: traps scale by 2. Thread 0 at 250,
 * thread 1 at 500. A detection at thread 0's sample: 250; a trap in thread
 * 1 on thread 0's watch: thread 0's period, 250 x 2 = 500; a detection at
 * thread 1's sample after its change to 1000: 1000. */
static void test_comm_volume(void **state)
{
    (void)state;
    const char *cfg = "mode=comm\nperiod=1000\nsamples_target=5\nline_size=64\ndebug_registers="
                      "4\nwatch_bytes=8\n";
    struct pes_event a = ev(PES_EV_COMM, 0, 100, 0, 0), b = ev(PES_EV_COMM, 1, 150, 0, 1),
                     c = ev(PES_EV_COMM, 1, 900, 0, 0);
    a.other_thread = 1;
    b.other_thread = 0;
    c.other_thread = 0;
    a.flags = b.flags = c.flags = PES_EVF_TRUE_SHARING;
    const struct pes_event e[] = {
        a, b, c, period(0, 5, 250, 250), period(1, 5, 500, 500), period(1, 800, 1000, 1000)};
    struct replay_sampled s;
    build(cfg, 2, REPLAY_EST_DECIDED, e, N(e), NULL, 0, &s);
    CLOSE(s.comm_true[0 * 2 + 1], 250 + 500 + 1000);
    CLOSE(s.comm_true[1 * 2 + 0], 250 + 500 + 1000);
    CLOSE(s.comm_neff, 1750.0 * 1750.0 / (250.0 * 250 + 500.0 * 500 + 1000.0 * 1000));
    replay_sampled_free(&s);
}

/* Comm mode whose samples found nothing shared (the halo stencil of issue 25:
 * no event, the volume dropped out as null): the volume is 0 and the limit is
 * 3 of the n sampled accesses, 3 · A / n = 3 · 60000 / 6 transfers. */
static void test_comm_nothing_seen(void **state)
{
    (void)state;
    const char *cfg = "mode=comm\nperiod=10000\nline_size=64\ndebug_registers=4\nwatch_bytes=8\n";
    struct pes_event e[8];
    for (uint32_t i = 0; i < 6; i++) {
        e[i] = ev(PES_EV_SAMPLE, i % 2, 100 * (i + 1), 0, 0);
        e[i].addr = 0x10000 + 4096u * i; /* a line per sample: none seen by both threads */
    }
    for (uint32_t t = 0; t < 2; t++) {
        e[6 + t] = ev(PES_EV_TOTALS, t, 1000, 0, 0);
        e[6 + t].loads = 20000;
        e[6 + t].stores = 10000;
    }
    for (int est = REPLAY_COMM_COMDETECTIVE; est <= REPLAY_COMM_INTERLEAVE; est++) {
        struct pes_error err = {0};
        struct pes_knobs k = {.comm_estimator = replay_comm_estimator_name(est)};
        const struct pes_event *blocks[] = {e};
        size_t n[] = {N(e)};
        struct replay_sampled s;
        assert_int_equal(sampled_run(cfg, 2, &k, blocks, n, 1, &s, NULL, &err), 0);
        CLOSE(s.comm_true[1] + s.comm_false[1], 0);
        CLOSE(s.comm_volume_limit, 3.0 * 60000 / 6);
        replay_sampled_free(&s);
    }
}

/* A family's model-error term widens both ends of Wilson's interval, within
 * [0, 1]; other families keep Wilson's. By hand: Wilson(0.5, n = 100) at
 * z = 1.6449 is 0.5 +- 0.081156. */
static void test_interval_bias(void **state)
{
    (void)state;
    struct replay_sampled s;
    memset(&s, 0, sizeof s);
    s.ci_bias[REPLAY_CI_STACK_BINS] = 0.05;
    double lo, hi;
    replay_interval90(&s, REPLAY_CI_REUSE_BINS, 0.5, 100, &lo, &hi);
    assert_true(fabs(lo - 0.418844) < 1e-5 && fabs(hi - 0.581156) < 1e-5);
    replay_interval90(&s, REPLAY_CI_STACK_BINS, 0.5, 100, &lo, &hi);
    assert_true(fabs(lo - 0.368844) < 1e-5 && fabs(hi - 0.631156) < 1e-5);
    replay_interval90(&s, REPLAY_CI_STACK_BINS, 0.01, 100, &lo, &hi);
    CLOSE(lo, 0);
    replay_interval90(&s, REPLAY_CI_STACK_BINS, 0.99, 100, &lo, &hi);
    CLOSE(hi, 1);
    assert_int_equal(replay_interval_bias_parse(NULL), 1);
    assert_int_equal(replay_interval_bias_parse("none"), 0);
    assert_int_equal(replay_interval_bias_parse("wide"), -1);
    for (int f = 0; f < REPLAY_CI_FAMILIES; f++)
        CLOSE(replay_interval_bias(0, f), 0);
}

/* ------------------------------------------------------------ unbiasedness */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct stream {
    struct pes_event *e;
    size_t n, cap;
};

static void add(struct stream *s, struct pes_event e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        s->e = realloc(s->e, s->cap * sizeof *s->e);
        assert_non_null(s->e);
    }
    s->e[s->n++] = e;
}

/* One thread of LEN loads; the use at position a is reused after SHORT
 * accesses if a < LEN / 2, else after LONG: exactly half of the uses have
 * the short distance. Sampled as the collector does with --samples N (one
 * sample when the jittered countdown of the period in effect expires; after
 * each sample, the level check; at a change every pending watch ends
 * censored, then the PERIOD event). Every sample gets a watch (no reservoir
 * here: the periods are what is under test). Times are 2 x the position, a
 * PERIOD event at 2c + 1. */
#define LEN   1000000u
#define SHORT 4u
#define LONG  1000u
static void sample_two_phases(uint64_t seed, uint64_t cap, uint64_t target, struct stream *out)
{
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull;
    uint32_t level = 0;
    uint64_t mark = 0, decided = 0;
    uint64_t p = pes_rt_adapt_period(cap, 0);
    uint64_t cd = p - p / 8 + splitmix(&rng) % (2 * (p / 8) + 1);
    /* pending watches: sample position and collector distance */
    uint64_t *pa = malloc(8192 * sizeof *pa), *pd = malloc(8192 * sizeof *pd);
    size_t np = 0;
    add(out, period(0, 0, p, p));
    for (uint64_t a = 0; a < LEN; a++) {
        /* watches decided at this access */
        for (size_t i = 0; i < np;) {
            if (pa[i] + pd[i] == a) {
                add(out, ev(PES_EV_REUSE, 0, 2 * a, pd[i], 1));
                decided++;
                pa[i] = pa[--np];
                pd[i] = pd[np];
            } else {
                i++;
            }
        }
        if (--cd)
            continue;
        cd = p - p / 8 + splitmix(&rng) % (2 * (p / 8) + 1);
        add(out, ev(PES_EV_SAMPLE, 0, 2 * a, 0, 0));
        assert_true(np < 8192);
        pa[np] = a;
        pd[np++] = (a < LEN / 2 ? SHORT : LONG) + 1; /* collector distance: one more than between */
        uint32_t next = pes_rt_adapt_next(level, mark, decided, target);
        if (next == level)
            continue;
        for (size_t i = 0; i < np; i++)
            add(out, ev(PES_EV_WATCH_EXPIRED, 0, 2 * a, a - pa[i], 1));
        np = 0;
        level = next;
        mark = decided;
        p = pes_rt_adapt_period(cap, level);
        cd = p - p / 8 + splitmix(&rng) % (2 * (p / 8) + 1);
        add(out, period(0, 2 * a + 1, p, p));
    }
    free(pa);
    free(pd);
}

static void test_unbiased(void **state)
{
    (void)state;
    const uint64_t cap = 1024, target = 200;
    char weighted[128], plain[128];
    snprintf(weighted, sizeof weighted,
             "mode=reuse\nperiod=%llu\ncensoring=watch_expired\nsamples_target=%llu\n",
             (unsigned long long)cap, (unsigned long long)target);
    snprintf(plain, sizeof plain, "mode=reuse\nperiod=%llu\ncensoring=watch_expired\n",
             (unsigned long long)cap);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        struct stream st = {0};
        sample_two_phases(seed, cap, target, &st);
        for (int est = REPLAY_EST_DECIDED; est <= REPLAY_EST_CENSORED; est++) {
            struct replay_sampled w, u;
            build(weighted, 1, est, st.e, st.n, NULL, 0, &w);
            build(plain, 1, est, st.e, st.n, NULL, 0, &u);
            size_t bs = pes_rt_bin(SHORT), bl = pes_rt_bin(LONG);
            double pw = w.temporal[0][bs] / (w.temporal[0][bs] + w.temporal[0][bl]);
            double pu = u.temporal[0][bs] / (u.temporal[0][bs] + u.temporal[0][bl]);
            /* a share's standard error from n (Kish's effective size for the weighted one) */
            double sw = sqrt(0.25 / w.hist_neff[0][0]), su = sqrt(0.25 / u.hist_neff[0][0]);
            printf("seed %llu %s: weighted share %.4f (n_eff %.0f, 4 se %.4f), unweighted %.4f (n "
                   "%.0f)\n",
                   (unsigned long long)seed, est == REPLAY_EST_DECIDED ? "decided" : "censored", pw,
                   w.hist_neff[0][0], 4 * sw, pu, u.hist_neff[0][0]);
            assert_true(fabs(pw - 0.5) <= 4 * sw);
            assert_true(fabs(pu - 0.5) > 10 * su); /* the early phase is over-sampled */
            replay_sampled_free(&w);
            replay_sampled_free(&u);
        }
        free(st.e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decided_weights),   cmocka_unit_test(test_no_period_events),
        cmocka_unit_test(test_bad_period_thread), cmocka_unit_test(test_censored_weights),
        cmocka_unit_test(test_comm_volume),       cmocka_unit_test(test_comm_nothing_seen),
        cmocka_unit_test(test_interval_bias),     cmocka_unit_test(test_unbiased),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
