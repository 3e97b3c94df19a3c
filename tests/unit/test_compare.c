/*
 * test_compare — accuracy metrics on hand-built inputs with hand-computed
 * answers (S, Marathe top-k coverage / false positives, matrix errors).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "compare.h"

#define CLOSE(a, b) assert_true(fabs((a) - (b)) < 1e-12)

static void test_similarity(void **state)
{
    (void)state;
    const double a[] = {1, 2, 3}, b[] = {2, 4, 6};
    CLOSE(pes_cmp_similarity(a, b, 3), 1.0); /* identical once normalised */
    const double x[] = {1, 0}, y[] = {0, 1};
    CLOSE(pes_cmp_similarity(x, y, 2), 0.0); /* disjoint */
    /* RDX slides' worked example: 1 - (0.1 + 0.2 + 0.1 + 0) / 2 = 0.8 */
    const double h[] = {0.2, 0.4, 0.3, 0.1}, g[] = {0.1, 0.6, 0.2, 0.1};
    CLOSE(pes_cmp_similarity(h, g, 4), 0.8);
    /* counts: [3,1] vs [1,1] -> fractions .75/.25 vs .5/.5 -> 1 - .5/2 */
    const double c[] = {3, 1}, d[] = {1, 1};
    CLOSE(pes_cmp_similarity(c, d, 2), 0.75);
    const double z[] = {0, 0};
    CLOSE(pes_cmp_similarity(z, z, 2), 1.0);
    CLOSE(pes_cmp_similarity(z, c, 2), 0.0);
}

static void test_topk(void **state)
{
    (void)state;
    const struct pes_cmp_site full[] = {{1, 100}, {2, 50}, {3, 30}, {4, 0}, {5, 20}};
    const struct pes_cmp_site smp[] = {{5, 5}, {1, 10}, {4, 8}, {2, 1}, {9, 0}};
    struct pes_cmp_topk r;
    /* full top 3: 1,2,3 -> V1 = 180; sampled top 3: 1,4,5 -> V2 = 100+0+20 */
    assert_int_equal(pes_cmp_topk(full, 5, smp, 5, 3, &r, NULL), 0);
    CLOSE(r.v1, 180);
    CLOSE(r.v2, 120);
    CLOSE(r.coverage, 120.0 / 180.0);
    assert_int_equal(r.false_positives, 1); /* site 4: zero in the truth */
    assert_int_equal(r.n_full, 3);
    assert_int_equal(r.n_sampled, 3);
    /* k larger than both tables: full ranks 4 sites (180+20), sampled 4 of
     * which site 9 (value 0) is not ranked: V2 = 100+50+0+20 */
    assert_int_equal(pes_cmp_topk(full, 5, smp, 5, 10, &r, NULL), 0);
    CLOSE(r.v1, 200);
    CLOSE(r.v2, 170);
    assert_int_equal(r.false_positives, 1);
    assert_int_equal(r.n_full, 4);
    assert_int_equal(r.n_sampled, 4);
    /* ties broken by key: 1 and 2 win */
    const struct pes_cmp_site tie[] = {{5, 5}, {3, 5}, {2, 5}, {1, 5}};
    assert_int_equal(pes_cmp_topk(full, 5, tie, 4, 2, &r, NULL), 0);
    CLOSE(r.coverage, 1.0);
    assert_int_equal(r.false_positives, 0);
    /* a sampled site unknown to the truth is a false positive */
    const struct pes_cmp_site ghost[] = {{77, 3}};
    assert_int_equal(pes_cmp_topk(full, 5, ghost, 1, 10, &r, NULL), 0);
    CLOSE(r.v2, 0);
    assert_int_equal(r.false_positives, 1);
    /* empty truth: coverage undefined */
    assert_int_equal(pes_cmp_topk(NULL, 0, smp, 5, 10, &r, NULL), 0);
    assert_true(isnan(r.coverage));
    assert_int_equal(r.false_positives, 4); /* sites 5, 1, 4, 2 */
}

static void test_matrix(void **state)
{
    (void)state;
    const double truth[] = {0, 6, 2, 0}, est[] = {0, 3, 3, 0};
    struct pes_cmp_matrix m;
    pes_cmp_matrix(truth, est, 4, &m);
    CLOSE(m.total_true, 8);
    CLOSE(m.total_est, 6);
    CLOSE(m.volume_error, -0.25);
    /* .75/.25 vs .5/.5 -> (.25 + .25) / 2 */
    CLOSE(m.cell_error, 0.25);
    const double zero[] = {0, 0, 0, 0};
    pes_cmp_matrix(zero, est, 4, &m);
    assert_true(isnan(m.volume_error));
    assert_true(isnan(m.cell_error));
    /* an estimate of 0 is -100 % and every cell off, not undefined (issue 25:
     * the halo stencil dropped out of every summary) */
    pes_cmp_matrix(truth, zero, 4, &m);
    CLOSE(m.volume_error, -1);
    CLOSE(m.cell_error, 1);
    pes_cmp_matrix(zero, zero, 4, &m);
    CLOSE(m.volume_error, 0);
    CLOSE(m.cell_error, 0);
    pes_cmp_matrix(truth, truth, 4, &m);
    CLOSE(m.volume_error, 0);
    CLOSE(m.cell_error, 0);
}

static void test_fraction(void **state)
{
    (void)state;
    CLOSE(pes_cmp_fraction_error(3, 10, 1, 4), 0.05);
    assert_true(isnan(pes_cmp_fraction_error(1, 0, 1, 4)));
    assert_true(isnan(pes_cmp_fraction_error(1, 2, 1, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_similarity),
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_fraction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
