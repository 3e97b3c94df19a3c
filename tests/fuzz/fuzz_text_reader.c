/*
 * fuzz_text_reader.c — libFuzzer target for the plain-text address-trace
 * reader (pes_text_reader_*) and for pes_escape_text, which prints its lines.
 *
 * Two oracles, written from the documents rather than from the code:
 *   - ref_parse: docs/trace-format.md §9 as simply as it can be said; the
 *     reader must return the same records, or fail at the same line;
 *   - the escaped text of any input (and of every error message) has no
 *     byte a terminal acts on and turns back into the input when unescaped
 *     (pes/trace.h: pes_escape_text).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/trace.h"

static int is_sep(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

static int hex_token(const uint8_t *s, size_t n, uint64_t *v)
{
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2, n -= 2;
    if (n == 0 || n > 16)
        return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        const char *digits = "0123456789abcdef", *d = NULL;
        uint8_t c = s[i] >= 'A' && s[i] <= 'F' ? (uint8_t)(s[i] - 'A' + 'a') : s[i];
        if (c)
            d = strchr(digits, c);
        if (!d)
            return 0;
        *v = *v << 4 | (uint64_t)(d - digits);
    }
    return 1;
}

static int rw_token(const uint8_t *s, size_t n, uint32_t *id)
{
    if (n != 1 || !strchr("RrWw", s[0]) || !s[0])
        return 0;
    *id = s[0] == 'R' || s[0] == 'r' ? PES_TEXT_READ_SITE : PES_TEXT_WRITE_SITE;
    return 1;
}

/* The records of data (at most max) in out; returns their number, or
 * -(line) of the first malformed line (out then holds the records before it). */
static long ref_parse(const uint8_t *data, size_t size, struct pes_record *out, size_t max)
{
    size_t n = 0, line = 0;
    for (size_t pos = 0; pos < size && n < max; line++) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - data) : size, len = end - pos;
        const uint8_t *l = data + pos, *hash = memchr(l, '#', len);
        if (hash)
            len = (size_t)(hash - l);
        pos = end + 1;
        const uint8_t *tok[3];
        size_t tlen[3], nt = 0;
        for (size_t i = 0; i < len && nt < 3;) {
            while (i < len && is_sep(l[i]))
                i++;
            size_t s = i;
            while (i < len && !is_sep(l[i]))
                i++;
            if (i > s)
                tok[nt] = l + s, tlen[nt++] = i - s;
        }
        if (nt == 0)
            continue;
        struct pes_record r = {0, PES_TEXT_READ_SITE, 0};
        int ok = nt == 1 ? hex_token(tok[0], tlen[0], &r.addr)
                 : nt == 2
                     ? (hex_token(tok[0], tlen[0], &r.addr) && rw_token(tok[1], tlen[1], &r.id)) ||
                           (rw_token(tok[0], tlen[0], &r.id) && hex_token(tok[1], tlen[1], &r.addr))
                     : 0;
        if (!ok)
            return -(long)(line + 1);
        out[n++] = r;
    }
    return (long)n;
}

/* pes_escape_text(s): no C0, DEL or C1 control and only valid UTF-8 in the
 * result, and unescaping it gives s back. */
static void check_escape(const char *s)
{
    size_t n = pes_escape_text(NULL, 0, s);
    char *e = malloc(n + 1), *back = malloc(strlen(s) + 1);
    if (!e || !back)
        abort();
    if (pes_escape_text(e, n + 1, s) != n || strlen(e) != n)
        abort();
    size_t k = 0;
    for (const uint8_t *p = (const uint8_t *)e; *p;) {
        if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && *p < 0xc2) || *p > 0xf4)
            abort(); /* a control, or a byte no UTF-8 sequence starts with */
        if (*p == 0xc2 && p[1] < 0xa0)
            abort(); /* U+0080..U+009F */
        if (*p == '\\') {
            if (p[1] == '\\')
                back[k++] = '\\', p += 2;
            else if (p[1] == 'x' && p[2] && p[3]) {
                char hex[3] = {(char)p[2], (char)p[3], 0};
                back[k++] = (char)strtoul(hex, NULL, 16);
                p += 4;
            } else
                abort();
            continue;
        }
        size_t len = *p < 0x80 ? 1 : *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4;
        for (size_t i = 1; i < len; i++)
            if ((p[i] & 0xc0) != 0x80)
                abort();
        memcpy(back + k, p, len);
        k += len, p += len;
    }
    back[k] = '\0';
    if (strcmp(back, s) != 0)
        abort();
    free(e);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX = 1 << 16, BATCH = 7 }; /* odd batches: records cross read calls */
    static struct pes_record got[MAX], want[MAX];
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    check_escape(text);
    free(text);

    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open_memory(data, size, "fuzz.txt", &err);
    if (!t)
        abort();
    size_t n = 0;
    long k;
    while ((k = pes_text_reader_read(t, got + n, BATCH, &err)) > 0 && n + 2 * BATCH <= MAX)
        n += (size_t)k;
    pes_text_reader_close(t);
    if (k > 0)
        return 0; /* more records than this target keeps */
    /* The reference has the same records; where the reader fails, it fails
     * at the same line (records of the failing read call are dropped: the
     * reader's got is a prefix of the reference's then). */
    long ref = ref_parse(data, size, want, MAX);
    if (k < 0) {
        char where[64];
        snprintf(where, sizeof where, "fuzz.txt:%ld: ", -ref);
        if (ref >= 0 || err.code != PES_ERR_FORMAT ||
            strncmp(err.message, where, strlen(where)) != 0)
            abort();
        check_escape(err.message);
    } else if (ref < 0 || (size_t)ref != n) {
        abort();
    }
    for (size_t i = 0; i < n; i++)
        if (got[i].addr != want[i].addr || got[i].id != want[i].id || got[i].extra != 0)
            abort();
    return 0;
}
