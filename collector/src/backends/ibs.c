/* ibs.c — the ibs backend: AMD IBS op sampling, one event per thread that
 * samples loads and stores at one period (the load period, or the store
 * period when loads are not sampled); the hardware randomises the period's
 * low bits. The rest is perf.c's. */
#include <stdlib.h>

#include "backend.h"
#include "backends/pmu.h"
#include "config.h"

static int probe(char *why, size_t why_size)
{
    return pes_pmu_probe(PES_PMU_IBS, why, why_size);
}

#ifndef PES_BACKEND_PROBE_ONLY
#include "backends/perf.h"

static int encode(struct pes_rt_perf_events *ev, char *why, size_t why_size)
{
    const char *root = pes_rt.cfg.pmu_sysfs; /* tests: a fake sysfs */
    uint64_t period = pes_rt.cfg.period_load ? pes_rt.cfg.period_load : pes_rt.cfg.period_store;
    if (pes_pmu_encode_ibs(root ? root : "/sys", period, pes_rt.cfg.stacks, &ev->attr[0], why,
                           why_size))
        return -1;
    ev->period[0] = period;
    ev->stores[0] = 0;
    ev->n = period ? 1 : 0;
    return 0;
}

static int start(char *why, size_t why_size)
{
    return pes_rt_perf_start(encode, why, why_size);
}

/* IBS counts ops in units of 16: the kernel takes multiples of 16 only. */
static uint64_t round_period(uint64_t p)
{
    return p ? (p < 16 ? 16 : p & ~15ull) : 0;
}

static int set_period(struct pes_rt_thread *t)
{
    t->s.period_load = round_period(t->s.period_load);
    t->s.period_store = round_period(t->s.period_store);
    return pes_rt_perf_set_period(t);
}
#endif

PES_RT_HIDDEN const struct pes_rt_backend pes_rt_backend_ibs = {
    .name = "ibs",
    .jitter = "hardware",
    .probe = probe,
    PES_RT_BACKEND_HOOKS(.start = start, .open = pes_rt_perf_open, .set_period = set_period,
                         .count = pes_rt_perf_count, .drain = pes_rt_perf_drain,
                         .close = pes_rt_perf_close)};
