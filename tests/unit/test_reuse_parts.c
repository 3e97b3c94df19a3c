/*
 * Unit tests of the runtime model's TLB and prefetch facts read in parts
 * (pes-replay-mpi): a stream cut into 1 to 4 parts at random places, the
 * first part counted as pes-replay counts, each later one on its own and
 * merged in order, gives exactly the counts of the whole stream:
 *  - prefetch_share.h: line changes and prefetchable ones against the same
 *    structure over the whole stream (its own tests check it by hand);
 *  - page_prd.h: the page-granularity reuse histogram against a brute-force
 *    LRU stack per stream (distance = distinct pages since the last access).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "page_prd.h"
#include "prefetch_share.h"

enum { N = 6000, STREAMS = 3 };

struct access {
    uint32_t stream, site, size;
    uint64_t addr;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Walks with constant strides (some repeated, some beyond the reach), jumps
 * and repeats; sizes up to 16 bytes so that some accesses cross a page. */
static void make_stream(struct access *a, size_t n)
{
    uint64_t pos[STREAMS][4] = {{0}};
    int64_t stride[STREAMS][4] = {{0}};
    for (size_t i = 0; i < n; i++) {
        uint32_t s = (uint32_t)(next() % STREAMS), site = (uint32_t)(next() % 4);
        uint64_t r = next() % 100;
        if (r < 5) { /* a new walk */
            pos[s][site] = (next() % 64) * 4096 + (next() % 4096);
            static const int64_t strides[] = {8, 64, 72, -64, 256, 4096, 3000};
            stride[s][site] = strides[next() % 7];
        } else if (r < 85) /* its next step */
            pos[s][site] += (uint64_t)stride[s][site];
        /* else: a repeat */
        a[i] = (struct access){.stream = s,
                               .site = site,
                               .size = (uint32_t)(1 + next() % 16),
                               .addr = pos[s][site] % (1ull << 20)};
    }
}

static void batch_of(const struct access *a, size_t n, struct pes_batch *b, uint32_t *stream,
                     uint32_t *site, uint32_t *size, uint64_t *addr)
{
    for (size_t i = 0; i < n; i++) {
        stream[i] = a[i].stream;
        site[i] = a[i].site;
        size[i] = a[i].size;
        addr[i] = a[i].addr;
    }
    memset(b, 0, sizeof *b);
    b->n = n;
    b->stream = stream;
    b->site = site;
    b->size = size;
    b->addr = addr;
}

/* The parts' cut points: 0 = c[0] < c[1] < ... < c[parts] = n. */
static void cuts(size_t *c, uint32_t parts, size_t n)
{
    c[0] = 0;
    c[parts] = n;
    for (uint32_t k = 1; k < parts; k++)
        c[k] = c[k - 1] + 1 + next() % ((n - c[k - 1]) / (parts - k + 1));
}

static struct access acc[N];
static uint32_t b_stream[N], b_site[N], b_size[N];
static uint64_t b_addr[N];

static void test_prefetch_parts(void **state)
{
    (void)state;
    for (int trial = 0; trial < 20; trial++) {
        make_stream(acc, N);
        struct pes_batch b;
        struct replay_prefetch *whole = replay_prefetch_create(64, 2048);
        batch_of(acc, N, &b, b_stream, b_site, b_size, b_addr);
        assert_int_equal(replay_prefetch_batch(whole, &b), 0);
        uint64_t want_changes, want_pf;
        replay_prefetch_counts(whole, &want_changes, &want_pf);
        assert_true(want_pf > 0 && want_pf < want_changes); /* the stream exercises both */
        for (uint32_t parts = 1; parts <= 4; parts++) {
            size_t c[5];
            cuts(c, parts, N);
            struct replay_prefetch *first = replay_prefetch_create(64, 2048);
            for (uint32_t k = 0; k < parts; k++) {
                struct replay_prefetch *p = k ? replay_prefetch_create(64, 2048) : first;
                if (k)
                    replay_prefetch_set_later(p);
                batch_of(acc + c[k], c[k + 1] - c[k], &b, b_stream, b_site, b_size, b_addr);
                assert_int_equal(replay_prefetch_batch(p, &b), 0);
                if (!k)
                    continue;
                size_t len = replay_prefetch_pack(p, NULL, 0);
                unsigned char *buf = malloc(len);
                assert_int_equal(replay_prefetch_pack(p, buf, len), len);
                assert_int_equal(replay_prefetch_merge(first, buf, len), 0);
                /* a cut part is refused and changes nothing */
                assert_int_equal(replay_prefetch_merge(first, buf, len - 1), -1);
                free(buf);
                replay_prefetch_destroy(p);
            }
            uint64_t changes, pf;
            replay_prefetch_counts(first, &changes, &pf);
            assert_int_equal(changes, want_changes);
            assert_int_equal(pf, want_pf);
            replay_prefetch_destroy(first);
        }
        replay_prefetch_destroy(whole);
    }
}

/* Brute force: per stream, the pages in LRU order (most recent last). */
static void brute_pages(const struct access *a, size_t n, unsigned shift, struct pes_rd_hist *h)
{
    static uint64_t stack[STREAMS][N * 2];
    size_t depth[STREAMS] = {0};
    assert_int_equal(pes_rd_hist_init(h, 0, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = a[i].stream;
        uint64_t first = a[i].addr >> shift, last = (a[i].addr + a[i].size - 1) >> shift;
        for (uint64_t pg = first; pg <= last; pg++) {
            size_t j = depth[s];
            while (j > 0 && stack[s][j - 1] != pg)
                j--;
            if (j == 0) { /* cold */
                h->cold++;
                h->total++;
            } else {
                uint64_t d = depth[s] - j; /* distinct pages since */
                assert_int_equal(pes_rd_hist_add(h, d), 0);
                memmove(&stack[s][j - 1], &stack[s][j], (depth[s] - j) * sizeof(uint64_t));
                depth[s]--;
            }
            stack[s][depth[s]++] = pg;
        }
    }
}

static void assert_hist_equal(const struct pes_rd_hist *a, const struct pes_rd_hist *b)
{
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->cold, b->cold);
    assert_true(a->sum == b->sum);
    for (uint64_t d = 0; d < 300; d++)
        assert_int_equal(pes_rd_hist_exact(a, d), pes_rd_hist_exact(b, d));
    for (int k = 0; k < PES_RD_HIST_LOG2_BINS; k++)
        assert_int_equal(a->log2[k], b->log2[k]);
}

static void test_page_prd_parts(void **state)
{
    (void)state;
    struct pes_error err = {0};
    for (int trial = 0; trial < 10; trial++) {
        make_stream(acc, N);
        struct pes_rd_hist want;
        brute_pages(acc, N, 12, &want);
        assert_true(want.total > want.cold && want.cold > 0);
        for (uint32_t parts = 1; parts <= 4; parts++) {
            size_t c[5];
            cuts(c, parts, N);
            struct replay_page_prd *first = replay_page_prd_create(4096, STREAMS, 0, &err);
            assert_non_null(first);
            for (uint32_t k = 0; k < parts; k++) {
                struct replay_page_prd *p =
                    k ? replay_page_prd_create(4096, STREAMS, 1, &err) : first;
                assert_non_null(p);
                struct pes_batch b;
                batch_of(acc + c[k], c[k + 1] - c[k], &b, b_stream, b_site, b_size, b_addr);
                assert_int_equal(replay_page_prd_batch(p, &b, &err), 0);
                if (!k)
                    continue;
                assert_int_equal(replay_page_prd_end(p, &err), 0);
                size_t len = replay_page_prd_pack(p, NULL, 0);
                unsigned char *buf = malloc(len);
                assert_int_equal(replay_page_prd_pack(p, buf, len), len);
                struct pes_error e = {0}; /* a cut part is refused and changes nothing */
                assert_int_equal(replay_page_prd_merge(first, buf, len - 1, &e), -1);
                assert_int_equal(replay_page_prd_merge(first, buf, len, &err), 0);
                free(buf);
                replay_page_prd_destroy(p);
            }
            struct pes_rd_hist got;
            assert_int_equal(replay_page_prd_total(first, &got, &err), 0);
            assert_hist_equal(&got, &want);
            pes_rd_hist_free(&got);
            replay_page_prd_destroy(first);
        }
        pes_rd_hist_free(&want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefetch_parts),
        cmocka_unit_test(test_page_prd_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
