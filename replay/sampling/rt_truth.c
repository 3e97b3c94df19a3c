/*
 * rt_truth — ReuseTracker reuse / invalidation ground truth (definitions in
 * rt_truth.h; Dissertation §6.2, Tables 6.2 and 6.3).
 *
 * Each (scope, granularity) pair keeps a hash map location -> pending uses:
 * one per thread (intra) or per socket (shared), with a bitmask of which are
 * pending, so a remote write ends exactly the uses it invalidates.
 */
#include "rt_truth.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NO_KEY UINT64_MAX
#define MAX_SITES (1u << 22)

struct pend {
    uint64_t time;     /* owner's access counter (thread or socket) at the use */
    uint32_t site;
    uint16_t thread;
    uint16_t offset;   /* line granularity: start address within the line; address
                        * granularity: the bytes of the 8-byte word the use watches */
};

/* One location. Most locations have a single pending use (private data), kept
 * inline; when a second owner has a pending use at the same time, the location
 * gets a record of k pending uses (one per owner) from the table's pool.
 * Invariant: ext == 0 implies mask has at most the bit of owner0. */
struct loc {
    uint64_t key;
    uint64_t mask;     /* owners with a pending use */
    struct pend p0;    /* owner0's pending use while ext == 0 */
    uint32_t ext;      /* 1 + record index in pool, 0 = none */
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

struct pes_rt {
    uint32_t n_threads, n_sockets, line_shift;
    int gran_lo, gran_hi;             /* tracked granularities: tab[.][gran_lo .. gran_hi] */
    uint32_t *socket;                 /* per thread */
    uint64_t *thread_time, *socket_time;
    struct table tab[2][2];           /* [scope][0 address, 1 line] */
    struct pes_rt_stats totals[2];
    struct pes_rt_stats *threads[2];
    struct pes_rt_counts *sites[2];
    uint8_t *site_seen;
    uint32_t n_sites;
    struct pes_rt_counts other_site[2];
    void (*intra_reuse)(void *ctx, size_t index, uint64_t use_addr);
    void *ctx;
    size_t index;                     /* of the access in its batch */
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
    madvise(p, (bytes + huge - 1) & ~(huge - 1), MADV_HUGEPAGE);  /* a hint */
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
        /* up to 3/4 full: linear probing stays short there, and the tables
         * (one slot per distinct address) are most of --compare's memory */
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

void pes_rt_destroy(struct pes_rt *r)
{
    if (!r)
        return;
    for (int s = 0; s < 2; s++) {
        for (int g = 0; g < 2; g++) {
            free(r->tab[s][g].loc);
            free(r->tab[s][g].pool);
        }
        free(r->threads[s]);
        free(r->sites[s]);
    }
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
    for (int s = 0; s < 2; s++) {
        for (int g = r->gran_lo; g <= r->gran_hi; g++) {
            r->tab[s][g].k = s == PES_RT_INTRA ? r->n_threads : r->n_sockets;
            if (table_grow(&r->tab[s][g], 12) != 0)
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

/* One access against one table. owner: thread (intra) or socket (shared).
 * Address granularity: key is an 8-byte word, touch the bytes of it the
 * access reads or writes, and a pending use ends only where its watched bytes
 * (pend.offset) meet them; watch is the new use's bytes, 0 on the later words
 * of a multi-word access (they end uses, the watch stays on the first word).
 * Line granularity: touch and watch are ignored, every access meets the use. */
static int track(struct pes_rt *r, int scope, int gran, uint32_t thread, uint64_t key,
                 uint16_t offset, uint8_t touch, uint8_t watch, int is_write, uint32_t site,
                 uint64_t now, struct pes_rt_counts *my_site)
{
    struct table *t = &r->tab[scope][gran];
    uint64_t j = table_get(t, key);
    if (j == t->cap)
        return -1;
    struct loc *l = &t->loc[j];
    uint32_t owner = scope == PES_RT_INTRA ? thread : r->socket[thread];
    uint64_t obit = 1ull << owner;
    struct pes_rt_stats *tot = &r->totals[scope];
    struct pes_rt_stats *th = &r->threads[scope][thread];
    int first = gran == 1 || watch != 0;   /* this access's use starts here */

    if ((l->mask & obit) && (scope == PES_RT_INTRA || pend_of(t, l, owner)->thread != thread) &&
        (gran == 1 || (pend_of(t, l, owner)->offset & touch))) {
        /* Reuse: Table 6.2 same-core column / Table 6.3 same-socket column. */
        struct pend *u = pend_of(t, l, owner);
        uint64_t d = now - u->time - 1;
        struct pes_rt_stats *uth = &r->threads[scope][u->thread];
        struct pes_rt_counts *us = site_of(r, scope, u->site);
        size_t b = pes_rt_bin(d);
        if (gran == 0) {
            tot->n.reuses++, uth->n.reuses++, us->reuses++;
            tot->temporal.bin[b]++, uth->temporal.bin[b]++;
            /* the use's start: its watch begins at it (watch_len) */
            if (scope == PES_RT_INTRA && r->intra_reuse)
                r->intra_reuse(r->ctx, r->index, key << 3 | (uint64_t)__builtin_ctz(u->offset));
        } else {
            tot->n.line_reuses++, uth->n.line_reuses++, us->line_reuses++;
            tot->line.bin[b]++, uth->line.bin[b]++;
            if (u->offset != offset) {
                tot->n.spatial_reuses++, uth->n.spatial_reuses++, us->spatial_reuses++;
                tot->spatial.bin[b]++, uth->spatial.bin[b]++;
            }
        }
        if (!first)
            l->mask &= ~obit;   /* decided; the access's own use is on its first word */
    }
    if (is_write) {
        /* Invalidation: Table 6.2 different-core / Table 6.3 different-socket W. */
        uint64_t m = l->mask & ~obit;
        while (m) {
            uint32_t o = (uint32_t)__builtin_ctzll(m);
            m &= m - 1;
            struct pend *u = pend_of(t, l, o);
            if (gran == 0 && !(u->offset & touch))
                continue;   /* another word's bytes: the watch does not see this write */
            l->mask &= ~(1ull << o);
            struct pes_rt_stats *uth = &r->threads[scope][u->thread];
            struct pes_rt_counts *us = site_of(r, scope, u->site);
            if (gran == 0) {
                tot->n.invalidations++, uth->n.invalidations++, us->invalidations++;
                tot->n.inval_caused++, th->n.inval_caused++, my_site->inval_caused++;
            } else {
                tot->n.line_invalidations++, uth->n.line_invalidations++, us->line_invalidations++;
                tot->n.line_inval_caused++, th->n.line_inval_caused++, my_site->line_inval_caused++;
            }
        }
    }
    if (!first)
        return 0;
    if (!l->ext) {
        if ((l->mask & ~obit) == 0) {
            l->owner0 = (uint16_t)owner;
        } else if (make_ext(t, l) != 0) {
            return -1;
        }
    }
    *pend_of(t, l, owner) = (struct pend){.time = now, .site = site, .thread = (uint16_t)thread,
                                          .offset = gran == 1 ? offset : watch};
    l->mask |= obit;
    return 0;
}

/* The bytes [lo, hi) of word w (w * 8 <= lo < hi <= w * 8 + 8) as a mask. */
static inline uint8_t word_bytes(uint64_t lo, uint64_t hi)
{
    return (uint8_t)(((1u << (hi - lo)) - 1) << (lo & 7));
}

/* What the collector's watchpoint covers for an access (rt_watch.c): the
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
    /* address granularity: the 8-byte words the access touches; the use
     * watches what a debug register would (watch_len) on the first */
    uint64_t end = addr + size, w0 = addr >> 3, wn = (end - 1) >> 3;
    if (wn - w0 >= PES_RT_MAX_WORDS) {   /* memcpy / memset records: their first words */
        wn = w0 + PES_RT_MAX_WORDS - 1;
        end = (wn + 1) << 3;
    }
    uint8_t watch = word_bytes(addr, addr + watch_len(addr, size));
    for (int s = 0; s < 2; s++) {
        uint64_t now = s == PES_RT_INTRA ? tnow : snow;
        r->totals[s].accesses++;
        r->threads[s][thread].accesses++;
        for (uint64_t w = w0; r->gran_lo == 0 && w <= wn; w++) {
            uint64_t lo = w == w0 ? addr : w << 3, hi = w == wn ? end : (w + 1) << 3;
            if (track(r, s, 0, thread, w, 0, word_bytes(lo, hi), w == w0 ? watch : 0, is_write, site, now,
                      ms[s]) != 0)
                goto nomem;
        }
        if (r->gran_hi == 1 && track(r, s, 1, thread, line, off, 0, 0, is_write, site, now, ms[s]) != 0)
            goto nomem;
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
    enum { AHEAD = 8 };
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            uint64_t addr = a[i + AHEAD].addr, word = addr >> 3, line = addr >> r->line_shift;
            for (int sc = 0; sc < 2; sc++) {
                const struct table *t0 = &r->tab[sc][0], *t1 = &r->tab[sc][1];
                if (r->gran_lo == 0)
                    __builtin_prefetch(&t0->loc[hash_key(word, t0->bits)]);
                if (r->gran_hi == 1)
                    __builtin_prefetch(&t1->loc[hash_key(line, t1->bits)]);
            }
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
