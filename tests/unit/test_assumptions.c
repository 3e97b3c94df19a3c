/*
 * test_assumptions.c — the rules that name an SDCM disagreement outside the
 * model's assumptions (replay/report/assumptions.c) on hand-built reports:
 * the band's edges (8-way from the exact binomial, direct-mapped in closed
 * form, fully associative empty), a cyclic reuse at the capacity in both
 * directions, each condition just failing (disagreement at 5 pp, the band's
 * shift under 5 pp, the shift against the simulation's direction), a log2
 * bin split at the band's edge, and the set-conflict evidence (site, stride,
 * sets reached). Expected values: P(hit | D) from Python's exact integers
 * (fractions.Fraction over math.comb), the rest by hand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "assumptions.h"
#include "report.h"

/* P(hit | D) of the 512-line 8-way L1 (Eq. 1, exact) */
#define P511          0.4540588654398175
#define MEAN_P512_838 0.1997713295217762 /* mean over D = 512..838 */

/* One configuration, L1 32 KiB 8-way, L2 256 KiB 8-way, 64-byte lines; the
 * PRD holds `exact` pairs (d, n) and `bins` triples (lo, hi, n). */
struct fixture {
    struct pes_report *r;
    struct pes_rnode *config, *local, *levels, *exact, *bins;
};

static void geometry(struct pes_report *r, struct pes_rnode *levels, unsigned n, uint64_t size)
{
    struct pes_rnode *l = pes_r_object(r, levels, NULL);
    pes_r_u64(r, l, "level", n);
    pes_r_u64(r, l, "size", size);
    pes_r_u64(r, l, "ways", 8);
    pes_r_u64(r, l, "line", 64);
    pes_r_bool(r, l, "shared", 0);
}

static struct fixture make(void)
{
    struct fixture f = {.r = pes_report_create()};
    struct pes_report *r = f.r;
    struct pes_rnode *root = pes_report_root(r);
    struct pes_rnode *levels = pes_r_array(r, pes_r_object(r, root, "machine"), "levels");
    geometry(r, levels, 1, 32768);
    geometry(r, levels, 2, 262144);
    f.config = pes_r_object(r, pes_r_array(r, root, "configs"), NULL);
    struct pes_rnode *prd = pes_r_object(r, pes_r_array(r, f.config, "prd"), NULL);
    struct pes_rnode *h = pes_r_object(r, prd, "histogram");
    f.exact = pes_r_array(r, h, "exact");
    f.bins = pes_r_array(r, h, "log2");
    pes_r_array(r, f.config, "crd");
    f.local = pes_r_array(r, pes_r_object(r, f.config, "model"), "hit_local");
    f.levels = pes_r_array(r, pes_r_object(r, f.config, "simulation"), "levels");
    return f;
}

static void reuse(struct fixture *f, uint64_t d, uint64_t n)
{
    struct pes_rnode *b = pes_r_array(f->r, f->exact, NULL);
    pes_r_u64(f->r, b, NULL, d);
    pes_r_u64(f->r, b, NULL, n);
}

/* A level: the model's local rate, the simulation's counts. */
static void level(struct fixture *f, double model, uint64_t accesses, uint64_t hits,
                  uint64_t conflict)
{
    pes_r_f64(f->r, f->local, NULL, model, "%.6f");
    struct pes_rnode *l = pes_r_object(f->r, f->levels, NULL);
    pes_r_u64(f->r, l, "accesses", accesses);
    pes_r_u64(f->r, l, "hits", hits);
    pes_r_u64(f->r, l, "conflict", conflict);
}

static const struct pes_rnode *entries(struct fixture *f)
{
    pes_assumptions_add(f->r);
    assert_false(pes_report_failed(f->r));
    const struct pes_rnode *c = pes_r_at(pes_r_get(pes_report_tree(f->r), "configs"), 0);
    return pes_r_get(c, "model_assumptions");
}

static void test_band_edges(void **state)
{
    (void)state;
    uint64_t lo, hi;
    /* 8-way: P(256) = 0.95027, P(257) = 0.94934; P(838) = 0.05016, P(839) = 0.04975 */
    pes_assumptions_band(512, 8, &lo, &hi);
    assert_int_equal(lo, 257);
    assert_int_equal(hi, 839);
    /* direct-mapped: (511/512)^D < 0.95 from D > ln 0.95 / ln(511/512) = 26.24,
     * <= 0.05 from D >= ln 0.05 / ln(511/512) = 1532.3 */
    pes_assumptions_band(512, 1, &lo, &hi);
    assert_int_equal(lo, 27);
    assert_int_equal(hi, 1533);
    /* fully associative: SDCM is the step, no band */
    pes_assumptions_band(512, 0, &lo, &hi);
    assert_true(lo == 512 && hi == 512);
    pes_assumptions_band(512, 512, &lo, &hi);
    assert_true(lo == 512 && hi == 512);
}

/* 1,000 reuses at D = 511 after 100 first touches: the simulation hits all
 * of them (an exact fit), SDCM 45.4 % of them. */
static void test_cyclic_fit(void **state)
{
    (void)state;
    struct fixture f = make();
    reuse(&f, 511, 1000);
    level(&f, 1000 * P511 / 1100, 1100, 1000, 0);
    const struct pes_rnode *es = entries(&f);
    assert_int_equal(pes_r_count(es), 1);
    const struct pes_rnode *e = pes_r_at(es, 0);
    assert_int_equal(pes_r_get_u(e, "level"), 1);
    assert_string_equal(pes_r_get_s(e, "reason"), "cyclic_at_capacity");
    assert_int_equal(pes_r_get_u(e, "capacity_lines"), 512);
    assert_int_equal(pes_r_u(pes_r_at(pes_r_get(e, "band_lines"), 0)), 257);
    assert_int_equal(pes_r_u(pes_r_at(pes_r_get(e, "band_lines"), 1)), 838);
    assert_true(fabs(pes_r_get_f(e, "band_share") - 1000.0 / 1100) < 1e-6);
    assert_true(fabs(pes_r_get_f(e, "band_shift") - 1000 * (1 - P511) / 1100) < 1e-6);
    assert_false(pes_r_get_u(e, "binned"));
    pes_report_destroy(f.r);
}

/* The same profile with the model already within 5 pp (a rounded 0.05 off
 * would be at the threshold: not above it): nothing is named. */
static void test_within_threshold(void **state)
{
    (void)state;
    struct fixture f = make();
    reuse(&f, 511, 1000);
    level(&f, 1000.0 / 1100 - 0.049, 1100, 1000, 0);
    assert_null(entries(&f));
    pes_report_destroy(f.r);
}

/* The shift points up (SDCM below an even walk) but the simulation hits
 * less than the model: not a cyclic walk; with most misses conflict misses,
 * set conflicts. */
static void test_against_direction(void **state)
{
    (void)state;
    struct fixture f = make();
    reuse(&f, 511, 1000);
    level(&f, 0.40, 1100, 100, 600); /* 9.1 % hits, 600 of 1,000 misses conflict */
    const struct pes_rnode *es = entries(&f);
    assert_int_equal(pes_r_count(es), 1);
    const struct pes_rnode *e = pes_r_at(es, 0);
    assert_string_equal(pes_r_get_s(e, "reason"), "set_conflicts");
    assert_true(fabs(pes_r_get_f(e, "conflict_share") - 0.6) < 1e-9);
    assert_null(pes_r_get(e, "site")); /* no all_sites table */
    pes_report_destroy(f.r);
}

/* 50 reuses at D = 511 among 1,000 at D = 10: they could move the rate by
 * 50 (1 - P511) / 1,100 = 2.5 pp, under 5 pp, whatever the simulation says. */
static void test_small_shift(void **state)
{
    (void)state;
    struct fixture f = make();
    reuse(&f, 10, 1000);
    reuse(&f, 511, 50);
    level(&f, 0.80, 1100, 1050, 0);
    assert_null(entries(&f));
    pes_report_destroy(f.r);
}

/* A log2 bin [512, 1024) of 1,024 reuses: its part in the band, D = 512..838,
 * is 327 of its 512 distances; there an even walk misses and SDCM hits with
 * mean probability MEAN_P512_838: the shift is -654 x that / 2,048. */
static void test_binned_above(void **state)
{
    (void)state;
    struct fixture f = make();
    struct pes_rnode *b = pes_r_array(f.r, f.bins, NULL);
    pes_r_u64(f.r, b, NULL, 512);
    pes_r_u64(f.r, b, NULL, 1024);
    pes_r_u64(f.r, b, NULL, 1024);
    level(&f, 0.30, 2048, 0, 0);
    const struct pes_rnode *es = entries(&f);
    assert_int_equal(pes_r_count(es), 1);
    const struct pes_rnode *e = pes_r_at(es, 0);
    assert_string_equal(pes_r_get_s(e, "reason"), "cyclic_at_capacity");
    assert_true(fabs(pes_r_get_f(e, "band_share") - 654.0 / 2048) < 1e-6);
    assert_true(fabs(pes_r_get_f(e, "band_shift") + 654 * MEAN_P512_838 / 2048) < 1e-6);
    assert_true(pes_r_get_u(e, "binned"));
    pes_report_destroy(f.r);
}

/* Set conflicts with a site table: the site with the most conflict misses
 * at the level, its stride of 2,048 bytes = 32 lines, which reaches
 * 64 / gcd(32, 64) = 2 of the 64 sets; the L2 (512 sets) is within 5 pp. */
static void test_conflict_site(void **state)
{
    (void)state;
    struct fixture f = make();
    level(&f, 0.90, 1000, 100, 800);
    level(&f, 0.50, 900, 470, 0);
    struct pes_rnode *sim = (struct pes_rnode *)pes_r_get(f.config, "simulation");
    struct pes_rnode *all = pes_r_array(f.r, sim, "all_sites");
    const char *file[2] = {"/src/a.c", "/src/b.c"};
    const uint64_t conflict[2] = {300, 500};
    for (int i = 0; i < 2; i++) {
        struct pes_rnode *row = pes_r_object(f.r, all, NULL);
        pes_r_u64(f.r, row, "site", (uint64_t)i + 7);
        pes_r_str(f.r, row, "file", file[i]);
        pes_r_u64(f.r, row, "line", 12);
        pes_r_str(f.r, row, "function", "walk");
        struct pes_rnode *c = pes_r_array(f.r, row, "conflict");
        pes_r_u64(f.r, c, NULL, conflict[i]);
        pes_r_u64(f.r, c, NULL, 0);
    }
    struct pes_rnode *st = pes_r_object(f.r, pes_r_array(f.r, f.config, "site_strides"), NULL);
    pes_r_u64(f.r, st, "site", 8);
    pes_r_u64(f.r, st, "min_stride", 2048);
    const struct pes_rnode *es = entries(&f);
    assert_int_equal(pes_r_count(es), 1);
    const struct pes_rnode *e = pes_r_at(es, 0);
    assert_string_equal(pes_r_get_s(e, "reason"), "set_conflicts");
    assert_string_equal(pes_r_get_s(e, "site"), "b.c:12 walk");
    assert_int_equal(pes_r_get_u(e, "site_conflict_misses"), 500);
    assert_int_equal(pes_r_get_u(e, "stride_bytes"), 2048);
    assert_int_equal(pes_r_get_u(e, "sets_reached"), 2);
    assert_int_equal(pes_r_get_u(e, "sets"), 64);
    pes_report_destroy(f.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band_edges),       cmocka_unit_test(test_cyclic_fit),
        cmocka_unit_test(test_within_threshold), cmocka_unit_test(test_against_direction),
        cmocka_unit_test(test_small_shift),      cmocka_unit_test(test_binned_above),
        cmocka_unit_test(test_conflict_site),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
