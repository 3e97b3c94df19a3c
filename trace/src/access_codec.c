/*
 * access_codec.c — ACCESS block payload: full-trace records, column-transposed
 * and predicted so that zstd sees long runs of zero bytes (design §3: "do not
 * LEB128 before zstd, transpose/delta instead").
 *
 *   id   residual = id XOR succ[prev id]        (successor predictor: loops
 *                                                 repeat the same id sequence)
 *   addr residual = zigzag(addr - (last[id] + stride[id]))  (per-id stride)
 *   extra         raw
 *
 * Each column is split into byte planes (all byte 0s, then all byte 1s, ...);
 * planes that are entirely zero are left out and marked absent in a 16-bit
 * mask. Predictor tables reset at each block so blocks decode independently.
 * Ids are sparse (module ranges, control ids near 2^32): open addressing.
 */
#include <stdlib.h>

#include "trace_internal.h"

/* One predictor entry; `gen` lets a block reset the table in O(1). */
struct slot {
    uint32_t key;
    uint32_t succ;    /* id that last followed `key` */
    uint32_t gen;
    uint32_t fresh;   /* no address seen yet for `key` */
    uint64_t last;    /* last address of `key` */
    uint64_t stride;  /* last stride of `key` */
};

struct pes_access_codec {
    struct slot *tab;
    uint32_t bits, used, gen;
    int planes;
    uint32_t *idr;
    uint64_t *ar;
    uint32_t *ex;
    size_t scratch_cap;
};

#define TAB_BITS_MIN 10

struct pes_access_codec *pes_access_codec_new(void)
{
    struct pes_access_codec *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->bits = TAB_BITS_MIN;
    c->tab = calloc((size_t)1 << c->bits, sizeof *c->tab);
    if (!c->tab) {
        free(c);
        return NULL;
    }
    c->gen = 1;
    c->planes = 1;
    return c;
}

void pes_access_codec_free(struct pes_access_codec *c)
{
    if (!c)
        return;
    free(c->tab);
    free(c->idr);
    free(c->ar);
    free(c->ex);
    free(c);
}

void pes_access_codec_set_planes(struct pes_access_codec *c, int planes) { c->planes = planes; }

static void codec_reset(struct pes_access_codec *c)
{
    c->used = 0;
    if (++c->gen == 0) {
        memset(c->tab, 0, ((size_t)1 << c->bits) * sizeof *c->tab);
        c->gen = 1;
    }
}

static inline uint32_t hash_id(uint32_t id, uint32_t bits)
{
    return (uint32_t)(id * 0x9E3779B1u) >> (32 - bits);
}

static int codec_grow(struct pes_access_codec *c)
{
    uint32_t nbits = c->bits + 1;
    struct slot *nt = calloc((size_t)1 << nbits, sizeof *nt);
    if (!nt)
        return -1;
    uint32_t mask = (1u << nbits) - 1;
    for (size_t i = 0; i < ((size_t)1 << c->bits); i++) {
        struct slot *s = &c->tab[i];
        if (s->gen != c->gen)
            continue;
        uint32_t h = hash_id(s->key, nbits);
        while (nt[h].gen == 1)
            h = (h + 1) & mask;
        nt[h] = *s;
        nt[h].gen = 1;
    }
    free(c->tab);
    c->tab = nt;
    c->bits = nbits;
    c->gen = 1;
    return 0;
}

/* Finds or inserts id. NULL only when growing the table fails. */
static inline struct slot *codec_slot(struct pes_access_codec *c, uint32_t id)
{
    uint32_t mask = (1u << c->bits) - 1;
    uint32_t h = hash_id(id, c->bits);
    for (;;) {
        struct slot *s = &c->tab[h];
        if (s->gen != c->gen)
            break;
        if (s->key == id)
            return s;
        h = (h + 1) & mask;
    }
    if ((c->used + 1) * 2 > (1u << c->bits)) {
        if (c->bits >= 30 || codec_grow(c))
            return NULL;
        return codec_slot(c, id);
    }
    struct slot *s = &c->tab[h];
    s->key = id;
    s->succ = 0;
    s->gen = c->gen;
    s->fresh = 1;
    s->last = 0;
    s->stride = 0;
    c->used++;
    return s;
}

static int scratch_reserve(struct pes_access_codec *c, size_t n)
{
    if (n <= c->scratch_cap)
        return 0;
    uint32_t *idr = realloc(c->idr, n * sizeof *idr);
    if (idr)
        c->idr = idr;
    uint64_t *ar = realloc(c->ar, n * sizeof *ar);
    if (ar)
        c->ar = ar;
    uint32_t *ex = realloc(c->ex, n * sizeof *ex);
    if (ex)
        c->ex = ex;
    if (!idr || !ar || !ex)
        return -1;
    c->scratch_cap = n;
    return 0;
}

static inline uint64_t zigzag(uint64_t v) { return (v << 1) ^ (uint64_t)((int64_t)v >> 63); }
static inline uint64_t unzigzag(uint64_t v) { return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1); }

size_t pes_access_payload_max(size_t n) { return 4 + n * 16; }

int pes_access_encode(struct pes_access_codec *c, const struct pes_record *r, size_t n,
                      struct pes_buf *out)
{
    if (scratch_reserve(c, n ? n : 1) || pes_buf_reserve(out, pes_access_payload_max(n)))
        return -1;
    codec_reset(c);
    struct slot start = {0};
    struct slot *prev = &start;
    uint32_t or_id = 0, or_ex = 0;
    uint64_t or_a = 0;
    uint32_t *idr = c->idr, *ex = c->ex;
    uint64_t *ar = c->ar;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r[i].id;
        idr[i] = id ^ prev->succ;
        prev->succ = id; /* before codec_slot: growing the table moves entries */
        struct slot *s = codec_slot(c, id);
        if (!s)
            return -1;
        uint64_t a = r[i].addr;
        ar[i] = zigzag(a - (s->last + s->stride));
        s->stride = s->fresh ? 0 : a - s->last;
        s->fresh = 0;
        s->last = a;
        ex[i] = r[i].extra;
        or_id |= idr[i];
        or_a |= ar[i];
        or_ex |= ex[i];
        prev = s;
    }
    uint8_t *p = out->data + out->len;
    if (!c->planes) {
        /* Plain little-endian columns, only for measurements (bench); not a file layout. */
        pes_store_u32(p, 1u << 16);
        p += 4;
        memcpy(p, idr, n * 4);
        memcpy(p + n * 4, ar, n * 8);
        memcpy(p + n * 12, ex, n * 4);
        out->len += 4 + n * 16;
        return 0;
    }
    uint32_t mask = 0;
    for (int k = 0; k < 4; k++)
        if ((or_id >> (8 * k)) & 0xff)
            mask |= 1u << k;
    for (int k = 0; k < 8; k++)
        if ((or_a >> (8 * k)) & 0xff)
            mask |= 1u << (4 + k);
    for (int k = 0; k < 4; k++)
        if ((or_ex >> (8 * k)) & 0xff)
            mask |= 1u << (12 + k);
    pes_store_u32(p, mask);
    p += 4;
    for (int k = 0; k < 4; k++)
        if (mask & (1u << k)) {
            for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t)(idr[i] >> (8 * k));
            p += n;
        }
    for (int k = 0; k < 8; k++)
        if (mask & (1u << (4 + k))) {
            for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t)(ar[i] >> (8 * k));
            p += n;
        }
    for (int k = 0; k < 4; k++)
        if (mask & (1u << (12 + k))) {
            for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t)(ex[i] >> (8 * k));
            p += n;
        }
    out->len = (size_t)(p - out->data);
    return 0;
}

int pes_access_decode(struct pes_access_codec *c, const uint8_t *payload, size_t size, size_t n,
                      struct pes_record *out, const char **why)
{
    if (size < 4) {
        *why = "ACCESS payload shorter than its 4-byte plane mask";
        return -1;
    }
    uint32_t mask = pes_load_u32(payload);
    if (mask >> 16) {
        *why = "ACCESS plane mask has unknown bits set";
        return -1;
    }
    size_t planes = (size_t)__builtin_popcount(mask);
    if ((size - 4) / (planes ? planes : 1) < n || size - 4 != planes * n ||
        (planes == 0 && size != 4)) {
        *why = "ACCESS payload size does not match record count and plane mask";
        return -1;
    }
    if (n == 0)
        return 0;
    if (scratch_reserve(c, n)) {
        *why = "out of memory";
        return -1;
    }
    uint32_t *idr = c->idr, *ex = c->ex;
    uint64_t *ar = c->ar;
    memset(idr, 0, n * 4);
    memset(ar, 0, n * 8);
    memset(ex, 0, n * 4);
    const uint8_t *p = payload + 4;
    for (int k = 0; k < 4; k++)
        if (mask & (1u << k)) {
            for (size_t i = 0; i < n; i++)
                idr[i] |= (uint32_t)p[i] << (8 * k);
            p += n;
        }
    for (int k = 0; k < 8; k++)
        if (mask & (1u << (4 + k))) {
            for (size_t i = 0; i < n; i++)
                ar[i] |= (uint64_t)p[i] << (8 * k);
            p += n;
        }
    for (int k = 0; k < 4; k++)
        if (mask & (1u << (12 + k))) {
            for (size_t i = 0; i < n; i++)
                ex[i] |= (uint32_t)p[i] << (8 * k);
            p += n;
        }
    codec_reset(c);
    struct slot start = {0};
    struct slot *prev = &start;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = idr[i] ^ prev->succ;
        prev->succ = id;
        struct slot *s = codec_slot(c, id);
        if (!s) {
            *why = "out of memory";
            return -1;
        }
        uint64_t a = unzigzag(ar[i]) + (s->last + s->stride);
        s->stride = s->fresh ? 0 : a - s->last;
        s->fresh = 0;
        s->last = a;
        out[i].addr = a;
        out[i].id = id;
        out[i].extra = ex[i];
        prev = s;
    }
    return 0;
}
