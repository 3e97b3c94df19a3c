/* ReuseTracker ground truth: every cell of Dissertation Tables 6.2 and 6.3,
 * the §6.2.1 time-distance example, and a brute-force forward-scan oracle on
 * random interleavings. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rt_truth.h"

#define R 0
#define W 1

/* Threads 0,1 on socket 0, threads 2,3 on socket 1. */
static const uint32_t two_sockets[4] = {0, 0, 1, 1};

static struct pes_rt *mk(uint32_t n_threads, const uint32_t *sock)
{
    struct pes_error err = {0};
    struct pes_rt_config cfg = {.n_threads = n_threads, .thread_socket = sock, .line = 64};
    struct pes_rt *r = pes_rt_create(&cfg, &err);
    assert_non_null(r);
    return r;
}

static void acc(struct pes_rt *r, uint32_t t, uint64_t a, int w, uint32_t site)
{
    struct pes_error err = {0};
    assert_int_equal(pes_rt_access(r, t, a, 8, w, site, &err), 0);
}

/* A pair (first by thread t1, second by t2) on one address. */
static void pair(enum pes_rt_scope scope, uint32_t t1, int w1, uint32_t t2, int w2,
                 uint64_t want_reuse, uint64_t want_inval)
{
    struct pes_rt *r = mk(4, two_sockets);
    acc(r, t1, 0x1000, w1, 1);
    acc(r, t2, 0x1000, w2, 2);
    const struct pes_rt_stats *s = pes_rt_totals(r, scope);
    assert_int_equal(s->n.reuses, want_reuse);
    assert_int_equal(s->n.invalidations, want_inval);
    assert_int_equal(s->n.inval_caused, want_inval);
    /* Same answer at line granularity for one address; never spatial. */
    assert_int_equal(s->n.line_reuses, want_reuse);
    assert_int_equal(s->n.spatial_reuses, 0);
    assert_int_equal(s->n.line_invalidations, want_inval);
    /* Attribution: reuse / invalidation suffered at the use's site. */
    const struct pes_rt_counts *c1 = pes_rt_site(r, scope, 1);
    assert_non_null(c1);
    assert_int_equal(c1->reuses, want_reuse);
    assert_int_equal(c1->invalidations, want_inval);
    assert_int_equal(pes_rt_site(r, scope, 2)->inval_caused, want_inval);
    if (want_reuse)
        assert_int_equal(s->temporal.bin[0], 1); /* adjacent: distance 0 */
    pes_rt_destroy(r);
}

/* Table 6.2 (intra-thread). "different cores" uses another thread on the same
 * socket and one on the other socket: the table says "any socket". */
static void t62_RR_same_core(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, R, 0, R, 1, 0);
}
static void t62_RW_same_core(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, R, 0, W, 1, 0);
}
static void t62_WW_same_core(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, W, 0, W, 1, 0);
}
static void t62_WR_same_core(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, W, 0, R, 1, 0);
}
static void t62_RR_different_cores(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, R, 1, R, 0, 0);
    pair(PES_RT_INTRA, 0, R, 2, R, 0, 0);
}
static void t62_RW_different_cores(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, R, 1, W, 0, 1);
    pair(PES_RT_INTRA, 0, R, 2, W, 0, 1);
}
static void t62_WW_different_cores(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, W, 1, W, 0, 1);
    pair(PES_RT_INTRA, 0, W, 2, W, 0, 1);
}
static void t62_WR_different_cores(void **st)
{
    (void)st;
    pair(PES_RT_INTRA, 0, W, 1, R, 0, 0);
    pair(PES_RT_INTRA, 0, W, 2, R, 0, 0);
}

/* Table 6.3 (shared cache): threads 0,1 share socket 0; thread 2 is remote. */
static void t63_RR_same_core(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, R, 0, R, 0, 0);
}
static void t63_RW_same_core(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, R, 0, W, 0, 0);
}
static void t63_WW_same_core(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, W, 0, W, 0, 0);
}
static void t63_WR_same_core(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, W, 0, R, 0, 0);
}
static void t63_RR_same_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, R, 1, R, 1, 0);
}
static void t63_RW_same_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, R, 1, W, 1, 0);
}
static void t63_WW_same_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, W, 1, W, 1, 0);
}
static void t63_WR_same_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, W, 1, R, 1, 0);
}
static void t63_RR_different_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, R, 2, R, 0, 0);
}
static void t63_RW_different_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, R, 2, W, 0, 1);
}
static void t63_WW_different_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, W, 2, W, 0, 1);
}
static void t63_WR_different_socket(void **st)
{
    (void)st;
    pair(PES_RT_SHARED, 0, W, 2, R, 0, 0);
}

/* §6.2.1: a1 b1 c1 b2 d1 d2 a2 -> time reuse distance of a is 5, of b 1, of d 0. */
static void time_distance_example(void **st)
{
    (void)st;
    struct pes_rt *r = mk(1, NULL);
    const uint64_t a = 0, b = 64, c = 128, d = 192;
    uint64_t seq[] = {a, b, c, b, d, d, a};
    for (size_t i = 0; i < 7; i++)
        acc(r, 0, seq[i], R, 0);
    const struct pes_rt_stats *s = pes_rt_totals(r, PES_RT_INTRA);
    assert_int_equal(s->n.reuses, 3);
    assert_int_equal(s->temporal.bin[5], 1);
    assert_int_equal(s->temporal.bin[1], 1);
    assert_int_equal(s->temporal.bin[0], 1);
    pes_rt_destroy(r);
}

/* A remote read in between does not end the pair (Def. 6.2.1: only an
 * intervening store by another thread does); a remote write does. */
static void intervening_remote_read_and_write(void **st)
{
    (void)st;
    struct pes_rt *r = mk(2, NULL);
    acc(r, 0, 8, R, 0);
    acc(r, 1, 8, R, 0);
    acc(r, 0, 8, R, 0); /* reuse, distance 0 (thread 0 did nothing in between) */
    acc(r, 1, 8, W, 1); /* invalidates thread 0's use; thread 1's own use reused */
    acc(r, 0, 8, R, 0); /* not a reuse */
    const struct pes_rt_stats *s = pes_rt_totals(r, PES_RT_INTRA);
    assert_int_equal(s->n.reuses, 2);
    assert_int_equal(s->n.invalidations, 1);
    assert_int_equal(pes_rt_thread(r, PES_RT_INTRA, 0)->n.invalidations, 1);
    assert_int_equal(pes_rt_thread(r, PES_RT_INTRA, 1)->n.inval_caused, 1);
    assert_int_equal(pes_rt_site(r, PES_RT_INTRA, 1)->inval_caused, 1);
    assert_int_equal(pes_rt_thread(r, PES_RT_INTRA, 0)->temporal.bin[0], 1);
    /* thread 1: R at its time 0, W at its time 1: distance 0 */
    assert_int_equal(pes_rt_thread(r, PES_RT_INTRA, 1)->temporal.bin[0], 1);
    pes_rt_destroy(r);
}

/* Spatial: same line, different address. */
static void spatial_vs_temporal(void **st)
{
    (void)st;
    struct pes_rt *r = mk(1, NULL);
    acc(r, 0, 0, R, 0);
    acc(r, 0, 8, R, 0); /* spatial line reuse, distance 0 */
    acc(r, 0, 4096, R, 0);
    acc(r, 0, 8, R, 0); /* temporal reuse of 8 (distance 1) and line reuse (same addr) */
    const struct pes_rt_stats *s = pes_rt_totals(r, PES_RT_INTRA);
    assert_int_equal(s->n.reuses, 1);
    assert_int_equal(s->temporal.bin[1], 1);
    assert_int_equal(s->n.line_reuses, 2);
    assert_int_equal(s->n.spatial_reuses, 1);
    assert_int_equal(s->spatial.bin[0], 1);
    assert_int_equal(s->line.bin[1], 1);
    pes_rt_destroy(r);
}

/* Shared-cache time distance counts all accesses of the socket in between. */
static void shared_distance_counts_socket_accesses(void **st)
{
    (void)st;
    struct pes_rt *r = mk(4, two_sockets);
    acc(r, 0, 0, R, 0);
    acc(r, 1, 640, R, 0);  /* same socket, other line */
    acc(r, 2, 1280, R, 0); /* other socket: not counted */
    acc(r, 0, 1920, R, 0);
    acc(r, 1, 0, R, 0); /* shared reuse of thread 0's use: 2 socket accesses between */
    const struct pes_rt_stats *s = pes_rt_totals(r, PES_RT_SHARED);
    assert_int_equal(s->n.reuses, 1);
    assert_int_equal(s->temporal.bin[2], 1);
    assert_int_equal(pes_rt_thread(r, PES_RT_SHARED, 0)->n.reuses, 1);
    pes_rt_destroy(r);
}

/* Table 6.3 W->R remark: a remote read leaves the socket's use open. */
static void shared_remote_read_keeps_use(void **st)
{
    (void)st;
    struct pes_rt *r = mk(4, two_sockets);
    acc(r, 0, 0, W, 0);
    acc(r, 2, 0, R, 0);
    acc(r, 1, 0, R, 0);
    assert_int_equal(pes_rt_totals(r, PES_RT_SHARED)->n.reuses, 1);
    assert_int_equal(pes_rt_totals(r, PES_RT_SHARED)->n.invalidations, 0);
    pes_rt_destroy(r);
}

static void histogram_bins(void **st)
{
    (void)st;
    uint64_t lo, hi;
    for (uint64_t d = 0; d < 100000; d += 1 + d / 7) {
        size_t b = pes_rt_bin(d);
        assert_true(b < PES_RT_BINS);
        pes_rt_bin_range(b, &lo, &hi);
        assert_true(lo <= d && d < hi);
    }
    assert_int_equal(pes_rt_bin(15), 15);
    assert_int_equal(pes_rt_bin(16), 16);
    assert_int_equal(pes_rt_bin(31), 16);
    assert_int_equal(pes_rt_bin(32), 17);
    assert_true(pes_rt_bin(UINT64_MAX) < PES_RT_BINS);
}

static void bad_arguments(void **st)
{
    (void)st;
    struct pes_error err = {0};
    struct pes_rt_config cfg = {.n_threads = 0, .line = 64};
    assert_null(pes_rt_create(&cfg, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    cfg.n_threads = 2;
    cfg.line = 48;
    assert_null(pes_rt_create(&cfg, &err));
    struct pes_rt *r = mk(2, NULL);
    assert_int_equal(pes_rt_access(r, 5, 0, 8, 0, 0, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    pes_rt_destroy(r);
}

/* ---- brute-force oracle: for every access scan forward for its outcome ---- */

struct ev {
    uint32_t t;
    uint64_t a;
    uint32_t s;
    int w;
};

/* The bytes a debug register watches for an access: its largest aligned
 * prefix of 8, 4, 2 or 1 bytes (the collector's modes/watch.c). */
static uint64_t watched(const struct ev *e)
{
    for (uint64_t len = 8; len > 1; len /= 2)
        if (len <= e->s && e->a % len == 0)
            return len;
    return 1;
}

/* Address granularity: use i watches [a, a + watched) and is decided by the
 * first later access that touches one of those bytes; an access of the same
 * owner that starts in the same 8-byte word without touching them replaces
 * it (one watch per owner and word). Line granularity: the start's line. */
static void oracle(const struct ev *e, size_t n, const uint32_t *sock, int shared, int line,
                   uint64_t *reuses, uint64_t *invals, uint64_t *hist)
{
    *reuses = *invals = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = e[i].a, hi = e[i].a + watched(&e[i]);
        uint32_t owner = shared ? sock[e[i].t] : e[i].t;
        for (size_t j = i + 1; j < n; j++) {
            int meets = line ? e[j].a / 64 == e[i].a / 64 : e[j].a < hi && lo < e[j].a + e[j].s;
            int same_word = line ? meets : e[j].a / 8 == e[i].a / 8;
            int same_owner = (shared ? sock[e[j].t] : e[j].t) == owner;
            if (same_owner && meets && !(shared && e[j].t == e[i].t)) {
                (*reuses)++;
                uint64_t d = 0; /* owner's accesses strictly between */
                for (size_t k = i + 1; k < j; k++)
                    d += shared ? sock[e[k].t] == sock[e[i].t] : e[k].t == e[i].t;
                hist[pes_rt_bin(d)]++;
                break;
            }
            if (same_owner && same_word)
                break; /* replaced: same core (shared), or other bytes */
            if (!same_owner && meets && e[j].w) {
                (*invals)++;
                break;
            }
        }
    }
}

static void random_vs_oracle(void **st)
{
    (void)st;
    static const uint32_t sizes[] = {1, 2, 4, 8, 8, 8, 16, 32};
    srand(7);
    for (int round = 0; round < 60; round++) {
        size_t n = 300;
        struct ev e[300];
        int bytes = round % 2; /* odd rounds: any start byte and size; even: aligned words */
        for (size_t i = 0; i < n; i++) {
            e[i].t = (uint32_t)(rand() % 4);
            e[i].a = (uint64_t)(rand() % 6) * 64 + (uint64_t)(rand() % 3) * 8;
            e[i].s = 8;
            if (bytes) {
                e[i].a += (uint64_t)(rand() % 8);
                e[i].s = sizes[rand() % 8];
            }
            e[i].w = rand() % 3 == 0;
        }
        struct pes_rt *r = mk(4, two_sockets);
        struct pes_error err = {0};
        for (size_t i = 0; i < n; i++)
            assert_int_equal(pes_rt_access(r, e[i].t, e[i].a, e[i].s, e[i].w, 0, &err), 0);
        for (int shared = 0; shared < 2; shared++) {
            const struct pes_rt_stats *s = pes_rt_totals(r, shared ? PES_RT_SHARED : PES_RT_INTRA);
            for (int line = 0; line < 2; line++) {
                uint64_t re, inv, hist[PES_RT_BINS] = {0};
                oracle(e, n, two_sockets, shared, line, &re, &inv, hist);
                assert_int_equal(line ? s->n.line_reuses : s->n.reuses, re);
                assert_int_equal(line ? s->n.line_invalidations : s->n.invalidations, inv);
                assert_memory_equal(line ? s->line.bin : s->temporal.bin, hist, sizeof hist);
            }
        }
        pes_rt_destroy(r);
    }
}

/* Mostly private words (each thread keeps to its own lines, now and then
 * another's), so a word holds one thread's uses for a long while before a
 * second thread touches it: the compact one-thread state and its move to
 * the per-thread one, against the oracle. */
static void private_then_shared_vs_oracle(void **st)
{
    (void)st;
    static const uint32_t sizes[] = {1, 2, 4, 8, 8, 16, 24};
    srand(11);
    for (int round = 0; round < 60; round++) {
        enum { N = 400 };
        struct ev e[N];
        for (size_t i = 0; i < N; i++) {
            e[i].t = (uint32_t)(rand() % 4);
            uint32_t home = rand() % 20 == 0 ? (uint32_t)(rand() % 4) : e[i].t;
            e[i].a = 0x10000 + (uint64_t)home * 256 + (uint64_t)(rand() % 24) * 8 +
                     (uint64_t)(rand() % 8);
            e[i].s = sizes[rand() % 7];
            e[i].w = rand() % 3 == 0;
        }
        struct pes_rt *r = mk(4, two_sockets);
        struct pes_error err = {0};
        for (size_t i = 0; i < N; i++)
            assert_int_equal(pes_rt_access(r, e[i].t, e[i].a, e[i].s, e[i].w, 0, &err), 0);
        for (int shared = 0; shared < 2; shared++) {
            const struct pes_rt_stats *s = pes_rt_totals(r, shared ? PES_RT_SHARED : PES_RT_INTRA);
            uint64_t re, inv, hist[PES_RT_BINS] = {0};
            oracle(e, N, two_sockets, shared, 0, &re, &inv, hist);
            assert_int_equal(s->n.reuses, re);
            assert_int_equal(s->n.invalidations, inv);
            assert_memory_equal(s->temporal.bin, hist, sizeof hist);
        }
        pes_rt_destroy(r);
    }
}

/* A 16-byte vector load reuses what a scalar load at its second word
 * watched, though their start addresses differ; a 1-byte use is not decided
 * by an access to the next byte (what a debug register would see). */
static void overlap_not_start_address(void **st)
{
    (void)st;
    struct pes_rt *r = mk(1, NULL);
    struct pes_error err = {0};
    assert_int_equal(pes_rt_access(r, 0, 0x1008, 8, 0, 0, &err), 0); /* use of [0x1008, 0x1010) */
    assert_int_equal(pes_rt_access(r, 0, 0x2000, 8, 0, 0, &err), 0);
    assert_int_equal(pes_rt_access(r, 0, 0x1000, 16, 0, 0, &err),
                     0); /* touches it: reuse, distance 1 */
    assert_int_equal(pes_rt_access(r, 0, 0x3000, 1, 1, 0, &err), 0); /* use of byte 0x3000 */
    assert_int_equal(pes_rt_access(r, 0, 0x3001, 1, 0, 0, &err),
                     0); /* same word, other byte: replaces */
    assert_int_equal(pes_rt_access(r, 0, 0x3001, 1, 0, 0, &err),
                     0); /* reuse of 0x3001, distance 0 */
    const struct pes_rt_stats *s = pes_rt_totals(r, PES_RT_INTRA);
    assert_int_equal(s->n.reuses, 2);
    assert_int_equal(s->temporal.bin[pes_rt_bin(1)], 1);
    assert_int_equal(s->temporal.bin[pes_rt_bin(0)], 1);
    pes_rt_destroy(r);
}

/* The batch entry point gives the same answers as one call per access. */
static void batch_equals_single(void **st)
{
    (void)st;
    enum { N = 5000 };
    static struct pes_rt_access a[N];
    srand(21);
    for (size_t i = 0; i < N; i++)
        a[i] = (struct pes_rt_access){.addr = (uint64_t)(rand() % 500) * 8,
                                      .size = 8,
                                      .thread = (uint32_t)(rand() % 4),
                                      .site = (uint32_t)(rand() % 9),
                                      .is_write = rand() % 3 == 0};
    struct pes_rt *x = mk(4, two_sockets), *y = mk(4, two_sockets);
    struct pes_error err = {0};
    assert_int_equal(pes_rt_access_batch(x, a, N, &err), 0);
    for (size_t i = 0; i < N; i++)
        acc(y, a[i].thread, a[i].addr, a[i].is_write, a[i].site);
    for (int sc = 0; sc < 2; sc++) {
        assert_memory_equal(pes_rt_totals(x, sc), pes_rt_totals(y, sc),
                            sizeof(struct pes_rt_stats));
        for (uint32_t site = 0; site < 9; site++)
            assert_memory_equal(pes_rt_site(x, sc, site), pes_rt_site(y, sc, site),
                                sizeof(struct pes_rt_counts));
    }
    assert_true(pes_rt_totals(x, PES_RT_INTRA)->n.invalidations > 0);
    a[7].thread = 99;
    assert_int_equal(pes_rt_access_batch(x, a, N, &err), -1);
    assert_int_equal(err.offset, 7);
    pes_rt_destroy(x);
    pes_rt_destroy(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t62_RR_same_core),
        cmocka_unit_test(t62_RW_same_core),
        cmocka_unit_test(t62_WW_same_core),
        cmocka_unit_test(t62_WR_same_core),
        cmocka_unit_test(t62_RR_different_cores),
        cmocka_unit_test(t62_RW_different_cores),
        cmocka_unit_test(t62_WW_different_cores),
        cmocka_unit_test(t62_WR_different_cores),
        cmocka_unit_test(t63_RR_same_core),
        cmocka_unit_test(t63_RW_same_core),
        cmocka_unit_test(t63_WW_same_core),
        cmocka_unit_test(t63_WR_same_core),
        cmocka_unit_test(t63_RR_same_socket),
        cmocka_unit_test(t63_RW_same_socket),
        cmocka_unit_test(t63_WW_same_socket),
        cmocka_unit_test(t63_WR_same_socket),
        cmocka_unit_test(t63_RR_different_socket),
        cmocka_unit_test(t63_RW_different_socket),
        cmocka_unit_test(t63_WW_different_socket),
        cmocka_unit_test(t63_WR_different_socket),
        cmocka_unit_test(time_distance_example),
        cmocka_unit_test(intervening_remote_read_and_write),
        cmocka_unit_test(spatial_vs_temporal),
        cmocka_unit_test(shared_distance_counts_socket_accesses),
        cmocka_unit_test(shared_remote_read_keeps_use),
        cmocka_unit_test(histogram_bins),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(random_vs_oracle),
        cmocka_unit_test(private_then_shared_vs_oracle),
        cmocka_unit_test(overlap_not_start_address),
        cmocka_unit_test(batch_equals_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
