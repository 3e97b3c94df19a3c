/*
 * test_trace_alloc.c — the ALLOC_SITES block and the allocation records and
 * events (docs/trace-format.md §2.8, §2.4): payload bytes against a layout
 * built here from the format description, round trips through the
 * sequential and the random-access reader, merging of sites over blocks,
 * and damaged payloads built by hand (each an error naming block and offset).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <zstd.h>

#include "trace_test_util.h"

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static const uint64_t ips_a[3] = {0x401234, 0x401100, 0x7f0000001000ull};
static const uint64_t ips_b[1] = {0x401300};
static const uint64_t ips_c[8] = {1, 2, 3, 4, 5, 6, 7, UINT64_MAX};

/* Writes a full trace: HEADER, tables, ALLOC_SITES {7: a, 9: b}, ACCESS of
 * thread 0 with alloc records, ALLOC_SITES {7: a again, 1000: c}, FOOTER. */
static uint8_t *make_trace(size_t *size, int kind)
{
    char *path = tt_temp_path("alloc");
    struct pes_error err;
    struct pes_trace_info info;
    tt_default_info(&info);
    info.kind = (uint32_t)kind;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(tt_write_tables(w, 2, 1, &err), 0);
    struct pes_alloc_site s1[2] = {{7, PES_ALLOC_MALLOC, 3, ips_a}, {9, PES_ALLOC_NEW, 1, ips_b}};
    assert_int_equal(pes_trace_writer_alloc_sites(w, s1, 2, &err), 0);
    struct pes_thread_totals tot = {0};
    if (kind == PES_TRACE_FULL) {
        struct pes_record r[] = {
            {0x7ffc0000, PES_ID_ALLOC, PES_ALLOC_SITE_STACK},
            {8 << 20, PES_ID_ALLOC_SIZE, 0},
            {0x10000, PES_ID_ALLOC, 7},
            {4096, PES_ID_ALLOC_SIZE, 0},
            {0x10008, 0, 0},
            {0x10000, PES_ID_FREE, 0},
            {0x20000, PES_ID_ALLOC, 9},
            {24, PES_ID_ALLOC_SIZE, 0},
        };
        assert_int_equal(pes_trace_writer_records(w, 0, r, 8, &err), 0);
        tot.records = 8;
    } else {
        struct pes_event ev[3] = {
            {.kind = PES_EV_ALLOC,
             .thread = 0,
             .other_thread = UINT32_MAX,
             .site = PES_ALLOC_SITE_STACK,
             .addr = 0x7ffc0000,
             .aux = 8 << 20,
             .time = 5},
            {.kind = PES_EV_ALLOC,
             .thread = 0,
             .other_thread = UINT32_MAX,
             .site = 9,
             .addr = 0x20000,
             .aux = 24,
             .time = 6},
            {.kind = PES_EV_FREE,
             .thread = 0,
             .other_thread = UINT32_MAX,
             .site = UINT32_MAX,
             .addr = 0x20000,
             .time = 7},
        };
        assert_int_equal(pes_trace_writer_events(w, 0, ev, 3, &err), 0);
        tot.records = 3;
    }
    struct pes_alloc_site s2[2] = {{7, PES_ALLOC_MALLOC, 3, ips_a},
                                   {1000, PES_ALLOC_ALIGNED, 8, ips_c}};
    assert_int_equal(pes_trace_writer_alloc_sites(w, s2, 2, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 99, &err), 0);
    uint8_t *d = tt_read_file(path, size);
    assert_non_null(d);
    unlink(path);
    free(path);
    return d;
}

/* The payload of the first ALLOC_SITES block, decompressed with libzstd
 * alone, is count x {u32 id, u32 kind, u32 depth, u64 ip[depth]}. */
static void test_layout(void **state)
{
    (void)state;
    size_t size;
    uint8_t *f = make_trace(&size, PES_TRACE_FULL);
    size_t off = 0;
    int seen = 0;
    while (off + 24 <= size) {
        uint32_t type = rd32(f + off + 8), fs = rd32(f + off + 20);
        if (type == 8 && !seen++) {
            assert_int_equal(rd32(f + off + 12), 0); /* thread */
            assert_int_equal(rd32(f + off + 16), 2); /* count */
            unsigned long long cs = ZSTD_getFrameContentSize(f + off + 24, fs);
            uint8_t *c = malloc(cs);
            assert_int_equal(ZSTD_decompress(c, cs, f + off + 24, fs), cs);
            uint8_t want[24 + 12 + 24 + 12 + 8];
            uint8_t *q = want;
            uint16_t t16 = 8, v16 = PES_TRACE_VERSION;
            uint32_t u[3];
            uint64_t pl = sizeof want - 24;
            memcpy(q, "PESB", 4), memcpy(q + 4, &t16, 2), memcpy(q + 6, &v16, 2);
            u[0] = 0, u[1] = 2;
            memcpy(q + 8, u, 8), memcpy(q + 16, &pl, 8);
            q += 24;
            u[0] = 7, u[1] = 1, u[2] = 3;
            memcpy(q, u, 12), memcpy(q + 12, ips_a, 24);
            q += 36;
            u[0] = 9, u[1] = 5, u[2] = 1;
            memcpy(q, u, 12), memcpy(q + 12, ips_b, 8);
            assert_int_equal(cs, sizeof want);
            assert_memory_equal(c, want, sizeof want);
            free(c);
        }
        off += 24 + fs;
    }
    assert_int_equal(seen, 2);
    free(f);
}

static void check_sites(const struct pes_trace_reader *r)
{
    const struct pes_alloc_site *a = pes_trace_reader_alloc_site(r, 7);
    assert_non_null(a);
    assert_int_equal(a->id, 7);
    assert_int_equal(a->kind, PES_ALLOC_MALLOC);
    assert_int_equal(a->depth, 3);
    assert_memory_equal(a->ips, ips_a, sizeof ips_a);
    a = pes_trace_reader_alloc_site(r, 9);
    assert_non_null(a);
    assert_int_equal(a->kind, PES_ALLOC_NEW);
    assert_int_equal(a->depth, 1);
    assert_true(a->ips[0] == 0x401300);
    a = pes_trace_reader_alloc_site(r, 1000);
    assert_non_null(a);
    assert_int_equal(a->kind, PES_ALLOC_ALIGNED);
    assert_int_equal(a->depth, 8);
    assert_memory_equal(a->ips, ips_c, sizeof ips_c);
    assert_null(pes_trace_reader_alloc_site(r, 8));
    assert_null(pes_trace_reader_alloc_site(r, 0));
    assert_null(pes_trace_reader_alloc_site(r, PES_ALLOC_SITE_STACK));
}

static void test_roundtrip(void **state)
{
    (void)state;
    for (int kind = PES_TRACE_FULL; kind <= PES_TRACE_SAMPLED; kind++) {
        size_t size;
        uint8_t *f = make_trace(&size, kind);
        struct pes_error err;
        struct pes_trace_reader *r = pes_trace_reader_open_memory(f, size, "alloc.pes", &err);
        assert_non_null(r);
        struct pes_block b;
        int blocks = 0, site_blocks = 0, rc;
        assert_null(pes_trace_reader_alloc_site(r, 7)); /* nothing read yet */
        while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
            blocks++;
            if (b.type == PES_BLOCK_ALLOC_SITES) {
                assert_int_equal(b.n, 2);
                assert_non_null(b.alloc_sites);
                assert_int_equal(b.alloc_sites[0].id, 7);
                assert_int_equal(b.alloc_sites[1].id, site_blocks ? 1000 : 9);
                if (!site_blocks++) /* the second block's site is not known yet */
                    assert_null(pes_trace_reader_alloc_site(r, 1000));
            }
            if (b.type == PES_BLOCK_ACCESS) {
                assert_int_equal(b.n, 8);
                assert_int_equal(b.records[0].id, PES_ID_ALLOC);
                assert_int_equal(b.records[0].extra, PES_ALLOC_SITE_STACK);
                assert_int_equal(b.records[3].addr, 4096);
                assert_int_equal(b.records[5].id, PES_ID_FREE);
            }
            if (b.type == PES_BLOCK_EVENTS) {
                assert_int_equal(b.n, 3);
                assert_int_equal(b.events[1].kind, PES_EV_ALLOC);
                assert_int_equal(b.events[1].site, 9);
                assert_int_equal(b.events[1].aux, 24);
                assert_int_equal(b.events[2].kind, PES_EV_FREE);
            }
        }
        assert_int_equal(rc, 0);
        assert_int_equal(site_blocks, 2);
        assert_int_equal(blocks, 6); /* MODULE THREAD SITES ACCESS|EVENTS SITES FOOTER */
        assert_false(pes_trace_reader_truncated(r, NULL));
        assert_int_equal(pes_trace_reader_skipped(r, NULL), 0);
        check_sites(r);
        pes_trace_reader_close(r);

        /* random access: the tables of the whole file first */
        r = pes_trace_reader_open_memory(f, size, "alloc.pes", &err);
        assert_non_null(r);
        assert_int_equal(pes_trace_reader_load_tables(r, &err), 0);
        check_sites(r);
        struct pes_block_ref *refs;
        size_t n;
        assert_int_equal(pes_trace_reader_index(r, &refs, &n, &err), 0);
        assert_int_equal(n, 7); /* the HEADER too */
        assert_int_equal(refs[3].type, PES_BLOCK_ALLOC_SITES);
        assert_int_equal(pes_trace_reader_block_at(r, &refs[4], &b, &err), 1);
        assert_int_equal(b.n, kind == PES_TRACE_FULL ? 8 : 3);
        free(refs);
        pes_trace_reader_close(r);
        free(f);
    }
}

/* A file: the HEADER block the writer makes, then hand-built blocks. */
static size_t header_only(uint8_t *out, size_t cap, int kind)
{
    char *path = tt_temp_path("allochdr");
    struct pes_error err;
    struct pes_trace_info info;
    tt_default_info(&info);
    info.kind = (uint32_t)kind;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    size_t size;
    uint8_t *d = tt_read_file(path, &size);
    assert_true(d && size <= cap);
    memcpy(out, d, size);
    free(d);
    unlink(path);
    free(path);
    return size;
}

/* One block built from docs/trace-format.md: index frame + zstd frame of
 * "PESB" type version thread count payload_size + payload. */
static size_t hand_block(uint8_t *out, size_t cap, uint16_t type, uint32_t thread, uint32_t count,
                         const uint8_t *payload, size_t plen)
{
    uint8_t content[1024];
    uint16_t version = PES_TRACE_VERSION; /* the HEADER's: the writer's */
    uint64_t pl = plen;
    memcpy(content, "PESB", 4);
    memcpy(content + 4, &type, 2);
    memcpy(content + 6, &version, 2);
    memcpy(content + 8, &thread, 4);
    memcpy(content + 12, &count, 4);
    memcpy(content + 16, &pl, 8);
    memcpy(content + 24, payload, plen);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t fs = ZSTD_compress2(cc, out + 24, cap - 24, content, 24 + plen);
    ZSTD_freeCCtx(cc);
    assert_false(ZSTD_isError(fs));
    uint32_t idx[6] = {0x184D2A50u, 16, type, thread, count, (uint32_t)fs};
    memcpy(out, idx, 24);
    return 24 + fs;
}

/* Appends one site to a payload being built. */
static size_t put_site(uint8_t *p, uint32_t id, uint32_t kind, uint32_t depth, uint32_t n_ips)
{
    uint32_t u[3] = {id, kind, depth};
    memcpy(p, u, 12);
    for (uint32_t k = 0; k < n_ips; k++) {
        uint64_t ip = 0x400000 + 16 * k + id;
        memcpy(p + 12 + 8 * k, &ip, 8);
    }
    return 12 + 8 * (size_t)n_ips;
}

/* Reads the file to its end: the error message (or "" when it is read). */
static void read_all(const uint8_t *f, size_t n, char *msg, size_t cap)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f, n, "hand.pes", &err);
    assert_non_null(r);
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
        ;
    snprintf(msg, cap, "%s", rc < 0 ? err.message : "");
    if (rc < 0)
        assert_int_equal(err.code, PES_ERR_FORMAT);
    /* the index scan + load_tables reach the same verdict */
    struct pes_trace_reader *r2 = pes_trace_reader_open_memory(f, n, "hand.pes", &err);
    assert_non_null(r2);
    assert_int_equal(pes_trace_reader_load_tables(r2, &err), rc < 0 ? -1 : 0);
    pes_trace_reader_close(r2);
    pes_trace_reader_close(r);
}

static void expect_error(const uint8_t *payload, size_t plen, uint32_t thread, uint32_t count,
                         const char *what)
{
    uint8_t f[4096];
    size_t n = header_only(f, sizeof f, PES_TRACE_FULL);
    size_t at = n;
    n += hand_block(f + n, sizeof f - n, PES_BLOCK_ALLOC_SITES, thread, count, payload, plen);
    char msg[300], off[64];
    read_all(f, n, msg, sizeof msg);
    snprintf(off, sizeof off, "offset %zu", at);
    if (!strstr(msg, what) || !strstr(msg, off) || !strstr(msg, "ALLOC_SITES"))
        fail_msg("expected '%s' at %s, got '%s'", what, off, msg);
}

static void test_damaged(void **state)
{
    (void)state;
    uint8_t p[512];
    size_t n;
    n = put_site(p, 1, PES_ALLOC_MALLOC, 0, 1); /* an ip, so that the count check passes */
    expect_error(p, n, 0, 1, "depth outside 1..8");
    n = put_site(p, 1, PES_ALLOC_MALLOC, 9, 9);
    expect_error(p, n, 0, 1, "depth outside 1..8");
    n = put_site(p, 1, 0, 1, 1);
    expect_error(p, n, 0, 1, "unknown allocation kind");
    n = put_site(p, 1, 7, 1, 1); /* 6 is a call stack (version 3) */
    expect_error(p, n, 0, 1, "unknown allocation kind");
    n = put_site(p, 0, PES_ALLOC_CALLSTACK, 1, 1);
    expect_error(p, n, 0, 1, "call stack with the reserved id 0");
    n = put_site(p, PES_ALLOC_SITE_STACK, 1, 1, 1);
    expect_error(p, n, 0, 1, "reserved id");
    /* depth 3 but only 2 ips: ends inside the site */
    n = put_site(p, 1, PES_ALLOC_MALLOC, 3, 2);
    n += put_site(p + n, 2, PES_ALLOC_MALLOC, 1, 1);
    expect_error(p, n - 8, 0, 2, "ends inside a site");
    /* two sites, count 1: the second is trailing bytes, named with their offset */
    n = put_site(p, 1, PES_ALLOC_MALLOC, 2, 2);
    n += put_site(p + n, 2, PES_ALLOC_CALLOC, 1, 1);
    expect_error(p, n, 0, 1, "20 trailing bytes after the last site, at payload offset 28");
    /* count larger than the payload can hold */
    expect_error(p, n, 0, 3, "count exceeds the payload size");
    /* thread field not 0 */
    expect_error(p, n, 5, 2, "thread index other than 0");

    /* the same id in two blocks: identical content is fine, different is damage */
    uint8_t f[4096];
    size_t fn = header_only(f, sizeof f, PES_TRACE_FULL);
    n = put_site(p, 4, PES_ALLOC_MALLOC, 2, 2);
    fn += hand_block(f + fn, sizeof f - fn, PES_BLOCK_ALLOC_SITES, 0, 1, p, n);
    size_t first = fn;
    fn += hand_block(f + fn, sizeof f - fn, PES_BLOCK_ALLOC_SITES, 0, 1, p, n);
    char msg[300];
    read_all(f, fn, msg, sizeof msg);
    assert_string_equal(msg, "");
    n = put_site(p, 4, PES_ALLOC_MALLOC, 1, 1); /* same id, shorter stack */
    fn += hand_block(f + fn, sizeof f - fn, PES_BLOCK_ALLOC_SITES, 0, 1, p, n);
    read_all(f, fn, msg, sizeof msg);
    if (!strstr(msg, "id 4") || !strstr(msg, "differs"))
        fail_msg("conflicting site: got '%s'", msg);
    (void)first;
}

/* A sampled trace whose alloc event names a site no earlier block defines. */
static void test_event_unknown_site(void **state)
{
    (void)state;
    char *path = tt_temp_path("allocev");
    struct pes_error err;
    struct pes_trace_info info;
    tt_default_info(&info);
    info.kind = PES_TRACE_SAMPLED;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(tt_write_tables(w, 1, 1, &err), 0);
    struct pes_event ev = {
        .kind = PES_EV_ALLOC, .other_thread = UINT32_MAX, .site = 3, .addr = 0x1000, .aux = 16};
    assert_int_equal(pes_trace_writer_events(w, 0, &ev, 1, &err), 0);
    struct pes_alloc_site s = {3, PES_ALLOC_MALLOC, 1, ips_b};
    assert_int_equal(pes_trace_writer_alloc_sites(w, &s, 1, &err), 0); /* too late */
    struct pes_thread_totals tot = {.records = 1};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 9, &err), 0);
    size_t size;
    uint8_t *f = tt_read_file(path, &size);
    /* sequential: the EVENTS block fails; random access (tables of the whole
     * file loaded first) too, since the site's first block comes after it */
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f, size, "ev.pes", &err);
    assert_non_null(r);
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
        ;
    assert_int_equal(rc, -1);
    if (!strstr(err.message, "allocation site 3"))
        fail_msg("got '%s'", err.message);
    pes_trace_reader_close(r);
    r = pes_trace_reader_open_memory(f, size, "ev.pes", &err);
    struct pes_block_ref *refs;
    size_t n;
    assert_int_equal(pes_trace_reader_index(r, &refs, &n, &err), 0);
    assert_int_equal(refs[3].type, PES_BLOCK_EVENTS);
    assert_int_equal(pes_trace_reader_block_at(r, &refs[3], &b, &err), -1);
    assert_non_null(strstr(err.message, "allocation site 3"));
    free(refs);
    pes_trace_reader_close(r);
    free(f);
    unlink(path);
    free(path);
}

static void test_encoder_arguments(void **state)
{
    (void)state;
    struct pes_error err;
    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    assert_non_null(e);
    size_t out;
    struct pes_alloc_site bad[] = {
        {1, PES_ALLOC_MALLOC, 0, ips_c},
        {1, PES_ALLOC_MALLOC, 9, ips_c},
        {1, 0, 1, ips_c},
        {1, 7, 1, ips_c},
        {0, PES_ALLOC_CALLSTACK, 1, ips_c},
        {PES_ALLOC_SITE_STACK, 1, 1, ips_c},
        {1, PES_ALLOC_MALLOC, 1, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(pes_trace_encoder_alloc_sites(e, &bad[i], 1, &err), -1);
        assert_int_equal(err.code, PES_ERR_ARG);
        assert_null(pes_trace_encoder_output(e, &out));
        assert_int_equal(out, 0);
    }
    assert_int_equal(pes_trace_encoder_alloc_sites(e, NULL, 1, &err), -1);
    struct pes_alloc_site good = {0, PES_ALLOC_REALLOC, 8, ips_c};
    assert_int_equal(pes_trace_encoder_alloc_sites(e, &good, 1, &err), 0);
    assert_non_null(pes_trace_encoder_output(e, &out));
    assert_true(out > 48);
    pes_trace_encoder_free(e);
    assert_string_equal(pes_alloc_kind_name(PES_ALLOC_NEW), "new");
    assert_string_equal(pes_alloc_kind_name(PES_ALLOC_ALIGNED), "aligned");
    assert_string_equal(pes_alloc_kind_name(77), "unknown");
    assert_string_equal(pes_block_type_name(PES_BLOCK_ALLOC_SITES), "ALLOC_SITES");
    assert_string_equal(pes_event_kind_name(PES_EV_FREE), "free");
}

/* A sampled trace with call stacks (version 3): written, read back exactly
 * (sequentially and by block); an event whose stack names no earlier call
 * stack, or names an allocation site, is damage naming the event. */
static uint8_t *stack_trace(const struct pes_event *ev, size_t n, int stacks_first, size_t *size)
{
    char *path = tt_temp_path("allocstk");
    struct pes_error err;
    struct pes_trace_info info;
    tt_default_info(&info);
    info.kind = PES_TRACE_SAMPLED;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(tt_write_tables(w, 4, 1, &err), 0);
    static const uint64_t ips[3] = {0x401a00, 0x402b10, 0x403c20};
    struct pes_alloc_site s[2] = {{0x80000001u, PES_ALLOC_CALLSTACK, 3, ips},
                                  {7, PES_ALLOC_MALLOC, 1, ips}};
    if (stacks_first)
        assert_int_equal(pes_trace_writer_alloc_sites(w, s, 2, &err), 0);
    assert_int_equal(pes_trace_writer_events(w, 0, ev, n, &err), 0);
    if (!stacks_first)
        assert_int_equal(pes_trace_writer_alloc_sites(w, s, 2, &err), 0);
    struct pes_thread_totals tot = {.records = n};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 9, &err), 0);
    uint8_t *f = tt_read_file(path, size);
    unlink(path);
    free(path);
    return f;
}

/* The message of the first failing block of f read sequentially ("" if none). */
static void first_error(const uint8_t *f, size_t size, char *msg, size_t cap)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f, size, "stk.pes", &err);
    assert_non_null(r);
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
        ;
    snprintf(msg, cap, "%s", rc < 0 ? err.message : "");
    pes_trace_reader_close(r);
}

static void test_call_stacks(void **state)
{
    (void)state;
    struct pes_event ev[3] = {
        {.kind = PES_EV_SAMPLE,
         .other_thread = UINT32_MAX,
         .site = 1,
         .addr = 0x1000,
         .ip = 0x401a00,
         .time = 1,
         .stack = 0x80000001u},
        {.kind = PES_EV_SAMPLE,
         .other_thread = UINT32_MAX,
         .site = 2,
         .addr = 0x2000,
         .ip = 0x401a08,
         .time = 2,
         .stack = PES_STACK_NONE},
        {.kind = PES_EV_REUSE,
         .other_thread = UINT32_MAX,
         .site = 1,
         .addr = 0x1000,
         .ip = 0x401a00,
         .time = 3,
         .stack = 0}, /* 0: none, as zero-initialized */
    };
    size_t size;
    uint8_t *f = stack_trace(ev, 3, 1, &size);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f, size, "stk.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_info(r)->version, PES_TRACE_VERSION); /* the writer's */
    struct pes_block b;
    int events = 0;
    while (pes_trace_reader_next(r, &b, &err) == 1) {
        if (b.type != PES_BLOCK_EVENTS)
            continue;
        assert_int_equal(b.n, 3);
        for (size_t i = 0; i < 3; i++)
            assert_int_equal(b.events[i].stack, ev[i].stack);
        events++;
    }
    assert_int_equal(events, 1);
    const struct pes_alloc_site *st = pes_trace_reader_alloc_site(r, 0x80000001u);
    assert_non_null(st);
    assert_int_equal(st->kind, PES_ALLOC_CALLSTACK);
    assert_int_equal(st->depth, 3);
    assert_int_equal(st->ips[0], 0x401a00);
    assert_int_equal(st->ips[2], 0x403c20);
    assert_true(pes_stack_known(ev[0].stack));
    assert_false(pes_stack_known(ev[1].stack) || pes_stack_known(ev[2].stack));
    assert_string_equal(pes_alloc_kind_name(PES_ALLOC_CALLSTACK), "callstack");
    pes_trace_reader_close(r);
    free(f);

    char msg[300];
    /* the call stack's block after the event that names it */
    f = stack_trace(ev, 1, 0, &size);
    first_error(f, size, msg, sizeof msg);
    if (!strstr(msg, "event 0 names call stack 2147483649") || !strstr(msg, "EVENTS"))
        fail_msg("got '%s'", msg);
    free(f);
    /* a stack that is an allocation site; an unknown one */
    ev[0].stack = 7;
    f = stack_trace(ev, 1, 1, &size);
    first_error(f, size, msg, sizeof msg);
    if (!strstr(msg, "event 0 names call stack 7"))
        fail_msg("got '%s'", msg);
    free(f);
    ev[1].stack = 0x80000002u;
    f = stack_trace(ev + 1, 1, 1, &size);
    first_error(f, size, msg, sizeof msg);
    if (!strstr(msg, "call stack 2147483650"))
        fail_msg("got '%s'", msg);
    free(f);
}

#ifdef PES_TEST_DATA
/* Traces of older versions read as before: their events have no stack. */
static void test_old_traces_have_no_stacks(void **state)
{
    (void)state;
    static const char *const files[] = {"gemm40.reuse.zst", "fs.comm.zst"};
    for (size_t k = 0; k < 2; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", PES_TEST_DATA, files[k]);
        struct pes_error err;
        struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
        if (!r)
            fail_msg("%s", err.message);
        assert_true(pes_trace_reader_info(r)->version < 3);
        struct pes_block b;
        uint64_t events = 0;
        int rc;
        while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
            for (size_t i = 0; b.type == PES_BLOCK_EVENTS && i < b.n; i++, events++)
                assert_int_equal(b.events[i].stack, PES_STACK_NONE);
        assert_int_equal(rc, 0);
        assert_true(events > 100);
        pes_trace_reader_close(r);
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_event_unknown_site),
        cmocka_unit_test(test_encoder_arguments),
        cmocka_unit_test(test_call_stacks),
#ifdef PES_TEST_DATA
        cmocka_unit_test(test_old_traces_have_no_stacks),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
