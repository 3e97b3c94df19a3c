/* batch.c: a filled batch buffer handed to a sink that takes its arrays
 * (pes_batch_buf_pass) or reads it in place. Values checked by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream.h"

/* A sink that takes each batch into `spare` (or reads it, when take is off). */
struct taker {
    struct pes_batch_buf spare;
    int takes, reads;
    size_t read_n;
};

static int take(void *ctx, struct pes_batch_buf *b, struct pes_error *err)
{
    struct taker *t = ctx;
    t->takes++;
    return pes_batch_buf_pass(b, &t->spare, err);
}

static int read_batch(void *ctx, const struct pes_batch *b, struct pes_error *err)
{
    (void)err;
    struct taker *t = ctx;
    t->reads++;
    t->read_n = b->n;
    return 0;
}

static const struct pes_bb bb0;

static void test_pass_moves_arrays(void **state)
{
    (void)state;
    struct pes_error err;
    struct taker t = {0};
    struct pes_batch_sink sink = {.batch = read_batch, .ctx = &t, .take = take};
    struct pes_batch_buf full;
    assert_int_equal(pes_batch_buf_init(&full, &sink, &err), 0);
    assert_int_equal(pes_batch_buf_objects(&full, &err), 0);
    /* the spare starts without the object columns: the pass must add them */
    assert_int_equal(pes_batch_buf_init(&t.spare, NULL, &err), 0);
    assert_null(t.spare.object);
    const uint64_t *filled_addr = full.addr;
    for (uint32_t i = 0; i < 3; i++) {
        full.object[full.view.n] = 10 + i;
        full.object_offset[full.view.n] = 100 + i;
        assert_int_equal(pes_batch_buf_access(&full, 0x1000 + 8 * i, 8, 8, i, 7,
                                              i == 1 ? PES_BATCH_WRITE : PES_BATCH_READ, &err),
                         0);
    }
    assert_int_equal(pes_batch_buf_bb(&full, &bb0, 2, &err), 0);
    assert_int_equal(pes_batch_buf_ended(&full, 1, &err), 0);
    assert_int_equal(pes_batch_buf_flush(&full, &err), 0);
    assert_int_equal(t.takes, 1);
    assert_int_equal(t.reads, 0);
    /* the spare holds the batch in the very arrays it was filled in */
    const struct pes_batch *v = &t.spare.view;
    assert_ptr_equal(v->addr, filled_addr);
    assert_int_equal(v->n, 3);
    assert_int_equal(v->addr[2], 0x1010);
    assert_int_equal(v->stream[1], 1);
    assert_int_equal(v->rw[1], PES_BATCH_WRITE);
    assert_int_equal(v->site[0], 7);
    assert_non_null(v->object);
    assert_int_equal(v->object[2], 12);
    assert_int_equal(v->object_offset[1], 101);
    assert_null(v->callpath);
    assert_int_equal(v->n_bbs, 1);
    assert_ptr_equal(v->bb[0], &bb0);
    assert_int_equal(v->bb_stream[0], 2);
    assert_int_equal(v->n_ended, 1);
    assert_int_equal(v->ended[0], 1);
    /* the source is empty, with its columns (objects on, call paths off) */
    assert_int_equal(full.view.n, 0);
    assert_int_equal(full.view.n_bbs, 0);
    assert_int_equal(full.view.n_ended, 0);
    assert_ptr_not_equal(full.addr, filled_addr);
    assert_ptr_equal(full.view.addr, full.addr);
    assert_non_null(full.view.object);
    assert_ptr_equal(full.view.object, full.object);
    assert_null(full.view.callpath);
    assert_ptr_equal(full.sink, &sink);
    assert_null(t.spare.sink);
    /* a full batch goes by itself, at PES_BATCH accesses */
    for (uint32_t i = 0; i < PES_BATCH; i++) {
        full.object[full.view.n] = 0;
        full.object_offset[full.view.n] = 0;
        assert_int_equal(pes_batch_buf_access(&full, i, 1, 1, 0, 0, PES_BATCH_READ, &err), 0);
    }
    assert_int_equal(t.takes, 2);
    assert_int_equal(t.spare.view.n, PES_BATCH);
    assert_int_equal(t.spare.view.addr[PES_BATCH - 1], PES_BATCH - 1);
    assert_ptr_equal(full.addr, filled_addr); /* the arrays changed places back */
    pes_batch_buf_free(&full);
    pes_batch_buf_free(&t.spare);
}

static void test_sink_without_take_reads_in_place(void **state)
{
    (void)state;
    struct pes_error err;
    struct taker t = {0};
    struct pes_batch_sink sink = {.batch = read_batch, .ctx = &t};
    struct pes_batch_buf b;
    assert_int_equal(pes_batch_buf_init(&b, &sink, &err), 0);
    const uint64_t *addr = b.addr;
    assert_int_equal(pes_batch_buf_access(&b, 64, 4, 4, 0, 3, PES_BATCH_READ, &err), 0);
    assert_int_equal(pes_batch_buf_flush(&b, &err), 0);
    assert_int_equal(t.reads, 1);
    assert_int_equal(t.read_n, 1);
    assert_ptr_equal(b.addr, addr);
    assert_int_equal(b.view.n, 0);
    pes_batch_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pass_moves_arrays),
        cmocka_unit_test(test_sink_without_take_reads_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
