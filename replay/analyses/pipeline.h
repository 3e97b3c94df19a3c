/*
 * pipeline.h — runs the registry's analyses over one stream: every wanted
 * analysis gets every batch, in registry order, then finish and publish.
 */
#ifndef PES_REPLAY_PIPELINE_H
#define PES_REPLAY_PIPELINE_H

#include "analysis.h"

struct pes_pipeline;

/* Creates every analysis wanted on this stream; NULL with err filled. */
struct pes_pipeline *pes_pipeline_create(const struct pes_stream_info *si,
                                         const struct pes_knobs *k, struct pes_error *err);
/* The analyses it runs, as link sees them (pes_sibling: a join's siblings). */
const struct pes_siblings *pes_pipeline_siblings(const struct pes_pipeline *p);
/* Where the stream's source delivers its batches. */
const struct pes_batch_sink *pes_pipeline_sink(struct pes_pipeline *p);
/* End of the stream: finish every analysis; 0, or -1 with err filled. */
int pes_pipeline_finish(struct pes_pipeline *p, struct pes_error *err);
/* Reading in parts (analysis.h: sync, part_pack, part_merge; every analysis
 * of the pipeline must have them, pes_analyses_can_part). After the part's
 * last batch: pes_pipeline_sync; then the part's counts as one malloc'd
 * buffer (NULL, err filled, if out of memory), or, on process 0, each later
 * part's buffer merged in stream order before pes_pipeline_finish. */
int pes_pipeline_sync(struct pes_pipeline *p, struct pes_error *err);
/* Reading in parts, on every part but the last, before pes_pipeline_sync:
 * whether an analysis carries its state across the part's end (struct
 * pes_analysis, carry), and the batches after the part, one after the
 * other (b NULL: the stream's end): 1 when every such analysis has
 * answered 1 (stop reading), 0 for more, -1 (err). */
int pes_pipeline_carries(const struct pes_pipeline *p);
int pes_pipeline_carry(struct pes_pipeline *p, const struct pes_batch *b, struct pes_error *err);
void *pes_pipeline_part_pack(struct pes_pipeline *p, size_t *len, struct pes_error *err);
int pes_pipeline_part_merge(struct pes_pipeline *p, const void *buf, size_t len,
                            struct pes_error *err);
/* Shares (analysis.h: share_pack, share_merge; knobs.shares > 1): after
 * pes_pipeline_finish, this process's share as one malloc'd buffer (NULL,
 * err filled, without memory), or on process 0 another's merged. */
void *pes_pipeline_share_pack(struct pes_pipeline *p, size_t *len, struct pes_error *err);
int pes_pipeline_share_merge(struct pes_pipeline *p, const void *buf, size_t len,
                             struct pes_error *err);
/* Every analysis describes its results (after finish). */
void pes_pipeline_publish(struct pes_pipeline *p, const struct pes_publish *to);
void pes_pipeline_destroy(struct pes_pipeline *p);

#endif
