/*
 * sampled_objects.c — `--by object` on a sampled trace: its events per data
 * object (the batch's event_object column; 0 = unknown, every event when
 * objects are not resolved): samples, reuses with the weighted mean and
 * histogram of their time distances, invalidations, true and false
 * communication events. Publishes "by" and "groups" (docs/replay.md, "Rows").
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "groups.h"
#include "sampled_publish.h"
#include "weights.h"

struct obj_row {
    uint64_t samples, reuses, invalidations, comm_true, comm_false;
    double reuse_weight, reuse_time_sum; /* weighted as the trace's histograms (aux, period) */
    double reuse_time[PES_RT_BINS];      /* time distances of all its reuses, weighted */
};

struct objects {
    const struct pes_stream_info *si;
    uint32_t top;
    struct obj_row *obj; /* by object id */
    size_t n_obj;
};

/* Object ids are dense (objects.h: 0 .. count-1); the table grows to the largest seen. */
#define MAX_OBJECT_ROWS (1u << 24)

static struct obj_row *obj_row_of(struct objects *a, uint32_t id, struct pes_error *err)
{
    if (id >= MAX_OBJECT_ROWS)
        id = 0; /* not an id objects.h hands out: unknown */
    if (id >= a->n_obj) {
        size_t n = a->n_obj ? a->n_obj : 64;
        while (n <= id)
            n *= 2;
        struct obj_row *p = realloc(a->obj, n * sizeof *p);
        if (!p) {
            pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
            return NULL;
        }
        memset(p + a->n_obj, 0, (n - a->n_obj) * sizeof *p);
        a->obj = p;
        a->n_obj = n;
    }
    return &a->obj[id];
}

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    return si->kind == PES_TRACE_SAMPLED && !si->paired &&
           replay_by_parse(k->by) == REPLAY_BY_OBJECT;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct objects *a = calloc(1, sizeof *a);
    if (!a) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    a->si = si;
    a->top = k->top;
    return a;
}

/* The event's counts in its object's row, as sampled_sites.c counts them
 * per site; a reuse weighs aux times its sample's period weight. */
static int count_object(struct objects *a, const struct pes_event *e, uint32_t id,
                        struct pes_error *err)
{
    if (e->kind != PES_EV_SAMPLE && e->kind != PES_EV_REUSE && e->kind != PES_EV_INVALIDATION &&
        e->kind != PES_EV_COMM)
        return 0;
    struct obj_row *o = obj_row_of(a, id, err);
    if (!o)
        return -1;
    switch (e->kind) {
    case PES_EV_SAMPLE:
        o->samples++;
        break;
    case PES_EV_REUSE: {
        uint64_t d = e->distance ? e->distance - 1 : 0; /* accesses between (docs/accuracy.md) */
        double w = (e->aux ? (double)e->aux : 1.0) * pes_weight_of(a->si, e);
        o->reuses++;
        o->reuse_weight += w;
        o->reuse_time_sum += w * (double)d;
        o->reuse_time[pes_rt_bin(d)] += w;
        break;
    }
    case PES_EV_INVALIDATION:
        o->invalidations++;
        break;
    default:
        if (e->flags & PES_EVF_FALSE_SHARING)
            o->comm_false++;
        else
            o->comm_true++;
        break;
    }
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct objects *a = self;
    for (size_t i = 0; i < b->n_events; i++)
        if (count_object(a, &b->events[i], b->event_object ? b->event_object[i] : 0, err) < 0)
            return -1;
    return 0;
}

static int has_events(const struct obj_row *x)
{
    return x->samples || x->reuses || x->invalidations || x->comm_true || x->comm_false;
}

/* One row per object with events, ranked as the sites are, with the mean
 * and histogram of its reuses' time distances. */
static void publish(void *self, const struct pes_publish *to)
{
    struct objects *a = self;
    struct pes_report *r = to->r;
    pes_r_str(r, to->trace, "by", replay_by_name(REPLAY_BY_OBJECT));
    struct pes_rnode *arr = pes_r_array(r, to->trace, "groups");
    size_t n_keys = 0;
    for (size_t i = 0; i < a->n_obj; i++)
        n_keys += has_events(&a->obj[i]);
    uint32_t *keys = malloc((n_keys ? n_keys : 1) * sizeof *keys);
    struct replay_sampled_site *rows = calloc(n_keys ? n_keys : 1, sizeof *rows);
    size_t *idx = malloc((n_keys ? n_keys : 1) * sizeof *idx);
    struct replay_groups g;
    if (!keys || !rows || !idx) {
        free(keys);
        free(rows);
        free(idx);
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    n_keys = 0;
    for (size_t i = 0; i < a->n_obj; i++) {
        const struct obj_row *x = &a->obj[i];
        if (!has_events(x))
            continue;
        rows[n_keys] = (struct replay_sampled_site){.site = (uint32_t)i,
                                                    .samples = x->samples,
                                                    .reuses = x->reuses,
                                                    .invalidations = x->invalidations,
                                                    .comm_true = x->comm_true,
                                                    .comm_false = x->comm_false};
        keys[n_keys++] = (uint32_t)i;
    }
    if (replay_groups_make(&g, a->si, REPLAY_BY_OBJECT, keys, n_keys) < 0) {
        free(keys);
        free(rows);
        free(idx);
        pes_r_array(r, NULL, NULL);
        return;
    }
    /* one object per group: an object's label is its own (groups.c) */
    size_t n = replay_sampled_top_rows(rows, n_keys, a->top < 256 ? a->top : 256, idx);
    for (size_t k = 0; k < n; k++) {
        const struct replay_sampled_site *p = &rows[idx[k]];
        const struct obj_row *x = &a->obj[p->site];
        struct pes_rnode *row = pes_r_object(r, arr, NULL);
        replay_group_publish(r, row, a->si, REPLAY_BY_OBJECT, &g, g.of[idx[k]], keys);
        pes_r_u64(r, row, "samples", p->samples);
        pes_r_u64(r, row, "reuses", p->reuses);
        pes_r_f64(r, row, "reuse_time_mean",
                  x->reuse_weight > 0 ? x->reuse_time_sum / x->reuse_weight : 0, "%.6g");
        replay_publish_rt_histogram(r, row, "reuse_time_histogram", x->reuse_time);
        pes_r_u64(r, row, "invalidations", p->invalidations);
        pes_r_u64(r, row, "comm_true", p->comm_true);
        pes_r_u64(r, row, "comm_false", p->comm_false);
    }
    free(rows);
    free(idx);
    free(keys);
    replay_groups_free(&g);
}

static void destroy(void *self)
{
    struct objects *a = self;
    free(a->obj);
    free(a);
}

const struct pes_analysis pes_analysis_sampled_objects = {
    .name = "sampled_objects",
    .help = "events per data object of a sampled trace (--by object)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
};
