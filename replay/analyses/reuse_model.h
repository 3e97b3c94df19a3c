/*
 * reuse_model.h — what the analyses that build reuse profiles share: the
 * SDCM model and runtime prediction from the summed PRD and CRD, and how a
 * histogram and a model are described in the report (the "prd"/"crd"
 * histogram objects and the "model" section of docs/replay.schema.json).
 */
#ifndef PES_REPLAY_REUSE_MODEL_H
#define PES_REPLAY_REUSE_MODEL_H

#include "histogram.h"
#include "report.h"
#include "stream.h"

struct replay_model {
    double hit[PES_MAX_LEVELS];   /* SDCM global (cumulative) hit rates */
    enum pes_runtime_model runtime_model;   /* --runtime-model */
    struct pes_runtime runtime;
};

/* Adds the batch's bytes and BB op counts to w (the work of a stream whose
 * description brings none). */
void replay_work_count(struct pes_work *w, const struct pes_batch *b);

/* PPT-Multicore Eq. 1-3 per level (private levels from prd, shared levels
 * from crd; crd NULL: every level from prd) and the runtime `rm` with the
 * stream info's work, or `counted` when it has none. 0, or -1 with err filled. */
int replay_model_run(struct replay_model *out, enum pes_runtime_model rm, const struct pes_stream_info *si,
                     const struct pes_work *counted, const struct pes_rd_hist *prd, const struct pes_rd_hist *crd,
                     struct pes_error *err);

/* {"histogram": {accesses, cold, mean, exact, log2}} under parent, with the
 * text report's cold share and fully associative hit shares per level. */
void replay_publish_histogram(struct pes_report *r, struct pes_rnode *parent, const struct pes_rd_hist *h,
                              const struct pes_stream_info *si);
/* The configuration's "model": global and local hit rates, runtime. */
void replay_publish_model(struct pes_report *r, struct pes_rnode *config, const struct replay_model *m,
                          const struct pes_stream_info *si);

#endif
