/*
 * text_reader.c — plain-text address traces as PARDA and libCacheSim read them:
 * one access per line, "ADDR", "ADDR R|W" or "R|W ADDR", ADDR in hex with an
 * optional 0x; '#' starts a comment; blank lines are ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_internal.h"

struct pes_text_reader {
    FILE *f;
    char *path;
    char *mem;           /* the copy _open_memory reads from */
    char line[PES_TEXT_MAX_LINE + 1];
    uint64_t lineno;
};

struct pes_text_reader *pes_text_reader_open(const char *path, struct pes_error *err)
{
    pes_err_clear(err);
    if (!path) {
        pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_open: no path");
        return NULL;
    }
    struct pes_text_reader *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", path);
        return NULL;
    }
    t->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!t->f) {
        pes_error_set(err, PES_ERR_IO, 0, "%s: cannot open: %s", path, strerror(errno));
        free(t->path);
        free(t);
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
    if (!name)
        name = "(memory)";
    struct pes_text_reader *t = calloc(1, sizeof *t);
    if (t && (t->path = strdup(name)) && (t->mem = malloc(size ? size : 1))) {
        if (size)
            memcpy(t->mem, data, size);
        t->f = fmemopen(t->mem, size, "r");
    }
    if (!t || !t->f) {
        pes_error_set(err, PES_ERR_NOMEM, 0, "%s: out of memory", name);
        pes_text_reader_close(t);
        return NULL;
    }
    return t;
}

void pes_text_reader_close(struct pes_text_reader *t)
{
    if (!t)
        return;
    if (t->f && t->f != stdin)
        fclose(t->f);
    free(t->mem);
    free(t->path);
    free(t);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ','; }

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
        char c = s[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        v = v << 4 | d;
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

/* The next line into t->line, without its newline: its length, -1 at the end
 * of the input, -2 if it is longer than PES_TEXT_MAX_LINE (the rest is not
 * read: a file without newlines, or /dev/zero, ends here), -3 on a read error. */
static long read_line(struct pes_text_reader *t)
{
    size_t len = 0;
    int c;
    while ((c = getc_unlocked(t->f)) != EOF && c != '\n') {
        if (len == PES_TEXT_MAX_LINE)
            return -2;
        t->line[len++] = (char)c;
    }
    if (c == EOF && ferror(t->f))
        return -3;
    if (c == EOF && len == 0)
        return -1;
    return (long)len;
}

long pes_text_reader_read(struct pes_text_reader *t, struct pes_record *out, size_t max,
                          struct pes_error *err)
{
    pes_err_clear(err);
    if (!t || (max && !out))
        return pes_error_set(err, PES_ERR_ARG, 0, "pes_text_reader_read: bad arguments");
    size_t n = 0;
    while (n < max) {
        long len = read_line(t);
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
        char *hash = memchr(t->line, '#', (size_t)len);
        if (hash)
            len = hash - t->line;
        const char *tok[3];
        size_t tlen[3];
        int nt = 0;
        for (long i = 0; i < len;) {
            while (i < len && is_space(t->line[i]))
                i++;
            if (i >= len)
                break;
            long s = i;
            while (i < len && !is_space(t->line[i]))
                i++;
            if (nt == 3)
                break;
            tok[nt] = t->line + s;
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
