/*
 * trace_internal.h — shared pieces of the pes_trace library (not installed).
 * Layout constants, little-endian byte buffers, the error helper and the
 * per-block codecs. docs/trace-format.md is the normative description.
 */
#ifndef PES_TRACE_INTERNAL_H
#define PES_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pes/trace.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pes_trace assumes a little-endian host (the file format is little-endian)"
#endif

/* ---- layout */
#define PES_SKIPPABLE_MAGIC 0x184D2A50u /* zstd skippable frame, variant 0 */
#define PES_INDEX_PAYLOAD   16u         /* u32 type, thread, count, frame_size */
#define PES_INDEX_BYTES     (8u + PES_INDEX_PAYLOAD)
#define PES_BLOCK_HEADER_BYTES                                                                     \
    24u /* "PESB" u16 type u16 version u32 thread u32 count u64 payload */
#define PES_MAX_PAYLOAD       (256ull << 20) /* sanity cap on one block's payload */
#define PES_MAX_READ_RECORDS  (1u << 21)     /* reader cap on records/events in one block */
#define PES_MAX_BLOCK_RECORDS (1u << 20)     /* writer splits larger ACCESS/EVENTS batches */
#define PES_EVENT_BYTES       76u            /* one event, column-transposed (version 3) */
#define PES_EVENT_BYTES_V2    72u            /* the same in versions 1 and 2: no stack column */

/* ---- errors (error.c) */
void pes_err_clear(struct pes_error *err);

/* ---- growable output buffer (bytes.c) */
struct pes_buf {
    uint8_t *data;
    size_t len, cap;
};
int pes_buf_reserve(struct pes_buf *b, size_t extra); /* 0 ok, -1 nomem */
void pes_buf_free(struct pes_buf *b);
int pes_buf_put(struct pes_buf *b, const void *p, size_t n);
int pes_buf_u8(struct pes_buf *b, uint8_t v);
int pes_buf_u16(struct pes_buf *b, uint16_t v);
int pes_buf_u32(struct pes_buf *b, uint32_t v);
int pes_buf_u64(struct pes_buf *b, uint64_t v);
int pes_buf_str(struct pes_buf *b, const char *s); /* u32 length + bytes, NULL = "" */

/* ---- bounds-checked input cursor (bytes.c) */
struct pes_cur {
    const uint8_t *p, *end;
    int bad; /* set on the first overrun; later reads return 0 */
};
uint8_t pes_cur_u8(struct pes_cur *c);
uint16_t pes_cur_u16(struct pes_cur *c);
uint32_t pes_cur_u32(struct pes_cur *c);
uint64_t pes_cur_u64(struct pes_cur *c);
/* A string: returns pointer into the input and its length (not NUL-terminated). */
const uint8_t *pes_cur_str(struct pes_cur *c, uint32_t *len);
static inline size_t pes_cur_left(const struct pes_cur *c)
{
    return (size_t)(c->end - c->p);
}

static inline void pes_store_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static inline void pes_store_u64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static inline uint32_t pes_load_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t pes_load_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* ---- string arena for decoded strings (bytes.c): NUL-terminated copies */
struct pes_arena {
    struct pes_arena_chunk *head;
};
const char *pes_arena_strdup(struct pes_arena *a, const uint8_t *s, size_t n); /* NULL = nomem */
void *pes_arena_alloc(struct pes_arena *a, size_t n);                          /* zeroed */
void pes_arena_free(struct pes_arena *a);

/* ---- frame I/O (frame_io.c) */
struct pes_index_entry {
    uint32_t type, thread, count, frame_size;
};
void pes_index_encode(uint8_t out[PES_INDEX_BYTES], const struct pes_index_entry *e);
/* 0 ok; -1 if the bytes are not a pes index frame. */
int pes_index_decode(const uint8_t in[PES_INDEX_BYTES], struct pes_index_entry *e);
/* Fills the 24-byte block header at out. */
void pes_block_header_encode(uint8_t *out, uint32_t type, uint32_t thread, uint32_t count,
                             uint64_t payload_bytes);
/* Largest compressed frame we accept for one block. */
size_t pes_frame_max(void);

/* ---- ACCESS codec (access_codec.c) */
/* Predictor state reused across blocks (reset at each block start). */
struct pes_access_codec;
struct pes_access_codec *pes_access_codec_new(void);
void pes_access_codec_free(struct pes_access_codec *c);
/* Appends the payload for n records to out. */
int pes_access_encode(struct pes_access_codec *c, const struct pes_record *r, size_t n,
                      struct pes_buf *out);
/* The same when the caller knows whether r[0..n) holds a LOOP record
 * (grouped: pes_loop_walk counted groups), which spares a pass over a block
 * of up to 16 MiB; the payload is the same as pes_access_encode's only when
 * grouped is right. */
int pes_access_encode_groups(struct pes_access_codec *c, const struct pes_record *r, size_t n,
                             int grouped, struct pes_buf *out);
/* Bytes the payload of n records takes at most (for reservations). */
size_t pes_access_payload_max(size_t n);
/* Decodes a payload of exactly `size` bytes holding n records into out[n].
 * Returns 0, or -1 with *why set to a static description. */
int pes_access_decode(struct pes_access_codec *c, const uint8_t *payload, size_t size, size_t n,
                      struct pes_record *out, const char **why);
/* Plane layout switch for measurements (bench): 1 = byte planes (default), 0 = plain columns. */
void pes_access_codec_set_planes(struct pes_access_codec *c, int planes);

/* ---- loop descriptor groups (loop.c) */
/* What pes_loop_walk found: on error, why and the index of the bad record. */
struct pes_loop_walk {
    size_t stored;     /* records walked: plain ones and whole groups */
    uint64_t expanded; /* the records they stand for */
    size_t groups;     /* loop descriptor groups among them */
    size_t base;       /* index of rec[0] in messages and `at` */
    int mixed;         /* irregular templates allowed (version 3) */
    size_t at;         /* on error: the record that is wrong */
    char why[200];
};
/* Index of the first LOOP or LOOP_STEP record of rec[0..n), or n. */
size_t pes_loop_find(const struct pes_record *rec, size_t n);
/* Walks rec[0..n) a unit at a time (a plain record or a whole group) and
 * stops before the first unit that would take the expanded count past
 * max_expanded or the stored count past max_stored (w->stored < n then).
 * Messages name records by index + base. mixed: irregular templates and
 * their records are allowed (version 3). 0, or -1 for a malformed group
 * or a stray LOOP_STEP (w->why, w->at). */
int pes_loop_walk(const struct pes_record *rec, size_t n, size_t base, uint64_t max_expanded,
                  size_t max_stored, int mixed, struct pes_loop_walk *w);
/* Writes the records rec[0..n) stand for to out: n must be a run that
 * pes_loop_walk accepted whole; out has room for its `expanded`. */
void pes_loop_expand(const struct pes_record *rec, size_t n, struct pes_record *out);

/* ---- EVENTS codec (event_codec.c) */
int pes_events_encode(const struct pes_event *ev, size_t n, struct pes_buf *out);
/* version: the block's; before 3 there is no stack column (PES_STACK_NONE). */
int pes_events_decode(const uint8_t *payload, size_t size, size_t n, unsigned version,
                      struct pes_event *out, const char **why);

/* ---- block production (encoder.c), shared by the public encoder and the
 * writer. Each call replaces the encoder's output (pes_trace_encoder_output)
 * with the block(s) it made; on error the output is empty and err names
 * `name` (a file path, or "pes_trace_encoder") at `offset`. Arguments are
 * checked by the callers. */
int pes_encoder_header(struct pes_trace_encoder *e, const struct pes_trace_info *info,
                       const char *name, struct pes_error *err);
int pes_encoder_footer(struct pes_trace_encoder *e, const struct pes_thread_totals *totals,
                       size_t n, uint64_t end_ticks, const char *name, uint64_t offset,
                       struct pes_error *err);
int pes_encoder_module(struct pes_trace_encoder *e, const struct pes_module *m, const char *name,
                       uint64_t offset, struct pes_error *err);
int pes_encoder_thread(struct pes_trace_encoder *e, const struct pes_thread *t, const char *name,
                       uint64_t offset, struct pes_error *err);
int pes_encoder_records(struct pes_trace_encoder *e, uint32_t thread, const struct pes_record *recs,
                        size_t n, const char *name, uint64_t offset, struct pes_error *err);
int pes_encoder_events(struct pes_trace_encoder *e, uint32_t thread, const struct pes_event *ev,
                       size_t n, const char *name, uint64_t offset, struct pes_error *err);
int pes_encoder_mappings(struct pes_trace_encoder *e, const struct pes_mapping *m, size_t n,
                         const char *name, uint64_t offset, struct pes_error *err);
/* Checks each site (depth, kind, id) and makes one ALLOC_SITES block. */
int pes_encoder_alloc_sites(struct pes_trace_encoder *e, const struct pes_alloc_site *s, size_t n,
                            const char *name, uint64_t offset, struct pes_error *err);

/* ---- simple payloads (serialize.c); decoders return 0 or -1 with *why */
int pes_ser_info(struct pes_buf *b, const struct pes_trace_info *info);
int pes_de_info(const uint8_t *p, size_t size, struct pes_trace_info *info, struct pes_arena *a,
                const char **why);
/* version: the payload layout to write or read (version 4 on: the BB facts). */
int pes_ser_module(struct pes_buf *b, const struct pes_module *m, unsigned version);
/* Decoded module: arrays and strings live in the arena. */
int pes_de_module(const uint8_t *p, size_t size, struct pes_module *m, struct pes_arena *a,
                  unsigned version, const char **why);
int pes_ser_thread(struct pes_buf *b, const struct pes_thread *t);
int pes_de_thread(const uint8_t *p, size_t size, struct pes_thread *t, const char **why);
int pes_ser_maps(struct pes_buf *b, const struct pes_mapping *m, size_t n);
int pes_de_maps(const uint8_t *p, size_t size, size_t n, struct pes_mapping *out,
                struct pes_arena *a, const char **why);
/* ALLOC_SITES: count x {u32 id, u32 kind, u32 depth, u64 ip[depth]}. The
 * decoder checks depth 1..8, kind, id != PES_ALLOC_SITE_STACK and the exact
 * payload size; ips live in the arena. On error *why may point to why_buf. */
#define PES_ALLOC_SITE_MIN_BYTES 20u
int pes_ser_alloc_sites(struct pes_buf *b, const struct pes_alloc_site *s, size_t n);
int pes_de_alloc_sites(const uint8_t *p, size_t size, size_t n, struct pes_alloc_site *out,
                       struct pes_arena *a, char *why_buf, size_t why_size, const char **why);
int pes_ser_footer(struct pes_buf *b, const struct pes_thread_totals *t, size_t n,
                   uint64_t end_ticks);
int pes_de_footer(const uint8_t *p, size_t size, size_t n, struct pes_thread_totals *out,
                  uint64_t *end_ticks, const char **why);

#endif
