/*
 * rt_truth — ReuseTracker reuse / invalidation ground truth (definitions in
 * rt_truth.h; Dissertation §6.2, Tables 6.2 and 6.3).
 *
 * Address granularity: one hash table keyed by 64-byte group (8 words) whose
 * slot points to the group's touched words, packed in order in a block of
 * 16-byte records (struct wrec). A record serves both scopes: a word touched
 * by one thread only (most of them) has that thread's latest use there as its
 * pending use in both scopes (until the intra one is decided), so it keeps one
 * use (thread time, socket time, site, watched bytes) and two pending flags.
 * The first access by a second thread moves the word to an extension record
 * with the latest use of every other thread, a pending use per socket and
 * bitmasks of which are pending (layout at ext_view).
 *
 * Line granularity (granularity=spatial traces only): per scope a hash map
 * line -> pending uses, one per thread (intra) or per socket (shared), with a
 * bitmask of which are pending, so a remote write ends exactly the uses it
 * invalidates.
 */
#include "rt_truth.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NO_KEY    UINT64_MAX
#define MAX_SITES (1u << 22)

struct pend {
    uint64_t time; /* owner's access counter (thread or socket) at the use */
    uint32_t site;
    uint16_t thread;
    uint16_t offset; /* start address within the line */
};

/* One location. Most locations have a single pending use (private data), kept
 * inline; when a second owner has a pending use at the same time, the location
 * gets a record of k pending uses (one per owner) from the table's pool.
 * Invariant: ext == 0 implies mask has at most the bit of owner0. */
struct loc {
    uint64_t key;
    uint64_t mask;  /* owners with a pending use */
    struct pend p0; /* owner0's pending use while ext == 0 */
    uint32_t ext;   /* 1 + record index in pool, 0 = none */
    uint16_t owner0;
    uint16_t pad;
};

struct table {
    struct loc *loc;
    uint64_t cap, used;
    unsigned bits;
    uint32_t k;        /* owners: threads (intra) or sockets (shared) */
    struct pend *pool; /* records of k pending uses */
    size_t pool_used, pool_cap;
};

/* A word's record, 16 bytes:
 *  use  its owner's (the first thread's) latest use: thread time << SITE_BITS
 *       | site code, and the flags IV (the owner's intra use is pending) and
 *       SV (its socket's shared use is this one and pending)
 *  hi   socket time of that use (TIME_BITS) | EXT | owner << 40 | watched
 *       bytes << 48; with EXT, the low 32 bits are the extension's index */
struct wrec {
    uint64_t use, hi;
};

#define TIME_BITS  39
#define TIME_LIMIT (UINT64_C(1) << TIME_BITS)
#define SITE_BITS  23
#define SITE_MASK  ((UINT64_C(1) << SITE_BITS) - 1)
#define USE_MASK   ((UINT64_C(1) << 62) - 1)
#define IV         (UINT64_C(1) << 62)
#define SV         (UINT64_C(1) << 63)
#define EXT        (UINT64_C(1) << TIME_BITS)
#define NO_BLOCK   UINT32_MAX
#define N_CLASSES  4 /* blocks of 1, 2, 4, 8 records */

/* A 64-byte group: its touched words (bits of present, in word order) are
 * rec[first .. first + popcount(present)), a block of the power of two >= n. */
struct gslot {
    uint64_t key;
    uint32_t first;
    uint8_t present;
    uint8_t pad[3];
};

struct pes_rt {
    uint32_t n_threads, n_sockets, line_shift;
    int gran_lo, gran_hi; /* tracked granularities: 0 address, 1 line */
    uint32_t *socket;     /* per thread */
    uint64_t *thread_time, *socket_time;
    /* address granularity */
    struct gslot *groups;
    uint64_t groups_cap, groups_used;
    unsigned groups_bits;
    struct wrec *rec;
    uint64_t rec_used, rec_cap;
    uint32_t free_block[N_CLASSES]; /* per block size: first free block, NO_BLOCK */
    uint32_t *ext;                  /* extension records of ext_words words */
    uint64_t ext_used, ext_cap;
    uint32_t ext_words, mask_words, smask_words;
    struct table tab[2]; /* line granularity, per scope */
    struct pes_rt_stats totals[2];
    struct pes_rt_stats *threads[2];
    struct pes_rt_counts *sites[2];
    uint8_t *site_seen;
    uint32_t n_sites;
    struct pes_rt_counts other_site[2];
    void (*intra_reuse)(void *ctx, size_t index, uint64_t use_addr);
    void *ctx;
    size_t index; /* of the access in its batch */
    int other_seen;
};

size_t pes_rt_bin(uint64_t d)
{
    if (d < PES_RT_EXACT)
        return (size_t)d;
    unsigned lg = 63u - (unsigned)__builtin_clzll(d);
    return PES_RT_EXACT + lg - PES_RT_EXACT_LOG2;
}

void pes_rt_bin_range(size_t bin, uint64_t *lo, uint64_t *hi)
{
    if (bin < PES_RT_EXACT) {
        *lo = bin;
        *hi = bin + 1;
        return;
    }
    unsigned lg = (unsigned)(bin - PES_RT_EXACT + PES_RT_EXACT_LOG2);
    *lo = 1ull << lg;
    *hi = lg >= 63 ? UINT64_MAX : 1ull << (lg + 1);
}

static inline uint64_t hash_key(uint64_t key, unsigned bits)
{
    return pes_hash_fib(key, bits);
}

/* Tables are probed at random: transparent huge pages cut the TLB misses. */
static void *big_alloc(size_t bytes)
{
    const size_t huge = 2u << 20;
    if (bytes < 2 * huge)
        return malloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, huge, (bytes + huge - 1) & ~(huge - 1)) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + huge - 1) & ~(huge - 1), MADV_HUGEPAGE); /* a hint */
#endif
    return p;
}

static int table_grow(struct table *t, unsigned bits)
{
    uint64_t cap = 1ull << bits;
    struct loc *loc = big_alloc(cap * sizeof *loc);
    if (!loc)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        loc[i].key = NO_KEY;
    for (uint64_t i = 0; i < t->cap; i++) {
        if (t->loc[i].key == NO_KEY)
            continue;
        uint64_t j = hash_key(t->loc[i].key, bits);
        while (loc[j].key != NO_KEY)
            j = (j + 1) & (cap - 1);
        loc[j] = t->loc[i];
    }
    free(t->loc);
    t->loc = loc;
    t->cap = cap;
    t->bits = bits;
    return 0;
}

/* Slot of key, inserted with no pending use if absent; cap on allocation failure. */
static uint64_t table_get(struct table *t, uint64_t key)
{
    for (;;) {
        uint64_t j = hash_key(key, t->bits);
        while (t->loc[j].key != NO_KEY) {
            if (t->loc[j].key == key)
                return j;
            j = (j + 1) & (t->cap - 1);
        }
        /* up to 3/4 full: linear probing stays short there */
        if ((t->used + 1) * 4 <= t->cap * 3) {
            memset(&t->loc[j], 0, sizeof t->loc[j]);
            t->loc[j].key = key;
            t->used++;
            return j;
        }
        if (table_grow(t, t->bits + 1) != 0)
            return t->cap;
    }
}

/* Pending use of owner o at l (only called for owners in l->mask). */
static inline struct pend *pend_of(struct table *t, struct loc *l, uint32_t o)
{
    return l->ext ? &t->pool[(size_t)(l->ext - 1) * t->k + o] : &l->p0;
}

/* A second owner needs a pending use: move to a per-owner record. */
static int make_ext(struct table *t, struct loc *l)
{
    if (t->pool_used == t->pool_cap) {
        size_t cap = t->pool_cap ? t->pool_cap * 2 : 256;
        struct pend *p = realloc(t->pool, cap * t->k * sizeof *p);
        if (!p)
            return -1;
        t->pool = p;
        t->pool_cap = cap;
    }
    struct pend *rec = &t->pool[t->pool_used * t->k];
    rec[l->owner0] = l->p0;
    l->ext = (uint32_t)++t->pool_used;
    return 0;
}

static int groups_grow(struct pes_rt *r, unsigned bits);

void pes_rt_destroy(struct pes_rt *r)
{
    if (!r)
        return;
    for (int s = 0; s < 2; s++) {
        free(r->tab[s].loc);
        free(r->tab[s].pool);
        free(r->threads[s]);
        free(r->sites[s]);
    }
    free(r->groups);
    free(r->rec);
    free(r->ext);
    free(r->site_seen);
    free(r->socket);
    free(r->thread_time);
    free(r->socket_time);
    free(r);
}

struct pes_rt *pes_rt_create(const struct pes_rt_config *cfg, struct pes_error *err)
{
    if (!cfg || cfg->n_threads == 0 || cfg->n_threads > PES_RT_MAX_THREADS) {
        pes_error_set(err, PES_ERR_ARG, 0, "rt_truth: %u threads, expected 1 .. 64",
                      cfg ? cfg->n_threads : 0);
        return NULL;
    }
    if (cfg->line == 0 || (cfg->line & (cfg->line - 1)) || cfg->line > 65536) {
        pes_error_set(err, PES_ERR_ARG, 0, "rt_truth: line size %u is not a power of two <= 64K",
                      cfg->line);
        return NULL;
    }
    struct pes_rt *r = calloc(1, sizeof *r);
    if (!r)
        goto nomem;
    r->n_threads = cfg->n_threads;
    r->intra_reuse = cfg->intra_reuse;
    r->ctx = cfg->ctx;
    r->gran_lo = cfg->track == PES_RT_TRACK_LINE ? 1 : 0;
    r->gran_hi = cfg->track == PES_RT_TRACK_ADDRESS ? 0 : 1;
    while ((1u << r->line_shift) < cfg->line)
        r->line_shift++;
    r->socket = calloc(r->n_threads, sizeof *r->socket);
    r->thread_time = calloc(r->n_threads, sizeof *r->thread_time);
    if (!r->socket || !r->thread_time)
        goto nomem;
    r->n_sockets = 1;
    for (uint32_t t = 0; cfg->thread_socket && t < r->n_threads; t++) {
        if (cfg->thread_socket[t] >= 64) {
            pes_rt_destroy(r);
            pes_error_set(err, PES_ERR_ARG, 0, "rt_truth: socket %u out of range (max 63)",
                          cfg->thread_socket[t]);
            return NULL;
        }
        r->socket[t] = cfg->thread_socket[t];
        if (r->socket[t] + 1 > r->n_sockets)
            r->n_sockets = r->socket[t] + 1;
    }
    r->socket_time = calloc(r->n_sockets, sizeof *r->socket_time);
    if (!r->socket_time)
        goto nomem;
    if (r->gran_lo == 0) {
        for (int c = 0; c < N_CLASSES; c++)
            r->free_block[c] = NO_BLOCK;
        r->mask_words = (r->n_threads + 31) / 32;
        r->smask_words = (r->n_sockets + 31) / 32;
        r->ext_words = r->mask_words + r->smask_words + 3 * (r->n_threads - 1) + 2 * r->n_sockets;
        if (groups_grow(r, 12) != 0)
            goto nomem;
    }
    for (int s = 0; s < 2; s++) {
        if (r->gran_hi == 1) {
            r->tab[s].k = s == PES_RT_INTRA ? r->n_threads : r->n_sockets;
            if (table_grow(&r->tab[s], 12) != 0)
                goto nomem;
        }
        r->threads[s] = calloc(r->n_threads, sizeof *r->threads[s]);
        if (!r->threads[s])
            goto nomem;
    }
    return r;
nomem:
    pes_rt_destroy(r);
    pes_error_set(err, PES_ERR_NOMEM, 0, "rt_truth: out of memory");
    return NULL;
}

static int site_slot(struct pes_rt *r, uint32_t site, struct pes_rt_counts **out)
{
    if (site >= MAX_SITES) {
        r->other_seen = 1;
        out[0] = &r->other_site[0];
        out[1] = &r->other_site[1];
        return 0;
    }
    if (site >= r->n_sites) {
        uint32_t n = r->n_sites ? r->n_sites : 256;
        while (n <= site)
            n *= 2;
        for (int s = 0; s < 2; s++) {
            struct pes_rt_counts *c = realloc(r->sites[s], (size_t)n * sizeof *c);
            if (!c)
                return -1;
            memset(c + r->n_sites, 0, (size_t)(n - r->n_sites) * sizeof *c);
            r->sites[s] = c;
        }
        uint8_t *seen = realloc(r->site_seen, n);
        if (!seen)
            return -1;
        memset(seen + r->n_sites, 0, n - r->n_sites);
        r->site_seen = seen;
        r->n_sites = n;
    }
    r->site_seen[site] = 1;
    out[0] = &r->sites[0][site];
    out[1] = &r->sites[1][site];
    return 0;
}

static struct pes_rt_counts *site_of(struct pes_rt *r, int scope, uint32_t site)
{
    return site >= MAX_SITES ? &r->other_site[scope] : &r->sites[scope][site];
}

/* One access against a line table (line granularity). owner: thread (intra)
 * or socket (shared); every access to the line meets its pending use. */
static int track(struct pes_rt *r, int scope, uint32_t thread, uint64_t key, uint16_t offset,
                 int is_write, uint32_t site, uint64_t now, struct pes_rt_counts *my_site)
{
    struct table *t = &r->tab[scope];
    uint64_t j = table_get(t, key);
    if (j == t->cap)
        return -1;
    struct loc *l = &t->loc[j];
    uint32_t owner = scope == PES_RT_INTRA ? thread : r->socket[thread];
    uint64_t obit = 1ull << owner;
    struct pes_rt_stats *tot = &r->totals[scope];
    struct pes_rt_stats *th = &r->threads[scope][thread];

    if ((l->mask & obit) && (scope == PES_RT_INTRA || pend_of(t, l, owner)->thread != thread)) {
        /* Reuse: Table 6.2 same-core column / Table 6.3 same-socket column. */
        struct pend *u = pend_of(t, l, owner);
        uint64_t d = now - u->time - 1;
        struct pes_rt_stats *uth = &r->threads[scope][u->thread];
        struct pes_rt_counts *us = site_of(r, scope, u->site);
        size_t b = pes_rt_bin(d);
        tot->n.line_reuses++, uth->n.line_reuses++, us->line_reuses++;
        tot->line.bin[b]++, uth->line.bin[b]++;
        if (u->offset != offset) {
            tot->n.spatial_reuses++, uth->n.spatial_reuses++, us->spatial_reuses++;
            tot->spatial.bin[b]++, uth->spatial.bin[b]++;
        }
    }
    if (is_write) {
        /* Invalidation: Table 6.2 different-core / Table 6.3 different-socket W. */
        uint64_t m = l->mask & ~obit;
        l->mask &= obit;
        while (m) {
            uint32_t o = (uint32_t)__builtin_ctzll(m);
            m &= m - 1;
            struct pend *u = pend_of(t, l, o);
            struct pes_rt_stats *uth = &r->threads[scope][u->thread];
            struct pes_rt_counts *us = site_of(r, scope, u->site);
            tot->n.line_invalidations++, uth->n.line_invalidations++, us->line_invalidations++;
            tot->n.line_inval_caused++, th->n.line_inval_caused++, my_site->line_inval_caused++;
        }
    }
    if (!l->ext) {
        if ((l->mask & ~obit) == 0) {
            l->owner0 = (uint16_t)owner;
        } else if (make_ext(t, l) != 0) {
            return -1;
        }
    }
    *pend_of(t, l, owner) =
        (struct pend){.time = now, .site = site, .thread = (uint16_t)thread, .offset = offset};
    l->mask |= obit;
    return 0;
}

/* ---- address granularity: groups of 8 words and their records ---- */

static int groups_grow(struct pes_rt *r, unsigned bits)
{
    uint64_t cap = 1ull << bits;
    struct gslot *g = big_alloc(cap * sizeof *g);
    if (!g)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        g[i].key = NO_KEY;
    for (uint64_t i = 0; i < r->groups_cap; i++) {
        if (r->groups[i].key == NO_KEY)
            continue;
        uint64_t j = hash_key(r->groups[i].key, bits);
        while (g[j].key != NO_KEY)
            j = (j + 1) & (cap - 1);
        g[j] = r->groups[i];
    }
    free(r->groups);
    r->groups = g;
    r->groups_cap = cap;
    r->groups_bits = bits;
    return 0;
}

/* Slot of group key, inserted with no word if absent; NULL when out of memory. */
static struct gslot *group_get(struct pes_rt *r, uint64_t key)
{
    for (;;) {
        uint64_t j = hash_key(key, r->groups_bits);
        while (r->groups[j].key != NO_KEY) {
            if (r->groups[j].key == key)
                return &r->groups[j];
            j = (j + 1) & (r->groups_cap - 1);
        }
        if ((r->groups_used + 1) * 4 <= r->groups_cap * 3) {
            r->groups[j] = (struct gslot){.key = key, .first = NO_BLOCK};
            r->groups_used++;
            return &r->groups[j];
        }
        if (groups_grow(r, r->groups_bits + 1) != 0)
            return NULL;
    }
}

static unsigned block_class(uint32_t n) /* log2 of the block size holding n >= 1 records */
{
    return n <= 1 ? 0 : 32u - (unsigned)__builtin_clz(n - 1);
}

/* A block of 2^c records; freed blocks are kept per class for the next group
 * that grows to that size (their first record's use links them). NO_BLOCK
 * when out of memory. */
static uint32_t block_alloc(struct pes_rt *r, unsigned c)
{
    uint32_t b = r->free_block[c];
    if (b != NO_BLOCK) {
        r->free_block[c] = (uint32_t)r->rec[b].use;
        return b;
    }
    uint64_t size = 1ull << c;
    if (r->rec_used + size > r->rec_cap) {
        uint64_t cap = r->rec_cap ? r->rec_cap : 4096;
        while (r->rec_used + size > cap)
            cap *= 2;
        if (cap > UINT32_MAX)
            return NO_BLOCK;
        struct wrec *p = realloc(r->rec, cap * sizeof *p);
        if (!p)
            return NO_BLOCK;
        r->rec = p;
        r->rec_cap = cap;
    }
    b = (uint32_t)r->rec_used;
    r->rec_used += size;
    return b;
}

/* The record of word w (0..7) of group g, inserted (owner thread, nothing
 * pending) if absent; NULL when out of memory. */
static struct wrec *word_rec(struct pes_rt *r, struct gslot *g, uint32_t w, uint32_t thread)
{
    uint32_t below = (uint32_t)__builtin_popcount(g->present & ((1u << w) - 1));
    if (g->present & (1u << w))
        return &r->rec[g->first + below];
    uint32_t n = (uint32_t)__builtin_popcount(g->present);
    if (n == 0 || (n & (n - 1)) == 0) {
        /* the block is full (n is its size): move to a twice larger one */
        uint32_t b = block_alloc(r, block_class(n + 1));
        if (b == NO_BLOCK)
            return NULL;
        if (n) {
            memcpy(&r->rec[b], &r->rec[g->first], below * sizeof *r->rec);
            memcpy(&r->rec[b + below + 1], &r->rec[g->first + below], (n - below) * sizeof *r->rec);
            unsigned oc = block_class(n);
            r->rec[g->first].use = r->free_block[oc];
            r->free_block[oc] = g->first;
        }
        g->first = b;
    } else {
        memmove(&r->rec[g->first + below + 1], &r->rec[g->first + below],
                (n - below) * sizeof *r->rec);
    }
    g->present |= (uint8_t)(1u << w);
    struct wrec *a = &r->rec[g->first + below];
    a->use = 0;
    a->hi = (uint64_t)thread << 40;
    return a;
}

static inline uint32_t w_owner(const struct wrec *a)
{
    return (uint32_t)(a->hi >> 40) & 0xffu;
}
static inline uint8_t w_watch(const struct wrec *a)
{
    return (uint8_t)(a->hi >> 48);
}

/* Extension record of a word several threads touched, ext_words 32-bit words
 * (T threads, S sockets, M = mask_words, N = smask_words):
 *  [0 .. M)            threads with a pending use (intra scope)
 *  [M .. M+N)          sockets with a pending use (shared scope)
 *  then per thread t other than the owner (slot t, or t - 1 above the owner):
 *                      its latest use (2 words, as wrec.use without flags)
 *                      and the bytes it watches
 *  then per socket:    its pending use's socket time | thread << 40 (that
 *                      thread's latest use: a later one would have replaced it)
 * The owner (the word's first thread, named in its record) keeps its latest
 * use and watched bytes in the record. */
struct ext_view {
    uint32_t *pend, *spend, *slot, *sock;
    uint32_t owner;
};

static inline struct ext_view ext_view(const struct pes_rt *r, const struct wrec *a)
{
    uint32_t *x = &r->ext[(uint64_t)(uint32_t)a->hi * r->ext_words];
    struct ext_view v;
    v.owner = w_owner(a);
    v.pend = x;
    v.spend = v.pend + r->mask_words;
    v.slot = v.spend + r->smask_words;
    v.sock = v.slot + 3 * (r->n_threads - 1);
    return v;
}

static inline int bit_get(const uint32_t *m, uint32_t i)
{
    return (m[i >> 5] >> (i & 31)) & 1u;
}
static inline void bit_set(uint32_t *m, uint32_t i)
{
    m[i >> 5] |= 1u << (i & 31);
}
static inline void bit_clear(uint32_t *m, uint32_t i)
{
    m[i >> 5] &= ~(1u << (i & 31));
}

/* Thread t's latest use and watched bytes (t != owner: its slot). */
static inline uint64_t x_use(const struct ext_view *v, const struct wrec *a, uint32_t t)
{
    if (t == v->owner)
        return a->use & USE_MASK;
    const uint32_t *sl = v->slot + 3 * (t < v->owner ? t : t - 1);
    return sl[0] | (uint64_t)sl[1] << 32;
}
static inline uint8_t x_watch(const struct ext_view *v, const struct wrec *a, uint32_t t)
{
    return t == v->owner ? w_watch(a) : (uint8_t)v->slot[3 * (t < v->owner ? t : t - 1) + 2];
}
static inline void x_set(const struct ext_view *v, struct wrec *a, uint32_t t, uint64_t use,
                         uint8_t watch)
{
    if (t == v->owner) {
        a->use = use;
        a->hi = (a->hi & ~(UINT64_C(0xff) << 48)) | (uint64_t)watch << 48;
        return;
    }
    uint32_t *sl = v->slot + 3 * (t < v->owner ? t : t - 1);
    sl[0] = (uint32_t)use, sl[1] = (uint32_t)(use >> 32), sl[2] = watch;
}

/* A second thread touches the word: move its pending uses to an extension. */
static int make_ext_rec(struct pes_rt *r, struct wrec *a)
{
    if (r->ext_used == r->ext_cap) {
        uint64_t cap = r->ext_cap ? r->ext_cap * 2 : 256;
        if (cap > UINT32_MAX)
            return -1;
        uint32_t *p = realloc(r->ext, cap * r->ext_words * sizeof *p);
        if (!p)
            return -1;
        r->ext = p;
        r->ext_cap = cap;
    }
    uint32_t *x = &r->ext[r->ext_used * r->ext_words];
    memset(x, 0, r->ext_words * sizeof *x);
    uint32_t o = w_owner(a), s = r->socket[o];
    uint64_t hi = a->hi;
    a->hi = (hi & ~(TIME_LIMIT - 1)) | EXT | r->ext_used;
    struct ext_view v = ext_view(r, a);
    if (a->use & IV)
        bit_set(v.pend, o);
    if (a->use & SV) {
        bit_set(v.spend, s);
        uint64_t su = (hi & (TIME_LIMIT - 1)) | (uint64_t)o << 40;
        v.sock[2 * s] = (uint32_t)su;
        v.sock[2 * s + 1] = (uint32_t)(su >> 32);
    }
    a->use &= USE_MASK;
    r->ext_used++;
    return 0;
}

static inline uint32_t site_code(uint32_t site)
{
    return site >= MAX_SITES ? MAX_SITES : site;
}

/* A temporal reuse in scope sc of the use u (thread uth) at time now. */
static inline void addr_reuse(struct pes_rt *r, int sc, uint32_t uth, uint64_t u, uint64_t now)
{
    size_t b = pes_rt_bin(now - (u >> SITE_BITS) - 1);
    struct pes_rt_stats *tot = &r->totals[sc], *ut = &r->threads[sc][uth];
    tot->n.reuses++, ut->n.reuses++, site_of(r, sc, (uint32_t)(u & SITE_MASK))->reuses++;
    tot->temporal.bin[b]++, ut->temporal.bin[b]++;
}

/* The use u (thread uth) in scope sc ended by thread th's write. */
static inline void addr_inval(struct pes_rt *r, int sc, uint32_t uth, uint64_t u, uint32_t th,
                              struct pes_rt_counts *my_site)
{
    struct pes_rt_stats *tot = &r->totals[sc];
    tot->n.invalidations++, r->threads[sc][uth].n.invalidations++;
    site_of(r, sc, (uint32_t)(u & SITE_MASK))->invalidations++;
    tot->n.inval_caused++, r->threads[sc][th].n.inval_caused++, my_site->inval_caused++;
}

static inline void intra_found(struct pes_rt *r, uint64_t word, uint8_t watch)
{
    /* the use's start: its watch begins at it (watch_len) */
    if (r->intra_reuse)
        r->intra_reuse(r->ctx, r->index, word << 3 | (uint64_t)__builtin_ctz(watch));
}

/* A word several threads touched: Tables 6.2 and 6.3 with a pending use per
 * thread and per socket. */
static void ext_access(struct pes_rt *r, struct wrec *a, uint64_t word, uint32_t th, uint8_t touch,
                       uint8_t watch, int is_write, uint64_t use, uint64_t snow,
                       struct pes_rt_counts **ms)
{
    struct ext_view v = ext_view(r, a);
    uint32_t s = r->socket[th];
    int first = watch != 0;
    if (bit_get(v.pend, th)) {
        uint8_t mw = x_watch(&v, a, th);
        if (mw & touch) {
            addr_reuse(r, PES_RT_INTRA, th, x_use(&v, a, th), use >> SITE_BITS);
            intra_found(r, word, mw);
            if (!first)
                bit_clear(v.pend, th);
        }
    }
    if (bit_get(v.spend, s)) {
        uint64_t su = v.sock[2 * s] | (uint64_t)v.sock[2 * s + 1] << 32;
        uint32_t sth = (uint32_t)(su >> 40);
        if (sth != th && (x_watch(&v, a, sth) & touch)) {
            addr_reuse(r, PES_RT_SHARED, sth,
                       (su & (TIME_LIMIT - 1)) << SITE_BITS | (x_use(&v, a, sth) & SITE_MASK),
                       snow);
            if (!first)
                bit_clear(v.spend, s);
        }
    }
    if (is_write) {
        for (uint32_t w = 0; w < r->mask_words; w++) {
            for (uint32_t m = v.pend[w]; m; m &= m - 1) {
                uint32_t o = 32 * w + (uint32_t)__builtin_ctz(m);
                if (o == th || !(x_watch(&v, a, o) & touch))
                    continue; /* another word's bytes: the watch does not see this write */
                bit_clear(v.pend, o);
                addr_inval(r, PES_RT_INTRA, o, x_use(&v, a, o), th, ms[0]);
            }
        }
        for (uint32_t w = 0; w < r->smask_words; w++) {
            for (uint32_t m = v.spend[w]; m; m &= m - 1) {
                uint32_t o = 32 * w + (uint32_t)__builtin_ctz(m);
                if (o == s)
                    continue;
                uint64_t ou = v.sock[2 * o] | (uint64_t)v.sock[2 * o + 1] << 32;
                uint32_t oth = (uint32_t)(ou >> 40);
                if (!(x_watch(&v, a, oth) & touch))
                    continue;
                bit_clear(v.spend, o);
                addr_inval(r, PES_RT_SHARED, oth,
                           (ou & (TIME_LIMIT - 1)) << SITE_BITS | (x_use(&v, a, oth) & SITE_MASK),
                           th, ms[1]);
            }
        }
    }
    if (!first)
        return;
    x_set(&v, a, th, use, watch);
    bit_set(v.pend, th);
    uint64_t su = snow | (uint64_t)th << 40;
    v.sock[2 * s] = (uint32_t)su;
    v.sock[2 * s + 1] = (uint32_t)(su >> 32);
    bit_set(v.spend, s);
}

/* One access to one word at address granularity, both scopes. touch: the
 * bytes of the word the access reads or writes; a pending use ends only where
 * its watched bytes meet them. watch: the new use's bytes, 0 on the later
 * words of a multi-word access (they end uses, the watch stays on the first
 * word). use: thread time << SITE_BITS | site code. */
static int word_access(struct pes_rt *r, uint32_t th, uint64_t word, uint8_t touch, uint8_t watch,
                       int is_write, uint64_t use, uint64_t snow, struct pes_rt_counts **ms)
{
    struct gslot *g = group_get(r, word >> 3);
    if (!g)
        return -1;
    struct wrec *a = word_rec(r, g, (uint32_t)(word & 7), th);
    if (!a)
        return -1;
    if (!(a->hi & EXT) && w_owner(a) == th) {
        /* touched by this thread only: its latest use is the pending use of
         * both scopes; a shared-cache pair of one thread is no reuse, and no
         * other thread's use is pending */
        uint8_t mw = w_watch(a);
        if ((a->use & IV) && (mw & touch)) {
            addr_reuse(r, PES_RT_INTRA, th, a->use & USE_MASK, use >> SITE_BITS);
            intra_found(r, word, mw);
            if (!watch)
                a->use &= ~IV;
        }
        if (watch) {
            a->use = use | IV | SV;
            a->hi = snow | (uint64_t)th << 40 | (uint64_t)watch << 48;
        }
        return 0;
    }
    if (!(a->hi & EXT) && make_ext_rec(r, a) != 0)
        return -1;
    ext_access(r, a, word, th, touch, watch, is_write, use, snow, ms);
    return 0;
}

/* The bytes [lo, hi) of word w (w * 8 <= lo < hi <= w * 8 + 8) as a mask. */
static inline uint8_t word_bytes(uint64_t lo, uint64_t hi)
{
    return (uint8_t)(((1u << (hi - lo)) - 1) << (lo & 7));
}

/* What the collector's watchpoint covers for an access (modes/watch.c): the
 * largest aligned prefix of 1, 2, 4 or 8 bytes, inside one 8-byte word. */
static inline uint32_t watch_len(uint64_t addr, uint32_t size)
{
    for (uint32_t len = 8; len > 1; len /= 2)
        if (len <= size && addr % len == 0)
            return len;
    return 1;
}

static int access_at(struct pes_rt *r, uint32_t thread, uint64_t addr, uint32_t size, int is_write,
                     uint32_t site, struct pes_error *err)
{
    if (thread >= r->n_threads) {
        pes_error_set(err, PES_ERR_ARG, 0, "rt_truth: thread %u out of range", thread);
        return -1;
    }
    struct pes_rt_counts *ms[2];
    if (site_slot(r, site, ms) != 0)
        goto nomem;
    if (size == 0)
        size = 1;
    uint32_t sock = r->socket[thread];
    uint64_t line = addr >> r->line_shift;
    uint16_t off = (uint16_t)(addr & ((1ull << r->line_shift) - 1));
    uint64_t tnow = r->thread_time[thread]++, snow = r->socket_time[sock]++;
    for (int s = 0; s < 2; s++) {
        r->totals[s].accesses++;
        r->threads[s][thread].accesses++;
        if (r->gran_hi == 1 && track(r, s, thread, line, off, is_write, site,
                                     s == PES_RT_INTRA ? tnow : snow, ms[s]) != 0)
            goto nomem;
    }
    if (r->gran_lo == 0) {
        if (snow >= TIME_LIMIT) { /* a socket's count bounds its threads' */
            pes_error_set(err, PES_ERR_ARG, 0, "rt_truth: more than 2^39 accesses on one socket");
            return -1;
        }
        /* the 8-byte words the access touches; the use watches what a debug
         * register would (watch_len) on the first */
        uint64_t end = addr + size, w0 = addr >> 3, wn = (end - 1) >> 3;
        if (wn - w0 >= PES_RT_MAX_WORDS) { /* memcpy / memset records: their first words */
            wn = w0 + PES_RT_MAX_WORDS - 1;
            end = (wn + 1) << 3;
        }
        uint8_t watch = word_bytes(addr, addr + watch_len(addr, size));
        uint64_t use = tnow << SITE_BITS | site_code(site);
        for (uint64_t w = w0; w <= wn; w++) {
            uint64_t lo = w == w0 ? addr : w << 3, hi = w == wn ? end : (w + 1) << 3;
            if (word_access(r, thread, w, word_bytes(lo, hi), w == w0 ? watch : 0, is_write, use,
                            snow, ms) != 0)
                goto nomem;
        }
    }
    return 0;
nomem:
    pes_error_set(err, PES_ERR_NOMEM, 0, "rt_truth: out of memory");
    return -1;
}

int pes_rt_access(struct pes_rt *r, uint32_t thread, uint64_t addr, uint32_t size, int is_write,
                  uint32_t site, struct pes_error *err)
{
    r->index = 0;
    return access_at(r, thread, addr, size, is_write, site, err);
}

int pes_rt_access_batch(struct pes_rt *r, const struct pes_rt_access *a, size_t n,
                        struct pes_error *err)
{
    enum { AHEAD = 16, AHEAD_REC = 8 };
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            uint64_t addr = a[i + AHEAD].addr, line = addr >> r->line_shift;
            if (r->gran_lo == 0)
                __builtin_prefetch(&r->groups[hash_key(addr >> 6, r->groups_bits)]);
            if (r->gran_hi == 1)
                for (int sc = 0; sc < 2; sc++)
                    __builtin_prefetch(&r->tab[sc].loc[hash_key(line, r->tab[sc].bits)]);
        }
        if (r->gran_lo == 0 && i + AHEAD_REC < n) {
            /* the group's slot was prefetched: its records next */
            uint64_t key = a[i + AHEAD_REC].addr >> 6;
            const struct gslot *g = &r->groups[hash_key(key, r->groups_bits)];
            if (g->key == key && g->present)
                __builtin_prefetch(&r->rec[g->first]);
        }
        r->index = i;
        if (access_at(r, a[i].thread, a[i].addr, a[i].size, a[i].is_write, a[i].site, err) != 0) {
            if (err)
                err->offset = i;
            return -1;
        }
    }
    return 0;
}

const struct pes_rt_stats *pes_rt_totals(const struct pes_rt *r, enum pes_rt_scope scope)
{
    return &r->totals[scope ? 1 : 0];
}

const struct pes_rt_stats *pes_rt_thread(const struct pes_rt *r, enum pes_rt_scope scope,
                                         uint32_t thread)
{
    return thread < r->n_threads ? &r->threads[scope ? 1 : 0][thread] : NULL;
}

const struct pes_rt_counts *pes_rt_site(const struct pes_rt *r, enum pes_rt_scope scope,
                                        uint32_t site)
{
    int s = scope ? 1 : 0;
    if (site >= MAX_SITES)
        return r->other_seen ? &r->other_site[s] : NULL;
    if (site >= r->n_sites || !r->site_seen[site])
        return NULL;
    return &r->sites[s][site];
}
