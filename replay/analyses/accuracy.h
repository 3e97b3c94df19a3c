/*
 * accuracy.h — sampled-trace analyses and their comparison with the full-trace
 * ground truth (pes-replay SAMPLED, pes-replay --compare SAMPLED FULL).
 *
 *   sampled.c          events of a sampled trace -> struct replay_sampled
 *   accuracy_truth.c   full trace -> rt_truth + MESI + exact stack distances
 *   accuracy_compare.c both -> struct replay_accuracy (metrics of compare.h)
 *   report_accuracy.c  text / JSON
 * Definitions and the event conventions the analyses rely on: docs/accuracy.md.
 */
#ifndef PES_REPLAY_ACCURACY_H
#define PES_REPLAY_ACCURACY_H

#include <stdint.h>
#include <stdio.h>

#include "compare.h"
#include "mesi.h"
#include "pes/trace.h"
#include "rt_truth.h"
#include "time_to_stack.h"

struct replay_options;

/* Per-site counts of a sampled trace (raw event counts, not scaled). */
struct replay_sampled_site {
    uint32_t site;
    uint64_t samples, reuses, invalidations, comm_true, comm_false;
    char label[128];                 /* report_site_label */
    uint64_t line_key;               /* replay_site_line_key: Marathe's reference (file:line) */
};

struct replay_sampled_thread {
    uint64_t loads, stores;          /* TOTALS (or the largest counters seen) */
    uint64_t samples, reuses, spatial, invalidations, comm, lost;
    double n_distinct;               /* N-hat of the thread (Kac), 0 without reuses */
};

/* Scope: 0 intra-thread, 1 shared cache (PES_EVF_SHARED_CACHE). */
struct replay_sampled {
    char mode[32];                   /* header config "mode" */
    uint64_t period_load, period_store;
    uint32_t line, debug_registers, watch_bytes, sockets;
    double trap_scale;               /* L / (D x M), >= 1 */
    int spatial;                     /* granularity=spatial: reuses are line reuses */
    uint32_t n_threads;
    struct replay_sampled_thread *thread;
    uint64_t samples, lost, throttled, dropped, expired;
    uint64_t reuses[2], invalidations[2];   /* events */
    double reuse_weight[2], inval_weight[2];  /* weighted by reservoir offers (aux) */
    uint64_t weighted_events;                 /* REUSE/INVALIDATION events with aux > 1 */
    double reuse_weight_sq[2];                /* sum of squared weights (Kish effective size) */
    double temporal[2][PES_RT_BINS];   /* time-distance histograms (raw counts) */
    double spatial_hist[2][PES_RT_BINS];
    double stack[PES_RT_BINS];         /* intra, converted to stack distances */
    uint64_t comm_events, comm_true_events, comm_false_events;
    double *comm_true, *comm_false;    /* n_threads^2, scaled, symmetric, zero diagonal */
    struct replay_sampled_site *sites;
    size_t n_sites;
    uint64_t pid, start_ticks, ticks_per_second;
    char command[256], hostname[64];
    char truncation[320];              /* the reader's truncation message, "" if complete */
    uint64_t skipped_blocks;           /* blocks of unknown type, and the reader's message */
    char skipped[320];
};

/* Reads every EVENTS block of a sampled trace. */
int replay_sampled_analyze(const char *path, struct replay_sampled *s, struct pes_error *err);
void replay_sampled_free(struct replay_sampled *s);

/* Ground truth of a full trace. */
struct replay_truth {
    uint32_t n_threads;
    struct pes_rt *rt;
    struct pes_sim *sim;
    uint32_t max_site;               /* largest site id seen + 1 */
    uint64_t *site_key;              /* [max_site + 1] replay_site_line_key; last = pooled ids */
    double stack[PES_RT_BINS];       /* exact per-thread stack distances, start address */
    uint64_t accesses;
    uint64_t pid, start_ticks, ticks_per_second;
    char command[256], hostname[64];
    char truncation[320];            /* the reader's truncation message, "" if complete */
    uint64_t skipped_blocks;         /* blocks of unknown type, and the reader's message */
    char skipped[320];
    char clipped[320];               /* replay_input_clipped's warning, "" if nothing was clipped */
};

/* sockets: shared caches (threads in compact blocks); line: bytes of rt_truth's
 * line granularity (the sampled trace's line_size). */
int replay_truth_analyze(const char *path, const struct pes_machine *m, uint32_t sockets, uint32_t line,
                         struct replay_truth *t, struct pes_error *err);
void replay_truth_free(struct replay_truth *t);

struct replay_accuracy {
    int same_execution;              /* same pid, host and command, started within 1 s */
    double s_intra, s_shared, s_stack, s_intra_spatial;
    double inval_ratio_sampled, inval_ratio_true, inval_ratio_error;
    struct pes_cmp_matrix comm;
    double false_fraction_sampled, false_fraction_true, split_error;
    struct pes_cmp_topk top_invalidations;   /* invalidations suffered by use site */
    struct pes_cmp_topk top_coherence;       /* coherence misses by site */
    uint32_t top_k;
    uint64_t samples, decided;       /* reuse + invalidation outcomes used */
    double effective_reuses;         /* Kish: (sum w)^2 / sum w^2 of the compared histogram */
};

int replay_accuracy_compute(const struct replay_sampled *s, const struct replay_truth *t, uint32_t top_k,
                            struct replay_accuracy *a, struct pes_error *err);

int replay_report_sampled_text(FILE *out, const char *path, const struct replay_sampled *s, uint32_t top);
int replay_report_sampled_json(FILE *out, const char *path, const struct replay_sampled *s, uint32_t top);
int replay_report_accuracy_text(FILE *out, const struct replay_options *o, const struct replay_sampled *s,
                                const struct replay_truth *t, const struct replay_accuracy *a);
int replay_report_accuracy_json(FILE *out, const struct replay_options *o, const struct replay_sampled *s,
                                const struct replay_truth *t, const struct replay_accuracy *a);

/* Marathe et al. rank "references", source lines (file:line): a key equal for
 * all sites of one line (an unrolled loop has several sites per line); sites
 * without a debug location keep their own key. */
uint64_t replay_site_line_key(const struct pes_site *site, uint32_t id);

/* PES_TRACE_SAMPLED or PES_TRACE_FULL for a pes trace whose HEADER reads, else 0. */
int replay_trace_kind(const char *path);
/* pes-replay entry for a sampled trace or --compare; returns the exit code. */
int replay_accuracy_main(const struct replay_options *o, const struct pes_machine *m);

#endif /* PES_REPLAY_ACCURACY_H */
