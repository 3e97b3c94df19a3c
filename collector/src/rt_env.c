/* rt_env.c — the PES_* environment, read strictly with the settings table
 * (pes/settings.h): a bad value disables tracing with one clear line instead
 * of being half-understood. */
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

uint32_t pes_rt_writers_for_cpus(int cpus)
{
    /* More encoders than CPUs only adds switching. The cap: each encoder
     * holds a zstd context and one encoded block, and with many encoders the
     * in-order append and the application's own threads become the limit. */
    if (cpus < 1)
        return 1;
    return cpus > (int)PES_RT_AUTO_WRITERS_MAX ? PES_RT_AUTO_WRITERS_MAX : (uint32_t)cpus;
}

const char *pes_rt_mode_name(int mode)
{
    const struct pes_setting *row = pes_settings_find("mode");
    if (mode < (int)row->min || mode > (int)row->max)
        return "?";
    return row->choices[mode];
}

int pes_rt_config_parse(struct pes_collect_settings *c, pes_getenv_fn get, void *ctx, char *msg,
                        size_t msg_size)
{
    struct pes_error err;
    if (msg_size)
        msg[0] = '\0';
    if (pes_settings_from_env(c, get, ctx, &err) == 0)
        return 0;
    snprintf(msg, msg_size, "%s", err.message);
    return -1;
}
