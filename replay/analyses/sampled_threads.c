/*
 * sampled_threads.c — the sampled report's per-thread table ("per_thread"):
 * each thread's accesses and event counts (sampled_counts.c), its N-hat
 * (sampled_reuse.c) and, for --samples traces, the periods it ran at (the
 * stream's weights). A join: it reads no batch.
 */
#include <stdlib.h>

#include "analysis.h"
#include "sampled_results.h"
#include "weights.h"

struct threads {
    const struct pes_stream_info *si;
    const void *counts, *reuse;
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED && !si->paired;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    (void)k;
    struct threads *a = calloc(1, sizeof *a);
    if (!a)
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    else
        a->si = si;
    return a;
}

static int find_siblings(void *self, const struct pes_siblings *s, struct pes_error *err)
{
    struct threads *a = self;
    a->counts = pes_sibling(s, &pes_analysis_sampled_counts);
    a->reuse = pes_sibling(s, &pes_analysis_sampled_reuse);
    if (!a->counts || !a->reuse)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "sampled_threads needs sampled_counts and sampled_reuse");
    return 0;
}

static void publish(void *self, const struct pes_publish *to)
{
    struct threads *a = self;
    struct pes_report *r = to->r;
    const struct replay_sampled_thread *th = replay_sampled_counts_threads(a->counts);
    struct pes_rnode *rows = pes_r_array(r, to->trace, "per_thread");
    for (uint32_t t = 0; t < a->si->n_streams; t++) {
        const struct replay_sampled_thread *h = &th[t];
        struct pes_rnode *n = pes_r_object(r, rows, NULL);
        pes_r_u64(r, n, "thread", t);
        pes_r_u64(r, n, "loads", h->loads);
        pes_r_u64(r, n, "stores", h->stores);
        pes_r_u64(r, n, "samples", h->samples);
        pes_r_u64(r, n, "reuses", h->reuses);
        pes_r_u64(r, n, "invalidations", h->invalidations);
        pes_r_u64(r, n, "comm", h->comm);
        pes_r_u64(r, n, "lost", h->lost);
        pes_r_f64(r, n, "n_distinct", replay_sampled_reuse_n_distinct(a->reuse, t), "%.6g");
        if (pes_weights_adaptive(
                a->si->weights)) { /* --samples: the adaptive schedule of this thread */
            struct pes_period_schedule p;
            pes_weights_schedule(a->si->weights, t, &p);
            struct pes_rnode *o = pes_r_object(r, n, "period");
            pes_r_u64(r, o, "first_load", p.first_load);
            pes_r_u64(r, o, "first_store", p.first_store);
            pes_r_u64(r, o, "last_load", p.last_load);
            pes_r_u64(r, o, "last_store", p.last_store);
            pes_r_u64(r, o, "changes", p.changes);
        }
    }
}

const struct pes_analysis pes_analysis_sampled_threads = {
    .name = "sampled_threads",
    .help = "per thread of a sampled trace: accesses, events, N-hat and periods",
    .wanted = wanted,
    .create = create,
    .link = find_siblings,
    .publish = publish,
    .destroy = free,
};
