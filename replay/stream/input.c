/*
 * input.c — what pes-replay reads: a pes trace (per-thread streams merged into
 * global time order, see merge.h) or a plain-text address trace, presented as
 * one stream of resolved accesses and BB entries; or a sampled trace's events.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpu_account.h"
#include "scheduler.h"
#include "merge.h"
#include "input.h"
#include "callpath.h"
#include "objects.h"

/* A text trace has no tables: two synthetic one-byte sites. */
static const struct pes_site text_sites[2] = {
    {.id = PES_TEXT_READ_SITE,
     .bb = UINT32_MAX,
     .kind = PES_KIND_LOAD,
     .size = 1,
     .file = "",
     .function = ""},
    {.id = PES_TEXT_WRITE_SITE,
     .bb = UINT32_MAX,
     .kind = PES_KIND_STORE,
     .size = 1,
     .file = "",
     .function = ""},
};

/* What a record id stands for, resolved once per id for the scan loop. */
enum { ID_UNKNOWN, ID_SITE, ID_BB, ID_NONE, ID_CALL_SITE };
struct id_info {
    uint8_t what;
    uint8_t kind, reads, writes;
    uint32_t size; /* the site's size; 0 = take the record's extra */
    const struct pes_bb *bb;
};
/* Ids are dense from 0 (module id bases); larger ones take the slow lookup. */
#define FLAT_IDS (UINT32_C(1) << 22)

/* The ids one thread has resolved (lookup_id): the reading thread's, and
 * each resolving strand's of its own (the trace's tables are only read). */
struct id_table {
    uint32_t *slot;        /* [n_ids] id -> resolution + 1 (0: not yet), filled lazily: */
    uint32_t n_ids;        /* 4 bytes per id up to the highest seen, */
    struct id_info *infos; /* and 16 per id actually seen */
    uint32_t n_infos, cap_infos;
};

struct replay_input {
    char *path;
    int text;
    int sampled;                          /* a sampled pes trace: runs deliver its events */
    struct pes_trace_reader *reader;      /* tables and info (pes traces) */
    struct pes_collect_settings settings; /* the header's, checked at open */
    enum pes_text_format text_format;     /* another tool's trace: its format, as detected */
    int has_bbs;
    char truncation[320];
    char skipped[320]; /* the reader's message on blocks of unknown type */
    uint64_t skipped_blocks;
    struct id_table ids;   /* the reading thread's */
    uint32_t range_cap;    /* bytes; 0 = no clipping */
    unsigned text_threads; /* parsing threads of another tool's trace */
    int st_merge, st_parse, st_batch,
        st_resolve;                /* --stats: the merge's, a text trace's, the batching's and the
                                resolution's stages */
    struct pes_sched *sched;       /* replay_input_set_workers: blocks decoded ahead */
    struct pes_text_filter filter; /* and its filter (keep NULL: none) */
    uint64_t clipped;              /* accesses clipped by the last scan */
    uint32_t clipped_longest, clipped_site;
    uint32_t part, parts;          /* replay_input_set_part (parts 0: the whole stream) */
    int part_to_end;               /* replay_input_set_part_to_end: on to the stream's end */
    uint64_t part_begin, part_end; /* a text trace's part: its bytes */
    int no_objects;                /* replay_input_set_objects(in, 0) */
    int objects_tried;             /* objects built (or found impossible) */
    struct pes_objects *objects;
    char objects_warning[640];
    uint32_t callpath_depth; /* replay_input_set_callpaths (0: off) */
    int callpaths_tried;
    struct pes_callpaths *callpaths;
    uint32_t *callpath_parent;           /* each thread's creator (callpath.h) */
    struct pes_callpaths_effect *effect; /* in parts: the last run's (callpath.h, parts) */
};

static int fail(struct pes_error *err, int code, const char *path, const char *what)
{
    err->code = code;
    err->offset = 0;
    snprintf(err->message, sizeof err->message, "%s: %s", path, what);
    return -1;
}

int replay_input_check_file(const char *path, struct pes_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0; /* opening says what is missing */
    const char *what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a fifo or pipe"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a plain file";
    err->code = PES_ERR_IO;
    err->offset = 0;
    snprintf(err->message, sizeof err->message,
             "%s: not a regular file (%s); pes-replay reads a trace more than once and by offset: "
             "save it to a file",
             path, what);
    return -1;
}

/* zstd frames (0xFD2FB528) and skippable frames (0x184D2A5?) start a pes trace;
 * so does a file of 1 to 3 bytes that begins like one (a trace cut inside its
 * first frame: the trace reader says so, the text reader would not). */
static int looks_like_zstd(const char *path, struct pes_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, PES_ERR_IO, path, strerror(errno));
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    static const unsigned char zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD},
                               skippable[3] = {0x2A, 0x4D, 0x18};
    if (n < 4)
        return n > 0 && (memcmp(m, zstd_magic, n) == 0 ||
                         ((m[0] & 0xF0) == 0x50 && memcmp(m + 1, skippable, n - 1) == 0));
    uint32_t magic =
        (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
    return magic == 0xFD2FB528u || (magic & 0xFFFFFFF0u) == 0x184D2A50u;
}

struct replay_input *replay_input_open(const char *path, struct pes_error *err)
{
    return replay_input_open_as(path, REPLAY_INPUT_AUTO, err);
}

static size_t count_newlines(const char *b, size_t n)
{
    size_t lines = 0;
    for (const char *p = b; (p = memchr(p, '\n', (size_t)(b + n - p))); p++)
        lines++;
    return lines;
}

/* A text file whose last byte is not a newline may have been cut inside its
 * last line, which then reads as another address: the number of complete
 * lines before it (counted only then) and the unfinished line's length, or
 * -1 if the file ends with a newline, or with a line too long to be one (the
 * scan reports that line as an error). */
static long long unfinished_last_line(const char *path, long long size, size_t *tail)
{
    enum { BUF = 1 << 16 };
    FILE *f = size > 0 ? fopen(path, "rb") : NULL;
    char *buf = f ? malloc(BUF) : NULL; /* per call: parts open the file on threads of their own */
    if (!buf) {
        if (f)
            fclose(f);
        return -1;
    }
    long long lines = -1, back = size < PES_TEXT_MAX_LINE + 1 ? size : PES_TEXT_MAX_LINE + 1;
    size_t n;
    if (fseeko(f, size - back, SEEK_SET) == 0 &&
        (n = fread(buf, 1, (size_t)back, f)) == (size_t)back && buf[n - 1] != '\n') {
        size_t start = n; /* of the unfinished line */
        while (start > 0 && buf[start - 1] != '\n')
            start--;
        *tail = n - start;
        if ((start > 0 || size <= PES_TEXT_MAX_LINE) && fseeko(f, 0, SEEK_SET) == 0)
            for (lines = 0; (n = fread(buf, 1, BUF, f)) > 0;)
                lines += (long long)count_newlines(buf, n);
    }
    fclose(f);
    free(buf);
    return lines;
}

/* Another tool's trace: the format detected once here (the scans reopen it),
 * and a file that may be cut (a binary one inside an address, a text one
 * inside its last line) said now, like a cut pes trace. */
static int open_text(struct replay_input *in, enum pes_text_format format, struct pes_error *err)
{
    in->text = 1; /* validated line by line while scanning */
    struct pes_text_reader *t = pes_text_reader_open_as(in->path, format, err);
    if (!t)
        return -1;
    in->text_format = pes_text_reader_format(t);
    pes_text_reader_close(t);
    struct stat st;
    if (stat(in->path, &st) != 0)
        return 0; /* the scans say what is wrong */
    size_t tail = 0;
    long long complete = -1;
    if (in->text_format == PES_TEXT_FORMAT_BINARY64 && st.st_size % 8)
        snprintf(in->truncation, sizeof in->truncation,
                 "%s: ends inside an address: the last %d byte%s (after %lld complete addresses) "
                 "are not read",
                 in->path, (int)(st.st_size % 8), st.st_size % 8 == 1 ? "" : "s",
                 (long long)(st.st_size / 8));
    else if (in->text_format != PES_TEXT_FORMAT_BINARY64 &&
             (complete = unfinished_last_line(in->path, (long long)st.st_size, &tail)) == 0)
        snprintf(in->truncation, sizeof in->truncation,
                 "%s: its only line has no newline: the file may have been cut inside it; it is "
                 "read as it is",
                 in->path);
    else if (in->text_format != PES_TEXT_FORMAT_BINARY64 && complete > 0)
        snprintf(in->truncation, sizeof in->truncation,
                 "%s: line %lld, the last, has no newline (%zu byte%s after line %lld, the last "
                 "complete one): "
                 "the file may have been cut inside it; it is read as it is",
                 in->path, complete + 1, tail, tail == 1 ? "" : "s", complete);
    return 0;
}

/* A pes trace of the given kind: its tables, and what the index scan
 * behind them found (a cut file, blocks of unknown type). */
static struct replay_input *open_pes(struct replay_input *in, uint32_t kind, struct pes_error *err)
{
    in->reader = pes_trace_reader_open(in->path, err);
    if (!in->reader || pes_trace_reader_load_tables(in->reader, err) < 0) {
        replay_input_close(in);
        return NULL;
    }
    const char *msg = NULL;
    if (pes_trace_reader_truncated(in->reader, &msg))
        snprintf(in->truncation, sizeof in->truncation, "%s", msg ? msg : "trace is truncated");
    if ((in->skipped_blocks = pes_trace_reader_skipped(in->reader, &msg)))
        snprintf(in->skipped, sizeof in->skipped, "%s", msg);
    /* a setting the header holds with a bad value: named here, not guessed later */
    struct pes_error bad;
    if (pes_settings_from_header(&in->settings, pes_trace_reader_info(in->reader)->config, &bad) <
        0) {
        fail(err, PES_ERR_FORMAT, in->path, bad.message);
        replay_input_close(in);
        return NULL;
    }
    if (pes_trace_reader_info(in->reader)->kind != kind) {
        fail(err, PES_ERR_FORMAT, in->path,
             kind == PES_TRACE_FULL
                 ? "is a sampled trace; expected a full trace (pes-collect --full)"
                 : "is a full trace; expected a sampled trace");
        replay_input_close(in);
        return NULL;
    }
    in->sampled = kind == PES_TRACE_SAMPLED;
    return in;
}

static struct replay_input *input_new(const char *path, struct pes_error *err)
{
    struct replay_input *in = calloc(1, sizeof *in);
    if (!in || !(in->path = strdup(path))) {
        free(in);
        fail(err, PES_ERR_NOMEM, path, "out of memory");
        return NULL;
    }
    in->st_merge = pes_cpu_stage("merge", 0);
    in->st_parse = pes_cpu_stage("parse", 0);
    in->st_batch = pes_cpu_stage("batch", 0);
    in->st_resolve = pes_cpu_stage("resolve", 0);
    return in;
}

struct replay_input *replay_input_open_as(const char *path, int input_format, struct pes_error *err)
{
    if (replay_input_check_file(path, err) < 0)
        return NULL;
    int zst = input_format == REPLAY_INPUT_PES;
    if (input_format == REPLAY_INPUT_AUTO && (zst = looks_like_zstd(path, err)) < 0)
        return NULL;
    struct replay_input *in = input_new(path, err);
    if (!in)
        return NULL;
    if (zst)
        return open_pes(in, PES_TRACE_FULL, err);
    pes_settings_from_header(&in->settings, NULL, NULL); /* no header: every key absent */
    if (open_text(in, input_format == REPLAY_INPUT_AUTO ? PES_TEXT_FORMAT_AUTO : input_format,
                  err) < 0) {
        replay_input_close(in);
        return NULL;
    }
    return in;
}

uint64_t replay_input_records_estimate(struct replay_input *in)
{
    uint64_t total = 0;
    if (in->reader) {
        struct pes_block_ref *refs = NULL;
        size_t n = 0;
        struct pes_error e;
        if (pes_trace_reader_index(in->reader, &refs, &n, &e) == 0)
            for (size_t i = 0; i < n; i++)
                if (refs[i].type == (in->sampled ? PES_BLOCK_EVENTS : PES_BLOCK_ACCESS))
                    total += refs[i].count;
        free(refs);
        return total;
    }
    struct stat st;
    if (stat(in->path, &st) != 0 || st.st_size <= 0)
        return 0;
    if (in->text_format == PES_TEXT_FORMAT_BINARY64)
        return (uint64_t)st.st_size / 8;
    enum { BUF = 1 << 16 }; /* the first lines: their density */
    char *buf = malloc(BUF);
    FILE *f = buf ? fopen(in->path, "rb") : NULL;
    size_t got = f ? fread(buf, 1, BUF, f) : 0, lines = got ? count_newlines(buf, got) : 0;
    if (f)
        fclose(f);
    free(buf);
    return lines ? (uint64_t)((double)st.st_size * (double)lines / (double)got) : 1;
}

int replay_input_pes_kind(const char *path)
{
    struct pes_error err = {0};
    if (looks_like_zstd(path, &err) != 1)
        return 0;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    if (!r)
        return 0;
    uint32_t kind = pes_trace_reader_info(r)->kind;
    pes_trace_reader_close(r);
    return kind == PES_TRACE_SAMPLED || kind == PES_TRACE_FULL ? (int)kind : 0;
}

struct replay_input *replay_input_open_sampled(const char *path, struct pes_error *err)
{
    if (replay_input_check_file(path, err) < 0)
        return NULL;
    struct replay_input *in = input_new(path, err);
    return in ? open_pes(in, PES_TRACE_SAMPLED, err) : NULL;
}

void replay_input_close(struct replay_input *in)
{
    if (!in)
        return;
    pes_objects_destroy(in->objects);
    pes_callpaths_destroy(in->callpaths);
    pes_callpaths_effect_destroy(in->effect);
    free(in->callpath_parent);
    if (in->reader)
        pes_trace_reader_close(in->reader);
    free(in->path);
    free(in->ids.slot);
    free(in->ids.infos);
    free(in);
}

int replay_input_is_text(const struct replay_input *in)
{
    return in->text;
}

const struct pes_trace_info *replay_input_info(const struct replay_input *in)
{
    return in->reader ? pes_trace_reader_info(in->reader) : NULL;
}

const struct pes_collect_settings *replay_input_settings(const struct replay_input *in)
{
    return &in->settings;
}

const struct pes_site *replay_input_site(const struct replay_input *in, uint32_t id)
{
    if (in->text)
        return id < 2 ? &text_sites[id] : NULL;
    return pes_trace_reader_site(in->reader, id);
}

const struct pes_bb *replay_input_bb(const struct replay_input *in, uint32_t id)
{
    return in->text ? NULL : pes_trace_reader_bb(in->reader, id);
}

/* ------------------------------------------------------------ objects */

static const struct pes_site *objects_site(const void *in, uint32_t id)
{
    return replay_input_site(in, id);
}

static const uint64_t *objects_alloc_site(const void *in, uint32_t id, uint32_t *depth)
{
    const struct pes_alloc_site *s =
        pes_trace_reader_alloc_site(((const struct replay_input *)in)->reader, id);
    if (!s)
        return NULL;
    *depth = s->depth;
    return s->ips;
}

/* The executable mappings of every MAPS block (copied: a block's are valid
 * only until the reader's next call), into the objects' modules. */
static void build_objects(struct replay_input *in)
{
    struct pes_objects *o = pes_objects_create();
    if (!o) {
        snprintf(in->objects_warning, sizeof in->objects_warning,
                 "%s: out of memory for data objects", in->path);
        return;
    }
    pes_objects_set_sites(o, objects_site, in);
    pes_objects_set_alloc_sites(o, objects_alloc_site, in);
    struct pes_block_ref *refs = NULL;
    size_t n_refs = 0, n = 0, cap = 0;
    struct pes_mapping *maps = NULL;
    uint32_t *site_ids = NULL;
    size_t n_ids = 0, cap_ids = 0;
    struct pes_error e;
    if (pes_trace_reader_index(in->reader, &refs, &n_refs, &e) == 0)
        for (size_t i = 0; i < n_refs; i++) {
            struct pes_block b;
            if (refs[i].type != PES_BLOCK_MAPS && refs[i].type != PES_BLOCK_ALLOC_SITES)
                continue;
            if (pes_trace_reader_block_at(in->reader, &refs[i], &b, &e) != 1)
                continue;
            for (size_t k = 0; b.type == PES_BLOCK_ALLOC_SITES && k < b.n; k++) {
                if (b.alloc_sites[k].kind == PES_ALLOC_CALLSTACK)
                    continue; /* a sample's call stack (version 3), no heap object */
                if (n_ids == cap_ids) {
                    size_t c = cap_ids ? 2 * cap_ids : 64;
                    uint32_t *t = realloc(site_ids, c * sizeof *t);
                    if (!t)
                        break;
                    site_ids = t;
                    cap_ids = c;
                }
                site_ids[n_ids++] = b.alloc_sites[k].id;
            }
            if (b.type != PES_BLOCK_MAPS)
                continue;
            for (size_t k = 0; k < b.n; k++) {
                if (n == cap) {
                    size_t c = cap ? 2 * cap : 64;
                    struct pes_mapping *t = realloc(maps, c * sizeof *t);
                    if (!t)
                        break;
                    maps = t;
                    cap = c;
                }
                maps[n] = b.mappings[k];
                if (!(maps[n].path = strdup(b.mappings[k].path ? b.mappings[k].path : "")))
                    break;
                n++;
            }
        }
    free(refs);
    /* No MAPS block (full traces of runtimes before the allocation
     * records): globals unknown without a warning on every replay of such
     * a trace; docs/replay.md says so. */
    char warn[512];
    if (n > 0 && (pes_objects_load_mappings(o, maps, n, warn, sizeof warn), warn[0]))
        snprintf(in->objects_warning, sizeof in->objects_warning, "%s", warn);
    for (size_t k = 0; k < n; k++)
        free((char *)maps[k].path);
    free(maps);
    /* heap objects named in site id order: the same names for a sampled
     * trace, which meets only the blocks its samples fall in, as for the
     * full trace of the same run */
    pes_objects_name_heap_sites(o, site_ids, n_ids);
    free(site_ids);
    in->objects = o;
}

void replay_input_set_objects(struct replay_input *in, int on)
{
    in->no_objects = !on;
}

struct pes_objects *replay_input_objects(struct replay_input *in)
{
    if (in->text || in->no_objects || in->parts > 1)
        return NULL;
    if (!in->objects_tried) {
        in->objects_tried = 1;
        build_objects(in);
    }
    return in->objects;
}

/* ------------------------------------------------------------ call paths */

/* Whether a MODULE block declares a call site (kind PES_KIND_CALL): only
 * then can the trace hold call edges. */
static int has_call_sites(struct replay_input *in)
{
    struct pes_block_ref *refs = NULL;
    size_t n = 0;
    struct pes_error e;
    if (pes_trace_reader_index(in->reader, &refs, &n, &e) < 0)
        return 0;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        struct pes_block b;
        if (refs[i].type != PES_BLOCK_MODULE ||
            pes_trace_reader_block_at(in->reader, &refs[i], &b, &e) != 1 || !b.module)
            continue;
        for (uint32_t k = 0; k < b.module->n_sites && !found; k++)
            found = b.module->sites[k].kind == PES_KIND_CALL;
    }
    free(refs);
    return found;
}

void replay_input_set_callpaths(struct replay_input *in, uint32_t depth)
{
    in->callpath_depth = depth;
}

struct pes_callpaths *replay_input_callpaths(struct replay_input *in, struct pes_error *err)
{
    if (in->text || in->sampled || !in->callpath_depth)
        return NULL;
    if (!in->callpaths_tried) {
        in->callpaths_tried = 1;
        if (!has_call_sites(in))
            return NULL;
        uint32_t n = replay_input_threads(in);
        uint32_t *parent = malloc(n * sizeof *parent);
        for (uint32_t t = 0; parent && t < n; t++) {
            const struct pes_thread *th = pes_trace_reader_thread(in->reader, t);
            parent[t] = th ? th->parent : UINT32_MAX;
        }
        in->callpaths = parent ? pes_callpaths_create(in->callpath_depth, n, parent) : NULL;
        in->callpath_parent = parent;
        if (!in->callpaths)
            fail(err, PES_ERR_NOMEM, in->path, "out of memory for call paths");
    }
    return in->callpaths;
}

struct pes_callpaths_effect *replay_input_callpath_effect(const struct replay_input *in)
{
    return in->effect;
}

struct pes_callpaths *replay_input_callpath_end(const struct replay_input *in)
{
    if (!in->effect)
        return NULL;
    uint32_t n = replay_input_threads(in);
    struct pes_callpaths *cp = pes_callpaths_create(in->callpath_depth, n, in->callpath_parent);
    if (cp && pes_callpaths_apply(cp, in->effect) < 0) {
        pes_callpaths_destroy(cp);
        return NULL;
    }
    return cp;
}

const char *replay_input_objects_warning(const struct replay_input *in)
{
    return in->objects_warning[0] ? in->objects_warning : NULL;
}

const char *replay_input_text_kind(const struct replay_input *in)
{
    switch (in->text_format) {
    case PES_TEXT_FORMAT_LACKEY:
        return "valgrind lackey trace";
    case PES_TEXT_FORMAT_BINARY64:
        return "binary address trace";
    default:
        return "text address trace";
    }
}

const char *replay_input_truncation(const struct replay_input *in)
{
    return in->truncation[0] ? in->truncation : NULL;
}

uint32_t replay_range_cap(uint32_t granule, uint32_t sim_line)
{
    uint64_t g = granule < sim_line ? granule : sim_line;
    uint64_t cap = (uint64_t)REPLAY_RANGE_GRANULES * (g ? g : 1);
    return cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

void replay_input_set_range_cap(struct replay_input *in, uint32_t bytes)
{
    in->range_cap = bytes;
}
void replay_input_set_workers(struct replay_input *in, struct pes_sched *sched)
{
    in->sched = sched;
}

void replay_input_set_threads(struct replay_input *in, unsigned n)
{
    in->text_threads = n > PES_TEXT_MAX_THREADS ? PES_TEXT_MAX_THREADS : n;
}
uint32_t replay_input_range_cap(const struct replay_input *in)
{
    return in->range_cap;
}
int replay_input_set_filter(struct replay_input *in, const struct pes_text_filter *f)
{
    in->filter = f && in->text ? *f : (struct pes_text_filter){0};
    return in->filter.keep != NULL;
}

uint64_t replay_input_clipped(const struct replay_input *in, char *msg, size_t msg_size)
{
    if (in->clipped && msg_size)
        snprintf(msg, msg_size,
                 "%s: %" PRIu64 " variable-size access%s longer than %" PRIu32
                 " bytes (the longest: %" PRIu32 " bytes, site %" PRIu32
                 ") replayed as %s first %" PRIu32 " bytes in the reuse profiles "
                 "and the simulation; the rest of %s range is not replayed",
                 in->path, in->clipped, in->clipped == 1 ? "" : "es", in->range_cap,
                 in->clipped_longest, in->clipped_site, in->clipped == 1 ? "its" : "their",
                 in->range_cap, in->clipped == 1 ? "the" : "each");
    return in->clipped;
}

int replay_input_set_part(struct replay_input *in, uint32_t k, uint32_t n, struct pes_error *err)
{
    if (k >= n)
        return pes_error_set(err, PES_ERR_ARG, 0, "part %u of %u", k, n);
    /* a pes trace's part is a range of merged times, cut when it is opened */
    if (in->text &&
        pes_text_part(in->path, in->text_format, k, n, &in->part_begin, &in->part_end, err) < 0)
        return -1;
    in->part = k;
    in->parts = n;
    in->part_to_end = 0;
    return 0;
}

int replay_input_set_part_to_end(struct replay_input *in, uint32_t k, uint32_t n,
                                 struct pes_error *err)
{
    uint64_t begin = 0, end = 0;
    if (replay_input_set_part(in, k, n, err) < 0)
        return -1;
    if (in->text && pes_text_part(in->path, in->text_format, n - 1, n, &begin, &end, err) < 0)
        return -1;
    if (in->text)
        in->part_end = end;
    in->part_to_end = 1;
    return 0;
}

void replay_input_clip_pack(const struct replay_input *in, unsigned char out[REPLAY_CLIP_BYTES])
{
    memcpy(out, &in->clipped, 8);
    memcpy(out + 8, &in->clipped_longest, 4);
    memcpy(out + 12, &in->clipped_site, 4);
}

/* The scan keeps the first of the longest clipped accesses: a later part's
 * wins only if strictly longer. */
void replay_input_clip_merge(struct replay_input *in, const unsigned char part[REPLAY_CLIP_BYTES])
{
    uint64_t n;
    uint32_t longest, site;
    memcpy(&n, part, 8);
    memcpy(&longest, part + 8, 4);
    memcpy(&site, part + 12, 4);
    if (n && (in->clipped == 0 || longest > in->clipped_longest)) {
        in->clipped_longest = longest;
        in->clipped_site = site;
    }
    in->clipped += n;
}

uint64_t replay_input_skipped(const struct replay_input *in, const char **message)
{
    if (message)
        *message = in->skipped;
    return in->skipped_blocks;
}

/* ------------------------------------------------------------ sequential cursors */

/* The merge thread and the blocks decoded ahead only for traces of at most
 * this many threads: with many short-lived ones the reading thread's time
 * goes to starting and ending their lanes, not to decoding (100 000
 * threads: 20 s of CPU with the merge thread, 16 s without), and the
 * thread's stack and malloc arena would count against a ulimit -v that
 * such a trace already nears (e2e.replay_memory). */
#define AHEAD_MAX_THREADS 256u

/* One pass over the records in global order: a fresh reader + merge (pes
 * traces) or a text reader. Control records are skipped. */
struct cursor {
    struct replay_input *in;
    int keep_control; /* replay_input_run: the allocation records feed the objects */
    struct pes_trace_reader *reader;
    struct pes_merge *merge;
    struct pes_text_reader *text;
    uint64_t records;
    uint64_t dropped[2]; /* by the text filter, passed on so far */
};

static void cursor_close(void *p)
{
    struct cursor *c = p;
    if (!c)
        return;
    pes_merge_close(c->merge);
    if (c->reader)
        pes_trace_reader_close(c->reader);
    if (c->text)
        pes_text_reader_close(c->text);
    free(c);
}

static void *cursor_open(void *ctx, struct pes_error *err)
{
    struct replay_input *in = ctx;
    struct cursor *c = calloc(1, sizeof *c);
    if (!c) {
        fail(err, PES_ERR_NOMEM, in->path, "out of memory");
        return NULL;
    }
    c->in = in;
    if (in->text) {
        c->text = pes_text_reader_open_as(in->path, in->text_format, err);
        if (!c->text)
            goto fail;
        if (in->parts && pes_text_reader_set_range(c->text, in->part_begin, in->part_end, err) < 0)
            goto fail;
        /* before the threads: their first blocks are filtered too */
        if (in->filter.keep && pes_text_reader_set_filter(c->text, &in->filter, err) < 0)
            goto fail;
        if (in->text_threads > 1 && pes_text_reader_set_threads(c->text, in->text_threads, err) < 0)
            goto fail;
        return c;
    }
    c->reader = pes_trace_reader_open(in->path, err);
    if (!c->reader)
        goto fail;
    c->merge = pes_merge_open(c->reader, err);
    if (!c->merge)
        goto fail;
    /* blocks decoded ahead on the workers (a few per thread: not for traces of very many) */
    if (in->sched && in->parts <= 1 && pes_merge_thread_count(c->merge) <= AHEAD_MAX_THREADS &&
        pes_merge_set_workers(c->merge, in->sched, in->path, err) < 0)
        goto fail;
    if (in->parts > 1) { /* part k: the records timed from cut k - 1 to cut k */
        uint64_t *cuts = malloc(in->parts * sizeof *cuts);
        int rc = !cuts ? fail(err, PES_ERR_NOMEM, in->path, "out of memory")
                       : pes_merge_part_times(c->merge, in->parts, cuts, err);
        if (rc == 0)
            rc = pes_merge_set_range(c->merge, in->part ? cuts[in->part - 1] : 0,
                                     in->part + 1 < in->parts ? cuts[in->part] : 0,
                                     in->part + 1 < in->parts && !in->part_to_end, err);
        free(cuts);
        if (rc < 0)
            goto fail;
    }
    return c;
fail:
    cursor_close(c);
    return NULL;
}

/* Up to max records with thread indices (threads may be NULL); control
 * records (time and region markers) only if keep_control. */
static long cursor_read(struct cursor *c, struct pes_record *out, uint32_t *threads, size_t max,
                        int keep_control, struct pes_error *err)
{
    if (c->text) {
        int was = pes_cpu_switch(c->in->st_parse);
        long n = pes_text_reader_read(c->text, out, max, err);
        pes_cpu_switch(was);
        if (n > 0 && threads)
            memset(threads, 0, (size_t)n * sizeof *threads);
        return n;
    }
    int was = pes_cpu_switch(c->in->st_merge);
    long n = pes_merge_read(c->merge, out, threads, max, keep_control, err);
    pes_cpu_switch(was);
    if (n > 0)
        c->records += (uint64_t)n;
    return n;
}

/* Mimicking sees the region markers (for per-region scheduling); it skips
 * the other control records itself. */
static long mimic_read(void *cursor, struct pes_record *out, size_t max, struct pes_error *err)
{
    return cursor_read(cursor, out, NULL, max, 1, err);
}

static const struct pes_site *mimic_site(void *ctx, uint32_t id)
{
    return replay_input_site(ctx, id);
}
static const struct pes_bb *mimic_bb(void *ctx, uint32_t id)
{
    return replay_input_bb(ctx, id);
}

void replay_input_mimic_source(struct replay_input *in, struct pes_mimic_source *src)
{
    src->ctx = in;
    src->open = cursor_open;
    src->read = mimic_read;
    src->close = cursor_close;
    src->site = mimic_site;
    src->bb = mimic_bb;
}

uint32_t replay_input_threads(const struct replay_input *in)
{
    if (in->text)
        return 1;
    size_t n = pes_trace_reader_thread_count(in->reader);
    return n ? (uint32_t)n : 1;
}

int replay_input_has_bbs(const struct replay_input *in)
{
    if (in->text)
        return 0;
    /* A BB table exists if any module declared basic blocks. */
    struct pes_block_ref *refs = NULL;
    size_t n = 0;
    struct pes_error e;
    if (pes_trace_reader_index(in->reader, &refs, &n, &e) < 0)
        return 0;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        if (refs[i].type != PES_BLOCK_MODULE)
            continue;
        struct pes_block b;
        if (pes_trace_reader_block_at(in->reader, &refs[i], &b, &e) == 1 && b.module &&
            b.module->n_bbs > 0)
            found = 1;
    }
    free(refs);
    return found;
}

static struct id_info resolve_id(const struct replay_input *in, uint32_t id)
{
    struct id_info r = {.what = ID_NONE};
    const struct pes_site *s = replay_input_site(in, id);
    if (s && s->kind == PES_KIND_CALL) { /* names calls (PES_ID_CALL's extra), never an access */
        r.what = ID_CALL_SITE;
        return r;
    }
    if (s) {
        r.what = ID_SITE;
        r.kind = (uint8_t)s->kind;
        r.size = s->size;
        r.reads = (uint8_t)pes_kind_reads(s->kind);
        r.writes = (uint8_t)pes_kind_writes(s->kind);
        return r;
    }
    if ((r.bb = replay_input_bb(in, id)))
        r.what = ID_BB;
    return r;
}

/* The resolution of id, from the flat table t (grown and filled on demand). */
static inline struct id_info lookup_id(const struct replay_input *in, struct id_table *t,
                                       uint32_t id)
{
    if (id < t->n_ids && t->slot[id])
        return t->infos[t->slot[id] - 1];
    struct id_info r = resolve_id(in, id);
    if (id < FLAT_IDS && r.what != ID_NONE) { /* a bad id ends the scan: no need to keep it */
        if (id >= t->n_ids) {
            uint32_t n = t->n_ids ? t->n_ids : 1024;
            while (n <= id)
                n *= 2;
            uint32_t *q = realloc(t->slot, (size_t)n * sizeof *q);
            if (!q)
                return r; /* the table is only a shortcut */
            memset(q + t->n_ids, 0, (size_t)(n - t->n_ids) * sizeof *q);
            t->slot = q;
            t->n_ids = n;
        }
        if (t->n_infos == t->cap_infos) {
            uint32_t cap = t->cap_infos ? t->cap_infos * 2 : 256;
            struct id_info *q = realloc(t->infos, (size_t)cap * sizeof *q);
            if (!q)
                return r;
            t->infos = q;
            t->cap_infos = cap;
        }
        t->infos[t->n_infos++] = r;
        t->slot[id] = t->n_infos;
    }
    return r;
}

/* The id's resolution, with the previous record's as a shortcut (a text
 * trace has two ids; a pes trace's loops repeat their sites). */
struct id_cache {
    uint32_t id;
    struct id_info info;
};

/* A sampled trace's EVENTS blocks, one batch each, in file order. */
static int run_events(struct replay_input *in, const struct pes_batch_sink *sink,
                      struct pes_error *err)
{
    struct pes_trace_reader *r = pes_trace_reader_open(in->path, err);
    if (!r)
        return -1;
    struct pes_objects *obj = replay_input_objects(in);
    uint32_t *ev_obj = NULL;
    uint64_t *ev_off = NULL;
    size_t cap = 0;
    if (obj)
        pes_objects_reset(obj);
    struct pes_block b;
    int k;
    while ((k = pes_trace_reader_next(r, &b, err)) > 0) {
        if (b.type != PES_BLOCK_EVENTS)
            continue;
        struct pes_batch batch = {
            .n_events = b.n, .events = b.events, .events_offset = b.file_offset};
        if (obj && b.n > cap) {
            free(ev_obj);
            free(ev_off);
            ev_obj = malloc(b.n * sizeof *ev_obj);
            ev_off = malloc(b.n * sizeof *ev_off);
            cap = b.n;
            if (!ev_obj || !ev_off) {
                k = fail(err, PES_ERR_NOMEM, in->path, "out of memory");
                break;
            }
        }
        /* allocation events take effect in file order (docs/replay.md, "Data objects") */
        for (size_t i = 0; obj && i < b.n; i++) {
            const struct pes_event *ev = &b.events[i];
            ev_obj[i] = 0;
            ev_off[i] = 0;
            if (ev->kind == PES_EV_ALLOC)
                pes_objects_alloc_at(obj, ev->addr, ev->aux, ev->site, ev->time);
            else if (ev->kind == PES_EV_FREE)
                pes_objects_free_at(obj, ev->addr, ev->time);
            else if (ev->kind == PES_EV_SAMPLE && (ev->flags & PES_EVF_HEAP_BLOCK)) {
                /* the sample names its block (the reader checked it) */
                ev_obj[i] = pes_objects_heap_block(obj, ev->other_thread, ev->aux);
                ev_off[i] = ev->distance;
            } else if (ev->addr)
                ev_obj[i] = pes_objects_lookup(obj, ev->addr, ev->site, &ev_off[i]);
        }
        if (obj) {
            batch.event_object = ev_obj;
            batch.event_object_offset = ev_off;
        }
        if (sink->batch(sink->ctx, &batch, err) < 0) {
            k = -1;
            break;
        }
    }
    free(ev_obj);
    free(ev_off);
    pes_trace_reader_close(r);
    return k < 0 ? -1 : 0;
}

/* Another tool's trace: every record is a one-byte load (PES_TEXT_READ_SITE)
 * or store (PES_TEXT_WRITE_SITE) of stream 0, so the batch is filled in runs
 * without the site lookups and checks a pes trace's records need. */
static int text_to_batch(struct pes_batch_buf *b, const struct pes_record *r, size_t n,
                         struct pes_error *err)
{
    while (n) {
        size_t at = b->view.n, m = PES_BATCH - at < n ? PES_BATCH - at : n;
        for (size_t i = 0; i < m; i++) {
            uint32_t id = r[i].id == PES_TEXT_WRITE_SITE; /* the reader makes only these two ids */
            b->addr[at + i] = r[i].addr;
            b->size[at + i] = 1;
            b->length[at + i] = 1;
            b->stream[at + i] = 0;
            b->site[at + i] = id ? PES_TEXT_WRITE_SITE : PES_TEXT_READ_SITE;
            b->rw[at + i] = (uint8_t)(id ? PES_BATCH_WRITE : PES_BATCH_READ);
        }
        b->view.n = at + m;
        r += m;
        n -= m;
        if (b->view.n == PES_BATCH && pes_batch_buf_flush(b, err) < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ resolution */

/* A pes trace's records read in chunks (READ_CHUNK at most) are resolved in
 * two steps: resolve_chunk turns a chunk's accesses into batch columns (the
 * site lookups, sizes, clipping, the checks), which needs nothing but the
 * trace's tables, so that chunks are resolved on the workers side by side;
 * deliver then takes them in order on the reading thread, with what depends
 * on the order (data objects, call paths, the batches' boundaries). */
enum { READ_CHUNK = 4096 };

/* A record of a chunk that is not an access, in order: its index, the
 * accesses before it, and what it is. */
enum { SP_CONTROL, SP_BB, SP_ERROR };
struct special {
    uint32_t at, before;
    uint8_t what;
    const struct pes_bb *bb;
};

struct resolved {
    uint64_t *addr;
    uint32_t *size, *length, *stream, *site;
    uint8_t *rw;
    size_t n_acc;
    struct special *sp; /* SP_ERROR, if any, is the last: the chunk's records stop there */
    size_t n_sp;
    uint64_t clipped; /* as in struct replay_input, for this chunk */
    uint32_t clipped_longest, clipped_site;
    struct pes_error err; /* SP_ERROR's */
};

struct chunk {
    struct pes_record *recs;
    uint32_t *threads;
    long n;          /* cursor_read's result: records, 0 = end, -1 = err */
    uint32_t *ended; /* pes_merge_ended after this read */
    size_t n_ended;
    struct pes_error err;
    struct resolved res;
    /* resolved on a worker: by whom, and when it is done */
    const struct replay_input *in;
    struct id_table *ids;
    uint32_t n_threads;
    atomic_int resolved;
};

static int chunk_alloc(struct chunk *ch, uint32_t n_ended)
{
    struct resolved *o = &ch->res;
    ch->recs = malloc(READ_CHUNK * sizeof *ch->recs);
    ch->threads = malloc(READ_CHUNK * sizeof *ch->threads);
    ch->ended = malloc((n_ended ? n_ended : 1) * sizeof *ch->ended);
    o->addr = malloc(READ_CHUNK * sizeof *o->addr);
    o->size = malloc(READ_CHUNK * sizeof *o->size);
    o->length = malloc(READ_CHUNK * sizeof *o->length);
    o->stream = malloc(READ_CHUNK * sizeof *o->stream);
    o->site = malloc(READ_CHUNK * sizeof *o->site);
    o->rw = malloc(READ_CHUNK);
    o->sp = malloc(READ_CHUNK * sizeof *o->sp);
    return ch->recs && ch->threads && ch->ended && o->addr && o->size && o->length && o->stream &&
                   o->site && o->rw && o->sp
               ? 0
               : -1;
}

static void chunk_free(struct chunk *ch)
{
    struct resolved *o = &ch->res;
    free(ch->recs), free(ch->threads), free(ch->ended);
    free(o->addr), free(o->size), free(o->length), free(o->stream), free(o->site), free(o->rw),
        free(o->sp);
}

static void add_special(struct resolved *o, long at, uint8_t what, const struct pes_bb *bb)
{
    o->sp[o->n_sp++] =
        (struct special){.at = (uint32_t)at, .before = (uint32_t)o->n_acc, .what = what, .bb = bb};
}

/* The chunk's records as access columns and specials, up to its first bad
 * record (SP_ERROR, with its message). Reads only the trace's tables and
 * writes only ch->res and ids. */
static void resolve_chunk(const struct replay_input *in, struct chunk *ch, struct id_table *ids,
                          uint32_t n_threads)
{
    struct resolved *o = &ch->res;
    o->n_acc = o->n_sp = 0;
    o->clipped = 0;
    o->clipped_longest = o->clipped_site = 0;
    struct id_cache last = {.id = UINT32_MAX};
    for (long i = 0; i < ch->n; i++) {
        const struct pes_record *r = &ch->recs[i];
        uint32_t thread = ch->threads[i];
        if (r->id >= PES_ID_CONTROL_FIRST) { /* only with objects or call paths */
            add_special(o, i, SP_CONTROL, NULL);
            continue;
        }
        if (r->id != last.id || last.info.what == ID_UNKNOWN)
            last = (struct id_cache){.id = r->id, .info = lookup_id(in, ids, r->id)};
        const struct id_info *d = &last.info;
        if (thread >= n_threads && d->what != ID_NONE) {
            pes_error_set(&o->err, PES_ERR_FORMAT, 0,
                          "record of thread %u, but the trace announces only %u threads", thread,
                          n_threads);
            add_special(o, i, SP_ERROR, NULL);
            return;
        }
        if (d->what == ID_SITE) {
            uint32_t length = d->size ? d->size : r->extra, size = length;
            if (!d->size && in->range_cap && length > in->range_cap) {
                size = in->range_cap;
                if (o->clipped++ == 0 || length > o->clipped_longest) {
                    o->clipped_longest = length;
                    o->clipped_site = r->id;
                }
            }
            size_t k = o->n_acc++;
            o->addr[k] = r->addr;
            o->size[k] = size;
            o->length[k] = length;
            o->stream[k] = thread;
            o->site[k] = r->id;
            o->rw[k] =
                (uint8_t)((d->reads ? PES_BATCH_READ : 0) | (d->writes ? PES_BATCH_WRITE : 0));
        } else if (d->what == ID_BB) {
            add_special(o, i, SP_BB, d->bb);
        } else {
            char what[96];
            snprintf(what, sizeof what,
                     d->what == ID_CALL_SITE
                         ? "record id %u is a call site (kind call), not an access"
                         : "record id %u is neither a site nor a basic block of any module",
                     r->id);
            fail(&o->err, PES_ERR_FORMAT, in->path, what);
            add_special(o, i, SP_ERROR, NULL);
            return;
        }
    }
}

/* Accesses [from, to) of o into the batch, with their objects and call
 * paths, handed to the sink whenever PES_BATCH are in. 0 or -1. */
static int deliver_accesses(struct pes_batch_buf *buf, const struct resolved *o, size_t from,
                            size_t to, struct pes_objects *obj,
                            const struct pes_callpaths_view *paths, struct pes_error *err)
{
    while (from < to) {
        size_t at = buf->view.n, k = PES_BATCH - at < to - from ? PES_BATCH - at : to - from;
        memcpy(buf->addr + at, o->addr + from, k * sizeof *o->addr);
        memcpy(buf->size + at, o->size + from, k * sizeof *o->size);
        memcpy(buf->length + at, o->length + from, k * sizeof *o->length);
        memcpy(buf->stream + at, o->stream + from, k * sizeof *o->stream);
        memcpy(buf->site + at, o->site + from, k * sizeof *o->site);
        memcpy(buf->rw + at, o->rw + from, k);
        if (obj)
            pes_objects_lookup_many(obj, o->addr + from, o->site + from, k, buf->object + at,
                                    buf->object_offset + at);
        for (size_t j = 0; paths && j < k; j++) {
            uint32_t t = o->stream[from + j];
            buf->callpath[at + j] = t < paths->n_threads ? paths->now[t] : 0;
        }
        buf->view.n = at + k;
        from += k;
        if (buf->view.n == PES_BATCH && pes_batch_buf_flush(buf, err) < 0)
            return -1;
    }
    return 0;
}

/* A resolved chunk into the batch, in order: accesses, BB entries, the
 * control records' effects on objects and call paths (the tracker's, and in
 * parts the effect's; a part after the first gives its accesses the
 * effect's symbolic paths). 0 or -1. */
static int deliver(struct replay_input *in, const struct chunk *ch, struct pes_batch_buf *buf,
                   struct pes_objects *obj, struct pes_callpaths *cp, uint32_t n_threads,
                   struct pes_error *err)
{
    struct pes_callpaths_effect *eff = in->effect;
    if (eff && in->part > 0)
        cp = NULL;
    const struct pes_callpaths_view *paths = cp    ? (const struct pes_callpaths_view *)cp
                                             : eff ? (const struct pes_callpaths_view *)eff
                                                   : NULL;
    const struct resolved *o = &ch->res;
    if (o->clipped) {
        if (in->clipped == 0 || o->clipped_longest > in->clipped_longest) {
            in->clipped_longest = o->clipped_longest;
            in->clipped_site = o->clipped_site;
        }
        in->clipped += o->clipped;
    }
    size_t acc = 0;
    for (size_t k = 0; k < o->n_sp; k++) {
        const struct special *sp = &o->sp[k];
        if (deliver_accesses(buf, o, acc, sp->before, obj, paths, err) < 0)
            return -1;
        acc = sp->before;
        const struct pes_record *r = &ch->recs[sp->at];
        uint32_t thread = ch->threads[sp->at];
        if (sp->what == SP_ERROR) {
            *err = o->err;
            return -1;
        }
        if (sp->what == SP_BB) {
            if (pes_batch_buf_bb(buf, sp->bb, thread, err) < 0)
                return -1;
            continue;
        }
        if (thread < n_threads && obj)
            pes_objects_record(obj, thread, r);
        if (thread < n_threads && ((cp && pes_callpaths_record(cp, thread, r) < 0) ||
                                   (eff && pes_callpaths_effect_record(eff, thread, r) < 0)))
            return fail(err, PES_ERR_NOMEM, in->path, "out of memory for call paths");
    }
    return deliver_accesses(buf, o, acc, o->n_acc, obj, paths, err);
}

/* A worker's task: the chunk resolved (its own strand's id table). */
static void resolve_task(void *arg)
{
    struct chunk *ch = arg;
    resolve_chunk(ch->in, ch, ch->ids, ch->n_threads);
    atomic_store_explicit(&ch->resolved, 1, memory_order_release);
}

static int chunk_resolved(void *ctx)
{
    struct chunk *ch = ctx;
    return atomic_load_explicit(&ch->resolved, memory_order_acquire);
}

/* ------------------------------------------------------------ merge ahead */

/* With replay threads (--jobs >= 2) a pes trace's merge (decompression,
 * decoding and the k-way merge) runs on a thread of its own, up to
 * AHEAD_CHUNKS reads ahead of the batching (once they are all full it waits
 * for half of them to be free: one wake-up per AHEAD_CHUNKS / 2 reads
 * rather than per read), and each chunk it reads goes to a worker to be
 * resolved (resolve_chunk; the strands take the chunks in turn).
 * Each chunk is exactly what cursor_read would have returned on the reading
 * thread, with the threads that ended in it, so nothing downstream changes. */
enum { AHEAD_CHUNKS = 16 };

struct ahead {
    struct cursor *c;
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t filled, freed;
    struct chunk chunk[AHEAD_CHUNKS];
    unsigned head, tail; /* chunks [head, tail) are filled, in order */
    int stop;            /* the reading thread gives up (an error downstream) */
    /* the resolving strands and their id tables (none: the reading thread resolves) */
    uint32_t n_res;
    struct pes_strand **res_strand;
    struct id_table *res_ids;
    uint32_t n_threads;
};

/* One read into ch: the records, their threads and the threads that ended. */
static void chunk_read(struct cursor *c, struct chunk *ch)
{
    ch->n = cursor_read(c, ch->recs, ch->threads, READ_CHUNK, c->keep_control, &ch->err);
    const uint32_t *ended = NULL;
    ch->n_ended = ch->n >= 0 ? pes_merge_ended(c->merge, &ended) : 0;
    if (ch->n_ended)
        memcpy(ch->ended, ended, ch->n_ended * sizeof *ended);
}

static void *ahead_main(void *arg)
{
    struct ahead *a = arg;
    pes_cpu_thread_begin("merge", 0, 1, a->c->in->st_merge);
    for (;;) {
        pthread_mutex_lock(&a->mu);
        while (a->tail - a->head == AHEAD_CHUNKS && !a->stop)
            pthread_cond_wait(&a->freed, &a->mu);
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            break;
        /* the reading thread never touches chunk `tail` until it is published */
        struct chunk *ch = &a->chunk[a->tail % AHEAD_CHUNKS];
        chunk_read(a->c, ch);
        atomic_store_explicit(&ch->resolved, 0, memory_order_relaxed);
        if (ch->n > 0 && a->n_res) {
            struct pes_error e;
            ch->in = a->c->in;
            ch->ids = &a->res_ids[a->tail % a->n_res];
            ch->n_threads = a->n_threads;
            if (pes_sched_submit(a->res_strand[a->tail % a->n_res], resolve_task, ch, &e) < 0)
                resolve_task(ch); /* no memory for the task: here */
        }
        pthread_mutex_lock(&a->mu);
        a->tail++;
        pthread_cond_signal(&a->filled);
        pthread_mutex_unlock(&a->mu);
        if (ch->n <= 0)
            break;
    }
    pes_cpu_thread_end();
    return NULL;
}

static void ahead_free(struct ahead *a)
{
    if (!a)
        return;
    if (a->started) {
        pthread_mutex_lock(&a->mu);
        a->stop = 1;
        pthread_cond_signal(&a->freed);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->tid, NULL);
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->filled);
        pthread_cond_destroy(&a->freed);
    }
    for (uint32_t i = 0; a->res_strand && i < a->n_res; i++)
        pes_strand_destroy(a->res_strand[i]); /* waits for its chunks */
    for (uint32_t i = 0; a->res_ids && i < a->n_res; i++) {
        free(a->res_ids[i].slot);
        free(a->res_ids[i].infos);
    }
    free(a->res_strand);
    free(a->res_ids);
    for (int i = 0; i < AHEAD_CHUNKS; i++)
        chunk_free(&a->chunk[i]);
    free(a);
}

/* NULL with err filled, or with err->code 0 if no thread could be started
 * (the caller then merges on its own thread: the same chunks). */
static struct ahead *ahead_start(struct cursor *c, uint32_t n_threads, struct pes_error *err)
{
    struct ahead *a = calloc(1, sizeof *a);
    if (!a)
        goto nomem;
    a->c = c;
    a->n_threads = n_threads;
    uint32_t n_streams = pes_merge_thread_count(c->merge);
    for (int i = 0; i < AHEAD_CHUNKS; i++)
        if (chunk_alloc(&a->chunk[i], n_streams) < 0)
            goto nomem;
    /* one resolving strand per worker, at most one per chunk */
    uint32_t workers = pes_sched_workers(c->in->sched);
    uint32_t n_res = workers < 2 ? 0 : workers < AHEAD_CHUNKS ? workers : AHEAD_CHUNKS;
    if (n_res) {
        a->res_strand = calloc(n_res, sizeof *a->res_strand);
        a->res_ids = calloc(n_res, sizeof *a->res_ids);
        if (!a->res_strand || !a->res_ids)
            goto nomem;
        for (a->n_res = 0; a->n_res < n_res; a->n_res++) {
            struct pes_strand *st = pes_strand_create(c->in->sched, c->in->st_resolve);
            if (!st)
                goto nomem;
            pes_strand_set_urgent(st); /* the reading thread waits for them */
            a->res_strand[a->n_res] = st;
        }
    }
    if (pthread_mutex_init(&a->mu, NULL) != 0)
        goto nothread;
    if (pthread_cond_init(&a->filled, NULL) != 0) {
        pthread_mutex_destroy(&a->mu);
        goto nothread;
    }
    if (pthread_cond_init(&a->freed, NULL) != 0) {
        pthread_cond_destroy(&a->filled);
        pthread_mutex_destroy(&a->mu);
        goto nothread;
    }
    if (pthread_create(&a->tid, NULL, ahead_main, a) != 0) {
        pthread_cond_destroy(&a->freed);
        pthread_cond_destroy(&a->filled);
        pthread_mutex_destroy(&a->mu);
        goto nothread;
    }
    a->started = 1;
    return a;
nothread:
    ahead_free(a);
    err->code = 0;
    return NULL;
nomem:
    ahead_free(a);
    fail(err, PES_ERR_NOMEM, c->in->path, "out of memory");
    return NULL;
}

/* The next chunk in order, resolved (if it was given to a worker); valid
 * until ahead_release. */
static struct chunk *ahead_take(struct ahead *a)
{
    pthread_mutex_lock(&a->mu);
    while (a->head == a->tail)
        pthread_cond_wait(&a->filled, &a->mu);
    pthread_mutex_unlock(&a->mu);
    struct chunk *ch = &a->chunk[a->head % AHEAD_CHUNKS];
    if (ch->n > 0 && a->n_res)
        pes_sched_wait_urgent(a->c->in->sched, chunk_resolved, ch);
    return ch;
}

static void ahead_release(struct ahead *a)
{
    pthread_mutex_lock(&a->mu);
    a->head++;
    if (a->tail - a->head <= AHEAD_CHUNKS / 2)
        pthread_cond_signal(&a->freed);
    pthread_mutex_unlock(&a->mu);
}

int replay_input_run(struct replay_input *in, const struct pes_batch_sink *sink,
                     struct pes_error *err)
{
    if (in->sampled)
        return run_events(in, sink, err);
    uint32_t n_threads = replay_input_threads(in);
    struct pes_batch_buf buf;
    if (pes_batch_buf_init(&buf, sink, err) < 0)
        return -1;
    struct pes_objects *obj = replay_input_objects(in);
    if (obj && pes_batch_buf_objects(&buf, err) < 0) {
        pes_batch_buf_free(&buf);
        return -1;
    }
    struct pes_callpaths *cp = in->callpaths; /* replay_input_callpaths made them */
    if (cp && pes_batch_buf_callpaths(&buf, err) < 0) {
        pes_batch_buf_free(&buf);
        return -1;
    }
    struct cursor *c = cursor_open(in, err);
    if (obj)
        pes_objects_reset(obj); /* a second pass starts with no live blocks */
    if (cp)
        pes_callpaths_reset(cp); /* and no open calls */

    struct chunk own = {0};
    struct ahead *ahead = NULL;
    int rc = -1, st_was = -1;
    if (!c)
        goto out;
    pes_callpaths_effect_destroy(in->effect);
    in->effect = NULL;
    if (cp && in->parts > 1 && /* a part: its records' effect, from an unknown start */
        !(in->effect =
              pes_callpaths_effect_create(in->callpath_depth, n_threads, in->callpath_parent))) {
        fail(err, PES_ERR_NOMEM, in->path, "out of memory for call paths");
        goto out;
    }
    /* the allocation records and the call edges come in merged order with the accesses */
    c->keep_control = (obj != NULL || cp != NULL) && c->merge != NULL;
    if (chunk_alloc(&own, c->merge ? pes_merge_thread_count(c->merge) + 1 : 1) < 0) {
        fail(err, PES_ERR_NOMEM, in->path, "out of memory");
        goto out;
    }
    if (c->merge && in->text_threads > 1 && pes_merge_thread_count(c->merge) <= AHEAD_MAX_THREADS &&
        !(ahead = ahead_start(c, n_threads, err)) && err->code)
        goto out;
    in->clipped = 0;
    in->clipped_longest = 0;
    st_was = pes_cpu_switch(in->st_batch); /* the sink's analyses name their own stages */
    long n;
    do {
        struct chunk *ch = &own;
        if (ahead) {
            ch = ahead_take(ahead);
            if (ch->n < 0)
                *err = ch->err;
        } else if (c->merge) {
            chunk_read(c, ch);
            if (ch->n < 0)
                *err = ch->err;
        } else {
            ch->n = cursor_read(c, ch->recs, NULL, READ_CHUNK, c->keep_control, err);
            ch->n_ended = 0;
        }
        n = ch->n;
        if (c->text && n > 0 && text_to_batch(&buf, ch->recs, (size_t)n, err) < 0)
            goto out;
        if (c->merge && n > 0) {
            if (!ahead || !ahead->n_res)
                resolve_chunk(in, ch, &in->ids, n_threads);
            if (deliver(in, ch, &buf, obj, cp, n_threads, err) < 0)
                goto out;
        }
        if (n >= 0 && c->text && in->filter.keep) { /* what the filter dropped, as counts */
            uint64_t d[2] = {0, 0};
            pes_text_reader_dropped(c->text, d);
            pes_batch_buf_dropped(&buf, d[0] - c->dropped[0], d[1] - c->dropped[1]);
            c->dropped[0] = d[0];
            c->dropped[1] = d[1];
        }
        /* threads that ended within this read: their records are all in this batch or earlier ones */
        for (size_t i = 0; i < ch->n_ended; i++)
            if (ch->ended[i] < n_threads && pes_batch_buf_ended(&buf, ch->ended[i], err) < 0)
                goto out;
        if (ahead)
            ahead_release(ahead);
    } while (n > 0);
    if (n == 0 && pes_batch_buf_flush(&buf, err) == 0)
        rc = 0;
out:
    pes_cpu_switch(st_was);
    ahead_free(ahead); /* stops the merge thread before its cursor goes */
    chunk_free(&own);
    cursor_close(c);
    pes_batch_buf_free(&buf);
    return rc;
}
