/*
 * analysis.h — the one interface every pes-replay analysis implements, and
 * the registry of analyses.
 *
 * An analysis sees the description of the stream it runs on (stream.h), the
 * options it reads (struct pes_knobs) and the stream's batches, in order. It
 * never opens files and never prints. A new one is a file in this folder
 * defining a `const struct pes_analysis`, plus its line in registry.c
 * (docs/replay.md, "Writing an analysis"; a sampled trace's: "Writing a
 * sampled analysis").
 *
 * Life of an analysis on one stream (one configuration: the recorded threads,
 * or N mimicked cores):
 *   wanted → create → [link] → batch … batch → finish → publish → destroy
 * The pipeline (pipeline.h) runs every wanted analysis of the registry over
 * the same batches, each step in registry order. An analysis that builds on
 * another's results (a join: accuracy.c) finds it in link, among the
 * analyses before it in the registry, and reads it through the accessors
 * that analysis exports (sampled_results.h) from its finish on: the other's
 * finish has run by then.
 */
#ifndef PES_REPLAY_ANALYSIS_H
#define PES_REPLAY_ANALYSIS_H

#include <stdint.h>

#include "report.h"
#include "stream.h"

struct pes_profiles_split;
struct pes_sched;

/* What analyses may read of the command line. */
struct pes_knobs {
    uint32_t jobs;     /* --jobs: replay threads the analyses may use */
    int mimic;         /* --cores given: the recorded stream only feeds the summary */
    int simulate;      /* --simulate */
    int runtime_model; /* --runtime-model: enum pes_runtime_model */
    uint32_t top;      /* --top: sites listed */
    const char *sort;  /* --sort: metric the simulated sites are ranked by */
    const char
        *by; /* --by: rows per line (NULL: the default), site, function or object (groups.h) */
    const char
        *reuse_estimator;      /* --reuse-estimator: auto (NULL), decided or censored (sampled.h) */
    const char *stack_model;   /* --stack-model: phased (NULL) or shen (sampled.h) */
    const char *interval_bias; /* --interval-bias: calibrated (NULL) or none (sampled.h) */
    const char
        *comm_estimator; /* --comm-estimator: interleave (NULL) or comdetective (sampled.h) */
    const char *
        annotate; /* --annotate FILE or "all": the text report adds annotated source (NULL: none) */
    int all_rows; /* ranked tables list rows whose metric is 0 too (--diff: a row
                               missing from one run must mean 0 there, not "not ranked") */
    double sample_rate;   /* --sample-rate: SHARDS sampling of lines (0: exact profiles) */
    uint64_t sample_seed; /* --sample-seed: which lines are sampled */
    int sample_check;     /* --sample-check: exact profiles too, for the error */
    /* pes-replay-mpi: the reuse profiles' work split over processes
     * (profiles.h); NULL: this process does all */
    const struct pes_profiles_split *split;
    /* the replay's workers (scheduler.h: --jobs); NULL: every analysis runs on
     * the thread that hands it the batches */
    struct pes_sched *sched;
    /* pes-replay-mpi, every process reading the whole stream: this
     * process's share (share of shares) of the work that splits exactly
     * (the simulation's address partitions); shares 0 or 1: all of it */
    uint32_t share, shares;
};

/* The analyses created on one stream, for link: the state of analysis a
 * (what its create returned), or NULL when a does not run on this stream. */
struct pes_siblings;
struct pes_analysis;
void *pes_sibling(const struct pes_siblings *s, const struct pes_analysis *a);

/* Where results go (report.h): the run's "trace" section, and the section of
 * the configuration this stream is (NULL: the recorded threads when --cores
 * mimics cores instead; only the summary runs then). A sampled trace's
 * report has no configurations: "trace" is the report's root there (the
 * layout of docs/accuracy.md) and config is NULL. */
struct pes_publish {
    struct pes_report *r;
    struct pes_rnode *trace;
    struct pes_rnode *config;
};

struct pes_analysis {
    const char *name; /* one word, as in --help and the docs */
    const char *help; /* one line */
    /* Whether it runs on this stream (NULL: always). */
    int (*wanted)(const struct pes_stream_info *si, const struct pes_knobs *k);
    /* Its state, or NULL with err filled (bad option for this stream, no memory). */
    void *(*create)(const struct pes_stream_info *si, const struct pes_knobs *k,
                    struct pes_error *err);
    /* After every analysis of the stream is created: note the analyses whose
     * results this one reads (pes_sibling). 0, or -1 with err filled (one it
     * needs does not run). NULL: it reads none. */
    int (*link)(void *self, const struct pes_siblings *s, struct pes_error *err);
    /* The next batch; 0, or -1 with err filled. NULL: it reads no batch (a join). */
    int (*batch)(void *self, const struct pes_batch *b, struct pes_error *err);
    /* End of the stream: derive what needs the whole stream. 0 or -1. */
    int (*finish)(void *self, struct pes_error *err);
    /* Describes its results in the report (names and order: the JSON schema,
     * docs/replay.schema.json); called once, after finish. Never prints. */
    void (*publish)(void *self, const struct pes_publish *p);
    void (*destroy)(void *self);
    /* Reading in parts (pes-replay-mpi: each process replays one contiguous
     * part of the stream; docs/replay.md, "Distributed replay (MPI)"). All
     * three NULL: the analysis needs the whole stream in one process, and
     * the trace is then read whole everywhere.
     * sync: after a part's last batch, before part_pack or part_merge
     * (NULL: nothing to do); 0 or -1.
     * part_pack: the part's counts as bytes into buf; returns their size
     * (buf NULL or cap too small: only the size).
     * part_merge: on process 0, after its own part, the counts of each
     * later part in stream order, before finish; 0 or -1. */
    int (*sync)(void *self, struct pes_error *err);
    size_t (*part_pack)(void *self, void *buf, size_t cap);
    int (*part_merge)(void *self, const void *buf, size_t len, struct pes_error *err);
    /* carry (NULL: the analysis's counts of a part need nothing after it):
     * on every part but the last, after its last batch and before sync, the
     * batches of the stream after the part in order (b NULL: its end). The
     * analysis runs on from its state and, beside it, from a fresh start (as
     * the next part did) until both states agree, when it returns 1 (no more
     * batches; part_merge then takes what it saw there in place of what
     * later parts saw before that point); 0 for more, -1 (err). */
    int (*carry)(void *self, const struct pes_batch *b, struct pes_error *err);
    /* Shares (knobs.shares > 1; NULL: the analysis does all of its work on
     * every process, or only process 0 publishes it): after finish, this
     * process's share of the results as bytes (share_pack, as part_pack),
     * and on process 0, after its finish, each other process's in process
     * order (share_merge); 0 or -1. */
    size_t (*share_pack)(void *self, void *buf, size_t cap);
    int (*share_merge)(void *self, const void *buf, size_t len, struct pes_error *err);
};

/* Whether every analysis wanted on this stream can run in parts. */
int pes_analyses_can_part(const struct pes_stream_info *si, const struct pes_knobs *k);

/* The registry, NULL-terminated, in the order analyses see each batch. */
extern const struct pes_analysis *const pes_analyses[];

extern const struct pes_analysis pes_analysis_summary; /* summary.c */
extern const struct pes_analysis pes_analysis_reuse;   /* reuse.c */
extern const struct pes_analysis pes_analysis_sim;     /* sim.c */
extern const struct pes_analysis pes_analysis_approx;  /* approx.c */
extern const struct pes_analysis pes_analysis_stride;  /* stride.c: the findings' stride rule */
/* a sampled trace's events (sampled_results.h: what they export) */
extern const struct pes_analysis pes_analysis_sampled_counts;  /* sampled_counts.c */
extern const struct pes_analysis pes_analysis_sampled_reuse;   /* sampled_reuse.c */
extern const struct pes_analysis pes_analysis_sampled_threads; /* sampled_threads.c */
extern const struct pes_analysis pes_analysis_sampled_comm;    /* sampled_comm.c */
extern const struct pes_analysis pes_analysis_sampled_sites;   /* sampled_sites.c */
extern const struct pes_analysis pes_analysis_sampled_objects; /* sampled_objects.c */
extern const struct pes_analysis pes_analysis_sampled_c2c;     /* sampled_c2c.c */
extern const struct pes_analysis pes_analysis_accuracy;        /* accuracy.c */
extern const struct pes_analysis pes_analysis_timing;          /* timing.c */

#endif
