/*
 * test_trace_loop.c — loop descriptor groups (docs/trace-format.md §3.2):
 * expansion against records written out by hand (phase, negative steps,
 * addresses wrapping modulo 2^64, m = 1 and m = PES_LOOP_MAX_RECORDS, mixed
 * groups whose irregular records follow the steps as they are), a randomized
 * comparison with the records the groups were made from, counts
 * (block header, index, footer) that count expanded records, the encoder's
 * checks of the groups it is given, and files with malformed groups or a
 * version-1 block holding one (a version-2 block holding a mixed one),
 * forged here block by block: each is a format error naming the block's
 * offset. So is a block with group prediction (§3.5) whose group payload is
 * damaged under the checksum, residual by residual and bit by bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <zstd.h>

#include "trace_internal.h" /* to forge blocks the encoder refuses to make */
#include "trace_forge.h"
#include "trace_test_util.h"

#define N_SITES 8u
#define BB_ID   N_SITES /* the module's one basic block */

#define STEP(s) ((struct pes_record){(uint64_t)(s), PES_ID_LOOP_STEP, 0})
#define IRR     ((struct pes_record){0, PES_ID_LOOP_STEP, PES_LOOP_STEP_IRREGULAR})
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
    struct pes_bb bb = {.id = BB_ID,
                        .n_sites = N_SITES,
                        .ops = {0},
                        .flags = 0,
                        .function = "f",
                        .label = "for.body"};
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

/* A mixed group: m = 3 (block, affine site, irregular site), phase 2,
 * R = 7: u = 2..8 are j 2 (i 0), then iterations 1 and 2 whole: the three
 * irregular records u = 2, 5, 8 are the three stored after the steps, and
 * the irregular template holds the first one's address. A second
 * group whose one irregular position never comes up (R = 1 at phase 0 of
 * m = 2, position 1 irregular) holds no irregular record, its template's
 * address 0. */
static void test_mixed(void **state)
{
    (void)state;
    const struct pes_record stored[] = {
        LOOP(7, 3, 2), {0, BB_ID, 0}, {0x1000, 0, 0}, {0x5550, 1, 2}, STEP(0),
        STEP(-8),      IRR,           {0x5550, 1, 2}, {0x10, 1, 2},   {0x5550, 1, 2},
        LOOP(1, 2, 0), {0x40, 3, 0},  {0, 4, 0},      STEP(8),        IRR,
        {0x99, 6, 0},
    };
    const struct pes_record want[] = {
        {0x5550, 1, 2},                                              /* u 2: j 2, i 0 */
        {0, BB_ID, 0},  {0xff8, 0, 0}, {0x10, 1, 2},                 /* i 1 */
        {0, BB_ID, 0},  {0xff0, 0, 0}, {0x5550, 1, 2}, {0x40, 3, 0}, /* the second group */
        {0x99, 6, 0},
    };
    check_expansion(stored, 16, want, 9);
}

/* ------------------------------------------------------------ randomized oracle */

struct recs {
    struct pes_record *v;
    size_t n, cap;
};

static void push(struct recs *r, struct pes_record x)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        assert_non_null(r->v);
    }
    r->v[r->n++] = x;
}

/* A random address: anywhere, or near the top so that steps wrap. */
static uint64_t rand_addr(uint64_t *seed)
{
    uint64_t x = tt_rand(seed);
    return x % 4 == 0 ? UINT64_MAX - x % 4096 : x;
}

/* A random step: small either way, zero, or any 64-bit value. */
static uint64_t rand_step(uint64_t *seed)
{
    uint64_t x = tt_rand(seed);
    switch (x % 4) {
    case 0:
        return 0;
    case 1:
        return (x >> 8) % 129;
    case 2:
        return -((x >> 8) % 129);
    default:
        return tt_rand(seed);
    }
}

/* One random trace: `orig` the records a descriptor-free twin holds,
 * `batches` the stored records (plain records, and affine runs of orig as
 * groups cut at random points), batch_end[k] the end of batch k in it. */
static void random_trace(uint64_t seed, size_t target, struct recs *orig, struct recs *stored,
                         size_t *batch_end, size_t *n_batches, size_t max_batches)
{
    uint64_t time = 1;
    *n_batches = 0;
    while (orig->n < target) {
        uint64_t x = tt_rand(&seed);
        if (x % 3 == 0) { /* a few plain records: sites, the block, a time mark */
            for (uint64_t k = 1 + (x >> 8) % 8; k; k--) {
                uint64_t y = tt_rand(&seed);
                struct pes_record r = {rand_addr(&seed), (uint32_t)(y % N_SITES),
                                       (uint32_t)(y >> 40) % 3};
                if (y % 11 == 0)
                    r = (struct pes_record){0, BB_ID, 0};
                if (y % 13 == 0)
                    r = (struct pes_record){time += y % 100, PES_ID_TIME, 0};
                push(orig, r);
                push(stored, r);
            }
        } else { /* a loop: m templates, phase, R records */
            uint32_t m = x % 5 == 0 ? 1 + (uint32_t)(x >> 8) % PES_LOOP_MAX_RECORDS
                                    : 1 + (uint32_t)(x >> 8) % 4;
            uint32_t phase = (uint32_t)(tt_rand(&seed) % m);
            uint64_t y = tt_rand(&seed);
            uint64_t R = y % 7 == 0 ? 1 + y % 20000 : 1 + y % 300;
            struct pes_record tpl[PES_LOOP_MAX_RECORDS];
            uint64_t step[PES_LOOP_MAX_RECORDS];
            int irr[PES_LOOP_MAX_RECORDS]; /* a mixed loop: addresses at random */
            int mixed = y % 3 == 0;
            for (uint32_t j = 0; j < m; j++) {
                uint64_t z = tt_rand(&seed);
                tpl[j] = (struct pes_record){rand_addr(&seed), (uint32_t)(z % (N_SITES + 1)),
                                             (uint32_t)(z >> 40) % 3};
                step[j] = rand_step(&seed);
                irr[j] = mixed && z % 3 == 0;
            }
            size_t first = orig->n;
            for (uint64_t q = 0; q < R; q++) { /* the oracle: straight from the definition */
                uint64_t u = phase + q, j = u % m, i = u / m;
                uint64_t a = irr[j] ? rand_addr(&seed) : tpl[j].addr + i * step[j];
                push(orig, (struct pes_record){a, tpl[j].id, tpl[j].extra});
            }
            /* stored as pieces [q0, q1): a group from phase (phase + q0) % m with
             * templates moved (phase + q0) / m iterations on, or plain records */
            for (uint64_t q0 = 0; q0 < R;) {
                uint64_t z = tt_rand(&seed);
                uint64_t q1 = z % 3 == 0 ? q0 + 1 + z % (R - q0) : R;
                if (z % 5 == 0) {
                    for (uint64_t q = q0; q < q1; q++)
                        push(stored, orig->v[first + q]);
                } else {
                    uint64_t u0 = phase + q0;
                    push(stored, LOOP(q1 - q0, m, u0 % m));
                    for (uint32_t j = 0; j < m; j++) { /* irregular: its first record's address */
                        uint64_t at = q0 + (j + m - u0 % m) % m;
                        uint64_t a = !irr[j]   ? tpl[j].addr + (u0 / m) * step[j]
                                     : at < q1 ? orig->v[first + at].addr
                                               : 0;
                        push(stored, (struct pes_record){a, tpl[j].id, tpl[j].extra});
                    }
                    for (uint32_t j = 0; j < m; j++)
                        push(stored, irr[j] ? IRR : STEP(step[j]));
                    for (uint64_t q = q0; q < q1; q++)
                        if (irr[(phase + q) % m])
                            push(stored, orig->v[first + q]);
                }
                q0 = q1;
            }
        }
        /* batches end between units, as the runtime cuts its buffers */
        if (tt_rand(&seed) % 4 == 0 && *n_batches + 1 < max_batches)
            batch_end[(*n_batches)++] = stored->n;
    }
    batch_end[(*n_batches)++] = stored->n;
}

static void test_random_against_oracle(void **state)
{
    (void)state;
    enum { MAX_BATCHES = 64 };
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct recs orig = {0}, stored = {0};
        size_t ends[MAX_BATCHES], nb;
        random_trace(seed, 500 + (size_t)(tt_rand(&(uint64_t){seed}) % 30000), &orig, &stored, ends,
                     &nb, MAX_BATCHES);
        const struct pes_record *batches[MAX_BATCHES];
        size_t sizes[MAX_BATCHES];
        for (size_t k = 0; k < nb; k++) {
            batches[k] = stored.v + (k ? ends[k - 1] : 0);
            sizes[k] = ends[k] - (k ? ends[k - 1] : 0);
        }
        /* the footer counts expanded records: the reader checks it against the blocks */
        struct file f = write_trace(batches, sizes, nb, orig.n);
        size_t n;
        uint64_t counts;
        struct pes_record *got = read_records(&f, 0, &n, &counts);
        assert_records_equal(got, n, orig.v, orig.n);
        assert_int_equal(counts, orig.n);
        free(got);
        got = read_records(&f, 1, &n, &counts);
        assert_records_equal(got, n, stored.v, stored.n);
        assert_int_equal(counts, orig.n);
        free(got);

        /* the block index and _block_at, in reverse order: the same records */
        struct pes_error err;
        struct pes_trace_reader *r = pes_trace_reader_open_memory(f.data, f.size, "x", &err);
        assert_non_null(r);
        struct pes_block_ref *refs;
        size_t nr;
        assert_int_equal(pes_trace_reader_index(r, &refs, &nr, &err), 0);
        uint64_t end = orig.n;
        for (size_t i = nr; i-- > 0;) {
            if (refs[i].type != PES_BLOCK_ACCESS)
                continue;
            struct pes_block b;
            assert_int_equal(pes_trace_reader_block_at(r, &refs[i], &b, &err), 1);
            assert_int_equal(b.n, refs[i].count);
            assert_true(b.n <= end);
            end -= b.n;
            assert_records_equal(b.records, b.n, orig.v + end, b.n);
        }
        assert_int_equal(end, 0);
        free(refs);
        pes_trace_reader_close(r);
        free(f.data);
        free(orig.v);
        free(stored.v);
    }
}

/* A trace and its twin without descriptors: the same counts in the block
 * headers and index frames, block for block, and the same footer. */
static void test_twin_counts(void **state)
{
    (void)state;
    const struct pes_record stored[] = {
        {1, PES_ID_TIME, 0}, LOOP(1000, 2, 0), {0x100, 0, 0}, {0x900, 1, 0}, STEP(8), STEP(8),
        {2, PES_ID_TIME, 0},
    };
    struct recs twin = {0};
    push(&twin, stored[0]);
    for (uint64_t i = 0; i < 500; i++) {
        push(&twin, (struct pes_record){0x100 + 8 * i, 0, 0});
        push(&twin, (struct pes_record){0x900 + 8 * i, 1, 0});
    }
    push(&twin, stored[6]);
    const struct pes_record *b1 = stored, *b2 = twin.v;
    size_t n1 = 7, n2 = twin.n;
    struct file f1 = write_trace(&b1, &n1, 1, twin.n), f2 = write_trace(&b2, &n2, 1, twin.n);
    struct pes_error err;
    struct pes_trace_reader *r1 = pes_trace_reader_open_memory(f1.data, f1.size, "1", &err);
    struct pes_trace_reader *r2 = pes_trace_reader_open_memory(f2.data, f2.size, "2", &err);
    struct pes_block_ref *x1, *x2;
    size_t k1, k2;
    assert_int_equal(pes_trace_reader_index(r1, &x1, &k1, &err), 0);
    assert_int_equal(pes_trace_reader_index(r2, &x2, &k2, &err), 0);
    assert_int_equal(k1, k2);
    for (size_t i = 0; i < k1; i++) {
        assert_int_equal(x1[i].type, x2[i].type);
        assert_int_equal(x1[i].count, x2[i].count);
        if (x1[i].type == PES_BLOCK_ACCESS)
            assert_int_equal(x1[i].count, 1002);
    }
    assert_true(f1.size < f2.size);
    /* a footer that counts the stored records (7) is what a missing block
     * would look like: the index scan says so */
    struct file f3 = write_trace(&b1, &n1, 1, 7);
    struct pes_trace_reader *r3 = pes_trace_reader_open_memory(f3.data, f3.size, "3", &err);
    struct pes_block_ref *x3;
    size_t k3;
    assert_int_equal(pes_trace_reader_index(r3, &x3, &k3, &err), -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(strstr(err.message,
                           "FOOTER block: thread 0 has 1002 records in ACCESS blocks, the footer "
                           "says 7"));
    pes_trace_reader_close(r3);
    free(f3.data);
    free(x1);
    free(x2);
    pes_trace_reader_close(r1);
    pes_trace_reader_close(r2);
    free(f1.data);
    free(f2.data);
    free(twin.v);
}

/* A block holds at most 2^20 expanded records: a group that fits after the
 * records before it starts a block of its own, one of exactly 2^20 records
 * is a block by itself, and one of 2^20 + 1 records is refused. */
static void test_block_limit(void **state)
{
    (void)state;
    const uint64_t big = 1u << 20;
    struct pes_record recs[] = {
        {1, 0, 0}, {2, 0, 0},       LOOP(big - 1, 1, 0), {0x10, 1, 0}, STEP(16),
        {3, 0, 0}, LOOP(big, 1, 0), {0x20, 2, 0},        STEP(-16),
    };
    struct pes_error err;
    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    assert_non_null(e);
    assert_int_equal(pes_trace_encoder_records(e, 0, recs, 9, &err), 0);
    size_t size;
    const uint8_t *out = pes_trace_encoder_output(e, &size);
    /* blocks: {2 plain}, {group, 1 plain}, {group}: counts from the index frames */
    uint32_t want[] = {2, (uint32_t)big, (uint32_t)big};
    size_t off = 0, k = 0;
    while (off < size) {
        uint32_t count, fs;
        memcpy(&count, out + off + 16, 4);
        memcpy(&fs, out + off + 20, 4);
        assert_true(k < 3);
        assert_int_equal(count, want[k++]);
        off += 24 + fs;
    }
    assert_int_equal(k, 3);

    recs[6] = LOOP(big + 1, 1, 0);
    assert_int_equal(pes_trace_encoder_records(e, 0, recs, 9, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_non_null(strstr(err.message, "record 6, a loop descriptor, stands for 1048577 records"));
    pes_trace_encoder_output(e, &size);
    assert_int_equal(size, 0);
    pes_trace_encoder_free(e);
}

/* ------------------------------------------------------------ the encoder's checks */

struct bad_case {
    const char *what;
    struct pes_record recs[10];
    size_t n;
    const char *message; /* part of the error */
};

static const struct bad_case bad_cases[] = {
    {"m = 0",
     {{1, 0, 0}, LOOP(5, 0, 0), {0, 1, 0}, STEP(1)},
     4,
     "record 1, a loop descriptor, has m = 0 records per iteration (1..64)"},
    {"m = 65",
     {LOOP(5, 65, 0), {0, 1, 0}, STEP(1)},
     3,
     "record 0, a loop descriptor, has m = 65 records per iteration (1..64)"},
    {"phase = m",
     {LOOP(5, 2, 2), {0, 1, 0}, {0, 2, 0}, STEP(1), STEP(1)},
     5,
     "record 0, a loop descriptor, has phase 2, not below m = 2"},
    {"R = 0",
     {LOOP(0, 1, 0), {0, 1, 0}, STEP(1)},
     3,
     "record 0, a loop descriptor, stands for 0 records"},
    {"cut group",
     {{1, 0, 0}, LOOP(5, 2, 0), {0, 1, 0}, {0, 2, 0}, STEP(1)},
     5,
     "record 1, a loop descriptor, is cut: its 2 templates and 2 steps need 4 records, only 3 "
     "follow it"},
    {"control template",
     {LOOP(5, 1, 0), {9, PES_ID_TIME, 0}, STEP(1)},
     3,
     "record 1, template 0 of the loop descriptor at record 0, has the control id 0xffffff00"},
    {"step where a template belongs",
     {LOOP(5, 2, 0), {0, 1, 0}, STEP(1), STEP(1), STEP(1)},
     5,
     "record 2, template 1 of the loop descriptor at record 0, has the control id 0xffffff09"},
    {"site where a step belongs",
     {LOOP(5, 1, 0), {0, 1, 0}, {8, 1, 0}},
     3,
     "record 2, step 0 of the loop descriptor at record 0, is not a LOOP_STEP record with extra "
     "0 or 1 (id 0x00000001, extra 0)"},
    {"step with extra",
     {LOOP(5, 1, 0), {0, 1, 0}, {8, PES_ID_LOOP_STEP, 3}},
     3,
     "is not a LOOP_STEP record with extra 0 or 1 (id 0xffffff09, extra 3)"},
    {"stray step", {{1, 0, 0}, STEP(8)}, 2, "record 1 is a LOOP_STEP outside a loop descriptor"},
    {"irregular template with another address",
     {LOOP(2, 1, 0), {4, 1, 0}, IRR, {1, 1, 0}, {2, 1, 0}},
     5,
     "record 1, template 0 of the loop descriptor at record 0, is irregular, its address 0x4 not "
     "its first record's 0x1"},
    {"irregular template without records, with an address",
     {LOOP(1, 2, 0), {0, 1, 0}, {5, 2, 0}, STEP(1), IRR},
     5,
     "record 2, template 1 of the loop descriptor at record 0, is irregular with no record in the "
     "group, its address 0x5 not 0"},
    {"irregular step with a step",
     {LOOP(5, 1, 0), {0, 1, 0}, {8, PES_ID_LOOP_STEP, PES_LOOP_STEP_IRREGULAR}},
     3,
     "record 2, step 0 of the loop descriptor at record 0, is irregular but not 0"},
    {"irregular records cut",
     {LOOP(5, 2, 1), {0, 1, 0}, {0, 2, 0}, STEP(4), IRR, {1, 2, 0}, {2, 2, 0}},
     7,
     "record 0, a loop descriptor, is cut: its 3 irregular records should follow its steps, only "
     "2 do"},
    {"an irregular record of another site",
     {LOOP(3, 1, 0), {1, 1, 0}, IRR, {1, 1, 0}, {2, 2, 0}, {3, 1, 0}},
     6,
     "record 4, irregular record 1 of the loop descriptor at record 0, has id 2 and extra 0, its "
     "template 0 id 1 and extra 0"},
    {"a later irregular record of two positions' taking the other's site",
     {LOOP(5, 3, 1),
      {0x10, 1, 0},
      {0, 2, 0},
      {0x20, 3, 0},
      IRR,
      STEP(8),
      IRR,
      {0x20, 3, 0},
      {0x10, 1, 0},
      {0x30, 1, 0}},
     10,
     "record 9, irregular record 2 of the loop descriptor at record 0, has id 1 and extra 0, its "
     "template 2 id 3 and extra 0"},
    {"an irregular record with another extra",
     {LOOP(1, 1, 0), {0, 1, 0}, IRR, {1, 1, 2}},
     4,
     "record 3, irregular record 0 of the loop descriptor at record 0, has id 1 and extra 2, its "
     "template 0 id 1 and extra 0"},
    {"a time mark where an irregular record belongs",
     {LOOP(1, 1, 0), {0, 1, 0}, IRR, {1, PES_ID_TIME, 0}},
     4,
     "record 3, irregular record 0 of the loop descriptor at record 0, has id 4294967040 and "
     "extra 0"},
};

static void test_encoder_rejects(void **state)
{
    (void)state;
    struct pes_error err;
    struct pes_trace_encoder *e = pes_trace_encoder_new(NULL, &err);
    assert_non_null(e);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        if (pes_trace_encoder_records(e, 0, c->recs, c->n, &err) != -1)
            fail_msg("%s: accepted", c->what);
        assert_int_equal(err.code, PES_ERR_ARG);
        if (!strstr(err.message, c->message))
            fail_msg("%s: message '%s' lacks '%s'", c->what, err.message, c->message);
        size_t size;
        pes_trace_encoder_output(e, &size);
        assert_int_equal(size, 0);
    }
    pes_trace_encoder_free(e);
}

/* ------------------------------------------------------------ forged files */

/* HEADER, MODULE and THREAD blocks of `version`. */
static void forge_tables(struct pes_buf *f, uint16_t version)
{
    struct pes_trace_info info;
    tt_default_info(&info);
    struct pes_buf p = {0};
    assert_int_equal(pes_ser_info(&p, &info), 0);
    tt_forge_block(f, version, PES_BLOCK_HEADER, 0, 1, &p);
    struct pes_site sites[N_SITES];
    for (uint32_t i = 0; i < N_SITES; i++)
        sites[i] = (struct pes_site){i, BB_ID, PES_KIND_LOAD, 0, 1, 8, 1, "t.c", "f"};
    struct pes_bb bb = {.id = BB_ID,
                        .n_sites = N_SITES,
                        .ops = {0},
                        .flags = 0,
                        .function = "f",
                        .label = "for.body"};
    struct pes_module m = {0, N_SITES, 1, "t.c", sites, &bb};
    p.len = 0;
    assert_int_equal(pes_ser_module(&p, &m, version), 0);
    tt_forge_block(f, version, PES_BLOCK_MODULE, 0, N_SITES + 1, &p);
    struct pes_thread t = {0, UINT32_MAX, 100, -1, -1, 0};
    p.len = 0;
    assert_int_equal(pes_ser_thread(&p, &t), 0);
    tt_forge_block(f, version, PES_BLOCK_THREAD, 0, 1, &p);
    pes_buf_free(&p);
}

/* An ACCESS block of thread 0 storing recs[0..n) with header count `count`
 * (version 2: after the stored count `stored`). Returns its offset. */
static uint64_t forge_access(struct pes_buf *f, uint16_t version, const struct pes_record *recs,
                             size_t n, uint32_t count, uint32_t stored)
{
    struct pes_access_codec *c = pes_access_codec_new();
    struct pes_buf p = {0};
    if (version >= 2)
        assert_int_equal(pes_buf_u32(&p, stored), 0);
    assert_int_equal(pes_access_encode(c, recs, n, &p), 0);
    uint64_t at = tt_forge_block(f, version, PES_BLOCK_ACCESS, 0, count, &p);
    pes_buf_free(&p);
    pes_access_codec_free(c);
    return at;
}

/* The file must fail with PES_ERR_FORMAT, "offset OFF: ACCESS block: " and
 * `what`, read sequentially (raw or not) and through the block index. */
static void expect_format_error(const struct pes_buf *f, uint64_t off, const char *what)
{
    char want[300];
    snprintf(want, sizeof want, "forged.pes: offset %llu: ACCESS block: %s",
             (unsigned long long)off, what);
    struct pes_error err;
    for (int mode = 0; mode < 3; mode++) {
        struct pes_trace_reader *r =
            pes_trace_reader_open_memory(f->data, f->len, "forged.pes", &err);
        assert_non_null(r);
        pes_trace_reader_set_raw(r, mode == 1);
        struct pes_block b;
        int rc = 0;
        if (mode < 2) {
            while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
                ;
        } else {
            struct pes_block_ref *refs;
            size_t n;
            assert_int_equal(pes_trace_reader_index(r, &refs, &n, &err), 0);
            for (size_t i = 0; i < n && rc == 0; i++)
                if (refs[i].type == PES_BLOCK_ACCESS)
                    rc = pes_trace_reader_block_at(r, &refs[i], &b, &err) < 0 ? -1 : 0;
            free(refs);
        }
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, PES_ERR_FORMAT);
        assert_int_equal(err.offset, off);
        if (!strstr(err.message, want))
            fail_msg("mode %d: message '%s' lacks '%s'", mode, err.message, want);
        pes_trace_reader_close(r);
    }
}

struct forged {
    const char *what;
    struct pes_record recs[8];
    size_t n;
    uint32_t count, stored; /* header count, stored-count field */
    const char *message;
};

static const struct forged forged_cases[] = {
    {"cut group",
     {{1, 0, 0}, LOOP(5, 2, 0), {0, 1, 0}, {0, 2, 0}, STEP(1)},
     5,
     6,
     5,
     "record 1, a loop descriptor, is cut: its 2 templates and 2 steps need 4 records, only 3 "
     "follow it"},
    {"m = 0",
     {LOOP(5, 0, 0), {0, 1, 0}, STEP(1)},
     3,
     5,
     3,
     "record 0, a loop descriptor, has m = 0 records per iteration"},
    {"phase = m",
     {LOOP(5, 1, 1), {0, 1, 0}, STEP(1)},
     3,
     5,
     3,
     "record 0, a loop descriptor, has phase 1, not below m = 1"},
    {"step where a template belongs",
     {LOOP(5, 2, 0), {0, 1, 0}, STEP(1), STEP(1), STEP(1)},
     5,
     5,
     5,
     "record 2, template 1 of the loop descriptor at record 0, has the control id 0xffffff09"},
    {"stray step",
     {{1, 0, 0}, STEP(8)},
     2,
     2,
     2,
     "record 1 is a LOOP_STEP outside a loop descriptor"},
    {"expands to fewer than the header",
     {LOOP(5, 1, 0), {0, 1, 0}, STEP(1)},
     3,
     6,
     3,
     "its 3 stored records expand to 5 records, its header says 6"},
    {"expands to more than the header",
     {LOOP(5, 1, 0), {0, 1, 0}, STEP(1), {0, 2, 0}},
     4,
     5,
     4,
     "its 4 stored records expand to more than its header's 5 records"},
    {"a group of 2^63 records",
     {LOOP(1ull << 63, 1, 0), {0, 1, 0}, STEP(1)},
     3,
     5,
     3,
     "its 3 stored records expand to more than its header's 5 records"},
    {"no group, counts differ",
     {{1, 0, 0}, {2, 0, 0}},
     2,
     3,
     2,
     "2 records stored and no loop descriptor, the header says 3"},
    {"stored count above the limit",
     {{1, 0, 0}},
     1,
     1,
     (1u << 21) + 1,
     "more records stored than the format allows (2^21)"},
    {"stored count above the header's, payload consistent",
     {{1, 0, 0}, {2, 0, 0}},
     2,
     2,
     3,
     "3 records stored and no loop descriptor, the header says 2"},
    {"stored count disagrees with the payload",
     {{1, 0, 0}, {2, 0, 0}},
     2,
     2,
     9,
     "ACCESS payload shorter than its header and non-zero bitmaps"},
};

static void test_forged_malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof forged_cases / sizeof forged_cases[0]; i++) {
        const struct forged *c = &forged_cases[i];
        struct pes_buf f = {0};
        forge_tables(&f, 2);
        const struct pes_record ok[] = {{1, 0, 0}, LOOP(3, 1, 0), {0, 1, 0}, STEP(4)};
        forge_access(&f, 2, ok, 4, 4, 4); /* a good block first: the offset names the bad one */
        uint64_t off = forge_access(&f, 2, c->recs, c->n, c->count, c->stored);
        print_message("%s\n", c->what);
        expect_format_error(&f, off, c->message);
        pes_buf_free(&f);
    }
}

static const struct forged forged_mixed_cases[] = {
    {"irregular records cut by the block's end",
     {LOOP(4, 2, 0), {0, 1, 0}, {0, 2, 0}, STEP(4), IRR, {1, 2, 0}},
     6,
     4,
     6,
     "record 0, a loop descriptor, is cut: its 2 irregular records should follow its steps, only "
     "1 do"},
    {"an irregular record of another site",
     {LOOP(1, 1, 0), {0, 1, 0}, IRR, {4, 2, 0}},
     4,
     1,
     4,
     "record 3, irregular record 0 of the loop descriptor at record 0, has id 2 and extra 0, its "
     "template 0 id 1 and extra 0"},
    {"irregular step with a step",
     {LOOP(1, 1, 0), {0, 1, 0}, {8, PES_ID_LOOP_STEP, PES_LOOP_STEP_IRREGULAR}, {4, 1, 0}},
     4,
     1,
     4,
     "record 2, step 0 of the loop descriptor at record 0, is irregular but not 0"},
    {"a step where an irregular record belongs",
     {LOOP(2, 1, 0), {1, 1, 0}, IRR, {1, 1, 0}, STEP(2)},
     5,
     2,
     5,
     "record 4, irregular record 1 of the loop descriptor at record 0, has id 4294967049 and "
     "extra 0"},
};

/* Mixed groups (version 3) that are malformed; and one in a version-2
 * block, where irregular steps did not exist. */
static void test_forged_mixed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof forged_mixed_cases / sizeof forged_mixed_cases[0]; i++) {
        const struct forged *c = &forged_mixed_cases[i];
        struct pes_buf f = {0};
        forge_tables(&f, 3);
        const struct pes_record ok[] = {{1, 0, 0}, LOOP(2, 1, 0), {4, 1, 0},
                                        IRR,       {4, 1, 0},     {2, 1, 0}};
        forge_access(&f, 3, ok, 6, 3, 6); /* a good block first: the offset names the bad one */
        uint64_t off = forge_access(&f, 3, c->recs, c->n, c->count, c->stored);
        print_message("%s\n", c->what);
        expect_format_error(&f, off, c->message);
        pes_buf_free(&f);
    }
    struct pes_buf f = {0};
    forge_tables(&f, 2);
    const struct pes_record mixed[] = {LOOP(1, 1, 0), {0, 1, 0}, IRR, {4, 1, 0}};
    uint64_t off = forge_access(&f, 2, mixed, 4, 1, 4);
    expect_format_error(&f, off,
                        "record 2, step 0 of the loop descriptor at record 0, is not a LOOP_STEP "
                        "record with extra 0 (id 0xffffff09, extra 1)");
    pes_buf_free(&f);
}

/* A version-2 ACCESS payload too short for its stored count. */
static void test_forged_short_payload(void **state)
{
    (void)state;
    struct pes_buf f = {0}, p = {0};
    forge_tables(&f, 2);
    assert_int_equal(pes_buf_u16(&p, 0), 0);
    uint64_t off = tt_forge_block(&f, 2, PES_BLOCK_ACCESS, 0, 0, &p);
    expect_format_error(&f, off, "ACCESS payload shorter than its stored-record count");
    pes_buf_free(&f);
    pes_buf_free(&p);
}

/* ------------------------------------------------------------ damaged group payloads */

/* The byte of record `rec`'s residual in `column` (0 id, 1 addr, 2 extra),
 * byte plane `plane`, in a version-2+ ACCESS payload (stored count, then
 * docs/trace-format.md §3): found from the payload's own header and bitmaps,
 * so the test damages exactly the residual it means. */
static uint8_t *residual_byte(struct pes_buf *p, size_t n, int column, size_t rec, int plane)
{
    const uint8_t *h = p->data + 4;
    uint32_t mask = pes_load_u32(h);
    size_t k[3] = {pes_load_u32(h + 4), pes_load_u32(h + 8), pes_load_u32(h + 12)};
    size_t nb = (n + 7) / 8;
    const uint8_t *bm = h + 16 + (size_t)column * nb;
    assert_true(bm[rec >> 3] >> (rec & 7) & 1); /* the residual is stored */
    size_t rank = 0;
    for (size_t i = 0; i < rec; i++)
        rank += bm[i >> 3] >> (i & 7) & 1;
    static const int first[3] = {0, 4, 12}, width[3] = {4, 8, 4};
    size_t at = 4 + 16 + 3 * nb;
    for (int c = 0; c <= column; c++)
        for (int b = 0; b < width[c]; b++) {
            if (!(mask >> (first[c] + b) & 1))
                continue;
            if (c == column && b == plane)
                return p->data + at + rank;
            at += k[c];
        }
    fail_msg("plane %d of column %d is not in the payload", plane, column);
    return NULL;
}

/* A block of thread 0 with a plain record, an affine group of m = 2 (R = 4),
 * a mixed group of m = 2 (R = 2: one irregular record) and a plain record:
 * 1 + 5 + 6 + 1 = 13 stored records for 1 + 4 + 2 + 1 = 8. */
enum { DAMAGE_N = 13, DAMAGE_COUNT = 8 };
static const struct pes_record damage_recs[DAMAGE_N] = {
    {0x40, 3, 0}, LOOP(4, 2, 0),  {0x100, 1, 0}, {0x200, 2, 0},  STEP(8),
    STEP(16),     LOOP(2, 2, 0),  {0x300, 4, 0}, {0x9000, 5, 0}, STEP(4),
    IRR,          {0x9000, 5, 0}, {0x48, 3, 0}};

static void encode_damage_block(struct pes_buf *p)
{
    struct pes_access_codec *c = pes_access_codec_new();
    p->len = 0;
    assert_int_equal(pes_buf_u32(p, DAMAGE_N), 0);
    assert_int_equal(pes_access_encode(c, damage_recs, DAMAGE_N, p), 0);
    pes_access_codec_free(c);
    assert_true(pes_load_u32(p->data + 4) & 1u << 17); /* groups predicted: §3.5 */
}

struct damage {
    const char *what;
    int column;
    size_t rec;
    int plane;
    uint8_t value;
    const char *message;
};

/* Residual values: the codec's prediction (§3.1, §3.5) gives each. The
 * LOOP record's extra is raw (m | phase << 16); its R, predicted from a
 * fresh entry, is zigzag(R) = 2R; the first step's id residual is the
 * LOOP_STEP id itself (its site's entry has no successor yet), and the
 * irregular step's extra is raw. */
static const struct damage damages[] = {
    {"m of the first group made 0", 2, 1, 0, 0,
     "record 1, a loop descriptor, has m = 0 records per iteration"},
    {"m of the first group made 1", 2, 1, 0, 1,
     "record 3, step 0 of the loop descriptor at record 1, is not a LOOP_STEP record with extra "
     "0 or 1 (id 0x00000002, extra 0)"},
    {"m of the first group made 3", 2, 1, 0, 3,
     "record 4, template 2 of the loop descriptor at record 1, has the control id 0xffffff09"},
    {"m of the first group made 65", 2, 1, 0, 65,
     "record 1, a loop descriptor, has m = 65 records per iteration"},
    {"R of the first group made 5", 1, 1, 0, 10,
     "its 13 stored records expand to more than its header's 8 records"},
    /* the second LOOP's R is predicted from the first's (stride 0, residual
     * zigzag(2 - 4)): R = 3 makes it 1, whose irregular position holds no
     * record, so its template's address must be 0 */
    {"R of the first group made 3", 1, 1, 0, 6,
     "record 8, template 1 of the loop descriptor at record 6, is irregular with no record in "
     "the group, its address 0x9000 not 0"},
    {"the first step's id made LOOP", 0, 4, 0, 0x08,
     "record 4, step 0 of the loop descriptor at record 1, is not a LOOP_STEP record with extra "
     "0 or 1 (id 0xffffff08, extra 0)"},
    {"the irregular step made affine-looking (extra 3)", 2, 10, 0, 3,
     "record 10, step 1 of the loop descriptor at record 6, is not a LOOP_STEP record with "
     "extra 0 or 1 (id 0xffffff09, extra 3)"},
};

/* An ACCESS block with group prediction (plane-mask bit 17) whose group
 * payload is damaged past the zstd checksum (a forged or miswritten file):
 * a format error naming the block's offset, read every way. The undamaged
 * block reads back as its records, so each damage is what fails. */
static void test_damaged_group_payload(void **state)
{
    (void)state;
    struct pes_buf p = {0};
    for (size_t i = 0; i < sizeof damages / sizeof damages[0]; i++) {
        const struct damage *d = &damages[i];
        struct pes_buf f = {0};
        forge_tables(&f, PES_TRACE_VERSION);
        encode_damage_block(&p);
        tt_forge_block(&f, PES_TRACE_VERSION, PES_BLOCK_ACCESS, 0, DAMAGE_COUNT, &p);
        if (i == 0) { /* the undamaged twin reads back, raw */
            struct pes_error err;
            struct pes_trace_reader *r =
                pes_trace_reader_open_memory(f.data, f.len, "forged.pes", &err);
            assert_non_null(r);
            pes_trace_reader_set_raw(r, 1);
            struct pes_block b;
            int seen = 0;
            while (pes_trace_reader_next(r, &b, &err) == 1)
                if (b.type == PES_BLOCK_ACCESS) {
                    assert_records_equal(b.records, b.n, damage_recs, DAMAGE_N);
                    assert_int_equal(b.count, DAMAGE_COUNT);
                    seen++;
                }
            assert_int_equal(err.code, PES_OK);
            assert_int_equal(seen, 1);
            pes_trace_reader_close(r);
        }
        *residual_byte(&p, DAMAGE_N, d->column, d->rec, d->plane) = d->value;
        uint64_t off = tt_forge_block(&f, PES_TRACE_VERSION, PES_BLOCK_ACCESS, 0, DAMAGE_COUNT, &p);
        print_message("%s\n", d->what);
        expect_format_error(&f, off, d->message);
        pes_buf_free(&f);
    }
    pes_buf_free(&p);
}

/* Every byte of the group payload XORed with every single bit: the reader
 * either reads the block (a damaged address is still an address) or fails
 * with a format error naming the damaged block; never anything else (the
 * ASan build checks it reads nothing out of bounds). */
static void test_damaged_group_sweep(void **state)
{
    (void)state;
    struct pes_buf p = {0};
    encode_damage_block(&p);
    size_t size = p.len, errors = 0, reads = 0;
    for (size_t at = 4; at < size; at++)
        for (int bit = 0; bit < 8; bit++) {
            encode_damage_block(&p);
            p.data[at] ^= (uint8_t)(1u << bit);
            struct pes_buf f = {0};
            forge_tables(&f, PES_TRACE_VERSION);
            uint64_t off =
                tt_forge_block(&f, PES_TRACE_VERSION, PES_BLOCK_ACCESS, 0, DAMAGE_COUNT, &p);
            struct pes_error err;
            struct pes_trace_reader *r =
                pes_trace_reader_open_memory(f.data, f.len, "swept.pes", &err);
            assert_non_null(r);
            struct pes_block b;
            int rc;
            while ((rc = pes_trace_reader_next(r, &b, &err)) == 1)
                ;
            if (rc < 0) {
                if (err.code != PES_ERR_FORMAT || err.offset != off)
                    fail_msg("byte %zu bit %d: code %d offset %llu: %s", at, bit, (int)err.code,
                             (unsigned long long)err.offset, err.message);
                errors++;
            } else {
                reads++;
            }
            pes_trace_reader_close(r);
            pes_buf_free(&f);
        }
    print_message("%zu damaged payloads: %zu format errors, %zu read\n", errors + reads, errors,
                  reads);
    assert_true(errors > 0); /* the header, bitmaps and group shape are checked */
    pes_buf_free(&p);
}

/* Version 1: blocks without the stored count read as before; loop records
 * did not exist, so one in a version-1 file is an error; a version-2 block
 * in a version-1 file is too. */
/* The encoder finds a record's predictor entry through its predecessor's
 * (where the successor predictor was right) instead of hashing the id. A
 * block of 3000 sparse ids, mostly following a fixed successor map with
 * random switches, grows the table three times mid-block: the decoder, which
 * always hashes, must get every record back; the block's bytes must equal
 * those of a fresh codec when the codec comes from an earlier, larger block
 * (remembered entries of the old generation are dead); and telling the codec
 * that the block has no group must give pes_access_encode's bytes. */
static void test_codec_successor_entries(void **state)
{
    (void)state;
    enum { N = 40000, IDS = 3000 };
    struct pes_record *recs = malloc(N * sizeof *recs), *back = malloc(N * sizeof *back);
    uint64_t *last = calloc(IDS, sizeof *last);
    assert_non_null(recs);
    assert_non_null(back);
    assert_non_null(last);
    uint64_t seed = 27;
    uint32_t cur = 0;
    for (size_t i = 0; i < N; i++) {
        /* 80 %: the successor map (k -> 7k+1), else any id */
        cur = tt_rand(&seed) % 5 ? (cur * 7 + 1) % IDS : (uint32_t)(tt_rand(&seed) % IDS);
        last[cur] += tt_rand(&seed) % 3 ? 8 : tt_rand(&seed) % 4096; /* strides, then jumps */
        recs[i] = (struct pes_record){.addr = 0x7f0000000000ull + ((uint64_t)cur << 24) + last[cur],
                                      .id = 1000 + cur * 7919u,
                                      .extra = (uint32_t)(i % 11 == 0)};
    }
    for (int grouped = 0; grouped < 2; grouped++) {
        struct pes_access_codec *fresh = pes_access_codec_new(), *used = pes_access_codec_new();
        struct pes_buf a = {0}, b = {0}, plain = {0};
        assert_int_equal(pes_access_encode_groups(used, recs, N, grouped, &b), 0); /* grows it */
        b.len = 0;
        assert_int_equal(pes_access_encode_groups(fresh, recs + N / 2, N / 2, grouped, &a), 0);
        assert_int_equal(pes_access_encode_groups(used, recs + N / 2, N / 2, grouped, &b), 0);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.data, b.data, a.len);
        const char *why = NULL;
        assert_int_equal(pes_access_decode(fresh, a.data, a.len, N / 2, back, &why), 0);
        assert_memory_equal(back, recs + N / 2, (N / 2) * sizeof *back);
        a.len = 0;
        assert_int_equal(pes_access_encode_groups(fresh, recs, N, grouped, &a), 0);
        assert_int_equal(pes_access_decode(used, a.data, a.len, N, back, &why), 0);
        assert_memory_equal(back, recs, N * sizeof *back);
        if (!grouped) {
            assert_int_equal(pes_access_encode(used, recs, N, &plain), 0);
            assert_int_equal(plain.len, a.len);
            assert_memory_equal(plain.data, a.data, a.len);
        }
        pes_buf_free(&a);
        pes_buf_free(&b);
        pes_buf_free(&plain);
        pes_access_codec_free(fresh);
        pes_access_codec_free(used);
    }
    free(last);
    free(back);
    free(recs);
}

static void test_version1(void **state)
{
    (void)state;
    const struct pes_record recs[] = {
        {7, PES_ID_TIME, 0}, {0x10, 0, 0}, {0, BB_ID, 0}, {0x18, 0, 4}};
    struct pes_buf f = {0};
    forge_tables(&f, 1);
    forge_access(&f, 1, recs, 4, 4, 0);
    struct pes_error err;
    struct pes_trace_reader *r = pes_trace_reader_open_memory(f.data, f.len, "v1.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_info(r)->version, 1);
    struct pes_block b;
    int seen = 0;
    while (pes_trace_reader_next(r, &b, &err) == 1)
        if (b.type == PES_BLOCK_ACCESS) {
            assert_records_equal(b.records, b.n, recs, 4);
            assert_int_equal(b.count, 4);
            seen++;
        }
    assert_int_equal(seen, 1);
    assert_int_equal(err.code, PES_OK);
    pes_trace_reader_close(r);

    const struct pes_record loop[] = {LOOP(2, 1, 0), {0x10, 0, 0}, STEP(8)};
    uint64_t off = forge_access(&f, 1, loop, 3, 3, 0); /* version 1: stored = count */
    expect_format_error(
        &f, off,
        "record 0 has id 0xffffff08, a loop descriptor record, which version 1 does not have");
    f.len = 0;
    forge_tables(&f, 1);
    const struct pes_record step[] = {{0x10, 0, 0}, STEP(8)};
    off = forge_access(&f, 1, step, 2, 2, 0);
    expect_format_error(
        &f, off,
        "record 1 has id 0xffffff09, a loop descriptor record, which version 1 does not have");

    f.len = 0;
    forge_tables(&f, 1);
    off = forge_access(&f, 2, recs, 4, 4, 4);
    r = pes_trace_reader_open_memory(f.data, f.len, "mixed.pes", &err);
    assert_non_null(r);
    assert_int_equal(pes_trace_reader_next(r, &b, &err), 1); /* MODULE */
    assert_int_equal(pes_trace_reader_next(r, &b, &err), 1); /* THREAD */
    assert_int_equal(pes_trace_reader_next(r, &b, &err), -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(
        strstr(err.message, "ACCESS block has format version 2, the file's HEADER version 1"));
    pes_trace_reader_close(r);
    pes_buf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase_and_negative_step),
        cmocka_unit_test(test_wrap_m1),
        cmocka_unit_test(test_m_max),
        cmocka_unit_test(test_short_groups),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_random_against_oracle),
        cmocka_unit_test(test_twin_counts),
        cmocka_unit_test(test_block_limit),
        cmocka_unit_test(test_encoder_rejects),
        cmocka_unit_test(test_forged_malformed),
        cmocka_unit_test(test_forged_mixed),
        cmocka_unit_test(test_forged_short_payload),
        cmocka_unit_test(test_damaged_group_payload),
        cmocka_unit_test(test_damaged_group_sweep),
        cmocka_unit_test(test_version1),
        cmocka_unit_test(test_codec_successor_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
