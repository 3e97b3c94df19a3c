/*
 * summary.c — totals of the recorded stream: records, accesses, reads,
 * writes, bytes, threads with records, BB executions, and operation counts
 * (static BB op counts × executions, what PPT-Multicore took from Byfl; the
 * runtime model's input).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "reuse_model.h"

struct totals {
    uint32_t threads;
    uint64_t records, accesses, bb_execs, reads, writes;
    struct pes_work work; /* bytes and op counts, as the model counts them */
};

struct summary {
    struct totals sum;
    uint32_t n_streams;
    uint8_t *seen; /* streams with at least one record */
};

static int wanted(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    (void)k;
    return !si->mimicked && si->kind != PES_TRACE_SAMPLED;
}

static void *create(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err)
{
    (void)k;
    struct summary *s = calloc(1, sizeof *s);
    if (s && !(s->seen = calloc(si->n_streams ? si->n_streams : 1, 1))) {
        free(s);
        s = NULL;
    }
    if (!s)
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    else
        s->n_streams = si->n_streams;
    return s;
}

static void note_stream(struct summary *s, uint32_t t)
{
    if (t < s->n_streams && !s->seen[t]) {
        s->seen[t] = 1;
        s->sum.threads++;
    }
}

static int batch(void *self, const struct pes_batch *b, struct pes_error *err)
{
    (void)err;
    struct summary *s = self;
    struct totals *m = &s->sum;
    for (size_t i = 0; i < b->n; i++) {
        note_stream(s, b->stream[i]);
        m->reads += b->rw[i] & PES_BATCH_READ;
        m->writes += (b->rw[i] & PES_BATCH_WRITE) >> 1;
    }
    m->accesses += b->n;
    uint64_t dropped = b->dropped_reads + b->dropped_writes; /* one byte each, stream 0 */
    if (dropped) {
        note_stream(s, 0);
        m->accesses += dropped;
        m->reads += b->dropped_reads;
        m->writes += b->dropped_writes;
        m->records += dropped;
    }
    for (size_t i = 0; i < b->n_bbs; i++)
        note_stream(s, b->bb_stream[i]);
    replay_work_count(&m->work, b); /* bytes (the dropped ones too) and op counts */
    m->bb_execs += b->n_bbs;
    m->records += b->n + b->n_bbs;
    return 0;
}

static void publish(void *self, const struct pes_publish *to)
{
    struct summary *s = self;
    struct pes_report *r = to->r;
    const struct totals *m = &s->sum;
    pes_r_u64(r, to->trace, "threads", m->threads);
    pes_r_u64(r, to->trace, "records", m->records);
    pes_r_u64(r, to->trace, "accesses", m->accesses);
    pes_r_u64(r, to->trace, "reads", m->reads);
    pes_r_u64(r, to->trace, "writes", m->writes);
    pes_r_u64(r, to->trace, "bytes", m->work.bytes);
    pes_r_u64(r, to->trace, "bb_executions", m->bb_execs);
    struct pes_rnode *ops = pes_r_object(r, to->trace, "ops");
    for (int k = 0; k < PES_OP_COUNT; k++)
        pes_r_f64(r, ops, pes_machine_op_key(k), m->work.ops[k], "%.0f");
    replay_publish_work_facts(r, to->trace, &m->work);
}

/* A part's totals, then its streams seen (one byte each). Integer op
 * counts sum exactly in a double (below 2^53) in any grouping. */
static size_t part_pack(void *self, void *buf, size_t cap)
{
    struct summary *s = self;
    size_t len = sizeof s->sum + s->n_streams;
    if (buf && cap >= len) {
        memcpy(buf, &s->sum, sizeof s->sum);
        memcpy((char *)buf + sizeof s->sum, s->seen, s->n_streams);
    }
    return len;
}

static int part_merge(void *self, const void *buf, size_t len, struct pes_error *err)
{
    struct summary *s = self;
    struct totals t;
    if (len != sizeof t + s->n_streams)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "summary: a part of %zu bytes, expected %zu",
                             len, sizeof t + s->n_streams);
    memcpy(&t, buf, sizeof t);
    struct totals *m = &s->sum;
    m->records += t.records;
    m->accesses += t.accesses;
    m->bb_execs += t.bb_execs;
    m->reads += t.reads;
    m->writes += t.writes;
    replay_work_merge(&m->work, &t.work);
    const unsigned char *seen = (const unsigned char *)buf + sizeof t;
    for (uint32_t i = 0; i < s->n_streams; i++)
        if (seen[i])
            note_stream(s, i);
    return 0;
}

static void destroy(void *self)
{
    struct summary *s = self;
    free(s->seen);
    free(s);
}

const struct pes_analysis pes_analysis_summary = {
    .name = "summary",
    .help =
        "records, accesses, reads, writes, bytes, threads and operation counts of the recorded run",
    .wanted = wanted,
    .create = create,
    .batch = batch,
    .publish = publish,
    .destroy = destroy,
    .part_pack = part_pack,
    .part_merge = part_merge,
};
