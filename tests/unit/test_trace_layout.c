/*
 * test_trace_layout.c — the bytes the writer puts on disk are the ones
 * docs/trace-format.md specifies: index frames, block headers, the worked
 * ACCESS example of §3.1 (hand-computed there), a THREAD payload and the
 * EVENTS column layout. The file is parsed here with libzstd only.
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
static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Finds the k-th block of `type`, checks its frames, returns its payload (malloc'd). */
static uint8_t *block_payload(const uint8_t *f, size_t size, uint32_t type, int k, size_t *plen,
                              uint32_t *thread, uint32_t *count)
{
    size_t off = 0;
    while (off + 24 <= size) {
        assert_int_equal(rd32(f + off), 0x184D2A50u);
        assert_int_equal(rd32(f + off + 4), 16);
        uint32_t t = rd32(f + off + 8), fs = rd32(f + off + 20);
        assert_true(off + 24 + fs <= size);
        if (t == type && k-- == 0) {
            const uint8_t *fr = f + off + 24;
            unsigned long long cs = ZSTD_getFrameContentSize(fr, fs);
            assert_true(cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != ZSTD_CONTENTSIZE_ERROR);
            assert_true(fr[4] & 0x04); /* content checksum flag */
            uint8_t *c = malloc(cs);
            assert_int_equal(ZSTD_decompress(c, cs, fr, fs), cs);
            assert_memory_equal(c, "PESB", 4);
            uint16_t bt, bv;
            memcpy(&bt, c + 4, 2);
            memcpy(&bv, c + 6, 2);
            assert_int_equal(bt, type);
            assert_int_equal(bv, 4); /* version 4 (§5) */
            *thread = rd32(c + 8);
            *count = rd32(c + 12);
            assert_int_equal(*thread, rd32(f + off + 12));
            assert_int_equal(*count, rd32(f + off + 16));
            assert_int_equal(rd64(c + 16), cs - 24);
            *plen = cs - 24;
            uint8_t *p = malloc(*plen + 1);
            memcpy(p, c + 24, *plen);
            free(c);
            return p;
        }
        off += 24 + fs;
    }
    fail_msg("block type %u not found", type);
    return NULL;
}

static void test_worked_example(void **state)
{
    (void)state;
    struct pes_record r0[] = {
        {1100, PES_ID_TIME, 0},
        {0, 4, 0},
        {0, 3, 0},
        {0x1000, 0, 0},
        {0x2000, 1, 0},
        {0x3000, 2, 0},
        {0, 3, 0},
        {0x1008, 0, 0},
        {0x2400, 1, 0},
        {0x3000, 2, 0},
        {7, PES_ID_REGION_BEGIN, 0},
        {0, PES_ID_REGION_END, 0},
    };
    /* version 2: the stored count (12), then §3.1's 68 bytes */
    static const uint8_t want[72] = {
        12,   0,    0,    0,    0x3f, 0,    0,    0,    8,    0,    0,    0,    7,    0,    0,
        0,    0,    0,    0,    0,    0x77, 0x0c, 0xb9, 0x05, 0x00, 0x00, 0x00, 0x04, 0x03, 0x01,
        0x02, 0x03, 0x02, 0x02, 0xff, 0,    0,    0,    0,    0,    0xff, 0xff, 0xff, 0,    0,
        0,    0,    0,    0xff, 0xff, 0xff, 0,    0,    0,    0,    0,    0xff, 0xff, 0x98, 0,
        0,    0,    0x10, 0,    0x0e, 0x08, 0x20, 0x40, 0x60, 0,    0x08, 0,
    };
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("layout");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    struct pes_thread th = {3, 0, 0x1122334455667788ull, -1, 2, 99};
    assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 5, r0, 12, &err), 0);
    struct pes_event ev[2] = {
        {PES_EV_REUSE, 1, 8, 1, 2, 3, 0x10, 0x20, 1000, 50, 60, 7, 9, 0x80000001u},
        {PES_EV_LOST, 0, 0, 1, UINT32_MAX, UINT32_MAX, 0, 0, 900, 55, 61, 0, 4, PES_STACK_NONE},
    };
    assert_int_equal(pes_trace_writer_events(w, 1, ev, 2, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    size_t size;
    uint8_t *f = tt_read_file(path, &size);
    assert_non_null(f);

    size_t plen;
    uint32_t thread, count;
    uint8_t *p = block_payload(f, size, PES_BLOCK_ACCESS, 0, &plen, &thread, &count);
    assert_int_equal(thread, 5);
    assert_int_equal(count, 12);
    assert_int_equal(plen, sizeof want);
    assert_memory_equal(p, want, sizeof want);
    free(p);

    p = block_payload(f, size, PES_BLOCK_THREAD, 0, &plen, &thread, &count);
    assert_int_equal(thread, 3);
    assert_int_equal(count, 1);
    assert_int_equal(plen, 32);
    assert_int_equal(rd32(p), 3);
    assert_int_equal(rd32(p + 4), 0);
    assert_int_equal(rd64(p + 8), 0x1122334455667788ull);
    assert_int_equal(rd32(p + 16), 0xFFFFFFFFu); /* cpu -1 */
    assert_int_equal(rd32(p + 20), 2);
    assert_int_equal(rd64(p + 24), 99);
    free(p);

    p = block_payload(f, size, PES_BLOCK_EVENTS, 0, &plen, &thread, &count);
    assert_int_equal(count, 2);
    assert_int_equal(plen, 152); /* 76 bytes per event (version 3) */
    /* columns: kind[2] flags[2] size[2x2] thread[2x4] other[2x4] site[2x4] addr ip time ... */
    assert_int_equal(p[0], PES_EV_REUSE);
    assert_int_equal(p[1], PES_EV_LOST);
    assert_int_equal(p[2], 1);
    assert_int_equal(p[3], 0);
    size_t time_col = 2 + 2 + 4 + 8 + 8 + 8 + 16 + 16; /* = 64 */
    assert_int_equal(rd64(p + time_col), 1000);
    assert_int_equal(rd64(p + time_col + 8), (uint64_t)900 - 1000); /* difference, mod 2^64 */
    assert_int_equal(rd64(p + time_col + 16), 50);                  /* loads */
    assert_int_equal(rd64(p + time_col + 24), 5);
    assert_int_equal(rd64(p + 136), 4);           /* aux of event 1 */
    assert_int_equal(rd32(p + 144), 0x80000001u); /* version 3: the stack column, last */
    assert_int_equal(rd32(p + 148), PES_STACK_NONE);
    free(p);

    free(f);
    unlink(path);
    free(path);
}

/* A trace of the site tables (ids 0..3) and n records of thread 0 at a new
 * temporary *path: its bytes (*f, *size) and the payload of its first ACCESS
 * block (*count records; the caller frees all three). */
static uint8_t *write_one_thread(const char *name, const struct pes_record *r, size_t n,
                                 char **path, uint8_t **f, size_t *size, uint32_t *count)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    *path = tt_temp_path(name);
    struct pes_trace_writer *w = pes_trace_writer_open(*path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(tt_write_tables(w, 4, 1, &err), 0); /* ids 0..3: sites */
    assert_int_equal(pes_trace_writer_records(w, 0, r, n, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    *f = tt_read_file(*path, size);
    assert_non_null(*f);
    size_t plen;
    uint32_t thread;
    return block_payload(*f, *size, PES_BLOCK_ACCESS, 0, &plen, &thread, count);
}

/* §3.5: a loop group continued by the next (a time mark cut it) and a record
 * of its site after it predict with zero address residuals; residuals
 * hand-computed there: record 1 (site 0's first address), 2 (the first R), 4
 * (template 1: site 0 had no stride yet), 6 (the first step 8) and 7 (R 4 → 2)
 * only. Without group prediction 9 and 12 would not be zero. */
static void test_group_prediction(void **state)
{
    (void)state;
    const uint32_t L = PES_ID_LOOP, S = PES_ID_LOOP_STEP;
    struct pes_record r0[] = {
        {0, 3, 0}, {0x1000, 0, 0},                 /* site 3 (fixed), site 0 */
        {4, L, 2}, {0, 3, 0},      {0x1008, 0, 0}, /* R 4, m 2: site 3, site 0 += 8 */
        {0, S, 0}, {8, S, 0},                      /* ... 0x1010 */
        {2, L, 2}, {0, 3, 0},      {0x1018, 0, 0}, /* R 2: continues */
        {0, S, 0}, {8, S, 0},      {0x1020, 0, 0}, /* then a record of site 0 */
    };
    static const struct pes_record want[] = {
        {0, 3, 0},      {0x1000, 0, 0}, {0, 3, 0},      {0x1008, 0, 0}, {0, 3, 0},
        {0x1010, 0, 0}, {0, 3, 0},      {0x1018, 0, 0}, {0x1020, 0, 0},
    };
    struct pes_error err;
    char *path;
    uint8_t *f;
    size_t size;
    uint32_t count;
    uint8_t *p = write_one_thread("layout-groups", r0, 13, &path, &f, &size, &count);
    assert_int_equal(count, 9);
    assert_int_equal(rd32(p), 13);          /* stored */
    assert_int_equal(rd32(p + 4) >> 16, 6); /* plane-mask bits 17 and 18 */
    assert_int_equal(rd32(p + 12), 5);      /* k_addr */
    /* nb = 2: the addr bitmap is at 4 (stored) + 16 (header) + 2 (id bitmap) */
    assert_int_equal(p[22], 0xd6); /* records 1, 2, 4, 6, 7 */
    assert_int_equal(p[23], 0x00);
    free(p);

    struct pes_trace_reader *r = pes_trace_reader_open_memory(f, size, "groups", &err);
    assert_non_null(r);
    struct pes_block b;
    int rc, seen = 0;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type != PES_BLOCK_ACCESS)
            continue;
        assert_int_equal(b.n, 9);
        assert_memory_equal(b.records, want, sizeof want);
        seen = 1;
    }
    if (rc < 0)
        fail_msg("%s", err.message);
    assert_true(seen);
    pes_trace_reader_close(r);
    free(f);
    remove(path);
    free(path);
}

/* §3.6: in a block with a LOOP record, a site's stride changes only when the
 * same difference comes twice. Hand-computed: a group (R 1, m 1, site 1 at
 * 0x10) for the bits, site 0 in three rows of three (0x1000.., 0x2000..,
 * 0x3000.., step 8), site 2 at 0x5000, 0x5100, 0x5040 (irregular).
 *   site 0: 0x1000 fresh; 0x1008 predicted 0x1000 (no stride yet); 0x1010
 *   predicted 0x1008 (8 seen once), 8 confirmed; 0x2000 predicted 0x1018;
 *   0x2008 and 0x2010 predicted (the jump did not replace the stride);
 *   0x3000 likewise: residuals at records 3, 4, 5, 6, 9 (a one-delta
 *   stride: 3, 4, 6, 7, 9, 10).
 *   site 2: 0x5000 fresh, 0x5100 predicted 0x5000, 0x5040 predicted 0x5100
 *   (0x100 seen once): residual -0xc0, zigzag 0x17f (one-delta: 0x37f). */
static void test_two_delta(void **state)
{
    (void)state;
    const struct pes_record r0[] = {
        {1, PES_ID_LOOP, 1}, {0x10, 1, 0},   {0, PES_ID_LOOP_STEP, 0}, {0x1000, 0, 0},
        {0x1008, 0, 0},      {0x1010, 0, 0}, {0x2000, 0, 0},           {0x2008, 0, 0},
        {0x2010, 0, 0},      {0x3000, 0, 0}, {0x3008, 0, 0},           {0x3010, 0, 0},
        {0x5000, 2, 0},      {0x5100, 2, 0}, {0x5040, 2, 0},
    };
    struct pes_error err;
    char *path;
    uint8_t *f;
    size_t size;
    uint32_t count;
    uint8_t *p = write_one_thread("layout-two-delta", r0, 15, &path, &f, &size, &count);
    assert_int_equal(count, 13);
    uint32_t mask = rd32(p + 4), kid = rd32(p + 8), ka = rd32(p + 12);
    assert_int_equal(mask >> 16, 6);         /* bits 17 and 18 */
    assert_int_equal((mask >> 4) & 0xff, 3); /* addr planes 0 and 1 */
    assert_int_equal(ka, 10);
    /* records 0 (R), 1 (template), 3, 4, 5, 6, 9 (site 0), 12, 13, 14 (site 2) */
    assert_int_equal(p[22], 0x7b);
    assert_int_equal(p[23], 0x72);
    size_t pid = (size_t)__builtin_popcount(mask & 0xf);
    const uint8_t *addr = p + 4 + 16 + 3 * 2 + kid * pid;
    assert_int_equal(addr[ka - 1], 0x7f); /* site 2's last residual, 0x17f */
    assert_int_equal(addr[2 * ka - 1], 0x01);
    free(p);

    struct pes_trace_reader *r = pes_trace_reader_open_memory(f, size, "two-delta", &err);
    assert_non_null(r);
    struct pes_block b;
    int rc, seen = 0;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type != PES_BLOCK_ACCESS)
            continue;
        assert_int_equal(b.n, 13);
        assert_memory_equal(b.records, r0 + 1, sizeof r0[0]); /* the group's one record */
        assert_memory_equal(b.records + 1, r0 + 3, 12 * sizeof r0[0]);
        seen = 1;
    }
    if (rc < 0)
        fail_msg("%s", err.message);
    assert_true(seen);
    pes_trace_reader_close(r);
    free(f);
    remove(path);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_group_prediction),
        cmocka_unit_test(test_two_delta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
