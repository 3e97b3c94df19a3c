/*
 * pipeline.c — the registry's analyses over one stream (pipeline.h).
 */
#include <stdlib.h>

#include "pipeline.h"

enum { MAX_ANALYSES = 16 };

struct pes_pipeline {
    struct pes_batch_sink sink;
    size_t n;
    const struct pes_analysis *analysis[MAX_ANALYSES];
    void *self[MAX_ANALYSES];
};

static int tee(void *ctx, const struct pes_batch *b, struct pes_error *err) {
    struct pes_pipeline *p = ctx;
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->batch(p->self[i], b, err) < 0) return -1;
    return 0;
}

struct pes_pipeline *pes_pipeline_create(const struct pes_stream_info *si, const struct pes_knobs *k,
                                         struct pes_error *err) {
    struct pes_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    p->sink = (struct pes_batch_sink){.batch = tee, .ctx = p};
    for (const struct pes_analysis *const *a = pes_analyses; *a && p->n < MAX_ANALYSES; a++) {
        if ((*a)->wanted && !(*a)->wanted(si, k)) continue;
        void *self = (*a)->create(si, k, err);
        if (!self) {
            pes_pipeline_destroy(p);
            return NULL;
        }
        p->analysis[p->n] = *a;
        p->self[p->n++] = self;
    }
    return p;
}

const struct pes_batch_sink *pes_pipeline_sink(struct pes_pipeline *p) { return &p->sink; }

int pes_pipeline_finish(struct pes_pipeline *p, struct pes_error *err) {
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->finish && p->analysis[i]->finish(p->self[i], err) < 0) return -1;
    return 0;
}

void pes_pipeline_publish(struct pes_pipeline *p, const struct pes_publish *to) {
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->publish) p->analysis[i]->publish(p->self[i], to);
}

void pes_pipeline_destroy(struct pes_pipeline *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) p->analysis[i]->destroy(p->self[i]);
    free(p);
}
