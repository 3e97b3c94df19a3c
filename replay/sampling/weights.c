/*
 * weights.c — the period weights of a sampled trace (weights.h): per thread
 * the PERIOD events by time, looked up by binary search.
 */
#include <stdlib.h>

#include "sampled.h"
#include "weights.h"

/* One PERIOD event: the periods of its thread from `time` on. */
struct epoch {
    uint64_t time, load, store;
};

struct epochs {
    struct epoch *e; /* by time once sealed */
    size_t n, cap;
};

struct pes_weights {
    const char *path; /* for messages */
    uint32_t n_threads;
    uint64_t period_load, period_store; /* the header's (--samples: the caps) */
    uint64_t samples_target;            /* 0: a fixed period, every weight 1 */
    /* the schedule's first level, where a --samples thread starts (the
     * header's periods at a fixed period) */
    uint64_t first_load, first_store;
    struct epochs *epochs; /* [n_threads] */
};

/* The trace's settings the weights depend on (si->settings). */
static void read_settings(struct pes_weights *w, const struct pes_collect_settings *set)
{
    w->period_load = set->period_load;
    w->period_store = set->period_store;
    w->samples_target = set->samples_target;
    /* a thread without PERIOD events ran at the header's period, or with
     * --samples at the schedule's first level (cap >> period_levels), having
     * taken no sample */
    uint64_t shift = w->samples_target ? set->period_levels : 0;
    w->first_load = shift >= 64 ? 0 : w->period_load >> shift;
    w->first_store = shift >= 64 ? 0 : w->period_store >> shift;
    if (w->period_load && !w->first_load)
        w->first_load = 1;
    if (w->period_store && !w->first_store)
        w->first_store = 1;
}

struct pes_weights *pes_weights_create(const char *path,
                                       const struct pes_collect_settings *settings,
                                       uint32_t n_threads, struct pes_error *err)
{
    struct pes_weights *w = calloc(1, sizeof *w);
    if (w)
        w->epochs = calloc(n_threads ? n_threads : 1, sizeof *w->epochs);
    if (!w || !w->epochs) {
        free(w);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    w->path = path;
    w->n_threads = n_threads;
    read_settings(w, settings);
    return w;
}

int pes_weights_add(struct pes_weights *w, const struct pes_event *e, size_t n, uint64_t offset,
                    struct pes_error *err)
{
    if (!w->samples_target)
        return 0; /* a fixed period: PERIOD events change nothing */
    for (size_t i = 0; i < n; i++) {
        if (e[i].kind != PES_EV_PERIOD)
            continue;
        if (e[i].thread >= w->n_threads)
            return replay_sampled_bad_thread(err, w->path, offset, e[i].thread, w->n_threads);
        struct epochs *l = &w->epochs[e[i].thread];
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 16;
            struct epoch *p = realloc(l->e, cap * sizeof *p);
            if (!p)
                return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
            l->e = p;
            l->cap = cap;
        }
        l->e[l->n++] = (struct epoch){e[i].time, e[i].aux, e[i].distance};
    }
    return 0;
}

static int by_time(const void *pa, const void *pb)
{
    const struct epoch *a = pa, *b = pb;
    return (a->time > b->time) - (a->time < b->time);
}

void pes_weights_seal(struct pes_weights *w)
{
    for (uint32_t t = 0; t < w->n_threads; t++)
        if (w->epochs[t].n)
            qsort(w->epochs[t].e, w->epochs[t].n, sizeof *w->epochs[t].e, by_time);
}

struct pes_weights *pes_weights_build(const char *path, const struct pes_collect_settings *settings,
                                      uint32_t n_threads, struct pes_error *err)
{
    struct pes_weights *w = pes_weights_create(path, settings, n_threads, err);
    if (!w || !w->samples_target)
        return w;
    /* every PERIOD event before the first batch: the blocks of different
     * threads interleave arbitrarily, so an outcome's PERIOD event may come
     * in a later block than the outcome */
    struct pes_trace_reader *r = pes_trace_reader_open(path, err);
    int k = r ? 1 : -1;
    struct pes_block b;
    while (r && (k = pes_trace_reader_next(r, &b, err)) > 0)
        if (b.type == PES_BLOCK_EVENTS && pes_weights_add(w, b.events, b.n, b.file_offset, err) < 0)
            k = -1;
    if (r)
        pes_trace_reader_close(r);
    if (k < 0) {
        pes_weights_free(w);
        return NULL;
    }
    pes_weights_seal(w);
    return w;
}

void pes_weights_free(struct pes_weights *w)
{
    if (!w)
        return;
    for (uint32_t t = 0; t < w->n_threads; t++)
        free(w->epochs[t].e);
    free(w->epochs);
    free(w);
}

int pes_weights_adaptive(const struct pes_weights *w)
{
    return w && w->samples_target != 0;
}

/* The last PERIOD event of the thread at or before `time` (the first one
 * before any); without PERIOD events the schedule's first level. A period
 * of 0 for the access's type (a mode sampling one type only) is the
 * other's. */
double pes_weights_period_at(const struct pes_weights *w, uint32_t thread, uint64_t time, int write)
{
    const struct epochs *l = thread < w->n_threads ? &w->epochs[thread] : NULL;
    if (!l || !l->n) {
        double cap_l = (double)w->period_load, cap_s = (double)w->period_store;
        if (l) {
            cap_l = (double)w->first_load;
            cap_s = (double)w->first_store;
        }
        double p = write ? cap_s : cap_l;
        return p > 0 ? p : (cap_s > 0 ? cap_s : cap_l);
    }
    size_t lo = 0, hi = l->n; /* first epoch with time > `time` */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->e[mid].time <= time)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct epoch *ep = &l->e[lo ? lo - 1 : 0];
    double p = (double)(write ? ep->store : ep->load);
    return p > 0 ? p : (double)(ep->store ? ep->store : ep->load);
}

double pes_weights_factor_at(const struct pes_weights *w, uint32_t thread, uint64_t time, int write)
{
    if (!w->samples_target)
        return 1.0;
    double cap = (double)(write ? w->period_store : w->period_load);
    if (cap <= 0)
        cap = (double)(w->period_store ? w->period_store : w->period_load);
    double p = pes_weights_period_at(w, thread, time, write);
    return cap > 0 && p > 0 ? p / cap : 1.0;
}

void pes_weights_schedule(const struct pes_weights *w, uint32_t thread,
                          struct pes_period_schedule *out)
{
    const struct epochs *l = thread < w->n_threads ? &w->epochs[thread] : NULL;
    if (!l || !l->n) {
        *out = (struct pes_period_schedule){w->first_load, w->first_store, w->first_load,
                                            w->first_store, 0};
        return;
    }
    *out = (struct pes_period_schedule){l->e[0].load, l->e[0].store, l->e[l->n - 1].load,
                                        l->e[l->n - 1].store, (uint32_t)(l->n - 1)};
}

double pes_weight_of(const struct pes_stream_info *si, const struct pes_event *e)
{
    if (!si->weights)
        return 1.0;
    return pes_weights_factor_at(si->weights, e->thread, e->time, (e->flags & PES_EVF_WRITE) != 0);
}

double pes_period_of(const struct pes_stream_info *si, const struct pes_event *e)
{
    if (!si->weights)
        return 1.0;
    return pes_weights_period_at(si->weights, e->thread, e->time, (e->flags & PES_EVF_WRITE) != 0);
}
