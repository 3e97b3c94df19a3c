/*
 * options.c — pes-replay command line (perf-like long options; errors name the flag).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay.h"

static const char usage[] =
    "usage: pes-replay TRACE [options]\n"
    "       pes-replay --compare SAMPLED FULL [options]\n"
    "\n"
    "Replays a pes trace (or a plain-text address trace, one hex address per line)\n"
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
    fprintf(stderr, "pes-replay: %s: expected %s, got '%s'\n", flag, what, value);
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
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (parse_u64(tok, &v) < 0 || v == 0 || v > PES_SIM_MAX_CORES) return -1;
        if (o->n_cores == REPLAY_MAX_CONFIGS) return -1;
        o->cores[o->n_cores++] = (uint32_t)v;
    }
    return o->n_cores ? 0 : -1;
}

static const char *const sort_keys[] = {"invalidations", "coherence", "false-sharing",
                                        "true-sharing", "misses", "accesses", NULL};

int replay_parse_options(int argc, char **argv, struct replay_options *o) {
    enum {
        OPT_MACHINE = 256, OPT_CACHE, OPT_SHOW_MACHINE, OPT_CORES, OPT_INTERLEAVE, OPT_SEED,
        OPT_CHUNK, OPT_PER_REGION, OPT_SOCKETS, OPT_LINE, OPT_SIMULATE, OPT_PAGE_MAP, OPT_TOP, OPT_SORT, OPT_COMM_CSV, OPT_SITES_CSV,
        OPT_FORMAT, OPT_JOBS, OPT_VERSION, OPT_COMPARE,
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
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MACHINE: o->machine = optarg; break;
        case OPT_CACHE: o->cache_spec = optarg; break;
        case OPT_SHOW_MACHINE: o->show_machine = 1; break;
        case OPT_CORES:
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
            fprintf(stderr, "pes-replay: %s: missing value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "pes-replay: unknown option '%s' (see pes-replay --help)\n", argv[optind - 1]);
            return -1;
        }
    }
    if (o->show_machine) return 0;
    if (optind >= argc) {
        fprintf(stderr, "pes-replay: no trace given (usage: pes-replay TRACE [options])\n");
        return -1;
    }
    if (o->compare) {
        if (optind + 2 != argc) {
            fprintf(stderr, "pes-replay: --compare: expected two traces, SAMPLED FULL\n");
            return -1;
        }
        o->trace = argv[optind];
        o->full = argv[optind + 1];
        return 0;
    }
    if (optind + 1 < argc) {
        fprintf(stderr, "pes-replay: unexpected argument '%s' after the trace\n", argv[optind + 1]);
        return -1;
    }
    o->trace = argv[optind];
    if ((o->comm_csv || o->sites_csv) && !o->simulate) {
        fprintf(stderr, "pes-replay: %s needs --simulate\n", o->comm_csv ? "--comm-csv" : "--sites-csv");
        return -1;
    }
    return 0;
}
