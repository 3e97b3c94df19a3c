/*
 * accuracy.c — the accuracy join (pes-replay --compare SAMPLED FULL): the
 * sampled analyses of the sampled trace's events, the ground truth of the
 * full trace's accesses (ReuseTracker's definitions, MESI, exact stack
 * distances) and the metrics that hold one against the other
 * (sampling/accuracy.h; definitions in docs/accuracy.md). Runs on a stream
 * of events paired with the full trace of the same execution, whose
 * accesses follow the events.
 */
#include <math.h>
#include <stdlib.h>

#include "accuracy.h"
#include "analysis.h"
#include "sampled_publish.h"

struct join {
    const struct pes_stream_info *si;
    struct replay_sampled_builder *b;
    struct replay_sampled s;
    struct replay_truth t;
    struct replay_accuracy a;
    uint32_t top;
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k) {
    (void)k;
    return si->kind == PES_TRACE_SAMPLED && si->paired;
}

static void destroy(void *self) {
    struct join *j = self;
    replay_sampled_abandon(j->b);
    replay_sampled_free(&j->s);
    replay_truth_free(&j->t);
    free(j);
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k, struct pes_error *err) {
    struct join *j = calloc(1, sizeof *j);
    if (!j) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    j->si = si;
    j->top = k->top;
    if (!(j->b = replay_sampled_begin(si->path, si->header, si->n_streams, err)) ||
        replay_truth_begin(si->paired, &j->t, err) < 0) {
        destroy(j);
        return NULL;
    }
    return j;
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err) {
    struct join *j = self;
    if (b->n_events && replay_sampled_events(j->b, b->events, b->n_events, b->events_offset, err) < 0) return -1;
    return b->n ? replay_truth_batch(&j->t, b, err) : 0;
}

static int finish(void *self, struct pes_error *err) {
    struct join *j = self;
    int rc = replay_sampled_end(j->b, j->si->site, j->si->site_ctx, &j->s, err);
    j->b = NULL;
    if (rc < 0 || replay_truth_end(&j->t, j->si->paired, err) < 0) return -1;
    return replay_accuracy_compute(&j->s, &j->t, j->top, &j->a, err);
}

static void topk(struct pes_report *r, struct pes_rnode *o, const char *key, const struct pes_cmp_topk *t) {
    struct pes_rnode *n = pes_r_object(r, o, key);
    pes_r_f64(r, n, "coverage", t->coverage, "%.6g");
    pes_r_u64(r, n, "false_positives", t->false_positives);
    pes_r_f64(r, n, "v1", t->v1, "%.6g");
    pes_r_f64(r, n, "v2", t->v2, "%.6g");
    pes_r_u64(r, n, "ranked_full", t->n_full);
    pes_r_u64(r, n, "ranked_sampled", t->n_sampled);
}

static void publish(void *self, const struct pes_publish *to) {
    struct join *j = self;
    const struct replay_sampled *s = &j->s;
    const struct replay_truth *t = &j->t;
    const struct replay_accuracy *a = &j->a;
    const struct pes_stream_info *full = j->si->paired;
    struct pes_report *r = to->r;
    struct pes_rnode *o = to->trace;
    pes_r_str(r, o, "sampled", j->si->path);
    pes_r_str(r, o, "full", full->path);
    replay_publish_sampled_config(r, o, s);
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
        {"s_intra", a->s_intra}, {"s_shared", a->s_shared}, {"s_stack", a->s_stack},
        {"inval_ratio_sampled", a->inval_ratio_sampled}, {"inval_ratio_true", a->inval_ratio_true},
        {"inval_ratio_error", a->inval_ratio_error}, {"comm_volume_sampled", a->comm.total_est},
        {"comm_volume_true", a->comm.total_true}, {"comm_volume_error", a->comm.volume_error},
        {"comm_cell_error", a->comm.cell_error}, {"false_fraction_sampled", a->false_fraction_sampled},
        {"false_fraction_true", a->false_fraction_true}, {"split_error", a->split_error},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) pes_r_f64(r, o, f[i].k, f[i].v, "%.6g");
    pes_r_u64(r, o, "top_k", a->top_k);
    topk(r, o, "top_invalidations", &a->top_invalidations);
    topk(r, o, "top_coherence", &a->top_coherence);
    /* sampled events name the use's site, not the writer's */
    pes_r_null(r, o, "top_invalidations_caused");
    struct pes_rnode *h = pes_r_object(r, o, "histograms");
    replay_publish_rt_histogram(r, h, "sampled_intra", s->spatial ? s->spatial_hist[0] : s->temporal[0]);
    replay_publish_rt_histogram(r, h, "sampled_stack", s->stack);
    double exact[PES_RT_BINS];
    const struct pes_rt_stats *in = pes_rt_totals(t->rt, PES_RT_INTRA);
    for (size_t i = 0; i < PES_RT_BINS; i++) exact[i] = (double)(s->spatial ? in->line.bin[i] : in->temporal.bin[i]);
    replay_publish_rt_histogram(r, h, "full_intra", exact);
    replay_publish_rt_histogram(r, h, "full_stack", t->stack);
}

const struct pes_analysis pes_analysis_accuracy = {
    .name = "accuracy",
    .help = "a sampled trace against the full trace of the same execution (--compare)",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .finish = finish,
    .publish = publish,
    .destroy = destroy,
};
