/*
 * sampled_bytes.c — the bytes each thread loaded and stored, estimated from
 * a sampled trace's samples: a sample of an access of s bytes taken at
 * period p stands for p accesses of its type, so for p·s bytes
 * (Horvitz–Thompson; pes_period_of gives p, the period in effect, which
 * pes-collect --samples adapts over the run). The per-thread table counts
 * loads and stores; this one says how much data each thread moved, wide
 * (vector) accesses counting for more. Publishes "bytes_by_thread": one row
 * per thread (docs/sampled.schema.json).
 *
 * The example of docs/replay.md, "Writing a sampled analysis": one file and
 * its line in registry.c.
 */
#include <math.h>
#include <stdlib.h>

#include "analysis.h"
#include "weights.h"

struct thread_bytes {
    uint64_t samples;
    double loaded, stored; /* estimated bytes */
};

struct bytes {
    const struct pes_stream_info *si;
    struct thread_bytes *thread; /* [si->n_streams] */
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED && !si->paired; /* --compare: accuracy.c reports */
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    (void)k;
    struct bytes *a = calloc(1, sizeof *a);
    if (a && !(a->thread = calloc(si->n_streams ? si->n_streams : 1, sizeof *a->thread))) {
        free(a);
        a = NULL;
    }
    if (!a) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    a->si = si;
    return a;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    (void)err; /* a thread the trace does not announce: sampled_counts.c refuses it first */
    struct bytes *a = self;
    for (size_t i = 0; i < b->n_events; i++) {
        const struct pes_event *e = &b->events[i];
        if (e->kind != PES_EV_SAMPLE || e->thread >= a->si->n_streams)
            continue;
        struct thread_bytes *t = &a->thread[e->thread];
        double bytes = pes_period_of(a->si, e) * e->size;
        t->samples++;
        if (e->flags & PES_EVF_WRITE)
            t->stored += bytes;
        else
            t->loaded += bytes;
    }
    return 0;
}

static void publish(void *self, const struct pes_publish *to)
{
    struct bytes *a = self;
    struct pes_rnode *rows = pes_r_array(to->r, to->trace, "bytes_by_thread");
    for (uint32_t t = 0; t < a->si->n_streams; t++) {
        struct pes_rnode *row = pes_r_object(to->r, rows, NULL);
        pes_r_u64(to->r, row, "thread", t);
        pes_r_u64(to->r, row, "samples", a->thread[t].samples);
        /* whole bytes: periods and sizes are integers */
        pes_r_u64(to->r, row, "loaded_bytes", (uint64_t)llround(a->thread[t].loaded));
        pes_r_u64(to->r, row, "stored_bytes", (uint64_t)llround(a->thread[t].stored));
    }
}

static void destroy(void *self)
{
    struct bytes *a = self;
    free(a->thread);
    free(a);
}

const struct pes_analysis pes_analysis_sampled_bytes = {
    .name = "sampled_bytes",
    .help = "bytes each thread loaded and stored, estimated from a sampled trace's samples",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
};
