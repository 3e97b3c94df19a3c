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

/* ------------------------------------------------------------ input */

struct replay_input;
/* What replay_input_open_as reads: a pes trace if the file starts like one
 * (AUTO) or always (PES), else another tool's trace in the given
 * pes_text_format (AUTO: detected, docs/trace-format.md §9). */
enum { REPLAY_INPUT_AUTO = PES_TEXT_FORMAT_AUTO, REPLAY_INPUT_PES = 100 };
struct replay_input *replay_input_open_as(const char *path, int input_format, struct pes_error *err);

struct replay_summary {
    uint32_t kind;                /* enum pes_trace_kind, 0 for a text trace */
    int text;                     /* plain-text address trace */
    int truncated;
    uint64_t skipped_blocks;      /* blocks of a type the reader does not know */
    uint64_t clipped_ranges;      /* variable-size accesses clipped (REPLAY_RANGE_GRANULES) */
    uint32_t threads;             /* threads with records */
    uint64_t records, accesses, bb_execs;
    uint64_t reads, writes, bytes;
    double ops[PES_OP_COUNT];     /* static op counts × BB executions */
    const char *command;
};

/* -1 (err filled) if path exists and is not a regular file: a device, fifo
 * or directory cannot be read by offset or twice (/dev/zero would never end). */
int replay_input_check_file(const char *path, struct pes_error *err);
struct replay_input *replay_input_open(const char *path, struct pes_error *err);
void replay_input_close(struct replay_input *in);
int replay_input_is_text(const struct replay_input *in);
const struct pes_trace_info *replay_input_info(const struct replay_input *in); /* NULL for text */
const struct pes_site *replay_input_site(const struct replay_input *in, uint32_t id);
const struct pes_bb *replay_input_bb(const struct replay_input *in, uint32_t id);
int replay_input_has_bbs(const struct replay_input *in);
uint32_t replay_input_threads(const struct replay_input *in);   /* thread table size (text: 1) */
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
/* Accesses clipped by the last scan (0 if none); with a one-line warning
 * naming the file, the limit and the longest clipped access in msg. */
uint64_t replay_input_clipped(const struct replay_input *in, char *msg, size_t msg_size);

/* One access in global order, ids resolved. */
struct replay_access {
    uint64_t addr;
    uint32_t size;                /* bytes replayed (clipped, see REPLAY_RANGE_GRANULES) */
    uint32_t length;              /* bytes recorded */
    uint32_t thread;
    uint32_t site;                /* id */
    uint8_t kind;                 /* enum pes_access_kind */
    uint8_t reads, writes;
};
/* Visitor over the merged stream: on_access for every access record, on_bb for
 * every BB entry, on_thread_end once a thread has no more records (after its
 * last access or BB entry was visited; threads without records too), so its
 * per-thread state can go. Any may be NULL. Returns 0 or -1 (err filled). */
typedef int (*replay_access_fn)(void *ctx, const struct replay_access *a, struct pes_error *err);
typedef void (*replay_bb_fn)(void *ctx, uint32_t thread, const struct pes_bb *bb);
typedef int (*replay_thread_end_fn)(void *ctx, uint32_t thread, struct pes_error *err);
int replay_input_scan(struct replay_input *in, replay_access_fn on_access, replay_bb_fn on_bb,
                      replay_thread_end_fn on_thread_end, void *ctx, struct pes_error *err);
/* The merged stream as a re-readable sequential source for PPT mimicking. */
void replay_input_mimic_source(struct replay_input *in, struct pes_mimic_source *src);

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

/* Counts, ops and (for recorded threads) PRD/CRD profiles in one pass. */
int replay_analyze_recorded(struct replay_input *in, const struct replay_options *o,
                            struct replay_result *res, struct pes_error *err);
/* PPT-Multicore mimicking for every --cores count. */
int replay_analyze_mimic(struct replay_input *in, const struct replay_options *o,
                         struct replay_result *res, struct pes_error *err);
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
