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

/* Points of a miss-ratio curve: caches of 1, 2, 4, ... 2^48 lines at most. */
#define REPLAY_MRC_MAX 49

/* A miss-ratio curve from one reuse profile (issue 13): for caches of
 * 2^k lines, k = 0 .. n-1, the miss ratio (cold accesses included) of a
 * fully associative LRU cache and SDCM's for a cache of `ways` ways
 * (PPT-Multicore Eq. 1 and 3; a cache of no more lines than ways is one set,
 * i.e. fully associative). */
struct replay_mrc {
    uint32_t level; /* 1-based level whose profile and ways are used; 0: no curve */
    uint32_t ways;  /* that level's associativity (0: fully associative) */
    int from_crd;   /* 1: the summed CRD (a shared level), 0: the summed PRD */
    size_t n;
    uint64_t lines[REPLAY_MRC_MAX];
    double fully_associative[REPLAY_MRC_MAX], sdcm[REPLAY_MRC_MAX];
};

/* What an analysis measured for the runtime model beyond the work
 * (struct pes_runtime_input's TLB and PREFETCH facts, flags in known). */
struct replay_model_extra {
    uint32_t known; /* PES_RUNTIME_KNOW_TLB | PES_RUNTIME_KNOW_PREFETCH */
    double tlb_misses;
    uint64_t tlb_accesses; /* page accesses looked up (the profile's total) */
    double prefetched;
};

struct replay_model {
    double hit[PES_MAX_LEVELS];           /* SDCM global (cumulative) hit rates */
    enum pes_runtime_model runtime_model; /* --runtime-model */
    struct pes_runtime runtime;
    struct replay_model_extra extra; /* as given to replay_model_run */
    struct replay_mrc mrc;           /* of the first shared level (else the last level) */
};

/* Adds the batch's bytes and BB op counts to w (the work of a stream whose
 * description brings none). */
void replay_work_count(struct pes_work *w, const struct pes_batch *b);
/* dst += src (a part's work). */
void replay_work_merge(struct pes_work *dst, const struct pes_work *src);
/* Every executed block carried the pass's model facts. */
int replay_work_has_facts(const struct pes_work *w);
/* "model_facts" in the trace section (only when w has the facts), and back
 * (for mimicked cores: the recorded run's). */
void replay_publish_work_facts(struct pes_report *r, struct pes_rnode *trace,
                               const struct pes_work *w);
void replay_work_facts_from_report(struct pes_work *w, const struct pes_rnode *trace);

/* PPT-Multicore Eq. 1-3 per level (private levels from prd, shared levels
 * from crd; crd NULL: every level from prd) and the runtime `rm` with the
 * stream info's work, or `counted` when it has none, and extra's facts (NULL:
 * none). 0, or -1 with err filled. */
int replay_model_run(struct replay_model *out, enum pes_runtime_model rm,
                     const struct pes_stream_info *si, const struct pes_work *counted,
                     const struct replay_model_extra *extra, const struct pes_rd_hist *prd,
                     const struct pes_rd_hist *crd, struct pes_error *err);

/* The curve of h (ways as struct replay_mrc says) from 1 line up to the
 * smallest power of two that is at least min_lines and above every finite
 * distance of h (at least one point; 2^48 lines at most). out->level and
 * out->from_crd are left to the caller. 0, or -1 with err filled (h's exact
 * range below the model's). An empty h gives no points. */
int replay_mrc_compute(struct replay_mrc *out, const struct pes_rd_hist *h, uint32_t ways,
                       uint64_t min_lines, struct pes_error *err);

/* {"histogram": {accesses, cold, mean, exact, log2}} under parent, with the
 * text report's cold share and fully associative hit shares per level. */
void replay_publish_histogram(struct pes_report *r, struct pes_rnode *parent,
                              const struct pes_rd_hist *h, const struct pes_stream_info *si);
/* The configuration's "model": global and local hit rates, runtime; then
 * its "miss_ratio_curve" (docs/replay.schema.json). */
void replay_publish_model(struct pes_report *r, struct pes_rnode *config,
                          const struct replay_model *m, const struct pes_stream_info *si);

#endif
