/*
 * encoder.c — pes_trace_encoder: turns one batch of items (records of one
 * thread, events, a table) into the bytes of its block(s): for each block, a
 * 24-byte block header + payload, compressed as one zstd frame (content size
 * and checksum on), preceded by its skippable index frame. The writer appends
 * these bytes; keeping production apart from appending lets several threads
 * encode at once, each with its own encoder.
 *
 * The bytes of a block depend only on the block's items and the zstd level:
 * the access codec resets its predictors at every block (only its table
 * capacity survives, which never changes a residual), and ZSTD_compress2
 * starts a fresh frame each call. So which encoder made a block, and what it
 * made before, does not show in the file.
 */
#include <stdlib.h>
#include <zstd.h>

#include "trace_internal.h"

struct pes_trace_encoder {
    ZSTD_CCtx *cctx;
    struct pes_access_codec *codec;
    struct pes_buf block; /* header + payload being built */
    struct pes_buf out;   /* [index frame][data frame]... of the last call */
};

#define ENCODER_NAME "pes_trace_encoder"

struct pes_trace_encoder *pes_trace_encoder_new(const struct pes_writer_options *opt,
                                                struct pes_error *err)
{
    pes_err_clear(err);
    struct pes_trace_encoder *e = calloc(1, sizeof *e);
    if (e) {
        e->cctx = ZSTD_createCCtx();
        e->codec = pes_access_codec_new();
    }
    if (!e || !e->cctx || !e->codec) {
        pes_trace_encoder_free(e);
        pes_error_set(err, PES_ERR_NOMEM, 0, ENCODER_NAME ": out of memory");
        return NULL;
    }
    int level = opt && opt->zstd_level ? opt->zstd_level : 1;
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_contentSizeFlag, 1);
    return e;
}

void pes_trace_encoder_free(struct pes_trace_encoder *e)
{
    if (!e)
        return;
    ZSTD_freeCCtx(e->cctx);
    pes_access_codec_free(e->codec);
    pes_buf_free(&e->block);
    pes_buf_free(&e->out);
    free(e);
}

const void *pes_trace_encoder_output(const struct pes_trace_encoder *e, size_t *size)
{
    if (size)
        *size = e ? e->out.len : 0;
    return e && e->out.len ? e->out.data : NULL;
}

static int nomem(const char *name, uint64_t offset, struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, offset, "%s: out of memory", name);
}

/* Starts a block: room for the header, payload appended by the caller. */
static int enc_begin(struct pes_trace_encoder *e, const char *name, uint64_t offset,
                     struct pes_error *err)
{
    e->block.len = 0;
    if (pes_buf_reserve(&e->block, PES_BLOCK_HEADER_BYTES))
        return nomem(name, offset, err);
    e->block.len = PES_BLOCK_HEADER_BYTES;
    return 0;
}

/* Compresses the block being built and appends its two frames to e->out. */
static int enc_emit(struct pes_trace_encoder *e, uint32_t type, uint32_t thread, uint32_t count,
                    const char *name, uint64_t offset, struct pes_error *err)
{
    size_t payload = e->block.len - PES_BLOCK_HEADER_BYTES;
    if (payload > PES_MAX_PAYLOAD)
        return pes_error_set(err, PES_ERR_ARG, offset,
                             "%s: %s block payload of %zu bytes exceeds the %llu-byte limit", name,
                             pes_block_type_name(type), payload,
                             (unsigned long long)PES_MAX_PAYLOAD);
    pes_block_header_encode(e->block.data, type, thread, count, payload);
    size_t bound = ZSTD_compressBound(e->block.len);
    if (pes_buf_reserve(&e->out, PES_INDEX_BYTES + bound))
        return nomem(name, offset, err);
    uint8_t *index = e->out.data + e->out.len;
    size_t csize =
        ZSTD_compress2(e->cctx, index + PES_INDEX_BYTES, bound, e->block.data, e->block.len);
    if (ZSTD_isError(csize))
        return pes_error_set(err, PES_ERR_IO, offset, "%s: zstd: %s", name,
                             ZSTD_getErrorName(csize));
    struct pes_index_entry ie = {type, thread, count, (uint32_t)csize};
    pes_index_encode(index, &ie);
    e->out.len += PES_INDEX_BYTES + csize;
    return 0;
}

/* Every encoding call starts from an empty output and leaves it empty on error. */
static int enc_done(struct pes_trace_encoder *e, int rc)
{
    if (rc)
        e->out.len = 0;
    return rc;
}

int pes_encoder_header(struct pes_trace_encoder *e, const struct pes_trace_info *info,
                       const char *name, struct pes_error *err)
{
    e->out.len = 0;
    if (enc_begin(e, name, 0, err))
        return enc_done(e, -1);
    if (pes_ser_info(&e->block, info))
        return enc_done(e, nomem(name, 0, err));
    return enc_done(e, enc_emit(e, PES_BLOCK_HEADER, 0, 1, name, 0, err));
}

int pes_encoder_footer(struct pes_trace_encoder *e, const struct pes_thread_totals *totals,
                       size_t n, uint64_t end_ticks, const char *name, uint64_t offset,
                       struct pes_error *err)
{
    e->out.len = 0;
    if (enc_begin(e, name, offset, err))
        return enc_done(e, -1);
    if (pes_ser_footer(&e->block, totals, n, end_ticks))
        return enc_done(e, nomem(name, offset, err));
    return enc_done(e, enc_emit(e, PES_BLOCK_FOOTER, 0, (uint32_t)n, name, offset, err));
}

int pes_encoder_module(struct pes_trace_encoder *e, const struct pes_module *m, const char *name,
                       uint64_t offset, struct pes_error *err)
{
    e->out.len = 0;
    uint64_t end = (uint64_t)m->id_base + m->n_sites + m->n_bbs;
    if (end > PES_ID_CONTROL_FIRST)
        return pes_error_set(err, PES_ERR_ARG, offset,
                             "%s: module %s: id range ends at %llu, inside the control ids", name,
                             m->name ? m->name : "", (unsigned long long)end);
    for (uint32_t i = 0; i < m->n_sites; i++)
        if (m->sites[i].id < m->id_base || m->sites[i].id - m->id_base >= m->n_sites)
            return pes_error_set(
                err, PES_ERR_ARG, offset, "%s: module %s: site %u has id %u outside [%u, %u)", name,
                m->name ? m->name : "", i, m->sites[i].id, m->id_base, m->id_base + m->n_sites);
    for (uint32_t i = 0; i < m->n_bbs; i++) {
        uint32_t base = m->id_base + m->n_sites;
        if (m->bbs[i].id < base || m->bbs[i].id - base >= m->n_bbs)
            return pes_error_set(err, PES_ERR_ARG, offset,
                                 "%s: module %s: bb %u has id %u outside [%u, %u)", name,
                                 m->name ? m->name : "", i, m->bbs[i].id, base, base + m->n_bbs);
    }
    if (enc_begin(e, name, offset, err))
        return enc_done(e, -1);
    if (pes_ser_module(&e->block, m, PES_TRACE_VERSION))
        return enc_done(e, nomem(name, offset, err));
    uint64_t count = (uint64_t)m->n_sites + m->n_bbs;
    return enc_done(e,
                    enc_emit(e, PES_BLOCK_MODULE, 0,
                             count > UINT32_MAX ? UINT32_MAX : (uint32_t)count, name, offset, err));
}

int pes_encoder_thread(struct pes_trace_encoder *e, const struct pes_thread *t, const char *name,
                       uint64_t offset, struct pes_error *err)
{
    e->out.len = 0;
    if (enc_begin(e, name, offset, err))
        return enc_done(e, -1);
    if (pes_ser_thread(&e->block, t))
        return enc_done(e, nomem(name, offset, err));
    return enc_done(e, enc_emit(e, PES_BLOCK_THREAD, t->index, 1, name, offset, err));
}

int pes_encoder_records(struct pes_trace_encoder *e, uint32_t thread, const struct pes_record *recs,
                        size_t n, const char *name, uint64_t offset, struct pes_error *err)
{
    e->out.len = 0;
    size_t done = 0;
    do { /* n == 0 still makes one (empty) block */
        /* the next block: as many whole units (plain records, loop groups)
         * as fit 2^20 expanded and 2^20 stored records */
        struct pes_loop_walk w;
        if (pes_loop_walk(recs + done, n - done, done, PES_MAX_BLOCK_RECORDS, PES_MAX_BLOCK_RECORDS,
                          1, &w))
            return enc_done(
                e, pes_error_set(err, PES_ERR_ARG, offset, "%s: records: %s", name, w.why));
        if (w.stored == 0 && done < n)
            return enc_done(e, pes_error_set(err, PES_ERR_ARG, offset,
                                             "%s: records: record %zu, a loop descriptor, stands "
                                             "for %llu records, more than one ACCESS block holds "
                                             "(%u)",
                                             name, done, (unsigned long long)recs[done].addr,
                                             PES_MAX_BLOCK_RECORDS));
        if (enc_begin(e, name, offset, err))
            return enc_done(e, -1);
        /* version 2 on: the stored count, then the codec's payload of them */
        if (pes_buf_u32(&e->block, (uint32_t)w.stored) ||
            pes_access_encode_groups(e->codec, recs + done, w.stored, w.groups != 0, &e->block))
            return enc_done(e, nomem(name, offset, err));
        if (enc_emit(e, PES_BLOCK_ACCESS, thread, (uint32_t)w.expanded, name, offset, err))
            return enc_done(e, -1);
        done += w.stored;
    } while (done < n);
    return 0;
}

int pes_encoder_events(struct pes_trace_encoder *e, uint32_t thread, const struct pes_event *ev,
                       size_t n, const char *name, uint64_t offset, struct pes_error *err)
{
    e->out.len = 0;
    size_t done = 0;
    do {
        size_t k = n - done > PES_MAX_BLOCK_RECORDS ? PES_MAX_BLOCK_RECORDS : n - done;
        if (enc_begin(e, name, offset, err))
            return enc_done(e, -1);
        if (pes_events_encode(ev + done, k, &e->block))
            return enc_done(e, nomem(name, offset, err));
        if (enc_emit(e, PES_BLOCK_EVENTS, thread, (uint32_t)k, name, offset, err))
            return enc_done(e, -1);
        done += k;
    } while (done < n);
    return 0;
}

int pes_encoder_mappings(struct pes_trace_encoder *e, const struct pes_mapping *m, size_t n,
                         const char *name, uint64_t offset, struct pes_error *err)
{
    e->out.len = 0;
    if (enc_begin(e, name, offset, err))
        return enc_done(e, -1);
    if (pes_ser_maps(&e->block, m, n))
        return enc_done(e, nomem(name, offset, err));
    return enc_done(e, enc_emit(e, PES_BLOCK_MAPS, 0, (uint32_t)n, name, offset, err));
}

int pes_encoder_alloc_sites(struct pes_trace_encoder *e, const struct pes_alloc_site *s, size_t n,
                            const char *name, uint64_t offset, struct pes_error *err)
{
    e->out.len = 0;
    if (n > PES_MAX_READ_RECORDS)
        return pes_error_set(err, PES_ERR_ARG, offset,
                             "%s: %zu allocation sites in one block (at most %u)", name, n,
                             PES_MAX_READ_RECORDS);
    for (size_t i = 0; i < n; i++) {
        const struct pes_alloc_site *a = &s[i];
        const char *bad = a->id == PES_ALLOC_SITE_STACK ? "has the reserved id PES_ALLOC_SITE_STACK"
                          : a->depth < 1 || a->depth > PES_ALLOC_MAX_DEPTH ? "depth is not 1..8"
                          : a->kind < PES_ALLOC_MALLOC || a->kind > PES_ALLOC_CALLSTACK
                              ? "kind is not an enum pes_alloc_kind"
                          : a->kind == PES_ALLOC_CALLSTACK && a->id == 0
                              ? "is a call stack with the reserved id 0"
                          : !a->ips ? "has no ips"
                                    : NULL;
        if (bad)
            return pes_error_set(err, PES_ERR_ARG, offset,
                                 "%s: allocation site %zu (id %u, kind %u, depth %u) %s", name, i,
                                 a->id, a->kind, a->depth, bad);
    }
    if (enc_begin(e, name, offset, err))
        return enc_done(e, -1);
    if (pes_ser_alloc_sites(&e->block, s, n))
        return enc_done(e, nomem(name, offset, err));
    return enc_done(e, enc_emit(e, PES_BLOCK_ALLOC_SITES, 0, (uint32_t)n, name, offset, err));
}

/* ---- public entry points: the same checks as the writer's, without a file */

int pes_trace_encoder_module(struct pes_trace_encoder *e, const struct pes_module *m,
                             struct pes_error *err)
{
    pes_err_clear(err);
    if (!e || !m || (m->n_sites && !m->sites) || (m->n_bbs && !m->bbs))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_encoder_module: bad arguments");
    return pes_encoder_module(e, m, ENCODER_NAME, 0, err);
}

int pes_trace_encoder_thread(struct pes_trace_encoder *e, const struct pes_thread *t,
                             struct pes_error *err)
{
    pes_err_clear(err);
    if (!e || !t)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_encoder_thread: bad arguments");
    return pes_encoder_thread(e, t, ENCODER_NAME, 0, err);
}

int pes_trace_encoder_records(struct pes_trace_encoder *e, uint32_t thread,
                              const struct pes_record *recs, size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!e || (n && !recs))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_encoder_records: bad arguments");
    return pes_encoder_records(e, thread, recs, n, ENCODER_NAME, 0, err);
}

int pes_trace_encoder_events(struct pes_trace_encoder *e, uint32_t thread,
                             const struct pes_event *ev, size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!e || (n && !ev))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_encoder_events: bad arguments");
    return pes_encoder_events(e, thread, ev, n, ENCODER_NAME, 0, err);
}

int pes_trace_encoder_mappings(struct pes_trace_encoder *e, const struct pes_mapping *m, size_t n,
                               struct pes_error *err)
{
    pes_err_clear(err);
    if (!e || (n && !m) || n > PES_MAX_READ_RECORDS)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_encoder_mappings: bad arguments");
    return pes_encoder_mappings(e, m, n, ENCODER_NAME, 0, err);
}

int pes_trace_encoder_alloc_sites(struct pes_trace_encoder *enc, const struct pes_alloc_site *s,
                                  size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!enc || (n && !s))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_encoder_alloc_sites: bad arguments");
    return pes_encoder_alloc_sites(enc, s, n, ENCODER_NAME, 0, err);
}
