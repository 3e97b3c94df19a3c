/*
 * cachesim — tag-only set-associative LRU caches and their hierarchy.
 *
 * A set is a small array of line numbers kept in recency order (MRU first,
 * empty slots packed at the end), so true LRU costs one short scan and a
 * memmove per access and nothing is allocated after creation.
 */
#include "cachesim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT64_MAX

struct pes_cache {
    uint64_t *tags; /* sets * ways line numbers */
    uint64_t sets;
    uint64_t set_mask; /* sets - 1 when sets is a power of two */
    uint32_t ways;
    int pow2;
    int phys; /* physically indexed: random page frames (pes_cache_set_page_index) */
    unsigned page_lines_log2; /* with phys: lines per page (log2), after index_shift */
    unsigned index_shift; /* one address partition's cache: sets indexed by lineno >> index_shift */
};

struct pes_cache *pes_cache_create(uint64_t size, uint32_t ways, uint32_t line,
                                   struct pes_error *err)
{
    char msg[160];
    if (line == 0 || (line & (line - 1)) != 0 || size < line) {
        snprintf(msg, sizeof msg, "cache: line size %u must be a power of two <= size %llu", line,
                 (unsigned long long)size);
        pes_error_set(err, PES_ERR_ARG, 0, "%s", msg);
        return NULL;
    }
    uint64_t w = ways ? ways : size / line;
    if (w > 65536 || size % ((uint64_t)line * w) != 0) {
        snprintf(msg, sizeof msg, "cache: size %llu is not a multiple of %u-byte lines x %llu ways",
                 (unsigned long long)size, line, (unsigned long long)w);
        pes_error_set(err, PES_ERR_ARG, 0, "%s", msg);
        return NULL;
    }
    struct pes_cache *c = calloc(1, sizeof *c);
    if (!c) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "cache: out of memory");
        return NULL;
    }
    c->ways = (uint32_t)w;
    c->sets = size / line / w;
    c->pow2 = (c->sets & (c->sets - 1)) == 0;
    c->set_mask = c->sets - 1;
    c->tags = malloc(c->sets * w * sizeof *c->tags);
    if (!c->tags) {
        free(c);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "cache: out of memory");
        return NULL;
    }
    memset(c->tags, 0xff, c->sets * w * sizeof *c->tags);
    return c;
}

void pes_cache_destroy(struct pes_cache *c)
{
    if (!c)
        return;
    free(c->tags);
    free(c);
}

/* A fixed pseudo-random page frame for a virtual page (murmur3 finaliser):
 * what an OS's page allocator looks like to a physically indexed cache. */
static inline uint64_t page_frame(uint64_t page)
{
    page ^= page >> 33;
    page *= 0xff51afd7ed558ccdULL;
    page ^= page >> 33;
    page *= 0xc4ceb9fe1a85ec53ULL;
    return page ^ (page >> 33);
}

static inline uint64_t set_index(const struct pes_cache *c, uint64_t lineno)
{
    uint64_t x = lineno >> c->index_shift;
    if (c->phys) { /* physically indexed: keep the offset in the page, randomise the frame */
        uint64_t in_page = x & ((1ULL << c->page_lines_log2) - 1);
        /* a partition's cache drops the bits the whole cache's 64-bit
         * frame number shifted out, so that sets modulo a count that is no
         * power of two stay the whole cache's */
        uint64_t frame = page_frame(x >> c->page_lines_log2) << c->page_lines_log2 &
                         (UINT64_MAX >> c->index_shift);
        x = frame | in_page;
    }
    return c->pow2 ? (x & c->set_mask) : (x % c->sets);
}

static inline uint64_t *set_of(const struct pes_cache *c, uint64_t lineno)
{
    return c->tags + set_index(c, lineno) * c->ways;
}

uint64_t pes_cache_set_index(const struct pes_cache *c, uint64_t lineno)
{
    return set_index(c, lineno);
}

int pes_cache_lookup(struct pes_cache *c, uint64_t lineno)
{
    uint64_t *t = set_of(c, lineno);
    if (t[0] == lineno)
        return 1;
    for (uint32_t i = 1; i < c->ways; i++) {
        if (t[i] == lineno) {
            memmove(t + 1, t, i * sizeof *t);
            t[0] = lineno;
            return 1;
        }
        if (t[i] == EMPTY)
            return 0;
    }
    return 0;
}

int pes_cache_contains(const struct pes_cache *c, uint64_t lineno)
{
    const uint64_t *t = set_of(c, lineno);
    for (uint32_t i = 0; i < c->ways && t[i] != EMPTY; i++)
        if (t[i] == lineno)
            return 1;
    return 0;
}

int pes_cache_insert(struct pes_cache *c, uint64_t lineno, uint64_t *victim)
{
    uint64_t *t = set_of(c, lineno);
    uint64_t last = t[c->ways - 1];
    memmove(t + 1, t, (c->ways - 1) * sizeof *t);
    t[0] = lineno;
    if (last == EMPTY)
        return 0;
    *victim = last;
    return 1;
}

int pes_cache_remove(struct pes_cache *c, uint64_t lineno)
{
    uint64_t *t = set_of(c, lineno);
    for (uint32_t i = 0; i < c->ways && t[i] != EMPTY; i++) {
        if (t[i] == lineno) {
            memmove(t + i, t + i + 1, (c->ways - 1 - i) * sizeof *t);
            t[c->ways - 1] = EMPTY;
            return 1;
        }
    }
    return 0;
}

uint64_t pes_cache_sets(const struct pes_cache *c)
{
    return c->sets;
}

void pes_cache_set_page_index(struct pes_cache *c, uint64_t page_size, uint32_t line)
{
    /* Only sets beyond one page's worth of lines depend on the frame: a
     * cache whose sets x line fit in a page (an L1 of 32 KiB, 8 ways) is
     * indexed by the page offset alone, as virtually indexed L1s are. A
     * partition's cache decides as the whole cache would (its sets and page
     * bits are both index_shift bits fewer). */
    unsigned bits = 0;
    while (((uint64_t)line << (bits + 1)) <= page_size)
        bits++;
    c->phys = (c->sets << c->index_shift) > (1ULL << bits) && bits >= c->index_shift;
    c->page_lines_log2 = c->phys ? bits - c->index_shift : 0;
}

void pes_cache_set_index_shift(struct pes_cache *c, unsigned shift)
{
    c->index_shift = shift;
}
uint32_t pes_cache_ways(const struct pes_cache *c)
{
    return c->ways;
}

/* ---------------------------------------------------------------- hierarchy */

struct pes_hier {
    uint32_t n_cores, n_sockets, n_levels, n_private;
    int non_inclusive;
    uint32_t *core_socket;
    /* cache[k][unit]: unit is the core for private levels, the socket for shared ones */
    struct pes_cache **cache[PES_MAX_LEVELS];
    uint32_t units[PES_MAX_LEVELS];
    pes_hier_evict_fn on_evict;
    pes_hier_holders_fn holders;
    void *ctx;
};

void pes_hier_set_holders(struct pes_hier *h, pes_hier_holders_fn holders)
{
    h->holders = h->n_cores <= 64 ? holders : NULL;
}

void pes_hier_destroy(struct pes_hier *h)
{
    if (!h)
        return;
    for (uint32_t k = 0; k < h->n_levels; k++) {
        if (!h->cache[k])
            continue;
        for (uint32_t u = 0; u < h->units[k]; u++)
            pes_cache_destroy(h->cache[k][u]);
        free(h->cache[k]);
    }
    free(h->core_socket);
    free(h);
}

struct pes_hier *pes_hier_create(const struct pes_hier_config *cfg, pes_hier_evict_fn on_evict,
                                 void *ctx, struct pes_error *err)
{
    char msg[200];
    if (!cfg || cfg->n_cores == 0 || cfg->n_sockets == 0 || !cfg->core_socket ||
        cfg->n_levels == 0 || cfg->n_levels > PES_MAX_LEVELS) {
        pes_error_set(err, PES_ERR_ARG, 0, "%s",
                      "cachesim: need >= 1 core, >= 1 socket, 1..4 cache levels");
        return NULL;
    }
    uint32_t np = 0;
    while (np < cfg->n_levels && !cfg->level[np].shared)
        np++;
    for (uint32_t k = np; k < cfg->n_levels; k++) {
        if (!cfg->level[k].shared) {
            snprintf(msg, sizeof msg, "cachesim: private level L%u below a shared level", k + 1);
            pes_error_set(err, PES_ERR_ARG, 0, "%s", msg);
            return NULL;
        }
    }
    if (np == 0) {
        pes_error_set(err, PES_ERR_ARG, 0, "%s",
                      "cachesim: coherence needs at least one private cache level");
        return NULL;
    }
    for (uint32_t k = 1; k < cfg->n_levels; k++) {
        if (cfg->level[k].line != cfg->level[0].line) {
            snprintf(msg, sizeof msg, "cachesim: L%u line %u differs from L1 line %u", k + 1,
                     cfg->level[k].line, cfg->level[0].line);
            pes_error_set(err, PES_ERR_ARG, 0, "%s", msg);
            return NULL;
        }
    }
    for (uint32_t c = 0; c < cfg->n_cores; c++) {
        if (cfg->core_socket[c] >= cfg->n_sockets) {
            snprintf(msg, sizeof msg, "cachesim: core %u mapped to socket %u of %u", c,
                     cfg->core_socket[c], cfg->n_sockets);
            pes_error_set(err, PES_ERR_ARG, 0, "%s", msg);
            return NULL;
        }
    }
    struct pes_hier *h = calloc(1, sizeof *h);
    if (!h)
        goto nomem;
    h->n_cores = cfg->n_cores;
    h->n_sockets = cfg->n_sockets;
    h->n_levels = cfg->n_levels;
    h->n_private = np;
    h->non_inclusive = cfg->non_inclusive;
    h->on_evict = on_evict;
    h->ctx = ctx;
    h->core_socket = malloc(cfg->n_cores * sizeof *h->core_socket);
    if (!h->core_socket)
        goto nomem;
    memcpy(h->core_socket, cfg->core_socket, cfg->n_cores * sizeof *h->core_socket);
    for (uint32_t k = 0; k < cfg->n_levels; k++) {
        h->units[k] = k < np ? cfg->n_cores : cfg->n_sockets;
        h->cache[k] = calloc(h->units[k], sizeof *h->cache[k]);
        if (!h->cache[k])
            goto nomem;
        for (uint32_t u = 0; u < h->units[k]; u++) {
            const struct pes_cache_config *lc = &cfg->level[k];
            /* one partition's share of the sets (pes_sim_partition_bits made
             * sure they divide), the same ways */
            h->cache[k][u] =
                pes_cache_create(lc->size >> cfg->index_shift, lc->ways, lc->line, err);
            if (h->cache[k][u])
                pes_cache_set_index_shift(h->cache[k][u], cfg->index_shift);
            if (h->cache[k][u] && cfg->page_size)
                pes_cache_set_page_index(h->cache[k][u], cfg->page_size, lc->line);
            if (!h->cache[k][u]) {
                pes_hier_destroy(h);
                return NULL;
            }
        }
    }
    return h;
nomem:
    pes_hier_destroy(h);
    pes_error_set(err, PES_ERR_NOMEM, 0, "%s", "cachesim: out of memory");
    return NULL;
}

uint32_t pes_hier_private_levels(const struct pes_hier *h)
{
    return h->n_private;
}
uint32_t pes_hier_levels(const struct pes_hier *h)
{
    return h->n_levels;
}

int pes_hier_holds(const struct pes_hier *h, uint32_t core, uint64_t lineno)
{
    /* Private levels are inclusive, so the last one answers for all. */
    return pes_cache_contains(h->cache[h->n_private - 1][core], lineno);
}

void pes_hier_drop_private(struct pes_hier *h, uint32_t core, uint64_t lineno)
{
    for (uint32_t k = 0; k < h->n_private; k++)
        pes_cache_remove(h->cache[k][core], lineno);
}

int pes_hier_drop_shared(struct pes_hier *h, uint32_t socket, uint64_t lineno)
{
    int held = 0;
    for (uint32_t k = h->n_private; k < h->n_levels; k++)
        held |= pes_cache_remove(h->cache[k][socket], lineno);
    return held;
}

/* A victim left level k of unit: keep inclusion above it. */
static void evicted(struct pes_hier *h, uint32_t k, uint32_t unit, uint64_t v)
{
    if (k < h->n_private) {
        for (uint32_t j = 0; j < k; j++)
            pes_cache_remove(h->cache[j][unit], v);
        if (k == h->n_private - 1 && h->on_evict)
            h->on_evict(h->ctx, unit, v);
        return;
    }
    if (h->non_inclusive)
        return;
    /* Inclusive shared level: back-invalidate the shared levels above and the
     * private copies of every core of this socket. */
    for (uint32_t j = h->n_private; j < k; j++)
        pes_cache_remove(h->cache[j][unit], v);
    if (h->holders) {
        uint64_t m = h->holders(h->ctx, v);
        while (m) {
            uint32_t c = (uint32_t)__builtin_ctzll(m);
            m &= m - 1;
            if (c >= h->n_cores || h->core_socket[c] != unit)
                continue;
            pes_hier_drop_private(h, c, v);
            if (h->on_evict)
                h->on_evict(h->ctx, c, v);
        }
        return;
    }
    for (uint32_t c = 0; c < h->n_cores; c++) {
        if (h->core_socket[c] != unit || !pes_hier_holds(h, c, v))
            continue;
        pes_hier_drop_private(h, c, v);
        if (h->on_evict)
            h->on_evict(h->ctx, c, v);
    }
}

uint32_t pes_hier_access(struct pes_hier *h, uint32_t core, uint64_t lineno)
{
    uint32_t s = h->core_socket[core];
    uint32_t hit = h->n_levels;
    for (uint32_t k = 0; k < h->n_levels; k++) {
        uint32_t unit = k < h->n_private ? core : s;
        if (pes_cache_lookup(h->cache[k][unit], lineno)) {
            hit = k;
            break;
        }
    }
    /* Fill from the level below the hit upwards so inclusion holds at every step. */
    for (uint32_t k = hit; k-- > 0;) {
        uint32_t unit = k < h->n_private ? core : s;
        uint64_t v;
        if (pes_cache_insert(h->cache[k][unit], lineno, &v))
            evicted(h, k, unit, v);
    }
    return hit;
}

void pes_hier_prefetch(const struct pes_hier *h, uint32_t core, uint64_t lineno)
{
    uint32_t s = h->core_socket[core];
    for (uint32_t k = 0; k < h->n_levels; k++)
        __builtin_prefetch(set_of(h->cache[k][k < h->n_private ? core : s], lineno));
}
