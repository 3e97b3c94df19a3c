/* MESI simulation: hand-derived state sequences and counts, true/false
 * sharing patterns, multi-socket shared levels, communication matrices, and
 * an independent textbook MESI reference (no capacity limits) on random traces. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mesi.h"

#define R 0
#define W 1

/* Caches big enough that the hand-built traces never evict. */
static struct pes_sim *mk(uint32_t sockets, uint32_t cores_per_socket, uint32_t threads)
{
    static struct pes_machine m;
    memset(&m, 0, sizeof m);
    m.sockets = sockets;
    m.cores_per_socket = cores_per_socket;
    m.n_levels = 3;
    m.level[0] = (struct pes_cache_config){.size = 4096, .ways = 4, .line = 64};
    m.level[1] = (struct pes_cache_config){.size = 16384, .ways = 8, .line = 64};
    m.level[2] = (struct pes_cache_config){.size = 65536, .ways = 16, .line = 64, .shared = 1};
    struct pes_sim_config cfg = {.machine = &m, .n_threads = threads};
    struct pes_error err = {0};
    struct pes_sim *s = pes_sim_create(&cfg, &err);
    assert_non_null(s);
    return s;
}

/* Thread t runs on core t. */
static void acc(struct pes_sim *s, uint32_t t, uint64_t addr, uint32_t size, int w, uint32_t site)
{
    struct pes_sim_access a = {.addr = addr,
                               .size = size,
                               .core = t,
                               .thread = t,
                               .site = site,
                               .is_read = (uint8_t)!w,
                               .is_write = (uint8_t)w};
    struct pes_error err = {0};
    assert_int_equal(pes_sim_access(s, &a, &err), 0);
}

static void states(struct pes_sim *s, uint64_t addr, const char *want)
{
    for (uint32_t c = 0; want[c]; c++)
        assert_int_equal(pes_sim_state(s, c, addr), want[c]);
}

/* Two cores on one line, six steps; every number derived by hand in comments. */
static void hand_sequence_two_cores(void **st)
{
    (void)st;
    struct pes_sim *s = mk(1, 2, 2);
    acc(s, 0, 0, 8, R, 0);
    states(s, 0, "EI"); /* L1,L2,L3 compulsory */
    acc(s, 1, 0, 8, R, 1);
    states(s, 0, "SS"); /* L1,L2 compulsory, L3 hit; E holder: no store, no comm */
    acc(s, 0, 0, 8, W, 2);
    states(s, 0, "MI"); /* upgrade, invalidates core 1: bytes 0-7 overlap -> true */
    acc(s, 1, 0, 8, R, 3);
    states(s, 0, "SS"); /* coherence miss, true (0-7 written since); downgrade, comm 0->1 true */
    acc(s, 1, 8, 8, W, 4);
    states(s, 0, "IM"); /* upgrade; core 0 accessed only 0-7 -> false */
    acc(s, 0, 16, 8, R, 5);
    states(s, 0, "SS"); /* coherence miss, false (only 8-15 written); comm 1->0 false */
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->accesses, 6);
    assert_int_equal(t->hits[0], 2);
    assert_int_equal(t->misses[0][PES_SIM_COMPULSORY], 2);
    assert_int_equal(t->misses[0][PES_SIM_COHERENCE], 2);
    assert_int_equal(t->misses[0][PES_SIM_CAPACITY], 0);
    assert_int_equal(t->hits[1], 0);
    assert_int_equal(t->misses[1][PES_SIM_COMPULSORY], 2);
    assert_int_equal(t->misses[1][PES_SIM_COHERENCE], 2);
    assert_int_equal(t->hits[2], 3);
    assert_int_equal(t->misses[2][PES_SIM_COMPULSORY], 1);
    assert_int_equal(t->inval_true, 1);
    assert_int_equal(t->inval_false, 1);
    assert_int_equal(t->coh_true, 1);
    assert_int_equal(t->coh_false, 1);
    assert_int_equal(t->comm_true, 1);
    assert_int_equal(t->comm_false, 1);
    assert_int_equal(t->upgrades, 2);
    assert_int_equal(t->downgrades, 2);
    assert_int_equal(pes_sim_writebacks(s), 2);
    /* Per site. */
    assert_int_equal(pes_sim_site(s, 2)->inval_true, 1);
    assert_int_equal(pes_sim_site(s, 2)->victim_threads, 1u << 1);
    assert_int_equal(pes_sim_site(s, 4)->inval_false, 1);
    assert_int_equal(pes_sim_site(s, 4)->victim_threads, 1u << 0);
    assert_int_equal(pes_sim_site(s, 3)->coh_true, 1);
    assert_int_equal(pes_sim_site(s, 3)->source_threads, 1u << 0);
    assert_int_equal(pes_sim_site(s, 5)->coh_false, 1);
    assert_int_equal(pes_sim_site(s, 5)->source_threads, 1u << 1);
    assert_int_equal(pes_sim_site(s, 0)->inval_true + pes_sim_site(s, 0)->coh_true, 0);
    assert_null(pes_sim_site(s, 6));
    /* Per thread. */
    assert_int_equal(pes_sim_thread(s, 0)->inval_true, 1);
    assert_int_equal(pes_sim_thread(s, 1)->inval_false, 1);
    assert_int_equal(pes_sim_thread(s, 1)->coh_true, 1);
    assert_int_equal(pes_sim_thread(s, 0)->coh_false, 1);
    /* Matrices: ordered row = supplier. */
    uint64_t m[4];
    pes_sim_comm_ordered(s, PES_SIM_COMM_TRUE, 1, m);
    assert_true(m[0] == 0 && m[1] == 1 && m[2] == 0 && m[3] == 0);
    pes_sim_comm_ordered(s, PES_SIM_COMM_FALSE, 0, m);
    assert_true(m[0] == 0 && m[1] == 0 && m[2] == 1 && m[3] == 0);
    pes_sim_comm_symmetric(s, PES_SIM_COMM_ALL, 0, m);
    assert_true(m[0] == 0 && m[1] == 2 && m[2] == 2 && m[3] == 0);
    pes_sim_destroy(s);
}

/* Write miss on a Modified line: RFO transfer + invalidation. */
static void write_miss_on_modified(void **st)
{
    (void)st;
    struct pes_sim *s = mk(1, 2, 2);
    acc(s, 0, 64, 8, W, 0);
    states(s, 64, "MI"); /* E then M silently: no upgrade */
    acc(s, 1, 64, 8, W, 1);
    states(s, 64, "IM"); /* invalidates 0 (true), comm 0->1 true */
    acc(s, 0, 96, 8, W, 2);
    states(s, 64, "MI"); /* coherence miss false, invalidates 1 (false) */
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->upgrades, 0);
    assert_int_equal(t->inval_true, 1);
    assert_int_equal(t->inval_false, 1);
    assert_int_equal(t->coh_false, 1);
    assert_int_equal(t->coh_true, 0);
    assert_int_equal(t->comm_true, 1);
    assert_int_equal(t->comm_false, 1);
    assert_int_equal(t->downgrades, 0);
    pes_sim_destroy(s);
}

/* Classic patterns, N rounds of alternating writes by two threads. */
static void sharing_pattern(uint64_t addr0, uint64_t addr1, int want_true)
{
    enum { N = 100 };
    struct pes_sim *s = mk(1, 2, 2);
    for (int i = 0; i < N; i++) {
        acc(s, 0, addr0, 8, W, 10);
        acc(s, 1, addr1, 8, W, 11);
    }
    const struct pes_sim_stats *t = pes_sim_totals(s);
    uint64_t inv = 2 * N - 1, coh = 2 * N - 2;
    assert_int_equal(want_true ? t->inval_true : t->inval_false, inv);
    assert_int_equal(want_true ? t->inval_false : t->inval_true, 0);
    assert_int_equal(want_true ? t->coh_true : t->coh_false, coh);
    assert_int_equal(want_true ? t->coh_false : t->coh_true, 0);
    assert_int_equal(t->comm_true + t->comm_false, inv);
    assert_int_equal(pes_sim_site(s, 10)->inval_true + pes_sim_site(s, 10)->inval_false, N - 1);
    assert_int_equal(pes_sim_site(s, 11)->inval_true + pes_sim_site(s, 11)->inval_false, N);
    uint64_t m[4];
    pes_sim_comm_symmetric(s, want_true ? PES_SIM_COMM_TRUE : PES_SIM_COMM_FALSE, 0, m);
    assert_int_equal(m[1], inv);
    assert_int_equal(m[2], inv);
    assert_int_equal(m[0] + m[3], 0);
    pes_sim_destroy(s);
}

static void false_sharing_adjacent_words(void **st)
{
    (void)st;
    sharing_pattern(0, 8, 0);
}
static void true_sharing_same_word(void **st)
{
    (void)st;
    sharing_pattern(0, 0, 1);
}

/* Readers only: everyone S, nothing invalidated, nothing communicated. */
static void read_sharing_is_silent(void **st)
{
    (void)st;
    struct pes_sim *s = mk(1, 4, 4);
    for (int i = 0; i < 10; i++)
        for (uint32_t c = 0; c < 4; c++)
            acc(s, c, 128 + 8 * c, 8, R, 0);
    states(s, 128, "SSSS");
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->inval_true + t->inval_false + t->coh_true + t->coh_false, 0);
    assert_int_equal(t->comm_true + t->comm_false, 0);
    assert_int_equal(t->hits[0], 36);
    pes_sim_destroy(s);
}

/* One writer invalidates three sharers at once: three invalidations. */
static void write_invalidates_all_sharers(void **st)
{
    (void)st;
    struct pes_sim *s = mk(1, 4, 4);
    for (uint32_t c = 0; c < 4; c++)
        acc(s, c, 0, 4, R, 0);
    acc(s, 3, 0, 4, W, 7);
    states(s, 0, "IIIM");
    assert_int_equal(pes_sim_site(s, 7)->inval_true, 3);
    assert_int_equal(pes_sim_site(s, 7)->victim_threads, 0x7u);
    assert_int_equal(pes_sim_totals(s)->upgrades, 1);
    pes_sim_destroy(s);
}

/* Two sockets: a write drops the other socket's shared-level copy, so its
 * next access misses the shared level as a coherence miss. */
static void two_sockets_shared_level(void **st)
{
    (void)st;
    struct pes_sim *s = mk(2, 1, 2);
    acc(s, 0, 0, 8, R, 0);
    acc(s, 1, 0, 8, R, 0);
    acc(s, 0, 0, 8, W, 0);
    acc(s, 1, 0, 8, R, 0);
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->misses[2][PES_SIM_COMPULSORY], 2);
    assert_int_equal(t->misses[2][PES_SIM_COHERENCE], 1);
    assert_int_equal(t->hits[2], 0);
    assert_int_equal(t->coh_true, 1);
    states(s, 0, "SS");
    pes_sim_destroy(s);
}

/* An evicted line's next miss is capacity, not coherence; evicting M writes back. */
static void eviction_is_not_coherence(void **st)
{
    (void)st;
    struct pes_sim *s = mk(1, 2, 2);
    acc(s, 0, 0, 8, W, 0);
    /* 5 more lines in L1 set 0 (16 sets) and L2 set 0 (32 sets) push line 0 out of both:
     * L2 has 8 ways, use 9 lines mapping to L2 set 0 (stride 32 lines). */
    for (uint64_t k = 1; k <= 8; k++)
        acc(s, 0, k * 32 * 64, 8, R, 0);
    states(s, 0, "II");
    assert_int_equal(pes_sim_writebacks(s), 1);
    acc(s, 0, 0, 8, R, 0);
    const struct pes_sim_stats *t = pes_sim_totals(s);
    /* 9 lines in one 8-way set, while a fully associative L2 holds 256: conflict */
    assert_int_equal(t->misses[1][PES_SIM_CONFLICT], 1);
    assert_int_equal(t->misses[1][PES_SIM_CAPACITY], 0);
    assert_int_equal(t->misses[1][PES_SIM_COHERENCE], 0);
    pes_sim_destroy(s);
}

static void bad_access_rejected(void **st)
{
    (void)st;
    struct pes_sim *s = mk(1, 2, 2);
    struct pes_error err = {0};
    struct pes_sim_access a = {.core = 2, .size = 4, .is_read = 1};
    assert_int_equal(pes_sim_access(s, &a, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    a.core = 0;
    a.thread = 9;
    assert_int_equal(pes_sim_access(s, &a, &err), -1);
    pes_sim_destroy(s);
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    m.sockets = 1;
    m.cores_per_socket = 65;
    m.n_levels = 1;
    m.level[0] = (struct pes_cache_config){.size = 4096, .ways = 4, .line = 64};
    struct pes_sim_config cfg = {.machine = &m, .n_threads = 1};
    assert_null(pes_sim_create(&cfg, &err));
}

/* ---- independent reference: textbook MESI on unbounded private caches ---- */

enum { RC = 4, RL = 4 }; /* cores, lines */
struct ref {
    char st[RL][RC]; /* 'M','E','S','I' */
    int held_ever[RL][RC], lost[RL][RC];
    unsigned char acc[RL][RC][64];    /* bytes accessed since acquiring */
    unsigned char wsince[RL][RC][64]; /* bytes written by others since losing */
    uint64_t inv_t, inv_f, coh_t, coh_f, comm[2][RC][RC];
};

static int overlap(const unsigned char *m, unsigned lo, unsigned n)
{
    for (unsigned i = lo; i < lo + n; i++)
        if (m[i])
            return 1;
    return 0;
}

static void ref_access(struct ref *r, unsigned c, unsigned l, unsigned off, unsigned n, int w)
{
    int others = 0, mholder = -1;
    for (unsigned o = 0; o < RC; o++) {
        if (o != c && r->st[l][o] != 'I')
            others++;
        if (o != c && r->st[l][o] == 'M')
            mholder = (int)o;
    }
    if (w)
        for (unsigned o = 0; o < RC; o++)
            if (o != c && r->lost[l][o])
                memset(&r->wsince[l][o][off], 1, n);
    int miss = r->st[l][c] == 'I';
    if (miss && r->lost[l][c]) {
        if (overlap(r->wsince[l][c], off, n))
            r->coh_t++;
        else
            r->coh_f++;
    }
    if (w) {
        for (unsigned o = 0; o < RC; o++) {
            if (o == c || r->st[l][o] == 'I')
                continue;
            int tr = overlap(r->acc[l][o], off, n);
            if (tr)
                r->inv_t++;
            else
                r->inv_f++;
            if (miss)
                r->comm[tr ? 0 : 1][o][c]++;
            r->st[l][o] = 'I';
            r->lost[l][o] = 1;
            memset(r->wsince[l][o], 0, 64);
            memset(&r->wsince[l][o][off], 1, n);
        }
        r->st[l][c] = 'M';
    } else if (miss) {
        if (mholder >= 0) {
            r->comm[overlap(r->acc[l][mholder], off, n) ? 0 : 1][mholder][c]++;
            r->st[l][mholder] = 'S';
        }
        for (unsigned o = 0; o < RC; o++)
            if (o != c && r->st[l][o] == 'E')
                r->st[l][o] = 'S';
        r->st[l][c] = others ? 'S' : 'E';
    }
    if (miss) {
        memset(r->acc[l][c], 0, 64);
        r->lost[l][c] = 0;
        r->held_ever[l][c] = 1;
    }
    memset(&r->acc[l][c][off], 1, n);
}

static void random_vs_reference(void **st)
{
    (void)st;
    srand(3);
    for (int round = 0; round < 40; round++) {
        /* Private-cache MESI does not depend on how cores are grouped in sockets. */
        uint32_t sockets = round % 2 ? 2 : 1;
        struct pes_sim *s = mk(sockets, RC / sockets, RC);
        static struct ref r;
        memset(&r, 0, sizeof r);
        for (unsigned l = 0; l < RL; l++)
            memset(r.st[l], 'I', RC);
        for (int i = 0; i < 400; i++) {
            unsigned c = (unsigned)rand() % RC, l = (unsigned)rand() % RL;
            unsigned n = 1u << (rand() % 4), off = ((unsigned)rand() % 64) & ~(n - 1);
            int w = rand() % 3 == 0;
            acc(s, c, (uint64_t)l * 64 + off, n, w, 0);
            ref_access(&r, c, l, off, n, w);
            for (unsigned x = 0; x < RL; x++)
                for (unsigned k = 0; k < RC; k++)
                    assert_int_equal(pes_sim_state(s, k, x * 64), r.st[x][k]);
        }
        const struct pes_sim_stats *t = pes_sim_totals(s);
        assert_int_equal(t->inval_true, r.inv_t);
        assert_int_equal(t->inval_false, r.inv_f);
        assert_int_equal(t->coh_true, r.coh_t);
        assert_int_equal(t->coh_false, r.coh_f);
        uint64_t m[RC * RC], sym[RC * RC];
        for (int k = 0; k < 2; k++) {
            pes_sim_comm_ordered(s, k ? PES_SIM_COMM_FALSE : PES_SIM_COMM_TRUE, 1, m);
            for (unsigned a = 0; a < RC; a++)
                for (unsigned b = 0; b < RC; b++)
                    assert_int_equal(m[a * RC + b], r.comm[k][a][b]);
        }
        /* ComDetective matrix: symmetric, zero diagonal, all = true + false. */
        uint64_t tr[RC * RC], fa[RC * RC], total = 0;
        pes_sim_comm_symmetric(s, PES_SIM_COMM_ALL, 0, sym);
        pes_sim_comm_symmetric(s, PES_SIM_COMM_TRUE, 0, tr);
        pes_sim_comm_symmetric(s, PES_SIM_COMM_FALSE, 0, fa);
        for (unsigned a = 0; a < RC; a++) {
            assert_int_equal(sym[a * RC + a], 0);
            for (unsigned b = 0; b < RC; b++) {
                assert_int_equal(sym[a * RC + b], sym[b * RC + a]);
                assert_int_equal(sym[a * RC + b], tr[a * RC + b] + fa[a * RC + b]);
                total += sym[a * RC + b];
            }
        }
        assert_int_equal(total, 2 * (t->comm_true + t->comm_false));
        pes_sim_destroy(s);
    }
}

/* Tiny caches, 2 sockets x 2 cores, random trace: protocol invariants hold
 * after every access while evictions and back-invalidations interleave. */
static void invariants_under_evictions(void **st)
{
    (void)st;
    static struct pes_machine m;
    memset(&m, 0, sizeof m);
    m.sockets = 2;
    m.cores_per_socket = 2;
    m.n_levels = 3;
    m.level[0] = (struct pes_cache_config){.size = 128, .ways = 2, .line = 64};
    m.level[1] = (struct pes_cache_config){.size = 256, .ways = 2, .line = 64};
    m.level[2] = (struct pes_cache_config){.size = 512, .ways = 4, .line = 64, .shared = 1};
    for (int ni = 0; ni < 2; ni++) {
        struct pes_sim_config cfg = {.machine = &m, .n_threads = 4, .non_inclusive = ni};
        struct pes_error err = {0};
        struct pes_sim *s = pes_sim_create(&cfg, &err);
        assert_non_null(s);
        srand(17 + (unsigned)ni);
        for (int i = 0; i < 20000; i++) {
            uint32_t c = (uint32_t)rand() % 4;
            uint64_t line = (uint64_t)(rand() % 24);
            int w = rand() % 4 == 0;
            acc(s, c, line * 64 + (uint64_t)(rand() % 8) * 8, 8, w, (uint32_t)(rand() % 5));
            if (w)
                assert_int_equal(pes_sim_state(s, c, line * 64), 'M');
            else
                assert_true(pes_sim_state(s, c, line * 64) != 'I');
            for (uint64_t l = 0; l < 24; l++) {
                int excl = 0, valid = 0;
                for (uint32_t k = 0; k < 4; k++) {
                    char x = pes_sim_state(s, k, l * 64);
                    excl += x == 'M' || x == 'E';
                    valid += x != 'I';
                }
                assert_true(excl == 0 || valid == 1); /* single writer */
            }
        }
        /* Conservation: each level sees exactly the misses of the level above;
         * totals are the sums over threads and over sites. */
        const struct pes_sim_stats *t = pes_sim_totals(s);
        uint64_t reach = t->accesses, by_thread = 0, by_site = 0, inv_site = 0;
        for (uint32_t k = 0; k < 3; k++) {
            uint64_t miss = 0;
            for (int c = 0; c < PES_SIM_MISS_CLASSES; c++)
                miss += t->misses[k][c];
            assert_int_equal(t->hits[k] + miss, reach);
            reach = miss;
        }
        assert_true(t->misses[2][PES_SIM_CAPACITY] > 0);
        assert_true(t->misses[0][PES_SIM_COHERENCE] > 0);
        for (uint32_t th = 0; th < 4; th++)
            by_thread += pes_sim_thread(s, th)->accesses;
        for (uint32_t site = 0; site < 5; site++) {
            by_site += pes_sim_site(s, site)->accesses;
            inv_site += pes_sim_site(s, site)->inval_true + pes_sim_site(s, site)->inval_false;
        }
        assert_int_equal(by_thread, t->accesses);
        assert_int_equal(by_site, t->accesses);
        assert_int_equal(inv_site, t->inval_true + t->inval_false);
        pes_sim_destroy(s);
    }
}

/* The batch entry point gives the same answers as one call per access. */
static void batch_equals_single(void **st)
{
    (void)st;
    enum { N = 5000 };
    static struct pes_sim_access a[N];
    srand(23);
    for (size_t i = 0; i < N; i++) {
        int w = rand() % 3 == 0;
        uint32_t c = (uint32_t)(rand() % 4);
        a[i] = (struct pes_sim_access){.addr = (uint64_t)(rand() % 4000) * 8,
                                       .size = 8,
                                       .core = c,
                                       .thread = c,
                                       .site = (uint32_t)(rand() % 9),
                                       .is_read = (uint8_t)!w,
                                       .is_write = (uint8_t)w};
    }
    struct pes_sim *x = mk(2, 2, 4), *y = mk(2, 2, 4);
    struct pes_error err = {0};
    assert_int_equal(pes_sim_access_batch(x, a, N, &err), 0);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(pes_sim_access(y, &a[i], &err), 0);
    assert_memory_equal(pes_sim_totals(x), pes_sim_totals(y), sizeof(struct pes_sim_stats));
    for (uint32_t site = 0; site < 9; site++)
        assert_memory_equal(pes_sim_site(x, site), pes_sim_site(y, site),
                            sizeof(struct pes_sim_stats));
    assert_true(pes_sim_totals(x)->misses[1][PES_SIM_CAPACITY] > 0);
    a[11].core = 7;
    assert_int_equal(pes_sim_access_batch(x, a, N, &err), -1);
    assert_int_equal(err.offset, 11);
    pes_sim_destroy(x);
    pes_sim_destroy(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_sequence_two_cores),
        cmocka_unit_test(write_miss_on_modified),
        cmocka_unit_test(false_sharing_adjacent_words),
        cmocka_unit_test(true_sharing_same_word),
        cmocka_unit_test(read_sharing_is_silent),
        cmocka_unit_test(write_invalidates_all_sharers),
        cmocka_unit_test(two_sockets_shared_level),
        cmocka_unit_test(eviction_is_not_coherence),
        cmocka_unit_test(bad_access_rejected),
        cmocka_unit_test(random_vs_reference),
        cmocka_unit_test(invariants_under_evictions),
        cmocka_unit_test(batch_equals_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
