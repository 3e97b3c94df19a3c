/* pes-collect — runs a program under the pes runtime and writes its trace(s).
 *
 *   pes-collect --full [-o FILE] [options] [--] PROGRAM [ARGS...]
 *   pes-collect --mode MODE [--full] [-o FILE] [options] [--] PROGRAM [ARGS...]
 *   pes-collect --list-backends
 *
 * The program must be built with pes-clang (it links libpes-rt through an
 * rpath), except for the pebs/ibs backends, where the runtime is preloaded;
 * pes-collect checks that, sets the PES_* environment, runs it,
 * prints a one-line summary and exits with the program's own status. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libelf.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pes/rt_abi.h"
#include "pes/trace.h"
#include "core/core.h"
#include "backends/pmu.h"

#ifndef PES_VERSION
#define PES_VERSION "unknown"
#endif

#define EXIT_USAGE 2

struct options {
    int full;
    const char *mode;          /* NULL = no sampling */
    const char *period_load, *period_store;
    char period_buf[2][24];    /* load=N,store=M values */
    const char *backend;
    const char *granularity;
    const char *sockets;
    const char *debug_registers;
    const char *seed;
    const char *samples;       /* --samples N: adaptive period */
    const char *target_error;  /* --target-error E: sets samples */
    const char *full_output;
    int list_backends;
    const char *output;
    int force;
    const char *time_interval;
    const char *buffer_records;
    const char *zstd_level;
    const char *writers;
    int quiet;
    int no_roi;
    int no_heap;
    const char *skip, *max_accesses;
    /* the first sampling-only flag given ("--period"), refused without --mode */
    const char *sampling_flag;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: pes-collect --full [options] [--] PROGRAM [ARGS...]\n"
            "   or: pes-collect --mode MODE [--full] [options] [--] PROGRAM [ARGS...]\n"
            "   or: pes-collect --list-backends\n"
            "\n"
            "Runs PROGRAM (built with pes-clang) and records a trace of its memory accesses.\n"
            "\n"
            "  --full                 record a full trace (every access, basic blocks)\n"
            "  --mode MODE            record a sampled trace: samples, reuse (ReuseTracker),\n"
            "                         reuse-shared (shared-cache reuse), comm (ComDetective)\n"
            "  --period N             accesses between samples (default %u), or load=N,store=M\n"
            "                         (0 = that kind is not sampled); randomised by +-1/8\n"
            "  --samples N            adapt the period per thread so that each thread long\n"
            "                         enough gets at least N decided outcomes (reuse modes)\n"
            "                         or N samples (samples, comm): start at --period / 64,\n"
            "                         double after every N, never above --period\n"
            "  --target-error E       --samples sized for every histogram share within +-E\n"
            "                         (90 %%, 0 < E < 0.5): N = 1.645^2 / (4 E^2)\n"
            "  --backend B            auto (default), soft, pebs or ibs\n"
            "  --granularity G        reuse: temporal (same bytes, default) or spatial (line)\n"
            "  --sockets N            reuse-shared: simulate N sockets (thread i on i %% N)\n"
            "  --debug-registers N    watchpoints per thread, 1..4 (default 4)\n"
            "  --seed N               sampler seed (default: from the clock)\n"
            "  --full-output FILE     full trace when combined with --mode\n"
            "                         (default: PROGRAM.PID.full.zst here)\n"
            "  --list-backends        say which sampling backends work here, and why not\n"
            "  -o, --output FILE      trace file (default: PROGRAM.PID.full.zst, or\n"
            "                         PROGRAM.PID.MODE.zst with --mode)\n"
            "      --force            replace FILE if it exists (a regular file that is not\n"
            "                         PROGRAM; see docs/collector.md, Output files)\n"
            "      --time-interval N  records between time marks (default %u)\n"
            "      --buffer-records N records per thread buffer (default %u, %u..%u)\n"
            "      --zstd-level N     compression level (default %d, 1..%d)\n"
            "      --writers N        threads compressing the trace, 1..%u (default: one per\n"
            "                         CPU the program may run on, at most %u)\n"
            "      --no-roi           record the whole run in spite of pes_roi_begin/end markers\n"
            "      --no-heap          do not record heap allocations (their accesses: object\n"
            "                         unknown; saves ~0.25 us per malloc/free in sampled traces)\n"
            "      --skip N           full trace: do not record each thread's first N accesses\n"
            "                         (inside the region of interest, if the program has one)\n"
            "      --max-accesses N   full trace: record at most N accesses per thread (after\n"
            "                         --skip); the program runs on unchanged\n"
            "  -q, --quiet            no summary, no runtime warnings\n"
            "  -h, --help             this help\n"
            "      --version          print the version\n"
            "\n"
            "Exits with PROGRAM's exit status (re-raises its terminating signal).\n",
            PES_RT_DEFAULT_PERIOD, PES_RT_DEFAULT_TIME_INTERVAL, PES_RT_DEFAULT_BUFFER_RECORDS, PES_RT_MIN_BUFFER_RECORDS,
            PES_RT_MAX_BUFFER_RECORDS, PES_RT_DEFAULT_ZSTD_LEVEL, PES_RT_MAX_ZSTD_LEVEL,
            PES_RT_MAX_WRITERS, PES_RT_AUTO_WRITERS_MAX);
}

__attribute__((noreturn, format(printf, 2, 3))) static void die(int status, const char *fmt, ...)
{
    va_list ap;
    fputs("pes-collect: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

static const char *check_number(const char *flag, const char *v, uint64_t min, uint64_t max)
{
    uint64_t out;
    if (pes_rt_parse_u64(v, min, max, &out) == 0)
        return v;
    if (min == 1 && max == UINT32_MAX)
        die(EXIT_USAGE, "%s: expected a positive integer, got '%s'", flag, v);
    die(EXIT_USAGE, "%s: expected an integer from %llu to %llu, got '%s'", flag,
        (unsigned long long)min, (unsigned long long)max, v);
}

/* --target-error E -> --samples N. A share p of a histogram estimated from
 * n outcomes has a 90 % half-width of about z sqrt(p (1 - p) / n), widest at
 * p = 1/2: n = z^2 / (4 E^2) bounds every bin of every histogram. Weighted
 * outcomes (--samples mixes periods) have a smaller effective n; the report's
 * intervals say what was reached. */
static const char *samples_for_error(const char *v)
{
    static char buf[32];
    char *end;
    errno = 0;
    double e = strtod(v, &end);
    if (errno || end == v || *end || !(e > 0 && e < 0.5))
        die(EXIT_USAGE, "--target-error: expected a share error between 0 and 0.5 (e.g. 0.05), got '%s'", v);
    const double z90 = 1.6448536269514722;
    double n = ceil(z90 * z90 / (4 * e * e));
    if (n > UINT32_MAX)
        die(EXIT_USAGE, "--target-error: %s needs %.0f outcomes per thread (at most %u)", v, n, UINT32_MAX);
    snprintf(buf, sizeof buf, "%.0f", n);
    return buf;
}

/* --period N | load=N,store=M (either part may be left out: that kind keeps the default) */
static void parse_period(const char *v, struct options *o)
{
    uint64_t n;
    if (pes_rt_parse_u64(v, 1, UINT32_MAX, &n) == 0) {
        o->period_load = o->period_store = v;
        return;
    }
    char *copy = strdup(v);
    if (!copy)
        die(1, "out of memory");
    for (char *save = NULL, *part = strtok_r(copy, ",", &save); part;
         part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        int k = -1;
        if (eq && (size_t)(eq - part) == 4 && strncmp(part, "load", 4) == 0)
            k = 0;
        else if (eq && (size_t)(eq - part) == 5 && strncmp(part, "store", 5) == 0)
            k = 1;
        if (k < 0 || pes_rt_parse_u64(eq + 1, 0, UINT32_MAX, &n) != 0)
            die(EXIT_USAGE, "--period: expected N or load=N,store=M (N from 1 to %u, 0 = not "
                            "sampled), got '%s'", UINT32_MAX, v);
        snprintf(o->period_buf[k], sizeof o->period_buf[k], "%llu", (unsigned long long)n);
        *(k ? &o->period_store : &o->period_load) = o->period_buf[k];
    }
    free(copy);
    if (o->period_load && o->period_store && !strcmp(o->period_load, "0") &&
        !strcmp(o->period_store, "0"))
        die(EXIT_USAGE, "--period: '%s' samples nothing", v);
}

static int parse_options(int argc, char **argv, struct options *o)
{
    enum { OPT_FULL = 256, OPT_FORCE, OPT_TIME, OPT_BUFFER, OPT_ZSTD, OPT_VERSION, OPT_MODE,
           OPT_PERIOD, OPT_BACKEND, OPT_GRAN, OPT_SOCKETS, OPT_DREGS, OPT_SEED, OPT_FULL_OUT,
           OPT_LIST, OPT_WRITERS, OPT_NO_ROI, OPT_NO_HEAP, OPT_SKIP, OPT_MAX, OPT_SAMPLES,
           OPT_TARGET_ERROR };
    static const struct option longs[] = {
        {"full", no_argument, NULL, OPT_FULL},
        {"mode", required_argument, NULL, OPT_MODE},
        {"period", required_argument, NULL, OPT_PERIOD},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"target-error", required_argument, NULL, OPT_TARGET_ERROR},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"granularity", required_argument, NULL, OPT_GRAN},
        {"sockets", required_argument, NULL, OPT_SOCKETS},
        {"debug-registers", required_argument, NULL, OPT_DREGS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"full-output", required_argument, NULL, OPT_FULL_OUT},
        {"list-backends", no_argument, NULL, OPT_LIST},
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, OPT_FORCE},
        {"time-interval", required_argument, NULL, OPT_TIME},
        {"buffer-records", required_argument, NULL, OPT_BUFFER},
        {"zstd-level", required_argument, NULL, OPT_ZSTD},
        {"writers", required_argument, NULL, OPT_WRITERS},
        {"no-roi", no_argument, NULL, OPT_NO_ROI},
        {"no-heap", no_argument, NULL, OPT_NO_HEAP},
        {"skip", required_argument, NULL, OPT_SKIP},
        {"max-accesses", required_argument, NULL, OPT_MAX},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    int c;
    /* '+': options end at the program name, its own flags are not ours */
    while ((c = getopt_long(argc, argv, "+:o:qh", longs, NULL)) != -1) {
        if (!o->sampling_flag && (c == OPT_PERIOD || c == OPT_BACKEND || c == OPT_GRAN ||
                                  c == OPT_SOCKETS || c == OPT_DREGS || c == OPT_SEED ||
                                  c == OPT_SAMPLES || c == OPT_TARGET_ERROR))
            for (const struct option *l = longs; l->name; l++)
                if (l->val == c)
                    o->sampling_flag = l->name;
        switch (c) {
        case OPT_FULL: o->full = 1; break;
        case OPT_MODE:
            if (!pes_rt_mode_parse(optarg))
                die(EXIT_USAGE, "--mode: expected samples, reuse, reuse-shared or comm, got '%s'",
                    optarg);
            /* one run records one sampled trace: the last --mode would silently win */
            if (o->mode && strcmp(o->mode, optarg))
                die(EXIT_USAGE, "--mode: given twice ('%s' and '%s'); a run records one mode",
                    o->mode, optarg);
            o->mode = optarg;
            break;
        case OPT_PERIOD: parse_period(optarg, o); break;
        case OPT_BACKEND:
            if (strcmp(optarg, "auto") && strcmp(optarg, "soft") && strcmp(optarg, "pebs") &&
                strcmp(optarg, "ibs"))
                die(EXIT_USAGE, "--backend: expected auto, soft, pebs or ibs, got '%s'", optarg);
            o->backend = optarg;
            break;
        case OPT_GRAN:
            if (strcmp(optarg, "temporal") && strcmp(optarg, "spatial"))
                die(EXIT_USAGE, "--granularity: expected temporal or spatial, got '%s'", optarg);
            o->granularity = optarg;
            break;
        case OPT_SOCKETS: o->sockets = check_number("--sockets", optarg, 1, PES_RT_MAX_SOCKETS); break;
        case OPT_DREGS:
            o->debug_registers =
                check_number("--debug-registers", optarg, 1, PES_RT_MAX_DEBUG_REGISTERS);
            break;
        case OPT_SEED: o->seed = check_number("--seed", optarg, 1, UINT64_MAX); break;
        case OPT_SAMPLES: o->samples = check_number("--samples", optarg, 1, UINT32_MAX); break;
        case OPT_TARGET_ERROR: o->target_error = optarg; break;
        case OPT_FULL_OUT:
            if (!*optarg)
                die(EXIT_USAGE, "--full-output: expected a file name, got ''");
            o->full_output = optarg;
            break;
        case OPT_LIST: o->list_backends = 1; break;
        case 'o':
            if (!*optarg)
                die(EXIT_USAGE, "--output: expected a file name, got ''");
            o->output = optarg;
            break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_TIME: o->time_interval = check_number("--time-interval", optarg, 1, UINT32_MAX); break;
        case OPT_BUFFER:
            o->buffer_records = check_number("--buffer-records", optarg, PES_RT_MIN_BUFFER_RECORDS,
                                             PES_RT_MAX_BUFFER_RECORDS);
            break;
        case OPT_ZSTD: o->zstd_level = check_number("--zstd-level", optarg, 1, PES_RT_MAX_ZSTD_LEVEL); break;
        case OPT_WRITERS: o->writers = check_number("--writers", optarg, 1, PES_RT_MAX_WRITERS); break;
        case OPT_NO_ROI: o->no_roi = 1; break;
        case OPT_NO_HEAP: o->no_heap = 1; break;
        case OPT_SKIP: o->skip = check_number("--skip", optarg, 0, UINT64_MAX); break;
        case OPT_MAX: o->max_accesses = check_number("--max-accesses", optarg, 1, UINT64_MAX); break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        case OPT_VERSION: printf("pes-collect %s\n", PES_VERSION); exit(0);
        case ':': die(EXIT_USAGE, "%s: expected a value", argv[optind - 1]);
        default:
            if (optopt)
                die(EXIT_USAGE, "-%c: unknown option (see --help)", optopt);
            die(EXIT_USAGE, "%s: unknown option (see --help)", argv[optind - 1]);
        }
    }
    return optind;
}

/* Resolves PROGRAM like execvp: a name with '/' is used as is, else PATH. */
static char *resolve(const char *prog, int *err)
{
    if (strchr(prog, '/')) {
        *err = access(prog, X_OK) == 0 ? 0 : errno;
        return *err ? NULL : strdup(prog);
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    *err = ENOENT;
    for (const char *p = path;; ) {
        const char *end = strchrnul(p, ':');
        size_t n = (size_t)(end - p);
        char *cand;
        if (asprintf(&cand, "%.*s%s%s", (int)n, p, n ? "/" : "", prog) < 0)
            return NULL;
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                *err = 0;
                return cand;
            }
            *err = EACCES;
        }
        free(cand);
        if (!*end)
            break;
        p = end + 1;
    }
    return NULL;
}

/* 1 if the ELF file defines or references __pes_register_module, 0 if not,
 * -1 if it is not an ELF file. */
static int is_instrumented(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int found = -1;
    if (e && elf_kind(e) == ELF_K_ELF) {
        found = 0;
        Elf_Scn *scn = NULL;
        while (!found && (scn = elf_nextscn(e, scn))) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
                continue;
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
            for (size_t i = 0; d && i < n; i++) {
                GElf_Sym sym;
                const char *name;
                if (gelf_getsym(d, (int)i, &sym) &&
                    (name = elf_strptr(e, sh.sh_link, sym.st_name)) &&
                    strcmp(name, "__pes_register_module") == 0) {
                    found = 1;
                    break;
                }
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return found;
}

/* 1 if the file starts with "#!": a script, which the kernel runs through its
 * interpreter, and which may exec a program built with pes-clang (a wrapper).
 * Its environment carries the collector's settings to that program. */
static int is_script(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char magic[2];
    ssize_t n = read(fd, magic, sizeof magic);
    close(fd);
    return n == 2 && magic[0] == '#' && magic[1] == '!';
}

static void human_size(uint64_t bytes, char *buf, size_t size)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* What the runtime left out (its config lines roi=markers, skip=, max_accesses=):
 * "; region of interest only, first N accesses per thread skipped, at most M
 * per thread", or "". */
static void kept_note(const char *config, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (const char *l = config ? config : ""; *l;) {
        size_t len = strcspn(l, "\n");
        char item[80] = "";
        if (len == 11 && !strncmp(l, "roi=markers", 11))
            snprintf(item, sizeof item, "region of interest only");
        else if (!strncmp(l, "skip=", 5))
            snprintf(item, sizeof item, "first %.*s accesses per thread skipped", (int)(len - 5), l + 5);
        else if (!strncmp(l, "max_accesses=", 13))
            snprintf(item, sizeof item, "at most %.*s accesses per thread", (int)(len - 13), l + 13);
        if (item[0] && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "; ", item);
        l += len + (l[len] == '\n');
    }
}

/* Sampled trace: events by kind, from its EVENTS blocks and footer. */
static void summary_sampled(const char *path, struct pes_trace_reader *r, uint64_t bytes)
{
    struct pes_block b;
    struct pes_error err = {0};
    uint64_t kinds[16] = {0}, events = 0, lost = 0;
    uint32_t threads = 0;
    int have_footer = 0, rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type == PES_BLOCK_THREAD)
            threads++;
        else if (b.type == PES_BLOCK_EVENTS)
            for (size_t i = 0; i < b.n; i++) {
                events++;
                kinds[b.events[i].kind & 15]++;
            }
        else if (b.type == PES_BLOCK_FOOTER) {
            have_footer = 1;
            for (size_t i = 0; i < b.n; i++)
                lost += b.totals[i].lost;
        }
    }
    char size[32], note[200];
    human_size(bytes, size, sizeof size);
    kept_note(pes_trace_reader_info(r)->config, note, sizeof note);
    fprintf(stderr,
            "pes-collect: %s: %s, %u thread%s, %llu events: %llu samples, %llu reuses, %llu "
            "invalidations, %llu communications%s%s%s\n",
            path, size, threads, threads == 1 ? "" : "s", (unsigned long long)events,
            (unsigned long long)kinds[PES_EV_SAMPLE], (unsigned long long)kinds[PES_EV_REUSE],
            (unsigned long long)kinds[PES_EV_INVALIDATION], (unsigned long long)kinds[PES_EV_COMM],
            lost ? " (some events lost: buffers full in trap handlers)" : "",
            rc < 0 ? " (unreadable block)"
                   : have_footer ? "" : " (no footer: the run ended abnormally)",
            note);
}

/* One line from the trace's block index and footer. `script`: the command was
 * a script, which may not have run a program built with pes-clang. */
static void summary(const char *path, const char *script)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (script)
            fprintf(stderr, "pes-collect: no trace was written to %s: no program built with "
                            "pes-clang ran under the script %s\n", path, script);
        else
            fprintf(stderr, "pes-collect: no trace was written to %s (see the messages above)\n",
                    path);
        return;
    }
    struct pes_error err = {0};
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    if (!r) {
        fprintf(stderr, "pes-collect: %s\n", err.message);
        return;
    }
    if (pes_trace_reader_info(r)->kind == PES_TRACE_SAMPLED) {
        summary_sampled(path, r, (uint64_t)st.st_size);
        pes_trace_reader_close(r);
        return;
    }
    struct pes_block_ref *refs = NULL;
    size_t n = 0;
    uint64_t records = 0, footer_records = 0;
    uint32_t threads = 0;
    int have_footer = 0;
    if (pes_trace_reader_index(r, &refs, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (refs[i].type == PES_BLOCK_THREAD)
                threads++;
            else if (refs[i].type == PES_BLOCK_ACCESS)
                records += refs[i].count;
            else if (refs[i].type == PES_BLOCK_FOOTER) {
                struct pes_block b;
                if (pes_trace_reader_block_at(r, &refs[i], &b, &err) == 1) {
                    have_footer = 1;
                    for (size_t k = 0; k < b.n; k++)
                        footer_records += b.totals[k].records;
                }
            }
        }
    }
    free(refs);
    char note[200];
    kept_note(pes_trace_reader_info(r)->config, note, sizeof note);
    pes_trace_reader_close(r);
    char size[32];
    human_size((uint64_t)st.st_size, size, sizeof size);
    fprintf(stderr, "pes-collect: %s: %s, %u thread%s, %llu records, %.2f bytes/record%s%s\n", path,
            size, threads, threads == 1 ? "" : "s", (unsigned long long)records,
            records ? (double)st.st_size / (double)records : 0.0,
            have_footer ? (footer_records == records ? "" : " (footer disagrees)")
                        : " (no footer: the run ended abnormally)",
            note);
}

static pid_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

static char *default_output(const char *prog, pid_t pid, const char *what)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    char *out;
    if (asprintf(&out, "%s.%d.%s.zst", base, (int)pid, what) < 0)
        return NULL;
    return out;
}

static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    char *out;
    if (!getcwd(cwd, sizeof cwd) || asprintf(&out, "%s/%s", cwd, path) < 0)
        return NULL;
    return out;
}

/* An output file as found before the run: nothing is removed until every
 * output has been checked, so a refused command line changes nothing. */
struct output {
    const char *flag;   /* as the help names it: --output, --full-output */
    const char *name;   /* as given, NULL for the default name */
    int present;        /* lstat: the name exists (--force removes it) */
    int exists;         /* stat: what it names exists (symlinks followed) */
    struct stat st;
    char *canon;        /* realpath of the parent + "/" + last component */
};

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a fifo"
         : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The parent directory resolved, so that "./t.zst" and "t.zst" (or a path
 * through a symlinked directory) compare equal before either file exists. */
static char *canonical_name(const char *name)
{
    char *copy = strdup(name);
    if (!copy)
        die(1, "out of memory");
    char *slash = strrchr(copy, '/');
    const char *dir = ".", *base = copy;
    if (slash) {
        *slash = '\0';
        dir = slash == copy ? "/" : copy;
        base = slash + 1;
    }
    char *rdir = realpath(dir, NULL), *out = NULL;
    if (rdir && asprintf(&out, "%s/%s", rdir, base) < 0)
        out = NULL;
    free(rdir);
    free(copy);
    return out;   /* NULL if the directory is missing: check_dir reports it */
}

static void inspect_output(struct output *out, const char *flag, const char *name)
{
    struct stat lst;
    memset(out, 0, sizeof *out);
    out->flag = flag;
    out->name = name;
    if (!name)
        return;
    out->present = lstat(name, &lst) == 0;
    out->exists = stat(name, &out->st) == 0;
    out->canon = canonical_name(name);
}

static int same_output(const struct output *a, const struct output *b)
{
    if (!a->name || !b->name)
        return 0;
    if (a->exists && b->exists && a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino)
        return 1;
    return a->canon && b->canon && strcmp(a->canon, b->canon) == 0;
}

/* Refuses, before anything is removed or run, an output that --force would
 * destroy for nothing: a device, fifo, directory or socket (as root, --force
 * -o /dev/null would unlink the system's /dev/null), or the program being run
 * (--force -o ./app -- ./app). Compared by inode, so links and other spellings
 * are caught too. */
static void check_output(const struct output *out, const char *exe, int force)
{
    if (!out->name || !out->present)
        return;
    if (out->exists && !S_ISREG(out->st.st_mode))
        die(EXIT_USAGE, "%s %s: is %s, not a regular file; refusing to replace it", out->flag,
            out->name, file_kind(out->st.st_mode));
    struct stat pst;
    if (out->exists && stat(exe, &pst) == 0 && pst.st_dev == out->st.st_dev &&
        pst.st_ino == out->st.st_ino)
        die(EXIT_USAGE, "%s %s: is the program being run (%s); refusing to replace it",
            out->flag, out->name, exe);
    if (!force)
        die(EXIT_USAGE, "%s: file exists (use --force to replace it)", out->name);
}

/* Removes an existing FILE (checked by check_output) and returns its absolute path;
 * NULL if none given. */
static char *prepare_output(const struct output *out)
{
    if (!out->name)
        return NULL;
    /* remove it here rather than passing PES_OVERWRITE: a program the
     * app execs must not clobber the trace being written */
    if (out->present && unlink(out->name) != 0)
        die(1, "%s: cannot remove: %s", out->name, strerror(errno));
    char *abs = absolute(out->name);
    if (!abs)
        die(1, "%s: cannot make the path absolute: %s", out->name, strerror(errno));
    return abs;
}

/* Fails before the run rather than after it: the runtime can only warn. */
static void check_dir(const char *path, const char *shown)
{
    char *dir = strdup(path ? path : ".");
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    if (dir && access(dir, W_OK | X_OK) != 0)
        die(EXIT_USAGE, "%s: cannot write the trace in %s: %s", shown ? shown : ".", dir,
            strerror(errno));
    free(dir);
}

/* --list-backends: what works on this machine, and why not. */
static int list_backends(void)
{
    char why[512];
    int pebs = pes_pmu_probe(PES_PMU_PEBS, why, sizeof why);
    printf("pebs  %s: %s\n", pebs == 0 ? "available" : "unavailable", why);
    int ibs = pes_pmu_probe(PES_PMU_IBS, why, sizeof why);
    printf("ibs   %s: %s\n", ibs == 0 ? "available" : "unavailable", why);
    printf("soft  available: programs built with pes-clang count their loads and stores and "
           "sample them without a PMU\n");
    printf("watchpoints (reuse, reuse-shared, comm): %s\n",
           pes_pmu_probe_watchpoints(why, sizeof why) == 0 ? why : why);
    return 0;
}

/* --backend: auto picks a PMU backend when one works, else soft if the program is
 * instrumented, else says what the options are. Returns "soft", "pebs" or "ibs". */
static const char *choose_backend(const struct options *o, const char *prog, int instrumented)
{
    const char *b = o->backend ? o->backend : "auto";
    char why[512];
    if (!strcmp(b, "soft")) {
        if (!instrumented)
            die(EXIT_USAGE, "--backend soft: %s was not built with pes-clang, so it has no "
                            "load/store counters to sample; rebuild it with pes-clang", prog);
        return "soft";
    }
    if (!strcmp(b, "auto")) {
        char why_ibs[512];
        if (pes_pmu_probe(PES_PMU_PEBS, why, sizeof why) == 0)
            return "pebs";
        if (pes_pmu_probe(PES_PMU_IBS, why_ibs, sizeof why_ibs) == 0)
            return "ibs";
        if (instrumented)
            return "soft";
        /* name the PEBS reason: without any PMU it is the generic one (cycles) */
        die(EXIT_USAGE, "%s was not built with pes-clang and this machine has no usable PMU "
                        "(%s): rebuild it with pes-clang to use the soft sampler, or run on "
                        "a machine with PEBS or IBS", prog, why);
    }
    int which = !strcmp(b, "ibs") ? PES_PMU_IBS : PES_PMU_PEBS;
    if (pes_pmu_probe(which, why, sizeof why) != 0)
        die(EXIT_USAGE, "--backend %s: unavailable: %s (pes-collect --list-backends)", b, why);
    return b;
}

/* The runtime next to this pes-collect (build tree and install: bin/ and lib/),
 * preloaded into programs not built with pes-clang: its initial-exec TLS
 * cannot be dlopen'ed later, so LD_PRELOAD is the supported way. */
static char *runtime_path(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    size_t len = strlen(self) + sizeof "/../lib/libpes-rt.so";
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/../lib/libpes-rt.so", self);
    if (p && access(p, R_OK) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

static void set_or_unset(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

int main(int argc, char **argv)
{
    struct options o = {0};
    int first = parse_options(argc, argv, &o);
    if (o.list_backends)
        return list_backends();
    if (first >= argc)
        die(EXIT_USAGE, "expected a program to run (see --help)");
    if (!o.full && !o.mode)
        die(EXIT_USAGE, "expected --full (every access) or --mode samples|reuse|reuse-shared|comm "
                        "(sampling) (see --help)");
    if (o.full_output && !(o.full && o.mode))
        die(EXIT_USAGE, "--full-output: only with both --full and --mode (otherwise use -o)");
    /* sampling settings without sampling would be silently ignored by the runtime */
    if (o.sampling_flag && !o.mode)
        die(EXIT_USAGE, "--%s: only with --mode (sampling); --full alone records every access",
            o.sampling_flag);
    /* a sampled trace has no records to drop: its accesses are counted, not kept */
    if ((o.skip || o.max_accesses) && !o.full)
        die(EXIT_USAGE, "--%s: only with --full (a sampled trace keeps no access records)",
            o.skip ? "skip" : "max-accesses");
    if (o.granularity && strcmp(o.mode, "reuse") && strcmp(o.mode, "reuse-shared"))
        die(EXIT_USAGE, "--granularity: only with --mode reuse or reuse-shared, not %s", o.mode);
    if (o.sockets && strcmp(o.mode, "reuse-shared"))
        die(EXIT_USAGE, "--sockets: only with --mode reuse-shared, not %s", o.mode);
    if (o.target_error) {
        if (o.samples)
            die(EXIT_USAGE, "--target-error: --samples is given too; both set the sample count, give one");
        o.samples = samples_for_error(o.target_error);
        if (!o.quiet)
            fprintf(stderr, "pes-collect: --target-error %s: --samples %s per thread\n", o.target_error,
                    o.samples);
    }
    if (o.debug_registers && !strcmp(o.mode, "samples"))
        die(EXIT_USAGE, "--debug-registers: only with --mode reuse, reuse-shared or comm "
                        "(--mode samples sets no watchpoints)");

    char **app = argv + first;
    int app_argc = argc - first;
    int err;
    char *exe = resolve(app[0], &err);
    if (!exe)
        die(err == ENOENT ? 127 : 126, "%s: %s", app[0],
            err == ENOENT ? "program not found" : strerror(err));
    int inst = is_instrumented(exe);
    /* a script: the program it runs is what counts; taken as built with
     * pes-clang (the runtime comes with that program, nothing is preloaded),
     * and the end of the run says if no trace came of it */
    int script = inst < 0 && is_script(exe);
    if (inst < 0 && !script)
        die(EXIT_USAGE, "%s is not an ELF executable or a script; pes-collect needs a program "
                        "built with pes-clang", app[0]);
    if (script)
        inst = 1;
    const char *backend = o.mode ? choose_backend(&o, app[0], inst) : NULL;
    char *preload = NULL;
    if (backend && strcmp(backend, "soft") && inst == 0) {
        char *rt = runtime_path();
        if (!rt)
            die(1, "cannot find libpes-rt.so next to pes-collect (../lib) to preload into %s",
                app[0]);
        const char *old = getenv("LD_PRELOAD");
        size_t len = strlen(rt) + (old ? strlen(old) + 1 : 0) + 1;
        preload = malloc(len);
        if (!preload)
            die(1, "out of memory");
        snprintf(preload, len, "%s%s%s", rt, old && *old ? ":" : "", old && *old ? old : "");
        free(rt);
    }
    if (inst == 0 && (o.full || !preload))
        die(EXIT_USAGE, "%s was not built with pes-clang: it has no pes instrumentation to record a "
                        "full trace; rebuild it with pes-clang, or use a sampling backend (not "
                        "available on this machine)", app[0]);

    /* -o names the sampled trace when there is one, else the full trace */
    const char *o_full = o.mode ? o.full_output : o.output;
    const char *o_sampled = o.mode ? o.output : NULL;
    struct output full_out, samp_out;
    inspect_output(&full_out, o.mode ? "--full-output" : "--output", o.full ? o_full : NULL);
    inspect_output(&samp_out, "--output", o.mode ? o_sampled : NULL);
    check_output(&full_out, exe, o.force);
    check_output(&samp_out, exe, o.force);
    /* the second trace would replace the first one (or fail to be created) */
    if (same_output(&samp_out, &full_out))
        die(EXIT_USAGE, "--output %s and --full-output %s: the same file; the two traces need "
                        "two files", samp_out.name, full_out.name);
    char *output = prepare_output(&full_out);
    char *soutput = prepare_output(&samp_out);
    free(full_out.canon);
    free(samp_out.canon);

    {
        /* fail before the run rather than after it: the runtime can only warn */
        check_dir(output, o_full);
        check_dir(soutput, o_sampled);
    }

    char *command = pes_cmdline_quote(app_argc, app);
    if (!command)
        die(1, "out of memory");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die(1, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (o.full) {
            char *out = output;
            if (!out) {
                char *rel = default_output(app[0], getpid(), "full");   /* the app's pid: it is execed */
                out = rel ? absolute(rel) : NULL;
            }
            if (!out)
                _exit(127);
            setenv(PES_ENV_FULL_OUTPUT, out, 1);
        } else {
            unsetenv(PES_ENV_FULL_OUTPUT);
        }
        if (o.mode) {
            char *out = soutput;
            if (!out) {
                char *rel = default_output(app[0], getpid(), o.mode);
                out = rel ? absolute(rel) : NULL;
            }
            if (!out)
                _exit(127);
            setenv(PES_ENV_SAMPLE_OUTPUT, out, 1);
            setenv(PES_ENV_MODE, o.mode, 1);
        } else {
            unsetenv(PES_ENV_SAMPLE_OUTPUT);
            unsetenv(PES_ENV_MODE);
        }
        set_or_unset(PES_ENV_BACKEND, backend);
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
        set_or_unset(PES_ENV_PERIOD_LOAD, o.period_load);
        set_or_unset(PES_ENV_PERIOD_STORE, o.period_store);
        set_or_unset(PES_ENV_GRANULARITY, o.granularity);
        set_or_unset(PES_ENV_SOCKETS, o.sockets);
        set_or_unset(PES_ENV_DEBUG_REGISTERS, o.debug_registers);
        set_or_unset(PES_ENV_SEED, o.seed);
        set_or_unset(PES_ENV_SAMPLES, o.samples);
        setenv(PES_ENV_COMMAND, command, 1);
        unsetenv(PES_ENV_OVERWRITE);
        set_or_unset(PES_ENV_TIME_INTERVAL, o.time_interval);
        set_or_unset(PES_ENV_BUFFER_RECORDS, o.buffer_records);
        set_or_unset(PES_ENV_ZSTD_LEVEL, o.zstd_level);
        set_or_unset(PES_ENV_WRITERS, o.writers);
        set_or_unset(PES_ENV_QUIET, o.quiet ? "1" : NULL);
        set_or_unset(PES_ENV_ROI, o.no_roi ? "0" : NULL);
        set_or_unset(PES_ENV_HEAP, o.no_heap ? "0" : NULL);
        set_or_unset(PES_ENV_SKIP, o.skip);
        set_or_unset(PES_ENV_MAX_ACCESSES, o.max_accesses);
        execv(exe, app);
        fprintf(stderr, "pes-collect: %s: %s\n", app[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    /* like time(1): the terminal's ^C / ^\ reach the program; we wait for it */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTERM, forward);
    signal(SIGHUP, forward);

    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            die(1, "waitpid: %s", strerror(errno));
    }
    /* name the trace as the user would type it (relative to our unchanged cwd) */
    /* a script that ran no instrumented program: said even with -q (nothing
     * was recorded, which -q does not hide) */
    const char *via = script ? app[0] : NULL;
    if (o.full) {
        char *shown = o_full ? strdup(o_full) : default_output(app[0], pid, "full");
        if (shown && (!o.quiet || (via && access(shown, F_OK) != 0)))
            summary(shown, via);
        free(shown);
    }
    if (o.mode) {
        char *shown = o_sampled ? strdup(o_sampled) : default_output(app[0], pid, o.mode);
        if (shown && (!o.quiet || (via && access(shown, F_OK) != 0)))
            summary(shown, via);
        free(shown);
    }
    free(output);
    free(soutput);
    free(preload);
    free(command);
    free(exe);

    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fflush(NULL);
        /* die of the same signal (like env/time), without a core of our own */
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        return 128 + sig;
    }
    return 1;
}
