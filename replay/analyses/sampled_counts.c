/*
 * sampled_counts.c — a sampled trace's event counts: samples, losses, and
 * per thread its accesses (TOTALS, else the largest counters its samples
 * carried) and events of each kind. Publishes the head of the sampled
 * report (the trace, its settings and the trace-level counts); the other
 * sampled analyses read the per-thread accesses (sampled_results.h).
 *
 * Every event of a thread the trace does not announce is refused here, the
 * first analysis to see the events (docs/accuracy.md: event conventions).
 */
#include <stdlib.h>

#include "analysis.h"
#include "sampled_publish.h"
#include "sampled_results.h"

struct counts {
    const struct pes_stream_info *si;
    struct replay_sampled_config cfg;
    struct replay_ci ci;
    uint32_t n_threads;
    struct replay_sampled_thread *thread;
    uint64_t samples, lost, throttled, dropped, expired;
    uint64_t events, heap_events; /* all events, and of them alloc/free events */
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct counts *c = calloc(1, sizeof *c);
    if (c)
        c->thread = calloc(si->n_streams ? si->n_streams : 1, sizeof *c->thread);
    if (!c || !c->thread) {
        free(c);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    c->si = si;
    c->n_threads = si->n_streams;
    replay_sampled_config_read(&c->cfg, si->header, si->settings);
    replay_ci_init(&c->ci, replay_interval_bias_parse(k->interval_bias));
    return c;
}

static int count(struct counts *c, const struct pes_event *e, uint64_t off, struct pes_error *err)
{
    c->heap_events += e->kind == PES_EV_ALLOC || e->kind == PES_EV_FREE;
    if (e->kind == PES_EV_PERIOD)
        return 0; /* the stream's weights (weights.h) */
    if (e->thread >= c->n_threads)
        return replay_sampled_bad_thread(err, c->si->path, off, e->thread, c->n_threads);
    struct replay_sampled_thread *t = &c->thread[e->thread];
    /* a thread's counters so far, from its own samples (trap events carry the
     * TRAPPING thread's counters); TOTALS, if present, replaces them */
    if (e->kind == PES_EV_SAMPLE && e->loads + e->stores > t->loads + t->stores) {
        t->loads = e->loads;
        t->stores = e->stores;
    }
    switch (e->kind) {
    case PES_EV_SAMPLE:
        c->samples++;
        t->samples++;
        break;
    case PES_EV_REUSE:
        t->reuses++;
        t->spatial += (e->flags & PES_EVF_SPATIAL) != 0;
        break;
    case PES_EV_INVALIDATION:
        t->invalidations++;
        break;
    case PES_EV_COMM:
        if (e->other_thread >= c->n_threads)
            return replay_sampled_bad_thread(err, c->si->path, off, e->other_thread, c->n_threads);
        t->comm++;
        break;
    case PES_EV_LOST:
        c->lost += e->aux;
        t->lost += e->aux;
        break;
    case PES_EV_THROTTLE:
        c->throttled += e->aux;
        break;
    case PES_EV_DROPPED:
        c->dropped += e->aux;
        break;
    case PES_EV_WATCH_EXPIRED:
        c->expired++;
        break;
    case PES_EV_TOTALS:
        t->loads = e->loads;
        t->stores = e->stores;
        break;
    default:
        break;
    }
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct counts *c = self;
    c->events += b->n_events;
    for (size_t i = 0; i < b->n_events; i++)
        if (count(c, &b->events[i], b->events_offset, err) < 0)
            return -1;
    return 0;
}

const struct replay_sampled_thread *replay_sampled_counts_threads(const void *self)
{
    return ((const struct counts *)self)->thread;
}

uint64_t replay_sampled_counts_samples(const void *self)
{
    return ((const struct counts *)self)->samples;
}

void replay_sampled_counts_export(const void *self, struct replay_sampled *s)
{
    const struct counts *c = self;
    s->samples = c->samples;
    s->lost = c->lost;
    s->throttled = c->throttled;
    s->dropped = c->dropped;
    s->expired = c->expired;
    s->events = c->events;
    s->heap_events = c->heap_events;
    for (uint32_t t = 0; t < c->n_threads && t < s->n_threads; t++) {
        struct replay_sampled_thread *o = &s->thread[t];
        const struct replay_sampled_thread *x = &c->thread[t];
        o->loads = x->loads;
        o->stores = x->stores;
        o->samples = x->samples;
        o->reuses = x->reuses;
        o->spatial = x->spatial;
        o->invalidations = x->invalidations;
        o->comm = x->comm;
        o->lost = x->lost;
    }
}

static void publish(void *self, const struct pes_publish *to)
{
    struct counts *c = self;
    if (c->si->paired)
        return; /* --compare: the report is accuracy.c's */
    struct pes_report *r = to->r;
    struct pes_rnode *o = to->trace;
    pes_r_str(r, o, "trace", c->si->path);
    pes_r_str(r, o, "kind", "sampled");
    replay_publish_sampled_config(r, o, &c->cfg, &c->ci);
    pes_r_str(r, o, "granularity", c->cfg.spatial ? "line" : "address");
    pes_r_u64(r, o, "threads", c->n_threads);
    pes_r_bool(r, o, "truncated", c->si->truncated);
    pes_r_u64(r, o, "skipped_blocks", c->si->skipped_blocks);
    pes_r_u64(r, o, "samples", c->samples);
    pes_r_u64(r, o, "lost", c->lost);
    pes_r_u64(r, o, "throttled", c->throttled);
    pes_r_u64(r, o, "dropped", c->dropped);
    pes_r_u64(r, o, "expired", c->expired);
    /* a trace of an older collector, most of whose events are allocations
     * and frees: the hint says how to avoid them */
    if (!c->cfg.heap_on_use && c->heap_events * 2 > c->events) {
        struct pes_rnode *h = pes_r_object(r, o, "heap_events_dominate");
        pes_r_u64(r, h, "heap_events", c->heap_events);
        pes_r_u64(r, h, "events", c->events);
        pes_r_str(r, h, "hint",
                  "pes-collect --no-heap (no data objects for heap blocks), or a newer "
                  "pes-collect, which writes heap events only for blocks that samples fall in");
    }
}

static void destroy(void *self)
{
    struct counts *c = self;
    free(c->thread);
    free(c);
}

const struct pes_analysis pes_analysis_sampled_counts = {
    .name = "sampled_counts",
    .help = "a sampled trace's samples, losses and per-thread event counts",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
};
