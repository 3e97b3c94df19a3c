/*
 * pipeline.c — the registry's analyses over one stream (pipeline.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_account.h"
#include "pipeline.h"

enum { MAX_ANALYSES = 16 };

struct pes_pipeline {
    struct pes_batch_sink sink;
    size_t n;
    const struct pes_analysis *analysis[MAX_ANALYSES];
    void *self[MAX_ANALYSES];
    int stage[MAX_ANALYSES];      /* --stats: each analysis's stage (cpu_account.h) */
};

static int tee(void *ctx, const struct pes_batch *b, struct pes_error *err) {
    struct pes_pipeline *p = ctx;
    int was = -1, rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        int left = pes_cpu_switch(p->stage[i]);
        if (i == 0) was = left;
        rc = p->analysis[i]->batch(p->self[i], b, err);
    }
    pes_cpu_switch(was);
    return rc;
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
        char stage[48];
        snprintf(stage, sizeof stage, "analysis %s", (*a)->name);
        p->stage[p->n] = pes_cpu_stage(stage, 0);
        p->analysis[p->n] = *a;
        p->self[p->n++] = self;
    }
    return p;
}

const struct pes_batch_sink *pes_pipeline_sink(struct pes_pipeline *p) { return &p->sink; }

int pes_pipeline_finish(struct pes_pipeline *p, struct pes_error *err) {
    int was = pes_cpu_switch(pes_cpu_stage("finish", 0)), rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (p->analysis[i]->finish && p->analysis[i]->finish(p->self[i], err) < 0) rc = -1;
    pes_cpu_switch(was);
    return rc;
}

int pes_pipeline_sync(struct pes_pipeline *p, struct pes_error *err) {
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->sync && p->analysis[i]->sync(p->self[i], err) < 0) return -1;
    return 0;
}

/* A part: per analysis, in pipeline order, its size (u64) and its bytes. */
void *pes_pipeline_part_pack(struct pes_pipeline *p, size_t *len, struct pes_error *err) {
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) n += 8 + p->analysis[i]->part_pack(p->self[i], NULL, 0);
    unsigned char *buf = malloc(n ? n : 1), *at = buf;
    if (!buf) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < p->n; i++) {
        uint64_t k = p->analysis[i]->part_pack(p->self[i], NULL, 0);
        memcpy(at, &k, 8);
        p->analysis[i]->part_pack(p->self[i], at + 8, (size_t)k);
        at += 8 + k;
    }
    *len = n;
    return buf;
}

int pes_pipeline_part_merge(struct pes_pipeline *p, const void *buf, size_t len, struct pes_error *err) {
    const unsigned char *at = buf, *end = at + len;
    for (size_t i = 0; i < p->n; i++) {
        uint64_t k = 0;
        if (end - at >= 8) memcpy(&k, at, 8);
        if (end - at < 8 || k > (uint64_t)(end - at - 8))
            return pes_error_set(err, PES_ERR_FORMAT, 0, "a part's counts are cut short (%zu bytes)", len);
        if (p->analysis[i]->part_merge(p->self[i], at + 8, (size_t)k, err) < 0) return -1;
        at += 8 + k;
    }
    if (at != end) return pes_error_set(err, PES_ERR_FORMAT, 0, "a part's counts: %zu bytes too many", (size_t)(end - at));
    return 0;
}

void pes_pipeline_publish(struct pes_pipeline *p, const struct pes_publish *to) {
    int was = pes_cpu_switch(pes_cpu_stage("publish", 0));
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->publish) p->analysis[i]->publish(p->self[i], to);
    pes_cpu_switch(was);
}

void pes_pipeline_destroy(struct pes_pipeline *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) p->analysis[i]->destroy(p->self[i]);
    free(p);
}
