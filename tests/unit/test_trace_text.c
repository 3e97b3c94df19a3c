/* test_trace_text.c — the plain-text (PARDA / libCacheSim style) address reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "trace_test_util.h"

static char *write_text(const char *content)
{
    char *path = tt_temp_path("text");
    FILE *f = fopen(path, "w");
    fputs(content, f);
    fclose(f);
    return path;
}

static void test_formats(void **state)
{
    (void)state;
    char *path = write_text("# a comment line\n"
                            "1000\n"
                            "0x2000 R\n"
                            "0X3a W   # trailing comment\n"
                            "\n"
                            "   \t\n"
                            "w 0xffffffffffffffff\n"
                            "r 0\n"
                            "DEADbeef w\r\n"
                            "0x10"); /* no final newline */
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    struct pes_record r[16];
    /* read in small pieces to exercise the resumption */
    long n1 = pes_text_reader_read(t, r, 3, &err);
    assert_int_equal(n1, 3);
    long n2 = pes_text_reader_read(t, r + 3, 13, &err);
    assert_int_equal(n2, 4);
    assert_int_equal(pes_text_reader_read(t, r + 7, 9, &err), 0);
    const uint64_t addr[7] = {0x1000, 0x2000, 0x3a, UINT64_MAX, 0, 0xdeadbeef, 0x10};
    const uint32_t id[7] = {PES_TEXT_READ_SITE,  PES_TEXT_READ_SITE, PES_TEXT_WRITE_SITE,
                            PES_TEXT_WRITE_SITE, PES_TEXT_READ_SITE, PES_TEXT_WRITE_SITE,
                            PES_TEXT_READ_SITE};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(r[i].addr, addr[i]);
        assert_int_equal(r[i].id, id[i]);
        assert_int_equal(r[i].extra, 0);
    }
    pes_text_reader_close(t);
    unlink(path);
    free(path);
}

static void expect_bad(const char *content, const char *line_tag)
{
    char *path = write_text(content);
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    struct pes_record r[16];
    long n;
    while ((n = pes_text_reader_read(t, r, 16, &err)) > 0)
        ;
    assert_int_equal(n, -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    char want[600];
    snprintf(want, sizeof want, "%s%s", path, line_tag);
    assert_non_null(strstr(err.message, want));
    pes_text_reader_close(t);
    unlink(path);
    free(path);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("0x10\nzz\n", ":2:");             /* not hex */
    expect_bad("0x10\n0x20\n\n0x30 X\n", ":4:"); /* bad R/W */
    expect_bad("0x10000000000000000\n", ":1:");  /* 17 digits: overflow */
    expect_bad("# c\n0x\n", ":2:");              /* no digits */
    expect_bad("1 2 3\n", ":1:");                /* three fields */
    expect_bad("R W\n", ":1:");                  /* no address */
    expect_bad("-5\n", ":1:");
}

/* A line is at most PES_TEXT_MAX_LINE bytes: one that long is read (here an
 * address padded with blanks), one byte more is an error naming its line, and
 * a file without any newline fails on line 1 after reading no more than that. */
static void test_line_length(void **state)
{
    (void)state;
    enum { MAX = PES_TEXT_MAX_LINE };
    static char content[3 * MAX + 64];
    char *p = content;
    p += sprintf(p, "0x10\n0x20 W");
    memset(p, ' ', MAX - strlen("0x20 W")); /* line 2: exactly MAX bytes */
    p += MAX - strlen("0x20 W");
    p += sprintf(p, "\n0x30");
    memset(p, ' ', MAX + 1 - strlen("0x30")); /* line 3: MAX + 1 bytes */
    p += MAX + 1 - strlen("0x30");
    sprintf(p, "\n0x40\n");
    char *path = write_text(content);
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    struct pes_record r[4];
    assert_int_equal(pes_text_reader_read(t, r, 2, &err), 2);
    assert_int_equal(r[0].addr, 0x10);
    assert_int_equal(r[1].addr, 0x20);
    assert_int_equal(r[1].id, PES_TEXT_WRITE_SITE);
    assert_int_equal(pes_text_reader_read(t, r, 4, &err), -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    char want[600];
    snprintf(want, sizeof want, "%s:3: line longer than %u bytes", path, MAX);
    assert_non_null(strstr(err.message, want));
    pes_text_reader_close(t);
    unlink(path);
    free(path);

    memset(content, '7', 3 * MAX); /* no newline at all */
    content[3 * MAX] = '\0';
    path = write_text(content);
    t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    assert_int_equal(pes_text_reader_read(t, r, 4, &err), -1);
    snprintf(want, sizeof want, "%s:1: line longer than %u bytes", path, MAX);
    assert_non_null(strstr(err.message, want));
    pes_text_reader_close(t);
    unlink(path);
    free(path);
}

/* A file several read chunks long (the reader reads 1 MiB at a time): lines
 * of every length up to the limit, comments, blanks and CRLF fall across
 * the chunk boundaries, and every address the test wrote comes back in order,
 * from a file and from memory alike. */
static void test_chunk_boundaries(void **state)
{
    (void)state;
    enum { N = 200000 };
    uint64_t *want = malloc(N * sizeof *want);
    size_t cap = 40u << 20, len = 0;
    char *content = malloc(cap);
    assert_non_null(want);
    assert_non_null(content);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        want[i] = x >> (x % 64);
        unsigned pad = (unsigned)(x % 97) == 0 ? PES_TEXT_MAX_LINE - 40 : (unsigned)(x % 9);
        len += (size_t)sprintf(content + len, "%*s%s%llx%s", (int)pad, "", x % 3 ? "0x" : "",
                               (unsigned long long)want[i], x % 5 == 0 ? " R # c\r\n" : "\n");
        if (x % 11 == 0)
            len += (size_t)sprintf(content + len, "%s", x % 2 ? "\n" : "# only a comment\n");
    }
    assert_true(len < cap && len > (3u << 20));
    content[len] = '\0';
    char *path = write_text(content);
    struct pes_error err;
    struct pes_text_reader *readers[2] = {pes_text_reader_open(path, &err),
                                          pes_text_reader_open_memory(content, len, "mem", &err)};
    static struct pes_record r[1000];
    for (int k = 0; k < 2; k++) {
        assert_non_null(readers[k]);
        size_t got = 0;
        long n;
        while ((n = pes_text_reader_read(readers[k], r, 1 + got % 997, &err)) > 0) {
            for (long i = 0; i < n; i++) {
                assert_true(got + (size_t)i < N);
                assert_int_equal(r[i].addr, want[got + (size_t)i]);
            }
            got += (size_t)n;
        }
        assert_int_equal(n, 0);
        assert_int_equal(got, N);
        pes_text_reader_close(readers[k]);
    }
    unlink(path);
    free(path);
    free(content);
    free(want);
}

/* valgrind --tool=lackey --trace-mem=yes output, detected: data accesses
 * only, "M" as a load then a store (split across two reads here). */
static void test_lackey(void **state)
{
    (void)state;
    char *path = write_text("==4242== Lackey, an example Valgrind tool\n"
                            "==4242== Command: ./a.out\n"
                            "I  04016ac3,3\n"
                            " L 7ff000d68,8\n"
                            " S 0421d5f0,4\n"
                            "I  04016ac6,7\n"
                            " M 0421d5f8,16\n"
                            "\n"
                            " L 10,1\n"
                            "==4242== \n");
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    assert_int_equal(pes_text_reader_format(t), PES_TEXT_FORMAT_LACKEY);
    struct pes_record r[8];
    assert_int_equal(pes_text_reader_read(t, r, 3, &err), 3); /* ends after M's load */
    assert_int_equal(pes_text_reader_read(t, r + 3, 5, &err), 2);
    assert_int_equal(pes_text_reader_read(t, r + 5, 3, &err), 0);
    const uint64_t addr[5] = {0x7ff000d68, 0x421d5f0, 0x421d5f8, 0x421d5f8, 0x10};
    const uint32_t id[5] = {PES_TEXT_READ_SITE, PES_TEXT_WRITE_SITE, PES_TEXT_READ_SITE,
                            PES_TEXT_WRITE_SITE, PES_TEXT_READ_SITE};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(r[i].addr, addr[i]);
        assert_int_equal(r[i].id, id[i]);
    }
    pes_text_reader_close(t);
    unlink(path);
    free(path);

    path = write_text(" L 10,4\n S 20,4\n L 3x,4\n");
    t = pes_text_reader_open(path, &err);
    assert_non_null(t);
    assert_int_equal(pes_text_reader_read(t, r, 8, &err), -1);
    char want[600];
    snprintf(want, sizeof want, "%s:3: expected a valgrind lackey line", path);
    assert_non_null(strstr(err.message, want));
    pes_text_reader_close(t);
    unlink(path);
    free(path);
}

/* Little-endian 64-bit addresses, detected by their NUL bytes; a cut last
 * address is not read, and said. Also forced with _open_as. */
static void test_binary64(void **state)
{
    (void)state;
    const uint64_t addr[3] = {0x7ffd12345678, 0x1000, UINT64_MAX};
    unsigned char bytes[3 * 8 + 3];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 8; k++)
            bytes[i * 8 + k] = (unsigned char)(addr[i] >> (8 * k));
    memcpy(bytes + 24, "\x01\x02\x03", 3);
    char *path = tt_temp_path("bin");
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, sizeof bytes, f);
    fclose(f);
    for (int forced = 0; forced < 2; forced++) {
        struct pes_error err;
        struct pes_text_reader *t = pes_text_reader_open_as(
            path, forced ? PES_TEXT_FORMAT_BINARY64 : PES_TEXT_FORMAT_AUTO, &err);
        assert_non_null(t);
        assert_int_equal(pes_text_reader_format(t), PES_TEXT_FORMAT_BINARY64);
        struct pes_record r[4];
        assert_int_equal(pes_text_reader_read(t, r, 2, &err), 2);
        assert_null(pes_text_reader_truncation(t));
        assert_int_equal(pes_text_reader_read(t, r + 2, 2, &err), 1);
        assert_int_equal(pes_text_reader_read(t, r + 3, 1, &err), 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(r[i].addr, addr[i]);
            assert_int_equal(r[i].id, PES_TEXT_READ_SITE);
        }
        assert_non_null(pes_text_reader_truncation(t));
        assert_non_null(
            strstr(pes_text_reader_truncation(t), "the last 3 bytes (after 3 complete addresses)"));
        pes_text_reader_close(t);
    }
    unlink(path);
    free(path);
}

static void test_format_names(void **state)
{
    (void)state;
    const char *names[] = {"auto", "addr", "lackey", "binary64"};
    for (int f = 0; f < 4; f++) {
        assert_int_equal(pes_text_format_parse(names[f]), f);
        assert_string_equal(pes_text_format_name((enum pes_text_format)f), names[f]);
    }
    assert_int_equal(pes_text_format_parse("pes"), -1);
    assert_int_equal(pes_text_format_parse(NULL), -1);
}

static void test_missing_file(void **state)
{
    (void)state;
    struct pes_error err;
    assert_null(pes_text_reader_open("/nonexistent/file.txt", &err));
    assert_int_equal(err.code, PES_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/file.txt"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),      cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_line_length),  cmocka_unit_test(test_chunk_boundaries),
        cmocka_unit_test(test_lackey),       cmocka_unit_test(test_binary64),
        cmocka_unit_test(test_format_names), cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
