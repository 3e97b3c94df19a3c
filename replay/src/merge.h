/*
 * merge.h — one global, time-ordered stream from a full trace's per-thread
 * ACCESS blocks.
 *
 * Each thread's records carry PES_ID_TIME marks (every few hundred records).
 * Records between two marks get times interpolated linearly between them, so
 * threads that ran concurrently interleave finely instead of in whole chunks;
 * ties are broken by thread index, so the order is deterministic. The order
 * within one thread is always preserved. Records before a thread's first mark
 * take the thread's start time; records after its last mark extrapolate at
 * the rate of the previous interval.
 */
#ifndef PES_REPLAY_MERGE_H
#define PES_REPLAY_MERGE_H

#include <stdint.h>
#include "pes/trace.h"

struct pes_merged_record {
    uint64_t time;            /* interpolated ticks */
    uint32_t thread;          /* thread index */
    struct pes_record rec;    /* as recorded (control records included) */
};

struct pes_merge;

/* Indexes the reader's ACCESS blocks. The reader must stay open while merging;
 * the merge owns no tables: resolve ids with pes_trace_reader_site/_bb. */
struct pes_merge *pes_merge_open(struct pes_trace_reader *r, struct pes_error *err);
/* 1 = *out filled, 0 = end, -1 = error (err filled). */
int pes_merge_next(struct pes_merge *m, struct pes_merged_record *out, struct pes_error *err);
/* Up to max records in the same order as repeated pes_merge_next, with their
 * thread indices (threads may be NULL); control records (ids >=
 * PES_ID_CONTROL_FIRST) are dropped unless keep_control. Returns the count
 * (0 = end) or -1 (err filled). */
long pes_merge_read(struct pes_merge *m, struct pes_record *out, uint32_t *threads, size_t max,
                    int keep_control, struct pes_error *err);
/* Number of threads that have ACCESS blocks. */
uint32_t pes_merge_thread_count(const struct pes_merge *m);
void pes_merge_close(struct pes_merge *m);

#endif
