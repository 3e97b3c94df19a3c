/*
 * test_trace_escape.c — pes_escape_text: what a terminal could act on comes
 * out as \xHH, everything else unchanged; expected strings written by hand
 * from the rules in pes/trace.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
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
    expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    /* C1 controls as raw bytes (CSI 0x9b) and as UTF-8 (U+009B), U+00A0 passes */
    expect("\x9b" "2J", "\\x9b2J");
    expect("\xc2\x9b" "2J \xc2\xa0", "\\xc2\\x9b2J \xc2\xa0");
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
    assert_int_equal(pes_escape_text(buf, sizeof buf, "ab\x1b" "cd"), 8);
    assert_string_equal(buf, "ab\\x1");
    assert_int_equal(pes_escape_text(buf, 1, "abc"), 3);
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controls),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_truncation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
