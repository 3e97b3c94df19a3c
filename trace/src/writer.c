/*
 * writer.c — pes_trace_writer: appends blocks to the file. Its own encoder
 * (encoder.c) makes the HEADER, the FOOTER and the blocks given to the
 * writer_* calls; pes_trace_writer_append takes blocks that other encoders
 * made, possibly on other threads, so the file is the same either way.
 *
 * Blocks go to the file with write(2) as they come, not through a stdio
 * buffer: a process that ends without closing the writer (_exit, exec, a
 * crash) leaves every block appended so far on disk, and a forked child that
 * exits has no copy of buffered bytes to write a second time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace_internal.h"

struct pes_trace_writer {
    int fd; /* -1 once closed */
    char *path;
    struct pes_trace_encoder *enc; /* blocks given as items, HEADER and FOOTER */
    uint64_t bytes;
    int failed; /* an earlier write failed: refuse further blocks */
};

static int refuse_if_failed(const struct pes_trace_writer *w, struct pes_error *err)
{
    if (w->failed)
        return pes_error_set(err, PES_ERR_IO, w->bytes, "%s: an earlier write failed", w->path);
    return 0;
}

/* Appends bytes that are whole blocks; a short write marks the writer failed
 * (the file then ends with an incomplete block, which readers report). */
static int writer_put(struct pes_trace_writer *w, const void *bytes, size_t size,
                      struct pes_error *err)
{
    const uint8_t *p = bytes;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(w->fd, p + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->failed = 1;
            w->bytes += done;
            return pes_error_set(err, PES_ERR_IO, w->bytes, "%s: write failed: %s", w->path,
                                 n < 0 ? strerror(errno) : "no progress");
        }
        done += (size_t)n;
    }
    w->bytes += size;
    return 0;
}

/* Appends what the writer's own encoder produced (rc = its result). */
static int writer_put_encoded(struct pes_trace_writer *w, int rc, struct pes_error *err)
{
    if (rc)
        return -1;
    size_t size;
    const void *bytes = pes_trace_encoder_output(w->enc, &size);
    return writer_put(w, bytes, size, err);
}

static void writer_free(struct pes_trace_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    pes_trace_encoder_free(w->enc);
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
    if (!w) {
        close(fd);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", path);
        return NULL;
    }
    w->fd = fd;
    w->path = strdup(path);
    w->enc = pes_trace_encoder_new(opt, NULL);
    if (!w->path || !w->enc) {
        writer_free(w);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", path);
        return NULL;
    }
    if (writer_put_encoded(w, pes_encoder_header(w->enc, info, path, err), err)) {
        if (err && err->code == PES_OK)
            pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", path);
        writer_free(w);
        return NULL;
    }
    return w;
}

int pes_trace_writer_append(struct pes_trace_writer *w, const void *bytes, size_t size,
                            struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || !bytes || !size)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_append: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    /* Whole blocks only, and never a second HEADER or an early FOOTER: a
     * caller's mistake must not make the file unreadable. Only the index
     * frames are looked at; the data frames were made by an encoder. */
    const uint8_t *p = bytes;
    size_t off = 0;
    while (off < size) {
        struct pes_index_entry e;
        if (size - off < PES_INDEX_BYTES || pes_index_decode(p + off, &e) ||
            e.frame_size > size - off - PES_INDEX_BYTES)
            return pes_error_set(err, PES_ERR_ARG, w->bytes,
                                 "%s: append: bytes at %zu are not a whole encoded block", w->path,
                                 off);
        if (e.type == PES_BLOCK_HEADER || e.type == PES_BLOCK_FOOTER)
            return pes_error_set(err, PES_ERR_ARG, w->bytes,
                                 "%s: append: a %s block is written by open/close only", w->path,
                                 pes_block_type_name(e.type));
        off += PES_INDEX_BYTES + e.frame_size;
    }
    return writer_put(w, bytes, size, err);
}

int pes_trace_writer_module(struct pes_trace_writer *w, const struct pes_module *m,
                            struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || !m || (m->n_sites && !m->sites) || (m->n_bbs && !m->bbs))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_module: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    return writer_put_encoded(w, pes_encoder_module(w->enc, m, w->path, w->bytes, err), err);
}

int pes_trace_writer_thread(struct pes_trace_writer *w, const struct pes_thread *t,
                            struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || !t)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_thread: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    return writer_put_encoded(w, pes_encoder_thread(w->enc, t, w->path, w->bytes, err), err);
}

int pes_trace_writer_records(struct pes_trace_writer *w, uint32_t thread,
                             const struct pes_record *recs, size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !recs))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_records: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    return writer_put_encoded(
        w, pes_encoder_records(w->enc, thread, recs, n, w->path, w->bytes, err), err);
}

int pes_trace_writer_events(struct pes_trace_writer *w, uint32_t thread, const struct pes_event *ev,
                            size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !ev))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_events: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    return writer_put_encoded(w, pes_encoder_events(w->enc, thread, ev, n, w->path, w->bytes, err),
                              err);
}

int pes_trace_writer_mappings(struct pes_trace_writer *w, const struct pes_mapping *m, size_t n,
                              struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !m) || n > PES_MAX_READ_RECORDS)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_mappings: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    return writer_put_encoded(w, pes_encoder_mappings(w->enc, m, n, w->path, w->bytes, err), err);
}

int pes_trace_writer_alloc_sites(struct pes_trace_writer *w, const struct pes_alloc_site *s,
                                 size_t n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!w || (n && !s))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_trace_writer_alloc_sites: bad arguments");
    if (refuse_if_failed(w, err))
        return -1;
    return writer_put_encoded(w, pes_encoder_alloc_sites(w->enc, s, n, w->path, w->bytes, err),
                              err);
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
        else if (refuse_if_failed(w, err))
            rc = -1;
        else
            rc = writer_put_encoded(
                w, pes_encoder_footer(w->enc, totals, n_totals, end_ticks, w->path, w->bytes, err),
                err);
    }
    int fd = w->fd;
    w->fd = -1;
    if (close(fd) != 0 && rc == 0)
        rc = pes_error_set(err, PES_ERR_IO, w->bytes, "%s: close failed: %s", w->path,
                           strerror(errno));
    writer_free(w);
    return rc;
}

uint64_t pes_trace_writer_bytes(const struct pes_trace_writer *w)
{
    return w ? w->bytes : 0;
}
