/*
 * mimic.h — PPT-Multicore mimicking: private traces and interleaved shared
 * traces for N cores from the basic-block-labelled trace of ONE sequential run
 * (PPT-Multicore §3.2, Alg. 1 and Alg. 2), reduced on the fly to PRD per core
 * and CRD of the interleaved stream (profiles.h).
 *
 * Alg. 1 (private traces). A first pass counts the executions C of every basic
 * block. Then, for N cores:
 *   - a block with C < N is copied: each core executes every instance;
 *   - otherwise instance k (0-based, in trace order) goes to one core, as
 *     OpenMP static scheduling would: chunk = 0 gives contiguous blocks,
 *     core = floor(k*N/C); chunk = s > 0 gives schedule(static, s),
 *     core = (k/s) mod N.
 *     The paper writes core = k / (C/N) (integer division); that is the same
 *     when N divides C, and otherwise would hand the last C mod N instances to
 *     a core N that does not exist, so we use the balanced form.
 *     The paper's pseudo-code also copies blocks with N <= C < 2N
 *     (C/N == 1); we follow its text and Fig. 4 (C >= N: distributed).
 *   - per_region (a pes extension, off by default): BB executions are counted
 *     and numbered per outermost parallel-region instance (PES_ID_REGION_BEGIN
 *     .. PES_ID_REGION_END) instead of over the whole trace, because OpenMP
 *     schedules every execution of a worksharing loop on its own: a parallel
 *     loop inside a time loop then gives each core its slice of every time
 *     step, not a block of whole time steps. Code outside regions is serial
 *     and runs on core 0 only.
 *   - an access belongs to the instance of the latest BB-entry record before
 *     it; accesses before the first BB entry run on core 0 (the master);
 *     with serial_on_master, blocks without PES_BB_PARALLEL also run only on
 *     core 0 (the paper traces only parallel functions, so it has none).
 *   - on core c, the address of an access from a site without PES_SITE_SHARED
 *     becomes addr + c * offset; shared-site addresses are kept. The default
 *     offset is 2^48, above every x86-64 / AArch64 user-space address, so
 *     mimicked addresses never meet real ones (if the trace holds a private
 *     address >= 2^48, the next power of two above the highest one is used).
 *     A given offset must be a multiple of the granule and exceed every
 *     private address; (N-1)*offset + address must fit in 64 bits.
 *
 * Alg. 2 (interleaving). Round-robin takes one access record per core in
 * turn (core 0 first), skipping finished cores; uniform random picks an
 * unfinished core uniformly at random per step (seeded splitmix64). Either
 * way every core's own order is kept.
 *
 * Streaming: nothing is materialised. Each core has its own cursor over the
 * sequential trace that skips the instances of other cores, so memory is
 * O(N * (buffer + number of BBs)) plus the reuse engines, and the trace is
 * read N + 1 times per core count (the source must be re-readable).
 */
#ifndef PES_REPLAY_MIMIC_H
#define PES_REPLAY_MIMIC_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"
#include "profiles.h"

/* A re-readable sequential record stream plus its id tables. */
struct pes_mimic_source {
    void *ctx;
    /* A new independent cursor at the first record; NULL on error. */
    void *(*open)(void *ctx, struct pes_error *err);
    /* Up to max records; returns the count, 0 at the end, -1 on error. */
    long (*read)(void *cursor, struct pes_record *out, size_t max, struct pes_error *err);
    void (*close)(void *cursor);
    /* Id resolution (a reader's merged tables); NULL if not a site / not a BB. */
    const struct pes_site *(*site)(void *ctx, uint32_t id);
    const struct pes_bb *(*bb)(void *ctx, uint32_t id);
};

/* In-memory source: records plus site and BB tables sorted by id. */
struct pes_mimic_array {
    const struct pes_record *records;
    size_t n_records;
    const struct pes_site *sites;
    size_t n_sites;
    const struct pes_bb *bbs;
    size_t n_bbs;
};
void pes_mimic_array_source(const struct pes_mimic_array *a, struct pes_mimic_source *src);

/* First pass: BB execution counts and the highest private address. */
struct pes_mimic_counts;
struct pes_mimic_counts *pes_mimic_count(const struct pes_mimic_source *src, struct pes_error *err);
void pes_mimic_counts_free(struct pes_mimic_counts *c);
uint64_t pes_mimic_bb_count(const struct pes_mimic_counts *c, uint32_t bb_id);
uint64_t pes_mimic_accesses(const struct pes_mimic_counts *c); /* access records */
/* Outermost parallel-region instances; the per-region counts cost 12 bytes per
 * (region instance, BB executed in it) pair. */
size_t pes_mimic_regions(const struct pes_mimic_counts *c);

enum pes_interleave {
    PES_INTERLEAVE_ROUND_ROBIN = 0,
    PES_INTERLEAVE_UNIFORM = 1,
};

/* Observer of the interleaved stream: one call per access record; addr is
 * the mimicked address, recorded the one in the sequential trace. */
typedef void (*pes_mimic_emit_fn)(void *ctx, uint32_t core, uint64_t addr, uint32_t size,
                                  uint32_t site, uint64_t recorded);

struct pes_mimic_options {
    uint32_t n_cores; /* >= 1 */
    enum pes_interleave strategy;
    uint64_t seed;   /* uniform strategy */
    uint64_t chunk;  /* 0 = contiguous static blocks; s = schedule(static, s) */
    uint64_t offset; /* 0 = automatic (see above) */
    int serial_on_master;
    int per_region;     /* count and split BB instances per region instance */
    uint32_t max_range; /* bytes: longer variable-size accesses are replayed as
                                      their first max_range bytes (0 = no limit) */
    /* profiles: granule, histogram range, per-site rows, engine knob */
    uint32_t granule;
    uint64_t exact_limit;
    int per_site;
    uint32_t min_window;
    pes_mimic_emit_fn emit; /* optional */
    void *emit_ctx;
    /* optional, with emit_ctx: each control record other than region
     * markers (allocation records, time marks) as core `core`'s cursor
     * passes it in the sequential trace, before that core's next emit (or
     * locate). A core's cursor reads the whole trace, so every core sees
     * every one. */
    void (*control)(void *ctx, uint32_t core, const struct pes_record *r);
    /* optional, with emit_ctx: the data object of each access, asked in its
     * core's own order (after the control records before it); the answer
     * goes to emit_located, which then replaces emit. */
    void (*locate)(void *ctx, uint32_t core, uint64_t recorded, uint32_t site, uint32_t *object,
                   uint64_t *offset);
    void (*emit_located)(void *ctx, uint32_t core, uint64_t addr, uint32_t size, uint32_t site,
                         uint64_t recorded, uint32_t object, uint64_t offset);
    /* Each core's private stream made ahead on these workers (scheduler.h),
     * a few thousand accesses at a time, while the interleaving takes them:
     * control and locate then run on the workers, each core's in its order.
     * The same interleaved stream. NULL: each access when the interleaving
     * asks for it. */
    struct pes_sched *sched;
};

/*
 * Mimics opt->n_cores cores: returns profiles with n_cores streams (PRD of each
 * core's private trace) and one group (CRD of the interleaved trace), or NULL
 * with err filled (unknown record id, address above the offset, source error).
 */
struct pes_profiles *pes_mimic_run(const struct pes_mimic_source *src,
                                   const struct pes_mimic_counts *counts,
                                   const struct pes_mimic_options *opt, struct pes_error *err);

/* The interleaved stream alone: every access goes to opt->emit (the profile
 * options are ignored); 0, or -1 with err filled as pes_mimic_run. */
int pes_mimic_interleave(const struct pes_mimic_source *src, const struct pes_mimic_counts *counts,
                         const struct pes_mimic_options *opt, struct pes_error *err);

/* The same for several core counts (opt->n_cores ignored); out[i] for cores[i].
 * On error every out[] is NULL. */
int pes_mimic_run_many(const struct pes_mimic_source *src, const struct pes_mimic_counts *counts,
                       const struct pes_mimic_options *opt, const uint32_t *cores, size_t n,
                       struct pes_profiles **out, struct pes_error *err);

#endif
