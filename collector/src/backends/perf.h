/* perf.h — what the pebs and ibs backends share (perf.c): per-thread perf
 * events with a ring buffer each, an overflow signal drained on the thread
 * that took the sample, counts read through the user page. A backend says
 * which events (encode); perf.c does the rest. */
#ifndef PES_RT_PERF_H
#define PES_RT_PERF_H

#include <linux/perf_event.h>

#include "core/core.h"

/* The events each thread opens: at most one for loads and one for stores
 * (PEBS), or one for both (IBS ops, stores = 0: the raw sample tells). */
struct pes_rt_perf_events {
    int n;
    struct perf_event_attr attr[2];
    uint64_t period[2];
    int stores[2];
};
/* Fills *ev from pes_rt.cfg's periods: 0, or -1 with why. */
typedef int (*pes_rt_perf_encode_fn)(struct pes_rt_perf_events *ev, char *why, size_t why_size);

/* Backend start hook of a perf backend: encodes its events, installs the
 * overflow handler. 0, or -1 with why. */
PES_RT_HIDDEN int pes_rt_perf_start(pes_rt_perf_encode_fn encode, char *why, size_t why_size);
/* The other hooks, the same for every perf backend. */
PES_RT_HIDDEN void pes_rt_perf_open(struct pes_rt_thread *t);
PES_RT_HIDDEN int pes_rt_perf_set_period(struct pes_rt_thread *t);
PES_RT_HIDDEN uint64_t pes_rt_perf_count(const struct pes_rt_thread *t);
PES_RT_HIDDEN void pes_rt_perf_drain(struct pes_rt_thread *t);
PES_RT_HIDDEN void pes_rt_perf_close(struct pes_rt_thread *t);

#endif /* PES_RT_PERF_H */
