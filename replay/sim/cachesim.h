/*
 * cachesim — tag-only set-associative LRU caches and the per-core / per-socket
 * hierarchy built from them (private levels per core, shared levels per
 * socket). Mechanics only: lookup, fill, eviction and inclusion. Coherence
 * (MESI), miss classification and attribution live in mesi.h, which drives
 * this module.
 *
 * Lines are identified by their line number (address >> log2(line size)); all
 * levels of one hierarchy use the same line size.
 */
#ifndef PES_REPLAY_CACHESIM_H
#define PES_REPLAY_CACHESIM_H

#include <stdint.h>
#include "pes/model.h"
#include "pes/trace.h"

/* ---------------------------------------------------------------- one cache */

struct pes_cache;

/* ways == 0 means fully associative (one set of size/line ways; lookups scan
 * all ways, so keep such caches small). size must be a multiple of line*ways. */
struct pes_cache *pes_cache_create(uint64_t size, uint32_t ways, uint32_t line,
                                   struct pes_error *err);
void pes_cache_destroy(struct pes_cache *c);
/* 1 and the line becomes most recently used if present, else 0. */
int pes_cache_lookup(struct pes_cache *c, uint64_t lineno);
/* 1 if present; does not touch the LRU order. */
int pes_cache_contains(const struct pes_cache *c, uint64_t lineno);
/* Inserts a line that is not present as most recently used. Returns 1 and sets
 * *victim when the least recently used line of the set was evicted. */
int pes_cache_insert(struct pes_cache *c, uint64_t lineno, uint64_t *victim);
/* Removes a line; 1 if it was present. */
int pes_cache_remove(struct pes_cache *c, uint64_t lineno);
uint64_t pes_cache_sets(const struct pes_cache *c);
/* Index sets as a physically indexed cache would: lines keep their offset in
 * a page of page_size bytes, pages get fixed pseudo-random frames. After
 * pes_cache_set_index_shift. */
void pes_cache_set_page_index(struct pes_cache *c, uint64_t page_size, uint32_t line);
/* The cache of one address partition (mesi.h, pes_sim_partition_bits):
 * created with size >> shift (the sets of the partition's lines), it
 * indexes them by lineno >> shift, so that a line's set in the whole cache
 * is (set here) << shift | (lineno's low shift bits). */
void pes_cache_set_index_shift(struct pes_cache *c, unsigned shift);
/* The set lineno maps to (tests). */
uint64_t pes_cache_set_index(const struct pes_cache *c, uint64_t lineno);
uint32_t pes_cache_ways(const struct pes_cache *c);

/* ---------------------------------------------------------------- hierarchy */

/* Called when a line leaves a core's private hierarchy (evicted from its last
 * private level, or back-invalidated by an inclusive shared level). Not called
 * for pes_hier_drop_private (the caller already knows). */
typedef void (*pes_hier_evict_fn)(void *ctx, uint32_t core, uint64_t lineno);

struct pes_hier_config {
    uint32_t n_cores;
    uint32_t n_sockets;
    const uint32_t *core_socket; /* n_cores entries, each < n_sockets */
    uint32_t n_levels;           /* private levels first, then shared ones */
    struct pes_cache_config level[PES_MAX_LEVELS];
    int non_inclusive;    /* 0: shared levels include the private ones */
    uint64_t page_size;   /* 0: sets indexed by virtual line number; else physically
                                        indexed with random page frames of this size */
    uint32_t index_shift; /* one address partition's hierarchy (pes_cache_set_index_shift) */
};

struct pes_hier;

/* Optional: cores (bit c) whose private caches may hold the line. Lets an
 * inclusive shared-level eviction visit only those cores instead of scanning
 * every core's private caches (only used when n_cores <= 64). */
typedef uint64_t (*pes_hier_holders_fn)(void *ctx, uint64_t lineno);

struct pes_hier *pes_hier_create(const struct pes_hier_config *cfg, pes_hier_evict_fn on_evict,
                                 void *ctx, struct pes_error *err);
void pes_hier_set_holders(struct pes_hier *h, pes_hier_holders_fn holders);
void pes_hier_destroy(struct pes_hier *h);
uint32_t pes_hier_private_levels(const struct pes_hier *h);
uint32_t pes_hier_levels(const struct pes_hier *h);
/* Looks the line up level by level for core; returns the first level that
 * holds it (0 = L1) or pes_hier_levels() when it comes from memory, and fills
 * it into every level above that one (evicting LRU lines as needed). */
uint32_t pes_hier_access(struct pes_hier *h, uint32_t core, uint64_t lineno);
/* Hint: start loading the sets the line maps to (for batched replay). */
void pes_hier_prefetch(const struct pes_hier *h, uint32_t core, uint64_t lineno);
/* 1 if the core's private hierarchy holds the line. */
int pes_hier_holds(const struct pes_hier *h, uint32_t core, uint64_t lineno);
/* Coherence invalidation: removes the line from every private level of core. */
void pes_hier_drop_private(struct pes_hier *h, uint32_t core, uint64_t lineno);
/* Removes the line from every shared level of socket; 1 if one held it. The
 * caller drops the private copies of that socket's cores itself. */
int pes_hier_drop_shared(struct pes_hier *h, uint32_t socket, uint64_t lineno);

#endif /* PES_REPLAY_CACHESIM_H */
