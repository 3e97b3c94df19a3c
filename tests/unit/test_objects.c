/*
 * test_objects.c — replay/objects: globals named from this test's own DWARF
 * (its executable mapped as /proc/self/maps says, as the runtime's MAPS
 * block would give it; built once as a PIE and once not), heap sites named
 * from real return addresses, and the live-block map against a brute-force
 * oracle over random alloc / free / lookup sequences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elf.h>
#include <cmocka.h>

#include "objects.h"
#include "self_maps.h"

/* Known globals: their addresses are the ground truth. */
int table[8];
struct pair {
    long hot;
    long cold;
} counters;
struct row {
    int id;
    double sum;
} rows[4];
int grid[3][5];
struct padded {
    char c;
    int i;
} padded_var;

__attribute__((noinline)) long *bump_counter(void)
{
    static long count;
    count++;
    return &count;
}

/* This executable's mappings, its own path replaced by as_path (a copy of
 * it: same segments) if not NULL; the first warning in warn. */
static struct pes_objects *load_self_as(const char *as_path, char *warn, size_t warn_size)
{
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(k > 0);
    exe[k] = '\0';
    struct pes_mapping m[64];
    static char paths[64][4096];
    size_t n = self_maps(m, paths, 64, exe, as_path);
    struct pes_objects *o = pes_objects_create();
    assert_non_null(o);
    pes_objects_load_mappings(o, m, n, warn, warn_size);
    return o;
}

static struct pes_objects *load_self(void)
{
    char warn[512];
    return load_self_as(NULL, warn, sizeof warn);
}

/* The object and offset of addr, and its description. */
static const char *what(struct pes_objects *o, const void *addr, uint32_t site, uint64_t *off)
{
    static char buf[256];
    uint32_t id = pes_objects_lookup(o, (uint64_t)(uintptr_t)addr, site, off);
    pes_objects_describe(o, id, *off, buf, sizeof buf);
    return buf;
}

static void test_globals_of_self(void **state)
{
    (void)state;
    /* the variant built is what its name says (the ELF header of this executable) */
    FILE *f = fopen("/proc/self/exe", "rb");
    Elf64_Ehdr eh;
    assert_int_equal(fread(&eh, sizeof eh, 1, f), 1);
    fclose(f);
#ifdef PES_TEST_PIE
    assert_int_equal(eh.e_type, ET_DYN);
#else
    assert_int_equal(eh.e_type, ET_EXEC);
#endif
    struct pes_objects *o = load_self();
    uint64_t off;
    assert_string_equal(what(o, &table[3], 1, &off), "table[3]");
    assert_int_equal(off, 12);
    uint32_t id = pes_objects_lookup(o, (uint64_t)(uintptr_t)&table[0], 2, &off);
    const struct pes_object *ob = pes_objects_get(o, id);
    assert_int_equal(ob->kind, PES_OBJ_GLOBAL);
    assert_string_equal(ob->name, "table");
    assert_int_equal(ob->size, sizeof table);
    assert_non_null(strstr(ob->where, "test_objects.c:"));
    /* the same site, another element: the cached range answers */
    assert_string_equal(what(o, &table[7], 2, &off), "table[7]");
    assert_int_equal(off, 28);
    assert_string_equal(what(o, (char *)&table[5] + 2, 2, &off), "table[5]+2");
    assert_string_equal(what(o, &counters.hot, 3, &off), "counters.hot");
    assert_string_equal(what(o, &counters.cold, 3, &off), "counters.cold");
    assert_int_equal(off, 8);
    assert_string_equal(what(o, &rows[2].sum, 4, &off), "rows[2].sum");
    assert_string_equal(what(o, &rows[0].id, 4, &off), "rows[0].id");
    assert_string_equal(what(o, &grid[2][4], 5, &off), "grid[2][4]");
    assert_string_equal(what(o, &grid[1][0], 5, &off), "grid[1][0]");
    assert_string_equal(what(o, (char *)&padded_var + 1, 6, &off), "padded_var+1"); /* padding */
    assert_string_equal(what(o, &padded_var.i, 6, &off), "padded_var.i");
    assert_string_equal(what(o, bump_counter(), 7, &off), "bump_counter::count");
    /* past every global: unknown, offset 0 */
    int local = 0;
    assert_int_equal(pes_objects_lookup(o, (uint64_t)(uintptr_t)&local, 8, &off), 0);
    assert_int_equal(off, 0);
    char buf[64];
    assert_int_equal(pes_objects_describe(o, 0, 0, buf, sizeof buf), strlen("unknown"));
    assert_string_equal(buf, "unknown");
    pes_objects_destroy(o);
}

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* Copies of this executable without DWARF (ELF symbols: the variable, no
 * element) and without any symbols (a warning naming it; unknown). */
static void test_stripped_copies(void **state)
{
    (void)state;
    char copy[128], cmd[8400], warn[512], exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1); /* not objcopy's /proc/self */
    assert_true(k > 0);
    exe[k] = '\0';
    snprintf(copy, sizeof copy, "/tmp/pes-test-objects-stripped-%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "objcopy --strip-debug '%s' %s", exe, copy);
    if (system(cmd) != 0) {
        skip(); /* no objcopy (binutils) */
        return;
    }
    struct pes_objects *o = load_self_as(copy, warn, sizeof warn);
    uint64_t off;
    assert_string_equal(what(o, &table[3], 1, &off), "table+12");
    uint32_t id = pes_objects_lookup(o, (uint64_t)(uintptr_t)&table[0], 1, &off);
    assert_string_equal(pes_objects_get(o, id)->name, "table");
#if TEST_ASAN
    /* AddressSanitizer's redzone after a global is part of its ELF symbol */
    assert_true(pes_objects_get(o, id)->size >= sizeof table);
#else
    assert_int_equal(pes_objects_get(o, id)->size, sizeof table);
#endif
    assert_string_equal(pes_objects_get(o, id)->where, "");
    pes_objects_destroy(o);
#if TEST_ASAN
    /* AddressSanitizer's runtime exports the program's globals in .dynsym,
     * which --strip-all keeps: such a copy is not symbol-less */
    unlink(copy);
    return;
#endif
    snprintf(cmd, sizeof cmd, "objcopy --strip-all '%s' %s", exe, copy);
    assert_int_equal(system(cmd), 0);
    o = load_self_as(copy, warn, sizeof warn);
    assert_non_null(strstr(warn, copy));
    assert_non_null(strstr(warn, "no symbols"));
    assert_int_equal(pes_objects_lookup(o, (uint64_t)(uintptr_t)&table[3], 1, &off), 0);
    pes_objects_destroy(o);
    unlink(copy);
}

/* A missing executable: a warning naming it, and everything unknown. */
static void test_missing_executable(void **state)
{
    (void)state;
    struct pes_mapping m = {
        .start = 0x400000, .end = 0x401000, .file_offset = 0, .path = "/nonexistent/prog"};
    struct pes_objects *o = pes_objects_create();
    char warn[512];
    assert_int_equal(pes_objects_load_mappings(o, &m, 1, warn, sizeof warn), 0);
    assert_non_null(strstr(warn, "/nonexistent/prog"));
    uint64_t off = 7;
    assert_int_equal(pes_objects_lookup(o, 0x400010, 1, &off), 0);
    assert_int_equal(off, 0);
    pes_objects_destroy(o);
    /* a fifo (a damaged trace's path): not opened for reading, so no hang */
    char fifo[64];
    snprintf(fifo, sizeof fifo, "/tmp/pes-test-objects-fifo-%d", (int)getpid());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    m.path = fifo;
    o = pes_objects_create();
    assert_int_equal(pes_objects_load_mappings(o, &m, 1, warn, sizeof warn), 0);
    assert_non_null(strstr(warn, "not a regular file"));
    pes_objects_destroy(o);
    unlink(fifo);
}

/* ------------------------------------------------------------ heap sites */

static uint64_t site_ips[4][2];
static const uint64_t *alloc_site_of(const void *ctx, uint32_t id, uint32_t *depth)
{
    (void)ctx;
    if (id >= 4)
        return NULL;
    *depth = 2;
    return site_ips[id];
}

__attribute__((noinline)) static uint64_t return_address(void)
{
    uint64_t a = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return a;
}

__attribute__((noinline)) static int make_sites(void)
{
    // clang-format off: the call and __LINE__ share a line (the site's line); the next sites follow line by line
    site_ips[0][0] = return_address(); int line0 = __LINE__;
    site_ips[1][0] = return_address();
    site_ips[2][0] = return_address();
    // clang-format on
    return line0;
}

static const struct pes_site *site_of(const void *ctx, uint32_t id)
{
    (void)ctx;
    static struct pes_site s[2] = {{.id = 0, .function = "main", .file = "x.c"},
                                   {.id = 1, .function = "worker", .file = "x.c"}};
    return &s[id % 2];
}

static void test_heap_sites_and_stacks(void **state)
{
    (void)state;
    struct pes_objects *o = load_self();
    int line0 = make_sites();
    // clang-format off: the call and __LINE__ share a line, the site's line (the return address)
    uint64_t caller = return_address(); int line_caller = __LINE__;
    // clang-format on
    for (int i = 0; i < 3; i++)
        site_ips[i][1] = caller;
    /* site 3: site 0's allocation, called from elsewhere */
    site_ips[3][0] = site_ips[0][0];
    // clang-format off: the call and __LINE__ share a line, the site's line (the return address)
    site_ips[3][1] = return_address(); int line_caller3 = __LINE__;
    // clang-format on
    pes_objects_set_alloc_sites(o, alloc_site_of, NULL);
    pes_objects_set_sites(o, site_of, NULL);
    pes_objects_alloc(o, 0x10000, 64, 0);
    pes_objects_alloc(o, 0x20000, 128, 1);
    uint64_t off;
    uint32_t a = pes_objects_lookup(o, 0x10008, 0, &off),
             b = pes_objects_lookup(o, 0x20010, 0, &off);
    assert_int_equal(off, 16);
    assert_true(a != 0 && b != 0 && a != b);
    char want[256];
    snprintf(want, sizeof want, "heap@test_objects.c:%d (make_sites)", line0);
    assert_string_equal(pes_objects_get(o, a)->name, want);
    snprintf(want, sizeof want, "heap@test_objects.c:%d (make_sites)", line0 + 1);
    assert_string_equal(pes_objects_get(o, b)->name, want);
    snprintf(want, sizeof want,
             "make_sites test_objects.c:%d < test_heap_sites_and_stacks test_objects.c:%d", line0,
             line_caller);
    assert_string_equal(pes_objects_get(o, a)->stack, want);
    assert_int_equal(pes_objects_get(o, a)->kind, PES_OBJ_HEAP);
    /* the same allocation line from another caller: its own object, told apart by the caller */
    pes_objects_alloc(o, 0x40000, 8, 3);
    uint32_t d = pes_objects_lookup(o, 0x40000, 0, &off);
    assert_true(d != 0 && d != a && d != b);
    snprintf(want, sizeof want,
             "heap@test_objects.c:%d (make_sites < test_heap_sites_and_stacks test_objects.c:%d)",
             line0, line_caller3);
    assert_string_equal(pes_objects_get(o, d)->name, want);
    pes_objects_free(o, 0x40000);
    /* freed: unknown; the same address again from site 2: the new site's */
    pes_objects_free(o, 0x10000);
    assert_int_equal(pes_objects_lookup(o, 0x10008, 0, &off), 0);
    pes_objects_alloc(o, 0x10000, 32, 2);
    uint32_t c = pes_objects_lookup(o, 0x10008, 0, &off);
    assert_true(c != a && c != 0);
    assert_int_equal(pes_objects_lookup(o, 0x10020, 0, &off), 0); /* past the smaller block */
    /* sampled traces: a FREE older than the live block's ALLOC is the block
     * that lived there before (another thread's events reached the file late) */
    pes_objects_alloc_at(o, 0x50000, 16, 1, 100);
    uint32_t e = pes_objects_lookup(o, 0x50000, 0, &off);
    assert_true(e != 0);
    pes_objects_free_at(o, 0x50000, 99);
    assert_int_equal(pes_objects_lookup(o, 0x50008, 0, &off), e);
    pes_objects_free_at(o, 0x50000, 100);
    assert_int_equal(pes_objects_lookup(o, 0x50008, 0, &off), 0);
    /* a second block of site 0: the same object, two blocks, largest size */
    pes_objects_alloc(o, 0x30000, 256, 0);
    assert_int_equal(pes_objects_lookup(o, 0x300ff, 0, &off), a);
    assert_int_equal(off, 255);
    assert_int_equal(pes_objects_get(o, a)->blocks, 2);
    assert_int_equal(pes_objects_get(o, a)->size, 256);
    /* describe: a heap object has no type */
    char buf[300];
    pes_objects_describe(o, b, 40, buf, sizeof buf);
    snprintf(want, sizeof want, "heap@test_objects.c:%d (make_sites)+40", line0 + 1);
    assert_string_equal(buf, want);
    /* a thread stack: the accessing site's function names the object */
    pes_objects_alloc(o, 0x7f0000, 0x10000, PES_ALLOC_SITE_STACK);
    uint32_t s0 = pes_objects_lookup(o, 0x7f0100, 0, &off),
             s1 = pes_objects_lookup(o, 0x7f0200, 1, &off);
    assert_string_equal(pes_objects_get(o, s0)->name, "stack:main");
    assert_string_equal(pes_objects_get(o, s1)->name, "stack:worker");
    assert_int_equal(off, 0x200);
    assert_int_equal(pes_objects_lookup(o, 0x7f0300, 2, &off), s0); /* site 2: main too */
    /* FREE of a stack is ignored; the control records, per thread */
    pes_objects_free(o, 0x7f0000);
    assert_int_equal(pes_objects_lookup(o, 0x7f0100, 0, &off), s0);
    struct pes_record r1 = {.addr = 0x50000, .id = PES_ID_ALLOC, .extra = 1};
    struct pes_record r2 = {.addr = 0x60000, .id = PES_ID_ALLOC, .extra = 2};
    struct pes_record z1 = {.addr = 16, .id = PES_ID_ALLOC_SIZE};
    struct pes_record z2 = {.addr = 8, .id = PES_ID_ALLOC_SIZE};
    pes_objects_record(o, 0, &r1);
    pes_objects_record(o, 3, &r2); /* another thread's ALLOC between ALLOC and its size */
    assert_int_equal(pes_objects_lookup(o, 0x50000, 5, &off), 0); /* not live before its size */
    pes_objects_record(o, 0, &z1);
    pes_objects_record(o, 3, &z2);
    assert_int_equal(pes_objects_lookup(o, 0x5000f, 5, &off), b);
    assert_int_equal(pes_objects_lookup(o, 0x50010, 5, &off), 0);
    assert_int_equal(pes_objects_lookup(o, 0x60007, 6, &off), c);
    struct pes_record fr = {.addr = 0x60000, .id = PES_ID_FREE};
    pes_objects_record(o, 0, &fr); /* freed by another thread */
    assert_int_equal(pes_objects_lookup(o, 0x60007, 6, &off), 0);
    pes_objects_destroy(o);
}

/* Lanes: one object table, live blocks apart. Lane 1 walks the same
 * allocation records later than lane 0: an address freed and reused in
 * lane 0 still belongs to its first block in lane 1; only lane 0 counts
 * blocks. */
static void test_lanes(void **state)
{
    (void)state;
    struct pes_objects *o = pes_objects_create();
    assert_non_null(o);
    assert_int_equal(pes_objects_set_lanes(o, 2), 0);
    assert_int_equal(pes_objects_lanes(o), 2);
    struct pes_record a1 = {.addr = 0x1000, .id = PES_ID_ALLOC, .extra = 1};
    struct pes_record s1 = {.addr = 64, .id = PES_ID_ALLOC_SIZE};
    struct pes_record f1 = {.addr = 0x1000, .id = PES_ID_FREE};
    struct pes_record a2 = {.addr = 0x1000, .id = PES_ID_ALLOC, .extra = 2};
    struct pes_record s2 = {.addr = 32, .id = PES_ID_ALLOC_SIZE};
    uint64_t off;
    for (uint32_t lane = 0; lane < 2; lane++)
        pes_objects_record_lane(o, lane, 0, &a1);
    for (uint32_t lane = 0; lane < 2; lane++)
        pes_objects_record_lane(o, lane, 0, &s1);
    uint32_t first = pes_objects_lookup_lane(o, 1, 0x1010, 0, &off);
    assert_true(first != 0);
    assert_int_equal(off, 16);
    pes_objects_record_lane(o, 0, 0, &f1);
    pes_objects_record_lane(o, 0, 0, &a2);
    pes_objects_record_lane(o, 0, 0, &s2);
    uint32_t second = pes_objects_lookup_lane(o, 0, 0x1010, 0, &off);
    assert_true(second != 0 && second != first);
    assert_int_equal(pes_objects_lookup_lane(o, 1, 0x1010, 0, &off),
                     first); /* the cache is per lane */
    assert_int_equal(pes_objects_lookup_lane(o, 1, 0x1030, 0, &off), first); /* 48 < 64 */
    assert_int_equal(pes_objects_lookup_lane(o, 0, 0x1030, 0, &off), 0);     /* past 32 */
    assert_int_equal(pes_objects_lookup(o, 0x1010, 0, &off), second);        /* lane 0 */
    pes_objects_record_lane(o, 1, 0, &f1);
    assert_int_equal(pes_objects_lookup_lane(o, 1, 0x1010, 0, &off), 0);
    pes_objects_record_lane(o, 1, 0, &a2);
    pes_objects_record_lane(o, 1, 0, &s2);
    assert_int_equal(pes_objects_lookup_lane(o, 1, 0x1010, 0, &off), second);
    assert_int_equal(pes_objects_get(o, first)->blocks, 1);
    assert_int_equal(pes_objects_get(o, second)->blocks, 1);
    assert_int_equal(pes_objects_lookup_lane(o, 2, 0x1010, 0, &off), 0); /* no such lane */
    pes_objects_record_lane(o, 2, 0, &f1);                               /* ignored */
    /* back to one lane: no live blocks, ids kept */
    assert_int_equal(pes_objects_set_lanes(o, 1), 0);
    assert_int_equal(pes_objects_lookup(o, 0x1010, 0, &off), 0);
    assert_int_equal(pes_objects_count(o), 3);
    pes_objects_destroy(o);
}

/* ------------------------------------------------------------ oracle */

struct oblock {
    uint64_t start, end;
    uint32_t site;
};

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void test_live_blocks_vs_oracle(void **state)
{
    (void)state;
    struct pes_objects *o = pes_objects_create();
    pes_objects_set_sites(o, site_of, NULL);
    enum { MAXB = 4096, ADDRS = 1 << 16 };
    struct oblock *live = malloc(MAXB * sizeof *live);
    size_t n = 0;
    uint32_t site_obj[8] = {0};
    for (int step = 0; step < 200000; step++) {
        uint64_t r = rnd() % 100;
        if (r < 10 && n < MAXB) { /* alloc, possibly over live blocks (a FREE missed) */
            uint64_t start = rnd() % ADDRS, size = 1 + rnd() % 300;
            uint32_t site = (uint32_t)(rnd() % 8);
            if (rnd() % 50 == 0)
                site = PES_ALLOC_SITE_STACK;
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (!(live[i].start < start + size && start < live[i].end))
                    live[k++] = live[i];
            n = k;
            live[n++] = (struct oblock){start, start + size, site};
            pes_objects_alloc(o, start, size, site);
        } else if (r < 18) { /* free: a live block's start, or some address */
            uint64_t a = n && rnd() % 4 ? live[rnd() % n].start : rnd() % ADDRS;
            for (size_t i = 0; i < n; i++)
                if (live[i].start == a && live[i].site != PES_ALLOC_SITE_STACK) {
                    live[i] = live[--n];
                    break;
                }
            pes_objects_free(o, a);
        } else { /* lookup, from few sites (the cache is exercised) */
            uint64_t a = n && rnd() % 2 ? live[rnd() % n].start + rnd() % 64 : rnd() % ADDRS;
            uint32_t site = (uint32_t)(rnd() % 4), want_site = 0;
            uint64_t want_off = 0, off;
            int found = 0;
            for (size_t i = 0; i < n; i++)
                if (live[i].start <= a && a < live[i].end)
                    want_site = live[i].site, want_off = a - live[i].start, found++;
            assert_true(found <= 1); /* the oracle's blocks never overlap */
            uint32_t id = pes_objects_lookup(o, a, site, &off);
            if (!found) {
                assert_int_equal(id, 0);
                continue;
            }
            assert_int_equal(off, want_off);
            const struct pes_object *ob = pes_objects_get(o, id);
            assert_non_null(ob);
            if (want_site == PES_ALLOC_SITE_STACK) {
                assert_int_equal(ob->kind, PES_OBJ_STACK);
                assert_string_equal(ob->name, site % 2 ? "stack:worker" : "stack:main");
            } else {
                char want[64];
                snprintf(want, sizeof want, "heap@site %u", want_site);
                assert_string_equal(ob->name, want);
                if (!site_obj[want_site])
                    site_obj[want_site] = id;
                assert_int_equal(id, site_obj[want_site]); /* one object per site */
            }
        }
    }
    free(live);
    pes_objects_destroy(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_globals_of_self),       cmocka_unit_test(test_missing_executable),
        cmocka_unit_test(test_stripped_copies),       cmocka_unit_test(test_heap_sites_and_stacks),
        cmocka_unit_test(test_live_blocks_vs_oracle), cmocka_unit_test(test_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
