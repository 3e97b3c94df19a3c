/*
 * test_sampled_bytes — the bytes each thread loaded and stored, estimated
 * from a sampled trace's samples (replay/analyses/sampled_bytes.c, the
 * example of docs/replay.md "Writing a sampled analysis"), run as pes-replay
 * runs it (the registry's pipeline) on hand-built events; the oracle is
 * period x access size summed by hand below, at fixed periods and with
 * --samples periods that change over the run.
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
#include "writers.h"

static struct pes_event sample(uint32_t thread, uint64_t time, uint16_t size, int write)
{
    return (struct pes_event){.kind = PES_EV_SAMPLE,
                              .flags = write ? PES_EVF_WRITE : 0,
                              .size = size,
                              .thread = thread,
                              .other_thread = UINT32_MAX,
                              .site = 0,
                              .addr = 0x1000,
                              .time = time};
}

static struct pes_event period(uint32_t thread, uint64_t time, uint64_t load, uint64_t store)
{
    return (struct pes_event){.kind = PES_EV_PERIOD,
                              .thread = thread,
                              .other_thread = UINT32_MAX,
                              .site = UINT32_MAX,
                              .time = time,
                              .aux = load,
                              .distance = store};
}

/* The report of the events (blocks in this order), and its rows. */
static struct pes_report *report(const char *config, uint32_t threads,
                                 const struct pes_event *const *e, const size_t *n, size_t blocks)
{
    struct pes_report *r = pes_report_create();
    assert_non_null(r);
    struct pes_knobs k = {.top = 10};
    struct pes_error err = {0};
    int rc = sampled_run(config, threads, &k, e, n, blocks, NULL, r, &err);
    if (rc)
        print_message("%s\n", err.message);
    assert_int_equal(rc, 0);
    assert_false(pes_report_failed(r));
    return r;
}

static void check_row(const struct pes_rnode *rows, uint32_t t, uint64_t samples, double loaded,
                      double stored)
{
    const struct pes_rnode *row = pes_r_at(rows, t);
    assert_non_null(row);
    assert_int_equal(pes_r_get_u(row, "thread"), t);
    assert_int_equal(pes_r_get_u(row, "samples"), samples);
    assert_int_equal(pes_r_kind(pes_r_get(row, "loaded_bytes")), PES_R_U64);
    assert_true(pes_r_get_f(row, "loaded_bytes") == loaded);
    assert_true(pes_r_get_f(row, "stored_bytes") == stored);
}

/* Fixed periods: load 100, store 300. Thread 0: two 8-byte loads and a
 * 4-byte store, 2 x 100 x 8 = 1600 and 300 x 4 = 1200; thread 1: a 32-byte
 * (vector) load, 100 x 32 = 3200; thread 2 took no sample. Other events
 * (a reuse, totals) are no samples. */
static void test_fixed_period(void **state)
{
    (void)state;
    const struct pes_event b0[] = {sample(0, 1, 8, 0), sample(0, 2, 8, 0), sample(0, 3, 4, 1)};
    const struct pes_event b1[] = {
        sample(1, 1, 32, 0),
        {.kind = PES_EV_REUSE, .size = 8, .thread = 1, .other_thread = 1, .distance = 5},
        {.kind = PES_EV_TOTALS, .thread = 1, .site = UINT32_MAX, .loads = 9}};
    const struct pes_event *blocks[] = {b0, b1};
    size_t n[] = {3, 3};
    struct pes_report *r =
        report("mode=reuse\nperiod_load=100\nperiod_store=300\n", 3, blocks, n, 2);
    const struct pes_rnode *root = pes_report_tree(r), *rows = pes_r_get(root, "bytes_by_thread");
    assert_int_equal(pes_r_count(rows), 3);
    check_row(rows, 0, 3, 1600, 1200);
    check_row(rows, 1, 1, 3200, 0);
    check_row(rows, 2, 0, 0, 0);
    /* its key comes last (registry order), and the text report shows it */
    assert_string_equal(pes_r_key(pes_r_at(root, pes_r_count(root) - 1)), "bytes_by_thread");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    assert_int_equal(pes_report_write_sampled_text(m, r), 0);
    fclose(m);
    assert_non_null(strstr(text, "\nBytes by thread\n"));
    assert_non_null(strstr(text, "loaded_bytes"));
    assert_non_null(strstr(text, " 3,200"));
    free(text);
    pes_report_destroy(r);
}

/* --samples (cap 1000, 6 levels): thread 0 ran at 250 from time 10 and at
 * 1000 from time 1000, its PERIOD events in a block after its samples (the
 * stream's weights know them all before the first batch). Its load at time
 * 5 precedes every PERIOD event: the first one's period, 250 x 8 = 2000; at
 * 500: 250 x 8 = 2000; its 16-byte store at 2000: 1000 x 16 = 16000.
 * Thread 1 has no PERIOD event: the schedule's first level, 1000 >> 6 = 15,
 * 15 x 8 = 120. */
static void test_adaptive_period(void **state)
{
    (void)state;
    const struct pes_event b0[] = {sample(0, 5, 8, 0), sample(0, 500, 8, 0), sample(0, 2000, 16, 1),
                                   sample(1, 100, 8, 0)};
    const struct pes_event b1[] = {period(0, 10, 250, 250), period(0, 1000, 1000, 1000)};
    const struct pes_event *blocks[] = {b0, b1};
    size_t n[] = {4, 2};
    struct pes_report *r = report("mode=reuse\nperiod=1000\nsamples_target=2\n", 2, blocks, n, 2);
    const struct pes_rnode *rows = pes_r_get(pes_report_tree(r), "bytes_by_thread");
    check_row(rows, 0, 3, 4000, 16000);
    check_row(rows, 1, 1, 120, 0);
    pes_report_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_period),
        cmocka_unit_test(test_adaptive_period),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
