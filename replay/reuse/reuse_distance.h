/*
 * reuse_distance.h — exact reuse (LRU stack) distance of every access of one
 * address stream (PPT-Multicore §2.3: the number of distinct granules touched
 * between two consecutive accesses to the same granule; infinity = cold).
 *
 * Method: an open-addressing hash map (16-byte slots, no
 * per-key allocation) granule -> time of its latest access, and a
 * bit per time slot marking the latest access of each distinct granule. The
 * distance of an access is the number of marks after the previous access time.
 * Marks are counted with popcounts inside 64-slot words and a Fenwick tree over
 * the words (64x smaller than a per-slot tree, so it stays in cache). When the
 * time axis is full the live marks are renumbered densely in order
 * (compaction), so memory is O(distinct granules) for any trace length and the
 * cost is O(log M) per access, amortised.
 *
 * Granularity: granule = 1 (byte), 8 (word), 64 (line, default) or any power
 * of two; an address is mapped to addr / granule. This engine sees one granule
 * per push; callers split a multi-byte access that spans several granules into
 * one push per granule touched (profiles.c does, in ascending address order).
 *
 * Memory: about 16 B x 1.3..2.7 slots per distinct granule for the map, plus
 * one bit per time slot (2..4 slots per granule) and a small tree (e.g. 1 Mi lines: 33 MiB; 16 Mi lines:
 * 518 MiB, bench/reuse_bench.c). A new engine takes under 1 KiB: the map
 * starts at 16 slots and the time axis at 64, doubling as they fill.
 *
 * Errors: create returns NULL and fills err; push returns -1 only when memory
 * runs out or more than 2^30 distinct granules are live (pes_reuse_error()).
 */
#ifndef PES_REPLAY_REUSE_DISTANCE_H
#define PES_REPLAY_REUSE_DISTANCE_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"

#define PES_REUSE_COLD            UINT64_MAX /* distance of a first access */
#define PES_REUSE_DEFAULT_GRANULE 64u

struct pes_reuse_options {
    uint32_t granule;       /* bytes, power of two; 0 = 64 */
    uint64_t expected_keys; /* sizing hint for the hash map; 0 = small start */
    uint32_t min_window;    /* time-axis length in slots (rounded up to a
                                multiple of 64, at least 64) that compactions
                                grow it to before they size it by the live
                                granules alone; 0 = 65536. Small values force
                                frequent compaction (tests). */
};

struct pes_reuse;

struct pes_reuse *pes_reuse_create(const struct pes_reuse_options *opt, struct pes_error *err);
void pes_reuse_destroy(struct pes_reuse *e);

/* One access to the granule holding addr; *dist = distance or PES_REUSE_COLD. */
int pes_reuse_push(struct pes_reuse *e, uint64_t addr, uint64_t *dist);
/* Same for an already granule-aligned key (addr >> granule shift). */
int pes_reuse_push_key(struct pes_reuse *e, uint64_t key, uint64_t *dist);

/* The distance key would have if it were accessed now (distinct granules
 * touched since its latest access; PES_REUSE_COLD if never), without
 * accessing it: the stack distance of a reuse whose location is not the
 * accessed granule (rt_truth's watched bytes). 0, or -1 as push. */
int pes_reuse_peek_key(struct pes_reuse *e, uint64_t key, uint64_t *dist);

/* n accesses in order (dist[i] for addr[i]); same results as n pushes, but
 * prefetches hash slots ahead, which pays off when the map outgrows the cache.
 * On error the first accesses up to the failing one have been applied. */
int pes_reuse_push_batch(struct pes_reuse *e, const uint64_t *addr, size_t n, uint64_t *dist);
/* Same for n granule keys (addr >> granule shift). */
int pes_reuse_push_keys(struct pes_reuse *e, const uint64_t *key, size_t n, uint64_t *dist);

unsigned pes_reuse_granule_shift(const struct pes_reuse *e);
uint64_t pes_reuse_distinct(const struct pes_reuse *e); /* distinct granules seen */
uint64_t pes_reuse_compactions(const struct pes_reuse *e);
/* Bytes held by the engine's tables (hash map, bitmap, tree). */
uint64_t pes_reuse_memory(const struct pes_reuse *e);
const struct pes_error *pes_reuse_error(const struct pes_reuse *e);

/* Writes the live granule keys to keys[0 .. pes_reuse_distinct(e) - 1] in the
 * order of their latest access, oldest first (the LRU stack read bottom up).
 * Pushing them in this order into another engine moves them to the top of its
 * stack in the same relative order (parda.c). O(distinct + time axis); 0, or
 * -1 when the scratch for the ranks cannot be allocated. */
int pes_reuse_keys_by_recency(const struct pes_reuse *e, uint64_t *keys);

#endif
