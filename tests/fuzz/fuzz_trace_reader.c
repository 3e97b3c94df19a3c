/*
 * fuzz_trace_reader.c — libFuzzer target for the trace reader.
 *
 * Two kinds of input:
 *   - anything: read as a trace file (open_memory, next, index, block_at,
 *     load_tables, site/bb lookups);
 *   - "PAYL" + u16 type + u32 count + bytes: the bytes become the payload of a
 *     correctly framed block (valid zstd frame and checksum) after a valid
 *     HEADER, so the payload decoders see arbitrary content instead of
 *     checksum failures.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "trace_internal.h"

static int blocks_read; /* blocks returned by _next for the last input (seed checks) */

static void exercise(const uint8_t *data, size_t size)
{
    blocks_read = -1;
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(data, size, "fuzz", &err);
    if (!r)
        return;
    volatile uint64_t sink = 0;
    struct pes_block b;
    int blocks = 0;
    while (blocks++ < 100000 && pes_trace_reader_next(r, &b, &err) == 1) {
        for (size_t i = 0; b.records && i < b.n; i++) {
            sink += b.records[i].addr;
            const struct pes_site *s = pes_trace_reader_site(r, b.records[i].id);
            const struct pes_bb *bb = pes_trace_reader_bb(r, b.records[i].id);
            if (s)
                sink += strlen(s->file) + strlen(s->function);
            if (bb)
                sink += strlen(bb->label) + strlen(bb->function);
        }
        for (size_t i = 0; b.events && i < b.n; i++)
            sink += b.events[i].time;
        for (size_t i = 0; b.mappings && i < b.n; i++)
            sink += strlen(b.mappings[i].path);
        for (size_t i = 0; b.totals && i < b.n; i++)
            sink += b.totals[i].records;
        if (b.module)
            for (uint32_t i = 0; i < b.module->n_sites; i++)
                sink += strlen(b.module->sites[i].file);
        if (b.thread_info)
            sink += b.thread_info->tid;
        for (size_t i = 0; b.alloc_sites && i < b.n; i++) {
            const struct pes_alloc_site *a = pes_trace_reader_alloc_site(r, b.alloc_sites[i].id);
            if (a) /* merged: its last ip is readable */
                sink += a->ips[a->depth - 1] + b.alloc_sites[i].ips[0];
        }
    }
    blocks_read = blocks - 1;
    const char *msg;
    if (pes_trace_reader_truncated(r, &msg))
        sink += strlen(msg);
    struct pes_block_ref *refs;
    size_t n;
    if (pes_trace_reader_index(r, &refs, &n, &err) == 0) {
        for (size_t i = n; i-- > 0;)
            if (pes_trace_reader_block_at(r, &refs[i], &b, &err) == 1)
                sink += b.n;
        free(refs);
    }
    pes_trace_reader_load_tables(r, &err);
    for (uint32_t t = 0; t < pes_trace_reader_thread_count(r) && t < 1000; t++)
        if (pes_trace_reader_thread(r, t))
            sink++;
    (void)sink;
    pes_trace_reader_close(r);
}

/* Appends [index frame][zstd frame of header+payload] to out. */
static int add_block(struct pes_buf *out, uint32_t type, uint32_t thread, uint32_t count,
                     const uint8_t *payload, size_t plen)
{
    struct pes_buf blk = {0};
    if (pes_buf_reserve(&blk, PES_BLOCK_HEADER_BYTES + plen))
        return -1;
    pes_block_header_encode(blk.data, type, thread, count, plen);
    if (plen)
        memcpy(blk.data + PES_BLOCK_HEADER_BYTES, payload, plen);
    blk.len = PES_BLOCK_HEADER_BYTES + plen;
    size_t bound = ZSTD_compressBound(blk.len);
    if (pes_buf_reserve(out, PES_INDEX_BYTES + bound)) {
        pes_buf_free(&blk);
        return -1;
    }
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t cs =
        ZSTD_compress2(cc, out->data + out->len + PES_INDEX_BYTES, bound, blk.data, blk.len);
    ZSTD_freeCCtx(cc);
    pes_buf_free(&blk);
    if (ZSTD_isError(cs))
        return -1;
    struct pes_index_entry e = {type, thread, count, (uint32_t)cs};
    pes_index_encode(out->data + out->len, &e);
    out->len += PES_INDEX_BYTES + cs;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 10 && memcmp(data, "PAYL", 4) == 0) {
        uint16_t type;
        uint32_t count;
        memcpy(&type, data + 4, 2);
        memcpy(&count, data + 6, 4);
        struct pes_buf file = {0}, hdr = {0};
        struct pes_trace_info info = {.kind = PES_TRACE_FULL, .command = "fuzz"};
        if (pes_ser_info(&hdr, &info) == 0 &&
            add_block(&file, PES_BLOCK_HEADER, 0, 1, hdr.data, hdr.len) == 0 &&
            add_block(&file, type % 9, type == PES_BLOCK_THREAD ? 0 : 0, count, data + 10,
                      size - 10) == 0)
            exercise(file.data, file.len);
        pes_buf_free(&file);
        pes_buf_free(&hdr);
        return 0;
    }
    exercise(data, size);
    return 0;
}
