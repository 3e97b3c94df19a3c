/* soft.c — the soft backend: programs built with pes-clang count their own
 * loads and stores, and core's countdowns pick the samples (core/rt_sample.c,
 * core/rt_check.c: they run in the slow path and check path of every access
 * stream, so they live there). No hook: nothing to open or drain. The
 * period varies by ±1/8 from sample to sample. */
#include <stdio.h>

#include "backend.h"
#include "config.h"

static int probe(char *why, size_t why_size)
{
    snprintf(why, why_size,
             "programs built with pes-clang count their loads and stores and "
             "sample them without a PMU");
    return 0;
}

PES_RT_HIDDEN const struct pes_rt_backend pes_rt_backend_soft = {
    .name = "soft",
    .jitter = "1/8",
    .program_counts = 1,
    .probe = probe,
};
