/*
 * writer.c — pes_trace_writer: builds each block (24-byte header + payload)
 * in memory, compresses it as one zstd frame (content size and checksum on),
 * and appends [skippable index frame][data frame] to the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "trace_internal.h"

struct pes_trace_writer {
    FILE *f;
    char *path;
    ZSTD_CCtx *cctx;
    struct pes_access_codec *codec;
    struct pes_buf block;   /* header + payload being built */
    struct pes_buf frame;   /* compressed output */
    uint64_t bytes;
    int failed;             /* an earlier write failed: refuse further blocks */
};

static int writer_emit(struct pes_trace_writer *w, uint32_t type, uint32_t thread,
                       uint32_t count, struct pes_error *err)
{
    size_t payload = w->block.len - PES_BLOCK_HEADER_BYTES;
    if (payload > PES_MAX_PAYLOAD)
        return pes_error_set(err, PES_ERR_ARG, w->bytes,
                           "%s: %s block payload of %zu bytes exceeds the %llu-byte limit",
                           w->path, pes_block_type_name(type), payload,
                           (unsigned long long)PES_MAX_PAYLOAD);
    pes_block_header_encode(w->block.data, type, thread, count, payload);
    size_t bound = ZSTD_compressBound(w->block.len);
    w->frame.len = 0;
    if (pes_buf_reserve(&w->frame, PES_INDEX_BYTES + bound))
        return pes_error_set(err, PES_ERR_NOMEM, w->bytes, "%s: out of memory", w->path);
    size_t csize = ZSTD_compress2(w->cctx, w->frame.data + PES_INDEX_BYTES, bound,
                                  w->block.data, w->block.len);
    if (ZSTD_isError(csize))
        return pes_error_set(err, PES_ERR_IO, w->bytes, "%s: zstd: %s", w->path,
                           ZSTD_getErrorName(csize));
    struct pes_index_entry e = {type, thread, count, (uint32_t)csize};
    pes_index_encode(w->frame.data, &e);
    size_t total = PES_INDEX_BYTES + csize;
    if (fwrite(w->frame.data, 1, total, w->f) != total) {
        w->failed = 1;
        return pes_error_set(err, PES_ERR_IO, w->bytes, "%s: write failed: %s", w->path,
                           strerror(errno));
    }
    w->bytes += total;
    return 0;
}

/* Starts a block: room for the header, payload appended by the caller. */
static int writer_begin(struct pes_trace_writer *w, struct pes_error *err)
{
    if (w->failed)
        return pes_error_set(err, PES_ERR_IO, w->bytes, "%s: an earlier write failed", w->path);
    w->block.len = 0;
    if (pes_buf_reserve(&w->block, PES_BLOCK_HEADER_BYTES))
        return pes_error_set(err, PES_ERR_NOMEM, w->bytes, "%s: out of memory", w->path);
    w->block.len = PES_BLOCK_HEADER_BYTES;
    return 0;
}

static void writer_free(struct pes_trace_writer *w)
{
    if (w->f)
        fclose(w->f);
    ZSTD_freeCCtx(w->cctx);
    pes_access_codec_free(w->codec);
    pes_buf_free(&w->block);
    pes_buf_free(&w->frame);
    free(w->path);
    free(w);
}

struct pes_trace_writer *pes_trace_writer_open(const char *path, int overwrite,
                                               const struct pes_trace_info *info,
                                               const struct pes_writer_options *opt,
                                               struct pes_error *err)
{
    pes_err_clear(err);
    if (!path || !info) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_open: path and info are required");
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: cannot create: %s", path, strerror(errno));
        return NULL;
    }
    struct pes_trace_writer *w = calloc(1, sizeof *w);
    if (w)
        w->path = strdup(path);
    if (w && w->path) {
        w->f = fdopen(fd, "wb");
        w->cctx = ZSTD_createCCtx();
        w->codec = pes_access_codec_new();
    }
    if (!w || !w->path || !w->f || !w->cctx || !w->codec) {
        if (w && !w->f)
            close(fd);
        if (w)
            writer_free(w);
        else
            close(fd);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", path);
        return NULL;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    int level = opt && opt->zstd_level ? opt->zstd_level : 1;
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
    if (writer_begin(w, err) || pes_ser_info(&w->block, info) ||
        writer_emit(w, PES_BLOCK_HEADER, 0, 1, err)) {
        if (err && err->code == PES_OK)
            pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", path);
        writer_free(w);
        return NULL;
    }
    return w;
}

static int nomem(struct pes_trace_writer *w, struct pes_error *err)
{
    return pes_error_set(err, PES_ERR_NOMEM, w->bytes, "%s: out of memory", w->path);
}

int pes_trace_writer_module(struct pes_trace_writer *w, const struct pes_module *m,
                            struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || !m || (m->n_sites && !m->sites) || (m->n_bbs && !m->bbs))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_module: bad arguments");
    uint64_t end = (uint64_t)m->id_base + m->n_sites + m->n_bbs;
    if (end > PES_ID_CONTROL_FIRST)
        return pes_error_set(err, PES_ERR_ARG, w->bytes,
                           "%s: module %s: id range ends at %llu, inside the control ids",
                           w->path, m->name ? m->name : "", (unsigned long long)end);
    for (uint32_t i = 0; i < m->n_sites; i++)
        if (m->sites[i].id < m->id_base || m->sites[i].id - m->id_base >= m->n_sites)
            return pes_error_set(err, PES_ERR_ARG, w->bytes,
                               "%s: module %s: site %u has id %u outside [%u, %u)", w->path,
                               m->name ? m->name : "", i, m->sites[i].id, m->id_base,
                               m->id_base + m->n_sites);
    for (uint32_t i = 0; i < m->n_bbs; i++) {
        uint32_t base = m->id_base + m->n_sites;
        if (m->bbs[i].id < base || m->bbs[i].id - base >= m->n_bbs)
            return pes_error_set(err, PES_ERR_ARG, w->bytes,
                               "%s: module %s: bb %u has id %u outside [%u, %u)", w->path,
                               m->name ? m->name : "", i, m->bbs[i].id, base,
                               base + m->n_bbs);
    }
    if (writer_begin(w, err))
        return -1;
    if (pes_ser_module(&w->block, m))
        return nomem(w, err);
    uint64_t count = (uint64_t)m->n_sites + m->n_bbs;
    return writer_emit(w, PES_BLOCK_MODULE, 0, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count,
                       err);
}

int pes_trace_writer_thread(struct pes_trace_writer *w, const struct pes_thread *t,
                            struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || !t)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_thread: bad arguments");
    if (writer_begin(w, err))
        return -1;
    if (pes_ser_thread(&w->block, t))
        return nomem(w, err);
    return writer_emit(w, PES_BLOCK_THREAD, t->index, 1, err);
}

int pes_trace_writer_records(struct pes_trace_writer *w, uint32_t thread,
                             const struct pes_record *recs, size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !recs))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_records: bad arguments");
    size_t done = 0;
    do { /* n == 0 still writes one (empty) block */
        size_t k = n - done > PES_MAX_BLOCK_RECORDS ? PES_MAX_BLOCK_RECORDS : n - done;
        if (writer_begin(w, err))
            return -1;
        if (pes_access_encode(w->codec, recs + done, k, &w->block))
            return nomem(w, err);
        if (writer_emit(w, PES_BLOCK_ACCESS, thread, (uint32_t)k, err))
            return -1;
        done += k;
    } while (done < n);
    return 0;
}

int pes_trace_writer_events(struct pes_trace_writer *w, uint32_t thread,
                            const struct pes_event *ev, size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !ev))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_events: bad arguments");
    size_t done = 0;
    do {
        size_t k = n - done > PES_MAX_BLOCK_RECORDS ? PES_MAX_BLOCK_RECORDS : n - done;
        if (writer_begin(w, err))
            return -1;
        if (pes_events_encode(ev + done, k, &w->block))
            return nomem(w, err);
        if (writer_emit(w, PES_BLOCK_EVENTS, thread, (uint32_t)k, err))
            return -1;
        done += k;
    } while (done < n);
    return 0;
}

int pes_trace_writer_mappings(struct pes_trace_writer *w, const struct pes_mapping *m,
                              size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !m) || n > PES_MAX_READ_RECORDS)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_mappings: bad arguments");
    if (writer_begin(w, err))
        return -1;
    if (pes_ser_maps(&w->block, m, n))
        return nomem(w, err);
    return writer_emit(w, PES_BLOCK_MAPS, 0, (uint32_t)n, err);
}

int pes_trace_writer_close(struct pes_trace_writer *w, const struct pes_thread_totals *totals,
                           size_t n_totals, uint64_t end_ticks, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_close: no writer");
    int rc = 0;
    if (totals || n_totals) {
        if (n_totals && !totals)
            rc = pes_error_set(err, PES_ERR_ARG, w->bytes, "%s: totals missing", w->path);
        else if (n_totals > PES_MAX_READ_RECORDS)
            rc = pes_error_set(err, PES_ERR_ARG, w->bytes, "%s: too many totals", w->path);
        else if (writer_begin(w, err))
            rc = -1;
        else if (pes_ser_footer(&w->block, totals, n_totals, end_ticks))
            rc = nomem(w, err);
        else
            rc = writer_emit(w, PES_BLOCK_FOOTER, 0, (uint32_t)n_totals, err);
    }
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0 && rc == 0)
        rc = pes_error_set(err, PES_ERR_IO, w->bytes, "%s: close failed: %s", w->path,
                         strerror(errno));
    writer_free(w);
    return rc;
}

uint64_t pes_trace_writer_bytes(const struct pes_trace_writer *w)
{
    return w ? w->bytes : 0;
}
