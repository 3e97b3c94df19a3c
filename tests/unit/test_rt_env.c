/* Strict PES_* environment parsing: the runtime's call (rt_env.c) of
 * pes_settings_from_env, with its messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"

/* A fake environment: NULL-terminated name/value pairs. */
static const char *table_get(const char *name, void *ctx)
{
    const char *const *kv = ctx;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static int parse(const char *const *env, struct pes_collect_settings *c, char *msg)
{
    return pes_rt_config_parse(c, table_get, (void *)env, msg, 256);
}

static void defaults_when_unset(void **state)
{
    (void)state;
    const char *env[] = {NULL};
    struct pes_collect_settings c;
    char msg[256];
    assert_int_equal(parse(env, &c, msg), 0);
    assert_null(c.full_output); /* off */
    assert_int_equal(c.time_interval, 1024);
    assert_int_equal(c.buffer_records, 65536);
    assert_int_equal(c.zstd_level, 1);
    assert_int_equal(c.writers, 0); /* from the affinity mask */
    assert_int_equal(c.quiet, 0);
    assert_int_equal(c.overwrite, 0);
    assert_null(c.command);
    assert_int_equal(c.roi, 1); /* markers obeyed */
    assert_int_equal(c.skip, 0);
    assert_int_equal(c.max_accesses, 0); /* all */
}

static void valid_values(void **state)
{
    (void)state;
    const char *env[] = {"PES_FULL_OUTPUT",
                         "/tmp/x.zst",
                         "PES_TIME_INTERVAL",
                         "1",
                         "PES_BUFFER_RECORDS",
                         "16",
                         "PES_ZSTD_LEVEL",
                         "22",
                         "PES_QUIET",
                         "1",
                         "PES_WRITERS",
                         "1",
                         "PES_OVERWRITE",
                         "0",
                         "PES_COMMAND",
                         "./a 'b c'",
                         NULL};
    struct pes_collect_settings c;
    char msg[256];
    assert_int_equal(parse(env, &c, msg), 0);
    assert_string_equal(c.full_output, "/tmp/x.zst");
    assert_int_equal(c.time_interval, 1);
    assert_int_equal(c.buffer_records, 16);
    assert_int_equal(c.zstd_level, 22);
    assert_int_equal(c.writers, 1);
    assert_int_equal(c.quiet, 1);
    assert_int_equal(c.overwrite, 0);
    assert_string_equal(c.command, "./a 'b c'");

    const char *big[] = {"PES_TIME_INTERVAL",
                         "4294967295",
                         "PES_BUFFER_RECORDS",
                         "67108864",
                         "PES_WRITERS",
                         "64",
                         NULL};
    assert_int_equal(parse(big, &c, msg), 0);
    assert_int_equal(c.time_interval, 4294967295u);
    assert_int_equal(c.buffer_records, 67108864u);
    assert_int_equal(c.writers, 64);
}

static void expect_error(const char *name, const char *value, const char *message)
{
    const char *env[] = {name, value, NULL};
    struct pes_collect_settings c;
    char msg[256];
    assert_int_equal(parse(env, &c, msg), -1);
    if (message)
        assert_string_equal(msg, message);
    else
        assert_non_null(strstr(msg, name));
}

/* What a full trace keeps (rt_roi.c): PES_ROI, PES_SKIP, PES_MAX_ACCESSES. */
static void gate_values(void **state)
{
    (void)state;
    struct pes_collect_settings c;
    char msg[256];
    const char *env[] = {"PES_ROI", "0", "PES_SKIP", "0", "PES_MAX_ACCESSES", "1", NULL};
    assert_int_equal(parse(env, &c, msg), 0);
    assert_int_equal(c.roi, 0);
    assert_int_equal(c.skip, 0);
    assert_int_equal(c.max_accesses, 1);
    const char *big[] = {"PES_SKIP", "18446744073709551615", "PES_MAX_ACCESSES",
                         "18446744073709551615", NULL};
    assert_int_equal(parse(big, &c, msg), 0);
    assert_true(c.skip == UINT64_MAX && c.max_accesses == UINT64_MAX);
    expect_error("PES_ROI", "yes", "PES_ROI=yes: expected 0 or 1");
    expect_error("PES_MAX_ACCESSES", "0",
                 "PES_MAX_ACCESSES=0: expected an integer from 1 to 18446744073709551615");
    expect_error("PES_SKIP", "-1", NULL);
    expect_error("PES_SKIP", "18446744073709551616", NULL); /* 2^64 */
}

static void invalid_values(void **state)
{
    (void)state;
    expect_error("PES_TIME_INTERVAL", "abc", "PES_TIME_INTERVAL=abc: expected a positive integer");
    expect_error("PES_TIME_INTERVAL", "0", "PES_TIME_INTERVAL=0: expected a positive integer");
    expect_error("PES_TIME_INTERVAL", "-5", NULL);
    expect_error("PES_TIME_INTERVAL", "+5", NULL);
    expect_error("PES_TIME_INTERVAL", " 5", NULL);
    expect_error("PES_TIME_INTERVAL", "5 ", NULL);
    expect_error("PES_TIME_INTERVAL", "", NULL);
    expect_error("PES_TIME_INTERVAL", "0x10", NULL);
    expect_error("PES_TIME_INTERVAL", "4294967296", NULL);              /* 2^32 */
    expect_error("PES_TIME_INTERVAL", "99999999999999999999999", NULL); /* > 2^64 */
    expect_error("PES_BUFFER_RECORDS", "15",
                 "PES_BUFFER_RECORDS=15: expected an integer from 16 to 67108864");
    expect_error("PES_BUFFER_RECORDS", "67108865", NULL);
    expect_error("PES_ZSTD_LEVEL", "0", NULL);
    expect_error("PES_ZSTD_LEVEL", "23", NULL);
    expect_error("PES_WRITERS", "0", "PES_WRITERS=0: expected an integer from 1 to 64");
    expect_error("PES_WRITERS", "65", NULL);
    expect_error("PES_WRITERS", "four", NULL);
    expect_error("PES_WRITERS", "", NULL);
    expect_error("PES_QUIET", "yes", "PES_QUIET=yes: expected 0 or 1");
    expect_error("PES_OVERWRITE", "2", NULL);
    expect_error("PES_FULL_OUTPUT", "", "PES_FULL_OUTPUT=: expected a file path");
}

static void writers_default(void **state)
{
    (void)state;
    assert_int_equal(pes_rt_writers_for_cpus(-1), 1); /* sched_getaffinity failed */
    assert_int_equal(pes_rt_writers_for_cpus(0), 1);
    assert_int_equal(pes_rt_writers_for_cpus(1), 1);
    assert_int_equal(pes_rt_writers_for_cpus(2), 2);
    assert_int_equal(pes_rt_writers_for_cpus(8), 8);
    assert_int_equal(pes_rt_writers_for_cpus(192), 8);
}

static void sampling_values(void **state)
{
    (void)state;
    struct pes_collect_settings c;
    char msg[256];
    /* sampling settings are ignored without PES_SAMPLE_OUTPUT */
    const char *off[] = {"PES_MODE", "bogus", NULL};
    assert_int_equal(parse(off, &c, msg), 0);
    assert_null(c.sample_output);
    const char *dflt[] = {"PES_SAMPLE_OUTPUT", "/tmp/s.zst", NULL};
    assert_int_equal(parse(dflt, &c, msg), 0);
    assert_string_equal(c.sample_output, "/tmp/s.zst");
    assert_int_equal(c.mode, PES_RT_MODE_SAMPLES);
    assert_int_equal(c.period_load, 100000);
    assert_int_equal(c.period_store, 100000);
    assert_int_equal(c.debug_registers, 4);
    assert_int_equal(c.sockets, 0);
    assert_int_equal(c.spatial, 0);
    const char *all[] = {"PES_SAMPLE_OUTPUT",
                         "s",
                         "PES_MODE",
                         "reuse-shared",
                         "PES_PERIOD_LOAD",
                         "0",
                         "PES_PERIOD_STORE",
                         "7",
                         "PES_GRANULARITY",
                         "spatial",
                         "PES_SOCKETS",
                         "2",
                         "PES_DEBUG_REGISTERS",
                         "1",
                         "PES_SEED",
                         "18446744073709551615",
                         NULL};
    assert_int_equal(parse(all, &c, msg), 0);
    assert_int_equal(c.mode, PES_RT_MODE_REUSE_SHARED);
    assert_int_equal(c.period_load, 0);
    assert_int_equal(c.period_store, 7);
    assert_int_equal(c.spatial, 1);
    assert_int_equal(c.sockets, 2);
    assert_int_equal(c.debug_registers, 1);
    assert_true(c.seed == UINT64_MAX);
    /* every mode by its name, and the runtime's ids are the table's */
    for (int m = PES_RT_MODE_SAMPLES; m <= PES_RT_MODE_COMM; m++) {
        const char *by_name[] = {"PES_SAMPLE_OUTPUT", "s", "PES_MODE", pes_rt_mode_name(m), NULL};
        assert_int_equal(parse(by_name, &c, msg), 0);
        assert_int_equal(c.mode, m);
    }
    assert_string_equal(pes_rt_mode_name(PES_RT_MODE_REUSE_SHARED), "reuse-shared");
    assert_string_equal(pes_rt_mode_name(0), "?");

    const char *bad_mode[] = {"PES_SAMPLE_OUTPUT", "s", "PES_MODE", "reuse2", NULL};
    assert_int_equal(parse(bad_mode, &c, msg), -1);
    assert_string_equal(msg, "PES_MODE=reuse2: expected samples, reuse, reuse-shared or comm");
    const char *nothing[] = {
        "PES_SAMPLE_OUTPUT", "s", "PES_PERIOD_LOAD", "0", "PES_PERIOD_STORE", "0", NULL};
    assert_int_equal(parse(nothing, &c, msg), -1);
    const char *regs[] = {"PES_SAMPLE_OUTPUT", "s", "PES_DEBUG_REGISTERS", "5", NULL};
    assert_int_equal(parse(regs, &c, msg), -1);
    assert_string_equal(msg, "PES_DEBUG_REGISTERS=5: expected an integer from 1 to 4");
    const char *gran[] = {"PES_SAMPLE_OUTPUT", "s", "PES_GRANULARITY", "line", NULL};
    assert_int_equal(parse(gran, &c, msg), -1);
    const char *sockets[] = {"PES_SAMPLE_OUTPUT", "s", "PES_SOCKETS", "65", NULL};
    assert_int_equal(parse(sockets, &c, msg), -1);
    const char *empty[] = {"PES_SAMPLE_OUTPUT", "", NULL};
    assert_int_equal(parse(empty, &c, msg), -1);
    /* --samples: adaptive period; off unless set */
    const char *target[] = {"PES_SAMPLE_OUTPUT", "s",   "PES_MODE", "reuse",
                            "PES_SAMPLES",       "200", NULL};
    assert_int_equal(parse(target, &c, msg), 0);
    assert_int_equal(c.samples_target, 200);
    const char *no_target[] = {"PES_SAMPLE_OUTPUT", "s", NULL};
    assert_int_equal(parse(no_target, &c, msg), 0);
    assert_int_equal(c.samples_target, 0);
    const char *zero[] = {"PES_SAMPLE_OUTPUT", "s", "PES_SAMPLES", "0", NULL};
    assert_int_equal(parse(zero, &c, msg), -1);
    assert_string_equal(msg, "PES_SAMPLES=0: expected a positive integer");
    const char *word[] = {"PES_SAMPLE_OUTPUT", "s", "PES_SAMPLES", "many", NULL};
    assert_int_equal(parse(word, &c, msg), -1);
    assert_string_equal(msg, "PES_SAMPLES=many: expected a positive integer");
    /* how watchpoints are re-armed: modify unless reopen is asked for */
    assert_int_equal(parse(no_target, &c, msg), 0);
    assert_int_equal(c.watch_rearm, PES_WATCH_REARM_MODIFY);
    const char *reopen[] = {"PES_SAMPLE_OUTPUT", "s", "PES_WATCH_REARM", "reopen", NULL};
    assert_int_equal(parse(reopen, &c, msg), 0);
    assert_int_equal(c.watch_rearm, PES_WATCH_REARM_REOPEN);
    const char *modify[] = {"PES_SAMPLE_OUTPUT", "s", "PES_WATCH_REARM", "modify", NULL};
    assert_int_equal(parse(modify, &c, msg), 0);
    assert_int_equal(c.watch_rearm, PES_WATCH_REARM_MODIFY);
    const char *rearm[] = {"PES_SAMPLE_OUTPUT", "s", "PES_WATCH_REARM", "Reopen", NULL};
    assert_int_equal(parse(rearm, &c, msg), -1);
    assert_string_equal(msg, "PES_WATCH_REARM=Reopen: expected modify or reopen");
}

static void parse_u64_bounds(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_int_equal(pes_rt_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(pes_rt_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -1);
    assert_int_equal(pes_rt_parse_u64("10", 11, 20, &v), -1);
    assert_int_equal(pes_rt_parse_u64("20", 11, 20, &v), 0);
    assert_int_equal(v, 20);
    assert_int_equal(pes_rt_parse_u64(NULL, 0, 1, &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_when_unset), cmocka_unit_test(valid_values),
        cmocka_unit_test(invalid_values),      cmocka_unit_test(gate_values),
        cmocka_unit_test(parse_u64_bounds),    cmocka_unit_test(writers_default),
        cmocka_unit_test(sampling_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
