/*
 * test_callpath.c — call paths from CALL/RETURN records (stream/callpath.h):
 * hand-computed cases (the depth bound, a longjmp, a stray RETURN, an
 * OpenMP worker), and random record sequences against a reference that
 * keeps every thread's whole stack as a plain array and cuts it on demand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "callpath.h"

static void rec(struct pes_callpaths *cp, uint32_t t, uint32_t id, uint64_t addr, uint32_t extra)
{
    struct pes_record r = {addr, id, extra};
    assert_int_equal(pes_callpaths_record(cp, t, &r), 0);
}

/* thread t's path is exactly want[0..n) (outermost first), cut or not */
static void expect(const struct pes_callpaths *cp, uint32_t t, const uint32_t *want, uint32_t n,
                   int cut, int line)
{
    uint32_t got_n;
    int got_cut;
    const uint32_t *got = pes_callpaths_sites(cp, pes_callpaths_current(cp, t), &got_n, &got_cut);
    if (got_n != n || got_cut != cut || (n && memcmp(got, want, n * sizeof *want) != 0))
        fail_msg("line %d: thread %u: %u sites (cut %d), expected %u (cut %d)", line, t, got_n,
                 got_cut, n, cut);
}
#define EXPECT(cp, t, cut, ...)                                                                    \
    do {                                                                                           \
        const uint32_t w_[] = {__VA_ARGS__};                                                       \
        expect(cp, t, w_ + 1, sizeof w_ / sizeof *w_ - 1, cut, __LINE__);                          \
    } while (0)

static void test_hand_cases(void **state)
{
    (void)state;
    uint32_t parent[2] = {UINT32_MAX, 0};
    struct pes_callpaths *cp = pes_callpaths_create(3, 2, parent);
    assert_non_null(cp);
    EXPECT(cp, 0, 0, 0); /* no call: the empty path, id 0 */
    assert_int_equal(pes_callpaths_current(cp, 0), 0);
    rec(cp, 0, PES_ID_CALL, 1000, 10);
    rec(cp, 0, PES_ID_CALL, 900, 11);
    EXPECT(cp, 0, 0, 0, 10, 11);
    uint32_t id = pes_callpaths_current(cp, 0);
    rec(cp, 0, PES_ID_CALL, 800, 12);
    rec(cp, 0, PES_ID_CALL, 700, 13); /* 4 deep, depth 3: the innermost 3, cut */
    EXPECT(cp, 0, 1, 0, 11, 12, 13);
    rec(cp, 0, PES_ID_RETURN, 700, 0);
    rec(cp, 0, PES_ID_RETURN, 800, 0);
    EXPECT(cp, 0, 0, 0, 10, 11);
    assert_int_equal(pes_callpaths_current(cp, 0), id); /* the same path, the same id */
    rec(cp, 0, PES_ID_RETURN, 650, 0);                  /* stray: no frame at 650, none below */
    EXPECT(cp, 0, 0, 0, 10, 11);
    rec(cp, 0, PES_ID_CALL, 800, 12);
    rec(cp, 0, PES_ID_CALL, 700, 13);
    rec(cp, 0, PES_ID_CALL, 1000, 14); /* longjmp back into the frame at 1000: all 4 over */
    EXPECT(cp, 0, 0, 0, 14);
    rec(cp, 0, PES_ID_CALL, 900, 11);
    rec(cp, 0, PES_ID_RETURN, 1000, 0); /* unwinds to 1000: the frame at 900 goes too */
    EXPECT(cp, 0, 0, 0);
    /* OpenMP: thread 0 forks from its call 20, thread 1 (no open call) works in the region */
    rec(cp, 0, PES_ID_CALL, 1000, 20);
    rec(cp, 0, PES_ID_REGION_BEGIN, 5, 0);
    rec(cp, 1, PES_ID_REGION_BEGIN, 5, 0);
    EXPECT(cp, 1, 0, 0, 20);
    rec(cp, 1, PES_ID_CALL, 4000, 21);
    EXPECT(cp, 1, 0, 0, 20, 21);
    rec(cp, 0, PES_ID_CALL, 900, 22); /* the opener's calls in the region are its own */
    EXPECT(cp, 1, 0, 0, 20, 21);
    rec(cp, 1, PES_ID_RETURN, 4000, 0);
    rec(cp, 1, PES_ID_REGION_END, 5, 0);
    EXPECT(cp, 1, 0, 0); /* out of the region: nothing */
    pes_callpaths_reset(cp);
    EXPECT(cp, 0, 0, 0);
    pes_callpaths_destroy(cp);
    assert_null(pes_callpaths_create(0, 1, NULL));
    assert_null(pes_callpaths_create(PES_CALLPATH_MAX_DEPTH + 1, 1, NULL));
}

/* The reference: each thread's whole stack; a CALL ends the open calls at
 * or below its sp, a RETURN those below its sp and the one at it. */
struct ref_frame {
    uint64_t sp;
    uint32_t site;
};

static void test_random_against_reference(void **state)
{
    (void)state;
    enum { THREADS = 3, STEPS = 20000, MAX = 64 };
    srand(7);
    for (uint32_t depth = 1; depth <= 6; depth += 5) {
        struct pes_callpaths *cp = pes_callpaths_create(depth, THREADS, NULL);
        assert_non_null(cp);
        struct ref_frame st[THREADS][MAX];
        uint32_t n[THREADS] = {0};
        for (int step = 0; step < STEPS; step++) {
            uint32_t t = (uint32_t)rand() % THREADS;
            int r = rand() % 10;
            /* sps near the thread's top frame's, lower for a deeper call */
            uint64_t top = n[t] ? st[t][n[t] - 1].sp : 100000;
            uint64_t sp = top - 64 + (uint64_t)(rand() % 3) * 64 + (r == 9 ? 1000 : 0);
            uint32_t site = (uint32_t)rand() % 5;
            if (r < 5 && n[t] < MAX) { /* CALL */
                rec(cp, t, PES_ID_CALL, sp, site);
                while (n[t] && st[t][n[t] - 1].sp <= sp)
                    n[t]--;
                st[t][n[t]++] = (struct ref_frame){sp, site};
            } else { /* RETURN: mostly the top's, sometimes another sp */
                if (r < 8 && n[t])
                    sp = st[t][n[t] - 1].sp;
                rec(cp, t, PES_ID_RETURN, sp, 0);
                while (n[t] && st[t][n[t] - 1].sp < sp)
                    n[t]--;
                if (n[t] && st[t][n[t] - 1].sp == sp)
                    n[t]--;
            }
            for (uint32_t u = 0; u < THREADS; u++) {
                uint32_t want[MAX], k = n[u] < depth ? n[u] : depth;
                for (uint32_t i = 0; i < k; i++)
                    want[i] = st[u][n[u] - k + i].site;
                expect(cp, u, want, k, n[u] > depth, step);
            }
        }
        /* distinct paths have distinct ids: every id's sites differ */
        uint32_t count = pes_callpaths_count(cp);
        for (uint32_t a = 1; a < count; a++)
            for (uint32_t b = a + 1; b < count && b < a + 50; b++) {
                uint32_t na, nb;
                int ca, cb;
                const uint32_t *sa = pes_callpaths_sites(cp, a, &na, &ca),
                               *sb = pes_callpaths_sites(cp, b, &nb, &cb);
                assert_false(na == nb && ca == cb && memcmp(sa, sb, na * sizeof *sa) == 0);
            }
        pes_callpaths_destroy(cp);
    }
}

/* ------------------------------------------------------------ parts */

struct trec {
    uint32_t t;
    struct pes_record r;
};

static void feed(struct pes_callpaths *cp, const struct trec *x)
{
    assert_int_equal(pes_callpaths_record(cp, x->t, &x->r), 0);
}

/* The stream recs[0..n) read in parts cut at cuts[0..n_cuts) (rising, each
 * in 1 .. n - 1): part 0 tracks its paths in the whole stream's table; every
 * later part reads its records alone into an effect (symbolic paths); part
 * 0's state at its end, with the effects resolved in part order, must give,
 * after every record and for every thread, the ids of one tracker fed the
 * whole stream; so must the table in the end, and each part's end state
 * (an effect applied to the state at its start) the whole stream's there. */
static void check_parts(const struct trec *recs, uint32_t n, uint32_t depth, uint32_t threads,
                        const uint32_t *parent, const uint32_t *cuts, uint32_t n_cuts, int line)
{
    struct pes_callpaths *whole = pes_callpaths_create(depth, threads, parent);
    assert_non_null(whole);
    uint32_t *want = malloc((size_t)n * threads * sizeof *want);
    assert_non_null(want);
    for (uint32_t i = 0; i < n; i++) {
        feed(whole, &recs[i]);
        for (uint32_t t = 0; t < threads; t++)
            want[(size_t)i * threads + t] = pes_callpaths_current(whole, t);
    }
    struct pes_callpaths *part0 = pes_callpaths_create(depth, threads, parent),
                         *starts = pes_callpaths_create(depth, threads, parent);
    assert_non_null(part0);
    assert_non_null(starts);
    for (uint32_t k = 0; k <= n_cuts; k++) {
        uint32_t from = k ? cuts[k - 1] : 0, to = k < n_cuts ? cuts[k] : n;
        struct pes_callpaths_effect *e = pes_callpaths_effect_create(depth, threads, parent);
        assert_non_null(e);
        uint32_t *local = malloc(((size_t)(to - from) * threads + 1) * sizeof *local);
        assert_non_null(local);
        for (uint32_t i = from; i < to; i++) {
            if (k == 0)
                feed(part0, &recs[i]);
            else
                assert_int_equal(pes_callpaths_effect_record(e, recs[i].t, &recs[i].r), 0);
            for (uint32_t t = 0; t < threads; t++)
                local[(size_t)(i - from) * threads + t] =
                    k == 0 ? pes_callpaths_current(part0, t) : pes_callpaths_effect_current(e, t);
        }
        uint32_t *map = NULL;
        if (k == 0) { /* the state after part 0: part 0's own */
            struct pes_callpaths_effect *e0 = pes_callpaths_effect_create(depth, threads, parent);
            assert_non_null(e0);
            for (uint32_t i = from; i < to; i++)
                assert_int_equal(pes_callpaths_effect_record(e0, recs[i].t, &recs[i].r), 0);
            assert_int_equal(pes_callpaths_apply(starts, e0), 0);
            pes_callpaths_effect_destroy(e0);
        } else {
            map = malloc(pes_callpaths_effect_count(e) * sizeof *map);
            assert_non_null(map);
            /* as it travels to part 0: in bytes */
            size_t len = pes_callpaths_effect_pack(e, NULL, 0);
            unsigned char *bytes = malloc(len);
            assert_non_null(bytes);
            assert_int_equal(pes_callpaths_effect_pack(e, bytes, len), len);
            struct pes_error err = {0};
            struct pes_callpaths_effect *back = pes_callpaths_effect_unpack(bytes, len, &err);
            assert_non_null(back);
            assert_int_equal(pes_callpaths_resolve(starts, back, part0, map), 0);
            pes_callpaths_effect_destroy(back);
            free(bytes);
        }
        for (uint32_t i = from; i < to; i++)
            for (uint32_t t = 0; t < threads; t++) {
                uint32_t got = local[(size_t)(i - from) * threads + t];
                if (map)
                    got = map[got];
                if (got != want[(size_t)i * threads + t])
                    fail_msg("line %d, depth %u, part %u of %u: record %u thread %u: path %u, "
                             "whole stream %u",
                             line, depth, k, n_cuts + 1, i, t, got, want[(size_t)i * threads + t]);
            }
        for (uint32_t t = 0; t < threads; t++) { /* the state at the part's end */
            uint32_t na, nb;
            int ca, cb;
            const uint32_t *a =
                pes_callpaths_sites(starts, pes_callpaths_current(starts, t), &na, &ca);
            const uint32_t *b =
                pes_callpaths_sites(whole, want[(size_t)(to - 1) * threads + t], &nb, &cb);
            if (na != nb || ca != cb || (na && memcmp(a, b, na * sizeof *a) != 0))
                fail_msg("line %d, depth %u: after part %u, thread %u's path differs", line, depth,
                         k, t);
        }
        free(map);
        free(local);
        pes_callpaths_effect_destroy(e);
    }
    assert_int_equal(pes_callpaths_count(part0), pes_callpaths_count(whole));
    for (uint32_t id = 1; id < pes_callpaths_count(whole); id++) {
        uint32_t na, nb;
        int ca, cb;
        const uint32_t *a = pes_callpaths_sites(part0, id, &na, &ca),
                       *b = pes_callpaths_sites(whole, id, &nb, &cb);
        assert_true(na == nb && ca == cb && memcmp(a, b, na * sizeof *a) == 0);
    }
    pes_callpaths_destroy(starts);
    pes_callpaths_destroy(part0);
    pes_callpaths_destroy(whole);
    free(want);
}

/* Every single cut, and every pair of cuts, of the stream. */
static void check_every_cut(const struct trec *recs, uint32_t n, uint32_t depth, uint32_t threads,
                            const uint32_t *parent, int line)
{
    check_parts(recs, n, depth, threads, parent, NULL, 0, line);
    for (uint32_t a = 1; a < n; a++) {
        check_parts(recs, n, depth, threads, parent, &a, 1, line);
        for (uint32_t b = a + 1; b < n; b++)
            check_parts(recs, n, depth, threads, parent, (uint32_t[]){a, b}, 2, line);
    }
}

#define C(t, sp, site)                                                                             \
    {                                                                                              \
        t,                                                                                         \
        {                                                                                          \
            sp, PES_ID_CALL, site                                                                  \
        }                                                                                          \
    }
#define R(t, sp)     {t, {sp, PES_ID_RETURN, 0}}
#define B(t, region) {t, {region, PES_ID_REGION_BEGIN, 0}}
#define E(t)         {t, {0, PES_ID_REGION_END, 0}}

/* Hand-built streams cut at every position: a RETURN and a longjmp's CALL
 * that end several calls opened in earlier parts, workers whose region (and
 * whose creator's fork) began in an earlier part, a stray RETURN, a worker
 * reused by a nested team, recursion past the depth. */
static void test_parts_hand_streams(void **state)
{
    (void)state;
    const uint32_t parent[3] = {UINT32_MAX, 0, 0};
    const struct trec repair[] = {
        C(0, 1000, 1),  C(0, 900, 2),  C(0, 800, 3),
        C(0, 700, 4),   R(0, 900), /* ends 700, 800 and 900 */
        C(0, 900, 5),   C(0, 800, 6),  C(0, 700, 7),
        C(0, 600, 8),   C(0, 1000, 9), /* longjmp back to 1000: all five end */
        C(0, 950, 10),  R(0, 500),     /* stray */
        R(0, 950),      R(0, 1000),    C(0, 1000, 1),
        C(0, 990, 2),   C(0, 980, 3),  R(0, 2000), /* unwinds past all */
        C(0, 1000, 11),
    };
    const struct trec omp[] = {
        C(0, 1000, 1),  C(0, 900, 20), /* the fork */
        B(0, 5),        B(1, 5),        C(1, 4000, 21), C(1, 3900, 22), C(0, 800, 23),
        B(2, 5),        C(2, 5000, 24), R(1, 3900),     R(0, 800),      R(2, 5000),
        E(1),           E(2),           C(1, 4000, 25), /* out of the region: its own path */
        E(0),           R(0, 900),      C(0, 900, 26),  B(0, 6),        B(1, 6),
        C(1, 4000, 27), B(1, 7),        C(1, 3000, 28), B(2, 7),        E(1), /* a nested team */
        E(1),           C(1, 4000, 29), E(2),           E(0),
    };
    const struct trec deep[] = {
        C(0, 1000, 1), C(0, 990, 2), C(0, 980, 1), C(0, 970, 2), C(0, 960, 1), C(1, 500, 3),
        B(1, 9),       B(2, 9),      C(2, 800, 4), C(2, 790, 5), C(2, 780, 4), R(0, 970),
        C(0, 970, 3),  C(0, 960, 4), R(2, 790),    C(2, 790, 4), E(2),
    };
    for (uint32_t depth = 1; depth <= 4; depth++) {
        check_every_cut(repair, sizeof repair / sizeof *repair, depth, 1, parent, __LINE__);
        check_every_cut(omp, sizeof omp / sizeof *omp, depth, 3, parent, __LINE__);
        check_every_cut(deep, sizeof deep / sizeof *deep, depth, 3, parent, __LINE__);
    }
}

/* Random control records of four threads (a creator, two workers of it and
 * one of a worker), cut at every position and at random cuts into up to 6
 * parts. */
static void test_parts_random(void **state)
{
    (void)state;
    enum { THREADS = 4, N = 240, STREAMS = 60 };
    const uint32_t parent[THREADS] = {UINT32_MAX, 0, 0, 1};
    srand(11);
    struct trec recs[N];
    for (int s = 0; s < STREAMS; s++) {
        uint64_t top[THREADS] = {100000, 100000, 100000, 100000};
        for (uint32_t i = 0; i < N; i++) {
            uint32_t t = (uint32_t)rand() % THREADS;
            int r = rand() % 20;
            uint64_t sp = top[t] - 64 + (uint64_t)(rand() % 3) * 64 + (r == 19 ? 640 : 0);
            if (r < 9) {
                recs[i] = (struct trec)C(t, sp, (uint32_t)rand() % 4 + 1);
                top[t] = sp;
            } else if (r < 15) {
                recs[i] = (struct trec)R(t, sp);
                top[t] = sp + 64;
            } else if (r < 18) {
                recs[i] = (struct trec)B(t, (uint64_t)(rand() % 3 + 1));
            } else {
                recs[i] = (struct trec)E(t);
            }
            if (top[t] > 100000 || top[t] < 90000)
                top[t] = 100000;
        }
        uint32_t depth = 1 + (uint32_t)s % 5;
        for (uint32_t a = 1; a < N; a++)
            check_parts(recs, N, depth, THREADS, parent, &a, 1, __LINE__);
        for (int k = 0; k < 20; k++) {
            uint32_t cuts[5], n_cuts = 1 + (uint32_t)rand() % 5;
            for (uint32_t c = 0; c < n_cuts; c++)
                cuts[c] = 1 + (uint32_t)rand() % (N - 1);
            for (uint32_t c = 1; c < n_cuts; c++) /* sorted, distinct */
                for (uint32_t d = c; d > 0 && cuts[d - 1] >= cuts[d]; d--) {
                    uint32_t x = cuts[d - 1];
                    cuts[d - 1] = cuts[d];
                    cuts[d] = x;
                }
            uint32_t m = 0;
            for (uint32_t c = 0; c < n_cuts; c++)
                if (m == 0 || cuts[c] != cuts[m - 1])
                    cuts[m++] = cuts[c];
            check_parts(recs, N, depth, THREADS, parent, cuts, m, __LINE__);
        }
    }
}

/* A part's effect grows with what reads the threads' state, not with their
 * calls: two threads each calling in a loop from a caller that opened in an
 * earlier part, and a worker's region per iteration of its creator's loop
 * of forks. */
static void test_parts_effect_bounded(void **state)
{
    (void)state;
    const uint32_t parent[3] = {UINT32_MAX, UINT32_MAX, 0};
    struct pes_callpaths_effect *e = pes_callpaths_effect_create(8, 3, parent);
    assert_non_null(e);
    for (uint32_t i = 0; i < 100000; i++)
        for (uint32_t t = 0; t < 2; t++) {
            uint64_t sp = 1000 - 16 * (i % 3); /* its caller's sp moves a little */
            struct pes_record c = {sp, PES_ID_CALL, 1 + i % 7}, r = {sp, PES_ID_RETURN, 0};
            assert_int_equal(pes_callpaths_effect_record(e, t, &c), 0);
            assert_int_equal(pes_callpaths_effect_record(e, t, &r), 0);
        }
    assert_true(pes_callpaths_effect_size(e) <= 2);
    assert_true(pes_callpaths_effect_count(e) <= 64); /* symbolic paths: a few anchors x 7 sites */
    size_t before = pes_callpaths_effect_size(e);
    struct pes_record fork = {900, PES_ID_CALL, 3}, back = {900, PES_ID_RETURN, 0},
                      begin = {4, PES_ID_REGION_BEGIN, 0}, end = {0, PES_ID_REGION_END, 0};
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(pes_callpaths_effect_record(e, 0, &fork), 0);
        assert_int_equal(pes_callpaths_effect_record(e, 2, &begin), 0);
        assert_int_equal(pes_callpaths_effect_record(e, 2, &end), 0);
        assert_int_equal(pes_callpaths_effect_record(e, 0, &back), 0);
    }
    /* per region: the creator's open fork, the worker's begin and end, the
     * creator's return */
    assert_int_equal(pes_callpaths_effect_size(e) - before, 10 * (2 + 1 + 1 + 1));
    pes_callpaths_effect_destroy(e);
}

/* Damaged bytes of an effect: every cut and a flipped byte at every place
 * give an error (a format error when cut) or an effect that resolves
 * without reading out of bounds, never a crash. */
static void test_parts_effect_bytes(void **state)
{
    (void)state;
    const uint32_t parent[2] = {UINT32_MAX, 0};
    const struct trec recs[] = {
        C(0, 1000, 1), R(0, 2000), C(0, 900, 2), B(0, 3), B(1, 3), C(1, 500, 4), E(1), C(1, 400, 5),
    };
    struct pes_callpaths_effect *e = pes_callpaths_effect_create(2, 2, parent);
    assert_non_null(e);
    for (size_t i = 0; i < sizeof recs / sizeof *recs; i++)
        assert_int_equal(pes_callpaths_effect_record(e, recs[i].t, &recs[i].r), 0);
    size_t len = pes_callpaths_effect_pack(e, NULL, 0);
    unsigned char *bytes = malloc(len);
    assert_non_null(bytes);
    assert_int_equal(pes_callpaths_effect_pack(e, bytes, len), len);
    for (size_t cut = 0; cut < len; cut++) {
        struct pes_error err = {0};
        assert_null(pes_callpaths_effect_unpack(bytes, cut, &err));
        assert_int_equal(err.code, PES_ERR_FORMAT);
    }
    for (size_t at = 0; at < len; at++) {
        bytes[at] ^= 0x5a;
        struct pes_error err = {0};
        struct pes_callpaths_effect *back = pes_callpaths_effect_unpack(bytes, len, &err);
        if (back) {
            struct pes_callpaths *cp = pes_callpaths_create(2, 2, parent),
                                 *whole = pes_callpaths_create(2, 2, parent);
            uint32_t *map = malloc(pes_callpaths_effect_count(back) * sizeof *map);
            assert_true(cp && whole && map);
            (void)pes_callpaths_resolve(cp, back, whole, map);
            free(map);
            pes_callpaths_destroy(whole);
            pes_callpaths_destroy(cp);
            pes_callpaths_effect_destroy(back);
        } else {
            assert_true(err.code != 0);
        }
        bytes[at] ^= 0x5a;
    }
    free(bytes);
    pes_callpaths_effect_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_parts_hand_streams),
        cmocka_unit_test(test_parts_random),
        cmocka_unit_test(test_parts_effect_bounded),
        cmocka_unit_test(test_parts_effect_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
