/*
 * summary.c — totals of the recorded stream: records, accesses, reads,
 * writes, bytes, threads with records, BB executions, and operation counts
 * (static BB op counts × executions, what PPT-Multicore took from Byfl; the
 * runtime model's input).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "replay.h"

struct summary {
    struct replay_summary sum;
    uint32_t n_streams;
    uint8_t *seen;           /* streams with at least one record */
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k) {
    (void)k;
    return !si->mimicked;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k, struct pes_error *err) {
    (void)k;
    struct summary *s = calloc(1, sizeof *s);
    if (s && !(s->seen = calloc(si->n_streams ? si->n_streams : 1, 1))) {
        free(s);
        s = NULL;
    }
    if (!s) pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    else s->n_streams = si->n_streams;
    return s;
}

static void note_stream(struct summary *s, uint32_t t) {
    if (t < s->n_streams && !s->seen[t]) {
        s->seen[t] = 1;
        s->sum.threads++;
    }
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err) {
    (void)err;
    struct summary *s = self;
    struct replay_summary *m = &s->sum;
    for (size_t i = 0; i < b->n; i++) {
        note_stream(s, b->stream[i]);
        m->bytes += b->length[i];
        m->reads += b->rw[i] & PES_BATCH_READ;
        m->writes += (b->rw[i] & PES_BATCH_WRITE) >> 1;
    }
    m->accesses += b->n;
    for (size_t i = 0; i < b->n_bbs; i++) {
        note_stream(s, b->bb_stream[i]);
        for (int k = 0; k < PES_OP_COUNT; k++) m->ops[k] += b->bb[i]->ops[k];
    }
    m->bb_execs += b->n_bbs;
    m->records += b->n + b->n_bbs;
    return 0;
}

static void publish(void *self, struct replay_result *res, struct replay_config *cfg) {
    (void)cfg;
    struct summary *s = self;
    struct replay_summary *m = &res->summary;
    m->threads = s->sum.threads;
    m->records = s->sum.records;
    m->accesses = s->sum.accesses;
    m->bb_execs = s->sum.bb_execs;
    m->reads = s->sum.reads;
    m->writes = s->sum.writes;
    m->bytes = s->sum.bytes;
    memcpy(m->ops, s->sum.ops, sizeof m->ops);
}

static void destroy(void *self) {
    struct summary *s = self;
    free(s->seen);
    free(s);
}

const struct pes_analysis pes_analysis_summary = {
    .name = "summary",
    .help = "records, accesses, reads, writes, bytes, threads and operation counts of the recorded run",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
};
