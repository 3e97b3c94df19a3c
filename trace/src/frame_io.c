/*
 * frame_io.c — the two frames of a block: the 24-byte zstd *skippable* index
 * frame (ignored by zstd/zstdcat, read by pes_trace_reader_index) and the
 * 24-byte block header that starts the decompressed content of the data frame.
 */
#include <zstd.h>

#include "trace_internal.h"

void pes_index_encode(uint8_t out[PES_INDEX_BYTES], const struct pes_index_entry *e)
{
    pes_store_u32(out + 0, PES_SKIPPABLE_MAGIC);
    pes_store_u32(out + 4, PES_INDEX_PAYLOAD);
    pes_store_u32(out + 8, e->type);
    pes_store_u32(out + 12, e->thread);
    pes_store_u32(out + 16, e->count);
    pes_store_u32(out + 20, e->frame_size);
}

int pes_index_decode(const uint8_t in[PES_INDEX_BYTES], struct pes_index_entry *e)
{
    if (pes_load_u32(in) != PES_SKIPPABLE_MAGIC || pes_load_u32(in + 4) != PES_INDEX_PAYLOAD)
        return -1;
    e->type = pes_load_u32(in + 8);
    e->thread = pes_load_u32(in + 12);
    e->count = pes_load_u32(in + 16);
    e->frame_size = pes_load_u32(in + 20);
    return 0;
}

void pes_block_header_encode(uint8_t *out, uint32_t type, uint32_t thread, uint32_t count,
                             uint64_t payload_bytes)
{
    uint16_t t16 = (uint16_t)type, v16 = (uint16_t)PES_TRACE_VERSION;
    memcpy(out, PES_TRACE_MAGIC, 4);
    memcpy(out + 4, &t16, 2);
    memcpy(out + 6, &v16, 2);
    pes_store_u32(out + 8, thread);
    pes_store_u32(out + 12, count);
    pes_store_u64(out + 16, payload_bytes);
}

size_t pes_frame_max(void)
{
    return ZSTD_compressBound(PES_MAX_PAYLOAD + PES_BLOCK_HEADER_BYTES);
}
