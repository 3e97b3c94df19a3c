/*
 * approx.c — `--sample-rate R`: approximate reuse profiles for traces too
 * long for exact ones. SHARDS (Waldspurger et al., FAST 2015; shards.h)
 * keeps the lines whose hash falls below R, computes their exact stack
 * distances and scales them by 1/R: the PRD of every stream and the CRD of
 * every shared cache cost one hash per access plus exact work on a fraction
 * R of the lines. The model runs on the estimates as on exact profiles.
 *
 * With --sample-check the exact profiles are computed too, and the report
 * gives, per profile, the mean absolute error of the estimated miss-ratio
 * curve (fully associative LRU caches of 2^k lines from the first power of
 * two >= 1/R up to the distinct lines; smaller caches cannot be told apart
 * by the sample): what this trace lost to sampling, so that the rate can be
 * chosen knowingly. Per-site rows need every access and are not kept.
 *
 * This file is the example of docs/replay.md, "Writing an analysis".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"
#include "groups.h"
#include "reuse_distance.h"
#include "reuse_model.h"
#include "shards.h"

/* One profile: a stream's PRD or a shared cache's CRD. */
struct lane {
    struct pes_shards *est;
    struct pes_reuse *exact; /* --sample-check */
    struct pes_rd_hist exact_hist, hist;
    uint64_t *keys; /* [cap] this batch's line keys */
    size_t n, cap;
    int done;          /* its stream ended: hist is final, the tables are gone */
    int checked;       /* --sample-check */
    uint64_t mae_from; /* smallest cache the error covers, lines */
    double mae;        /* --sample-check: MRC error against the exact histogram */
    struct pes_shards_stats stats;
};

struct approx {
    const struct pes_stream_info *si;
    const struct pes_knobs *k;
    uint32_t n_lanes; /* streams, then shared caches */
    struct lane *lane;
    uint32_t *crd_lane; /* [n_streams] lane of the stream's shared cache; a
                                     cache of one stream is that stream's lane */
    unsigned shift;     /* log2 of the line size */
    struct pes_work work;
    struct replay_model model;
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    return k->sample_rate > 0 && (si->mimicked || !k->mimic) && si->kind != PES_TRACE_SAMPLED;
}

static void destroy(void *self)
{
    struct approx *a = self;
    for (uint32_t i = 0; a->lane && i < a->n_lanes; i++) {
        pes_shards_destroy(a->lane[i].est);
        pes_reuse_destroy(a->lane[i].exact);
        pes_rd_hist_free(&a->lane[i].exact_hist);
        pes_rd_hist_free(&a->lane[i].hist);
        free(a->lane[i].keys);
    }
    free(a->lane);
    free(a->crd_lane);
    free(a);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct approx *a = calloc(1, sizeof *a);
    uint32_t *members = calloc(si->n_caches ? si->n_caches : 1, sizeof *members);
    if (!a || !members || !(a->crd_lane = calloc(si->n_streams, sizeof *a->crd_lane))) {
        free(members);
        free(a);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    a->si = si;
    a->k = k;
    while ((1u << a->shift) < si->line)
        a->shift++;
    for (uint32_t s = 0; s < si->n_streams; s++)
        members[si->stream_cache[s]]++;
    a->n_lanes = si->n_streams;
    for (uint32_t s = 0; s < si->n_streams; s++) {
        uint32_t c = si->stream_cache[s];
        a->crd_lane[s] = members[c] == 1 ? s : UINT32_MAX;
    }
    for (uint32_t c = 0; c < si->n_caches; c++)
        if (members[c] > 1) {
            for (uint32_t s = 0; s < si->n_streams; s++)
                if (si->stream_cache[s] == c)
                    a->crd_lane[s] = a->n_lanes;
            a->n_lanes++;
        }
    free(members);
    if (!(a->lane = calloc(a->n_lanes, sizeof *a->lane))) {
        destroy(a);
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < a->n_lanes; i++) {
        a->lane[i].checked = k->sample_check;
        /* a sampled distance below 1/R lines stands for any of them: the
         * error is measured where the estimate can tell cache sizes apart */
        a->lane[i].mae_from = (uint64_t)ceil(1.0 / k->sample_rate);
    }
    return a;
}

/* A lane's estimator (and exact engine) from its first access on: a trace may
 * have 10^5 threads, most of them short. */
static int lane_open(const struct approx *a, struct lane *l, struct pes_error *err)
{
    struct pes_shards_options so = {
        .granule = a->si->line, .rate = a->k->sample_rate, .seed = a->k->sample_seed};
    struct pes_reuse_options ro = {.granule = a->si->line};
    if (!(l->est = pes_shards_create(&so, err)))
        return -1;
    if (l->checked &&
        (!(l->exact = pes_reuse_create(&ro, err)) || pes_rd_hist_init(&l->exact_hist, 0, err) < 0))
        return -1;
    return 0;
}

/* The lane's final histogram (and its error against the exact one); its
 * estimator, exact engine and buffer go. */
static int lane_close(struct lane *l, struct pes_error *err)
{
    if (!l->est) { /* no access at all */
        l->done = 1;
        return pes_rd_hist_init(&l->hist, 0, err);
    }
    if (pes_shards_finish(l->est, &l->hist, err) < 0)
        return -1;
    if (l->exact)
        l->mae = pes_shards_mrc_mae(&l->exact_hist, &l->hist, l->mae_from, 0);
    pes_shards_stats(l->est, &l->stats);
    pes_shards_destroy(l->est);
    pes_reuse_destroy(l->exact);
    free(l->keys);
    l->est = NULL;
    l->exact = NULL;
    l->keys = NULL;
    l->cap = 0;
    l->done = 1;
    return 0;
}

/* Room for `more` keys in the lane's batch buffer. */
static int reserve(struct lane *l, size_t more)
{
    if (l->n + more <= l->cap)
        return 0;
    size_t cap = l->cap ? l->cap : PES_BATCH;
    while (cap < l->n + more)
        cap *= 2;
    uint64_t *k = realloc(l->keys, cap * sizeof *k);
    if (!k)
        return -1;
    l->keys = k;
    l->cap = cap;
    return 0;
}

/* The batch's lines, gathered per lane in order (an access of several lines
 * counts once per line, in ascending order, as the exact profiles do), then
 * pushed lane by lane. */
static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct approx *a = self;
    if (!a->si->work)
        replay_work_count(&a->work, b);
    for (size_t i = 0; i < b->n; i++) {
        uint32_t s = b->stream[i];
        if (s >= a->si->n_streams || b->size[i] == 0)
            continue;
        struct lane *p = &a->lane[s], *c = &a->lane[a->crd_lane[s]];
        uint64_t first = b->addr[i] >> a->shift, last = (b->addr[i] + b->size[i] - 1) >> a->shift;
        /* buffers only for the lanes a batch touches: a trace may have 10^5 threads */
        if ((p->n + (last - first) >= p->cap && reserve(p, last - first + 1) < 0) ||
            (c->n + (last - first) >= c->cap && reserve(c, last - first + 1) < 0))
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        for (uint64_t key = first; key <= last; key++) {
            p->keys[p->n++] = key;
            if (c != p)
                c->keys[c->n++] = key;
        }
    }
    /* stream 0's accesses the input's filter dropped (replay_input_set_filter):
     * lines these estimators would not sample either, counted in their N */
    uint64_t dropped = b->dropped_reads + b->dropped_writes;
    for (int pass = 0; dropped && pass < 2; pass++) {
        struct lane *l = &a->lane[pass ? a->crd_lane[0] : 0];
        if (pass && l == &a->lane[0])
            break;
        if (l->done)
            return pes_error_set(err, PES_ERR_FORMAT, 0, "accesses of a stream after its end");
        if (!l->est && lane_open(a, l, err) < 0)
            return -1;
        if (l->exact)
            return pes_error_set(err, PES_ERR_ARG, 0, "--sample-check needs every access");
        if (pes_shards_skip(l->est, dropped) < 0) {
            *err = *pes_shards_error(l->est);
            return -1;
        }
    }
    uint64_t dist[4096];
    for (uint32_t i = 0; i < a->n_lanes; i++) {
        struct lane *l = &a->lane[i];
        if (l->n == 0)
            continue;
        if (l->done)
            return pes_error_set(err, PES_ERR_FORMAT, 0, "accesses of a stream after its end");
        if (!l->est && lane_open(a, l, err) < 0)
            return -1;
        if (pes_shards_push_keys(l->est, l->keys, l->n) < 0) {
            *err = *pes_shards_error(l->est);
            return -1;
        }
        for (size_t at = 0; l->exact && at < l->n; at += 4096) {
            size_t m = l->n - at < 4096 ? l->n - at : 4096;
            if (pes_reuse_push_keys(l->exact, l->keys + at, m, dist) < 0) {
                *err = *pes_reuse_error(l->exact);
                return -1;
            }
            for (size_t j = 0; j < m; j++)
                if (pes_rd_hist_add(&l->exact_hist, dist[j]) < 0)
                    return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        }
        l->n = 0;
    }
    /* an ended thread's own estimator is final: keep its histogram, free its tables */
    for (size_t i = 0; i < b->n_ended; i++) {
        uint32_t s = b->ended[i];
        if (s >= a->si->n_streams || a->crd_lane[s] == s || a->lane[s].done)
            continue;
        if (lane_close(&a->lane[s], err) < 0)
            return -1;
    }
    return 0;
}

static int finish(void *self, struct pes_error *err)
{
    struct approx *a = self;
    for (uint32_t i = 0; i < a->n_lanes; i++)
        if (!a->lane[i].done && lane_close(&a->lane[i], err) < 0)
            return -1;
    struct pes_rd_hist prd, crd;
    if (pes_rd_hist_init(&prd, 0, err) < 0)
        return -1;
    if (pes_rd_hist_init(&crd, 0, err) < 0) {
        pes_rd_hist_free(&prd);
        return -1;
    }
    int rc = 0;
    for (uint32_t s = 0; s < a->si->n_streams && rc == 0; s++)
        rc = pes_rd_hist_merge(&prd, &a->lane[s].hist);
    for (uint32_t c = 0; c < a->si->n_caches && rc == 0; c++)
        for (uint32_t s = 0; s < a->si->n_streams; s++) /* each cache once: its first stream */
            if (a->si->stream_cache[s] == c) {
                rc = pes_rd_hist_merge(&crd, &a->lane[a->crd_lane[s]].hist);
                break;
            }
    if (rc < 0)
        rc =
            pes_error_set(err, PES_ERR_NOMEM, 0, "cannot sum the reuse histograms (out of memory)");
    else
        rc = replay_model_run(&a->model, (enum pes_runtime_model)a->k->runtime_model, a->si,
                              &a->work, NULL, &prd, a->si->n_caches ? &crd : NULL, err);
    pes_rd_hist_free(&prd);
    pes_rd_hist_free(&crd);
    return rc;
}

/* The sampling behind one profile, and its error when checked. */
static void publish_sampling(struct pes_report *r, struct pes_rnode *rows, const char *profile,
                             const struct lane *l)
{
    struct pes_rnode *o = pes_r_object(r, rows, NULL);
    pes_r_str(r, o, "profile", profile);
    pes_r_u64(r, o, "accesses", l->stats.accesses);
    pes_r_u64(r, o, "sampled", l->stats.sampled);
    pes_r_f64(r, o, "effective_rate", l->stats.effective_rate, "%.6g");
    pes_r_u64(r, o, "sampled_lines", l->stats.lines);
    if (l->checked)
        pes_r_f64(r, o, "mrc_mae", l->mae, "%.6g");
}

static void publish(void *self, const struct pes_publish *to)
{
    struct approx *a = self;
    struct pes_report *r = to->r;
    char name[48];
    struct pes_rnode *prd = pes_r_array(r, to->config, "prd");
    for (uint32_t s = 0; s < a->si->n_streams; s++) {
        struct pes_rnode *o = pes_r_object(r, prd, NULL);
        pes_r_u64(r, o, "stream", s);
        replay_publish_histogram(r, o, &a->lane[s].hist, a->si);
    }
    struct pes_rnode *crd = pes_r_array(r, to->config, "crd");
    for (uint32_t c = 0; c < a->si->n_caches; c++)
        for (uint32_t s = 0; s < a->si->n_streams; s++)
            if (a->si->stream_cache[s] == c) {
                struct pes_rnode *o = pes_r_object(r, crd, NULL);
                pes_r_u64(r, o, "group", c);
                replay_publish_histogram(r, o, &a->lane[a->crd_lane[s]].hist, a->si);
                break;
            }
    pes_r_array(r, to->config, "sites"); /* per-site rows need every access */
    pes_r_str(r, to->config, "by", replay_by_name(replay_by_parse(a->k->by)));
    pes_r_array(r, to->config, "groups");
    replay_publish_model(r, to->config, &a->model, a->si);
    struct pes_rnode *ap = pes_r_object(r, to->config, "approximation");
    pes_r_str(r, ap, "method", "SHARDS fixed-rate spatial sampling");
    pes_r_f64(r, ap, "rate", a->k->sample_rate, "%.6g");
    pes_r_u64(r, ap, "seed", a->k->sample_seed);
    if (a->k->sample_check)
        pes_r_u64(r, ap, "mae_from_lines", a->lane[0].mae_from);
    struct pes_rnode *rows = pes_r_array(r, ap, "profiles");
    for (uint32_t s = 0; s < a->si->n_streams; s++) {
        snprintf(name, sizeof name, "%s%u PRD", a->si->mimicked ? "core " : "T", s);
        publish_sampling(r, rows, name, &a->lane[s]);
    }
    for (uint32_t i = a->si->n_streams; i < a->n_lanes; i++) {
        uint32_t c = 0;
        for (uint32_t s = 0; s < a->si->n_streams; s++)
            if (a->crd_lane[s] == i)
                c = a->si->stream_cache[s];
        snprintf(name, sizeof name, "shared%u CRD", c);
        publish_sampling(r, rows, name, &a->lane[i]);
    }
}

const struct pes_analysis pes_analysis_approx = {
    .name = "approx",
    .help = "SHARDS-sampled PRD and CRD and their model (--sample-rate), with the MRC error "
            "(--sample-check)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
