/*
 * test_trace_calls.c — call edge records (docs/trace-format.md §3.3): a
 * version-3 trace with CALL and RETURN records and a call site reads back
 * record for record; a CALL that names no call site (an access site, a block,
 * an id of no module) is a format error naming the record; and a version-2
 * file, forged block by block, may hold neither record.
 */
#include "trace_forge.h"
#include "trace_test_util.h"

/* module 0: site 0 a load, site 1 a call (line 12), site 2 a store, block 3 */
#define LOAD_SITE  0u
#define CALL_SITE  1u
#define STORE_SITE 2u
#define BB_ID      3u
#define SP         0x7ffc0000f000ull

static void tables(struct pes_site sites[3], struct pes_bb *bb, struct pes_module *m)
{
    sites[0] = (struct pes_site){LOAD_SITE, BB_ID, PES_KIND_LOAD, 0, 5, 8, 11, "t.c", "main"};
    sites[1] = (struct pes_site){CALL_SITE, BB_ID, PES_KIND_CALL, 0, 3, 0, 12, "t.c", "main"};
    sites[2] = (struct pes_site){STORE_SITE, BB_ID, PES_KIND_STORE, 0, 5, 8, 13, "t.c", "main"};
    *bb = (struct pes_bb){
        .id = BB_ID, .n_sites = 3, .ops = {0}, .flags = 0, .function = "main", .label = "entry"};
    *m = (struct pes_module){0, 3, 1, "t.c", sites, bb};
}

/* A version-3 trace of thread 0 with recs[0..n), in memory. */
static uint8_t *write_trace(const struct pes_record *recs, size_t n, size_t *size)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("calls");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    struct pes_site sites[3];
    struct pes_bb bb;
    struct pes_module m;
    tables(sites, &bb, &m);
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    struct pes_thread t = {0, UINT32_MAX, 100, -1, -1, 0};
    assert_int_equal(pes_trace_writer_thread(w, &t, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 0, recs, n, &err), 0);
    struct pes_thread_totals tot = {0, n, 1, 1, 0, 0, 9};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 9, &err), 0);
    uint8_t *data = tt_read_file(path, size);
    remove(path);
    free(path);
    return data;
}

static void test_roundtrip(void **state)
{
    (void)state;
    const struct pes_record recs[] = {
        {0, BB_ID, 0},           {0x1000, LOAD_SITE, 0}, {SP, PES_ID_CALL, CALL_SITE},
        {0x2000, STORE_SITE, 0}, {SP, PES_ID_RETURN, 0},
    };
    size_t size;
    uint8_t *data = write_trace(recs, 5, &size);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(data, size, "calls.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_info(r)->version, PES_TRACE_VERSION); /* the writer's */
    struct pes_block b;
    size_t got = 0;
    while (pes_trace_reader_next(r, &b, &err) == 1) {
        if (b.type != PES_BLOCK_ACCESS)
            continue;
        assert_int_equal(b.n, 5);
        assert_memory_equal(b.records, recs, sizeof recs);
        got += b.n;
    }
    assert_int_equal(got, 5);
    const struct pes_site *s = pes_trace_reader_site(r, CALL_SITE);
    assert_non_null(s);
    assert_int_equal(s->kind, PES_KIND_CALL);
    assert_int_equal(s->line, 12);
    assert_int_equal(s->size, 0);
    assert_string_equal(pes_access_kind_name(PES_KIND_CALL), "call");
    /* neither reads nor writes */
    assert_false(pes_kind_reads(PES_KIND_CALL));
    assert_false(pes_kind_writes(PES_KIND_CALL));
    pes_trace_reader_close(r);
    free(data);
}

/* The trace must fail reading its ACCESS block with a FORMAT error holding
 * `what`, sequentially and through the index. */
static void expect_error(const uint8_t *data, size_t size, const char *what)
{
    for (int mode = 0; mode < 2; mode++) {
        struct pes_error err;
        struct pes_trace_reader *r = pes_trace_reader_open_memory(data, size, "bad.pes", &err);
        assert_non_null(r);
        struct pes_block b;
        int rc = 0;
        if (mode == 0) {
            while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
                ;
        } else {
            struct pes_block_ref *refs;
            size_t n;
            assert_int_equal(pes_trace_reader_index(r, &refs, &n, &err), 0);
            for (size_t i = 0; i < n && rc == 0; i++)
                if (refs[i].type == PES_BLOCK_ACCESS)
                    rc = pes_trace_reader_block_at(r, &refs[i], &b, &err) < 0 ? -1 : 0;
            free(refs);
        }
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, PES_ERR_FORMAT);
        if (!strstr(err.message, what))
            fail_msg("mode %d: message '%s' lacks '%s'", mode, err.message, what);
        pes_trace_reader_close(r);
    }
}

static void test_call_names_no_call_site(void **state)
{
    (void)state;
    const uint32_t bad[] = {LOAD_SITE, STORE_SITE, BB_ID, 99u};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const struct pes_record recs[] = {{0, BB_ID, 0}, {SP, PES_ID_CALL, bad[i]}};
        size_t size;
        uint8_t *data = write_trace(recs, 2, &size);
        char want[128];
        snprintf(want, sizeof want, "record 1 (a call) names site %u, which %s", bad[i],
                 bad[i] == 99u ? "no earlier MODULE block defines" : "is not a call site");
        expect_error(data, size, want);
        free(data);
    }
}

/* HEADER, MODULE, THREAD and one ACCESS block of recs, all of `version`. */
static struct pes_buf forge(uint16_t version, const struct pes_record *recs, size_t n)
{
    struct pes_buf f = {0}, p = {0};
    struct pes_trace_info info;
    tt_default_info(&info);
    assert_int_equal(pes_ser_info(&p, &info), 0);
    tt_forge_block(&f, version, PES_BLOCK_HEADER, 0, 1, &p);
    struct pes_site sites[3];
    struct pes_bb bb;
    struct pes_module m;
    tables(sites, &bb, &m);
    p.len = 0;
    assert_int_equal(pes_ser_module(&p, &m, version), 0);
    tt_forge_block(&f, version, PES_BLOCK_MODULE, 0, 4, &p);
    struct pes_thread t = {0, UINT32_MAX, 100, -1, -1, 0};
    p.len = 0;
    assert_int_equal(pes_ser_thread(&p, &t), 0);
    tt_forge_block(&f, version, PES_BLOCK_THREAD, 0, 1, &p);
    p.len = 0;
    struct pes_access_codec *c = pes_access_codec_new();
    assert_int_equal(pes_buf_u32(&p, (uint32_t)n), 0); /* version 2 on: the stored count */
    assert_int_equal(pes_access_encode(c, recs, n, &p), 0);
    tt_forge_block(&f, version, PES_BLOCK_ACCESS, 0, (uint32_t)n, &p);
    pes_access_codec_free(c);
    pes_buf_free(&p);
    return f;
}

static void test_version2_has_no_call_records(void **state)
{
    (void)state;
    const struct pes_record calls[] = {{0, BB_ID, 0}, {SP, PES_ID_CALL, CALL_SITE}};
    struct pes_buf f = forge(2, calls, 2);
    expect_error(f.data, f.len,
                 "record 1 has id 0xffffff0a, a call edge record, which version 2 does not have");
    pes_buf_free(&f);
    const struct pes_record rets[] = {
        {0, BB_ID, 0}, {0x1000, LOAD_SITE, 0}, {SP, PES_ID_RETURN, 0}};
    f = forge(2, rets, 3);
    expect_error(f.data, f.len,
                 "record 2 has id 0xffffff0b, a call edge record, which version 2 does not have");
    pes_buf_free(&f);
    /* the same records in a forged version-3 file read (the forger is right) */
    f = forge(3, calls, 2);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f.data, f.len, "v3.pes", &err);
    assert_non_null(r);
    struct pes_block b;
    int rc, access = 0;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
        access += b.type == PES_BLOCK_ACCESS;
    assert_int_equal(rc, 0);
    assert_int_equal(access, 1);
    pes_trace_reader_close(r);
    pes_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_call_names_no_call_site),
        cmocka_unit_test(test_version2_has_no_call_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
