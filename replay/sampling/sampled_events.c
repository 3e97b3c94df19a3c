/*
 * sampled_events.c — the sampled analyses, event by event (accuracy.h): time-distance
 * histograms of reuses (intra-thread and shared cache; temporal and line), the
 * intra-thread histogram converted to stack distances (time_to_stack.h),
 * invalidation counts, ComDetective communication matrices with its volume
 * scaling, and per-site counts.
 *
 * Event conventions (collector/src/modes/reuse.c, comm.c):
 *  REUSE / INVALIDATION: thread = the sampling thread (owner of the use),
 *    other_thread = the thread whose access trapped, site = the use's site,
 *    distance = time distance (accesses strictly between); SHARED_CACHE flag in
 *    reuse-shared mode; SPATIAL when the collector watched whole lines.
 *    The collector's distance is the difference of the two accesses' positions
 *    in the thread's (or socket's) access count (reuse.c: now - count), one
 *    more than the accesses strictly between, which is rt_truth's and this
 *    file's convention: distances are decremented on input.
 *    aux > 0 = the number of samples offered to the decided watch's reservoir
 *    slot (ReuseTracker Alg. 2): with reservoir sampling a watch that fires
 *    stands for that many sampled uses, so its outcome is weighted by aux (RDX
 *    scales the same way); aux = 0 means weight 1. Without the weights long
 *    reuses are under-represented (their watches are replaced more often).
 *  COMM: thread = detecting thread, other_thread = publisher; aux 0 = found at
 *    a sample (volume += period), aux 1 = a watchpoint trap (volume += period
 *    x L / (D x M), Dissertation §5.3.2).
 *  WATCH_EXPIRED: a watch that ended undecided (replaced by a later sample,
 *    other_thread = the replacing thread, or its owner ended, UINT32_MAX):
 *    thread = owner, distance = accesses it survived, so the reuse's
 *    distance is > that (a right-censored observation); flags as REUSE.
 *    INVALIDATION's distance, when non-zero, is the owner's accesses from
 *    the use to the invalidation (reuse mode, newer collectors).
 *  TOTALS: the thread's final load and store counts.
 *  PERIOD (--samples, header samples_target): the thread's periods from the
 *    event's time on (aux load, distance store). Every observation is then
 *    weighted by the period its sample was taken at, relative to the
 *    header's period (the cap): a sample at period p stands for p accesses
 *    (Horvitz–Thompson). The collector ends a thread's watches before it
 *    changes the period, so an outcome of thread T at time t belongs to T's
 *    last PERIOD event at or before t (docs/accuracy.md, "Enough samples by
 *    design"). The events are kept until the end, where every PERIOD event
 *    is known, and then weighted; traces without samples_target are
 *    weighted 1 as they come, exactly as before.
 *
 * Two estimators (accuracy.h): DECIDED adds the decided outcomes, weighted
 * by aux, as they come; CENSORED keeps every outcome (decided or censored)
 * per owner thread and histogram and turns them into masses with
 * Kaplan–Meier (survival.h) at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"

#define MAX_DENSE_SITE (1u << 22)

struct dist_list {
    uint64_t *d;
    double *w;
    uint64_t *pos;   /* position of the use in its thread's access count */
    size_t n, cap;
};

/* watch outcomes of one owner thread and one histogram (censored estimator) */
struct obs_list {
    struct pes_surv_obs *o;
    uint64_t *d;   /* the exact distances (o[].time is a double) */
    uint64_t *pos; /* position of the use (reuses; 0 for other outcomes) */
    size_t n, cap;
};

/* histogram index of an outcome: scope * 2 + line granularity */
#define N_HIST 4

struct replay_sampled_builder {
    const char *path;                 /* for messages */
    /* --samples traces: PERIOD events per thread, the other events until the end */
    struct pes_event *held;
    uint64_t *held_off;
    size_t n_held, cap_held;
    struct replay_sampled *s;
    int estimator;                    /* asked for (REPLAY_EST_AUTO: decide at the end) */
    int stack_model;                  /* REPLAY_STACK_* */
    int interval_bias;                /* intervals widened by the calibrated model error */
    int comm_estimator;               /* asked for (REPLAY_COMM_DEFAULT: interleave) */
    struct pes_ilv_point *pts;        /* comm mode: every sample and TOTALS (interleave.h) */
    size_t n_pts, cap_pts;
    struct obs_list *obs;             /* [thread * N_HIST + hist] */
    size_t n_obs;
    /* running sums for Kish's effective sizes (decided estimator) */
    double hist_w[N_HIST], hist_w2[N_HIST], dec_w[2], dec_w2[2], comm_w, comm_w2;
    struct dist_list *intra;          /* per thread: intra temporal time distances */
    uint32_t n_intra;
    /* per site: rows in first-event order, found through a 4-byte index by id,
     * so a high id costs index entries, not rows; events without a site
     * (PEBS/IBS in uninstrumented code, common) and ids from MAX_DENSE_SITE on
     * share one row outside the index, which would otherwise grow to
     * MAX_DENSE_SITE entries */
    uint32_t *site_row;               /* [site_n] row + 1, 0 = none yet */
    size_t site_n;
    uint32_t pooled_row;              /* row + 1 of the shared row, 0 = none yet */
    struct replay_sampled_site *rows;
    size_t n_rows, cap_rows;
};

static int oom(struct pes_error *err) {
    err->code = PES_ERR_NOMEM;
    err->offset = 0;
    snprintf(err->message, sizeof err->message, "out of memory");
    return -1;
}

/* The header's settings (what older collectors did for keys they did not
 * write: pes/settings.h's `absent` column). */
static void read_config(struct replay_sampled *s, const struct pes_collect_settings *set) {
    pes_setting_format(pes_settings_find("mode"), set, s->mode, sizeof s->mode);
    s->period_load = set->period_load;
    s->period_store = set->period_store;
    s->line = set->line_size;
    s->debug_registers = set->debug_registers;
    s->watch_bytes = set->watch_bytes;
    s->sockets = set->sockets;
    /* a full trace of the same run marks time every time_interval accesses */
    s->comm_resolution = (double)set->time_interval;
    /* collectors that write a heap block's events only when an event needs it say so */
    s->heap_on_use = set->heap_events == PES_HEAP_EVENTS_USED;
    s->samples_target = set->samples_target;
    s->spatial = set->spatial;
    s->roi = set->roi_state == PES_ROI_MARKERS;
    s->censoring = set->censoring == PES_CENSORING_WATCH_EXPIRED;
    /* a trap watches D x M of L bytes: scale by L / (D x M) when that is < L */
    double covered = (double)s->debug_registers * s->watch_bytes;
    s->trap_scale = covered > 0 && covered < s->line ? (double)s->line / covered : 1.0;
}

static struct replay_sampled_site *site_of(struct replay_sampled_builder *c, uint32_t site, struct pes_error *err) {
    uint32_t *slot = &c->pooled_row;
    if (site < MAX_DENSE_SITE) {
        if (site >= c->site_n) {
            size_t n = c->site_n ? c->site_n : 256;
            while (n <= site) n *= 2;
            uint32_t *idx = realloc(c->site_row, n * sizeof *idx);
            if (!idx) {
                oom(err);
                return NULL;
            }
            memset(idx + c->site_n, 0, (n - c->site_n) * sizeof *idx);
            c->site_row = idx;
            c->site_n = n;
        }
        slot = &c->site_row[site];
    }
    if (*slot) return &c->rows[*slot - 1];
    if (c->n_rows == c->cap_rows) {
        size_t cap = c->cap_rows ? c->cap_rows * 2 : 64;
        struct replay_sampled_site *r = realloc(c->rows, cap * sizeof *r);
        if (!r) {
            oom(err);
            return NULL;
        }
        c->rows = r;
        c->cap_rows = cap;
    }
    struct replay_sampled_site *d = &c->rows[c->n_rows++];
    memset(d, 0, sizeof *d);
    d->site = site < MAX_DENSE_SITE ? site : UINT32_MAX;
    *slot = (uint32_t)c->n_rows;
    return d;
}

static int push_dist(struct dist_list *l, uint64_t d, double w, uint64_t pos) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        uint64_t *p = realloc(l->d, cap * sizeof *p);
        if (!p) return -1;
        l->d = p;
        double *q = realloc(l->w, cap * sizeof *q);
        if (!q) return -1;
        l->w = q;
        uint64_t *r = realloc(l->pos, cap * sizeof *r);
        if (!r) return -1;
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
static int push_obs(struct obs_list *l, uint64_t d, double time, int kind, double weight, uint64_t pos) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct pes_surv_obs *p = realloc(l->o, cap * sizeof *p);
        if (!p) return -1;
        l->o = p;
        uint64_t *q = realloc(l->d, cap * sizeof *q);
        if (!q) return -1;
        l->d = q;
        uint64_t *r = realloc(l->pos, cap * sizeof *r);
        if (!r) return -1;
        l->pos = r;
        l->cap = cap;
    }
    l->pos[l->n] = pos;
    l->d[l->n] = d;
    l->o[l->n++] = (struct pes_surv_obs){time, weight, kind};
    return 0;
}

/* The bytes [off, off + size) of a line as 64 bits (bit i: byte i of a
 * 64-byte line; other line sizes scaled to 64 parts), the access clipped to
 * its line. */
static uint64_t line_bytes(uint64_t off, uint32_t size, uint64_t line) {
    uint64_t end = off + (size ? size : 1);
    if (end > line) end = line;
    uint64_t lo = off * 64 / line, hi = (end * 64 + line - 1) / line;
    return hi - lo >= 64 ? UINT64_MAX : ((UINT64_C(1) << (hi - lo)) - 1) << lo;
}

/* Comm mode: a point of the thread's timeline for the interleave estimator. */
static int push_point(struct replay_sampled_builder *c, const struct pes_event *e, int has_line) {
    if (strcmp(c->s->mode, "comm") != 0) return 0;
    if (c->n_pts == c->cap_pts) {
        size_t cap = c->cap_pts ? c->cap_pts * 2 : 1024;
        struct pes_ilv_point *p = realloc(c->pts, cap * sizeof *p);
        if (!p) return -1;
        c->pts = p;
        c->cap_pts = cap;
    }
    uint64_t line = c->s->line ? c->s->line : 64;
    c->pts[c->n_pts++] = (struct pes_ilv_point){
        .time = e->time, .count = e->loads + e->stores, .line = e->addr & ~(line - 1), .thread = e->thread,
        .has_line = (uint8_t)has_line, .write = (e->flags & PES_EVF_WRITE) != 0,
        .bytes = line_bytes(e->addr & (line - 1), e->size, line), .weight = 1};
    return 0;
}

static int bad_thread(struct pes_error *err, const char *path, uint64_t off, uint32_t t, uint32_t n) {
    err->code = PES_ERR_FORMAT;
    err->offset = off;
    snprintf(err->message, sizeof err->message,
             "%s: offset %llu: event of thread %u, but the trace announces %u threads", path,
             (unsigned long long)off, t, n);
    return -1;
}

/* The period of `thread` at `time` for the sampled access's type (write:
 * store period): its last PERIOD event at or before `time` (the first one
 * before any); without PERIOD events (lost with a full buffer) the
 * schedule's first level, where every --samples thread starts. */
static double period_at(const struct replay_sampled *s, uint32_t thread, uint64_t time, int write) {
    const struct replay_period_epochs *l = s->epochs && thread < s->n_threads ? &s->epochs[thread] : NULL;
    if (!l || !l->n) {
        double cap_l = (double)s->period_load, cap_s = (double)s->period_store;
        if (thread < s->n_threads) {
            cap_l = (double)s->thread[thread].period_first_load;
            cap_s = (double)s->thread[thread].period_first_store;
        }
        double p = write ? cap_s : cap_l;
        return p > 0 ? p : (cap_s > 0 ? cap_s : cap_l);
    }
    size_t lo = 0, hi = l->n;   /* first epoch with time > `time` */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->e[mid].time <= time) lo = mid + 1;
        else hi = mid;
    }
    const struct replay_period_epoch *ep = &l->e[lo ? lo - 1 : 0];
    double p = (double)(write ? ep->store : ep->load);
    return p > 0 ? p : (double)(ep->store ? ep->store : ep->load);
}

/* An observation's Horvitz–Thompson factor: its sample's period over the
 * header's period of the same type (1 for traces without --samples). */
double replay_sampled_period_factor(const struct replay_sampled *s, uint32_t thread, uint64_t time, int write) {
    if (!s->samples_target) return 1.0;
    double cap = (double)(write ? s->period_store : s->period_load);
    if (cap <= 0) cap = (double)(s->period_store ? s->period_store : s->period_load);
    double p = period_at(s, thread, time, write);
    return cap > 0 && p > 0 ? p / cap : 1.0;
}

double replay_sampled_event_factor(const struct replay_sampled *s, const struct pes_event *e) {
    return replay_sampled_period_factor(s, e->thread, e->time, (e->flags & PES_EVF_WRITE) != 0);
}

static int on_event(struct replay_sampled_builder *c, const struct pes_event *e, uint64_t off,
                    struct pes_error *err) {
    const char *path = c->path;
    struct replay_sampled *s = c->s;
    if (e->thread >= s->n_threads) return bad_thread(err, path, off, e->thread, s->n_threads);
    struct replay_sampled_thread *t = &s->thread[e->thread];
    int scope = (e->flags & PES_EVF_SHARED_CACHE) ? 1 : 0;
    struct replay_sampled_site *site = NULL;
    if (e->kind == PES_EV_SAMPLE || e->kind == PES_EV_REUSE || e->kind == PES_EV_INVALIDATION ||
        e->kind == PES_EV_COMM) {
        if (!(site = site_of(c, e->site, err))) return -1;
    }
    /* a thread's counters so far, from its own samples (trap events carry the
     * TRAPPING thread's counters); TOTALS, if present, replaces them */
    if (e->kind == PES_EV_SAMPLE && e->loads + e->stores > t->loads + t->stores) {
        t->loads = e->loads;
        t->stores = e->stores;
    }
    switch (e->kind) {
    case PES_EV_SAMPLE:
        s->samples++;
        t->samples++;
        site->samples++;
        if (push_point(c, e, 1) < 0) return oom(err);
        break;
    case PES_EV_REUSE: {
        uint64_t d = e->distance ? e->distance - 1 : 0;
        /* where the use lies in its thread's accesses (the phased stack
         * model): the trapping thread's count, less the distance; an
         * intra-thread reuse traps in its owner */
        uint64_t now = e->loads + e->stores, dist = e->distance ? e->distance : 1;
        uint64_t pos = now > dist ? now - dist : 0;
        double f = replay_sampled_event_factor(s, e);
        double w = (e->aux ? (double)e->aux : 1.0) * f;
        s->weighted_events += e->aux > 1;
        s->reuses[scope]++;
        s->reuse_weight[scope] += w;
        s->reuse_weight_sq[scope] += w * w;
        t->reuses++;
        site->reuses++;
        int h = scope * 2 + ((e->flags & PES_EVF_SPATIAL) != 0);
        c->hist_w[h] += w;
        c->hist_w2[h] += w * w;
        c->dec_w[scope] += w;
        c->dec_w2[scope] += w * w;
        if (push_obs(&c->obs[(size_t)e->thread * N_HIST + h], d, (double)d, PES_SURV_REUSE, f, pos) < 0)
            return oom(err);
        if (e->flags & PES_EVF_SPATIAL) {
            t->spatial++;
            s->spatial_hist[scope][pes_rt_bin(d)] += w;
        } else {
            s->temporal[scope][pes_rt_bin(d)] += w;
            if (scope == 0 && push_dist(&c->intra[e->thread], d, w, pos) < 0) return oom(err);
        }
        break;
    }
    case PES_EV_INVALIDATION: {
        double f = replay_sampled_event_factor(s, e);
        double w = (e->aux ? (double)e->aux : 1.0) * f;
        s->weighted_events += e->aux > 1;
        s->inval_weight[scope] += w;
        c->dec_w[scope] += w;
        c->dec_w2[scope] += w * w;
        s->invalidations[scope]++;
        if (s->samples_target) s->inval_periods[scope] += period_at(s, e->thread, e->time, (e->flags & PES_EVF_WRITE) != 0);
        t->invalidations++;
        site->invalidations++;
        int h = scope * 2 + ((e->flags & PES_EVF_SPATIAL) != 0);
        uint64_t d = e->distance ? e->distance - 1 : 0;
        if (push_obs(&c->obs[(size_t)e->thread * N_HIST + h], d, (double)d, PES_SURV_INVALIDATION, f, 0) < 0)
            return oom(err);
        break;
    }
    case PES_EV_COMM: {
        uint32_t o = e->other_thread;
        if (o >= s->n_threads) return bad_thread(err, path, off, o, s->n_threads);
        double period = (double)((e->flags & PES_EVF_WRITE) ? s->period_store : s->period_load);
        if (period <= 0) period = (double)(s->period_store ? s->period_store : s->period_load);
        /* --samples: the period in effect, of the sampling thread (a detection
         * at a sample: this thread; at a trap: the publisher that armed it) */
        if (s->samples_target)
            period = period_at(s, e->aux == 1 ? o : e->thread, e->time, (e->flags & PES_EVF_WRITE) != 0);
        double v = period * (e->aux == 1 ? s->trap_scale : 1.0);
        c->comm_w += v;
        c->comm_w2 += v * v;
        int is_false = (e->flags & PES_EVF_FALSE_SHARING) != 0;
        double *m = is_false ? s->comm_false : s->comm_true;
        if (o != e->thread) {   /* ComDetective's matrix is symmetric, zero diagonal */
            m[(size_t)e->thread * s->n_threads + o] += v;
            m[(size_t)o * s->n_threads + e->thread] += v;
        }
        s->comm_events++;
        t->comm++;
        if (is_false) {
            s->comm_false_events++;
            site->comm_false++;
        } else {
            s->comm_true_events++;
            site->comm_true++;
        }
        break;
    }
    case PES_EV_LOST:
        s->lost += e->aux;
        t->lost += e->aux;
        break;
    case PES_EV_THROTTLE: s->throttled += e->aux; break;
    case PES_EV_DROPPED: s->dropped += e->aux; break;
    case PES_EV_WATCH_EXPIRED: {
        s->expired++;
        s->censored[scope]++;
        /* survived `distance` accesses: the reuse's distance is > that, i.e.
         * more than distance - 1 accesses lie strictly between */
        int h = scope * 2 + ((e->flags & PES_EVF_SPATIAL) != 0);
        double f = replay_sampled_event_factor(s, e);
        if (push_obs(&c->obs[(size_t)e->thread * N_HIST + h], e->distance, (double)e->distance - 1,
                     PES_SURV_CENSORED, f, 0) < 0)
            return oom(err);
        break;
    }
    case PES_EV_TOTALS:
        t->loads = e->loads;
        t->stores = e->stores;
        if (push_point(c, e, 0) < 0) return oom(err);
        break;
    default: break;
    }
    return 0;
}

int replay_reuse_estimator_parse(const char *name) {
    if (!name || strcmp(name, "auto") == 0) return REPLAY_EST_AUTO;
    if (strcmp(name, "decided") == 0) return REPLAY_EST_DECIDED;
    if (strcmp(name, "censored") == 0) return REPLAY_EST_CENSORED;
    return -1;
}

const char *replay_reuse_estimator_name(int estimator) {
    return estimator == REPLAY_EST_CENSORED ? "censored" : "decided";
}

int replay_stack_model_parse(const char *name) {
    if (!name || strcmp(name, "phased") == 0) return REPLAY_STACK_PHASED;
    if (strcmp(name, "shen") == 0) return REPLAY_STACK_SHEN;
    return -1;
}

const char *replay_stack_model_name(int model) { return model == REPLAY_STACK_SHEN ? "shen" : "phased"; }

void replay_sampled_set_interval_bias(struct replay_sampled_builder *c, int calibrated) {
    c->interval_bias = calibrated != 0;
}

void replay_sampled_set_stack_model(struct replay_sampled_builder *c, int model) {
    c->stack_model = model < 0 ? REPLAY_STACK_PHASED : model;
}

void replay_sampled_set_estimator(struct replay_sampled_builder *c, int estimator) {
    c->estimator = estimator < 0 ? REPLAY_EST_AUTO : estimator;
}

int replay_comm_estimator_parse(const char *name) {
    if (!name) return REPLAY_COMM_DEFAULT;
    if (strcmp(name, "comdetective") == 0) return REPLAY_COMM_COMDETECTIVE;
    if (strcmp(name, "interleave") == 0) return REPLAY_COMM_INTERLEAVE;
    return -1;
}

const char *replay_comm_estimator_name(int estimator) {
    return estimator == REPLAY_COMM_COMDETECTIVE ? "comdetective" : "interleave";
}

void replay_sampled_set_comm_estimator(struct replay_sampled_builder *c, int estimator) {
    c->comm_estimator = estimator < 0 ? REPLAY_COMM_DEFAULT : estimator;
}

void replay_sampled_set_comm_resolution(struct replay_sampled_builder *c, double accesses) {
    if (accesses > 0) c->s->comm_resolution = accesses;
}

/* The interleave estimator replaces ComDetective's scaled matrices (comm mode only). */
static int interleave_estimate(struct replay_sampled_builder *c, struct pes_error *err) {
    struct replay_sampled *s = c->s;
    struct pes_ilv_params par = {.n_threads = s->n_threads, .resolution = s->comm_resolution, .gap_factor = 2.0};
    if (s->samples_target)   /* --samples: a line's share of a thread counts each sample at its period */
        for (size_t i = 0; i < c->n_pts; i++)
            if (c->pts[i].has_line)
                c->pts[i].weight = replay_sampled_period_factor(s, c->pts[i].thread, c->pts[i].time, c->pts[i].write);
    if (pes_ilv_estimate(c->pts, c->n_pts, &par, s->comm_true, s->comm_false, &s->ilv) < 0) return oom(err);
    /* the shares' intervals: the samples on shared lines are what the
     * estimate's split between pairs and true / false rests on */
    s->comm_neff = s->ilv.shared_neff;
    return 0;
}

/* A comm-mode estimate of 0 is not "no communication": a pattern that
 * touches fewer than 3 of the n sampled accesses goes unseen with 90 %
 * probability or more (rule of three: (1 - 3/n)^n < e^-3 < 0.05), and each of
 * its transfers needs an access, so up to 3 · A / n transfers can hide.
 * Returns that limit when the estimate is 0, else 0. */
static double detection_limit(const struct replay_sampled *s) {
    double volume = 0, accesses = 0;
    for (size_t i = 0; i < (size_t)s->n_threads * s->n_threads; i++) volume += s->comm_true[i] + s->comm_false[i];
    for (uint32_t t = 0; t < s->n_threads; t++) accesses += (double)(s->thread[t].loads + s->thread[t].stores);
    return volume > 0 || s->samples == 0 ? 0 : 3.0 * accesses / (double)s->samples;
}

struct obs_pair {
    struct pes_surv_obs o;
    uint64_t d, pos;
};

static int by_outcome(const void *pa, const void *pb) {
    const struct obs_pair *a = pa, *b = pb;
    if (a->o.time != b->o.time) return a->o.time < b->o.time ? -1 : 1;
    if (a->o.kind != b->o.kind) return a->o.kind - b->o.kind;
    if (a->d != b->d) return (a->d > b->d) - (a->d < b->d);
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static int sort_obs(struct obs_list *l) {
    struct obs_pair *p = malloc(l->n * sizeof *p);
    if (!p) return -1;
    for (size_t i = 0; i < l->n; i++) p[i] = (struct obs_pair){l->o[i], l->d[i], l->pos[i]};
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
static int censored_estimate(struct replay_sampled_builder *c, struct pes_error *err) {
    struct replay_sampled *s = c->s;
    memset(s->temporal, 0, sizeof s->temporal);
    memset(s->spatial_hist, 0, sizeof s->spatial_hist);
    memset(s->reuse_weight, 0, sizeof s->reuse_weight);
    memset(s->reuse_weight_sq, 0, sizeof s->reuse_weight_sq);
    memset(s->inval_weight, 0, sizeof s->inval_weight);
    memset(c->hist_w, 0, sizeof c->hist_w);
    memset(c->hist_w2, 0, sizeof c->hist_w2);
    memset(c->dec_w, 0, sizeof c->dec_w);
    memset(c->dec_w2, 0, sizeof c->dec_w2);
    for (uint32_t i = 0; i < c->n_intra; i++) c->intra[i].n = 0;
    /* where the open last bin begins: a thread's beyond-mass lies past its
     * own longest observation, so the histogram's lies past the shortest of
     * those among threads that have such mass (else past the longest) */
    uint64_t open_from[N_HIST], longest[N_HIST] = {0};
    for (int h = 0; h < N_HIST; h++) open_from[h] = UINT64_MAX;
    for (uint32_t t = 0; t < s->n_threads; t++)
        for (int h = 0; h < N_HIST; h++) {
            struct obs_list *l = &c->obs[(size_t)t * N_HIST + h];
            if (!l->n) continue;
            /* one order whatever order the blocks came in, so that the sums
             * below (and the report) do not depend on it */
            if (sort_obs(l) < 0) return oom(err);
            double *mass = malloc(l->n * sizeof *mass);
            struct pes_surv_result r;
            if (!mass || pes_surv_km(l->o, l->n, mass, &r) < 0) {
                free(mass);
                return oom(err);
            }
            int scope = h / 2, line = h % 2;
            for (size_t i = 0; i < l->n; i++) {
                double m = mass[i] * r.total;
                if (l->o[i].kind == PES_SURV_CENSORED || m <= 0) continue;
                c->dec_w[scope] += m;
                c->dec_w2[scope] += m * m;
                if (l->o[i].kind == PES_SURV_INVALIDATION) {
                    s->inval_weight[scope] += m;
                    continue;
                }
                uint64_t d = l->d[i];
                s->reuse_weight[scope] += m;
                s->reuse_weight_sq[scope] += m * m;
                c->hist_w[h] += m;
                c->hist_w2[h] += m * m;
                (line ? s->spatial_hist : s->temporal)[scope][pes_rt_bin(d)] += m;
                if (h == 0 && push_dist(&c->intra[t], d, m, l->pos[i]) < 0) {
                    free(mass);
                    return oom(err);
                }
            }
            s->beyond[scope][line] += r.residual * r.total;
            /* past the longest observation: a decided one at d ends at d + 1,
             * a censored one that survived c at c */
            uint64_t end = 0;
            for (size_t i = 0; i < l->n; i++) {
                uint64_t e = l->o[i].kind == PES_SURV_CENSORED ? l->d[i] : l->d[i] + (l->d[i] < UINT64_MAX);
                if (e > end) end = e;
            }
            if (end > longest[h]) longest[h] = end;
            if (r.residual * r.total > 0 && end < open_from[h]) open_from[h] = end;
            free(mass);
        }
    for (int h = 0; h < N_HIST; h++)
        s->beyond_from[h / 2][h % 2] = open_from[h] != UINT64_MAX ? open_from[h] : longest[h];
    return 0;
}

/* Per-thread conversion (Shen's or the phased model) with the thread's own
 * N-hat (Kac); the phased model places each reuse by its use's position. */
static int convert(struct replay_sampled_builder *c, struct pes_error *err) {
    struct replay_sampled *s = c->s;
    for (uint32_t i = 0; i < s->n_threads; i++) {
        struct dist_list *l = &c->intra[i];
        if (!l->n) continue;
        struct replay_sampled_thread *t = &s->thread[i];
        double n_hat = pes_t2s_estimate_distinct_kac(l->d, l->w, l->n), wsum = 0;
        for (size_t k = 0; k < l->n; k++) wsum += l->w[k];
        t->n_distinct = n_hat;
        double accesses = (double)(t->loads + t->stores);
        struct pes_t2s_input in = {
            .distance = l->d, .weight = l->w, .n = l->n, .n_distinct = n_hat,
            .never = pes_t2s_never_weight(n_hat, accesses, wsum),
        };
        struct pes_t2s_hist h = {{0}};
        if (c->stack_model == REPLAY_STACK_PHASED) {
            struct pes_t2s_phased_input pin = {
                .distance = l->d, .weight = l->w, .position = l->pos, .n = l->n,
                .never = in.never, .n_distinct = n_hat, .window_min = 0,
            };
            if (pes_t2s_convert_phased(&pin, &h, err) < 0) return -1;
        } else {
            struct pes_t2s *conv = pes_t2s_create(&in, err);
            if (!conv) return -1;
            int rc = pes_t2s_convert(conv, &h, err);
            pes_t2s_destroy(conv);
            if (rc < 0) return -1;
        }
        for (size_t b = 0; b < PES_RT_BINS; b++) s->stack[b] += h.bin[b];
    }
    return 0;
}

struct replay_sampled_builder *replay_sampled_begin(const char *path, const struct pes_trace_info *header,
                                                    const struct pes_collect_settings *settings, uint32_t n_threads,
                                                    struct pes_error *err) {
    struct replay_sampled_builder *c = calloc(1, sizeof *c);
    struct replay_sampled *s = c ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        free(c);
        oom(err);
        return NULL;
    }
    c->path = path;
    c->s = s;
    c->interval_bias = 1;
    read_config(s, settings);
    replay_execution_of(&s->exec, header);
    s->n_threads = n_threads;
    size_t n = n_threads ? n_threads : 1;
    s->thread = calloc(n, sizeof *s->thread);
    s->comm_true = calloc(n * n, sizeof *s->comm_true);
    s->comm_false = calloc(n * n, sizeof *s->comm_false);
    c->intra = calloc(n, sizeof *c->intra);
    c->n_intra = c->intra ? n_threads : 0;
    c->obs = calloc(n * N_HIST, sizeof *c->obs);
    c->n_obs = c->obs ? n * N_HIST : 0;
    /* a thread without PERIOD events ran at the header's period, or with
     * --samples at the schedule's first level (cap >> period_levels), having
     * taken no sample */
    uint64_t shift = s->samples_target ? settings->period_levels : 0;
    uint64_t p0_load = shift >= 64 ? 0 : s->period_load >> shift, p0_store = shift >= 64 ? 0 : s->period_store >> shift;
    if (s->period_load && !p0_load) p0_load = 1;
    if (s->period_store && !p0_store) p0_store = 1;
    for (uint32_t t = 0; s->thread && t < n_threads; t++) {
        s->thread[t].period_first_load = s->thread[t].period_last_load = p0_load;
        s->thread[t].period_first_store = s->thread[t].period_last_store = p0_store;
    }
    if (s->samples_target && !(s->epochs = calloc(n, sizeof *s->epochs))) {
        replay_sampled_abandon(c);
        oom(err);
        return NULL;
    }
    if (!s->thread || !s->comm_true || !s->comm_false || !c->intra || !c->obs) {
        replay_sampled_abandon(c);
        oom(err);
        return NULL;
    }
    return c;
}

static int on_period(struct replay_sampled_builder *c, const struct pes_event *e, uint64_t off,
                     struct pes_error *err) {
    struct replay_sampled *s = c->s;
    if (e->thread >= s->n_threads) return bad_thread(err, c->path, off, e->thread, s->n_threads);
    struct replay_period_epochs *l = &s->epochs[e->thread];
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct replay_period_epoch *p = realloc(l->e, cap * sizeof *p);
        if (!p) return oom(err);
        l->e = p;
        l->cap = cap;
    }
    l->e[l->n++] = (struct replay_period_epoch){e->time, e->aux, e->distance};
    return 0;
}

int replay_sampled_events(struct replay_sampled_builder *c, const struct pes_event *e, size_t n, uint64_t offset,
                          struct pes_error *err) {
    c->s->events += n;
    for (size_t i = 0; i < n; i++) {
        c->s->heap_events += e[i].kind == PES_EV_ALLOC || e[i].kind == PES_EV_FREE;
        if (e[i].kind == PES_EV_PERIOD) {
            if (c->s->epochs && on_period(c, &e[i], offset, err) < 0) return -1;
            continue;
        }
        if (!c->s->epochs) {
            if (on_event(c, &e[i], offset, err) < 0) return -1;
            continue;
        }
        /* --samples: weighted at the end, once every PERIOD event is known */
        if (c->n_held == c->cap_held) {
            size_t cap = c->cap_held ? c->cap_held * 2 : 1024;
            struct pes_event *p = realloc(c->held, cap * sizeof *p);
            if (!p) return oom(err);
            c->held = p;
            uint64_t *q = realloc(c->held_off, cap * sizeof *q);
            if (!q) return oom(err);
            c->held_off = q;
            c->cap_held = cap;
        }
        c->held[c->n_held] = e[i];
        c->held_off[c->n_held++] = offset;
    }
    return 0;
}

static int by_time(const void *pa, const void *pb) {
    const struct replay_period_epoch *a = pa, *b = pb;
    return (a->time > b->time) - (a->time < b->time);
}

/* --samples: order each thread's epochs, note its periods, then weigh the
 * held events in the order they came. */
static int replay_held(struct replay_sampled_builder *c, struct pes_error *err) {
    struct replay_sampled *s = c->s;
    for (uint32_t t = 0; t < s->n_threads; t++) {
        struct replay_period_epochs *l = &s->epochs[t];
        struct replay_sampled_thread *th = &s->thread[t];
        if (!l->n) continue;
        qsort(l->e, l->n, sizeof *l->e, by_time);
        th->period_first_load = l->e[0].load;
        th->period_first_store = l->e[0].store;
        th->period_last_load = l->e[l->n - 1].load;
        th->period_last_store = l->e[l->n - 1].store;
        th->period_changes = (uint32_t)(l->n - 1);
    }
    for (size_t i = 0; i < c->n_held; i++)
        if (on_event(c, &c->held[i], c->held_off[i], err) < 0) return -1;
    return 0;
}

static int has_events(const struct replay_sampled_site *d) {
    return d->samples || d->reuses || d->invalidations || d->comm_true || d->comm_false;
}

int replay_sampled_end(struct replay_sampled_builder *c, const struct pes_site *(*site)(const void *, uint32_t),
                       const void *site_ctx, struct replay_sampled *out, struct pes_error *err) {
    struct replay_sampled *s = c->s;
    int rc = -1;
    if (s->epochs && replay_held(c, err) < 0) goto out;
    s->estimator = c->estimator == REPLAY_EST_AUTO ? (s->censoring ? REPLAY_EST_CENSORED : REPLAY_EST_DECIDED)
                                                    : c->estimator;
    if (s->estimator == REPLAY_EST_CENSORED && censored_estimate(c, err) < 0) goto out;
    for (int h = 0; h < N_HIST; h++) s->hist_neff[h / 2][h % 2] = pes_surv_kish_sums(c->hist_w[h], c->hist_w2[h]);
    for (int sc = 0; sc < 2; sc++) s->decided_neff[sc] = pes_surv_kish_sums(c->dec_w[sc], c->dec_w2[sc]);
    s->comm_neff = pes_surv_kish_sums(c->comm_w, c->comm_w2);
    s->stack_model = c->stack_model;
    s->ci_calibrated = c->interval_bias;
    for (int f = 0; f < REPLAY_CI_FAMILIES; f++) s->ci_bias[f] = replay_interval_bias(c->interval_bias, f);
    s->comm_estimator = c->comm_estimator == REPLAY_COMM_DEFAULT ? REPLAY_COMM_INTERLEAVE : c->comm_estimator;
    if (s->comm_estimator == REPLAY_COMM_INTERLEAVE && strcmp(s->mode, "comm") == 0 &&
        interleave_estimate(c, err) < 0)
        goto out;
    if (strcmp(s->mode, "comm") == 0) s->comm_volume_limit = detection_limit(s);
    if (convert(c, err) < 0) goto out;
    for (size_t i = 0; i < c->n_rows; i++) s->n_sites += has_events(&c->rows[i]);
    s->sites = calloc(s->n_sites ? s->n_sites : 1, sizeof *s->sites);
    if (!s->sites) {
        oom(err);
        goto out;
    }
    s->n_sites = 0;
    for (size_t i = 0; i <= c->site_n; i++) {   /* by site id, as reported; the shared row last */
        uint32_t row = i < c->site_n ? c->site_row[i] : c->pooled_row;
        if (!row || !has_events(&c->rows[row - 1])) continue;
        struct replay_sampled_site *o = &s->sites[s->n_sites++];
        *o = c->rows[row - 1];
        o->line_key = replay_site_line_key(site(site_ctx, o->site), o->site);
    }
    *out = *s;
    memset(s, 0, sizeof *s);   /* out owns the arrays now */
    rc = 0;
out:
    replay_sampled_abandon(c);
    return rc;
}

void replay_sampled_abandon(struct replay_sampled_builder *c) {
    if (!c) return;
    for (uint32_t i = 0; i < c->n_intra; i++) {
        free(c->intra[i].d);
        free(c->intra[i].w);
        free(c->intra[i].pos);
    }
    free(c->intra);
    for (size_t i = 0; i < c->n_obs; i++) {
        free(c->obs[i].o);
        free(c->obs[i].d);
        free(c->obs[i].pos);
    }
    free(c->obs);
    free(c->held);
    free(c->held_off);
    free(c->site_row);
    free(c->rows);
    free(c->pts);
    replay_sampled_free(c->s);
    free(c->s);
    free(c);
}

void replay_sampled_free(struct replay_sampled *s) {
    for (uint32_t t = 0; s->epochs && t < s->n_threads; t++) free(s->epochs[t].e);
    free(s->epochs);
    s->epochs = NULL;
    free(s->thread);
    free(s->comm_true);
    free(s->comm_false);
    free(s->sites);
    s->thread = NULL;
    s->comm_true = s->comm_false = NULL;
    s->sites = NULL;
    s->n_sites = 0;
}

uint64_t replay_site_line_key(const struct pes_site *site, uint32_t id) {
    if (!site || !site->line || !site->file || !*site->file) return 1ull << 63 | id;
    uint64_t h = 1469598103934665603ull;   /* FNV-1a over file, then line */
    for (const char *p = site->file; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ site->line) * 1099511628211ull;
    return h & ~(1ull << 63);
}
