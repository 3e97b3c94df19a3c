/*
 * test_objects_stream.c — the object columns of replay/stream on synthetic
 * traces written with the trace writer: allocation records split across
 * blocks and threads, applied in merged order (with and without the merge
 * thread), a freed-then-reallocated address, thread stacks, this test's own
 * globals through a MAPS block of its /proc/self/maps, and a sampled trace's
 * events. Expected objects are written down from the records by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "input.h"
#include "objects.h"
#include "self_maps.h"

int table[8]; /* a global of this executable: its address is the ground truth */

static char path[128];
static struct pes_mapping maps[64];
static char map_paths[64][4096];
static size_t n_maps;
static uint64_t ips7[2], ips9[2];
static int line7;

__attribute__((noinline)) static uint64_t return_address(void)
{
    uint64_t a = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return a;
}

__attribute__((noinline)) static void make_sites(void)
{
    // clang-format off: the call and __LINE__ share a line (the site's line); the next site is the line after
    ips7[0] = return_address(); line7 = __LINE__;
    ips9[0] = return_address();
    // clang-format on
}

static void read_maps(void)
{
    n_maps = self_maps(maps, map_paths, 64, NULL, NULL);
}

static struct pes_record rec(uint32_t id, uint64_t addr, uint32_t extra)
{
    return (struct pes_record){.addr = addr, .id = id, .extra = extra};
}

enum { STACK0 = 0x7f0000, STACK1 = 0x7e0000 };

/* Sites: 0 load in main, 1 store in worker. Thread 0 runs before thread 1. */
static void write_trace(uint32_t kind, int with_maps)
{
    struct pes_error err;
    struct pes_trace_info info = {.kind = kind,
                                  .command = "test",
                                  .hostname = "h",
                                  .cpu_model = "c",
                                  .config = "",
                                  .ticks_per_second = 1000000000};
    snprintf(path, sizeof path, "/tmp/pes-test-objects-stream-%d.zst", (int)getpid());
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, &err);
    assert_non_null(w);
    struct pes_site sites[2] = {{.id = 0,
                                 .bb = UINT32_MAX,
                                 .kind = PES_KIND_LOAD,
                                 .size = 8,
                                 .file = "f.c",
                                 .function = "main"},
                                {.id = 1,
                                 .bb = UINT32_MAX,
                                 .kind = PES_KIND_STORE,
                                 .size = 8,
                                 .file = "f.c",
                                 .function = "worker"}};
    struct pes_module m = {.id_base = 0, .n_sites = 2, .name = "f.c", .sites = sites};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    const uint64_t starts[2] = {0, 1000};
    for (uint32_t t = 0; t < 2; t++) {
        struct pes_thread th = {.index = t,
                                .parent = t ? 0 : UINT32_MAX,
                                .tid = 100 + t,
                                .cpu = -1,
                                .socket = -1,
                                .start_ticks = starts[t]};
        assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    }
    if (with_maps)
        assert_int_equal(pes_trace_writer_mappings(w, maps, n_maps, &err), 0);
    struct pes_alloc_site as[2] = {{7, PES_ALLOC_MALLOC, 2, ips7}, {9, PES_ALLOC_CALLOC, 2, ips9}};
    assert_int_equal(pes_trace_writer_alloc_sites(w, as, 2, &err), 0);
    uint64_t t3 = (uint64_t)(uintptr_t)&table[3];
    if (kind == PES_TRACE_FULL) {
        /* thread 0: its stack, then an ALLOC whose size is in the next block */
        struct pes_record a[] = {rec(PES_ID_ALLOC, STACK0, PES_ALLOC_SITE_STACK),
                                 rec(PES_ID_ALLOC_SIZE, 0x10000, 0), rec(PES_ID_ALLOC, 0x10000, 7)};
        struct pes_record b[] = {rec(PES_ID_ALLOC_SIZE, 64, 0), rec(0, 0x10008, 0), rec(0, t3, 0),
                                 rec(0, STACK0 + 0x100, 0), rec(PES_ID_TIME, 400, 0)};
        struct pes_record c[] = {rec(PES_ID_ALLOC, STACK1, PES_ALLOC_SITE_STACK),
                                 rec(PES_ID_ALLOC_SIZE, 0x10000, 0),
                                 rec(1, 0x10010, 0),
                                 rec(PES_ID_FREE, 0x10000, 0),
                                 rec(1, 0x10010, 0),
                                 rec(PES_ID_ALLOC, 0x10000, 9),
                                 rec(PES_ID_ALLOC_SIZE, 32, 0),
                                 rec(1, 0x10010, 0),
                                 rec(1, 0x10020, 0),
                                 rec(1, STACK1 + 0x200, 0),
                                 rec(PES_ID_TIME, 2000, 0)};
        assert_int_equal(pes_trace_writer_records(w, 1, c, sizeof c / sizeof *c, &err), 0);
        assert_int_equal(pes_trace_writer_records(w, 0, a, 3, &err), 0);
        assert_int_equal(pes_trace_writer_records(w, 0, b, 5, &err), 0);
    } else {
        struct pes_event ev[] = {
            {.kind = PES_EV_ALLOC,
             .other_thread = UINT32_MAX,
             .site = PES_ALLOC_SITE_STACK,
             .addr = STACK0,
             .aux = 0x10000,
             .time = 1},
            {.kind = PES_EV_ALLOC,
             .other_thread = UINT32_MAX,
             .site = 7,
             .addr = 0x10000,
             .aux = 64,
             .time = 2},
            {.kind = PES_EV_SAMPLE,
             .size = 8,
             .other_thread = UINT32_MAX,
             .site = 0,
             .addr = 0x10008,
             .time = 3},
            {.kind = PES_EV_FREE,
             .other_thread = UINT32_MAX,
             .site = UINT32_MAX,
             .addr = 0x10000,
             .time = 4},
            {.kind = PES_EV_SAMPLE,
             .size = 8,
             .other_thread = UINT32_MAX,
             .site = 0,
             .addr = 0x10008,
             .time = 5},
            {.kind = PES_EV_SAMPLE,
             .size = 4,
             .other_thread = UINT32_MAX,
             .site = 0,
             .addr = t3,
             .time = 6},
            {.kind = PES_EV_SAMPLE,
             .size = 8,
             .other_thread = UINT32_MAX,
             .site = 1,
             .addr = STACK0 + 8,
             .time = 7},
        };
        assert_int_equal(pes_trace_writer_events(w, 0, ev, sizeof ev / sizeof *ev, &err), 0);
    }
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
}

/* What the sink saw: each access's (or event's) description. */
struct seen {
    char d[16][128];
    size_t n;
    int null_columns;
    struct replay_input *in;
};

static int sink_batch(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    (void)err;
    struct seen *s = ctx;
    const struct pes_objects *o = replay_input_objects(s->in);
    size_t n = b->n ? b->n : b->n_events;
    const uint32_t *obj = b->n ? b->object : b->event_object;
    const uint64_t *off = b->n ? b->object_offset : b->event_object_offset;
    if (n && !obj)
        s->null_columns = 1;
    for (size_t i = 0; obj && i < n && s->n < 16; i++) {
        if (!b->n && (b->events[i].kind == PES_EV_ALLOC || b->events[i].kind == PES_EV_FREE)) {
            assert_int_equal(obj[i], 0);
            continue;
        }
        pes_objects_describe(o, obj[i], off[i], s->d[s->n++], sizeof s->d[0]);
    }
    return 0;
}

static void run(struct replay_input *in, struct seen *s)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    struct pes_batch_sink sink = {.batch = sink_batch, .ctx = s};
    struct pes_error err = {0};
    assert_int_equal(replay_input_run(in, &sink, &err), 0);
}

static void test_full_trace(void **state)
{
    (void)state;
    write_trace(PES_TRACE_FULL, 1);
    char h7[200], h9[200];
    snprintf(h7, sizeof h7, "heap@test_objects_stream.c:%d (make_sites)", line7);
    snprintf(h9, sizeof h9, "heap@test_objects_stream.c:%d (make_sites)", line7 + 1);
    char want[8][220];
    snprintf(want[0], sizeof want[0], "%s+8", h7);
    snprintf(want[1], sizeof want[1], "table[3]");
    snprintf(want[2], sizeof want[2], "stack:main+256");
    snprintf(want[3], sizeof want[3], "%s+16", h7);
    snprintf(want[4], sizeof want[4], "unknown");   /* freed */
    snprintf(want[5], sizeof want[5], "%s+16", h9); /* the same address, the new site */
    snprintf(want[6], sizeof want[6], "unknown");   /* past the 32-byte block */
    snprintf(want[7], sizeof want[7], "stack:worker+512");
    for (unsigned jobs = 1; jobs <= 2; jobs++) { /* 2: the merge on a thread of its own */
        struct pes_error err = {0};
        struct replay_input *in = replay_input_open(path, &err);
        assert_non_null(in);
        replay_input_set_threads(in, jobs);
        for (int pass = 0; pass < 2; pass++) { /* a second pass starts afresh */
            struct seen s;
            run(in, &s);
            assert_false(s.null_columns);
            assert_int_equal(s.n, 8);
            for (int i = 0; i < 8; i++)
                assert_string_equal(s.d[i], want[i]);
        }
        const struct pes_objects *o = replay_input_objects(in);
        /* site 7 and site 9: one block each (not doubled by the second pass) */
        int heap = 0;
        for (uint32_t id = 0; id < pes_objects_count(o); id++) {
            const struct pes_object *ob = pes_objects_get(o, id);
            if (ob->kind != PES_OBJ_HEAP)
                continue;
            heap++;
            assert_int_equal(ob->blocks, 1);
            assert_int_equal(ob->size, strcmp(ob->name, h7) == 0 ? 64 : 32);
        }
        assert_int_equal(heap, 2);
        assert_null(replay_input_objects_warning(in));
        replay_input_close(in);
    }
    /* --no-objects, and parts: columns NULL */
    struct pes_error err = {0};
    struct replay_input *in = replay_input_open(path, &err);
    replay_input_set_objects(in, 0);
    struct seen s;
    run(in, &s);
    assert_true(s.null_columns);
    assert_null(replay_input_objects(in));
    replay_input_close(in);
    in = replay_input_open(path, &err);
    assert_int_equal(replay_input_set_part(in, 0, 2, &err), 0);
    assert_null(replay_input_objects(in));
    replay_input_close(in);
    unlink(path);
}

/* No MAPS block (older runtimes): no warning, globals unknown, the heap still known. */
static void test_no_maps(void **state)
{
    (void)state;
    write_trace(PES_TRACE_FULL, 0);
    struct pes_error err = {0};
    struct replay_input *in = replay_input_open(path, &err);
    struct seen s;
    run(in, &s);
    assert_null(replay_input_objects_warning(in));
    assert_string_equal(s.d[1], "unknown");
    char want[64]; /* no binary to symbolize with: the return address */
    snprintf(want, sizeof want, "heap@0x%llx+8", (unsigned long long)ips7[0]);
    assert_string_equal(s.d[0], want);
    replay_input_close(in);
    unlink(path);
}

static void test_sampled_events(void **state)
{
    (void)state;
    write_trace(PES_TRACE_SAMPLED, 1);
    struct pes_error err = {0};
    struct replay_input *in = replay_input_open_sampled(path, &err);
    assert_non_null(in);
    struct seen s;
    run(in, &s);
    assert_false(s.null_columns);
    assert_int_equal(s.n, 4);
    char want[200];
    snprintf(want, sizeof want, "heap@test_objects_stream.c:%d (make_sites)+8", line7);
    assert_string_equal(s.d[0], want);
    assert_string_equal(s.d[1], "unknown");
    assert_string_equal(s.d[2], "table[3]");
    assert_string_equal(s.d[3], "stack:worker+8");
    replay_input_close(in);
    unlink(path);
}

static int setup(void **state)
{
    (void)state;
    make_sites();
    uint64_t caller = return_address();
    ips7[1] = ips9[1] = caller;
    read_maps();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_trace),
        cmocka_unit_test(test_no_maps),
        cmocka_unit_test(test_sampled_events),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
