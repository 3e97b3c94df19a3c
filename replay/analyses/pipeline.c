/*
 * pipeline.c — the registry's analyses over one stream (pipeline.h).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_account.h"
#include "pipeline.h"
#include "scheduler.h"

enum { MAX_ANALYSES = 32 };

/* What link sees of the pipeline: the analyses created on the stream. */
struct pes_siblings {
    const struct pes_pipeline *p;
};

/*
 * With the replay's workers (--jobs >= 2), each analysis takes the batches on
 * a strand of its own (scheduler.h): the analyses of one batch run at once,
 * and the source goes on with the next batches meanwhile. A source's batch
 * buffer passes its arrays to one of HELD buffers (pes_batch_buf_pass: no
 * copy; a batch handed over by reference only is copied), which is reused
 * when every analysis is done with it. An analysis's failure stops the
 * others at their next batch; the error reported is the first one in stream
 * order (then registry order), as one analysis after the other would have
 * met it.
 */
enum { HELD = 8 };

struct held {
    struct pes_batch_buf buf; /* its view: the batch the analyses read */
    uint64_t index;           /* the batch's number in the stream */
    atomic_uint pending;      /* analyses still to take it */
};

struct step {
    struct pes_pipeline *p;
    size_t analysis;
    struct held *h;
};

struct pes_pipeline {
    struct pes_batch_sink sink;
    size_t n;
    const struct pes_analysis *analysis[MAX_ANALYSES];
    void *self[MAX_ANALYSES];
    struct pes_siblings siblings;
    int stage[MAX_ANALYSES]; /* --stats: each analysis's stage (cpu_account.h) */
    /* the analyses on strands */
    struct pes_sched *sched; /* NULL: one after the other on the source's thread */
    int st_hand;             /* --stats: copying and handing the batches over */
    struct pes_strand *strand[MAX_ANALYSES];
    struct held held[HELD];
    struct step steps[HELD][MAX_ANALYSES];
    uint64_t batches;
    atomic_int failed;           /* some analysis failed: the others stop */
    int has_error[MAX_ANALYSES]; /* under the strands: error[i] from batch error_at[i] */
    struct pes_error error[MAX_ANALYSES];
    uint64_t error_at[MAX_ANALYSES];
    uint8_t carried[MAX_ANALYSES]; /* pes_pipeline_carry: the analysis's state agrees */
};

static int tee(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    struct pes_pipeline *p = ctx;
    int was = -1, rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        int left = pes_cpu_switch(p->stage[i]);
        if (i == 0)
            was = left;
        if (p->analysis[i]->batch)
            rc = p->analysis[i]->batch(p->self[i], b, err);
    }
    pes_cpu_switch(was);
    return rc;
}

static void run_step(void *arg)
{
    struct step *st = arg;
    struct pes_pipeline *p = st->p;
    size_t i = st->analysis;
    if (!atomic_load_explicit(&p->failed, memory_order_relaxed) && p->analysis[i]->batch &&
        p->analysis[i]->batch(p->self[i], &st->h->buf.view, &p->error[i]) < 0) {
        p->has_error[i] = 1;
        p->error_at[i] = st->h->index;
        atomic_store_explicit(&p->failed, 1, memory_order_release);
    }
    atomic_fetch_sub_explicit(&st->h->pending, 1, memory_order_release);
}

static int held_free(void *ctx)
{
    struct held *h = ctx;
    return atomic_load_explicit(&h->pending, memory_order_acquire) == 0;
}

/* Once every strand is idle: the first failure in stream order, if any. */
static int first_error(struct pes_pipeline *p, struct pes_error *err)
{
    int at = -1;
    for (size_t i = 0; i < p->n; i++)
        if (p->has_error[i] && (at < 0 || p->error_at[i] < p->error_at[at]))
            at = (int)i;
    if (at < 0)
        return 0;
    *err = p->error[at];
    return -1;
}

static int wait_all(struct pes_pipeline *p, struct pes_error *err)
{
    for (size_t i = 0; i < p->n; i++)
        pes_strand_wait(p->strand[i]);
    return first_error(p, err);
}

/* dst[0 .. n) = src, growing dst (cap entries) as needed. 0 or -1. */
static int copy_grow(void *dst, size_t *cap, const void *src, size_t n, size_t size)
{
    if (n > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < n)
            c *= 2;
        void *q = realloc(*(void **)dst, c * size);
        if (!q)
            return -1;
        *(void **)dst = q;
        *cap = c;
    }
    if (n)
        memcpy(*(void **)dst, src, n * size);
    return 0;
}

/* A batch the source keeps (a sink in front of the pipeline passed it on by
 * reference) copied into h. 0 or -1. */
static int held_copy(struct held *h, const struct pes_batch *b, struct pes_error *err)
{
    struct pes_batch_buf *d = &h->buf;
    if (((b->object || b->object_offset) && pes_batch_buf_objects(d, err) < 0) ||
        (b->callpath && pes_batch_buf_callpaths(d, err) < 0))
        return -1;
    size_t n = b->n;
    if (n) {
        memcpy(d->addr, b->addr, n * sizeof *b->addr);
        memcpy(d->size, b->size, n * sizeof *b->size);
        memcpy(d->length, b->length, n * sizeof *b->length);
        memcpy(d->stream, b->stream, n * sizeof *b->stream);
        memcpy(d->site, b->site, n * sizeof *b->site);
        memcpy(d->rw, b->rw, n);
        if (b->object)
            memcpy(d->object, b->object, n * sizeof *b->object);
        if (b->object_offset)
            memcpy(d->object_offset, b->object_offset, n * sizeof *b->object_offset);
        if (b->callpath)
            memcpy(d->callpath, b->callpath, n * sizeof *b->callpath);
    }
    size_t cap_bb = d->cap_bbs;
    if (copy_grow(&d->bb, &d->cap_bbs, b->bb, b->n_bbs, sizeof *b->bb) < 0 ||
        copy_grow(&d->bb_stream, &cap_bb, b->bb_stream, b->n_bbs, sizeof *b->bb_stream) < 0 ||
        copy_grow(&d->ended, &d->cap_ended, b->ended, b->n_ended, sizeof *b->ended) < 0)
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    d->view = (struct pes_batch){
        .n = n,
        .addr = d->addr,
        .size = d->size,
        .length = d->length,
        .stream = d->stream,
        .site = d->site,
        .rw = d->rw,
        .object = b->object ? d->object : NULL,
        .object_offset = b->object_offset ? d->object_offset : NULL,
        .callpath = b->callpath ? d->callpath : NULL,
        .n_bbs = b->n_bbs,
        .bb = d->bb,
        .bb_stream = d->bb_stream,
        .n_ended = b->n_ended,
        .ended = d->ended,
        .dropped_reads = b->dropped_reads,
        .dropped_writes = b->dropped_writes,
    };
    return 0;
}

/* The next held buffer, once every analysis is done with its last batch;
 * NULL (err filled) if an analysis failed. */
static struct held *held_next(struct pes_pipeline *p, struct pes_error *err)
{
    struct held *h = &p->held[p->batches % HELD];
    pes_sched_wait(p->sched, held_free, h);
    if (atomic_load_explicit(&p->failed, memory_order_acquire)) {
        wait_all(p, err);
        return NULL;
    }
    return h;
}

/* h's batch goes to every analysis's strand. */
static int submit_held(struct pes_pipeline *p, struct held *h, struct pes_error *err)
{
    h->index = p->batches;
    atomic_store_explicit(&h->pending, (unsigned)p->n, memory_order_relaxed);
    struct step *st = p->steps[p->batches % HELD];
    void *args[MAX_ANALYSES];
    for (size_t i = 0; i < p->n; i++) {
        st[i] = (struct step){.p = p, .analysis = i, .h = h};
        args[i] = &st[i];
    }
    p->batches++;
    if (pes_sched_submit_many(p->strand, run_step, args, (uint32_t)p->n, err) < 0) {
        atomic_store(&h->pending, 0);
        return -1;
    }
    return 0;
}

/* A batch handed over by reference: copied into a held buffer. */
static int tee_async(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    struct pes_pipeline *p = ctx;
    int was = pes_cpu_switch(p->st_hand);
    struct held *h = held_next(p, err);
    int rc = h ? held_copy(h, b, err) : -1;
    pes_cpu_switch(was);
    return rc < 0 ? -1 : submit_held(p, h, err);
}

/* A source's filled buffer: its arrays change places with a held buffer's. */
static int take_async(void *ctx, struct pes_batch_buf *b, struct pes_error *err)
{
    struct pes_pipeline *p = ctx;
    int was = pes_cpu_switch(p->st_hand);
    struct held *h = held_next(p, err);
    int rc = h ? pes_batch_buf_pass(b, &h->buf, err) : -1;
    pes_cpu_switch(was);
    return rc < 0 ? -1 : submit_held(p, h, err);
}

/* Whether the analyses of this stream take their batches on strands: with
 * workers, for a stream of accesses, not for pes-replay-mpi (its engines'
 * messages go out from the process's one thread), and not for traces of
 * very many threads (their analyses' time goes to starting and ending each
 * thread's state, and a second malloc arena would hold its own share of
 * it: e2e.replay_memory's 100,000 threads under ulimit -v). */
enum { STRANDS_MAX_STREAMS = 256 };
static int on_strands(const struct pes_stream_info *si, const struct pes_knobs *k)
{
    return pes_sched_workers(k->sched) >= 2 && !k->split && si->kind != PES_TRACE_SAMPLED &&
           !si->paired && si->n_streams <= STRANDS_MAX_STREAMS;
}

void *pes_sibling(const struct pes_siblings *s, const struct pes_analysis *a)
{
    for (size_t i = 0; i < s->p->n; i++)
        if (s->p->analysis[i] == a)
            return s->p->self[i];
    return NULL;
}

const struct pes_siblings *pes_pipeline_siblings(const struct pes_pipeline *p)
{
    return &p->siblings;
}

struct pes_pipeline *pes_pipeline_create(const struct pes_stream_info *si,
                                         const struct pes_knobs *k, struct pes_error *err)
{
    struct pes_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    p->sink = (struct pes_batch_sink){.batch = tee, .ctx = p};
    p->siblings.p = p;
    for (const struct pes_analysis *const *a = pes_analyses; *a; a++) {
        if ((*a)->wanted && !(*a)->wanted(si, k))
            continue;
        if (p->n == MAX_ANALYSES) {
            pes_error_set(err, PES_ERR_ARG, 0, "more than %d analyses on one stream", MAX_ANALYSES);
            pes_pipeline_destroy(p);
            return NULL;
        }
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
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->link && p->analysis[i]->link(p->self[i], &p->siblings, err) < 0) {
            pes_pipeline_destroy(p);
            return NULL;
        }
    if (p->n && on_strands(si, k)) {
        p->sched = k->sched;
        p->st_hand = pes_cpu_stage("hand-over", PES_CPU_BY_THREAD);
        for (size_t i = 0; i < p->n; i++)
            if (!(p->strand[i] = pes_strand_create(p->sched, p->stage[i]))) {
                pes_pipeline_destroy(p);
                pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
                return NULL;
            }
        for (int i = 0; i < HELD; i++)
            if (pes_batch_buf_init(&p->held[i].buf, NULL, err) < 0) {
                pes_pipeline_destroy(p);
                return NULL;
            }
        p->sink.batch = tee_async;
        p->sink.take = take_async;
    }
    return p;
}

const struct pes_batch_sink *pes_pipeline_sink(struct pes_pipeline *p)
{
    return &p->sink;
}

int pes_pipeline_finish(struct pes_pipeline *p, struct pes_error *err)
{
    if (p->sched && wait_all(p, err) < 0)
        return -1;
    int was = pes_cpu_switch(pes_cpu_stage("finish", 0)), rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (p->analysis[i]->finish && p->analysis[i]->finish(p->self[i], err) < 0)
            rc = -1;
    pes_cpu_switch(was);
    return rc;
}

int pes_pipeline_sync(struct pes_pipeline *p, struct pes_error *err)
{
    if (p->sched && wait_all(p, err) < 0)
        return -1;
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->sync && p->analysis[i]->sync(p->self[i], err) < 0)
            return -1;
    return 0;
}

int pes_pipeline_carries(const struct pes_pipeline *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->carry)
            return 1;
    return 0;
}

int pes_pipeline_carry(struct pes_pipeline *p, const struct pes_batch *b, struct pes_error *err)
{
    int all = 1;
    for (size_t i = 0; i < p->n; i++) {
        if (!p->analysis[i]->carry || p->carried[i])
            continue;
        int was = pes_cpu_switch(p->stage[i]);
        int rc = p->analysis[i]->carry(p->self[i], b, err);
        pes_cpu_switch(was);
        if (rc < 0)
            return -1;
        p->carried[i] = rc == 1;
        all &= rc == 1;
    }
    return all;
}

/* A part's or a share's bytes: per analysis, in pipeline order, its size
 * (u64) and its bytes (none without the function). */
typedef size_t (*pack_fn)(void *self, void *buf, size_t cap);
typedef int (*merge_fn)(void *self, const void *buf, size_t len, struct pes_error *err);

static void *pack_all(struct pes_pipeline *p, int share, size_t *len, struct pes_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        pack_fn f = share ? p->analysis[i]->share_pack : p->analysis[i]->part_pack;
        n += 8 + (f ? f(p->self[i], NULL, 0) : 0);
    }
    unsigned char *buf = malloc(n ? n : 1), *at = buf;
    if (!buf) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < p->n; i++) {
        pack_fn f = share ? p->analysis[i]->share_pack : p->analysis[i]->part_pack;
        uint64_t k = f ? f(p->self[i], NULL, 0) : 0;
        memcpy(at, &k, 8);
        if (f)
            f(p->self[i], at + 8, (size_t)k);
        at += 8 + k;
    }
    *len = n;
    return buf;
}

static int merge_all(struct pes_pipeline *p, int share, const void *buf, size_t len,
                     struct pes_error *err)
{
    const unsigned char *at = buf, *end = at + len;
    for (size_t i = 0; i < p->n; i++) {
        uint64_t k = 0;
        if (end - at >= 8)
            memcpy(&k, at, 8);
        if (end - at < 8 || k > (uint64_t)(end - at - 8))
            return pes_error_set(err, PES_ERR_FORMAT, 0, "a %s's counts are cut short (%zu bytes)",
                                 share ? "share" : "part", len);
        merge_fn f = share ? p->analysis[i]->share_merge : p->analysis[i]->part_merge;
        if (k && !f)
            return pes_error_set(err, PES_ERR_FORMAT, 0, "counts for an analysis that takes none");
        if (f && f(p->self[i], at + 8, (size_t)k, err) < 0)
            return -1;
        at += 8 + k;
    }
    if (at != end)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "a %s's counts: %zu bytes too many",
                             share ? "share" : "part", (size_t)(end - at));
    return 0;
}

void *pes_pipeline_share_pack(struct pes_pipeline *p, size_t *len, struct pes_error *err)
{
    return pack_all(p, 1, len, err);
}

int pes_pipeline_share_merge(struct pes_pipeline *p, const void *buf, size_t len,
                             struct pes_error *err)
{
    return merge_all(p, 1, buf, len, err);
}

/* A part: per analysis, in pipeline order, its size (u64) and its bytes. */
void *pes_pipeline_part_pack(struct pes_pipeline *p, size_t *len, struct pes_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += 8 + p->analysis[i]->part_pack(p->self[i], NULL, 0);
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

int pes_pipeline_part_merge(struct pes_pipeline *p, const void *buf, size_t len,
                            struct pes_error *err)
{
    const unsigned char *at = buf, *end = at + len;
    for (size_t i = 0; i < p->n; i++) {
        uint64_t k = 0;
        if (end - at >= 8)
            memcpy(&k, at, 8);
        if (end - at < 8 || k > (uint64_t)(end - at - 8))
            return pes_error_set(err, PES_ERR_FORMAT, 0,
                                 "a part's counts are cut short (%zu bytes)", len);
        if (p->analysis[i]->part_merge(p->self[i], at + 8, (size_t)k, err) < 0)
            return -1;
        at += 8 + k;
    }
    if (at != end)
        return pes_error_set(err, PES_ERR_FORMAT, 0, "a part's counts: %zu bytes too many",
                             (size_t)(end - at));
    return 0;
}

void pes_pipeline_publish(struct pes_pipeline *p, const struct pes_publish *to)
{
    int was = pes_cpu_switch(pes_cpu_stage("publish", 0));
    for (size_t i = 0; i < p->n; i++)
        if (p->analysis[i]->publish)
            p->analysis[i]->publish(p->self[i], to);
    pes_cpu_switch(was);
}

void pes_pipeline_destroy(struct pes_pipeline *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        pes_strand_destroy(p->strand[i]); /* waits for its tasks */
    for (size_t i = 0; i < p->n; i++)
        p->analysis[i]->destroy(p->self[i]);
    for (int i = 0; i < HELD; i++)
        pes_batch_buf_free(&p->held[i].buf);
    free(p);
}
