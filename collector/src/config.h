/*
 * config.h — the collector's settings as pes-collect and libpes-rt share them:
 * bounds and defaults, the PES_* environment parsed into struct
 * pes_rt_config (rt_env.c), and the quoting of PES_COMMAND (cmdline_quote.c).
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

/* Everything of the runtime but the rt_abi.h symbols has hidden visibility. */
#define PES_RT_HIDDEN __attribute__((visibility("hidden")))

#define PES_RT_DEFAULT_TIME_INTERVAL 1024u
#define PES_RT_DEFAULT_BUFFER_RECORDS 65536u
#define PES_RT_MIN_BUFFER_RECORDS 16u
#define PES_RT_MAX_BUFFER_RECORDS (1u << 26)
#define PES_RT_DEFAULT_ZSTD_LEVEL 1
#define PES_RT_MAX_ZSTD_LEVEL 22
#define PES_RT_MAX_WRITERS 64      /* PES_WRITERS upper bound */
#define PES_RT_AUTO_WRITERS_MAX 8  /* default: CPUs of the affinity mask, at most this */

/* PES_MODE values; the runtime looks the mode up by name (mode.h). */
enum pes_rt_mode_id {
    PES_RT_MODE_SAMPLES = 1,   /* uses only: PES_EV_SAMPLE */
    PES_RT_MODE_REUSE,         /* ReuseTracker intra-thread (Alg. 2, 3) */
    PES_RT_MODE_REUSE_SHARED,  /* ReuseTracker shared cache (§6.4.2) */
    PES_RT_MODE_COMM,          /* ComDetective (Alg. 1) */
};
#define PES_RT_DEFAULT_PERIOD 100000u
#define PES_RT_MAX_DEBUG_REGISTERS 4u
#define PES_RT_MAX_SOCKETS 64u

struct pes_rt_config {
    const char *full_output;   /* NULL = no full trace */
    const char *sample_output; /* NULL = no sampling */
    int mode;                  /* enum pes_rt_mode_id */
    uint64_t period_load;      /* 0 = loads are not sampled */
    uint64_t period_store;     /* 0 = stores are not sampled */
    int spatial;               /* reuse granularity: 0 temporal, 1 spatial (cache line) */
    uint32_t sockets;          /* simulated sockets (thread index % sockets), 0 = real topology */
    uint32_t debug_registers;  /* 1..4 */
    uint64_t seed;             /* 0 = from time and pid */
    int overwrite;
    uint32_t time_interval;
    uint32_t buffer_records;
    int zstd_level;
    uint32_t writers;          /* encoder threads; 0 = from the affinity mask */
    int quiet;
    const char *command;       /* NULL = use /proc/self/cmdline */
    int roi;                   /* obey pes/roi.h markers (default 1; PES_ROI=0 ignores them) */
    int heap;                  /* record heap allocations (default 1; PES_HEAP=0: not, rt_alloc.c) */
    uint64_t skip;             /* full trace: accesses not recorded at the start of each thread */
    uint64_t max_accesses;     /* full trace: accesses recorded per thread at most, 0 = all */
    uint64_t samples_target;   /* --samples N: adaptive period (rt_adapt.h), 0 = fixed period */
};

/* Looks up one variable (getenv in the runtime, a table in tests). */
typedef const char *(*pes_rt_getenv_fn)(const char *name, void *ctx);

/* Fills *c from the environment. Returns 0, or -1 with a one-line message
 * ("PES_TIME_INTERVAL=abc: expected a positive integer") in msg. */
PES_RT_HIDDEN int pes_rt_config_parse(struct pes_rt_config *c, pes_rt_getenv_fn get, void *ctx,
                                      char *msg, size_t msg_size);
/* Default writer-pool size for `cpus` CPUs in the affinity mask (<= 0: unknown):
 * one encoder thread per CPU, at least 1, at most PES_RT_AUTO_WRITERS_MAX. */
PES_RT_HIDDEN uint32_t pes_rt_writers_for_cpus(int cpus);
/* Parses "reuse" etc.; 0 if unknown. */
PES_RT_HIDDEN int pes_rt_mode_parse(const char *s);
PES_RT_HIDDEN const char *pes_rt_mode_name(int mode);
/* Strict decimal parse: digits only, no sign or blanks, within [min, max]. */
PES_RT_HIDDEN int pes_rt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Command-line quoting (PES_COMMAND, the header's command): arguments joined
 * by spaces, each quoted for a POSIX shell if needed. malloc'd; NULL on
 * allocation failure. */
char *pes_cmdline_quote(int argc, char *const argv[]);

#endif /* PES_COLLECT_CONFIG_H */
