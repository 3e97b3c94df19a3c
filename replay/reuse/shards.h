/*
 * shards.h — approximate reuse-distance histogram and miss-ratio curve (MRC)
 * of a huge address stream by spatial sampling (SHARDS: Waldspurger, Park,
 * Garthwaite, Ahmad, "Efficient MRC Construction with SHARDS", FAST 2015).
 *
 * Method. Each granule ("line": addr >> log2(granule)) gets a pseudo-random
 * 56-bit value h(line) = top 56 bits of a 64-bit mixer (splitmix64's
 * finaliser) of line + a seed-derived offset. The line is sampled iff
 * h(line) < T, where T = R * 2^56 (P = 2^56 in SHARDS' terms, R = T/P). The
 * decision depends on the line only, so either every access of a line is
 * kept or none is ("spatial" sampling): the reuses among kept lines are
 * exactly the reuses of a random R-fraction of the lines. Kept accesses go
 * through an exact LRU stack-distance engine; a kept access whose sampled
 * distance is d_s (distinct sampled lines since the previous access of its
 * line) stands for 1/R accesses of distance about d_s / R in the full
 * stream, because each of the D lines in between was sampled with
 * probability R. Rejected accesses cost one hash and one compare.
 *
 * Fixed-rate mode (s_max = 0): T is fixed; the existing exact engine
 * (reuse_distance.h) computes the sampled distances; memory grows as R x the
 * distinct lines.
 *
 * Fixed-size mode (s_max > 0, SHARDS' "fixed size"): at most s_max sampled
 * lines are tracked. When a newly sampled line would make s_max + 1, the
 * tracked line with the largest h is dropped from the LRU stack and T is
 * lowered to that h, so the tracked set stays "every line with h < T" and
 * the rate only goes down. Accesses sampled while the rate was R_i weigh
 * 1/R_i and their distances are scaled by 1/R_i (the paper rescales the old
 * histogram by R_new/R_old instead; relative weights are the same). This
 * mode uses a small engine of its own (shards.c) because the exact engine
 * cannot forget a line. Memory is O(s_max) for any trace.
 *
 * Adjustment (SHARDS §4, "first bucket" correction). The number of sampled
 * accesses Ns differs from its expectation E[Ns] = N x R by chance, mostly
 * because a few very hot lines were, or were not, drawn. With weights, the
 * estimated access count is W = sum of weights, and the full stream had N.
 * The difference N - W is treated as accesses at distance 0 (short reuses of
 * hot lines are what a sample over- or under-represents), so the estimated
 * histogram's total is N. A negative difference removes counts from the
 * smallest finite distances upward, never making a count negative. On by
 * default as in SHARDS; no_adjust turns it off. It pays off when a few lines
 * take a large share of the accesses (a stack line, a hot scalar): whether
 * such a line was drawn swings Ns far from N R. It costs accuracy on
 * streams without hot lines, where Ns deviates because the number of
 * sampled lines does (measured, R = 0.01, seeds 1..50: uniform random MAE
 * 0.011 with vs 0.0016 without, cyclic 0.0078 vs 0.0000; a skewed stream
 * 0.028 vs 0.063, worst seed 0.074 vs 0.55; tests/unit/test_shards.c).
 *
 * Output (pes_shards_finish): a struct pes_rd_hist in access units. Each
 * sampled access adds weight 1/R to the bin of round(d_s / R) (cold: the
 * cold count; it estimates the distinct lines). The real-valued bin weights
 * are turned into integers by rounding the running (cumulative) sum over
 * bins in distance order — exact bins, log2 bins, cold — so every bin is
 * within 1 of its weight, every prefix (hence every MRC point) within 0.5,
 * and total = round(sum of weights) (= N when adjusted). sum (the sum of
 * finite distances) is the weighted real sum. At R = 1 with s_max = 0 the
 * output equals, bin for bin, the histogram of the exact engine.
 *
 * MRC. pes_shards_miss_ratio(h, c) = 1 - pes_rd_hist_below(h, c) / h->total:
 * the miss ratio of a fully associative LRU cache of c lines, cold misses
 * included (0 if total is 0). pes_shards_mrc_mae(ref, est, min, max) =
 * mean over the grid c = 2^J, 2^(J+1), ..., 2^K of |miss_ratio(ref, c) -
 * miss_ratio(est, c)|, where 2^J is the smallest power of two >= min (0 or
 * 1: J = 0, c from 1 line) and 2^K the smallest power of two >= max, max =
 * 0 meaning ref->cold (the distinct lines of the reference); K >= J, so
 * the grid has at least one point. Powers of two are bin edges of every
 * pes_rd_hist, so no bin is interpolated. The full grid (min 0) is the
 * headline number; min = 1/R restricts it to the cache sizes the sample
 * can resolve: a sampled distance 0 stands for every true distance below
 * ~1/R, so caches smaller than 1/R lines all look alike to the estimate
 * (bench/reuse_bench.c --shards, matmul-256).
 *
 * Throughput: about 2.5 ns per rejected access (hash + compare + buffer
 * store, no branch per access); at R = 0.01, fixed rate, 200-370 M
 * accesses/s including the generation of the addresses (bench/reuse_bench.c
 * --shards). Fixed size is slower while its rate is still high (each kept
 * access goes through its Fenwick tree and, if new, the heap).
 *
 * Suggested use in pes-replay (`--sample-rate R [--sample-lines S]
 * [--sample-seed N] [--sample-check]`): create one pes_shards per stream
 * where the exact engine would be created, with the same granule; feed it
 * the same addresses (pes_shards_push_batch); at the end call
 * pes_shards_finish and report that histogram in place of the exact one,
 * with pes_shards_stats (accesses, sampled, effective rate, lines tracked)
 * in the report header. With the check option, also run the exact engine
 * and print pes_shards_mrc_mae(exact, approx, 0, 0) with the grid it used
 * (and, say, the same from min = 1/R).
 *
 * Errors: create returns NULL and fills err; push/finish return -1 on out
 * of memory (pes_shards_error()). Not thread-safe; one object per stream.
 */
#ifndef PES_REPLAY_SHARDS_H
#define PES_REPLAY_SHARDS_H

#include <stddef.h>
#include <stdint.h>
#include "histogram.h"
#include "pes/trace.h"

#define PES_SHARDS_MODULUS (UINT64_C(1) << 56) /* P: h(line) is in [0, P) */

struct pes_shards_options {
    uint32_t granule;        /* bytes, power of two; 0 = 64 */
    double rate;             /* R in (0, 1]; in fixed-size mode the starting
                                rate (1.0 is usual there). T = round(R x P),
                                at least 1. */
    uint64_t seed;           /* selects the sample; same seed, same lines */
    uint64_t s_max;          /* 0 = fixed rate; else fixed size: at most this
                                many sampled lines tracked */
    uint64_t exact_limit;    /* exact range of the output histogram; 0 =
                                PES_RD_HIST_DEFAULT_EXACT */
    uint64_t expected_lines; /* sizing hint (distinct lines in the full
                                stream); 0 = grow as needed */
    int no_adjust;           /* 1 = no first-bucket adjustment */
};

struct pes_shards_stats {
    uint64_t accesses;     /* N: accesses pushed */
    uint64_t sampled;      /* Ns: accesses kept */
    uint64_t lines;        /* sampled lines tracked now (distinct) */
    uint64_t evictions;    /* fixed size: lines dropped as T was lowered */
    uint64_t threshold;    /* T now (sample iff h(line) < T) */
    double rate;           /* R now = T / P */
    double effective_rate; /* Ns / N (0 before any access) */
    uint64_t memory;       /* bytes held by the tables */
};

struct pes_shards;

struct pes_shards *pes_shards_create(const struct pes_shards_options *opt, struct pes_error *err);
void pes_shards_destroy(struct pes_shards *s);

/* One access to the line holding addr. 0, or -1 (pes_shards_error()). */
int pes_shards_push(struct pes_shards *s, uint64_t addr);
/* n accesses in order; same result as n pushes. On error the accesses up to
 * some point have been applied. */
int pes_shards_push_batch(struct pes_shards *s, const uint64_t *addr, size_t n);
/* Same for line keys (addr >> granule shift). */
int pes_shards_push_keys(struct pes_shards *s, const uint64_t *key, size_t n);

/* n accesses of lines known not to be sampled (a filter before the
 * estimator dropped them, below): counted in N, nothing else. Fixed rate
 * only; 0, or -1 (pes_shards_error()). */
int pes_shards_skip(struct pes_shards *s, uint64_t n);

/* The same choice made before the estimator, on the records of a text trace
 * (pes_text_reader_set_filter): pes_shards_filter_records keeps, in order,
 * the records whose line (addr >> log2(granule)) an estimator with these
 * options samples, and counts the others by id in dropped[]; one byte per
 * record (a text trace's accesses), so each is one line. Read-only, for
 * several threads at once. Fixed rate only; init returns 0, or -1 (err). */
struct pes_shards_filter {
    unsigned shift;
    uint64_t off, T;
};
int pes_shards_filter_init(struct pes_shards_filter *f, const struct pes_shards_options *o,
                           struct pes_error *err);
size_t pes_shards_filter_records(const void *ctx, struct pes_record *rec, size_t n,
                                 uint64_t dropped[2]);

/* 1 iff an access to this line key would be sampled now (fixed rate: ever). */
int pes_shards_sampled(const struct pes_shards *s, uint64_t key);
/* h(key) for this seed, in [0, PES_SHARDS_MODULUS). */
uint64_t pes_shards_hash(uint64_t key, uint64_t seed);

/* The estimated histogram of everything pushed so far (see above). out is
 * initialised here (pes_rd_hist_init with opt.exact_limit; free it with
 * pes_rd_hist_free). Does not change s: pushing may go on and finish be
 * called again. 0, or -1 with err filled (out is then left empty). */
int pes_shards_finish(const struct pes_shards *s, struct pes_rd_hist *out, struct pes_error *err);

void pes_shards_stats(const struct pes_shards *s, struct pes_shards_stats *st);
const struct pes_error *pes_shards_error(const struct pes_shards *s);

/* MRC helpers (definitions above). */
double pes_shards_miss_ratio(const struct pes_rd_hist *h, uint64_t c);
double pes_shards_mrc_mae(const struct pes_rd_hist *ref, const struct pes_rd_hist *est,
                          uint64_t min_lines, uint64_t max_lines);
/* Grid points pes_shards_mrc_mae uses for these arguments: K - J + 1. */
unsigned pes_shards_mrc_grid(const struct pes_rd_hist *ref, uint64_t min_lines, uint64_t max_lines);

#endif
