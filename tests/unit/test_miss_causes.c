/* Miss causes of the simulation (mesi.h, shadow.h): compulsory, capacity,
 * conflict and coherence on hand-built traces whose answer is known, and on
 * random traces against a brute-force reference (set-associative LRU
 * levels and fully associative LRU lists, simulated the slow, obvious way);
 * the shadow's LRU stacks against brute-force LRU lists per core and socket. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mesi.h"
#include "shadow.h"

static struct pes_machine machine(uint32_t cores, uint32_t n, const struct pes_cache_config *lv)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    m.sockets = 1;
    m.cores_per_socket = cores;
    m.n_levels = n;
    for (uint32_t k = 0; k < n; k++)
        m.level[k] = lv[k];
    return m;
}

static struct pes_sim *sim_of(const struct pes_machine *m, uint32_t cores)
{
    struct pes_sim_config cfg = {.machine = m, .n_cores = cores, .n_threads = cores};
    struct pes_error err = {0};
    struct pes_sim *s = pes_sim_create(&cfg, &err);
    assert_non_null(s);
    return s;
}

static void access8(struct pes_sim *s, uint32_t core, uint64_t addr, int write)
{
    struct pes_sim_access a = {.addr = addr,
                               .size = 8,
                               .core = core,
                               .thread = core,
                               .is_read = (uint8_t)!write,
                               .is_write = (uint8_t)write};
    struct pes_error err = {0};
    assert_int_equal(pes_sim_access(s, &a, &err), 0);
}

/* Direct-mapped, 2 sets: lines 0 and 2 share set 0. Alternating them misses
 * every time, while a fully associative 2-line cache would hold both: two
 * compulsory misses, then only conflict misses. */
static void two_lines_one_set_are_conflicts(void **st)
{
    (void)st;
    struct pes_cache_config lv = {.size = 128, .ways = 1, .line = 64};
    struct pes_machine m = machine(1, 1, &lv);
    struct pes_sim *s = sim_of(&m, 1);
    for (int i = 0; i < 100; i++)
        access8(s, 0, (uint64_t)(i % 2 ? 2 : 0) * 64, 0);
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->hits[0], 0);
    assert_int_equal(t->misses[0][PES_SIM_COMPULSORY], 2);
    assert_int_equal(t->misses[0][PES_SIM_CONFLICT], 98);
    assert_int_equal(t->misses[0][PES_SIM_CAPACITY], 0);
    assert_int_equal(t->misses[0][PES_SIM_COHERENCE], 0);
    pes_sim_destroy(s);
}

/* Fully associative LRU of C = 8 lines, a cyclic scan of C + 1 lines: each
 * line was evicted C + 1 - C accesses before its reuse; after the first
 * pass (compulsory) every access is a capacity miss, none a conflict. */
static void cyclic_scan_is_capacity(void **st)
{
    (void)st;
    struct pes_cache_config lv = {.size = 8 * 64, .ways = 0, .line = 64};
    struct pes_machine m = machine(1, 1, &lv);
    struct pes_sim *s = sim_of(&m, 1);
    for (int pass = 0; pass < 10; pass++)
        for (uint64_t l = 0; l < 9; l++)
            access8(s, 0, l * 64 + 8, 0);
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->hits[0], 0);
    assert_int_equal(t->misses[0][PES_SIM_COMPULSORY], 9);
    assert_int_equal(t->misses[0][PES_SIM_CAPACITY], 81);
    assert_int_equal(t->misses[0][PES_SIM_CONFLICT], 0);
    pes_sim_destroy(s);
}

/* First touches: compulsory at every level, per core (the second core's
 * first touch of a line the first core holds is its own compulsory miss). */
static void first_touches_are_compulsory(void **st)
{
    (void)st;
    struct pes_cache_config lv[2] = {{.size = 1024, .ways = 2, .line = 64},
                                     {.size = 8192, .ways = 4, .line = 64, .shared = 1}};
    struct pes_machine m = machine(2, 2, lv);
    struct pes_sim *s = sim_of(&m, 2);
    for (uint64_t l = 0; l < 5; l++)
        access8(s, 0, l * 64, 0);
    access8(s, 1, 0, 0);
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->misses[0][PES_SIM_COMPULSORY], 6);
    assert_int_equal(t->misses[1][PES_SIM_COMPULSORY], 5); /* the socket's L2 held line 0 */
    assert_int_equal(t->hits[1], 1);
    for (int c = PES_SIM_COMPULSORY + 1; c < PES_SIM_MISS_CLASSES; c++)
        assert_int_equal(t->misses[0][c], 0);
    pes_sim_destroy(s);
}

/* Two cores write bytes 0-7 and 32-39 of one line in turn: after the first
 * two (compulsory) each write misses the line the other core's write took
 * away, a coherence miss, and false sharing (no byte in common). */
static void two_writers_one_line_false_sharing(void **st)
{
    (void)st;
    struct pes_cache_config lv = {.size = 4096, .ways = 4, .line = 64};
    struct pes_machine m = machine(2, 1, &lv);
    struct pes_sim *s = sim_of(&m, 2);
    for (int i = 0; i < 50; i++) {
        access8(s, 0, 0, 1);
        access8(s, 1, 32, 1);
    }
    const struct pes_sim_stats *t = pes_sim_totals(s);
    assert_int_equal(t->misses[0][PES_SIM_COMPULSORY], 2);
    assert_int_equal(t->misses[0][PES_SIM_COHERENCE], 98);
    assert_int_equal(t->misses[0][PES_SIM_CAPACITY] + t->misses[0][PES_SIM_CONFLICT], 0);
    assert_int_equal(t->coh_false, 98);
    assert_int_equal(t->coh_true, 0);
    pes_sim_destroy(s);
    /* the same bytes: true sharing */
    s = sim_of(&m, 2);
    for (int i = 0; i < 50; i++) {
        access8(s, 0, 0, 1);
        access8(s, 1, 0, 1);
    }
    assert_int_equal(pes_sim_totals(s)->coh_true, 98);
    assert_int_equal(pes_sim_totals(s)->coh_false, 0);
    pes_sim_destroy(s);
}

/* ------------------------------------------------------------ brute force */

/* An LRU list, most recent first: the fully associative cache of size n
 * holds the first n entries. */
struct lru {
    uint64_t *line;
    size_t n;
};

/* Position of line before the access (SIZE_MAX if absent), then line moved to the front. */
static size_t lru_touch(struct lru *l, uint64_t line)
{
    size_t i = 0;
    while (i < l->n && l->line[i] != line)
        i++;
    size_t pos = i;
    if (i == l->n)
        l->n++, pos = SIZE_MAX;
    for (; i > 0; i--)
        l->line[i] = l->line[i - 1];
    l->line[0] = line;
    return pos;
}

/* A set-associative LRU cache: sets x ways, each set an LRU list. */
struct sa {
    uint64_t sets, ways;
    uint64_t *tag; /* sets * ways, UINT64_MAX empty, most recent first */
};

/* 1 on a hit (the line becomes most recent). */
static int sa_lookup(struct sa *c, uint64_t line)
{
    uint64_t *set = c->tag + (line % c->sets) * c->ways, i = 0;
    while (i < c->ways && set[i] != line)
        i++;
    if (i == c->ways)
        return 0;
    for (; i > 0; i--)
        set[i] = set[i - 1];
    set[0] = line;
    return 1;
}

/* Inserts an absent line as most recent; the victim (UINT64_MAX: none). */
static uint64_t sa_fill(struct sa *c, uint64_t line)
{
    uint64_t *set = c->tag + (line % c->sets) * c->ways, i = 0;
    while (i + 1 < c->ways && set[i] != UINT64_MAX)
        i++;
    uint64_t victim = set[i];
    for (; i > 0; i--)
        set[i] = set[i - 1];
    set[0] = line;
    return victim;
}

static void sa_remove(struct sa *c, uint64_t line)
{
    uint64_t *set = c->tag + (line % c->sets) * c->ways;
    for (uint64_t i = 0; i < c->ways; i++)
        if (set[i] == line) {
            for (; i + 1 < c->ways; i++)
                set[i] = set[i + 1];
            set[c->ways - 1] = UINT64_MAX;
            return;
        }
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* One core, two private levels of random geometry (the hierarchy fills
 * every level above the one that hit, from the bottom up, and an L2 victim
 * leaves L1: inclusion), random lines with locality. The reference: each level's misses
 * are compulsory on the core's first touch of the line, else conflict when
 * the full LRU list has the line among its first (level lines) entries,
 * else capacity; a level that misses while a lower one hits is never
 * compulsory (the core touched the line). */
static void random_against_brute_force(void **st)
{
    (void)st;
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 40; round++) {
        uint64_t s1 = 1u << (rnd(&x) % 4), w1 = 1 + rnd(&x) % 4;
        uint64_t s2 = s1 << (rnd(&x) % 3), w2 = w1 + rnd(&x) % 5;
        struct pes_cache_config lv[2] = {{.size = s1 * w1 * 64, .ways = (uint32_t)w1, .line = 64},
                                         {.size = s2 * w2 * 64, .ways = (uint32_t)w2, .line = 64}};
        struct pes_machine m = machine(1, 2, lv);
        struct pes_sim *s = sim_of(&m, 1);
        struct sa c1 = {s1, w1, malloc(s1 * w1 * 8)}, c2 = {s2, w2, malloc(s2 * w2 * 8)};
        enum { N = 4000, RANGE = 96 };
        struct lru full = {malloc(RANGE * 8), 0};
        uint8_t seen[RANGE] = {0};
        assert_non_null(c1.tag);
        assert_non_null(c2.tag);
        assert_non_null(full.line);
        memset(c1.tag, 0xff, s1 * w1 * 8);
        memset(c2.tag, 0xff, s2 * w2 * 8);
        uint64_t want[2][PES_SIM_MISS_CLASSES] = {{0}}, hits[2] = {0};
        uint64_t hot = 0;
        for (int i = 0; i < N; i++) {
            if (rnd(&x) % 8 == 0)
                hot = rnd(&x) % RANGE;
            uint64_t line = rnd(&x) % 3 ? (hot + rnd(&x) % 12) % RANGE : rnd(&x) % RANGE;
            size_t pos = lru_touch(&full, line);
            int h1 = sa_lookup(&c1, line), h2 = h1 ? 1 : sa_lookup(&c2, line);
            if (!h2) /* private levels are inclusive: L2's victim leaves L1 too */
                sa_remove(&c1, sa_fill(&c2, line));
            if (!h1)
                sa_fill(&c1, line);
            if (h1) {
                hits[0]++;
            } else {
                uint64_t caps[2] = {s1 * w1, s2 * w2};
                int hit_below = h2; /* L1's miss when L2 hits: the core had the line */
                for (int k = 0; k < (h2 ? 1 : 2); k++) {
                    int cls = !seen[line] && !hit_below ? PES_SIM_COMPULSORY
                              : pos < caps[k]           ? PES_SIM_CONFLICT
                                                        : PES_SIM_CAPACITY;
                    want[k][cls]++;
                }
                if (h2)
                    hits[1]++;
            }
            seen[line] = 1;
            access8(s, 0, line * 64, (int)(rnd(&x) % 3 == 0));
        }
        const struct pes_sim_stats *t = pes_sim_totals(s);
        for (int k = 0; k < 2; k++) {
            assert_int_equal(t->hits[k], hits[k]);
            for (int c = 0; c < PES_SIM_MISS_CLASSES; c++)
                assert_int_equal(t->misses[k][c], want[k][c]);
        }
        /* the random geometries make both kinds of non-compulsory miss */
        if (round == 0)
            assert_true(want[0][PES_SIM_CONFLICT] > 0 && want[0][PES_SIM_CAPACITY] > 0);
        free(c1.tag), free(c2.tag), free(full.line);
        pes_sim_destroy(s);
    }
}

/* The shadow's stacks against brute-force LRU lists: 4 cores on 2 sockets,
 * two private levels and a shared one of random (also decreasing) sizes. */
static void shadow_against_lru_lists(void **st)
{
    (void)st;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    uint32_t sock[4] = {0, 0, 1, 1};
    for (int round = 0; round < 30; round++) {
        struct pes_machine m;
        memset(&m, 0, sizeof m);
        m.sockets = 2;
        m.cores_per_socket = 2;
        m.n_levels = 3;
        uint64_t caps[3];
        for (int k = 0; k < 3; k++) {
            caps[k] = 1 + rnd(&x) % 20;
            m.level[k] = (struct pes_cache_config){
                .size = caps[k] * 64, .ways = 0, .line = 64, .shared = k == 2};
        }
        struct pes_error err = {0};
        struct pes_sim_shadow *sh = pes_sim_shadow_create(&m, 4, sock, &err);
        assert_non_null(sh);
        enum { RANGE = 48 };
        struct lru core[4], socket[2];
        for (int c = 0; c < 4; c++)
            core[c] = (struct lru){calloc(RANGE, 8), 0};
        for (int so = 0; so < 2; so++)
            socket[so] = (struct lru){calloc(RANGE, 8), 0};
        for (int i = 0; i < 5000; i++) {
            uint32_t c = (uint32_t)(rnd(&x) % 4);
            uint64_t line = rnd(&x) % (rnd(&x) % 2 ? 12 : RANGE);
            size_t pp = lru_touch(&core[c], line), ps = lru_touch(&socket[sock[c]], line);
            int want = (pp < caps[0]) | (pp < caps[1]) << 1 | (ps < caps[2]) << 2;
            assert_int_equal(pes_sim_shadow_access(sh, c, line), want);
        }
        for (int c = 0; c < 4; c++)
            free(core[c].line);
        for (int so = 0; so < 2; so++)
            free(socket[so].line);
        pes_sim_shadow_destroy(sh);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_lines_one_set_are_conflicts),
        cmocka_unit_test(cyclic_scan_is_capacity),
        cmocka_unit_test(first_touches_are_compulsory),
        cmocka_unit_test(two_writers_one_line_false_sharing),
        cmocka_unit_test(random_against_brute_force),
        cmocka_unit_test(shadow_against_lru_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
