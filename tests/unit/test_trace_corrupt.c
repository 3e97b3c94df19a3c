/*
 * test_trace_corrupt.c — damaged input never crashes or yields wrong data:
 * every byte of a small trace flipped (three patterns) gives PES_ERR_FORMAT /
 * PES_ERR_VERSION with an offset at or before the damage, a truncation
 * warning, or (if the damage is provably harmless) exactly the original data.
 * Non-pes files and a hand-built version-5 block give the documented errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <zstd.h>

#include "trace_test_util.h"

struct trace {
    uint8_t *data;
    size_t size;
    uint64_t starts[16]; /* start offset of each block */
    size_t nblocks;
    struct pes_record recs[200];
};

static void make_trace(struct trace *t)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    char *path = tt_temp_path("corrupt");
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    t->nblocks = 0;
    t->starts[t->nblocks++] = 0;
    t->starts[t->nblocks++] = pes_trace_writer_bytes(w);
    struct pes_site site = {0, 1, PES_KIND_LOAD, 0, 3, 4, 7, "x.c", "main"};
    struct pes_bb bb = {
        .id = 1, .n_sites = 1, .ops = {0}, .flags = 0, .function = "main", .label = "entry"};
    struct pes_module m = {0, 1, 1, "x.c", &site, &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    t->starts[t->nblocks++] = pes_trace_writer_bytes(w);
    struct pes_thread th = {0, UINT32_MAX, 77, 0, 0, 1};
    assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    t->starts[t->nblocks++] = pes_trace_writer_bytes(w);
    for (int i = 0; i < 200; i++)
        t->recs[i] =
            (struct pes_record){(uint64_t)i * 4 + (i % 50 == 0 ? 999 : 0), (uint32_t)(i & 1), 0};
    assert_int_equal(pes_trace_writer_records(w, 0, t->recs, 100, &err), 0);
    t->starts[t->nblocks++] = pes_trace_writer_bytes(w);
    assert_int_equal(pes_trace_writer_records(w, 0, t->recs + 100, 100, &err), 0);
    t->starts[t->nblocks++] = pes_trace_writer_bytes(w);
    struct pes_thread_totals tot = {0, 200, 200, 0, 0, 0, 5};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 5, &err), 0);
    t->data = tt_read_file(path, &t->size);
    assert_non_null(t->data);
    unlink(path);
    free(path);
}

static uint64_t block_start(const struct trace *t, size_t pos)
{
    uint64_t s = 0;
    for (size_t i = 0; i < t->nblocks; i++)
        if (t->starts[i] <= pos)
            s = t->starts[i];
    return s;
}

static void check_error(const struct trace *t, const struct pes_error *err, size_t pos)
{
    if (!(err->offset <= pos && err->offset >= block_start(t, pos)))
        print_message("pos %zu: %s\n", pos, err->message);
    assert_true(err->code == PES_ERR_FORMAT || err->code == PES_ERR_VERSION);
    assert_true(err->message[0] != '\0');
    /* the reported offset is in the damaged block (or its data frame) */
    assert_true(err->offset <= pos);
    assert_true(err->offset >= block_start(t, pos));
}

static void test_flip_every_byte(void **state)
{
    (void)state;
    struct trace t;
    make_trace(&t);
    static const uint8_t patterns[] = {0x01, 0x80, 0xff};
    size_t detected = 0, truncated = 0, harmless = 0;
    for (size_t pos = 0; pos < t.size; pos++)
        for (size_t k = 0; k < sizeof patterns; k++) {
            t.data[pos] ^= patterns[k];
            struct pes_error err;
            struct pes_trace_reader *r =
                pes_trace_reader_open_memory(t.data, t.size, "bad.pes", &err);
            if (!r) {
                if (err.code == PES_ERR_TRUNCATED)
                    truncated++;
                else
                    check_error(&t, &err, pos), detected++;
                t.data[pos] ^= patterns[k];
                continue;
            }
            struct pes_block b;
            int rc;
            size_t nrec = 0, mismatch = 0;
            while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
                if (b.type == PES_BLOCK_ACCESS)
                    for (size_t i = 0; i < b.n; i++, nrec++)
                        mismatch += nrec >= 200 || b.records[i].addr != t.recs[nrec].addr ||
                                    b.records[i].id != t.recs[nrec].id;
            assert_int_equal(mismatch, 0); /* never silently wrong */
            if (rc < 0) {
                check_error(&t, &err, pos);
                detected++;
            } else if (pes_trace_reader_truncated(r, NULL)) {
                truncated++;
            } else {
                assert_int_equal(nrec, 200);
                harmless++;
            }
            pes_trace_reader_close(r);
            t.data[pos] ^= patterns[k];
        }
    print_message("flips: %zu detected, %zu read as truncated, %zu harmless\n", detected, truncated,
                  harmless);
    assert_true(detected > 0);
    free(t.data);
}

static void test_not_a_trace(void **state)
{
    (void)state;
    struct pes_error err;
    const char text[] = "0x1000 R\n0x2000 W\nthis is not a trace at all\n";
    assert_null(pes_trace_reader_open_memory(text, sizeof text - 1, "plain.txt", &err));
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(strstr(err.message, "plain.txt"));
    assert_non_null(strstr(err.message, "not a pes trace"));
    /* a valid zstd file that is not a pes trace */
    uint8_t z[256];
    size_t zn = ZSTD_compress(z, sizeof z, text, sizeof text, 1);
    assert_false(ZSTD_isError(zn));
    assert_null(pes_trace_reader_open_memory(z, zn, "other.zst", &err));
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(strstr(err.message, "not a pes trace"));
    /* empty */
    assert_null(pes_trace_reader_open_memory("", 0, "empty", &err));
    assert_int_equal(err.code, PES_ERR_FORMAT);
    /* missing file */
    assert_null(pes_trace_reader_open("/nonexistent/dir/x.pes", &err));
    assert_int_equal(err.code, PES_ERR_IO);
    assert_null(pes_trace_reader_open("-", &err));
    assert_int_equal(err.code, PES_ERR_ARG);
}

/* Builds one block by hand from docs/trace-format.md (independent of the writer). */
static size_t hand_block(uint8_t *out, size_t cap, uint16_t type, uint16_t version,
                         const uint8_t *payload, size_t plen)
{
    uint8_t content[512];
    memcpy(content, "PESB", 4);
    memcpy(content + 4, &type, 2);
    memcpy(content + 6, &version, 2);
    uint32_t thread = 0, count = 1;
    uint64_t pl = plen;
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

static void test_hand_built_header_and_version(void **state)
{
    (void)state;
    /* HEADER payload: kind, 3 empty strings, n_cpus, n_sockets, 0 cache levels,
     * ticks_per_second, start_ticks, pid, empty config */
    uint8_t p[128], *q = p;
    uint32_t u32s[] = {2, 0, 0, 0, 16, 2, 0};
    memcpy(q, u32s, sizeof u32s);
    q += sizeof u32s;
    uint64_t u64s[] = {1000, 5, 77};
    memcpy(q, u64s, sizeof u64s);
    q += sizeof u64s;
    memset(q, 0, 4);
    q += 4;
    uint8_t file[1024];
    struct pes_error err;
    size_t n = hand_block(file, sizeof file, 1, 1, p, (size_t)(q - p));
    struct pes_trace_reader *r = pes_trace_reader_open_memory(file, n, "v1.pes", &err);
    assert_non_null(r);
    const struct pes_trace_info *info = pes_trace_reader_info(r);
    assert_int_equal(info->kind, PES_TRACE_SAMPLED);
    assert_int_equal(info->n_cpus, 16);
    assert_int_equal(info->n_sockets, 2);
    assert_int_equal(info->ticks_per_second, 1000);
    assert_int_equal(info->pid, 77);
    assert_string_equal(info->command, "");
    struct pes_block b;
    assert_int_equal(pes_trace_reader_next(r, &b, &err), 0);
    assert_true(pes_trace_reader_truncated(r, NULL)); /* no FOOTER */
    pes_trace_reader_close(r);

    /* versions 2 (loop descriptors), 3 (call edges) and 4 (block facts) read
     * the same HEADER; version 5 is unknown */
    n = hand_block(file, sizeof file, 1, 2, p, (size_t)(q - p));
    r = pes_trace_reader_open_memory(file, n, "v2.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_info(r)->version, 2);
    assert_int_equal(pes_trace_reader_info(r)->n_cpus, 16);
    pes_trace_reader_close(r);
    n = hand_block(file, sizeof file, 1, 3, p, (size_t)(q - p));
    r = pes_trace_reader_open_memory(file, n, "v3.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_info(r)->version, 3);
    pes_trace_reader_close(r);
    n = hand_block(file, sizeof file, 1, 4, p, (size_t)(q - p));
    r = pes_trace_reader_open_memory(file, n, "v4.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_info(r)->version, 4);
    pes_trace_reader_close(r);
    n = hand_block(file, sizeof file, 1, 5, p, (size_t)(q - p));
    assert_null(pes_trace_reader_open_memory(file, n, "v5.pes", &err));
    assert_int_equal(err.code, PES_ERR_VERSION);
    assert_non_null(strstr(err.message, "version 5"));

    /* payload one byte short: FORMAT naming the block */
    n = hand_block(file, sizeof file, 1, 1, p, (size_t)(q - p) - 1);
    assert_null(pes_trace_reader_open_memory(file, n, "short.pes", &err));
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(strstr(err.message, "HEADER"));
    assert_non_null(strstr(err.message, "offset 0"));
}

/* The verdict of the sequential reader and of the block index followed by
 * every block decoded from it in file order (what pes-replay and pes-dump
 * --stats do) on one file: -1 with the message, or 0 with the truncation
 * flag. */
struct verdict {
    int rc, truncated;
    char message[256];
};

static void verdicts(const uint8_t *d, size_t n, struct verdict *seq, struct verdict *idx)
{
    struct pes_error err;
    struct pes_block b;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(d, n, "m.pes", &err);
    assert_non_null(r);
    while ((seq->rc = pes_trace_reader_next(r, &b, &err)) == 1)
        ;
    snprintf(seq->message, sizeof seq->message, "%s", seq->rc < 0 ? err.message : "");
    seq->truncated = pes_trace_reader_truncated(r, NULL);
    pes_trace_reader_close(r);
    r = pes_trace_reader_open_memory(d, n, "m.pes", &err);
    assert_non_null(r);
    struct pes_block_ref *refs = NULL;
    size_t nr;
    idx->rc = pes_trace_reader_index(r, &refs, &nr, &err);
    for (size_t i = 0; idx->rc == 0 && i < nr; i++)
        if (pes_trace_reader_block_at(r, &refs[i], &b, &err) < 0)
            idx->rc = -1;
    free(refs);
    snprintf(idx->message, sizeof idx->message, "%s", idx->rc < 0 ? err.message : "");
    idx->truncated = pes_trace_reader_truncated(r, NULL);
    pes_trace_reader_close(r);
}

/* Concatenates blocks of t by number (-1 ends the list). */
static uint8_t *assemble(const struct trace *t, const int *order, size_t *n)
{
    uint8_t *out = malloc(2 * t->size);
    *n = 0;
    for (; *order >= 0; order++) {
        size_t i = (size_t)*order;
        uint64_t s = t->starts[i], e = i + 1 < t->nblocks ? t->starts[i + 1] : t->size;
        memcpy(out + *n, t->data + s, e - s);
        *n += e - s;
    }
    return out;
}

static void test_structure_same_verdict(void **state)
{
    (void)state;
    struct trace t;
    make_trace(&t); /* blocks: 0 HEADER, 1 MODULE, 2 THREAD, 3 ACCESS, 4 ACCESS, 5 FOOTER */
    static const struct {
        int order[10];
        const char *expect; /* error message part, or NULL: truncated, no error */
    } cases[] = {
        {{0, 1, 2, 3, 3, 4, 5, -1},
         "thread 0 has 300 records in ACCESS blocks, the footer says 200"},
        {{0, 1, 2, 4, 5, -1}, "thread 0 has 100 records in ACCESS blocks, the footer says 200"},
        {{0, 1, 2, 3, 4, 5, 3, -1}, "block after the FOOTER block"},
        {{0, 1, 2, 3, 4, 5, 5, -1}, "block after the FOOTER block"},
        {{0, 1, 0, 2, 3, 4, 5, -1}, "second HEADER block"},
        {{0, 1, 2, 3, 4, -1}, NULL},
        /* swapped blocks of one thread: these records have no time marks, by
         * which alone the order could be checked (§6), so they read as valid */
        {{0, 1, 2, 4, 3, 5, -1}, ""},
        /* a thread's records need its THREAD block before them, records need
         * the MODULE block of their ids before them; tables repeated or in
         * another order before the records are fine */
        {{0, 1, 3, 4, 5, -1}, "ACCESS block of thread 0 comes before any THREAD block"},
        {{0, 1, 3, 2, 4, 5, -1}, "ACCESS block of thread 0 comes before any THREAD block"},
        {{0, 2, 3, 4, 5, -1},
         "ACCESS block: record 0 has id 0, which no earlier MODULE block defines"},
        {{0, 2, 3, 1, 4, 5, -1},
         "ACCESS block: record 0 has id 0, which no earlier MODULE block defines"},
        {{0, 2, 1, 3, 4, 5, -1}, ""},
        {{0, 1, 2, 1, 2, 3, 4, 5, -1}, ""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n;
        uint8_t *d = assemble(&t, cases[c].order, &n);
        struct verdict seq, idx;
        verdicts(d, n, &seq, &idx);
        assert_int_equal(seq.rc, idx.rc);
        assert_string_equal(seq.message, idx.message);
        assert_int_equal(seq.truncated, idx.truncated);
        if (!cases[c].expect) {
            assert_int_equal(seq.rc, 0);
            assert_true(seq.truncated);
        } else if (!cases[c].expect[0]) {
            assert_int_equal(seq.rc, 0);
            assert_false(seq.truncated);
        } else {
            assert_int_equal(seq.rc, -1);
            assert_non_null(strstr(seq.message, cases[c].expect));
            assert_non_null(strstr(seq.message, "m.pes: offset "));
        }
        /* cut inside the last block: truncated for both, nothing else (an
         * error ends the reading: whether the end was seen does not matter) */
        verdicts(d, n - 10, &seq, &idx);
        assert_int_equal(seq.rc, idx.rc);
        assert_string_equal(seq.message, idx.message);
        if (seq.rc == 0)
            assert_int_equal(seq.truncated, idx.truncated);
        free(d);
    }
    free(t.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flip_every_byte),
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_hand_built_header_and_version),
        cmocka_unit_test(test_structure_same_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
