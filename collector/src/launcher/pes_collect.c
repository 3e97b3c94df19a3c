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

#include "backend.h"
#include "config.h"
#include "pes/cli.h"
#include "pes/rt_abi.h"
#include "pes/settings.h"
#include "pes/trace.h"

#ifndef PES_VERSION
#define PES_VERSION "unknown"
#endif

#define EXIT_USAGE 2

/* What the flags ask for. The collector settings (pes/settings.h) go into
 * `set` and, through their PES_* variables, to the runtime; the rest is the
 * launcher's own. */
struct options {
    struct pes_collect_settings set;
    int gave[64]; /* per pes_settings row: a flag set it (exported) */
    int full;
    const char *mode;         /* --mode as given; NULL = no sampling */
    const char *backend;      /* --backend: a backend's name; NULL = auto */
    const char *target_error; /* --target-error E: sets samples_target */
    const char *full_output;
    int list_backends;
    const char *output;
    int force;
    /* a sampling-only flag given ("period"; the first in --help order), refused without --mode */
    const char *sampling_flag;
};

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

static void usage_message(const char *line)
{
    fprintf(stderr, "pes-collect: %s\n", line);
}

static void give(struct options *o, const char *setting)
{
    o->gave[pes_settings_find(setting) - pes_settings] = 1;
}

static int gave(const struct options *o, const char *setting)
{
    return o->gave[pes_settings_find(setting) - pes_settings];
}

/* --target-error E -> --samples N. A share p of a histogram estimated from
 * n outcomes has a 90 % half-width of about z sqrt(p (1 - p) / n), widest at
 * p = 1/2: n = z^2 / (4 E^2) bounds every bin of every histogram. Weighted
 * outcomes (--samples mixes periods) have a smaller effective n; the report's
 * intervals say what was reached. */
static uint64_t samples_for_error(const char *v)
{
    char *end;
    errno = 0;
    double e = strtod(v, &end);
    if (errno || end == v || *end || !(e > 0 && e < 0.5))
        die(EXIT_USAGE,
            "--target-error: expected a share error between 0 and 0.5 (e.g. 0.05), got '%s'", v);
    const double z90 = 1.6448536269514722;
    double n = ceil(z90 * z90 / (4 * e * e));
    if (n > UINT32_MAX)
        die(EXIT_USAGE, "--target-error: %s needs %.0f outcomes per thread (at most %u)", v, n,
            UINT32_MAX);
    return (uint64_t)n;
}

/* --period N | load=N,store=M (either part may be left out: that kind keeps
 * the default); the values go through the period_load / period_store rows. */
static int parse_period(const char *v, void *opts)
{
    struct options *o = opts;
    const struct pes_setting *load = pes_settings_find("period_load"),
                             *store = pes_settings_find("period_store");
    uint64_t n;
    if (pes_parse_u64(v, 10, &n) == 0 && n >= 1 && n <= load->max) {
        o->set.period_load = o->set.period_store = n;
        give(o, "period_load");
        give(o, "period_store");
        return 0;
    }
    char *copy = strdup(v);
    if (!copy)
        die(1, "out of memory");
    int bad = 0;
    for (char *save = NULL, *part = strtok_r(copy, ",", &save); part && !bad;
         part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        const struct pes_setting *row = NULL;
        if (eq && (size_t)(eq - part) == 4 && strncmp(part, "load", 4) == 0)
            row = load;
        else if (eq && (size_t)(eq - part) == 5 && strncmp(part, "store", 5) == 0)
            row = store;
        bad = !row || pes_setting_parse(row, PES_SETTING_FROM_ENV, eq + 1, &o->set, NULL) < 0;
        if (!bad)
            give(o, row->name);
    }
    free(copy);
    if (bad)
        die(EXIT_USAGE,
            "--period: expected N or load=N,store=M (N from 1 to %llu, 0 = not sampled), got '%s'",
            (unsigned long long)load->max, v);
    if (gave(o, "period_load") && gave(o, "period_store") && !o->set.period_load &&
        !o->set.period_store)
        die(EXIT_USAGE, "--period: '%s' samples nothing", v);
    return 0;
}

/* --backend auto, or a backend of the table that is not a stub */
static int parse_backend(const char *v, void *opts)
{
    if (strcmp(v, "auto") == 0)
        return 0;
    if (!pes_rt_backend_find(pes_rt_backends, v)) {
        char choices[128];
        pes_rt_backend_choices(pes_rt_backends, "auto, ", choices, sizeof choices);
        die(EXIT_USAGE, "--backend: expected %s, got '%s'", choices, v);
    }
    ((struct options *)opts)->backend = v;
    return 0;
}

static void backend_help(char *buf, size_t size)
{
    pes_rt_backend_choices(pes_rt_backends, "auto (default), ", buf, size);
}

/* --mode: one run records one sampled trace; the last --mode would silently win */
static int check_mode(const char *v, void *opts)
{
    struct options *o = opts;
    if (o->mode && strcmp(o->mode, v))
        die(EXIT_USAGE, "--mode: given twice ('%s' and '%s'); a run records one mode", o->mode, v);
    o->mode = v;
    return 0;
}

/* Flags that only make sense with --mode (besides the sampling settings). */
enum { SAMPLING_ONLY = 1 };

#define FIELD(f)      offsetof(struct options, f)
#define SETTING(name) {.kind = PES_CLI_SETTING, .setting = name, .field = FIELD(set)}
/* In --help order. A setting's flag, value, bounds and help are its row in
 * trace/src/settings.c. */
static const struct pes_cli_opt opts[] = {
    {.name = "full",
     .help = "record a full trace (every access, basic blocks)",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(full)},
    {.kind = PES_CLI_SETTING, .setting = "mode", .field = FIELD(set), .parse = check_mode},
    {.name = "period",
     .arg = "N",
     .kind = PES_CLI_FN,
     .parse = parse_period,
     .flags = SAMPLING_ONLY,
     .setting = "period_load",
     .help = "accesses between samples (default {default}), or load=N,store=M\n"
             "(0 = that kind is not sampled); randomised by +-1/8"},
    SETTING("samples_target"),
    SETTING("stacks"),
    {.name = "target-error",
     .arg = "E",
     .kind = PES_CLI_STRING,
     .field = FIELD(target_error),
     .flags = SAMPLING_ONLY,
     .help = "--samples sized for every histogram share within +-E\n"
             "(90 %, 0 < E < 0.5): N = 1.645^2 / (4 E^2)"},
    {.name = "backend",
     .arg = "B",
     .kind = PES_CLI_FN,
     .parse = parse_backend,
     .flags = SAMPLING_ONLY,
     .help_fn = backend_help},
    SETTING("spatial"),
    SETTING("sockets"),
    SETTING("debug_registers"),
    SETTING("seed"),
    {.name = "full-output",
     .arg = "FILE",
     .kind = PES_CLI_PATH,
     .field = FIELD(full_output),
     .help = "full trace when combined with --mode\n(default: PROGRAM.PID.full.zst here)"},
    {.name = "list-backends",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(list_backends),
     .help = "say which sampling backends work here, and why not"},
    {.name = "output",
     .short_name = 'o',
     .arg = "FILE",
     .kind = PES_CLI_PATH,
     .field = FIELD(output),
     .help = "trace file (default: PROGRAM.PID.full.zst, or\nPROGRAM.PID.MODE.zst with --mode)"},
    {.name = "force",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(force),
     .help = "replace FILE if it exists (a regular file that is not\n"
             "PROGRAM; see docs/collector.md, Output files)"},
    SETTING("time_interval"),
    SETTING("buffer_records"),
    SETTING("zstd_level"),
    SETTING("writers"),
    SETTING("roi"),
    SETTING("heap"),
    SETTING("descriptors"),
    SETTING("skip"),
    SETTING("max_accesses"),
    SETTING("quiet"),
    {.name = "help", .short_name = 'h', .kind = PES_CLI_HELP, .help = "this help"},
    {.name = "version", .kind = PES_CLI_VERSION, .help = "print the version"},
};
#undef SETTING
#undef FIELD
enum { N_OPTS = sizeof opts / sizeof opts[0] };

static const struct pes_cli cli = {
    .prog = "pes-collect",
    .version = PES_VERSION,
    .usage_head =
        "Usage: pes-collect --full [options] [--] PROGRAM [ARGS...]\n"
        "   or: pes-collect --mode MODE [--full] [options] [--] PROGRAM [ARGS...]\n"
        "   or: pes-collect --list-backends\n"
        "\n"
        "Runs PROGRAM (built with pes-clang) and records a trace of its memory accesses.\n"
        "\n",
    .usage_tail = "\nExits with PROGRAM's exit status (re-raises its terminating signal).\n",
    .opts = opts,
    .n_opts = N_OPTS,
    .help_column = 25,
    .stop_at_operand = 1,
    .message = usage_message,
};

/* The flags into *o; returns the index of PROGRAM (exits after --help,
 * --version or a usage error). */
static int parse_options(int argc, char **argv, struct options *o)
{
    unsigned seen[N_OPTS] = {0};
    pes_settings_defaults(&o->set);
    if (pes_settings_count > sizeof o->gave / sizeof o->gave[0])
        die(1, "more settings than the launcher can track");
    int first = pes_cli_parse(&cli, argc, argv, o, seen);
    if (first == 0)
        exit(0);
    if (first < 0)
        exit(EXIT_USAGE);
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct pes_setting *s =
            opts[i].kind == PES_CLI_SETTING ? pes_settings_find(opts[i].setting) : NULL;
        if (!seen[i])
            continue;
        if (s)
            give(o, s->name);
        if (!o->sampling_flag &&
            ((opts[i].flags & SAMPLING_ONLY) ||
             (s && (s->flags & PES_SETTING_SAMPLING) && strcmp(s->name, "mode") != 0)))
            o->sampling_flag = s ? s->flag : opts[i].name;
    }
    if (!o->mode)
        o->set.mode = PES_MODE_FULL;
    return first;
}

/* In the child: the settings the flags (and the launcher: outputs, backend,
 * command) gave become PES_* variables; every other one is removed, since a
 * value left over in the caller's environment would otherwise apply. */
static void export_settings(const struct options *o)
{
    for (size_t i = 0; i < pes_settings_count; i++) {
        const struct pes_setting *row = &pes_settings[i];
        if (!row->env || (row->flags & PES_SETTING_TEST_HOOK)) /* a test hook passes through */
            continue;
        if (!o->gave[i]) {
            unsetenv(row->env);
            continue;
        }
        int len = pes_setting_format(row, &o->set, NULL, 0); /* PES_COMMAND has no bound */
        char *value = len >= 0 ? malloc((size_t)len + 1) : NULL;
        if (!value || pes_setting_format(row, &o->set, value, (size_t)len + 1) != len ||
            setenv(row->env, value, 1) < 0)
            die(1, "%s: cannot set it", row->env);
        free(value);
    }
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
    for (const char *p = path;;) {
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

/* What the runtime left out (the header's roi, skip and max_accesses
 * settings): "; region of interest only, first N accesses per thread
 * skipped, at most M per thread", or "". */
static void kept_note(const char *config, char *buf, size_t size)
{
    struct pes_collect_settings s;
    buf[0] = 0;
    if (pes_settings_from_header(&s, config, NULL) < 0)
        return;
    int used = 0;
    if (s.roi_state == PES_ROI_MARKERS)
        used = snprintf(buf, size, "; region of interest only");
    if (s.skip && used >= 0 && (size_t)used < size)
        used +=
            snprintf(buf + used, size - (size_t)used, "%sfirst %llu accesses per thread skipped",
                     used ? ", " : "; ", (unsigned long long)s.skip);
    if (s.max_accesses && used >= 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, "%sat most %llu accesses per thread",
                 used ? ", " : "; ", (unsigned long long)s.max_accesses);
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
            rc < 0        ? " (unreadable block)"
            : have_footer ? ""
                          : " (no footer: the run ended abnormally)",
            note);
}

/* One line from the trace's block index and footer. `script`: the command was
 * a script, which may not have run a program built with pes-clang. */
static void summary(const char *path, const char *script)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (script)
            fprintf(stderr,
                    "pes-collect: no trace was written to %s: no program built with "
                    "pes-clang ran under the script %s\n",
                    path, script);
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
    const char *flag; /* as the help names it: --output, --full-output */
    const char *name; /* as given, NULL for the default name */
    int present;      /* lstat: the name exists (--force removes it) */
    int exists;       /* stat: what it names exists (symlinks followed) */
    struct stat st;
    char *canon; /* realpath of the parent + "/" + last component */
};

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a fifo"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
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
    return out; /* NULL if the directory is missing: check_dir reports it */
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
        die(EXIT_USAGE, "%s %s: is the program being run (%s); refusing to replace it", out->flag,
            out->name, exe);
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

/* The backends in the order auto tries them: those that sample in hardware
 * first (they also work on programs not built with pes-clang), then those
 * that need the program's own counts. The k-th, NULL past the end. */
static const struct pes_rt_backend *auto_order(size_t k)
{
    for (int program_counts = 0; program_counts < 2; program_counts++)
        for (const struct pes_rt_backend *const *b = pes_rt_backends; *b; b++)
            if ((*b)->program_counts == program_counts && k-- == 0)
                return *b;
    return NULL;
}

/* --list-backends: what works on this machine, and why not. */
static int list_backends(void)
{
    char why[512];
    const struct pes_rt_backend *b;
    for (size_t k = 0; (b = auto_order(k)) != NULL; k++) {
        int ok = b->probe(why, sizeof why) == 0;
        printf("%-5s %s: %s\n", b->name, ok ? "available" : "unavailable", why);
    }
    int wp = pes_pmu_probe_watchpoints(why, sizeof why);
    printf("watchpoints (reuse, reuse-shared, comm): %s\n", why);
    int refused = 0;
    if (wp == 0 && pes_pmu_probe_watch_rearm(&refused, why, sizeof why) >= 0)
        printf("watchpoints: %s\n", why);
    return 0;
}

/* --backend: auto picks a hardware backend when one works, else the
 * program-counted one (soft) if the program is built with pes-clang, else
 * says what the options are. */
static const struct pes_rt_backend *choose_backend(const struct options *o, const char *prog,
                                                   int instrumented)
{
    const char *name = o->backend ? o->backend : "auto";
    char why[512], first_why[512] = "";
    const struct pes_rt_backend *b = pes_rt_backend_find(pes_rt_backends, name);
    if (b && b->program_counts) {
        if (!instrumented)
            die(EXIT_USAGE,
                "--backend %s: %s was not built with pes-clang, so it has no "
                "load/store counters to sample; rebuild it with pes-clang",
                name, prog);
        return b;
    }
    if (b) {
        if (b->probe(why, sizeof why) != 0)
            die(EXIT_USAGE, "--backend %s: unavailable: %s (pes-collect --list-backends)", name,
                why);
        return b;
    }
    for (size_t k = 0; (b = auto_order(k)) != NULL; k++) {
        if (b->program_counts) {
            if (instrumented)
                return b;
            continue;
        }
        if (b->probe(why, sizeof why) == 0)
            return b;
        if (!first_why[0])
            snprintf(first_why, sizeof first_why, "%s", why);
    }
    /* name the first hardware backend's reason: without any PMU it is the
     * generic one (cycles) */
    die(EXIT_USAGE,
        "%s was not built with pes-clang and this machine has no usable PMU "
        "(%s): rebuild it with pes-clang to use the soft sampler, or run on "
        "a machine with PEBS or IBS",
        prog, first_why);
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
    if ((gave(&o, "skip") || gave(&o, "max_accesses")) && !o.full)
        die(EXIT_USAGE, "--%s: only with --full (a sampled trace keeps no access records)",
            pes_settings_find(gave(&o, "skip") ? "skip" : "max_accesses")->flag);
    if (gave(&o, "spatial") && o.set.mode != PES_MODE_REUSE && o.set.mode != PES_MODE_REUSE_SHARED)
        die(EXIT_USAGE, "--granularity: only with --mode reuse or reuse-shared, not %s", o.mode);
    if (gave(&o, "sockets") && o.set.mode != PES_MODE_REUSE_SHARED)
        die(EXIT_USAGE, "--sockets: only with --mode reuse-shared, not %s", o.mode);
    if (o.target_error) {
        if (gave(&o, "samples_target"))
            die(EXIT_USAGE,
                "--target-error: --samples is given too; both set the sample count, give one");
        o.set.samples_target = samples_for_error(o.target_error);
        give(&o, "samples_target");
        if (!o.set.quiet)
            fprintf(stderr, "pes-collect: --target-error %s: --samples %llu per thread\n",
                    o.target_error, (unsigned long long)o.set.samples_target);
    }
    if (gave(&o, "debug_registers") && o.set.mode == PES_MODE_SAMPLES)
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
        die(EXIT_USAGE,
            "%s is not an ELF executable or a script; pes-collect needs a program "
            "built with pes-clang",
            app[0]);
    if (script)
        inst = 1;
    const struct pes_rt_backend *backend = o.mode ? choose_backend(&o, app[0], inst) : NULL;
    char *preload = NULL;
    if (backend && !backend->program_counts && inst == 0) {
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
        die(EXIT_USAGE,
            "%s was not built with pes-clang: it has no pes instrumentation to record a "
            "full trace; rebuild it with pes-clang, or use a sampling backend (not "
            "available on this machine)",
            app[0]);

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
        die(EXIT_USAGE,
            "--output %s and --full-output %s: the same file; the two traces need "
            "two files",
            samp_out.name, full_out.name);
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
                char *rel =
                    default_output(app[0], getpid(), "full"); /* the app's pid: it is execed */
                out = rel ? absolute(rel) : NULL;
            }
            if (!out)
                _exit(127);
            o.set.full_output = out;
            give(&o, "full_output");
        }
        if (o.mode) {
            char *out = soutput;
            if (!out) {
                char *rel = default_output(app[0], getpid(), o.mode);
                out = rel ? absolute(rel) : NULL;
            }
            if (!out)
                _exit(127);
            o.set.sample_output = out;
            give(&o, "sample_output");
            pes_setting_parse(pes_settings_find("backend"), PES_SETTING_FROM_ENV, backend->name,
                              &o.set, NULL);
            give(&o, "backend");
        }
        o.set.command = command;
        give(&o, "command");
        /* PES_OVERWRITE is never set: --force removed the file (see check_output) */
        export_settings(&o);
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
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
        if (shown && (!o.set.quiet || (via && access(shown, F_OK) != 0)))
            summary(shown, via);
        free(shown);
    }
    if (o.mode) {
        char *shown = o_sampled ? strdup(o_sampled) : default_output(app[0], pid, o.mode);
        if (shown && (!o.set.quiet || (via && access(shown, F_OK) != 0)))
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
