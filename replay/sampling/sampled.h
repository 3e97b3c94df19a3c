/*
 * sampled.h — what a sampled trace says, what the full trace of the same
 * execution says, and how far apart they are (pes-replay SAMPLED and
 * pes-replay --compare SAMPLED FULL).
 *
 * The sampled analyses (replay/analyses/sampled_*.c, one file each) read
 * the trace's events and each keeps its own results; struct replay_sampled
 * is all of them gathered in one record (analyses/sampled_results.h) for
 * the accuracy join (analyses/accuracy.c) and the tests. Here:
 *   sampled.c          the header's settings, the option names, the record
 *   weights.h          the period weights of --samples traces (PERIOD events)
 *   ground_truth.c     accesses of the full trace -> rt_truth + MESI + exact
 *                      stack distances (struct replay_truth)
 *   accuracy_metrics.c both -> struct replay_accuracy (metrics of compare.h)
 * None of them reads a file but weights.c's pes_weights_build: they take
 * events and batches (stream.h).
 * Definitions and the event conventions they rely on: docs/accuracy.md.
 */
#ifndef PES_REPLAY_SAMPLED_H
#define PES_REPLAY_SAMPLED_H

#include <stdint.h>

#include "compare.h"
#include "mesi.h"
#include "pes/trace.h"
#include "rt_truth.h"
#include "stream.h"
#include "interleave.h"
#include "survival.h"
#include "time_to_stack.h"

struct pes_reuse;

/* The execution a trace comes from (its header): pes-collect --full --mode
 * writes both traces of one run from the same process. */
struct replay_execution {
    uint64_t pid, start_ticks, ticks_per_second;
    char command[256], hostname[64];
};
void replay_execution_of(struct replay_execution *x, const struct pes_trace_info *header);
/* Same pid, host and command, started within a second of each other. */
int replay_same_execution(const struct replay_execution *a, const struct replay_execution *b);

/* Per-site counts of a sampled trace (raw event counts, not scaled). */
struct replay_sampled_site {
    uint32_t site; /* UINT32_MAX: events without a site, and very high ids */
    uint64_t samples, reuses, invalidations, comm_true, comm_false;
    uint64_t line_key; /* replay_site_line_key: Marathe's reference (file:line) */
};

struct replay_sampled_thread {
    uint64_t loads, stores; /* TOTALS (or the largest counters seen) */
    uint64_t samples, reuses, spatial, invalidations, comm, lost; /* sampled_counts.c */
    double n_distinct; /* N-hat of the thread (Kac), 0 without reuses (sampled_reuse.c) */
    /* --samples (PERIOD events): the first and last periods in effect and the
     * number of changes; without PERIOD events the header's periods, 0 changes
     * (the stream's weights, weights.h) */
    uint64_t period_first_load, period_first_store, period_last_load, period_last_store;
    uint32_t period_changes;
};

/* How reuse outcomes become histograms (docs/accuracy.md, "Censored watches"):
 * DECIDED: the decided outcomes, each weighted by its reservoir offers (aux,
 * RDX); CENSORED: Kaplan–Meier over decided and censored (WATCH_EXPIRED)
 * watches, one observation per watch. AUTO: CENSORED when the trace records
 * censored watches (header censoring=watch_expired), else DECIDED. */
enum replay_reuse_estimator {
    REPLAY_EST_AUTO = 0,
    REPLAY_EST_DECIDED = 1,
    REPLAY_EST_CENSORED = 2
};
/* "auto", "decided", "censored" (NULL: auto); -1 for anything else. */
int replay_reuse_estimator_parse(const char *name);
const char *replay_reuse_estimator_name(int estimator);

/* How the intra-thread time histogram becomes stack distances
 * (docs/accuracy.md): SHEN, Shen et al.'s model over the thread's whole
 * stream (pes_t2s_convert); PHASED, the same footprint per window of the
 * thread's accesses with the interval's own spread (pes_t2s_convert_phased). */
enum replay_stack_model { REPLAY_STACK_PHASED = 0, REPLAY_STACK_SHEN = 1 };
/* "phased", "shen" (NULL: phased); -1 for anything else. */
int replay_stack_model_parse(const char *name);
const char *replay_stack_model_name(int model);
/* How the communication matrices are scaled (docs/accuracy.md): COMDETECTIVE,
 * every detection is `period` transfers (a trap period × L / (D × M),
 * Dissertation §5.3.2); INTERLEAVE, the owner changes of the accesses'
 * interleaving rebuilt from the samples' times, counts and lines
 * (interleave.h). The default is INTERLEAVE. */
enum replay_comm_estimator {
    REPLAY_COMM_DEFAULT = 0,
    REPLAY_COMM_COMDETECTIVE = 1,
    REPLAY_COMM_INTERLEAVE = 2
};
/* "comdetective", "interleave" (NULL: the default); -1 for anything else. */
int replay_comm_estimator_parse(const char *name);
const char *replay_comm_estimator_name(int estimator);

/* Every stated 90 % interval belongs to one family (docs/accuracy.md,
 * "Intervals that tell the truth"): Wilson's interval with Kish's effective
 * size covers the sampling error only, so each family adds the model error
 * its estimator showed on the tuning half of bench/corpus (interval_bias.c). */
enum replay_ci_family {
    REPLAY_CI_REUSE_BINS,     /* bins of the reuse time histograms (intra or shared) */
    REPLAY_CI_STACK_BINS,     /* bins of the converted stack histogram */
    REPLAY_CI_INVAL_RATIO,    /* invalidation ratio */
    REPLAY_CI_FALSE_FRACTION, /* false-sharing fraction of the communication */
    REPLAY_CI_COMM_PAIRS,     /* a thread pair's share of the communication */
    REPLAY_CI_FAMILIES
};
/* "calibrated" (NULL: the default) or "none" (Wilson alone): 1, 0, -1 for anything else. */
int replay_interval_bias_parse(const char *name);
/* The model-error term of family f: 0 when !calibrated. */
double replay_interval_bias(int calibrated, enum replay_ci_family f);
/* The intervals an analysis states (--interval-bias): every family's term. */
struct replay_ci {
    int calibrated; /* 1: the calibrated table, 0: all 0 (--interval-bias none) */
    double bias[REPLAY_CI_FAMILIES];
};
/* calibrated: replay_interval_bias_parse's answer (-1 counts as the default). */
void replay_ci_init(struct replay_ci *ci, int calibrated);
/* The stated 90 % interval of a share p (n_eff effective observations) in
 * family f: Wilson, widened by ci->bias[f], within [0, 1]. */
void replay_ci90(const struct replay_ci *ci, enum replay_ci_family f, double p, double n_eff,
                 double *lo, double *hi);

/* What the sampled analyses use of the sampled trace's settings (read once
 * per trace from its header: si->settings, pes_settings_from_header) and of
 * its header's identity; replay_sampled_config_read derives them. */
struct replay_sampled_config {
    char mode[32];                      /* "mode" */
    uint64_t period_load, period_store; /* with --samples: the caps */
    uint64_t samples_target;            /* --samples N, 0 = fixed period */
    uint32_t line, debug_registers, watch_bytes, sockets;
    double trap_scale;            /* L / (D x M), >= 1 */
    double time_interval;         /* accesses per time mark of a full trace of the run (1024) */
    int spatial;                  /* granularity=spatial: reuses are line reuses */
    int roi;                      /* roi=markers: samples only inside the region of interest */
    int censoring;                /* censoring=watch_expired: censored watches are recorded */
    int heap_on_use;              /* heap_events=used: heap events only as samples need them */
    struct replay_execution exec; /* the header's identity */
};
/* settings: the trace's (what a key absent from its header means is the
 * table's `absent` column); header: its identity (NULL: none). */
void replay_sampled_config_read(struct replay_sampled_config *c,
                                const struct pes_trace_info *header,
                                const struct pes_collect_settings *settings);
/* Every sampled event of a thread the trace does not announce is refused
 * (a corrupt trace): the error names the file and the block's offset. */
int replay_sampled_bad_thread(struct pes_error *err, const char *path, uint64_t offset,
                              uint32_t thread, uint32_t n_threads);

/* Everything the sampled analyses found, gathered (replay_sampled_gather,
 * analyses/sampled_results.h): the settings, then each analysis's results
 * (the comment names the file). Scope: 0 intra-thread, 1 shared cache
 * (PES_EVF_SHARED_CACHE). */
struct replay_sampled {
    /* the settings (struct replay_sampled_config) and --interval-bias */
    char mode[32];                      /* header config "mode" */
    uint64_t period_load, period_store; /* the header's (with --samples: the caps) */
    uint64_t samples_target;            /* --samples N (header samples_target), 0 = fixed period */
    uint32_t line, debug_registers, watch_bytes, sockets;
    double trap_scale; /* L / (D x M), >= 1 */
    int spatial;       /* granularity=spatial: reuses are line reuses */
    int roi;           /* roi=markers: samples only inside the region of interest */
    int censoring;     /* the trace records censored watches (header censoring=watch_expired) */
    int heap_on_use;   /* header config heap_events=...: heap events only as samples need them */
    struct replay_execution exec;
    /* each family's model-error term, added to both ends of its intervals */
    double ci_bias[REPLAY_CI_FAMILIES];
    int ci_calibrated; /* 1: ci_bias is the calibrated table, 0: all 0 (--interval-bias none) */
    uint32_t n_threads;
    struct replay_sampled_thread *thread; /* columns filled as struct replay_sampled_thread says */
    /* sampled_counts.c */
    uint64_t samples, lost, throttled, dropped, expired;
    uint64_t events, heap_events; /* all events, and of them alloc/free events */
    /* sampled_reuse.c */
    uint64_t reuses[2], invalidations[2]; /* events */
    double inval_periods[2]; /* --samples: sum of the periods of the invalidations' samples */
    double reuse_weight[2], inval_weight[2]; /* weighted by reservoir offers (aux) */
    uint64_t weighted_events;                /* REUSE/INVALIDATION events with aux > 1 */
    double reuse_weight_sq[2];               /* sum of squared weights (Kish effective size) */
    int estimator;        /* the one used: REPLAY_EST_DECIDED or REPLAY_EST_CENSORED */
    uint64_t censored[2]; /* WATCH_EXPIRED events per scope */
    /* Stated uncertainty (docs/accuracy.md): Kish's effective sample size of
     * the weights behind each histogram [scope][0 temporal, 1 line] and of
     * the decided outcomes (invalidation ratio) */
    double hist_neff[2][2], decided_neff[2];
    /* CENSORED: the weight of uses whose outcome lies beyond the largest
     * time observed in their thread (reuses longer than any seen, and uses
     * never reused), [scope][temporal, line]; their distances are >=
     * beyond_from (0: no observation) */
    double beyond[2][2];
    uint64_t beyond_from[2][2];
    double temporal[2][PES_RT_BINS]; /* time-distance histograms (raw counts) */
    double spatial_hist[2][PES_RT_BINS];
    double stack[PES_RT_BINS]; /* intra, converted to stack distances */
    int stack_model;           /* the conversion used: REPLAY_STACK_* */
    /* sampled_comm.c */
    uint64_t comm_events, comm_true_events, comm_false_events;
    double *comm_true, *comm_false; /* n_threads^2, scaled, symmetric, zero diagonal */
    double comm_neff;   /* Kish's effective size of the events (weights: their scaled volumes) */
    int comm_estimator; /* the one used: REPLAY_COMM_COMDETECTIVE or _INTERLEAVE */
    double
        comm_resolution; /* INTERLEAVE: accesses per time mark (header time_interval, else 1024) */
    struct pes_ilv_stats ilv; /* INTERLEAVE: shared lines, their samples, gaps */
    /* comm mode whose estimate is 0 (no shared line, or no detection, in the
     * samples): the volume a pattern could have and still go unseen, 90 %
     * (rule of three: fewer than 3 of the n sampled accesses, 3 · A / n
     * transfers); 0 when there is an estimate or no sample */
    double comm_volume_limit;
    /* sampled_sites.c */
    struct replay_sampled_site *sites; /* by site id; the row of events without a site last */
    size_t n_sites;
};

/* The stated 90 % interval of a share p (n_eff effective observations) in
 * family f: Wilson, widened by s->ci_bias[f], within [0, 1]. */
void replay_interval90(const struct replay_sampled *s, enum replay_ci_family f, double p,
                       double n_eff, double *lo, double *hi);
/* Frees the record's arrays (a gathered record owns them). */
void replay_sampled_free(struct replay_sampled *s);

/* Ground truth of a full trace. */
struct replay_truth {
    uint32_t n_threads;
    struct pes_rt *rt;
    struct pes_sim *sim;
    struct pes_reuse **stack_engine; /* per thread: the exact stack distances */
    struct truth_scratch *scratch;   /* ground_truth.c's per-chunk arrays */
    uint32_t max_site;               /* largest site id seen + 1 */
    uint64_t *site_key;              /* [max_site + 1] replay_site_line_key; last = pooled ids */
    double stack[PES_RT_BINS];       /* exact per-thread stack distances, start address */
    uint64_t accesses;
    struct replay_execution exec;
};

/* The full trace's stream (its threads and shared caches: si->stream_cache;
 * si->line: rt_truth's line granularity, the sampled trace's line size).
 * track: the rt_truth granularities to compute (PES_RT_TRACK_*, 0: both);
 * replay_truth_track says which a sampled trace is held against. */
int replay_truth_begin(const struct pes_stream_info *si, uint32_t track, struct replay_truth *t,
                       struct pes_error *err);
/* What replay_accuracy_compute reads of rt_truth for a sampled trace with
 * these settings: its reuses at the address (temporal) or, for
 * granularity=spatial, the line's; the invalidations by site at the address
 * either way. */
uint32_t replay_truth_track(const struct pes_collect_settings *sampled);
/* Every access of b, in order (BB entries are not needed). */
int replay_truth_batch(struct replay_truth *t, const struct pes_batch *b, struct pes_error *err);
/* The per-line keys of the sites seen (si->site). 0 or -1. */
int replay_truth_end(struct replay_truth *t, const struct pes_stream_info *si,
                     struct pes_error *err);
void replay_truth_free(struct replay_truth *t);

/* How many stated 90 % intervals were checked against the full trace and
 * how many contained its value. */
struct replay_coverage {
    uint32_t checked, covered;
    /* how far the truth lay outside each interval that missed it (the
     * largest REPLAY_OUTSIDE_MAX): what calibrates the model-error term */
    uint32_t n_outside;
    float outside_by[512];
};
#define REPLAY_OUTSIDE_MAX 512u

struct replay_accuracy {
    int same_execution; /* same pid, host and command, started within 1 s */
    double s_intra, s_shared, s_stack, s_intra_spatial;
    double inval_ratio_sampled, inval_ratio_true, inval_ratio_error;
    struct pes_cmp_matrix comm;
    double false_fraction_sampled, false_fraction_true, split_error;
    struct pes_cmp_topk top_invalidations; /* invalidations suffered by use site */
    struct pes_cmp_topk top_coherence;     /* coherence misses by site */
    uint32_t top_k;
    uint64_t samples, decided; /* reuse + invalidation outcomes used */
    double effective_reuses;   /* Kish: (sum w)^2 / sum w^2 of the compared histogram */
    /* Stated uncertainty against the truth (docs/accuracy.md): bins of the
     * compared intra histogram and of the stack histogram (bins where either
     * side has mass), the invalidation ratio, the false-sharing fraction and
     * the thread pairs' shares of the communication volume */
    struct replay_coverage cov_intra, cov_stack, cov_inval, cov_false, cov_pairs;
    double inval_ratio_neff; /* Kish size behind inval_ratio_sampled */
    /* comm mode with a zero estimate: does the detection limit hold the truth */
    struct replay_coverage cov_volume;
    /* Why each metric that is NaN could not be stated (docs/accuracy.md,
     * "Never silent"): the JSON key and a reason for people */
    struct replay_not_estimated {
        const char *key, *why;
    } not_estimated[24];
    unsigned n_not_estimated;
};

int replay_accuracy_compute(const struct replay_sampled *s, const struct replay_truth *t,
                            uint32_t top_k, struct replay_accuracy *a, struct pes_error *err);

/* Marathe et al. rank "references", source lines (file:line): a key equal for
 * all sites of one line (an unrolled loop has several sites per line); sites
 * without a debug location keep their own key. */
uint64_t replay_site_line_key(const struct pes_site *site, uint32_t id);

#endif /* PES_REPLAY_SAMPLED_H */
