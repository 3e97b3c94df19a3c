/*
 * pes-dump — prints a pes trace as text (like `perf script`): the header, the
 * module tables, the threads, then every record of every block in file order.
 * It is the ground truth for what a trace contains (loop descriptor groups
 * as stored, or with --expand as the records they stand for); docs/trace-format.md
 * documents the output (text and --format json) and the exit status:
 *   0  the whole trace was printed (a truncated trace too, with a warning)
 *   1  the trace is unreadable or corrupt (one line: pes-dump: FILE: offset N: ...)
 *   2  bad command line
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pes/cli.h"
#include "pes/progress.h"
#include "pes/trace.h"
#include "utf8.h"

enum fmt { FMT_TEXT, FMT_JSON };

struct opts {
    const char *path;
    int header_only, tables, stats;
    int expand;     /* loop descriptor groups as the records they stand for */
    int64_t thread; /* -1 = all */
    uint64_t limit; /* 0 = no limit */
    int fmt;        /* enum fmt */
};

struct dump {
    struct opts o;
    struct pes_trace_reader *r;
    uint64_t printed; /* records/events printed (for --limit) */
};

/* ---------------------------------------------------------------- terminal safety */

/* s (from the trace or the command line) with what a terminal could act on
 * escaped: pes_escape_text_tmp (valid for up to 4 per printf). */
#define safe pes_escape_text_tmp

/* One line on stderr, "pes-dump: " and the message, escaped as a whole: file
 * names and strings in messages come from the command line and the trace. */
static void message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void message(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pes-dump: %s\n", safe(line));
}

/* --thread N: a thread index (the rest of the code takes -1 as all) */
static int parse_thread(const char *v, void *opts)
{
    uint64_t n;
    if (pes_parse_u64(v, 10, &n) < 0 || n > UINT32_MAX)
        return -1;
    ((struct opts *)opts)->thread = (int64_t)n;
    return 0;
}

static const char *const fmt_names[] = {"text", "json", NULL};
static const int fmt_values[] = {FMT_TEXT, FMT_JSON};

#define FIELD(f) offsetof(struct opts, f)
static const struct pes_cli_opt opt_rows[] = {
    {.name = "header-only",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(header_only),
     .help = "print the header and stop"},
    {.name = "tables",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(tables),
     .help = "print header, modules and threads, no records"},
    {.name = "thread",
     .arg = "N",
     .kind = PES_CLI_FN,
     .parse = parse_thread,
     .expected = "a non-negative integer",
     .help = "only records/events of thread index N"},
    {.name = "limit",
     .arg = "N",
     .kind = PES_CLI_U64,
     .field = FIELD(limit),
     .max = UINT64_MAX,
     .expected = "a non-negative integer",
     .help = "stop after N records/events"},
    {.name = "expand",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(expand),
     .help = "loop descriptors as the records they stand for"},
    {.name = "stats",
     .kind = PES_CLI_SWITCH,
     .field = FIELD(stats),
     .help = "per block type: blocks, records, compressed bytes"},
    {.name = "format",
     .arg = "text|json",
     .kind = PES_CLI_CHOICE,
     .field = FIELD(fmt),
     .names = fmt_names,
     .values = fmt_values,
     .expected = "text or json",
     .help = "json: one object per line (docs/trace-format.md)"},
    {.name = "help", .short_name = 'h', .kind = PES_CLI_HELP, .help = "this text"},
    {.name = "version", .kind = PES_CLI_VERSION, .help = "print the version"},
};
#undef FIELD

static void usage_message(const char *line)
{
    message("%s", line);
}

static const struct pes_cli cli = {
    .prog = "pes-dump",
    .version = PES_VERSION,
    .usage_head = "Usage: pes-dump [options] TRACE\n"
                  "\n"
                  "Prints a pes trace as text: the header, the module tables, the threads,\n"
                  "then every record or event of every block in file order. Loop descriptors\n"
                  "are printed as stored (one group, its templates and steps) unless --expand.\n"
                  "\n",
    .usage_tail = "\n"
                  "Exit status: 0 when the whole trace was printed (a truncated one too, with a\n"
                  "warning), 1 when it is unreadable or corrupt, 2 for a bad command line.\n",
    .opts = opt_rows,
    .n_opts = sizeof opt_rows / sizeof opt_rows[0],
    .help_column = 23,
    .message = usage_message,
};

/* As pes-collect and pes-replay parse: --opt value or --opt=value, options
 * and the trace in any order, -- ends the options. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->thread = -1;
    int first = pes_cli_parse(&cli, argc, argv, o, NULL);
    if (first == 0)
        exit(0);
    if (first < 0)
        return -1;
    for (int i = first; i < argc; i++) {
        if (o->path) {
            message("more than one trace given ('%s', '%s')", o->path, argv[i]);
            return -1;
        }
        o->path = argv[i];
    }
    if (!o->path) {
        message("no trace given");
        pes_cli_usage(&cli, stderr);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- json helpers */

/* A string from the trace as JSON, through jansson after the bytes that are
 * not UTF-8 became U+FFFD (JSON is UTF-8; a command line need not be). The
 * numbers are printed as they are: u64 values that jansson's int64 could not hold. */
static void json_str(const char *s)
{
    char *fixed = pes_report_utf8(s);
    json_t *j = fixed ? json_string(fixed) : NULL;
    if (!j || json_dumpf(j, stdout, JSON_ENCODE_ANY) < 0)
        pes_json_string(stdout, s); /* without memory: escaped, if not repaired */
    json_decref(j);
    free(fixed);
}

static const char *rw_of(uint8_t kind)
{
    int r = pes_kind_reads(kind), w = pes_kind_writes(kind);
    return r && w ? "RW" : r ? "R" : w ? "W" : "?";
}

static const char *kind_str(uint32_t kind)
{
    return kind == PES_TRACE_FULL ? "full" : kind == PES_TRACE_SAMPLED ? "sampled" : "unknown";
}

/* "a,b" for the set bits of f, named by names[bit]; "-" when none is set. */
static void flags_str(uint8_t f, const char *const *names, int n_names, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < n_names; i++)
        if (f & (1u << i)) {
            if (buf[0])
                strncat(buf, ",", n - strlen(buf) - 1);
            strncat(buf, names[i], n - strlen(buf) - 1);
        }
    if (!buf[0])
        snprintf(buf, n, "-");
}

static void site_flags_str(uint8_t f, char *buf, size_t n)
{
    static const char *const names[] = {"shared", "vector", "masked", "volatile", "atomic"};
    flags_str(f, names, 5, buf, n);
}

static void event_flags_str(uint8_t f, char *buf, size_t n)
{
    static const char *const names[] = {"write",        "trap_write",   "spatial",
                                        "shared_cache", "true_sharing", "false_sharing",
                                        "heap_block"};
    flags_str(f, names, 7, buf, n);
}

/* ---------------------------------------------------------------- header/tables */

static void print_header(const struct dump *d, const struct pes_trace_info *in)
{
    if (d->o.fmt == FMT_JSON) {
        printf("{\"type\":\"header\",\"version\":%u,\"kind\":\"%s\",\"command\":", in->version,
               kind_str(in->kind));
        json_str(in->command);
        printf(",\"hostname\":");
        json_str(in->hostname);
        printf(",\"cpu_model\":");
        json_str(in->cpu_model);
        printf(",\"n_cpus\":%u,\"n_sockets\":%u,\"caches\":[", in->n_cpus, in->n_sockets);
        for (uint32_t i = 0; i < in->n_cache_levels; i++)
            printf("%s{\"level\":%u,\"type\":\"%c\",\"size\":%" PRIu64
                   ",\"ways\":%u,\"line_size\":%u,\"shared_by\":%u}",
                   i ? "," : "", in->caches[i].level,
                   in->caches[i].type >= 0x20 && in->caches[i].type < 0x7f &&
                           in->caches[i].type != '"' && in->caches[i].type != '\\'
                       ? in->caches[i].type
                       : '?',
                   in->caches[i].size, in->caches[i].ways, in->caches[i].line_size,
                   in->caches[i].shared_by);
        printf("],\"ticks_per_second\":%" PRIu64 ",\"start_ticks\":%" PRIu64 ",\"pid\":%" PRIu64
               ",\"config\":",
               in->ticks_per_second, in->start_ticks, in->pid);
        json_str(in->config);
        printf("}\n");
        return;
    }
    printf("# pes trace %s\n", safe(d->o.path));
    printf("version   %u\n", in->version);
    printf("kind      %s\n", kind_str(in->kind));
    printf("command   %s\n", safe(in->command));
    printf("host      %s\n", safe(in->hostname));
    printf("cpu       %s (%u CPUs, %u sockets)\n", safe(in->cpu_model), in->n_cpus, in->n_sockets);
    for (uint32_t i = 0; i < in->n_cache_levels; i++) {
        const struct pes_cache_level *c = &in->caches[i];
        printf("cache     L%u%c %" PRIu64 " B, %u-way, %u B lines, shared by %u CPUs\n", c->level,
               c->type >= 0x20 && c->type < 0x7f ? c->type : '?', c->size, c->ways, c->line_size,
               c->shared_by);
    }
    printf("ticks/s   %" PRIu64 "\n", in->ticks_per_second);
    printf("start     %" PRIu64 "\n", in->start_ticks);
    printf("pid       %" PRIu64 "\n", in->pid);
    const char *c = in->config ? in->config : "";
    if (!*c)
        printf("config    -\n");
    while (*c) {
        const char *nl = strchr(c, '\n');
        size_t len = nl ? (size_t)(nl - c) : strlen(c);
        char *line = strndup(c, len);
        printf("config    %s\n", line ? safe(line) : "(out of memory)");
        free(line);
        c += len + (nl ? 1 : 0);
    }
}

/* Per-class counts of a block: JSON, every class; text, the nonzero ones or "-". */
static void json_op_counts(const uint32_t *v)
{
    for (int k = 0; k < PES_OP_COUNT; k++)
        printf("%s\"%s\":%u", k ? "," : "{", pes_op_class_name(k), v[k]);
    printf("}");
}

static void text_op_counts(const uint32_t *v)
{
    int any = 0;
    for (int k = 0; k < PES_OP_COUNT; k++)
        if (v[k]) {
            printf(" %s=%u", pes_op_class_name(k), v[k]);
            any = 1;
        }
    if (!any)
        printf(" -");
}

static void print_module(const struct dump *d, const struct pes_module *m)
{
    uint64_t last = (uint64_t)m->id_base + m->n_sites + m->n_bbs;
    if (d->o.fmt == FMT_JSON) {
        printf("{\"type\":\"module\",\"name\":");
        json_str(m->name);
        printf(",\"id_base\":%u,\"n_sites\":%u,\"n_bbs\":%u}\n", m->id_base, m->n_sites, m->n_bbs);
    } else {
        printf("module %s ids %u..%" PRIu64 " (%u sites, %u basic blocks)\n", safe(m->name),
               m->id_base, last ? last - 1 : 0, m->n_sites, m->n_bbs);
    }
    char fl[64];
    for (uint32_t i = 0; i < m->n_sites; i++) {
        const struct pes_site *s = &m->sites[i];
        site_flags_str(s->flags, fl, sizeof fl);
        if (d->o.fmt == FMT_JSON) {
            printf("{\"type\":\"site\",\"id\":%u,\"bb\":%u,\"kind\":\"%s\",\"flags\":\"%s\","
                   "\"size\":%u,\"file\":",
                   s->id, s->bb, pes_access_kind_name(s->kind), fl, s->size);
            json_str(s->file);
            printf(",\"line\":%u,\"column\":%u,\"function\":", s->line, s->column);
            json_str(s->function);
            printf("}\n");
        } else {
            printf("  site %-6u %s:%u:%u  %s  %s  size %u  bb %u  flags %s\n", s->id,
                   *s->file ? safe(s->file) : "?", s->line, s->column,
                   *s->function ? safe(s->function) : "?", pes_access_kind_name(s->kind), s->size,
                   s->bb, fl);
        }
    }
    for (uint32_t i = 0; i < m->n_bbs; i++) {
        const struct pes_bb *b = &m->bbs[i];
        if (d->o.fmt == FMT_JSON) {
            printf("{\"type\":\"bb\",\"id\":%u,\"function\":", b->id);
            json_str(b->function);
            printf(",\"label\":");
            json_str(b->label);
            printf(",\"n_sites\":%u,\"parallel\":%s,\"ops\":", b->n_sites,
                   b->flags & PES_BB_PARALLEL ? "true" : "false");
            json_op_counts(b->ops);
            if (b->flags & PES_BB_MODEL_FACTS) {
                printf(",\"forks\":%u,\"barriers\":%u,\"instrs\":", b->forks, b->barriers);
                json_op_counts(b->instrs);
                printf(",\"chain\":");
                json_op_counts(b->chain);
            }
            printf("}\n");
        } else {
            printf("  bb   %-6u %s:%s  sites %u%s  ops", b->id, safe(b->function), safe(b->label),
                   b->n_sites, b->flags & PES_BB_PARALLEL ? "  parallel" : "");
            text_op_counts(b->ops);
            /* version 4: what the runtime model needs beyond op counts */
            if (b->flags & PES_BB_MODEL_FACTS) {
                printf("  forks %u  barriers %u  instrs", b->forks, b->barriers);
                text_op_counts(b->instrs);
                printf("  chain");
                text_op_counts(b->chain);
            }
            printf("\n");
        }
    }
}

static void print_thread(const struct dump *d, const struct pes_thread *t)
{
    if (d->o.fmt == FMT_JSON) {
        printf("{\"type\":\"thread\",\"index\":%u,\"tid\":%" PRIu64 ",\"parent\":", t->index,
               t->tid);
        if (t->parent == UINT32_MAX)
            printf("null");
        else
            printf("%u", t->parent);
        printf(",\"cpu\":%d,\"socket\":%d,\"start_ticks\":%" PRIu64 "}\n", t->cpu, t->socket,
               t->start_ticks);
        return;
    }
    printf("thread T%u tid %" PRIu64 " parent ", t->index, t->tid);
    if (t->parent == UINT32_MAX)
        printf("-");
    else
        printf("T%u", t->parent);
    printf(" cpu %d socket %d start %" PRIu64 "\n", t->cpu, t->socket, t->start_ticks);
}

static void print_alloc_sites(const struct dump *d, const struct pes_alloc_site *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d->o.fmt == FMT_JSON) {
            printf("{\"type\":\"alloc_site\",\"id\":%u,\"kind\":\"%s\",\"ips\":[", s[i].id,
                   pes_alloc_kind_name(s[i].kind));
            for (uint32_t k = 0; k < s[i].depth; k++)
                printf("%s\"0x%" PRIx64 "\"", k ? "," : "", s[i].ips[k]);
            printf("]}\n");
        } else {
            printf("alloc_site %-6u %-7s", s[i].id, pes_alloc_kind_name(s[i].kind));
            for (uint32_t k = 0; k < s[i].depth; k++)
                printf(" 0x%" PRIx64, s[i].ips[k]);
            putchar('\n');
        }
    }
}

/* ---------------------------------------------------------------- records */

/* ALLOC, ALLOC_SIZE and FREE records (docs/trace-format.md §3). */
static void print_alloc_record(const struct dump *d, uint32_t thread, const struct pes_record *rec)
{
    int json = d->o.fmt == FMT_JSON, stack = rec->extra == PES_ALLOC_SITE_STACK;
    if (rec->id == PES_ID_ALLOC) {
        const struct pes_alloc_site *s =
            stack ? NULL : pes_trace_reader_alloc_site(d->r, rec->extra);
        if (json) {
            printf("{\"type\":\"alloc\",\"thread\":%u,\"addr\":\"0x%" PRIx64 "\",\"site\":", thread,
                   rec->addr);
            if (stack)
                printf("null");
            else
                printf("%u", rec->extra);
            printf(",\"stack\":%s}\n", stack ? "true" : "false");
        } else if (stack) {
            printf("T%u alloc 0x%" PRIx64 " thread stack\n", thread, rec->addr);
        } else if (s) {
            printf("T%u alloc 0x%" PRIx64 " site %u (%s at 0x%" PRIx64 ")\n", thread, rec->addr,
                   rec->extra, pes_alloc_kind_name(s->kind), s->ips[0]);
        } else {
            printf("T%u alloc 0x%" PRIx64 " site %u (in no ALLOC_SITES block)\n", thread, rec->addr,
                   rec->extra);
        }
    } else if (rec->id == PES_ID_ALLOC_SIZE) {
        if (json)
            printf("{\"type\":\"alloc_size\",\"thread\":%u,\"size\":%" PRIu64 "}\n", thread,
                   rec->addr);
        else
            printf("T%u alloc_size %" PRIu64 "\n", thread, rec->addr);
    } else {
        if (json)
            printf("{\"type\":\"free\",\"thread\":%u,\"addr\":\"0x%" PRIx64 "\"}\n", thread,
                   rec->addr);
        else
            printf("T%u free 0x%" PRIx64 "\n", thread, rec->addr);
    }
}

/* CALL and RETURN records (pes/trace.h, "Call edges"): a CALL names its call
 * site, a RETURN only the stack pointer that pairs it with its CALL. */
static void print_call_record(const struct dump *d, uint32_t thread, const struct pes_record *rec)
{
    int json = d->o.fmt == FMT_JSON;
    if (rec->id == PES_ID_RETURN) {
        if (json)
            printf("{\"type\":\"return\",\"thread\":%u,\"sp\":\"0x%" PRIx64 "\"}\n", thread,
                   rec->addr);
        else
            printf("T%u return sp=0x%" PRIx64 "\n", thread, rec->addr);
        return;
    }
    const struct pes_site *s = pes_trace_reader_site(d->r, rec->extra);
    if (json) {
        printf("{\"type\":\"call\",\"thread\":%u,\"site\":%u,\"sp\":\"0x%" PRIx64 "\"}\n", thread,
               rec->extra, rec->addr);
    } else if (s && s->kind == PES_KIND_CALL) {
        printf("T%u call %s:%u %s sp=0x%" PRIx64 " (site %u)\n", thread,
               *s->file ? safe(s->file) : "?", s->line, *s->function ? safe(s->function) : "?",
               rec->addr, rec->extra);
    } else {
        printf("T%u call site %u (not a call site) sp=0x%" PRIx64 "\n", thread, rec->extra,
               rec->addr);
    }
}

static int limit_reached(const struct dump *d)
{
    return d->o.limit && d->printed >= d->o.limit;
}

/* The text of an access or a basic-block record after "T<thread> ", without
 * the newline (a loop descriptor's templates are printed with it too). */
static void print_access_text(const struct pes_site *s, const struct pes_record *rec)
{
    uint32_t size = s->size ? s->size : rec->extra;
    printf("access  0x%" PRIx64 " %u %s  %s:%u:%u (site %u)", rec->addr, size, rw_of(s->kind),
           *s->file ? safe(s->file) : "?", s->line, s->column, rec->id);
    if (s->kind == PES_KIND_GATHER || s->kind == PES_KIND_SCATTER)
        printf(" lane %u", rec->extra);
}

static void print_bb_text(const struct pes_bb *b, const struct pes_record *rec)
{
    printf("bb  %s:%s (bb %u)", safe(b->function), safe(b->label), rec->id);
}

static void print_record(struct dump *d, uint32_t thread, const struct pes_record *rec)
{
    const struct pes_site *s = pes_trace_reader_site(d->r, rec->id);
    const struct pes_bb *b = s ? NULL : pes_trace_reader_bb(d->r, rec->id);
    int json = d->o.fmt == FMT_JSON;
    if (s) {
        uint32_t size = s->size ? s->size : rec->extra;
        if (json) {
            printf("{\"type\":\"access\",\"thread\":%u,\"addr\":\"0x%" PRIx64
                   "\",\"size\":%u,\"rw\":\"%s\",\"site\":%u,\"extra\":%u}\n",
                   thread, rec->addr, size, rw_of(s->kind), rec->id, rec->extra);
        } else {
            printf("T%u ", thread);
            print_access_text(s, rec);
            putchar('\n');
        }
    } else if (b) {
        if (json) {
            printf("{\"type\":\"bb\",\"thread\":%u,\"bb\":%u}\n", thread, rec->id);
        } else {
            printf("T%u ", thread);
            print_bb_text(b, rec);
            putchar('\n');
        }
    } else if (rec->id == PES_ID_ALLOC || rec->id == PES_ID_ALLOC_SIZE || rec->id == PES_ID_FREE) {
        print_alloc_record(d, thread, rec);
    } else if (rec->id == PES_ID_CALL || rec->id == PES_ID_RETURN) {
        print_call_record(d, thread, rec);
    } else if (rec->id >= PES_ID_CONTROL_FIRST) {
        const char *name = rec->id == PES_ID_TIME           ? "time"
                           : rec->id == PES_ID_REGION_BEGIN ? "region_begin"
                           : rec->id == PES_ID_REGION_END   ? "region_end"
                           : rec->id == PES_ID_THREAD_END   ? "thread_end"
                                                            : NULL;
        if (json) {
            printf("{\"type\":\"%s\",\"thread\":%u,\"id\":%u,\"value\":%" PRIu64 "}\n",
                   name ? name : "control", thread, rec->id, rec->addr);
        } else if (!name) {
            printf("T%u control 0x%08x addr=0x%" PRIx64 " extra=%u\n", thread, rec->id, rec->addr,
                   rec->extra);
        } else if (rec->id == PES_ID_REGION_END) {
            printf("T%u %s\n", thread, name);
        } else {
            printf("T%u %s %" PRIu64 "\n", thread, name, rec->addr);
        }
    } else {
        if (json)
            printf("{\"type\":\"record\",\"thread\":%u,\"id\":%u,\"addr\":\"0x%" PRIx64
                   "\",\"extra\":%u}\n",
                   thread, rec->id, rec->addr, rec->extra);
        else
            printf("T%u record id=%u addr=0x%" PRIx64 " extra=%u (id in no module)\n", thread,
                   rec->id, rec->addr, rec->extra);
    }
    d->printed++;
}

/* A loop descriptor group as stored (docs/trace-format.md §3.2): g[0] the
 * LOOP record, then m templates and m steps, which the reader checked. */
/* A group as stored: its templates and steps (an irregular template says so),
 * then the addresses of a mixed group's irregular records in expansion order. */
static void print_loop(struct dump *d, uint32_t thread, const struct pes_record *g)
{
    uint32_t m = g->extra & 0xFFFFu, phase = g->extra >> 16;
    const struct pes_record *tpl = g + 1, *step = g + 1 + m, *addr = g + 1 + 2 * m;
    size_t k = pes_trace_loop_size(g) - 1 - 2 * (size_t)m;
    if (d->o.fmt == FMT_JSON) {
        printf("{\"type\":\"loop\",\"thread\":%u,\"records\":%" PRIu64
               ",\"per_iteration\":%u,\"phase\":%u,\"templates\":[",
               thread, g->addr, m, phase);
        for (uint32_t j = 0; j < m; j++) {
            if (step[j].extra == PES_LOOP_STEP_IRREGULAR)
                printf("%s{\"id\":%u,\"extra\":%u,\"irregular\":true}", j ? "," : "", tpl[j].id,
                       tpl[j].extra);
            else
                printf("%s{\"id\":%u,\"addr\":\"0x%" PRIx64 "\",\"extra\":%u,\"step\":\"%" PRId64
                       "\"}",
                       j ? "," : "", tpl[j].id, tpl[j].addr, tpl[j].extra, (int64_t)step[j].addr);
        }
        printf("]");
        if (k) {
            printf(",\"addresses\":[");
            for (size_t a = 0; a < k; a++)
                printf("%s\"0x%" PRIx64 "\"", a ? "," : "", addr[a].addr);
            printf("]");
        }
        printf("}\n");
    } else {
        printf("T%u loop %" PRIu64 " records, %u per iteration, phase %u\n", thread, g->addr, m,
               phase);
        for (uint32_t j = 0; j < m; j++) {
            const struct pes_site *s = pes_trace_reader_site(d->r, tpl[j].id);
            const struct pes_bb *b = s ? NULL : pes_trace_reader_bb(d->r, tpl[j].id);
            printf("T%u   template ", thread);
            if (s)
                print_access_text(s, &tpl[j]);
            else if (b)
                print_bb_text(b, &tpl[j]);
            else /* the reader checks template ids against the modules: not reached */
                printf("record id=%u addr=0x%" PRIx64 " extra=%u", tpl[j].id, tpl[j].addr,
                       tpl[j].extra);
            if (step[j].extra == PES_LOOP_STEP_IRREGULAR)
                printf(" irregular\n");
            else
                printf(" step %+" PRId64 "\n", (int64_t)step[j].addr);
        }
        for (size_t a = 0; a < k; a++) { /* 8 a line */
            if (a % 8 == 0)
                printf("T%u   addresses", thread);
            printf(" 0x%" PRIx64 "%s", addr[a].addr, a % 8 == 7 || a + 1 == k ? "\n" : "");
        }
    }
    d->printed++;
}

static void print_event(struct dump *d, uint32_t thread, const struct pes_event *e)
{
    char fl[96];
    event_flags_str(e->flags, fl, sizeof fl);
    const struct pes_site *s = e->site != UINT32_MAX && e->kind != PES_EV_ALLOC
                                   ? pes_trace_reader_site(d->r, e->site)
                                   : NULL;
    if (d->o.fmt == FMT_JSON) {
        printf("{\"type\":\"event\",\"block_thread\":%u,\"kind\":\"%s\",\"thread\":%u,"
               "\"other_thread\":",
               thread, pes_event_kind_name(e->kind), e->thread);
        if (e->other_thread == UINT32_MAX)
            printf("null");
        else
            printf("%u", e->other_thread);
        printf(",\"site\":");
        if (e->site == UINT32_MAX)
            printf("null");
        else
            printf("%u", e->site);
        printf(",\"addr\":\"0x%" PRIx64 "\",\"ip\":\"0x%" PRIx64 "\",\"size\":%u,\"flags\":\"%s\","
               "\"time\":%" PRIu64 ",\"loads\":%" PRIu64 ",\"stores\":%" PRIu64
               ",\"distance\":%" PRIu64 ",\"aux\":%" PRIu64,
               e->addr, e->ip, e->size, fl, e->time, e->loads, e->stores, e->distance, e->aux);
        if (pes_stack_known(e->stack)) /* version 3: the sample's call stack */
            printf(",\"stack\":%u", e->stack);
        printf("}\n");
    } else if (e->kind == PES_EV_PERIOD) {
        /* the adaptive period (§4): aux load, distance store, size level, addr counter */
        printf("T%u period   level=%u load=%" PRIu64 " store=%" PRIu64 " count=%" PRIu64
               " time=%" PRIu64 " loads=%" PRIu64 " stores=%" PRIu64 "\n",
               e->thread, e->size, e->aux, e->distance, e->addr, e->time, e->loads, e->stores);
    } else if (e->kind == PES_EV_ALLOC || e->kind == PES_EV_FREE) {
        /* heap blocks: aux is the size, site an allocation site (§4) */
        printf("T%u %-8s addr=0x%" PRIx64, e->thread, pes_event_kind_name(e->kind), e->addr);
        if (e->kind == PES_EV_ALLOC) {
            const struct pes_alloc_site *a = pes_trace_reader_alloc_site(d->r, e->site);
            printf(" bytes=%" PRIu64, e->aux);
            if (e->site == PES_ALLOC_SITE_STACK)
                printf(" site=stack");
            else if (a)
                printf(" site=%u (%s at 0x%" PRIx64 ")", e->site, pes_alloc_kind_name(a->kind),
                       a->ips[0]);
            else
                printf(" site=%u", e->site);
        }
        printf(" time=%" PRIu64 " loads=%" PRIu64 " stores=%" PRIu64 "\n", e->time, e->loads,
               e->stores);
    } else {
        printf("T%u %-8s addr=0x%" PRIx64 " size=%u", e->thread, pes_event_kind_name(e->kind),
               e->addr, e->size);
        if (e->site == UINT32_MAX)
            printf(" site=-");
        else if (s)
            printf(" site=%u (%s:%u:%u)", e->site, safe(s->file), s->line, s->column);
        else
            printf(" site=%u", e->site);
        printf(" ip=0x%" PRIx64 " time=%" PRIu64, e->ip, e->time);
        if (e->kind == PES_EV_SAMPLE && (e->flags & PES_EVF_HEAP_BLOCK))
            printf(" block=alloc-site %u +%" PRIu64 " of %" PRIu64, e->other_thread, e->distance,
                   e->aux);
        else if (e->other_thread != UINT32_MAX)
            printf(" other=T%u", e->other_thread);
        printf(" loads=%" PRIu64 " stores=%" PRIu64 " distance=%" PRIu64 " aux=%" PRIu64
               " flags=%s",
               e->loads, e->stores, e->distance, e->aux, fl);
        if (pes_stack_known(e->stack))
            printf(" stack=%u", e->stack);
        printf("\n");
    }
    d->printed++;
}

static void print_block(struct dump *d, const struct pes_block *b)
{
    int json = d->o.fmt == FMT_JSON;
    switch (b->type) {
    case PES_BLOCK_ACCESS:
        if (d->o.thread >= 0 && b->thread != (uint32_t)d->o.thread)
            return;
        /* stored records (the reader is raw unless --expand): a group is
         * printed as one item and its templates and steps skipped */
        for (size_t i = 0; i < b->n && !limit_reached(d); i++) {
            if (b->records[i].id != PES_ID_LOOP) {
                print_record(d, b->thread, &b->records[i]);
                continue;
            }
            print_loop(d, b->thread, &b->records[i]);
            i += pes_trace_loop_size(&b->records[i]) - 1;
        }
        break;
    case PES_BLOCK_EVENTS:
        if (d->o.thread >= 0 && b->thread != (uint32_t)d->o.thread)
            return;
        for (size_t i = 0; i < b->n && !limit_reached(d); i++)
            print_event(d, b->thread, &b->events[i]);
        break;
    case PES_BLOCK_MAPS:
        for (size_t i = 0; i < b->n; i++) {
            const struct pes_mapping *m = &b->mappings[i];
            if (json) {
                printf("{\"type\":\"mapping\",\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64
                       "\",\"file_offset\":\"0x%" PRIx64 "\",\"path\":",
                       m->start, m->end, m->file_offset);
                json_str(m->path);
                printf("}\n");
            } else {
                printf("map 0x%" PRIx64 "-0x%" PRIx64 " off 0x%" PRIx64 " %s\n", m->start, m->end,
                       m->file_offset, safe(m->path));
            }
        }
        break;
    case PES_BLOCK_FOOTER:
        if (json) {
            printf("{\"type\":\"footer\",\"end_ticks\":%" PRIu64 ",\"threads\":[", b->end_ticks);
            for (size_t i = 0; i < b->n; i++) {
                const struct pes_thread_totals *t = &b->totals[i];
                printf("%s{\"thread\":%u,\"records\":%" PRIu64 ",\"loads\":%" PRIu64
                       ",\"stores\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"lost\":%" PRIu64
                       ",\"end_ticks\":%" PRIu64 "}",
                       i ? "," : "", t->thread, t->records, t->loads, t->stores, t->samples,
                       t->lost, t->end_ticks);
            }
            printf("]}\n");
        } else {
            printf("footer end %" PRIu64 "\n", b->end_ticks);
            for (size_t i = 0; i < b->n; i++) {
                const struct pes_thread_totals *t = &b->totals[i];
                printf("  T%u records %" PRIu64 " loads %" PRIu64 " stores %" PRIu64
                       " samples %" PRIu64 " lost %" PRIu64 " end %" PRIu64 "\n",
                       t->thread, t->records, t->loads, t->stores, t->samples, t->lost,
                       t->end_ticks);
            }
        }
        break;
    default: /* MODULE/THREAD/ALLOC_SITES were printed with the tables */
        break;
    }
}

/* ---------------------------------------------------------------- stats */

struct type_stats {
    uint64_t blocks, count, bytes;
};
#define UNKNOWN_TYPE (PES_BLOCK_ALLOC_SITES + 1) /* --stats row of block types not known here */

/* How many of the R records of a group from `phase` (m per iteration) are
 * copies of template j: those q < R with (phase + q) % m == j. */
static int print_stats(struct dump *d, struct pes_error *err)
{
    struct pes_block_ref *refs;
    size_t n;
    if (pes_trace_reader_load_tables(d->r, err) || pes_trace_reader_index(d->r, &refs, &n, err))
        return -1;
    struct type_stats ts[UNKNOWN_TYPE + 1] = {{0}};
    uint64_t total = 0, accesses = 0, bbs = 0, controls = 0, other = 0;
    /* heap blocks: allocations, their bytes, frees, thread stacks (records or events) */
    uint64_t allocs = 0, alloc_bytes = 0, frees = 0, stacks = 0;
    uint64_t call_stacks = 0; /* ALLOC_SITES entries that are samples' call stacks (version 3) */
    /* loop descriptor groups: how many, the records they stand for, stored records */
    uint64_t groups = 0, grouped = 0, stored = 0;
    /* the blocks as stored: groups are counted, not expanded (the record
     * classes are those of the expanded records all the same) */
    pes_trace_reader_set_raw(d->r, 1);
    size_t n_threads = pes_trace_reader_thread_count(d->r);
    uint8_t *pending = calloc(n_threads ? n_threads : 1, 1); /* per thread: ALLOC awaits its size */
    if (!pending) {
        free(refs);
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", d->o.path);
    }
    /* decoding every block of a large trace takes a while: a progress line
     * on a terminal (stderr), in records and events */
    uint64_t units = 0;
    for (size_t i = 0; i < n; i++)
        if (refs[i].type == PES_BLOCK_ACCESS || refs[i].type == PES_BLOCK_EVENTS)
            units += refs[i].count;
    struct pes_progress *progress = pes_progress_start(d->o.path, units, "records");
    for (size_t i = 0; i < n; i++) {
        uint32_t t = refs[i].type < UNKNOWN_TYPE ? refs[i].type : UNKNOWN_TYPE;
        ts[t].blocks++;
        ts[t].count += refs[i].count;
        ts[t].bytes += 24 + (uint64_t)refs[i].frame_size;
        total += 24 + (uint64_t)refs[i].frame_size;
        /* The records and events are decoded, like a dump reads them: to
         * classify records, and so that --stats checks every block (the
         * other blocks were by load_tables). */
        if (refs[i].type == PES_BLOCK_ALLOC_SITES) {
            struct pes_block b;
            if (pes_trace_reader_block_at(d->r, &refs[i], &b, err) < 0) {
                pes_progress_end(progress);
                free(refs);
                free(pending);
                return -1;
            }
            for (size_t k = 0; k < b.n; k++)
                call_stacks += b.alloc_sites[k].kind == PES_ALLOC_CALLSTACK;
        }
        if (refs[i].type == PES_BLOCK_ACCESS || refs[i].type == PES_BLOCK_EVENTS) {
            struct pes_block b;
            if (pes_trace_reader_block_at(d->r, &refs[i], &b, err) < 0) {
                pes_progress_end(progress);
                free(refs);
                free(pending);
                return -1;
            }
            pes_progress_add(progress, refs[i].count);
            uint8_t *pend = b.thread < n_threads ? &pending[b.thread] : NULL;
            stored += b.records ? b.n : 0;
            for (size_t k = 0; b.records && k < b.n; k++) {
                const struct pes_record *rec = &b.records[k];
                uint32_t id = rec->id;
                if (id == PES_ID_LOOP) { /* the records of a group, by template */
                    uint32_t m = rec->extra & 0xFFFFu, phase = rec->extra >> 16;
                    for (uint32_t j = 0; j < m; j++) {
                        uint64_t c = pes_trace_loop_times(rec->addr, m, phase, j);
                        uint32_t tid = rec[1 + j].id;
                        if (pes_trace_reader_site(d->r, tid))
                            accesses += c;
                        else if (pes_trace_reader_bb(d->r, tid))
                            bbs += c;
                        else
                            other += c;
                    }
                    groups++;
                    grouped += rec->addr;
                    if (pend)
                        *pend = 0;
                    k += pes_trace_loop_size(rec) - 1;
                    continue;
                }
                if (pes_trace_reader_site(d->r, id))
                    accesses++;
                else if (pes_trace_reader_bb(d->r, id))
                    bbs++;
                else if (id >= PES_ID_CONTROL_FIRST)
                    controls++;
                else
                    other++;
                if (id == PES_ID_ALLOC_SIZE && pend && *pend)
                    alloc_bytes += rec->addr;
                if (pend)
                    *pend = id == PES_ID_ALLOC && rec->extra != PES_ALLOC_SITE_STACK;
                if (id == PES_ID_ALLOC)
                    rec->extra == PES_ALLOC_SITE_STACK ? stacks++ : allocs++;
                frees += id == PES_ID_FREE;
            }
            for (size_t k = 0; b.events && k < b.n; k++) {
                const struct pes_event *e = &b.events[k];
                if (e->kind == PES_EV_ALLOC && e->site == PES_ALLOC_SITE_STACK)
                    stacks++;
                else if (e->kind == PES_EV_ALLOC) {
                    allocs++;
                    alloc_bytes += e->aux;
                }
                frees += e->kind == PES_EV_FREE;
            }
        }
    }
    pes_progress_end(progress);
    free(refs);
    free(pending);
    if (d->o.fmt == FMT_JSON) {
        printf("{\"type\":\"stats\",\"bytes\":%" PRIu64 ",\"blocks\":{", total);
        int first = 1;
        for (uint32_t t = 1; t <= UNKNOWN_TYPE; t++)
            if (ts[t].blocks) {
                printf("%s\"%s\":{\"blocks\":%" PRIu64 ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
                       "}",
                       first ? "" : ",", t == UNKNOWN_TYPE ? "UNKNOWN" : pes_block_type_name(t),
                       ts[t].blocks, ts[t].count, ts[t].bytes);
                first = 0;
            }
        printf("},\"records\":{\"access\":%" PRIu64 ",\"bb\":%" PRIu64 ",\"control\":%" PRIu64
               ",\"other\":%" PRIu64 "},\"heap\":{\"sites\":%" PRIu64 ",\"allocs\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"stacks\":%" PRIu64 "}",
               accesses, bbs, controls, other, ts[PES_BLOCK_ALLOC_SITES].count - call_stacks,
               allocs, alloc_bytes, frees, stacks);
        if (call_stacks) /* only for traces whose samples have call stacks */
            printf(",\"call_stacks\":%" PRIu64, call_stacks);
        if (groups) /* only for traces with loop descriptors */
            printf(",\"loops\":{\"groups\":%" PRIu64 ",\"records\":%" PRIu64 ",\"stored\":%" PRIu64
                   "}",
                   groups, grouped, stored);
        printf("}\n");
        return 0;
    }
    printf("%-11s %8s %12s %14s %12s\n", "block", "blocks", "count", "bytes", "bytes/count");
    for (uint32_t t = 1; t <= UNKNOWN_TYPE; t++)
        if (ts[t].blocks)
            printf("%-11s %8" PRIu64 " %12" PRIu64 " %14" PRIu64 " %12.4f\n",
                   t == UNKNOWN_TYPE ? "UNKNOWN" : pes_block_type_name(t), ts[t].blocks,
                   ts[t].count, ts[t].bytes,
                   ts[t].count ? (double)ts[t].bytes / (double)ts[t].count : 0.0);
    printf("%-11s %8s %12s %14" PRIu64 "\n", "total", "", "", total);
    printf("records  access %" PRIu64 "  bb %" PRIu64 "  control %" PRIu64 "  other %" PRIu64 "\n",
           accesses, bbs, controls, other);
    /* only for traces with heap blocks: older traces print as before */
    uint64_t heap_sites = ts[PES_BLOCK_ALLOC_SITES].count - call_stacks;
    if (heap_sites || allocs || frees || stacks)
        printf("heap     sites %" PRIu64 "  allocs %" PRIu64 "  bytes %" PRIu64 "  frees %" PRIu64
               "  stacks %" PRIu64 "\n",
               heap_sites, allocs, alloc_bytes, frees, stacks);
    /* only for traces whose samples have call stacks (version 3) */
    if (call_stacks)
        printf("samples  call stacks %" PRIu64 "\n", call_stacks);
    /* only for traces with loop descriptors: the records groups stand for,
     * and the records the ACCESS blocks store */
    if (groups)
        printf("loops    groups %" PRIu64 "  records %" PRIu64 "  stored %" PRIu64 "\n", groups,
               grouped, stored);
    return 0;
}

/* ---------------------------------------------------------------- main */

/* A --thread the trace does not have would print no record: said instead. */
static int check_thread(const struct dump *d, struct pes_error *err)
{
    size_t n_threads = pes_trace_reader_thread_count(d->r);
    if (d->o.thread < 0 || (uint64_t)d->o.thread < n_threads)
        return 0;
    if (n_threads == 0)
        return pes_error_set(err, PES_ERR_ARG, 0, "--thread %" PRId64 ": %s has no thread",
                             d->o.thread, d->o.path);
    return pes_error_set(err, PES_ERR_ARG, 0,
                         "--thread %" PRId64 ": %s has thread%s 0..%zu (%zu thread%s)", d->o.thread,
                         d->o.path, n_threads > 1 ? "s" : "", n_threads - 1, n_threads,
                         n_threads > 1 ? "s" : "");
}

static int run(struct dump *d, struct pes_error *err)
{
    print_header(d, pes_trace_reader_info(d->r));
    if (d->o.header_only)
        return 0;
    if (d->o.stats)
        return print_stats(d, err);
    /* Tables first (from the block index, every block but the records
     * checked), then every block in file order. */
    struct pes_block_ref *refs;
    size_t n;
    if (pes_trace_reader_load_tables(d->r, err) || pes_trace_reader_index(d->r, &refs, &n, err))
        return -1;
    if (check_thread(d, err) < 0) {
        free(refs);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (refs[i].type != PES_BLOCK_MODULE && refs[i].type != PES_BLOCK_THREAD &&
            refs[i].type != PES_BLOCK_ALLOC_SITES)
            continue;
        struct pes_block b;
        if (pes_trace_reader_block_at(d->r, &refs[i], &b, err) < 0) {
            free(refs);
            return -1;
        }
        if (b.type == PES_BLOCK_MODULE)
            print_module(d, b.module);
        else if (b.type == PES_BLOCK_ALLOC_SITES)
            print_alloc_sites(d, b.alloc_sites, b.n);
        else if (d->o.thread < 0 || b.thread == (uint32_t)d->o.thread)
            print_thread(d, b.thread_info);
    }
    free(refs);
    if (d->o.tables)
        return 0;
    struct pes_block b;
    int rc;
    while (!limit_reached(d) && (rc = pes_trace_reader_next(d->r, &b, err)) == 1)
        print_block(d, &b);
    return limit_reached(d) ? 0 : rc;
}

int main(int argc, char **argv)
{
    struct dump d = {0};
    if (parse_args(argc, argv, &d.o))
        return 2;
    struct pes_error err;
    d.r = pes_trace_reader_open(d.o.path, &err);
    if (d.r) /* stored records, loop descriptors shown as such, unless --expand */
        pes_trace_reader_set_raw(d.r, !d.o.expand);
    if (!d.r) {
        message("%s", err.message);
        return 1;
    }
    int rc = run(&d, &err);
    fflush(stdout);
    if (rc < 0) {
        message("%s", err.message);
        pes_trace_reader_close(d.r);
        return 1;
    }
    const char *msg;
    /* Every mode but --header-only scans the block index, which knows about
     * truncation: --stats, --tables and --limit warn like a full dump. */
    if (!d.o.header_only && pes_trace_reader_truncated(d.r, &msg))
        message("warning: %s", msg);
    if (!d.o.header_only && pes_trace_reader_skipped(d.r, &msg))
        message("warning: %s", msg);
    pes_trace_reader_close(d.r);
    if (ferror(stdout)) {
        message("write error on standard output");
        return 1;
    }
    return 0;
}
