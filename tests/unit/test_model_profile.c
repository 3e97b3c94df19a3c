/* Reuse profile binning: exact small distances, log2 bin boundaries, merge, mean. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

static void test_exact_and_bins(void **state)
{
    (void)state;
    /* exact bins are the distance itself */
    assert_int_equal(pes_profile_bin_index(0), 0);
    assert_int_equal(pes_profile_bin_index(1), 1);
    assert_int_equal(pes_profile_bin_index(1023), 1023);
    /* first log2 bin is [1024, 2048) */
    assert_int_equal(pes_profile_bin_index(1024), 1024);
    assert_int_equal(pes_profile_bin_index(2047), 1024);
    assert_int_equal(pes_profile_bin_index(2048), 1025);
    assert_int_equal(pes_profile_bin_index(4095), 1025);
    assert_int_equal(pes_profile_bin_index(4096), 1026);
    /* last bin [2^47, 2^48), larger distances clamp into it */
    size_t last = PES_PROFILE_BINS - 1;
    assert_int_equal(last, 1024 + 37);
    assert_int_equal(pes_profile_bin_index(1ull << 47), last);
    assert_int_equal(pes_profile_bin_index((1ull << 48) - 1), last);
    assert_int_equal(pes_profile_bin_index(1ull << 48), last);
    assert_int_equal(pes_profile_bin_index(UINT64_MAX - 1), last);
    assert_int_equal(pes_profile_bin_index((1ull << 47) - 1), last - 1);

    uint64_t lo, hi;
    pes_profile_bin_range(7, &lo, &hi);
    assert_int_equal(lo, 7);
    assert_int_equal(hi, 8);
    pes_profile_bin_range(1024, &lo, &hi);
    assert_int_equal(lo, 1024);
    assert_int_equal(hi, 2048);
    pes_profile_bin_range(last, &lo, &hi);
    assert_int_equal(lo, 1ull << 47);
    assert_int_equal(hi, 1ull << 48);
    /* every bin's range maps back to the bin, and ranges tile [0, 2^48) */
    uint64_t expect_lo = 0;
    for (size_t i = 0; i < PES_PROFILE_BINS; i++) {
        pes_profile_bin_range(i, &lo, &hi);
        assert_int_equal(lo, expect_lo);
        assert_int_equal(pes_profile_bin_index(lo), i);
        assert_int_equal(pes_profile_bin_index(hi - 1), i);
        expect_lo = hi;
    }
    assert_int_equal(expect_lo, 1ull << 48);
}

static void test_add_total_mean(void **state)
{
    (void)state;
    static struct pes_reuse_profile p;
    pes_profile_init(&p);
    assert_int_equal(pes_profile_total(&p), 0);
    assert_true(pes_profile_mean(&p) == 0.0);
    /* PPT-Multicore Table 2: w x w y x z z w -> inf inf 1 inf 2 inf 0 3 */
    const uint64_t rd[] = {
        PES_DISTANCE_COLD, PES_DISTANCE_COLD, 1, PES_DISTANCE_COLD, 2, PES_DISTANCE_COLD, 0, 3};
    for (size_t i = 0; i < 8; i++)
        pes_profile_add(&p, rd[i], 1);
    assert_int_equal(p.cold, 4);
    assert_int_equal(p.exact[0], 1);
    assert_int_equal(p.exact[3], 1);
    assert_int_equal(pes_profile_total(&p), 8);
    assert_near(pes_profile_mean(&p), 1.5, 1e-12); /* (0+1+2+3)/4 */

    pes_profile_add(&p, 1500, 4); /* bin [1024,2048), midpoint 1535.5 */
    assert_int_equal(p.log2[0], 4);
    assert_int_equal(pes_profile_bin_count(&p, 1024), 4);
    assert_int_equal(pes_profile_total(&p), 12);
    assert_near(pes_profile_mean(&p), (6.0 + 4 * 1535.5) / 8, 1e-9);
}

static void test_merge(void **state)
{
    (void)state;
    static struct pes_reuse_profile a, b;
    pes_profile_init(&a);
    pes_profile_init(&b);
    pes_profile_add(&a, 5, 2);
    pes_profile_add(&a, 3000, 1);
    pes_profile_add(&a, PES_DISTANCE_COLD, 7);
    pes_profile_add(&b, 5, 3);
    pes_profile_add(&b, 1ull << 40, 9);
    pes_profile_add(&b, PES_DISTANCE_COLD, 1);
    pes_profile_merge(&a, &b);
    assert_int_equal(a.exact[5], 5);
    assert_int_equal(pes_profile_bin_count(&a, pes_profile_bin_index(3000)), 1);
    assert_int_equal(pes_profile_bin_count(&a, pes_profile_bin_index(1ull << 40)), 9);
    assert_int_equal(a.cold, 8);
    assert_int_equal(pes_profile_total(&a), 5 + 1 + 9 + 8);
    assert_int_equal(pes_profile_total(&b), 13); /* src untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_and_bins),
        cmocka_unit_test(test_add_total_mean),
        cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
