/* rt_env.c — strict parsing of the PES_* environment: a bad value disables
 * tracing with one clear line instead of being half-understood. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "pes/rt_abi.h"

int pes_rt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_flag(const char *name, const char *v, int *out, char *msg, size_t msg_size)
{
    if (!v)
        return 0;
    if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
        *out = v[0] == '1';
        return 0;
    }
    snprintf(msg, msg_size, "%s=%s: expected 0 or 1", name, v);
    return -1;
}

static int parse_range(const char *name, const char *v, uint64_t min, uint64_t max,
                       uint64_t *out, char *msg, size_t msg_size)
{
    if (!v)
        return 0;
    if (pes_rt_parse_u64(v, min, max, out) == 0)
        return 0;
    if (min == 1 && max == UINT32_MAX)
        snprintf(msg, msg_size, "%s=%s: expected a positive integer", name, v);
    else
        snprintf(msg, msg_size, "%s=%s: expected an integer from %llu to %llu", name, v,
                 (unsigned long long)min, (unsigned long long)max);
    return -1;
}

uint32_t pes_rt_writers_for_cpus(int cpus)
{
    /* More encoders than CPUs only adds switching. The cap: each encoder
     * holds a zstd context and one encoded block, and with many encoders the
     * in-order append and the application's own threads become the limit. */
    if (cpus < 1)
        return 1;
    return cpus > (int)PES_RT_AUTO_WRITERS_MAX ? PES_RT_AUTO_WRITERS_MAX : (uint32_t)cpus;
}

static const char *const mode_names[] = {NULL, "samples", "reuse", "reuse-shared", "comm"};

int pes_rt_mode_parse(const char *s)
{
    for (int i = 1; i < (int)(sizeof mode_names / sizeof mode_names[0]); i++)
        if (s && strcmp(s, mode_names[i]) == 0)
            return i;
    return 0;
}

const char *pes_rt_mode_name(int mode)
{
    if (mode < 1 || mode >= (int)(sizeof mode_names / sizeof mode_names[0]))
        return "?";
    return mode_names[mode];
}

/* The sampling settings; only looked at when PES_SAMPLE_OUTPUT is set. */
static int parse_sampling(struct pes_rt_config *c, pes_rt_getenv_fn get, void *ctx, char *msg,
                          size_t msg_size)
{
    uint64_t v;
    const char *out = get(PES_ENV_SAMPLE_OUTPUT, ctx);
    if (!out)
        return 0;
    if (!*out) {
        snprintf(msg, msg_size, "%s=: expected a file path", PES_ENV_SAMPLE_OUTPUT);
        return -1;
    }
    c->sample_output = out;
    c->mode = PES_RT_MODE_SAMPLES;
    const char *m = get(PES_ENV_MODE, ctx);
    if (m && !(c->mode = pes_rt_mode_parse(m))) {
        snprintf(msg, msg_size, "%s=%s: expected samples, reuse, reuse-shared or comm",
                 PES_ENV_MODE, m);
        return -1;
    }
    c->period_load = c->period_store = PES_RT_DEFAULT_PERIOD;
    if (parse_range(PES_ENV_PERIOD_LOAD, get(PES_ENV_PERIOD_LOAD, ctx), 0, UINT32_MAX,
                    &c->period_load, msg, msg_size) ||
        parse_range(PES_ENV_PERIOD_STORE, get(PES_ENV_PERIOD_STORE, ctx), 0, UINT32_MAX,
                    &c->period_store, msg, msg_size))
        return -1;
    if (!c->period_load && !c->period_store) {
        snprintf(msg, msg_size, "%s=0 and %s=0: nothing would be sampled", PES_ENV_PERIOD_LOAD,
                 PES_ENV_PERIOD_STORE);
        return -1;
    }
    const char *g = get(PES_ENV_GRANULARITY, ctx);
    if (g && strcmp(g, "temporal") != 0 && strcmp(g, "spatial") != 0) {
        snprintf(msg, msg_size, "%s=%s: expected temporal or spatial", PES_ENV_GRANULARITY, g);
        return -1;
    }
    c->spatial = g && strcmp(g, "spatial") == 0;
    v = 0;
    if (parse_range(PES_ENV_SOCKETS, get(PES_ENV_SOCKETS, ctx), 0, PES_RT_MAX_SOCKETS, &v, msg,
                    msg_size))
        return -1;
    c->sockets = (uint32_t)v;
    v = PES_RT_MAX_DEBUG_REGISTERS;
    if (parse_range(PES_ENV_DEBUG_REGISTERS, get(PES_ENV_DEBUG_REGISTERS, ctx), 1,
                    PES_RT_MAX_DEBUG_REGISTERS, &v, msg, msg_size))
        return -1;
    c->debug_registers = (uint32_t)v;
    if (parse_range(PES_ENV_SEED, get(PES_ENV_SEED, ctx), 0, UINT64_MAX, &c->seed, msg, msg_size))
        return -1;
    if (parse_range(PES_ENV_SAMPLES, get(PES_ENV_SAMPLES, ctx), 1, UINT32_MAX, &c->samples_target,
                    msg, msg_size))
        return -1;
    return 0;
}

int pes_rt_config_parse(struct pes_rt_config *c, pes_rt_getenv_fn get, void *ctx, char *msg,
                        size_t msg_size)
{
    uint64_t v;
    memset(c, 0, sizeof *c);
    c->time_interval = PES_RT_DEFAULT_TIME_INTERVAL;
    c->buffer_records = PES_RT_DEFAULT_BUFFER_RECORDS;
    c->zstd_level = PES_RT_DEFAULT_ZSTD_LEVEL;
    if (msg_size)
        msg[0] = '\0';

    const char *out = get(PES_ENV_FULL_OUTPUT, ctx);
    if (out && !*out) {
        snprintf(msg, msg_size, "%s=: expected a file path", PES_ENV_FULL_OUTPUT);
        return -1;
    }
    c->full_output = out;

    v = c->time_interval;
    if (parse_range(PES_ENV_TIME_INTERVAL, get(PES_ENV_TIME_INTERVAL, ctx), 1, UINT32_MAX, &v,
                    msg, msg_size))
        return -1;
    c->time_interval = (uint32_t)v;

    v = c->buffer_records;
    if (parse_range(PES_ENV_BUFFER_RECORDS, get(PES_ENV_BUFFER_RECORDS, ctx),
                    PES_RT_MIN_BUFFER_RECORDS, PES_RT_MAX_BUFFER_RECORDS, &v, msg, msg_size))
        return -1;
    c->buffer_records = (uint32_t)v;

    v = (uint64_t)c->zstd_level;
    if (parse_range(PES_ENV_ZSTD_LEVEL, get(PES_ENV_ZSTD_LEVEL, ctx), 1, PES_RT_MAX_ZSTD_LEVEL, &v,
                    msg, msg_size))
        return -1;
    c->zstd_level = (int)v;

    v = 0;
    if (parse_range(PES_ENV_WRITERS, get(PES_ENV_WRITERS, ctx), 1, PES_RT_MAX_WRITERS, &v, msg,
                    msg_size))
        return -1;
    c->writers = (uint32_t)v;

    if (parse_flag(PES_ENV_OVERWRITE, get(PES_ENV_OVERWRITE, ctx), &c->overwrite, msg, msg_size))
        return -1;
    if (parse_flag(PES_ENV_QUIET, get(PES_ENV_QUIET, ctx), &c->quiet, msg, msg_size))
        return -1;

    if (parse_sampling(c, get, ctx, msg, msg_size))
        return -1;

    c->roi = 1;
    if (parse_flag(PES_ENV_ROI, get(PES_ENV_ROI, ctx), &c->roi, msg, msg_size))
        return -1;
    c->heap = 1;
    if (parse_flag(PES_ENV_HEAP, get(PES_ENV_HEAP, ctx), &c->heap, msg, msg_size))
        return -1;
    if (parse_range(PES_ENV_SKIP, get(PES_ENV_SKIP, ctx), 0, UINT64_MAX, &c->skip, msg, msg_size) ||
        parse_range(PES_ENV_MAX_ACCESSES, get(PES_ENV_MAX_ACCESSES, ctx), 1, UINT64_MAX,
                    &c->max_accesses, msg, msg_size))
        return -1;

    const char *cmd = get(PES_ENV_COMMAND, ctx);
    c->command = (cmd && *cmd) ? cmd : NULL;
    return 0;
}
