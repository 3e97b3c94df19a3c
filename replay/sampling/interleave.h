/*
 * interleave.h — the `interleave` communication-volume estimator
 * (pes-replay --comm-estimator interleave; docs/accuracy.md, "Communication
 * volume from the sampled interleaving").
 *
 * ComDetective counts every detection as `period` line transfers, which
 * assumes the line changes owner between samples as often as at the
 * sample. This estimator instead rebuilds, from the samples alone, when each
 * thread ran and how fast (its samples' times and access counts), which
 * lines it touched and how often (its samples' lines), and counts the owner
 * changes a time-ordered interleaving of those accesses would have: within a
 * stretch of time where threads a, b, ... access line L at rates λ_a, λ_b,
 * ..., consecutive accesses to L come from different threads a and b at rate
 * λ_a λ_b / Λ (Λ = Σ λ), a transfer when one of the two is a store.
 *
 * Time resolution: a thread that was off the CPU between two samples shows
 * as an interval much slower than its running speed nearby. A time-merged
 * trace with a mark every `resolution` accesses spreads the segment that
 * holds such a gap over it, where it interleaves with whatever ran
 * (docs/trace-format.md §7); so a gapped interval contributes `resolution`
 * accesses per gap, spread over the interval, and its running part (which
 * ran while the threads sharing its CPU did not, at an unknown moment) none.
 */
#ifndef PES_REPLAY_INTERLEAVE_H
#define PES_REPLAY_INTERLEAVE_H

#include <stddef.h>
#include <stdint.h>

/* One point of a thread's timeline: a sample (has_line: its access's line,
 * whether a store, and the bytes of the line it touched, bit i = byte i of a
 * 64-byte line) or an end-of-thread count (TOTALS: has_line 0). count =
 * loads + stores. */
struct pes_ilv_point {
    uint64_t time, count, line;
    uint32_t thread;
    uint64_t bytes;
    uint8_t has_line, write;
    double weight; /* the sample's inverse inclusion probability, relative
                        (pes-collect --samples: its period / the cap); 1 at a fixed period */
};

struct pes_ilv_params {
    uint32_t n_threads;
    double resolution; /* accesses per time mark of the merge emulated (> 0) */
    double
        gap_factor;  /* an interval slower than the local running speed / this holds a gap (> 1) */
    double max_work; /* bound on the sweep's steps x line pairs (0: PES_ILV_MAX_WORK); past it the
                            sweep averages each thread's rate over that many equal time bins */
};

#define PES_ILV_MAX_WORK 2e8 /* a few seconds at most */

struct pes_ilv_stats {
    uint64_t bins;           /* 0: exact sweep; else the time bins of the bounded one */
    uint64_t shared_lines;   /* lines sampled by >= 2 threads */
    uint64_t shared_samples; /* samples on those lines */
    double shared_neff; /* Kish's effective size of their weights (= shared_samples at weight 1) */
    uint64_t gaps;      /* sample intervals with an off-CPU gap */
};

/* Estimates the line transfers between threads from the points (sorted in
 * place). true_m / false_m: n_threads^2 cells, zeroed and filled like
 * ComDetective's matrix (symmetric, zero diagonal, every transfer in cells
 * (i, j) and (j, i)); the true part of a pair's transfers on a line is the
 * share whose receiving access touches bytes the other thread's sampled
 * stores wrote, each direction weighted by the sender's store share. Returns 0,
 * or -1 when out of memory or a point names a thread >= n_threads. */
int pes_ilv_estimate(struct pes_ilv_point *p, size_t n, const struct pes_ilv_params *par,
                     double *true_m, double *false_m, struct pes_ilv_stats *st);

#endif
