/* The collector's settings table (trace/src/settings.c): the rows themselves,
 * env -> struct -> header -> struct for every row, errors that name the
 * setting and its bound, headers of older collectors, and the header text
 * byte for byte as the runtime wrote it before the table existed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pes/settings.h"

#define N_ROWS pes_settings_count

static const char *table_get(const char *name, void *ctx)
{
    const char *const *kv = ctx;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static size_t n_choices(const struct pes_setting *r)
{
    size_t k = 0;
    while (r->choices && r->choices[k])
        k++;
    return k;
}

static int is_string(const struct pes_setting *r)
{
    return r->type == PES_SETTING_PATH || r->type == PES_SETTING_STRING;
}

/* A row's value in *s, as a number (strings: not used). */
static uint64_t value_of(const struct pes_setting *r, const struct pes_collect_settings *s)
{
    const char *f = (const char *)s + r->field;
    switch (r->type) {
    case PES_SETTING_U32:
        return *(const uint32_t *)(const void *)f;
    case PES_SETTING_U64:
        return *(const uint64_t *)(const void *)f;
    default:
        return (uint64_t)*(const int *)(const void *)f;
    }
}

static void set_value(const struct pes_setting *r, struct pes_collect_settings *s, uint64_t v)
{
    char *f = (char *)s + r->field;
    switch (r->type) {
    case PES_SETTING_U32:
        *(uint32_t *)(void *)f = (uint32_t)v;
        break;
    case PES_SETTING_U64:
        *(uint64_t *)(void *)f = v;
        break;
    default:
        *(int *)(void *)f = (int)v;
    }
}

/* A valid value of r that is neither its default nor its absent value. */
static uint64_t other_value(const struct pes_setting *r)
{
    if (r->type == PES_SETTING_BOOL)
        return !r->def;
    for (uint64_t v = r->max;; v--) {
        if (v != r->def && v != r->absent)
            return v;
        if (v == r->min)
            break;
    }
    fail_msg("%s: no value besides its default", r->name);
    return 0;
}

/* The text of value v of r, as a variable or the header has it. */
static void text_of(const struct pes_setting *r, uint64_t v, char *buf, size_t n)
{
    if (r->type == PES_SETTING_CHOICE)
        snprintf(buf, n, "%s", r->choices[v]);
    else
        snprintf(buf, n, "%llu", (unsigned long long)v);
}

/* ------------------------------------------------------------ the rows */

static void rows_are_well_formed(void **state)
{
    (void)state;
    assert_true(N_ROWS >= 30);
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct pes_setting *r = &pes_settings[i];
        assert_non_null(r->name);
        assert_ptr_equal(pes_settings_find(r->name), r);
        /* a flag comes with its help; a switch is a bool */
        if (r->flag)
            assert_true(r->help && *r->help);
        else
            assert_null(r->help);
        if (r->flag && !r->arg)
            assert_int_equal(r->type, PES_SETTING_BOOL);
        if (r->env)
            assert_memory_equal(r->env, "PES_", 4);
        /* the header: a key, in which traces, never a string */
        assert_int_equal(r->key != NULL,
                         (r->flags & (PES_SETTING_IN_FULL | PES_SETTING_IN_SAMPLED)) != 0);
        if (r->key)
            assert_false(is_string(r));
        assert_true(r->flag || r->env || r->key);
        /* a test hook: a variable only, which pes-collect passes through */
        if (r->flags & PES_SETTING_TEST_HOOK) {
            assert_non_null(r->env);
            assert_null(r->flag);
            assert_null(r->key);
        }
        if (r->type == PES_SETTING_CHOICE) {
            assert_true(r->max < n_choices(r));
            assert_true(r->min <= r->max);
            assert_true(r->def < n_choices(r) && r->absent < n_choices(r));
        } else if (!is_string(r)) {
            assert_true(r->min <= r->max);
            /* 0 outside min..max: "unset" (writers: from the CPUs, max_accesses: all) */
            assert_true(r->def == 0 || (r->def >= r->min && r->def <= r->max));
        }
        if (r->type == PES_SETTING_U32 || r->type == PES_SETTING_INT)
            assert_true(r->max <= (r->type == PES_SETTING_INT ? INT32_MAX : UINT32_MAX));
        if (r->legacy_key)
            assert_non_null(r->key);
        /* unique flag, short flag, variable, key */
        for (size_t k = 0; k < i; k++) {
            const struct pes_setting *o = &pes_settings[k];
            assert_string_not_equal(o->name, r->name);
            if (r->flag && o->flag)
                assert_string_not_equal(o->flag, r->flag);
            if (r->short_flag)
                assert_int_not_equal(o->short_flag, r->short_flag);
            if (r->env && o->env)
                assert_string_not_equal(o->env, r->env);
            if (r->key && o->key)
                assert_string_not_equal(o->key, r->key);
        }
    }
    assert_null(pes_settings_find("no_such_setting"));
}

/* ------------------------------------------------------------ round trips */

static void round_trip_every_row(void **state)
{
    (void)state;
    int tried = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct pes_setting *r = &pes_settings[i];
        if (is_string(r) || r->type == PES_SETTING_NAME)
            continue;
        uint64_t v = other_value(r);
        char text[64], line[128];
        text_of(r, v, text, sizeof text);
        struct pes_collect_settings s, back;
        struct pes_error err;
        if (r->env) {
            /* the environment: sampling on, so that every row counts */
            const char *env[] = {"PES_SAMPLE_OUTPUT", "s.zst", r->env, text, NULL};
            assert_int_equal(pes_settings_from_env(&s, table_get, (void *)env, &err), 0);
            assert_true(value_of(r, &s) == v);
        } else {
            pes_settings_defaults(&s);
            s.sample_output = "s.zst";
            set_value(r, &s, v);
        }
        if (!r->key)
            continue;
        /* the header of the kind of trace the key is in */
        if (strcmp(r->name, "mode") != 0)
            s.mode = (r->flags & PES_SETTING_IN_SAMPLED) ? PES_MODE_REUSE : PES_MODE_FULL;
        if (r->flags & PES_SETTING_ADAPTIVE)
            s.samples_target = 100;
        char config[1024];
        assert_true(pes_settings_to_header(&s, config, sizeof config) > 0);
        snprintf(line, sizeof line, "%s=%s\n", r->key, text);
        assert_non_null(strstr(config, line));
        assert_int_equal(pes_settings_from_header(&back, config, &err), 0);
        assert_true(value_of(r, &back) == v);
        /* and every other key that was written came back as it was */
        for (size_t k = 0; k < N_ROWS; k++) {
            const struct pes_setting *o = &pes_settings[k];
            snprintf(line, sizeof line, "\n%s=", o->key ? o->key : "-");
            if (o->key &&
                (strstr(config, line) || strncmp(config, line + 1, strlen(line + 1)) == 0))
                assert_true(value_of(o, &back) == value_of(o, &s));
        }
        tried++;
    }
    assert_true(tried >= 20);
}

/* The launcher sets variables from pes_setting_format: what it writes, the
 * runtime reads back. */
static void format_parse_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct pes_setting *r = &pes_settings[i];
        if (!r->env || is_string(r) || r->type == PES_SETTING_NAME)
            continue;
        struct pes_collect_settings s, back;
        pes_settings_defaults(&s);
        pes_settings_defaults(&back);
        set_value(r, &s, other_value(r));
        char text[64];
        int len = pes_setting_format(r, &s, text, sizeof text);
        assert_true(len > 0 && len == (int)strlen(text));
        assert_int_equal(pes_setting_parse(r, PES_SETTING_FROM_ENV, text, &back, NULL), 0);
        assert_true(value_of(r, &back) == value_of(r, &s));
        /* does not fit: the length it needs, and what fit */
        assert_int_equal(pes_setting_format(r, &s, NULL, 0), len);
        assert_int_equal(pes_setting_format(r, &s, text, 1), len);
        assert_string_equal(text, "");
    }
}

/* The NAME rows (backend, period_jitter): any word, the collector's own
 * tables check it; empty is the default. */
static void names_round_trip(void **state)
{
    (void)state;
    struct pes_collect_settings s, back;
    struct pes_error err;
    const char *env[] = {"PES_SAMPLE_OUTPUT", "s", "PES_BACKEND", "pebs", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)env, &err), 0);
    assert_string_equal(s.backend, "pebs");
    snprintf(s.period_jitter, sizeof s.period_jitter, "hardware");
    char config[1024];
    assert_true(pes_settings_to_header(&s, config, sizeof config) > 0);
    assert_non_null(strstr(config, "\nbackend=pebs\n"));
    assert_non_null(strstr(config, "\nperiod_jitter=hardware\n"));
    assert_int_equal(pes_settings_from_header(&back, config, &err), 0);
    assert_string_equal(back.backend, "pebs");
    assert_string_equal(back.period_jitter, "hardware");
    /* absent or empty: the default */
    assert_int_equal(pes_settings_from_header(&back, "mode=reuse\nbackend=\n", &err), 0);
    assert_string_equal(back.backend, "soft");
    assert_string_equal(back.period_jitter, "1/8");
    const char *empty[] = {"PES_SAMPLE_OUTPUT", "s", "PES_BACKEND", "", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)empty, &err), 0);
    assert_string_equal(s.backend, "soft");
    /* not a word, or longer than the room */
    const char *spaced[] = {"PES_SAMPLE_OUTPUT", "s", "PES_BACKEND", "a b", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)spaced, &err), -1);
    assert_non_null(strstr(err.message, "PES_BACKEND=a b: expected a name"));
    assert_int_equal(pes_settings_from_header(&back, "backend=abcdefghijklmnop\n", &err), -1);
    assert_non_null(
        strstr(err.message, "header config: backend=abcdefghijklmnop: expected a name"));
    assert_non_null(strstr(err.message, "at most 15"));
    assert_int_equal(pes_settings_from_header(&back, "backend=abcdefghijklmno\n", &err), 0);
}

/* ------------------------------------------------------------ errors */

static void expect_error(const struct pes_setting *r, enum pes_setting_source from,
                         const char *text, const char *message)
{
    struct pes_collect_settings s;
    struct pes_error err = {0};
    pes_settings_defaults(&s);
    assert_int_equal(pes_setting_parse(r, from, text, &s, &err), -1);
    assert_string_equal(err.message, message);
}

static void errors_name_the_setting_and_bound(void **state)
{
    (void)state;
    const struct pes_setting *regs = pes_settings_find("debug_registers");
    expect_error(regs, PES_SETTING_FROM_ENV, "5",
                 "PES_DEBUG_REGISTERS=5: expected an integer from 1 to 4");
    expect_error(regs, PES_SETTING_FROM_FLAG, "0",
                 "--debug-registers: expected an integer from 1 to 4, got '0'");
    expect_error(regs, PES_SETTING_FROM_HEADER, "x",
                 "header config: debug_registers=x: expected an integer from 1 to 4");
    expect_error(pes_settings_find("time_interval"), PES_SETTING_FROM_ENV, "4294967296",
                 "PES_TIME_INTERVAL=4294967296: expected a positive integer");
    expect_error(pes_settings_find("mode"), PES_SETTING_FROM_FLAG, "full",
                 "--mode: expected samples, reuse, reuse-shared or comm, got 'full'");
    expect_error(pes_settings_find("spatial"), PES_SETTING_FROM_ENV, "line",
                 "PES_GRANULARITY=line: expected temporal or spatial");
    expect_error(pes_settings_find("heap"), PES_SETTING_FROM_HEADER, "2",
                 "header config: heap=2: expected 0 or 1");
    expect_error(pes_settings_find("sample_output"), PES_SETTING_FROM_ENV, "",
                 "PES_SAMPLE_OUTPUT=: expected a file path");
    /* a form the row does not have */
    struct pes_collect_settings s;
    pes_settings_defaults(&s);
    assert_int_equal(
        pes_setting_parse(pes_settings_find("writers"), PES_SETTING_FROM_HEADER, "2", &s, NULL),
        -1);

    /* every numeric row: one past each bound, and not a number, in every form it has */
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct pes_setting *r = &pes_settings[i];
        if (is_string(r) || r->type == PES_SETTING_BOOL || r->type == PES_SETTING_NAME)
            continue;
        const char *name[3] = {r->flag, r->env, r->key};
        for (int from = 0; from < 3; from++) {
            if (!name[from])
                continue;
            char bad[3][32] = {"", "", "12x"};
            if (r->type == PES_SETTING_CHOICE) {
                snprintf(bad[0], sizeof bad[0], "%s ", r->choices[0]);
                snprintf(bad[1], sizeof bad[1], "bogus");
            } else {
                snprintf(bad[0], sizeof bad[0], "%s", r->min ? "0" : "-1");
                snprintf(bad[1], sizeof bad[1], "%llu", (unsigned long long)r->max + 1);
                if (r->max == UINT64_MAX)
                    snprintf(bad[1], sizeof bad[1], "18446744073709551616");
            }
            for (int b = 0; b < 3; b++) {
                struct pes_error err = {0};
                pes_settings_defaults(&s);
                assert_int_equal(
                    pes_setting_parse(r, (enum pes_setting_source)from, bad[b], &s, &err), -1);
                assert_non_null(strstr(err.message, name[from]));
                assert_non_null(strstr(err.message, "expected"));
                if (r->type != PES_SETTING_CHOICE && !(r->min == 1 && r->max == UINT32_MAX)) {
                    char bound[32];
                    snprintf(bound, sizeof bound, "to %llu", (unsigned long long)r->max);
                    assert_non_null(strstr(err.message, bound));
                }
            }
        }
    }
}

/* ------------------------------------------------------------ environment */

static void env_rules(void **state)
{
    (void)state;
    struct pes_collect_settings s;
    struct pes_error err;
    /* sampling variables count only with PES_SAMPLE_OUTPUT; without it the mode is full */
    const char *off[] = {"PES_MODE", "bogus", "PES_PERIOD_LOAD", "x", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)off, &err), 0);
    assert_int_equal(s.mode, PES_MODE_FULL);
    assert_null(s.sample_output);
    const char *on[] = {"PES_SAMPLE_OUTPUT", "s", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)on, &err), 0);
    assert_int_equal(s.mode, PES_MODE_SAMPLES);
    assert_int_equal(s.period_load, 100000);
    const char *nothing[] = {
        "PES_SAMPLE_OUTPUT", "s", "PES_PERIOD_LOAD", "0", "PES_PERIOD_STORE", "0", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)nothing, &err), -1);
    assert_string_equal(err.message,
                        "PES_PERIOD_LOAD=0 and PES_PERIOD_STORE=0: nothing would be sampled");
    /* strings: a path must not be empty, a command may (then it is unset) */
    const char *cmd[] = {"PES_COMMAND", "", "PES_FULL_OUTPUT", "/t.zst", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)cmd, &err), 0);
    assert_null(s.command);
    assert_string_equal(s.full_output, "/t.zst");
    /* loop descriptors: on unless PES_DESCRIPTORS=0 (pes-collect --no-descriptors) */
    assert_int_equal(s.descriptors, 1);
    const char *no_desc[] = {"PES_FULL_OUTPUT", "/t.zst", "PES_DESCRIPTORS", "0", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)no_desc, &err), 0);
    assert_int_equal(s.descriptors, 0);
    const char *bad_desc[] = {"PES_DESCRIPTORS", "no", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)bad_desc, &err), -1);
    assert_string_equal(err.message, "PES_DESCRIPTORS=no: expected 0 or 1");
}

/* PES_WATCH_REARM (modes/watch.c): a test hook of the sampling variables,
 * modify unless reopen is asked for, the names exactly. */
static void env_watch_rearm(void **state)
{
    (void)state;
    struct pes_collect_settings s;
    struct pes_error err;
    const struct pes_setting *r = pes_settings_find("watch_rearm");
    assert_non_null(r);
    assert_true(r->flags & PES_SETTING_TEST_HOOK);
    assert_true(r->flags & PES_SETTING_SAMPLING);
    pes_settings_defaults(&s);
    assert_int_equal(s.watch_rearm, PES_WATCH_REARM_MODIFY);
    const char *reopen[] = {"PES_SAMPLE_OUTPUT", "s", "PES_WATCH_REARM", "reopen", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)reopen, &err), 0);
    assert_int_equal(s.watch_rearm, PES_WATCH_REARM_REOPEN);
    const char *modify[] = {"PES_SAMPLE_OUTPUT", "s", "PES_WATCH_REARM", "modify", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)modify, &err), 0);
    assert_int_equal(s.watch_rearm, PES_WATCH_REARM_MODIFY);
    /* without sampling it is not read at all */
    const char *off[] = {"PES_WATCH_REARM", "bogus", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)off, &err), 0);
    assert_int_equal(s.watch_rearm, PES_WATCH_REARM_MODIFY);
    const char *bad[] = {"PES_SAMPLE_OUTPUT", "s", "PES_WATCH_REARM", "Reopen", NULL};
    assert_int_equal(pes_settings_from_env(&s, table_get, (void *)bad, &err), -1);
    assert_string_equal(err.message, "PES_WATCH_REARM=Reopen: expected modify or reopen");
    /* never in a header */
    char buf[1024];
    pes_settings_defaults(&s);
    s.mode = PES_MODE_REUSE;
    s.watch_rearm = PES_WATCH_REARM_REOPEN;
    assert_true(pes_settings_to_header(&s, buf, sizeof buf) > 0);
    assert_null(strstr(buf, "rearm"));
    assert_null(strstr(buf, "reopen"));
}

/* ------------------------------------------------------------ the header */

/* What rt_init.c's build_config_string wrote before the table, for these
 * settings (the format of a full and of a sampled header, key for key). */
static void header_text_as_before(void **state)
{
    (void)state;
    struct pes_collect_settings s;
    char buf[1024];
    pes_settings_defaults(&s);
    s.mode = PES_MODE_FULL;
    s.abi_version = 3;
    assert_int_equal(pes_settings_to_header(&s, buf, sizeof buf), (int)strlen(buf));
    assert_string_equal(buf, "mode=full\ntime_interval=1024\nbuffer_records=65536\nzstd_level=1\n"
                             "abi_version=3\nroi=none\ndescriptors=1\n");
    s.time_interval = 77;
    s.buffer_records = 100;
    s.zstd_level = 3;
    s.skip = 5;
    s.max_accesses = 100;
    s.heap = 0;
    s.roi_state = PES_ROI_MARKERS;
    s.descriptors = 0; /* written either way: absent means a trace before descriptors */
    pes_settings_to_header(&s, buf, sizeof buf);
    assert_string_equal(
        buf, "mode=full\ntime_interval=77\nbuffer_records=100\nzstd_level=3\nabi_version=3\n"
             "roi=markers\nheap=0\nskip=5\nmax_accesses=100\ndescriptors=0\n");

    pes_settings_defaults(&s);
    s.mode = PES_MODE_REUSE_SHARED;
    s.abi_version = 3;
    s.censoring = PES_CENSORING_WATCH_EXPIRED;
    s.heap_events = PES_HEAP_EVENTS_USED;
    s.period_store = 0;
    s.spatial = 1;
    s.sockets = 2;
    s.debug_registers = 2;
    s.seed = 5;
    s.samples_target = 50;
    s.skip = 9; /* full traces only */
    pes_settings_to_header(&s, buf, sizeof buf);
    assert_string_equal(buf,
                        "mode=reuse-shared\nbackend=soft\nperiod_load=100000\nperiod_store=0\n"
                        "period_jitter=1/8\ngranularity=spatial\nsockets=2\ndebug_registers=2\n"
                        "watch_bytes=8\nline_size=64\ncensoring=watch_expired\ntime_interval=1024\n"
                        "seed=5\nzstd_level=1\nabi_version=3\nroi=none\nheap_events=used\n"
                        "samples_target=50\nperiod_levels=6\n");
    s.mode = PES_MODE_COMM;
    snprintf(s.backend, sizeof s.backend, "ibs");
    snprintf(s.period_jitter, sizeof s.period_jitter, "hardware");
    s.samples_target = 0;
    s.heap = 0;
    s.heap_events = PES_HEAP_EVENTS_ALL;
    s.roi_state = PES_ROI_IGNORED;
    pes_settings_to_header(&s, buf, sizeof buf);
    assert_string_equal(
        buf, "mode=comm\nbackend=ibs\nperiod_load=100000\nperiod_store=0\n"
             "period_jitter=hardware\ngranularity=spatial\nsockets=2\ndebug_registers=2\n"
             "watch_bytes=8\nline_size=64\ncensoring=watch_expired\ntime_interval=1024\n"
             "seed=5\nzstd_level=1\nabi_version=3\nroi=ignored\nheap=0\n");
    /* too small: -1, and what fit ends at a whole line */
    assert_int_equal(pes_settings_to_header(&s, buf, 20), -1);
    assert_string_equal(buf, "mode=comm\n");
}

/* Configs of traces in tests/data (written before roi, censoring, time_interval
 * in sampled headers, heap_events), and older forms still. */
static void older_headers(void **state)
{
    (void)state;
    struct pes_collect_settings s;
    struct pes_error err;
    assert_int_equal(
        pes_settings_from_header(&s,
                                 "mode=full\ntime_interval=1024\nbuffer_records=65536\n"
                                 "zstd_level=1\nabi_version=3\n",
                                 &err),
        0);
    assert_int_equal(s.mode, PES_MODE_FULL);
    assert_int_equal(s.roi_state, PES_ROI_NONE);
    assert_int_equal(s.heap, 1);
    assert_int_equal(s.skip, 0);
    assert_int_equal(s.max_accesses, 0);
    assert_int_equal(s.abi_version, 3);
    assert_int_equal(s.descriptors, 0); /* a record per access, as before descriptors */
    const char *comm =
        "mode=comm\nbackend=soft\nperiod_load=400\nperiod_store=400\nperiod_jitter=1/8\n"
        "granularity=temporal\nsockets=0\ndebug_registers=4\nwatch_bytes=8\nline_size=64\n"
        "seed=12\nzstd_level=1\nabi_version=3\n";
    assert_int_equal(pes_settings_from_header(&s, comm, &err), 0);
    assert_int_equal(s.mode, PES_MODE_COMM);
    assert_int_equal(s.period_load, 400);
    assert_int_equal(s.time_interval, 1024); /* not in sampled headers then: the default */
    assert_int_equal(s.censoring, PES_CENSORING_NONE);
    assert_int_equal(s.heap_events, PES_HEAP_EVENTS_ALL);
    assert_int_equal(s.samples_target, 0);
    assert_int_equal(s.period_levels, 6);
    assert_int_equal(s.seed, 12);
    /* nothing at all: every key absent */
    assert_int_equal(pes_settings_from_header(&s, NULL, &err), 0);
    assert_int_equal(s.mode, PES_MODE_FULL);
    assert_int_equal(s.period_load, 0);
    assert_int_equal(s.line_size, 64);
    assert_int_equal(s.watch_bytes, 8);
    assert_int_equal(s.debug_registers, 4);
    assert_int_equal(pes_settings_from_header(&s, "", &err), 0);
    /* the first format's one period; a key of its own wins */
    assert_int_equal(pes_settings_from_header(&s, "mode=reuse\nperiod=500\n", &err), 0);
    assert_true(s.period_load == 500 && s.period_store == 500);
    assert_int_equal(pes_settings_from_header(&s, "period=500\nperiod_load=7", &err), 0);
    assert_true(s.period_load == 7 && s.period_store == 500);
    assert_int_equal(pes_settings_from_header(&s, "period=x\n", &err), -1);
    assert_string_equal(err.message,
                        "header config: period=x: expected an integer from 0 to 4294967295");
    /* unknown keys and lines without '=' are ignored; the first of a repeated key counts */
    assert_int_equal(
        pes_settings_from_header(&s, "note=\x1b[2J\njunk\nsockets=3\nsockets=x\n", &err), 0);
    assert_int_equal(s.sockets, 3);
    /* rows without a key keep their defaults */
    assert_int_equal(s.writers, 0);
    assert_null(s.full_output);
    /* a known key with a bad value names it */
    assert_int_equal(pes_settings_from_header(&s, "mode=reuse\ngranularity=line\n", &err), -1);
    assert_string_equal(err.message,
                        "header config: granularity=line: expected temporal or spatial");
    assert_int_equal(pes_settings_from_header(&s, "mode=bogus\n", &err), -1);
    assert_string_equal(
        err.message,
        "header config: mode=bogus: expected full, samples, reuse, reuse-shared or comm");
}

static void help_placeholders(void **state)
{
    (void)state;
    char buf[256];
    pes_setting_help(pes_settings_find("debug_registers"), NULL, buf, sizeof buf);
    assert_string_equal(buf, "watchpoints per thread, 1..4 (default 4)");
    pes_setting_help(pes_settings_find("buffer_records"), NULL, buf, sizeof buf);
    assert_string_equal(buf, "records per thread buffer (default 65536, 16..67108864)");
    pes_setting_help(pes_settings_find("buffer_records"), NULL, buf, 30);
    assert_string_equal(buf, "records per thread buffer (de");
    pes_setting_help(pes_settings_find("mode"), NULL, buf, sizeof buf);
    assert_null(strchr(buf, '{'));
    pes_setting_help(pes_settings_find("period_load"), "every {default} ({max}, {min}), {x}", buf,
                     sizeof buf);
    assert_string_equal(buf, "every 100000 (4294967295, 0), {x}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_well_formed),
        cmocka_unit_test(round_trip_every_row),
        cmocka_unit_test(format_parse_round_trip),
        cmocka_unit_test(names_round_trip),
        cmocka_unit_test(errors_name_the_setting_and_bound),
        cmocka_unit_test(env_rules),
        cmocka_unit_test(env_watch_rearm),
        cmocka_unit_test(header_text_as_before),
        cmocka_unit_test(older_headers),
        cmocka_unit_test(help_placeholders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
