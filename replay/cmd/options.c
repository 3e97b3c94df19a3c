/*
 * options.c — pes-replay command line (perf-like long options; errors name the flag).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"
#include "report_util.h"

static const char usage[] =
    "usage: pes-replay TRACE [options]\n"
    "       pes-replay --compare SAMPLED FULL [options]\n"
    "\n"
    "Replays a pes trace (or another tool's address trace: see --input-format)\n"
    "and reports reuse profiles, predicted cache hit rates and runtime, and\n"
    "optionally a cache + MESI coherence simulation.\n"
    "\n"
    "  --machine NAME       machine preset (haswell, broadwell, zen2), 'host', or a\n"
    "                       .machine file (default: host)\n"
    "  --cache SPEC         override cache levels, e.g. L1=32K:8,L2=256K:8,L3=20M:20\n"
    "  --show-machine       print the machine description in use and exit\n"
    "  --cores LIST         mimic N cores from a sequential run (PPT-Multicore), for\n"
    "                       each N in a comma-separated list, e.g. 1,2,4,8,16\n"
    "  --interleave KIND    round-robin (default) or uniform, for --cores\n"
    "  --seed N             seed of the uniform interleaving (default 1)\n"
    "  --chunk N            distribute BB instances like schedule(static, N)\n"
    "  --per-region         split BB instances per parallel-region instance, as\n"
    "                       OpenMP schedules each loop (default: over the whole run)\n"
    "  --sockets N          recorded threads share N last-level caches (default 1)\n"
    "  --line BYTES         reuse granularity (default: the machine's L1 line)\n"
    "  --simulate           cache + MESI simulation, per-site sharing report\n"
    "  --page-map KIND      random (default): L2/L3 sets indexed as physically\n"
    "                       indexed caches see them, with random 4 KiB page frames;\n"
    "                       virtual: sets from virtual addresses\n"
    "  --top N              sites to list with --simulate (default 10)\n"
    "  --sort METRIC        invalidations (default), coherence, false-sharing,\n"
    "                       true-sharing, misses, accesses\n"
    "  --comm-csv FILE      write the thread communication matrix (CSV)\n"
    "  --sites-csv FILE     write every site's simulation counts (CSV)\n"
    "  --input-format FMT   auto (default: a pes trace, else detected), pes, addr\n"
    "                       (one hex address per line, as PARDA and libCacheSim),\n"
    "                       lackey (valgrind --tool=lackey --trace-mem=yes), or\n"
    "                       binary64 (little-endian 64-bit addresses)\n"
    "  --jobs N             replay threads: 1, or 2 (the default with two or more\n"
    "                       CPUs): PRDs on a second thread, same results\n"
    "  --compare            accuracy of a sampled trace against a full trace of the\n"
    "                       same execution (pes-collect --mode M --full); a sampled\n"
    "                       TRACE alone prints its sampled analyses\n"
    "  --format FMT         text (default), json, csv\n"
    "  -o, --output FILE    write the report to FILE instead of stdout\n"
    "  -h, --help           this text\n"
    "      --version        print the version\n";

static int bad(const char *flag, const char *what, const char *value) {
    replay_message("%s: expected %s, got '%s'", flag, what, value);
    return -1;
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    if (!s || !*s || *s == '-') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int parse_cores(const char *s, struct replay_options *o) {
    char buf[256];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    o->n_cores = 0;
    /* split by hand: strtok would skip the empty element of "1,,2" (a typo, not a list of two) */
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        uint64_t v;
        if (parse_u64(tok, &v) < 0 || v == 0 || v > PES_SIM_MAX_CORES) return -1;
        if (o->n_cores == REPLAY_MAX_CONFIGS) return -1;
        o->cores[o->n_cores++] = (uint32_t)v;
    }
    return o->n_cores ? 0 : -1;
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
    char *canon;   /* realpath of the parent + "/" + name: new files spelled differently */
};

static char *canonical_name(const char *name) {
    char *copy = strdup(name), *out = NULL;
    if (!copy) return NULL;
    char *slash = strrchr(copy, '/');
    const char *dir = ".", *base = copy;
    if (slash) {
        *slash = '\0';
        dir = slash == copy ? "/" : copy;
        base = slash + 1;
    }
    char *rdir = realpath(dir, NULL);
    if (rdir && (out = malloc(strlen(rdir) + strlen(base) + 2))) sprintf(out, "%s/%s", rdir, base);
    free(rdir);
    free(copy);
    return out;
}

static int is_stream(const struct out_file *f) {
    return f->exists && (S_ISCHR(f->st.st_mode) || S_ISFIFO(f->st.st_mode));
}

static int check_outputs(const struct replay_options *o) {
    struct out_file out[3] = {{.flag = "-o", .name = o->output},
                              {.flag = "--comm-csv", .name = o->comm_csv},
                              {.flag = "--sites-csv", .name = o->sites_csv}};
    /* a --machine that is a file (pes_machine_load's rule) is read too */
    size_t ml = strlen(o->machine);
    int machine_file = strchr(o->machine, '/') || (ml > 8 && strcmp(o->machine + ml - 8, ".machine") == 0);
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
        if (!f->name || !f->exists) continue;
        if (S_ISDIR(f->st.st_mode) || S_ISSOCK(f->st.st_mode)) {
            replay_message("%s %s: is a %s, not a file to write", f->flag, f->name,
                           S_ISDIR(f->st.st_mode) ? "directory" : "socket");
            rc = -1;
        }
        for (int k = 0; k < 3 && !rc; k++) {
            struct stat in;
            if (inputs[k] && stat(inputs[k], &in) == 0 && in.st_dev == f->st.st_dev && in.st_ino == f->st.st_ino) {
                replay_message("%s %s: is the input %s %s; refusing to overwrite it", f->flag,
                               f->name, input_kind[k], inputs[k]);
                rc = -1;
            }
        }
    }
    for (int i = 0; i < 3 && !rc; i++)
        for (int k = i + 1; k < 3 && !rc; k++) {
            const struct out_file *a = &out[i], *b = &out[k];
            if (!a->name || !b->name || is_stream(a)) continue;
            if ((a->exists && b->exists && a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino) ||
                (a->canon && b->canon && strcmp(a->canon, b->canon) == 0)) {
                replay_message("%s %s and %s %s: the same file; the second would replace the first",
                               a->flag, a->name, b->flag, b->name);
                rc = -1;
            }
        }
    for (int i = 0; i < 3; i++) free(out[i].canon);
    return rc;
}

static const char *const sort_keys[] = {"invalidations", "coherence", "false-sharing",
                                        "true-sharing", "misses", "accesses", NULL};

int replay_parse_options(int argc, char **argv, struct replay_options *o) {
    enum {
        OPT_MACHINE = 256, OPT_CACHE, OPT_SHOW_MACHINE, OPT_CORES, OPT_INTERLEAVE, OPT_SEED,
        OPT_CHUNK, OPT_PER_REGION, OPT_SOCKETS, OPT_LINE, OPT_SIMULATE, OPT_PAGE_MAP, OPT_TOP, OPT_SORT, OPT_COMM_CSV, OPT_SITES_CSV,
        OPT_FORMAT, OPT_JOBS, OPT_VERSION, OPT_COMPARE, OPT_INPUT_FORMAT,
    };
    static const struct option longopts[] = {
        {"machine", required_argument, 0, OPT_MACHINE},
        {"cache", required_argument, 0, OPT_CACHE},
        {"show-machine", no_argument, 0, OPT_SHOW_MACHINE},
        {"cores", required_argument, 0, OPT_CORES},
        {"interleave", required_argument, 0, OPT_INTERLEAVE},
        {"seed", required_argument, 0, OPT_SEED},
        {"chunk", required_argument, 0, OPT_CHUNK},
        {"per-region", no_argument, 0, OPT_PER_REGION},
        {"sockets", required_argument, 0, OPT_SOCKETS},
        {"line", required_argument, 0, OPT_LINE},
        {"simulate", no_argument, 0, OPT_SIMULATE},
        {"page-map", required_argument, 0, OPT_PAGE_MAP},
        {"top", required_argument, 0, OPT_TOP},
        {"sort", required_argument, 0, OPT_SORT},
        {"comm-csv", required_argument, 0, OPT_COMM_CSV},
        {"sites-csv", required_argument, 0, OPT_SITES_CSV},
        {"format", required_argument, 0, OPT_FORMAT},
        {"input-format", required_argument, 0, OPT_INPUT_FORMAT},
        {"compare", no_argument, 0, OPT_COMPARE},
        {"jobs", required_argument, 0, OPT_JOBS},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    o->machine = "host";
    o->sockets = 1;
    o->seed = 1;
    o->top = 10;
    o->page_size = 4096;
    o->sort = "invalidations";
    o->format = REPLAY_TEXT;
    o->jobs = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;   /* 1.5x on the gemm bench trace */
    opterr = 0;
    int c;
    uint64_t v;
    const char *mimic_only = NULL;   /* first --cores setting given: needs --cores */
    /* ':' first: a missing value is reported as such, not as an unknown option */
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        const char *name = NULL;
        for (const struct option *l = longopts; l->name; l++)
            if (l->val == c) name = l->name;
        if (!o->full_only && (c == OPT_SIMULATE || c == OPT_CORES || c == OPT_INTERLEAVE || c == OPT_SEED ||
                              c == OPT_CHUNK || c == OPT_PER_REGION || c == OPT_PAGE_MAP || c == OPT_SORT ||
                              c == OPT_LINE || c == OPT_COMM_CSV || c == OPT_SITES_CSV))
            o->full_only = name;
        if (!mimic_only && (c == OPT_INTERLEAVE || c == OPT_SEED || c == OPT_CHUNK || c == OPT_PER_REGION))
            mimic_only = name;
        switch (c) {
        case OPT_MACHINE: o->machine = optarg; break;
        case OPT_CACHE: o->cache_spec = optarg; break;
        case OPT_SHOW_MACHINE: o->show_machine = 1; break;
        case OPT_CORES:
            if (strstr(optarg, ",,") || optarg[0] == ',' || (*optarg && optarg[strlen(optarg) - 1] == ','))
                return bad("--cores", "a comma-separated list of core counts 1..64, without empty elements",
                           optarg);
            if (parse_cores(optarg, o) < 0)
                return bad("--cores", "a comma-separated list of core counts 1..64", optarg);
            break;
        case OPT_INTERLEAVE:
            if (strcmp(optarg, "round-robin") == 0 || strcmp(optarg, "rr") == 0)
                o->interleave = PES_INTERLEAVE_ROUND_ROBIN;
            else if (strcmp(optarg, "uniform") == 0)
                o->interleave = PES_INTERLEAVE_UNIFORM;
            else
                return bad("--interleave", "round-robin or uniform", optarg);
            break;
        case OPT_SEED:
            if (parse_u64(optarg, &o->seed) < 0) return bad("--seed", "an unsigned integer", optarg);
            break;
        case OPT_CHUNK:
            if (parse_u64(optarg, &o->chunk) < 0) return bad("--chunk", "an unsigned integer", optarg);
            break;
        case OPT_PER_REGION: o->per_region = 1; break;
        case OPT_SOCKETS:
            if (parse_u64(optarg, &v) < 0 || v == 0 || v > 64)
                return bad("--sockets", "an integer 1..64", optarg);
            o->sockets = (uint32_t)v;
            break;
        case OPT_LINE:
            if (parse_u64(optarg, &v) < 0 || v == 0 || (v & (v - 1)) || v > 4096)
                return bad("--line", "a power of two up to 4096", optarg);
            o->line = (uint32_t)v;
            break;
        case OPT_SIMULATE: o->simulate = 1; break;
        case OPT_PAGE_MAP:
            if (strcmp(optarg, "random") == 0) o->page_size = 4096;
            else if (strcmp(optarg, "virtual") == 0) o->page_size = 0;
            else return bad("--page-map", "random or virtual", optarg);
            break;
        case OPT_TOP:
            if (parse_u64(optarg, &v) < 0 || v > 100000) return bad("--top", "an integer 0..100000", optarg);
            o->top = (uint32_t)v;
            break;
        case OPT_SORT: {
            int ok = 0;
            for (int i = 0; sort_keys[i]; i++) ok |= strcmp(optarg, sort_keys[i]) == 0;
            if (!ok)
                return bad("--sort", "invalidations, coherence, false-sharing, true-sharing, misses or accesses",
                           optarg);
            o->sort = optarg;
            break;
        }
        case OPT_COMM_CSV: o->comm_csv = optarg; break;
        case OPT_SITES_CSV: o->sites_csv = optarg; break;
        case OPT_COMPARE: o->compare = 1; break;
        case OPT_INPUT_FORMAT: {
            /* "auto" is PES_TEXT_FORMAT_AUTO, REPLAY_INPUT_AUTO too */
            int f = strcmp(optarg, "pes") == 0 ? REPLAY_INPUT_PES : pes_text_format_parse(optarg);
            if (f < 0) return bad("--input-format", "auto, pes, addr, lackey or binary64", optarg);
            o->input_format = f;
            break;
        }
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0) o->format = REPLAY_TEXT;
            else if (strcmp(optarg, "json") == 0) o->format = REPLAY_JSON;
            else if (strcmp(optarg, "csv") == 0) o->format = REPLAY_CSV;
            else return bad("--format", "text, json or csv", optarg);
            break;
        case OPT_JOBS:
            if (parse_u64(optarg, &v) < 0 || v < 1 || v > 2) return bad("--jobs", "1 or 2", optarg);
            o->jobs = (uint32_t)v;
            break;
        case 'o': o->output = optarg; break;
        case 'h': fputs(usage, stdout); return 1;
        case OPT_VERSION: printf("pes-replay %s\n", PES_VERSION); return 1;
        case ':':
            replay_message("%s: expected a value (see pes-replay --help)", argv[optind - 1]);
            return -1;
        default:
            replay_message("unknown option '%s' (see pes-replay --help)", argv[optind - 1]);
            return -1;
        }
    }
    if (o->show_machine) return 0;
    if (optind >= argc) {
        replay_message("no trace given (usage: pes-replay TRACE [options])");
        return -1;
    }
    /* settings of the mimicked cores would be silently ignored without them */
    if (mimic_only && !o->n_cores) {
        replay_message("--%s: only with --cores (mimicked cores)", mimic_only);
        return -1;
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
            replay_message("--%s: not with --compare; run pes-replay %s --%s on the full trace alone",
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
    if ((o->comm_csv || o->sites_csv) && !o->simulate) {
        replay_message("%s needs --simulate", o->comm_csv ? "--comm-csv" : "--sites-csv");
        return -1;
    }
    return check_outputs(o);
}
