/* Strict PES_* environment parsing (rt_env.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rt_internal.h"

/* A fake environment: NULL-terminated name/value pairs. */
static const char *table_get(const char *name, void *ctx)
{
    const char *const *kv = ctx;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static int parse(const char *const *env, struct pes_rt_config *c, char *msg)
{
    return pes_rt_config_parse(c, table_get, (void *)env, msg, 256);
}

static void defaults_when_unset(void **state)
{
    (void)state;
    const char *env[] = {NULL};
    struct pes_rt_config c;
    char msg[256];
    assert_int_equal(parse(env, &c, msg), 0);
    assert_null(c.full_output);   /* off */
    assert_int_equal(c.time_interval, 1024);
    assert_int_equal(c.buffer_records, 65536);
    assert_int_equal(c.zstd_level, 1);
    assert_int_equal(c.quiet, 0);
    assert_int_equal(c.overwrite, 0);
    assert_null(c.command);
}

static void valid_values(void **state)
{
    (void)state;
    const char *env[] = {"PES_FULL_OUTPUT", "/tmp/x.zst", "PES_TIME_INTERVAL", "1",
                         "PES_BUFFER_RECORDS", "16", "PES_ZSTD_LEVEL", "22", "PES_QUIET", "1",
                         "PES_OVERWRITE", "0", "PES_COMMAND", "./a 'b c'", NULL};
    struct pes_rt_config c;
    char msg[256];
    assert_int_equal(parse(env, &c, msg), 0);
    assert_string_equal(c.full_output, "/tmp/x.zst");
    assert_int_equal(c.time_interval, 1);
    assert_int_equal(c.buffer_records, 16);
    assert_int_equal(c.zstd_level, 22);
    assert_int_equal(c.quiet, 1);
    assert_int_equal(c.overwrite, 0);
    assert_string_equal(c.command, "./a 'b c'");

    const char *big[] = {"PES_TIME_INTERVAL", "4294967295", "PES_BUFFER_RECORDS", "67108864", NULL};
    assert_int_equal(parse(big, &c, msg), 0);
    assert_int_equal(c.time_interval, 4294967295u);
    assert_int_equal(c.buffer_records, 67108864u);
}

static void expect_error(const char *name, const char *value, const char *message)
{
    const char *env[] = {name, value, NULL};
    struct pes_rt_config c;
    char msg[256];
    assert_int_equal(parse(env, &c, msg), -1);
    if (message)
        assert_string_equal(msg, message);
    else
        assert_non_null(strstr(msg, name));
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
    expect_error("PES_TIME_INTERVAL", "4294967296", NULL);             /* 2^32 */
    expect_error("PES_TIME_INTERVAL", "99999999999999999999999", NULL); /* > 2^64 */
    expect_error("PES_BUFFER_RECORDS", "15",
                 "PES_BUFFER_RECORDS=15: expected an integer from 16 to 67108864");
    expect_error("PES_BUFFER_RECORDS", "67108865", NULL);
    expect_error("PES_ZSTD_LEVEL", "0", NULL);
    expect_error("PES_ZSTD_LEVEL", "23", NULL);
    expect_error("PES_QUIET", "yes", "PES_QUIET=yes: expected 0 or 1");
    expect_error("PES_OVERWRITE", "2", NULL);
    expect_error("PES_FULL_OUTPUT", "", "PES_FULL_OUTPUT=: expected a file path");
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
        cmocka_unit_test(defaults_when_unset),
        cmocka_unit_test(valid_values),
        cmocka_unit_test(invalid_values),
        cmocka_unit_test(parse_u64_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
