/*
 * pipeline.h — runs the registry's analyses over one stream: every wanted
 * analysis gets every batch, in registry order, then finish and publish.
 */
#ifndef PES_REPLAY_PIPELINE_H
#define PES_REPLAY_PIPELINE_H

#include "analysis.h"

struct pes_pipeline;

/* Creates every analysis wanted on this stream; NULL with err filled. */
struct pes_pipeline *pes_pipeline_create(const struct pes_stream_info *si, const struct pes_knobs *k,
                                         struct pes_error *err);
/* Where the stream's source delivers its batches. */
const struct pes_batch_sink *pes_pipeline_sink(struct pes_pipeline *p);
/* End of the stream: finish every analysis; 0, or -1 with err filled. */
int pes_pipeline_finish(struct pes_pipeline *p, struct pes_error *err);
/* Every analysis describes its results (after finish). */
void pes_pipeline_publish(struct pes_pipeline *p, const struct pes_publish *to);
void pes_pipeline_destroy(struct pes_pipeline *p);

#endif
