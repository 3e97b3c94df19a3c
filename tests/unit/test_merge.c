/* merge.c: per-thread streams → one global order by interpolated time.
 * Expected orders are derived by hand from the time marks written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "merge.h"

static char path[64];

static struct pes_record access_rec(uint32_t id, uint64_t addr) {
    return (struct pes_record){.addr = addr, .id = id, .extra = 0};
}
static struct pes_record time_rec(uint64_t t) {
    return (struct pes_record){.addr = t, .id = PES_ID_TIME, .extra = 0};
}

/* One module with 1 site (id 0) and 1 BB (id 1); threads as given. */
static void write_trace(const uint64_t *starts, uint32_t n_threads, void (*body)(struct pes_trace_writer *)) {
    struct pes_error err;
    struct pes_trace_info info = {.kind = PES_TRACE_FULL, .command = "test", .hostname = "h", .cpu_model = "c",
                                  .config = "", .ticks_per_second = 1000000000};
    snprintf(path, sizeof path, "/tmp/pes-test-merge-%d.zst", (int)getpid());
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, &err);
    assert_non_null(w);
    struct pes_site site = {.id = 0, .bb = 1, .kind = PES_KIND_LOAD, .size = 8, .file = "f.c", .function = "f"};
    struct pes_bb bb = {.id = 1, .n_sites = 1, .function = "f", .label = "entry"};
    struct pes_module m = {.id_base = 0, .n_sites = 1, .n_bbs = 1, .name = "f.c", .sites = &site, .bbs = &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    for (uint32_t t = 0; t < n_threads; t++) {
        struct pes_thread th = {.index = t, .parent = UINT32_MAX, .tid = 100 + t, .cpu = -1, .socket = -1,
                                .start_ticks = starts[t]};
        assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    }
    body(w);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
}

/* Thread 0 starts at 0: a0..a3 then a mark at 400 → times 80,160,240,320,400.
 * Thread 1 starts at 40: b0..b3 then a mark at 440 → times 120,200,280,360,440.
 * Thread 0's segment is split across two blocks. */
static void two_threads(struct pes_trace_writer *w) {
    struct pes_error err;
    struct pes_record t0a[] = {access_rec(0, 0xA0), access_rec(0, 0xA1)};
    struct pes_record t0b[] = {access_rec(0, 0xA2), access_rec(0, 0xA3), time_rec(400)};
    struct pes_record t1[] = {access_rec(0, 0xB0), access_rec(0, 0xB1), access_rec(0, 0xB2), access_rec(0, 0xB3),
                              time_rec(440)};
    assert_int_equal(pes_trace_writer_records(w, 1, t1, 5, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 0, t0a, 2, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 0, t0b, 3, &err), 0);
}

static void test_interleaves_by_interpolated_time(void **state) {
    (void)state;
    const uint64_t starts[2] = {0, 40};
    write_trace(starts, 2, two_threads);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_merge *m = pes_merge_open(r, &err);
    assert_non_null(m);
    assert_int_equal(pes_merge_thread_count(m), 2);
    const uint64_t want_addr[] = {0xA0, 0xB0, 0xA1, 0xB1, 0xA2, 0xB2, 0xA3, 0xB3, 400, 440};
    const uint64_t want_time[] = {80, 120, 160, 200, 240, 280, 320, 360, 400, 440};
    const uint32_t want_thread[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    struct pes_merged_record mr;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(pes_merge_next(m, &mr, &err), 1);
        assert_int_equal(mr.rec.addr, want_addr[i]);
        assert_int_equal(mr.time, want_time[i]);
        assert_int_equal(mr.thread, want_thread[i]);
    }
    assert_int_equal(pes_merge_next(m, &mr, &err), 0);
    pes_merge_close(m);
    pes_trace_reader_close(r);
    unlink(path);
}

/* Random streams: whatever the marks, each thread's order is kept and the
 * merged times never decrease; every record comes out exactly once. */
enum { RT = 4, PER_THREAD = 5000 };
static uint32_t lcg_state = 12345;
static uint32_t lcg(void) { return lcg_state = lcg_state * 1103515245u + 12345u; }

static void random_threads(struct pes_trace_writer *w) {
    struct pes_error err;
    static struct pes_record recs[PER_THREAD];
    for (uint32_t t = 0; t < RT; t++) {
        uint64_t now = 1000 * t;
        size_t n = 0, block_start = 0;
        for (uint32_t k = 0; k < PER_THREAD; k++) {
            if (lcg() % 50 == 0) {
                now += lcg() % 1000;
                recs[n++] = time_rec(now);
            } else {
                recs[n++] = access_rec(0, ((uint64_t)t << 32) | k);   /* encodes thread and sequence */
            }
            if (lcg() % 700 == 0 || k == PER_THREAD - 1) {
                assert_int_equal(pes_trace_writer_records(w, t, recs + block_start, n - block_start, &err), 0);
                block_start = n;
            }
        }
    }
}

static void test_random_streams_keep_order(void **state) {
    (void)state;
    const uint64_t starts[RT] = {0, 1000, 2000, 3000};
    write_trace(starts, RT, random_threads);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_merge *m = pes_merge_open(r, &err);
    assert_non_null(m);
    int64_t last_seq[RT] = {-1, -1, -1, -1};
    uint64_t last_time = 0, accesses = 0;
    struct pes_merged_record mr;
    int rc;
    while ((rc = pes_merge_next(m, &mr, &err)) == 1) {
        assert_true(mr.time >= last_time);
        last_time = mr.time;
        if (mr.rec.id != 0) continue;
        uint32_t t = (uint32_t)(mr.rec.addr >> 32);
        int64_t seq = (int64_t)(mr.rec.addr & 0xFFFFFFFFu);
        assert_int_equal(t, mr.thread);
        assert_true(seq > last_seq[t]);
        last_seq[t] = seq;
        accesses++;
    }
    assert_int_equal(rc, 0);
    /* every non-mark record: PER_THREAD per thread minus the marks (recount) */
    lcg_state = 12345;
    uint64_t want = 0;
    for (uint32_t t = 0; t < RT; t++)
        for (uint32_t k = 0; k < PER_THREAD; k++) {
            if (lcg() % 50 == 0) (void)lcg();
            else want++;
            (void)lcg();
        }
    assert_int_equal(accesses, want);
    pes_merge_close(m);
    pes_trace_reader_close(r);
    unlink(path);
}

/* pes_merge_read in chunks of 3 gives the hand-derived order of the first
 * test; without control records the two marks are left out. */
static void test_read_in_chunks(void **state) {
    (void)state;
    const uint64_t starts[2] = {0, 40};
    write_trace(starts, 2, two_threads);
    const uint64_t want_addr[] = {0xA0, 0xB0, 0xA1, 0xB1, 0xA2, 0xB2, 0xA3, 0xB3, 400, 440};
    const uint32_t want_thread[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    for (int keep = 0; keep <= 1; keep++) {
        struct pes_error err;
        struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
        assert_non_null(r);
        struct pes_merge *m = pes_merge_open(r, &err);
        assert_non_null(m);
        struct pes_record out[3];
        uint32_t th[3];
        size_t got = 0;
        long n;
        while ((n = pes_merge_read(m, out, th, 3, keep, &err)) > 0) {
            for (long i = 0; i < n; i++, got++) {
                assert_true(got < 10);
                assert_int_equal(out[i].addr, want_addr[got]);
                assert_int_equal(th[i], want_thread[got]);
            }
        }
        assert_int_equal(n, 0);
        assert_int_equal(got, keep ? 10 : 8);
        pes_merge_close(m);
        pes_trace_reader_close(r);
    }
    unlink(path);
}

/* On random streams, reads of odd sizes give exactly the pes_merge_next
 * sequence (runs of one thread are emitted without heap work). */
static void test_read_equals_next(void **state) {
    (void)state;
    const uint64_t starts[RT] = {0, 1000, 2000, 3000};
    lcg_state = 999;
    write_trace(starts, RT, random_threads);
    struct pes_error err;
    struct pes_trace_reader *r1 = pes_trace_reader_open(path, &err), *r2 = pes_trace_reader_open(path, &err);
    assert_non_null(r1);
    assert_non_null(r2);
    struct pes_merge *m1 = pes_merge_open(r1, &err), *m2 = pes_merge_open(r2, &err);
    assert_non_null(m1);
    assert_non_null(m2);
    struct pes_record out[7];
    uint32_t th[7];
    struct pes_merged_record mr;
    uint64_t total = 0;
    long n;
    while ((n = pes_merge_read(m2, out, th, 7, 1, &err)) > 0) {
        for (long i = 0; i < n; i++) {
            assert_int_equal(pes_merge_next(m1, &mr, &err), 1);
            assert_int_equal(out[i].addr, mr.rec.addr);
            assert_int_equal(out[i].id, mr.rec.id);
            assert_int_equal(th[i], mr.thread);
            total++;
        }
    }
    assert_int_equal(n, 0);
    assert_int_equal(pes_merge_next(m1, &mr, &err), 0);
    assert_int_equal(total, (uint64_t)RT * PER_THREAD);
    pes_merge_close(m1);
    pes_merge_close(m2);
    pes_trace_reader_close(r1);
    pes_trace_reader_close(r2);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaves_by_interpolated_time),
        cmocka_unit_test(test_random_streams_keep_order),
        cmocka_unit_test(test_read_in_chunks),
        cmocka_unit_test(test_read_equals_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
