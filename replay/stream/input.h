/*
 * input.h — what pes-replay reads: a pes trace (per-thread streams merged into
 * global time order, merge.h) or another tool's address trace, presented as
 * one stream of resolved accesses and BB entries (stream/input.c).
 */
#ifndef PES_REPLAY_INPUT_H
#define PES_REPLAY_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "mimic.h"
#include "stream.h"
#include "pes/trace.h"

struct replay_input;
/* What replay_input_open_as reads: a pes trace if the file starts like one
 * (AUTO) or always (PES), else another tool's trace in the given
 * pes_text_format (AUTO: detected, docs/trace-format.md §9). */
enum { REPLAY_INPUT_AUTO = PES_TEXT_FORMAT_AUTO, REPLAY_INPUT_PES = 100 };
struct replay_input *replay_input_open_as(const char *path, int input_format,
                                          struct pes_error *err);

struct replay_summary {
    uint32_t kind; /* enum pes_trace_kind, 0 for a text trace */
    int text;      /* plain-text address trace */
    int truncated;
    uint64_t skipped_blocks; /* blocks of a type the reader does not know */
    uint64_t clipped_ranges; /* variable-size accesses clipped (REPLAY_RANGE_GRANULES) */
    uint32_t threads;        /* threads with records */
    uint64_t records, accesses, bb_execs;
    uint64_t reads, writes, bytes;
    double ops[PES_OP_COUNT]; /* static op counts × BB executions */
    const char *command;
};

/* -1 (err filled) if path exists and is not a regular file: a device, fifo
 * or directory cannot be read by offset or twice (/dev/zero would never end). */
int replay_input_check_file(const char *path, struct pes_error *err);
struct replay_input *replay_input_open(const char *path, struct pes_error *err);
/* A sampled pes trace (pes-collect --mode): replay_input_run delivers its
 * events, one EVENTS block per batch (no accesses); the tables and the
 * header are read as for a full trace. */
struct replay_input *replay_input_open_sampled(const char *path, struct pes_error *err);
/* About how many records replay_input_run will deliver (a pes trace: its
 * index's record or event counts, time marks included; another tool's
 * trace: its size over the mean line length of its first 64 KiB), for a
 * progress line; 0 if unknown. */
uint64_t replay_input_records_estimate(struct replay_input *in);
/* PES_TRACE_SAMPLED or PES_TRACE_FULL for a pes trace whose header reads, else 0. */
int replay_input_pes_kind(const char *path);
void replay_input_close(struct replay_input *in);
int replay_input_is_text(const struct replay_input *in);
const struct pes_trace_info *replay_input_info(const struct replay_input *in); /* NULL for text */
/* The header's collector settings, read and checked when the trace was opened
 * (another tool's trace: the values of absent keys). */
const struct pes_collect_settings *replay_input_settings(const struct replay_input *in);
const struct pes_site *replay_input_site(const struct replay_input *in, uint32_t id);
const struct pes_bb *replay_input_bb(const struct replay_input *in, uint32_t id);
int replay_input_has_bbs(const struct replay_input *in);
uint32_t replay_input_threads(const struct replay_input *in); /* thread table size (text: 1) */
const char *replay_input_truncation(const struct replay_input *in); /* NULL if complete */
/* Another tool's trace: what it is, for the text report ("valgrind lackey trace"). */
const char *replay_input_text_kind(const struct replay_input *in);
/* Blocks of unknown type the reader skipped, and its one-line message about them. */
uint64_t replay_input_skipped(const struct replay_input *in, const char **message);

/* Variable-size accesses (memcpy, memmove and memset ranges, whose length is
 * the record's extra) longer than this many granules are clipped to their
 * first REPLAY_RANGE_GRANULES granules for the reuse profiles and the
 * simulation, so that one record costs bounded time and memory; the summary
 * still counts their recorded length (docs/replay.md, "Memory"). */
#define REPLAY_RANGE_GRANULES (UINT32_C(1) << 20)

/* The clipping length in bytes for a profile granule and a simulated line:
 * REPLAY_RANGE_GRANULES of the smaller, at most UINT32_MAX (no clipping). */
uint32_t replay_range_cap(uint32_t granule, uint32_t sim_line);
/* Clip variable-size accesses to `bytes` from now on (0: no clipping). */
void replay_input_set_range_cap(struct replay_input *in, uint32_t bytes);
uint32_t replay_input_range_cap(const struct replay_input *in);
/* The replay's threads (--jobs): another tool's text trace is parsed by n
 * threads in parallel blocks (at most PES_TEXT_MAX_THREADS); with n >= 2 a
 * pes trace of up to 256 threads is merged on a thread of its own, ahead of
 * the batching (0 or 1: all on the reading thread). */
void replay_input_set_threads(struct replay_input *in, unsigned n);
/* The replay's workers (scheduler.h): a pes trace's blocks are decoded
 * ahead on them (pes_merge_set_workers), in every pass. NULL: none. */
struct pes_sched;
void replay_input_set_workers(struct replay_input *in, struct pes_sched *sched);
/* A text trace's records pass f where they are parsed (pes_text_reader_set_filter)
 * in replay_input_run's scans; the ones it drops reach the sink as counts
 * only (pes_batch.dropped_reads/_writes). 1 if set, 0 if the input is not
 * another tool's trace (nothing is filtered); NULL removes it. */
int replay_input_set_filter(struct replay_input *in, const struct pes_text_filter *f);
/* Accesses clipped by the last scan (0 if none); with a one-line warning
 * naming the file, the limit and the longest clipped access in msg. */
uint64_t replay_input_clipped(const struct replay_input *in, char *msg, size_t msg_size);

/* Data objects (objects.h): resolved for a pes trace's accesses and events
 * unless turned off (--no-objects; default on), for another tool's trace
 * never, and not when the input is read in parts (replay_input_set_part:
 * the heap state before a part's start is unknown there). On the first call
 * they are built from the trace's MAPS block (the traced binaries' DWARF and
 * symbols): NULL when not resolved. */
void replay_input_set_objects(struct replay_input *in, int on);
struct pes_objects *replay_input_objects(struct replay_input *in);
/* The first problem met building them (a binary of the MAPS block missing
 * or without symbols), one line naming the file, or NULL (also for a trace
 * without MAPS block: its globals are simply unknown). Never an error. */
const char *replay_input_objects_warning(const struct replay_input *in);

/* Call paths (callpath.h): with depth > 0, for a pes full trace whose site
 * tables hold call sites, each access gets its path (pes_batch.callpath).
 * The table is made on the first replay_input_callpaths call: NULL when
 * there are none (err->code 0) or without memory (err filled). Read in
 * parts, each run also takes its records' effect (callpath.h, parts;
 * replay_input_callpath_effect), and a part after the first gives its
 * accesses the effect's symbolic paths instead, which part 0 resolves. */
struct pes_callpaths;
struct pes_callpaths_effect;
void replay_input_set_callpaths(struct replay_input *in, uint32_t depth);
struct pes_callpaths *replay_input_callpaths(struct replay_input *in, struct pes_error *err);
/* The last run's effect, read in parts with call paths; else NULL. */
struct pes_callpaths_effect *replay_input_callpath_effect(const struct replay_input *in);
/* Part 0: a tracker (of its own table) in the state after its part, from
 * the last run's effect; to be destroyed. NULL without memory or effect. */
struct pes_callpaths *replay_input_callpath_end(const struct replay_input *in);

/* Reading in parts (pes-replay-mpi): replay_input_run delivers only part k
 * of n of the stream, the parts in order being the whole stream: a range of
 * the bytes of another tool's trace (pes_text_part), a range of merged times
 * of a pes trace (pes_merge_set_range). 0, or -1 with err filled. */
int replay_input_set_part(struct replay_input *in, uint32_t k, uint32_t n, struct pes_error *err);
/* The same from part k's start on to the end of the stream (what follows a
 * part, for the analyses that carry their state across parts). */
int replay_input_set_part_to_end(struct replay_input *in, uint32_t k, uint32_t n,
                                 struct pes_error *err);
/* The clipping counts of the last scan (replay_input_clipped) as bytes, and
 * those of a later part added to this input's, as if one scan had seen both. */
enum { REPLAY_CLIP_BYTES = 16 };
void replay_input_clip_pack(const struct replay_input *in, unsigned char out[REPLAY_CLIP_BYTES]);
void replay_input_clip_merge(struct replay_input *in, const unsigned char part[REPLAY_CLIP_BYTES]);

/* The merged stream (a pes trace: every thread's records in time order; a
 * text trace: its lines) as batches to sink: accesses with their sites'
 * read/write kinds, BB entries, and each thread once its records are all
 * delivered. 0, or -1 with err filled (the input's or the sink's error). */
int replay_input_run(struct replay_input *in, const struct pes_batch_sink *sink,
                     struct pes_error *err);
struct pes_callpaths;
/* Mimicked cores (opt->n_cores, its emit ignored) as batches to sink: the
 * interleaved stream of PPT-Multicore Alg. 2 (stream/source_mimic.c).
 * Each core walks the allocation records in a lane of the input's objects
 * (objects.h): first_lane 0, lanes 0 .. n_cores - 1 set up for this pass
 * alone; else lanes first_lane .. first_lane + n_cores - 1, which the
 * caller set up (replay_input_object_lanes) so that passes of several
 * configurations run at once, each on its own thread. callpaths (NULL:
 * none; else made for opt->n_cores threads, one per core): each core's
 * accesses carry the sequential run's call path at their place in it
 * (pes_batch.callpath), the cores' private streams then made on the calling
 * thread (opt->sched ignored: each core's stack follows its own order). */
int replay_mimic_run(struct replay_input *in, const struct pes_mimic_counts *counts,
                     const struct pes_mimic_options *opt, uint32_t first_lane,
                     struct pes_callpaths *callpaths, const struct pes_batch_sink *sink,
                     struct pes_error *err);
/* n lanes of the input's objects (1: back to the recorded pass's one),
 * ready for passes on several threads (pes_objects_freeze). 0, or -1
 * without memory; 0 when objects are not resolved. */
int replay_input_object_lanes(struct replay_input *in, uint32_t n);
/* The merged stream as a re-readable sequential source for PPT mimicking. */
void replay_input_mimic_source(struct replay_input *in, struct pes_mimic_source *src);

#endif
