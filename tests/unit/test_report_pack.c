/*
 * Unit tests of the report tree's packed form (report.h: pes_report_pack,
 * pes_report_unpack), which carries a --cores configuration's section from
 * one pes-replay-mpi rank to rank 0: a section unpacked into another report
 * prints the same JSON, keeps its text-only marks and number formats, and
 * every damaged buffer (cut anywhere, an unknown kind, a format that is not
 * one double's, bytes after the node) is refused with a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report.h"

/* root {"configs": [SECTION]} where SECTION holds every kind of node. */
static struct pes_report *sample(void)
{
    struct pes_report *r = pes_report_create();
    struct pes_rnode *configs = pes_r_array(r, pes_report_root(r), "configs");
    struct pes_rnode *c = pes_r_object(r, configs, NULL);
    pes_r_u64(r, c, "cores", 4);
    pes_r_bool(r, c, "mimicked", 1);
    pes_r_i64(r, c, "delta", -17);
    pes_r_f64(r, c, "rate", 3.14159265, "%.4g"); /* JSON: 3.142 */
    pes_r_f64(r, c, "count", 12345.678, "%.0f"); /* JSON: 12346 */
    pes_r_f64(r, c, "plain", 0.1, NULL);         /* the writer's default */
    pes_r_flag(pes_r_str(r, c, "label", "a \"quoted\" \xc3\xa9 label"), PES_R_TEXT_ONLY);
    pes_r_null(r, c, "none");
    struct pes_rnode *rows = pes_r_array(r, c, "rows");
    for (int i = 0; i < 3; i++) {
        struct pes_rnode *row = pes_r_object(r, rows, NULL);
        pes_r_u64(r, row, "site", (uint64_t)i);
        pes_r_str(r, row, "file", "");
        pes_r_array(r, row, "empty");
    }
    assert_false(pes_report_failed(r));
    return r;
}

static char *json_of(const struct pes_report *r)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    assert_int_equal(pes_report_write_json(f, r), 0);
    fclose(f);
    return buf;
}

static void *packed_sample(size_t *len)
{
    struct pes_report *r = sample();
    void *buf = pes_report_pack(pes_r_at(pes_r_get(pes_report_tree(r), "configs"), 0), len);
    assert_non_null(buf);
    pes_report_destroy(r);
    return buf;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct pes_report *a = sample();
    size_t len = 0;
    void *buf = pes_report_pack(pes_r_at(pes_r_get(pes_report_tree(a), "configs"), 0), &len);
    assert_non_null(buf);
    struct pes_report *b = pes_report_create();
    struct pes_rnode *configs = pes_r_array(b, pes_report_root(b), "configs");
    assert_null(pes_report_unpack(b, configs, buf, len));
    assert_false(pes_report_failed(b));
    char *ja = json_of(a), *jb = json_of(b);
    assert_string_equal(ja, jb);
    /* the formats travelled: 3.142 and 12346, not the full doubles */
    assert_non_null(strstr(jb, "\"rate\":3.142,"));
    assert_non_null(strstr(jb, "\"count\":12346,"));
    assert_null(strstr(jb, "label")); /* text-only: not in JSON */
    const struct pes_rnode *c = pes_r_at(pes_r_get(pes_report_tree(b), "configs"), 0);
    assert_int_equal(pes_r_flags(pes_r_get(c, "label")), PES_R_TEXT_ONLY);
    assert_string_equal(pes_r_get_s(c, "label"), "a \"quoted\" \xc3\xa9 label");
    assert_int_equal(pes_r_i(pes_r_get(c, "delta")), -17);
    assert_int_equal(pes_r_kind(pes_r_get(c, "none")), PES_R_NULL);
    assert_int_equal(pes_r_count(pes_r_get(c, "rows")), 3);
    /* a second section after the first: appended in order */
    assert_null(pes_report_unpack(b, configs, buf, len));
    assert_int_equal(pes_r_count(configs), 2);
    free(ja);
    free(jb);
    free(buf);
    pes_report_destroy(a);
    pes_report_destroy(b);
}

/* Every cut of the buffer is refused, and the report says it failed. */
static void test_cut_anywhere(void **state)
{
    (void)state;
    size_t len = 0;
    unsigned char *buf = packed_sample(&len);
    for (size_t cut = 0; cut < len; cut++) {
        struct pes_report *b = pes_report_create();
        struct pes_rnode *configs = pes_r_array(b, pes_report_root(b), "configs");
        const char *why = pes_report_unpack(b, configs, buf, cut);
        if (!why)
            fail_msg("a buffer cut at %zu of %zu bytes was accepted", cut, len);
        assert_true(pes_report_failed(b));
        pes_report_destroy(b);
    }
    free(buf);
}

static const char *unpack_into_array(const void *buf, size_t len)
{
    static char why[128];
    struct pes_report *b = pes_report_create();
    struct pes_rnode *configs = pes_r_array(b, pes_report_root(b), "configs");
    const char *w = pes_report_unpack(b, configs, buf, len);
    snprintf(why, sizeof why, "%s", w ? w : "");
    pes_report_destroy(b);
    return why;
}

static void test_damage(void **state)
{
    (void)state;
    size_t len = 0;
    unsigned char *buf = packed_sample(&len);
    /* the root's kind byte: beyond the last kind */
    buf[0] = 99;
    assert_string_equal(unpack_into_array(buf, len), "an unknown node kind");
    buf[0] = PES_R_OBJECT;
    /* a byte more than the node */
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, buf, len);
    longer[len] = 0;
    assert_string_equal(unpack_into_array(longer, len + 1), "bytes after the node");
    free(longer);
    /* the %.4g format spelled as a string conversion */
    size_t at = 0;
    while (at + 4 <= len && memcmp(buf + at, "%.4g", 4))
        at++;
    assert_true(at + 4 <= len);
    buf[at + 3] = 's';
    assert_string_equal(unpack_into_array(buf, len), "a number format that is not one double's");
    free(buf);
    /* a keyed node in an array (the section's own key would be dropped) */
    struct pes_report *r = pes_report_create();
    struct pes_rnode *o = pes_r_object(r, pes_report_root(r), "keyed");
    pes_r_u64(r, o, "n", 1);
    size_t n = 0;
    void *k = pes_report_pack(o, &n);
    assert_string_equal(unpack_into_array(k, n), "a key where none belongs");
    free(k);
    pes_report_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_cut_anywhere),
        cmocka_unit_test(test_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
