/* pebs.c — the pebs backend: Intel PEBS load and store events (encoded with
 * libpfm4, pmu.c), one per sampled kind, each thread its own (perf.c). The
 * kernel takes the period as given: no jitter. */
#include "backend.h"
#include "backends/pmu.h"
#include "config.h"

static int probe(char *why, size_t why_size)
{
    return pes_pmu_probe(PES_PMU_PEBS, why, why_size);
}

#ifndef PES_BACKEND_PROBE_ONLY
#include "backends/perf.h"

static int encode(struct pes_rt_perf_events *ev, char *why, size_t why_size)
{
    const uint64_t period[2] = {pes_rt.cfg.period_load, pes_rt.cfg.period_store};
    char event[64];
    for (int st = 0; st < 2; st++) {
        if (!period[st])
            continue;
        if (pes_pmu_encode_pebs(st, period[st], pes_rt.cfg.stacks, &ev->attr[ev->n], event,
                                sizeof event, why, why_size))
            return -1;
        ev->period[ev->n] = period[st];
        ev->stores[ev->n++] = st;
    }
    return 0;
}

static int start(char *why, size_t why_size)
{
    return pes_rt_perf_start(encode, why, why_size);
}
#endif

PES_RT_HIDDEN const struct pes_rt_backend pes_rt_backend_pebs = {
    .name = "pebs",
    .jitter = "0",
    .probe = probe,
    PES_RT_BACKEND_HOOKS(.start = start, .open = pes_rt_perf_open,
                         .set_period = pes_rt_perf_set_period, .count = pes_rt_perf_count,
                         .drain = pes_rt_perf_drain, .close = pes_rt_perf_close)};
