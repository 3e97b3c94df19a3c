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
 *
 * Memory (docs/replay.md, "Memory"): a thread's stream holds buffers only
 * while it runs in merged order (from its THREAD block's start time to its
 * last record): a copy of its current ACCESS block and its current segment,
 * at most PES_MERGE_SEGMENT_CAP records of it. A longer segment (a thread
 * with few time marks) is measured ahead first, by decoding its blocks
 * without keeping them, then delivered in parts timed exactly as a whole;
 * the order is the same as with the whole segment in memory, and those
 * blocks are decoded twice. Beyond that, 24 bytes per ACCESS block and
 * about 150 bytes per thread.
 */
#ifndef PES_REPLAY_MERGE_H
#define PES_REPLAY_MERGE_H

#include <stdint.h>
#include "pes/trace.h"

/* Records of one segment held at once (x 16 bytes). The runtime's default
 * --time-interval gives segments of about 1024 records. */
#define PES_MERGE_SEGMENT_CAP 65536u

struct pes_merged_record {
    uint64_t time;         /* interpolated ticks */
    uint32_t thread;       /* thread index */
    struct pes_record rec; /* as recorded (control records included) */
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
/* The threads whose streams ended (their last record was returned, or they
 * had none) during the last pes_merge_next / pes_merge_read call, in the
 * order they ended; valid until the next call. Their buffers are freed. */
size_t pes_merge_ended(const struct pes_merge *m, const uint32_t **threads);
/* Only the records timed in [lo, hi) (bounded == 0: from lo on), in the
 * same order: a part of the stream, since the merge orders by time first;
 * the parts of cut times t1 <= t2 <= ... ([0, t1), [t1, t2), ..., [tn-1,
 * end)), read one after the other, are the whole stream (pes-replay-mpi:
 * one part per rank). A thread is entered at its last time mark before lo,
 * found by bisecting its blocks, so its earlier blocks are not decoded;
 * threads whose records start at or after hi are not read. Before the first
 * read; 0 or -1. Threads are reported ended (pes_merge_ended) only where
 * their last record is delivered, or in a part after it. */
int pes_merge_set_range(struct pes_merge *m, uint64_t lo, uint64_t hi, int bounded,
                        struct pes_error *err);
/* n - 1 cut times for n parts of about as many records each (cuts[n-1]),
 * assuming each thread runs evenly from its start to its end (FOOTER, else
 * its last mark). The same on every call for the same file. 0 or -1. */
int pes_merge_part_times(struct pes_merge *m, uint32_t n, uint64_t *cuts, struct pes_error *err);
/* Decodes each stream's next blocks ahead on the replay's workers
 * (scheduler.h; urgent tasks), 2 blocks per stream (not counted by
 * pes_merge_memory), by up to one reader per worker opened on path, each
 * stream's blocks by one of them in file order (the checks across a
 * thread's blocks are the same); nothing with fewer than 2 workers. The
 * order and every record are the same; a damaged block's error comes where
 * the merge reaches the block. Not with pes_merge_set_range (a stream
 * entered in its middle). Before the first read; 0 or -1. */
struct pes_sched;
int pes_merge_set_workers(struct pes_merge *m, struct pes_sched *sched, const char *path,
                          struct pes_error *err);
/* Bytes held in the streams' block and segment buffers now. */
uint64_t pes_merge_memory(const struct pes_merge *m);
/* Number of threads that have ACCESS blocks. */
uint32_t pes_merge_thread_count(const struct pes_merge *m);
void pes_merge_close(struct pes_merge *m);

#endif
