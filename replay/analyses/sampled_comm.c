/*
 * sampled_comm.c — a sampled trace's communication (comm mode): the thread
 * × thread matrices of line transfers with true and false sharing, scaled
 * to volumes, their stated uncertainty, and a detection limit when nothing
 * was seen. Publishes the report's "comm" object (docs/accuracy.md).
 *
 * Event conventions (collector/src/modes/comm.c): COMM: thread =
 * detecting thread, other_thread = publisher; aux 0 = found at a sample
 * (volume += period), aux 1 = a watchpoint trap (volume += period x L / (D x
 * M), Dissertation §5.3.2); the period is the one in effect (weights.h) of
 * the thread that sampled: the detecting one at a sample, the publisher
 * that armed the watch at a trap.
 *
 * Two estimators (sampled.h): COMDETECTIVE, the scaled detections above;
 * INTERLEAVE (the default), the owner changes of the accesses' interleaving
 * rebuilt from every sample's time, counts and line and every TOTALS event
 * (interleave.h), which replaces the matrices in comm mode.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "sampled_publish.h"
#include "sampled_results.h"
#include "weights.h"

struct comm {
    const struct pes_stream_info *si;
    const void *counts; /* sampled_counts.c: samples and accesses, for the limit */
    struct replay_sampled_config cfg;
    struct replay_ci ci;
    uint32_t n_threads;
    int comm_mode;             /* the trace's mode is "comm": the interleave points are kept */
    int asked;                 /* --comm-estimator (REPLAY_COMM_DEFAULT: interleave) */
    struct pes_ilv_point *pts; /* comm mode: every sample and TOTALS (interleave.h) */
    size_t n_pts, cap_pts;
    double comm_w, comm_w2;           /* the events' scaled volumes, for Kish's size */
    uint64_t full_accesses, full_bbs; /* --compare: the full trace's records after the events */
    /* the results (struct replay_sampled's comm_* fields) */
    uint64_t events, true_events, false_events;
    double *true_m, *false_m; /* n_threads^2, symmetric, zero diagonal */
    double neff, resolution, volume_limit;
    int estimator;
    struct pes_ilv_stats ilv;
};

static int oom(struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
}

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED;
}

static void destroy(void *self)
{
    struct comm *a = self;
    free(a->pts);
    free(a->true_m);
    free(a->false_m);
    free(a);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct comm *a = calloc(1, sizeof *a);
    if (!a) {
        oom(err);
        return NULL;
    }
    a->si = si;
    a->n_threads = si->n_streams;
    replay_sampled_config_read(&a->cfg, si->header, si->settings);
    replay_ci_init(&a->ci, replay_interval_bias_parse(k->interval_bias));
    a->comm_mode = strcmp(a->cfg.mode, "comm") == 0;
    int est = replay_comm_estimator_parse(k->comm_estimator);
    a->asked = est < 0 ? REPLAY_COMM_DEFAULT : est;
    a->resolution = a->cfg.time_interval;
    size_t n = a->n_threads ? a->n_threads : 1;
    a->true_m = calloc(n * n, sizeof *a->true_m);
    a->false_m = calloc(n * n, sizeof *a->false_m);
    if (!a->true_m || !a->false_m) {
        destroy(a);
        oom(err);
        return NULL;
    }
    return a;
}

static int find_siblings(void *self, const struct pes_siblings *s, struct pes_error *err)
{
    struct comm *a = self;
    if (!(a->counts = pes_sibling(s, &pes_analysis_sampled_counts)))
        return pes_error_set(err, PES_ERR_ARG, 0, "sampled_comm needs sampled_counts");
    return 0;
}

/* The bytes [off, off + size) of a line as 64 bits (bit i: byte i of a
 * 64-byte line; other line sizes scaled to 64 parts), the access clipped to
 * its line. */
static uint64_t line_bytes(uint64_t off, uint32_t size, uint64_t line)
{
    uint64_t end = off + (size ? size : 1);
    if (end > line)
        end = line;
    uint64_t lo = off * 64 / line, hi = (end * 64 + line - 1) / line;
    return hi - lo >= 64 ? UINT64_MAX : ((UINT64_C(1) << (hi - lo)) - 1) << lo;
}

/* Comm mode: a point of the thread's timeline for the interleave estimator;
 * a sample's line share counts it at its period (pes_weight_of). */
static int push_point(struct comm *a, const struct pes_event *e, int has_line)
{
    if (!a->comm_mode)
        return 0;
    if (a->n_pts == a->cap_pts) {
        size_t cap = a->cap_pts ? a->cap_pts * 2 : 1024;
        struct pes_ilv_point *p = realloc(a->pts, cap * sizeof *p);
        if (!p)
            return -1;
        a->pts = p;
        a->cap_pts = cap;
    }
    uint64_t line = a->cfg.line ? a->cfg.line : 64;
    a->pts[a->n_pts++] =
        (struct pes_ilv_point){.time = e->time,
                               .count = e->loads + e->stores,
                               .line = e->addr & ~(line - 1),
                               .thread = e->thread,
                               .has_line = (uint8_t)has_line,
                               .write = (e->flags & PES_EVF_WRITE) != 0,
                               .bytes = line_bytes(e->addr & (line - 1), e->size, line),
                               .weight = has_line ? pes_weight_of(a->si, e) : 1};
    return 0;
}

static int on_comm(struct comm *a, const struct pes_event *e, uint64_t off, struct pes_error *err)
{
    uint32_t n = a->n_threads, o = e->other_thread;
    if (o >= n)
        return replay_sampled_bad_thread(err, a->si->path, off, o, n);
    int write = (e->flags & PES_EVF_WRITE) != 0;
    double period = (double)(write ? a->cfg.period_store : a->cfg.period_load);
    if (period <= 0)
        period = (double)(a->cfg.period_store ? a->cfg.period_store : a->cfg.period_load);
    /* --samples: the period in effect, of the sampling thread (a detection
     * at a sample: this thread; at a trap: the publisher that armed it) */
    if (pes_weights_adaptive(a->si->weights))
        period = pes_weights_period_at(a->si->weights, e->aux == 1 ? o : e->thread, e->time, write);
    double v = period * (e->aux == 1 ? a->cfg.trap_scale : 1.0);
    a->comm_w += v;
    a->comm_w2 += v * v;
    int is_false = (e->flags & PES_EVF_FALSE_SHARING) != 0;
    double *m = is_false ? a->false_m : a->true_m;
    if (o != e->thread) { /* ComDetective's matrix is symmetric, zero diagonal */
        m[(size_t)e->thread * n + o] += v;
        m[(size_t)o * n + e->thread] += v;
    }
    a->events++;
    if (is_false)
        a->false_events++;
    else
        a->true_events++;
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct comm *a = self;
    /* --compare: the full trace's accesses follow the events */
    a->full_accesses += b->n;
    a->full_bbs += b->n_bbs;
    for (size_t i = 0; i < b->n_events; i++) {
        const struct pes_event *e = &b->events[i];
        if (e->kind != PES_EV_SAMPLE && e->kind != PES_EV_TOTALS && e->kind != PES_EV_COMM)
            continue;
        if (e->thread >= a->n_threads)
            return replay_sampled_bad_thread(err, a->si->path, b->events_offset, e->thread,
                                             a->n_threads);
        if (e->kind == PES_EV_COMM) {
            if (on_comm(a, e, b->events_offset, err) < 0)
                return -1;
        } else if (push_point(a, e, e->kind == PES_EV_SAMPLE) < 0) {
            return oom(err);
        }
    }
    return 0;
}

/* A comm-mode estimate of 0 is not "no communication": a pattern that
 * touches fewer than 3 of the n sampled accesses goes unseen with 90 %
 * probability or more (rule of three: (1 - 3/n)^n < e^-3 < 0.05), and each of
 * its transfers needs an access, so up to 3 · A / n transfers can hide.
 * Returns that limit when the estimate is 0, else 0. */
static double detection_limit(const struct comm *a)
{
    const struct replay_sampled_thread *th = replay_sampled_counts_threads(a->counts);
    uint64_t samples = replay_sampled_counts_samples(a->counts);
    double volume = 0, accesses = 0;
    for (size_t i = 0; i < (size_t)a->n_threads * a->n_threads; i++)
        volume += a->true_m[i] + a->false_m[i];
    for (uint32_t t = 0; t < a->n_threads; t++)
        accesses += (double)(th[t].loads + th[t].stores);
    return volume > 0 || samples == 0 ? 0 : 3.0 * accesses / (double)samples;
}

static int finish(void *self, struct pes_error *err)
{
    struct comm *a = self;
    /* --compare: the interleave estimator emulates the full trace's merge: a
     * time mark every time_interval records, of which this share are
     * accesses (the rest are BB entries), so that many accesses per mark */
    if (a->si->paired && a->full_accesses) {
        double marks = (double)a->si->paired->settings->time_interval;
        double accesses =
            marks * (double)a->full_accesses / (double)(a->full_accesses + a->full_bbs);
        if (accesses > 0)
            a->resolution = accesses;
    }
    a->neff = pes_surv_kish_sums(a->comm_w, a->comm_w2);
    a->estimator = a->asked == REPLAY_COMM_DEFAULT ? REPLAY_COMM_INTERLEAVE : a->asked;
    if (a->estimator == REPLAY_COMM_INTERLEAVE && a->comm_mode) {
        /* the interleave estimator replaces ComDetective's scaled matrices */
        struct pes_ilv_params par = {
            .n_threads = a->n_threads, .resolution = a->resolution, .gap_factor = 2.0};
        if (pes_ilv_estimate(a->pts, a->n_pts, &par, a->true_m, a->false_m, &a->ilv) < 0)
            return oom(err);
        /* the shares' intervals: the samples on shared lines are what the
         * estimate's split between pairs and true / false rests on */
        a->neff = a->ilv.shared_neff;
    }
    if (a->comm_mode)
        a->volume_limit = detection_limit(a);
    return 0;
}

int replay_sampled_comm_export(const void *self, struct replay_sampled *s, struct pes_error *err)
{
    const struct comm *a = self;
    size_t n = a->n_threads ? a->n_threads : 1;
    free(s->comm_true);
    free(s->comm_false);
    s->comm_true = malloc(n * n * sizeof *s->comm_true);
    s->comm_false = malloc(n * n * sizeof *s->comm_false);
    if (!s->comm_true || !s->comm_false)
        return oom(err);
    memcpy(s->comm_true, a->true_m, n * n * sizeof *s->comm_true);
    memcpy(s->comm_false, a->false_m, n * n * sizeof *s->comm_false);
    s->comm_events = a->events;
    s->comm_true_events = a->true_events;
    s->comm_false_events = a->false_events;
    s->comm_neff = a->neff;
    s->comm_estimator = a->estimator;
    s->comm_resolution = a->resolution;
    s->ilv = a->ilv;
    s->comm_volume_limit = a->volume_limit;
    return 0;
}

static struct pes_rnode *matrix(struct pes_report *r, struct pes_rnode *parent, const char *key,
                                const double *m, uint32_t n)
{
    struct pes_rnode *a = pes_r_array(r, parent, key);
    for (uint32_t i = 0; i < n; i++) {
        struct pes_rnode *row = pes_r_array(r, a, NULL);
        for (uint32_t j = 0; j < n; j++)
            pes_r_f64(r, row, NULL, m[(size_t)i * n + j], "%.6g");
    }
    return a;
}

/* The stated uncertainty of the communication results: Kish's effective
 * number of events (weights: their scaled volumes), the false-sharing
 * fraction of the volume and each thread pair's share of the volume (cell
 * (i, j) over the matrix total / 2: every transfer is in two cells), with
 * 90 % Wilson intervals (docs/accuracy.md). */
static void publish_intervals(struct pes_report *r, struct pes_rnode *comm, const struct comm *a)
{
    uint32_t n = a->n_threads;
    double vt = 0, vf = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        vt += a->true_m[i];
        vf += a->false_m[i];
    }
    pes_r_f64(r, comm, "effective_events", a->neff, "%.6g");
    double ff = vt + vf > 0 ? vf / (vt + vf) : NAN;
    pes_r_f64(r, comm, "false_fraction", ff, "%.6g");
    replay_publish_ci(r, comm, "false_fraction_ci90", &a->ci, REPLAY_CI_FALSE_FRACTION, ff,
                      a->neff);
    struct pes_rnode *pairs = pes_r_array(r, comm, "pair_share_ci90");
    for (uint32_t i = 0; i < n; i++) {
        struct pes_rnode *row = pes_r_array(r, pairs, NULL);
        for (uint32_t j = 0; j < n; j++) {
            size_t c = (size_t)i * n + j;
            double share = vt + vf > 0 ? (a->true_m[c] + a->false_m[c]) / (vt + vf) : NAN;
            replay_publish_ci(r, row, NULL, &a->ci, REPLAY_CI_COMM_PAIRS, i == j ? NAN : share * 2,
                              a->neff);
        }
    }
}

static double matrix_total(const double *m, uint32_t n)
{
    double t = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        t += m[i];
    return t / 2; /* symmetric: every transfer is in two cells */
}

static void publish(void *self, const struct pes_publish *to)
{
    struct comm *a = self;
    if (a->si->paired)
        return; /* --compare: the report is accuracy.c's */
    struct pes_report *r = to->r;
    struct pes_rnode *comm = pes_r_object(r, to->trace, "comm");
    pes_r_u64(r, comm, "events", a->events);
    pes_r_u64(r, comm, "true_events", a->true_events);
    pes_r_u64(r, comm, "false_events", a->false_events);
    pes_r_str(r, comm, "estimator", replay_comm_estimator_name(a->estimator));
    pes_r_f64(r, comm, "trap_scale", a->cfg.trap_scale, "%.6g");
    pes_r_f64(r, comm, "resolution", a->resolution, "%.6g");
    pes_r_u64(r, comm, "shared_lines", a->ilv.shared_lines);
    pes_r_u64(r, comm, "shared_samples", a->ilv.shared_samples);
    pes_r_u64(r, comm, "gaps", a->ilv.gaps);
    pes_r_u64(r, comm, "time_bins", a->ilv.bins);
    matrix(r, comm, "true", a->true_m, a->n_threads);
    matrix(r, comm, "false", a->false_m, a->n_threads);
    publish_intervals(r, comm, a);
    /* comm mode that found nothing: 0 with the volume that could go unseen */
    if (a->volume_limit > 0)
        pes_r_f64(r, comm, "volume_limit90", a->volume_limit, "%.6g");
    pes_r_flag(pes_r_f64(r, comm, "volume_true", matrix_total(a->true_m, a->n_threads), "%.0f"),
               PES_R_TEXT_ONLY);
    pes_r_flag(pes_r_f64(r, comm, "volume_false", matrix_total(a->false_m, a->n_threads), "%.0f"),
               PES_R_TEXT_ONLY);
}

const struct pes_analysis pes_analysis_sampled_comm = {
    .name = "sampled_comm",
    .help = "communication matrices of a sampled trace (true and false sharing)",
    .wanted = wanted,
    .create = create,
    .link = find_siblings,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
