/*
 * text_reader.c — plain-text address traces as PARDA and libCacheSim read them:
 * one access per line, "ADDR", "ADDR R|W" or "R|W ADDR", ADDR in hex with an
 * optional 0x; '#' starts a comment; blank lines are ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace_internal.h"

/* Read in chunks with read(2) and parsed in place: a byte-at-a-time stdio
 * reader was the bottleneck of replaying other tools' traces (about 5 M
 * lines/s). The buffer holds a chunk plus the unfinished line before it. */
#define TEXT_CHUNK (1u << 20)

struct pes_text_reader {
    int fd;              /* -1: reading from memory */
    char *path;
    char *buf;           /* a file: TEXT_CHUNK + PES_TEXT_MAX_LINE bytes; memory: the copy */
    size_t len, pos;     /* bytes in buf, the next one to parse */
    int eof;             /* nothing more to read into buf */
    uint64_t lineno;
};

static struct pes_text_reader *reader_new(const char *name, size_t buf_size, struct pes_error *err)
{
    struct pes_text_reader *t = calloc(1, sizeof *t);
    if (t && (!(t->path = strdup(name)) || !(t->buf = malloc(buf_size ? buf_size : 1)))) {
        free(t->path);
        free(t);
        t = NULL;
    }
    if (!t)
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", name);
    else
        t->fd = -1;
    return t;
}

struct pes_text_reader *pes_text_reader_open(const char *path, struct pes_error *err)
{
    pes_err_clear(err);
    if (!path) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_open: no path");
        return NULL;
    }
    struct pes_text_reader *t = reader_new(path, TEXT_CHUNK + PES_TEXT_MAX_LINE, err);
    if (!t)
        return NULL;
    t->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: cannot open: %s", path, strerror(errno));
        pes_text_reader_close(t);
        return NULL;
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
    struct pes_text_reader *t = reader_new(name ? name : "(memory)", size, err);
    if (!t)
        return NULL;
    if (size)
        memcpy(t->buf, data, size);
    t->len = size;
    t->eof = 1;
    return t;
}

void pes_text_reader_close(struct pes_text_reader *t)
{
    if (!t)
        return;
    if (t->fd > STDIN_FILENO)
        close(t->fd);
    free(t->buf);
    free(t->path);
    free(t);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ','; }

/* hex digit values, 16 for anything else */
static const unsigned char hex_value[256] = {
    ['0'] = 0 + 1, ['1'] = 1 + 1, ['2'] = 2 + 1, ['3'] = 3 + 1, ['4'] = 4 + 1, ['5'] = 5 + 1,
    ['6'] = 6 + 1, ['7'] = 7 + 1, ['8'] = 8 + 1, ['9'] = 9 + 1, ['a'] = 10 + 1, ['b'] = 11 + 1,
    ['c'] = 12 + 1, ['d'] = 13 + 1, ['e'] = 14 + 1, ['f'] = 15 + 1, ['A'] = 10 + 1, ['B'] = 11 + 1,
    ['C'] = 12 + 1, ['D'] = 13 + 1, ['E'] = 14 + 1, ['F'] = 15 + 1,
};   /* stored + 1 so that the zero default means "not a digit" */

/* Parses a hex address token; 0 ok. */
static int parse_hex(const char *s, size_t n, uint64_t *out)
{
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
    }
    if (n == 0 || n > 16)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = hex_value[(unsigned char)s[i]];
        if (!d)
            return -1;
        v = v << 4 | (d - 1);
    }
    *out = v;
    return 0;
}

static int parse_rw(const char *s, size_t n, uint32_t *site)
{
    if (n != 1)
        return -1;
    if (s[0] == 'R' || s[0] == 'r')
        *site = PES_TEXT_READ_SITE;
    else if (s[0] == 'W' || s[0] == 'w')
        *site = PES_TEXT_WRITE_SITE;
    else
        return -1;
    return 0;
}

/* Moves the unparsed bytes to the front and reads more after them; -1 on a
 * read error (errno set). */
static int refill(struct pes_text_reader *t)
{
    size_t keep = t->len - t->pos;
    memmove(t->buf, t->buf + t->pos, keep);
    t->len = keep;
    t->pos = 0;
    size_t cap = TEXT_CHUNK + PES_TEXT_MAX_LINE;
    while (t->len < cap) {
        ssize_t n = read(t->fd, t->buf + t->len, cap - t->len);
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

/* The next line, without its newline, in *line: its length, -1 at the end of
 * the input, -2 if it is longer than PES_TEXT_MAX_LINE (the rest is not read:
 * a file without newlines, or /dev/zero, ends here), -3 on a read error. */
static long read_line(struct pes_text_reader *t, const char **line)
{
    for (;;) {
        size_t avail = t->len - t->pos;
        const char *at = t->buf + t->pos;
        const char *nl = memchr(at, '\n', avail);
        if (nl) {
            size_t len = (size_t)(nl - at);
            if (len > PES_TEXT_MAX_LINE)
                return -2;
            *line = at;
            t->pos += len + 1;
            return (long)len;
        }
        if (avail > PES_TEXT_MAX_LINE)
            return -2;
        if (t->eof) {
            if (!avail)
                return -1;
            *line = at;   /* the last line, without a newline */
            t->pos = t->len;
            return (long)avail;
        }
        if (refill(t) < 0)
            return -3;
    }
}

long pes_text_reader_read(struct pes_text_reader *t, struct pes_record *out, size_t max,
                          struct pes_error *err)
{
    pes_err_clear(err);
    if (!t || (max && !out))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_read: bad arguments");
    size_t n = 0;
    while (n < max) {
        const char *line = NULL;
        long len = read_line(t, &line);
        if (len == -3)
            return pes_error_set(err, PES_ERR_IO, t->lineno, "%s:%llu: read failed: %s",
                               t->path, (unsigned long long)t->lineno + 1, strerror(errno));
        if (len == -2)
            return pes_error_set(err, PES_ERR_FORMAT, t->lineno, "%s:%llu: line longer than %u bytes "
                               "(a text trace has one address per line)",
                               t->path, (unsigned long long)t->lineno + 1, PES_TEXT_MAX_LINE);
        if (len < 0)
            break;
        t->lineno++;
        const char *hash = memchr(line, '#', (size_t)len);
        if (hash)
            len = hash - line;
        const char *tok[3];
        size_t tlen[3];
        int nt = 0;
        for (long i = 0; i < len;) {
            while (i < len && is_space(line[i]))
                i++;
            if (i >= len)
                break;
            long s = i;
            while (i < len && !is_space(line[i]))
                i++;
            if (nt == 3)
                break;
            tok[nt] = line + s;
            tlen[nt++] = (size_t)(i - s);
        }
        if (nt == 0)
            continue;
        uint64_t addr = 0;
        uint32_t site = PES_TEXT_READ_SITE;
        int ok;
        if (nt == 1)
            ok = parse_hex(tok[0], tlen[0], &addr) == 0;
        else if (nt == 2)
            ok = (parse_hex(tok[0], tlen[0], &addr) == 0 && parse_rw(tok[1], tlen[1], &site) == 0) ||
                 (parse_rw(tok[0], tlen[0], &site) == 0 && parse_hex(tok[1], tlen[1], &addr) == 0);
        else
            ok = 0;
        if (!ok) {
            int show = (int)(tlen[0] > 40 ? 40 : tlen[0]);
            return pes_error_set(err, PES_ERR_FORMAT, t->lineno,
                               "%s:%llu: expected \"ADDR\", \"ADDR R|W\" or \"R|W ADDR\" "
                               "(hex address, at most 16 digits), got \"%.*s%s\"",
                               t->path, (unsigned long long)t->lineno, show, tok[0],
                               nt > 1 || tlen[0] > 40 ? " ..." : "");
        }
        out[n].addr = addr;
        out[n].id = site;
        out[n].extra = 0;
        n++;
    }
    return (long)n;
}
