/*
 * test_trace_facts.c — the basic blocks' model facts in the MODULE block
 * (docs/trace-format.md §2.2, version 4): written and read back exactly, with
 * the payload size the layout gives by hand; a version-3 MODULE (forged block
 * by block, its layout without the facts) reads with them zero and
 * PES_BB_MODEL_FACTS clear whatever its flags say; a version-4 MODULE cut
 * inside the facts, or a version-3 layout declared version 4, and the
 * version-4 layout declared version 3, are format errors naming the MODULE
 * block's offset.
 */
#include "trace_forge.h"
#include "trace_test_util.h"

#include <stdio.h>

#define BB_ID 1u

static void tables(struct pes_site *site, struct pes_bb *bb, struct pes_module *m)
{
    *site = (struct pes_site){0, BB_ID, PES_KIND_LOAD, 0, 5, 8, 11, "t.c", "main"};
    *bb = (struct pes_bb){.id = BB_ID,
                          .n_sites = 1,
                          .ops = {[PES_OP_FP_ADD] = 8, [PES_OP_LOAD] = 2},
                          .flags = PES_BB_PARALLEL | PES_BB_MODEL_FACTS,
                          .function = "main",
                          .label = "vector.body",
                          .forks = 1,
                          .barriers = 2,
                          .instrs = {[PES_OP_FP_ADD] = 2, [PES_OP_LOAD] = 2},
                          .chain = {[PES_OP_FP_ADD] = 1, [PES_OP_INT_ADD] = 1}};
    *m = (struct pes_module){0, 1, 1, "t.c", site, bb};
}

/* HEADER, MODULE (payload `module`), THREAD, all of `version`; *at: the MODULE
 * block's offset. */
static struct pes_buf forge(uint16_t version, const struct pes_buf *module, uint64_t *at)
{
    struct pes_buf f = {0}, p = {0};
    struct pes_trace_info info;
    tt_default_info(&info);
    assert_int_equal(pes_ser_info(&p, &info), 0);
    tt_forge_block(&f, version, PES_BLOCK_HEADER, 0, 1, &p);
    *at = tt_forge_block(&f, version, PES_BLOCK_MODULE, 0, 2, module);
    struct pes_thread t = {0, UINT32_MAX, 100, -1, -1, 0};
    p.len = 0;
    assert_int_equal(pes_ser_thread(&p, &t), 0);
    tt_forge_block(&f, version, PES_BLOCK_THREAD, 0, 1, &p);
    pes_buf_free(&p);
    return f;
}

/* Reads f to its end; the block of BB_ID as the reader has it in *out. */
static void read_bb(const struct pes_buf *f, struct pes_bb *out)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f->data, f->len, "f.pes", &err);
    if (!r)
        fail_msg("%s", err.message);
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
        ;
    if (rc)
        fail_msg("%s", err.message);
    const struct pes_bb *bb = pes_trace_reader_bb(r, BB_ID);
    assert_non_null(bb);
    *out = *bb;
    out->function = out->label = NULL; /* owned by the reader */
    pes_trace_reader_close(r);
}

/* Reading f fails with FORMAT at offset `at` and a message holding `what`. */
static void expect_error(const struct pes_buf *f, uint64_t at, const char *what)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f->data, f->len, "bad.pes", &err);
    int rc = 0;
    if (r) {
        struct pes_block b;
        while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
            ;
        pes_trace_reader_close(r);
    }
    assert_true(!r || rc < 0);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    char off[48];
    snprintf(off, sizeof off, "offset %llu: MODULE block", (unsigned long long)at);
    if (!strstr(err.message, off) || !strstr(err.message, what))
        fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", err.message, off, what);
}

/* Bytes of one block in the MODULE payload, by §2.2: id, n_sites, 11 ops,
 * flags, function (4 + 4), label (4 + 11); version 4 adds forks, barriers
 * and 11 + 11 counts. */
#define BB_BYTES_V3 (4 + 4 + 4 * PES_OP_COUNT + 4 + (4 + 4) + (4 + 11))
#define BB_BYTES_V4 (BB_BYTES_V3 + 4 + 4 + 8 * PES_OP_COUNT)

static void test_roundtrip_v4(void **state)
{
    (void)state;
    struct pes_site site;
    struct pes_bb bb, got;
    struct pes_module m;
    tables(&site, &bb, &m);
    struct pes_buf v3 = {0}, v4 = {0};
    assert_int_equal(pes_ser_module(&v3, &m, 3), 0);
    assert_int_equal(pes_ser_module(&v4, &m, 4), 0);
    assert_int_equal(PES_OP_COUNT, 11);
    /* module header: 3 u32 + name (4 + 3); the site: 2 u32, 2 u8, u16, 2 u32,
     * file (4 + 3), function (4 + 4); then n_ops */
    assert_int_equal(v3.len, (12 + 7) + (8 + 2 + 2 + 8 + 7 + 8) + 4 + BB_BYTES_V3);
    assert_int_equal(v4.len - v3.len, BB_BYTES_V4 - BB_BYTES_V3); /* 96 */
    uint64_t at;
    struct pes_buf f = forge(4, &v4, &at);
    read_bb(&f, &got);
    assert_int_equal(got.flags, PES_BB_PARALLEL | PES_BB_MODEL_FACTS);
    assert_int_equal(got.forks, 1);
    assert_int_equal(got.barriers, 2);
    assert_memory_equal(got.ops, bb.ops, sizeof bb.ops);
    assert_memory_equal(got.instrs, bb.instrs, sizeof bb.instrs);
    assert_memory_equal(got.chain, bb.chain, sizeof bb.chain);
    pes_buf_free(&f);

    /* through the writer (the newest version) too */
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("facts");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    struct pes_thread t = {0, UINT32_MAX, 100, -1, -1, 0};
    assert_int_equal(pes_trace_writer_thread(w, &t, &err), 0);
    struct pes_thread_totals tot = {0};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 9, &err), 0);
    size_t size;
    uint8_t *data = tt_read_file(path, &size);
    remove(path);
    free(path);
    struct pes_buf wf = {.data = data, .len = size};
    read_bb(&wf, &got);
    assert_int_equal(got.flags, PES_BB_PARALLEL | PES_BB_MODEL_FACTS);
    assert_int_equal(got.barriers, 2);
    assert_memory_equal(got.chain, bb.chain, sizeof bb.chain);
    free(data);
    pes_buf_free(&v3);
    pes_buf_free(&v4);
}

static void test_version3_reads_without_facts(void **state)
{
    (void)state;
    struct pes_site site;
    struct pes_bb bb, got;
    struct pes_module m;
    tables(&site, &bb, &m);
    struct pes_buf v3 = {0};
    assert_int_equal(pes_ser_module(&v3, &m, 3), 0);
    uint64_t at;
    struct pes_buf f = forge(3, &v3, &at);
    read_bb(&f, &got);
    /* the flag stays a claim about the facts this file holds: none */
    assert_int_equal(got.flags, PES_BB_PARALLEL);
    assert_int_equal(got.forks, 0);
    assert_int_equal(got.barriers, 0);
    assert_memory_equal(got.ops, bb.ops, sizeof bb.ops);
    static const uint32_t zero[PES_OP_COUNT];
    assert_memory_equal(got.instrs, zero, sizeof zero);
    assert_memory_equal(got.chain, zero, sizeof zero);
    pes_buf_free(&f);
    pes_buf_free(&v3);
}

static void test_malformed(void **state)
{
    (void)state;
    struct pes_site site;
    struct pes_bb bb;
    struct pes_module m;
    tables(&site, &bb, &m);
    struct pes_buf v3 = {0}, v4 = {0};
    assert_int_equal(pes_ser_module(&v3, &m, 3), 0);
    assert_int_equal(pes_ser_module(&v4, &m, 4), 0);
    uint64_t at;
    /* cut inside the last chain counter */
    struct pes_buf cut = v4;
    cut.len -= 2;
    struct pes_buf f = forge(4, &cut, &at);
    expect_error(&f, at, "MODULE payload ends inside a field");
    pes_buf_free(&f);
    /* cut exactly before the facts: the version-3 layout in a version-4 file */
    f = forge(4, &v3, &at);
    expect_error(&f, at, "MODULE payload ends inside a field");
    pes_buf_free(&f);
    /* the facts in a version-3 file are bytes no field takes */
    f = forge(3, &v4, &at);
    expect_error(&f, at, "trailing bytes");
    pes_buf_free(&f);
    pes_buf_free(&v3);
    pes_buf_free(&v4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_v4),
        cmocka_unit_test(test_version3_reads_without_facts),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
