/*
 * batch.c — the batch a source fills and hands to its sink (stream.h).
 */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

static int nomem(struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
}

int pes_batch_buf_init(struct pes_batch_buf *b, const struct pes_batch_sink *sink,
                       struct pes_error *err)
{
    memset(b, 0, sizeof *b);
    b->sink = sink;
    b->addr = malloc(PES_BATCH * sizeof *b->addr);
    b->size = malloc(PES_BATCH * sizeof *b->size);
    b->length = malloc(PES_BATCH * sizeof *b->length);
    b->stream = malloc(PES_BATCH * sizeof *b->stream);
    b->site = malloc(PES_BATCH * sizeof *b->site);
    b->rw = malloc(PES_BATCH * sizeof *b->rw);
    if (!b->addr || !b->size || !b->length || !b->stream || !b->site || !b->rw) {
        pes_batch_buf_free(b);
        return nomem(err);
    }
    b->view = (struct pes_batch){.addr = b->addr,
                                 .size = b->size,
                                 .length = b->length,
                                 .stream = b->stream,
                                 .site = b->site,
                                 .rw = b->rw};
    return 0;
}

int pes_batch_buf_objects(struct pes_batch_buf *b, struct pes_error *err)
{
    if (!b->object)
        b->object = malloc(PES_BATCH * sizeof *b->object);
    if (!b->object_offset)
        b->object_offset = malloc(PES_BATCH * sizeof *b->object_offset);
    if (!b->object || !b->object_offset)
        return nomem(err);
    b->view.object = b->object;
    b->view.object_offset = b->object_offset;
    return 0;
}

int pes_batch_buf_callpaths(struct pes_batch_buf *b, struct pes_error *err)
{
    if (!b->callpath && !(b->callpath = malloc(PES_BATCH * sizeof *b->callpath)))
        return nomem(err);
    b->view.callpath = b->callpath;
    return 0;
}

void pes_batch_buf_free(struct pes_batch_buf *b)
{
    free(b->callpath);
    free(b->object);
    free(b->object_offset);
    free(b->addr);
    free(b->size);
    free(b->length);
    free(b->stream);
    free(b->site);
    free(b->rw);
    free(b->bb);
    free(b->bb_stream);
    free(b->ended);
    memset(b, 0, sizeof *b);
}

int pes_batch_buf_flush(struct pes_batch_buf *b, struct pes_error *err)
{
    struct pes_batch *v = &b->view;
    if (v->n == 0 && v->n_bbs == 0 && v->n_ended == 0 && v->dropped_reads == 0 &&
        v->dropped_writes == 0)
        return 0;
    v->bb = b->bb;
    v->bb_stream = b->bb_stream;
    v->ended = b->ended;
    int rc =
        b->sink->take ? b->sink->take(b->sink->ctx, b, err) : b->sink->batch(b->sink->ctx, v, err);
    v->n = v->n_bbs = v->n_ended = 0;
    v->dropped_reads = v->dropped_writes = 0;
    return rc;
}

int pes_batch_buf_pass(struct pes_batch_buf *full, struct pes_batch_buf *spare,
                       struct pes_error *err)
{
    /* the spare gets the optional columns full has, so that full keeps them */
    if ((full->view.object && pes_batch_buf_objects(spare, err) < 0) ||
        (full->view.callpath && pes_batch_buf_callpaths(spare, err) < 0))
        return -1;
    struct pes_batch_buf was_full = *full;
    const struct pes_batch_sink *spare_sink = spare->sink;
    *full = *spare;
    *spare = was_full;
    full->sink = was_full.sink; /* each keeps its sink */
    spare->sink = spare_sink;
    /* full: empty, its own columns (the spare's extra arrays stay unused) */
    full->view = (struct pes_batch){.addr = full->addr,
                                    .size = full->size,
                                    .length = full->length,
                                    .stream = full->stream,
                                    .site = full->site,
                                    .rw = full->rw,
                                    .object = was_full.view.object ? full->object : NULL,
                                    .object_offset =
                                        was_full.view.object_offset ? full->object_offset : NULL,
                                    .callpath = was_full.view.callpath ? full->callpath : NULL};
    return 0;
}

/* Grows a pointer array and its parallel u32 array (cap entries) to twice the size. */
static int grow(void *ptrs, size_t ptr_size, uint32_t **u32, size_t *cap)
{
    size_t n = *cap ? *cap * 2 : 256;
    void *p = realloc(*(void **)ptrs, n * ptr_size);
    if (!p)
        return -1;
    *(void **)ptrs = p;
    if (u32) {
        uint32_t *q = realloc(*u32, n * sizeof *q);
        if (!q)
            return -1;
        *u32 = q;
    }
    *cap = n;
    return 0;
}

int pes_batch_buf_bb(struct pes_batch_buf *b, const struct pes_bb *bb, uint32_t stream,
                     struct pes_error *err)
{
    if (b->view.n_bbs == b->cap_bbs) {
        /* a long run of BB entries without accesses goes out on its own */
        if (b->cap_bbs >= 8 * PES_BATCH) {
            if (pes_batch_buf_flush(b, err) < 0)
                return -1;
        } else if (grow(&b->bb, sizeof *b->bb, &b->bb_stream, &b->cap_bbs) < 0) {
            return nomem(err);
        }
    }
    size_t i = b->view.n_bbs++;
    b->bb[i] = bb;
    b->bb_stream[i] = stream;
    return 0;
}

int pes_batch_buf_ended(struct pes_batch_buf *b, uint32_t stream, struct pes_error *err)
{
    if (b->view.n_ended == b->cap_ended &&
        grow(&b->ended, sizeof *b->ended, NULL, &b->cap_ended) < 0)
        return nomem(err);
    b->ended[b->view.n_ended++] = stream;
    return 0;
}
