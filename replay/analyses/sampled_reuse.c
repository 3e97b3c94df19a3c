/*
 * sampled_reuse.c — a sampled trace's reuse watches: time-distance
 * histograms of the reuses (intra-thread and shared cache; temporal and
 * line), the invalidations, the intra-thread histogram converted to stack
 * distances (time_to_stack.h), with Kish's effective sizes and the stated
 * 90 % intervals. Publishes the report's reuse part ("reuse_estimator" to
 * "stack_histogram"; docs/accuracy.md).
 *
 * Event conventions (collector/src/modes/reuse.c):
 *  REUSE / INVALIDATION: thread = the sampling thread (owner of the use),
 *    other_thread = the thread whose access trapped, site = the use's site,
 *    distance = time distance; SHARED_CACHE flag in reuse-shared mode;
 *    SPATIAL when the collector watched whole lines. The collector's
 *    distance is the difference of the two accesses' positions in the
 *    thread's (or socket's) access count (reuse.c: now - count), one more
 *    than the accesses strictly between, which is rt_truth's and this
 *    file's convention: distances are decremented on input.
 *    aux > 0 = the number of samples offered to the decided watch's reservoir
 *    slot (ReuseTracker Alg. 2): with reservoir sampling a watch that fires
 *    stands for that many sampled uses, so its outcome is weighted by aux (RDX
 *    scales the same way); aux = 0 means weight 1. Without the weights long
 *    reuses are under-represented (their watches are replaced more often).
 *    Every outcome is also weighted by its sample's period (pes_weight_of:
 *    1 at a fixed period; --samples traces, docs/accuracy.md "Enough
 *    samples by design").
 *  WATCH_EXPIRED: a watch that ended undecided (replaced by a later sample,
 *    other_thread = the replacing thread, or its owner ended, UINT32_MAX):
 *    thread = owner, distance = accesses it survived, so the reuse's
 *    distance is > that (a right-censored observation); flags as REUSE.
 *    INVALIDATION's distance, when non-zero, is the owner's accesses from
 *    the use to the invalidation (reuse mode, newer collectors).
 *
 * Two estimators (sampled.h): DECIDED adds the decided outcomes, weighted
 * by aux, as they come; CENSORED keeps every outcome (decided or censored)
 * per owner thread and histogram and turns them into masses with
 * Kaplan–Meier (survival.h) at the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "sampled_publish.h"
#include "sampled_results.h"
#include "weights.h"

struct dist_list {
    uint64_t *d;
    double *w;
    uint64_t *pos; /* position of the use in its thread's access count */
    size_t n, cap;
};

/* watch outcomes of one owner thread and one histogram (censored estimator) */
struct outcomes {
    struct pes_surv_obs *o;
    uint64_t *d;   /* the exact distances (o[].time is a double) */
    uint64_t *pos; /* position of the use (reuses; 0 for other outcomes) */
    size_t n, cap;
};

/* histogram index of an outcome: scope * 2 + line granularity */
#define N_HIST 4

struct reuse {
    const struct pes_stream_info *si;
    const void *counts; /* sampled_counts.c: the threads' accesses */
    struct replay_sampled_config cfg;
    struct replay_ci ci;
    uint32_t n_threads;
    int asked;               /* --reuse-estimator (REPLAY_EST_AUTO: decide at the end) */
    int stack_model;         /* REPLAY_STACK_* */
    struct outcomes *obs;    /* [thread * N_HIST + hist] */
    struct dist_list *intra; /* per thread: intra temporal time distances */
    /* running sums for Kish's effective sizes (decided estimator) */
    double hist_w[N_HIST], hist_w2[N_HIST], dec_w[2], dec_w2[2];
    /* the results (struct replay_sampled's fields of the same names) */
    uint64_t reuses[2], invalidations[2], censored[2], weighted_events;
    double inval_periods[2], reuse_weight[2], inval_weight[2], reuse_weight_sq[2];
    int estimator;
    double hist_neff[2][2], decided_neff[2];
    double beyond[2][2];
    uint64_t beyond_from[2][2];
    double temporal[2][PES_RT_BINS], spatial_hist[2][PES_RT_BINS], stack[PES_RT_BINS];
    double *n_distinct; /* per thread */
};

static int oom(struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
}

static int push_dist(struct dist_list *l, uint64_t d, double w, uint64_t pos)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        uint64_t *p = realloc(l->d, cap * sizeof *p);
        if (!p)
            return -1;
        l->d = p;
        double *q = realloc(l->w, cap * sizeof *q);
        if (!q)
            return -1;
        l->w = q;
        uint64_t *r = realloc(l->pos, cap * sizeof *r);
        if (!r)
            return -1;
        l->pos = r;
        l->cap = cap;
    }
    l->d[l->n] = d;
    l->pos[l->n] = pos;
    l->w[l->n++] = w;
    return 0;
}

/* One watch's outcome at distance d (accesses strictly between; censored:
 * the watch survived d + 1, pass d = survived - 1 as time, which may be -1). */
static int push_obs(struct outcomes *l, uint64_t d, double time, int kind, double weight,
                    uint64_t pos)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct pes_surv_obs *p = realloc(l->o, cap * sizeof *p);
        if (!p)
            return -1;
        l->o = p;
        uint64_t *q = realloc(l->d, cap * sizeof *q);
        if (!q)
            return -1;
        l->d = q;
        uint64_t *r = realloc(l->pos, cap * sizeof *r);
        if (!r)
            return -1;
        l->pos = r;
        l->cap = cap;
    }
    l->pos[l->n] = pos;
    l->d[l->n] = d;
    l->o[l->n++] = (struct pes_surv_obs){time, weight, kind};
    return 0;
}

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED;
}

static void destroy(void *self)
{
    struct reuse *a = self;
    for (uint32_t i = 0; a->intra && i < a->n_threads; i++) {
        free(a->intra[i].d);
        free(a->intra[i].w);
        free(a->intra[i].pos);
    }
    free(a->intra);
    for (size_t i = 0; a->obs && i < (size_t)a->n_threads * N_HIST; i++) {
        free(a->obs[i].o);
        free(a->obs[i].d);
        free(a->obs[i].pos);
    }
    free(a->obs);
    free(a->n_distinct);
    free(a);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct reuse *a = calloc(1, sizeof *a);
    if (!a) {
        oom(err);
        return NULL;
    }
    a->si = si;
    a->n_threads = si->n_streams;
    replay_sampled_config_read(&a->cfg, si->header, si->settings);
    replay_ci_init(&a->ci, replay_interval_bias_parse(k->interval_bias));
    int est = replay_reuse_estimator_parse(k->reuse_estimator),
        model = replay_stack_model_parse(k->stack_model);
    a->asked = est < 0 ? REPLAY_EST_AUTO : est;
    a->stack_model = model < 0 ? REPLAY_STACK_PHASED : model;
    size_t n = a->n_threads ? a->n_threads : 1;
    a->intra = calloc(n, sizeof *a->intra);
    a->obs = calloc(n * N_HIST, sizeof *a->obs);
    a->n_distinct = calloc(n, sizeof *a->n_distinct);
    if (!a->intra || !a->obs || !a->n_distinct) {
        destroy(a);
        oom(err);
        return NULL;
    }
    return a;
}

static int find_siblings(void *self, const struct pes_siblings *s, struct pes_error *err)
{
    struct reuse *a = self;
    if (!(a->counts = pes_sibling(s, &pes_analysis_sampled_counts)))
        return pes_error_set(err, PES_ERR_ARG, 0, "sampled_reuse needs sampled_counts");
    return 0;
}

static int on_event(struct reuse *a, const struct pes_event *e, uint64_t off, struct pes_error *err)
{
    if (e->kind != PES_EV_REUSE && e->kind != PES_EV_INVALIDATION &&
        e->kind != PES_EV_WATCH_EXPIRED)
        return 0;
    if (e->thread >= a->n_threads)
        return replay_sampled_bad_thread(err, a->si->path, off, e->thread, a->n_threads);
    int scope = (e->flags & PES_EVF_SHARED_CACHE) ? 1 : 0;
    int h = scope * 2 + ((e->flags & PES_EVF_SPATIAL) != 0);
    struct outcomes *obs = &a->obs[(size_t)e->thread * N_HIST + h];
    double f = pes_weight_of(a->si, e);
    switch (e->kind) {
    case PES_EV_REUSE: {
        uint64_t d = e->distance ? e->distance - 1 : 0;
        /* where the use lies in its thread's accesses (the phased stack
         * model): the trapping thread's count, less the distance; an
         * intra-thread reuse traps in its owner */
        uint64_t now = e->loads + e->stores, dist = e->distance ? e->distance : 1;
        uint64_t pos = now > dist ? now - dist : 0;
        double w = (e->aux ? (double)e->aux : 1.0) * f;
        a->weighted_events += e->aux > 1;
        a->reuses[scope]++;
        a->reuse_weight[scope] += w;
        a->reuse_weight_sq[scope] += w * w;
        a->hist_w[h] += w;
        a->hist_w2[h] += w * w;
        a->dec_w[scope] += w;
        a->dec_w2[scope] += w * w;
        if (push_obs(obs, d, (double)d, PES_SURV_REUSE, f, pos) < 0)
            return oom(err);
        if (e->flags & PES_EVF_SPATIAL) {
            a->spatial_hist[scope][pes_rt_bin(d)] += w;
        } else {
            a->temporal[scope][pes_rt_bin(d)] += w;
            if (scope == 0 && push_dist(&a->intra[e->thread], d, w, pos) < 0)
                return oom(err);
        }
        break;
    }
    case PES_EV_INVALIDATION: {
        double w = (e->aux ? (double)e->aux : 1.0) * f;
        a->weighted_events += e->aux > 1;
        a->inval_weight[scope] += w;
        a->dec_w[scope] += w;
        a->dec_w2[scope] += w * w;
        a->invalidations[scope]++;
        /* --samples: each invalidation counts the period its sample was taken at */
        if (pes_weights_adaptive(a->si->weights))
            a->inval_periods[scope] += pes_period_of(a->si, e);
        uint64_t d = e->distance ? e->distance - 1 : 0;
        if (push_obs(obs, d, (double)d, PES_SURV_INVALIDATION, f, 0) < 0)
            return oom(err);
        break;
    }
    default: /* WATCH_EXPIRED */
        a->censored[scope]++;
        /* survived `distance` accesses: the reuse's distance is > that, i.e.
         * more than distance - 1 accesses lie strictly between */
        if (push_obs(obs, e->distance, (double)e->distance - 1, PES_SURV_CENSORED, f, 0) < 0)
            return oom(err);
        break;
    }
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct reuse *a = self;
    for (size_t i = 0; i < b->n_events; i++)
        if (on_event(a, &b->events[i], b->events_offset, err) < 0)
            return -1;
    return 0;
}

struct obs_pair {
    struct pes_surv_obs o;
    uint64_t d, pos;
};

static int by_outcome(const void *pa, const void *pb)
{
    const struct obs_pair *a = pa, *b = pb;
    if (a->o.time != b->o.time)
        return a->o.time < b->o.time ? -1 : 1;
    if (a->o.kind != b->o.kind)
        return a->o.kind - b->o.kind;
    if (a->d != b->d)
        return (a->d > b->d) - (a->d < b->d);
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static int sort_obs(struct outcomes *l)
{
    struct obs_pair *p = malloc(l->n * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = 0; i < l->n; i++)
        p[i] = (struct obs_pair){l->o[i], l->d[i], l->pos[i]};
    qsort(p, l->n, sizeof *p, by_outcome);
    for (size_t i = 0; i < l->n; i++) {
        l->o[i] = p[i].o;
        l->d[i] = p[i].d;
        l->pos[i] = p[i].pos;
    }
    free(p);
    return 0;
}

/* The censored estimator: per owner thread and histogram, Kaplan–Meier masses
 * of the outcomes (survival.h) times the thread's number of watches, so a
 * bin holds the reuses the thread's watches would have shown without
 * censoring (docs/accuracy.md). Replaces the decided histograms, weights and
 * the intra-thread distances the stack conversion reads. */
static int censored_estimate(struct reuse *a, struct pes_error *err)
{
    memset(a->temporal, 0, sizeof a->temporal);
    memset(a->spatial_hist, 0, sizeof a->spatial_hist);
    memset(a->reuse_weight, 0, sizeof a->reuse_weight);
    memset(a->reuse_weight_sq, 0, sizeof a->reuse_weight_sq);
    memset(a->inval_weight, 0, sizeof a->inval_weight);
    memset(a->hist_w, 0, sizeof a->hist_w);
    memset(a->hist_w2, 0, sizeof a->hist_w2);
    memset(a->dec_w, 0, sizeof a->dec_w);
    memset(a->dec_w2, 0, sizeof a->dec_w2);
    for (uint32_t i = 0; i < a->n_threads; i++)
        a->intra[i].n = 0;
    /* where the open last bin begins: a thread's beyond-mass lies past its
     * own longest observation, so the histogram's lies past the shortest of
     * those among threads that have such mass (else past the longest) */
    uint64_t open_from[N_HIST], longest[N_HIST] = {0};
    for (int h = 0; h < N_HIST; h++)
        open_from[h] = UINT64_MAX;
    for (uint32_t t = 0; t < a->n_threads; t++)
        for (int h = 0; h < N_HIST; h++) {
            struct outcomes *l = &a->obs[(size_t)t * N_HIST + h];
            if (!l->n)
                continue;
            /* one order whatever order the blocks came in, so that the sums
             * below (and the report) do not depend on it */
            if (sort_obs(l) < 0)
                return oom(err);
            double *mass = malloc(l->n * sizeof *mass);
            struct pes_surv_result r;
            if (!mass || pes_surv_km(l->o, l->n, mass, &r) < 0) {
                free(mass);
                return oom(err);
            }
            int scope = h / 2, line = h % 2;
            for (size_t i = 0; i < l->n; i++) {
                double m = mass[i] * r.total;
                if (l->o[i].kind == PES_SURV_CENSORED || m <= 0)
                    continue;
                a->dec_w[scope] += m;
                a->dec_w2[scope] += m * m;
                if (l->o[i].kind == PES_SURV_INVALIDATION) {
                    a->inval_weight[scope] += m;
                    continue;
                }
                uint64_t d = l->d[i];
                a->reuse_weight[scope] += m;
                a->reuse_weight_sq[scope] += m * m;
                a->hist_w[h] += m;
                a->hist_w2[h] += m * m;
                (line ? a->spatial_hist : a->temporal)[scope][pes_rt_bin(d)] += m;
                if (h == 0 && push_dist(&a->intra[t], d, m, l->pos[i]) < 0) {
                    free(mass);
                    return oom(err);
                }
            }
            a->beyond[scope][line] += r.residual * r.total;
            /* past the longest observation: a decided one at d ends at d + 1,
             * a censored one that survived c at c */
            uint64_t end = 0;
            for (size_t i = 0; i < l->n; i++) {
                uint64_t e =
                    l->o[i].kind == PES_SURV_CENSORED ? l->d[i] : l->d[i] + (l->d[i] < UINT64_MAX);
                if (e > end)
                    end = e;
            }
            if (end > longest[h])
                longest[h] = end;
            if (r.residual * r.total > 0 && end < open_from[h])
                open_from[h] = end;
            free(mass);
        }
    for (int h = 0; h < N_HIST; h++)
        a->beyond_from[h / 2][h % 2] = open_from[h] != UINT64_MAX ? open_from[h] : longest[h];
    return 0;
}

/* Per-thread conversion (Shen's or the phased model) with the thread's own
 * N-hat (Kac); the phased model places each reuse by its use's position. */
static int convert(struct reuse *a, struct pes_error *err)
{
    const struct replay_sampled_thread *threads = replay_sampled_counts_threads(a->counts);
    for (uint32_t i = 0; i < a->n_threads; i++) {
        struct dist_list *l = &a->intra[i];
        if (!l->n)
            continue;
        double n_hat = pes_t2s_estimate_distinct_kac(l->d, l->w, l->n), wsum = 0;
        for (size_t k = 0; k < l->n; k++)
            wsum += l->w[k];
        a->n_distinct[i] = n_hat;
        double accesses = (double)(threads[i].loads + threads[i].stores);
        struct pes_t2s_input in = {
            .distance = l->d,
            .weight = l->w,
            .n = l->n,
            .n_distinct = n_hat,
            .never = pes_t2s_never_weight(n_hat, accesses, wsum),
        };
        struct pes_t2s_hist h = {{0}};
        if (a->stack_model == REPLAY_STACK_PHASED) {
            struct pes_t2s_phased_input pin = {
                .distance = l->d,
                .weight = l->w,
                .position = l->pos,
                .n = l->n,
                .never = in.never,
                .n_distinct = n_hat,
                .window_min = 0,
            };
            if (pes_t2s_convert_phased(&pin, &h, err) < 0)
                return -1;
        } else {
            struct pes_t2s *conv = pes_t2s_create(&in, err);
            if (!conv)
                return -1;
            int rc = pes_t2s_convert(conv, &h, err);
            pes_t2s_destroy(conv);
            if (rc < 0)
                return -1;
        }
        for (size_t b = 0; b < PES_RT_BINS; b++)
            a->stack[b] += h.bin[b];
    }
    return 0;
}

static int finish(void *self, struct pes_error *err)
{
    struct reuse *a = self;
    a->estimator = a->asked == REPLAY_EST_AUTO
                       ? (a->cfg.censoring ? REPLAY_EST_CENSORED : REPLAY_EST_DECIDED)
                       : a->asked;
    if (a->estimator == REPLAY_EST_CENSORED && censored_estimate(a, err) < 0)
        return -1;
    for (int h = 0; h < N_HIST; h++)
        a->hist_neff[h / 2][h % 2] = pes_surv_kish_sums(a->hist_w[h], a->hist_w2[h]);
    for (int sc = 0; sc < 2; sc++)
        a->decided_neff[sc] = pes_surv_kish_sums(a->dec_w[sc], a->dec_w2[sc]);
    return convert(a, err);
}

double replay_sampled_reuse_n_distinct(const void *self, uint32_t thread)
{
    const struct reuse *a = self;
    return thread < a->n_threads ? a->n_distinct[thread] : 0;
}

void replay_sampled_reuse_export(const void *self, struct replay_sampled *s)
{
    const struct reuse *a = self;
    memcpy(s->reuses, a->reuses, sizeof s->reuses);
    memcpy(s->invalidations, a->invalidations, sizeof s->invalidations);
    memcpy(s->censored, a->censored, sizeof s->censored);
    s->weighted_events = a->weighted_events;
    memcpy(s->inval_periods, a->inval_periods, sizeof s->inval_periods);
    memcpy(s->reuse_weight, a->reuse_weight, sizeof s->reuse_weight);
    memcpy(s->inval_weight, a->inval_weight, sizeof s->inval_weight);
    memcpy(s->reuse_weight_sq, a->reuse_weight_sq, sizeof s->reuse_weight_sq);
    s->estimator = a->estimator;
    memcpy(s->hist_neff, a->hist_neff, sizeof s->hist_neff);
    memcpy(s->decided_neff, a->decided_neff, sizeof s->decided_neff);
    memcpy(s->beyond, a->beyond, sizeof s->beyond);
    memcpy(s->beyond_from, a->beyond_from, sizeof s->beyond_from);
    memcpy(s->temporal, a->temporal, sizeof s->temporal);
    memcpy(s->spatial_hist, a->spatial_hist, sizeof s->spatial_hist);
    memcpy(s->stack, a->stack, sizeof s->stack);
    s->stack_model = a->stack_model;
    for (uint32_t t = 0; t < a->n_threads && t < s->n_threads; t++)
        s->thread[t].n_distinct = a->n_distinct[t];
}

static void publish(void *self, const struct pes_publish *to)
{
    struct reuse *a = self;
    if (a->si->paired)
        return; /* --compare: the report is accuracy.c's */
    struct pes_report *r = to->r;
    struct pes_rnode *o = to->trace;
    int line = a->cfg.spatial ? 1 : 0;
    pes_r_str(r, o, "reuse_estimator", replay_reuse_estimator_name(a->estimator));
    pes_r_str(r, o, "stack_model", replay_stack_model_name(a->stack_model));
    pes_r_f64(r, o, "interval_level", 0.9, "%.6g");
    static const char *const scope[2] = {"intra", "shared"};
    double period = (double)(a->cfg.period_load ? a->cfg.period_load : a->cfg.period_store);
    for (int sc = 0; sc < 2; sc++) {
        struct pes_rnode *n = pes_r_object(r, o, scope[sc]);
        pes_r_u64(r, n, "reuses", a->reuses[sc]);
        pes_r_u64(r, n, "invalidations", a->invalidations[sc]);
        /* --samples: each invalidation counts the period its sample was taken at */
        double est =
            a->cfg.samples_target ? a->inval_periods[sc] : (double)a->invalidations[sc] * period;
        pes_r_flag(pes_r_f64(r, n, "estimated_invalidations", est, "%.0f"), PES_R_TEXT_ONLY);
        pes_r_u64(r, n, "censored", a->censored[sc]);
        double dec = a->inval_weight[sc] + a->reuse_weight[sc];
        double ratio = dec > 0 ? a->inval_weight[sc] / dec : NAN;
        pes_r_f64(r, n, "invalidation_ratio", ratio, "%.6g");
        replay_publish_ci(r, n, "invalidation_ratio_ci90", &a->ci, REPLAY_CI_INVAL_RATIO, ratio,
                          a->decided_neff[sc]);
        pes_r_f64(r, n, "effective_reuses", a->hist_neff[sc][line], "%.6g");
        replay_publish_rt_histogram_ci(r, n, "time_histogram", a->temporal[sc], &a->ci,
                                       REPLAY_CI_REUSE_BINS, a->hist_neff[sc][0]);
        replay_publish_rt_histogram_ci(r, n, "line_time_histogram", a->spatial_hist[sc], &a->ci,
                                       REPLAY_CI_REUSE_BINS, a->hist_neff[sc][1]);
        if (a->estimator == REPLAY_EST_CENSORED && a->beyond_from[sc][line]) {
            struct pes_rnode *b = pes_r_object(r, n, "beyond");
            pes_r_u64(r, b, "from", a->beyond_from[sc][line]);
            pes_r_f64(r, b, "count", a->beyond[sc][line], "%.6g");
        } else {
            pes_r_null(r, n, "beyond");
        }
    }
    /* the conversion's model error is not in this interval: sampling only */
    replay_publish_rt_histogram_ci(r, o, "stack_histogram", a->stack, &a->ci, REPLAY_CI_STACK_BINS,
                                   a->hist_neff[0][0]);
}

const struct pes_analysis pes_analysis_sampled_reuse = {
    .name = "sampled_reuse",
    .help = "reuse and invalidation histograms of a sampled trace, and their stack distances",
    .wanted = wanted,
    .create = create,
    .link = find_siblings,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
