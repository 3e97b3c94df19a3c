/*
 * sampled.c — the analyses of a sampled trace (pes-replay SAMPLED): event
 * counts, time-distance histograms, the converted stack distances, the
 * communication matrices and the per-site counts (sampling/accuracy.h does
 * the work; this file runs it on a stream and publishes it). Runs on a
 * stream of events that is not paired with a full trace (--compare:
 * accuracy.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "analysis.h"
#include "c2c.h"
#include "groups.h"
#include "report_util.h"
#include "sampled_publish.h"

struct sampled {
    const struct pes_stream_info *si;
    struct replay_sampled_builder *b;
    struct replay_sampled s;
    uint32_t top;
    enum replay_by by;
    struct replay_c2c *c2c;   /* the cache-line table of the communication events */
    /* --by object: the event counts per object id (the batch's event_object
     * column; 0 = unknown, every event without the column), kept here
     * because the builder (sampling/accuracy.h) keys its rows by site */
    struct obj_row *obj;
    size_t n_obj;
    /* --samples traces: the reuses and their objects, counted at the end
     * with the period weights (every PERIOD event must be known first); the
     * other kinds are counted as they come */
    int adaptive;
    struct held_event *held;
    size_t n_held, cap_held;
};

struct held_event {
    struct pes_event e;
    uint32_t object;
};

struct obj_row {
    uint64_t samples, reuses, invalidations, comm_true, comm_false;
    double reuse_weight, reuse_time_sum;   /* weighted as the trace's histograms (aux) */
    double reuse_time[PES_RT_BINS];        /* time distances of all its reuses, weighted */
};

/* Object ids are dense (objects.h: 0 .. count-1); the table grows to the largest seen. */
#define MAX_OBJECT_ROWS (1u << 24)

static struct obj_row *obj_row_of(struct sampled *a, uint32_t id, struct pes_error *err) {
    if (id >= MAX_OBJECT_ROWS) id = 0;   /* not an id objects.h hands out: unknown */
    if (id >= a->n_obj) {
        size_t n = a->n_obj ? a->n_obj : 64;
        while (n <= id) n *= 2;
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

/* The event's counts in its object's row, as sampled_events.c counts them per
 * site; a reuse weighs aux times f, its sample's period factor (1 without
 * --samples). */
static int count_object(struct sampled *a, const struct pes_event *e, uint32_t id, double f, struct pes_error *err) {
    if (e->kind != PES_EV_SAMPLE && e->kind != PES_EV_REUSE && e->kind != PES_EV_INVALIDATION &&
        e->kind != PES_EV_COMM)
        return 0;
    struct obj_row *o = obj_row_of(a, id, err);
    if (!o) return -1;
    switch (e->kind) {
    case PES_EV_SAMPLE: o->samples++; break;
    case PES_EV_REUSE: {
        uint64_t d = e->distance ? e->distance - 1 : 0;   /* accesses between (docs/accuracy.md) */
        double w = (e->aux ? (double)e->aux : 1.0) * f;
        o->reuses++;
        o->reuse_weight += w;
        o->reuse_time_sum += w * (double)d;
        o->reuse_time[pes_rt_bin(d)] += w;
        break;
    }
    case PES_EV_INVALIDATION: o->invalidations++; break;
    default:
        if (e->flags & PES_EVF_FALSE_SHARING) o->comm_false++;
        else o->comm_true++;
        break;
    }
    return 0;
}

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k) {
    (void)k;
    return si->kind == PES_TRACE_SAMPLED && !si->paired;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k, struct pes_error *err) {
    struct sampled *a = calloc(1, sizeof *a);
    if (!a) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    a->si = si;
    a->top = k->top;
    a->by = replay_by_parse(k->by);
    if (!(a->c2c = replay_c2c_create(si->line ? si->line : 64))) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        free(a);
        return NULL;
    }
    if (!(a->b = replay_sampled_begin(si->path, si->header, si->settings, si->n_streams, err))) {
        replay_c2c_destroy(a->c2c);
        free(a);
        return NULL;
    }
    replay_sampled_set_estimator(a->b, replay_reuse_estimator_parse(k->reuse_estimator));
    replay_sampled_set_stack_model(a->b, replay_stack_model_parse(k->stack_model));
    replay_sampled_set_interval_bias(a->b, replay_interval_bias_parse(k->interval_bias));
    replay_sampled_set_comm_estimator(a->b, replay_comm_estimator_parse(k->comm_estimator));
    a->adaptive = si->settings->samples_target != 0;
    return a;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err) {
    struct sampled *a = self;
    if (replay_sampled_events(a->b, b->events, b->n_events, b->events_offset, err) < 0) return -1;
    for (size_t i = 0; a->by == REPLAY_BY_OBJECT && i < b->n_events; i++) {
        uint32_t id = b->event_object ? b->event_object[i] : 0;
        if (!a->adaptive || b->events[i].kind != PES_EV_REUSE) {   /* only a reuse is weighted */
            if (count_object(a, &b->events[i], id, 1.0, err) < 0) return -1;
            continue;
        }
        if (a->n_held == a->cap_held) {
            size_t cap = a->cap_held ? a->cap_held * 2 : 1024;
            struct held_event *p = realloc(a->held, cap * sizeof *p);
            if (!p) {
                pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
                return -1;
            }
            a->held = p;
            a->cap_held = cap;
        }
        a->held[a->n_held++] = (struct held_event){b->events[i], id};
    }
    /* the cache-line table: a communication event is a transfer of the
     * sampled access's line to the trapping thread; samples are its accesses */
    uint64_t line_mask = ~((uint64_t)(a->si->line ? a->si->line : 64) - 1);
    for (size_t i = 0; i < b->n_events; i++) {
        const struct pes_event *e = &b->events[i];
        if (e->kind != PES_EV_COMM && e->kind != PES_EV_SAMPLE) continue;
        struct replay_c2c_access x = {
            .addr = e->addr, .size = e->size, .thread = e->thread, .site = e->site,
            .object = b->event_object ? b->event_object[i] : 0,
            .object_offset = b->event_object_offset ? b->event_object_offset[i] : 0,
            .is_read = !(e->flags & PES_EVF_WRITE), .is_write = (e->flags & PES_EVF_WRITE) != 0,
        };
        if (e->kind == PES_EV_COMM)
            replay_c2c_event(a->c2c, e->addr & line_mask, &x, REPLAY_C2C_TRANSFER,
                             !(e->flags & PES_EVF_FALSE_SHARING), replay_c2c_now(a->c2c));
        else
            replay_c2c_access(a->c2c, &x);
    }
    return 0;
}

static int finish(void *self, struct pes_error *err) {
    struct sampled *a = self;
    int rc = replay_sampled_end(a->b, a->si->site, a->si->site_ctx, &a->s, err);
    a->b = NULL;
    for (size_t i = 0; rc == 0 && i < a->n_held; i++) {
        const struct pes_event *e = &a->held[i].e;
        double f = replay_sampled_event_factor(&a->s, e);
        if (count_object(a, e, a->held[i].object, f, err) < 0) rc = -1;
    }
    free(a->held);
    a->held = NULL;
    a->n_held = a->cap_held = 0;
    return rc;
}

/* Sites by invalidations, then communication events, then samples (a small
 * selection sort: top is small). */
static size_t top_sites(const struct replay_sampled *s, uint32_t top, size_t *idx) {
    size_t n = 0;
    for (size_t i = 0; i < s->n_sites && n < top; i++) {
        size_t best = SIZE_MAX;
        for (size_t j = 0; j < s->n_sites; j++) {
            int taken = 0;
            for (size_t k = 0; k < n; k++) taken |= idx[k] == j;
            if (taken) continue;
            const struct replay_sampled_site *x = &s->sites[j];
            if (best == SIZE_MAX) {
                best = j;
                continue;
            }
            const struct replay_sampled_site *y = &s->sites[best];
            uint64_t cx = x->comm_true + x->comm_false, cy = y->comm_true + y->comm_false;
            if (x->invalidations > y->invalidations ||
                (x->invalidations == y->invalidations && (cx > cy || (cx == cy && x->samples > y->samples))))
                best = j;
        }
        if (best == SIZE_MAX) break;
        idx[n++] = best;
    }
    return n;
}

/* A row's counts (a site's, a --by group's); an object's (x) with its reuse times. */
static void publish_counts(struct pes_report *r, struct pes_rnode *row, const struct replay_sampled_site *p,
                           const struct obj_row *x) {
    pes_r_u64(r, row, "samples", p->samples);
    pes_r_u64(r, row, "reuses", p->reuses);
    if (x) {
        pes_r_f64(r, row, "reuse_time_mean", x->reuse_weight > 0 ? x->reuse_time_sum / x->reuse_weight : 0,
                  "%.6g");
        replay_publish_rt_histogram(r, row, "reuse_time_histogram", x->reuse_time);
    }
    pes_r_u64(r, row, "invalidations", p->invalidations);
    pes_r_u64(r, row, "comm_true", p->comm_true);
    pes_r_u64(r, row, "comm_false", p->comm_false);
}

/* Rows of --by object: one per object with events, ranked as top_sites
 * ranks sites, with the mean and histogram of its reuses' time distances. */
static void publish_objects(struct sampled *a, struct pes_report *r, struct pes_rnode *arr) {
    size_t n_keys = 0;
    for (size_t i = 0; i < a->n_obj; i++) {
        const struct obj_row *x = &a->obj[i];
        n_keys += (x->samples || x->reuses || x->invalidations || x->comm_true || x->comm_false);
    }
    uint32_t *keys = malloc((n_keys ? n_keys : 1) * sizeof *keys);
    struct replay_sampled_site *rows = calloc(n_keys ? n_keys : 1, sizeof *rows);
    size_t *idx = malloc((n_keys ? n_keys : 1) * sizeof *idx);
    struct replay_groups g;
    if (!keys || !rows || !idx) {
        free(keys);
        free(rows);
        free(idx);
        pes_r_array(r, NULL, NULL);   /* marks the report failed */
        return;
    }
    n_keys = 0;
    for (size_t i = 0; i < a->n_obj; i++) {
        const struct obj_row *x = &a->obj[i];
        if (!(x->samples || x->reuses || x->invalidations || x->comm_true || x->comm_false)) continue;
        rows[n_keys] = (struct replay_sampled_site){.site = (uint32_t)i, .samples = x->samples, .reuses = x->reuses,
                                                    .invalidations = x->invalidations, .comm_true = x->comm_true,
                                                    .comm_false = x->comm_false};
        keys[n_keys++] = (uint32_t)i;
    }
    if (replay_groups_make(&g, a->si, a->by, keys, n_keys) < 0) {
        free(keys);
        free(rows);
        free(idx);
        pes_r_array(r, NULL, NULL);
        return;
    }
    /* one object per group: an object's label is its own (groups.c) */
    struct replay_sampled sum = {.sites = rows, .n_sites = n_keys};
    size_t n = top_sites(&sum, a->top < 256 ? a->top : 256, idx);
    for (size_t k = 0; k < n; k++) {
        const struct replay_sampled_site *p = &rows[idx[k]];
        const struct obj_row *x = &a->obj[p->site];
        struct pes_rnode *row = pes_r_object(r, arr, NULL);
        replay_group_publish(r, row, a->si, a->by, &g, g.of[idx[k]], keys);
        publish_counts(r, row, p, x);
    }
    free(rows);
    free(idx);
    free(keys);
    replay_groups_free(&g);
}

/* Rows of --by: the sites' counts added per group, ranked as top_sites ranks sites. */
static void publish_groups(struct sampled *a, struct pes_report *r, struct pes_rnode *o) {
    const struct replay_sampled *s = &a->s;
    pes_r_str(r, o, "by", replay_by_name(a->by));
    if (a->by == REPLAY_BY_OBJECT) {
        publish_objects(a, r, pes_r_array(r, o, "groups"));
        return;
    }
    struct pes_rnode *arr = pes_r_array(r, o, "groups");
    uint32_t *keys = malloc((s->n_sites ? s->n_sites : 1) * sizeof *keys);
    struct replay_groups g;
    for (size_t i = 0; keys && i < s->n_sites; i++) keys[i] = s->sites[i].site;
    if (!keys || replay_groups_make(&g, a->si, a->by, keys, s->n_sites) < 0) {
        free(keys);
        pes_r_array(r, NULL, NULL);   /* marks the report failed */
        return;
    }
    struct replay_sampled sum = {0};
    sum.n_sites = g.n;
    struct replay_sampled_site *rows = calloc(g.n ? g.n : 1, sizeof *rows);
    size_t *idx = malloc((g.n ? g.n : 1) * sizeof *idx);
    if (!rows || !idx) pes_r_array(r, NULL, NULL);
    for (size_t i = 0; rows && idx && i < s->n_sites; i++) {
        struct replay_sampled_site *w = &rows[g.of[i]];
        const struct replay_sampled_site *x = &s->sites[i];
        w->samples += x->samples;
        w->reuses += x->reuses;
        w->invalidations += x->invalidations;
        w->comm_true += x->comm_true;
        w->comm_false += x->comm_false;
    }
    sum.sites = rows;
    size_t n = rows && idx ? top_sites(&sum, a->top < 256 ? a->top : 256, idx) : 0;
    for (size_t k = 0; k < n; k++) {
        const struct replay_sampled_site *p = &rows[idx[k]];
        struct pes_rnode *row = pes_r_object(r, arr, NULL);
        replay_group_publish(r, row, a->si, a->by, &g, idx[k], keys);
        publish_counts(r, row, p, NULL);
    }
    free(rows);
    free(idx);
    free(keys);
    replay_groups_free(&g);
}

static struct pes_rnode *matrix(struct pes_report *r, struct pes_rnode *parent, const char *key, const double *m,
                                uint32_t n) {
    struct pes_rnode *a = pes_r_array(r, parent, key);
    for (uint32_t i = 0; i < n; i++) {
        struct pes_rnode *row = pes_r_array(r, a, NULL);
        for (uint32_t j = 0; j < n; j++) pes_r_f64(r, row, NULL, m[(size_t)i * n + j], "%.6g");
    }
    return a;
}

/* The stated uncertainty of the communication results: Kish's effective
 * number of events (weights: their scaled volumes), the false-sharing
 * fraction of the volume and each thread pair's share of the volume (cell
 * (i, j) over the matrix total / 2: every transfer is in two cells), with
 * 90 % Wilson intervals (docs/accuracy.md). */
static void publish_comm_intervals(struct pes_report *r, struct pes_rnode *comm, const struct replay_sampled *s) {
    uint32_t n = s->n_threads;
    double vt = 0, vf = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        vt += s->comm_true[i];
        vf += s->comm_false[i];
    }
    pes_r_f64(r, comm, "effective_events", s->comm_neff, "%.6g");
    double ff = vt + vf > 0 ? vf / (vt + vf) : NAN;
    pes_r_f64(r, comm, "false_fraction", ff, "%.6g");
    replay_publish_ci(r, comm, "false_fraction_ci90", s, REPLAY_CI_FALSE_FRACTION, ff, s->comm_neff);
    struct pes_rnode *a = pes_r_array(r, comm, "pair_share_ci90");
    for (uint32_t i = 0; i < n; i++) {
        struct pes_rnode *row = pes_r_array(r, a, NULL);
        for (uint32_t j = 0; j < n; j++) {
            size_t c = (size_t)i * n + j;
            double share = vt + vf > 0 ? (s->comm_true[c] + s->comm_false[c]) / (vt + vf) : NAN;
            replay_publish_ci(r, row, NULL, s, REPLAY_CI_COMM_PAIRS, i == j ? NAN : share * 2, s->comm_neff);
        }
    }
}

static double matrix_total(const double *m, uint32_t n) {
    double t = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) t += m[i];
    return t / 2;   /* symmetric: every transfer is in two cells */
}

static void publish(void *self, const struct pes_publish *to) {
    struct sampled *a = self;
    const struct replay_sampled *s = &a->s;
    struct pes_report *r = to->r;
    struct pes_rnode *o = to->trace;
    pes_r_str(r, o, "trace", a->si->path);
    pes_r_str(r, o, "kind", "sampled");
    replay_publish_sampled_config(r, o, s);
    pes_r_str(r, o, "granularity", s->spatial ? "line" : "address");
    pes_r_u64(r, o, "threads", s->n_threads);
    pes_r_bool(r, o, "truncated", a->si->truncated);
    pes_r_u64(r, o, "skipped_blocks", a->si->skipped_blocks);
    pes_r_u64(r, o, "samples", s->samples);
    pes_r_u64(r, o, "lost", s->lost);
    pes_r_u64(r, o, "throttled", s->throttled);
    pes_r_u64(r, o, "dropped", s->dropped);
    pes_r_u64(r, o, "expired", s->expired);
    /* a trace of an older collector, most of whose events are allocations
     * and frees: the hint says how to avoid them */
    if (!s->heap_on_use && s->heap_events * 2 > s->events) {
        struct pes_rnode *h = pes_r_object(r, o, "heap_events_dominate");
        pes_r_u64(r, h, "heap_events", s->heap_events);
        pes_r_u64(r, h, "events", s->events);
        pes_r_str(r, h, "hint", "pes-collect --no-heap (no data objects for heap blocks), or a newer "
                                "pes-collect, which writes heap events only for blocks that samples fall in");
    }
    pes_r_str(r, o, "reuse_estimator", replay_reuse_estimator_name(s->estimator));
    pes_r_str(r, o, "stack_model", replay_stack_model_name(s->stack_model));
    pes_r_f64(r, o, "interval_level", 0.9, "%.6g");
    static const char *const scope[2] = {"intra", "shared"};
    double period = (double)(s->period_load ? s->period_load : s->period_store);
    for (int sc = 0; sc < 2; sc++) {
        struct pes_rnode *n = pes_r_object(r, o, scope[sc]);
        pes_r_u64(r, n, "reuses", s->reuses[sc]);
        pes_r_u64(r, n, "invalidations", s->invalidations[sc]);
        /* --samples: each invalidation counts the period its sample was taken at */
        double est = s->samples_target ? s->inval_periods[sc] : (double)s->invalidations[sc] * period;
        pes_r_flag(pes_r_f64(r, n, "estimated_invalidations", est, "%.0f"),
                   PES_R_TEXT_ONLY);
        pes_r_u64(r, n, "censored", s->censored[sc]);
        double dec = s->inval_weight[sc] + s->reuse_weight[sc];
        double ratio = dec > 0 ? s->inval_weight[sc] / dec : NAN;
        pes_r_f64(r, n, "invalidation_ratio", ratio, "%.6g");
        replay_publish_ci(r, n, "invalidation_ratio_ci90", s, REPLAY_CI_INVAL_RATIO, ratio, s->decided_neff[sc]);
        pes_r_f64(r, n, "effective_reuses", s->hist_neff[sc][s->spatial ? 1 : 0], "%.6g");
        replay_publish_rt_histogram_ci(r, n, "time_histogram", s->temporal[sc], s, REPLAY_CI_REUSE_BINS, s->hist_neff[sc][0]);
        replay_publish_rt_histogram_ci(r, n, "line_time_histogram", s->spatial_hist[sc], s, REPLAY_CI_REUSE_BINS,
                                       s->hist_neff[sc][1]);
        if (s->estimator == REPLAY_EST_CENSORED && s->beyond_from[sc][s->spatial ? 1 : 0]) {
            struct pes_rnode *b = pes_r_object(r, n, "beyond");
            pes_r_u64(r, b, "from", s->beyond_from[sc][s->spatial ? 1 : 0]);
            pes_r_f64(r, b, "count", s->beyond[sc][s->spatial ? 1 : 0], "%.6g");
        } else {
            pes_r_null(r, n, "beyond");
        }
    }
    /* the conversion's model error is not in this interval: sampling only */
    replay_publish_rt_histogram_ci(r, o, "stack_histogram", s->stack, s, REPLAY_CI_STACK_BINS, s->hist_neff[0][0]);
    struct pes_rnode *threads = pes_r_array(r, o, "per_thread");
    for (uint32_t t = 0; t < s->n_threads; t++) {
        const struct replay_sampled_thread *h = &s->thread[t];
        struct pes_rnode *n = pes_r_object(r, threads, NULL);
        pes_r_u64(r, n, "thread", t);
        pes_r_u64(r, n, "loads", h->loads);
        pes_r_u64(r, n, "stores", h->stores);
        pes_r_u64(r, n, "samples", h->samples);
        pes_r_u64(r, n, "reuses", h->reuses);
        pes_r_u64(r, n, "invalidations", h->invalidations);
        pes_r_u64(r, n, "comm", h->comm);
        pes_r_u64(r, n, "lost", h->lost);
        pes_r_f64(r, n, "n_distinct", h->n_distinct, "%.6g");
        if (s->samples_target) {   /* --samples: the adaptive schedule of this thread */
            struct pes_rnode *p = pes_r_object(r, n, "period");
            pes_r_u64(r, p, "first_load", h->period_first_load);
            pes_r_u64(r, p, "first_store", h->period_first_store);
            pes_r_u64(r, p, "last_load", h->period_last_load);
            pes_r_u64(r, p, "last_store", h->period_last_store);
            pes_r_u64(r, p, "changes", h->period_changes);
        }
    }
    struct pes_rnode *comm = pes_r_object(r, o, "comm");
    pes_r_u64(r, comm, "events", s->comm_events);
    pes_r_u64(r, comm, "true_events", s->comm_true_events);
    pes_r_u64(r, comm, "false_events", s->comm_false_events);
    pes_r_str(r, comm, "estimator", replay_comm_estimator_name(s->comm_estimator));
    pes_r_f64(r, comm, "trap_scale", s->trap_scale, "%.6g");
    pes_r_f64(r, comm, "resolution", s->comm_resolution, "%.6g");
    pes_r_u64(r, comm, "shared_lines", s->ilv.shared_lines);
    pes_r_u64(r, comm, "shared_samples", s->ilv.shared_samples);
    pes_r_u64(r, comm, "gaps", s->ilv.gaps);
    pes_r_u64(r, comm, "time_bins", s->ilv.bins);
    matrix(r, comm, "true", s->comm_true, s->n_threads);
    matrix(r, comm, "false", s->comm_false, s->n_threads);
    publish_comm_intervals(r, comm, s);
    /* comm mode that found nothing: 0 with the volume that could go unseen */
    if (s->comm_volume_limit > 0) pes_r_f64(r, comm, "volume_limit90", s->comm_volume_limit, "%.6g");
    pes_r_flag(pes_r_f64(r, comm, "volume_true", matrix_total(s->comm_true, s->n_threads), "%.0f"), PES_R_TEXT_ONLY);
    pes_r_flag(pes_r_f64(r, comm, "volume_false", matrix_total(s->comm_false, s->n_threads), "%.0f"), PES_R_TEXT_ONLY);
    struct pes_rnode *sites = pes_r_array(r, o, "sites");
    size_t idx[256];
    size_t n = top_sites(s, a->top < 256 ? a->top : 256, idx);
    for (size_t k = 0; k < n; k++) {
        const struct replay_sampled_site *p = &s->sites[idx[k]];
        struct pes_rnode *row = pes_r_object(r, sites, NULL);
        if (p->site == UINT32_MAX) pes_r_null(r, row, "site");
        else pes_r_u64(r, row, "site", p->site);
        char label[128];
        report_site_label(label, sizeof label, a->si->site(a->si->site_ctx, p->site), p->site);
        pes_r_str(r, row, "label", label);
        publish_counts(r, row, p, NULL);
    }
    publish_groups(a, r, o);
    replay_c2c_publish(a->c2c, r, o, a->si, a->top);
}

static void destroy(void *self) {
    struct sampled *a = self;
    replay_sampled_abandon(a->b);
    replay_sampled_free(&a->s);
    replay_c2c_destroy(a->c2c);
    free(a->obj);
    free(a->held);
    free(a);
}

const struct pes_analysis pes_analysis_sampled = {
    .name = "sampled",
    .help = "event counts, reuse histograms, communication and sites of a sampled trace",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
