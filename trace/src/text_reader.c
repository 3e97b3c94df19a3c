/*
 * text_reader.c — other tools' address traces (docs/trace-format.md §9):
 *   addr     as PARDA and libCacheSim read them: one access per line, "ADDR",
 *            "ADDR R|W" or "R|W ADDR", ADDR in hex with an optional 0x; '#'
 *            starts a comment; blank lines are ignored;
 *   lackey   valgrind --tool=lackey --trace-mem=yes: " L ADDR,SIZE",
 *            " S ADDR,SIZE", " M ADDR,SIZE" (a load and a store); instruction
 *            fetches ("I") and valgrind's own "==PID==" lines are skipped;
 *   binary64 little-endian 64-bit addresses, each a load.
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
    enum pes_text_format format;
    uint64_t lineno;     /* binary64: addresses read */
    int has_pending;     /* lackey: the store of an "M" line that did not fit */
    struct pes_record pending;
    char truncation[320];
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

static int refill(struct pes_text_reader *t);
static void detect(struct pes_text_reader *t);

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
    struct pes_text_reader *t = reader_new(path, TEXT_CHUNK + PES_TEXT_MAX_LINE, err);
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
        detect(t);
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
    t->format = PES_TEXT_FORMAT_ADDR;
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

/* A lackey data line: " L ", " S " or " M " and a hex digit; or "I  ". */
static int lackey_shape(const char *l, size_t n)
{
    if (n >= 4 && l[0] == ' ' && (l[1] == 'L' || l[1] == 'S' || l[1] == 'M') && l[2] == ' ')
        return 1;
    return n >= 3 && l[0] == 'I' && l[1] == ' ' && l[2] == ' ';
}

/* AUTO, from the first chunk: a NUL byte makes it binary64 (text never has
 * one); else the first line that is not blank, a comment or valgrind's own
 * "==PID==" decides between lackey and addr. */
static void detect(struct pes_text_reader *t)
{
    if (memchr(t->buf, '\0', t->len)) {
        t->format = PES_TEXT_FORMAT_BINARY64;
        return;
    }
    t->format = PES_TEXT_FORMAT_ADDR;
    for (size_t pos = 0; pos < t->len;) {
        const char *l = t->buf + pos, *nl = memchr(l, '\n', t->len - pos);
        size_t n = nl ? (size_t)(nl - l) : t->len - pos;
        pos += n + 1;
        size_t i = 0;
        while (i < n && is_space(l[i]))
            i++;
        if (i == n || l[i] == '#' || (n >= 2 && l[0] == '=' && l[1] == '='))
            continue;
        if (lackey_shape(l, n))
            t->format = PES_TEXT_FORMAT_LACKEY;
        return;
    }
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

/* One addr-format line: 1 and the record, 0 for a blank or comment line,
 * -1 (err set) if malformed. */
static int addr_line(struct pes_text_reader *t, const char *line, long len, struct pes_record *out,
                     struct pes_error *err)
{
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
        return 0;
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
        pes_error_set(err, PES_ERR_FORMAT, t->lineno,
                      "%s:%llu: expected \"ADDR\", \"ADDR R|W\" or \"R|W ADDR\" "
                      "(hex address, at most 16 digits), got \"%.*s%s\"",
                      t->path, (unsigned long long)t->lineno, show, tok[0],
                      nt > 1 || tlen[0] > 40 ? " ..." : "");
        return -1;
    }
    *out = (struct pes_record){addr, site, 0};
    return 1;
}

/* One lackey line: the number of records (0..2: "M" is a load and a store),
 * -1 (err set) if malformed. The access's size is not kept: a record stands
 * for the access's first byte, as an addr-format line does. */
static int lackey_line(struct pes_text_reader *t, const char *line, long len, struct pes_record out[2],
                       struct pes_error *err)
{
    long n = len;
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
        n--;
    if (n == 0 || (n >= 2 && line[0] == '=' && line[1] == '='))
        return 0;
    if (n >= 3 && line[0] == 'I' && line[1] == ' ')
        return 0;   /* an instruction fetch */
    const char *comma = n > 3 ? memchr(line + 3, ',', (size_t)(n - 3)) : NULL;
    uint64_t addr;
    int ok = lackey_shape(line, (size_t)n) && line[0] == ' ' && comma &&
             parse_hex(line + 3, (size_t)(comma - line - 3), &addr) == 0 && comma + 1 < line + n;
    for (const char *c = comma ? comma + 1 : NULL; ok && c < line + n; c++)
        ok = *c >= '0' && *c <= '9';
    if (!ok) {
        int show = (int)(n > 40 ? 40 : n);
        pes_error_set(err, PES_ERR_FORMAT, t->lineno,
                      "%s:%llu: expected a valgrind lackey line (\" L|S|M ADDR,SIZE\", \"I  ADDR,SIZE\" "
                      "or \"==PID== ...\"), got \"%.*s%s\"",
                      t->path, (unsigned long long)t->lineno, show, line, n > 40 ? " ..." : "");
        return -1;
    }
    uint32_t first = line[1] == 'S' ? PES_TEXT_WRITE_SITE : PES_TEXT_READ_SITE;
    out[0] = (struct pes_record){addr, first, 0};
    out[1] = (struct pes_record){addr, PES_TEXT_WRITE_SITE, 0};
    return line[1] == 'M' ? 2 : 1;
}

static long read_binary(struct pes_text_reader *t, struct pes_record *out, size_t max, struct pes_error *err)
{
    size_t n = 0;
    while (n < max) {
        if (t->len - t->pos < 8) {
            if (t->eof) {
                size_t rest = t->len - t->pos;
                if (rest && !t->truncation[0])
                    snprintf(t->truncation, sizeof t->truncation,
                             "%s: ends inside an address: the last %zu byte%s (after %llu complete "
                             "addresses) are not read", t->path, rest, rest == 1 ? "" : "s",
                             (unsigned long long)t->lineno);
                break;
            }
            if (refill(t) < 0)
                return pes_error_set(err, PES_ERR_IO, t->lineno, "%s: read failed after %llu addresses: %s",
                                     t->path, (unsigned long long)t->lineno, strerror(errno));
            continue;
        }
        const unsigned char *b = (const unsigned char *)t->buf + t->pos;
        uint64_t a = 0;
        for (int k = 7; k >= 0; k--)
            a = a << 8 | b[k];
        out[n++] = (struct pes_record){a, PES_TEXT_READ_SITE, 0};
        t->pos += 8;
        t->lineno++;
    }
    return (long)n;
}

long pes_text_reader_read(struct pes_text_reader *t, struct pes_record *out, size_t max,
                          struct pes_error *err)
{
    pes_err_clear(err);
    if (!t || (max && !out))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_read: bad arguments");
    if (t->format == PES_TEXT_FORMAT_BINARY64)
        return read_binary(t, out, max, err);
    size_t n = 0;
    if (t->has_pending && n < max) {
        out[n++] = t->pending;
        t->has_pending = 0;
    }
    while (n < max) {
        const char *line = NULL;
        long len = read_line(t, &line);
        if (len == -3)
            return pes_error_set(err, PES_ERR_IO, t->lineno, "%s:%llu: read failed: %s",
                               t->path, (unsigned long long)t->lineno + 1, strerror(errno));
        if (len == -2)
            return pes_error_set(err, PES_ERR_FORMAT, t->lineno, "%s:%llu: line longer than %u bytes "
                               "(a text trace has one access per line)",
                               t->path, (unsigned long long)t->lineno + 1, PES_TEXT_MAX_LINE);
        if (len < 0)
            break;
        t->lineno++;
        struct pes_record r[2];
        int k = t->format == PES_TEXT_FORMAT_LACKEY ? lackey_line(t, line, len, r, err)
                                                    : addr_line(t, line, len, r, err);
        if (k < 0)
            return -1;
        if (k >= 1)
            out[n++] = r[0];
        if (k == 2) {
            if (n < max)
                out[n++] = r[1];
            else
                t->pending = r[1], t->has_pending = 1;
        }
    }
    return (long)n;
}
