/* test_parda.c — chunked (PARDA) reuse distances against a brute-force LRU
 * stack, summary packing, the worker pool, pes_profiles on 1..8 threads
 * against the sequential profiles, and pes_profiles split over simulated
 * processes (windows summarised, packed and absorbed: the MPI replay). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "histogram.h"
#include "parda.h"
#include "profiles.h"
#include "reuse_distance.h"
#include "reuse_oracle.h"

#define COLD PES_REUSE_COLD

/* ---------------------------------------------------------- oracle */

/* The whole stream through the brute-force stack, into c. */
static void oracle(const uint64_t *key, const uint32_t *tag, size_t n, struct pes_parda_counts *c)
{
    struct lru s = {calloc(n + 1, sizeof(uint64_t)), 0};
    assert_int_equal(pes_parda_counts_init(c, 64, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        uint64_t d = lru_push(&s, key[i]);
        assert_int_equal(pes_rd_hist_add(&c->hist, d), 0);
        if (tag) {
            if (tag[i] >= c->n_tags) {
                c->tag = realloc(c->tag, (tag[i] + 1) * sizeof *c->tag);
                memset(c->tag + c->n_tags, 0, (tag[i] + 1 - c->n_tags) * sizeof *c->tag);
                c->n_tags = c->cap_tags = tag[i] + 1;
            }
            c->tag[tag[i]].accesses++;
            if (d == COLD)
                c->tag[tag[i]].cold++;
            else
                c->tag[tag[i]].sum += d;
        }
    }
    free(s.keys);
}

static void counts_equal(const struct pes_parda_counts *a, const struct pes_parda_counts *b)
{
    assert_hist_equal(&a->hist, &b->hist);
    uint32_t n = a->n_tags > b->n_tags ? a->n_tags : b->n_tags;
    for (uint32_t t = 0; t < n; t++) {
        struct pes_parda_tag_count z = {0};
        const struct pes_parda_tag_count *x = t < a->n_tags ? &a->tag[t] : &z;
        const struct pes_parda_tag_count *y = t < b->n_tags ? &b->tag[t] : &z;
        assert_int_equal(x->accesses, y->accesses);
        assert_int_equal(x->cold, y->cold);
        assert_int_equal(x->sum, y->sum);
    }
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---------------------------------------------------------- streams */

enum { S_RANDOM, S_CYCLIC, S_EDGES, S_HOT_COLD, N_SHAPES };

/* n keys of one shape; tags are key-dependent so a tag's counts mix chunks. */
static void make_stream(int shape, size_t n, uint64_t seed, uint64_t *key, uint32_t *tag)
{
    uint64_t r = seed | 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t k;
        switch (shape) {
        case S_RANDOM: /* small space: reuses within and across chunks */
            k = rng_next(&r) % 97;
            break;
        case S_CYCLIC: /* a sweep longer than most chunks */
            k = i % 151;
            break;
        case S_EDGES: /* keys 1000.. only in the first and last tenth */
            k = (i < n / 10 || i >= n - n / 10) ? 1000 + rng_next(&r) % 40 : rng_next(&r) % 60;
            break;
        default: /* a few keys reused in every chunk, many touched once */
            k = rng_next(&r) % 4 == 0 ? rng_next(&r) % 5 : 100000 + i;
            break;
        }
        key[i] = k * 977 + 3; /* not dense, not zero */
        if (tag)
            tag[i] = (uint32_t)(k % 7);
    }
}

/* Summaries of chunks of length len (the last shorter), resolved in order. */
static void chunked(const uint64_t *key, const uint32_t *tag, size_t n, size_t len,
                    uint32_t min_window, struct pes_parda_counts *out)
{
    struct pes_reuse_options ro = {.min_window = min_window};
    struct pes_reuse_options go = {.granule = 1, .min_window = min_window};
    struct pes_reuse *g = pes_reuse_create(&go, NULL);
    assert_non_null(g);
    assert_int_equal(pes_parda_counts_init(out, 64, NULL), 0);
    for (size_t at = 0; at < n; at += len) {
        size_t m = n - at < len ? n - at : len;
        struct pes_parda_summary s;
        assert_int_equal(pes_parda_summarize(&s, key + at, tag ? tag + at : NULL, m, &ro, 64, NULL),
                         0);
        assert_int_equal(s.length, m);
        assert_int_equal(pes_parda_resolve(g, &s, at + m >= n, out, NULL), 0);
        pes_parda_summary_free(&s);
    }
    pes_reuse_destroy(g);
}

static void test_chunked_vs_oracle(void **state)
{
    (void)state;
    static const size_t lens[] = {1, 2, 3, 7, 16, 61, 200, 1000, 5000};
    const size_t n = 4000;
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *tag = malloc(n * sizeof *tag);
    for (int shape = 0; shape < N_SHAPES; shape++) {
        make_stream(shape, n, 12345 + (uint64_t)shape, key, tag);
        struct pes_parda_counts want;
        oracle(key, tag, n, &want);
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            for (int tagged = 0; tagged < 2; tagged++) {
                struct pes_parda_counts got;
                chunked(key, tagged ? tag : NULL, n, lens[li], li & 1 ? 64 : 0, &got);
                if (tagged)
                    counts_equal(&got, &want);
                else
                    assert_hist_equal(&got.hist, &want.hist);
                pes_parda_counts_free(&got);
            }
        }
        pes_parda_counts_free(&want);
    }
    free(key);
    free(tag);
}

/* A summary's parts, checked by hand on a tiny chunk. */
static void test_summary_parts(void **state)
{
    (void)state;
    /* a b a c b a: pending a b c (first-access order), by last access c b a */
    const uint64_t key[6] = {10, 20, 10, 30, 20, 10};
    const uint32_t tag[6] = {0, 1, 0, 2, 1, 0};
    struct pes_parda_summary s;
    assert_int_equal(pes_parda_summarize(&s, key, tag, 6, NULL, 0, NULL), 0);
    assert_int_equal(s.n_distinct, 3);
    assert_int_equal(s.pending_key[0], 10);
    assert_int_equal(s.pending_key[1], 20);
    assert_int_equal(s.pending_key[2], 30);
    assert_int_equal(s.pending_tag[2], 2);
    assert_int_equal(s.recency[0], 30);
    assert_int_equal(s.recency[1], 20);
    assert_int_equal(s.recency[2], 10);
    /* in-chunk reuses: a at 2 (d 1), b at 4 (d 2), a at 5 (d 2) */
    assert_int_equal(s.local.hist.total, 3);
    assert_int_equal(pes_rd_hist_exact(&s.local.hist, 1), 1);
    assert_int_equal(pes_rd_hist_exact(&s.local.hist, 2), 2);
    assert_int_equal(s.local.tag[0].accesses, 3);
    assert_int_equal(s.local.tag[0].sum, 3);
    assert_int_equal(s.local.tag[1].sum, 2);
    pes_parda_summary_free(&s);
}

static void test_keys_by_recency(void **state)
{
    (void)state;
    /* a small window forces compactions between the pushes */
    struct pes_reuse_options o = {.granule = 1, .min_window = 64};
    struct pes_reuse *e = pes_reuse_create(&o, NULL);
    struct lru s = {calloc(300, sizeof(uint64_t)), 0};
    uint64_t r = 99;
    for (int i = 0; i < 5000; i++) {
        uint64_t k = rng_next(&r) % 300, d;
        assert_int_equal(pes_reuse_push_key(e, k, &d), 0);
        lru_push(&s, k);
    }
    uint64_t *keys = malloc(s.n * sizeof *keys);
    assert_int_equal(pes_reuse_distinct(e), s.n);
    assert_int_equal(pes_reuse_keys_by_recency(e, keys), 0);
    for (size_t i = 0; i < s.n; i++)
        assert_int_equal(keys[i], s.keys[s.n - 1 - i]); /* oldest first */
    free(keys);
    free(s.keys);
    pes_reuse_destroy(e);
}

/* ---------------------------------------------------------- pack */

static void test_pack_roundtrip(void **state)
{
    (void)state;
    const size_t n = 3000, len = 500;
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *tag = malloc(n * sizeof *tag);
    make_stream(S_EDGES, n, 7, key, tag);
    struct pes_parda_counts direct, via;
    chunked(key, tag, n, len, 0, &direct);
    /* the same chunks, each summary packed and unpacked before resolution */
    struct pes_reuse_options go = {.granule = 1};
    struct pes_reuse *g = pes_reuse_create(&go, NULL);
    assert_int_equal(pes_parda_counts_init(&via, 64, NULL), 0);
    for (size_t at = 0; at < n; at += len) {
        struct pes_parda_summary s, u;
        assert_int_equal(pes_parda_summarize(&s, key + at, tag + at, len, NULL, 64, NULL), 0);
        s.index = at / len;
        size_t size = pes_parda_summary_packed_size(&s);
        unsigned char *buf = malloc(size + 1);
        assert_int_equal(pes_parda_summary_pack(&s, buf, size - 1), 0); /* too small */
        assert_int_equal(pes_parda_summary_pack(&s, buf, size), size);
        assert_int_equal(pes_parda_summary_unpack(&u, buf, size, NULL), 0);
        assert_int_equal(u.index, s.index);
        assert_int_equal(u.length, s.length);
        assert_int_equal(u.n_distinct, s.n_distinct);
        assert_memory_equal(u.pending_key, s.pending_key, s.n_distinct * 8);
        assert_memory_equal(u.pending_tag, s.pending_tag, s.n_distinct * 4);
        assert_memory_equal(u.recency, s.recency, s.n_distinct * 8);
        counts_equal(&u.local, &s.local);
        /* a packed copy packs to the same bytes */
        unsigned char *again = malloc(size);
        assert_int_equal(pes_parda_summary_pack(&u, again, size), size);
        assert_memory_equal(again, buf, size);
        free(again);
        /* truncated, too long, corrupt */
        struct pes_parda_summary bad;
        struct pes_error err;
        for (size_t cut = 0; cut < size; cut += 1 + cut / 3)
            assert_int_equal(pes_parda_summary_unpack(&bad, buf, cut, &err), -1);
        buf[size] = 0;
        assert_int_equal(pes_parda_summary_unpack(&bad, buf, size + 1, &err), -1);
        buf[0] ^= 1;
        assert_int_equal(pes_parda_summary_unpack(&bad, buf, size, &err), -1);
        free(buf);
        assert_int_equal(pes_parda_resolve(g, &u, at + len >= n, &via, NULL), 0);
        pes_parda_summary_free(&s);
        pes_parda_summary_free(&u);
    }
    counts_equal(&via, &direct);
    struct pes_parda_counts want;
    oracle(key, tag, n, &want);
    counts_equal(&via, &want);
    pes_parda_counts_free(&want);
    pes_parda_counts_free(&via);
    pes_parda_counts_free(&direct);
    pes_reuse_destroy(g);
    free(key);
    free(tag);
}

/* ---------------------------------------------------------- pool */

static void test_pool_vs_oracle(void **state)
{
    (void)state;
    enum { LANES = 3, N = 6000 };
    uint64_t *key[LANES];
    uint32_t *tag[LANES];
    struct pes_parda_counts want[LANES];
    for (int l = 0; l < LANES; l++) {
        key[l] = malloc(N * sizeof **key);
        tag[l] = malloc(N * sizeof **tag);
        make_stream(l % N_SHAPES, N, 1000 + (uint64_t)l, key[l], tag[l]);
        oracle(key[l], tag[l], N, &want[l]);
    }
    /* forced chunk lengths, then the adaptive scheduling with tiny slices
     * (claims far ahead, chunks grown until G's owner catches up, the split
     * of an ended lane) */
    static const uint64_t fixed[] = {0, 1, 5, 64, 333, 0, 0};
    static const uint32_t slices[] = {0, 0, 0, 0, 0, 40, 7};
    for (uint32_t threads = 1; threads <= 4; threads++) {
        for (size_t f = 0; f < sizeof fixed / sizeof *fixed; f++) {
            struct pes_parda_options o = {
                .threads = threads,
                .n_lanes = LANES,
                .exact_limit = 64,
                .tagged = 1,
                .chunk_fixed = fixed[f],
                .chunk_min = 100,
                .chunk_max = 400,
                .chunk_factor = 2,
                .slice = slices[f],
                .engine = {.min_window = f & 1 ? 64 : 0},
            };
            struct pes_parda *pp = pes_parda_create(&o, NULL);
            assert_non_null(pp);
            /* interleaved pieces of uneven length; lane 2 ends early */
            size_t at[LANES] = {0};
            uint64_t r = 5;
            for (int busy = 1; busy;) {
                busy = 0;
                for (int l = 0; l < LANES; l++) {
                    size_t m = 1 + rng_next(&r) % 700;
                    if (at[l] + m > N)
                        m = N - at[l];
                    if (m)
                        assert_int_equal(pes_parda_push(pp, (uint32_t)l, key[l] + at[l],
                                                        tag[l] + at[l], m, NULL),
                                         0);
                    at[l] += m;
                    busy |= at[l] < N;
                    if (l == 2 && at[l] == N)
                        assert_int_equal(pes_parda_end_lane(pp, 2, NULL), 0);
                }
                if (rng_next(&r) % 8 == 0)
                    assert_int_equal(pes_parda_sync(pp, NULL), 0);
            }
            struct pes_error err;
            assert_int_equal(pes_parda_push(pp, 2, key[2], tag[2], 1, &err), -1); /* ended */
            assert_int_equal(pes_parda_finish(pp, NULL), 0);
            for (int l = 0; l < LANES; l++)
                counts_equal(pes_parda_result(pp, (uint32_t)l), &want[l]);
            struct pes_parda_stats st;
            pes_parda_get_stats(pp, &st);
            if (fixed[f])
                assert_true(st.chunks_split > 3); /* all but the first chunk of a lane */
            if (slices[f] && threads > 1)
                print_message("threads %u slice %u: %llu direct slices, %llu chunks\n", threads,
                              slices[f], (unsigned long long)st.chunks_direct,
                              (unsigned long long)st.chunks_split);
            pes_parda_destroy(pp);
        }
    }
    for (int l = 0; l < LANES; l++) {
        pes_parda_counts_free(&want[l]);
        free(key[l]);
        free(tag[l]);
    }
}

/* push_sync returns each distance and mixes with queued pushes. */
static void test_pool_push_sync(void **state)
{
    (void)state;
    const size_t n = 3000;
    uint64_t *key = malloc(n * sizeof *key);
    make_stream(S_RANDOM, n, 31, key, NULL);
    struct lru s = {calloc(n, sizeof(uint64_t)), 0};
    struct pes_parda_options o = {.threads = 2, .n_lanes = 1, .chunk_fixed = 50, .exact_limit = 64};
    struct pes_parda *pp = pes_parda_create(&o, NULL);
    for (size_t i = 0; i < n; i++) {
        uint64_t want = lru_push(&s, key[i]);
        if (i % 3 == 0) {
            uint64_t d;
            assert_int_equal(pes_parda_push_sync(pp, 0, &key[i], NULL, 1, &d, NULL), 0);
            assert_true(d == want);
        } else {
            assert_int_equal(pes_parda_push(pp, 0, &key[i], NULL, 1, NULL), 0);
        }
    }
    assert_int_equal(pes_parda_finish(pp, NULL), 0);
    struct pes_parda_counts want;
    oracle(key, NULL, n, &want);
    assert_hist_equal(&pes_parda_result(pp, 0)->hist, &want.hist);
    pes_parda_counts_free(&want);
    pes_parda_destroy(pp);
    free(s.keys);
    free(key);
}

/* ---------------------------------------------------------- profiles */

#define PS 6 /* streams */

/* A multi-stream trace: stream-private and shared arrays, ranges over
 * several lines, per-site ids, one stream ending early. */
struct trace {
    size_t n;
    uint32_t *stream, *size, *site;
    uint64_t *addr;
};

static struct trace make_trace(size_t n, uint64_t seed)
{
    struct trace t = {n, malloc(n * 4), malloc(n * 4), malloc(n * 4), malloc(n * 8)};
    uint64_t r = seed;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = (uint32_t)(rng_next(&r) % PS);
        if (s == 5 && i > n / 2)
            s = 4; /* stream 5 ends halfway */
        if (s == 0 && rng_next(&r) % 2)
            s = 1; /* uneven shares */
        uint64_t x = rng_next(&r);
        uint64_t a;
        switch (x % 4) {
        case 0:
            a = 0x100000 + (x >> 8) % 4096 * 8;
            break; /* shared */
        case 1:
            a = 0x900000 + (uint64_t)s * 0x10000 + (x >> 8) % 2000 * 8;
            break; /* private */
        case 2:
            a = 0x500000 + i % 700 * 64;
            break; /* sweep */
        default:
            a = 0x700000 + (x >> 8) % 64 * 64 + 60;
            break; /* hot, straddling */
        }
        t.stream[i] = s;
        t.addr[i] = a;
        t.size[i] = x % 4 == 3 ? 8 : (x % 16 == 1 ? 200 : 4);
        t.site[i] = (uint32_t)((x >> 40) % 37) * 3 + (x % 4 == 0 ? 1000 : 0);
    }
    return t;
}

static void trace_free(struct trace *t)
{
    free(t->stream);
    free(t->size);
    free(t->site);
    free(t->addr);
}

static struct pes_profiles *run_split(const struct trace *t, const uint32_t *group_of,
                                      uint32_t n_groups, uint32_t threads, uint64_t chunk,
                                      int single, const struct pes_profiles_split *split)
{
    struct pes_profiles_options o = {.granule = 64,
                                     .n_streams = PS,
                                     .n_groups = n_groups,
                                     .group_of = group_of,
                                     .exact_limit = 64,
                                     .per_site = 1,
                                     .threads = threads,
                                     .chunk = chunk,
                                     .min_window = 128,
                                     .split = split};
    struct pes_profiles *p = pes_profiles_create(&o, NULL);
    assert_non_null(p);
    size_t batch = 777, ended = 0;
    for (size_t at = 0; at < t->n; at += batch) {
        size_t m = t->n - at < batch ? t->n - at : batch;
        if (single) {
            for (size_t i = at; i < at + m; i++)
                assert_int_equal(pes_profiles_push(p, t->stream[i], t->addr[i], t->size[i],
                                                   t->site[i], NULL, NULL, NULL),
                                 0);
        } else {
            assert_int_equal(pes_profiles_push_batch(p, t->stream + at, t->addr + at, t->size + at,
                                                     t->site + at, m, NULL),
                             0);
        }
        if (!ended && at + m > t->n / 2 + 1000) {
            assert_int_equal(pes_profiles_end_stream(p, 5, NULL), 0);
            ended = 1;
        }
    }
    assert_int_equal(pes_profiles_sync(p, NULL), 0);
    pes_profiles_finish(p);
    assert_int_equal(pes_profiles_sync(p, NULL), 0);
    return p;
}

static struct pes_profiles *run_profiles(const struct trace *t, const uint32_t *group_of,
                                         uint32_t n_groups, uint32_t threads, uint64_t chunk,
                                         int single)
{
    return run_split(t, group_of, n_groups, threads, chunk, single, NULL);
}

static int row_cmp(const void *a, const void *b)
{
    const struct pes_site_reuse *x = a, *y = b;
    return x->site < y->site ? -1 : x->site > y->site;
}

static void profiles_equal(const struct pes_profiles *a, const struct pes_profiles *b,
                           uint32_t n_groups)
{
    for (uint32_t s = 0; s < PS; s++)
        assert_hist_equal(pes_profiles_prd(a, s), pes_profiles_prd(b, s));
    for (uint32_t g = 0; g < n_groups; g++)
        assert_hist_equal(pes_profiles_crd(a, g), pes_profiles_crd(b, g));
    size_t na, nb;
    const struct pes_site_reuse *ra = pes_profiles_sites(a, &na), *rb = pes_profiles_sites(b, &nb);
    assert_int_equal(na, nb);
    /* rows are made by the pushing thread: same first-seen order */
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(ra[i].site, rb[i].site);
        assert_int_equal(ra[i].accesses, rb[i].accesses);
        assert_int_equal(ra[i].prd_cold, rb[i].prd_cold);
        assert_int_equal(ra[i].crd_cold, rb[i].crd_cold);
        assert_true(ra[i].prd_sum == rb[i].prd_sum);
        assert_true(ra[i].crd_sum == rb[i].crd_sum);
    }
    (void)row_cmp;
}

static void test_profiles_threads(void **state)
{
    (void)state;
    struct trace t = make_trace(60000, 0x1234567);
    /* groups: {0,1}, {2} alone (aliased), {3,4,5}; then everything in one */
    const uint32_t groups_a[PS] = {0, 0, 1, 2, 2, 2};
    const uint32_t groups_b[PS] = {0, 0, 0, 0, 0, 0};
    const uint32_t *gsets[2] = {groups_a, groups_b};
    const uint32_t ngs[2] = {3, 1};
    for (int gs = 0; gs < 2; gs++) {
        struct pes_profiles *ref = run_profiles(&t, gsets[gs], ngs[gs], 1, 0, 0);
        for (uint32_t threads = 1; threads <= 8; threads++) {
            static const uint64_t chunks[] = {0, 1000, 97};
            for (size_t c = 0; c < 3; c++) {
                struct pes_profiles *p =
                    run_profiles(&t, gsets[gs], ngs[gs], threads, chunks[c], 0);
                profiles_equal(p, ref, ngs[gs]);
                pes_profiles_destroy(p);
            }
        }
        /* single pushes through the pool */
        struct pes_profiles *p = run_profiles(&t, gsets[gs], ngs[gs], 3, 500, 1);
        profiles_equal(p, ref, ngs[gs]);
        pes_profiles_destroy(p);
        pes_profiles_destroy(ref);
    }
    trace_free(&t);
}

/* One stream, one group: the text-trace shape. The CRD is the PRD (aliased),
 * for any thread count, and both match the oracle. */
static void test_profiles_one_stream(void **state)
{
    (void)state;
    const size_t n = 20000;
    uint64_t *key = malloc(n * sizeof *key);
    make_stream(S_HOT_COLD, n, 77, key, NULL);
    struct pes_parda_counts want;
    oracle(key, NULL, n, &want);
    for (uint32_t threads = 1; threads <= 4; threads++) {
        struct pes_profiles_options o = {.granule = 1,
                                         .n_streams = 1,
                                         .n_groups = 1,
                                         .exact_limit = 64,
                                         .threads = threads,
                                         .chunk = threads == 4 ? 0 : 1500};
        struct pes_profiles *p = pes_profiles_create(&o, NULL);
        uint32_t *st = calloc(n, 4), *sz = malloc(n * 4), *site = calloc(n, 4);
        for (size_t i = 0; i < n; i++)
            sz[i] = 1;
        assert_int_equal(pes_profiles_push_batch(p, st, key, sz, site, n, NULL), 0);
        pes_profiles_finish(p);
        assert_hist_equal(pes_profiles_prd(p, 0), &want.hist);
        assert_hist_equal(pes_profiles_crd(p, 0), &want.hist);
        free(st);
        free(sz);
        free(site);
        pes_profiles_destroy(p);
    }
    pes_parda_counts_free(&want);
    free(key);
}

/* pes_profiles_push with distances out, threads on. */
static void test_profiles_push_distances(void **state)
{
    (void)state;
    const uint32_t groups[2] = {0, 0};
    struct pes_profiles_options o = {.granule = 64,
                                     .n_streams = 2,
                                     .n_groups = 1,
                                     .group_of = groups,
                                     .threads = 2,
                                     .chunk = 10,
                                     .per_site = 1};
    struct pes_profiles_options o1 = o;
    o1.threads = 1;
    struct pes_profiles *p = pes_profiles_create(&o, NULL), *q = pes_profiles_create(&o1, NULL);
    uint64_t r = 3;
    for (int i = 0; i < 3000; i++) {
        uint32_t s = (uint32_t)(rng_next(&r) % 2);
        uint64_t a = rng_next(&r) % 100 * 64;
        uint64_t d1, c1, d2, c2;
        if (i % 2) {
            assert_int_equal(pes_profiles_push(p, s, a, 8, (uint32_t)(a % 5), &d1, &c1, NULL), 0);
            assert_int_equal(pes_profiles_push(q, s, a, 8, (uint32_t)(a % 5), &d2, &c2, NULL), 0);
            assert_true(d1 == d2);
            assert_true(c1 == c2);
        } else {
            uint32_t sz = 8, site = (uint32_t)(a % 5);
            assert_int_equal(pes_profiles_push_batch(p, &s, &a, &sz, &site, 1, NULL), 0);
            assert_int_equal(pes_profiles_push_batch(q, &s, &a, &sz, &site, 1, NULL), 0);
        }
    }
    pes_profiles_finish(p);
    pes_profiles_finish(q);
    for (uint32_t s = 0; s < 2; s++)
        assert_hist_equal(pes_profiles_prd(p, s), pes_profiles_prd(q, s));
    assert_hist_equal(pes_profiles_crd(p, 0), pes_profiles_crd(q, 0));
    size_t na, nb;
    const struct pes_site_reuse *ra = pes_profiles_sites(p, &na), *rb = pes_profiles_sites(q, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(ra, rb, na * sizeof *ra);
    pes_profiles_destroy(p);
    pes_profiles_destroy(q);
}

/* ------------------------------------------------- split over processes */

/* The messages between simulated processes, by window. */
struct mailbox {
    uint32_t ranks;
    size_t slots;
    void **buf;
    size_t *len;
    size_t sent, received;
    uint64_t corrupt; /* window whose message is damaged (UINT64_MAX: none) */
};

static int mb_send(void *ctx, uint64_t w, void *buf, size_t len, struct pes_error *err)
{
    (void)err;
    struct mailbox *m = ctx;
    assert_true(w < m->slots);
    assert_int_not_equal(w % m->ranks, 0);
    assert_null(m->buf[w]); /* each window once */
    m->buf[w] = buf;
    m->len[w] = len;
    m->sent++;
    return 0;
}

static int mb_recv(void *ctx, uint64_t w, uint32_t from, void **buf, size_t *len,
                   struct pes_error *err)
{
    struct mailbox *m = ctx;
    assert_int_equal(from, w % m->ranks);
    if (w >= m->slots || !m->buf[w])
        return pes_error_set(err, PES_ERR_ARG, 0, "window %llu was never sent",
                             (unsigned long long)w);
    if (w == m->corrupt)
        ((unsigned char *)m->buf[w])[0] ^= 0xff; /* the magic: not a window message */
    *buf = m->buf[w];
    *len = m->len[w];
    m->buf[w] = NULL;
    m->received++;
    return 0;
}

static void mailbox_init(struct mailbox *m, uint32_t ranks, size_t slots)
{
    *m = (struct mailbox){.ranks = ranks,
                          .slots = slots,
                          .buf = calloc(slots, sizeof(void *)),
                          .len = calloc(slots, sizeof(size_t)),
                          .corrupt = UINT64_MAX};
}

static void mailbox_free(struct mailbox *m)
{
    for (size_t i = 0; i < m->slots; i++)
        free(m->buf[i]);
    free(m->buf);
    free(m->len);
}

/* Ranks 1 .. R-1 push the whole trace and send their windows, then rank 0
 * pushes it and absorbs them; rank 0's profiles are returned. */
static struct pes_profiles *run_ranks(const struct trace *t, const uint32_t *group_of,
                                      uint32_t n_groups, uint32_t ranks, uint64_t window,
                                      struct mailbox *mb)
{
    mailbox_init(mb, ranks, t->n + 1);
    for (uint32_t r = ranks; r-- > 0;) {
        struct pes_profiles_split sp = {.rank = r,
                                        .ranks = ranks,
                                        .window = window,
                                        .send = mb_send,
                                        .recv = mb_recv,
                                        .ctx = mb};
        /* threads are ignored with a split: ask for some anyway */
        struct pes_profiles *p = run_split(t, group_of, n_groups, 3, 0, r % 2, &sp);
        if (r == 0)
            return p;
        pes_profiles_destroy(p);
    }
    return NULL;
}

/* Brute force: the PRD of stream s or the CRD of the streams of group g
 * (granules of 64 bytes, in access order). */
static void oracle_lane(const struct trace *t, const uint32_t *group_of, uint32_t s, uint32_t g,
                        struct pes_parda_counts *c)
{
    size_t n = 0, cap = 1024;
    uint64_t *key = malloc(cap * sizeof *key);
    for (size_t i = 0; i < t->n; i++) {
        if (g == UINT32_MAX ? t->stream[i] != s : group_of[t->stream[i]] != g)
            continue;
        for (uint64_t k = t->addr[i] >> 6; k <= (t->addr[i] + t->size[i] - 1) >> 6; k++) {
            if (n == cap)
                key = realloc(key, (cap *= 2) * sizeof *key);
            key[n++] = k;
        }
    }
    oracle(key, NULL, n, c);
    free(key);
}

static void test_profiles_split(void **state)
{
    (void)state;
    struct trace t = make_trace(60000, 0xfeed5);
    const uint32_t groups_a[PS] = {0, 0, 1, 2, 2, 2};
    const uint32_t groups_b[PS] = {0, 0, 0, 0, 0, 0};
    const uint32_t *gsets[2] = {groups_a, groups_b};
    const uint32_t ngs[2] = {3, 1};
    static const uint64_t windows[] = {1, 37, 1000, 25000, 100000};
    for (int gs = 0; gs < 2; gs++) {
        struct pes_profiles *ref = run_profiles(&t, gsets[gs], ngs[gs], 1, 0, 0);
        /* the reference itself against brute force, lane by lane */
        for (uint32_t s = 0; s < PS; s++) {
            struct pes_parda_counts want;
            oracle_lane(&t, gsets[gs], s, UINT32_MAX, &want);
            assert_hist_equal(pes_profiles_prd(ref, s), &want.hist);
            pes_parda_counts_free(&want);
        }
        for (uint32_t g = 0; g < ngs[gs]; g++) {
            struct pes_parda_counts want;
            oracle_lane(&t, gsets[gs], 0, g, &want);
            assert_hist_equal(pes_profiles_crd(ref, g), &want.hist);
            pes_parda_counts_free(&want);
        }
        for (uint32_t ranks = 1; ranks <= 4; ranks++)
            for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++) {
                struct mailbox mb;
                struct pes_profiles *p = run_ranks(&t, gsets[gs], ngs[gs], ranks, windows[wi], &mb);
                profiles_equal(p, ref, ngs[gs]);
                /* every window of ranks 1.. sent once and absorbed once */
                uint64_t n_windows = (t.n + windows[wi] - 1) / windows[wi];
                uint64_t others = ranks == 1 ? 0 : n_windows - (n_windows + ranks - 1) / ranks;
                assert_int_equal(mb.sent, others);
                assert_int_equal(mb.received, others);
                mailbox_free(&mb);
                pes_profiles_destroy(p);
            }
        pes_profiles_destroy(ref);
    }
    trace_free(&t);
}

/* Parts: process r pushes only accesses [cut[r], cut[r+1]); messages by
 * (process, window in its part). */
struct partbox {
    uint32_t ranks;
    void *buf[4][64];
    size_t len[4][64];
    uint64_t sent[4];
    uint32_t sender; /* the process pushing now */
};

static int pb_send(void *ctx, uint64_t w, void *buf, size_t len, struct pes_error *err)
{
    (void)err;
    struct partbox *m = ctx;
    assert_true(w < 64 && w == m->sent[m->sender]); /* in order, each once */
    m->buf[m->sender][w] = buf;
    m->len[m->sender][w] = len;
    m->sent[m->sender]++;
    return 0;
}

static int pb_recv(void *ctx, uint64_t w, uint32_t from, void **buf, size_t *len,
                   struct pes_error *err)
{
    (void)err;
    struct partbox *m = ctx;
    assert_true(from > 0 && from < m->ranks);
    if (w >= m->sent[from])
        return 1;
    *buf = m->buf[from][w];
    *len = m->len[from][w];
    m->buf[from][w] = NULL;
    return 0;
}

/* Every process's part, rank 0's last: rank 0's profiles. Stream 5 ends in
 * the part that holds its last access. */
static struct pes_profiles *run_parts(const struct trace *t, const uint32_t *group_of,
                                      uint32_t n_groups, uint32_t ranks, uint64_t window,
                                      const size_t *cut, struct partbox *mb)
{
    size_t last5 = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->stream[i] == 5)
            last5 = i;
    memset(mb, 0, sizeof *mb);
    mb->ranks = ranks;
    for (uint32_t r = ranks; r-- > 0;) {
        struct pes_profiles_split sp = {.rank = r,
                                        .ranks = ranks,
                                        .window = window,
                                        .parts = 1,
                                        .send = pb_send,
                                        .recv = pb_recv,
                                        .ctx = mb};
        struct pes_profiles_options o = {.granule = 64,
                                         .n_streams = PS,
                                         .n_groups = n_groups,
                                         .group_of = group_of,
                                         .exact_limit = 64,
                                         .per_site = 1,
                                         .min_window = 128,
                                         .split = &sp};
        struct pes_profiles *p = pes_profiles_create(&o, NULL);
        assert_non_null(p);
        mb->sender = r;
        for (size_t at = cut[r]; at < cut[r + 1]; at += 555) {
            size_t m = cut[r + 1] - at < 555 ? cut[r + 1] - at : 555;
            assert_int_equal(pes_profiles_push_batch(p, t->stream + at, t->addr + at, t->size + at,
                                                     t->site + at, m, NULL),
                             0);
            if (last5 >= at && last5 < at + m)
                assert_int_equal(pes_profiles_end_stream(p, 5, NULL), 0);
        }
        assert_int_equal(pes_profiles_sync(p, NULL), 0);
        pes_profiles_finish(p);
        if (r == 0)
            return p;
        pes_profiles_destroy(p);
    }
    return NULL;
}

/* The same histograms and per-site rows as one process (rows compared by
 * site: parts make them in another order). */
static void test_profiles_parts(void **state)
{
    (void)state;
    struct trace t = make_trace(60000, 0xbeef);
    const uint32_t groups_a[PS] = {0, 0, 1, 2, 2, 2};
    const uint32_t groups_b[PS] = {0, 0, 0, 0, 0, 0};
    const uint32_t *gsets[2] = {groups_a, groups_b};
    const uint32_t ngs[2] = {3, 1};
    static const uint64_t windows[] = {1000, 7919, 100000};
    for (int gs = 0; gs < 2; gs++) {
        struct pes_profiles *ref = run_profiles(&t, gsets[gs], ngs[gs], 1, 0, 0);
        size_t nr;
        const struct pes_site_reuse *rr = pes_profiles_sites(ref, &nr);
        struct pes_site_reuse *want = malloc(nr * sizeof *want);
        memcpy(want, rr, nr * sizeof *want);
        qsort(want, nr, sizeof *want, row_cmp);
        for (uint32_t ranks = 1; ranks <= 4; ranks++)
            for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++) {
                /* uneven parts, one of them empty with 4 processes */
                size_t cut[5] = {0};
                for (uint32_t r = 1; r < ranks; r++)
                    cut[r] = ranks == 4 && r == 2 ? cut[1] : t.n * r / ranks + 77 * r;
                cut[ranks] = t.n;
                struct partbox mb;
                struct pes_profiles *p =
                    run_parts(&t, gsets[gs], ngs[gs], ranks, windows[wi], cut, &mb);
                for (uint32_t s = 0; s < PS; s++)
                    assert_hist_equal(pes_profiles_prd(p, s), pes_profiles_prd(ref, s));
                for (uint32_t g = 0; g < ngs[gs]; g++)
                    assert_hist_equal(pes_profiles_crd(p, g), pes_profiles_crd(ref, g));
                size_t np;
                const struct pes_site_reuse *pr = pes_profiles_sites(p, &np);
                assert_int_equal(np, nr);
                struct pes_site_reuse *got = malloc(np * sizeof *got);
                memcpy(got, pr, np * sizeof *got);
                qsort(got, np, sizeof *got, row_cmp);
                assert_memory_equal(got, want, np * sizeof *got);
                free(got);
                for (uint32_t r = 1; r < ranks; r++)
                    for (uint64_t w = 0; w < mb.sent[r]; w++)
                        assert_null(mb.buf[r][w]); /* every window absorbed */
                pes_profiles_destroy(p);
            }
        free(want);
        pes_profiles_destroy(ref);
    }
    trace_free(&t);
}

/* What a split refuses, and a damaged or missing message. */
static void test_profiles_split_errors(void **state)
{
    (void)state;
    struct mailbox mb;
    mailbox_init(&mb, 2, 16);
    struct pes_profiles_split sp1 = {
        .rank = 1, .ranks = 2, .window = 4, .send = mb_send, .ctx = &mb};
    struct pes_profiles_split sp0 = {
        .rank = 0, .ranks = 2, .window = 4, .recv = mb_recv, .ctx = &mb};
    struct pes_profiles_options o = {.granule = 64, .n_streams = 1, .per_site = 1, .split = &sp1};
    struct pes_error e = {0};
    struct pes_profiles_split bad = sp1;
    bad.send = NULL;
    o.split = &bad;
    assert_null(pes_profiles_create(&o, &e));
    o.split = &sp1;
    struct pes_profiles *p1 = pes_profiles_create(&o, NULL);
    o.split = &sp0;
    struct pes_profiles *p0 = pes_profiles_create(&o, NULL);
    uint64_t d;
    assert_int_equal(pes_profiles_push(p0, 0, 64, 8, 1, &d, NULL, &e), -1);
    for (uint64_t i = 0; i < 12; i++)
        assert_int_equal(pes_profiles_push(p1, 0, i % 3 * 64, 8, (uint32_t)i % 2, NULL, NULL, NULL),
                         0);
    assert_int_equal(pes_profiles_sync(p1, NULL), 0);
    assert_int_equal(pes_profiles_push(p1, 0, 0, 8, 0, NULL, NULL, &e), -1); /* after the end */
    assert_int_equal(mb.sent, 1);
    mb.corrupt = 1;
    /* window 1 is absorbed when rank 0 starts its window 2 */
    for (uint64_t i = 0; i < 8; i++)
        assert_int_equal(pes_profiles_push(p0, 0, i % 3 * 64, 8, (uint32_t)i % 2, NULL, NULL, NULL),
                         0);
    assert_int_equal(pes_profiles_push(p0, 0, 0, 8, 0, NULL, NULL, &e), -1);
    assert_non_null(strstr(e.message, "window 1"));
    pes_profiles_destroy(p0);
    pes_profiles_destroy(p1);
    /* a window that never comes */
    o.split = &sp0;
    p0 = pes_profiles_create(&o, NULL);
    for (uint64_t i = 0; i < 6; i++)
        assert_int_equal(pes_profiles_push(p0, 0, i * 64, 8, 0, NULL, NULL, NULL), 0);
    assert_int_equal(pes_profiles_sync(p0, &e), -1);
    assert_non_null(strstr(e.message, "never sent"));
    pes_profiles_destroy(p0);
    mailbox_free(&mb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_parts),           cmocka_unit_test(test_keys_by_recency),
        cmocka_unit_test(test_chunked_vs_oracle),       cmocka_unit_test(test_pack_roundtrip),
        cmocka_unit_test(test_pool_vs_oracle),          cmocka_unit_test(test_pool_push_sync),
        cmocka_unit_test(test_profiles_threads),        cmocka_unit_test(test_profiles_one_stream),
        cmocka_unit_test(test_profiles_push_distances), cmocka_unit_test(test_profiles_split),
        cmocka_unit_test(test_profiles_split_errors),   cmocka_unit_test(test_profiles_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
