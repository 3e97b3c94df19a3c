/*
 * accuracy.c — the accuracy join (pes-replay --compare SAMPLED FULL): what
 * the sampled analyses before it found in the sampled trace's events
 * (sampled_counts.c, sampled_reuse.c, sampled_comm.c, sampled_sites.c,
 * gathered through their exports, sampled_results.h), the ground truth of
 * the full trace's accesses (ReuseTracker's definitions, MESI, exact stack
 * distances) and the metrics that hold one against the other
 * (sampling/sampled.h; definitions in docs/accuracy.md). Runs on a stream
 * of events paired with the full trace of the same execution, whose
 * accesses follow the events.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "groups.h"
#include "sampled_publish.h"
#include "sampled_results.h"

/* --by object: counts per object id of one trace (ids are dense, objects.h) */
struct per_object {
    uint64_t *n;
    size_t cap;
};

#define MAX_OBJECT_ROWS (1u << 24)

static int per_object_add(struct per_object *p, uint32_t id, struct pes_error *err)
{
    if (id >= MAX_OBJECT_ROWS)
        id = 0; /* not an id objects.h hands out: unknown */
    if (id >= p->cap) {
        size_t cap = p->cap ? p->cap : 64;
        while (cap <= id)
            cap *= 2;
        uint64_t *n = realloc(p->n, cap * sizeof *n);
        if (!n)
            return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        memset(n + p->cap, 0, (cap - p->cap) * sizeof *n);
        p->n = n;
        p->cap = cap;
    }
    p->n[id]++;
    return 0;
}

struct join {
    const struct pes_stream_info *si;
    const struct pes_siblings *siblings; /* the sampled analyses (sampled_results.h) */
    struct replay_sampled_config cfg;
    struct replay_ci ci;
    struct replay_sampled s; /* their results, gathered at finish */
    struct replay_truth t;
    struct replay_accuracy a;
    uint32_t top;
    /* --by object: samples per object of the sampled trace, accesses per
     * object of the full one; the two traces resolve their objects apart,
     * so their rows are joined by name */
    int by_object;
    struct per_object samples, accesses;
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return si->kind == PES_TRACE_SAMPLED && si->paired;
}

static void destroy(void *self)
{
    struct join *j = self;
    replay_sampled_free(&j->s);
    replay_truth_free(&j->t);
    free(j->samples.n);
    free(j->accesses.n);
    free(j);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    struct join *j = calloc(1, sizeof *j);
    if (!j) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    j->si = si;
    j->top = k->top;
    j->by_object = replay_by_parse(k->by) == REPLAY_BY_OBJECT;
    replay_sampled_config_read(&j->cfg, si->header, si->settings);
    replay_ci_init(&j->ci, replay_interval_bias_parse(k->interval_bias));
    if (replay_truth_begin(si->paired, replay_truth_track(si->settings), &j->t, err) < 0) {
        destroy(j);
        return NULL;
    }
    return j;
}

static int find_siblings(void *self, const struct pes_siblings *s, struct pes_error *err)
{
    struct join *j = self;
    j->siblings = s;
    /* what replay_sampled_gather reads: they run wherever this does */
    if (!pes_sibling(s, &pes_analysis_sampled_counts) ||
        !pes_sibling(s, &pes_analysis_sampled_reuse) ||
        !pes_sibling(s, &pes_analysis_sampled_comm) || !pes_sibling(s, &pes_analysis_sampled_sites))
        return pes_error_set(err, PES_ERR_ARG, 0, "accuracy needs the sampled analyses");
    return 0;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    struct join *j = self;
    for (size_t i = 0; j->by_object && i < b->n_events; i++)
        if (b->events[i].kind == PES_EV_SAMPLE &&
            per_object_add(&j->samples, b->event_object ? b->event_object[i] : 0, err) < 0)
            return -1;
    if (!b->n)
        return 0;
    if (replay_truth_batch(&j->t, b, err) < 0)
        return -1;
    for (size_t i = 0; j->by_object && i < b->n; i++)
        if (per_object_add(&j->accesses, b->object ? b->object[i] : 0, err) < 0)
            return -1;
    return 0;
}

static int finish(void *self, struct pes_error *err)
{
    struct join *j = self;
    /* the sampled analyses have finished (they come first in the registry) */
    if (replay_sampled_gather(j->siblings, j->si, &j->ci, &j->s, err) < 0)
        return -1;
    if (replay_truth_end(&j->t, j->si->paired, err) < 0)
        return -1;
    return replay_accuracy_compute(&j->s, &j->t, j->top, &j->a, err);
}

static void topk(struct pes_report *r, struct pes_rnode *o, const char *key,
                 const struct pes_cmp_topk *t)
{
    struct pes_rnode *n = pes_r_object(r, o, key);
    pes_r_f64(r, n, "coverage", t->coverage, "%.6g");
    pes_r_u64(r, n, "false_positives", t->false_positives);
    pes_r_f64(r, n, "v1", t->v1, "%.6g");
    pes_r_f64(r, n, "v2", t->v2, "%.6g");
    pes_r_u64(r, n, "ranked_full", t->n_full);
    pes_r_u64(r, n, "ranked_sampled", t->n_sampled);
}

/* One family's (or all families') checks; outside: how far the misses lay (NULL: not listed). */
static void coverage_row(struct pes_report *r, struct pes_rnode *o, const char *key,
                         uint32_t checked, uint32_t covered, const float *outside,
                         uint32_t n_outside)
{
    struct pes_rnode *n = pes_r_object(r, o, key);
    pes_r_u64(r, n, "checked", checked);
    pes_r_u64(r, n, "covered", covered);
    if (checked)
        pes_r_f64(r, n, "fraction", (double)covered / checked,
                  "%.6g"); /* none checked: no fraction */
    if (!n_outside)
        return;
    /* bench/calibrate_intervals.py sizes each family's model-error term from these */
    struct pes_rnode *out = pes_r_array(r, n, "outside_by");
    for (uint32_t i = 0; i < n_outside; i++)
        pes_r_f64(r, out, NULL, outside[i], "%.4g");
}

/* Which stated 90 % intervals hold the full trace's value (docs/accuracy.md). */
static void publish_coverage(struct pes_report *r, struct pes_rnode *o,
                             const struct replay_accuracy *a)
{
    struct pes_rnode *n = pes_r_object(r, o, "interval_coverage");
    pes_r_f64(r, n, "level", 0.9, "%.6g");
    const struct {
        const char *key;
        const struct replay_coverage *c;
    } fam[] = {{"intra_bins", &a->cov_intra},  {"stack_bins", &a->cov_stack},
               {"inval_ratio", &a->cov_inval}, {"false_fraction", &a->cov_false},
               {"comm_pairs", &a->cov_pairs},  {"comm_volume", &a->cov_volume}};
    uint32_t checked = 0, covered = 0;
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        const struct replay_coverage *c = fam[i].c;
        coverage_row(r, n, fam[i].key, c->checked, c->covered, c->outside_by, c->n_outside);
        checked += c->checked;
        covered += c->covered;
    }
    coverage_row(r, n, "all", checked, covered, NULL, 0);
}

struct joined {
    char name[256];
    uint64_t samples, accesses;
};

static int by_name(const void *x, const void *y)
{
    return strcmp(((const struct joined *)x)->name, ((const struct joined *)y)->name);
}

static int by_accesses(const void *x, const void *y)
{
    const struct joined *a = x, *b = y;
    if (a->accesses != b->accesses)
        return a->accesses < b->accesses ? 1 : -1;
    if (a->samples != b->samples)
        return a->samples < b->samples ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* --by object: per object (joined by name) the samples of the sampled trace
 * and the accesses of the full one, each as a share of its trace's total:
 * sampling at a fixed period gives each object about its share of the
 * accesses. Ranked by accesses, at most --top (256) rows. */
static void publish_objects(struct join *j, struct pes_report *r, struct pes_rnode *o)
{
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < j->samples.cap; i++)
        cap += j->samples.n[i] != 0;
    for (size_t i = 0; i < j->accesses.cap; i++)
        cap += j->accesses.n[i] != 0;
    struct joined *row = calloc(cap ? cap : 1, sizeof *row);
    if (!row) {
        pes_r_array(r, NULL, NULL); /* marks the report failed */
        return;
    }
    uint64_t total_s = 0, total_a = 0;
    for (int side = 0; side < 2; side++) {
        const struct per_object *p = side ? &j->accesses : &j->samples;
        for (size_t i = 0; i < p->cap; i++) {
            if (!p->n[i])
                continue;
            replay_object_name(side ? j->si->paired : j->si, (uint32_t)i, row[n].name,
                               sizeof row[n].name);
            if (side)
                row[n].accesses = p->n[i], total_a += p->n[i];
            else
                row[n].samples = p->n[i], total_s += p->n[i];
            n++;
        }
    }
    qsort(row, n, sizeof *row, by_name);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && strcmp(row[m - 1].name, row[i].name) == 0) {
            row[m - 1].samples += row[i].samples;
            row[m - 1].accesses += row[i].accesses;
        } else {
            row[m++] = row[i];
        }
    }
    qsort(row, m, sizeof *row, by_accesses);
    pes_r_str(r, o, "by", "object");
    struct pes_rnode *arr = pes_r_array(r, o, "objects");
    uint32_t top = j->top < 256 ? j->top : 256;
    for (size_t i = 0; i < m && i < top; i++) {
        struct pes_rnode *x = pes_r_object(r, arr, NULL);
        pes_r_str(r, x, "key", row[i].name);
        pes_r_u64(r, x, "samples", row[i].samples);
        pes_r_u64(r, x, "accesses", row[i].accesses);
        pes_r_f64(r, x, "sample_share", total_s ? (double)row[i].samples / (double)total_s : 0,
                  "%.6g");
        pes_r_f64(r, x, "access_share", total_a ? (double)row[i].accesses / (double)total_a : 0,
                  "%.6g");
    }
    free(row);
}

static void publish(void *self, const struct pes_publish *to)
{
    struct join *j = self;
    const struct replay_sampled *s = &j->s;
    const struct replay_truth *t = &j->t;
    const struct replay_accuracy *a = &j->a;
    const struct pes_stream_info *full = j->si->paired;
    struct pes_report *r = to->r;
    struct pes_rnode *o = to->trace;
    pes_r_str(r, o, "sampled", j->si->path);
    pes_r_str(r, o, "full", full->path);
    replay_publish_sampled_config(r, o, &j->cfg, &j->ci);
    pes_r_bool(r, o, "same_execution", a->same_execution);
    pes_r_u64(r, o, "samples", a->samples);
    pes_r_u64(r, o, "decided", a->decided);
    pes_r_f64(r, o, "effective_reuses", a->effective_reuses, "%.6g");
    pes_r_u64(r, o, "accesses", t->accesses);
    pes_r_u64(r, o, "threads", t->n_threads);
    pes_r_bool(r, o, "truncated", j->si->truncated || full->truncated);
    pes_r_bool(r, o, "sampled_truncated", j->si->truncated);
    pes_r_bool(r, o, "full_truncated", full->truncated);
    pes_r_u64(r, o, "skipped_blocks", j->si->skipped_blocks + full->skipped_blocks);
    pes_r_u64(r, o, "lost", s->lost);
    const struct {
        const char *k;
        double v;
    } f[] = {
        {"s_intra", a->s_intra},
        {"s_shared", a->s_shared},
        {"s_stack", a->s_stack},
        {"inval_ratio_sampled", a->inval_ratio_sampled},
        {"inval_ratio_true", a->inval_ratio_true},
        {"inval_ratio_error", a->inval_ratio_error},
        {"comm_volume_sampled", a->comm.total_est},
        {"comm_volume_true", a->comm.total_true},
        {"comm_volume_error", a->comm.volume_error},
        {"comm_cell_error", a->comm.cell_error},
        {"false_fraction_sampled", a->false_fraction_sampled},
        {"false_fraction_true", a->false_fraction_true},
        {"split_error", a->split_error},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        pes_r_f64(r, o, f[i].k, f[i].v, "%.6g");
    pes_r_str(r, o, "reuse_estimator", replay_reuse_estimator_name(s->estimator));
    pes_r_str(r, o, "stack_model", replay_stack_model_name(s->stack_model));
    pes_r_str(r, o, "comm_estimator", replay_comm_estimator_name(s->comm_estimator));
    replay_publish_ci(r, o, "inval_ratio_sampled_ci90", &j->ci, REPLAY_CI_INVAL_RATIO,
                      a->inval_ratio_sampled, a->inval_ratio_neff);
    replay_publish_ci(r, o, "false_fraction_sampled_ci90", &j->ci, REPLAY_CI_FALSE_FRACTION,
                      a->false_fraction_sampled, s->comm_neff);
    /* in the units of comm_volume_*: symmetric matrices count a transfer twice */
    if (s->comm_volume_limit > 0)
        pes_r_f64(r, o, "comm_volume_limit", 2 * s->comm_volume_limit, "%.6g");
    struct pes_rnode *why = pes_r_object(r, o, "not_estimated");
    for (unsigned i = 0; i < a->n_not_estimated; i++)
        pes_r_str(r, why, a->not_estimated[i].key, a->not_estimated[i].why);
    pes_r_str(r, why, "top_invalidations_caused",
              "sampled events name the use's site, not the writer's");
    publish_coverage(r, o, a);
    pes_r_u64(r, o, "top_k", a->top_k);
    topk(r, o, "top_invalidations", &a->top_invalidations);
    topk(r, o, "top_coherence", &a->top_coherence);
    /* sampled events name the use's site, not the writer's */
    pes_r_null(r, o, "top_invalidations_caused");
    struct pes_rnode *h = pes_r_object(r, o, "histograms");
    replay_publish_rt_histogram_ci(r, h, "sampled_intra",
                                   s->spatial ? s->spatial_hist[0] : s->temporal[0], &j->ci,
                                   REPLAY_CI_REUSE_BINS, s->hist_neff[0][s->spatial ? 1 : 0]);
    replay_publish_rt_histogram_ci(r, h, "sampled_stack", s->stack, &j->ci, REPLAY_CI_STACK_BINS,
                                   s->hist_neff[0][0]);
    double exact[PES_RT_BINS];
    const struct pes_rt_stats *in = pes_rt_totals(t->rt, PES_RT_INTRA);
    for (size_t i = 0; i < PES_RT_BINS; i++)
        exact[i] = (double)(s->spatial ? in->line.bin[i] : in->temporal.bin[i]);
    replay_publish_rt_histogram(r, h, "full_intra", exact);
    replay_publish_rt_histogram(r, h, "full_stack", t->stack);
    if (j->by_object)
        publish_objects(j, r, o);
}

const struct pes_analysis pes_analysis_accuracy = {
    .name = "accuracy",
    .help = "a sampled trace against the full trace of the same execution (--compare)",
    .wanted = wanted,
    .create = create,
    .link = find_siblings,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
