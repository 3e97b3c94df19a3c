/* Id-range assignment and table conversion for registered modules
 * (rt_module_table.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"

static void ranges_are_consecutive_from_zero(void **state)
{
    (void)state;
    uint32_t next = 0, base;
    /* (sites, bbs) of four modules, including an empty one */
    const uint32_t mods[4][2] = {{3, 2}, {0, 0}, {10, 5}, {1, 0}};
    const uint32_t want[4] = {0, 5, 5, 20};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pes_rt_assign_range(&next, mods[i][0], mods[i][1], &base), 0);
        assert_int_equal(base, want[i]);
    }
    assert_int_equal(next, 21);
}

static void ranges_never_reach_control_ids(void **state)
{
    (void)state;
    uint32_t next = PES_ID_CONTROL_FIRST - 4, base = 123;
    assert_int_equal(pes_rt_assign_range(&next, 3, 2, &base), -1); /* would end at FIRST+1 */
    assert_int_equal(next, PES_ID_CONTROL_FIRST - 4);
    assert_int_equal(base, 123);
    assert_int_equal(pes_rt_assign_range(&next, 2, 2, &base), 0); /* ends exactly at FIRST */
    assert_int_equal(base, PES_ID_CONTROL_FIRST - 4);
    assert_int_equal(next, PES_ID_CONTROL_FIRST);
    assert_int_equal(pes_rt_assign_range(&next, 1, 0, &base), -1);
    next = 5;
    assert_int_equal(pes_rt_assign_range(&next, UINT32_MAX, UINT32_MAX, &base), -1); /* no wrap */
}

/* "a.c" at 0, "f" at 4, "bb.x" at 6; the last 3 bytes "end" are not terminated. */
static const char strtab[] = {'a', '.', 'c', 0, 'f', 0, 'b', 'b', '.', 'x', 0, 'e', 'n', 'd'};

static void conversion_resolves_strings_and_globalises_ids(void **state)
{
    (void)state;
    const struct pes_rt_site sites[3] = {
        {7, 2, PES_KIND_LOAD, PES_SITE_SHARED, 8, 1, 0, 4},
        {9, 0, PES_KIND_COPY_DST, 0, 0, 0, 999, 11}, /* bad file offset, unterminated name */
        {0, 0, PES_KIND_STORE, 0, 4, 7, 4, 14},      /* bb out of range, offset == size */
    };
    const struct pes_rt_bb bbs[2] = {
        {.function = 4,
         .label = 6,
         .n_sites = 1,
         .flags = PES_BB_MODEL_FACTS,
         .ops = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
         .forks = 1,
         .barriers = 2,
         .instrs = {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
         .chain = {[PES_OP_FP_ADD] = 1, [PES_OP_OTHER] = 3}},
        {.function = 4, .label = 12345, .n_sites = 2, .flags = PES_BB_PARALLEL, .ops = {0}},
    };
    uint32_t id_base_slot = 0;
    struct pes_rt_module m = {PES_RT_ABI_VERSION, 3, 2, sizeof strtab, sites, bbs, strtab, "unit.c",
                              &id_base_slot};
    struct pes_module *out = pes_rt_module_convert(&m, 100);
    assert_non_null(out);
    assert_int_equal(out->id_base, 100);
    assert_int_equal(out->n_sites, 3);
    assert_int_equal(out->n_bbs, 2);
    assert_string_equal(out->name, "unit.c");

    assert_int_equal(out->sites[0].id, 100);
    assert_int_equal(out->sites[0].bb, 100 + 3 + 1);
    assert_int_equal(out->sites[0].kind, PES_KIND_LOAD);
    assert_int_equal(out->sites[0].flags, PES_SITE_SHARED);
    assert_int_equal(out->sites[0].line, 7);
    assert_int_equal(out->sites[0].column, 2);
    assert_int_equal(out->sites[0].size, 8);
    assert_string_equal(out->sites[0].file, "a.c");
    assert_string_equal(out->sites[0].function, "f");

    assert_int_equal(out->sites[1].id, 101);
    assert_int_equal(out->sites[1].bb, 103);
    assert_string_equal(out->sites[1].file, "");
    assert_string_equal(out->sites[1].function, ""); /* "end" has no terminator */

    assert_int_equal(out->sites[2].bb, UINT32_MAX);
    assert_string_equal(out->sites[2].function, ""); /* offset == strtab_size */

    assert_int_equal(out->bbs[0].id, 103);
    assert_int_equal(out->bbs[1].id, 104);
    assert_string_equal(out->bbs[0].function, "f");
    assert_string_equal(out->bbs[0].label, "bb.x");
    assert_string_equal(out->bbs[1].label, "");
    for (int i = 0; i < PES_OP_COUNT; i++) {
        assert_int_equal(out->bbs[0].ops[i], i + 1);
        assert_int_equal(out->bbs[0].instrs[i], PES_OP_COUNT - i);
        assert_int_equal(out->bbs[0].chain[i], i == PES_OP_FP_ADD ? 1 : i == PES_OP_OTHER ? 3 : 0);
        assert_int_equal(out->bbs[1].chain[i], 0);
    }
    assert_int_equal(out->bbs[0].flags, PES_BB_MODEL_FACTS);
    assert_int_equal(out->bbs[0].forks, 1);
    assert_int_equal(out->bbs[0].barriers, 2);
    assert_int_equal(out->bbs[1].forks, 0);
    assert_int_equal(out->bbs[1].flags, PES_BB_PARALLEL);
    assert_int_equal(out->bbs[1].n_sites, 2);
    free(out);
}

/* The tables outlive the module: a dlclose unmaps its strings before the
 * writer encodes the converted tables. */
static void conversion_copies_the_strings(void **state)
{
    (void)state;
    char *tab = malloc(sizeof strtab);
    char *name = strdup("lib.c");
    assert_non_null(tab);
    assert_non_null(name);
    memcpy(tab, strtab, sizeof strtab);
    const struct pes_rt_site sites[1] = {{7, 2, PES_KIND_LOAD, 0, 8, 1, 0, 4}};
    const struct pes_rt_bb bbs[1] = {{.function = 4, .label = 6, .n_sites = 1, .ops = {0}}};
    uint32_t slot = 0;
    struct pes_rt_module m = {
        PES_RT_ABI_VERSION, 1, 1, sizeof strtab, sites, bbs, tab, name, &slot};
    struct pes_module *out = pes_rt_module_convert(&m, 0);
    assert_non_null(out);
    memset(tab, 'X', sizeof strtab); /* as if unmapped and the pages reused */
    memset(name, 'X', strlen(name));
    free(tab);
    free(name);
    assert_string_equal(out->name, "lib.c");
    assert_string_equal(out->sites[0].file, "a.c");
    assert_string_equal(out->sites[0].function, "f");
    assert_string_equal(out->bbs[0].function, "f");
    assert_string_equal(out->bbs[0].label, "bb.x");
    free(out);
}

static void conversion_of_empty_module(void **state)
{
    (void)state;
    uint32_t slot;
    struct pes_rt_module m = {PES_RT_ABI_VERSION, 0, 0, 0, NULL, NULL, NULL, NULL, &slot};
    struct pes_module *out = pes_rt_module_convert(&m, 7);
    assert_non_null(out);
    assert_int_equal(out->n_sites + out->n_bbs, 0);
    assert_string_equal(out->name, "");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_are_consecutive_from_zero),
        cmocka_unit_test(ranges_never_reach_control_ids),
        cmocka_unit_test(conversion_resolves_strings_and_globalises_ids),
        cmocka_unit_test(conversion_copies_the_strings),
        cmocka_unit_test(conversion_of_empty_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
