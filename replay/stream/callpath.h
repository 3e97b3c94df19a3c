/*
 * callpath.h — call paths of a full trace's accesses (trace format version
 * 3, "Call edges" in pes/trace.h): each recorded thread's open calls, kept
 * from its CALL and RETURN records with the contract's stack-pointer repair,
 * and a table of distinct paths shared by all threads.
 *
 * A path is the innermost `depth` call sites of the open calls, outermost
 * first, and whether outer calls were cut off; id 0 is the empty path (no
 * recorded call). Ids are given in order of first appearance, so one record
 * order gives one numbering (the merged stream is the same for every --jobs).
 *
 * OpenMP: a thread that enters a parallel region (REGION_BEGIN) with no open
 * call is a worker; its paths start with the path its creating thread (the
 * THREAD block's parent) had when it entered the same region, or, when the
 * parent has not entered it yet in the merged order, the parent's path then
 * (its innermost call is the fork). Without a parent, a worker's paths start
 * at its own outermost recorded call. docs/replay.md, "Call paths".
 */
#ifndef PES_REPLAY_CALLPATH_H
#define PES_REPLAY_CALLPATH_H

#include <stddef.h>
#include <stdint.h>

#include "pes/trace.h"

#define PES_CALLPATH_DEPTH     8u   /* --callpath-depth default */
#define PES_CALLPATH_MAX_DEPTH 256u /* --callpath-depth at most */

struct pes_callpaths;

/* Paths of at most depth (1 .. PES_CALLPATH_MAX_DEPTH) call sites for
 * n_threads threads; parent[t] is thread t's creator (UINT32_MAX: none;
 * parent NULL: none known). NULL without memory. */
struct pes_callpaths *pes_callpaths_create(uint32_t depth, uint32_t n_threads,
                                           const uint32_t *parent);
void pes_callpaths_destroy(struct pes_callpaths *cp);
/* Every thread back to no open call (a new pass over the stream); the
 * path table is kept, so a second pass gives the same ids. */
void pes_callpaths_reset(struct pes_callpaths *cp);

/* A control record of thread t in merged order: CALL, RETURN, REGION_BEGIN
 * and REGION_END change t's path, the others are ignored (the reader has
 * checked that a CALL names a call site). 0, or -1 without memory. */
int pes_callpaths_record(struct pes_callpaths *cp, uint32_t thread, const struct pes_record *r);
/* Thread t's path now (0 for a thread out of range). */
static inline uint32_t pes_callpaths_current(const struct pes_callpaths *cp, uint32_t thread);

/* Distinct paths so far, the empty one included (ids 0 .. count - 1). */
uint32_t pes_callpaths_count(const struct pes_callpaths *cp);
/* Path id's call sites, outermost first (*n of them; NULL/0 for id 0 or
 * out of range); *cut: outer calls were left out (deeper than depth). */
const uint32_t *pes_callpaths_sites(const struct pes_callpaths *cp, uint32_t id, uint32_t *n,
                                    int *cut);

/* ------------------------------------------------------------ parts
 *
 * Reading in time parts (docs/replay.md, "Parts"): a part that starts
 * mid-stream does not know each thread's open calls at its start. It reads
 * its records into a pes_callpaths_effect instead of a tracker: the effect
 * keeps, in a log, what the records did to the unknown starting state, and
 * gives each access a symbolic path (part-local ids: the calls the part
 * opened, on an anchor, a point of its log). Part 0, which knows the state
 * after its own part, resolves the parts in order: each effect applied to
 * the state at its start gives its anchors' paths, so its symbolic ids map
 * to the whole stream's ids (new paths numbered in the part's order of first
 * appearance), and the state at the next part's start. */

struct pes_callpaths_effect;

/* The effect of a part's control records on n_threads threads' open calls,
 * paths cut to depth (parent and depth as for pes_callpaths_create). NULL
 * without memory or for a depth out of range. */
struct pes_callpaths_effect *pes_callpaths_effect_create(uint32_t depth, uint32_t n_threads,
                                                         const uint32_t *parent);
void pes_callpaths_effect_destroy(struct pes_callpaths_effect *e);
/* The part's next control record of thread t, in merged order (others are
 * ignored). 0, or -1 without memory. */
int pes_callpaths_effect_record(struct pes_callpaths_effect *e, uint32_t thread,
                                const struct pes_record *r);
/* Thread t's symbolic path now (a part-local id; 0 for a thread out of range). */
static inline uint32_t pes_callpaths_effect_current(const struct pes_callpaths_effect *e,
                                                    uint32_t thread);
/* Symbolic ids so far (ids 1 .. count - 1; id 0 is not used). */
uint32_t pes_callpaths_effect_count(const struct pes_callpaths_effect *e);
/* What the log holds (entries and frames): it grows with the part's
 * parallel regions and its threads' reads of one another, not with its
 * calls. */
size_t pes_callpaths_effect_size(const struct pes_callpaths_effect *e);
/* cp, the state at the part's start, becomes the state at its end, as if
 * the part's records had been given to pes_callpaths_record (the same
 * thread count; paths are interned in cp's table, in no particular order).
 * 0, or -1 without memory. */
int pes_callpaths_apply(struct pes_callpaths *cp, const struct pes_callpaths_effect *e);
/* pes_callpaths_apply, and map[id] = whole's id of symbolic path id, for
 * every id < pes_callpaths_effect_count(e), adding new paths to whole in
 * symbolic id order. With whole fed the stream before the part (or the
 * earlier parts resolved in order), whole's ids are those of one tracker fed
 * the whole stream. 0, or -1 without memory or on a depth mismatch. */
int pes_callpaths_resolve(struct pes_callpaths *cp, const struct pes_callpaths_effect *e,
                          struct pes_callpaths *whole, uint32_t *map);
/* The effect as bytes, to travel to part 0 (host byte order): its size,
 * written to buf when cap allows. */
size_t pes_callpaths_effect_pack(const struct pes_callpaths_effect *e, void *buf, size_t cap);
/* The effect back from pes_callpaths_effect_pack's bytes, for
 * pes_callpaths_resolve and pes_callpaths_apply only (it takes no records).
 * NULL with err filled: damaged bytes (a format error), no memory. */
struct pes_callpaths_effect *pes_callpaths_effect_unpack(const void *buf, size_t len,
                                                         struct pes_error *err);

/* ------------------------------------------------------------ inline */

struct pes_callpaths_view {
    uint32_t n_threads;
    const uint32_t *now; /* [n_threads] each thread's path */
};

static inline uint32_t pes_callpaths_current(const struct pes_callpaths *cp, uint32_t thread)
{
    const struct pes_callpaths_view *v = (const struct pes_callpaths_view *)cp;
    return thread < v->n_threads ? v->now[thread] : 0;
}

static inline uint32_t pes_callpaths_effect_current(const struct pes_callpaths_effect *e,
                                                    uint32_t thread)
{
    const struct pes_callpaths_view *v = (const struct pes_callpaths_view *)e;
    return thread < v->n_threads ? v->now[thread] : 0;
}

#endif
