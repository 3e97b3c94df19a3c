/*
 * Unit tests of the report rows of issue 12 (replay/analyses): the c2c
 * cache-line table of --simulate against a small MESI run counted by hand,
 * and --by line: a merged row holds exactly the sum of its sites' rows.
 * Batches are built here by hand; no trace file.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <unistd.h>

#include "analysis.h"
#include "objects.h"
#include "report.h"
#include "report_util.h"
#include "self_maps.h"

/* Data objects of this test's own DWARF (built with -g): a struct whose two
 * fields two threads write, and an array whose two elements they write. */
struct tr_stats {
    long hits;
    long misses;
};
struct tr_stats tr_counters __attribute__((aligned(64)));
long tr_slots[8] __attribute__((aligned(64)));

/* Sites 1 and 2 share a.c:21 (different columns and kinds); 3 is alone on
 * b.c:7; 4 and 5 are in c.c:9 and c.c:10. */
static const struct pes_site sites[] = {
    {.id = 0, .file = "main.c", .function = "main", .line = 1, .column = 1},
    {.id = 1, .file = "a.c", .function = "fa", .line = 21, .column = 5, .kind = PES_KIND_STORE},
    {.id = 2, .file = "a.c", .function = "fa", .line = 21, .column = 9, .kind = PES_KIND_LOAD},
    {.id = 3, .file = "b.c", .function = "fb", .line = 7, .column = 3},
    {.id = 4, .file = "c.c", .function = "fc", .line = 9, .column = 1, .kind = PES_KIND_STORE},
    {.id = 5, .file = "c.c", .function = "fc", .line = 10, .column = 2, .kind = PES_KIND_LOAD},
};
enum { N_SITES = sizeof sites / sizeof sites[0] };

static const struct pes_site *site_of(const void *ctx, uint32_t id)
{
    (void)ctx;
    return id < N_SITES ? &sites[id] : NULL;
}

struct acc {
    uint64_t addr;
    uint32_t size, stream, site;
    uint8_t rw;
};

static struct pes_machine machine(void)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "tiny");
    m.ghz = 2.0;
    m.sockets = 1;
    m.cores_per_socket = 2;
    m.n_levels = 1;
    m.level[0] = (struct pes_cache_config){
        .size = 4096, .ways = 4, .line = 64, .latency = 4, .recip_throughput = 1};
    m.mem_latency = 100;
    m.mem_recip_throughput = 10;
    for (int o = 0; o < PES_OP_COUNT; o++) {
        m.op_latency[o] = 1;
        m.op_recip_throughput[o] = 1;
    }
    return m;
}

/* create → batches of `chunk` → finish → publish of one analysis. */
static struct pes_objects *objects; /* NULL: batches without object columns */

static struct pes_report *run(const struct pes_analysis *an, const struct pes_knobs *k,
                              const struct acc *a, size_t n, size_t chunk)
{
    static const uint32_t caches[2] = {0, 0};
    static struct pes_machine m;
    m = machine();
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 2,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of,
                                 .objects = objects};
    struct pes_error err = {0};
    void *self = an->create(&si, k, &err);
    assert_non_null(self);
    uint64_t addr[64];
    uint32_t size[64], stream[64], site[64];
    uint8_t rw[64];
    uint32_t object[64];
    uint64_t object_offset[64];
    assert_true(chunk <= 64);
    for (size_t at = 0; at < n; at += chunk) {
        size_t c = n - at < chunk ? n - at : chunk;
        for (size_t j = 0; j < c; j++) {
            addr[j] = a[at + j].addr;
            size[j] = a[at + j].size;
            stream[j] = a[at + j].stream;
            site[j] = a[at + j].site;
            rw[j] = a[at + j].rw;
            if (objects)
                object[j] = pes_objects_lookup(objects, addr[j], site[j], &object_offset[j]);
        }
        struct pes_batch b = {.n = c,
                              .addr = addr,
                              .size = size,
                              .length = size,
                              .stream = stream,
                              .site = site,
                              .rw = rw,
                              .object = objects ? object : NULL,
                              .object_offset = objects ? object_offset : NULL};
        assert_int_equal(an->batch(self, &b, &err), 0);
    }
    if (an->finish)
        assert_int_equal(an->finish(self, &err), 0);
    struct pes_report *r = pes_report_create();
    struct pes_rnode *root = pes_report_root(r);
    struct pes_rnode *configs = pes_r_array(r, root, "configs");
    struct pes_publish p = {
        .r = r, .trace = pes_r_object(r, root, "trace"), .config = pes_r_object(r, configs, NULL)};
    an->publish(self, &p);
    an->destroy(self);
    assert_false(pes_report_failed(r));
    return r;
}

static const struct pes_rnode *config(const struct pes_report *r)
{
    return pes_r_at(pes_r_get(pes_report_tree(r), "configs"), 0);
}

static uint64_t pair_of(const struct pes_rnode *o, const char *key, const char *which)
{
    return pes_r_get_u(pes_r_get(o, key), which);
}

/* ------------------------------------------------------------ c2c by hand
 *
 * Line X (0x1000): stream 0 writes X+0 (8 B, site 1), then stream 1 writes
 * X+8 (8 B, site 4), N rounds. Line Z (0x3000): stream 0 writes Z+0 (4 B,
 * site 3), then stream 1 reads Z+0 (4 B, site 5), N rounds. One private
 * level large enough that nothing is evicted. By hand, with the definitions
 * of sim/mesi.h:
 *  X, round 0: core 0 writes (compulsory, M). Core 1 writes X+8: write miss
 *    with core 0 holding M: invalidation of core 0, false (core 0 touched
 *    bytes 0-7 only), and a transfer 0 -> 1, false. This is X's first event:
 *    X's accesses are counted from this one on.
 *  X, round r >= 1: core 0 writes: coherence miss, false (nobody wrote bytes
 *    0-7 since core 0 lost the line), invalidation of core 1 (false) and a
 *    transfer (false); core 1 likewise.
 *  So at offset 0: writes N-1 (rounds 1..), inval F N-1, coh F N-1, transfers
 *  F N-1, thread T0, source a.c:21; at offset 8: writes N, inval F N, coh F
 *  N-1, transfers F N, thread T1, source c.c:9. Line totals: inval F 2N-1,
 *  coh F 2N-2, transfers F 2N-1, nothing true.
 *  Z, round 0: core 0 writes (M); core 1 reads: miss, core 0 holds M:
 *    downgrade with a transfer, true (core 0 wrote bytes 0-3, requested).
 *    Z's first event: counted from core 1's read of round 0 on.
 *  Z, round r >= 1: core 0 writes with core 1 sharing: upgrade, invalidation
 *    of core 1, true (core 1 read bytes 0-3); core 1 reads: coherence miss,
 *    true (core 0 wrote bytes 0-3 since), transfer true (downgrade).
 *  So Z has one offset row, offset 0 size 4: reads N, writes N-1, threads
 *  T0,T1, sources b.c:7 and c.c:10, inval T N-1, coh T N-1, transfers T N.
 *  Ranking: X has 6N-4 events, Z 3N-2: X first. */
enum { N = 6 };

static size_t c2c_pattern(struct acc *a)
{
    size_t n = 0;
    for (int r = 0; r < N; r++) {
        a[n++] = (struct acc){0x1000, 8, 0, 1, PES_BATCH_WRITE};
        a[n++] = (struct acc){0x1008, 8, 1, 4, PES_BATCH_WRITE};
        a[n++] = (struct acc){0x3000, 4, 0, 3, PES_BATCH_WRITE};
        a[n++] = (struct acc){0x3000, 4, 1, 5, PES_BATCH_READ};
    }
    return n;
}

static void check_offset(const struct pes_rnode *f, uint64_t offset, uint64_t size, uint64_t reads,
                         uint64_t writes, uint64_t inval_t, uint64_t inval_f, uint64_t coh_t,
                         uint64_t coh_f, uint64_t tr_t, uint64_t tr_f, uint64_t threads_mask,
                         const char *src0, const char *src1)
{
    assert_int_equal(pes_r_get_u(f, "offset"), offset);
    assert_int_equal(pes_r_get_u(f, "size"), size);
    assert_int_equal(pes_r_get_u(f, "reads"), reads);
    assert_int_equal(pes_r_get_u(f, "writes"), writes);
    assert_int_equal(pair_of(f, "invalidations", "true"), inval_t);
    assert_int_equal(pair_of(f, "invalidations", "false"), inval_f);
    assert_int_equal(pair_of(f, "coherence_misses", "true"), coh_t);
    assert_int_equal(pair_of(f, "coherence_misses", "false"), coh_f);
    assert_int_equal(pair_of(f, "transfers", "true"), tr_t);
    assert_int_equal(pair_of(f, "transfers", "false"), tr_f);
    const struct pes_rnode *th = pes_r_get(f, "threads");
    uint64_t mask = 0;
    for (size_t i = 0; i < pes_r_count(th); i++)
        mask |= 1ull << pes_r_u(pes_r_at(th, i));
    assert_int_equal(mask, threads_mask);
    const struct pes_rnode *src = pes_r_get(f, "sources");
    assert_int_equal(pes_r_count(src), src1 ? 2 : 1);
    /* the order of sources is the order their sites first touched the row */
    int a0 = strcmp(pes_r_s(pes_r_at(src, 0)), src0) == 0;
    int a1 = src1 && strcmp(pes_r_s(pes_r_at(src, 0)), src1) == 0;
    assert_true(a0 || a1);
    if (src1)
        assert_true(strcmp(pes_r_s(pes_r_at(src, 1)), a0 ? src1 : src0) == 0);
    assert_string_equal(pes_r_get_s(f, "object"), "unknown");
}

static void test_c2c_by_hand(void **state)
{
    (void)state;
    struct acc a[4 * N];
    size_t n = c2c_pattern(a);
    static const size_t chunks[] = {1, 3, 64}; /* the counts must not depend on the batching */
    for (size_t ci = 0; ci < 3; ci++) {
        struct pes_knobs k = {.jobs = 1, .simulate = 1, .top = 10, .sort = "invalidations"};
        struct pes_report *r = run(&pes_analysis_sim, &k, a, n, chunks[ci]);
        const struct pes_rnode *lines =
            pes_r_get(pes_r_get(config(r), "simulation"), "cache_lines");
        assert_int_equal(pes_r_count(lines), 2);
        const struct pes_rnode *x = pes_r_at(lines, 0), *z = pes_r_at(lines, 1);
        assert_int_equal(pes_r_get_u(x, "address"), 0x1000);
        assert_int_equal(pair_of(x, "invalidations", "true"), 0);
        assert_int_equal(pair_of(x, "invalidations", "false"), 2 * N - 1);
        assert_int_equal(pair_of(x, "coherence_misses", "true"), 0);
        assert_int_equal(pair_of(x, "coherence_misses", "false"), 2 * N - 2);
        assert_int_equal(pair_of(x, "transfers", "false"), 2 * N - 1);
        assert_string_equal(pes_r_get_s(x, "object"), "unknown");
        const struct pes_rnode *xo = pes_r_get(x, "offsets");
        assert_int_equal(pes_r_count(xo), 2);
        check_offset(pes_r_at(xo, 0), 0, 8, 0, N - 1, 0, N - 1, 0, N - 1, 0, N - 1, 1, "a.c:21",
                     NULL);
        check_offset(pes_r_at(xo, 1), 8, 8, 0, N, 0, N, 0, N - 1, 0, N, 2, "c.c:9", NULL);

        assert_int_equal(pes_r_get_u(z, "address"), 0x3000);
        assert_int_equal(pair_of(z, "invalidations", "true"), N - 1);
        assert_int_equal(pair_of(z, "invalidations", "false"), 0);
        assert_int_equal(pair_of(z, "coherence_misses", "true"), N - 1);
        assert_int_equal(pair_of(z, "transfers", "true"), N);
        const struct pes_rnode *zo = pes_r_get(z, "offsets");
        assert_int_equal(pes_r_count(zo), 1);
        check_offset(pes_r_at(zo, 0), 0, 4, N, N - 1, N - 1, 0, N - 1, 0, N, 0, 3, "b.c:7",
                     "c.c:10");
        pes_report_destroy(r);
    }
    /* --top 1: only the most contended line */
    struct pes_knobs k = {.jobs = 1, .simulate = 1, .top = 1, .sort = "invalidations"};
    struct pes_report *r = run(&pes_analysis_sim, &k, a, n, 64);
    const struct pes_rnode *lines = pes_r_get(pes_r_get(config(r), "simulation"), "cache_lines");
    assert_int_equal(pes_r_count(lines), 1);
    assert_int_equal(pes_r_get_u(pes_r_at(lines, 0), "address"), 0x1000);
    pes_report_destroy(r);
}

/* ------------------------------------------------------------ --by line
 * Reuse rows: every site's row is in "sites"; with --by line the group of
 * a.c:21 must hold sites 1 and 2 with the sums of their counts, and a mean
 * distance equal to the pooled one: sum(mean_s * finite_s) / sum(finite_s).
 * The other lines hold one site each. The access pattern: the c2c pattern
 * plus site 2 reading X+0 and site 0 touching a third line. */
static void test_by_line_sums(void **state)
{
    (void)state;
    struct acc a[6 * N];
    size_t n = c2c_pattern(a);
    for (int r = 0; r < N; r++) {
        a[n++] = (struct acc){0x1000, 8, 0, 2, PES_BATCH_READ};
        a[n++] = (struct acc){0x5000 + 64 * (uint64_t)r, 4, 1, 0, PES_BATCH_READ};
    }
    struct pes_knobs k = {.jobs = 1, .top = 10, .sort = "invalidations", .by = "line"};
    struct pes_report *r = run(&pes_analysis_reuse, &k, a, n, 7);
    const struct pes_rnode *c = config(r), *site_rows = pes_r_get(c, "sites"),
                           *groups = pes_r_get(c, "groups");
    assert_string_equal(pes_r_get_s(c, "by"), "line");
    assert_int_equal(pes_r_count(site_rows), 6);
    assert_int_equal(pes_r_count(groups), 5); /* a.c:21 merges two sites */
    uint64_t total = 0;
    for (size_t g = 0; g < pes_r_count(groups); g++) {
        const struct pes_rnode *row = pes_r_at(groups, g), *ids = pes_r_get(row, "sites");
        uint64_t acc = 0, cold = 0, crd_cold = 0;
        double prd = 0, crd = 0;
        for (size_t i = 0; i < pes_r_count(ids); i++) {
            const struct pes_rnode *s = NULL;
            for (size_t j = 0; j < pes_r_count(site_rows); j++)
                if (pes_r_get_u(pes_r_at(site_rows, j), "site") == pes_r_u(pes_r_at(ids, i)))
                    s = pes_r_at(site_rows, j);
            assert_non_null(s);
            const struct pes_site *site = &sites[pes_r_get_u(s, "site")];
            assert_string_equal(site->file, pes_r_get_s(row, "file"));
            assert_int_equal(site->line, pes_r_get_u(row, "line"));
            uint64_t sa = pes_r_get_u(s, "accesses"), sc = pes_r_get_u(s, "prd_cold"),
                     sk = pes_r_get_u(s, "crd_cold");
            acc += sa;
            cold += sc;
            crd_cold += sk;
            prd += pes_r_get_f(s, "prd_mean") * (double)(sa - sc);
            crd += pes_r_get_f(s, "crd_mean") * (double)(sa - sk);
        }
        if (strcmp(pes_r_get_s(row, "file"), "a.c") == 0) {
            assert_int_equal(pes_r_count(ids), 2);
            assert_string_equal(pes_r_get_s(row, "key"), "a.c:21 fa");
        } else {
            assert_int_equal(pes_r_count(ids), 1);
        }
        assert_int_equal(pes_r_get_u(row, "accesses"), acc);
        assert_int_equal(pes_r_get_u(row, "prd_cold"), cold);
        assert_int_equal(pes_r_get_u(row, "crd_cold"), crd_cold);
        assert_true(fabs(pes_r_get_f(row, "prd_mean") -
                         (acc > cold ? prd / (double)(acc - cold) : 0)) < 1e-4);
        assert_true(fabs(pes_r_get_f(row, "crd_mean") -
                         (acc > crd_cold ? crd / (double)(acc - crd_cold) : 0)) < 1e-4);
        if (g)
            assert_true(pes_r_get_u(pes_r_at(groups, g - 1), "accesses") >= acc); /* ranked */
        total += acc;
    }
    assert_int_equal(total, n);
    pes_report_destroy(r);

    /* --by site: one row per site; --by function: fa, fb, fc, main */
    k.by = "site";
    r = run(&pes_analysis_reuse, &k, a, n, 7);
    assert_int_equal(pes_r_count(pes_r_get(config(r), "groups")), 6);
    pes_report_destroy(r);
    k.by = "function";
    r = run(&pes_analysis_reuse, &k, a, n, 7);
    assert_int_equal(pes_r_count(pes_r_get(config(r), "groups")), 4);
    pes_report_destroy(r);
    /* --by object without resolved objects: one row, "unknown", all accesses */
    k.by = "object";
    r = run(&pes_analysis_reuse, &k, a, n, 7);
    const struct pes_rnode *og = pes_r_get(config(r), "groups");
    assert_int_equal(pes_r_count(og), 1);
    assert_string_equal(pes_r_get_s(pes_r_at(og, 0), "key"), "unknown");
    assert_int_equal(pes_r_get_u(pes_r_at(og, 0), "accesses"), n);
    pes_report_destroy(r);
}

/* The simulation's merged rows: a.c:21 holds sites 1 and 2; its counts are
 * the sums of the two sites' rows of --by site. */
static void test_sim_by_line_sums(void **state)
{
    (void)state;
    struct acc a[5 * N];
    size_t n = c2c_pattern(a);
    for (int r = 0; r < N; r++)
        a[n++] = (struct acc){0x1008, 8, 0, 2, PES_BATCH_READ};
    struct pes_knobs k = {.jobs = 1, .simulate = 1, .top = 10, .sort = "accesses", .by = "site"};
    struct pes_report *rs = run(&pes_analysis_sim, &k, a, n, 5);
    k.by = "line";
    struct pes_report *rl = run(&pes_analysis_sim, &k, a, n, 5);
    const struct pes_rnode *gs = pes_r_get(pes_r_get(config(rs), "simulation"), "groups");
    const struct pes_rnode *gl = pes_r_get(pes_r_get(config(rl), "simulation"), "groups");
    assert_int_equal(pes_r_count(gs), 5);
    assert_int_equal(pes_r_count(gl), 4);
    static const char *const keys[] = {"accesses", "reads", "writes", "l1_misses"};
    const struct pes_rnode *merged = NULL;
    for (size_t g = 0; g < pes_r_count(gl); g++)
        if (strcmp(pes_r_get_s(pes_r_at(gl, g), "file"), "a.c") == 0)
            merged = pes_r_at(gl, g);
    assert_non_null(merged);
    for (int kk = 0; kk < 4; kk++) {
        uint64_t sum = 0;
        for (size_t g = 0; g < pes_r_count(gs); g++)
            if (strcmp(pes_r_get_s(pes_r_at(gs, g), "file"), "a.c") == 0)
                sum += pes_r_get_u(pes_r_at(gs, g), keys[kk]);
        assert_int_equal(pes_r_get_u(merged, keys[kk]), sum);
    }
    uint64_t inval = 0, coh = 0;
    for (size_t g = 0; g < pes_r_count(gs); g++)
        if (strcmp(pes_r_get_s(pes_r_at(gs, g), "file"), "a.c") == 0) {
            inval += pair_of(pes_r_at(gs, g), "invalidations", "false");
            coh += pair_of(pes_r_at(gs, g), "coherence_misses", "false");
        }
    assert_int_equal(pair_of(merged, "invalidations", "false"), inval);
    assert_int_equal(pair_of(merged, "coherence_misses", "false"), coh);
    /* --by site labels: a.c:21:5 store and a.c:21:9 load are told apart by column and kind */
    int seen = 0;
    for (size_t g = 0; g < pes_r_count(gs); g++) {
        const char *key = pes_r_get_s(pes_r_at(gs, g), "key");
        seen += strcmp(key, "a.c:21:5 store fa") == 0 || strcmp(key, "a.c:21:9 load fa") == 0;
    }
    assert_int_equal(seen, 2);
    pes_report_destroy(rs);
    pes_report_destroy(rl);
}

/* ------------------------------------------------------------ objects */

/* This process's executable mappings, as the runtime's MAPS block lists them. */
static struct pes_objects *load_self(void)
{
    struct pes_mapping m[64];
    static char paths[64][4096];
    size_t n = self_maps(m, paths, 64, NULL, NULL);
    struct pes_objects *o = pes_objects_create();
    assert_non_null(o);
    char warn[512];
    assert_true(pes_objects_load_mappings(o, m, n, warn, sizeof warn) >= 1);
    return o;
}

/* The c2c table and --by object name the object and the field or element:
 * thread 0 writes tr_counters.hits and tr_slots[0], thread 1
 * tr_counters.misses and tr_slots[1], N rounds; each line is falsely shared
 * as line X of test_c2c_by_hand (2N-1 false invalidations). */
/* Labels: what a site without a line says; names fitted to a column. */
static void test_labels(void **state)
{
    (void)state;
    char buf[256];
    struct pes_site s = {
        .id = 7, .kind = PES_KIND_STORE, .file = "/src/a/l0.c", .line = 0, .function = "set"};
    report_site_label(buf, sizeof buf, &s, 7);
    assert_string_equal(buf, "l0.c:<unidentified line> store set (site 7)");
    s.file = "";
    report_site_label(buf, sizeof buf, &s, 7);
    assert_string_equal(buf, "<unidentified line> store set (site 7)");
    s.function = "";
    s.file = "/src/a/l0.c";
    report_site_label(buf, sizeof buf, &s, 7);
    assert_string_equal(buf, "l0.c:<unidentified line> store (site 7)");
    s.file = "";
    report_site_label(buf, sizeof buf, &s,
                      7); /* nothing known but the kind: another tool's trace */
    assert_string_equal(buf, "site 7 store");
    s = (struct pes_site){.id = 7,
                          .kind = PES_KIND_LOAD,
                          .file = "/src/a/l0.c",
                          .line = 12,
                          .column = 3,
                          .function = "main"};
    report_site_label(buf, sizeof buf, &s, 7);
    assert_string_equal(buf, "l0.c:12:3 load main");
    /* fitted: padded, or its start and end around "..." in exactly width code points */
    report_fit(buf, sizeof buf, "abc", 10);
    assert_string_equal(buf, "abc       ");
    report_fit(buf, sizeof buf, "abcdefghij", 10);
    assert_string_equal(buf, "abcdefghij");
    report_fit(buf, sizeof buf, "abcdefghijklmnop", 10);
    assert_string_equal(buf, "abcd...nop"); /* head 4, tail 3 */
    /* UTF-8: counted and cut by code points, never inside one */
    report_fit(
        buf, sizeof buf,
        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
        10);
    assert_string_equal(buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...\xc3\xa9\xc3\xa9\xc3\xa9");
    report_fit(buf, sizeof buf, "\xc3\xa9t\xc3\xa9", 5);
    assert_string_equal(buf, "\xc3\xa9t\xc3\xa9  ");
    /* a buffer too small for the result: truncated, terminated */
    char small[6];
    report_fit(small, sizeof small, "abcdefghij", 10);
    assert_int_equal(strlen(small), 5);
}

static void test_c2c_names_objects(void **state)
{
    (void)state;
    objects = load_self();
    struct acc a[4 * N];
    size_t n = 0;
    for (int r = 0; r < N; r++) {
        a[n++] = (struct acc){(uint64_t)(uintptr_t)&tr_counters.hits, 8, 0, 1, PES_BATCH_WRITE};
        a[n++] = (struct acc){(uint64_t)(uintptr_t)&tr_counters.misses, 8, 1, 4, PES_BATCH_WRITE};
        a[n++] = (struct acc){(uint64_t)(uintptr_t)&tr_slots[0], 8, 0, 1, PES_BATCH_WRITE};
        a[n++] = (struct acc){(uint64_t)(uintptr_t)&tr_slots[1], 8, 1, 4, PES_BATCH_WRITE};
    }
    struct pes_knobs k = {
        .jobs = 1, .simulate = 1, .top = 10, .sort = "invalidations", .by = "line"};
    struct pes_report *r = run(&pes_analysis_sim, &k, a, n, 5);
    const struct pes_rnode *lines = pes_r_get(pes_r_get(config(r), "simulation"), "cache_lines");
    assert_int_equal(pes_r_count(lines), 2);
    int seen = 0;
    for (size_t i = 0; i < 2; i++) {
        const struct pes_rnode *l = pes_r_at(lines, i), *offs = pes_r_get(l, "offsets");
        assert_int_equal(pair_of(l, "invalidations", "false"), 2 * N - 1);
        assert_int_equal(pes_r_count(offs), 2);
        const char *obj = pes_r_get_s(l, "object");
        if (strcmp(obj, "tr_counters") == 0) {
            assert_string_equal(pes_r_get_s(pes_r_at(offs, 0), "part"), "tr_counters.hits");
            assert_string_equal(pes_r_get_s(pes_r_at(offs, 1), "part"), "tr_counters.misses");
            seen |= 1;
        } else {
            assert_string_equal(obj, "tr_slots");
            assert_string_equal(pes_r_get_s(pes_r_at(offs, 0), "part"), "tr_slots[0]");
            assert_string_equal(pes_r_get_s(pes_r_at(offs, 1), "part"), "tr_slots[1]");
            seen |= 2;
        }
        assert_string_equal(pes_r_get_s(pes_r_at(offs, 0), "object"), obj);
    }
    assert_int_equal(seen, 3);
    pes_report_destroy(r);
    /* --by object: one row per object, each with all its accesses (2N) and invalidations */
    k.by = "object";
    r = run(&pes_analysis_sim, &k, a, n, 5);
    const struct pes_rnode *g = pes_r_get(pes_r_get(config(r), "simulation"), "groups");
    assert_int_equal(pes_r_count(g), 2);
    for (size_t i = 0; i < 2; i++) {
        const char *key = pes_r_get_s(pes_r_at(g, i), "key");
        assert_true(strcmp(key, "tr_counters") == 0 || strcmp(key, "tr_slots") == 0);
        assert_int_equal(pes_r_get_u(pes_r_at(g, i), "accesses"), 2 * N);
        assert_int_equal(pair_of(pes_r_at(g, i), "invalidations", "false"), 2 * N - 1);
    }
    assert_int_equal(pes_r_count(pes_r_get(pes_r_get(config(r), "simulation"), "sites")), 0);
    pes_report_destroy(r);
    pes_objects_destroy(objects);
    objects = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c2c_by_hand),      cmocka_unit_test(test_by_line_sums),
        cmocka_unit_test(test_sim_by_line_sums), cmocka_unit_test(test_c2c_names_objects),
        cmocka_unit_test(test_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
