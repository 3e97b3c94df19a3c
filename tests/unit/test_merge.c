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

static struct pes_record access_rec(uint32_t id, uint64_t addr)
{
    return (struct pes_record){.addr = addr, .id = id, .extra = 0};
}
static struct pes_record time_rec(uint64_t t)
{
    return (struct pes_record){.addr = t, .id = PES_ID_TIME, .extra = 0};
}

/* One module with 1 site (id 0) and 1 BB (id 1); threads as given. */
static void write_trace(const uint64_t *starts, uint32_t n_threads,
                        void (*body)(struct pes_trace_writer *))
{
    struct pes_error err;
    struct pes_trace_info info = {.kind = PES_TRACE_FULL,
                                  .command = "test",
                                  .hostname = "h",
                                  .cpu_model = "c",
                                  .config = "",
                                  .ticks_per_second = 1000000000};
    snprintf(path, sizeof path, "/tmp/pes-test-merge-%d.zst", (int)getpid());
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, &err);
    assert_non_null(w);
    struct pes_site site = {
        .id = 0, .bb = 1, .kind = PES_KIND_LOAD, .size = 8, .file = "f.c", .function = "f"};
    struct pes_bb bb = {.id = 1, .n_sites = 1, .function = "f", .label = "entry"};
    struct pes_module m = {
        .id_base = 0, .n_sites = 1, .n_bbs = 1, .name = "f.c", .sites = &site, .bbs = &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    for (uint32_t t = 0; t < n_threads; t++) {
        struct pes_thread th = {.index = t,
                                .parent = UINT32_MAX,
                                .tid = 100 + t,
                                .cpu = -1,
                                .socket = -1,
                                .start_ticks = starts[t]};
        assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    }
    body(w);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
}

/* Thread 0 starts at 0: a0..a3 then a mark at 400 → times 80,160,240,320,400.
 * Thread 1 starts at 40: b0..b3 then a mark at 440 → times 120,200,280,360,440.
 * Thread 0's segment is split across two blocks. */
static void two_threads(struct pes_trace_writer *w)
{
    struct pes_error err;
    struct pes_record t0a[] = {access_rec(0, 0xA0), access_rec(0, 0xA1)};
    struct pes_record t0b[] = {access_rec(0, 0xA2), access_rec(0, 0xA3), time_rec(400)};
    struct pes_record t1[] = {access_rec(0, 0xB0), access_rec(0, 0xB1), access_rec(0, 0xB2),
                              access_rec(0, 0xB3), time_rec(440)};
    assert_int_equal(pes_trace_writer_records(w, 1, t1, 5, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 0, t0a, 2, &err), 0);
    assert_int_equal(pes_trace_writer_records(w, 0, t0b, 3, &err), 0);
}

static void test_interleaves_by_interpolated_time(void **state)
{
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
static uint32_t lcg(void)
{
    return lcg_state = lcg_state * 1103515245u + 12345u;
}

static void random_threads(struct pes_trace_writer *w)
{
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
                recs[n++] =
                    access_rec(0, ((uint64_t)t << 32) | k); /* encodes thread and sequence */
            }
            if (lcg() % 700 == 0 || k == PER_THREAD - 1) {
                assert_int_equal(
                    pes_trace_writer_records(w, t, recs + block_start, n - block_start, &err), 0);
                block_start = n;
            }
        }
    }
}

static void test_random_streams_keep_order(void **state)
{
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
        if (mr.rec.id != 0)
            continue;
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
            if (lcg() % 50 == 0)
                (void)lcg();
            else
                want++;
            (void)lcg();
        }
    assert_int_equal(accesses, want);
    pes_merge_close(m);
    pes_trace_reader_close(r);
    unlink(path);
}

/* pes_merge_read in chunks of 3 gives the hand-derived order of the first
 * test; without control records the two marks are left out. */
static void test_read_in_chunks(void **state)
{
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
static void test_read_equals_next(void **state)
{
    (void)state;
    const uint64_t starts[RT] = {0, 1000, 2000, 3000};
    lcg_state = 999;
    write_trace(starts, RT, random_threads);
    struct pes_error err;
    struct pes_trace_reader *r1 = pes_trace_reader_open(path, &err),
                            *r2 = pes_trace_reader_open(path, &err);
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

/* ---------------------------------------------------------------- long segments */

/* The reference merge of docs/trace-format.md §7, on the records as written:
 * every record's time from its thread's marks (start_ticks before the first;
 * between marks t0 and t1 the k-th of n records gets t0 + (t1 - t0)·k/n and
 * the mark itself t1; after the last mark, the previous segment's rate), then
 * a stable sort by (time, thread index), whatever the order of the blocks in
 * the file. Everything is held in memory: simple, not bounded. */
struct ref_rec {
    uint64_t time;
    uint32_t thread;
    size_t seq; /* position in its thread: keeps the sort stable */
    struct pes_record rec;
};

static int ref_cmp(const void *a, const void *b)
{
    const struct ref_rec *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t ref_thread(struct ref_rec *out, const struct pes_record *r, size_t n, uint64_t start,
                         uint32_t thread)
{
    uint64_t last = start;
    double rate = 0;
    size_t seg = 0; /* first record of the current segment */
    for (size_t i = 0; i <= n; i++) {
        int mark = i < n && (r[i].id == PES_ID_TIME || r[i].id == PES_ID_THREAD_END);
        if (!mark && i < n)
            continue;
        size_t len = i - seg + (mark ? 1 : 0);
        for (size_t k = 1; k <= len; k++) {
            uint64_t t;
            if (mark)
                t = k == len
                        ? r[i].addr
                        : last + (uint64_t)((double)(r[i].addr - last) * (double)k / (double)len);
            else
                t = last + (uint64_t)(rate * (double)k);
            out[seg + k - 1] = (struct ref_rec){t, thread, seg + k - 1, r[seg + k - 1]};
        }
        if (mark) {
            rate = (double)(r[i].addr - last) / (double)len; /* the traces below start after 0 */
            last = r[i].addr;
        }
        seg = i + 1;
    }
    return n;
}

/* Thread 2 (first in the file): segments of 1,000,000 and 65,536 + 1
 * records, one of exactly the cap, then 200,000 records after its last mark;
 * thread 0: a mark every 1000 records; thread 1: starts late, no mark at all.
 * Blocks of 30,000 records, so long segments span many blocks. */
enum { LS_T2 = 1000000 + 65537 + 65536 + 200000 + 3, LS_T0 = 500000, LS_T1 = 100000 };
static struct pes_record ls_t2[LS_T2], ls_t0[LS_T0], ls_t1[LS_T1];
static const uint64_t ls_starts[3] = {5000, 900000, 1000};

static void long_segments(struct pes_trace_writer *w)
{
    struct pes_error err;
    size_t n = 0;
    uint64_t now = 1000;
    const size_t lens[3] = {1000000, 65537, 65536};
    for (int s = 0; s < 3; s++) {
        for (size_t k = 0; k + 1 < lens[s]; k++, n++)
            ls_t2[n] = access_rec(0, 0x200000000 + n);
        now += lens[s] * 3;
        ls_t2[n++] = time_rec(now);
    }
    for (; n < LS_T2; n++)
        ls_t2[n] = access_rec(0, 0x200000000 + n);
    for (size_t i = 0; i < LS_T0; i++)
        ls_t0[i] = i % 1000 == 999 ? time_rec(ls_starts[0] + (i + 1) * 4) : access_rec(0, i);
    for (size_t i = 0; i < LS_T1; i++)
        ls_t1[i] = access_rec(0, 0x100000000 + i);
    /* file order: thread 2's first block, then the others interleaved */
    const struct {
        uint32_t thread;
        const struct pes_record *r;
        size_t n;
    } th[3] = {{2, ls_t2, LS_T2}, {0, ls_t0, LS_T0}, {1, ls_t1, LS_T1}};
    size_t at[3] = {0, 0, 0};
    for (int more = 1; more;) {
        more = 0;
        for (int i = 0; i < 3; i++) {
            size_t k = th[i].n - at[i] < 30000 ? th[i].n - at[i] : 30000;
            if (!k)
                continue;
            assert_int_equal(pes_trace_writer_records(w, th[i].thread, th[i].r + at[i], k, &err),
                             0);
            at[i] += k;
            more = 1;
        }
    }
}

static void test_long_segments_match_reference(void **state)
{
    (void)state;
    write_trace(ls_starts, 3, long_segments);
    size_t total = (size_t)LS_T2 + LS_T0 + LS_T1;
    struct ref_rec *ref = malloc(total * sizeof *ref);
    assert_non_null(ref);
    size_t n = ref_thread(ref, ls_t2, LS_T2, ls_starts[2], 2);
    n += ref_thread(ref + n, ls_t0, LS_T0, ls_starts[0], 0);
    n += ref_thread(ref + n, ls_t1, LS_T1, ls_starts[1], 1);
    qsort(ref, n, sizeof *ref, ref_cmp);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_merge *m = pes_merge_open(r, &err);
    assert_non_null(m);
    struct pes_merged_record mr;
    uint64_t peak = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pes_merge_next(m, &mr, &err), 1);
        if (mr.time != ref[i].time || mr.thread != ref[i].thread ||
            mr.rec.addr != ref[i].rec.addr || mr.rec.id != ref[i].rec.id)
            fail_msg("record %zu: got T%u %#llx at %llu, reference T%u %#llx at %llu", i, mr.thread,
                     (unsigned long long)mr.rec.addr, (unsigned long long)mr.time, ref[i].thread,
                     (unsigned long long)ref[i].rec.addr, (unsigned long long)ref[i].time);
        if (pes_merge_memory(m) > peak)
            peak = pes_merge_memory(m);
    }
    assert_int_equal(pes_merge_next(m, &mr, &err), 0);
    /* at most, per thread: a block (30,000 records in a 32,768-record buffer,
     * 16 bytes each) and one part of a segment (65,536 records, the cap
     * docs/replay.md states, 24 bytes each): 6.3 MB; the long segment alone
     * would take 25 MB */
    uint64_t bound = 3 * (32768 * 16 + 65536 * 24);
    assert_true(peak <= bound);
    assert_int_equal(pes_merge_memory(m), 0); /* every stream ended */
    pes_merge_close(m);
    pes_trace_reader_close(r);
    free(ref);
    unlink(path);
}

/* ---------------------------------------------------------------- thread ends */

/* 300 threads of 3 accesses, each starting after the previous one ended. */
enum { SEQ_THREADS = 300 };
static uint64_t seq_starts[SEQ_THREADS];

static void sequential_threads(struct pes_trace_writer *w)
{
    struct pes_error err;
    for (uint32_t t = 0; t < SEQ_THREADS; t++) {
        uint64_t s = seq_starts[t];
        struct pes_record recs[] = {time_rec(s),
                                    access_rec(0, t * 16 + 1),
                                    access_rec(0, t * 16 + 2),
                                    access_rec(0, t * 16 + 3),
                                    {.addr = s + 50, .id = PES_ID_THREAD_END, .extra = 0}};
        assert_int_equal(pes_trace_writer_records(w, t, recs, 5, &err), 0);
    }
}

/* Each thread is reported ended exactly once, in the read that returns its
 * last record and not before; a thread holds buffers only while it runs, so
 * threads that ran one after the other are never in memory together. */
static void test_threads_end_and_free(void **state)
{
    (void)state;
    for (uint32_t t = 0; t < SEQ_THREADS; t++)
        seq_starts[t] = 1000 + 100 * (uint64_t)t;
    write_trace(seq_starts, SEQ_THREADS, sequential_threads);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_merge *m = pes_merge_open(r, &err);
    assert_non_null(m);
    uint32_t got[SEQ_THREADS] = {0};
    int ended[SEQ_THREADS] = {0};
    struct pes_record out[4];
    uint32_t th[4];
    uint64_t peak = 0;
    long n;
    while ((n = pes_merge_read(m, out, th, 4, 1, &err)) > 0) {
        for (long i = 0; i < n; i++) {
            assert_false(ended[th[i]]);
            got[th[i]]++;
        }
        const uint32_t *e;
        size_t ne = pes_merge_ended(m, &e);
        for (size_t i = 0; i < ne; i++) {
            assert_true(e[i] < SEQ_THREADS);
            assert_false(ended[e[i]]);
            assert_int_equal(got[e[i]], 5);
            ended[e[i]] = 1;
        }
        if (pes_merge_memory(m) > peak)
            peak = pes_merge_memory(m);
    }
    assert_int_equal(n, 0);
    for (uint32_t t = 0; t < SEQ_THREADS; t++)
        assert_true(ended[t]);
    /* two threads' smallest buffers (16 records of 16 + 24 bytes each); all
     * 300 at once would be 192 KB */
    assert_true(peak <= 2 * 16 * (16 + 24));
    pes_merge_close(m);
    pes_trace_reader_close(r);
    unlink(path);
}

/* ---------------------------------------------------------------- parts */

/* The whole merged stream of the trace at `path` (control records too). */
static size_t read_all(struct pes_record **out, uint32_t **threads, uint64_t lo, uint64_t hi,
                       int bounded)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_merge *m = pes_merge_open(r, &err);
    assert_non_null(m);
    if (lo || bounded)
        assert_int_equal(pes_merge_set_range(m, lo, hi, bounded, &err), 0);
    size_t n = 0, cap = 1 << 16;
    *out = malloc(cap * sizeof **out);
    *threads = malloc(cap * sizeof **threads);
    long k;
    for (;;) {
        if (cap - n < 1000) {
            cap *= 2;
            *out = realloc(*out, cap * sizeof **out);
            *threads = realloc(*threads, cap * sizeof **threads);
        }
        k = pes_merge_read(m, *out + n, *threads + n, 1 + n % 997, 1, &err);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    assert_int_equal(k, 0);
    pes_merge_close(m);
    pes_trace_reader_close(r);
    return n;
}

/* Parts [0, c1), [c1, c2), ..., [cn-1, end) read one after the other are
 * the whole stream, record for record. */
static void check_parts(const uint64_t *cuts, uint32_t n)
{
    struct pes_record *whole, *part;
    uint32_t *wt, *pt;
    size_t total = read_all(&whole, &wt, 0, 0, 0), at = 0;
    for (uint32_t k = 0; k < n; k++) {
        size_t got = read_all(&part, &pt, k ? cuts[k - 1] : 0, k + 1 < n ? cuts[k] : 0, k + 1 < n);
        assert_true(at + got <= total);
        for (size_t i = 0; i < got; i++)
            if (part[i].addr != whole[at + i].addr || part[i].id != whole[at + i].id ||
                pt[i] != wt[at + i])
                fail_msg("part %u of %u, record %zu: differs from record %zu of the whole stream",
                         k, n, i, at + i);
        at += got;
        free(part);
        free(pt);
    }
    assert_int_equal(at, total);
    free(whole);
    free(wt);
}

static void check_part_times(uint32_t n)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_merge *m = pes_merge_open(r, &err);
    assert_non_null(m);
    uint64_t cuts[8];
    assert_int_equal(pes_merge_part_times(m, n, cuts, &err), 0);
    for (uint32_t k = 1; k + 1 < n; k++)
        assert_true(cuts[k - 1] <= cuts[k]);
    pes_merge_close(m);
    pes_trace_reader_close(r);
    check_parts(cuts, n);
}

/* Random streams (marks at random, blocks cut anywhere, threads started at
 * different times) and the long segments (segments across many blocks,
 * records after a thread's last mark, a thread without marks): the parts of
 * pes_merge_part_times and of cut times on and around marks and starts. */
static void test_parts_equal_whole(void **state)
{
    (void)state;
    const uint64_t starts[RT] = {0, 1000, 2000, 3000};
    lcg_state = 4242;
    write_trace(starts, RT, random_threads);
    for (uint32_t n = 2; n <= 5; n++)
        check_part_times(n);
    for (uint64_t c = 0; c < 40000; c += 997) {
        const uint64_t cuts[3] = {c, c + 1, c + 2500};
        check_parts(cuts, 4);
    }
    unlink(path);
    write_trace(ls_starts, 3, long_segments);
    for (uint32_t n = 2; n <= 4; n++)
        check_part_times(n);
    const uint64_t cuts[][3] = {
        {1000, 5000, 900000},
        {1000 + 3000000, 1000 + 3000000 + 3 * 65537, 1000 + 3 * (1000000 + 65537 + 65536)},
        {1500000, 1500001, 3200000},
        {5000 + 4000, 5000 + 4001, 5000 + 2000000}};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        check_parts(cuts[i], 4);
    unlink(path);
}

/* Four threads whose starts put a higher stream index above a lower one in
 * the merge's heap, and identical records from time 40 on: every record has a
 * twin of the same time in each other thread, so the stream tie-break orders
 * them. A part cut at 40 raises every waiting thread's key to 40; the parts
 * must still be the whole stream record for record. */
static const uint64_t tie_starts[4] = {30, 20, 10, 0};
static void tied_threads(struct pes_trace_writer *w)
{
    struct pes_error err;
    for (uint32_t t = 0; t < 4; t++) {
        struct pes_record recs[12];
        size_t n = 0;
        recs[n++] = time_rec(40);
        for (uint32_t k = 0; k < 4; k++)
            recs[n++] = access_rec(0, ((uint64_t)t << 32) | k);
        recs[n++] = time_rec(60);
        for (uint32_t k = 4; k < 8; k++)
            recs[n++] = access_rec(0, ((uint64_t)t << 32) | k);
        recs[n++] = time_rec(80);
        assert_int_equal(pes_trace_writer_records(w, t, recs, n, &err), 0);
    }
}

static void test_parts_keep_ties(void **state)
{
    (void)state;
    write_trace(tie_starts, 4, tied_threads);
    const uint64_t cuts[][3] = {{40, 60, 70}, {35, 40, 60}, {10, 40, 41}};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        check_parts(cuts[i], 4);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaves_by_interpolated_time),
        cmocka_unit_test(test_random_streams_keep_order),
        cmocka_unit_test(test_read_in_chunks),
        cmocka_unit_test(test_read_equals_next),
        cmocka_unit_test(test_long_segments_match_reference),
        cmocka_unit_test(test_threads_end_and_free),
        cmocka_unit_test(test_parts_equal_whole),
        cmocka_unit_test(test_parts_keep_ties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
