/*
 * config.h — the collector's settings as pes-collect and libpes-rt share them:
 * pes/settings.h's table, the PES_* environment parsed with it (rt_env.c),
 * and the quoting of PES_COMMAND (cmdline_quote.c).
 * Nothing here touches process state; pes-collect links it as is.
 *
 * collector/src, by folder (none may depend on another in a cycle:
 * tests/layering/check_layering.py checks includes and symbols):
 *   config.h, rt_env.c, cmdline_quote.c   this file's settings (bottom layer)
 *   mode.h, backend.h                     the two seams: what a mode and a
 *                                         backend are (bottom layer, headers)
 *   core/      the runtime: threads, buffers, writer, the soft sampler's
 *              countdowns and check path, event buffers, sites, modules,
 *              allocations, signals (core/core.h)
 *   modes/     samples, reuse, reuse-shared, comm; the watchpoints and the
 *              reservoir they use
 *   backends/  soft, pebs, ibs, spe; the perf rings pebs and ibs share, the
 *              PMU building blocks (pmu.c), the pthread_create wrapper
 *   start/     libpes-rt's entry: hands the mode and backend tables to core
 *   launcher/  pes-collect (sees config.h, backend.h and the public headers)
 * Arrows go launcher -> backends; start -> modes, backends -> core -> the
 * bottom layer. Core reaches modes and backends through pes_rt.mode and
 * pes_rt.backend only.
 */
#ifndef PES_COLLECT_CONFIG_H
#define PES_COLLECT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "pes/settings.h"

/* Everything of the runtime but the rt_abi.h symbols has hidden visibility. */
#define PES_RT_HIDDEN __attribute__((visibility("hidden")))

/* The settings themselves (flags, PES_* variables, header keys, bounds,
 * defaults) are rows of trace/src/settings.c; the runtime keeps them in one
 * struct pes_collect_settings (pes_rt.cfg). */
#define PES_RT_AUTO_WRITERS_MAX                                                                    \
    PES_SETTINGS_AUTO_WRITERS_MAX /* default: CPUs of the affinity mask, at most this */
#define PES_RT_MAX_DEBUG_REGISTERS PES_SETTINGS_MAX_DEBUG_REGISTERS

/* PES_MODE values (pes/settings.h's enum); the runtime looks the mode up by name (mode.h). */
enum pes_rt_mode_id {
    PES_RT_MODE_SAMPLES = PES_MODE_SAMPLES,           /* uses only: PES_EV_SAMPLE */
    PES_RT_MODE_REUSE = PES_MODE_REUSE,               /* ReuseTracker intra-thread (Alg. 2, 3) */
    PES_RT_MODE_REUSE_SHARED = PES_MODE_REUSE_SHARED, /* ReuseTracker shared cache (§6.4.2) */
    PES_RT_MODE_COMM = PES_MODE_COMM,                 /* ComDetective (Alg. 1) */
};

/* Fills *c from the environment (pes_settings_from_env). Returns 0, or -1
 * with a one-line message ("PES_TIME_INTERVAL=abc: expected a positive
 * integer") in msg. */
PES_RT_HIDDEN int pes_rt_config_parse(struct pes_collect_settings *c, pes_getenv_fn get, void *ctx,
                                      char *msg, size_t msg_size);
/* Default writer-pool size for `cpus` CPUs in the affinity mask (<= 0: unknown):
 * one encoder thread per CPU, at least 1, at most PES_RT_AUTO_WRITERS_MAX. */
PES_RT_HIDDEN uint32_t pes_rt_writers_for_cpus(int cpus);
/* The name of a PES_MODE value ("reuse"), "?" if none. */
PES_RT_HIDDEN const char *pes_rt_mode_name(int mode);
/* Strict decimal parse: digits only, no sign or blanks, within [min, max]. */
PES_RT_HIDDEN int pes_rt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Command-line quoting (PES_COMMAND, the header's command): arguments joined
 * by spaces, each quoted for a POSIX shell if needed. malloc'd; NULL on
 * allocation failure. */
char *pes_cmdline_quote(int argc, char *const argv[]);

#endif /* PES_COLLECT_CONFIG_H */
