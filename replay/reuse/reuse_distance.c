/* reuse_distance.c — exact LRU stack distance; see reuse_distance.h. */
#include "reuse_distance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Times are uint32; keep the axis (and so the live granules) well below 2^32. */
#define MAX_WINDOW (UINT64_C(1) << 31)
#define MAX_LIVE   (UINT64_C(1) << 30)
/* Reuse intervals spanning at most this many whole words are summed with
 * popcounts instead of a tree query (short distances dominate real traces). */
#define SCAN_WORDS 8

struct slot {
    uint64_t key;
    uint32_t time;
    uint32_t used;
};

struct pes_reuse {
    unsigned shift;
    /* open-addressing hash map, linear probing, power-of-two capacity */
    struct slot *slots;
    uint64_t hmask;
    unsigned hbits;
    uint64_t hcount;
    /* time axis: one bit per slot; Fenwick tree (1-based) over 64-bit words */
    uint64_t *bits;
    uint32_t *fen;
    uint64_t nwords;     /* cap / 64 */
    uint64_t cap;        /* time slots */
    uint64_t t;          /* next time to assign */
    uint64_t ncommitted; /* words below this index are counted in fen */
    uint64_t committed_total;
    uint64_t min_window;
    uint64_t compactions;
    struct pes_error err;
};

static inline uint64_t hash_index(const struct pes_reuse *e, uint64_t key)
{
    /* Fibonacci hashing of key/8 spreads blocks of 8 neighbouring keys over
     * the table; the low 3 bits then pick a slot inside the block's aligned
     * 8-slot group (128 bytes). A sweep over memory thus walks the table in
     * groups instead of missing the cache on every new granule. */
    uint64_t h = pes_hash_fib(key >> 3, e->hbits);
    return h ^ (key & 7);
}

/* Zeroed table; big ones are 2 MiB aligned and asked to use huge pages: a
 * random probe then costs one cache miss instead of a miss plus a TLB walk. */
static void *table_alloc(size_t bytes)
{
    if (bytes < (UINT64_C(8) << 20))
        return calloc(1, bytes);
    const size_t huge = (size_t)2 << 20;
    bytes = (bytes + huge - 1) & ~(huge - 1);
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* a hint: failure only costs speed */
#endif
    memset(p, 0, bytes);
    return p;
}

static int hash_alloc(struct pes_reuse *e, unsigned bits)
{
    struct slot *s = table_alloc(((size_t)1 << bits) * sizeof *s);
    if (!s)
        return -1;
    struct slot *old = e->slots;
    uint64_t oldn = old ? e->hmask + 1 : 0;
    e->slots = s;
    e->hbits = bits;
    e->hmask = (UINT64_C(1) << bits) - 1;
    for (uint64_t i = 0; i < oldn; i++) {
        if (!old[i].used)
            continue;
        uint64_t j = hash_index(e, old[i].key);
        while (s[j].used)
            j = (j + 1) & e->hmask;
        s[j] = old[i];
    }
    free(old);
    return 0;
}

static void fen_add(uint32_t *fen, uint64_t n, uint64_t w, int32_t v)
{
    for (uint64_t i = w + 1; i <= n; i += i & (~i + 1))
        fen[i] += (uint32_t)v;
}

/* Marks in words 0..w inclusive. */
static uint64_t fen_prefix(const uint32_t *fen, uint64_t w)
{
    uint64_t s = 0;
    for (uint64_t i = w + 1; i > 0; i -= i & (~i + 1))
        s += fen[i];
    return s;
}

static int axis_alloc(struct pes_reuse *e, uint64_t cap)
{
    uint64_t nwords = cap / 64;
    uint64_t *bits = realloc(e->bits, nwords * sizeof *bits);
    if (!bits)
        return -1;
    e->bits = bits;
    uint32_t *fen = realloc(e->fen, (nwords + 1) * sizeof *fen);
    if (!fen)
        return -1;
    e->fen = fen;
    e->nwords = nwords;
    e->cap = cap;
    return 0;
}

struct pes_reuse *pes_reuse_create(const struct pes_reuse_options *opt, struct pes_error *err)
{
    uint32_t granule = opt && opt->granule ? opt->granule : PES_REUSE_DEFAULT_GRANULE;
    if (granule & (granule - 1)) {
        pes_error_set(err, PES_ERR_ARG, 0, "%s", "granule must be a power of two");
        return NULL;
    }
    uint64_t win = opt && opt->min_window ? opt->min_window : 65536;
    win = (win + 63) & ~UINT64_C(63);
    if (win > MAX_WINDOW) {
        pes_error_set(err, PES_ERR_ARG, 0, "%s", "time window too large");
        return NULL;
    }
    struct pes_reuse *e = calloc(1, sizeof *e);
    if (!e) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "out of memory");
        return NULL;
    }
    e->shift = (unsigned)__builtin_ctz(granule);
    e->min_window = win;
    /* Small tables first (a short-lived thread's engine stays well under a
     * KiB): the map doubles as it fills, the time axis at each compaction
     * until it reaches min_window. */
    unsigned hb = 4;
    uint64_t hint = opt ? opt->expected_keys : 0;
    while (hb < 31 && (UINT64_C(1) << hb) * 3 / 4 < hint)
        hb++;
    if (hash_alloc(e, hb) < 0 || axis_alloc(e, 64) < 0) {
        pes_reuse_destroy(e);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "out of memory");
        return NULL;
    }
    memset(e->bits, 0, e->nwords * sizeof *e->bits);
    memset(e->fen, 0, (e->nwords + 1) * sizeof *e->fen);
    return e;
}

void pes_reuse_destroy(struct pes_reuse *e)
{
    if (!e)
        return;
    free(e->slots);
    free(e->bits);
    free(e->fen);
    free(e);
}

/*
 * Renumbers the live marks 0..M-1 in time order and sizes the axis to at least
 * 2(M+1) slots, so at least M+1 accesses pass before the next compaction: the
 * O(cap + hash) cost is amortised to O(1) per access.
 */
static int compact(struct pes_reuse *e)
{
    uint64_t live = e->hcount;
    /* rank of each word's first slot, kept in the tree array (rebuilt below) */
    uint64_t r = 0;
    for (uint64_t w = 0; w < e->nwords; w++) {
        e->fen[w] = (uint32_t)r;
        r += (uint64_t)__builtin_popcountll(e->bits[w]);
    }
    for (uint64_t i = 0; i <= e->hmask; i++) {
        struct slot *s = &e->slots[i];
        if (!s->used)
            continue;
        uint64_t w = s->time >> 6, b = s->time & 63;
        s->time = e->fen[w] + (uint32_t)__builtin_popcountll(e->bits[w] & ((UINT64_C(1) << b) - 1));
    }
    uint64_t cap = e->cap;
    if (cap < e->min_window)
        cap = cap * 2 < e->min_window ? cap * 2 : e->min_window;
    while (cap < 2 * (live + 1))
        cap *= 2;
    if (cap > MAX_WINDOW)
        cap = MAX_WINDOW;
    if (cap != e->cap && axis_alloc(e, cap) < 0) {
        pes_error_set(&e->err, PES_ERR_NOMEM, 0, "%s", "out of memory growing the time axis");
        return -1;
    }
    uint64_t full = live / 64;
    memset(e->bits, 0xff, full * sizeof *e->bits);
    memset(e->bits + full, 0, (e->nwords - full) * sizeof *e->bits);
    if (live & 63)
        e->bits[full] = (UINT64_C(1) << (live & 63)) - 1;
    /* linear-time Fenwick build: every committed word holds 64 marks */
    uint32_t *fen = e->fen;
    uint64_t n = e->nwords;
    memset(fen, 0, (n + 1) * sizeof *fen);
    for (uint64_t i = 1; i <= full; i++)
        fen[i] = 64;
    for (uint64_t i = 1; i <= n; i++) {
        uint64_t j = i + (i & (~i + 1));
        if (j <= n)
            fen[j] += fen[i];
    }
    e->ncommitted = full;
    e->committed_total = 64 * full;
    e->t = live;
    e->compactions++;
    return 0;
}

/* The slot holding key, or the free slot where it would go. */
static inline struct slot *find_slot(struct pes_reuse *e, uint64_t key)
{
    uint64_t i = hash_index(e, key);
    for (;;) {
        struct slot *s = &e->slots[i];
        if (!s->used || s->key == key)
            return s;
        i = (i + 1) & e->hmask;
    }
}

/* Makes room for time e->t (compaction keeps slots in place) and counts the
 * full words below it in the tree. */
static inline int ready_axis(struct pes_reuse *e)
{
    if (e->t == e->cap && compact(e) < 0)
        return -1;
    uint64_t wt = e->t >> 6;
    while (e->ncommitted < wt) {
        uint64_t c = (uint64_t)__builtin_popcountll(e->bits[e->ncommitted]);
        fen_add(e->fen, e->nwords, e->ncommitted, (int32_t)c);
        e->committed_total += c;
        e->ncommitted++;
    }
    return 0;
}

/* Marks after time p, before e->t: the distinct granules touched since. */
static inline uint64_t marks_after(const struct pes_reuse *e, uint64_t p)
{
    uint64_t wt = e->t >> 6, wp = p >> 6, bp = p & 63;
    if (wp == wt)
        return (uint64_t)__builtin_popcountll((e->bits[wt] >> bp) >> 1);
    uint64_t d = (uint64_t)__builtin_popcountll((e->bits[wp] >> bp) >> 1) +
                 (uint64_t)__builtin_popcountll(e->bits[wt]);
    if (wt - wp - 1 <= SCAN_WORDS) {
        for (uint64_t w = wp + 1; w < wt; w++)
            d += (uint64_t)__builtin_popcountll(e->bits[w]);
    } else {
        d += e->committed_total - fen_prefix(e->fen, wp);
    }
    return d;
}

static inline int push_key(struct pes_reuse *e, uint64_t key, uint64_t *dist)
{
    struct slot *s = find_slot(e, key);
    if (s->used && (uint64_t)s->time + 1 == e->t) {
        /* already on top of the LRU stack: distance 0, nothing moves */
        *dist = 0;
        return 0;
    }
    if (!s->used) {
        if (e->hcount >= MAX_LIVE) {
            pes_error_set(&e->err, PES_ERR_NOMEM, 0, "%s", "more than 2^30 distinct granules");
            return -1;
        }
        if ((e->hcount + 1) * 4 > (e->hmask + 1) * 3) {
            if (hash_alloc(e, e->hbits + 1) < 0) {
                pes_error_set(&e->err, PES_ERR_NOMEM, 0, "%s",
                              "out of memory growing the hash map");
                return -1;
            }
            s = find_slot(e, key);
        }
    }
    if (ready_axis(e) < 0)
        return -1;
    uint64_t t = e->t, wt = t >> 6;
    if (!s->used) {
        s->used = 1;
        s->key = key;
        e->hcount++;
        *dist = PES_REUSE_COLD;
    } else {
        uint64_t p = s->time, wp = p >> 6, bp = p & 63;
        *dist = marks_after(e, p);
        e->bits[wp] &= ~(UINT64_C(1) << bp);
        if (wp != wt) {
            fen_add(e->fen, e->nwords, wp, -1);
            e->committed_total--;
        }
    }
    s->time = (uint32_t)t;
    e->bits[wt] |= UINT64_C(1) << (t & 63);
    e->t = t + 1;
    return 0;
}

int pes_reuse_peek_key(struct pes_reuse *e, uint64_t key, uint64_t *dist)
{
    struct slot *s = find_slot(e, key);
    if (!s->used) {
        *dist = PES_REUSE_COLD;
        return 0;
    }
    if (ready_axis(e) < 0)
        return -1;
    *dist = marks_after(e, s->time);
    return 0;
}

int pes_reuse_push_key(struct pes_reuse *e, uint64_t key, uint64_t *dist)
{
    return push_key(e, key, dist);
}

int pes_reuse_push(struct pes_reuse *e, uint64_t addr, uint64_t *dist)
{
    return push_key(e, addr >> e->shift, dist);
}

/* How far ahead the batch loop prefetches hash slots: enough to overlap
 * several cache misses on tables far larger than the cache. */
#define PREFETCH_AHEAD 12

int pes_reuse_push_batch(struct pes_reuse *e, const uint64_t *addr, size_t n, uint64_t *dist)
{
    unsigned sh = e->shift;
    for (size_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n)
            __builtin_prefetch(&e->slots[hash_index(e, addr[i + PREFETCH_AHEAD] >> sh)]);
        if (push_key(e, addr[i] >> sh, &dist[i]) < 0)
            return -1;
    }
    return 0;
}

int pes_reuse_push_keys(struct pes_reuse *e, const uint64_t *key, size_t n, uint64_t *dist)
{
    for (size_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n)
            __builtin_prefetch(&e->slots[hash_index(e, key[i + PREFETCH_AHEAD])]);
        if (push_key(e, key[i], &dist[i]) < 0)
            return -1;
    }
    return 0;
}

unsigned pes_reuse_granule_shift(const struct pes_reuse *e)
{
    return e->shift;
}
uint64_t pes_reuse_distinct(const struct pes_reuse *e)
{
    return e->hcount;
}
uint64_t pes_reuse_compactions(const struct pes_reuse *e)
{
    return e->compactions;
}
const struct pes_error *pes_reuse_error(const struct pes_reuse *e)
{
    return &e->err;
}

uint64_t pes_reuse_memory(const struct pes_reuse *e)
{
    return (e->hmask + 1) * sizeof(struct slot) + e->nwords * sizeof(uint64_t) +
           (e->nwords + 1) * sizeof(uint32_t);
}

int pes_reuse_keys_by_recency(const struct pes_reuse *e, uint64_t *keys)
{
    /* The bit of each live granule's latest time is set, and times only grow
     * between compactions, so a granule's rank among the marks is its
     * position from the bottom of the stack (as in compact()). */
    uint32_t *base = malloc((e->nwords ? e->nwords : 1) * sizeof *base);
    if (!base)
        return -1;
    uint32_t r = 0;
    for (uint64_t w = 0; w < e->nwords; w++) {
        base[w] = r;
        r += (uint32_t)__builtin_popcountll(e->bits[w]);
    }
    for (uint64_t i = 0; i <= e->hmask; i++) {
        const struct slot *s = &e->slots[i];
        if (!s->used)
            continue;
        uint64_t w = s->time >> 6, b = s->time & 63;
        keys[base[w] + (uint32_t)__builtin_popcountll(e->bits[w] & ((UINT64_C(1) << b) - 1))] =
            s->key;
    }
    free(base);
    return 0;
}
