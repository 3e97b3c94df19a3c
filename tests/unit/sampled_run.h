/*
 * sampled_run.h — the unit tests' way to run the sampled analyses as
 * pes-replay does: the registry's analyses of a sampled stream (pipeline.h)
 * over events, with the stream's period weights (weights.h), and their
 * results gathered in one record (sampled_results.h).
 */
#ifndef PES_TEST_SAMPLED_RUN_H
#define PES_TEST_SAMPLED_RUN_H

#include "pipeline.h"
#include "sampled.h"
#include "sampled_results.h"
#include "weights.h"

static inline const struct pes_site *sampled_run_no_site(const void *ctx, uint32_t id)
{
    (void)ctx;
    (void)id;
    return NULL;
}

/* The stream si (its weights set) through the pipeline: the batches that
 * deliver hands to the sink, then finish; the results gathered into s and
 * published into rep's root, as pes-replay's report (either NULL: not).
 * 0, or -1 with err filled. */
static inline int sampled_run_stream(struct pes_stream_info *si, const struct pes_knobs *k,
                                     int (*deliver)(void *ctx, const struct pes_batch_sink *sink,
                                                    struct pes_error *err),
                                     void *ctx, struct replay_sampled *s, struct pes_report *rep,
                                     struct pes_error *err)
{
    struct pes_pipeline *p = pes_pipeline_create(si, k, err);
    if (!p)
        return -1;
    int rc = deliver(ctx, pes_pipeline_sink(p), err);
    if (rc == 0)
        rc = pes_pipeline_finish(p, err);
    if (rc == 0 && rep) {
        struct pes_publish to = {.r = rep, .trace = pes_report_root(rep)};
        pes_pipeline_publish(p, &to);
    }
    if (rc == 0 && s) {
        struct replay_ci ci;
        replay_ci_init(&ci, replay_interval_bias_parse(k->interval_bias));
        rc = replay_sampled_gather(pes_pipeline_siblings(p), si, &ci, s, err);
    }
    pes_pipeline_destroy(p);
    return rc;
}

struct sampled_run_blocks {
    const struct pes_event *const *e;
    const size_t *n;
    size_t blocks;
};

static inline int sampled_run_deliver(void *ctx, const struct pes_batch_sink *sink,
                                      struct pes_error *err)
{
    const struct sampled_run_blocks *b = ctx;
    for (size_t i = 0; i < b->blocks; i++) {
        struct pes_batch batch = {.n_events = b->n[i], .events = b->e[i], .events_offset = 100 * i};
        if (sink->batch(sink->ctx, &batch, err) < 0)
            return -1;
    }
    return 0;
}

/* The sampled analyses of a trace with this header config and threads,
 * whose EVENTS blocks are e[i] (n[i] events each, at file offset 100 i),
 * with knobs k (s, rep: as sampled_run_stream). */
static inline int sampled_run(const char *config, uint32_t threads, const struct pes_knobs *k,
                              const struct pes_event *const *e, const size_t *n, size_t blocks,
                              struct replay_sampled *s, struct pes_report *rep,
                              struct pes_error *err)
{
    struct pes_trace_info h = {.kind = PES_TRACE_SAMPLED, .config = config};
    /* the settings as replay_input reads them: a bad value is the open's error */
    struct pes_collect_settings set;
    if (pes_settings_from_header(&set, config, err) < 0)
        return -1;
    struct pes_weights *w = pes_weights_create("t.zst", &set, threads, err);
    if (!w)
        return -1;
    for (size_t i = 0; i < blocks; i++)
        if (pes_weights_add(w, e[i], n[i], 100 * i, err) < 0) {
            pes_weights_free(w);
            return -1;
        }
    pes_weights_seal(w);
    struct pes_stream_info si = {.path = "t.zst",
                                 .kind = PES_TRACE_SAMPLED,
                                 .header = &h,
                                 .settings = &set,
                                 .n_streams = threads,
                                 .site = sampled_run_no_site,
                                 .weights = w};
    struct sampled_run_blocks b = {e, n, blocks};
    int rc = sampled_run_stream(&si, k, sampled_run_deliver, &b, s, rep, err);
    pes_weights_free(w);
    return rc;
}

/* --reuse-estimator's name of REPLAY_EST_* (auto: NULL). */
static inline const char *sampled_run_estimator(int estimator)
{
    return estimator == REPLAY_EST_AUTO ? NULL : replay_reuse_estimator_name(estimator);
}

#endif
