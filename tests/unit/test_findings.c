/*
 * test_findings.c — the findings rules (replay/report/findings.c) on
 * hand-built reports: each threshold at and just below its value, the
 * padding of the false-sharing fix, the conflict rule only where the report
 * has conflict misses (levels[].conflict or levels[].misses.conflict), the
 * ranking and its cap of five. Every expected value is worked out by hand
 * from the inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "findings.h"
#include "report.h"

/* A full report of `accesses` accesses (10,000 unless said), 64-byte lines, an L1 of 32 KiB (512
 * lines) and an L3 of 64 KiB (1024 lines, shared), and one configuration
 * with a simulation; the caller fills its sections. */
struct fixture {
    struct pes_report *r;
    struct pes_rnode *config, *sim, *lines, *levels;
};

static void level(struct pes_report *r, struct pes_rnode *levels, unsigned n, uint64_t size,
                  int shared)
{
    struct pes_rnode *l = pes_r_object(r, levels, NULL);
    pes_r_u64(r, l, "level", n);
    pes_r_u64(r, l, "size", size);
    pes_r_u64(r, l, "ways", 8);
    pes_r_u64(r, l, "line", 64);
    pes_r_bool(r, l, "shared", shared);
}

static struct fixture make_n(uint64_t accesses)
{
    struct fixture f = {.r = pes_report_create()};
    struct pes_report *r = f.r;
    struct pes_rnode *root = pes_report_root(r);
    struct pes_rnode *trace = pes_r_object(r, root, "trace");
    pes_r_u64(r, trace, "accesses", accesses);
    struct pes_rnode *levels = pes_r_array(r, pes_r_object(r, root, "machine"), "levels");
    level(r, levels, 1, 32768, 0);
    level(r, levels, 2, 65536, 1);
    pes_r_u64(r, root, "line", 64);
    f.config = pes_r_object(r, pes_r_array(r, root, "configs"), NULL);
    pes_r_u64(r, f.config, "cores", 2);
    pes_r_bool(r, f.config, "mimicked", 0);
    f.sim = pes_r_object(r, f.config, "simulation");
    f.levels = pes_r_array(r, f.sim, "levels");
    f.lines = pes_r_array(r, f.sim, "cache_lines");
    return f;
}

static struct fixture make(void)
{
    return make_n(10000);
}

static void pair(struct pes_report *r, struct pes_rnode *o, const char *key, uint64_t t,
                 uint64_t fs)
{
    struct pes_rnode *p = pes_r_object(r, o, key);
    pes_r_u64(r, p, "true", t);
    pes_r_u64(r, p, "false", fs);
}

/* A cache line "obj" with transfers (true, false) and written offsets
 * (offset, part, writes, thread; thread 2 means threads 0 and 1). */
static void cache_line(struct fixture *f, uint64_t address, uint64_t t, uint64_t fs, int n,
                       const uint64_t *off, const char *const *part, const int *thread)
{
    struct pes_report *r = f->r;
    struct pes_rnode *l = pes_r_object(r, f->lines, NULL);
    pes_r_u64(r, l, "address", address);
    pes_r_str(r, l, "object", "obj");
    pair(r, l, "transfers", t, fs);
    struct pes_rnode *offs = pes_r_array(r, l, "offsets");
    for (int i = 0; i < n; i++) {
        struct pes_rnode *o = pes_r_object(r, offs, NULL);
        pes_r_u64(r, o, "offset", off[i]);
        pes_r_u64(r, o, "size", 8);
        pes_r_u64(r, o, "writes", 100);
        struct pes_rnode *th = pes_r_array(r, o, "threads");
        if (thread[i] != 1)
            pes_r_u64(r, th, NULL, 0);
        if (thread[i] != 0)
            pes_r_u64(r, th, NULL, 1);
        pes_r_str(r, o, "part", part[i]);
    }
}

static const struct pes_rnode *findings(struct fixture *f)
{
    pes_findings_add(f->r);
    assert_false(pes_report_failed(f->r));
    return pes_r_get(pes_report_tree(f->r), "findings");
}

static void test_false_sharing(void **state)
{
    (void)state;
    static const uint64_t off[] = {0, 24};
    static const char *const part[] = {"obj.a", "obj.d"};
    static const int thread[] = {0, 1};
    /* 50 false transfers: 0.5 % of 10,000 accesses, the threshold itself */
    struct fixture f = make();
    cache_line(&f, 0x1000, 0, 50, 2, off, part, thread);
    const struct pes_rnode *fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 1);
    const struct pes_rnode *x = pes_r_at(fd, 0);
    assert_string_equal(pes_r_get_s(x, "rule"), "false_sharing");
    assert_int_equal(pes_r_get_u(x, "rank"), 1);
    assert_true(pes_r_get_f(x, "score") == 0.005);
    const struct pes_rnode *ev = pes_r_get(x, "evidence");
    assert_int_equal(pes_r_get_u(ev, "first_offset"), 0);
    assert_int_equal(pes_r_get_u(ev, "second_offset"), 24);
    assert_int_equal(pes_r_get_u(ev, "padding"), 40); /* 64 - 24 */
    assert_non_null(strstr(pes_r_get_s(x, "text"), "obj.a (byte 0 of the line), written by T0"));
    assert_non_null(strstr(pes_r_get_s(x, "text"), "obj.d (byte 24 of the line), written by T1"));
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "Put obj.a and obj.d on separate cache lines"));
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "add 40 bytes of padding"));
    pes_report_destroy(f.r);

    /* 49: under 0.5 % */
    f = make();
    cache_line(&f, 0x1000, 0, 49, 2, off, part, thread);
    assert_int_equal(pes_r_count(findings(&f)), 0);
    pes_report_destroy(f.r);

    /* 19 transfers of 1,000 accesses: 1.9 %, but under 20 events */
    f = make_n(1000);
    cache_line(&f, 0x1000, 0, 19, 2, off, part, thread);
    assert_int_equal(pes_r_count(findings(&f)), 0);
    pes_report_destroy(f.r);

    /* more true than false transfers: not false sharing (true sharing) */
    f = make();
    cache_line(&f, 0x1000, 60, 50, 2, off, part, thread);
    fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 1);
    assert_string_equal(pes_r_get_s(pes_r_at(fd, 0), "rule"), "true_sharing");
    pes_report_destroy(f.r);
}

static void test_true_sharing(void **state)
{
    (void)state;
    static const uint64_t off[] = {0};
    static const char *const part[] = {"obj.count"};
    static const int both[] = {2}, one[] = {0};
    struct fixture f = make();
    cache_line(&f, 0x2000, 300, 0, 1, off, part, both);
    const struct pes_rnode *x = pes_r_at(findings(&f), 0);
    assert_string_equal(pes_r_get_s(x, "rule"), "true_sharing");
    assert_true(pes_r_get_f(x, "score") == 0.03);
    /* written by both threads: migratory */
    assert_non_null(strstr(pes_r_get_s(x, "text"), "Migratory line (true sharing) on obj"));
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "Share obj.count less often"));
    pes_report_destroy(f.r);

    /* one writer, others read: true sharing, not migratory */
    f = make();
    cache_line(&f, 0x2000, 300, 0, 1, off, part, one);
    x = pes_r_at(findings(&f), 0);
    assert_non_null(strstr(pes_r_get_s(x, "text"), "True sharing on obj"));
    pes_report_destroy(f.r);
}

static void conflict_level(struct fixture *f, const char *form, uint64_t conflict)
{
    struct pes_report *r = f->r;
    struct pes_rnode *l = pes_r_object(r, f->levels, NULL);
    pes_r_u64(r, l, "level", 1);
    pes_r_u64(r, l, "accesses", 10000);
    pes_r_u64(r, l, "hits", 9000); /* 1,000 misses */
    if (!strcmp(form, "flat"))
        pes_r_u64(r, l, "conflict", conflict);
    else if (!strcmp(form, "misses"))
        pes_r_u64(r, pes_r_object(r, l, "misses"), "conflict", conflict);
}

static void test_conflict(void **state)
{
    (void)state;
    /* no conflict key: the rule does not run, whatever the misses */
    struct fixture f = make();
    conflict_level(&f, "none", 0);
    assert_int_equal(pes_r_count(findings(&f)), 0);
    pes_report_destroy(f.r);
    /* 250 of 1,000 misses (a quarter), 2.5 % of the accesses: fires, in either form */
    static const char *const forms[] = {"flat", "misses"};
    for (int i = 0; i < 2; i++) {
        f = make();
        conflict_level(&f, forms[i], 250);
        const struct pes_rnode *fd = findings(&f);
        assert_int_equal(pes_r_count(fd), 1);
        const struct pes_rnode *x = pes_r_at(fd, 0);
        assert_string_equal(pes_r_get_s(x, "rule"), "conflict_misses");
        assert_int_equal(pes_r_get_u(pes_r_get(x, "evidence"), "conflict_misses"), 250);
        assert_int_equal(pes_r_get_u(pes_r_get(x, "evidence"), "misses"), 1000);
        assert_non_null(strstr(pes_r_get_s(x, "text"), "L1: 250 of 1,000 misses (25 %)"));
        pes_report_destroy(f.r);
    }
    /* 249: under a quarter */
    f = make();
    conflict_level(&f, "flat", 249);
    assert_int_equal(pes_r_count(findings(&f)), 0);
    pes_report_destroy(f.r);
}

/* An all_sites row of the simulation (sim.c): a site of /src/walk.c:line
 * with its accesses, L1 hits and conflict misses per level. */
static void sim_site(struct fixture *f, uint32_t site, uint64_t line, uint64_t accesses,
                     uint64_t l1_hits, uint64_t c1, uint64_t c2)
{
    struct pes_report *r = f->r;
    struct pes_rnode *t = (struct pes_rnode *)pes_r_get(f->sim, "all_sites");
    if (!t)
        t = pes_r_flag(pes_r_array(r, f->sim, "all_sites"), PES_R_TEXT_ONLY);
    struct pes_rnode *o = pes_r_object(r, t, NULL);
    pes_r_u64(r, o, "site", site);
    pes_r_str(r, o, "file", "/src/walk.c");
    pes_r_u64(r, o, "line", line);
    pes_r_str(r, o, "function", "walk");
    pes_r_u64(r, o, "accesses", accesses);
    pes_r_u64(r, pes_r_array(r, o, "hits"), NULL, l1_hits);
    struct pes_rnode *c = pes_r_array(r, o, "conflict");
    pes_r_u64(r, c, NULL, c1);
    pes_r_u64(r, c, NULL, c2);
}

static void conflict_level_n(struct fixture *f, unsigned n, uint64_t conflict)
{
    struct pes_report *r = f->r;
    struct pes_rnode *l = pes_r_object(r, f->levels, NULL);
    pes_r_u64(r, l, "level", n);
    pes_r_u64(r, l, "accesses", 10000);
    pes_r_u64(r, l, "hits", 9000); /* 1,000 misses */
    pes_r_u64(r, l, "conflict", conflict);
}

static void strided(struct fixture *f, uint32_t site, uint64_t pairs, uint64_t cross,
                    uint64_t stride, double prd_mean);

static void test_conflict_line(void **state)
{
    (void)state;
    /* L1 (32 KiB, 8 ways, 64-byte lines: 64 sets) and L2 (64 KiB: 128 sets)
     * both lose 400 of 1,000 misses to conflicts; walk.c:16 (sites 5 and 6)
     * causes 300 + 60 of the L1's and 350 of the L2's, walk.c:20 the rest:
     * one finding for both levels, at walk.c:16 */
    struct fixture f = make();
    conflict_level_n(&f, 1, 400);
    conflict_level_n(&f, 2, 400);
    sim_site(&f, 5, 16, 2000, 1000, 300, 350);
    sim_site(&f, 6, 16, 2000, 1900, 60, 0);
    sim_site(&f, 7, 20, 6000, 5900, 40, 50);
    /* its walk steps 2,048 bytes = 32 lines: sets 0, 32, 0, ... of the L1's
     * 64 (64 / gcd(32, 64) = 2) */
    strided(&f, 16, 3999, 100, 2048, 10); /* the row of line 16 */
    const struct pes_rnode *fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 1);
    const struct pes_rnode *x = pes_r_at(fd, 0), *ev = pes_r_get(x, "evidence");
    assert_string_equal(pes_r_get_s(x, "rule"), "conflict_misses");
    assert_string_equal(pes_r_get_s(ev, "site"), "walk.c:16 walk");
    assert_int_equal(pes_r_get_u(ev, "site_conflict_misses"), 360);
    assert_int_equal(pes_r_get_u(ev, "stride_bytes"), 2048);
    assert_int_equal(pes_r_get_u(ev, "sets_reached"), 2);
    assert_int_equal(pes_r_get_u(ev, "sets"), 64);
    const char *text = pes_r_get_s(x, "text");
    assert_non_null(strstr(text, "Set conflicts at walk.c:16 walk in the L1 and L2"));
    assert_non_null(strstr(text, "L1: 400 of 1,000 misses (40 %), 360 of them here"));
    assert_non_null(strstr(text, "L2: 400 of 1,000 misses (40 %), 350 of them here"));
    assert_non_null(strstr(text, "at most 2 of the L1's 64 sets"));
    /* pad a row by a line: 2,112 bytes = 33 lines, odd */
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "pad each row by one line (64 bytes, 8 more "
                                                  "elements of 8 bytes)"));
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "its step, 2,112 bytes"));
    pes_report_destroy(f.r);
    /* the L2's culprit is another line: two findings */
    f = make();
    conflict_level_n(&f, 1, 400);
    conflict_level_n(&f, 2, 400);
    sim_site(&f, 5, 16, 2000, 1000, 300, 10);
    sim_site(&f, 7, 20, 6000, 5900, 40, 390);
    fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 2);
    assert_string_equal(pes_r_get_s(pes_r_get(pes_r_at(fd, 0), "evidence"), "site"),
                        "walk.c:16 walk");
    assert_string_equal(pes_r_get_s(pes_r_get(pes_r_at(fd, 1), "evidence"), "site"),
                        "walk.c:20 walk");
    pes_report_destroy(f.r);
}

/* A histogram {accesses, cold, exact: [[d, n]...]} under o. */
static void histogram(struct pes_report *r, struct pes_rnode *o, uint64_t accesses, uint64_t cold,
                      int n, const uint64_t (*rows)[2])
{
    struct pes_rnode *h = pes_r_object(r, o, "histogram");
    pes_r_u64(r, h, "accesses", accesses);
    pes_r_u64(r, h, "cold", cold);
    struct pes_rnode *ex = pes_r_array(r, h, "exact");
    for (int i = 0; i < n; i++) {
        struct pes_rnode *row = pes_r_array(r, ex, NULL);
        pes_r_u64(r, row, NULL, rows[i][0]);
        pes_r_u64(r, row, NULL, rows[i][1]);
    }
    struct pes_rnode *lg = pes_r_array(r, h, "log2");
    struct pes_rnode *row = pes_r_array(r, lg, NULL); /* [2048, 4096): 100 */
    pes_r_u64(r, row, NULL, 2048);
    pes_r_u64(r, row, NULL, 4096);
    pes_r_u64(r, row, NULL, 100);
}

static void test_beyond_llc(void **state)
{
    (void)state;
    /* the L3 is shared: the CRD counts. 1024 lines: 30 at 1023 (hit), 20 at
     * 1024 and the log2 bin [2048, 4096) whole: 20 + 100 = 120 beyond */
    static const uint64_t rows[][2] = {{0, 9000}, {1023, 30}, {1024, 20}};
    struct fixture f = make();
    struct pes_report *r = f.r;
    histogram(r, pes_r_object(r, pes_r_array(r, f.config, "crd"), NULL), 10000, 850, 3, rows);
    struct pes_rnode *sites = pes_r_array(r, f.config, "sites");
    for (int i = 0; i < 2; i++) { /* site 7: mean 2 x 9,000 reuses; site 8: 3,000 x 100 */
        struct pes_rnode *s = pes_r_object(r, sites, NULL);
        pes_r_u64(r, s, "site", 7 + i);
        pes_r_u64(r, s, "accesses", i ? 150 : 9850);
        pes_r_u64(r, s, "crd_cold", i ? 50 : 850);
        pes_r_f64(r, s, "crd_mean", i ? 3000 : 2, "%.6g");
    }
    struct pes_rnode *g = pes_r_object(r, pes_r_array(r, f.config, "groups"), NULL);
    pes_r_str(r, g, "file", "/src/k.c");
    pes_r_u64(r, g, "line", 12);
    pes_r_str(r, g, "function", "kernel");
    pes_r_u64(r, pes_r_array(r, g, "sites"), NULL, 8);
    const struct pes_rnode *fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 1);
    const struct pes_rnode *x = pes_r_at(fd, 0), *ev = pes_r_get(x, "evidence");
    assert_string_equal(pes_r_get_s(x, "rule"), "beyond_llc");
    assert_int_equal(pes_r_get_u(ev, "reuses_beyond_llc"), 120);
    assert_int_equal(pes_r_get_u(ev, "llc_lines"), 1024);
    assert_int_equal(pes_r_get_u(ev, "footprint_bytes"), 850 * 64);
    /* the site with the most distance to cover (3,000 x 100 > 2 x 9,000), named by its group */
    assert_string_equal(pes_r_get_s(ev, "site"), "k.c:12 kernel");
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "Block (tile) the loops at k.c:12 kernel"));
    pes_report_destroy(f.r);
}

/* A site_strides row (stride.c) and its site's reuse distance. */
static void strided(struct fixture *f, uint32_t site, uint64_t pairs, uint64_t cross,
                    uint64_t stride, double prd_mean)
{
    struct pes_report *r = f->r;
    struct pes_rnode *t = (struct pes_rnode *)pes_r_get(f->config, "site_strides");
    if (!t)
        t = pes_r_flag(pes_r_array(r, f->config, "site_strides"), PES_R_TEXT_ONLY);
    struct pes_rnode *o = pes_r_object(r, t, NULL);
    pes_r_u64(r, o, "site", site);
    pes_r_str(r, o, "file", "/src/walk.c");
    pes_r_u64(r, o, "line", site);
    pes_r_str(r, o, "function", "walk");
    pes_r_u64(r, o, "accesses", pairs + 1);
    pes_r_u64(r, o, "bytes", 8 * (pairs + 1));
    pes_r_u64(r, o, "pairs", pairs);
    pes_r_u64(r, o, "cross", cross);
    pes_r_u64(r, o, "min_stride", stride);
    struct pes_rnode *sites = (struct pes_rnode *)pes_r_get(f->config, "sites");
    if (!sites)
        sites = pes_r_array(r, f->config, "sites");
    struct pes_rnode *s = pes_r_object(r, sites, NULL);
    pes_r_u64(r, s, "site", site);
    pes_r_f64(r, s, "prd_mean", prd_mean, "%.6g");
}

static void test_stride(void **state)
{
    (void)state;
    struct fixture f = make();
    strided(&f, 30, 1000, 500, 64, 512);    /* half crossing, a line, the L1's 512 lines: fires */
    strided(&f, 31, 1000, 499, 4096, 4000); /* under half */
    strided(&f, 32, 1000, 900, 63, 4000);   /* a step under a line */
    strided(&f, 33, 1000, 900, 4096, 511);  /* stays in the L1 */
    const struct pes_rnode *fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 1);
    const struct pes_rnode *x = pes_r_at(fd, 0);
    assert_string_equal(pes_r_get_s(x, "rule"), "strided_access");
    assert_string_equal(pes_r_get_s(pes_r_get(x, "evidence"), "site"), "walk.c:30 walk");
    assert_true(pes_r_get_f(x, "score") == 0.05);
    assert_non_null(strstr(pes_r_get_s(x, "fix"), "interchange the loops"));
    pes_report_destroy(f.r);
}

static void test_stride_repeats_and_conflicts(void **state)
{
    (void)state;
    /* a += column walk: 1,000 pairs, 500 of them the store at its load's
     * address; 250 of the 500 that move cross a line (half): fires */
    struct fixture f = make();
    strided(&f, 40, 1000, 250, 2048, 600);
    pes_r_u64(f.r, (struct pes_rnode *)pes_r_at(pes_r_get(f.config, "site_strides"), 0), "repeats",
              500);
    const struct pes_rnode *fd = findings(&f);
    assert_int_equal(pes_r_count(fd), 1);
    assert_true(pes_r_get_f(pes_r_get(pes_r_at(fd, 0), "evidence"), "line_crossing_share") == 0.5);
    pes_report_destroy(f.r);
    /* a walk whose lines stay within the L1's 512 by distance (PRD 100) but
     * miss there (set conflicts): fires where at least half of its 900 line
     * changes missed (450 of the line's accesses), not at 449 */
    for (int missed = 449; missed <= 450; missed++) {
        f = make();
        strided(&f, 41, 1000, 900, 4096, 100);
        sim_site(&f, 41, 41, 600, 600 - (uint64_t)missed + 1, 0, 0); /* two sites, one line */
        sim_site(&f, 42, 41, 401, 400, 0, 0);
        fd = findings(&f);
        assert_int_equal(pes_r_count(fd), missed == 450);
        if (missed == 450) {
            const struct pes_rnode *x = pes_r_at(fd, 0);
            assert_int_equal(pes_r_get_u(pes_r_get(x, "evidence"), "l1_misses"), 450);
            assert_non_null(strstr(pes_r_get_s(x, "text"),
                                   "set conflicts evict a line before its next element is used: "
                                   "450 of its 1,001 accesses miss in the L1"));
        }
        pes_report_destroy(f.r);
    }
}

static void test_rank_and_cap(void **state)
{
    (void)state;
    /* seven false-sharing lines of 60 ... 120 transfers: five listed, largest first */
    static const uint64_t off[] = {0, 8};
    static const char *const part[] = {"obj.a", "obj.b"};
    static const int thread[] = {0, 1};
    struct fixture f = make();
    for (int i = 0; i < 7; i++)
        cache_line(&f, 0x1000 + 64 * (uint64_t)i, 0, 60 + 10 * (uint64_t)i, 2, off, part, thread);
    const struct pes_rnode *fd = findings(&f);
    assert_int_equal(pes_r_count(fd), PES_FINDINGS_MAX);
    for (int i = 0; i < PES_FINDINGS_MAX; i++) {
        const struct pes_rnode *x = pes_r_at(fd, (size_t)i);
        assert_int_equal(pes_r_get_u(x, "rank"), i + 1);
        assert_int_equal(pes_r_get_u(pes_r_get(x, "evidence"), "false_transfers"), 120 - 10 * i);
    }
    pes_report_destroy(f.r);
    /* nothing: an empty array, and no findings at all for a --compare report */
    f = make();
    assert_int_equal(pes_r_count(findings(&f)), 0);
    assert_non_null(pes_r_get(pes_report_tree(f.r), "findings"));
    pes_report_destroy(f.r);
    struct pes_report *r = pes_report_create();
    pes_r_str(r, pes_report_root(r), "full", "x.zst");
    pes_findings_add(r);
    assert_null(pes_r_get(pes_report_tree(r), "findings"));
    pes_report_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_false_sharing), cmocka_unit_test(test_true_sharing),
        cmocka_unit_test(test_conflict),      cmocka_unit_test(test_beyond_llc),
        cmocka_unit_test(test_stride),        cmocka_unit_test(test_rank_and_cap),
        cmocka_unit_test(test_conflict_line), cmocka_unit_test(test_stride_repeats_and_conflicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
