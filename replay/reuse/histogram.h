/*
 * histogram.h — reuse-distance histogram (a reuse profile, PPT-Multicore §2.3
 * Table 2): exact counts for distances below `exact_limit`, log2 bins beyond,
 * and a cold (infinite distance) count.
 *
 * Bin layout: distance d < exact_limit is counted in exact[d]; otherwise in
 * log2[floor(log2(d))] (bin b holds [2^b, 2^(b+1))). exact_limit is rounded up
 * to a power of two so no log2 bin straddles the exact range.
 *
 * The model's fixed-layout struct pes_reuse_profile (pes/model.h: 1024 exact
 * bins, log2 bins 2^10 .. 2^47) is what SDCM consumes; pes_rd_hist_to_profile
 * converts. This type stays configurable (exact range) and keeps the exact sum
 * of distances, which the model's layout cannot.
 */
#ifndef PES_REPLAY_HISTOGRAM_H
#define PES_REPLAY_HISTOGRAM_H

#include <stdint.h>
#include "pes/model.h"
#include "pes/trace.h"

#define PES_RD_HIST_LOG2_BINS     64
#define PES_RD_HIST_DEFAULT_EXACT 1024u

struct pes_rd_hist {
    uint64_t exact_limit; /* power of two; distances below are exact */
    uint64_t *exact;      /* exact_n counters, grown on demand up to exact_limit: */
    uint64_t exact_n;     /* the count of distance d < exact_limit is exact[d] if
                                  d < exact_n, else 0 (pes_rd_hist_exact) */
    uint64_t log2[PES_RD_HIST_LOG2_BINS];
    uint64_t cold;  /* first accesses (distance infinity) */
    uint64_t total; /* all accesses, cold included */
    double sum;     /* sum of finite distances (for the mean) */
};

/* exact_limit 0 = default. Allocates nothing: the exact counters grow with
 * the largest distance added (a short stream's histogram stays small).
 * Returns 0, or -1 with err filled (limit above 2^28). */
int pes_rd_hist_init(struct pes_rd_hist *h, uint64_t exact_limit, struct pes_error *err);
void pes_rd_hist_free(struct pes_rd_hist *h);
void pes_rd_hist_clear(struct pes_rd_hist *h);
/* d = PES_REUSE_COLD (UINT64_MAX) counts as cold. 0, or -1 if the exact
 * counters cannot grow (nothing is counted then). */
int pes_rd_hist_add(struct pes_rd_hist *h, uint64_t d);
int pes_rd_hist_add_n(struct pes_rd_hist *h, uint64_t d, uint64_t n);
/* Makes exact[0..d] valid (d < exact_limit); 0 or -1 (no memory). */
int pes_rd_hist_reserve(struct pes_rd_hist *h, uint64_t d);
/* The count of exact distance d (0 for d >= exact_limit: see log2). */
static inline uint64_t pes_rd_hist_exact(const struct pes_rd_hist *h, uint64_t d)
{
    return d < h->exact_n ? h->exact[d] : 0;
}
/* Adds src into dst; -1 if they have different exact_limit or dst cannot
 * grow (dst unchanged). */
int pes_rd_hist_merge(struct pes_rd_hist *dst, const struct pes_rd_hist *src);
/* Count of accesses with finite distance < c: the hits of a fully associative
 * LRU cache of c granules. Exact for c <= exact_limit or c a power of two;
 * otherwise the straddling log2 bin is split assuming a uniform spread. */
double pes_rd_hist_below(const struct pes_rd_hist *h, uint64_t c);
/* Mean finite distance (0 if none). */
double pes_rd_hist_mean(const struct pes_rd_hist *h);

/* Fills p (overwritten) from h. Needs h->exact_limit >= PES_PROFILE_EXACT so
 * no exact model bin has to be invented; returns -1 otherwise. Distances
 * >= 2^48 land in the model's last bin, as model.h specifies. */
int pes_rd_hist_to_profile(const struct pes_rd_hist *h, struct pes_reuse_profile *p);

#endif
