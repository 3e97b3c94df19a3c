/* test_mimic.c — PPT-Multicore Alg. 1 / Alg. 2 mimicking on hand-made
 * BB-labelled traces: private traces and round-robin interleavings derived by
 * hand, uniform interleaving checked statistically, profiles against a
 * brute-force LRU stack over the emitted streams. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mimic.h"
#include "reuse_distance.h"

#define OFF UINT64_C(0x100000)

/* ---------------------------------------------------------- a small program */

/* BB 10 "entry" (runs once): site 0 private, site 1 shared.
 * BB 11 "for.body" (runs 4 times): site 2 private, site 3 shared.
 * BB 12 "exit" (once): site 4 private.  Site 5: variable size (extra). */
static const struct pes_site sites[] = {
    {.id = 0, .bb = 10, .kind = PES_KIND_LOAD, .size = 8},
    {.id = 1, .bb = 10, .kind = PES_KIND_LOAD, .flags = PES_SITE_SHARED, .size = 8},
    {.id = 2, .bb = 11, .kind = PES_KIND_STORE, .size = 8},
    {.id = 3, .bb = 11, .kind = PES_KIND_LOAD, .flags = PES_SITE_SHARED, .size = 8},
    {.id = 4, .bb = 12, .kind = PES_KIND_STORE, .size = 4},
    {.id = 5, .bb = 12, .kind = PES_KIND_COPY_DST, .size = 0},
};
static struct pes_bb bbs[] = {
    {.id = 10, .flags = PES_BB_PARALLEL, .label = "entry"},
    {.id = 11, .flags = PES_BB_PARALLEL, .label = "for.body"},
    {.id = 12, .flags = PES_BB_PARALLEL, .label = "exit"},
};

#define BB(i)    {0, (i), 0}
#define AC(s, a) {(a), (s), 0}
static const struct pes_record prog[] = {
    {12345, PES_ID_TIME, 0}, /* control records are ignored */
    BB(10),
    AC(0, 0x1000),
    AC(1, 0x2000),
    BB(11),
    AC(2, 0x3000),
    AC(3, 0x4000),
    BB(11),
    AC(2, 0x3008),
    AC(3, 0x4008),
    BB(11),
    AC(2, 0x3010),
    AC(3, 0x4010),
    BB(11),
    AC(2, 0x3018),
    AC(3, 0x4018),
    BB(12),
    AC(4, 0x5000),
};

struct seen {
    uint32_t core[4096];
    uint64_t addr[4096];
    uint32_t size[4096];
    uint64_t recorded[4096];
    size_t n;
};

static void record_emit(void *ctx, uint32_t core, uint64_t addr, uint32_t size, uint32_t site,
                        uint64_t recorded)
{
    (void)site;
    struct seen *s = ctx;
    if (s->n < 4096) {
        s->core[s->n] = core;
        s->addr[s->n] = addr;
        s->size[s->n] = size;
        s->recorded[s->n] = recorded;
    }
    s->n++;
}

static struct pes_profiles *run(const struct pes_record *recs, size_t n, uint32_t cores,
                                struct pes_mimic_options *o, struct seen *seen)
{
    struct pes_mimic_array a = {recs, n, sites, 6, bbs, 3};
    struct pes_mimic_source src;
    pes_mimic_array_source(&a, &src);
    struct pes_error err = {0};
    struct pes_mimic_counts *c = pes_mimic_count(&src, &err);
    if (!c)
        fail_msg("count: %s", err.message);
    o->n_cores = cores;
    o->emit = record_emit;
    o->emit_ctx = seen;
    memset(seen, 0, sizeof *seen);
    struct pes_profiles *p = pes_mimic_run(&src, c, o, &err);
    if (!p)
        fail_msg("run: %s", err.message);
    pes_mimic_counts_free(c);
    return p;
}

static void expect_stream(const struct seen *s, const uint32_t *core, const uint64_t *addr,
                          size_t n)
{
    assert_int_equal(s->n, n);
    for (size_t i = 0; i < n; i++) {
        if (s->core[i] != core[i] || s->addr[i] != addr[i])
            fail_msg("position %zu: got core %u addr 0x%llx, want core %u addr 0x%llx", i,
                     s->core[i], (unsigned long long)s->addr[i], core[i],
                     (unsigned long long)addr[i]);
    }
}

/* Brute-force LRU distance over an explicit key list (oracle for profiles). */
static void brute_hist(const uint64_t *keys, size_t n, uint64_t *cold, uint64_t *dist_count,
                       size_t max_d)
{
    uint64_t *stack = calloc(n + 1, sizeof *stack);
    size_t depth = 0;
    *cold = 0;
    memset(dist_count, 0, max_d * sizeof *dist_count);
    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < depth; j++)
            if (stack[j] == keys[i])
                break;
        if (j == depth) {
            (*cold)++;
            depth++;
        } else if (j < max_d) {
            dist_count[j]++;
        }
        memmove(&stack[1], &stack[0], j * sizeof *stack);
        stack[0] = keys[i];
    }
    free(stack);
}

/* Checks PRD of every core and the CRD against the brute force on the
 * emitted (interleaved) stream; single-granule accesses assumed. */
static void check_profiles(const struct pes_profiles *p, const struct seen *s, uint32_t cores,
                           unsigned shift)
{
    uint64_t keys[4096], cold, cnt[64];
    for (uint32_t c = 0; c <= cores; c++) {
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++)
            if (c == cores || s->core[i] == c)
                keys[n++] = s->addr[i] >> shift;
        brute_hist(keys, n, &cold, cnt, 64);
        const struct pes_rd_hist *h = c == cores ? pes_profiles_crd(p, 0) : pes_profiles_prd(p, c);
        assert_int_equal(h->total, n);
        assert_int_equal(h->cold, cold);
        for (int d = 0; d < 64; d++)
            assert_int_equal(pes_rd_hist_exact(h, d), cnt[d]);
    }
}

/* ---------------------------------------------------------- tests */

/* 2 cores: BB 10 and 12 run once (< 2): copied to both cores; BB 11 runs 4
 * times: instances 0,1 -> core 0, 2,3 -> core 1 (floor(k*2/4)). Core 1 adds
 * OFF to private addresses only. Round-robin alternates from core 0. */
static void test_two_cores_round_robin(void **state)
{
    (void)state;
    struct seen *s = malloc(sizeof *s);
    struct pes_mimic_options o = {.offset = OFF, .granule = 8};
    struct pes_profiles *p = run(prog, sizeof prog / sizeof *prog, 2, &o, s);
    const uint32_t core[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    const uint64_t addr[] = {
        0x1000, 0x1000 + OFF, 0x2000,       0x2000, 0x3000, 0x3010 + OFF, 0x4000,
        0x4010, 0x3008,       0x3018 + OFF, 0x4008, 0x4018, 0x5000,       0x5000 + OFF,
    };
    expect_stream(s, core, addr, 14);
    /* the sequential run's addresses, as the trace holds them */
    const uint64_t recorded[] = {
        0x1000, 0x1000, 0x2000, 0x2000, 0x3000, 0x3010, 0x4000,
        0x4010, 0x3008, 0x3018, 0x4008, 0x4018, 0x5000, 0x5000,
    };
    for (size_t i = 0; i < 14; i++)
        assert_int_equal(s->recorded[i], recorded[i]);
    /* word granularity: shared 0x2000 is touched by core 0 then core 1 right
     * after: CRD 0 on core 1 while its PRD there is cold; all else is cold */
    assert_int_equal(pes_profiles_prd(p, 1)->cold, 7);
    assert_int_equal(pes_profiles_crd(p, 0)->cold, 13);
    assert_int_equal(pes_rd_hist_exact(pes_profiles_crd(p, 0), 0), 1);
    check_profiles(p, s, 2, 3);
    pes_profiles_destroy(p);
    free(s);
}

/* Control records reach opt->control once per core, each core at its own
 * place: after the accesses before the record in the sequential trace that
 * the core runs. The ALLOC below follows BB 10 (run once: copied to both
 * cores) and the first for.body instance (core 0's of two), so core 0 has
 * emitted 4 accesses when it passes the ALLOC and core 1 only BB 10's 2. */
struct ctl_log {
    uint32_t emitted[2];  /* accesses emitted so far per core */
    uint32_t at_alloc[2]; /* emitted[core] when core passed the ALLOC */
    uint32_t allocs[2], others[2];
};

static void ctl_emit(void *ctx, uint32_t core, uint64_t addr, uint32_t size, uint32_t site,
                     uint64_t recorded)
{
    (void)addr, (void)size, (void)site, (void)recorded;
    struct ctl_log *l = ctx;
    l->emitted[core]++;
}

static void ctl_control(void *ctx, uint32_t core, const struct pes_record *r)
{
    struct ctl_log *l = ctx;
    if (r->id == PES_ID_ALLOC) {
        l->allocs[core]++;
        l->at_alloc[core] = l->emitted[core];
    } else {
        l->others[core]++;
    }
}

static void test_control_records(void **state)
{
    (void)state;
    static const struct pes_record recs[] = {
        {12345, PES_ID_TIME, 0},
        BB(10),
        AC(0, 0x1000),
        AC(1, 0x2000),
        BB(11),
        AC(2, 0x3000),
        AC(3, 0x4000),
        {0x9000, PES_ID_ALLOC, 7},
        BB(11),
        AC(2, 0x3008),
        AC(3, 0x4008),
        BB(12),
        AC(4, 0x5000),
    };
    struct pes_mimic_array a = {recs, sizeof recs / sizeof *recs, sites, 6, bbs, 3};
    struct pes_mimic_source src;
    pes_mimic_array_source(&a, &src);
    struct pes_error err = {0};
    struct pes_mimic_counts *c = pes_mimic_count(&src, &err);
    assert_non_null(c);
    struct ctl_log l;
    memset(&l, 0, sizeof l);
    struct pes_mimic_options o = {.n_cores = 2,
                                  .offset = OFF,
                                  .granule = 8,
                                  .emit = ctl_emit,
                                  .emit_ctx = &l,
                                  .control = ctl_control};
    assert_int_equal(pes_mimic_interleave(&src, c, &o, &err), 0);
    /* BB 11 runs twice: instance 0 on core 0, instance 1 on core 1 */
    assert_int_equal(l.allocs[0], 1);
    assert_int_equal(l.allocs[1], 1);
    assert_int_equal(l.others[0], 1); /* the time mark */
    assert_int_equal(l.others[1], 1);
    assert_int_equal(l.at_alloc[0], 4);
    assert_int_equal(l.at_alloc[1], 2);
    assert_int_equal(l.emitted[0], 5);
    assert_int_equal(l.emitted[1], 5);
    pes_mimic_counts_free(c);
}

/* 3 cores: BB 11 (4 >= 3) instances -> cores floor(k*3/4) = 0,0,1,2.
 * Round robin: 5 refs each from cores 0,1,2, then core 0's last two. */
static void test_three_cores_round_robin(void **state)
{
    (void)state;
    struct seen *s = malloc(sizeof *s);
    struct pes_mimic_options o = {.offset = OFF, .granule = 64};
    struct pes_profiles *p = run(prog, sizeof prog / sizeof *prog, 3, &o, s);
    const uint64_t O2 = 2 * OFF;
    const uint32_t core[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0};
    const uint64_t addr[] = {
        0x1000, 0x1000 + OFF, 0x1000 + O2, 0x2000, 0x2000, 0x2000,
        0x3000, 0x3010 + OFF, 0x3018 + O2, 0x4000, 0x4010, 0x4018,
        0x3008, 0x5000 + OFF, 0x5000 + O2, 0x4008, 0x5000,
    };
    expect_stream(s, core, addr, 17);
    check_profiles(p, s, 3, 6);
    /* line granularity: 0x4000..0x4018 is one shared line, touched by cores
     * 0, 1, 2 back to back: CRD 0, 0; on each core's own PRD it is cold */
    assert_int_equal(pes_profiles_prd(p, 1)->cold, 5);
    pes_profiles_destroy(p);
    free(s);
}

/* schedule(static, 1): BB 11 instances alternate 0,1,0,1; 5 cores (> 4
 * instances): every BB is copied to all 5 cores. */
static void test_chunk_and_copy(void **state)
{
    (void)state;
    struct seen *s = malloc(sizeof *s);
    struct pes_mimic_options o = {.offset = OFF, .chunk = 1};
    struct pes_profiles *p = run(prog, sizeof prog / sizeof *prog, 2, &o, s);
    const uint32_t core[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    const uint64_t addr[] = {
        0x1000, 0x1000 + OFF, 0x2000,       0x2000, 0x3000, 0x3008 + OFF, 0x4000,
        0x4008, 0x3010,       0x3018 + OFF, 0x4010, 0x4018, 0x5000,       0x5000 + OFF,
    };
    expect_stream(s, core, addr, 14);
    pes_profiles_destroy(p);

    struct pes_mimic_options o5 = {.offset = OFF};
    p = run(prog, sizeof prog / sizeof *prog, 5, &o5, s);
    assert_int_equal(s->n, 5 * 11);
    for (uint32_t c = 0; c < 5; c++) {
        assert_int_equal(pes_profiles_prd(p, c)->total, 11);
        /* core c's 3rd access is BB 11's first private one: 0x3000 + c*OFF */
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->core[i] == c && k++ == 2)
                assert_true(s->addr[i] == 0x3000 + c * OFF);
    }
    /* round robin with equal lengths: position i belongs to core i mod 5 */
    for (size_t i = 0; i < s->n; i++)
        assert_int_equal(s->core[i], i % 5);
    pes_profiles_destroy(p);
    free(s);
}

/* serial_on_master: BB 10 without PES_BB_PARALLEL runs only on core 0;
 * an access before any BB entry also runs only on core 0; a variable-size
 * site takes its length from extra. Several core counts in one call. */
static void test_serial_and_many(void **state)
{
    (void)state;
    const struct pes_record recs[] = {
        AC(0, 0x800),  BB(10), AC(0, 0x1000), AC(1, 0x2000), BB(11),
        AC(2, 0x3000), BB(11), AC(2, 0x3040), BB(12),        {0x6000, 5, 128},
    };
    bbs[0].flags = 0;
    struct seen *s = malloc(sizeof *s);
    struct pes_mimic_options o = {.offset = OFF, .serial_on_master = 1};
    struct pes_profiles *p = run(recs, sizeof recs / sizeof *recs, 2, &o, s);
    bbs[0].flags = PES_BB_PARALLEL;
    const uint32_t core[] = {0, 1, 0, 1, 0, 0, 0};
    const uint64_t addr[] = {0x800, 0x3040 + OFF, 0x1000, 0x6000 + OFF, 0x2000, 0x3000, 0x6000};
    expect_stream(s, core, addr, 7);
    assert_int_equal(s->size[3], 128);
    /* 128 bytes at line granularity = two accesses, both cold */
    assert_int_equal(pes_profiles_prd(p, 1)->total, 3);
    assert_int_equal(pes_profiles_prd(p, 1)->cold, 3);
    pes_profiles_destroy(p);

    struct pes_mimic_array a = {prog, sizeof prog / sizeof *prog, sites, 6, bbs, 3};
    struct pes_mimic_source src;
    pes_mimic_array_source(&a, &src);
    struct pes_mimic_counts *c = pes_mimic_count(&src, NULL);
    assert_non_null(c);
    assert_int_equal(pes_mimic_bb_count(c, 11), 4);
    assert_int_equal(pes_mimic_bb_count(c, 10), 1);
    assert_int_equal(pes_mimic_bb_count(c, 99), 0);
    assert_int_equal(pes_mimic_accesses(c), 11);
    const uint32_t ncores[3] = {1, 2, 4};
    struct pes_profiles *out[3];
    struct pes_mimic_options om = {.offset = OFF, .granule = 8};
    assert_int_equal(pes_mimic_run_many(&src, c, &om, ncores, 3, out, NULL), 0);
    /* references: 1 core = 11; 2 cores: BB 10, 12 copied (3 refs x 2) + BB 11's
     * 8 refs split = 14; 4 cores: 4 >= 4 so BB 11 is still split: 3*4 + 8 = 20 */
    assert_int_equal(pes_profiles_crd(out[0], 0)->total, 11);
    assert_int_equal(pes_profiles_crd(out[1], 0)->total, 14);
    assert_int_equal(pes_profiles_crd(out[2], 0)->total, 20);
    assert_int_equal(pes_profiles_streams(out[2]), 4);
    for (int i = 0; i < 3; i++)
        pes_profiles_destroy(out[i]);
    pes_mimic_counts_free(c);
    free(s);
}

/* per_region: BB instances are counted and split per parallel-region
 * instance (OpenMP schedules each loop execution separately); code between
 * regions runs on core 0. Without it (the paper's whole-trace split), core 0
 * gets the whole first region and core 1 the second. A nested region inside
 * the second one does not start a new instance. */
static void test_per_region(void **state)
{
    (void)state;
    const struct pes_record recs[] = {
        BB(12),
        AC(4, 0x5000),
        {10, PES_ID_REGION_BEGIN, 0},
        BB(10),
        AC(0, 0x1000),
        AC(1, 0x2000),
        BB(11),
        AC(2, 0x3000),
        BB(11),
        AC(2, 0x3008),
        {10, PES_ID_REGION_END, 0},
        {10, PES_ID_REGION_BEGIN, 0},
        BB(10),
        AC(0, 0x1000),
        AC(1, 0x2000),
        BB(11),
        AC(2, 0x3000),
        {11, PES_ID_REGION_BEGIN, 0},
        BB(11),
        AC(2, 0x3008),
        {11, PES_ID_REGION_END, 0},
        {10, PES_ID_REGION_END, 0},
        BB(12),
        AC(4, 0x5008),
    };
    const size_t n = sizeof recs / sizeof *recs;
    struct seen *s = malloc(sizeof *s);
    struct pes_mimic_options o = {.offset = OFF, .per_region = 1};
    struct pes_profiles *p = run(recs, n, 2, &o, s);
    const uint32_t core[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0};
    const uint64_t addr[] = {
        0x5000,       0x1000 + OFF, 0x1000, 0x2000, 0x2000,       0x3008 + OFF, 0x3000,
        0x1000 + OFF, 0x1000,       0x2000, 0x2000, 0x3008 + OFF, 0x3000,       0x5008,
    };
    expect_stream(s, core, addr, 14);
    pes_profiles_destroy(p);

    struct pes_mimic_options w = {.offset = OFF};
    p = run(recs, n, 2, &w, s);
    const uint32_t core_w[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    const uint64_t addr_w[] = {
        0x5000,       0x1000 + OFF, 0x1000,       0x2000, 0x2000,
        0x3000 + OFF, 0x3000,       0x3008 + OFF, 0x3008, 0x5008 + OFF,
    };
    expect_stream(s, core_w, addr_w, 10);
    pes_profiles_destroy(p);

    struct pes_mimic_array a = {recs, n, sites, 6, bbs, 3};
    struct pes_mimic_source src;
    pes_mimic_array_source(&a, &src);
    struct pes_mimic_counts *c = pes_mimic_count(&src, NULL);
    assert_non_null(c);
    assert_int_equal(pes_mimic_regions(c), 2);
    pes_mimic_counts_free(c);
    /* cut inside the second region: it still counts as one */
    struct pes_mimic_array cut = {recs, n - 4, sites, 6, bbs, 3};
    pes_mimic_array_source(&cut, &src);
    c = pes_mimic_count(&src, NULL);
    assert_non_null(c);
    assert_int_equal(pes_mimic_regions(c), 2);
    pes_mimic_counts_free(c);
    free(s);
}

/* Random BB-labelled traces against a plain materialising Alg. 1 + round-robin
 * Alg. 2 written here: private lists per core, then one reference per core in
 * turn. Checks the lazy per-core cursors end to end, and the profiles. */
static void test_random_vs_materialised(void **state)
{
    (void)state;
    enum { NREC = 700 };
    struct pes_record recs[NREC];
    static uint32_t pc[4][4 * NREC];
    static uint64_t pa[4][4 * NREC];
    struct seen *s = malloc(sizeof *s);
    uint64_t st = 88172645463325252u;
    for (int trial = 0; trial < 6; trial++) {
        /* BB 10 rarely, 11 often, 12 sometimes; sites of the block entered */
        size_t n = 0;
        while (n < NREC) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            uint32_t pick = st % 10, bb = pick == 0 ? 10 : pick < 7 ? 11 : 12;
            recs[n++] = (struct pes_record)BB(bb);
            for (int j = 0; j < 3 && n < NREC; j++) {
                st ^= st << 13, st ^= st >> 7, st ^= st << 17;
                uint32_t site = bb == 10 ? (st & 1) : bb == 11 ? 2 + (st & 1) : 4;
                recs[n++] = (struct pes_record)AC(site, 0x10000 + 8 * ((st >> 8) % 300));
            }
        }
        for (uint32_t cores = 1; cores <= 4; cores++) {
            for (uint64_t chunk = 0; chunk <= 3; chunk += 3) {
                /* reference Alg. 1 */
                uint64_t count[3] = {0}, inst[3] = {0};
                size_t len[4] = {0};
                for (size_t i = 0; i < n; i++)
                    if (recs[i].id >= 10)
                        count[recs[i].id - 10]++;
                int cur = -1;
                uint32_t owner = 0;
                int copy = 0;
                for (size_t i = 0; i < n; i++) {
                    if (recs[i].id >= 10) {
                        cur = (int)recs[i].id - 10;
                        uint64_t k = inst[cur]++;
                        copy = count[cur] < cores;
                        owner = chunk ? (uint32_t)((k / chunk) % cores)
                                      : (uint32_t)(k * cores / count[cur]);
                        continue;
                    }
                    int shared = sites[recs[i].id].flags & PES_SITE_SHARED;
                    for (uint32_t c = 0; c < cores; c++) {
                        if (cur < 0 ? c != 0 : !copy && c != owner)
                            continue;
                        pc[c][len[c]] = c;
                        pa[c][len[c]++] = recs[i].addr + (shared ? 0 : c * OFF);
                    }
                }
                /* reference Alg. 2, round robin */
                uint32_t want_core[4096];
                uint64_t want_addr[4096];
                size_t m = 0, pos[4] = {0};
                for (int more = 1; more;) {
                    more = 0;
                    for (uint32_t c = 0; c < cores; c++) {
                        if (pos[c] < len[c]) {
                            want_core[m] = c;
                            want_addr[m++] = pa[c][pos[c]++];
                            more = 1;
                        }
                    }
                }
                struct pes_mimic_options o = {.offset = OFF, .chunk = chunk, .granule = 16};
                struct pes_profiles *p = run(recs, n, cores, &o, s);
                expect_stream(s, want_core, want_addr, m);
                check_profiles(p, s, cores, 4);
                pes_profiles_destroy(p);
            }
        }
    }
    free(s);
}

/* Uniform random: each core's share of the first K positions is Binomial(K,
 * 1/N) while no core has finished; every core's own order is kept. */
static void test_uniform_random(void **state)
{
    (void)state;
    enum { N = 3, PER = 1000, K = 1500 };
    size_t n = 1 + 2 * N * PER;
    struct pes_record *recs = calloc(n, sizeof *recs);
    recs[0] = (struct pes_record)BB(10);
    for (size_t i = 0; i < N * PER; i++) {
        recs[1 + 2 * i] = (struct pes_record)BB(11);
        recs[2 + 2 * i] = (struct pes_record)AC(2, 0x10000 + 8 * i);
    }
    struct seen *s = malloc(sizeof *s);
    uint32_t first_cores[64];
    for (uint64_t seed = 1; seed <= 5; seed++) {
        struct pes_mimic_options o = {
            .offset = OFF, .strategy = PES_INTERLEAVE_UNIFORM, .seed = seed};
        struct pes_profiles *p = run(recs, n, N, &o, s);
        assert_int_equal(s->n, N * PER);
        uint64_t share[N] = {0}, last[N] = {0}, total[N] = {0};
        for (size_t i = 0; i < s->n && i < 4096; i++) {
            uint32_t c = s->core[i];
            if (i < K)
                share[c]++;
            /* instance k of core c is k' = c*PER + j: addresses rise within a core */
            assert_true(s->addr[i] > last[c]);
            last[c] = s->addr[i];
            total[c]++;
            if (seed == 1 && i < 64)
                first_cores[i] = c;
        }
        /* sd = sqrt(K/N (1 - 1/N)) = 18.3; allow 6 sd */
        double sd = sqrt((double)K / N * (1.0 - 1.0 / N));
        for (int c = 0; c < N; c++) {
            assert_true(fabs((double)share[c] - (double)K / N) < 6 * sd);
            assert_int_equal(total[c], PER);
            assert_int_equal(pes_profiles_prd(p, c)->total, PER);
        }
        if (seed == 2) {
            int differs = 0;
            for (size_t i = 0; i < 64; i++)
                differs |= first_cores[i] != s->core[i];
            assert_true(differs); /* the seed matters */
        }
        pes_profiles_destroy(p);
    }
    free(s);
    free(recs);
}

static void test_errors(void **state)
{
    (void)state;
    struct pes_error err = {0};
    const struct pes_record bad[] = {BB(10), AC(0, 0x10), {0, 77, 0}};
    struct pes_mimic_array a = {bad, 3, sites, 6, bbs, 3};
    struct pes_mimic_source src;
    pes_mimic_array_source(&a, &src);
    assert_null(pes_mimic_count(&src, &err));
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_int_equal(err.offset, 2);
    assert_non_null(strstr(err.message, "id 77"));

    /* a private address at or above the offset would collide */
    const struct pes_record high[] = {BB(10), AC(0, OFF + 8)};
    struct pes_mimic_array b = {high, 2, sites, 6, bbs, 3};
    pes_mimic_array_source(&b, &src);
    struct pes_mimic_counts *c = pes_mimic_count(&src, &err);
    assert_non_null(c);
    struct pes_mimic_options o = {.n_cores = 2, .offset = OFF};
    assert_null(pes_mimic_run(&src, c, &o, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    struct pes_mimic_options o2 = {.n_cores = 2, .offset = 100}; /* not a line multiple */
    assert_null(pes_mimic_run(&src, c, &o2, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    struct pes_mimic_options o0 = {.n_cores = 0};
    assert_null(pes_mimic_run(&src, c, &o0, &err));
    struct pes_mimic_options og = {.n_cores = 2, .granule = 24};
    assert_null(pes_mimic_run(&src, c, &og, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_non_null(strstr(err.message, "power of two"));
    /* automatic offset: 2^48 clears this address */
    struct pes_mimic_options oa = {.n_cores = 2};
    struct pes_profiles *p = pes_mimic_run(&src, c, &oa, &err);
    assert_non_null(p);
    assert_int_equal(pes_profiles_crd(p, 0)->cold, 2);
    pes_profiles_destroy(p);
    pes_mimic_counts_free(c);

    /* a private address above 2^48: the automatic offset grows past it */
    const struct pes_record top[] = {BB(10), AC(0, (UINT64_C(1) << 50) + 64)};
    struct pes_mimic_array t = {top, 2, sites, 6, bbs, 3};
    pes_mimic_array_source(&t, &src);
    c = pes_mimic_count(&src, &err);
    struct seen *s = malloc(sizeof *s);
    memset(s, 0, sizeof *s);
    struct pes_mimic_options ot = {.n_cores = 2, .emit = record_emit, .emit_ctx = s};
    p = pes_mimic_run(&src, c, &ot, &err);
    assert_non_null(p);
    assert_int_equal(s->n, 2);
    assert_true(s->addr[1] == (UINT64_C(1) << 51) + (UINT64_C(1) << 50) + 64);
    pes_profiles_destroy(p);
    pes_mimic_counts_free(c);
    free(s);
}

/* A source whose cursors fail after 5 records, from the `fail_from`-th open on:
 * errors propagate (with the source's message) and nothing leaks. */
struct flaky {
    struct pes_mimic_array a;
    struct pes_mimic_source inner;
    int opens, fail_from;
};
struct flaky_cursor {
    void *inner;
    struct flaky *f;
    int fails;
    size_t served;
};

static void *flaky_open(void *ctx, struct pes_error *err)
{
    struct flaky *f = ctx;
    struct flaky_cursor *c = calloc(1, sizeof *c);
    c->f = f;
    c->fails = ++f->opens >= f->fail_from;
    c->inner = f->inner.open(f->inner.ctx, err);
    return c;
}

static long flaky_read(void *cursor, struct pes_record *out, size_t max, struct pes_error *err)
{
    struct flaky_cursor *c = cursor;
    if (c->fails && c->served >= 5) {
        err->code = PES_ERR_IO;
        snprintf(err->message, sizeof err->message, "flaky: read failed");
        return -1;
    }
    if (max > 1)
        max = 1;
    long n = c->f->inner.read(c->inner, out, max, err);
    c->served += (size_t)(n > 0 ? n : 0);
    return n;
}

static void flaky_close(void *cursor)
{
    struct flaky_cursor *c = cursor;
    c->f->inner.close(c->inner);
    free(c);
}

static const struct pes_site *flaky_site(void *ctx, uint32_t id)
{
    struct flaky *f = ctx;
    return f->inner.site(f->inner.ctx, id);
}

static const struct pes_bb *flaky_bb(void *ctx, uint32_t id)
{
    struct flaky *f = ctx;
    return f->inner.bb(f->inner.ctx, id);
}

static void test_source_errors(void **state)
{
    (void)state;
    struct flaky f = {.a = {prog, sizeof prog / sizeof *prog, sites, 6, bbs, 3}};
    pes_mimic_array_source(&f.a, &f.inner);
    struct pes_mimic_source src = {&f, flaky_open, flaky_read, flaky_close, flaky_site, flaky_bb};
    struct pes_error err = {0};
    f.fail_from = 1;
    assert_null(pes_mimic_count(&src, &err));
    assert_int_equal(err.code, PES_ERR_IO);
    f.opens = 0;
    f.fail_from = 3; /* the count pass and core 0 read fine, core 1 fails */
    struct pes_mimic_counts *c = pes_mimic_count(&src, &err);
    assert_non_null(c);
    struct pes_mimic_options o = {.n_cores = 3, .offset = OFF};
    memset(&err, 0, sizeof err);
    assert_null(pes_mimic_run(&src, c, &o, &err));
    assert_int_equal(err.code, PES_ERR_IO);
    assert_non_null(strstr(err.message, "flaky"));
    pes_mimic_counts_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_cores_round_robin),
        cmocka_unit_test(test_control_records),
        cmocka_unit_test(test_three_cores_round_robin),
        cmocka_unit_test(test_chunk_and_copy),
        cmocka_unit_test(test_serial_and_many),
        cmocka_unit_test(test_per_region),
        cmocka_unit_test(test_random_vs_materialised),
        cmocka_unit_test(test_uniform_random),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_source_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
