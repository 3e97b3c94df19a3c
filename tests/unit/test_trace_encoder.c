/*
 * test_trace_encoder.c — pes_trace_encoder makes exactly the bytes that the
 * writer appends, and those bytes depend only on the block:
 *   - every ACCESS block equals an oracle built here from docs/trace-format.md
 *     (a plain predictor + layout, compressed with libzstd directly), and what
 *     pes_trace_writer_records writes, whether the encoder is fresh or has
 *     encoded other blocks before (codec state must not leak across blocks);
 *   - the other block types equal the writer's;
 *   - a file assembled from blocks encoded out of order, by several encoders
 *     (also on several threads), then appended in order, is byte-identical to
 *     the single-writer file and reads back record for record;
 *   - pes_trace_writer_append refuses what is not whole blocks, and keeps the
 *     writer's failure state after a short write (/dev/full).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <zstd.h>

#include "trace_test_util.h"

/* ------------------------------------------------------------ random blocks */

/* Loop-like blocks (what the codec predicts), random ones (every residual
 * non-zero), and mixtures with control records, so every plane and bitmap of
 * the layout is exercised. */
static struct pes_record *gen_block(uint64_t *s, size_t n, int style)
{
    struct pes_record *r = calloc(n ? n : 1, sizeof *r);
    uint64_t base = tt_rand(s) & 0xffffffffff;
    uint32_t width = 1 + (uint32_t)(tt_rand(s) % 6);
    for (size_t i = 0; i < n; i++) {
        int random = style == 1 || (style == 2 && tt_rand(s) % 7 == 0);
        if (random) {
            r[i].id = (uint32_t)tt_rand(s) % 5000;
            r[i].addr = tt_rand(s) >> (tt_rand(s) % 64);
            r[i].extra = tt_rand(s) % 3 ? 0 : (uint32_t)tt_rand(s);
        } else if (i % 1024 == 0) {
            /* one clock across blocks: a thread's time marks never decrease (§1) */
            static uint64_t clock = 1000000;
            r[i].id = PES_ID_TIME;
            r[i].addr = clock += 37 * 1024;
        } else {
            uint32_t k = (uint32_t)(i % (width + 1));
            r[i].id = k == width ? 100 : k; /* a BB entry, then its sites */
            r[i].addr = k == width ? 0 : base + 0x1000 * k + 8 * (i / (width + 1));
        }
    }
    return r;
}

/* ------------------------------------------------------------ the oracle */

/* docs/trace-format.md §3, written for clarity: a linear list of predictor
 * entries, one pass per column. */
struct ref_entry {
    uint32_t id, succ;
    uint64_t last, stride;
    int fresh;
};

static uint64_t zigzag(uint64_t v)
{
    return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

static void put32(uint8_t **p, uint32_t v)
{
    memcpy(*p, &v, 4);
    *p += 4;
}

static size_t ref_planes(uint8_t *p, const uint64_t *v, size_t n, int width, uint32_t *mask,
                         int first)
{
    uint64_t or_value = 0;
    for (size_t i = 0; i < n; i++)
        or_value |= v[i];
    size_t len = 0;
    for (int b = 0; b < width; b++) {
        if (!((or_value >> (8 * b)) & 0xff))
            continue;
        *mask |= 1u << (first + b);
        for (size_t i = 0; i < n; i++)
            if (v[i])
                p[len++] = (uint8_t)(v[i] >> (8 * b));
    }
    return len;
}

static size_t ref_count(const uint64_t *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i] != 0;
    return k;
}

static void ref_bitmap(uint8_t *bm, const uint64_t *v, size_t n)
{
    memset(bm, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i++)
        if (v[i])
            bm[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* The complete [index frame][data frame] of one ACCESS block. */
static uint8_t *ref_access_block(uint32_t thread, const struct pes_record *r, size_t n,
                                 size_t *size)
{
    struct ref_entry *tab = calloc(n + 1, sizeof *tab);
    size_t used = 0;
    struct ref_entry start = {0};
    struct ref_entry *prev = &start;
    uint64_t *rid = calloc(n + 1, 8), *ra = calloc(n + 1, 8), *re = calloc(n + 1, 8);
    for (size_t i = 0; i < n; i++) {
        rid[i] = r[i].id ^ prev->succ;
        prev->succ = r[i].id;
        struct ref_entry *e = NULL;
        for (size_t j = 0; j < used && !e; j++)
            if (tab[j].id == r[i].id)
                e = &tab[j];
        if (!e) {
            e = &tab[used++];
            *e = (struct ref_entry){.id = r[i].id, .fresh = 1};
        }
        ra[i] = zigzag(r[i].addr - (e->last + e->stride));
        e->stride = e->fresh ? 0 : r[i].addr - e->last;
        e->last = r[i].addr;
        e->fresh = 0;
        re[i] = r[i].extra;
        prev = e;
    }
    size_t nb = (n + 7) / 8;
    size_t content_max = 24 + 4 + 16 + 3 * nb + 16 * n;
    uint8_t *content = calloc(content_max, 1);
    uint8_t *p = content + 24 + 4 + 16; /* version 2: u32 stored count, then §3's layout */
    ref_bitmap(p, rid, n);
    ref_bitmap(p + nb, ra, n);
    ref_bitmap(p + 2 * nb, re, n);
    p += 3 * nb;
    uint32_t mask = 0;
    p += ref_planes(p, rid, n, 4, &mask, 0);
    p += ref_planes(p, ra, n, 8, &mask, 4);
    p += ref_planes(p, re, n, 4, &mask, 12);
    size_t content_len = (size_t)(p - content);
    uint8_t *h = content;
    memcpy(h, "PESB", 4);
    uint16_t type = PES_BLOCK_ACCESS, version = PES_TRACE_VERSION;
    memcpy(h + 4, &type, 2);
    memcpy(h + 6, &version, 2);
    memcpy(h + 8, &thread, 4);
    uint32_t count = (uint32_t)n;
    memcpy(h + 12, &count, 4);
    uint64_t payload = content_len - 24;
    memcpy(h + 16, &payload, 8);
    h = content + 24;
    put32(&h, count); /* no loop descriptors: stored = count */
    put32(&h, mask);
    put32(&h, (uint32_t)ref_count(rid, n));
    put32(&h, (uint32_t)ref_count(ra, n));
    put32(&h, (uint32_t)ref_count(re, n));

    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    size_t bound = ZSTD_compressBound(content_len);
    uint8_t *out = malloc(24 + bound);
    size_t csize = ZSTD_compress2(cctx, out + 24, bound, content, content_len);
    assert_false(ZSTD_isError(csize));
    uint8_t *q = out;
    put32(&q, 0x184D2A50u);
    put32(&q, 16);
    put32(&q, PES_BLOCK_ACCESS);
    put32(&q, thread);
    put32(&q, count);
    put32(&q, (uint32_t)csize);
    *size = 24 + csize;
    ZSTD_freeCCtx(cctx);
    free(content);
    free(tab);
    free(rid);
    free(ra);
    free(re);
    return out;
}

/* ------------------------------------------------------------ helpers */

struct blob {
    uint8_t *data;
    size_t size;
};

static struct blob copy_output(const struct pes_trace_encoder *e)
{
    struct blob b;
    const void *p = pes_trace_encoder_output(e, &b.size);
    assert_non_null(p);
    b.data = malloc(b.size);
    memcpy(b.data, p, b.size);
    return b;
}

static struct pes_trace_writer *open_writer(const char *path, size_t *header_bytes)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_error err;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 0, &info, NULL, &err);
    assert_non_null(w);
    /* the ids and threads of gen_block's records (ids < 5000, threads < 5) */
    assert_int_equal(tt_write_tables(w, 5000, 5, &err), 0);
    if (header_bytes)
        *header_bytes = (size_t)pes_trace_writer_bytes(w);
    return w;
}

/* The whole file, checked against what the writer says it wrote. */
static uint8_t *read_all(const char *path, size_t *size)
{
    uint8_t *d = tt_read_file(path, size);
    assert_non_null(d);
    return d;
}

/* ------------------------------------------------------------ tests */

#define N_BLOCKS 40

struct block_set {
    struct pes_record *recs[N_BLOCKS];
    size_t n[N_BLOCKS];
    uint32_t thread[N_BLOCKS];
};

/* The footer a real writer would write: per-thread record counts equal to
 * what the file holds (readers check them, docs/trace-format.md §6). */
static void close_writer(struct pes_trace_writer *w, const struct block_set *set)
{
    struct pes_thread_totals tot[5];
    for (uint32_t t = 0; t < 5; t++)
        tot[t] = (struct pes_thread_totals){t, 0, 3, 4, 0, 0, 99 + t};
    for (int i = 0; set && i < N_BLOCKS; i++)
        tot[set->thread[i]].records += set->n[i];
    struct pes_error err;
    assert_int_equal(pes_trace_writer_close(w, tot, 5, 1234, &err), 0);
}

static void gen_set(struct block_set *b, uint64_t seed)
{
    static const size_t sizes[] = {0, 1, 7, 8, 9, 63, 100, 1000, 1024, 4097, 20000, 65536};
    uint64_t s = seed;
    for (int i = 0; i < N_BLOCKS; i++) {
        b->n[i] = sizes[tt_rand(&s) % (sizeof sizes / sizeof sizes[0])];
        b->recs[i] = gen_block(&s, b->n[i], (int)(tt_rand(&s) % 3));
        b->thread[i] = (uint32_t)(tt_rand(&s) % 5);
    }
}

static void free_set(struct block_set *b)
{
    for (int i = 0; i < N_BLOCKS; i++)
        free(b->recs[i]);
}

static void test_records_match_writer_and_oracle(void **state)
{
    (void)state;
    struct block_set set;
    gen_set(&set, 7);
    char *path = tt_temp_path("enc");
    size_t header;
    struct pes_trace_writer *w = open_writer(path, &header);
    struct pes_error err;
    struct pes_trace_encoder *shared = pes_trace_encoder_new(NULL, &err);
    assert_non_null(shared);
    struct blob out[N_BLOCKS];
    for (int i = 0; i < N_BLOCKS; i++) {
        assert_int_equal(pes_trace_writer_records(w, set.thread[i], set.recs[i], set.n[i], &err),
                         0);
        /* the shared encoder has seen the blocks before this one */
        assert_int_equal(
            pes_trace_encoder_records(shared, set.thread[i], set.recs[i], set.n[i], &err), 0);
        out[i] = copy_output(shared);
        struct pes_trace_encoder *fresh = pes_trace_encoder_new(NULL, &err);
        assert_int_equal(
            pes_trace_encoder_records(fresh, set.thread[i], set.recs[i], set.n[i], &err), 0);
        size_t fsize;
        const void *f = pes_trace_encoder_output(fresh, &fsize);
        assert_int_equal(fsize, out[i].size);
        assert_memory_equal(f, out[i].data, fsize);
        pes_trace_encoder_free(fresh);
        size_t rsize;
        uint8_t *ref = ref_access_block(set.thread[i], set.recs[i], set.n[i], &rsize);
        assert_int_equal(rsize, out[i].size);
        assert_memory_equal(ref, out[i].data, rsize);
        free(ref);
    }
    close_writer(w, &set);
    size_t size;
    uint8_t *file = read_all(path, &size);
    size_t off = header;
    for (int i = 0; i < N_BLOCKS; i++) {
        assert_true(off + out[i].size <= size);
        assert_memory_equal(file + off, out[i].data, out[i].size);
        off += out[i].size;
        free(out[i].data);
    }
    free(file);
    pes_trace_encoder_free(shared);
    free_set(&set);
    unlink(path);
    free(path);
}

/* A block encoded after one that grew the codec's table (many distinct ids)
 * is the same as from a fresh encoder: nothing of the previous block leaks. */
static void test_no_state_across_blocks(void **state)
{
    (void)state;
    uint64_t s = 99;
    struct pes_error err;
    struct pes_record *big = gen_block(&s, 200000, 1);
    for (size_t i = 0; i < 200000; i++)
        big[i].id = (uint32_t)i * 7919u; /* 200000 distinct ids */
    struct pes_record *small = gen_block(&s, 3000, 0);
    struct pes_trace_encoder *a = pes_trace_encoder_new(NULL, &err),
                             *b = pes_trace_encoder_new(NULL, &err);
    assert_int_equal(pes_trace_encoder_records(a, 0, big, 200000, &err), 0);
    assert_int_equal(pes_trace_encoder_records(a, 1, small, 3000, &err), 0);
    assert_int_equal(pes_trace_encoder_records(b, 1, small, 3000, &err), 0);
    size_t sa, sb;
    const void *pa = pes_trace_encoder_output(a, &sa), *pb = pes_trace_encoder_output(b, &sb);
    assert_int_equal(sa, sb);
    assert_memory_equal(pa, pb, sa);
    /* and the same records with one id changed give different bytes (the
     * comparison is not vacuous) */
    small[1500].id ^= 1;
    assert_int_equal(pes_trace_encoder_records(b, 1, small, 3000, &err), 0);
    pb = pes_trace_encoder_output(b, &sb);
    assert_true(sa != sb || memcmp(pa, pb, sa) != 0);
    pes_trace_encoder_free(a);
    pes_trace_encoder_free(b);
    free(big);
    free(small);
}

static void test_other_blocks_match_writer(void **state)
{
    (void)state;
    /* ids after open_writer's module (0..4999) */
    struct pes_site sites[2] = {{5010, 5012, PES_KIND_LOAD, 0, 3, 8, 5, "a.c", "f"},
                                {5011, 5012, PES_KIND_STORE, 0, 4, 8, 6, "a.c", "f"}};
    struct pes_bb bbs[3] = {
        {.id = 5012, .n_sites = 2, .ops = {1, 2}, .flags = 0, .function = "f", .label = "entry"},
        {.id = 5013, .n_sites = 0, .ops = {0}, .flags = 1, .function = "f", .label = "body"},
        {.id = 5014, .n_sites = 0, .ops = {0}, .flags = 0, .function = "g", .label = "x"}};
    struct pes_module mod = {5010, 2, 3, "a.c", sites, bbs};
    struct pes_thread th = {3, 0, 4711, 1, 0, 555};
    struct pes_event ev[300];
    uint64_t s = 5;
    for (int i = 0; i < 300; i++) {
        memset(&ev[i], 0, sizeof ev[i]);
        ev[i].kind = (uint8_t)(1 + tt_rand(&s) % 9);
        ev[i].thread = 3;
        ev[i].addr = tt_rand(&s);
        ev[i].time = 1000 + (uint64_t)i * 10;
        ev[i].loads = (uint64_t)i * 100;
    }
    struct pes_mapping maps[2] = {{0x400000, 0x401000, 0, "/bin/x"},
                                  {0x7f0000, 0x7f8000, 0x1000, "/lib/y.so"}};

    char *path = tt_temp_path("enc-other");
    size_t header;
    struct pes_trace_writer *w = open_writer(path, &header);
    struct pes_error err;
    assert_int_equal(pes_trace_writer_module(w, &mod, &err), 0);
    assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    assert_int_equal(pes_trace_writer_events(w, 3, ev, 300, &err), 0);
    assert_int_equal(pes_trace_writer_mappings(w, maps, 2, &err), 0);
    close_writer(w, NULL);

    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    struct blob b[4];
    assert_int_equal(pes_trace_encoder_module(e, &mod, &err), 0);
    b[0] = copy_output(e);
    assert_int_equal(pes_trace_encoder_thread(e, &th, &err), 0);
    b[1] = copy_output(e);
    assert_int_equal(pes_trace_encoder_events(e, 3, ev, 300, &err), 0);
    b[2] = copy_output(e);
    assert_int_equal(pes_trace_encoder_mappings(e, maps, 2, &err), 0);
    b[3] = copy_output(e);
    /* a bad module: error, empty output, the encoder still works */
    sites[1].id = 99;
    assert_int_equal(pes_trace_encoder_module(e, &mod, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    size_t none;
    assert_null(pes_trace_encoder_output(e, &none));
    assert_int_equal(none, 0);
    pes_trace_encoder_free(e);

    size_t size;
    uint8_t *file = read_all(path, &size);
    size_t off = header;
    for (int i = 0; i < 4; i++) {
        assert_true(off + b[i].size <= size);
        assert_memory_equal(file + off, b[i].data, b[i].size);
        off += b[i].size;
        free(b[i].data);
    }
    free(file);
    unlink(path);
    free(path);
}

/* More than 2^20 records: several blocks in one output, as the writer splits them. */
static void test_large_batch_splits(void **state)
{
    (void)state;
    size_t n = (1u << 20) + 5000;
    uint64_t s = 3;
    struct pes_record *r = gen_block(&s, n, 2);
    char *path = tt_temp_path("enc-big");
    size_t header;
    struct pes_trace_writer *w = open_writer(path, &header);
    struct pes_error err;
    assert_int_equal(pes_trace_writer_records(w, 2, r, n, &err), 0);
    close_writer(w, NULL);
    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    assert_int_equal(pes_trace_encoder_records(e, 2, r, n, &err), 0);
    size_t esize;
    const uint8_t *out = pes_trace_encoder_output(e, &esize);
    uint32_t count0, frame0;
    memcpy(&count0, out + 16, 4);
    memcpy(&frame0, out + 20, 4);
    assert_int_equal(count0, 1u << 20);
    assert_true(24 + (size_t)frame0 < esize); /* a second block follows */
    size_t size;
    uint8_t *file = read_all(path, &size);
    assert_true(header + esize <= size);
    assert_memory_equal(file + header, out, esize);
    free(file);
    pes_trace_encoder_free(e);
    free(r);
    unlink(path);
    free(path);
}

/* Reads every ACCESS block back and compares it with the set, in order. */
static void check_reads_back(const char *path, const struct block_set *set)
{
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    assert_non_null(r);
    struct pes_block blk;
    int i = 0, rc;
    while ((rc = pes_trace_reader_next(r, &blk, &err)) == 1) {
        if (blk.type != PES_BLOCK_ACCESS)
            continue;
        assert_true(i < N_BLOCKS);
        assert_int_equal(blk.thread, set->thread[i]);
        assert_int_equal(blk.n, set->n[i]);
        if (blk.n)
            assert_memory_equal(blk.records, set->recs[i], blk.n * sizeof *blk.records);
        i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, N_BLOCKS);
    assert_false(pes_trace_reader_truncated(r, NULL));
    pes_trace_reader_close(r);
}

/* The single-writer file of a block set, as the reference. */
static uint8_t *writer_file(const struct block_set *set, size_t *size)
{
    char *path = tt_temp_path("enc-ref");
    struct pes_trace_writer *w = open_writer(path, NULL);
    struct pes_error err;
    for (int i = 0; i < N_BLOCKS; i++)
        assert_int_equal(pes_trace_writer_records(w, set->thread[i], set->recs[i], set->n[i], &err),
                         0);
    close_writer(w, set);
    uint8_t *d = read_all(path, size);
    unlink(path);
    free(path);
    return d;
}

/* Appends the blobs in set order, closes, and compares with the reference. */
static void assemble_and_compare(const struct block_set *set, struct blob *blobs)
{
    size_t ref_size;
    uint8_t *ref = writer_file(set, &ref_size);
    char *path = tt_temp_path("enc-asm");
    struct pes_trace_writer *w = open_writer(path, NULL);
    struct pes_error err;
    for (int i = 0; i < N_BLOCKS; i++)
        assert_int_equal(pes_trace_writer_append(w, blobs[i].data, blobs[i].size, &err), 0);
    close_writer(w, set);
    size_t size;
    uint8_t *file = read_all(path, &size);
    assert_int_equal(size, ref_size);
    assert_memory_equal(file, ref, size);
    check_reads_back(path, set);
    free(file);
    free(ref);
    unlink(path);
    free(path);
}

static void test_out_of_order_then_in_order(void **state)
{
    (void)state;
    struct block_set set;
    gen_set(&set, 11);
    int order[N_BLOCKS];
    for (int i = 0; i < N_BLOCKS; i++)
        order[i] = N_BLOCKS - 1 - i;
    uint64_t s = 17;
    for (int i = N_BLOCKS - 1; i > 0; i--) { /* shuffle */
        int j = (int)(tt_rand(&s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    struct pes_error err;
    struct pes_trace_encoder *enc[3];
    for (int k = 0; k < 3; k++)
        enc[k] = pes_trace_encoder_new(NULL, &err);
    struct blob blobs[N_BLOCKS];
    for (int i = 0; i < N_BLOCKS; i++) {
        int b = order[i];
        struct pes_trace_encoder *e = enc[i % 3];
        assert_int_equal(pes_trace_encoder_records(e, set.thread[b], set.recs[b], set.n[b], &err),
                         0);
        blobs[b] = copy_output(e);
    }
    assemble_and_compare(&set, blobs);
    for (int k = 0; k < 3; k++)
        pes_trace_encoder_free(enc[k]);
    for (int i = 0; i < N_BLOCKS; i++)
        free(blobs[i].data);
    free_set(&set);
}

/* Several threads, each with its own encoder, take blocks as they come (so
 * the encoding order varies from run to run); the main thread appends them
 * in block order. Run under ThreadSanitizer as label `concurrent`. */
struct pool {
    const struct block_set *set;
    struct blob *blobs;
    int next;     /* atomic */
    int failures; /* atomic */
};

static void *encode_worker(void *p)
{
    struct pool *pool = p;
    struct pes_error err;
    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    if (!e) {
        __atomic_fetch_add(&pool->failures, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    for (;;) {
        int i = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED);
        if (i >= N_BLOCKS)
            break;
        const struct block_set *s = pool->set;
        if (pes_trace_encoder_records(e, s->thread[i], s->recs[i], s->n[i], &err)) {
            __atomic_fetch_add(&pool->failures, 1, __ATOMIC_RELAXED);
            continue;
        }
        size_t size;
        const void *out = pes_trace_encoder_output(e, &size);
        pool->blobs[i].data = malloc(size);
        memcpy(pool->blobs[i].data, out, size);
        pool->blobs[i].size = size;
    }
    pes_trace_encoder_free(e);
    return NULL;
}

static void test_concurrent_encoders(void **state)
{
    (void)state;
    struct block_set set;
    gen_set(&set, 23);
    struct blob blobs[N_BLOCKS];
    memset(blobs, 0, sizeof blobs);
    struct pool pool = {&set, blobs, 0, 0};
    pthread_t th[4];
    for (int k = 0; k < 4; k++)
        assert_int_equal(pthread_create(&th[k], NULL, encode_worker, &pool), 0);
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);
    assert_int_equal(pool.failures, 0);
    assemble_and_compare(&set, blobs);
    for (int i = 0; i < N_BLOCKS; i++)
        free(blobs[i].data);
    free_set(&set);
}

static void test_append_checks(void **state)
{
    (void)state;
    struct pes_error err;
    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    struct pes_record r[3] = {{0x1000, 1, 0}, {0x1008, 1, 0}, {0x1010, 1, 0}};
    assert_int_equal(pes_trace_encoder_records(e, 0, r, 3, &err), 0);
    struct blob good = copy_output(e);

    char *path = tt_temp_path("enc-bad");
    size_t header;
    struct pes_trace_writer *w = open_writer(path, &header);
    uint8_t junk[64];
    memset(junk, 0xab, sizeof junk);
    assert_int_equal(pes_trace_writer_append(w, junk, sizeof junk, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_int_equal(pes_trace_writer_append(w, good.data, good.size - 1, &err), -1); /* cut */
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_int_equal(pes_trace_writer_append(w, good.data, 0, &err), -1);
    /* a HEADER block (the start of any trace file) is refused */
    size_t fsize;
    char *hpath = tt_temp_path("enc-hdr");
    struct pes_trace_writer *hw = open_writer(hpath, NULL);
    close_writer(hw, NULL);
    uint8_t *hfile = read_all(hpath, &fsize);
    assert_int_equal(pes_trace_writer_append(w, hfile, header, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_non_null(strstr(err.message, "HEADER"));
    free(hfile);
    unlink(hpath);
    free(hpath);
    assert_int_equal(pes_trace_writer_bytes(w), header); /* nothing was written */
    /* good blocks, twice in one call */
    uint8_t *two = malloc(2 * good.size);
    memcpy(two, good.data, good.size);
    memcpy(two + good.size, good.data, good.size);
    assert_int_equal(pes_trace_writer_append(w, two, 2 * good.size, &err), 0);
    assert_int_equal(pes_trace_writer_bytes(w), header + 2 * good.size);
    close_writer(w, NULL);
    uint8_t *file = read_all(path, &fsize);
    assert_memory_equal(file + header, two, 2 * good.size);
    free(file);
    free(two);
    unlink(path);
    free(path);

    /* a short write: the writer fails, and refuses later blocks */
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_trace_writer *fw = pes_trace_writer_open("/dev/full", 1, &info, NULL, &err);
    if (fw) {
        uint64_t s = 1;
        struct pes_record *rnd = gen_block(&s, 65536, 1); /* incompressible: ~1 MiB */
        assert_int_equal(pes_trace_encoder_records(e, 0, rnd, 65536, &err), 0);
        size_t bsize;
        const void *b = pes_trace_encoder_output(e, &bsize);
        int rc = 0;
        for (int i = 0; i < 8 && rc == 0; i++)
            rc = pes_trace_writer_append(fw, b, bsize, &err);
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, PES_ERR_IO);
        assert_int_equal(pes_trace_writer_append(fw, b, bsize, &err), -1);
        assert_non_null(strstr(err.message, "an earlier write failed"));
        assert_int_equal(pes_trace_writer_records(fw, 0, r, 3, &err), -1);
        assert_non_null(strstr(err.message, "an earlier write failed"));
        pes_trace_writer_close(fw, NULL, 0, 0, &err);
        free(rnd);
    }
    free(good.data);
    pes_trace_encoder_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_match_writer_and_oracle),
        cmocka_unit_test(test_no_state_across_blocks),
        cmocka_unit_test(test_other_blocks_match_writer),
        cmocka_unit_test(test_large_batch_splits),
        cmocka_unit_test(test_out_of_order_then_in_order),
        cmocka_unit_test(test_concurrent_encoders),
        cmocka_unit_test(test_append_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
