/*
 * profiles.h — private and concurrent reuse profiles of a multi-stream trace
 * (PPT-Multicore §2.4: PRD models private caches, CRD shared caches).
 *
 * Streams are threads or (mimicked) cores. Each stream has its own engine
 * (PRD); each shared cache ("group") has one engine fed by the accesses of all
 * the streams mapped to it, in the order they are pushed (CRD). Pushing the
 * accesses in their global (interleaved) order is the caller's job.
 *
 * An access of `size` bytes touches every granule from addr to addr+size-1 and
 * counts once per granule, in ascending address order (a memcpy range is many
 * accesses); size 0 touches nothing.
 *
 * Memory: a stream's engine exists from its first access until
 * pes_profiles_end_stream (O(distinct granules of the stream), see
 * reuse_distance.h); its histogram takes ~0.6 KiB plus 8 bytes per exact
 * distance bin up to the largest distance seen (<= exact_limit); the batch
 * scratch is a fixed 2.3 MiB plus 8 bytes per stream, whatever the batch.
 *
 * Optional per-site breakdown: accesses, cold counts and distance sums per site
 * id for PRD and CRD. A per-basic-block view is the sum over the block's sites
 * (struct pes_site.bb); pass a BB id as `site` to key by block directly.
 */
#ifndef PES_REPLAY_PROFILES_H
#define PES_REPLAY_PROFILES_H

#include <stdint.h>
#include "pes/trace.h"
#include "histogram.h"

#define PES_PROFILES_NO_GROUP UINT32_MAX

/*
 * Splitting the work over processes (MPI, replay/cmd/pes_replay_mpi.c).
 *
 * Every process pushes the same accesses (the whole stream), cut into
 * consecutive windows of `window` accesses (records, as pushed; a window's
 * granules all belong to it). Window w belongs to process w % ranks; a process
 * runs the engines over its own windows only. Process 0 keeps the results:
 * its own windows go straight into its engines, as without a split; each
 * other process sends, for each of its windows, a PARDA summary per lane
 * (parda.h: the window's in-window reuses, its first accesses in order and
 * its keys by last access), and process 0 resolves them against its engines
 * in window order (pes_parda_resolve), so histograms and per-site rows are
 * exactly those of one process pushing everything. The PARDA cost moves to
 * process 0: two pushes per distinct granule of each window of the others.
 *
 * Messages are opaque byte buffers (host byte order: processes of one
 * machine type); the caller moves them. Process 0 asks for window w from
 * process w % ranks only when it needs it: before its own next window and
 * when the stream ends, so the others may run ahead.
 *
 * With a split, pes_profiles_sync ends the stream (the last window is sent,
 * or every window absorbed) and pushing afterwards is an error;
 * pes_profiles_push cannot return distances; engines run on the caller's
 * thread (`threads` is ignored). ranks == 1 is no split.
 *
 * With `parts`, each process pushes only its own part of the stream: the
 * parts of processes 0, 1, ..., ranks - 1, in that order, are the stream
 * (pes-replay-mpi reading a part of the trace per rank). A process cuts its
 * part into windows of `window` accesses, numbered from 0 in the part, all
 * its own. Process 0 pushes its part into its engines; at the sync it
 * resolves the windows of process 1 in order, then those of process 2, and
 * so on: `recv` returns 1 when `from` has no window w (its part had w).
 * Results are again exactly one process's; the site rows come in another
 * order (by process, then first use).
 */
struct pes_profiles_split {
    uint32_t rank, ranks; /* this process, of ranks (>= 1) */
    uint64_t window;      /* accesses per window, >= 1 */
    int parts;            /* each process pushes its own part only */
    /* rank > 0: window w's message, in a malloc'd buffer that is the
     * callee's from now on (to free when sent, even on failure); 0, or -1
     * with err filled (the push or sync then fails with it). */
    int (*send)(void *ctx, uint64_t w, void *buf, size_t len, struct pes_error *err);
    /* rank 0: window w's message from process `from`, in a malloc'd buffer
     * the profiles frees; 0, or -1 with err filled (with parts: 1, no such
     * window). */
    int (*recv)(void *ctx, uint64_t w, uint32_t from, void **buf, size_t *len,
                struct pes_error *err);
    void *ctx;
};

struct pes_profiles_options {
    uint32_t granule;         /* bytes, power of two; 0 = 64 */
    uint32_t n_streams;       /* >= 1 */
    uint32_t n_groups;        /* shared caches; 0 = no CRD */
    const uint32_t *group_of; /* [n_streams] stream -> group or PES_PROFILES_NO_GROUP;
                                   NULL = every stream in group 0 */
    uint64_t exact_limit;     /* histogram exact range; 0 = default */
    int per_site;             /* keep the per-site breakdown */
    uint64_t expected_keys;   /* engine sizing hint per stream; 0 = small */
    uint32_t min_window;      /* engine compaction knob (tests); 0 = default */
    /* Engines on worker threads (parda.h): 0 or 1 = everything on the
     * caller's thread, as before. With more, the PRD and CRD engines ("lanes")
     * run on `threads` workers and a dominant lane is split into chunks
     * (PARDA); the caller stays the only producer. Results are identical for
     * any count, and complete after pes_profiles_sync or pes_profiles_finish. */
    uint32_t threads;
    uint64_t chunk;                         /* tests, threads > 1: every lane cut into chunks
                                   of this many granules, all but a lane's first
                                   summarised apart; 0 = adaptive */
    const struct pes_profiles_split *split; /* NULL: one process does all */
};

struct pes_site_reuse {
    uint32_t site;
    uint64_t accesses; /* granule accesses */
    uint64_t prd_cold, crd_cold;
    double prd_sum, crd_sum; /* sums of finite distances */
};

struct pes_profiles;

struct pes_profiles *pes_profiles_create(const struct pes_profiles_options *opt,
                                         struct pes_error *err);
void pes_profiles_destroy(struct pes_profiles *p);

/* One access of `stream`. *prd / *crd (may be NULL) get the distances of the
 * first granule touched (PES_REUSE_COLD if cold or no CRD group). Returns 0,
 * or -1 with err filled (bad stream index, out of memory). */
int pes_profiles_push(struct pes_profiles *p, uint32_t stream, uint64_t addr, uint32_t size,
                      uint32_t site, uint64_t *prd, uint64_t *crd, struct pes_error *err);

/* n accesses in order: the same histograms and per-site rows as n calls of
 * pes_profiles_push (without the distances out). Each engine's granules are
 * gathered and pushed in one run with hash prefetching (pes_reuse_push_keys),
 * which overlaps the cache misses of a large map. Returns 0, or -1 with err
 * filled; a bad stream index is reported before anything is applied. */
int pes_profiles_push_batch(struct pes_profiles *p, const uint32_t *stream, const uint64_t *addr,
                            const uint32_t *size, const uint32_t *site, size_t n,
                            struct pes_error *err);

/* The stream will get no more accesses (its thread ended): its engine is
 * freed; its histogram and per-site counts stay. Pushing to it later is an
 * error. 0, or -1 (bad stream index). */
int pes_profiles_end_stream(struct pes_profiles *p, uint32_t stream, struct pes_error *err);

/* No more accesses at all: every engine and the batch scratch are freed, the
 * histograms and per-site counts stay (what the reports read). With threads,
 * waits for all queued work first (a late failure is then reported by
 * pes_profiles_sync). */
void pes_profiles_finish(struct pes_profiles *p);

/* With threads > 1: waits until every access pushed so far is counted in the
 * histograms and per-site rows (pushing may go on afterwards). 0, or -1 with
 * err filled if a worker failed (out of memory). Without threads: 0. With a
 * split: the end of the stream (see struct pes_profiles_split). */
int pes_profiles_sync(struct pes_profiles *p, struct pes_error *err);

uint32_t pes_profiles_streams(const struct pes_profiles *p);
uint32_t pes_profiles_groups(const struct pes_profiles *p);
const struct pes_rd_hist *pes_profiles_prd(const struct pes_profiles *p, uint32_t stream);
const struct pes_rd_hist *pes_profiles_crd(const struct pes_profiles *p, uint32_t group);
/* Sum of the PRD histograms of all streams into out (initialised by the caller
 * with the same exact_limit). */
int pes_profiles_prd_total(const struct pes_profiles *p, struct pes_rd_hist *out);
/* Per-site rows in first-seen order (NULL/0 without per_site); the order is
 * the same for any thread count.
 *
 * A CRD group with exactly one stream has that stream's PRD as its CRD: it is
 * not computed twice, and pes_profiles_crd returns the stream's histogram. */
const struct pes_site_reuse *pes_profiles_sites(const struct pes_profiles *p, size_t *n);

#endif
