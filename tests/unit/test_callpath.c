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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_random_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
