/*
 * sampled_c2c.c — the cache-line table of a sampled trace (c2c.h): a
 * communication event is a transfer of the sampled access's line to the
 * detecting thread, the samples are the lines' accesses. Publishes
 * "cache_lines" and "cache_lines_untracked" (docs/replay.md, "Cache-line table").
 */
#include <stdlib.h>

#include "analysis.h"
#include "c2c.h"

struct lines {
    const struct pes_stream_info *si;
    uint32_t top;
    struct replay_c2c *c2c;
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED && !si->paired;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct lines *a = calloc(1, sizeof *a);
    if (a && !(a->c2c = replay_c2c_create(si->line ? si->line : 64))) {
        free(a);
        a = NULL;
    }
    if (!a) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    a->si = si;
    a->top = k->top;
    return a;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    (void)err;
    struct lines *a = self;
    uint64_t line_mask = ~((uint64_t)(a->si->line ? a->si->line : 64) - 1);
    for (size_t i = 0; i < b->n_events; i++) {
        const struct pes_event *e = &b->events[i];
        if (e->kind != PES_EV_COMM && e->kind != PES_EV_SAMPLE)
            continue;
        struct replay_c2c_access x = {
            .addr = e->addr,
            .size = e->size,
            .thread = e->thread,
            .site = e->site,
            .object = b->event_object ? b->event_object[i] : 0,
            .object_offset = b->event_object_offset ? b->event_object_offset[i] : 0,
            .is_read = !(e->flags & PES_EVF_WRITE),
            .is_write = (e->flags & PES_EVF_WRITE) != 0,
        };
        if (e->kind == PES_EV_COMM)
            replay_c2c_event(a->c2c, e->addr & line_mask, &x, REPLAY_C2C_TRANSFER,
                             !(e->flags & PES_EVF_FALSE_SHARING), replay_c2c_now(a->c2c));
        else
            replay_c2c_access(a->c2c, &x);
    }
    return 0;
}

static void publish(void *self, const struct pes_publish *to)
{
    struct lines *a = self;
    replay_c2c_publish(a->c2c, to->r, to->trace, a->si, a->top);
}

static void destroy(void *self)
{
    struct lines *a = self;
    replay_c2c_destroy(a->c2c);
    free(a);
}

const struct pes_analysis pes_analysis_sampled_c2c = {
    .name = "sampled_c2c",
    .help = "cache lines of a sampled trace with the most communication events",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
};
