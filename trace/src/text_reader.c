/*
 * text_reader.c — other tools' address traces (docs/trace-format.md §9):
 *   addr     as PARDA and libCacheSim read them: one access per line, "ADDR",
 *            "ADDR R|W" or "R|W ADDR", ADDR in hex with an optional 0x; '#'
 *            starts a comment; blank lines are ignored;
 *   lackey   valgrind --tool=lackey --trace-mem=yes: " L ADDR,SIZE",
 *            " S ADDR,SIZE", " M ADDR,SIZE" (a load and a store); instruction
 *            fetches ("I") and valgrind's own "==PID==" lines are skipped;
 *   binary64 little-endian 64-bit addresses, each a load.
 *
 * The lines are parsed by text_parse.c. This file reads the input and hands
 * out the records: on the calling thread (the default), or, after
 * pes_text_reader_set_threads, from blocks parsed by worker threads and
 * handed out in file order.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text_parse.h"
#include "trace_internal.h"

/* Read in chunks with read(2) and parsed in place: a byte-at-a-time stdio
 * reader was the bottleneck of replaying other tools' traces (about 5 M
 * lines/s). The buffer holds a chunk plus the unfinished line before it,
 * one byte for a newline after a last line that has none, and the bytes the
 * parsers may read past the end of their data. */
#define TEXT_CHUNK (1u << 20)
#define TEXT_DATA  (TEXT_CHUNK + PES_TEXT_MAX_LINE)
#define TEXT_BUF   (TEXT_DATA + 1 + TEXT_PARSE_SLACK)

struct text_pool;

struct pes_text_reader {
    int fd; /* -1: reading from memory */
    char *path;
    char *buf;        /* a file: TEXT_BUF bytes; memory: the copy; with a pool: the carry */
    size_t len, pos;  /* bytes in buf, the next one to parse */
    size_t lines_end; /* text: after the last complete line in buf */
    int eof;          /* nothing more to read into buf */
    enum pes_text_format format;
    uint64_t lineno; /* lines consumed (binary64: addresses read) */
    int has_pending; /* lackey: the store of an "M" line that did not fit */
    struct pes_record pending;
    int started; /* a read was made */
    int failed;  /* the read failed: every later one fails the same way */
    struct pes_error error;
    struct text_pool *pool;        /* NULL: parsed on the calling thread */
    struct pes_text_filter filter; /* keep == NULL: every record */
    uint64_t dropped[2];           /* by the filter, in the records handed out so far */
    char truncation[320];
    /* pes_text_reader_set_range: bytes still to read of the range, and the
     * range's start, whose line number is counted only for an error */
    uint64_t left;
    uint64_t range_begin;
};

static struct pes_text_reader *reader_new(const char *name, size_t buf_size, struct pes_error *err)
{
    struct pes_text_reader *t = calloc(1, sizeof *t);
    /* zeroed: the parsers' look-ahead past the data reads defined bytes */
    if (t && (!(t->path = strdup(name)) || !(t->buf = calloc(1, buf_size)))) {
        free(t->path);
        free(t);
        t = NULL;
    }
    if (!t)
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", name);
    else {
        t->fd = -1;
        t->left = UINT64_MAX;
    }
    return t;
}

static int refill(struct pes_text_reader *t);
static int detect(struct pes_text_reader *t, struct pes_error *err);
static void pool_free(struct text_pool *pool);

struct pes_text_reader *pes_text_reader_open(const char *path, struct pes_error *err)
{
    return pes_text_reader_open_as(path, PES_TEXT_FORMAT_AUTO, err);
}

struct pes_text_reader *pes_text_reader_open_as(const char *path, enum pes_text_format format,
                                                struct pes_error *err)
{
    pes_err_clear(err);
    if ((unsigned)format > PES_TEXT_FORMAT_BINARY64) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_open_as: bad format %d", (int)format);
        return NULL;
    }
    if (!path) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_open: no path");
        return NULL;
    }
    struct pes_text_reader *t = reader_new(path, TEXT_BUF, err);
    if (!t)
        return NULL;
    t->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: cannot open: %s", path, strerror(errno));
        pes_text_reader_close(t);
        return NULL;
    }
    t->format = format;
    if (format == PES_TEXT_FORMAT_AUTO) {
        if (refill(t) < 0) {
            pes_error_set(err, PES_ERR_IO, 0, "%s: read failed: %s", path, strerror(errno));
            pes_text_reader_close(t);
            return NULL;
        }
        if (detect(t, err) < 0) {
            pes_text_reader_close(t);
            return NULL;
        }
    }
    return t;
}

struct pes_text_reader *pes_text_reader_open_memory(const void *data, size_t size, const char *name,
                                                    struct pes_error *err)
{
    pes_err_clear(err);
    if (!data && size) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_open_memory: no data");
        return NULL;
    }
    struct pes_text_reader *t =
        reader_new(name ? name : "(memory)", size + 1 + TEXT_PARSE_SLACK, err);
    if (!t)
        return NULL;
    if (size)
        memcpy(t->buf, data, size);
    t->len = size;
    t->eof = 1;
    t->format = PES_TEXT_FORMAT_ADDR;
    return t;
}

void pes_text_reader_close(struct pes_text_reader *t)
{
    if (!t)
        return;
    pool_free(t->pool);
    if (t->fd > STDIN_FILENO)
        close(t->fd);
    free(t->buf);
    free(t->path);
    free(t);
}

static const char *const format_names[] = {"auto", "addr", "lackey", "binary64"};

const char *pes_text_format_name(enum pes_text_format format)
{
    return (unsigned)format <= PES_TEXT_FORMAT_BINARY64 ? format_names[format] : "?";
}

int pes_text_format_parse(const char *name)
{
    for (int f = 0; f <= PES_TEXT_FORMAT_BINARY64; f++)
        if (name && strcmp(name, format_names[f]) == 0)
            return f;
    return -1;
}

enum pes_text_format pes_text_reader_format(const struct pes_text_reader *t)
{
    return t->format;
}

const char *pes_text_reader_truncation(const struct pes_text_reader *t)
{
    return t->truncation[0] ? t->truncation : NULL;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/* What a file that is no address trace is, by its first bytes: a program,
 * a compressed file, a JSON report, a web page (binary64 would read any of
 * them as addresses, addr stop at its first line); NULL if none of these. */
static const char *not_a_trace(const char *b, size_t n)
{
    static const struct {
        const char *magic;
        size_t len;
        const char *what;
    } kinds[] = {
        {"\x7f"
         "ELF",
         4, "an ELF program or library (record its trace: pes-collect -o TRACE -- PROGRAM)"},
        {"\x1f\x8b", 2, "gzip-compressed (decompress it first: gunzip -k)"},
        {"BZh", 3, "bzip2-compressed (decompress it first: bunzip2 -k)"},
        {"\xfd"
         "7zXZ",
         5, "xz-compressed (decompress it first: unxz -k)"},
        {"\x04\x22\x4d\x18", 4, "lz4-compressed (decompress it first: unlz4)"},
        {"PK\x03\x04", 4, "a zip archive (extract the trace from it first)"},
        {"%PDF", 4, "a PDF document"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (n >= kinds[k].len && memcmp(b, kinds[k].magic, kinds[k].len) == 0)
            return kinds[k].what;
    size_t i = 0;
    while (i < n && is_blank(b[i]))
        i++;
    if (i < n && (b[i] == '{' || b[i] == '[')) {
        static const char report_key[] = "\"pes_replay_json\"", diff_key[] = "\"pes_diff_json\"";
        if (memmem(b, n, report_key, sizeof report_key - 1))
            return "a pes-replay JSON report (pes-replay --diff A B compares two)";
        if (memmem(b, n, diff_key, sizeof diff_key - 1))
            return "a pes-replay --diff JSON report";
        return "a JSON document";
    }
    if (i < n && b[i] == '<')
        return "an HTML or XML document";
    return NULL;
}

/* AUTO, from the first chunk: a file another program wrote (not_a_trace)
 * is an error; a NUL byte makes it binary64 (text never has one); else the
 * first line that is not blank, a comment or valgrind's own "==PID=="
 * decides between lackey and addr. */
static int detect(struct pes_text_reader *t, struct pes_error *err)
{
    const char *what = not_a_trace(t->buf, t->len);
    if (what)
        return pes_error_set(err, PES_ERR_FORMAT, 0,
                             "%s: is %s, not a trace; expected a pes trace or an address trace "
                             "(addr, lackey, binary64: docs/replay.md)",
                             t->path, what);
    if (memchr(t->buf, '\0', t->len)) {
        t->format = PES_TEXT_FORMAT_BINARY64;
        return 0;
    }
    t->format = PES_TEXT_FORMAT_ADDR;
    for (size_t pos = 0; pos < t->len;) {
        const char *l = t->buf + pos, *nl = memchr(l, '\n', t->len - pos);
        size_t n = nl ? (size_t)(nl - l) : t->len - pos;
        pos += n + 1;
        size_t i = 0;
        while (i < n && is_blank(l[i]))
            i++;
        if (i == n || l[i] == '#' || (n >= 2 && l[0] == '=' && l[1] == '='))
            continue;
        if (text_lackey_shape(l, n))
            t->format = PES_TEXT_FORMAT_LACKEY;
        return 0;
    }
    return 0;
}

/* read(2) of at most n bytes, and never past the end of a range. */
static ssize_t read_in(struct pes_text_reader *t, char *dst, size_t n)
{
    if ((uint64_t)n > t->left)
        n = (size_t)t->left;
    if (n == 0)
        return 0;
    ssize_t got = read(t->fd, dst, n);
    if (got > 0)
        t->left -= (uint64_t)got;
    return got;
}

/* Moves the unparsed bytes to the front and reads more after them; -1 on a
 * read error (errno set). */
static int refill(struct pes_text_reader *t)
{
    size_t keep = t->len - t->pos;
    memmove(t->buf, t->buf + t->pos, keep);
    t->len = keep;
    t->pos = 0;
    while (t->len < TEXT_DATA) {
        ssize_t n = read_in(t, t->buf + t->len, TEXT_DATA - t->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            t->eof = 1;
            break;
        }
        t->len += (size_t)n;
    }
    return 0;
}

/* Records the reader's error (sticky) and copies it to err; returns -1. */
static uint64_t lines_before_range(struct pes_text_reader *t);

static long fail(struct pes_text_reader *t, int error, uint64_t lineno, const char *line,
                 size_t len, int read_errno, struct pes_error *err)
{
    lineno += lines_before_range(t);
    text_parse_message(&t->error, error, t->format, t->path, lineno, line, len, read_errno);
    t->failed = 1;
    if (err)
        *err = t->error;
    return -1;
}

/* ------------------------------------------------------------ on the calling thread */

/* Makes buf[pos, lines_end) the next complete lines: 1, 0 at the end of the
 * input, -1 (the reader failed) on a read error or a line too long to hold. */
static int next_lines(struct pes_text_reader *t, struct pes_error *err)
{
    if (t->eof && t->pos >= t->len)
        return 0;
    if (!t->eof && refill(t) < 0)
        return (int)fail(t, TEXT_READ_FAILED, t->lineno + 1, NULL, 0, errno, err);
    size_t end = t->len;
    while (end > t->pos && t->buf[end - 1] != '\n')
        end--;
    if (end == t->pos) { /* no newline: the last line, or one too long */
        if (t->len - t->pos > PES_TEXT_MAX_LINE)
            return (int)fail(t, TEXT_LONG_LINE, t->lineno + 1, NULL, 0, 0, err);
        if (t->len == t->pos) /* refill stops short of TEXT_DATA only at the end */
            return 0;
        t->buf[t->len++] = '\n'; /* means the same as no newline */
        end = t->len;
    }
    t->lines_end = end;
    return 1;
}

static long read_lines(struct pes_text_reader *t, struct pes_record *out, size_t max,
                       struct pes_error *err)
{
    size_t n = 0;
    if (t->has_pending && n < max) {
        out[n++] = t->pending;
        t->has_pending = 0;
    }
    while (n < max) {
        if (t->pos == t->lines_end) {
            int r = next_lines(t, err);
            if (r <= 0) {
                if (r < 0)
                    return -1;
                break;
            }
        }
        struct text_parse s = {.p = t->buf + t->pos, .end = t->buf + t->lines_end};
        n += t->format == PES_TEXT_FORMAT_LACKEY ? text_parse_lackey(&s, out + n, max - n)
                                                 : text_parse_addr(&s, out + n, max - n);
        t->pos = (size_t)(s.p - t->buf);
        t->lineno += s.lines;
        if (s.error)
            return fail(t, s.error, t->lineno + 1, s.p, s.bad_len, 0, err);
        if (s.has_pending) {
            t->pending = s.pending;
            t->has_pending = 1;
        }
    }
    return (long)n;
}

static void set_truncation(struct pes_text_reader *t, size_t rest)
{
    if (rest && !t->truncation[0])
        snprintf(t->truncation, sizeof t->truncation,
                 "%s: ends inside an address: the last %zu byte%s (after %llu complete "
                 "addresses) are not read",
                 t->path, rest, rest == 1 ? "" : "s",
                 (unsigned long long)(t->lineno + t->range_begin / 8)); /* as in the whole file */
}

/* n little-endian addresses at b, as loads */
static void binary_records(const char *b, size_t n, struct pes_record *out)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t a;
        memcpy(&a, b + 8 * i, 8);
        out[i] = (struct pes_record){a, PES_TEXT_READ_SITE, 0};
    }
}

static long read_binary(struct pes_text_reader *t, struct pes_record *out, size_t max,
                        struct pes_error *err)
{
    size_t n = 0;
    while (n < max) {
        size_t avail = t->len - t->pos;
        if (avail < 8) {
            if (t->eof) {
                set_truncation(t, avail);
                break;
            }
            if (refill(t) < 0)
                return fail(t, TEXT_READ_FAILED, t->lineno, NULL, 0, errno, err);
            continue;
        }
        size_t k = avail / 8 < max - n ? avail / 8 : max - n;
        binary_records(t->buf + t->pos, k, out + n);
        n += k;
        t->pos += 8 * k;
        t->lineno += k;
    }
    return (long)n;
}

/* ------------------------------------------------------------ parallel blocks */

/*
 * Worker threads take turns reading the next block of the file (TEXT_DATA
 * bytes at most, cut after its last newline; the unfinished line is carried
 * in t->buf to the start of the next block), then parse their block
 * concurrently into its own records. The consumer hands the blocks' records
 * out in block order, numbering lines by adding up the blocks' line counts,
 * so an error names its line exactly as the calling-thread reader does.
 * n_blocks slots bound the memory: a worker waits for the consumer to free
 * the oldest slot before it reads a block into it.
 *
 * Locks: input_lock guards the file and the carry (t->fd, t->buf, t->len,
 * t->pos, t->eof), and is always taken before lock, which guards the ring
 * (each slot's status, next_fill, consumed, input_done, n_filled, stop). A
 * block is its worker's between its claim and BLOCK_READY, then the
 * consumer's until it is released.
 */
enum { BLOCK_EMPTY, BLOCK_BUSY, BLOCK_READY };

struct text_block {
    char *buf;  /* TEXT_BUF bytes */
    size_t len; /* its complete lines */
    struct pes_record *rec;
    size_t nrec, rec_cap;
    uint64_t dropped[2]; /* records the filter dropped from it */
    uint64_t lines;      /* lines in the block; with an error, before it */
    int status;
    int error; /* enum text_parse_error: comes after the block's records */
    int read_errno;
    size_t bad_off, bad_len; /* TEXT_BAD_LINE: the line in buf */
    int last;                /* nothing is read after this block */
};

struct text_pool {
    struct pes_text_reader *t;
    pthread_t *threads;
    unsigned n_threads, n_blocks;
    struct text_block *blocks;
    pthread_mutex_t input_lock, lock;
    pthread_cond_t slot_free, block_ready;
    uint64_t next_fill; /* the next block to read */
    uint64_t consumed;  /* blocks released by the consumer */
    uint64_t n_filled;  /* with input_done: the number of blocks */
    int input_done, stop;
    /* the consumer's */
    struct text_block *cur;
    size_t cur_pos;
    uint64_t lines_before; /* lines in the released blocks */
};

/* Reads block b (the next one of the file); under input_lock. */
static void fill_block(struct pes_text_reader *t, struct text_block *b)
{
    b->error = TEXT_OK;
    b->dropped[0] = b->dropped[1] = 0; /* a block that fails to read is not parsed */
    b->len = b->nrec = 0;
    b->lines = 0;
    b->last = 0;
    size_t have = t->len - t->pos;
    memcpy(b->buf, t->buf + t->pos, have);
    t->len = t->pos = 0;
    while (have < TEXT_DATA && !t->eof) {
        ssize_t n = read_in(t, b->buf + have, TEXT_DATA - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) { /* the unfinished line and what came after it are not parsed */
            b->error = TEXT_READ_FAILED;
            b->read_errno = errno;
            b->last = 1;
            return;
        }
        if (n == 0)
            t->eof = 1;
        have += (size_t)n;
    }
    size_t end = have;
    while (end > 0 && b->buf[end - 1] != '\n')
        end--;
    size_t tail = have - end;
    b->len = end;
    if (tail > PES_TEXT_MAX_LINE) {
        b->error = TEXT_LONG_LINE;
        b->last = 1;
    } else if (t->eof) {
        b->last = 1;
        if (tail) { /* the last line, without its newline */
            b->buf[have] = '\n';
            b->len = have + 1;
        }
    } else {
        memcpy(t->buf, b->buf + end, tail);
        t->len = tail;
    }
}

static int grow_records(struct text_block *b)
{
    size_t cap = b->rec_cap ? 2 * b->rec_cap : TEXT_CHUNK / 8;
    struct pes_record *rec = realloc(b->rec, cap * sizeof *rec);
    if (!rec)
        return -1;
    b->rec = rec;
    b->rec_cap = cap;
    return 0;
}

/* Parses block b into its records; outside the locks. */
/* With a filter, a piece of FILTER_RUN records at a time is filtered as
 * soon as it is parsed, while it is still in the L1 cache. */
#define FILTER_RUN 1024

static void parse_block(enum pes_text_format format, const struct pes_text_filter *f,
                        struct text_block *b)
{
    struct text_parse s = {.p = b->buf, .end = b->buf + b->len};
    size_t n = 0;
    b->dropped[0] = b->dropped[1] = 0;
    while (!s.error && (s.p < s.end || s.has_pending)) {
        if (b->rec_cap - n < 2 && grow_records(b) < 0) {
            b->nrec = n;
            b->lines = s.lines;
            b->error = TEXT_NO_MEMORY;
            return;
        }
        size_t got, room = b->rec_cap - n;
        if (f->keep && room > FILTER_RUN)
            room = FILTER_RUN;
        if (s.has_pending) {
            b->rec[n] = s.pending;
            s.has_pending = 0;
            got = 1;
        } else {
            got = format == PES_TEXT_FORMAT_LACKEY ? text_parse_lackey(&s, b->rec + n, room)
                                                   : text_parse_addr(&s, b->rec + n, room);
        }
        /* filtered here, on the parsing thread: dropped records are never handed over */
        n += f->keep && got ? f->keep(f->ctx, b->rec + n, got, b->dropped) : got;
    }
    b->nrec = n;
    b->lines = s.lines;
    if (s.error) { /* comes before an error found when the block was read */
        b->error = s.error;
        b->bad_off = (size_t)(s.p - b->buf);
        b->bad_len = s.bad_len;
    }
}

static void *pool_worker(void *arg)
{
    struct text_pool *pool = arg;
    for (;;) {
        pthread_mutex_lock(&pool->input_lock);
        pthread_mutex_lock(&pool->lock);
        while (!pool->stop && !pool->input_done &&
               pool->next_fill >= pool->consumed + pool->n_blocks)
            pthread_cond_wait(&pool->slot_free, &pool->lock);
        if (pool->stop || pool->input_done) {
            pthread_mutex_unlock(&pool->lock);
            pthread_mutex_unlock(&pool->input_lock);
            return NULL;
        }
        uint64_t seq = pool->next_fill++;
        struct text_block *b = &pool->blocks[seq % pool->n_blocks];
        b->status = BLOCK_BUSY;
        pthread_mutex_unlock(&pool->lock);
        fill_block(pool->t, b);
        if (b->last) {
            pthread_mutex_lock(&pool->lock);
            pool->input_done = 1;
            pool->n_filled = seq + 1;
            pthread_cond_broadcast(&pool->block_ready);
            pthread_mutex_unlock(&pool->lock);
        }
        pthread_mutex_unlock(&pool->input_lock);
        if (b->error != TEXT_READ_FAILED)
            parse_block(pool->t->format, &pool->t->filter, b);
        pthread_mutex_lock(&pool->lock);
        b->status = BLOCK_READY;
        pthread_cond_broadcast(&pool->block_ready);
        pthread_mutex_unlock(&pool->lock);
    }
}

static void pool_free(struct text_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->slot_free);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->n_threads; i++)
        pthread_join(pool->threads[i], NULL);
    for (unsigned i = 0; i < pool->n_blocks; i++) {
        free(pool->blocks[i].buf);
        free(pool->blocks[i].rec);
    }
    pthread_cond_destroy(&pool->block_ready);
    pthread_cond_destroy(&pool->slot_free);
    pthread_mutex_destroy(&pool->lock);
    pthread_mutex_destroy(&pool->input_lock);
    free(pool->blocks);
    free(pool->threads);
    free(pool);
}

static struct text_pool *pool_new(struct pes_text_reader *t, unsigned n_threads)
{
    struct text_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->t = t;
    /* a block per worker being parsed, as many parsed ahead of the consumer */
    pool->n_blocks = 2 * n_threads;
    pool->blocks = calloc(pool->n_blocks, sizeof *pool->blocks);
    pool->threads = calloc(n_threads, sizeof *pool->threads);
    pthread_mutex_init(&pool->input_lock, NULL);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->slot_free, NULL);
    pthread_cond_init(&pool->block_ready, NULL);
    int ok = pool->blocks && pool->threads;
    for (unsigned i = 0; ok && i < pool->n_blocks; i++)
        ok = (pool->blocks[i].buf = calloc(1, TEXT_BUF)) != NULL;
    /* workers take no signals: the process's handlers run on its own threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (; ok && pool->n_threads < n_threads; pool->n_threads++)
        ok = pthread_create(&pool->threads[pool->n_threads], NULL, pool_worker, pool) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok) {
        pool_free(pool);
        return NULL;
    }
    return pool;
}

static long read_pool(struct pes_text_reader *t, struct pes_record *out, size_t max,
                      struct pes_error *err)
{
    struct text_pool *pool = t->pool;
    size_t n = 0;
    while (n < max) {
        struct text_block *b = pool->cur;
        if (!b) {
            pthread_mutex_lock(&pool->lock);
            for (;;) {
                b = &pool->blocks[pool->consumed % pool->n_blocks];
                if (b->status == BLOCK_READY)
                    break;
                if (pool->input_done && pool->consumed >= pool->n_filled) {
                    b = NULL;
                    break;
                }
                pthread_cond_wait(&pool->block_ready, &pool->lock);
            }
            pthread_mutex_unlock(&pool->lock);
            if (!b)
                break;
            pool->cur = b;
            pool->cur_pos = 0;
            t->dropped[0] += b->dropped[0];
            t->dropped[1] += b->dropped[1];
        }
        size_t k = b->nrec - pool->cur_pos < max - n ? b->nrec - pool->cur_pos : max - n;
        if (k) /* a block without records may have no array */
            memcpy(out + n, b->rec + pool->cur_pos, k * sizeof *out);
        n += k;
        pool->cur_pos += k;
        if (n == max) /* what follows the block's records waits for the next call */
            break;
        t->lineno = pool->lines_before + b->lines;
        if (b->error)
            return fail(t, b->error, t->lineno + 1, b->buf + b->bad_off, b->bad_len, b->read_errno,
                        err);
        pool->lines_before = t->lineno;
        pthread_mutex_lock(&pool->lock);
        b->status = BLOCK_EMPTY;
        pool->consumed++;
        pthread_cond_signal(&pool->slot_free);
        pthread_mutex_unlock(&pool->lock);
        pool->cur = NULL;
    }
    return (long)n;
}

int pes_text_reader_set_threads(struct pes_text_reader *t, unsigned n, struct pes_error *err)
{
    pes_err_clear(err);
    if (!t || n < 1 || n > PES_TEXT_MAX_THREADS)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "pes_text_reader_set_threads: %u threads (1 to %u)", n,
                             PES_TEXT_MAX_THREADS);
    if (t->started || t->pool)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "%s: pes_text_reader_set_threads after the first read", t->path);
    /* memory, standard input and binary64 (turning bytes into records is a
     * copy, which the consumer would do again): on the calling thread */
    if (n == 1 || t->fd <= STDIN_FILENO || t->format == PES_TEXT_FORMAT_BINARY64)
        return 0;
    if (!(t->pool = pool_new(t, n)))
        return pes_error_set(err, PES_ERR_NOMEM, 0, "%s: cannot start %u reader threads", t->path,
                             n);
    return 0;
}

unsigned pes_text_reader_threads(const struct pes_text_reader *t)
{
    return t->pool ? t->pool->n_threads : 1;
}

long pes_text_reader_read(struct pes_text_reader *t, struct pes_record *out, size_t max,
                          struct pes_error *err)
{
    pes_err_clear(err);
    if (!t || (max && !out))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_read: bad arguments");
    t->started = 1;
    if (t->failed) {
        if (err)
            *err = t->error;
        return -1;
    }
    if (t->pool)
        return read_pool(t, out, max, err);
    if (!t->filter.keep)
        return t->format == PES_TEXT_FORMAT_BINARY64 ? read_binary(t, out, max, err)
                                                     : read_lines(t, out, max, err);
    /* on this thread: read, filter, until max are kept or the input ends */
    size_t n = 0;
    while (n < max) {
        long got = t->format == PES_TEXT_FORMAT_BINARY64 ? read_binary(t, out + n, max - n, err)
                                                         : read_lines(t, out + n, max - n, err);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        n += t->filter.keep(t->filter.ctx, out + n, (size_t)got, t->dropped);
    }
    return (long)n;
}

int pes_text_reader_set_filter(struct pes_text_reader *t, const struct pes_text_filter *f,
                               struct pes_error *err)
{
    pes_err_clear(err);
    if (!t)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_set_filter: no reader");
    if (t->started || t->pool) /* the workers parse as soon as they start */
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "%s: pes_text_reader_set_filter after the first read or "
                             "pes_text_reader_set_threads",
                             t->path);
    t->filter = f ? *f : (struct pes_text_filter){0};
    return 0;
}

void pes_text_reader_dropped(const struct pes_text_reader *t, uint64_t dropped[2])
{
    dropped[0] += t->dropped[0];
    dropped[1] += t->dropped[1];
}

/* ------------------------------------------------------------ parts of a file */

/* Newlines in [0, end) of the open file (pread: the reading position stays). */
static uint64_t count_lines(int fd, uint64_t end)
{
    char buf[1 << 14];
    uint64_t lines = 0;
    for (uint64_t at = 0; at < end;) {
        size_t want = end - at < sizeof buf ? (size_t)(end - at) : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (const char *p = buf, *e = buf + n; (p = memchr(p, '\n', (size_t)(e - p))); p++)
            lines++;
        at += (uint64_t)n;
    }
    return lines;
}

/* A range's errors number lines from the file's start, as a whole-file
 * reader does: counted once, on the first error (it costs a pass over the
 * bytes before the range, which only an error needs). */
static uint64_t lines_before_range(struct pes_text_reader *t)
{
    if (!t->range_begin)
        return 0;
    uint64_t lines = t->format == PES_TEXT_FORMAT_BINARY64 ? t->range_begin / 8
                                                           : count_lines(t->fd, t->range_begin);
    t->range_begin = 0; /* the error is sticky: never counted twice */
    return lines;
}

int pes_text_reader_set_range(struct pes_text_reader *t, uint64_t begin, uint64_t end,
                              struct pes_error *err)
{
    pes_err_clear(err);
    if (!t || t->fd <= STDIN_FILENO || t->started || t->pool || end < begin)
        return pes_error_set(err, PES_ERR_ARG, 0,
                             "pes_text_reader_set_range: a file reader before its first "
                             "read, and begin <= end");
    if (lseek(t->fd, (off_t)begin, SEEK_SET) < 0)
        return pes_error_set(err, PES_ERR_IO, 0, "%s: cannot seek to byte %llu: %s", t->path,
                             (unsigned long long)begin, strerror(errno));
    /* what AUTO detection read from the start is dropped */
    t->len = t->pos = t->lines_end = 0;
    t->eof = 0;
    t->left = end - begin;
    t->range_begin = begin;
    return 0;
}

/* The first line start at or after `at` (the file's size if none). */
static int line_start(int fd, uint64_t at, uint64_t size, uint64_t *out)
{
    char buf[1 << 12];
    if (at == 0 || at >= size) {
        *out = at < size ? at : size;
        return 0;
    }
    /* a line starts at `at` if the byte before it ends a line */
    for (uint64_t p = at - 1; p < size;) {
        size_t want = size - p < sizeof buf ? (size_t)(size - p) : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)p);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            errno = 0; /* the file is shorter than its size said */
        if (n <= 0)
            return -1;
        const char *nl = memchr(buf, '\n', (size_t)n);
        if (nl) {
            *out = p + (uint64_t)(nl - buf) + 1;
            return 0;
        }
        p += (uint64_t)n;
    }
    *out = size;
    return 0;
}

int pes_text_part(const char *path, enum pes_text_format format, unsigned k, unsigned n,
                  uint64_t *begin, uint64_t *end, struct pes_error *err)
{
    pes_err_clear(err);
    if (!path || n == 0 || k >= n || format == PES_TEXT_FORMAT_AUTO ||
        (unsigned)format > PES_TEXT_FORMAT_BINARY64)
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_text_part: bad arguments");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size, cut[2];
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        /* size * k / n without overflow for any file size */
        uint64_t j = k + (unsigned)i, at = j >= n ? size : size / n * j + size % n * j / n;
        if (format == PES_TEXT_FORMAT_BINARY64)
            cut[i] = j >= n ? size : at / 8 * 8;
        else if (j >= n)
            cut[i] = size;
        else
            rc = line_start(fd, at, size, &cut[i]);
    }
    close(fd);
    if (rc < 0)
        return errno
                   ? pes_error_set(err, PES_ERR_IO, 0, "%s: read failed: %s", path, strerror(errno))
                   : pes_error_set(err, PES_ERR_IO, 0,
                                   "%s: ends before byte %llu, its size a moment ago: "
                                   "the file changed while it was read",
                                   path, (unsigned long long)size);
    *begin = cut[0];
    *end = cut[1];
    return 0;
}
