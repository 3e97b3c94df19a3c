/*
 * trace_forge.h — blocks forged byte by byte for the trace tests: what the
 * encoder refuses to make (malformed groups, records a version does not have).
 * Needs trace/src (trace_internal.h) on the include path and zstd.
 */
#ifndef PES_TRACE_FORGE_H
#define PES_TRACE_FORGE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zstd.h>

#include "trace_internal.h"

/* Appends one block as docs/trace-format.md §1 lays it out, with any version. */
static inline uint64_t tt_forge_block(struct pes_buf *f, uint16_t version, uint32_t type,
                                      uint32_t thread, uint32_t count,
                                      const struct pes_buf *payload)
{
    uint64_t at = f->len;
    size_t len = 24 + payload->len;
    uint8_t *content = malloc(len);
    memcpy(content, "PESB", 4);
    uint16_t t16 = (uint16_t)type;
    memcpy(content + 4, &t16, 2);
    memcpy(content + 6, &version, 2);
    memcpy(content + 8, &thread, 4);
    memcpy(content + 12, &count, 4);
    uint64_t pl = payload->len;
    memcpy(content + 16, &pl, 8);
    memcpy(content + 24, payload->data, payload->len);
    size_t bound = ZSTD_compressBound(len);
    assert_int_equal(pes_buf_reserve(f, 24 + bound), 0);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t cs = ZSTD_compress2(cc, f->data + f->len + 24, bound, content, len);
    ZSTD_freeCCtx(cc);
    free(content);
    assert_false(ZSTD_isError(cs));
    uint32_t index[6] = {0x184D2A50u, 16, type, thread, count, (uint32_t)cs};
    memcpy(f->data + f->len, index, 24);
    f->len += 24 + cs;
    return at;
}

#endif
