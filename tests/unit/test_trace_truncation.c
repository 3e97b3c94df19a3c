/*
 * test_trace_truncation.c — a trace cut at EVERY byte offset: the reader never
 * crashes, returns exactly the blocks that are complete in the prefix, and
 * flags the truncation. Block boundaries come from the writer's byte count
 * (pes_trace_writer_bytes after each block), not from the reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "trace_test_util.h"

#define MAX_BLOCKS 16

struct trace {
    uint8_t *data;
    size_t size;
    uint64_t ends[MAX_BLOCKS]; /* end offset of each block, header first */
    size_t nblocks;
    struct pes_record recs[300];
};

static void make_trace(struct trace *t, int with_footer)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("trunc");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    t->nblocks = 0;
    t->ends[t->nblocks++] = pes_trace_writer_bytes(w);
    struct pes_site sites[2] = {{10, 12, PES_KIND_LOAD, 0, 5, 8, 12, "gemm.c", "kernel"},
                                {11, 12, PES_KIND_STORE, 0, 9, 8, 13, "gemm.c", "kernel"}};
    struct pes_bb bb = {.id = 12,
                        .n_sites = 2,
                        .ops = {1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0},
                        .flags = 0,
                        .function = "kernel",
                        .label = "for.body"};
    struct pes_module m = {10, 2, 1, "gemm.c", sites, &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    t->ends[t->nblocks++] = pes_trace_writer_bytes(w);
    struct pes_thread th = {0, UINT32_MAX, 77, 0, 0, 1};
    assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    t->ends[t->nblocks++] = pes_trace_writer_bytes(w);
    for (int i = 0; i < 300; i++)
        t->recs[i] = (struct pes_record){i % 3 == 0 ? 0 : 0x1000 + (uint64_t)i * 8,
                                         (uint32_t)(10 + i % 3), 0};
    for (int b = 0; b < 3; b++) {
        assert_int_equal(pes_trace_writer_records(w, 0, t->recs + b * 100, 100, &err), 0);
        t->ends[t->nblocks++] = pes_trace_writer_bytes(w);
    }
    struct pes_event ev = {PES_EV_REUSE, 0, 8, 0, 1, 10, 0x1000,
                           0x400000,     5, 6, 7, 8, 0,  PES_STACK_NONE};
    assert_int_equal(pes_trace_writer_events(w, 0, &ev, 1, &err), 0);
    t->ends[t->nblocks++] = pes_trace_writer_bytes(w);
    struct pes_thread_totals tot = {0, 300, 200, 100, 0, 0, 99};
    uint64_t before_close = pes_trace_writer_bytes(w);
    assert_int_equal(pes_trace_writer_close(w, with_footer ? &tot : NULL, with_footer, 99, &err),
                     0);
    t->data = tt_read_file(path, &t->size);
    assert_non_null(t->data);
    if (with_footer)
        t->ends[t->nblocks++] = t->size;
    else
        assert_int_equal(t->size, before_close);
    assert_int_equal(t->ends[t->nblocks - 1], t->size);
    unlink(path);
    free(path);
}

/* Blocks fully inside a prefix of length len (header included). */
static size_t complete_blocks(const struct trace *t, size_t len)
{
    size_t k = 0;
    while (k < t->nblocks && t->ends[k] <= len)
        k++;
    return k;
}

static void run_all_prefixes(int with_footer)
{
    struct trace t;
    make_trace(&t, with_footer);
    for (size_t len = 0; len <= t.size; len++) {
        struct pes_error err;
        size_t want = complete_blocks(&t, len);
        struct pes_trace_reader *r = pes_trace_reader_open_memory(t.data, len, "cut.pes", &err);
        if (want == 0) {
            assert_null(r);
            assert_int_equal(err.code, len == 0 ? PES_ERR_FORMAT : PES_ERR_TRUNCATED);
            continue;
        }
        assert_non_null(r);
        struct pes_block b;
        size_t got = 1; /* the header, read by open */
        int rc;
        size_t recs = 0;
        while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
            if (b.type == PES_BLOCK_ACCESS) {
                for (size_t i = 0; i < b.n; i++)
                    assert_int_equal(b.records[i].addr, t.recs[recs + i].addr);
                recs += b.n;
            }
            got++;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(got, want);
        const char *msg = NULL;
        int trunc = pes_trace_reader_truncated(r, &msg);
        if (len == t.size && with_footer) {
            assert_false(trunc);
        } else {
            assert_true(trunc);
            assert_non_null(strstr(msg, "cut.pes"));
            if (len != t.ends[want - 1]) { /* cut inside a frame: names both offsets */
                char off[64];
                snprintf(off, sizeof off, "offset %zu", len);
                assert_non_null(strstr(msg, off));
                snprintf(off, sizeof off, "ends at %llu", (unsigned long long)t.ends[want - 1]);
                assert_non_null(strstr(msg, off));
            }
        }
        /* the index lists the same complete blocks */
        struct pes_block_ref *refs;
        size_t n;
        assert_int_equal(pes_trace_reader_index(r, &refs, &n, &err), 0);
        assert_int_equal(n, want);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(refs[i].offset + 24 + refs[i].frame_size, t.ends[i]);
        free(refs);
        pes_trace_reader_close(r);
    }
    free(t.data);
}

static void test_every_prefix_with_footer(void **state)
{
    (void)state;
    run_all_prefixes(1);
}

static void test_every_prefix_without_footer(void **state)
{
    (void)state;
    run_all_prefixes(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_prefix_with_footer),
        cmocka_unit_test(test_every_prefix_without_footer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
