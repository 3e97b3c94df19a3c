/*
 * parda.h — exact reuse (LRU stack) distances of long key streams on several
 * threads, by chunks (PARDA: Niu, Lu, Fu and Keys-Slaughter, IPDPS 2012).
 *
 * A stream is cut into chunks. A chunk's *local pass* (any thread, any order)
 * runs a fresh engine over the chunk alone: the distance of a reuse inside the
 * chunk is already final; the chunk's first access to each key is *pending*.
 * The result is a chunk summary (struct pes_parda_summary). *Resolution* then
 * takes the chunks in stream order against one engine G that holds the
 * recency order of everything before the chunk (pes_parda_resolve): the
 * pending keys pushed into G give their exact distances, and the chunk's keys
 * pushed by last access bring G up to date for the next chunk. Results are
 * identical to one engine over the whole stream, for any chunking.
 *
 * Costs: a local pass is one push per access; resolution two pushes per
 * distinct key of the chunk (one for a stream's last chunk), and it is
 * sequential, so chunks are made many times longer than the keys they touch.
 * In the pool, keys that reach the head of their stream unclaimed are pushed
 * straight into G (no extra work); a chunk is only split off when a thread
 * would otherwise be idle.
 *
 * Summaries pack to flat byte buffers (pes_parda_summary_pack/unpack) so that
 * processes can summarise parts of a trace and one of them resolve (MPI).
 *
 * Tags: each access may carry a small integer tag (profiles.c: the site row);
 * counts {accesses, cold, distance sum} are kept per tag in dense arrays, so
 * tags should be dense (row indices, not raw ids). PES_PARDA_NO_TAG counts in
 * the histogram only.
 *
 * The pool (struct pes_parda) runs several independent streams ("lanes", e.g.
 * one per PRD stream and per CRD group) on `threads` workers: different lanes
 * run on different threads, and a lane that carries a large share of the
 * accesses is cut into long chunks that are summarised in parallel. One
 * producer thread pushes; memory is the lanes' engines (O(distinct keys))
 * plus a bounded number of chunks in flight (the producer waits beyond it).
 */
#ifndef PES_REPLAY_PARDA_H
#define PES_REPLAY_PARDA_H

#include <stddef.h>
#include <stdint.h>
#include "pes/trace.h"
#include "histogram.h"
#include "reuse_distance.h"

#define PES_PARDA_NO_TAG UINT32_MAX

struct pes_parda_tag_count {
    uint64_t accesses; /* accesses with this tag */
    uint64_t cold;     /* of which first accesses */
    uint64_t sum;      /* sum of their finite distances */
};

/* A histogram plus per-tag counts. */
struct pes_parda_counts {
    struct pes_rd_hist hist;
    struct pes_parda_tag_count *tag; /* [n_tags], indexed by tag */
    uint32_t n_tags, cap_tags;
};

int pes_parda_counts_init(struct pes_parda_counts *c, uint64_t exact_limit, struct pes_error *err);
void pes_parda_counts_free(struct pes_parda_counts *c);
/* dst += src; 0, or -1 (different exact_limit, no memory; dst unchanged). */
int pes_parda_counts_merge(struct pes_parda_counts *dst, const struct pes_parda_counts *src);

/* What resolution needs to know about one chunk. */
struct pes_parda_summary {
    uint64_t index;                /* chunk number in its stream (for the caller) */
    uint64_t length;               /* accesses in the chunk */
    struct pes_parda_counts local; /* in-chunk reuses (final); every access's
                                       tag counted in tag[].accesses */
    uint64_t n_distinct;           /* distinct keys = pending accesses */
    uint64_t *pending_key;         /* [n_distinct] first accesses, in chunk order */
    uint32_t *pending_tag;         /* [n_distinct] their tags, or NULL (untagged) */
    uint64_t *recency;             /* [n_distinct] the keys by last access, oldest first */
};

/* Local pass over n keys (tags may be NULL): s is overwritten (free it with
 * pes_parda_summary_free). ro configures the scratch engine (its granule is
 * irrelevant: keys are pushed as they are). 0, or -1 with err filled. */
int pes_parda_summarize(struct pes_parda_summary *s, const uint64_t *key, const uint32_t *tag,
                        size_t n, const struct pes_reuse_options *ro, uint64_t exact_limit,
                        struct pes_error *err);
void pes_parda_summary_free(struct pes_parda_summary *s);

/* The same local pass fed in pieces, as the keys arrive: begin, feed ...,
 * end. expected_keys sizes the scratch engine (0: small start). The
 * summary s is the caller's; until end or abort, z also holds the scratch
 * engine. Each step returns 0, or -1 with err filled, after which s is freed
 * (feed leaves that to abort). Tags must be given to every feed or none. */
struct pes_parda_summarizer {
    struct pes_parda_summary *s;
    struct pes_reuse *e;
    size_t cap; /* of the pending arrays */
};
int pes_parda_summarizer_begin(struct pes_parda_summarizer *z, struct pes_parda_summary *s,
                               const struct pes_reuse_options *ro, uint64_t expected_keys,
                               uint64_t exact_limit, struct pes_error *err);
int pes_parda_summarizer_feed(struct pes_parda_summarizer *z, const uint64_t *key,
                              const uint32_t *tag, size_t n, struct pes_error *err);
int pes_parda_summarizer_end(struct pes_parda_summarizer *z, struct pes_error *err);
/* Drops the engine and frees s. */
void pes_parda_summarizer_abort(struct pes_parda_summarizer *z);

/* Resolution of one summary against g, the engine holding every key of the
 * earlier chunks (an empty engine before the first chunk): adds the chunk's
 * final distances to out (the local counts plus the pending distances), then,
 * unless `last` (no chunk follows), moves the chunk's keys to the top of g in
 * their last-access order. Chunks must be resolved in stream order.
 * 0, or -1 with err filled (g out of memory; out may hold part of the chunk). */
int pes_parda_resolve(struct pes_reuse *g, const struct pes_parda_summary *s, int last,
                      struct pes_parda_counts *out, struct pes_error *err);

/* n keys pushed straight into g (a chunk at the head of its stream), their
 * distances and every access's tag counted in out. */
int pes_parda_push_direct(struct pes_reuse *g, const uint64_t *key, const uint32_t *tag, size_t n,
                          struct pes_parda_counts *out, struct pes_error *err);

/* Flat byte form (host byte order, for processes of one machine type):
 * size, then pack into buf of at least that size (returns the bytes written,
 * 0 if cap is too small). unpack fills s (free with pes_parda_summary_free);
 * 0, or -1 with err filled for a truncated or malformed buffer. */
size_t pes_parda_summary_packed_size(const struct pes_parda_summary *s);
size_t pes_parda_summary_pack(const struct pes_parda_summary *s, void *buf, size_t cap);
int pes_parda_summary_unpack(struct pes_parda_summary *s, const void *buf, size_t len,
                             struct pes_error *err);

/* ------------------------------------------------------------------ pool */

struct pes_parda_options {
    uint32_t threads;                /* worker threads, >= 1 (the producer is extra) */
    uint32_t n_lanes;                /* independent streams, >= 1 */
    struct pes_reuse_options engine; /* for every engine (granule unused) */
    uint64_t exact_limit;            /* histograms; 0 = default */
    int tagged;                      /* pushes carry tags */
    /* A chunk is split off where G's owner has at least
     * clamp(chunk_factor x distinct keys, chunk_min, chunk_max) accesses to
     * do before reaching it (see parda.c, "Scheduling"). */
    uint64_t chunk_min;    /* 0 = 4 Mi accesses */
    uint64_t chunk_max;    /* 0 = 16 Mi */
    uint32_t chunk_factor; /* 0 = 16 */
    uint32_t slice;        /* accesses per queued slice; 0 = 64 Ki (or
                                   chunk_fixed if smaller) */
    uint64_t chunk_fixed;  /* tests: only a lane's first slice goes
                                   straight into G; every later slice starts a
                                   chunk of up to this many accesses, summarised
                                   before its resolution; 0 = adaptive */
};

struct pes_parda;

struct pes_parda *pes_parda_create(const struct pes_parda_options *o, struct pes_error *err);
/* Stops the workers (work still queued is dropped) and frees everything. */
void pes_parda_destroy(struct pes_parda *pp);

/* n keys of lane, in order (tag: [n] with `tagged`, else ignored). Returns as
 * soon as the keys are queued; waits only while too much is in flight.
 * 0, or -1 with err filled (bad or ended lane, or an earlier failure of a
 * worker: out of memory). */
int pes_parda_push(struct pes_parda *pp, uint32_t lane, const uint64_t *key, const uint32_t *tag,
                   size_t n, struct pes_error *err);
/* The same, but waits for the lane's queued work and pushes on the caller's
 * thread, so each key's distance comes back in dist[i]. */
int pes_parda_push_sync(struct pes_parda *pp, uint32_t lane, const uint64_t *key,
                        const uint32_t *tag, size_t n, uint64_t *dist, struct pes_error *err);
/* The lane gets no more keys: its engine is freed once its work is done. */
int pes_parda_end_lane(struct pes_parda *pp, uint32_t lane, struct pes_error *err);
/* Waits until everything pushed so far is counted; 0 or -1 (a failure). */
int pes_parda_sync(struct pes_parda *pp, struct pes_error *err);
/* Ends every lane, waits, stops the workers; results stay. 0 or -1. */
int pes_parda_finish(struct pes_parda *pp, struct pes_error *err);
/* A lane's counts: complete after pes_parda_sync or pes_parda_finish. */
const struct pes_parda_counts *pes_parda_result(const struct pes_parda *pp, uint32_t lane);

struct pes_parda_stats {
    uint64_t chunks_direct;  /* slices pushed straight into their lane's engine */
    uint64_t chunks_split;   /* chunks split off: summarised, then resolved */
    uint64_t resolve_pushes; /* pushes spent on resolution */
};
void pes_parda_get_stats(const struct pes_parda *pp, struct pes_parda_stats *st);

#endif
