/* spe.c — the spe backend, not implemented: named so that --list-backends
 * says what it would be, and PES_BACKEND=spe why it is not there. */
#include <stdio.h>

#include "backend.h"
#include "config.h"

static int probe(char *why, size_t why_size)
{
    snprintf(why, why_size,
             "not implemented: ARM SPE (Statistical Profiling Extension) would sample loads and "
             "stores with their data addresses through the arm_spe perf PMU; it plugs in as "
             "collector/src/backends/spe.c: start (encode the event, install the overflow "
             "handler), open/close per thread, drain (SPE packets from the aux buffer into SAMPLE "
             "events), count, set_period");
    return -1;
}

PES_RT_HIDDEN const struct pes_rt_backend pes_rt_backend_spe = {
    .name = "spe",
    .jitter = "hardware",
    .stub = 1,
    .probe = probe,
};
