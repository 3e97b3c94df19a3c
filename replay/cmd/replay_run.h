/*
 * replay_run.h — what pes-replay and pes-replay-mpi share (internal to cmd/):
 * the machine from the options, and the replay of a full trace (or another
 * tool's address trace) through the registry's analyses into one report.
 */
#ifndef PES_REPLAY_RUN_H
#define PES_REPLAY_RUN_H

#include "replay.h"

/* How pes-replay-mpi takes part; pes-replay passes NULL. */
struct replay_hooks {
    const struct pes_profiles_split *split; /* the reuse profiles' split (knobs.split) */
    int no_report;                          /* write nothing (MPI ranks other than 0) */
    struct pes_report **report; /* non-NULL: the report is handed over here, not written (--diff) */
    /* Called once on every path, after the analyses, with their outcome (0,
     * or -1 with err filled): the outcome every process agrees on, the same
     * kind of value (MPI: a rank's failure fails them all). */
    int (*agree)(void *ctx, int rc, struct pes_error *err);
    /* Before each batch reaches the analyses (NULL: nothing): 0, or -1 with
     * err filled to stop the replay (MPI: rank 0 failed; messages in flight
     * move on). */
    int (*progress)(void *ctx, struct pes_error *err);
    /* Reading in parts: with parts > 1, when the input and the analyses
     * allow it (none of --simulate, --cores, --sample-rate),
     * this process reads only part `part` of the recorded stream and the
     * profiles split in parts (profiles.h); the other parts' counts
     * (pes_pipeline_part_pack) travel to part 0 after the profiles' sync:
     * part_send (part > 0; the buffer is the callee's), part_recv (part 0,
     * for each later part in order; a malloc'd buffer). 0, or -1 (err). */
    uint32_t part, parts;
    /* Shares (reading the whole stream everywhere: --simulate, --cores):
     * this process's share of the simulation's address partitions
     * (knobs.share); with shares > 1, after each pipeline's finish the
     * shares travel to process 0 as parts do (part_send / part_recv) and
     * are added there (pes_pipeline_share_merge). With --cores and
     * shares > 1, each configuration runs whole on one process and its
     * report section travels the same way instead. */
    uint32_t share, shares;
    int (*part_send)(void *ctx, void *buf, size_t len, struct pes_error *err);
    int (*part_recv)(void *ctx, uint32_t from, void **buf, size_t *len, struct pes_error *err);
    /* pes-replay --parts (part_link.h): the parts are threads of this
     * process. No split unless the report allows parts: part 0 then replays
     * alone, as pes-replay does. Else part 0 calls parts_begin (0, or -1
     * with err filled) once it has decided to read in parts, which starts
     * the other parts, and parts_end before its --stats table, which waits
     * for them. Each part runs on its own thread, without workers. */
    int threads;
    int (*parts_begin)(void *ctx, struct pes_error *err);
    void (*parts_end)(void *ctx);
    /* Threads: n more records read by this part; returns the parts' total
     * so far (part 0's progress line counts every part's). */
    uint64_t (*records)(void *ctx, uint64_t n);
    void *ctx;
};

/* Another part's failure (its error code and message), as part 0 reports
 * it: the input's damage in pes-replay's words (the first part to meet it
 * may be any), anything else named by its part (`who`: "rank", "part"). */
int replay_part_failure(struct pes_error *err, const char *who, uint32_t from, int code,
                        const char *message);

/* The input's site table, as stream descriptions and writers look it up. */
const struct pes_site *replay_site_of_input(const void *in, uint32_t id);
/* The input's warnings on stderr: a cut file, blocks of unknown type. */
void replay_input_warnings(const struct replay_input *in);
/* Data objects as the options say (--no-objects), built now, with their
 * warning (a binary missing or stripped) on stderr; NULL: not resolved. */
struct pes_objects *replay_input_objects_setup(struct replay_input *in,
                                               const struct replay_options *o);
/* "pes-replay: MESSAGE" on stderr (replay_message); returns 1, the exit status. */
int replay_fail(const struct pes_error *err);
/* --machine, then --cache, validated. 0, or -1 with err filled. */
int replay_load_machine(const struct replay_options *o, struct pes_machine *m,
                        struct pes_error *err);
/* Replays o->trace and writes the report; 0, or 1 after printing the error. */
int replay_full(const struct replay_options *o, const struct pes_machine *machine,
                const struct replay_hooks *h);
/* pes-replay SAMPLED, or --compare SAMPLED FULL (replay_sampled.c): the
 * report, with the inputs' warnings printed; NULL with err filled. */
struct pes_report *replay_sampled_report(const struct replay_options *o,
                                         const struct pes_machine *m, struct pes_error *err);
/* The same, written as o asks; the exit status (the error printed). */
int replay_sampled(const struct replay_options *o, const struct pes_machine *m);
/* --csv-dir: every table of rep as a CSV file in o->csv_dir (nothing without
 * it). 0, or -1 with err filled. */
int replay_write_csv_dir(const struct replay_options *o, const struct pes_report *rep,
                         struct pes_error *err);
/* pes-replay --diff A B (replay_diff.c): the exit status (errors printed). */
int replay_diff(const struct replay_options *o, const struct pes_machine *m);

#endif
