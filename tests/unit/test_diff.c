/*
 * test_diff.c — tables.c and diff.c on small hand-written reports: which
 * columns key a row, how rows are matched, ranked and marked, the values
 * of delta and relative change, and the reports --diff refuses. Every
 * expected value below is worked out by hand from the inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "tables.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s", e.text);
    return j;
}

static void test_keys(void **state)
{
    (void)state;
    json_t *site = parse(
        "{\"site\":7,\"file\":\"a.c\",\"line\":3,\"column\":4,\"function\":\"f\",\"accesses\":5}");
    const char *cols[8];
    size_t n = pes_table_key_columns("configs.simulation.sites", site, cols, 8);
    assert_int_equal(n, 5); /* in the declared order, whatever the row's */
    assert_string_equal(cols[0], "file");
    assert_string_equal(cols[1], "line");
    assert_string_equal(cols[2], "column");
    assert_string_equal(cols[3], "function");
    assert_string_equal(cols[4], "site");
    char *label = pes_table_key_label("configs.simulation.sites", site);
    assert_string_equal(label, "a.c:3:4 f site=7");
    free(label);
    /* a cache line: the object part it starts with when known (addresses
     * move between runs), else its address */
    json_t *line =
        parse("{\"address\":4096,\"object\":\"counters\",\"part\":\"counters.hot\",\"hitm\":3}");
    label = pes_table_key_label("cache_lines", line);
    assert_string_equal(label, "part=counters.hot");
    free(label);
    json_t *anon = parse("{\"address\":4096,\"object\":\"unknown\",\"part\":\"\",\"hitm\":3}");
    label = pes_table_key_label("cache_lines", anon);
    assert_string_equal(label, "address=4096");
    free(label);
    /* declared tables: configurations by cores and mimicked only */
    json_t *config = parse("{\"cores\":2,\"mimicked\":false,\"line\":64}");
    label = pes_table_key_label("configs", config);
    assert_string_equal(label, "cores=2 mimicked=false");
    free(label);
    assert_string_equal(pes_table_rank("configs.simulation.sites"),
                        "invalidations.true+invalidations.false");
    assert_string_equal(pes_table_rank("configs.sites"), "accesses");
    assert_null(pes_table_rank("configs"));
    assert_string_equal(pes_table_unit("configs.sites", "accesses"), "count");
    assert_string_equal(pes_table_unit("machine.levels", "line"), "bytes");
    assert_null(pes_table_unit("configs.simulation.sites", "line")); /* a source line */
    json_decref(site);
    json_decref(line);
    json_decref(anon);
    json_decref(config);
}

static const json_t *table_named(const json_t *d, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(d, "tables"), i,
                       t) if (strcmp(json_string_value(json_object_get(t, "table")), name) ==
                              0) return t;
    fail_msg("no table %s", name);
    return NULL;
}

static const json_t *value_of(const json_t *row, const char *column)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(row, "values"), i,
                       v) if (strcmp(json_string_value(json_object_get(v, "column")), column) ==
                              0) return v;
    fail_msg("no column %s", column);
    return NULL;
}

static void test_diff_rows(void **state)
{
    (void)state;
    json_t *a = parse(
        "{\"pes_replay_json\":1,\"rate\":0.5,\"zero\":0,\"grows\":0,"
        "\"configs\":[{\"cores\":2,\"mimicked\":false,\"sites\":["
        "{\"site\":1,\"accesses\":10},{\"site\":2,\"accesses\":5},{\"site\":3,\"accesses\":1},"
        "{\"site\":5,\"accesses\":7},{\"site\":5,\"accesses\":8}],"
        "\"prd\":[{\"stream\":0,\"histogram\":{\"exact\":[[0,5],[3,1]]}}]}]}");
    json_t *b = parse(
        "{\"pes_replay_json\":1,\"rate\":0.25,\"zero\":0,\"grows\":3,"
        "\"configs\":[{\"cores\":2,\"mimicked\":false,\"sites\":["
        "{\"site\":2,\"accesses\":50},{\"site\":1,\"accesses\":10},{\"site\":4,\"accesses\":2},"
        "{\"site\":5,\"accesses\":7},{\"site\":5,\"accesses\":9}],"
        "\"prd\":[{\"stream\":0,\"histogram\":{\"exact\":[[0,5],[2,1]]}}]}]}");
    json_t *ia = json_pack("{s:s,s:s,s:s}", "path", "a.json", "input", "json", "kind", "full");
    json_t *d = pes_diff_reports(a, b, ia, ia);
    assert_non_null(d);
    assert_int_equal(json_integer_value(json_object_get(d, "pes_diff_json")), 1);

    /* the report's own scalars: B - A, and (B - A) / |A| */
    const json_t *tot = json_array_get(json_object_get(table_named(d, "totals"), "rows"), 0);
    const json_t *v = value_of(tot, "rate");
    assert_true(json_real_value(json_object_get(v, "delta")) == -0.25);
    assert_true(json_real_value(json_object_get(v, "relative")) == -0.5);
    v = value_of(tot, "zero"); /* 0 -> 0: no change, relative 0 */
    assert_int_equal(json_integer_value(json_object_get(v, "relative")), 0);
    v = value_of(tot, "grows"); /* 0 -> 3: no ratio */
    assert_int_equal(json_integer_value(json_object_get(v, "delta")), 3);
    assert_true(json_is_null(json_object_get(v, "relative")));

    /* sites, matched by site id, ranked by |delta accesses| (a row in one
     * report only: its own accesses), ties in A's order, B's other rows after:
     * site=2 45, site=4 2 (only B), site=3 1 (only A, A's third row),
     * site=5 #2 1 (8 -> 9, A's fifth), site=1 0 (A's first), site=5 0 (A's fourth) */
    const json_t *t = table_named(d, "configs[cores=2 mimicked=false].sites");
    assert_string_equal(json_string_value(json_object_get(t, "name")), "configs.sites");
    const json_t *rows = json_object_get(t, "rows");
    assert_int_equal(json_array_size(rows), 6);
    static const char *const keys[] = {"site=2",    "site=4", "site=3",
                                       "site=5 #2", "site=1", "site=5"};
    static const char *const status[] = {"changed", "only_b", "only_a", "changed", "same", "same"};
    static const int ranks[] = {45, 2, 1, 1, 0, 0};
    for (size_t i = 0; i < 6; i++) {
        const json_t *r = json_array_get(rows, i);
        assert_string_equal(json_string_value(json_object_get(r, "key")), keys[i]);
        assert_string_equal(json_string_value(json_object_get(r, "status")), status[i]);
        assert_int_equal(json_integer_value(json_object_get(r, "rank")), ranks[i]);
    }
    v = value_of(json_array_get(rows, 0), "accesses");
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 5);
    assert_int_equal(json_integer_value(json_object_get(v, "b")), 50);
    assert_int_equal(json_integer_value(json_object_get(v, "delta")), 45);
    assert_int_equal(json_integer_value(json_object_get(v, "relative")), 9);
    v = value_of(json_array_get(rows, 1), "accesses"); /* only in B: A null, no delta */
    assert_true(json_is_null(json_object_get(v, "a")));
    assert_true(json_is_null(json_object_get(v, "delta")));
    assert_int_equal(json_integer_value(json_object_get(t, "changed")), 2);
    assert_int_equal(json_integer_value(json_object_get(t, "same")), 2);
    assert_int_equal(json_integer_value(json_object_get(t, "only_a")), 1);
    assert_int_equal(json_integer_value(json_object_get(t, "only_b")), 1);

    /* histogram bins are a table keyed by distance: 0 same, 3 only in A, 2 only in B */
    t = table_named(d, "configs[cores=2 mimicked=false].prd[stream=0].histogram.exact");
    rows = json_object_get(t, "rows");
    assert_int_equal(json_array_size(rows), 3);
    assert_int_equal(json_integer_value(json_object_get(t, "same")), 1);
    assert_int_equal(json_integer_value(json_object_get(t, "only_a")), 1);
    assert_int_equal(json_integer_value(json_object_get(t, "only_b")), 1);

    /* a report against itself: nothing changed anywhere */
    json_t *same = pes_diff_reports(a, a, ia, ia);
    size_t i;
    json_t *tb;
    json_array_foreach(json_object_get(same, "tables"), i, tb)
    {
        assert_int_equal(json_integer_value(json_object_get(tb, "changed")), 0);
        assert_int_equal(json_integer_value(json_object_get(tb, "only_a")), 0);
        assert_int_equal(json_integer_value(json_object_get(tb, "only_b")), 0);
    }
    json_decref(same);
    json_decref(d);
    json_decref(ia);
    json_decref(a);
    json_decref(b);
}

static void test_kinds(void **state)
{
    (void)state;
    char msg[512];
    json_t *j = parse("{\"pes_replay_json\":1,\"trace\":{},\"configs\":[]}");
    assert_string_equal(pes_diff_report_kind(j, "r.json", msg, sizeof msg), "full");
    json_decref(j);
    j = parse("{\"pes_replay_json\":1,\"kind\":\"sampled\"}");
    assert_string_equal(pes_diff_report_kind(j, "r.json", msg, sizeof msg), "sampled");
    json_decref(j);
    j = parse("{\"pes_replay_json\":1,\"kind\":\"sampled\",\"full\":{}}");
    assert_string_equal(pes_diff_report_kind(j, "r.json", msg, sizeof msg), "compare");
    json_decref(j);
    j = parse("{\"pes_replay_json\":2,\"trace\":{},\"configs\":[]}");
    assert_null(pes_diff_report_kind(j, "v2.json", msg, sizeof msg));
    assert_string_equal(
        msg, "v2.json: a pes-replay report of format version 2; this pes-replay reads version 1");
    json_decref(j);
    j = parse("[1,2]");
    assert_null(pes_diff_report_kind(j, "x.json", msg, sizeof msg));
    assert_non_null(strstr(msg, "x.json: JSON but not a pes-replay report"));
    json_decref(j);
    j = parse("{\"pes_diff_json\":1}");
    assert_null(pes_diff_report_kind(j, "d.json", msg, sizeof msg));
    assert_non_null(strstr(msg, "d.json: a pes-replay --diff report"));
    json_decref(j);
}

/* RFC 4180 fields: quoted when they hold a comma, quote, CR or LF; quotes doubled. */
static void test_csv_field(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    pes_csv_field(f, "plain");
    fputc('|', f);
    pes_csv_field(f, "a,b");
    fputc('|', f);
    pes_csv_field(f, "say \"hi\"");
    fputc('|', f);
    pes_csv_field(f, "cr\rlf\n");
    fputc('|', f);
    json_t *x = json_real(0.25), *n = json_null(), *t = json_true();
    pes_csv_value(f, x);
    fputc('|', f);
    pes_csv_value(f, n);
    fputc('|', f);
    pes_csv_value(f, t);
    fclose(f);
    assert_string_equal(buf, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"cr\rlf\n\"|0.25||true");
    free(buf);
    json_decref(x);
    json_decref(n);
    json_decref(t);
}

/* pes_diff_cut (the HTML page's embedded copy): rows cut to the first
 * max_rows with truncated_rows, the tables of a name beyond max_tables left
 * out and counted in truncated_tables; nothing added where nothing is cut;
 * the diff itself unchanged. */
static void test_cut(void **state)
{
    (void)state;
    json_t *d =
        parse("{\"pes_diff_json\":1,\"a\":{\"path\":\"A\"},\"b\":{\"path\":\"B\"},\"tables\":["
              "{\"table\":\"totals\",\"name\":\"totals\",\"rows\":[{\"key\":\"\"}]},"
              "{\"table\":\"x[1]\",\"name\":\"x\",\"rows\":[{\"key\":\"r1\"},{\"key\":\"r2\"},{"
              "\"key\":\"r3\"}]},"
              "{\"table\":\"x[2]\",\"name\":\"x\",\"rows\":[{\"key\":\"s1\"},{\"key\":\"s2\"}]},"
              "{\"table\":\"y\",\"name\":\"y\",\"rows\":[]},"
              "{\"table\":\"x[3]\",\"name\":\"x\",\"rows\":[{\"key\":\"t1\"}]}]}");
    char *before = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_t *c = pes_diff_cut(d, 2, 2);
    assert_non_null(c);
    char *got = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(
        got, "{\"pes_diff_json\":1,\"a\":{\"path\":\"A\"},\"b\":{\"path\":\"B\"},\"tables\":["
             "{\"table\":\"totals\",\"name\":\"totals\",\"rows\":[{\"key\":\"\"}]},"
             "{\"table\":\"x[1]\",\"name\":\"x\",\"rows\":[{\"key\":\"r1\"},{\"key\":\"r2\"}],"
             "\"truncated_rows\":1},"
             "{\"table\":\"x[2]\",\"name\":\"x\",\"rows\":[{\"key\":\"s1\"},{\"key\":\"s2\"}]},"
             "{\"table\":\"y\",\"name\":\"y\",\"rows\":[]}],\"truncated_tables\":1}");
    free(got);
    json_decref(c);
    /* large enough bounds: an equal copy, no marker */
    c = pes_diff_cut(d, 3, 3);
    assert_true(json_equal(c, d));
    json_decref(c);
    char *after = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(before, after);
    free(before);
    free(after);
    json_decref(d);
}

/* The row of a diff table that A's row of this key became (B's rows of
 * the same key that nothing matched are listed apart, "only_b"). */
static const json_t *row_keyed(const json_t *t, const char *key)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(t, "rows"), i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "key")), key) == 0 &&
            strcmp(json_string_value(json_object_get(r, "status")), "only_b") != 0)
            return r;
    }
    fail_msg("no row %s", key);
    return NULL;
}

/* Two checkouts of one file, B with two lines inserted above f's loop:
 * the rows of f's lines match by source text, not by number (B's line 3
 * has other text than A's line 3: that key pair is undone); without source
 * files, by place among f's rows. */
static void test_edit_matching(void **state)
{
    (void)state;
    char dir[] = "/tmp/pes_test_diff_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pa[64], pb[64], ta[1024], tb[1024];
    snprintf(pa, sizeof pa, "%s/a.c", dir);
    snprintf(pb, sizeof pb, "%s/b.c", dir);
    FILE *f = fopen(pa, "w");
    fputs(
        "int f(void) {\n  int s = 0;\n  for (i = 0; i < n; i++)\n    s += x[i];\n  return s;\n}\n",
        f);
    fclose(f);
    f = fopen(pb, "w");
    fputs("int f(void) {\n  int s = 0;\n  /* inserted */\n\n  for (i = 0; i < n; i++)\n"
          "      s  +=  x[i];\n  return s;\n}\n",
          f);
    fclose(f);
    /* rows as --by line lists them; the file names differ only by directory
     * in real checkouts: here b.c is renamed a.c by its report */
    const char *row = "{\"key\":\"a.c:%d f\",\"file\":\"%s\",\"line\":%d,\"function\":\"f\","
                      "\"l1_misses\":%d}";
    char r1[256], r2[256];
    snprintf(r1, sizeof r1, row, 3, pa, 3, 100);
    snprintf(r2, sizeof r2, row, 4, pa, 4, 800);
    snprintf(ta, sizeof ta, "{\"pes_replay_json\":1,\"groups\":[%s,%s]}", r1, r2);
    /* B's lines 5 and 6 hold A's 3 and 4; B's line 3 (a comment) has no row */
    char dir_b[80];
    snprintf(dir_b, sizeof dir_b, "%s/b", dir);
    assert_int_equal(mkdir(dir_b, 0700), 0);
    char pb2[96];
    snprintf(pb2, sizeof pb2, "%s/a.c", dir_b);
    assert_int_equal(rename(pb, pb2), 0);
    snprintf(r1, sizeof r1, row, 5, pb2, 5, 100);
    snprintf(r2, sizeof r2, row, 6, pb2, 6, 100);
    /* and a B row keyed a.c:3, whose line 3 is now the comment */
    char r3[256];
    snprintf(r3, sizeof r3, row, 3, pb2, 3, 1);
    snprintf(tb, sizeof tb, "{\"pes_replay_json\":1,\"groups\":[%s,%s,%s]}", r1, r2, r3);
    json_t *a = parse(ta), *b = parse(tb), *ia = parse("{\"path\":\"A\"}");
    json_t *d = pes_diff_reports(a, b, ia, ia);
    assert_non_null(d);
    const json_t *t = table_named(d, "groups");
    const json_t *hot = row_keyed(t, "key=a.c:4 f");
    assert_string_equal(json_string_value(json_object_get(hot, "key_b")), "key=a.c:6 f");
    assert_string_equal(json_string_value(json_object_get(hot, "matched_by")), "source");
    assert_int_equal(json_integer_value(json_object_get(value_of(hot, "l1_misses"), "delta")),
                     -700);
    /* a.c:3 has a B row of that key, but B's line 3 is the comment: the
     * text decides, and the loop went to line 5 */
    const json_t *loop = row_keyed(t, "key=a.c:3 f");
    assert_string_equal(json_string_value(json_object_get(loop, "key_b")), "key=a.c:5 f");
    assert_int_equal(json_integer_value(json_object_get(t, "only_a")), 0);
    assert_int_equal(json_integer_value(json_object_get(t, "only_b")), 1); /* B's a.c:3 */
    json_decref(d);
    /* the sources gone: keys first (a.c:3 with a.c:3: no text says
     * otherwise), then by place among f's rows: A's line 4 is f's second
     * row (ordinal 1), and so is B's line 5; B's line 6 is left */
    assert_int_equal(remove(pa), 0);
    assert_int_equal(remove(pb2), 0);
    d = pes_diff_reports(a, b, ia, ia);
    t = table_named(d, "groups");
    loop = row_keyed(t, "key=a.c:3 f");
    assert_null(json_object_get(loop, "key_b"));
    hot = row_keyed(t, "key=a.c:4 f");
    assert_string_equal(json_string_value(json_object_get(hot, "matched_by")), "order");
    assert_string_equal(json_string_value(json_object_get(hot, "key_b")), "key=a.c:5 f");
    assert_int_equal(json_integer_value(json_object_get(t, "only_b")), 1);
    json_decref(d);
    rmdir(dir_b);
    rmdir(dir);
    json_decref(a);
    json_decref(b);
    json_decref(ia);
}

/* The headline: counts by |delta| first (L1 misses -900 before writebacks
 * +50 and L2 misses +10), then other metrics by |relative| (runtime -75 %,
 * L1 hit rate +50 %); unchanged metrics left out (accesses, invalidations:
 * 3 -> 3, L2 hit rate); relative = delta / |A|. */
static void test_headline(void **state)
{
    (void)state;
    json_t *a = parse("{\"trace\":{\"accesses\":1000},\"configs\":[{\"cores\":2,\"mimicked\":false,"
                      "\"simulation\":{\"levels\":[{\"accesses\":1000,\"hits\":0},"
                      "{\"accesses\":1000,\"hits\":900}],\"writebacks\":10,"
                      "\"invalidations\":{\"true\":1,\"false\":2}},"
                      "\"model\":{\"hit_local\":[0.5,0.5],\"runtime\":{\"total_seconds\":2}}}]}");
    json_t *b =
        parse("{\"trace\":{\"accesses\":1000},\"configs\":[{\"cores\":2,\"mimicked\":false,"
              "\"simulation\":{\"levels\":[{\"accesses\":1000,\"hits\":900},"
              "{\"accesses\":110,\"hits\":0}],\"writebacks\":60,"
              "\"invalidations\":{\"true\":2,\"false\":1}},"
              "\"model\":{\"hit_local\":[0.75,0.5],\"runtime\":{\"total_seconds\":0.5}}}]}");
    json_t *h = pes_diff_headline(a, b);
    assert_non_null(h);
    static const char *const want[] = {"L1 misses", "writebacks", "L2 misses", "predicted runtime",
                                       "L1 hit rate (model)"};
    assert_int_equal(json_array_size(h), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(h, i), "metric")),
                            want[i]);
    const json_t *l1 = json_array_get(h, 0);
    assert_int_equal(json_integer_value(json_object_get(l1, "a")), 1000);
    assert_int_equal(json_integer_value(json_object_get(l1, "b")), 100);
    assert_int_equal(json_integer_value(json_object_get(l1, "delta")), -900);
    assert_true(json_real_value(json_object_get(l1, "relative")) == -0.9);
    assert_string_equal(json_string_value(json_object_get(l1, "config")), "cores=2");
    /* the text writer's first line */
    json_t *ia = parse("{\"path\":\"A\",\"kind\":\"full\",\"input\":\"json\"}");
    json_t *d = pes_diff_reports(a, b, ia, ia);
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(pes_diff_write_text(f, d, 10, 0), 0);
    fclose(f);
    assert_memory_equal(buf, "L1 misses", 9);
    char *first = strtok(buf, "\n");
    assert_non_null(strstr(first, " -900 "));
    assert_non_null(strstr(first, "(-90.0 %)"));
    json_decref(d);
    json_decref(ia);
    json_decref(h);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),     cmocka_unit_test(test_diff_rows),
        cmocka_unit_test(test_kinds),    cmocka_unit_test(test_csv_field),
        cmocka_unit_test(test_cut),      cmocka_unit_test(test_edit_matching),
        cmocka_unit_test(test_headline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
