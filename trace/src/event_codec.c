/*
 * event_codec.c — EVENTS block payload: the fields of struct pes_event stored
 * as columns (all kinds, then all flags, ...). Monotonic counters (time, loads,
 * stores) are stored as differences to the previous event, which zstd turns
 * into a few bits each; everything else is raw. Version 3 appends the stack
 * column (raw u32); older payloads lack it and read as PES_STACK_NONE.
 */
#include "trace_internal.h"

/* one column per field, in the stored order */
// clang-format off
#define COLS_V2(X)                                                            \
    X(kind, 1) X(flags, 1) X(size, 2) X(thread, 4) X(other_thread, 4)         \
    X(site, 4) X(addr, 8) X(ip, 8) X(time, 8) X(loads, 8) X(stores, 8)        \
    X(distance, 8) X(aux, 8)
#define COLS(X)                                                               \
    X(kind, 1) X(flags, 1) X(size, 2) X(thread, 4) X(other_thread, 4)         \
    X(site, 4) X(addr, 8) X(ip, 8) X(time, 8) X(loads, 8) X(stores, 8)        \
    X(distance, 8) X(aux, 8) X(stack, 4)
// clang-format on

int pes_events_encode(const struct pes_event *ev, size_t n, struct pes_buf *out)
{
    if (pes_buf_reserve(out, n * PES_EVENT_BYTES))
        return -1;
    uint8_t *p = out->data + out->len;
#define ENC(field, w)                                                                              \
    {                                                                                              \
        uint64_t prev = 0;                                                                         \
        for (size_t i = 0; i < n; i++) {                                                           \
            uint64_t v = (uint64_t)ev[i].field;                                                    \
            uint64_t d = v;                                                                        \
            if (delta_##field)                                                                     \
                d = v - prev;                                                                      \
            prev = v;                                                                              \
            memcpy(p, &d, w); /* little-endian host: low w bytes */                                \
            p += w;                                                                                \
        }                                                                                          \
    }
    enum {
        delta_kind = 0,
        delta_flags = 0,
        delta_size = 0,
        delta_thread = 0,
        delta_other_thread = 0,
        delta_site = 0,
        delta_addr = 0,
        delta_ip = 0,
        delta_time = 1,
        delta_loads = 1,
        delta_stores = 1,
        delta_distance = 0,
        delta_aux = 0,
        delta_stack = 0
    };
    COLS(ENC)
#undef ENC
    out->len += n * PES_EVENT_BYTES;
    return 0;
}

int pes_events_decode(const uint8_t *payload, size_t size, size_t n, unsigned version,
                      struct pes_event *out, const char **why)
{
    size_t per = version >= 3 ? PES_EVENT_BYTES : PES_EVENT_BYTES_V2;
    if (size / per != n || size % per) {
        *why = version >= 3 ? "EVENTS payload size is not 76 bytes per event"
                            : "EVENTS payload size is not 72 bytes per event";
        return -1;
    }
    if (version < 3) /* the stack column is absent: no event has a stack */
        for (size_t i = 0; i < n; i++)
            out[i].stack = PES_STACK_NONE;
    const uint8_t *p = payload;
    enum {
        delta_kind = 0,
        delta_flags = 0,
        delta_size = 0,
        delta_thread = 0,
        delta_other_thread = 0,
        delta_site = 0,
        delta_addr = 0,
        delta_ip = 0,
        delta_time = 1,
        delta_loads = 1,
        delta_stores = 1,
        delta_distance = 0,
        delta_aux = 0,
        delta_stack = 0
    };
#define DEC(field, w)                                                                              \
    {                                                                                              \
        uint64_t prev = 0;                                                                         \
        for (size_t i = 0; i < n; i++) {                                                           \
            uint64_t d = 0;                                                                        \
            memcpy(&d, p, w);                                                                      \
            p += w;                                                                                \
            if (delta_##field)                                                                     \
                d += prev;                                                                         \
            prev = d;                                                                              \
            out[i].field = (__typeof__(out[i].field))d;                                            \
        }                                                                                          \
    }
    if (version >= 3) {
        COLS(DEC)
    } else {
        COLS_V2(DEC)
    }
#undef DEC
    return 0;
}
