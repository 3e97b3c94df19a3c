/*
 * stream.h — what flows from a source to the analyses: batches of accesses in
 * global order, and the description of the stream they belong to.
 *
 * A source is a recorded trace (per-thread streams merged into time order), a
 * plain-text or binary address trace (one stream), N cores mimicked from a
 * sequential run (PPT-Multicore Alg. 1 + 2), or the events of a sampled trace
 * (followed, for --compare, by the accesses of the full trace of the same
 * execution). Sources know no analyses: they
 * hand each full batch to a callback (struct pes_batch_sink).
 */
#ifndef PES_REPLAY_STREAM_H
#define PES_REPLAY_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "pes/model.h"
#include "pes/settings.h"
#include "pes/trace.h"

struct pes_objects;   /* objects.h (replay/objects): what the object columns name */
struct pes_callpaths; /* callpath.h: what the callpath column names */
struct pes_weights;   /* weights.h (replay/sampling): what a sampled trace's events stand for */

/* Accesses per batch: large enough for the engines' prefetching loops, small
 * enough to stay in L2 across the analyses that read it. */
enum { PES_BATCH = 4096 };

enum { PES_BATCH_READ = 1, PES_BATCH_WRITE = 2 };

/* Up to PES_BATCH accesses in global order, as parallel arrays. Read-only for
 * analyses and valid only during the call that hands it over. */
struct pes_batch {
    size_t n;
    const uint64_t *addr;
    const uint32_t *size;   /* bytes replayed (variable-size accesses clipped, input.h) */
    const uint32_t *length; /* bytes recorded */
    const uint32_t *stream; /* recorded thread or mimicked core */
    const uint32_t *site;   /* site id */
    const uint8_t *rw;      /* PES_BATCH_READ | PES_BATCH_WRITE */
    /* The data object of each access (objects.h; 0 = unknown) and the byte
     * offset of the access inside its instance (the variable, the heap
     * block, the thread stack; 0 for unknown). NULL when objects are not
     * resolved (another tool's trace, --no-objects). Mimicked cores: the
     * object at the access's place in the sequential run. */
    const uint32_t *object;
    const uint64_t *object_offset;
    /* The call path of each access (callpath.h: an id of the stream's
     * callpaths table; 0 = no recorded call). NULL when the trace has no
     * call sites or the stream is not a recorded one (mimicked cores). */
    const uint32_t *callpath;
    /* BB entries among these accesses (recorded streams only; their exact
     * position among the accesses is not kept: op counts need none) */
    size_t n_bbs;
    const struct pes_bb *const *bb;
    const uint32_t *bb_stream;
    /* streams whose last record is in this batch or an earlier one */
    size_t n_ended;
    const uint32_t *ended;
    /* A sampled trace's events (its sources deliver one EVENTS block per
     * batch, without accesses), and the file offset of their block for
     * messages. */
    size_t n_events;
    const struct pes_event *events;
    uint64_t events_offset;
    /* the same per event (its addr; unknown for events without one); NULL
     * when not resolved */
    const uint32_t *event_object;
    const uint64_t *event_object_offset;
    /* one-byte loads and stores of stream 0 that the input's filter dropped
     * since the previous batch (replay_input_set_filter: lines SHARDS does
     * not sample, from a text trace): counted, never replayed */
    uint64_t dropped_reads, dropped_writes;
};

/* The work of the recorded run, for the runtime model (PPT-Multicore Eq. 4-8). */
struct pes_work {
    uint64_t bytes;           /* bytes accessed */
    double ops[PES_OP_COUNT]; /* static BB op counts x executions */
    /* The blocks' model facts (struct pes_bb, PES_BB_MODEL_FACTS) x executions,
     * known when every executed block has them (facts_execs == execs). */
    uint64_t execs, facts_execs;
    double instrs[PES_OP_COUNT], chain[PES_OP_COUNT];
    double forks; /* calls that start a parallel region */
    /* barrier calls of stream 0: the initial thread is a member of every team
     * of the program's top-level regions, so its calls count each barrier
     * episode once (the team's other threads call it too) */
    double barriers;
};

/* The stream a source produces, fixed before its first batch. */
struct pes_stream_info {
    const char *path;                    /* the trace */
    uint32_t kind;                       /* PES_TRACE_FULL or PES_TRACE_SAMPLED (batches of events);
                                         0: another tool's address trace */
    const struct pes_trace_info *header; /* a pes trace's header (NULL: another tool's trace) */
    /* the collector's settings in that header, read once (pes_settings_from_header;
     * another tool's trace: what an absent key means) */
    const struct pes_collect_settings *settings;
    int truncated;           /* the trace is cut; its complete blocks are delivered */
    uint64_t skipped_blocks; /* blocks of a type the reader does not know */
    /* --compare: the full trace of the same execution. Its accesses follow
     * this sampled stream's events in the same batches' order (NULL: none). */
    const struct pes_stream_info *paired;
    uint32_t n_streams; /* threads, or mimicked cores */
    int mimicked;
    uint32_t n_caches;            /* shared last-level caches (CRD groups) */
    const uint32_t *stream_cache; /* [n_streams] stream -> shared cache */
    const struct pes_machine *machine;
    uint32_t line;               /* reuse granularity, bytes */
    uint32_t range_cap;          /* bytes replayed of a variable-size access at most (0: all) */
    uint64_t page_size;          /* --page-map frames (0: virtual indexing) */
    const struct pes_work *work; /* mimicked cores: the recorded run's; NULL: count this stream's */
    /* site id -> its description (NULL for an unknown id) */
    const struct pes_site *(*site)(const void *ctx, uint32_t id);
    const void *site_ctx;
    /* the data objects the batches' object columns name (NULL: not resolved) */
    const struct pes_objects *objects;
    /* the call paths the batches' callpath column names (NULL: none) */
    const struct pes_callpaths *callpaths;
    /* Read in parts, on part 0 while a later part's counts are merged: that
     * part's symbolic paths (its batches' callpath column) as ids of
     * callpaths, [callpath_map_n] (callpath.h, parts); else NULL. */
    const uint32_t *callpath_map;
    uint32_t callpath_map_n;
    /* a sampled trace: the period each event's sample was taken at, from
     * its PERIOD events and header (weights.h: pes_weight_of); NULL: every
     * sample stands for itself */
    const struct pes_weights *weights;
};

/* The shared cache of recorded thread t of n on `caches` shared caches:
 * contiguous blocks, like a compact OpenMP placement (OMP_PLACES=cores,
 * OMP_PROC_BIND=close). */
static inline uint32_t pes_stream_compact_cache(uint32_t t, uint32_t n, uint32_t caches)
{
    return (uint32_t)((uint64_t)t * caches / n);
}

struct pes_batch_buf;

/* Where a source delivers: 0 to go on, -1 to stop (err filled). A sink that
 * keeps batches beyond the call (analyses on the workers) may also take a
 * filled buffer's arrays instead of copying them (take: set or NULL;
 * pes_batch_buf_pass), leaving it spare ones of the same columns. */
struct pes_batch_sink {
    int (*batch)(void *ctx, const struct pes_batch *b, struct pes_error *err);
    void *ctx;
    int (*take)(void *ctx, struct pes_batch_buf *b, struct pes_error *err);
};

/* A batch being filled by a source (owned arrays of PES_BATCH entries; BB
 * entries and ended streams grow as needed). */
struct pes_batch_buf {
    struct pes_batch view;
    uint64_t *addr;
    uint32_t *size, *length, *stream, *site;
    uint8_t *rw;
    uint32_t *object; /* NULL until pes_batch_buf_objects */
    uint64_t *object_offset;
    uint32_t *callpath; /* NULL until pes_batch_buf_callpaths */
    const struct pes_bb **bb;
    uint32_t *bb_stream;
    size_t cap_bbs;
    uint32_t *ended;
    size_t cap_ended;
    const struct pes_batch_sink *sink;
};

int pes_batch_buf_init(struct pes_batch_buf *b, const struct pes_batch_sink *sink,
                       struct pes_error *err);
/* Adds the object columns (filled by the source at index view.n before
 * each pes_batch_buf_access). 0 or -1 (err filled). */
int pes_batch_buf_objects(struct pes_batch_buf *b, struct pes_error *err);
/* Adds the callpath column (filled like the object columns). 0 or -1. */
int pes_batch_buf_callpaths(struct pes_batch_buf *b, struct pes_error *err);
void pes_batch_buf_free(struct pes_batch_buf *b);
/* Hands the batch to the sink (also when it holds only BB entries or ended
 * streams) and empties it; 0 or -1 (err filled by the sink). */
int pes_batch_buf_flush(struct pes_batch_buf *b, struct pes_error *err);
/* A sink's take: the filled batch of `full` moves to `spare` (a buffer set
 * up by pes_batch_buf_init whose batch is no longer read) by exchanging
 * their arrays, not their contents; full is left empty with the columns it
 * had. 0, or -1 without memory (err filled; full keeps its batch). */
int pes_batch_buf_pass(struct pes_batch_buf *full, struct pes_batch_buf *spare,
                       struct pes_error *err);

static inline int pes_batch_buf_access(struct pes_batch_buf *b, uint64_t addr, uint32_t size,
                                       uint32_t length, uint32_t stream, uint32_t site, uint8_t rw,
                                       struct pes_error *err)
{
    /* the count is stored last: a u64 store to addr[] may alias it (size_t),
     * so the compiler would reload it after every array store otherwise */
    size_t i = b->view.n;
    b->addr[i] = addr;
    b->size[i] = size;
    b->length[i] = length;
    b->stream[i] = stream;
    b->site[i] = site;
    b->rw[i] = rw;
    b->view.n = ++i;
    return i == PES_BATCH ? pes_batch_buf_flush(b, err) : 0;
}
int pes_batch_buf_bb(struct pes_batch_buf *b, const struct pes_bb *bb, uint32_t stream,
                     struct pes_error *err);
int pes_batch_buf_ended(struct pes_batch_buf *b, uint32_t stream, struct pes_error *err);
static inline void pes_batch_buf_dropped(struct pes_batch_buf *b, uint64_t reads, uint64_t writes)
{
    b->view.dropped_reads += reads;
    b->view.dropped_writes += writes;
}

#endif
