/* test_trace_text_parallel.c — the plain-text trace reader's fast path and
 * its parallel blocks (pes_text_reader_set_threads) against a reference
 * parser written here from docs/trace-format.md §9: for 1..8 threads, the
 * same records in the same order, the same bad line named, the same
 * truncation, on hand-written and generated files several 1 MiB blocks long
 * (lines of every shape the fast path takes and many it leaves to the strict
 * one, lines across block boundaries, CRLF, comments, no final newline). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "trace_test_util.h"

/* ------------------------------------------------------------ the reference */

struct ref {
    struct pes_record *rec;
    size_t n, cap;
    uint64_t bad_line; /* 0: none */
    int too_long;      /* the bad line is longer than PES_TEXT_MAX_LINE */
    size_t cut;        /* binary64: bytes after the last whole address */
};

static void ref_add(struct ref *r, uint64_t addr, uint32_t id)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->rec = realloc(r->rec, r->cap * sizeof *r->rec);
        assert_non_null(r->rec);
    }
    r->rec[r->n++] = (struct pes_record){addr, id, 0};
}

static int ref_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == ',';
}

/* "ADDR": 1..16 hex digits after an optional 0x or 0X */
static int ref_hex(const char *s, size_t n, uint64_t *v)
{
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2, n -= 2;
    if (n < 1 || n > 16)
        return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
                : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                             : -1;
        if (d < 0)
            return 0;
        *v = *v * 16 + (uint64_t)d;
    }
    return 1;
}

static int ref_rw(const char *s, size_t n, uint32_t *id)
{
    if (n != 1 || !strchr("RrWw", s[0]))
        return 0;
    *id = s[0] == 'R' || s[0] == 'r' ? PES_TEXT_READ_SITE : PES_TEXT_WRITE_SITE;
    return 1;
}

/* one line, without its newline: 0 ok (records added), -1 bad */
static int ref_addr_line(struct ref *r, const char *l, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (l[i] == '#')
            len = i;
    const char *tok[4];
    size_t tl[4], nt = 0;
    for (size_t i = 0; i < len;) {
        if (ref_sep(l[i])) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < len && !ref_sep(l[i]))
            i++;
        if (nt == 4)
            return -1;
        tok[nt] = l + s, tl[nt++] = i - s;
    }
    uint64_t a;
    uint32_t id = PES_TEXT_READ_SITE;
    if (nt == 0)
        return 0;
    if (nt == 1 && ref_hex(tok[0], tl[0], &a))
        return ref_add(r, a, id), 0;
    if (nt == 2 && ((ref_hex(tok[0], tl[0], &a) && ref_rw(tok[1], tl[1], &id)) ||
                    (ref_rw(tok[0], tl[0], &id) && ref_hex(tok[1], tl[1], &a))))
        return ref_add(r, a, id), 0;
    return -1;
}

static int ref_lackey_line(struct ref *r, const char *l, size_t len)
{
    while (len && (l[len - 1] == '\r' || l[len - 1] == ' '))
        len--;
    if (len == 0 || (len >= 2 && l[0] == '=' && l[1] == '='))
        return 0;
    if (len >= 3 && l[0] == 'I' && l[1] == ' ')
        return 0;
    if (len < 4 || l[0] != ' ' || !strchr("LSM", l[1]) || !l[1] || l[2] != ' ')
        return -1;
    size_t comma = 3;
    while (comma < len && l[comma] != ',')
        comma++;
    uint64_t a;
    if (comma + 1 >= len || !ref_hex(l + 3, comma - 3, &a))
        return -1;
    for (size_t i = comma + 1; i < len; i++)
        if (l[i] < '0' || l[i] > '9')
            return -1;
    ref_add(r, a, l[1] == 'S' ? PES_TEXT_WRITE_SITE : PES_TEXT_READ_SITE);
    if (l[1] == 'M')
        ref_add(r, a, PES_TEXT_WRITE_SITE);
    return 0;
}

static void ref_parse(struct ref *r, const char *d, size_t size, enum pes_text_format f)
{
    memset(r, 0, sizeof *r);
    if (f == PES_TEXT_FORMAT_BINARY64) {
        for (size_t i = 0; i + 8 <= size; i += 8) {
            uint64_t a = 0;
            for (int k = 7; k >= 0; k--)
                a = a << 8 | (uint8_t)d[i + (size_t)k];
            ref_add(r, a, PES_TEXT_READ_SITE);
        }
        r->cut = size % 8;
        return;
    }
    uint64_t line = 0;
    for (size_t pos = 0; pos < size;) {
        size_t e = pos;
        while (e < size && d[e] != '\n')
            e++;
        line++;
        if (e - pos > PES_TEXT_MAX_LINE) {
            r->bad_line = line, r->too_long = 1;
            return;
        }
        int bad = f == PES_TEXT_FORMAT_LACKEY ? ref_lackey_line(r, d + pos, e - pos)
                                              : ref_addr_line(r, d + pos, e - pos);
        if (bad) {
            r->bad_line = line;
            return;
        }
        pos = e + 1;
    }
}

/* ------------------------------------------------------------ the comparison */

static char *write_file(const void *data, size_t size)
{
    char *path = tt_temp_path("ptext");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
    return path;
}

/* Reads path with `threads` threads, in calls of varying sizes, and checks
 * the records, the end (0, or -1 naming the reference's bad line, with the
 * records of the failing call dropped and nothing after it) and the
 * truncation message against the reference. */
static void check_read(const char *path, enum pes_text_format f, unsigned threads,
                       const struct ref *want, uint64_t seed)
{
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open_as(path, f, &err);
    assert_non_null(t);
    assert_int_equal(pes_text_reader_set_threads(t, threads, &err), 0);
    assert_int_equal(pes_text_reader_threads(t), f == PES_TEXT_FORMAT_BINARY64 ? 1 : threads);
    static struct pes_record buf[5000];
    size_t got = 0, max = 1;
    long k;
    for (;;) {
        max = 1 + tt_rand(&seed) % (tt_rand(&seed) % 4 ? 5000 : 3); /* now and then 1..3 */
        k = pes_text_reader_read(t, buf, max, &err);
        if (k <= 0)
            break;
        assert_true(got + (size_t)k <= want->n);
        for (long i = 0; i < k; i++) {
            const struct pes_record *w = &want->rec[got + (size_t)i];
            if (buf[i].addr != w->addr || buf[i].id != w->id || buf[i].extra != 0)
                fail_msg("%u threads, record %zu: got %llx/%u, want %llx/%u", threads,
                         got + (size_t)i, (unsigned long long)buf[i].addr, buf[i].id,
                         (unsigned long long)w->addr, w->id);
        }
        got += (size_t)k;
    }
    if (want->bad_line) {
        assert_int_equal(k, -1);
        assert_int_equal(err.code, PES_ERR_FORMAT);
        char where[600];
        snprintf(where, sizeof where, "%s:%llu: %s", path, (unsigned long long)want->bad_line,
                 want->too_long ? "line longer than" : "expected ");
        if (strncmp(err.message, where, strlen(where)) != 0)
            fail_msg("%u threads: got \"%s\", want \"%s...\"", threads, err.message, where);
        /* the failing call had room for every record left before the bad line */
        assert_true(got <= want->n && want->n - got < max);
        struct pes_error again;
        assert_int_equal(pes_text_reader_read(t, buf, 10, &again), -1);
        assert_string_equal(again.message, err.message);
    } else {
        if (k != 0)
            fail_msg("%u threads: %s", threads, err.message);
        assert_int_equal(got, want->n);
    }
    const char *cut = pes_text_reader_truncation(t);
    if (want->cut) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "%s: ends inside an address: the last %zu byte%s (after %zu complete addresses)",
                 path, want->cut, want->cut == 1 ? "" : "s", want->n);
        assert_non_null(cut);
        assert_non_null(strstr(cut, msg));
    } else {
        assert_null(cut);
    }
    pes_text_reader_close(t);
}

/* The file read in n parts (pes_text_part + pes_text_reader_set_range, as
 * pes-replay-mpi's ranks read it): the parts cover the file, and read one
 * after the other they give the whole file's records, up to the bad line,
 * named with its line number in the whole file. */
static void check_parts(const char *path, size_t size, enum pes_text_format f, unsigned threads,
                        unsigned n, const struct ref *want)
{
    static struct pes_record buf[5000];
    struct pes_error err;
    size_t got = 0;
    uint64_t prev_end = 0;
    int failed = 0;
    for (unsigned k = 0; k < n; k++) {
        uint64_t b, e;
        assert_int_equal(pes_text_part(path, f, k, n, &b, &e, &err), 0);
        assert_true(b == prev_end && e >= b);
        prev_end = e;
        if (failed)
            continue;
        struct pes_text_reader *t = pes_text_reader_open_as(path, f, &err);
        assert_non_null(t);
        assert_int_equal(pes_text_reader_set_range(t, b, e, &err), 0);
        assert_int_equal(pes_text_reader_set_threads(t, threads, &err), 0);
        long r;
        while ((r = pes_text_reader_read(t, buf, 1 + got % 5000, &err)) > 0) {
            assert_true(got + (size_t)r <= want->n);
            for (long i = 0; i < r; i++)
                if (buf[i].addr != want->rec[got + (size_t)i].addr ||
                    buf[i].id != want->rec[got + (size_t)i].id)
                    fail_msg("part %u of %u: record %zu differs", k, n, got + (size_t)i);
            got += (size_t)r;
        }
        if (r < 0) {
            char where[600];
            snprintf(where, sizeof where, "%s:%llu: ", path, (unsigned long long)want->bad_line);
            if (!want->bad_line || strncmp(err.message, where, strlen(where)) != 0)
                fail_msg("part %u of %u: got \"%s\", want \"%s...\"", k, n, err.message, where);
            failed = 1;
        }
        pes_text_reader_close(t);
    }
    assert_int_equal(prev_end, size);
    if (want->bad_line)
        assert_true(failed);
    else
        assert_int_equal(got, want->n);
}

static void check_all_threads(const char *data, size_t size, enum pes_text_format f,
                              uint64_t bad_line)
{
    struct ref want;
    ref_parse(&want, data, size, f);
    assert_int_equal(want.bad_line, bad_line); /* the generator and the reference agree */
    char *path = write_file(data, size);
    for (unsigned threads = 1; threads <= 8; threads++)
        check_read(path, f, threads, &want, threads * 1000003u);
    for (unsigned n = 1; n <= 7; n += 2)
        for (unsigned threads = 1; threads <= 3; threads += 2)
            check_parts(path, size, f, threads, n, &want);
    unlink(path);
    free(path);
    free(want.rec);
}

/* ------------------------------------------------------------ generated inputs */

struct gen {
    char *d;
    size_t len, cap;
    uint64_t lines;
    uint64_t seed;
};

static void put(struct gen *g, const char *fmt, ...)
{
    if (g->cap - g->len < 8192) {
        g->cap = g->cap ? 2 * g->cap : 1u << 20;
        g->d = realloc(g->d, g->cap);
        assert_non_null(g->d);
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->d + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    g->len += (size_t)n;
    for (int i = 0; i < n; i++)
        g->lines += g->d[g->len - (size_t)n + (size_t)i] == '\n';
}

static unsigned long long gen_addr(struct gen *g)
{
    uint64_t x = tt_rand(&g->seed);
    switch (x % 5) {
    case 0:
        return x >> 60; /* one digit */
    case 1:
        return 0x10000000 + (x >> 40) % 0x100000; /* eight */
    case 2:
        return 0x7ffd00000000ull | (x >> 32); /* twelve */
    case 3:
        return x; /* up to sixteen */
    default:
        return x >> (x % 64);
    }
}

/* One addr-format line of a random shape; valid. */
static void gen_addr_line(struct gen *g)
{
    unsigned long long a = gen_addr(g);
    uint64_t r = tt_rand(&g->seed);
    const char *eol = r % 7 == 0 ? "\r\n" : "\n";
    const char *rw = (r >> 8) % 2 ? "W" : "r";
    switch ((r >> 16) % 16) {
    case 0:
        put(g, "0x%llx%s", a, eol);
        break;
    case 1:
        put(g, "0X%llX %s%s", a, rw, eol);
        break;
    case 2:
        put(g, "%s %llx%s", rw, a, eol);
        break;
    case 3:
        put(g, "%s\t0x%llx%s", rw, a, eol);
        break;
    case 4:
        put(g, "%llx,%s%s", a, rw, eol);
        break;
    case 5:
        put(g, "%016llx%s", a, eol);
        break; /* 16 digits */
    case 6:
        put(g, "0x%016llx w%s", a, eol);
        break;
    case 7:
        put(g, "  %llx  %s  # a comment%s", a, rw, eol);
        break; /* strict path */
    case 8:
        put(g, "# only a comment%s", eol);
        break;
    case 9:
        put(g, "%s", eol);
        break;
    case 10:
        put(g, "%llx%*s%s", a, (int)((r >> 24) % 120), "", eol);
        break; /* lines of 64+ bytes */
    case 11:
        if ((r >> 24) % 64 == 0) { /* now and then as long as a line may be */
            int pad = (int)(PES_TEXT_MAX_LINE - 20 - strlen(eol) + 1);
            put(g, "%-18llx%*s%s", a, pad, "W", eol);
            break;
        }
        /* fall through */
    default:
        put(g, (r >> 30) % 3 ? "%llx%s" : "%llx W%s", a, eol);
        break;
    }
}

static void gen_lackey_line(struct gen *g)
{
    unsigned long long a = gen_addr(g);
    uint64_t r = tt_rand(&g->seed);
    const char *eol = r % 9 == 0 ? "\r\n" : "\n";
    unsigned size = 1u << ((r >> 8) % 5);
    switch ((r >> 16) % 12) {
    case 0:
        put(g, "I  %08llx,%u%s", a, size, eol);
        break;
    case 1:
        put(g, " M %08llx,%u%s", a, size, eol);
        break;
    case 2:
        put(g, " S %llx,%u%s", a, size, eol);
        break;
    case 3:
        put(g, "==%u== a valgrind line%s", (unsigned)(r >> 40) % 99999, eol);
        break;
    case 4:
        put(g, "%s", eol);
        break;
    case 5:
        put(g, " L %08llx,%u \r\n", a, size);
        break; /* strict path: trailing blank */
    case 6:
        put(g, " M %llx,123456789012%s", a, eol);
        break; /* a size of 12 digits */
    case 7:
        put(g, "I  %08llx,%u%*s%s", a, size, (int)((r >> 24) % 200), "", eol);
        break;
    default:
        put(g, " L %08llx,%u%s", a, size, eol);
        break;
    }
}

static void generate(struct gen *g, enum pes_text_format f, size_t bytes)
{
    while (g->len < bytes)
        f == PES_TEXT_FORMAT_LACKEY ? gen_lackey_line(g) : gen_addr_line(g);
}

/* Files of about 4.5 blocks of random lines, valid, with and without a final
 * newline. */
static void test_generated_valid(void **state)
{
    (void)state;
    for (int f = PES_TEXT_FORMAT_ADDR; f <= PES_TEXT_FORMAT_LACKEY; f++)
        for (int final_nl = 0; final_nl < 2; final_nl++) {
            struct gen g = {.seed = 77u + (uint64_t)f * 10 + (uint64_t)final_nl};
            generate(&g, (enum pes_text_format)f, (9u << 20) / 2);
            if (f == PES_TEXT_FORMAT_ADDR)
                put(&g, final_nl ? "0x1234 w\n" : "0x1234 w");
            else
                put(&g, final_nl ? " M 1234,8\n" : " M 1234,8");
            check_all_threads(g.d, g.len, (enum pes_text_format)f, 0);
            free(g.d);
        }
}

/* A bad line in a later block: every thread count names it; records before
 * it are handed out, none after. Also a line one byte too long, and a file
 * whose last line (no newline) is too long. */
static void test_generated_bad_line(void **state)
{
    (void)state;
    const char *bad[2][3] = {{"0x10 X\n", "zz\n", "0x10000000000000000\n"},
                             {" L 3x,4\n", " Q 10,4\n", " L 10,\n"}};
    for (int f = PES_TEXT_FORMAT_ADDR; f <= PES_TEXT_FORMAT_LACKEY; f++)
        for (int b = 0; b < 4; b++) {
            struct gen g = {.seed = 991u + (uint64_t)b};
            generate(&g, (enum pes_text_format)f, (5u << 20) / 2 + (uint64_t)b * 300000);
            uint64_t bad_line = g.lines + 1;
            if (b < 3)
                put(&g, "%s", bad[f - 1][b]);
            else
                put(&g, "%*s\n", (int)PES_TEXT_MAX_LINE + 1, "1"); /* one byte too long */
            generate(&g, (enum pes_text_format)f, g.len + (3u << 20) / 2);
            check_all_threads(g.d, g.len, (enum pes_text_format)f, bad_line);
            free(g.d);
        }
    struct gen g = {.seed = 5};
    generate(&g, PES_TEXT_FORMAT_ADDR, 3u << 20);
    uint64_t bad_line = g.lines + 1;
    put(&g, "%*s", (int)PES_TEXT_MAX_LINE + 1, "1"); /* the last line, no newline */
    check_all_threads(g.d, g.len, PES_TEXT_FORMAT_ADDR, bad_line);
    free(g.d);
}

/* Hand-written inputs, each small (one block): the reference, and the
 * records written out here by hand for the first. */
static void test_hand_written(void **state)
{
    (void)state;
    const char *addr = "# header\r\n"
                       "1000\n"
                       "0x2000 R\r\n"
                       "W 0x1000\n"
                       "\n"
                       "\r\n"
                       "ffffffffffffffff w\n"
                       "  3000   # strict path\n"
                       "0X4008,r\n"
                       "r\t10\n"
                       "0x4000 W"; /* no final newline */
    const struct pes_record want[] = {
        {0x1000, PES_TEXT_READ_SITE, 0},  {0x2000, PES_TEXT_READ_SITE, 0},
        {0x1000, PES_TEXT_WRITE_SITE, 0}, {UINT64_MAX, PES_TEXT_WRITE_SITE, 0},
        {0x3000, PES_TEXT_READ_SITE, 0},  {0x4008, PES_TEXT_READ_SITE, 0},
        {0x10, PES_TEXT_READ_SITE, 0},    {0x4000, PES_TEXT_WRITE_SITE, 0},
    };
    struct ref r;
    ref_parse(&r, addr, strlen(addr), PES_TEXT_FORMAT_ADDR);
    assert_int_equal(r.n, 8);
    assert_int_equal(r.bad_line, 0);
    assert_memory_equal(r.rec, want, sizeof want);
    free(r.rec);
    check_all_threads(addr, strlen(addr), PES_TEXT_FORMAT_ADDR, 0);

    const char *lackey = "==77== Lackey\n I 10,4\n"; /* " I" is not a lackey op */
    check_all_threads(lackey, strlen(lackey), PES_TEXT_FORMAT_LACKEY, 2);
    const char *lackey_ok = "I  0401,3\r\n M 0421d5f8,16\r\n L 10,1\n==77== \n S 7ff000d68,8";
    check_all_threads(lackey_ok, strlen(lackey_ok), PES_TEXT_FORMAT_LACKEY, 0);
    check_all_threads("", 0, PES_TEXT_FORMAT_ADDR, 0);
    check_all_threads("\n\n\n", 3, PES_TEXT_FORMAT_ADDR, 0);
    check_all_threads("10\n20\nW\n", 8, PES_TEXT_FORMAT_ADDR, 3);
}

/* Lines of the generators with bytes replaced, inserted or removed (from the
 * characters that matter to the formats): the ones the reference accepts
 * make one file, read whole with 1 and 3 threads; a sample of the ones it
 * rejects each go into a small file after a good line, and must be named as
 * line 2. This is what keeps the fast path from accepting a line the strict
 * path rejects, or the other way round. */
static void test_mutated_lines(void **state)
{
    (void)state;
    static const char alphabet[] = " \t\r,#=xX0123456789abcdefABCDEFLSMIRWrwq\n";
    for (int f = PES_TEXT_FORMAT_ADDR; f <= PES_TEXT_FORMAT_LACKEY; f++) {
        struct gen good = {.seed = 1}, line = {.seed = 404u + (uint64_t)f};
        int bad_files = 0;
        for (int i = 0; i < 200000; i++) {
            line.len = 0;
            f == PES_TEXT_FORMAT_LACKEY ? gen_lackey_line(&line) : gen_addr_line(&line);
            if (line.len > 200)
                continue;
            size_t len = line.len - 1; /* without its newline */
            for (uint64_t k = tt_rand(&line.seed) % 3 + 1; k > 0; k--) {
                uint64_t r = tt_rand(&line.seed);
                size_t at = len ? (size_t)(r >> 8) % len : 0;
                char c = alphabet[(r >> 40) % (sizeof alphabet - 2)]; /* not '\n' */
                if (r % 3 == 0 && len) {
                    line.d[at] = c;
                } else if (r % 3 == 1) {
                    memmove(line.d + at + 1, line.d + at, len - at);
                    line.d[at] = c;
                    len++;
                } else if (len) {
                    memmove(line.d + at, line.d + at + 1, len - at - 1);
                    len--;
                }
            }
            line.d[len] = '\n';
            struct ref r;
            ref_parse(&r, line.d, len + 1, (enum pes_text_format)f);
            free(r.rec);
            if (!r.bad_line) {
                put(&good, "%.*s", (int)(len + 1), line.d);
            } else if (bad_files < 3000 && i % 7 == 0) {
                bad_files++;
                char d[512];
                const char *first = f == PES_TEXT_FORMAT_LACKEY ? " L 10,4\n" : "10\n";
                size_t n = (size_t)snprintf(d, sizeof d, "%s%.*s", first, (int)(len + 1), line.d);
                struct ref want;
                ref_parse(&want, d, n, (enum pes_text_format)f);
                assert_int_equal(want.bad_line, 2);
                char *path = write_file(d, n);
                check_read(path, (enum pes_text_format)f, 1, &want, (uint64_t)i);
                unlink(path);
                free(path);
                free(want.rec);
            }
        }
        assert_true(bad_files > 1000);
        struct ref want;
        ref_parse(&want, good.d, good.len, (enum pes_text_format)f);
        assert_int_equal(want.bad_line, 0);
        assert_true(want.n > 30000);
        char *path = write_file(good.d, good.len);
        check_read(path, (enum pes_text_format)f, 1, &want, 1);
        check_read(path, (enum pes_text_format)f, 3, &want, 3);
        unlink(path);
        free(path);
        free(want.rec);
        free(good.d);
        free(line.d);
    }
}

/* binary64 (read on the calling thread whatever the thread count): a cut
 * last address is not read, and said with the count of complete ones. */
static void test_binary64_blocks(void **state)
{
    (void)state;
    for (size_t cut = 0; cut < 8; cut += 5) {
        size_t n = (3u << 20) / 8 + 12345, size = 8 * n + cut;
        char *d = malloc(size);
        assert_non_null(d);
        uint64_t s = 3 + cut;
        for (size_t i = 0; i < size; i++)
            d[i] = (char)(tt_rand(&s) >> 56);
        d[3] = 0; /* detected as binary64 either way */
        check_all_threads(d, size, PES_TEXT_FORMAT_BINARY64, 0);
        free(d);
    }
}

static void test_set_threads(void **state)
{
    (void)state;
    const char *text = "10\n20\n";
    char *path = write_file(text, strlen(text));
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    assert_int_equal(pes_text_reader_set_threads(t, 0, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_int_equal(pes_text_reader_set_threads(t, PES_TEXT_MAX_THREADS + 1, &err), -1);
    struct pes_record r[4];
    assert_int_equal(pes_text_reader_read(t, r, 1, &err), 1);
    assert_int_equal(pes_text_reader_set_threads(t, 2, &err), -1); /* after a read */
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_int_equal(pes_text_reader_threads(t), 1);
    assert_int_equal(pes_text_reader_read(t, r, 4, &err), 1);
    assert_int_equal(r[0].addr, 0x20);
    pes_text_reader_close(t);

    /* closed before reading everything (the workers wait for free blocks) */
    t = pes_text_reader_open(path, &err);
    assert_int_equal(pes_text_reader_set_threads(t, 4, &err), 0);
    pes_text_reader_close(t);
    unlink(path);
    free(path);

    /* from memory: on the calling thread */
    t = pes_text_reader_open_memory(text, strlen(text), "mem", &err);
    assert_int_equal(pes_text_reader_set_threads(t, 4, &err), 0);
    assert_int_equal(pes_text_reader_threads(t), 1);
    assert_int_equal(pes_text_reader_read(t, r, 4, &err), 2);
    pes_text_reader_close(t);
}

/* A big file closed after one read: the workers are reading ahead. */
static void test_close_early(void **state)
{
    (void)state;
    struct gen g = {.seed = 12};
    generate(&g, PES_TEXT_FORMAT_ADDR, 6u << 20);
    char *path = write_file(g.d, g.len);
    for (unsigned threads = 2; threads <= 8; threads += 3) {
        struct pes_error err;
        struct pes_text_reader *t = pes_text_reader_open(path, &err);
        assert_int_equal(pes_text_reader_set_threads(t, threads, &err), 0);
        struct pes_record r[100];
        assert_int_equal(pes_text_reader_read(t, r, 100, &err), 100);
        pes_text_reader_close(t);
    }
    unlink(path);
    free(path);
    free(g.d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_written),       cmocka_unit_test(test_generated_valid),
        cmocka_unit_test(test_generated_bad_line), cmocka_unit_test(test_mutated_lines),
        cmocka_unit_test(test_binary64_blocks),    cmocka_unit_test(test_set_threads),
        cmocka_unit_test(test_close_early),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
