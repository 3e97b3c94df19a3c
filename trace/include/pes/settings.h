/*
 * pes/settings.h — the collector's settings, each declared once.
 *
 * A setting travels: pes-collect --FLAG -> PES_* variable -> the runtime ->
 * "key=value" line of the trace header -> replay. One row of pes_settings[]
 * (settings.c) names every form of it, its type, bounds, default, help, and
 * what a trace written before the key existed means. From the rows:
 *   - pes-collect builds its parsing, --help and environment;
 *   - the runtime reads the environment (pes_settings_from_env) and writes
 *     the header (pes_settings_to_header);
 *   - replay reads the header once per trace (pes_settings_from_header).
 * Adding a setting: a field below, a row in settings.c; docs/collector.md
 * ("Settings") walks through one.
 */
#ifndef PES_SETTINGS_H
#define PES_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "pes/trace.h"

/* Values of the CHOICE settings: indices into their row's choices. */
enum pes_collect_mode {
    PES_MODE_FULL,         /* no sampled trace */
    PES_MODE_SAMPLES,      /* uses only: PES_EV_SAMPLE */
    PES_MODE_REUSE,        /* ReuseTracker intra-thread (Alg. 2, 3) */
    PES_MODE_REUSE_SHARED, /* ReuseTracker shared cache (§6.4.2) */
    PES_MODE_COMM,         /* ComDetective (Alg. 1) */
};
/* region of interest: the program has no markers, they were obeyed, or ignored (--no-roi) */
enum pes_collect_roi { PES_ROI_NONE, PES_ROI_MARKERS, PES_ROI_IGNORED };
/* reuse modes: does every watch that ends undecided leave a WATCH_EXPIRED event */
enum pes_collect_censoring { PES_CENSORING_NONE, PES_CENSORING_WATCH_EXPIRED };
/* sampled traces: every heap block's events, or only those a sample needs */
enum pes_collect_heap_events { PES_HEAP_EVENTS_ALL, PES_HEAP_EVENTS_USED };
/* how a watchpoint is re-armed: PERF_EVENT_IOC_MODIFY_ATTRIBUTES where the
 * kernel takes it, or closed and reopened at every arm (the path of kernels
 * that refuse; tests force it) */
enum pes_collect_watch_rearm { PES_WATCH_REARM_MODIFY, PES_WATCH_REARM_REOPEN };

/* Watchpoints per thread at most (x86 debug registers). */
#define PES_SETTINGS_MAX_DEBUG_REGISTERS 4u
/* A NAME setting's room, its terminating NUL included. */
#define PES_SETTING_NAME_MAX 16
/* --writers unset: one encoder thread per CPU of the affinity mask, at most this. */
#define PES_SETTINGS_AUTO_WRITERS_MAX 8

/* Every setting's value; the field names are the rows' names. Strings point
 * into the environment (or wherever the caller's text lives). */
struct pes_collect_settings {
    /* where the traces go (environment only) */
    const char *full_output;   /* NULL = no full trace */
    const char *sample_output; /* NULL = no sampling */
    int overwrite;             /* replace an existing output file */
    const char *command;       /* command line for the header; NULL = /proc/self/cmdline */
    int quiet;                 /* no runtime warnings */
    /* what is recorded */
    int mode;                           /* enum pes_collect_mode; FULL without PES_SAMPLE_OUTPUT */
    char backend[PES_SETTING_NAME_MAX]; /* a backend of the collector's table (soft, pebs, ...) */
    const char *pmu_sysfs;              /* tests: root of a fake sysfs (NULL = /sys) */
    uint64_t period_load;               /* 0 = loads are not sampled */
    uint64_t period_store;              /* 0 = stores are not sampled */
    /* how periods vary, as the backend says (header only): soft ±N/8 drawn
     * per period "1/8", PEBS none "0", IBS its hardware's low bits "hardware" */
    char period_jitter[PES_SETTING_NAME_MAX];
    int spatial;              /* granularity: 0 temporal, 1 spatial (cache line) */
    uint32_t sockets;         /* simulated sockets (thread index % sockets), 0 = real topology */
    uint32_t debug_registers; /* 1..4 */
    int watch_rearm;          /* enum pes_collect_watch_rearm (environment only) */
    uint32_t watch_bytes;     /* bytes one debug register watches (header only) */
    uint32_t line_size;       /* cache line of the watch scaling (header only) */
    int censoring;            /* enum pes_collect_censoring (header only) */
    uint32_t time_interval;   /* records between time marks */
    uint32_t buffer_records;  /* records per thread buffer */
    uint64_t seed;            /* 0 = from time and pid */
    int zstd_level;
    uint32_t writers;        /* encoder threads; 0 = from the affinity mask */
    uint32_t abi_version;    /* PES_RT_ABI_VERSION of the runtime (header only) */
    int roi;                 /* obey pes/roi.h markers */
    int roi_state;           /* enum pes_collect_roi (header only) */
    int heap;                /* record heap allocations */
    int stacks;              /* sampled: each sample's short call stack (pes_event.stack) */
    uint64_t skip;           /* full trace: accesses not recorded at the start of each thread */
    uint64_t max_accesses;   /* full trace: accesses recorded per thread at most, 0 = all */
    int heap_events;         /* enum pes_collect_heap_events (header only) */
    uint64_t samples_target; /* --samples N: adaptive period, 0 = fixed period */
    uint32_t period_levels;  /* adaptive: first period = cap >> period_levels (header only) */
    int descriptors;         /* full trace: loops may write loop descriptors (pes/trace.h) */
};

enum pes_setting_type {
    PES_SETTING_U32,    /* uint32_t: decimal digits only, min..max */
    PES_SETTING_U64,    /* uint64_t: decimal digits only, min..max */
    PES_SETTING_INT,    /* int: decimal digits only, min..max */
    PES_SETTING_BOOL,   /* int: 0 or 1; a flag is a switch that sets !def */
    PES_SETTING_CHOICE, /* int: index of choices[]; flags and variables take min..max */
    PES_SETTING_PATH,   /* const char *: a file path, not empty */
    PES_SETTING_STRING, /* const char *: empty = unset (NULL) */
    PES_SETTING_NAME,   /* char[PES_SETTING_NAME_MAX]: a word the collector's own tables
                             check (a backend); empty = the default */
};

/* pes_setting.flags */
enum {
    PES_SETTING_SAMPLING = 1, /* read only with PES_SAMPLE_OUTPUT; pes-collect: only with --mode */
    PES_SETTING_IN_FULL = 2,  /* the key is in full traces' headers */
    PES_SETTING_IN_SAMPLED = 4,     /* the key is in sampled traces' headers */
    PES_SETTING_UNLESS_DEFAULT = 8, /* written only when the value is not the default */
    PES_SETTING_ADAPTIVE = 16,      /* written only with samples_target */
    PES_SETTING_TEST_HOOK = 32,     /* a variable for tests only: no flag, no key; pes-collect
                                        passes it through to the program */
};

/* One setting. NULL flag, env or key: it has no such form (a header-only
 * fact the runtime states, a variable pes-collect sets itself, ...). */
struct pes_setting {
    const char *name; /* its field in struct pes_collect_settings */
    const char *flag; /* pes-collect --FLAG */
    char short_flag;  /* -q */
    const char *arg;  /* its value in --help ("N"); NULL: a switch */
    const char *env;  /* PES_* variable */
    const char *key;  /* trace header key */
    enum pes_setting_type type;
    uint64_t min, max;          /* numbers; CHOICE: the indices flags and variables take */
    uint64_t def;               /* the collector's default (strings: NULL) */
    const char *def_name;       /* NAME: the default, and the value of an absent key */
    uint64_t absent;            /* a header without the key: what its collector did */
    const char *legacy_key;     /* read when the key is absent (an older name) */
    const char *const *choices; /* CHOICE: NULL-terminated names */
    size_t field;               /* offsetof(struct pes_collect_settings, name) */
    unsigned flags;
    const char *help; /* --help; "{default}", "{min}", "{max}" are replaced */
};

extern const struct pes_setting pes_settings[];
extern const size_t pes_settings_count;

/* The row of field `name`, NULL if none. */
const struct pes_setting *pes_settings_find(const char *name);

/* Every setting at its default (mode: FULL, no sampled output). */
void pes_settings_defaults(struct pes_collect_settings *s);

/* Where a value came from: names it in error messages. */
enum pes_setting_source {
    PES_SETTING_FROM_FLAG,   /* "--zstd-level: expected an integer from 1 to 22, got '23'" */
    PES_SETTING_FROM_ENV,    /* "PES_ZSTD_LEVEL=23: expected an integer from 1 to 22" */
    PES_SETTING_FROM_HEADER, /* "header config: zstd_level=23: expected an integer from 1 to 22" */
};

/* Parses `text` as row's value into its field of *s. A flag, variable or key
 * the row does not have is an argument error. Returns 0, or -1 with err
 * naming the flag / variable / key, the value and what was expected. */
int pes_setting_parse(const struct pes_setting *row, enum pes_setting_source from, const char *text,
                      struct pes_collect_settings *s, struct pes_error *err);
/* The row's value in *s as the variable and the header write it ("1024",
 * "reuse", "0"; a NULL string is ""). Returns its length as snprintf does
 * (n bytes or more: buf holds what fit; buf may be NULL when n is 0), or -1
 * for a choice out of its row's range. */
int pes_setting_format(const struct pes_setting *row, const struct pes_collect_settings *s,
                       char *buf, size_t n);
/* What a value of row must be: "a positive integer", "an integer from 16 to
 * 67108864", "0 or 1", "temporal or spatial", "a file path", "a name". */
void pes_setting_expected(const struct pes_setting *row, char *buf, size_t n);
/* text (NULL: the row's help) with "{default}", "{min}", "{max}" replaced by the row's. */
void pes_setting_help(const struct pes_setting *row, const char *text, char *buf, size_t n);

/* Looks up one variable (getenv in the runtime, a table in tests). */
typedef const char *(*pes_getenv_fn)(const char *name, void *ctx);

/* Fills *s from the environment: defaults, then every row's variable that is
 * set. The sampling rows only when PES_SAMPLE_OUTPUT is set (mode is FULL
 * without it), and then not both periods 0. Returns 0 or -1 (err: one line,
 * "PES_TIME_INTERVAL=abc: expected a positive integer"). */
int pes_settings_from_env(struct pes_collect_settings *s, pes_getenv_fn get, void *ctx,
                          struct pes_error *err);

/* The header config of a trace of kind s->mode (FULL: a full trace, else
 * sampled): "key=value\n" for each row with a key in that kind's header, in
 * table order, as its flags say. Returns the length, or -1 if it does not fit
 * in n bytes (buf then holds what fit). */
int pes_settings_to_header(const struct pes_collect_settings *s, char *buf, size_t n);

/* Reads a header config (NULL or "": nothing). A key that is absent takes its
 * row's `absent` value (or its legacy key's value), an unknown key or a line
 * without '=' is ignored, the first of a repeated key counts. A known key with
 * a bad value is an error ("header config: period_load=x: expected ...").
 * Rows without a key keep their defaults. Returns 0 or -1. */
int pes_settings_from_header(struct pes_collect_settings *s, const char *config,
                             struct pes_error *err);

#endif /* PES_SETTINGS_H */
