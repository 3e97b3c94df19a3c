/*
 * replay.h — internal structure of the pes-replay command.
 *
 * Data flows one way (conventions.md):
 *   options → input (trace reader + merge / text reader / mimicked cores)
 *           → analyses (reuse profiles, SDCM model, cache+MESI simulation),
 *             each filling its part of struct replay_result
 *           → one report writer (text, JSON or CSV).
 * Analyses never print; report writers never compute.
 */
#ifndef PES_REPLAY_REPLAY_H
#define PES_REPLAY_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "mesi.h"
#include "mimic.h"
#include "pes/model.h"
#include "pes/trace.h"
#include "profiles.h"

#define REPLAY_MAX_CONFIGS 16

enum replay_format { REPLAY_TEXT, REPLAY_JSON, REPLAY_CSV };

struct replay_options {
    const char *trace;            /* with --compare: the sampled trace */
    const char *full;             /* --compare: the full trace */
    int compare;                  /* --compare SAMPLED FULL (accuracy.h) */
    const char *machine;          /* preset name, "host" or a path */
    const char *cache_spec;       /* --cache override */
    uint32_t cores[REPLAY_MAX_CONFIGS]; /* --cores list; n_cores == 0: recorded threads */
    uint32_t n_cores;
    uint32_t sockets;             /* --sockets: recorded threads split over N shared caches */
    uint32_t line;                /* --line bytes; 0 = the machine's L1 line */
    enum pes_interleave interleave;
    uint64_t seed;
    uint64_t chunk;               /* --chunk: schedule(static, chunk) when mimicking */
    int per_region;               /* --per-region: split BB instances per parallel-region instance */
    int simulate;                 /* --simulate */
    uint64_t page_size;           /* --page-map: 0 = virtual indexing, else random frames of this size */
    uint32_t top;                 /* --top N sites */
    const char *sort;             /* --sort METRIC */
    const char *comm_csv;         /* --comm-csv FILE */
    const char *sites_csv;        /* --sites-csv FILE */
    enum replay_format format;
    int input_format;             /* --input-format: REPLAY_INPUT_AUTO, _PES, or an enum pes_text_format */
    const char *output;           /* -o FILE; NULL = stdout */
    int show_machine;
    uint32_t jobs;                /* --jobs: replay threads (1 or 2) */
    const char *full_only;        /* first flag given that needs a full trace alone ("simulate"):
                                     refused for a sampled trace and --compare */
};

/* Parses argv; on a usage error prints one line naming the flag and returns -1;
 * returns 1 when --help/--version was handled (exit 0). */
int replay_parse_options(int argc, char **argv, struct replay_options *o);

#include "input.h"

/* ------------------------------------------------------------ results */

struct replay_sim_result {
    struct pes_sim *sim;          /* owned: per-site / per-thread stats, matrices */
    uint32_t n_threads;           /* matrix dimension (threads or cores) */
};

/* One configuration: the recorded threads, or N mimicked cores. */
struct replay_config {
    uint32_t cores;               /* streams: threads (recorded) or mimicked cores */
    int mimicked;
    struct pes_profiles *profiles;   /* PRD per stream (and CRD per shared cache when mimicked) */
    struct pes_profiles *crd;        /* recorded threads: one stream per shared cache, whose
                                        PRD is that cache's CRD (computed beside the PRDs) */
    double hit[PES_MAX_LEVELS];      /* SDCM global hit rates */
    struct pes_runtime runtime;
    struct replay_sim_result sim;    /* sim.sim == NULL without --simulate */
};

struct replay_result {
    struct replay_summary summary;
    struct pes_machine machine;
    uint32_t line;                /* granularity of the profiles */
    struct replay_config config[REPLAY_MAX_CONFIGS];
    uint32_t n_configs;
};

/* A configuration's CRD histograms, wherever they are kept. */
uint32_t replay_config_groups(const struct replay_config *c);
const struct pes_rd_hist *replay_config_crd(const struct replay_config *c, uint32_t group);

/* Per-site reuse of a configuration: one row per site, most accesses first
 * (malloc'd; *n rows). Means are over finite distances, in lines. */
struct replay_site_reuse {
    uint32_t site;
    uint64_t accesses;        /* line accesses (a range counts every line) */
    uint64_t prd_cold, crd_cold;
    double prd_mean, crd_mean;
};
struct replay_site_reuse *replay_config_site_reuse(const struct replay_config *c, size_t *n);

/* ------------------------------------------------------------ analyses */

/* SDCM hit rates and runtime of every configuration. */
int replay_apply_model(struct replay_result *res, struct pes_error *err);
void replay_result_free(struct replay_result *res);

/* ------------------------------------------------------------ reports */

int replay_report_text(FILE *out, const struct replay_input *in, const struct replay_options *o,
                       const struct replay_result *res);
int replay_report_json(FILE *out, const struct replay_input *in, const struct replay_options *o,
                       const struct replay_result *res);
int replay_report_csv(FILE *out, const struct replay_input *in, const struct replay_options *o,
                      const struct replay_result *res);
/* Per-site simulation table of every simulated configuration as CSV. */
int replay_report_sites_csv(FILE *out, const struct replay_input *in, const struct replay_options *o,
                            const struct replay_result *res);
/* Communication matrix of configuration c as CSV (thread × thread, symmetric). */
int replay_report_comm_csv(FILE *out, const struct replay_config *c);

#endif
