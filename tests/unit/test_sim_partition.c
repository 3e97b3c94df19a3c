/* Address partitions of the cache + MESI simulation (mesi.h,
 * pes_sim_partition_bits): every level's set index of every machine preset
 * keeps the partition bits (a line's set in the whole cache is its set in
 * the partition's cache, shifted, with the partition in the low bits), the
 * page-offset rule on crafted geometries where it, the sets' factor of two
 * or a fully associative level decides, and partitioned simulations added
 * together equal the whole one, count for count, on random multi-socket
 * streams with physically and virtually indexed caches. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cachesim.h"
#include "mesi.h"
#include "shadow.h"

static uint64_t rng(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Lines whose set in level `c` of the whole cache is not (set in the
 * partition's cache) << bits | partition, among n random line numbers;
 * -1 if the partition's cache cannot be made (sets not divisible). */
static long broken_lines(const struct pes_cache_config *c, uint64_t page_size, uint32_t bits,
                         long n)
{
    struct pes_error err = {0};
    struct pes_cache *whole = pes_cache_create(c->size, c->ways, c->line, &err);
    assert_non_null(whole);
    if (page_size)
        pes_cache_set_page_index(whole, page_size, c->line);
    struct pes_cache *part = pes_cache_create(c->size >> bits, c->ways, c->line, &err);
    if (!part || pes_cache_sets(part) << bits != pes_cache_sets(whole)) {
        pes_cache_destroy(whole);
        pes_cache_destroy(part);
        return -1;
    }
    pes_cache_set_index_shift(part, bits);
    if (page_size)
        pes_cache_set_page_index(part, page_size, c->line);
    uint64_t x = 0x9e3779b97f4a7c15ull, mask = (UINT64_C(1) << bits) - 1;
    long bad = 0;
    for (long i = 0; i < n; i++) {
        uint64_t line = rng(&x) >> 20; /* 44-bit line numbers: many pages */
        if (pes_cache_set_index(whole, line) !=
            (pes_cache_set_index(part, line) << bits | (line & mask)))
            bad++;
    }
    pes_cache_destroy(whole);
    pes_cache_destroy(part);
    return bad;
}

/* Every level of m holds the relation at `bits`. */
static void every_level_keeps(const struct pes_machine *m, uint64_t page_size, uint32_t bits)
{
    for (uint32_t k = 0; k < m->n_levels; k++) {
        long b = broken_lines(&m->level[k], page_size, bits, 20000);
        if (b)
            print_message("level %u page %lu bits %u: %ld broken\n", k + 1,
                          (unsigned long)page_size, bits, b);
        assert_int_equal(b, 0);
    }
}

/* Some level breaks the relation at `bits` (or cannot be split that far). */
static void some_level_breaks(const struct pes_machine *m, uint64_t page_size, uint32_t bits)
{
    long broken = 0;
    for (uint32_t k = 0; k < m->n_levels; k++) {
        long b = broken_lines(&m->level[k], page_size, bits, 20000);
        broken += b < 0 ? 1 : b;
    }
    assert_true(broken > 0);
}

static void presets(void **st)
{
    (void)st;
    static const char *names[] = {"haswell", "broadwell", "zen2"};
    static const uint64_t pages[] = {0, 4096, 2u << 20};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        struct pes_machine m;
        struct pes_error err = {0};
        assert_int_equal(pes_machine_load(names[i], &m, &err), 0);
        for (size_t j = 0; j < sizeof pages / sizeof *pages; j++) {
            uint32_t bits = pes_sim_partition_bits(&m, pages[j]);
            /* each preset's L1: 32 KiB, 8 ways, 64-byte lines = 64 sets (6 bits), the
             * same as a 4 KiB page's lines; the other levels allow more */
            assert_int_equal(bits, 6);
            every_level_keeps(&m, pages[j], bits);
            some_level_breaks(&m, pages[j], bits + 1);
        }
    }
}

static struct pes_machine crafted(void)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    m.sockets = 1;
    m.cores_per_socket = 4;
    m.n_levels = 3;
    m.level[0] = (struct pes_cache_config){.size = 32768, .ways = 8, .line = 64};    /* 64 sets */
    m.level[1] = (struct pes_cache_config){.size = 1 << 20, .ways = 16, .line = 64}; /* 1024 sets */
    m.level[2] = (struct pes_cache_config){
        .size = 3 << 20, .ways = 16, .line = 64, .shared = 1}; /* 3 x 1024 */
    return m;
}

/* Pages of 1 KiB (16 lines): L1 (64 sets) and L2 are physically indexed, so
 * only 4 of their 6 and 10 set bits are the same in both address spaces. */
static void page_rule_forces_fewer(void **st)
{
    (void)st;
    struct pes_machine m = crafted();
    assert_int_equal(pes_sim_partition_bits(&m, 0), 6);    /* virtual: the L1's sets decide */
    assert_int_equal(pes_sim_partition_bits(&m, 1024), 4); /* the page offset decides */
    every_level_keeps(&m, 1024, 4);
    some_level_breaks(&m, 1024, 5); /* a random frame moves lines into others' sets */
    every_level_keeps(&m, 0, 6);
    some_level_breaks(&m, 0, 7);
    /* a factor of three in the sets: only their factor of two splits */
    m.level[0] =
        (struct pes_cache_config){.size = 24576, .ways = 8, .line = 64}; /* 48 sets = 3 x 16 */
    assert_int_equal(pes_sim_partition_bits(&m, 0), 4);
    every_level_keeps(&m, 0, 4);
    some_level_breaks(&m, 0, 5);
    /* a fully associative level has one set: no split */
    m.level[0] = (struct pes_cache_config){.size = 4096, .ways = 0, .line = 64};
    assert_int_equal(pes_sim_partition_bits(&m, 4096), 0);
}

/* ------------------------------------------------------------ whole = sum of partitions */

enum { CORES = 4, THREADS = CORES, SITES = 40 };

static const uint32_t core_socket[CORES] = {0, 0, 1, 1};

/* Small caches, so that evictions, back-invalidations of the inclusive L3
 * and coherence all happen often; L1 16 sets, L2 32, L3 96 (3 x 32, per
 * socket: sets modulo a count that is no power of two). */
static struct pes_machine small_machine(void)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    m.sockets = 2;
    m.cores_per_socket = 2;
    m.n_levels = 3;
    m.level[0] = (struct pes_cache_config){.size = 2048, .ways = 2, .line = 64};
    m.level[1] = (struct pes_cache_config){.size = 8192, .ways = 4, .line = 64};
    m.level[2] = (struct pes_cache_config){.size = 49152, .ways = 8, .line = 64, .shared = 1};
    return m;
}

struct counted {
    uint64_t events[4];
};

static void count_event(void *ctx, const struct pes_sim_event *ev)
{
    ((struct counted *)ctx)->events[ev->kind]++;
}

static struct pes_sim *make(const struct pes_machine *m, uint64_t page, uint32_t bits,
                            uint32_t part, struct counted *c)
{
    struct pes_sim_config cfg = {.machine = m,
                                 .n_cores = CORES,
                                 .core_socket = core_socket,
                                 .n_threads = THREADS,
                                 .page_size = page,
                                 .partition_bits = bits,
                                 .partition = part,
                                 .on_event = count_event,
                                 .event_ctx = c};
    struct pes_error err = {0};
    struct pes_sim *s = pes_sim_create(&cfg, &err);
    assert_non_null(s);
    return s;
}

static void same_stats(const struct pes_sim_stats *a, const struct pes_sim_stats *b)
{
    if (!a || !b) {
        assert_true(a == b);
        return;
    }
    assert_memory_equal(a, b, sizeof *a);
}

static void same_results(const struct pes_sim *a, const struct pes_sim *b)
{
    same_stats(pes_sim_totals(a), pes_sim_totals(b));
    assert_int_equal(pes_sim_writebacks(a), pes_sim_writebacks(b));
    for (uint32_t t = 0; t < THREADS; t++)
        same_stats(pes_sim_thread(a, t), pes_sim_thread(b, t));
    assert_int_equal(pes_sim_sites(a), pes_sim_sites(b));
    for (uint32_t i = 0; i < SITES + 2; i++)
        same_stats(pes_sim_site(a, i), pes_sim_site(b, i));
    same_stats(pes_sim_site(a, UINT32_MAX), pes_sim_site(b, UINT32_MAX));
    for (int by_core = 0; by_core < 2; by_core++)
        for (int kind = PES_SIM_COMM_TRUE; kind <= PES_SIM_COMM_FALSE; kind++) {
            uint64_t x[CORES * CORES], y[CORES * CORES];
            pes_sim_comm_ordered(a, kind, by_core, x);
            pes_sim_comm_ordered(b, kind, by_core, y);
            assert_memory_equal(x, y, sizeof x);
        }
}

/* A stream over 6 pages: a few hot lines every core reads and writes
 * (sharing), private ranges per core (capacity), accesses across line ends. */
static void stream(uint64_t seed, size_t n, struct pes_sim_access *out)
{
    uint64_t x = seed;
    for (size_t i = 0; i < n; i++) {
        uint32_t core = (uint32_t)(rng(&x) % CORES);
        uint64_t r = rng(&x), addr;
        if (r % 4 == 0)
            addr = 0x10000 + (r >> 8) % 512; /* 8 hot lines */
        else
            addr = 0x20000 + core * 0x2000 + (r >> 8) % 0x6000; /* overlapping ranges */
        uint32_t size = r % 11 == 0 ? 1 + (uint32_t)((r >> 40) % 200) : 1u << ((r >> 32) % 4);
        int w = (r >> 48) % 3 == 0;
        out[i] = (struct pes_sim_access){.addr = addr,
                                         .size = size,
                                         .core = core,
                                         .thread = core,
                                         .site = (r >> 52) % 7 == 0 ? UINT32_MAX
                                                                    : (uint32_t)((r >> 20) % SITES),
                                         .is_read = (uint8_t)(!w || (r >> 56) % 5 == 0),
                                         .is_write = (uint8_t)w};
    }
}

static void whole_equals_partitions(void **st)
{
    (void)st;
    struct pes_machine m = small_machine();
    static const uint64_t pages[] = {
        0, 1024}; /* virtual; physical with 16-line pages (L2, L3 by frame) */
    enum { N = 60000 };
    struct pes_sim_access *acc = malloc(N * sizeof *acc);
    assert_non_null(acc);
    for (size_t pi = 0; pi < 2; pi++) {
        uint32_t most = pes_sim_partition_bits(&m, pages[pi]);
        assert_int_equal(most, 4);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            stream(seed * 0x1234567u, N, acc);
            struct counted cw = {{0}};
            struct pes_sim *whole = make(&m, pages[pi], 0, 0, &cw);
            struct pes_error err = {0};
            assert_int_equal(pes_sim_access_batch(whole, acc, N, &err), 0);
            /* the partitions' capacity / conflict split: one shadow fed every access */
            struct pes_sim_shadow *sh = pes_sim_shadow_create(&m, CORES, core_socket, &err);
            assert_non_null(sh);
            size_t n_hits = 0;
            for (size_t i = 0; i < N; i++)
                n_hits += pes_sim_shadow_lines(acc[i].addr, acc[i].size, 6);
            uint8_t *hits = malloc(n_hits);
            assert_non_null(hits);
            for (size_t i = 0, at = 0; i < N; i++) {
                acc[i].shadow_at = (uint32_t)at;
                at += pes_sim_shadow_range(sh, acc[i].core, acc[i].addr, acc[i].size, 6, hits + at);
            }
            pes_sim_shadow_destroy(sh);
            /* the same bits from the stacks fed one after the other, each its
             * whole stream at once (as the replay's shadow strands do): the
             * private ones in one array, the shared ones in another */
            sh = pes_sim_shadow_create(&m, CORES, core_socket, &err);
            assert_non_null(sh);
            uint8_t *priv = calloc(n_hits, 1), *shared = calloc(n_hits, 1);
            assert_true(priv && shared);
            for (uint32_t st = pes_sim_shadow_stacks(sh); st-- > 0;)
                for (size_t i = 0; i < N; i++) {
                    int is_shared = st >= CORES;
                    if (pes_sim_shadow_stack_of(sh, acc[i].core, is_shared) != st)
                        continue;
                    pes_sim_shadow_stack_range(sh, st, acc[i].addr, acc[i].size, 6,
                                               (is_shared ? shared : priv) + acc[i].shadow_at);
                }
            pes_sim_shadow_destroy(sh);
            for (size_t j = 0; j < n_hits; j++)
                assert_int_equal(priv[j] | shared[j], hits[j]);
            for (uint32_t bits = 1; bits <= most; bits++) {
                struct counted cp = {{0}};
                struct pes_sim *sum = NULL;
                for (uint32_t p = 0; p < 1u << bits; p++) {
                    struct pes_sim *s = make(&m, pages[pi], bits, p, &cp);
                    /* its own shadow would see only its lines: refused */
                    assert_int_equal(pes_sim_access(s, acc, &err), -1);
                    assert_int_equal(err.code, PES_ERR_ARG);
                    /* in pieces, as the replay's slots hand them over; the
                     * bits in one array or in the stacks' two */
                    for (size_t at = 0; at < N; at += 7777)
                        assert_int_equal(
                            pes_sim_access_batch_shadow(s, acc + at, N - at < 7777 ? N - at : 7777,
                                                        bits % 2 ? hits : priv,
                                                        bits % 2 ? NULL : shared, &err),
                            0);
                    if (!sum) {
                        sum = s;
                        continue;
                    }
                    assert_int_equal(pes_sim_absorb(sum, s, &err), 0);
                    pes_sim_destroy(s);
                }
                same_results(whole, sum);
                assert_memory_equal(cw.events, cp.events, sizeof cw.events);
                pes_sim_destroy(sum);
            }
            /* the stream makes every kind of event and miss cause (else the test proves little) */
            for (int k = 0; k < 4; k++)
                assert_true(cw.events[k] > 100);
            for (int c = 0; c < PES_SIM_MISS_CLASSES; c++)
                assert_true(pes_sim_totals(whole)->misses[0][c] > 100);
            free(hits), free(priv), free(shared);
            assert_true(pes_sim_writebacks(whole) > 100);
            pes_sim_destroy(whole);
        }
    }
    free(acc);
}

static void bad_partitions_refused(void **st)
{
    (void)st;
    struct pes_machine m = small_machine();
    struct pes_error err = {0};
    struct pes_sim_config cfg = {.machine = &m,
                                 .n_cores = CORES,
                                 .core_socket = core_socket,
                                 .n_threads = THREADS,
                                 .page_size = 1024,
                                 .partition_bits = 5};
    assert_null(pes_sim_create(&cfg, &err)); /* more bits than the geometry keeps */
    assert_int_equal(err.code, PES_ERR_ARG);
    cfg.partition_bits = 2;
    cfg.partition = 4;
    assert_null(pes_sim_create(&cfg, &err)); /* no partition 4 of 4 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(presets),
        cmocka_unit_test(page_rule_forces_fewer),
        cmocka_unit_test(whole_equals_partitions),
        cmocka_unit_test(bad_partitions_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
