/*
 * text_parse.c — the line parsers of the plain-text trace reader
 * (docs/trace-format.md §9), in two layers:
 *
 *   a fast path for the shapes almost every line of a real trace has
 *   ("HEX", "HEX W", "W HEX", " L HEX,SIZE", "I  HEX,SIZE", a blank line,
 *   each with "\n" or "\r\n"), which reads a hex token eight bytes at a time
 *   and calls nothing; and
 *   the strict path, line by line after a memchr, for everything else:
 *   comments, extra blanks, valgrind's "==PID==" lines and every bad line.
 *
 * The fast path only ever accepts lines the strict path accepts with the same
 * records, and hands everything it does not recognise to the strict path, so
 * which inputs are accepted and which error each bad one gets is decided by
 * the strict path alone. The fuzz target's reference parser
 * (tests/fuzz/fuzz_text_reader.c) and the unit tests check both.
 */
#include <errno.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "text_parse.h"
#include "trace_internal.h"

/* ------------------------------------------------------------ the strict path */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/* hex digit values + 1, so that the zero default means "not a digit" */
static const unsigned char hex_value[256] = {
    ['0'] = 0 + 1,  ['1'] = 1 + 1,  ['2'] = 2 + 1,  ['3'] = 3 + 1,  ['4'] = 4 + 1,  ['5'] = 5 + 1,
    ['6'] = 6 + 1,  ['7'] = 7 + 1,  ['8'] = 8 + 1,  ['9'] = 9 + 1,  ['a'] = 10 + 1, ['b'] = 11 + 1,
    ['c'] = 12 + 1, ['d'] = 13 + 1, ['e'] = 14 + 1, ['f'] = 15 + 1, ['A'] = 10 + 1, ['B'] = 11 + 1,
    ['C'] = 12 + 1, ['D'] = 13 + 1, ['E'] = 14 + 1, ['F'] = 15 + 1,
};

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

/* Splits an addr-format line (up to a '#') into at most three tokens; a
 * fourth is not looked for, three already make the line bad. */
static int addr_tokens(const char *line, size_t len, const char *tok[3], size_t tlen[3])
{
    const char *hash = memchr(line, '#', len);
    if (hash)
        len = (size_t)(hash - line);
    int nt = 0;
    for (size_t i = 0; i < len && nt < 3;) {
        while (i < len && is_space(line[i]))
            i++;
        if (i >= len)
            break;
        size_t s = i;
        while (i < len && !is_space(line[i]))
            i++;
        tok[nt] = line + s;
        tlen[nt++] = i - s;
    }
    return nt;
}

/* One addr-format line: 1 and the record, 0 for a blank or comment line,
 * -1 if malformed. */
static int addr_line(const char *line, size_t len, struct pes_record *out)
{
    const char *tok[3];
    size_t tlen[3];
    int nt = addr_tokens(line, len, tok, tlen);
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
    if (!ok)
        return -1;
    *out = (struct pes_record){addr, site, 0};
    return 1;
}

/* A lackey line's length without the '\r' and ' ' it may end with. */
static size_t lackey_trim(const char *line, size_t n)
{
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
        n--;
    return n;
}

int text_lackey_shape(const char *l, size_t n)
{
    if (n >= 4 && l[0] == ' ' && (l[1] == 'L' || l[1] == 'S' || l[1] == 'M') && l[2] == ' ')
        return 1;
    return n >= 3 && l[0] == 'I' && l[1] == ' ' && l[2] == ' ';
}

/* One lackey line: the number of records (0..2: "M" is a load and a store),
 * -1 if malformed. The access's size is not kept: a record stands for the
 * access's first byte, as an addr-format line does. */
static int lackey_line(const char *line, size_t len, struct pes_record out[2])
{
    size_t n = lackey_trim(line, len);
    if (n == 0 || (n >= 2 && line[0] == '=' && line[1] == '='))
        return 0;
    if (n >= 3 && line[0] == 'I' && line[1] == ' ')
        return 0; /* an instruction fetch */
    const char *comma = n > 3 ? memchr(line + 3, ',', n - 3) : NULL;
    uint64_t addr;
    int ok = text_lackey_shape(line, n) && line[0] == ' ' && comma &&
             parse_hex(line + 3, (size_t)(comma - line - 3), &addr) == 0 && comma + 1 < line + n;
    for (const char *c = comma ? comma + 1 : NULL; ok && c < line + n; c++)
        ok = *c >= '0' && *c <= '9';
    if (!ok)
        return -1;
    uint32_t first = line[1] == 'S' ? PES_TEXT_WRITE_SITE : PES_TEXT_READ_SITE;
    out[0] = (struct pes_record){addr, first, 0};
    out[1] = (struct pes_record){addr, PES_TEXT_WRITE_SITE, 0};
    return line[1] == 'M' ? 2 : 1;
}

int text_parse_message(struct pes_error *err, int error, enum pes_text_format format,
                       const char *path, uint64_t lineno, const char *line, size_t len,
                       int read_errno)
{
    unsigned long long l = (unsigned long long)lineno;
    if (error == TEXT_NO_MEMORY)
        return pes_error_set(err, PES_ERR_NOMEM, lineno, "%s: out of memory", path);
    if (error == TEXT_READ_FAILED &&
        format == PES_TEXT_FORMAT_BINARY64) /* lineno: addresses read */
        return pes_error_set(err, PES_ERR_IO, lineno, "%s: read failed after %llu addresses: %s",
                             path, l, strerror(read_errno));
    if (error == TEXT_READ_FAILED)
        return pes_error_set(err, PES_ERR_IO, lineno - 1, "%s:%llu: read failed: %s", path, l,
                             strerror(read_errno));
    if (error == TEXT_LONG_LINE)
        return pes_error_set(err, PES_ERR_FORMAT, lineno - 1,
                             "%s:%llu: line longer than %u bytes "
                             "(a text trace has one access per line)",
                             path, l, PES_TEXT_MAX_LINE);
    if (format == PES_TEXT_FORMAT_LACKEY) {
        size_t n = lackey_trim(line, len);
        int show = (int)(n > 40 ? 40 : n);
        return pes_error_set(
            err, PES_ERR_FORMAT, lineno,
            "%s:%llu: expected a valgrind lackey line (\" L|S|M ADDR,SIZE\", \"I  ADDR,SIZE\" "
            "or \"==PID== ...\"), got \"%.*s%s\"",
            path, l, show, line, n > 40 ? " ..." : "");
    }
    const char *tok[3] = {line};
    size_t tlen[3] = {0};
    int nt = addr_tokens(line, len, tok, tlen);
    int show = (int)(tlen[0] > 40 ? 40 : tlen[0]);
    return pes_error_set(err, PES_ERR_FORMAT, lineno,
                         "%s:%llu: expected \"ADDR\", \"ADDR R|W\" or \"R|W ADDR\" "
                         "(hex address, at most 16 digits), got \"%.*s%s\"",
                         path, l, show, tok[0], nt > 1 || tlen[0] > 40 ? " ..." : "");
}

/* ------------------------------------------------------------ the fast path */

/* Eight bytes at a time, as one little-endian word: the first byte of the
 * text is the word's lowest byte. memcpy compiles to one unaligned load. */
static inline uint64_t load8(const char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull

/* 0x80 in each byte of x that is not a hex digit, 0 in the others. Every byte
 * is classified on its own: its low seven bits plus at most 0x50 stay below
 * 0x100, so no sum carries into the next byte, and the top bit of a sum says
 * whether the byte passed a bound. */
static inline uint64_t nonhex_bytes(uint64_t x)
{
    uint64_t y = x & ~HIGH;
    uint64_t digit = (y + 0x50 * ONES) & ~(y + 0x46 * ONES);  /* >= '0' and <= '9' */
    uint64_t l = y | 0x20 * ONES;                             /* 'A'..'F' as 'a'..'f' */
    uint64_t letter = (l + 0x1f * ONES) & ~(l + 0x19 * ONES); /* >= 'a' and <= 'f' */
    return (~(digit | letter) | x) & HIGH;                    /* bytes >= 0x80 are not digits */
}

/* The value of eight hex digits (or NUL bytes, read as 0), the first byte the
 * most significant: each byte becomes its digit's value, then neighbours are
 * merged pairwise, 4 + 4 bits, 8 + 8, 16 + 16. */
static inline uint64_t hex8(uint64_t x)
{
    uint64_t d = (x & 0x0f * ONES) + ((x & 0x40 * ONES) >> 6) * 9; /* 'a' & 0xf = 1, + 9 = 10 */
    d = (d << 4 | d >> 8) & 0x00ff00ff00ff00ffull;
    d = (d << 8 | d >> 16) & 0x0000ffff0000ffffull;
    return (d << 16 | d >> 32) & 0xffffffffull;
}

/* 0x80 in each byte of x that is not a decimal digit */
static inline uint64_t nondigit_bytes(uint64_t x)
{
    uint64_t y = x & ~HIGH;
    return (~((y + 0x50 * ONES) & ~(y + 0x46 * ONES)) | x) & HIGH;
}

/* the high bit of each of the first k bytes (1 <= k <= 8) */
static inline uint64_t first_bytes(size_t k)
{
    return HIGH >> (64 - 8 * k);
}

/* The value of the k hex digits at q (1 <= k <= 16), or -1 if one of them is
 * not a hex digit. Reads the 8 bytes from q, and for k > 8 the 8 that end the
 * digits (they overlap). */
static inline int hex_digits(const char *q, size_t k, uint64_t *v)
{
    uint64_t x0 = load8(q);
    if (k <= 8) {
        *v = hex8(x0 << (64 - 8 * k)); /* the k digits to the top, zeros below */
        return nonhex_bytes(x0) & first_bytes(k) ? -1 : 0;
    }
    uint64_t x1 = load8(q + k - 8);
    *v = hex8(x0 << (128 - 8 * k)) << 32 | hex8(x1);
    return nonhex_bytes(x0) | nonhex_bytes(x1) ? -1 : 0;
}

/* The run of hex digits at q: its length (1..15) and value in *v, or 0 if q
 * does not start with a digit or the run has 16 or more (the strict path
 * takes those). Reads 16 bytes from q whatever the run's length. */
static inline size_t hex_run(const char *q, uint64_t *v)
{
    uint64_t x0 = load8(q), m0 = nonhex_bytes(x0);
    if (m0) {
        unsigned n = (unsigned)__builtin_ctzll(m0) >> 3;
        *v = n ? hex8(x0 << (64 - 8 * n)) : 0;
        return n;
    }
    uint64_t x1 = load8(q + 8), m1 = nonhex_bytes(x1);
    if (!m1)
        return 0;
    unsigned m = (unsigned)__builtin_ctzll(m1) >> 3;
    *v = m ? hex8(x0) << (4 * m) | hex8(x1 << (64 - 8 * m)) : hex8(x0);
    return 8 + m;
}

/* Bit i set where p[i] is a newline, i < 64. Finding a window's line ends
 * first, rather than each line's end by parsing it, lets the CPU parse
 * several lines at once: no line's start waits for the line before it to be
 * parsed. */
static inline uint64_t newlines64(const char *p)
{
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t m = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * i);
    }
    return m;
#else
    uint64_t m = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t z = load8(p + 8 * i) ^ ('\n' * ONES);
        uint64_t zero = ~(((z & ~HIGH) + ~HIGH) | z) & HIGH; /* exactly the zero bytes */
        m |= ((zero >> 7) * 0x0102040810204080ull >> 56) << (8 * i);
    }
    return m;
#endif
}

/* 1 + the site of an R|W field character, 0 for anything else */
static const unsigned char rw_site[256] = {
    ['R'] = 1 + PES_TEXT_READ_SITE,
    ['r'] = 1 + PES_TEXT_READ_SITE,
    ['W'] = 1 + PES_TEXT_WRITE_SITE,
    ['w'] = 1 + PES_TEXT_WRITE_SITE,
};
static const unsigned char field_sep[256] = {[' '] = 1, ['\t'] = 1, [','] = 1};

/* The fast path of one addr line, [l, l + len) without its newline: 1 and
 * the record, 0 for a blank line, -1 for the strict path. The line's shape is
 * read from both ends: an "R|W " in front or a " R|W" behind (not both), an
 * optional "\r" last, "0x", then 1..16 hex digits and nothing else. */
static inline int addr_fast(const char *l, size_t len, struct pes_record *r)
{
    len -= len && l[len - 1] == '\r';
    if (len == 0)
        return 0;
    const char *q = l, *qe = l + len;
    uint32_t site = PES_TEXT_READ_SITE;
    unsigned lead = rw_site[(unsigned char)l[0]];
    unsigned tail = rw_site[(unsigned char)qe[-1]];
    if (len > 2 && lead && field_sep[(unsigned char)l[1]]) {
        site = lead - 1;
        q += 2;
    } else if (len > 2 && tail && field_sep[(unsigned char)qe[-2]]) {
        site = tail - 1;
        qe -= 2;
    }
    if (qe - q > 2 && q[0] == '0' && (q[1] | 0x20) == 'x')
        q += 2;
    size_t k = (size_t)(qe - q);
    if (k - 1 >= 16 || hex_digits(q, k, &r->addr) < 0)
        return -1;
    r->id = site;
    r->extra = 0;
    return 1;
}

/* The strict path for the line at s->p: 1 and the line consumed (its records
 * in out, *k of them), or 0 with s->error set. */
static int slow_line(struct text_parse *s, const char *p, enum pes_text_format format,
                     struct pes_record out[2], int *k)
{
    const char *nl = memchr(p, '\n', (size_t)(s->end - p)); /* the range ends with one */
    size_t len = (size_t)(nl - p);
    if (len > PES_TEXT_MAX_LINE) {
        s->error = TEXT_LONG_LINE;
        return 0;
    }
    *k = format == PES_TEXT_FORMAT_LACKEY ? lackey_line(p, len, out) : addr_line(p, len, out);
    if (*k < 0) {
        s->error = TEXT_BAD_LINE;
        s->bad_len = len;
        return 0;
    }
    s->p = nl + 1;
    return 1;
}

size_t text_parse_addr(struct text_parse *s, struct pes_record *out, size_t max)
{
    const char *p = s->p, *end = s->end;
    size_t n = 0;
    uint64_t lines = s->lines;
    while (n < max && p < end) {
        const char *base = p;
        uint64_t m = newlines64(base);
        if (!m) { /* a line of 64 bytes or more: no fast path */
            struct pes_record r[2];
            int got;
            if (!slow_line(s, p, PES_TEXT_FORMAT_ADDR, r, &got))
                break;
            if (got)
                out[n++] = r[0];
            p = s->p;
            lines++;
            continue;
        }
        /* the lines that end in this window */
        do {
            const char *nl = base + __builtin_ctzll(m);
            m &= m - 1;
            int got = addr_fast(p, (size_t)(nl - p), out + n);
            if (got < 0) {
                struct pes_record r[2];
                if (!slow_line(s, p, PES_TEXT_FORMAT_ADDR, r, &got))
                    goto out;
                if (got)
                    out[n] = r[0];
            }
            n += (size_t)got;
            p = nl + 1;
            lines++;
        } while (m && n < max && p < end);
    }
out:
    s->p = p;
    s->lines = lines;
    return n;
}

/* The fast path of one lackey line, [l, l + len) without its newline: the
 * number of records (0 for an instruction fetch or a blank line) or -1 for
 * the strict path: " L|S|M HEX,SIZE" with 1..15 digits and a size of 1..8
 * digits, "I  " and a hex digit, each with an optional "\r". The address in
 * *v and the op (L, S or M) in *op: the caller stores the records itself
 * (through a struct on the stack they would be written in pieces and read
 * whole, which stalls the CPU's store forwarding). */
static inline int lackey_fast(const char *l, size_t raw_len, uint64_t *v, char *op)
{
    size_t len = raw_len - (raw_len && l[raw_len - 1] == '\r');
    *op = l[1];
    if (l[0] == ' ' && l[2] == ' ' && (*op == 'L' || *op == 'S' || *op == 'M')) {
        size_t k = hex_run(l + 3, v);
        size_t size_len = len - 4 - k; /* after the comma; huge if the comma is beyond the line */
        if (!k || l[3 + k] != ',' || size_len - 1 >= 8 ||
            nondigit_bytes(load8(l + 4 + k)) & first_bytes(size_len))
            return -1;
        return *op == 'M' ? 2 : 1;
    }
    if (l[0] == 'I' && l[1] == ' ' && l[2] == ' ' && hex_value[(unsigned char)l[3]] &&
        raw_len <= PES_TEXT_MAX_LINE)
        return 0; /* an instruction fetch, skipped */
    return len == 0 ? 0 : -1;
}

size_t text_parse_lackey(struct text_parse *s, struct pes_record *out, size_t max)
{
    const char *p = s->p, *end = s->end;
    size_t n = 0;
    uint64_t lines = s->lines;
    while (n < max && p < end) {
        const char *base = p;
        uint64_t m = newlines64(base);
        do {
            const char *nl = m ? base + __builtin_ctzll(m) : NULL;
            m &= m - 1;
            uint64_t v;
            char op;
            int got = nl ? lackey_fast(p, (size_t)(nl - p), &v, &op) : -1;
            if (got < 0) {
                struct pes_record r[2];
                if (!slow_line(s, p, PES_TEXT_FORMAT_LACKEY, r, &got))
                    goto out;
                nl = s->p - 1; /* beyond the window if no newline was in it */
                v = r[0].addr;
                op = r[0].id == PES_TEXT_WRITE_SITE ? 'S' : got == 2 ? 'M' : 'L';
            }
            p = nl + 1;
            lines++;
            if (got >= 1)
                out[n++] =
                    (struct pes_record){v, op == 'S' ? PES_TEXT_WRITE_SITE : PES_TEXT_READ_SITE, 0};
            if (got == 2) {
                struct pes_record w = {v, PES_TEXT_WRITE_SITE, 0};
                if (n == max) {
                    s->pending = w;
                    s->has_pending = 1;
                    goto out;
                }
                out[n++] = w;
            }
        } while (m && n < max && p < end);
    }
out:
    s->p = p;
    s->lines = lines;
    return n;
}
