/*
 * test_trace_loop.c — loop descriptor groups (docs/trace-format.md §3.2):
 * expansion against records written out by hand (phase, negative steps,
 * addresses wrapping modulo 2^64, m = 1 and m = PES_LOOP_MAX_RECORDS), a
 * randomized comparison with the records the groups were made from, counts
 * (block header, index, footer) that count expanded records, the encoder's
 * checks of the groups it is given, and files with malformed groups or a
 * version-1 block holding one, forged here block by block: each is a format
 * error naming the block's offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <zstd.h>

#include "trace_test_util.h"

#define N_SITES 8u
#define BB_ID   N_SITES /* the module's one basic block */

#define STEP(s) ((struct pes_record){(uint64_t)(s), PES_ID_LOOP_STEP, 0})
#define LOOP(r, m, phase)                                                                          \
    ((struct pes_record){(uint64_t)(r), PES_ID_LOOP, (uint32_t)(m) | (uint32_t)(phase) << 16})

/* ------------------------------------------------------------ writing and reading */

struct file {
    uint8_t *data;
    size_t size;
};

static void write_tables(struct pes_trace_writer *w)
{
    struct pes_error err;
    struct pes_site sites[N_SITES];
    for (uint32_t i = 0; i < N_SITES; i++)
        sites[i] = (struct pes_site){i, BB_ID, PES_KIND_LOAD, 0, 1, 8, 1, "t.c", "f"};
    struct pes_bb bb = {BB_ID, N_SITES, {0}, 0, "f", "for.body"};
    struct pes_module m = {0, N_SITES, 1, "t.c", sites, &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    struct pes_thread t = {0, UINT32_MAX, 100, -1, -1, 0};
    assert_int_equal(pes_trace_writer_thread(w, &t, &err), 0);
}

/* A trace of thread 0 whose records are batches[k] (n[k] records each), with
 * a footer that counts `footer_records` (UINT64_MAX: the expanded sum). */
static struct file write_trace(const struct pes_record *const *batches, const size_t *n,
                               size_t n_batches, uint64_t footer_records)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("loop");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    write_tables(w);
    for (size_t k = 0; k < n_batches; k++)
        assert_int_equal(pes_trace_writer_records(w, 0, batches[k], n[k], &err), 0);
    struct pes_thread_totals tot = {0, footer_records, 0, 0, 0, 0, 9};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 9, &err), 0);
    struct file f;
    f.data = tt_read_file(path, &f.size);
    assert_non_null(f.data);
    unlink(path);
    free(path);
    return f;
}

/* Every ACCESS record of the file, as _next hands them out (raw or expanded). */
static struct pes_record *read_records(const struct file *f, int raw, size_t *n,
                                       uint64_t *header_counts)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f->data, f->size, "loop.pes", &err);
    assert_non_null(r);
    pes_trace_reader_set_raw(r, raw);
    size_t cap = 1024, k = 0;
    struct pes_record *out = malloc(cap * sizeof *out);
    *header_counts = 0;
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type != PES_BLOCK_ACCESS)
            continue;
        *header_counts += b.count;
        if (!raw)
            assert_int_equal(b.n, b.count);
        while (k + b.n > cap)
            out = realloc(out, (cap *= 2) * sizeof *out);
        memcpy(out + k, b.records, b.n * sizeof *out);
        k += b.n;
    }
    if (rc < 0)
        fail_msg("%s", err.message);
    assert_false(pes_trace_reader_truncated(r, NULL));
    pes_trace_reader_close(r);
    *n = k;
    return out;
}

static void assert_records_equal(const struct pes_record *got, size_t n_got,
                                 const struct pes_record *want, size_t n_want)
{
    assert_int_equal(n_got, n_want);
    for (size_t i = 0; i < n_want; i++)
        if (got[i].addr != want[i].addr || got[i].id != want[i].id || got[i].extra != want[i].extra)
            fail_msg("record %zu: got {0x%llx, %u, %u}, want {0x%llx, %u, %u}", i,
                     (unsigned long long)got[i].addr, got[i].id, got[i].extra,
                     (unsigned long long)want[i].addr, want[i].id, want[i].extra);
}

/* Writes `stored` as one batch and checks that it reads back as `want`
 * (expanded) and as `stored` (raw), with block counts that add up to n_want. */
static void check_expansion(const struct pes_record *stored, size_t n_stored,
                            const struct pes_record *want, size_t n_want)
{
    struct file f = write_trace(&stored, &n_stored, 1, n_want);
    size_t n;
    uint64_t counts;
    struct pes_record *got = read_records(&f, 0, &n, &counts);
    assert_records_equal(got, n, want, n_want);
    assert_int_equal(counts, n_want);
    free(got);
    got = read_records(&f, 1, &n, &counts);
    assert_records_equal(got, n, stored, n_stored);
    assert_int_equal(counts, n_want);
    free(got);
    free(f.data);
}

/* ------------------------------------------------------------ hand-computed cases */

/* m = 3, phase 1, R = 7: u = 1..7, j = u % 3, i = u / 3, with a negative step
 * (-0x10), a zero step on a basic block and an extra that every copy keeps. */
static void test_phase_and_negative_step(void **state)
{
    (void)state;
    const struct pes_record stored[] = {
        {0x77, 5, 0}, LOOP(7, 3, 1), {0x1000, 0, 0}, {0x2000, 1, 5}, {0, BB_ID, 0},
        STEP(8),      STEP(-0x10),   STEP(0),        {0x88, 6, 0},
    };
    const struct pes_record want[] = {
        {0x77, 5, 0},   {0x2000, 1, 5}, /* u 1: j 1, i 0 */
        {0, BB_ID, 0},                  /* u 2: j 2, i 0 */
        {0x1008, 0, 0},                 /* u 3: j 0, i 1 */
        {0x1ff0, 1, 5},                 /* u 4 */
        {0, BB_ID, 0},                  /* u 5 */
        {0x1010, 0, 0},                 /* u 6: j 0, i 2 */
        {0x1fe0, 1, 5},                 /* u 7: j 1, i 2 */
        {0x88, 6, 0},
    };
    check_expansion(stored, 9, want, 9);
}

/* Addresses are modulo 2^64, upwards and downwards; m = 1. */
static void test_wrap_m1(void **state)
{
    (void)state;
    const struct pes_record stored[] = {
        LOOP(3, 1, 0), {0xfffffffffffffff8ull, 2, 0}, STEP(8), LOOP(2, 1, 0), {4, 3, 0}, STEP(-8),
    };
    const struct pes_record want[] = {
        {0xfffffffffffffff8ull, 2, 0}, {0, 2, 0}, {8, 2, 0}, {4, 3, 0},
        {0xfffffffffffffffcull, 3, 0},
    };
    check_expansion(stored, 6, want, 5);
}

/* m = 64 (PES_LOOP_MAX_RECORDS), phase 63, R = 130: template j at
 * 0x10000 * j with step j + 1. Record q is u = 63 + q: q 0 is j 63 of
 * iteration 0, q 1 .. 64 are iteration 1 (j 0 .. 63), q 65 .. 128
 * iteration 2, q 129 is j 0 of iteration 3. */
static void test_m_max(void **state)
{
    (void)state;
    enum { M = PES_LOOP_MAX_RECORDS, R = 130 };
    struct pes_record stored[1 + 2 * M];
    stored[0] = LOOP(R, M, M - 1);
    for (uint32_t j = 0; j < M; j++) {
        stored[1 + j] = (struct pes_record){0x10000ull * j, j % N_SITES, j};
        stored[1 + M + j] = STEP(j + 1);
    }
    struct pes_record want[R];
    want[0] = (struct pes_record){0x10000ull * 63, 63 % N_SITES, 63};
    for (uint32_t j = 0; j < M; j++) {
        want[1 + j] = (struct pes_record){0x10000ull * j + 1 * (j + 1), j % N_SITES, j};
        want[65 + j] = (struct pes_record){0x10000ull * j + 2 * (j + 1), j % N_SITES, j};
    }
    want[129] = (struct pes_record){0 + 3 * 1, 0, 0};
    check_expansion(stored, 1 + 2 * M, want, R);
}

/* A group of one record, groups back to back, a group that ends inside its
 * first iteration (R < m - phase). */
static void test_short_groups(void **state)
{
    (void)state;
    const struct pes_record stored[] = {
        LOOP(1, 2, 1), {0x10, 0, 0}, {0x20, 1, 0}, STEP(1), STEP(2), LOOP(2, 4, 1), {0x30, 2, 0},
        {0x40, 3, 0},  {0x50, 4, 0}, {0x60, 5, 0}, STEP(1), STEP(1), STEP(1),       STEP(1),
    };
    const struct pes_record want[] = {
        {0x20, 1, 0}, /* phase 1 of m 2, R 1 */
        {0x40, 3, 0}, /* phase 1 of m 4, R 2 */
        {0x50, 4, 0},
    };
    check_expansion(stored, 14, want, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase_and_negative_step),
        cmocka_unit_test(test_wrap_m1),
        cmocka_unit_test(test_m_max),
        cmocka_unit_test(test_short_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
