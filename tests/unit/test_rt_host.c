/* Host description from a fake sysfs tree and cpuinfo (rt_host.c). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"

static char root[256];

static void put(const char *rel, const char *content)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static void cache(int idx, const char *level, const char *type, const char *size, const char *ways,
                  const char *line, const char *shared)
{
    char rel[128];
    const char *names[] = {
        "level", "type", "size", "ways_of_associativity", "coherency_line_size", "shared_cpu_list"};
    const char *vals[] = {level, type, size, ways, line, shared};
    for (int i = 0; i < 6; i++) {
        if (!vals[i])
            continue;
        snprintf(rel, sizeof rel, "cpu/cpu0/cache/index%d/%s", idx, names[i]);
        put(rel, vals[i]);
    }
}

static int setup(void **state)
{
    (void)state;
    strcpy(root, "/tmp/pes-test-rt-host.XXXXXX");
    assert_non_null(mkdtemp(root));
    /* deliberately created out of order: the result must be sorted by level */
    cache(3, "3\n", "Unified\n", "32768K\n", "16\n", "64\n", "0-7,16-23\n");
    cache(0, "1\n", "Data\n", "48K\n", "12\n", "64\n", "0,8\n");
    cache(2, "2\n", "Unified\n", "2M\n", "20\n", "64\n", "0\n");
    cache(1, "1\n", "Instruction\n", "32K\n", "8\n", "64\n", "0,8\n");
    cache(4, "2\n", "Trace\n", "1K\n", "1\n", "64\n", "0\n"); /* unknown type: skipped */
    cache(5, "x\n", "Data\n", "1K\n", "1\n", "64\n", "0\n");  /* bad level: skipped */
    cache(6, NULL, "Data\n", "1K\n", "1\n", "64\n", "0\n");   /* no level: skipped */
    put("cpu/cpu0/topology/physical_package_id", "0\n");
    put("cpu/cpu1/topology/physical_package_id", "0\n");
    put("cpu/cpu2/topology/physical_package_id", "1\n");
    put("cpu/cpu3/topology/physical_package_id", "1\n");
    put("cpu/cpu10/topology/physical_package_id", "3\n");
    put("cpu/cpufreq/dummy", ""); /* not a cpuN directory */
    put("cpuinfo", "processor\t: 0\nvendor_id\t: X\nmodel name\t: Fake CPU @ 1.00GHz\n"
                   "processor\t: 1\nmodel name\t: Other\n");
    put("cpuinfo-none", "processor\t: 0\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static void caches_from_fake_sysfs(void **state)
{
    (void)state;
    char sys[300];
    snprintf(sys, sizeof sys, "%s/cpu", root);
    struct pes_cache_level c[PES_MAX_CACHE_LEVELS];
    uint32_t n = pes_rt_host_caches(sys, c, PES_MAX_CACHE_LEVELS);
    assert_int_equal(n, 4);
    /* L1D */
    assert_int_equal(c[0].level, 1);
    assert_int_equal(c[0].type, 'D');
    assert_true(c[0].size == 48 * 1024);
    assert_int_equal(c[0].ways, 12);
    assert_int_equal(c[0].line_size, 64);
    assert_int_equal(c[0].shared_by, 2);
    /* L1I */
    assert_int_equal(c[1].level, 1);
    assert_int_equal(c[1].type, 'I');
    assert_true(c[1].size == 32 * 1024);
    /* L2 */
    assert_int_equal(c[2].level, 2);
    assert_int_equal(c[2].type, 'U');
    assert_true(c[2].size == 2 * 1024 * 1024);
    assert_int_equal(c[2].ways, 20);
    assert_int_equal(c[2].shared_by, 1);
    /* L3 */
    assert_int_equal(c[3].level, 3);
    assert_true(c[3].size == 32ull * 1024 * 1024);
    assert_int_equal(c[3].shared_by, 16);

    /* capacity limit respected */
    assert_int_equal(pes_rt_host_caches(sys, c, 2), 2);
    /* missing tree: nothing, no crash */
    assert_int_equal(pes_rt_host_caches("/nonexistent/pes", c, PES_MAX_CACHE_LEVELS), 0);
}

static void sockets_and_model(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/cpu", root);
    assert_int_equal(pes_rt_host_sockets(path), 3); /* packages 0, 1, 3 */
    assert_int_equal(pes_rt_host_sockets("/nonexistent/pes"), 1);
    snprintf(path, sizeof path, "%s/cpuinfo", root);
    char *model = pes_rt_host_cpu_model(path);
    assert_non_null(model);
    assert_string_equal(model, "Fake CPU @ 1.00GHz");
    free(model);
    snprintf(path, sizeof path, "%s/cpuinfo-none", root);
    assert_null(pes_rt_host_cpu_model(path));
}

static void cpulist_and_size_parsing(void **state)
{
    (void)state;
    assert_int_equal(pes_rt_cpulist_count("0"), 1);
    assert_int_equal(pes_rt_cpulist_count("0-3,8,10-11"), 7);
    assert_int_equal(pes_rt_cpulist_count("5-5"), 1);
    assert_int_equal(pes_rt_cpulist_count(""), -1);
    assert_int_equal(pes_rt_cpulist_count("3-1"), -1);
    assert_int_equal(pes_rt_cpulist_count("1,"), -1);
    assert_int_equal(pes_rt_cpulist_count("a"), -1);
    assert_int_equal(pes_rt_cpulist_count("1-"), -1);
    assert_int_equal(pes_rt_cpulist_count("1 2"), -1);
    uint64_t v;
    assert_int_equal(pes_rt_parse_size("512", &v), 0);
    assert_true(v == 512);
    assert_int_equal(pes_rt_parse_size("32K", &v), 0);
    assert_true(v == 32768);
    assert_int_equal(pes_rt_parse_size("16M", &v), 0);
    assert_true(v == 16u << 20);
    assert_int_equal(pes_rt_parse_size("K", &v), -1);
    assert_int_equal(pes_rt_parse_size("12Q", &v), -1);
    assert_int_equal(pes_rt_parse_size("", &v), -1);
    assert_int_equal(pes_rt_parse_size("-1K", &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(caches_from_fake_sysfs),
        cmocka_unit_test(sockets_and_model),
        cmocka_unit_test(cpulist_and_size_parsing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
