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
 * In loop code almost every residual is zero, so each column is stored as a
 * bitmap of its non-zero residuals followed by only those residuals, split
 * into byte planes (all byte 0s, then all byte 1s, ...); planes that are
 * entirely zero are left out (16-bit plane mask). This keeps zstd's input
 * small (measured: ~4x faster than feeding it every residual, same size).
 * Predictor tables reset at each block so blocks decode independently.
 * Ids are sparse (module ranges, control ids near 2^32): open addressing.
 */
#include <stdlib.h>

#include "trace_internal.h"

/* One predictor entry; `gen` lets a block reset the table in O(1). */
struct slot {
    uint32_t key;
    uint32_t succ; /* id that last followed `key` */
    uint32_t gen;
    uint32_t fresh;  /* no address seen yet for `key` */
    uint32_t next;   /* encoder: 1 + index of `succ`'s entry, 0 unknown (saves its lookup) */
    uint64_t last;   /* last address of `key` */
    uint64_t stride; /* last stride of `key` (with TWO_DELTA: last confirmed) */
    uint64_t delta;  /* TWO_DELTA: the last difference of `key`'s addresses */
};

/* Plane-mask bit 17 (written since loop groups continue their sites'
 * predictors): inside a loop descriptor group (§3.2) a template's address is
 * predicted from its site's entry as the record the group's first iteration
 * would make, a step from the stride of its template's site, and after the
 * steps each affine template's site entry holds what the group's expanded
 * records would have left there: its last address and its step. A group cut
 * by a time mark then continues in the next with zero residuals, and so do
 * the per-access records of the same sites after it. Without the bit every
 * record is predicted alone (§3.1); the writer sets it only in blocks that
 * hold a LOOP record, so a trace without groups is as before. */
#define GROUP_PREDICT (1u << 17)

/* Plane-mask bit 18 (written with bit 17, in the blocks that hold a LOOP
 * record): a two-delta stride. A site's stride changes only when the same
 * difference comes twice in a row, so one jump (a row's start after the
 * previous row's end, a short row of cg whose remainder iterations moved
 * the start) costs one residual, not two, and an irregular site (x[col[k]])
 * is predicted from its last address alone rather than extrapolated from
 * two random ones. */
#define TWO_DELTA (1u << 18)

/* After a record at `a` of site s, predicted alone (§3.1; TWO_DELTA §3.6). */
static inline __attribute__((always_inline)) void slot_update(struct slot *s, uint64_t a,
                                                              int two_delta)
{
    uint64_t d = a - s->last;
    if (two_delta) {
        if (!s->fresh && d == s->delta)
            s->stride = d;
        s->delta = s->fresh ? 0 : d;
    } else {
        s->stride = s->fresh ? 0 : d;
    }
    s->fresh = 0;
    s->last = a;
}

/* The group being read: `pos` counts its records after the LOOP header,
 * templates then steps; outside a group pos == len == 0. */
struct group {
    uint64_t R;
    uint32_t m, phase, pos, len;
    uint32_t id[PES_LOOP_MAX_RECORDS];
    uint64_t addr[PES_LOOP_MAX_RECORDS];
};

struct pes_access_codec {
    struct slot *tab;
    uint32_t bits, used, gen;
    int planes;
    uint32_t *idr;
    uint64_t *ar;
    uint32_t *ex;
    uint8_t *bm; /* three non-zero bitmaps */
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
    free(c->bm);
    free(c);
}

void pes_access_codec_set_planes(struct pes_access_codec *c, int planes)
{
    c->planes = planes;
}

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
        nt[h].next = 0; /* indexes into the old table */
    }
    free(c->tab);
    c->tab = nt;
    c->bits = nbits;
    c->gen = 1;
    return 0;
}

/* The predictor table in locals for the hot loops: the record and column
 * arrays are uint32_t/uint64_t too, so without copies the compiler must
 * reload every table field after each store. */
struct table {
    struct slot *tab;
    uint32_t bits, used, gen, mask;
};

static inline void table_load(struct table *t, const struct pes_access_codec *c)
{
    *t = (struct table){c->tab, c->bits, c->used, c->gen, (1u << c->bits) - 1};
}

static inline void table_store(const struct table *t, struct pes_access_codec *c)
{
    c->tab = t->tab;
    c->bits = t->bits;
    c->used = t->used;
    c->gen = t->gen;
}

/* Inserts id at h, the empty entry its probe ended on, growing the table
 * first when it would be more than half full. NULL when growing fails. */
static __attribute__((noinline)) struct slot *
table_insert(struct table *t, struct pes_access_codec *c, uint32_t id, uint32_t h)
{
    if ((t->used + 1) * 2 > t->mask + 1) {
        table_store(t, c);
        if (c->bits >= 30 || codec_grow(c))
            return NULL;
        table_load(t, c);
        h = hash_id(id, t->bits); /* id is not in the table: probe to an empty entry */
        while (t->tab[h].gen == t->gen)
            h = (h + 1) & t->mask;
    }
    struct slot *s = &t->tab[h];
    *s = (struct slot){.key = id, .gen = t->gen, .fresh = 1};
    t->used++;
    return s;
}

/* Finds or inserts id. NULL only when growing the table fails. Growth only
 * on insertion, so a hit costs the hash and the probe alone; the table stays
 * at most half full either way, and its capacity never changes a residual. */
static inline __attribute__((always_inline)) struct slot *
table_slot(struct table *t, struct pes_access_codec *c, uint32_t id)
{
    uint32_t h = hash_id(id, t->bits);
    for (;;) {
        struct slot *s = &t->tab[h];
        if (s->gen != t->gen)
            break;
        if (s->key == id)
            return s;
        h = (h + 1) & t->mask;
    }
    return table_insert(t, c, id, h);
}

/* The encoder's lookup of record id after prev's entry: when the successor
 * predictor was right the entry is the one prev remembers (the caller zeroes
 * prev->next when it was wrong), with no hash or probe; else the table's,
 * remembered in prev unless the lookup grew the table (which moved prev and
 * dropped every remembered index). */
static inline __attribute__((always_inline)) struct slot *
table_next(struct table *t, struct pes_access_codec *c, struct slot *prev, uint32_t id)
{
    if (__builtin_expect(prev->next != 0, 1))
        return &t->tab[prev->next - 1];
    const struct slot *old = t->tab;
    struct slot *s = table_slot(t, c, id);
    if (s && t->tab == old)
        prev->next = (uint32_t)(s - t->tab) + 1;
    return s;
}

static int scratch_reserve(struct pes_access_codec *c, size_t n)
{
    if (n <= c->scratch_cap)
        return 0;
    size_t nb = (n + 7) / 8;
    uint32_t *idr = realloc(c->idr, n * sizeof *idr);
    if (idr)
        c->idr = idr;
    uint64_t *ar = realloc(c->ar, n * sizeof *ar);
    if (ar)
        c->ar = ar;
    uint32_t *ex = realloc(c->ex, n * sizeof *ex);
    if (ex)
        c->ex = ex;
    uint8_t *bm = realloc(c->bm, 3 * nb);
    if (bm)
        c->bm = bm;
    if (!idr || !ar || !ex || !bm)
        return -1;
    c->scratch_cap = n;
    return 0;
}

/* A LOOP header with a plausible shape opens a group (malformed ones are
 * the loop checks' business: prediction only has to be the same both ways). */
static inline void group_open(struct group *g, uint64_t R, uint32_t extra)
{
    uint32_t m = extra & 0xffffu, phase = extra >> 16;
    g->pos = g->len = 0;
    if (m >= 1 && m <= PES_LOOP_MAX_RECORDS && phase < m && R >= 1) {
        g->R = R;
        g->m = m;
        g->phase = phase;
        g->len = 2 * m;
    }
}

/* Predicted address of template j: its site's next record, moved back to the
 * group's first iteration (positions before `phase` first appear in the second). */
static inline uint64_t group_template(const struct group *g, uint32_t j, const struct slot *s)
{
    return j < g->phase ? s->last : s->last + s->stride;
}

/* After step j (`step`, irregular when extra != 0) of template site s: the
 * entry as the group's records at position j leave it, or, irregular, as
 * predicts its first irregular record from the template. */
static inline void group_step(const struct group *g, uint32_t j, struct slot *s, uint64_t step,
                              uint32_t extra)
{
    uint64_t n = pes_trace_loop_times(g->R, g->m, g->phase, j);
    if (n == 0)
        return;
    if (extra) { /* irregular: its first record, which the template repeats, predicts exactly */
        s->last = g->addr[j] - s->stride;
        return;
    }
    uint64_t u_end = g->phase + g->R - 1; /* position of the group's last record */
    uint64_t i_last = (u_end - (u_end - j) % g->m) / g->m;
    s->last = g->addr[j] + i_last * step;
    s->stride = step;
    s->delta = step; /* confirmed, for TWO_DELTA */
    s->fresh = 0;
}

static int has_loop(const struct pes_record *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].id == PES_ID_LOOP)
            return 1;
    return 0;
}

static inline uint64_t zigzag(uint64_t v)
{
    return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}
static inline uint64_t unzigzag(uint64_t v)
{
    return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

#define HDR_BYTES 16u /* u32 plane mask, u32 non-zero counts of id, addr, extra */

size_t pes_access_payload_max(size_t n)
{
    return HDR_BYTES + 3 * ((n + 7) / 8) + n * 16;
}

/* Writes the byte planes of values[0..k) (width 4 or 8 bytes each) selected
 * by mask bits [first, first+width),
 * a tile at a time: a block's column (up to 8 MiB) is read once, not once
 * per plane. */
enum { PLANE_TILE = 2048 };

/* always inlined: each caller's constant width gives it its own loop */
static inline __attribute__((always_inline)) uint8_t *
put_planes(uint8_t *p, const void *values, int width, size_t k, uint32_t mask, int first)
{
    const uint32_t *v32 = values;
    const uint64_t *v64 = values;
    uint8_t *dst[8];
    int np = 0;
    for (int b = 0; b < width; b++)
        if (mask & (1u << (first + b))) {
            dst[np] = p + (size_t)np * k;
            np++;
        }
    for (size_t i0 = 0; i0 < k; i0 += PLANE_TILE) {
        size_t lim = k - i0 < PLANE_TILE ? k - i0 : PLANE_TILE;
        for (int b = 0, q = 0; b < width; b++)
            if (mask & (1u << (first + b))) {
                uint8_t *d = dst[q++] + i0;
                for (size_t i = 0; i < lim; i++)
                    d[i] = (uint8_t)((width == 4 ? v32[i0 + i] : v64[i0 + i]) >> (8 * b));
            }
    }
    return p + (size_t)np * k;
}

static uint32_t plane_bits(uint64_t or_value, int width, int first)
{
    uint32_t m = 0;
    for (int b = 0; b < width; b++)
        if ((or_value >> (8 * b)) & 0xff)
            m |= 1u << (first + b);
    return m;
}

int pes_access_encode(struct pes_access_codec *c, const struct pes_record *r, size_t n,
                      struct pes_buf *out)
{
    return pes_access_encode_groups(c, r, n, has_loop(r, n), out);
}

int pes_access_encode_groups(struct pes_access_codec *c, const struct pes_record *r, size_t n,
                             int grouped, struct pes_buf *out)
{
    if (scratch_reserve(c, n ? n : 1) || pes_buf_reserve(out, pes_access_payload_max(n)))
        return -1;
    codec_reset(c);
    struct table t;
    table_load(&t, c);
    struct slot start = {0};
    struct slot *prev = &start;
    uint32_t *restrict idr = c->idr, *restrict ex = c->ex;
    uint64_t *restrict ar = c->ar;
    size_t nb = (n + 7) / 8;
    uint8_t *restrict bm_id = c->bm, *restrict bm_a = c->bm + nb, *restrict bm_e = c->bm + 2 * nb;
    size_t kid = 0, ka = 0, ke = 0;
    uint32_t or_id = 0, or_ex = 0;
    uint64_t or_a = 0;
    struct group g = {0};
    /* grouped (a LOOP record): the block takes GROUP_PREDICT and TWO_DELTA,
     * and a block without one is as before either */
    grouped = grouped != 0;
    /* Two passes per chunk of CHUNK records (L1-resident): the serial
     * predictor pass with few live values, then simple compaction loops. */
    enum { CHUNK = 1024 };
    uint32_t vid_chunk[CHUNK];
    uint64_t va_chunk[CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t lim = n - i0 < CHUNK ? n - i0 : CHUNK;
        const struct pes_record *rc = r + i0;
        for (size_t j = 0; j < lim; j++) {
            uint32_t id = rc[j].id;
            uint32_t vid = id ^ prev->succ;
            vid_chunk[j] = vid;
            prev->succ = id; /* before the lookups: growing the table moves entries */
            prev->next &= -(uint32_t)(vid == 0); /* it remembered the old successor */
            uint64_t a = rc[j].addr;
            if (__builtin_expect(g.pos < g.len, 0)) {
                uint32_t k = g.pos++;
                if (k < g.m) { /* template k */
                    struct slot *ts = table_next(&t, c, prev, id);
                    if (!ts)
                        return -1;
                    va_chunk[j] = zigzag(a - group_template(&g, k, ts));
                    g.id[k] = id;
                    g.addr[k] = a;
                    prev = ts;
                    continue;
                }
                if (id == PES_ID_LOOP_STEP) { /* step k - m */
                    struct slot *ts = table_slot(&t, c, g.id[k - g.m]);
                    if (!ts)
                        return -1;
                    va_chunk[j] = zigzag(a - ts->stride);
                    group_step(&g, k - g.m, ts, a, rc[j].extra);
                    struct slot *s = table_slot(&t, c, id);
                    if (!s)
                        return -1;
                    prev = s;
                    continue;
                }
                g.pos = g.len = 0; /* not a group after all */
            }
            struct slot *s = table_next(&t, c, prev, id);
            if (!s)
                return -1;
            va_chunk[j] = zigzag(a - (s->last + s->stride));
            slot_update(s, a, grouped);
            prev = s;
            if (__builtin_expect(id == PES_ID_LOOP, 0))
                group_open(&g, a, rc[j].extra);
        }
        /* Branch-free compaction: always store, advance only when non-zero.
         * lim is a multiple of 8 except in the last chunk. */
        for (size_t j0 = 0; j0 < lim; j0 += 8) {
            size_t m = lim - j0 < 8 ? lim - j0 : 8;
            unsigned bid = 0, ba = 0, be = 0;
            for (size_t j = 0; j < m; j++) {
                uint32_t v = vid_chunk[j0 + j];
                idr[kid] = v;
                kid += v != 0;
                or_id |= v;
                bid |= (unsigned)(v != 0) << j;
            }
            for (size_t j = 0; j < m; j++) {
                uint64_t v = va_chunk[j0 + j];
                ar[ka] = v;
                ka += v != 0;
                or_a |= v;
                ba |= (unsigned)(v != 0) << j;
            }
            for (size_t j = 0; j < m; j++) {
                uint32_t v = rc[j0 + j].extra;
                ex[ke] = v;
                ke += v != 0;
                or_ex |= v;
                be |= (unsigned)(v != 0) << j;
            }
            size_t byte = (i0 + j0) >> 3;
            bm_id[byte] = (uint8_t)bid;
            bm_a[byte] = (uint8_t)ba;
            bm_e[byte] = (uint8_t)be;
        }
    }
    table_store(&t, c);
    uint8_t *p = out->data + out->len;
    if (!c->planes) {
        /* Every residual as a plain little-endian column: only for the bench's
         * comparison, never written to a file (the decoder rejects bit 16). */
        pes_store_u32(p, 1u << 16);
        p += 4;
        for (size_t i = 0, j = 0; i < n; i++)
            pes_store_u32(p + 4 * i, bm_id[i >> 3] >> (i & 7) & 1 ? idr[j++] : 0);
        p += 4 * n;
        for (size_t i = 0, j = 0; i < n; i++)
            pes_store_u64(p + 8 * i, bm_a[i >> 3] >> (i & 7) & 1 ? ar[j++] : 0);
        p += 8 * n;
        for (size_t i = 0, j = 0; i < n; i++)
            pes_store_u32(p + 4 * i, bm_e[i >> 3] >> (i & 7) & 1 ? ex[j++] : 0);
        p += 4 * n;
        out->len = (size_t)(p - out->data);
        return 0;
    }
    uint32_t mask = plane_bits(or_id, 4, 0) | plane_bits(or_a, 8, 4) | plane_bits(or_ex, 4, 12) |
                    (grouped ? GROUP_PREDICT | TWO_DELTA : 0);
    pes_store_u32(p, mask);
    pes_store_u32(p + 4, (uint32_t)kid);
    pes_store_u32(p + 8, (uint32_t)ka);
    pes_store_u32(p + 12, (uint32_t)ke);
    p += HDR_BYTES;
    memcpy(p, c->bm, 3 * nb);
    p += 3 * nb;
    p = put_planes(p, idr, 4, kid, mask, 0);
    p = put_planes(p, ar, 8, ka, mask, 4);
    p = put_planes(p, ex, 4, ke, mask, 12);
    out->len = (size_t)(p - out->data);
    return 0;
}

static size_t popcount_bytes(const uint8_t *b, size_t nb)
{
    size_t k = 0;
    for (size_t i = 0; i < nb; i++)
        k += (size_t)__builtin_popcount(b[i]);
    return k;
}

int pes_access_decode(struct pes_access_codec *c, const uint8_t *payload, size_t size, size_t n,
                      struct pes_record *out, const char **why)
{
    size_t nb = (n + 7) / 8;
    if (size < HDR_BYTES || (size - HDR_BYTES) / 3 < nb) {
        *why = "ACCESS payload shorter than its header and non-zero bitmaps";
        return -1;
    }
    uint32_t mask = pes_load_u32(payload);
    size_t kid = pes_load_u32(payload + 4), ka = pes_load_u32(payload + 8),
           ke = pes_load_u32(payload + 12);
    if ((mask & ~(GROUP_PREDICT | TWO_DELTA)) >> 16) {
        *why = "ACCESS plane mask has unknown bits set";
        return -1;
    }
    const int groups = (mask & GROUP_PREDICT) != 0, two_delta = (mask & TWO_DELTA) != 0;
    const uint8_t *bm = payload + HDR_BYTES;
    if (n % 8) /* bits past the last record must be clear */
        for (int k = 0; k < 3; k++)
            if (bm[k * nb + nb - 1] >> (n % 8)) {
                *why = "ACCESS non-zero bitmap has bits set past the last record";
                return -1;
            }
    if (popcount_bytes(bm, nb) != kid || popcount_bytes(bm + nb, nb) != ka ||
        popcount_bytes(bm + 2 * nb, nb) != ke) {
        *why = "ACCESS non-zero counts disagree with the bitmaps";
        return -1;
    }
    size_t pid = (size_t)__builtin_popcount(mask & 0xf),
           pa = (size_t)__builtin_popcount(mask & 0xff0),
           pe = (size_t)__builtin_popcount(mask & 0xf000);
    /* kid, ka, ke <= n <= 2^21 and plane counts <= 8: no overflow in size_t */
    if (size != HDR_BYTES + 3 * nb + kid * pid + ka * pa + ke * pe) {
        *why = "ACCESS payload size does not match its bitmaps and plane mask";
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
    memset(idr, 0, kid * 4);
    memset(ar, 0, ka * 8);
    memset(ex, 0, ke * 4);
    const uint8_t *p = bm + 3 * nb;
    for (int b = 0; b < 4; b++)
        if (mask & (1u << b)) {
            for (size_t i = 0; i < kid; i++)
                idr[i] |= (uint32_t)p[i] << (8 * b);
            p += kid;
        }
    for (int b = 0; b < 8; b++)
        if (mask & (1u << (4 + b))) {
            for (size_t i = 0; i < ka; i++)
                ar[i] |= (uint64_t)p[i] << (8 * b);
            p += ka;
        }
    for (int b = 0; b < 4; b++)
        if (mask & (1u << (12 + b))) {
            for (size_t i = 0; i < ke; i++)
                ex[i] |= (uint32_t)p[i] << (8 * b);
            p += ke;
        }
    codec_reset(c);
    struct table t;
    table_load(&t, c);
    struct slot start = {0};
    struct slot *prev = &start;
    const uint8_t *bm_id = bm, *bm_a = bm + nb, *bm_e = bm + 2 * nb;
    size_t jid = 0, ja = 0, je = 0;
    struct group g = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned sh = i & 7;
        uint32_t vid = (bm_id[i >> 3] >> sh) & 1 ? idr[jid++] : 0;
        uint64_t va = (bm_a[i >> 3] >> sh) & 1 ? ar[ja++] : 0;
        uint32_t ve = (bm_e[i >> 3] >> sh) & 1 ? ex[je++] : 0;
        uint32_t id = vid ^ prev->succ;
        prev->succ = id;
        out[i].id = id;
        out[i].extra = ve;
        if (g.pos < g.len) { /* as the encoder */
            uint32_t k = g.pos++;
            if (k < g.m) {
                struct slot *ts = table_slot(&t, c, id);
                if (!ts)
                    goto oom;
                uint64_t a = unzigzag(va) + group_template(&g, k, ts);
                g.id[k] = id;
                g.addr[k] = a;
                out[i].addr = a;
                prev = ts;
                continue;
            }
            if (id == PES_ID_LOOP_STEP) {
                struct slot *ts = table_slot(&t, c, g.id[k - g.m]);
                if (!ts)
                    goto oom;
                uint64_t a = unzigzag(va) + ts->stride;
                group_step(&g, k - g.m, ts, a, ve);
                out[i].addr = a;
                struct slot *s = table_slot(&t, c, id);
                if (!s)
                    goto oom;
                prev = s;
                continue;
            }
            g.pos = g.len = 0;
        }
        struct slot *s = table_slot(&t, c, id);
        if (!s)
            goto oom;
        uint64_t a = unzigzag(va) + (s->last + s->stride);
        slot_update(s, a, two_delta);
        out[i].addr = a;
        prev = s;
        if (groups && id == PES_ID_LOOP)
            group_open(&g, a, ve);
    }
    table_store(&t, c);
    return 0;
oom:
    table_store(&t, c);
    *why = "out of memory";
    return -1;
}
