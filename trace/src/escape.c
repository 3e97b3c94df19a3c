/*
 * escape.c — strings from traces and input files made safe to print on a
 * terminal: what a terminal could act on (escape sequences that set the
 * title, clear the screen, move the cursor) is shown as \xHH instead; and the
 * JSON string and number helpers every command shares.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_internal.h"

/* Length of the valid UTF-8 sequence at s (RFC 3629: shortest form, no
 * surrogates, at most U+10FFFF), or 0 if there is none. */
static size_t utf8_length(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

size_t pes_escape_text(char *dst, size_t size, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = 0;
    const unsigned char *s = (const unsigned char *)(src ? src : "");
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (len + 1 < size)                                                                        \
            dst[len] = (char)(ch);                                                                 \
        len++;                                                                                     \
    } while (0)
    while (*s) {
        size_t n = utf8_length(s);
        /* C0 controls, DEL, C1 controls (U+0080..U+009F, which terminals also
         * obey) and bytes that are not UTF-8: each byte as \xHH */
        int unsafe = n == 0 || *s < 0x20 || *s == 0x7f || (s[0] == 0xC2 && s[1] < 0xA0);
        if (unsafe) {
            size_t k = n ? n : 1;
            for (size_t i = 0; i < k; i++) {
                PUT('\\');
                PUT('x');
                PUT(hex[s[i] >> 4]);
                PUT(hex[s[i] & 15]);
            }
            s += k;
            continue;
        }
        if (*s == '\\') /* so that "\x1b" in the output always means the byte */
            PUT('\\');
        for (size_t i = 0; i < n; i++)
            PUT(s[i]);
        s += n;
    }
#undef PUT
    if (size)
        dst[len < size ? len : size - 1] = '\0';
    return len;
}

const char *pes_escape_text_tmp(const char *src)
{
    static _Thread_local char *ring[4];
    static _Thread_local size_t cap[4];
    static _Thread_local unsigned next;
    unsigned k = next++ % 4;
    size_t need = pes_escape_text(NULL, 0, src) + 1;
    if (need > cap[k]) {
        char *b = realloc(ring[k], need);
        if (!b)
            return "(out of memory)";
        ring[k] = b;
        cap[k] = need;
    }
    pes_escape_text(ring[k], cap[k], src);
    return ring[k];
}

void pes_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

int pes_parse_u64(const char *s, int base, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}
