/*
 * options.c — pes-replay command line (perf-like long options; errors name the flag).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callpath.h"
#include "replay.h"
#include "report_util.h"

static const char usage_head[] =
    "Usage: pes-replay TRACE [options]\n"
    "   or: pes-replay --compare SAMPLED FULL [options]\n"
    "   or: pes-replay --diff A B [options]   (A, B: traces or JSON reports)\n"
    "\n"
    "Replays a pes trace (or another tool's address trace: see --input-format)\n"
    "and reports reuse profiles, predicted cache hit rates and runtime, and\n"
    "optionally a cache + MESI coherence simulation.\n"
    "\n";

static int bad(const char *flag, const char *what, const char *value)
{
    replay_message("%s: expected %s, got '%s'", flag, what, value);
    return -1;
}

/* ------------------------------------------------------------ output files
 * A report never replaces what it reads: an output that is the same file as an
 * input trace (by st_dev/st_ino, so links, "./t" and /dev/stdout redirected to
 * it count) is refused before anything is read, as is one file named by two
 * output options, or a directory or socket. Character devices and fifos are
 * written as streams (-o /dev/stdout, /dev/null, a shell's >(...)): nothing
 * in them is replaced. */

struct out_file {
    const char *flag, *name;
    int exists;
    struct stat st;
    char *canon; /* realpath of the parent + "/" + name: new files spelled differently */
};

static char *canonical_name(const char *name)
{
    char *copy = strdup(name), *out = NULL;
    if (!copy)
        return NULL;
    char *slash = strrchr(copy, '/');
    const char *dir = ".", *base = copy;
    if (slash) {
        *slash = '\0';
        dir = slash == copy ? "/" : copy;
        base = slash + 1;
    }
    char *rdir = realpath(dir, NULL);
    if (rdir && (out = malloc(strlen(rdir) + strlen(base) + 2)))
        sprintf(out, "%s/%s", rdir, base);
    free(rdir);
    free(copy);
    return out;
}

static int is_stream(const struct out_file *f)
{
    return f->exists && (S_ISCHR(f->st.st_mode) || S_ISFIFO(f->st.st_mode));
}

/* Whether a file (dir = 0) or a directory (dir = 1) can be written or made
 * at name; said in one line naming the flag and the path if not. Checked
 * before the replay, which may take long, not after it. */
static int check_writable(const char *flag, const char *name, int dir)
{
    struct stat st;
    if (stat(name, &st) == 0) {
        if (dir && !S_ISDIR(st.st_mode)) {
            replay_message("%s %s: exists and is not a directory", flag, name);
            return -1;
        }
        if (access(name, W_OK) != 0) {
            replay_message("%s %s: cannot be written: %s", flag, name, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT) {
        replay_message("%s %s: %s", flag, name, strerror(errno));
        return -1;
    }
    /* a new one: its directory must be there and writable */
    char *parent = strdup(name);
    if (!parent)
        return 0; /* the write says it */
    char *slash = strrchr(parent, '/');
    while (slash && slash > parent && slash[1] == '\0') { /* "dir/" names dir */
        *slash = '\0';
        slash = strrchr(parent, '/');
    }
    const char *in = !slash ? "." : slash == parent ? "/" : (*slash = '\0', parent);
    int rc = 0;
    if (stat(in, &st) != 0 || !S_ISDIR(st.st_mode)) {
        replay_message("%s %s: cannot be created: %s %s", flag, name, in,
                       errno == ENOENT || errno == ENOTDIR ? "is no directory" : strerror(errno));
        rc = -1;
    } else if (access(in, W_OK | X_OK) != 0) {
        replay_message("%s %s: cannot be created in %s: %s", flag, name, in, strerror(errno));
        rc = -1;
    }
    free(parent);
    return rc;
}

static int check_outputs(const struct replay_options *o)
{
    struct out_file out[3] = {{.flag = "-o", .name = o->output},
                              {.flag = "--comm-csv", .name = o->comm_csv},
                              {.flag = "--sites-csv", .name = o->sites_csv}};
    /* a --machine that is a file (pes_machine_load's rule) is read too */
    size_t ml = strlen(o->machine);
    int machine_file =
        strchr(o->machine, '/') || (ml > 8 && strcmp(o->machine + ml - 8, ".machine") == 0);
    const char *inputs[3] = {o->trace, o->full, machine_file ? o->machine : NULL};
    const char *input_kind[3] = {"trace", "trace", "machine file"};
    int rc = 0;
    for (int i = 0; i < 3; i++)
        if (out[i].name) {
            out[i].exists = stat(out[i].name, &out[i].st) == 0;
            out[i].canon = canonical_name(out[i].name);
        }
    for (int i = 0; i < 3 && !rc; i++) {
        struct out_file *f = &out[i];
        if (!f->name || !f->exists)
            continue;
        if (S_ISDIR(f->st.st_mode) || S_ISSOCK(f->st.st_mode)) {
            replay_message("%s %s: is a %s, not a file to write", f->flag, f->name,
                           S_ISDIR(f->st.st_mode) ? "directory" : "socket");
            rc = -1;
        }
        for (int k = 0; k < 3 && !rc; k++) {
            struct stat in;
            if (inputs[k] && stat(inputs[k], &in) == 0 && in.st_dev == f->st.st_dev &&
                in.st_ino == f->st.st_ino) {
                replay_message("%s %s: is the input %s %s; refusing to overwrite it", f->flag,
                               f->name, input_kind[k], inputs[k]);
                rc = -1;
            }
        }
    }
    for (int i = 0; i < 3 && !rc; i++)
        for (int k = i + 1; k < 3 && !rc; k++) {
            const struct out_file *a = &out[i], *b = &out[k];
            if (!a->name || !b->name || is_stream(a))
                continue;
            if ((a->exists && b->exists && a->st.st_dev == b->st.st_dev &&
                 a->st.st_ino == b->st.st_ino) ||
                (a->canon && b->canon && strcmp(a->canon, b->canon) == 0)) {
                replay_message("%s %s and %s %s: the same file; the second would replace the first",
                               a->flag, a->name, b->flag, b->name);
                rc = -1;
            }
        }
    for (int i = 0; i < 3; i++)
        free(out[i].canon);
    for (int i = 0; i < 3 && !rc; i++)
        if (out[i].name && !is_stream(&out[i]))
            rc = check_writable(out[i].flag, out[i].name, 0);
    if (!rc && o->html)
        rc = check_writable("--html", o->html, 0);
    if (!rc && o->csv_dir)
        rc = check_writable("--csv-dir", o->csv_dir, 1);
    return rc;
}

/* ------------------------------------------------------------ the flags
 * One row per flag: its name, value, help (lines after the first are
 * indented under it), how its value is parsed and checked, and where it goes
 * (a field of struct replay_options, or of the analyses' knobs in it). Usage
 * errors say "FLAG: expected WHAT, got 'VALUE'". */

enum opt_kind {
    OPT_SWITCH, /* int field = 1 */
    OPT_STRING, /* const char * field = the value */
    OPT_U32,    /* uint32_t field, decimal in [min, max] */
    OPT_U64,    /* uint64_t field, decimal in [min, max] */
    OPT_CHOICE, /* int field = values[i] for the value names[i] */
    OPT_NAME,   /* const char * field = the value, one of names[] */
    OPT_FN,     /* parse(value, options): 0 or -1 */
    OPT_HELP,
    OPT_VERSION,
};

/* Flags that only make sense for a full trace replayed alone, and flags that
 * only make sense with --cores. */
enum { FULL_ONLY = 1, MIMIC_ONLY = 2, SAMPLE_ONLY = 4 };

struct opt_row {
    const char *name;
    char short_name;
    const char *arg; /* value name in --help; NULL: a switch */
    const char *help;
    enum opt_kind kind;
    size_t field; /* offsetof(struct replay_options, ...) */
    uint64_t min, max;
    const char *const *names; /* OPT_CHOICE, OPT_NAME: NULL-terminated */
    const int *values;
    int (*parse)(const char *value, struct replay_options *o);
    const char *expected; /* what a bad value should have been */
    unsigned flags;
};

static int parse_cores(const char *s, struct replay_options *o)
{
    char buf[256];
    if (strstr(s, ",,") || s[0] == ',' || (*s && s[strlen(s) - 1] == ',')) {
        bad("--cores", "a comma-separated list of core counts 1..64, without empty elements", s);
        return -2;
    }
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    o->n_cores = 0;
    /* split by hand: strtok would skip the empty element of "1,,2" (a typo, not a list of two) */
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        uint64_t v;
        if (pes_parse_u64(tok, 10, &v) < 0 || v == 0 || v > PES_SIM_MAX_CORES)
            return -1;
        if (o->n_cores == REPLAY_MAX_CONFIGS)
            return -1;
        o->cores[o->n_cores++] = (uint32_t)v;
    }
    return o->n_cores ? 0 : -1;
}

static int parse_line(const char *s, struct replay_options *o)
{
    uint64_t v;
    if (pes_parse_u64(s, 10, &v) < 0 || v == 0 || (v & (v - 1)) || v > 4096)
        return -1;
    o->line = (uint32_t)v;
    return 0;
}

static int parse_rate(const char *s, struct replay_options *o)
{
    char *end;
    errno = 0;
    double r = strtod(s, &end);
    if (errno || end == s || *end || !(r > 0 && r <= 1))
        return -1;
    o->knobs.sample_rate = r;
    return 0;
}

static int parse_page_map(const char *s, struct replay_options *o)
{
    if (strcmp(s, "random") == 0)
        o->page_size = 4096;
    else if (strcmp(s, "virtual") == 0)
        o->page_size = 0;
    else
        return -1;
    return 0;
}

static int parse_input_format(const char *s, struct replay_options *o)
{
    /* "auto" is PES_TEXT_FORMAT_AUTO, REPLAY_INPUT_AUTO too */
    int f = strcmp(s, "pes") == 0 ? REPLAY_INPUT_PES : pes_text_format_parse(s);
    if (f < 0)
        return -1;
    o->input_format = f;
    return 0;
}

static const char *const interleave_names[] = {"round-robin", "rr", "uniform", NULL};
static const int interleave_values[] = {PES_INTERLEAVE_ROUND_ROBIN, PES_INTERLEAVE_ROUND_ROBIN,
                                        PES_INTERLEAVE_UNIFORM};
static const char *const runtime_model_names[] = {"ppt", "overlap", NULL};
static const int runtime_model_values[] = {PES_RUNTIME_PPT, PES_RUNTIME_OVERLAP};
static const char *const format_names[] = {"text", "json", "csv", NULL};
static const char *const parts_names[] = {"auto", "yes", "no", NULL};
static const int parts_values[] = {REPLAY_PARTS_AUTO, REPLAY_PARTS_YES, REPLAY_PARTS_NO};
static const int format_values[] = {REPLAY_TEXT, REPLAY_JSON, REPLAY_CSV};
static const char *const sort_names[] = {
    "invalidations", "coherence", "false-sharing", "true-sharing", "misses", "accesses", NULL};

static const char *const by_names[] = {"line", "site", "function", "object", "callpath", NULL};
static const char *const estimator_names[] = {"auto", "decided", "censored", NULL};
static const char *const stack_model_names[] = {"phased", "shen", NULL};
static const char *const interval_bias_names[] = {"calibrated", "none", NULL};
static const char *const comm_estimator_names[] = {"interleave", "comdetective", NULL};

#define FIELD(f) offsetof(struct replay_options, f)
static const struct opt_row rows[] = {
    {.name = "machine",
     .arg = "NAME",
     .help = "machine preset (haswell, broadwell, zen2), 'host', 'sysfs',\nor a .machine file "
             "(default: host). 'host' is this host\n"
             "as pes-calibrate measured it if it did, else 'sysfs': cache\nsizes from sysfs with "
             "generic, unvalidated latencies and clock",
     .kind = OPT_STRING,
     .field = FIELD(machine)},
    {.name = "cache",
     .arg = "SPEC",
     .help = "override cache levels, e.g. L1=32K:8,L2=256K:8,L3=20M:20",
     .kind = OPT_STRING,
     .field = FIELD(cache_spec)},
    {.name = "show-machine",
     .help = "print the machine description in use and exit",
     .kind = OPT_SWITCH,
     .field = FIELD(show_machine)},
    {.name = "cores",
     .arg = "LIST",
     .help = "mimic N cores from a sequential run (PPT-Multicore), for\neach N in a "
             "comma-separated list, "
             "e.g. 1,2,4,8,16",
     .kind = OPT_FN,
     .parse = parse_cores,
     .expected = "a comma-separated list of core counts 1..64",
     .flags = FULL_ONLY},
    {.name = "runtime-model",
     .arg = "MODEL",
     .help = "overlap (default) or ppt: how the predicted runtime is\ncomposed (docs/model.md §3)",
     .kind = OPT_CHOICE,
     .field = FIELD(knobs.runtime_model),
     .names = runtime_model_names,
     .values = runtime_model_values,
     .expected = "overlap or ppt",
     .flags = FULL_ONLY},
    {.name = "interleave",
     .arg = "KIND",
     .help = "round-robin (default) or uniform, for --cores",
     .kind = OPT_CHOICE,
     .field = FIELD(interleave),
     .names = interleave_names,
     .values = interleave_values,
     .expected = "round-robin or uniform",
     .flags = FULL_ONLY | MIMIC_ONLY},
    {.name = "seed",
     .arg = "N",
     .help = "seed of the uniform interleaving (default 1)",
     .kind = OPT_U64,
     .field = FIELD(seed),
     .min = 0,
     .max = UINT64_MAX,
     .expected = "an unsigned integer",
     .flags = FULL_ONLY | MIMIC_ONLY},
    {.name = "chunk",
     .arg = "N",
     .help = "distribute BB instances like schedule(static, N)",
     .kind = OPT_U64,
     .field = FIELD(chunk),
     .min = 0,
     .max = UINT64_MAX,
     .expected = "an unsigned integer",
     .flags = FULL_ONLY | MIMIC_ONLY},
    {.name = "per-region",
     .help = "split BB instances per parallel-region instance, as\nOpenMP schedules each loop "
             "(default: over the whole run)",
     .kind = OPT_SWITCH,
     .field = FIELD(per_region),
     .flags = FULL_ONLY | MIMIC_ONLY},
    {.name = "sockets",
     .arg = "N",
     .help = "recorded threads share N last-level caches (default 1)",
     .kind = OPT_U32,
     .field = FIELD(sockets),
     .min = 1,
     .max = 64,
     .expected = "an integer 1..64"},
    {.name = "line",
     .arg = "BYTES",
     .help = "reuse granularity (default: the machine's L1 line)",
     .kind = OPT_FN,
     .parse = parse_line,
     .expected = "a power of two up to 4096",
     .flags = FULL_ONLY},
    {.name = "simulate",
     .help = "cache + MESI simulation, per-site sharing report",
     .kind = OPT_SWITCH,
     .field = FIELD(knobs.simulate),
     .flags = FULL_ONLY},
    {.name = "page-map",
     .arg = "KIND",
     .help = "random (default): L2/L3 sets indexed as physically\nindexed caches see them, with "
             "random 4 KiB page frames;\nvirtual: sets from virtual addresses",
     .kind = OPT_FN,
     .parse = parse_page_map,
     .expected = "random or virtual",
     .flags = FULL_ONLY},
    {.name = "top",
     .arg = "N",
     .help =
         "rows of the ranked tables and cache lines of the\ncache-line table to list (default 10)",
     .kind = OPT_U32,
     .field = FIELD(knobs.top),
     .min = 0,
     .max = 100000,
     .expected = "an integer 0..100000"},
    {.name = "sort",
     .arg = "METRIC",
     .help = "invalidations (default), coherence, false-sharing,\ntrue-sharing, misses, accesses",
     .kind = OPT_NAME,
     .field = FIELD(knobs.sort),
     .names = sort_names,
     .expected = "invalidations, coherence, false-sharing, true-sharing, misses or accesses",
     .flags = FULL_ONLY},
    {.name = "by",
     .arg = "KEY",
     .help = "rows of the ranked tables: line (default, a source line's\nsites merged), site, "
             "function, "
             "object (data objects), or callpath (a line\nper call path reaching it)",
     .kind = OPT_NAME,
     .field = FIELD(knobs.by),
     .names = by_names,
     .expected = "line, site, function, object or callpath"},
    {.name = "callpath-depth",
     .arg = "N",
     .help = "a trace with call edges: the innermost N calls of each\naccess's call path "
             "(default 8)",
     .kind = OPT_U32,
     .field = FIELD(callpath_depth),
     .min = 1,
     .max = PES_CALLPATH_MAX_DEPTH,
     .expected = "an integer 1..256",
     .flags = FULL_ONLY},
    {.name = "reuse-estimator",
     .arg = "NAME",
     .help = "sampled traces: censored (Kaplan-Meier over decided and\nreplaced or unfinished "
             "watches), decided "
             "(decided\noutcomes weighted by reservoir offers), or auto\n(default: censored when "
             "the trace "
             "records censored\nwatches)",
     .kind = OPT_NAME,
     .field = FIELD(knobs.reuse_estimator),
     .names = estimator_names,
     .expected = "auto, decided or censored"},
    {.name = "stack-model",
     .arg = "NAME",
     .help = "sampled traces: how time distances become stack\ndistances: phased (default; Shen's "
             "footprint per window\n"
             "of the thread's accesses) or shen (one model per\nthread, Shen et al. POPL'07)",
     .kind = OPT_NAME,
     .field = FIELD(knobs.stack_model),
     .names = stack_model_names,
     .expected = "phased or shen"},
    {.name = "interval-bias",
     .arg = "NAME",
     .help = "sampled traces: calibrated (default: each 90 % interval\nadds its family's model "
             "error, measured on the\n"
             "tuning half of bench/corpus) or none (Wilson's\nsampling error alone)",
     .kind = OPT_NAME,
     .field = FIELD(knobs.interval_bias),
     .names = interval_bias_names,
     .expected = "calibrated or none"},
    {.name = "comm-estimator",
     .arg = "NAME",
     .help = "sampled comm traces: interleave (default: owner changes\nof the interleaving rebuilt "
             "from the samples' times)\n"
             "or comdetective (every detection is `period` transfers,\nthe paper's scaling)",
     .kind = OPT_NAME,
     .field = FIELD(knobs.comm_estimator),
     .names = comm_estimator_names,
     .expected = "interleave or comdetective"},
    {.name = "annotate",
     .arg = "FILE|all",
     .help = "print the source of FILE (or of every file) with each\nline's accesses, misses and "
             "invalidations in the margin",
     .kind = OPT_STRING,
     .field = FIELD(knobs.annotate),
     .flags = FULL_ONLY},
    {.name = "sample-rate",
     .arg = "R",
     .help = "approximate reuse profiles from a share R of the lines\n(SHARDS, e.g. 0.01): for "
             "traces too long for exact ones",
     .kind = OPT_FN,
     .parse = parse_rate,
     .expected = "a rate in (0, 1], e.g. 0.01",
     .flags = FULL_ONLY},
    {.name = "sample-seed",
     .arg = "N",
     .help = "which lines --sample-rate keeps (default 1)",
     .kind = OPT_U64,
     .field = FIELD(knobs.sample_seed),
     .min = 0,
     .max = UINT64_MAX,
     .expected = "an unsigned integer",
     .flags = FULL_ONLY | SAMPLE_ONLY},
    {.name = "sample-check",
     .help = "with --sample-rate: exact profiles too, and the error of\nthe estimated miss-ratio "
             "curves",
     .kind = OPT_SWITCH,
     .field = FIELD(knobs.sample_check),
     .flags = FULL_ONLY | SAMPLE_ONLY},
    {.name = "comm-csv",
     .arg = "FILE",
     .help = "write the thread communication matrix (CSV)",
     .kind = OPT_STRING,
     .field = FIELD(comm_csv),
     .flags = FULL_ONLY},
    {.name = "sites-csv",
     .arg = "FILE",
     .help = "write every site's simulation counts (CSV)",
     .kind = OPT_STRING,
     .field = FIELD(sites_csv),
     .flags = FULL_ONLY},
    {.name = "input-format",
     .arg = "FMT",
     .help = "auto (default: a pes trace, else detected), pes, addr\n(one hex address per line, "
             "as PARDA and libCacheSim),\nlackey (valgrind --tool=lackey --trace-mem=yes), "
             "or\nbinary64 (little-endian "
             "64-bit addresses)",
     .kind = OPT_FN,
     .parse = parse_input_format,
     .expected = "auto, pes, addr, lackey or binary64"},
    {.name = "no-objects",
     .help = "do not attribute accesses to data objects (globals,\nheap allocation sites, stacks): "
             "no DWARF reading and\nno allocation tracking",
     .kind = OPT_SWITCH,
     .field = FIELD(no_objects)},
    {.name = "jobs",
     .arg = "N",
     .help = "replay threads (default: the CPUs this process may run\non); the same results for "
             "every N",
     .kind = OPT_U32,
     .field = FIELD(knobs.jobs),
     .min = 1,
     .max = REPLAY_MAX_JOBS,
     .expected = "an integer 1..256"},
    {.name = "parts",
     .arg = "MODE",
     .help = "with --jobs N >= 2: yes (or auto, the default) reads the\n"
             "trace in N time parts on N threads where the report allows\n"
             "it (as pes-replay-mpi's ranks); no runs the stages on N\n"
             "workers; the same report either way",
     .kind = OPT_CHOICE,
     .field = FIELD(parts),
     .names = parts_names,
     .values = parts_values,
     .expected = "auto, yes or no"},
    {.name = "stats",
     .help = "print CPU seconds per stage and thread on stderr, the\nserial part and Amdahl's "
             "bound (docs/replay.md)",
     .kind = OPT_SWITCH,
     .field = FIELD(stats)},
    {.name = "mpi-window",
     .arg = "N",
     .help =
         "pes-replay-mpi: accesses per window; windows go to the\nranks in turn (default 8388608)",
     .kind = OPT_U64,
     .field = FIELD(mpi_window),
     .min = 1,
     .max = REPLAY_MPI_WINDOW_MAX,
     .expected = "an integer 1..1099511627776"},

    {.name = "compare",
     .help = "accuracy of a sampled trace against a full trace of the\nsame execution (pes-collect "
             "--mode M --full); a sampled\nTRACE alone prints its sampled analyses",
     .kind = OPT_SWITCH,
     .field = FIELD(compare)},
    {.name = "diff",
     .help = "compare two runs: A and B are traces (replayed with the\nsame options) or pes-replay "
             "JSON reports; "
             "every table's\nrows matched by key, as A, B, delta and relative change",
     .kind = OPT_SWITCH,
     .field = FIELD(diff)},
    {.name = "diff-all",
     .help = "with --diff, text: end with every changed value of\nevery table by path",
     .kind = OPT_SWITCH,
     .field = FIELD(diff_all)},
    {.name = "csv-dir",
     .arg = "DIR",
     .help = "also write every table of the report as DIR/TABLE.csv\n(units in the header row; "
             "docs/replay.md)",
     .kind = OPT_STRING,
     .field = FIELD(csv_dir)},
    {.name = "html",
     .arg = "FILE",
     .help = "also write the report as one self-contained HTML page\n(charts, tables, the JSON; "
             "docs/report.md)",
     .kind = OPT_STRING,
     .field = FIELD(html)},
    {.name = "format",
     .arg = "FMT",
     .help = "text (default), json, csv",
     .kind = OPT_CHOICE,
     .field = FIELD(format),
     .names = format_names,
     .values = format_values,
     .expected = "text, json or csv"},
    {.name = "output",
     .short_name = 'o',
     .arg = "FILE",
     .help = "write the report to FILE instead of stdout",
     .kind = OPT_STRING,
     .field = FIELD(output)},
    {.name = "help", .short_name = 'h', .help = "this text", .kind = OPT_HELP},
    {.name = "version", .help = "print the version", .kind = OPT_VERSION},
};
#undef FIELD
enum { N_ROWS = sizeof rows / sizeof rows[0] };

/* --help: the rows in order, values aligned in one column. */
static void print_usage(FILE *out)
{
    fputs(usage_head, out);
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct opt_row *r = &rows[i];
        char label[64];
        if (r->short_name)
            snprintf(label, sizeof label, "-%c, --%s%s%s", r->short_name, r->name,
                     r->arg ? " " : "", r->arg ? r->arg : "");
        else
            snprintf(label, sizeof label, "%s--%s%s%s", r->kind == OPT_VERSION ? "    " : "",
                     r->name, r->arg ? " " : "", r->arg ? r->arg : "");
        if (strlen(label) > 20)
            fprintf(out, "  %s\n%23s", label, ""); /* too long: help below */
        else
            fprintf(out, "  %-21s", label);
        for (const char *h = r->help; *h;) {
            const char *nl = strchr(h, '\n');
            size_t n = nl ? (size_t)(nl - h) : strlen(h);
            fprintf(out, "%.*s\n", (int)n, h);
            h += n + (nl != NULL);
            if (nl)
                fprintf(out, "%23s", "");
        }
    }
}

/* Stores value into the row's field; -1 after saying what was expected. */
static int apply(const struct opt_row *r, const char *value, struct replay_options *o)
{
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", r->name);
    void *f = (char *)o + r->field;
    uint64_t v;
    switch (r->kind) {
    case OPT_SWITCH:
        *(int *)f = 1;
        return 0;
    case OPT_STRING:
        *(const char **)f = value;
        return 0;
    case OPT_U32:
    case OPT_U64:
        if (pes_parse_u64(value, 10, &v) < 0 || v < r->min || v > r->max)
            return bad(flag, r->expected, value);
        if (r->kind == OPT_U32)
            *(uint32_t *)f = (uint32_t)v;
        else
            *(uint64_t *)f = v;
        return 0;
    case OPT_CHOICE:
    case OPT_NAME:
        for (size_t i = 0; r->names[i]; i++)
            if (strcmp(value, r->names[i]) == 0) {
                if (r->kind == OPT_CHOICE)
                    *(int *)f = r->values[i];
                else
                    *(const char **)f = r->names[i];
                return 0;
            }
        return bad(flag, r->expected, value);
    case OPT_FN: {
        int rc = r->parse(value, o);
        return rc == -1 ? bad(flag, r->expected, value) : rc < 0 ? -1 : 0;
    }
    default:
        return 0;
    }
}

/* The CPUs this process may run on (taskset, cgroup cpusets), at most REPLAY_MAX_JOBS. */
static uint32_t default_jobs(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                        : (int)sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > REPLAY_MAX_JOBS ? REPLAY_MAX_JOBS : (uint32_t)n;
}

int replay_parse_options(int argc, char **argv, struct replay_options *o)
{
    struct option longopts[N_ROWS + 1];
    char shorts[2 * N_ROWS + 2] = ":"; /* ':' first: a missing value is reported as such */
    size_t ns = 1;
    for (size_t i = 0; i < N_ROWS; i++) {
        longopts[i] = (struct option){rows[i].name, rows[i].arg ? required_argument : no_argument,
                                      0, 256 + (int)i};
        if (rows[i].short_name) {
            shorts[ns++] = rows[i].short_name;
            if (rows[i].arg)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longopts[N_ROWS] = (struct option){0, 0, 0, 0};
    memset(o, 0, sizeof *o);
    o->machine = "host";
    o->sockets = 1;
    o->seed = 1;
    o->knobs.top = 10;
    o->knobs.runtime_model = PES_RUNTIME_OVERLAP;
    o->page_size = 4096;
    o->knobs.sort = "invalidations";
    o->knobs.by = "line";
    o->callpath_depth = PES_CALLPATH_DEPTH;
    o->knobs.sample_seed = 1;
    o->format = REPLAY_TEXT;
    o->knobs.jobs = default_jobs();
    opterr = 0;
    int c;
    const char *mimic_only = NULL;  /* first --cores setting given: needs --cores */
    const char *sample_only = NULL; /* first --sample-rate setting given: needs it */
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        const struct opt_row *r = NULL;
        if (c >= 256 && c < 256 + N_ROWS)
            r = &rows[c - 256];
        for (size_t i = 0; !r && c > 0 && c < 256 && c != ':' && c != '?' && i < N_ROWS; i++)
            if (rows[i].short_name == c)
                r = &rows[i];
        if (!r) {
            if (c == ':')
                replay_message("%s: expected a value (see pes-replay --help)", argv[optind - 1]);
            else
                replay_message("unknown option '%s' (see pes-replay --help)", argv[optind - 1]);
            return -1;
        }
        if (!o->full_only && (r->flags & FULL_ONLY))
            o->full_only = r->name;
        if (!mimic_only && (r->flags & MIMIC_ONLY))
            mimic_only = r->name;
        if (!sample_only && (r->flags & SAMPLE_ONLY))
            sample_only = r->name;
        if (r->kind == OPT_HELP) {
            print_usage(stdout);
            return 1;
        }
        if (r->kind == OPT_VERSION) {
            printf("pes-replay %s\n", PES_VERSION);
            return 1;
        }
        if (apply(r, optarg, o) < 0)
            return -1;
    }
    if (o->show_machine)
        return 0;
    if (optind >= argc) {
        replay_message("no trace given (usage: pes-replay TRACE [options])");
        return -1;
    }
    /* settings of the mimicked cores would be silently ignored without them */
    if (mimic_only && !o->n_cores) {
        replay_message("--%s: only with --cores (mimicked cores)", mimic_only);
        return -1;
    }
    if (sample_only && o->knobs.sample_rate == 0) {
        replay_message("--%s: only with --sample-rate", sample_only);
        return -1;
    }
    if (o->diff_all && !o->diff) {
        replay_message("--diff-all: only with --diff A B");
        return -1;
    }
    if (o->diff) {
        if (o->compare) {
            replay_message("--diff: not with --compare; diff two --compare JSON reports instead");
            return -1;
        }
        if (o->comm_csv || o->sites_csv) {
            replay_message(
                "%s: not with --diff (a file per report); --csv-dir DIR writes the diff's table",
                o->comm_csv ? "--comm-csv" : "--sites-csv");
            return -1;
        }
        if (optind + 2 != argc) {
            replay_message("--diff: expected two inputs, A B (traces or pes-replay JSON reports)");
            return -1;
        }
        o->trace = argv[optind];
        o->full = argv[optind + 1];
        return check_outputs(o);
    }
    if (o->compare) {
        if (optind + 2 != argc) {
            replay_message("--compare: expected two traces, SAMPLED FULL");
            return -1;
        }
        o->trace = argv[optind];
        o->full = argv[optind + 1];
        /* --compare reads the full trace for its reuse truth only */
        if (o->full_only) {
            replay_message(
                "--%s: not with --compare; run pes-replay %s --%s on the full trace alone",
                o->full_only, o->full, o->full_only);
            return -1;
        }
        return check_outputs(o);
    }
    if (optind + 1 < argc) {
        replay_message("unexpected argument '%s' after the trace", argv[optind + 1]);
        return -1;
    }
    o->trace = argv[optind];
    if ((o->comm_csv || o->sites_csv) && !o->knobs.simulate) {
        replay_message("%s needs --simulate", o->comm_csv ? "--comm-csv" : "--sites-csv");
        return -1;
    }
    return check_outputs(o);
}
