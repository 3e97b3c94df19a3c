/*
 * rt_truth — ReuseTracker's reuse / invalidation ground truth from a full
 * interleaved access stream, independent of cache sizes (Dissertation §6.2,
 * Definitions 6.2.1–6.2.4, Tables 6.2 and 6.3).
 *
 * Every access is a "use". Its outcome is decided by the first of:
 *  INTRA (Def. 6.2.1/6.2.2, Table 6.2): the next access to the location by the
 *    same thread -> reuse, time distance = accesses of that thread strictly in
 *    between; a write by another thread -> invalidation. Reads by other threads
 *    do not end the pair ("no reuse" cells).
 *  SHARED (Def. 6.2.3/6.2.4, Table 6.3): the next access to the location by a
 *    thread of the same socket: a different thread -> shared-cache reuse, time
 *    distance = accesses of all threads of that socket strictly in between; the
 *    same thread -> no reuse (already an intra-thread reuse; the new access
 *    becomes the socket's use). A write from another socket -> invalidation.
 *    Reads from another socket do not end the pair (Table 6.3, W->R remark).
 * Locations, as the collector's watchpoints see them: at address (temporal)
 * granularity a use is the bytes a debug register watches for the access
 * (its largest aligned prefix of 1, 2, 4 or 8 bytes), and the next access
 * that touches any of those bytes decides it, whatever its start address or
 * size (a 16-byte vector load decides the uses of both 8-byte words it
 * covers; its own use is on its first); one pending use per owner and 8-byte
 * word. At line granularity the location is the first byte's cache line (a
 * line reuse is spatial when the two start addresses differ).
 * Reuses and invalidations suffered are attributed to the use's thread and
 * site; invalidations caused to the writing thread and site.
 * Limits: <= 64 threads, <= 64 sockets.
 */
#ifndef PES_REPLAY_RT_TRUTH_H
#define PES_REPLAY_RT_TRUTH_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"

/* Histogram of time distances: d < PES_RT_EXACT exactly, then one bin per
 * power of two: bin PES_RT_EXACT + k - log2(PES_RT_EXACT) holds [2^k, 2^(k+1)). */
#define PES_RT_EXACT       16u
#define PES_RT_EXACT_LOG2  4u
#define PES_RT_BINS        (PES_RT_EXACT + 64u - PES_RT_EXACT_LOG2)
#define PES_RT_MAX_THREADS 64u

struct pes_rt_hist {
    uint64_t bin[PES_RT_BINS];
};

size_t pes_rt_bin(uint64_t distance);
void pes_rt_bin_range(size_t bin, uint64_t *lo, uint64_t *hi); /* [lo, hi) */

enum pes_rt_scope { PES_RT_INTRA = 0, PES_RT_SHARED = 1 };

struct pes_rt_counts {
    uint64_t reuses;         /* temporal: same start address */
    uint64_t invalidations;  /* uses ended by a remote write (address granularity) */
    uint64_t inval_caused;   /* uses this write ended (address granularity) */
    uint64_t line_reuses;    /* line granularity, temporal + spatial */
    uint64_t spatial_reuses; /* line reuses whose addresses differ */
    uint64_t line_invalidations;
    uint64_t line_inval_caused;
};

struct pes_rt_stats {
    uint64_t accesses;
    struct pes_rt_counts n;
    struct pes_rt_hist temporal; /* address-granularity reuses */
    struct pes_rt_hist spatial;  /* line reuses with different addresses */
    struct pes_rt_hist line;     /* all line-granularity reuses */
};

/* Which granularities are tracked (pes_rt_config.track): a caller that reads
 * only one of them saves that table's memory and probes; the other's counts
 * and histograms stay zero. */
#define PES_RT_TRACK_ADDRESS 1u
#define PES_RT_TRACK_LINE    2u

struct pes_rt_config {
    uint32_t n_threads;            /* 1 .. 64 */
    const uint32_t *thread_socket; /* n_threads entries; NULL: one socket */
    uint32_t line;                 /* bytes, power of two */
    uint32_t track;                /* PES_RT_TRACK_* bits; 0: both */
    /* Optional: called for every intra-thread reuse at address granularity
     * with the index of the deciding access in its batch (0 for
     * pes_rt_access) and the start address of the use it decided, before
     * the next access is taken: what an exact stack distance of the same
     * reuse needs (ground_truth.c). */
    void (*intra_reuse)(void *ctx, size_t index, uint64_t use_addr);
    void *ctx;
};
/* An access longer than this many 8-byte words (a memcpy or memset record)
 * decides the uses in its first PES_RT_MAX_WORDS words only. */
#define PES_RT_MAX_WORDS 64u

struct pes_rt;

struct pes_rt *pes_rt_create(const struct pes_rt_config *cfg, struct pes_error *err);
void pes_rt_destroy(struct pes_rt *r);
int pes_rt_access(struct pes_rt *r, uint32_t thread, uint64_t addr, uint32_t size, int is_write,
                  uint32_t site, struct pes_error *err);
/* Same as pes_rt_access on a[0..n-1] in order, faster: the location tables
 * are probed at random, so their slots are prefetched a few accesses ahead.
 * On error err->offset is the index of the failing access. */
struct pes_rt_access {
    uint64_t addr;
    uint32_t size; /* bytes (0 is taken as 1) */
    uint32_t thread;
    uint32_t site;
    int is_write;
};
int pes_rt_access_batch(struct pes_rt *r, const struct pes_rt_access *a, size_t n,
                        struct pes_error *err);
const struct pes_rt_stats *pes_rt_totals(const struct pes_rt *r, enum pes_rt_scope scope);
const struct pes_rt_stats *pes_rt_thread(const struct pes_rt *r, enum pes_rt_scope scope,
                                         uint32_t thread);
/* Per site counts (NULL if the site was never seen); UINT32_MAX and very large
 * ids share one entry. */
const struct pes_rt_counts *pes_rt_site(const struct pes_rt *r, enum pes_rt_scope scope,
                                        uint32_t site);

#endif /* PES_REPLAY_RT_TRUTH_H */
