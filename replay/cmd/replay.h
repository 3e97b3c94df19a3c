/*
 * replay.h — the pes-replay command's options.
 *
 * Data flows one way (docs/replay.md, "Writing an analysis"):
 *   options → a source (stream/: trace merge, text trace, mimicked cores)
 *           → batches → the registry's analyses (analyses/analysis.h)
 *           → the report tree (report/report.h) → one writer (text, JSON, CSV).
 * Analyses never print; report writers never compute.
 */
#ifndef PES_REPLAY_REPLAY_H
#define PES_REPLAY_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "mesi.h"
#include "mimic.h"
#include "pes/model.h"
#include "pes/trace.h"
#include "profiles.h"

#define REPLAY_MAX_CONFIGS    16
#define REPLAY_MAX_JOBS       256
#define REPLAY_MPI_WINDOW     (UINT64_C(8) << 20) /* --mpi-window default */
#define REPLAY_MPI_WINDOW_MAX (UINT64_C(1) << 40)

enum replay_format { REPLAY_TEXT, REPLAY_JSON, REPLAY_CSV };
/* --parts: how --jobs N >= 2 divides a replay (docs/replay.md, "Replay threads") */
enum replay_parts { REPLAY_PARTS_AUTO, REPLAY_PARTS_YES, REPLAY_PARTS_NO };
#define REPLAY_PARTS_MAX_STREAMS 256 /* --parts auto: traces of at most this many threads */

struct replay_options {
    const char *trace; /* with --compare: the sampled trace */
    const char *full;  /* --compare: the full trace */
    int compare;       /* --compare SAMPLED FULL (accuracy.c) */
    int diff;          /* --diff A B: trace = A, full = B (traces or JSON reports; diff.h) */
    int diff_all;      /* --diff-all: the text diff ends with every changed value by path */
    const char *html;  /* --html FILE: a self-contained HTML report besides (html.c) */
    const char
        *csv_dir; /* --csv-dir DIR: every table of the report, one CSV file each (tables.h) */
    const char *machine;                /* preset name, "host" or a path */
    const char *cache_spec;             /* --cache override */
    uint32_t cores[REPLAY_MAX_CONFIGS]; /* --cores list; n_cores == 0: recorded threads */
    uint32_t n_cores;
    uint32_t sockets; /* --sockets: recorded threads split over N shared caches */
    uint32_t line;    /* --line bytes; 0 = the machine's L1 line */
    enum pes_interleave interleave;
    uint64_t seed;
    uint64_t chunk;        /* --chunk: schedule(static, chunk) when mimicking */
    int per_region;        /* --per-region: split BB instances per parallel-region instance */
    uint64_t page_size;    /* --page-map: 0 = virtual indexing, else random frames of this size */
    const char *comm_csv;  /* --comm-csv FILE */
    const char *sites_csv; /* --sites-csv FILE */
    enum replay_format format;
    int input_format;   /* --input-format: REPLAY_INPUT_AUTO, _PES, or an enum pes_text_format */
    const char *output; /* -o FILE; NULL = stdout */
    int show_machine;
    struct pes_knobs knobs; /* what the analyses read: --simulate, --top, --sort, --jobs */
    uint64_t
        mpi_window; /* --mpi-window: accesses per rank's window (pes-replay-mpi); 0 = default */
    int no_objects; /* --no-objects: the batches' object columns stay NULL */
    uint32_t callpath_depth; /* --callpath-depth: call sites per call path (callpath.h) */
    int stats;               /* --stats: CPU per stage and thread on stderr (cpu_account.h) */
    int parts;               /* --parts: enum replay_parts */
    const char *full_only;   /* first flag given that needs a full trace alone ("simulate"):
                                     refused for a sampled trace and --compare */
};

/* Parses argv; on a usage error prints one line naming the flag and returns -1;
 * returns 1 when --help/--version was handled (exit 0). */
int replay_parse_options(int argc, char **argv, struct replay_options *o);

#include "input.h"

#endif
