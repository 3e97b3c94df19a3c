/*
 * test_trace_escape.c — pes_escape_text: what a terminal could act on comes
 * out as \xHH, everything else unchanged; expected strings written by hand
 * from the rules in pes/trace.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/trace.h"

static void expect(const char *in, const char *out)
{
    char buf[256];
    size_t n = pes_escape_text(buf, sizeof buf, in);
    assert_string_equal(buf, out);
    assert_int_equal(n, strlen(out));
    assert_int_equal(pes_escape_text(NULL, 0, in), strlen(out));
}

static void test_controls(void **state)
{
    (void)state;
    expect("gemm.c", "gemm.c");
    expect("", "");
    expect(NULL, "");
    /* OSC "set the title" and CSI "clear the screen" */
    expect("a\x1b]0;pwned\x07z", "a\\x1b]0;pwned\\x07z");
    expect("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H");
    expect("tab\there\nnew\rcr", "tab\\x09here\\x0anew\\x0dcr");
    expect("del\x7f", "del\\x7f");
    expect("back\\slash", "back\\\\slash");
}

static void test_utf8(void **state)
{
    (void)state;
    /* valid UTF-8 passes: é, €, U+1F600 */
    expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
           "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    /* C1 controls as raw bytes (CSI 0x9b) and as UTF-8 (U+009B), U+00A0 passes */
    expect("\x9b"
           "2J",
           "\\x9b2J");
    expect("\xc2\x9b"
           "2J \xc2\xa0",
           "\\xc2\\x9b2J \xc2\xa0");
    /* not UTF-8: a lone continuation byte, an overlong form, a surrogate, a cut sequence */
    expect("\x80", "\\x80");
    expect("\xc0\xaf", "\\xc0\\xaf");
    expect("\xed\xa0\x80", "\\xed\\xa0\\x80");
    expect("\xe2\x82", "\\xe2\\x82");
    expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
    expect("\xff", "\\xff");
}

static void test_truncation(void **state)
{
    (void)state;
    char buf[6];
    memset(buf, 'z', sizeof buf);
    /* like snprintf: the whole length returned, a NUL-terminated prefix written */
    assert_int_equal(pes_escape_text(buf, sizeof buf,
                                     "ab\x1b"
                                     "cd"),
                     8);
    assert_string_equal(buf, "ab\\x1");
    assert_int_equal(pes_escape_text(buf, 1, "abc"), 3);
    assert_string_equal(buf, "");
}

/* pes_parse_u64: digits only from the first byte, the whole string, 64 bits. */
static void test_parse_u64(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_int_equal(pes_parse_u64("0", 10, &v), 0);
    assert_true(v == 0);
    assert_int_equal(pes_parse_u64("18446744073709551615", 10, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(pes_parse_u64("0x1f", 0, &v), 0);
    assert_true(v == 31);
    v = 7;
    const char *bad[] = {"", " 5", "+5", "-5", "5 ", "5x", "0x1f", "18446744073709551616", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(pes_parse_u64(bad[i], 10, &v), -1);
    assert_int_equal(pes_parse_u64(NULL, 10, &v), -1);
    assert_true(v == 7); /* untouched on failure */
}

/* pes_json_string: quotes and backslashes, \n and \t by name, other controls as \u00XX. */
static void test_json_string(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    pes_json_string(f, "a\"b\\c\n\t\x01\x1f\xc3\xa9");
    pes_json_string(f, NULL);
    fclose(f);
    assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\xc3\xa9\"\"\"");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controls),    cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_truncation),  cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_json_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
