/*
 * compare — accuracy metrics of a sampled result against the full-trace
 * ground truth of the same execution (pes-replay --compare, docs/accuracy.md).
 *
 *  - Histogram similarity S = 1 - 1/2 sum_i |B_i - B^_i| over histograms
 *    normalised to fractions (Dissertation §6.5.1; RDX). 1 = identical,
 *    0 = disjoint.
 *  - Marathe et al. §4.1: rank the references (sites) of each result by a
 *    metric, take the top k of each. V1 = truth summed over the full top k,
 *    V2 = truth summed over the sampled top k; coverage fraction = V2 / V1.
 *    False positives = sampled top-k references whose truth is zero.
 *  - Communication matrix (ComDetective §5.4.1): relative error of the total
 *    volume, and the per-cell error 1/2 sum |a_ij/A - a^_ij/A^| (1 - S over
 *    the cells: how differently the volume is distributed).
 *  - Fraction errors (false-sharing fraction, invalidation ratio):
 *    estimated fraction minus true fraction.
 * Undefined results (an empty truth) are NaN.
 */
#ifndef PES_REPLAY_COMPARE_H
#define PES_REPLAY_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"

/* S of two histograms of n bins (any scale, non-negative). Both empty: 1;
 * exactly one empty: 0. */
double pes_cmp_similarity(const double *a, const double *b, size_t n);

struct pes_cmp_site {
    uint64_t key; /* reference: site id */
    double value; /* metric (any scale; only the ranking matters) */
};

struct pes_cmp_topk {
    double coverage; /* V2 / V1; NaN if V1 == 0 */
    double v1, v2;
    uint32_t false_positives;
    uint32_t n_full, n_sampled; /* references in each top k (value > 0) */
};

/* Top-k coverage fraction and false positives. Entries may be in any order;
 * keys must be unique within each table. Ties are broken by key (ascending) so
 * the result is deterministic. Only references with value > 0 are ranked. */
int pes_cmp_topk(const struct pes_cmp_site *full, size_t n_full, const struct pes_cmp_site *sampled,
                 size_t n_sampled, size_t k, struct pes_cmp_topk *out, struct pes_error *err);

struct pes_cmp_matrix {
    double total_true, total_est;
    double
        volume_error; /* (total_est - total_true) / total_true; 0 if both are 0, NaN if only the truth is */
    double
        cell_error; /* 1/2 sum |normalised cells|, in [0, 1]; 1 for an empty estimate, 0 if both are
                            * empty, NaN if only the truth is */
};

void pes_cmp_matrix(const double *truth, const double *est, size_t cells,
                    struct pes_cmp_matrix *out);

/* est_part/est_total - true_part/true_total; NaN if a total is 0. */
double pes_cmp_fraction_error(double est_part, double est_total, double true_part,
                              double true_total);

#endif /* PES_REPLAY_COMPARE_H */
