/*
 * time_to_stack — statistical conversion of a time-distance histogram into a
 * stack (reuse) distance histogram (Shen et al., POPL'07, "Locality
 * approximation using time", as used by RDX and ReuseTracker).
 *
 * Sampled profilers measure the TIME distance of a reuse (accesses strictly
 * between the use and the reuse: a cyclic scan of M items reuses at M-1)
 * because a debug register only counts; the STACK distance (distinct data
 * strictly between) is what caches see. Shen's model assumes every datum is
 * accessed independently (a Bernoulli process). Formulas, derivation and the
 * estimator of the number of distinct data are in docs/accuracy.md:
 *
 *   D(t) = E[min(X + 1, t)]   expected distinct data in a window of t
 *                             accesses; X = time distance of a random use,
 *                             infinite for a use never reused
 *   p(t) = min(1, D(t) / (N - 1))   chance that one other datum is in the
 *                             window between a use and its reuse
 *   stack distance of a reuse at time distance t ~ Binomial(N - 1, p(t))
 *
 * D(t) is exact for any stream (every position of a window whose previous
 * access lies before the window holds a new datum), so a cyclic scan converts
 * exactly; the binomial spread is the model's assumption.
 */
#ifndef PES_REPLAY_TIME_TO_STACK_H
#define PES_REPLAY_TIME_TO_STACK_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"
#include "rt_truth.h"

/* Weighted reuses of one access stream (a thread, or a shared cache). */
struct pes_t2s_input {
    const uint64_t *distance; /* time distances of the reuses (any order) */
    const double *weight;     /* per reuse; NULL = 1 each */
    size_t n;
    double never;      /* weight of uses that are never reused */
    double n_distinct; /* N, distinct data of the stream; > 0 */
};

/* Histogram of stack distances (same bins as pes_rt_bin), as weights. */
struct pes_t2s_hist {
    double bin[PES_RT_BINS];
};

/* Estimator of the number of distinct data N of a stream of `accesses`
 * accesses, from uses sampled uniformly: every datum has exactly one last
 * access, so the fraction of sampled uses never reused estimates N / accesses.
 * Returns accesses * never / (reused + never), at least 1 (0 if nothing was
 * sampled). */
double pes_t2s_estimate_distinct(double accesses, double reused, double never);

/* Estimator of N from the reuses alone (Kac's lemma): in a stationary stream
 * the mean return time of datum i is 1 / (its share of the accesses), so the
 * mean of (time distance + 1) over all reuses is sum_i share_i / share_i = N.
 * Exact for cyclic scans, unbiased for uniform random access; needs no
 * never-reused count (which censored watchpoints blur). Long reuses that were
 * censored make it an underestimate. Returns 0 without reuses. */
double pes_t2s_estimate_distinct_kac(const uint64_t *distance, const double *weight, size_t n);

/* Never-reused weight consistent with N over a stream of `accesses` accesses
 * whose reuses weigh `reused`: the never-reused share of uses is N / accesses. */
double pes_t2s_never_weight(double n_distinct, double accesses, double reused);

/* Expected number of distinct data in a window of t accesses, D(t). */
struct pes_t2s;
struct pes_t2s *pes_t2s_create(const struct pes_t2s_input *in, struct pes_error *err);
void pes_t2s_destroy(struct pes_t2s *c);
double pes_t2s_footprint(const struct pes_t2s *c, uint64_t t);
/* Expected stack distance of a reuse at time distance t: (N - 1) p(t). */
double pes_t2s_expected(const struct pes_t2s *c, uint64_t t);
/* Adds the converted stack-distance histogram of the input's reuses (total
 * weight = sum of the reuse weights) to out. */
int pes_t2s_convert(const struct pes_t2s *c, struct pes_t2s_hist *out, struct pes_error *err);

/*
 * Phased conversion (docs/accuracy.md, "Phased conversion"): the same
 * footprint, estimated per window of the stream's own accesses. The reuses
 * are cut, by the position of their use, into windows of equal count
 * (window_min reuses or a few more each, one window when there are fewer);
 * a reuse's mean stack distance sums, over the windows its interval
 * crosses, the footprint of that window over the part of the interval
 * inside it (the window holding the use leaves the reuse itself out), and
 * its spread is the smaller of the independent-indicator variance along
 * the interval and Shen's binomial variance over the other data; the
 * histogram gets a binomial of that mean and variance (a point mass when
 * the variance is 0). Cyclic scans convert exactly.
 */
struct pes_t2s_phased_input {
    const uint64_t *distance; /* time distances of the reuses */
    const double *weight;     /* per reuse; NULL = 1 each */
    const uint64_t *position; /* position of each reuse's USE in the stream's access count */
    size_t n;
    double never;      /* weight of uses never reused, shared by the windows by reuse weight */
    double n_distinct; /* N; > 0 */
    size_t window_min; /* reuses per window; 0: chosen from the data (pes_t2s_phased_choose) */
};
/* At most this many windows: converting a reuse walks the windows its
 * interval spans (at period 10 K a thread of 2 M accesses has ~200 reuses). */
#define PES_T2S_MAX_WINDOWS 256
/* Windows of window_min reuses among n: n / window_min, 1..PES_T2S_MAX_WINDOWS (0: one). */
size_t pes_t2s_phased_windows(size_t n, size_t window_min);
/* The window size the data choose: among 2, 4, 8, ... reuses per window and
 * one window (returns n), the one whose windows best predict each reuse's
 * own time-distance bin from the window's other reuses (leave-one-out ranked
 * probability score); ties keep the larger. */
size_t pes_t2s_phased_choose(const struct pes_t2s_phased_input *in);
/* Adds the phased conversion of the input's reuses (total weight = sum of
 * the reuse weights) to out. 0, or -1 with err. */
int pes_t2s_convert_phased(const struct pes_t2s_phased_input *in, struct pes_t2s_hist *out,
                           struct pes_error *err);

#endif /* PES_REPLAY_TIME_TO_STACK_H */
