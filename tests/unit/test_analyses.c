/*
 * Unit tests of pes-replay's analyses (replay/analyses: summary, reuse, sim,
 * approx, sampled, accuracy),
 * the pipeline that runs them and the JSON report writer, on batches built
 * here by hand: no trace file, no source.
 *
 * Ground truth is computed in this file: hand counts (summary, the MESI
 * false-sharing pattern), a brute-force LRU stack for reuse distances
 * (PPT-Multicore §2.3: distinct granules since the previous access to the
 * same granule), SDCM Eq. 2 and the fully associative case for the model,
 * and a hand-written JSON line for the writer.
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

#include "analysis.h"
#include "mesi.h"
#include "rt_truth.h"
#include "pipeline.h"
#include "profiles.h"
#include "groups.h"
#include "objects.h"
#include "report.h"

/* cmocka 1.1 has no assert_near: |a - b| <= tol, printing both on failure. */
static void near_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        print_error("%.17g != %.17g (tolerance %g)\n", a, b, tol);
        _fail(file, line);
    }
}
#define assert_near(a, b, tol) near_((a), (b), (tol), __FILE__, __LINE__)

/* ------------------------------------------------------------ fixtures */

static const struct pes_site sites[] = {
    {.id = 0, .file = "main.c", .function = "main", .line = 10, .column = 3},
    {.id = 1, .file = "a.c", .function = "writer_a", .line = 21, .column = 5},
    {.id = 2, .file = "b.c", .function = "writer_b", .line = 32, .column = 7},
    {.id = 3, .file = "c.c", .function = "reader", .line = 43, .column = 9},
    {.id = 4, .file = "d.c", .function = "f4", .line = 54, .column = 1},
    {.id = 5, .file = "e.c", .function = "f5", .line = 65, .column = 2},
};
enum { N_SITES = sizeof sites / sizeof sites[0] };

static const struct pes_site *site_of(const void *ctx, uint32_t id)
{
    (void)ctx;
    return id < N_SITES ? &sites[id] : NULL;
}

/* A small valid machine: levels given by the caller, costs fixed. */
static struct pes_machine machine(uint32_t n_levels, const struct pes_cache_config *lv)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "tiny");
    m.ghz = 2.0;
    m.sockets = 2;
    m.cores_per_socket = 2;
    m.n_levels = n_levels;
    for (uint32_t l = 0; l < n_levels; l++)
        m.level[l] = lv[l];
    m.mem_latency = 100;
    m.mem_recip_throughput = 10;
    for (int o = 0; o < PES_OP_COUNT; o++) {
        m.op_latency[o] = 1;
        m.op_recip_throughput[o] = 1;
    }
    return m;
}

struct acc {
    uint64_t addr;
    uint32_t size, length, stream, site;
    uint8_t rw;
};

/* Extra BB entries, all delivered with the first batch. */
struct bbs {
    size_t n;
    const struct pes_bb *const *bb;
    const uint32_t *stream;
};

typedef int (*batch_fn)(void *ctx, const struct pes_batch *b, struct pes_error *err);

/* Feeds the accesses in batches of `chunk`; with end_streams each stream is
 * listed as ended in the batch holding its last access (as sources do). */
static void feed(batch_fn fn, void *ctx, const struct acc *a, size_t n, size_t chunk,
                 uint32_t n_streams, int end_streams, const struct bbs *bbs)
{
    uint64_t *addr = malloc(chunk * sizeof *addr);
    uint32_t *size = malloc(chunk * sizeof *size), *length = malloc(chunk * sizeof *length);
    uint32_t *stream = malloc(chunk * sizeof *stream), *site = malloc(chunk * sizeof *site);
    uint8_t *rw = malloc(chunk);
    size_t *last = calloc(n_streams, sizeof *last);
    uint32_t *ended = malloc(n_streams * sizeof *ended);
    assert_true(addr && size && length && stream && site && rw && last && ended);
    for (size_t i = 0; i < n; i++)
        last[a[i].stream] = i + 1;
    for (size_t at = 0, first = 1; at < n; at += chunk, first = 0) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t j = 0; j < k; j++) {
            addr[j] = a[at + j].addr;
            size[j] = a[at + j].size;
            length[j] = a[at + j].length;
            stream[j] = a[at + j].stream;
            site[j] = a[at + j].site;
            rw[j] = a[at + j].rw;
        }
        struct pes_batch b = {.n = k,
                              .addr = addr,
                              .size = size,
                              .length = length,
                              .stream = stream,
                              .site = site,
                              .rw = rw};
        if (first && bbs) {
            b.n_bbs = bbs->n;
            b.bb = bbs->bb;
            b.bb_stream = bbs->stream;
        }
        uint32_t n_ended = 0;
        for (uint32_t s = 0; end_streams && s < n_streams; s++)
            if (last[s] > at && last[s] <= at + k)
                ended[n_ended++] = s;
        b.n_ended = n_ended;
        b.ended = ended;
        struct pes_error err = {0};
        if (fn(ctx, &b, &err) != 0) {
            print_error("batch at %zu: %s\n", at, err.message);
            fail();
        }
    }
    free(addr);
    free(size);
    free(length);
    free(stream);
    free(site);
    free(rw);
    free(last);
    free(ended);
}

/* A fresh report with its "trace" and "config" sections. */
static struct pes_report *new_report(struct pes_publish *p)
{
    struct pes_report *r = pes_report_create();
    assert_non_null(r);
    p->r = r;
    p->trace = pes_r_object(r, pes_report_root(r), "trace");
    p->config = pes_r_object(r, pes_report_root(r), "config");
    return r;
}

static const struct pes_rnode *section(const struct pes_report *r, const char *name)
{
    const struct pes_rnode *n = pes_r_get(pes_report_tree(r), name);
    assert_non_null(n);
    return n;
}

/* create → batch … → finish → publish → destroy of one analysis. */
static struct pes_report *run(const struct pes_analysis *a, const struct pes_stream_info *si,
                              const struct pes_knobs *k, const struct acc *acc, size_t n,
                              size_t chunk, int end_streams, const struct bbs *bbs)
{
    struct pes_error err = {0};
    void *self = a->create(si, k, &err);
    if (!self) {
        print_error("%s: create: %s\n", a->name, err.message);
        fail();
    }
    feed(a->batch, self, acc, n, chunk, si->n_streams, end_streams, bbs);
    if (a->finish && a->finish(self, &err) != 0) {
        print_error("%s: finish: %s\n", a->name, err.message);
        fail();
    }
    struct pes_publish p;
    struct pes_report *r = new_report(&p);
    a->publish(self, &p);
    a->destroy(self);
    assert_false(pes_report_failed(r));
    return r;
}

/* The values of an array of unsigned integers. */
static void assert_u_array(const struct pes_rnode *arr, const uint64_t *want, size_t n)
{
    assert_non_null(arr);
    assert_int_equal(pes_r_kind(arr), PES_R_ARRAY);
    assert_int_equal(pes_r_count(arr), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pes_r_u(pes_r_at(arr, i)), want[i]);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------ summary */

static void test_summary_counts(void **state)
{
    (void)state;
    static const struct pes_bb bb_a = {
        .id = 100, .ops = {[PES_OP_INT_ADD] = 3, [PES_OP_FP_MUL] = 2, [PES_OP_LOAD] = 4}};
    static const struct pes_bb bb_b = {
        .id = 101, .ops = {[PES_OP_INT_ADD] = 1, [PES_OP_FP_DIV] = 5, [PES_OP_STORE] = 2}};
    const uint32_t caches[5] = {0, 0, 0, 0, 0};
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 5,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .line = 64,
                                 .site = site_of};
    struct pes_knobs k = {.jobs = 1, .top = 10, .sort = "invalidations"};
    struct pes_error err = {0};
    void *s = pes_analysis_summary.create(&si, &k, &err);
    assert_non_null(s);

    /* batch 1: five accesses of streams 0 and 1 (size = bytes replayed differs
     * from length = bytes recorded: the summary counts recorded bytes), one BB */
    {
        const uint64_t addr[] = {0x1000, 0x2000, 0x1008, 0x2004, 0x3000};
        const uint32_t size[] = {8, 4, 8, 2, 64}, length[] = {8, 4, 16, 2, 100};
        const uint32_t stream[] = {0, 1, 0, 1, 0}, site[] = {0, 1, 2, 3, 4};
        const uint8_t rw[] = {PES_BATCH_READ, PES_BATCH_WRITE, PES_BATCH_READ | PES_BATCH_WRITE,
                              PES_BATCH_READ, PES_BATCH_WRITE};
        const struct pes_bb *bb[] = {&bb_a};
        const uint32_t bb_stream[] = {0};
        struct pes_batch b = {.n = 5,
                              .addr = addr,
                              .size = size,
                              .length = length,
                              .stream = stream,
                              .site = site,
                              .rw = rw,
                              .n_bbs = 1,
                              .bb = bb,
                              .bb_stream = bb_stream};
        assert_int_equal(pes_analysis_summary.batch(s, &b, &err), 0);
    }
    /* batch 2: BB entries only; stream 3 appears only through them */
    {
        const struct pes_bb *bb[] = {&bb_b, &bb_a, &bb_b};
        const uint32_t bb_stream[] = {3, 1, 3};
        struct pes_batch b = {.n_bbs = 3, .bb = bb, .bb_stream = bb_stream};
        assert_int_equal(pes_analysis_summary.batch(s, &b, &err), 0);
    }
    /* batch 3: ended streams only */
    {
        const uint32_t ended[] = {0, 1};
        struct pes_batch b = {.n_ended = 2, .ended = ended};
        assert_int_equal(pes_analysis_summary.batch(s, &b, &err), 0);
    }
    /* batch 4: one access of stream 2, one BB, two streams end; stream 4 never appears */
    {
        const uint64_t addr[] = {0x4000};
        const uint32_t size[] = {1}, length[] = {1}, stream[] = {2}, site[] = {5};
        const uint8_t rw[] = {PES_BATCH_READ};
        const struct pes_bb *bb[] = {&bb_a};
        const uint32_t bb_stream[] = {2}, ended[] = {2, 3};
        struct pes_batch b = {.n = 1,
                              .addr = addr,
                              .size = size,
                              .length = length,
                              .stream = stream,
                              .site = site,
                              .rw = rw,
                              .n_bbs = 1,
                              .bb = bb,
                              .bb_stream = bb_stream,
                              .n_ended = 2,
                              .ended = ended};
        assert_int_equal(pes_analysis_summary.batch(s, &b, &err), 0);
    }
    if (pes_analysis_summary.finish)
        assert_int_equal(pes_analysis_summary.finish(s, &err), 0);
    struct pes_publish p;
    struct pes_report *r = new_report(&p);
    pes_analysis_summary.publish(s, &p);
    pes_analysis_summary.destroy(s);
    assert_false(pes_report_failed(r));

    const struct pes_rnode *t = section(r, "trace");
    assert_int_equal(pes_r_get_u(t, "threads"), 4); /* 0, 1, 2 (accesses), 3 (BBs only) */
    assert_int_equal(pes_r_get_u(t, "accesses"), 6);
    assert_int_equal(pes_r_get_u(t, "bb_executions"), 5);
    assert_int_equal(pes_r_get_u(t, "records"), 11); /* accesses + BB entries */
    assert_int_equal(pes_r_get_u(t, "reads"), 4);    /* R, RW, R, R */
    assert_int_equal(pes_r_get_u(t, "writes"), 3);   /* W, RW, W */
    assert_int_equal(pes_r_get_u(t, "bytes"), 8 + 4 + 16 + 2 + 100 + 1);
    /* bb_a executed 3 times, bb_b twice */
    double want[PES_OP_COUNT] = {0};
    want[PES_OP_INT_ADD] = 3 * 3 + 1 * 2;
    want[PES_OP_FP_MUL] = 2 * 3;
    want[PES_OP_LOAD] = 4 * 3;
    want[PES_OP_FP_DIV] = 5 * 2;
    want[PES_OP_STORE] = 2 * 2;
    const struct pes_rnode *ops = pes_r_get(t, "ops");
    assert_int_equal(pes_r_count(ops), PES_OP_COUNT);
    for (int o = 0; o < PES_OP_COUNT; o++)
        assert_near(pes_r_get_f(ops, pes_machine_op_key(o)), want[o], 0);
    assert_int_equal(pes_r_count(section(r, "config")), 0); /* the summary writes only "trace" */
    pes_report_destroy(r);
}

/* ------------------------------------------------------------ reuse: oracle */

enum { MAX_D = 1024, MAX_SITE = 8, MAX_GROUPS = 4 };

/* Brute-force LRU stack: distance = position of the granule from the top. */
struct lru {
    uint64_t *v;
    size_t n, cap;
};

static uint64_t lru_access(struct lru *s, uint64_t key)
{
    size_t i = 0;
    while (i < s->n && s->v[i] != key)
        i++;
    uint64_t d = i < s->n ? i : UINT64_MAX;
    if (i == s->n) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->v = realloc(s->v, s->cap * sizeof *s->v);
            assert_non_null(s->v);
        }
        s->n++;
    }
    memmove(s->v + 1, s->v, i * sizeof *s->v);
    s->v[0] = key;
    return d;
}

struct ohist {
    uint64_t total, cold, sum;
    uint64_t exact[MAX_D];
};

static void ohist_add(struct ohist *h, uint64_t d)
{
    h->total++;
    if (d == UINT64_MAX) {
        h->cold++;
        return;
    }
    assert_true(d < MAX_D); /* the workloads stay in the exact range */
    h->exact[d]++;
    h->sum += d;
}

struct osite {
    uint64_t accesses, prd_cold, crd_cold, prd_sum, crd_sum;
};

struct oracle {
    struct ohist prd[MAX_GROUPS], crd[MAX_GROUPS];
    struct osite site[MAX_SITE];
};

/* Every access of size > 0 touches granules addr/line .. (addr+size-1)/line
 * in ascending order, each once, in its stream's PRD and in its shared
 * cache's CRD. */
static void oracle_run(struct oracle *o, const struct acc *a, size_t n,
                       const struct pes_stream_info *si)
{
    memset(o, 0, sizeof *o);
    struct lru prd[MAX_GROUPS] = {{0}}, crd[MAX_GROUPS] = {{0}};
    assert_true(si->n_streams <= MAX_GROUPS && si->n_caches <= MAX_GROUPS);
    for (size_t i = 0; i < n; i++) {
        if (a[i].size == 0)
            continue;
        uint32_t s = a[i].stream, g = si->stream_cache[s];
        assert_true(a[i].site < MAX_SITE);
        struct osite *row = &o->site[a[i].site];
        for (uint64_t key = a[i].addr / si->line; key <= (a[i].addr + a[i].size - 1) / si->line;
             key++) {
            uint64_t dp = lru_access(&prd[s], key), dc = lru_access(&crd[g], key);
            ohist_add(&o->prd[s], dp);
            ohist_add(&o->crd[g], dc);
            row->accesses++;
            if (dp == UINT64_MAX)
                row->prd_cold++;
            else
                row->prd_sum += dp;
            if (dc == UINT64_MAX)
                row->crd_cold++;
            else
                row->crd_sum += dc;
        }
    }
    for (int g = 0; g < MAX_GROUPS; g++) {
        free(prd[g].v);
        free(crd[g].v);
    }
}

static double mean_of(uint64_t sum, uint64_t n)
{
    return n ? (double)sum / (double)n : 0.0;
}

static void check_hist(const struct pes_rnode *h, const struct ohist *o)
{
    assert_non_null(h);
    assert_int_equal(pes_r_get_u(h, "accesses"), o->total);
    assert_int_equal(pes_r_get_u(h, "cold"), o->cold);
    assert_near(pes_r_get_f(h, "mean"), mean_of(o->sum, o->total - o->cold), 1e-12);
    const struct pes_rnode *ex = pes_r_get(h, "exact");
    size_t k = 0;
    for (uint64_t d = 0; d < MAX_D; d++) {
        if (!o->exact[d])
            continue;
        const uint64_t bin[2] = {d, o->exact[d]};
        assert_u_array(pes_r_at(ex, k++), bin, 2);
    }
    assert_int_equal(pes_r_count(ex), k);
    assert_int_equal(pes_r_count(pes_r_get(h, "log2")), 0); /* every distance < 1024 */
}

struct orow {
    uint32_t site;
    const struct osite *o;
};

static int orow_cmp(const void *a, const void *b)
{
    const struct orow *x = a, *y = b;
    if (x->o->accesses != y->o->accesses)
        return x->o->accesses < y->o->accesses ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

/* The per-site rows: one per site with accesses, most accesses first, ties by id. */
static void check_sites(const struct pes_rnode *arr, const struct oracle *o)
{
    struct orow rows[MAX_SITE];
    size_t n = 0;
    for (uint32_t s = 0; s < MAX_SITE; s++)
        if (o->site[s].accesses)
            rows[n++] = (struct orow){s, &o->site[s]};
    qsort(rows, n, sizeof rows[0], orow_cmp);
    assert_int_equal(pes_r_count(arr), n);
    for (size_t i = 0; i < n; i++) {
        const struct pes_rnode *r = pes_r_at(arr, i);
        const struct osite *w = rows[i].o;
        assert_int_equal(pes_r_get_u(r, "site"), rows[i].site);
        assert_int_equal(pes_r_get_u(r, "accesses"), w->accesses);
        assert_int_equal(pes_r_get_u(r, "prd_cold"), w->prd_cold);
        assert_int_equal(pes_r_get_u(r, "crd_cold"), w->crd_cold);
        assert_near(pes_r_get_f(r, "prd_mean"), mean_of(w->prd_sum, w->accesses - w->prd_cold),
                    1e-12);
        assert_near(pes_r_get_f(r, "crd_mean"), mean_of(w->crd_sum, w->accesses - w->crd_cold),
                    1e-12);
    }
}

static void check_reuse(const struct pes_report *r, const struct oracle *o,
                        const struct pes_stream_info *si)
{
    const struct pes_rnode *c = section(r, "config");
    const struct pes_rnode *prd = pes_r_get(c, "prd"), *crd = pes_r_get(c, "crd");
    assert_int_equal(pes_r_count(prd), si->n_streams);
    for (uint32_t s = 0; s < si->n_streams; s++) {
        const struct pes_rnode *e = pes_r_at(prd, s);
        assert_int_equal(pes_r_get_u(e, "stream"), s);
        check_hist(pes_r_get(e, "histogram"), &o->prd[s]);
    }
    assert_int_equal(pes_r_count(crd), si->n_caches);
    for (uint32_t g = 0; g < si->n_caches; g++) {
        const struct pes_rnode *e = pes_r_at(crd, g);
        assert_int_equal(pes_r_get_u(e, "group"), g);
        check_hist(pes_r_get(e, "histogram"), &o->crd[g]);
    }
    check_sites(pes_r_get(c, "sites"), o);
}

/* Three streams (0 and 1 on shared cache 0, 2 on shared cache 1): a region
 * all streams share and one private region each, unaligned accesses of 0 to
 * 100 bytes (many span granules), six sites used by several streams, in
 * bursts of one stream so short distances occur too. */
static size_t workload(struct acc *a, size_t n, uint64_t seed)
{
    static const uint32_t sizes[] = {1, 4, 8, 8, 16, 24, 64, 100, 0, 3};
    uint64_t x = seed;
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (splitmix(&x) % 4 == 0)
            s = (uint32_t)(splitmix(&x) % 3);
        int shared = splitmix(&x) % 3 == 0;
        uint64_t base = shared ? 0x10000 : 0x20000 + 0x1000 * (uint64_t)s;
        uint64_t span = shared ? 1024 : 512;
        uint32_t size = sizes[splitmix(&x) % (sizeof sizes / sizeof sizes[0])];
        a[i] = (struct acc){
            .addr = base + splitmix(&x) % span,
            .size = size,
            .length = size,
            .stream = s,
            .site = (uint32_t)(splitmix(&x) % 6),
            .rw = (uint8_t)(1 + splitmix(&x) % 3),
        };
    }
    return n;
}

static void test_reuse_against_lru_oracle(void **state)
{
    (void)state;
    enum { N = 320 };
    static struct acc a[N];
    workload(a, N, 42);
    const uint32_t caches[4] = {0, 0, 1, 1}; /* stream 3 never accesses memory */
    static struct oracle o;
    const size_t chunks[] = {N, 1, 7, 64};
    for (int li = 0; li < 2; li++) {
        uint32_t line = li ? 8 : 64;
        const struct pes_cache_config lv[2] = {
            {.size = 32 * line, .ways = 4, .line = line, .latency = 4, .recip_throughput = 1},
            {.size = 256 * line,
             .ways = 8,
             .line = line,
             .shared = 1,
             .latency = 20,
             .recip_throughput = 4}};
        struct pes_machine m = machine(2, lv);
        struct pes_stream_info si = {.path = "t",
                                     .n_streams = 4,
                                     .n_caches = 2,
                                     .stream_cache = caches,
                                     .machine = &m,
                                     .line = line,
                                     .site = site_of};
        oracle_run(&o, a, N, &si);
        for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
            for (uint32_t jobs = 1; jobs <= 2; jobs++)
                for (int sim = 0; sim < (jobs == 2 ? 2 : 1); sim++)
                    for (int end = 0; end < 2; end++) {
                        /* jobs 2: PRDs on the worker; with simulate the CRDs too */
                        struct pes_knobs k = {
                            .jobs = jobs, .simulate = sim, .top = 10, .sort = "invalidations"};
                        struct pes_report *r =
                            run(&pes_analysis_reuse, &si, &k, a, N, chunks[ci], end, NULL);
                        check_reuse(r, &o, &si);
                        pes_report_destroy(r);
                    }
    }
}

/* --sample-rate 1 keeps every line: the approximate analysis must give the
 * brute-force LRU stack's histograms (SHARDS at R = 1 is the exact engine),
 * the exact analysis's model, empty site rows and, with --sample-check, a
 * zero error and every access sampled. */
static void test_approx_rate_one(void **state)
{
    (void)state;
    enum { N = 320 };
    static struct acc a[N];
    workload(a, N, 7);
    const uint32_t caches[3] = {0, 0, 1}; /* cache 1 has one stream: its CRD is that stream's PRD */
    static struct oracle o;
    const struct pes_cache_config lv[2] = {
        {.size = 32 * 64, .ways = 4, .line = 64, .latency = 4, .recip_throughput = 1},
        {.size = 256 * 64,
         .ways = 8,
         .line = 64,
         .shared = 1,
         .latency = 20,
         .recip_throughput = 4}};
    struct pes_machine m = machine(2, lv);
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 3,
                                 .n_caches = 2,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    oracle_run(&o, a, N, &si);
    struct pes_knobs exact = {.jobs = 1, .top = 10, .sort = "invalidations"};
    struct pes_report *re = run(&pes_analysis_reuse, &si, &exact, a, N, 64, 0, NULL);
    for (int check = 0; check < 2; check++) {
        struct pes_knobs k = {.jobs = 1,
                              .top = 10,
                              .sort = "invalidations",
                              .sample_rate = 1.0,
                              .sample_seed = 3,
                              .sample_check = check};
        assert_false(pes_analysis_reuse.wanted(&si, &k));
        assert_true(pes_analysis_approx.wanted(&si, &k));
        struct pes_report *r = run(&pes_analysis_approx, &si, &k, a, N, 64, 0, NULL);
        const struct pes_rnode *c = section(r, "config"), *ce = section(re, "config");
        for (uint32_t s = 0; s < si.n_streams; s++)
            check_hist(pes_r_get(pes_r_at(pes_r_get(c, "prd"), s), "histogram"), &o.prd[s]);
        for (uint32_t g = 0; g < si.n_caches; g++)
            check_hist(pes_r_get(pes_r_at(pes_r_get(c, "crd"), g), "histogram"), &o.crd[g]);
        assert_int_equal(pes_r_count(pes_r_get(c, "sites")), 0);
        const struct pes_rnode *hg = pes_r_get(pes_r_get(c, "model"), "hit_global"),
                               *hge = pes_r_get(pes_r_get(ce, "model"), "hit_global");
        for (size_t l = 0; l < 2; l++)
            near_(pes_r_f(pes_r_at(hg, l)), pes_r_f(pes_r_at(hge, l)), 1e-12, __FILE__, __LINE__);
        const struct pes_rnode *ap = pes_r_get(c, "approximation"),
                               *rows = pes_r_get(ap, "profiles");
        assert_true(pes_r_get_f(ap, "rate") == 1.0);
        assert_int_equal(pes_r_get_u(ap, "seed"), 3);
        assert_int_equal(pes_r_count(rows), 4); /* 3 PRDs and the CRD of cache 0 */
        assert_string_equal(pes_r_get_s(pes_r_at(rows, 3), "profile"), "shared0 CRD");
        for (size_t i = 0; i < pes_r_count(rows); i++) {
            const struct pes_rnode *row = pes_r_at(rows, i);
            assert_int_equal(pes_r_get_u(row, "sampled"), pes_r_get_u(row, "accesses"));
            if (check)
                assert_true(pes_r_get_f(row, "mrc_mae") == 0.0);
            else
                assert_null(pes_r_get(row, "mrc_mae"));
        }
        pes_report_destroy(r);
    }
    pes_report_destroy(re);
}

/* The site rows' order and values on a trace small enough to do by hand
 * (line 64, two streams on one shared cache). */
static void test_reuse_site_rows_by_hand(void **state)
{
    (void)state;
    /* t: stream site line   PRD          CRD
     * 0:   0     4    A     cold         cold
     * 1:   1     2    B     cold         cold
     * 2:   0     3    C     cold         cold
     * 3:   1     2    A     cold         2 (B, C)
     * 4:   0     3    A     1 (C)        0
     * 5:   1     2    B     1 (A)        2 (C, A)
     * 6:   0     4    B     cold         0
     * site 2: 3 accesses, PRD cold 2 + {1}, CRD cold 1 + {2, 2}
     * site 3: 2 accesses, PRD cold 1 + {1}, CRD cold 1 + {0}
     * site 4: 2 accesses, PRD cold 2, CRD cold 1 + {0}
     * order: site 2 (3 accesses), then the tie 3, 4 by id */
    const uint64_t A = 0x0, B = 0x40, C = 0x80;
    const struct acc a[] = {
        {A, 8, 8, 0, 4, 1},     {B, 8, 8, 1, 2, 1},      {C, 8, 8, 0, 3, 1},
        {A + 8, 8, 8, 1, 2, 2}, {A + 16, 8, 8, 0, 3, 1}, {B + 56, 8, 8, 1, 2, 1},
        {B, 1, 1, 0, 4, 1},
    };
    const uint32_t caches[2] = {0, 0};
    const struct pes_cache_config lv[1] = {
        {.size = 4096, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1}};
    struct pes_machine m = machine(1, lv);
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 2,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    struct pes_knobs k = {.jobs = 1, .top = 10, .sort = "invalidations"};
    struct pes_report *r = run(&pes_analysis_reuse, &si, &k, a, 7, 7, 0, NULL);
    const struct pes_rnode *rows = pes_r_get(section(r, "config"), "sites");
    assert_int_equal(pes_r_count(rows), 3);
    const uint64_t want[3][4] = {
        {2, 3, 2, 1}, {3, 2, 1, 1}, {4, 2, 2, 1}}; /* site, accesses, prd/crd cold */
    const double mean[3][2] = {{1, 2}, {1, 0}, {0, 0}};
    for (int i = 0; i < 3; i++) {
        const struct pes_rnode *o = pes_r_at(rows, (size_t)i);
        assert_int_equal(pes_r_get_u(o, "site"), want[i][0]);
        assert_int_equal(pes_r_get_u(o, "accesses"), want[i][1]);
        assert_int_equal(pes_r_get_u(o, "prd_cold"), want[i][2]);
        assert_int_equal(pes_r_get_u(o, "crd_cold"), want[i][3]);
        assert_near(pes_r_get_f(o, "prd_mean"), mean[i][0], 0);
        assert_near(pes_r_get_f(o, "crd_mean"), mean[i][1], 0);
    }
    /* histograms: PRD stream 0 {cold 3, d1}, stream 1 {cold 2, d1}; CRD {cold 3, 2, 0, 2, 0} */
    const struct pes_rnode *c = section(r, "config");
    const struct pes_rnode *h0 = pes_r_get(pes_r_at(pes_r_get(c, "prd"), 0), "histogram");
    const struct pes_rnode *h1 = pes_r_get(pes_r_at(pes_r_get(c, "prd"), 1), "histogram");
    const struct pes_rnode *hc = pes_r_get(pes_r_at(pes_r_get(c, "crd"), 0), "histogram");
    assert_int_equal(pes_r_get_u(h0, "accesses"), 4);
    assert_int_equal(pes_r_get_u(h0, "cold"), 3);
    assert_int_equal(pes_r_get_u(h1, "accesses"), 3);
    assert_int_equal(pes_r_get_u(h1, "cold"), 2);
    assert_int_equal(pes_r_get_u(hc, "accesses"), 7);
    assert_int_equal(pes_r_get_u(hc, "cold"), 3);
    assert_near(pes_r_get_f(hc, "mean"), 1.0, 0);
    const uint64_t bin0[2] = {0, 2}, bin2[2] = {2, 2};
    assert_int_equal(pes_r_count(pes_r_get(hc, "exact")), 2);
    assert_u_array(pes_r_at(pes_r_get(hc, "exact"), 0), bin0, 2);
    assert_u_array(pes_r_at(pes_r_get(hc, "exact"), 1), bin2, 2);
    pes_report_destroy(r);
}

/* Distances beyond the exact range: one stream walks L lines twice, so the
 * second pass has L cold-free accesses of distance L-1 = 1499, in the log2
 * bin [1024, 2048). The model spreads a bin uniformly (model.h): a fully
 * associative cache of 1536 lines hits half of that bin's range, so
 * 1500 x 0.5 of 3000 accesses = 0.25; one of 2048 lines holds the whole
 * bin: 0.5. */
static void test_reuse_long_distances(void **state)
{
    (void)state;
    enum { L = 1500 };
    static struct acc a[2 * L];
    for (size_t i = 0; i < 2 * L; i++)
        a[i] = (struct acc){
            .addr = 64 * (uint64_t)(i % L), .size = 8, .length = 8, .site = 1, .rw = 1};
    const uint32_t caches[1] = {0};
    const struct pes_cache_config lv[2] = {
        {.size = 1536 * 64, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1},
        {.size = 2048 * 64,
         .ways = 0,
         .line = 64,
         .shared = 1,
         .latency = 12,
         .recip_throughput = 2}};
    struct pes_machine m = machine(2, lv);
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 1,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    for (uint32_t jobs = 1; jobs <= 2; jobs++) {
        struct pes_knobs k = {.jobs = jobs, .top = 10, .sort = "invalidations"};
        struct pes_report *r = run(&pes_analysis_reuse, &si, &k, a, 2 * L, 1000, 1, NULL);
        const struct pes_rnode *c = section(r, "config");
        for (int which = 0; which < 2; which++) {
            const struct pes_rnode *h =
                pes_r_get(pes_r_at(pes_r_get(c, which ? "crd" : "prd"), 0), "histogram");
            assert_int_equal(pes_r_get_u(h, "accesses"), 2 * L);
            assert_int_equal(pes_r_get_u(h, "cold"), L);
            assert_near(pes_r_get_f(h, "mean"), L - 1, 0);
            assert_int_equal(pes_r_count(pes_r_get(h, "exact")), 0);
            const struct pes_rnode *lg = pes_r_get(h, "log2");
            assert_int_equal(pes_r_count(lg), 1);
            const uint64_t bin[3] = {1024, 2048, L};
            assert_u_array(pes_r_at(lg, 0), bin, 3);
            /* display shares for the text report: cold, and hits of fully associative caches of the levels' sizes */
            assert_near(pes_r_get_f(h, "cold_share"), 0.5, 0);
            const struct pes_rnode *fa = pes_r_get(h, "fa_hit_share");
            assert_int_equal(pes_r_count(fa), 2);
            assert_near(pes_r_f(pes_r_at(fa, 0)), 0.25, 1e-12);
            assert_near(pes_r_f(pes_r_at(fa, 1)), 0.5, 1e-12);
        }
        const struct pes_rnode *hg = pes_r_get(pes_r_get(c, "model"), "hit_global");
        assert_near(pes_r_f(pes_r_at(hg, 0)), 0.25, 1e-12);
        assert_near(pes_r_f(pes_r_at(hg, 1)), 0.5, 1e-12);
        const struct pes_rnode *row = pes_r_at(pes_r_get(c, "sites"), 0);
        assert_int_equal(pes_r_get_u(row, "accesses"), 2 * L);
        assert_near(pes_r_get_f(row, "prd_mean"), L - 1, 0);
        pes_report_destroy(r);
    }
}

/* ------------------------------------------------------------ reuse: model */

/* hit_global from SDCM on a case done by hand: L1 private and fully
 * associative with B1 lines (hit iff D < B1, Eq. 1 with A = B), L2 shared and
 * direct-mapped with B2 lines (Eq. 2: ((B2-1)/B2)^D), both over all
 * accesses with cold ones missing (Eq. 3); L2 made monotone. Then Eq. 6/7
 * averages and Eq. 5 memory time from the counted bytes, Eq. 8 from the BB
 * ops. */
static void test_reuse_model_by_hand(void **state)
{
    (void)state;
    enum { N = 320, B1 = 8, B2 = 64 };
    static struct acc a[N];
    workload(a, N, 7);
    const uint32_t caches[3] = {0, 0, 1};
    const struct pes_cache_config lv[2] = {
        {.size = B1 * 64, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1},
        {.size = B2 * 64,
         .ways = 1,
         .line = 64,
         .shared = 1,
         .latency = 12,
         .recip_throughput = 2}};
    struct pes_machine m = machine(2, lv);
    m.op_latency[PES_OP_FP_ADD] = 4;
    m.validation = PES_MACHINE_CALIBRATED; /* the report says how far the machine can be trusted */
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 3,
                                 .n_caches = 2,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    static struct oracle o;
    oracle_run(&o, a, N, &si);
    double total = 0, h1 = 0, h2 = 0, bytes = 0;
    for (int g = 0; g < 3; g++) {
        total += (double)o.prd[g].total;
        for (uint64_t d = 0; d < MAX_D; d++) {
            if (d < B1)
                h1 += (double)o.prd[g].exact[d];
            h2 += (double)o.crd[g].exact[d] * pow((B2 - 1.0) / B2, (double)d);
        }
    }
    for (size_t i = 0; i < N; i++)
        bytes += a[i].length;
    h1 /= total;
    h2 /= total;
    double g1 = h1, g2 = h2 > h1 ? h2 : h1;
    assert_true(g1 > 0 && g1 < g2 && g2 < 1); /* a case that exercises every term */

    static const struct pes_bb bb = {.id = 9, .ops = {[PES_OP_FP_ADD] = 15, [PES_OP_LOAD] = 1000}};
    const struct pes_bb *bbv[2] = {&bb, &bb};
    const uint32_t bbs_stream[2] = {0, 2};
    struct bbs bbs = {2, bbv, bbs_stream};
    for (uint32_t jobs = 1; jobs <= 2; jobs++) {
        struct pes_knobs k = {.jobs = jobs, .top = 10, .sort = "invalidations"};
        struct pes_report *r = run(&pes_analysis_reuse, &si, &k, a, N, 50, 1, &bbs);
        const struct pes_rnode *mo = pes_r_get(section(r, "config"), "model");
        const struct pes_rnode *hg = pes_r_get(mo, "hit_global"), *hl = pes_r_get(mo, "hit_local");
        assert_int_equal(pes_r_count(hg), 2);
        assert_near(pes_r_f(pes_r_at(hg, 0)), g1, 1e-9);
        assert_near(pes_r_f(pes_r_at(hg, 1)), g2, 1e-9);
        assert_int_equal(pes_r_count(hl), 2);
        assert_near(pes_r_f(pes_r_at(hl, 0)), g1, 1e-9);
        assert_near(pes_r_f(pes_r_at(hl, 1)), (g2 - g1) / (1 - g1), 1e-9);

        const struct pes_rnode *rt = pes_r_get(mo, "runtime");
        double delta = g1 * 4 + (g2 - g1) * 12 + (1 - g2) * 100; /* Eq. 6 in global form */
        double beta = g1 * 1 + (g2 - g1) * 2 + (1 - g2) * 10;    /* Eq. 7 */
        double mem = (delta + 7 * beta) / 8 * bytes / 3;         /* Eq. 5, b = 8, 3 cores */
        double cpu = 4 + (30.0 / 3 - 1) * 1; /* Eq. 8: 10 FP adds per core; loads are Eq. 5's */
        assert_near(pes_r_get_f(rt, "delta_avg"), delta, 1e-9);
        assert_near(pes_r_get_f(rt, "beta_avg"), beta, 1e-9);
        assert_near(pes_r_get_f(rt, "mem_cycles"), mem, 1e-6 * mem);
        assert_near(pes_r_get_f(rt, "cpu_cycles"), cpu, 1e-9);
        assert_near(pes_r_get_f(rt, "total_cycles"), mem + cpu, 1e-6 * mem);
        assert_near(pes_r_get_f(rt, "mem_seconds"), mem / 2e9, 1e-6 * mem / 2e9);
        assert_near(pes_r_get_f(rt, "cpu_seconds"), cpu / 2e9, 1e-15);
        assert_near(pes_r_get_f(rt, "total_seconds"), (mem + cpu) / 2e9, 1e-6 * mem / 2e9);
        assert_string_equal(pes_r_get_s(rt, "validation"), "calibrated");
        assert_string_equal(pes_r_get_s(rt, "model"), "ppt"); /* knobs zeroed: PES_RUNTIME_PPT */
        assert_int_equal(pes_r_count(rt), 12);                /* with terms and bound */
        assert_near(pes_r_get_f(pes_r_get(pes_r_get(rt, "terms"), "fill"), "cycles"), mem,
                    1e-6 * mem); /* ppt: Eq. 5 under fill */
        pes_report_destroy(r);
    }

    /* A level holding every distance: its hit rate is 1 for the accesses
     * that are not cold, whatever the placement (fully associative L1 of
     * 1024 lines; 16-way L2 of 2048 lines: D < 16 always hits, so use the
     * L1 only for the exact statement). */
    const struct pes_cache_config big[1] = {
        {.size = 1024 * 64, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1}};
    struct pes_machine mb = machine(1, big);
    si.machine = &mb;
    uint64_t cold = o.prd[0].cold + o.prd[1].cold + o.prd[2].cold;
    struct pes_knobs k = {.jobs = 1, .top = 10, .sort = "invalidations"};
    struct pes_report *r = run(&pes_analysis_reuse, &si, &k, a, N, N, 0, NULL);
    const struct pes_rnode *hg = pes_r_get(pes_r_get(section(r, "config"), "model"), "hit_global");
    assert_int_equal(pes_r_count(hg), 1);
    assert_near(pes_r_f(pes_r_at(hg, 0)), (total - (double)cold) / total, 1e-12);
    pes_report_destroy(r);
}

/* ------------------------------------------------------------ sim */

/* Two streams on one socket write different 8-byte words of line X in turn
 * (stream 0 at X+0 from site 1, stream 1 at X+8 from site 2); stream 0 also
 * reads its own line Y three times per round (site 3). N rounds, one private
 * level large enough that nothing is evicted. By hand (mesi.h definitions):
 *  - X by stream 0, round 0: compulsory miss, → M. Every later write to X
 *    misses (the other core took the line): compulsory the first time for
 *    core 1, coherence after; it invalidates the other core's M copy (false
 *    sharing: the written word was not accessed by the victim) and the line
 *    moves (a transfer, false). Coherence misses are false (the bytes missed
 *    were not written by the other core since).
 *  - Y: one compulsory miss, then hits.
 * Totals: accesses 5N, hits 3N-1, compulsory 3, coherence 2N-2,
 * invalidations false 2N-1, coherence misses false 2N-2, transfers false
 * 2N-1 (N from core 0 to 1, N-1 back), no writeback (no downgrade, no
 * eviction). Site 1: N accesses, N misses, N-1 invalidations, N-1 coherence
 * misses; site 2: N, N, N, N-1; site 3: 3N accesses, 1 miss. */
enum { SIM_N = 8 };

static size_t false_sharing(struct acc *a)
{
    size_t n = 0;
    for (int r = 0; r < SIM_N; r++) {
        a[n++] = (struct acc){0x1000, 8, 8, 0, 1, PES_BATCH_WRITE};
        for (int j = 0; j < 3; j++)
            a[n++] = (struct acc){0x2000 + 4 * (uint64_t)j, 4, 4, 0, 3, PES_BATCH_READ};
        a[n++] = (struct acc){0x1008, 8, 8, 1, 2, PES_BATCH_WRITE};
    }
    return n;
}

static const struct pes_cache_config sim_l1[1] = {
    {.size = 4096, .ways = 4, .line = 64, .latency = 4, .recip_throughput = 1}};

static void check_sim_site(const struct pes_rnode *o, uint32_t id, uint64_t accesses,
                           uint64_t misses, uint64_t compulsory, uint64_t coherence,
                           uint64_t inval_false, uint64_t coh_false, const char *sharing,
                           const uint64_t *threads, size_t n_threads)
{
    assert_int_equal(pes_r_get_u(o, "site"), id);
    assert_string_equal(pes_r_get_s(o, "file"), sites[id].file);
    assert_int_equal(pes_r_get_u(o, "line"), sites[id].line);
    assert_int_equal(pes_r_get_u(o, "column"), sites[id].column);
    assert_string_equal(pes_r_get_s(o, "function"), sites[id].function);
    assert_int_equal(pes_r_get_u(o, "accesses"), accesses);
    assert_int_equal(pes_r_get_u(o, "l1_misses"), misses);
    const uint64_t hits[1] = {accesses - misses};
    assert_u_array(pes_r_get(o, "hits"), hits, 1);
    const struct pes_rnode *c = pes_r_get(o, "l1_miss_classes");
    assert_int_equal(pes_r_get_u(c, "compulsory"), compulsory);
    assert_int_equal(pes_r_get_u(c, "capacity"), 0);
    assert_int_equal(pes_r_get_u(c, "coherence"), coherence);
    assert_int_equal(pes_r_get_u(pes_r_get(o, "invalidations"), "true"), 0);
    assert_int_equal(pes_r_get_u(pes_r_get(o, "invalidations"), "false"), inval_false);
    assert_int_equal(pes_r_get_u(pes_r_get(o, "coherence_misses"), "true"), 0);
    assert_int_equal(pes_r_get_u(pes_r_get(o, "coherence_misses"), "false"), coh_false);
    assert_string_equal(pes_r_get_s(o, "sharing"), sharing);
    assert_u_array(pes_r_get(o, "threads"), threads, n_threads);
}

static struct pes_report *run_sim(const char *sort, uint32_t top, size_t chunk)
{
    static struct acc a[5 * SIM_N];
    size_t n = false_sharing(a);
    static const uint32_t caches[2] = {0, 0};
    static struct pes_machine m;
    m = machine(1, sim_l1);
    static struct pes_stream_info si;
    si = (struct pes_stream_info){.path = "t",
                                  .n_streams = 2,
                                  .n_caches = 1,
                                  .stream_cache = caches,
                                  .machine = &m,
                                  .line = 64,
                                  .site = site_of};
    struct pes_knobs k = {.jobs = 1, .simulate = 1, .top = top, .sort = sort};
    return run(&pes_analysis_sim, &si, &k, a, n, chunk, 1, NULL);
}

/* The site ids listed under "sites", in order. */
static void assert_site_order(const struct pes_report *r, const uint64_t *ids, size_t n)
{
    const struct pes_rnode *arr = pes_r_get(pes_r_get(section(r, "config"), "simulation"), "sites");
    assert_int_equal(pes_r_count(arr), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pes_r_get_u(pes_r_at(arr, i), "site"), ids[i]);
}

static void test_sim_false_sharing(void **state)
{
    (void)state;
    const uint64_t N = SIM_N;
    const size_t chunks[] = {5 * SIM_N, 3};
    for (size_t ci = 0; ci < 2; ci++) {
        struct pes_report *r = run_sim("invalidations", 10, chunks[ci]);
        const struct pes_rnode *s = pes_r_get(section(r, "config"), "simulation");
        assert_non_null(s);
        const struct pes_rnode *levels = pes_r_get(s, "levels");
        assert_int_equal(pes_r_count(levels), 1);
        const struct pes_rnode *l1 = pes_r_at(levels, 0);
        assert_int_equal(pes_r_get_u(l1, "level"), 1);
        assert_int_equal(pes_r_get_u(l1, "accesses"), 5 * N);
        assert_int_equal(pes_r_get_u(l1, "hits"), 3 * N - 1);
        assert_int_equal(pes_r_get_u(l1, "compulsory"), 3);
        assert_int_equal(pes_r_get_u(l1, "capacity"), 0);
        assert_int_equal(pes_r_get_u(l1, "coherence"), 2 * N - 2);
        assert_int_equal(pes_r_get_u(pes_r_get(s, "invalidations"), "true"), 0);
        assert_int_equal(pes_r_get_u(pes_r_get(s, "invalidations"), "false"), 2 * N - 1);
        assert_int_equal(pes_r_get_u(pes_r_get(s, "coherence_misses"), "true"), 0);
        assert_int_equal(pes_r_get_u(pes_r_get(s, "coherence_misses"), "false"), 2 * N - 2);
        assert_int_equal(pes_r_get_u(pes_r_get(s, "transfers"), "true"), 0);
        assert_int_equal(pes_r_get_u(pes_r_get(s, "transfers"), "false"), 2 * N - 1);
        assert_int_equal(pes_r_get_u(s, "writebacks"), 0);
        assert_string_equal(pes_r_get_s(s, "sort"), "invalidations");

        /* ranked by invalidations caused: site 2 (N), site 1 (N-1); site 3 has none */
        const struct pes_rnode *top = pes_r_get(s, "sites");
        assert_int_equal(pes_r_count(top), 2);
        const uint64_t t1[] = {1}, t0[] = {0};
        /* site 2's writes invalidate thread 0, whose later misses it causes */
        check_sim_site(pes_r_at(top, 0), 2, N, N, 1, N - 1, N, N - 1, "false", t0, 1);
        check_sim_site(pes_r_at(top, 1), 1, N, N, 1, N - 1, N - 1, N - 1, "false", t1, 1);

        /* ComDetective matrix: one cell per direction summed, zero diagonal */
        const struct pes_rnode *comm = pes_r_get(s, "communication");
        assert_int_equal(pes_r_get_u(comm, "threads"), 2);
        const uint64_t zero[2] = {0, 0}, row0[2] = {0, 2 * N - 1}, row1[2] = {2 * N - 1, 0};
        for (int kind = 0; kind < 3; kind++) {
            const struct pes_rnode *mx = pes_r_get(comm, kind == 0   ? "all"
                                                         : kind == 1 ? "true"
                                                                     : "false");
            assert_int_equal(pes_r_count(mx), 2);
            assert_u_array(pes_r_at(mx, 0), kind == 1 ? zero : row0, 2);
            assert_u_array(pes_r_at(mx, 1), kind == 1 ? zero : row1, 2);
        }
        /* every site (text only): the ranked ones, then the rest by accesses */
        const struct pes_rnode *all = pes_r_get(s, "all_sites");
        assert_true(pes_r_flags(all) & PES_R_TEXT_ONLY);
        assert_int_equal(pes_r_count(all), 3);
        assert_int_equal(pes_r_get_u(pes_r_at(all, 0), "site"), 2);
        assert_int_equal(pes_r_get_u(pes_r_at(all, 1), "site"), 1);
        assert_int_equal(pes_r_get_u(pes_r_at(all, 2), "site"), 3);
        assert_int_equal(pes_r_get_u(pes_r_at(all, 2), "accesses"), 3 * N);
        assert_int_equal(pes_r_get_u(pes_r_at(all, 2), "reads"), 3 * N);
        assert_int_equal(pes_r_get_u(pes_r_at(all, 2), "writes"), 0);
        pes_report_destroy(r);
    }
}

static void test_sim_ranking(void **state)
{
    (void)state;
    const uint64_t N = SIM_N;
    struct pes_report *r = run_sim("accesses", 10, 4);
    const uint64_t by_acc[] = {3, 1, 2}; /* 3N, then the tie N = N by id */
    assert_site_order(r, by_acc, 3);
    const struct pes_rnode *s3 =
        pes_r_at(pes_r_get(pes_r_get(section(r, "config"), "simulation"), "sites"), 0);
    const uint64_t none[1] = {0};
    check_sim_site(s3, 3, 3 * N, 1, 1, 0, 0, 0, "-", none, 0);
    pes_report_destroy(r);

    r = run_sim("accesses", 1, 4);
    const uint64_t acc1[] = {3};
    assert_site_order(r, acc1, 1);
    pes_report_destroy(r);

    r = run_sim("invalidations", 1, 4);
    const uint64_t inv1[] = {2};
    assert_site_order(r, inv1, 1);
    pes_report_destroy(r);

    /* coherence misses: N-1 each, a tie broken by id; misses: N, N, 1 */
    r = run_sim("coherence", 10, 4);
    const uint64_t coh[] = {1, 2};
    assert_site_order(r, coh, 2);
    pes_report_destroy(r);
    r = run_sim("misses", 10, 4);
    const uint64_t mis[] = {1, 2, 3};
    assert_site_order(r, mis, 3);
    pes_report_destroy(r);
    /* false sharing: site 2 has 2N-1 events, site 1 2N-2; no true sharing at all */
    r = run_sim("false-sharing", 10, 4);
    const uint64_t fs[] = {2, 1};
    assert_site_order(r, fs, 2);
    pes_report_destroy(r);
    r = run_sim("true-sharing", 10, 4);
    assert_site_order(r, NULL, 0);
    pes_report_destroy(r);
}

static void test_sim_too_many_streams(void **state)
{
    (void)state;
    static uint32_t caches[PES_SIM_MAX_CORES + 1];
    struct pes_machine m = machine(1, sim_l1);
    m.sockets = 1;
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = PES_SIM_MAX_CORES + 1,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    struct pes_knobs k = {.jobs = 1, .simulate = 1, .top = 10, .sort = "invalidations"};
    struct pes_error err = {0};
    assert_null(pes_analysis_sim.create(&si, &k, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_string_equal(err.message,
                        "--simulate: the trace has 65 threads; the simulator maps one core per "
                        "thread and supports at most 64");
    /* the pipeline refuses the stream with the same message */
    memset(&err, 0, sizeof err);
    assert_null(pes_pipeline_create(&si, &k, &err));
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_non_null(strstr(err.message, "supports at most 64"));
    /* the limit itself is accepted */
    si.n_streams = PES_SIM_MAX_CORES;
    void *s = pes_analysis_sim.create(&si, &k, &err);
    assert_non_null(s);
    pes_analysis_sim.destroy(s);
}

/* ------------------------------------------------------------ pipeline */

/* Runs the registry's pipeline; returns the report. */
static struct pes_report *run_pipeline(const struct pes_stream_info *si, const struct pes_knobs *k,
                                       const struct acc *a, size_t n)
{
    struct pes_error err = {0};
    struct pes_pipeline *p = pes_pipeline_create(si, k, &err);
    assert_non_null(p);
    const struct pes_batch_sink *sink = pes_pipeline_sink(p);
    feed(sink->batch, sink->ctx, a, n, 16, si->n_streams, 1, NULL);
    assert_int_equal(pes_pipeline_finish(p, &err), 0);
    struct pes_publish to;
    struct pes_report *r = new_report(&to);
    pes_pipeline_publish(p, &to);
    pes_pipeline_destroy(p);
    assert_false(pes_report_failed(r));
    return r;
}

static void assert_keys(const struct pes_rnode *o, const char *const *keys, size_t n)
{
    assert_int_equal(pes_r_count(o), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(pes_r_key(pes_r_at(o, i)), keys[i]);
}

static void test_pipeline_registry(void **state)
{
    (void)state;
    static struct acc a[5 * SIM_N];
    size_t n = false_sharing(a);
    const uint32_t caches[2] = {0, 0};
    struct pes_machine m = machine(1, sim_l1);
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 2,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    static const char *const summary_keys[] = {"threads", "records", "accesses",      "reads",
                                               "writes",  "bytes",   "bb_executions", "ops"};
    /* site_strides: stride.c's text-only table (the findings' input) */
    static const char *const all_keys[] = {
        "prd",        "crd",         "sites", "by", "groups", "model", "miss_ratio_curve",
        "simulation", "site_strides"};
    static const char *const no_sim_keys[] = {
        "prd", "crd", "sites", "by", "groups", "model", "miss_ratio_curve", "site_strides"};

    /* --cores given: the recorded stream only feeds the summary */
    struct pes_knobs k = {.jobs = 1, .mimic = 1, .simulate = 1, .top = 10, .sort = "invalidations"};
    struct pes_report *r = run_pipeline(&si, &k, a, n);
    assert_keys(section(r, "trace"), summary_keys, 8);
    assert_int_equal(pes_r_get_u(section(r, "trace"), "accesses"), n);
    assert_int_equal(pes_r_count(section(r, "config")), 0);
    pes_report_destroy(r);

    /* a mimicked stream: reuse and simulation, no summary; the model uses
     * the recorded run's work, not the bytes of this stream */
    struct pes_work work = {.bytes = 1000000};
    si.mimicked = 1;
    si.work = &work;
    r = run_pipeline(&si, &k, a, n);
    assert_int_equal(pes_r_count(section(r, "trace")), 0);
    assert_keys(section(r, "config"), all_keys, 9);
    assert_int_equal(
        pes_r_get_u(pes_r_at(pes_r_get(pes_r_get(section(r, "config"), "simulation"), "levels"), 0),
                    "accesses"),
        5 * SIM_N);
    const struct pes_rnode *rt = pes_r_get(pes_r_get(section(r, "config"), "model"), "runtime");
    double d = pes_r_get_f(rt, "delta_avg"), b = pes_r_get_f(rt, "beta_avg");
    assert_near(pes_r_get_f(rt, "mem_cycles"), (d + 7 * b) / 8 * 1e6 / 2, 1e-6);
    pes_report_destroy(r);

    /* the recorded stream without --cores: all three; without --simulate no simulation */
    si.mimicked = 0;
    si.work = NULL;
    k.mimic = 0;
    for (k.jobs = 1; k.jobs <= 2; k.jobs++) {
        r = run_pipeline(&si, &k, a, n);
        assert_keys(section(r, "trace"), summary_keys, 8);
        const struct pes_rnode *c = section(r, "config");
        assert_keys(c, all_keys, 9);
        /* every access is one line: 5N of them in the CRD and the simulation */
        assert_int_equal(
            pes_r_get_u(pes_r_get(pes_r_at(pes_r_get(c, "crd"), 0), "histogram"), "accesses"),
            5 * SIM_N);
        assert_int_equal(
            pes_r_get_u(pes_r_at(pes_r_get(pes_r_get(c, "simulation"), "levels"), 0), "accesses"),
            5 * SIM_N);
        pes_report_destroy(r);
    }
    k.jobs = 1;
    k.simulate = 0;
    r = run_pipeline(&si, &k, a, n);
    assert_keys(section(r, "config"), no_sim_keys, 8);
    pes_report_destroy(r);
}

/* An analysis failing on a batch stops the pipeline there with its error:
 * reuse refuses a stream index out of range; the summary (before it in the
 * registry) has seen the batch, the simulation (after it) has not. */
static void test_pipeline_error_stops(void **state)
{
    (void)state;
    const uint32_t caches[2] = {0, 0};
    struct pes_machine m = machine(1, sim_l1);
    struct pes_stream_info si = {.path = "t",
                                 .n_streams = 2,
                                 .n_caches = 1,
                                 .stream_cache = caches,
                                 .machine = &m,
                                 .line = 64,
                                 .site = site_of};
    struct pes_knobs k = {.jobs = 1, .simulate = 1, .top = 10, .sort = "invalidations"};
    struct pes_error err = {0};
    struct pes_pipeline *p = pes_pipeline_create(&si, &k, &err);
    assert_non_null(p);
    const struct pes_batch_sink *sink = pes_pipeline_sink(p);
    const uint64_t addr[] = {0x1000, 0x2000, 0x3000};
    const uint32_t size[] = {8, 8, 8}, stream[] = {0, 1, 0}, site[] = {0, 1, 2};
    const uint8_t rw[] = {1, 2, 1};
    struct pes_batch ok = {.n = 3,
                           .addr = addr,
                           .size = size,
                           .length = size,
                           .stream = stream,
                           .site = site,
                           .rw = rw};
    assert_int_equal(sink->batch(sink->ctx, &ok, &err), 0);
    const uint32_t bad_stream[] = {1, 0, 5};
    struct pes_batch bad = ok;
    bad.stream = bad_stream;
    assert_int_equal(sink->batch(sink->ctx, &bad, &err), -1);
    assert_int_equal(err.code, PES_ERR_ARG);
    assert_non_null(strstr(err.message, "stream 5 out of range"));

    memset(&err, 0, sizeof err);
    assert_int_equal(pes_pipeline_finish(p, &err), 0);
    struct pes_publish to;
    struct pes_report *r = new_report(&to);
    pes_pipeline_publish(p, &to);
    pes_pipeline_destroy(p);
    assert_int_equal(pes_r_get_u(section(r, "trace"), "accesses"), 6);
    const struct pes_rnode *c = section(r, "config");
    assert_int_equal(
        pes_r_get_u(pes_r_at(pes_r_get(pes_r_get(c, "simulation"), "levels"), 0), "accesses"), 3);
    assert_int_equal(
        pes_r_get_u(pes_r_get(pes_r_at(pes_r_get(c, "crd"), 0), "histogram"), "accesses"), 3);
    pes_report_destroy(r);
}

/* ------------------------------------------------------------ JSON writer */

static char *json_of(const struct pes_report *r, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rc = pes_report_write_json(f, r);
    fclose(f);
    return buf;
}

/* ------------------------------------------------------------ sampled, accuracy */

static struct pes_event event(uint8_t kind, uint8_t flags, uint32_t thread, uint32_t other,
                              uint32_t site, uint64_t distance, uint64_t aux)
{
    return (struct pes_event){.kind = kind,
                              .flags = flags,
                              .size = 8,
                              .thread = thread,
                              .other_thread = other,
                              .site = site,
                              .addr = 0x1000,
                              .distance = distance,
                              .aux = aux};
}

/* The events as one batch (as a sampled source hands over an EVENTS block). */
static void feed_events(const struct pes_batch_sink *sink, const struct pes_event *e, size_t n)
{
    struct pes_batch b = {.n_events = n, .events = e, .events_offset = 4096};
    struct pes_error err = {0};
    if (sink->batch(sink->ctx, &b, &err) != 0) {
        print_error("events: %s\n", err.message);
        fail();
    }
}

/* The report of the registry on a sampled stream: its events, then (paired
 * streams) the full trace's accesses; publishes into the root, as pes-replay does. */
static struct pes_report *run_sampled(const struct pes_stream_info *si, const struct pes_event *e,
                                      size_t n_e, const struct acc *a, size_t n_a)
{
    struct pes_error err = {0};
    struct pes_knobs k = {.jobs = 1, .top = 10, .sort = "invalidations"};
    struct pes_pipeline *p = pes_pipeline_create(si, &k, &err);
    if (!p) {
        print_error("%s\n", err.message);
        fail();
    }
    feed_events(pes_pipeline_sink(p), e, n_e);
    if (n_a) {
        const struct pes_batch_sink *sink = pes_pipeline_sink(p);
        feed(sink->batch, sink->ctx, a, n_a, 3, si->paired->n_streams, 1, NULL);
    }
    assert_int_equal(pes_pipeline_finish(p, &err), 0);
    struct pes_report *r = pes_report_create();
    assert_non_null(r);
    struct pes_publish to = {.r = r, .trace = pes_report_root(r)};
    pes_pipeline_publish(p, &to);
    pes_pipeline_destroy(p);
    assert_false(pes_report_failed(r));
    return r;
}

static const struct pes_trace_info sampled_header = {
    .kind = PES_TRACE_SAMPLED,
    .command = "prog",
    .hostname = "h",
    .pid = 42,
    .start_ticks = 1000,
    .ticks_per_second = 1000000000,
    .config = "mode=reuse\nperiod_load=100\nperiod_store=200\nline_size=64\n",
};

/* A header's settings, as replay_input reads them when it opens a trace. */
static const struct pes_collect_settings *settings_of(const struct pes_trace_info *h,
                                                      struct pes_collect_settings *s)
{
    assert_int_equal(pes_settings_from_header(s, h->config, NULL), 0);
    return s;
}

/* One histogram bin of a published [{"lo","hi","count"}] array. */
static double bin_count(const struct pes_rnode *h, uint64_t distance)
{
    uint64_t lo, hi;
    pes_rt_bin_range(pes_rt_bin(distance), &lo, &hi);
    for (size_t i = 0; i < pes_r_count(h); i++)
        if (pes_r_get_u(pes_r_at(h, i), "lo") == lo)
            return pes_r_get_f(pes_r_at(h, i), "count");
    return 0;
}

/* The sampled analyses on hand-made events, counted by hand: the collector's
 * distance is one more than the accesses between (docs/accuracy.md), a
 * reuse's weight is its aux (reservoir offers), a COMM found at a sample
 * adds the period of its kind to both cells of the symmetric matrix. Only
 * "sampled" runs on such a stream. */
static void test_sampled_by_hand(void **state)
{
    (void)state;
    struct pes_stream_info si = {
        .path = "s.zst",
        .kind = PES_TRACE_SAMPLED,
        .header = &sampled_header,
        .settings = settings_of(&sampled_header, &(struct pes_collect_settings){0}),
        .n_streams = 2,
        .site = site_of};
    struct pes_event e[] = {
        event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        event(PES_EV_REUSE, 0, 0, 0, 0, 5, 0), /* 4 between */
        event(PES_EV_REUSE, 0, 1, 1, 1, 1, 3), /* 0 between, weight 3 */
        event(PES_EV_INVALIDATION, 0, 0, 1, 0, 0, 0),
        event(PES_EV_COMM, PES_EVF_TRUE_SHARING | PES_EVF_WRITE, 1, 0, 3, 0,
              0), /* + store period 200 */
        event(PES_EV_TOTALS, 0, 0, UINT32_MAX, UINT32_MAX, 0, 0),
    };
    e[5].loads = 10;
    e[5].stores = 5;
    struct pes_report *r = run_sampled(&si, e, sizeof e / sizeof e[0], NULL, 0);
    const struct pes_rnode *o = pes_report_tree(r);
    static const char *const keys[] = {"trace",
                                       "kind",
                                       "mode",
                                       "period_load",
                                       "period_store",
                                       "interval_bias",
                                       "granularity",
                                       "threads",
                                       "truncated",
                                       "skipped_blocks",
                                       "samples",
                                       "lost",
                                       "throttled",
                                       "dropped",
                                       "expired",
                                       "reuse_estimator",
                                       "stack_model",
                                       "interval_level",
                                       "intra",
                                       "shared",
                                       "stack_histogram",
                                       "per_thread",
                                       "comm",
                                       "sites",
                                       "by",
                                       "groups",
                                       "cache_lines",
                                       "cache_lines_untracked",
                                       "bytes_by_thread"};
    assert_keys(o, keys, sizeof keys / sizeof keys[0]);
    assert_string_equal(pes_r_get_s(o, "mode"), "reuse");
    assert_int_equal(pes_r_get_u(o, "period_store"), 200);
    assert_int_equal(pes_r_get_u(o, "samples"), 1);
    const struct pes_rnode *intra = pes_r_get(o, "intra");
    assert_int_equal(pes_r_get_u(intra, "reuses"), 2);
    assert_int_equal(pes_r_get_u(intra, "invalidations"), 1);
    assert_near(bin_count(pes_r_get(intra, "time_histogram"), 4), 1, 0);
    assert_near(bin_count(pes_r_get(intra, "time_histogram"), 0), 3, 0);
    assert_int_equal(pes_r_get_u(pes_r_at(pes_r_get(o, "per_thread"), 0), "loads"), 10);
    const struct pes_rnode *comm = pes_r_get(o, "comm");
    assert_int_equal(pes_r_get_u(comm, "events"), 1);
    const struct pes_rnode *mt = pes_r_get(comm, "true");
    assert_near(pes_r_f(pes_r_at(pes_r_at(mt, 0), 1)), 200, 0);
    assert_near(pes_r_f(pes_r_at(pes_r_at(mt, 1), 0)), 200, 0);
    assert_near(pes_r_f(pes_r_at(pes_r_at(mt, 0), 0)), 0, 0);
    /* sites by invalidations, then communication, then samples */
    const struct pes_rnode *sites = pes_r_get(o, "sites");
    assert_int_equal(pes_r_count(sites), 3);
    assert_int_equal(pes_r_get_u(pes_r_at(sites, 0), "site"), 0);
    assert_non_null(strstr(pes_r_get_s(pes_r_at(sites, 0), "label"), "main.c:10"));
    assert_int_equal(pes_r_get_u(pes_r_at(sites, 1), "site"), 3);
    assert_int_equal(pes_r_get_u(pes_r_at(sites, 2), "site"), 1);
    pes_report_destroy(r);

    /* an event of a thread the trace does not announce: the offset is named */
    struct pes_error err = {0};
    struct pes_knobs k = {.top = 10};
    struct pes_pipeline *p = pes_pipeline_create(&si, &k, &err);
    assert_non_null(p);
    struct pes_event bad = event(PES_EV_SAMPLE, 0, 7, UINT32_MAX, 0, 0, 0);
    struct pes_batch b = {.n_events = 1, .events = &bad, .events_offset = 4096};
    assert_int_equal(pes_pipeline_sink(p)->batch(pes_pipeline_sink(p)->ctx, &b, &err), -1);
    assert_non_null(strstr(err.message, "offset 4096"));
    assert_non_null(strstr(err.message, "thread 7"));
    pes_pipeline_destroy(p);
}

/* link's view of a pipeline: the analyses wanted on the stream, by their
 * entries, and nothing else (a sampled stream unpaired: no accuracy join;
 * without --by object no sampled_objects; a full trace: no sampled one). */
static void test_pipeline_siblings(void **state)
{
    (void)state;
    struct pes_collect_settings set;
    struct pes_stream_info si = {.path = "s.zst",
                                 .kind = PES_TRACE_SAMPLED,
                                 .header = &sampled_header,
                                 .settings = settings_of(&sampled_header, &set),
                                 .n_streams = 2,
                                 .site = site_of};
    struct pes_knobs k = {.top = 10};
    struct pes_error err = {0};
    for (int by_object = 0; by_object < 2; by_object++) {
        k.by = by_object ? "object" : NULL;
        struct pes_pipeline *p = pes_pipeline_create(&si, &k, &err);
        assert_non_null(p);
        const struct pes_siblings *s = pes_pipeline_siblings(p);
        assert_non_null(pes_sibling(s, &pes_analysis_sampled_counts));
        assert_non_null(pes_sibling(s, &pes_analysis_sampled_reuse));
        assert_true(pes_sibling(s, &pes_analysis_sampled_counts) !=
                    pes_sibling(s, &pes_analysis_sampled_reuse));
        assert_true((pes_sibling(s, &pes_analysis_sampled_objects) != NULL) == by_object);
        assert_null(pes_sibling(s, &pes_analysis_accuracy));
        assert_null(pes_sibling(s, &pes_analysis_summary));
        pes_pipeline_destroy(p);
    }
    const uint32_t caches[2] = {0, 0};
    struct pes_machine m = machine(1, sim_l1);
    struct pes_stream_info full = {.path = "t",
                                   .n_streams = 2,
                                   .n_caches = 1,
                                   .stream_cache = caches,
                                   .machine = &m,
                                   .line = 64,
                                   .site = site_of};
    k = (struct pes_knobs){.jobs = 1, .top = 10};
    struct pes_pipeline *p = pes_pipeline_create(&full, &k, &err);
    assert_non_null(p);
    assert_non_null(pes_sibling(pes_pipeline_siblings(p), &pes_analysis_summary));
    assert_null(pes_sibling(pes_pipeline_siblings(p), &pes_analysis_sampled_counts));
    pes_pipeline_destroy(p);
}

/* The row of object id in a published "groups" array (NULL: none). */
static const struct pes_rnode *object_row(const struct pes_rnode *groups, uint32_t id)
{
    for (size_t i = 0; i < pes_r_count(groups); i++)
        if (pes_r_get_u(pes_r_at(groups, i), "object") == id)
            return pes_r_at(groups, i);
    return NULL;
}

/* --by object on a sampled stream: hand-made events with an event_object
 * column, counted per object by hand. Object 1: 3 samples, a reuse of
 * collector distance 6 (5 between), a true communication event; object 2:
 * 2 samples, reuses of distance 1 (0 between) weight 3 and 11 (10 between)
 * weight 1 (mean (3 x 0 + 10) / 4 = 2.5), an invalidation, 2 false
 * communication events; object 0 (unknown): a sample. Ranked by
 * invalidations, then communication, then samples: 2, 1, unknown. Without
 * the column every event is the unknown object's. */
static void test_sampled_by_object(void **state)
{
    (void)state;
    struct pes_objects *objs = pes_objects_create();
    assert_non_null(objs);
    pes_objects_alloc(objs, 0x10000, 64, 5);
    pes_objects_alloc(objs, 0x20000, 64, 6);
    uint64_t off;
    uint32_t id1 = pes_objects_lookup(objs, 0x10008, 0, &off),
             id2 = pes_objects_lookup(objs, 0x20010, 0, &off);
    assert_int_not_equal(id1, 0);
    assert_int_not_equal(id2, 0);
    assert_int_not_equal(id1, id2);
    struct pes_stream_info si = {
        .path = "s.zst",
        .kind = PES_TRACE_SAMPLED,
        .header = &sampled_header,
        .settings = settings_of(&sampled_header, &(struct pes_collect_settings){0}),
        .n_streams = 2,
        .site = site_of,
        .objects = objs};
    struct pes_event e[] = {
        event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        event(PES_EV_SAMPLE, 0, 1, UINT32_MAX, 1, 0, 0),
        event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        event(PES_EV_SAMPLE, 0, 1, UINT32_MAX, 1, 0, 0),
        event(PES_EV_REUSE, 0, 0, 0, 0, 6, 0),
        event(PES_EV_REUSE, 0, 1, 1, 1, 1, 3),
        event(PES_EV_REUSE, 0, 1, 1, 1, 11, 1),
        event(PES_EV_INVALIDATION, 0, 0, 1, 0, 0, 0),
        event(PES_EV_COMM, PES_EVF_TRUE_SHARING, 1, 0, 3, 0, 0),
        event(PES_EV_COMM, PES_EVF_FALSE_SHARING, 1, 0, 3, 0, 0),
        event(PES_EV_COMM, PES_EVF_FALSE_SHARING | PES_EVF_WRITE, 0, 1, 3, 0, 0),
        event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        event(PES_EV_TOTALS, 0, 0, UINT32_MAX, UINT32_MAX, 0, 0),
    };
    uint32_t obj[] = {id1, id1, id2, id1, id2, id1, id2, id2, id2, id1, id2, id2, 0, 0};
    uint64_t obj_off[sizeof obj / sizeof obj[0]] = {0};
    size_t n = sizeof e / sizeof e[0];
    for (int with_column = 1; with_column >= 0; with_column--) {
        struct pes_error err = {0};
        struct pes_knobs k = {.jobs = 1, .top = 10, .by = "object"};
        struct pes_pipeline *p = pes_pipeline_create(&si, &k, &err);
        if (!p) {
            print_error("%s\n", err.message);
            fail();
        }
        struct pes_batch b = {.n_events = n,
                              .events = e,
                              .events_offset = 4096,
                              .event_object = with_column ? obj : NULL,
                              .event_object_offset = with_column ? obj_off : NULL};
        const struct pes_batch_sink *sink = pes_pipeline_sink(p);
        assert_int_equal(sink->batch(sink->ctx, &b, &err), 0);
        assert_int_equal(pes_pipeline_finish(p, &err), 0);
        struct pes_report *r = pes_report_create();
        assert_non_null(r);
        struct pes_publish to = {.r = r, .trace = pes_report_root(r)};
        pes_pipeline_publish(p, &to);
        pes_pipeline_destroy(p);
        assert_false(pes_report_failed(r));
        const struct pes_rnode *o = pes_report_tree(r);
        assert_string_equal(pes_r_get_s(o, "by"), "object");
        const struct pes_rnode *g = pes_r_get(o, "groups");
        if (!with_column) {
            assert_int_equal(pes_r_count(g), 1);
            const struct pes_rnode *u = pes_r_at(g, 0);
            assert_int_equal(pes_r_get_u(u, "object"), 0);
            assert_string_equal(pes_r_get_s(u, "key"), "unknown");
            assert_int_equal(pes_r_get_u(u, "samples"), 6);
            assert_int_equal(pes_r_get_u(u, "reuses"), 3);
            assert_near(pes_r_get_f(u, "reuse_time_mean"), (5.0 + 0 * 3 + 10) / 5, 1e-12);
            assert_int_equal(pes_r_get_u(u, "invalidations"), 1);
            assert_int_equal(pes_r_get_u(u, "comm_true"), 1);
            assert_int_equal(pes_r_get_u(u, "comm_false"), 2);
            pes_report_destroy(r);
            continue;
        }
        assert_int_equal(pes_r_count(g), 3);
        assert_int_equal(pes_r_get_u(pes_r_at(g, 0), "object"), id2);
        assert_int_equal(pes_r_get_u(pes_r_at(g, 1), "object"), id1);
        assert_int_equal(pes_r_get_u(pes_r_at(g, 2), "object"), 0);
        const struct pes_rnode *r1 = object_row(g, id1), *r2 = object_row(g, id2),
                               *r0 = object_row(g, 0);
        assert_int_equal(pes_r_get_u(r1, "samples"), 3);
        assert_int_equal(pes_r_get_u(r1, "reuses"), 1);
        assert_near(pes_r_get_f(r1, "reuse_time_mean"), 5, 0);
        assert_near(bin_count(pes_r_get(r1, "reuse_time_histogram"), 5), 1, 0);
        assert_int_equal(pes_r_count(pes_r_get(r1, "reuse_time_histogram")), 1);
        assert_int_equal(pes_r_get_u(r1, "invalidations"), 0);
        assert_int_equal(pes_r_get_u(r1, "comm_true"), 1);
        assert_int_equal(pes_r_get_u(r1, "comm_false"), 0);
        assert_int_equal(pes_r_get_u(r2, "samples"), 2);
        assert_int_equal(pes_r_get_u(r2, "reuses"), 2);
        assert_near(pes_r_get_f(r2, "reuse_time_mean"), 2.5, 1e-12);
        assert_near(bin_count(pes_r_get(r2, "reuse_time_histogram"), 0), 3, 0);
        assert_near(bin_count(pes_r_get(r2, "reuse_time_histogram"), 10), 1, 0);
        assert_int_equal(pes_r_get_u(r2, "invalidations"), 1);
        assert_int_equal(pes_r_get_u(r2, "comm_true"), 0);
        assert_int_equal(pes_r_get_u(r2, "comm_false"), 2);
        assert_int_equal(pes_r_get_u(r0, "samples"), 1);
        assert_int_equal(pes_r_get_u(r0, "reuses"), 0);
        assert_near(pes_r_get_f(r0, "reuse_time_mean"), 0, 0);
        assert_int_equal(pes_r_count(pes_r_get(r0, "reuse_time_histogram")), 0);
        assert_string_equal(pes_r_get_s(r0, "key"), "unknown");
        assert_string_not_equal(pes_r_get_s(r1, "key"), "unknown");
        assert_int_equal(pes_r_count(pes_r_get(r1, "sites")), 0);
        /* the trace's totals do not change with --by */
        assert_int_equal(pes_r_get_u(o, "samples"), 6);
        pes_report_destroy(r);
    }
    pes_objects_destroy(objs);
}

/* --compare --by object: the sampled trace's samples and the full trace's
 * accesses per object, joined by name (the two traces resolve their objects
 * apart: here the same two heap blocks get their ids in opposite orders).
 * Samples: X 3, Y 1, unknown 1 (of 5); accesses: X 2, Y 6 (of 8). Ranked by
 * accesses: Y (1, 6, 0.2, 0.75), X (3, 2, 0.6, 0.25), unknown (1, 0, 0.2, 0). */
static void test_accuracy_by_object(void **state)
{
    (void)state;
    struct pes_objects *so = pes_objects_create(), *fo = pes_objects_create();
    assert_true(so && fo);
    uint64_t off;
    pes_objects_alloc(so, 0x10000, 64, 5);
    pes_objects_alloc(so, 0x20000, 64, 6);
    uint32_t sx = pes_objects_lookup(so, 0x10000, 0, &off),
             sy = pes_objects_lookup(so, 0x20000, 0, &off);
    pes_objects_alloc(fo, 0x20000, 64, 6);
    uint32_t fy = pes_objects_lookup(fo, 0x20008, 0, &off);
    pes_objects_alloc(fo, 0x10000, 64, 5);
    uint32_t fx = pes_objects_lookup(fo, 0x10008, 0, &off);
    assert_true(sx && sy && fx && fy);
    assert_int_not_equal(sx, fx); /* the join must go by name */
    const uint32_t caches[2] = {0, 0};
    struct pes_machine m = machine(1, sim_l1);
    struct pes_trace_info full_header = sampled_header;
    full_header.kind = PES_TRACE_FULL;
    full_header.config = "";
    struct pes_stream_info full = {.path = "f.zst",
                                   .kind = PES_TRACE_FULL,
                                   .header = &full_header,
                                   .settings =
                                       settings_of(&full_header, &(struct pes_collect_settings){0}),
                                   .n_streams = 2,
                                   .n_caches = 1,
                                   .stream_cache = caches,
                                   .machine = &m,
                                   .line = 64,
                                   .site = site_of,
                                   .objects = fo};
    struct pes_stream_info si = {
        .path = "s.zst",
        .kind = PES_TRACE_SAMPLED,
        .header = &sampled_header,
        .settings = settings_of(&sampled_header, &(struct pes_collect_settings){0}),
        .n_streams = 2,
        .machine = &m,
        .site = site_of,
        .paired = &full,
        .objects = so};
    char xname[128], yname[128];
    replay_object_name(&si, sx, xname, sizeof xname);
    replay_object_name(&si, sy, yname, sizeof yname);
    assert_string_not_equal(xname, yname);
    struct pes_event e[5];
    for (int i = 0; i < 5; i++)
        e[i] = event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0);
    uint32_t eobj[5] = {sx, sy, sx, 0, sx};
    uint64_t eoff[5] = {0};
    uint64_t addr[8];
    uint32_t size[8], length[8], stream[8], site[8], aobj[8] = {fy, fx, fy, fy, fx, fy, fy, fy};
    uint64_t aoff[8] = {0};
    uint8_t rw[8];
    for (int i = 0; i < 8; i++) {
        addr[i] = aobj[i] == fx ? 0x10000 : 0x20000;
        size[i] = length[i] = 8;
        stream[i] = 0;
        site[i] = 0;
        rw[i] = PES_BATCH_READ;
    }
    uint32_t ended[2] = {0, 1};
    struct pes_error err = {0};
    struct pes_knobs k = {.jobs = 1, .top = 10, .by = "object"};
    struct pes_pipeline *p = pes_pipeline_create(&si, &k, &err);
    if (!p) {
        print_error("%s\n", err.message);
        fail();
    }
    const struct pes_batch_sink *sink = pes_pipeline_sink(p);
    struct pes_batch be = {.n_events = 5,
                           .events = e,
                           .events_offset = 4096,
                           .event_object = eobj,
                           .event_object_offset = eoff};
    assert_int_equal(sink->batch(sink->ctx, &be, &err), 0);
    struct pes_batch ba = {.n = 8,
                           .addr = addr,
                           .size = size,
                           .length = length,
                           .stream = stream,
                           .site = site,
                           .rw = rw,
                           .object = aobj,
                           .object_offset = aoff,
                           .n_ended = 2,
                           .ended = ended};
    assert_int_equal(sink->batch(sink->ctx, &ba, &err), 0);
    assert_int_equal(pes_pipeline_finish(p, &err), 0);
    struct pes_report *r = pes_report_create();
    assert_non_null(r);
    struct pes_publish to = {.r = r, .trace = pes_report_root(r)};
    pes_pipeline_publish(p, &to);
    pes_pipeline_destroy(p);
    assert_false(pes_report_failed(r));
    const struct pes_rnode *o = pes_report_tree(r);
    assert_string_equal(pes_r_get_s(o, "by"), "object");
    const struct pes_rnode *rows = pes_r_get(o, "objects");
    assert_int_equal(pes_r_count(rows), 3);
    const char *name[3] = {yname, xname, "unknown"};
    const uint64_t samples[3] = {1, 3, 1}, accesses[3] = {6, 2, 0};
    const double ss[3] = {0.2, 0.6, 0.2}, as[3] = {0.75, 0.25, 0};
    for (int i = 0; i < 3; i++) {
        const struct pes_rnode *x = pes_r_at(rows, i);
        assert_string_equal(pes_r_get_s(x, "key"), name[i]);
        assert_int_equal(pes_r_get_u(x, "samples"), samples[i]);
        assert_int_equal(pes_r_get_u(x, "accesses"), accesses[i]);
        assert_near(pes_r_get_f(x, "sample_share"), ss[i], 1e-12);
        assert_near(pes_r_get_f(x, "access_share"), as[i], 1e-12);
    }
    assert_int_equal(pes_r_get_u(o, "accesses"), 8);
    pes_report_destroy(r);
    pes_objects_destroy(so);
    pes_objects_destroy(fo);
}

/* --compare on a hand-made pair: thread 0 reads A, B, C, A (one reuse of A,
 * 2 accesses between), thread 1 writes D; the sampled trace saw that reuse
 * at the collector's distance 3. The sampled and the exact time histograms
 * are then one bin each, equal: S = 1; no invalidation in either: ratio
 * error 0; no COMM events: the communication metrics are undefined (null). */
static void test_accuracy_by_hand(void **state)
{
    (void)state;
    const uint32_t caches[2] = {0, 0};
    struct pes_machine m = machine(1, sim_l1);
    struct pes_trace_info full_header = sampled_header;
    full_header.kind = PES_TRACE_FULL;
    full_header.config = "";
    struct pes_stream_info full = {.path = "f.zst",
                                   .kind = PES_TRACE_FULL,
                                   .header = &full_header,
                                   .settings =
                                       settings_of(&full_header, &(struct pes_collect_settings){0}),
                                   .n_streams = 2,
                                   .n_caches = 1,
                                   .stream_cache = caches,
                                   .machine = &m,
                                   .line = 64,
                                   .site = site_of};
    struct pes_stream_info si = {
        .path = "s.zst",
        .kind = PES_TRACE_SAMPLED,
        .header = &sampled_header,
        .settings = settings_of(&sampled_header, &(struct pes_collect_settings){0}),
        .n_streams = 2,
        .machine = &m,
        .site = site_of,
        .paired = &full};
    struct pes_event e[] = {event(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
                            event(PES_EV_REUSE, 0, 0, 0, 0, 3, 0)};
    const struct acc a[] = {
        {0x1000, 8, 8, 0, 0, PES_BATCH_READ}, {0x2000, 8, 8, 0, 0, PES_BATCH_READ},
        {0x3000, 8, 8, 0, 0, PES_BATCH_READ}, {0x9000, 8, 8, 1, 1, PES_BATCH_WRITE},
        {0x1000, 8, 8, 0, 0, PES_BATCH_READ},
    };
    struct pes_report *r = run_sampled(&si, e, 2, a, 5);
    const struct pes_rnode *o = pes_report_tree(r);
    assert_string_equal(pes_r_get_s(o, "sampled"), "s.zst");
    assert_string_equal(pes_r_get_s(o, "full"), "f.zst");
    assert_int_equal(pes_r_get_u(o, "same_execution"), 1);
    assert_int_equal(pes_r_get_u(o, "accesses"), 5);
    assert_int_equal(pes_r_get_u(o, "decided"), 1);
    assert_near(pes_r_get_f(o, "s_intra"), 1, 1e-12);
    assert_near(pes_r_get_f(o, "inval_ratio_error"), 0, 0);
    assert_int_equal(pes_r_kind(pes_r_get(o, "comm_volume_error")), PES_R_F64);
    assert_true(isnan(pes_r_get_f(o, "comm_volume_error")));
    assert_int_equal(pes_r_kind(pes_r_get(o, "top_invalidations_caused")), PES_R_NULL);
    const struct pes_rnode *h = pes_r_get(o, "histograms");
    assert_near(bin_count(pes_r_get(h, "full_intra"), 2), 1, 0);
    assert_near(bin_count(pes_r_get(h, "sampled_intra"), 2), 1, 0);
    /* the exact stack distance of A's reuse: B and C in between */
    assert_near(bin_count(pes_r_get(h, "full_stack"), 2), 1, 0);
    pes_report_destroy(r);
}

static void test_json_writer(void **state)
{
    (void)state;
    struct pes_report *r = pes_report_create();
    struct pes_rnode *root = pes_report_root(r);
    pes_r_str(r, root, "s",
              "q\"b\\s/\nn\tt\x01"
              "c\x1f\r\xc3\xa9");
    pes_r_str(r, root, "k\"ey", "");
    pes_r_str(r, root, "null", NULL);
    pes_r_u64(r, root, "u", UINT64_MAX);
    pes_r_i64(r, root, "i", -42);
    pes_r_i64(r, root, "imin", INT64_MIN);
    pes_r_f64(r, root, "g", 0.1234567, "%.6g");
    pes_r_f64(r, root, "g2", 1234567.0, "%.6g");
    pes_r_f64(r, root, "g3", 1e-7, "%.6g");
    pes_r_f64(r, root, "f", 0.5, "%.6f");
    pes_r_f64(r, root, "f2", 2.0 / 3.0, "%.6f");
    pes_r_f64(r, root, "z", 2000.0 / 3.0, "%.0f");
    pes_r_f64(r, root, "z2", 1e15, "%.0f");
    pes_r_f64(r, root, "dflt", 0.25, NULL);
    pes_r_f64(r, root, "nan", NAN, "%.6f");
    pes_r_f64(r, root, "inf", -INFINITY, "%.0f");
    pes_r_bool(r, root, "yes", 7);
    pes_r_bool(r, root, "no", 0);
    pes_r_flag(pes_r_u64(r, root, "hidden", 1), PES_R_TEXT_ONLY);
    struct pes_rnode *arr = pes_r_array(r, root, "a");
    pes_r_flag(pes_r_str(r, arr, NULL, "hidden"), PES_R_TEXT_ONLY); /* first element left out */
    pes_r_u64(r, arr, NULL, 1);
    pes_r_flag(pes_r_u64(r, arr, NULL, 2), PES_R_TEXT_ONLY);
    pes_r_str(r, arr, NULL, "x");
    pes_r_object(r, arr, NULL);
    pes_r_array(r, arr, NULL);
    struct pes_rnode *o = pes_r_object(r, root, "o");
    struct pes_rnode *gone = pes_r_flag(pes_r_object(r, o, "gone"), PES_R_TEXT_ONLY);
    pes_r_u64(r, gone, "inside", 3);
    pes_r_i64(r, o, "zero", 0);
    pes_r_flag(pes_r_array(r, root, "last"), PES_R_TEXT_ONLY); /* last member left out */
    /* invalid UTF-8, each bad byte one U+FFFD: a stray byte, an overlong '/',
     * a surrogate, a cut sequence; a 4-byte emoji is kept */
    pes_r_str(r, root, "k\xff",
              "a\xff"
              "b\xc0\xaf"
              "c\xed\xa0\x80"
              "d\xf0\x9f\x98\x80"
              "e\xe2\x82");
    int rc;
    char *got = json_of(r, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got,
                        "{\"s\":\"q\\\"b\\\\s/\\nn\\tt\\u0001c\\u001F\\r\xc3\xa9\","
                        "\"k\\\"ey\":\"\",\"null\":\"\",\"u\":1.84467440737096e19,\"i\":-42,"
                        "\"imin\":-9223372036854775808,"
                        "\"g\":0.123457,\"g2\":1234570,\"g3\":1e-7,\"f\":0.5,\"f2\":0.666667,"
                        "\"z\":667,\"z2\":1000000000000000,\"dflt\":0.25,\"nan\":null,\"inf\":null,"
                        "\"yes\":true,\"no\":false,\"a\":[1,\"x\",{},[]],\"o\":{\"zero\":0},"
                        "\"k\xef\xbf\xbd\":\"a\xef\xbf\xbd"
                        "b\xef\xbf\xbd\xef\xbf\xbd"
                        "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                        "d\xf0\x9f\x98\x80"
                        "e\xef\xbf\xbd\xef\xbf\xbd\"}\n");
    free(got);
    /* the tree is still readable after writing; values convert */
    assert_int_equal(pes_r_get_u(root, "hidden"), 1);
    assert_true(isnan(pes_r_get_f(root, "missing")));
    pes_report_destroy(r);

    /* an empty report is an empty object; a report that lost a node is refused */
    r = pes_report_create();
    got = json_of(r, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "{}\n");
    free(got);
    assert_null(pes_r_u64(r, NULL, "orphan", 1));
    assert_true(pes_report_failed(r));
    got = json_of(r, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(got, "");
    free(got);
    pes_report_destroy(r);
}

/* ------------------------------------------------------------ timing */

/* Accesses of the timing cases: T1 polls X, T0 stores. */
enum { TX = 0x1000, TY = 0x2000, TZ = 0x3000 };
#define LD(t, a, site) {(a), 4, 4, (t), (site), PES_BATCH_READ}
#define ST(t, a, site) {(a), 4, 4, (t), (site), PES_BATCH_WRITE}

/* The timing analysis over a[0..n): its "timing_dependent" (NULL: none). */
static const struct pes_rnode *timing_of(struct pes_report **r, const struct acc *a, size_t n,
                                         size_t chunk)
{
    struct pes_stream_info si = {.path = "t", .n_streams = 2, .line = 64, .site = site_of};
    struct pes_knobs k = {.jobs = 1};
    assert_true(pes_analysis_timing.wanted(&si, &k));
    *r = run(&pes_analysis_timing, &si, &k, a, n, chunk, 0, NULL);
    return pes_r_get(section(*r, "trace"), "timing_dependent");
}

/* One wait named: its site, accesses, waits, longest wait; the share of n. */
static void assert_wait(const struct pes_rnode *td, uint32_t site, uint64_t accesses,
                        uint64_t waits, uint64_t longest, size_t n)
{
    assert_non_null(td);
    assert_int_equal(pes_r_get_u(td, "sites"), 1);
    assert_int_equal(pes_r_get_u(td, "accesses"), accesses);
    assert_near(pes_r_get_f(td, "share"), (double)accesses / (double)n, 1e-12);
    const struct pes_rnode *w = pes_r_at(pes_r_get(td, "spin_waits"), 0);
    assert_int_equal(pes_r_get_u(w, "site"), site);
    assert_string_equal(pes_r_get_s(w, "file"), sites[site].file);
    assert_int_equal(pes_r_get_u(w, "line"), sites[site].line);
    assert_int_equal(pes_r_get_u(w, "accesses"), accesses);
    assert_int_equal(pes_r_get_u(w, "waits"), waits);
    assert_int_equal(pes_r_get_u(w, "longest_wait"), longest);
}

/* Waits by hand: three loads of one address by one thread in a row, another
 * thread's store to those bytes after the first and at most 4096 of the
 * poller's accesses after the last. */
static void test_timing_by_hand(void **state)
{
    (void)state;
    struct pes_report *r;
    /* a wait: 2 polls, the store, 3 polls (site 3), then one more at site 3 later */
    static const struct acc wait[] = {LD(1, TX, 3), LD(1, TX, 3), ST(0, TX, 1),
                                      LD(1, TX, 3), LD(1, TX, 3), LD(1, TX, 3),
                                      ST(1, TY, 4), LD(1, TX, 3), ST(0, TZ, 5)};
    for (size_t chunk = 1; chunk <= 9; chunk += 8) {
        assert_wait(timing_of(&r, wait, 9, chunk), 3, 6, 1, 5, 9);
        pes_report_destroy(r);
    }
    /* the store before the first poll: the polls saw it already */
    static const struct acc before[] = {ST(0, TX, 1), LD(1, TX, 3), LD(1, TX, 3), LD(1, TX, 3),
                                        LD(1, TX, 3)};
    assert_null(timing_of(&r, before, 5, 5));
    pes_report_destroy(r);
    /* two polls around the store: no wait */
    static const struct acc two[] = {LD(1, TX, 3), ST(0, TX, 1), LD(1, TX, 3), ST(1, TY, 4)};
    assert_null(timing_of(&r, two, 4, 4));
    pes_report_destroy(r);
    /* a store to the next word of the line (false sharing) ends no wait */
    static const struct acc next[] = {LD(1, TX, 3), LD(1, TX, 3), ST(0, TX + 4, 1), LD(1, TX, 3),
                                      LD(1, TX, 3)};
    assert_null(timing_of(&r, next, 5, 5));
    pes_report_destroy(r);
    /* the poller's own store is no release; a store that overlaps by one byte is */
    static const struct acc own[] = {LD(1, TX, 3), LD(1, TX, 3), ST(1, TX, 4),
                                     LD(1, TX, 3), LD(1, TX, 3), LD(1, TX, 3)};
    assert_null(timing_of(&r, own, 6, 6));
    pes_report_destroy(r);
    static const struct acc overlap[] = {
        LD(1, TX, 3), LD(1, TX, 3), {TX - 3, 4, 4, 0, 1, PES_BATCH_WRITE}, LD(1, TX, 3)};
    assert_wait(timing_of(&r, overlap, 4, 4), 3, 3, 1, 3, 4);
    pes_report_destroy(r);
    /* polls with other loads between them are not consecutive */
    static const struct acc mixed[] = {LD(1, TX, 3), LD(1, TY, 4), LD(1, TX, 3), ST(0, TX, 1),
                                       LD(1, TY, 4), LD(1, TX, 3), LD(1, TY, 4), LD(1, TX, 3)};
    assert_null(timing_of(&r, mixed, 8, 8));
    pes_report_destroy(r);
    /* a rotated loop: the test before the loop (site 2) polls once, the loop's
     * (site 3) four times: only site 3 is named; the wait has 5 loads */
    static const struct acc rotated[] = {LD(1, TX, 2), LD(1, TX, 3), LD(1, TX, 3),
                                         ST(0, TX, 1), LD(1, TX, 3), LD(1, TX, 3)};
    assert_wait(timing_of(&r, rotated, 6, 6), 3, 4, 1, 5, 6);
    pes_report_destroy(r);
    /* the store placed after the last poll (the merge's interpolation): within
     * 4096 of the poller's accesses a wait, after 4097 none */
    enum { SLACK = 4096 };
    struct acc *late = calloc(3 + SLACK + 2, sizeof *late);
    assert_non_null(late);
    for (int i = 0; i < 3; i++)
        late[i] = (struct acc)LD(1, TX, 3);
    for (int i = 3; i < 3 + SLACK; i++)
        late[i] = (struct acc)ST(1, TY + 8 * (uint64_t)i, 4);
    late[3 + SLACK] = (struct acc)ST(0, TX, 1);
    assert_wait(timing_of(&r, late, 3 + SLACK + 1, 1000), 3, 3, 1, 3, 3 + SLACK + 1);
    pes_report_destroy(r);
    late[3 + SLACK] = (struct acc)ST(1, TZ, 4);
    late[3 + SLACK + 1] = (struct acc)ST(0, TX, 1);
    assert_null(timing_of(&r, late, 3 + SLACK + 2, 1000));
    pes_report_destroy(r);
    free(late);
}

/* Timing in parts (timing.c, "carry"): batches of a[from, to) of `chunk`
 * accesses to fn (the analysis's batch or carry), each thread listed as
 * ended in the batch of its last access in the whole of a, or in the first
 * batch after it (a later part, as the merge reports it). Returns 1 when
 * the carry said stop, else 0. */
static int timing_feed(const struct pes_analysis *an, void *self, int carry, const struct acc *a,
                       size_t n, size_t from, size_t to, size_t chunk, uint32_t n_streams)
{
    enum { MAX_CHUNK = 64, MAX_STREAMS = 8 };
    assert_true(chunk <= MAX_CHUNK && n_streams <= MAX_STREAMS);
    uint64_t addr[MAX_CHUNK];
    uint32_t size[MAX_CHUNK], stream[MAX_CHUNK], site[MAX_CHUNK], ended[MAX_STREAMS];
    uint8_t rw[MAX_CHUNK];
    size_t last[MAX_STREAMS] = {0};
    for (size_t i = 0; i < n; i++)
        last[a[i].stream] = i + 1;
    for (size_t at = from; at < to; at += chunk) {
        size_t k = to - at < chunk ? to - at : chunk;
        for (size_t j = 0; j < k; j++) {
            addr[j] = a[at + j].addr;
            size[j] = a[at + j].size;
            stream[j] = a[at + j].stream;
            site[j] = a[at + j].site;
            rw[j] = a[at + j].rw;
        }
        struct pes_batch b = {.n = k,
                              .addr = addr,
                              .size = size,
                              .length = size,
                              .stream = stream,
                              .site = site,
                              .rw = rw,
                              .ended = ended};
        for (uint32_t s = 0; s < n_streams; s++)
            if ((last[s] > at || at == from) && last[s] <= at + k)
                ended[b.n_ended++] = s;
        struct pes_error err = {0};
        int rc = carry ? an->carry(self, &b, &err) : an->batch(self, &b, &err);
        if (rc < 0) {
            print_error("batch at %zu: %s\n", at, err.message);
            fail();
        }
        if (rc == 1)
            return 1;
    }
    return 0;
}

/* The timing note as a line (or "none"), to compare reports. */
static void timing_line(struct pes_report *r, char *out, size_t cap)
{
    const struct pes_rnode *td = pes_r_get(section(r, "trace"), "timing_dependent");
    int w = snprintf(out, cap, "none");
    if (!td)
        return;
    w = snprintf(out, cap,
                 "sites %llu accesses %llu:", (unsigned long long)pes_r_get_u(td, "sites"),
                 (unsigned long long)pes_r_get_u(td, "accesses"));
    const struct pes_rnode *arr = pes_r_get(td, "spin_waits");
    for (size_t i = 0; i < pes_r_get_u(td, "sites"); i++) {
        const struct pes_rnode *e = pes_r_at(arr, i);
        w += snprintf(out + w, cap - (size_t)w,
                      " site %llu (%llu accesses, %llu waits, longest %llu)",
                      (unsigned long long)pes_r_get_u(e, "site"),
                      (unsigned long long)pes_r_get_u(e, "accesses"),
                      (unsigned long long)pes_r_get_u(e, "waits"),
                      (unsigned long long)pes_r_get_u(e, "longest_wait"));
        assert_true((size_t)w < cap);
    }
}

/* The timing report of a cut at cuts[0..n_cuts) into n_cuts + 1 parts, as
 * pes-replay --parts runs them: each part but the last carries on to the
 * end (or until it says stop); part 0 merges the others in order. With no
 * cuts, the whole stream. The line into out. */
static void timing_in_parts(const struct acc *a, size_t n, uint32_t n_streams, const size_t *cuts,
                            size_t n_cuts, size_t chunk, char *out, size_t cap)
{
    struct pes_stream_info si = {.path = "t", .n_streams = n_streams, .line = 64, .site = site_of};
    const struct pes_analysis *an = &pes_analysis_timing;
    struct pes_error err = {0};
    void *first = NULL;
    for (size_t c = 0; c <= n_cuts; c++) {
        size_t from = c ? cuts[c - 1] : 0, to = c < n_cuts ? cuts[c] : n;
        struct pes_profiles_split sp = {
            .rank = (uint32_t)c, .ranks = (uint32_t)n_cuts + 1, .window = 1, .parts = 1};
        struct pes_knobs k = {.jobs = 1, .split = n_cuts ? &sp : NULL};
        void *part = an->create(&si, &k, &err);
        assert_non_null(part);
        timing_feed(an, part, 0, a, n, from, to, chunk, n_streams);
        if (c < n_cuts) {
            struct pes_batch none = {0};
            int rc = an->carry(part, &none, &err);
            assert_true(rc >= 0);
            if (rc == 0 && !timing_feed(an, part, 1, a, n, to, n, chunk, n_streams))
                assert_int_equal(an->carry(part, NULL, &err), 1);
        }
        assert_int_equal(an->sync(part, &err), 0);
        if (!first) {
            first = part;
            continue;
        }
        size_t len = an->part_pack(part, NULL, 0);
        unsigned char *buf = malloc(len);
        assert_non_null(buf);
        assert_int_equal(an->part_pack(part, buf, len), len);
        /* a part cut short is refused, naming the analysis */
        assert_int_equal(an->part_merge(first, buf, len - 8, &err), -1);
        assert_non_null(strstr(err.message, "timing"));
        assert_int_equal(an->part_merge(first, buf, len, &err), 0);
        free(buf);
        an->destroy(part);
    }
    assert_int_equal(an->finish(first, &err), 0);
    struct pes_publish p;
    struct pes_report *r = new_report(&p);
    an->publish(first, &p);
    an->destroy(first);
    assert_false(pes_report_failed(r));
    timing_line(r, out, cap);
    pes_report_destroy(r);
}

/* parts == whole for the cuts given, in batches of 1 and 5 accesses */
static void assert_parts_whole(const struct acc *a, size_t n, uint32_t n_streams,
                               const size_t *cuts, size_t n_cuts)
{
    char whole[1024], parts[1024];
    for (size_t chunk = 1; chunk <= 5; chunk += 4) {
        timing_in_parts(a, n, n_streams, NULL, 0, chunk, whole, sizeof whole);
        timing_in_parts(a, n, n_streams, cuts, n_cuts, chunk, parts, sizeof parts);
        if (strcmp(whole, parts)) {
            print_error("cut at");
            for (size_t c = 0; c < n_cuts; c++)
                print_error(" %zu", cuts[c]);
            print_error(" of %zu: whole %s, parts %s\n", n, whole, parts);
            fail();
        }
    }
}

/* In parts, a wait cut by a part's start is found as a whole (the parts
 * before carry their runs on): parts == whole for every cut of hand-built
 * streams (two waits, one cut anywhere; a wait released 4096 accesses of
 * the poller after its last load; a poll run spanning three parts) and for
 * random cuts of random streams of three threads polling four words, with
 * threads that end early; and a part cut short is refused. */
static void test_timing_parts(void **state)
{
    (void)state;
    char line[1024];
    static const struct acc a[] = {LD(1, TX, 3), LD(1, TX, 3), ST(0, TX, 1), LD(1, TX, 3),
                                   ST(1, TY, 4), LD(0, TZ, 5), LD(0, TZ, 5), ST(1, TZ, 4),
                                   LD(0, TZ, 5), LD(0, TZ, 5)};
    enum { NA = sizeof a / sizeof a[0] };
    /* the truth by hand: site 3 polls 3 times around thread 0's store, site 5
     * 4 times around thread 1's */
    timing_in_parts(a, NA, 2, NULL, 0, 3, line, sizeof line);
    assert_string_equal(line, "sites 2 accesses 7: site 5 (4 accesses, 1 waits, longest 4) "
                              "site 3 (3 accesses, 1 waits, longest 3)");
    for (size_t c1 = 1; c1 < NA; c1++) {
        assert_parts_whole(a, NA, 2, (size_t[]){c1}, 1);
        for (size_t c2 = c1; c2 < NA; c2++)
            assert_parts_whole(a, NA, 2, (size_t[]){c1, c2}, 2);
    }
    /* cut between the polls and the store 4096 of the poller's accesses later */
    enum { SLACK = 4096 };
    struct acc *late = calloc(3 + SLACK + 1, sizeof *late);
    assert_non_null(late);
    for (int i = 0; i < 3; i++)
        late[i] = (struct acc)LD(1, TX, 3);
    for (int i = 3; i < 3 + SLACK; i++)
        late[i] = (struct acc)ST(1, TY + 8 * (uint64_t)i, 4);
    late[3 + SLACK] = (struct acc)ST(0, TX, 1);
    timing_in_parts(late, 3 + SLACK + 1, 2, (size_t[]){2}, 1, 50, line, sizeof line);
    assert_string_equal(line, "sites 1 accesses 3: site 3 (3 accesses, 1 waits, longest 3)");
    assert_parts_whole(late, 3 + SLACK + 1, 2, (size_t[]){3, 2000, 4099}, 3);
    free(late);
    /* one poll run over three parts: found once, 6 loads long */
    static const struct acc span[] = {LD(1, TX, 3), LD(1, TX, 3), ST(0, TX, 1), LD(1, TX, 3),
                                      LD(1, TX, 3), LD(1, TX, 3), LD(1, TX, 3), ST(1, TY, 4)};
    timing_in_parts(span, 8, 2, (size_t[]){2, 4}, 2, 1, line, sizeof line);
    assert_string_equal(line, "sites 1 accesses 6: site 3 (6 accesses, 1 waits, longest 6)");
    /* random streams and cuts */
    enum { N = 400 };
    static const uint64_t words[] = {TX, TX + 4, TY, TZ};
    struct acc r[N];
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 60; round++) {
        size_t end[3] = {N, N, N};
        for (int t = 0; t < 3; t++) { /* some threads end early */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (x % 3 == 0)
                end[t] = (size_t)(x >> 20) % N;
        }
        for (size_t i = 0; i < N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t t = (uint32_t)(x % 3);
            if (i >= end[0] && i >= end[1] && i >= end[2])
                t = 0; /* the last one left runs on */
            else
                while (i >= end[t])
                    t = (t + 1) % 3;
            /* runs of polls: the same word as the thread's last access, mostly */
            uint64_t w = words[(x >> 8) % 4];
            int store = (x >> 16) % 5 == 0;
            r[i] =
                store ? (struct acc)ST(t, w, 1 + t % 2) : (struct acc)LD(t, w, 3 + (x >> 24) % 3);
            if (!store && i > 0 && (x >> 28) % 4 != 0)
                for (size_t j = i; j-- > 0;)
                    if (r[j].stream == t) {
                        r[i].addr = r[j].addr;
                        break;
                    }
        }
        size_t cuts[4], n_cuts = 1 + (size_t)(x >> 40) % 4;
        for (size_t c = 0; c < n_cuts; c++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            cuts[c] = (size_t)(x % N);
        }
        for (size_t c = 1; c < n_cuts; c++) /* in order */
            for (size_t d = c; d > 0 && cuts[d] < cuts[d - 1]; d--) {
                size_t tmp = cuts[d];
                cuts[d] = cuts[d - 1];
                cuts[d - 1] = tmp;
            }
        assert_parts_whole(r, N, 3, cuts, n_cuts);
    }
}

/* ------------------------------------------------------------ stride */

/* The stride analysis over parts of a (cut at `cuts`, each part in its own
 * state, the later ones packed and merged in order): its site_strides rows. */
static struct pes_report *stride_parts(const struct acc *a, size_t n, const size_t *cuts,
                                       size_t n_cuts)
{
    struct pes_stream_info si = {.path = "t", .n_streams = 2, .line = 64, .site = site_of};
    struct pes_knobs k = {.jobs = 1};
    struct pes_error err = {0};
    const struct pes_analysis *an = &pes_analysis_stride;
    assert_true(an->wanted(&si, &k));
    void *first = NULL;
    for (size_t c = 0; c <= n_cuts; c++) {
        size_t from = c ? cuts[c - 1] : 0, to = c < n_cuts ? cuts[c] : n;
        void *part = an->create(&si, &k, &err);
        assert_non_null(part);
        feed(an->batch, part, a + from, to - from, 7, 2, 0, NULL);
        if (!first) {
            first = part;
            continue;
        }
        size_t len = an->part_pack(part, NULL, 0);
        unsigned char *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        assert_int_equal(an->part_pack(part, buf, len), len);
        if (len) { /* a cut record is refused, naming the analysis */
            assert_int_equal(an->part_merge(first, buf, len - 1, &err), -1);
            assert_non_null(strstr(err.message, "stride"));
        }
        assert_int_equal(an->part_merge(first, buf, len, &err), 0);
        free(buf);
        an->destroy(part);
    }
    struct pes_publish p;
    struct pes_report *r = new_report(&p);
    an->publish(first, &p);
    an->destroy(first);
    assert_false(pes_report_failed(r));
    return r;
}

static void test_stride_by_hand_and_parts(void **state)
{
    (void)state;
    /* thread 0, c.c:43 (site 3): a column walk, 100 accesses 4096 bytes
     * apart: 99 pairs, each on another line, smallest step 4096. Thread 1,
     * d.c:54 (sites 4): 100 doubles in a row from a line's start: 99 pairs,
     * 12 on another line (at elements 8, 16, ..., 96), step 8. Interleaved. */
    static struct acc a[200];
    for (size_t i = 0; i < 100; i++) {
        a[2 * i] = (struct acc){0x100000 + 4096 * i, 8, 8, 0, 3, PES_BATCH_READ};
        a[2 * i + 1] = (struct acc){0x900000 + 8 * i, 8, 8, 1, 4, PES_BATCH_READ};
    }
    static const uint64_t want[2][5] = {{3, 100, 99, 99, 4096}, {4, 100, 99, 12, 8}};
    static const char *const cols[5] = {"site", "accesses", "pairs", "cross", "min_stride"};
    /* whole, then cut at every place into two parts, then into three */
    size_t cuts[2];
    for (size_t trial = 0; trial < 1 + 201 + 20; trial++) {
        size_t n_cuts = trial == 0 ? 0 : trial <= 201 ? 1 : 2;
        if (n_cuts == 1)
            cuts[0] = trial - 1;
        if (n_cuts == 2)
            cuts[0] = (trial - 202) * 9, cuts[1] = cuts[0] + 3 + (trial - 202) % 5;
        struct pes_report *r = stride_parts(a, 200, cuts, n_cuts);
        const struct pes_rnode *rows = pes_r_get(section(r, "config"), "site_strides");
        assert_int_equal(pes_r_flags(rows) & PES_R_TEXT_ONLY, PES_R_TEXT_ONLY);
        assert_int_equal(pes_r_count(rows), 2); /* most line changes first */
        for (size_t i = 0; i < 2; i++) {
            for (size_t c = 0; c < 5; c++)
                assert_int_equal(pes_r_get_u(pes_r_at(rows, i), cols[c]), want[i][c]);
            assert_int_equal(pes_r_get_u(pes_r_at(rows, i), "bytes"), 800);
        }
        assert_string_equal(pes_r_get_s(pes_r_at(rows, 0), "file"), "c.c");
        assert_int_equal(pes_r_get_u(pes_r_at(rows, 0), "line"), 43);
        pes_report_destroy(r);
    }
}

/* The runtime model's block facts (pes_bb, PES_BB_MODEL_FACTS): totals are
 * executions x facts, regions and barriers counted on stream 0 only (each
 * entered or called by the whole team once per episode), and the
 * overlap model's chain and parallel terms follow from them by hand. */
static void test_model_facts_totals(void **state)
{
    (void)state;
    const struct pes_cache_config lv[1] = {
        {.size = 64 * 64, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1}};
    struct pes_machine m = machine(1, lv);
    m.op_latency[PES_OP_FP_ADD] = 4;
    m.fork_join = (struct pes_thread_curve){.n = 2, .threads = {1, 2}, .value = {1000, 3000}};
    m.barrier = (struct pes_thread_curve){.n = 1, .threads = {2}, .value = {500}};
    struct pes_stream_info si = {
        .path = "t", .n_streams = 2, .machine = &m, .line = 64, .site = site_of};
    /* 4 accesses, 2 per stream, to one line each: the memory side is tiny */
    static const struct acc a[] = {{0, 8, 8, 0, 0, PES_BATCH_READ},
                                   {64, 8, 8, 1, 0, PES_BATCH_READ},
                                   {0, 8, 8, 0, 0, PES_BATCH_READ},
                                   {64, 8, 8, 1, 0, PES_BATCH_READ}};
    /* the region body's entry block (forks 1: a region entered) runs on
     * both threads, once each (one region); the loop latch (one fp_add on the
     * chain, 2 vector fp_add instructions of 8 lanes) and a barrier block
     * too: latch 3 times on stream 0, 2 times on stream 1; the barrier once
     * on each (one episode) */
    static const struct pes_bb entry = {.id = 1,
                                        .flags = PES_BB_MODEL_FACTS | PES_BB_PARALLEL,
                                        .forks = 1,
                                        .ops = {[PES_OP_CALL] = 1},
                                        .instrs = {[PES_OP_CALL] = 1}};
    static const struct pes_bb latch = {.id = 2,
                                        .flags = PES_BB_MODEL_FACTS | PES_BB_PARALLEL,
                                        .ops = {[PES_OP_FP_ADD] = 16},
                                        .instrs = {[PES_OP_FP_ADD] = 2},
                                        .chain = {[PES_OP_FP_ADD] = 1}};
    static const struct pes_bb bar = {.id = 3,
                                      .flags = PES_BB_MODEL_FACTS | PES_BB_PARALLEL,
                                      .barriers = 1,
                                      .ops = {[PES_OP_CALL] = 1},
                                      .instrs = {[PES_OP_CALL] = 1}};
    const struct pes_bb *bbv[] = {&entry, &entry, &latch, &latch, &latch,
                                  &latch, &latch, &bar,   &bar};
    const uint32_t bb_stream[] = {0, 1, 0, 1, 0, 1, 0, 0, 1};
    struct bbs bbs = {9, bbv, bb_stream};
    struct pes_knobs k = {.jobs = 1, .top = 10, .sort = "invalidations"};
    struct pes_report *r = run(&pes_analysis_summary, &si, &k, a, 4, 4, 1, &bbs);
    const struct pes_rnode *f = pes_r_get(section(r, "trace"), "model_facts");
    assert_non_null(f);
    /* instrs: fp_add 5 latches x 2 = 10 (ops 80), call 2 + 2 = 4; chain 5 */
    assert_near(pes_r_get_f(pes_r_get(f, "instrs"), "fp_add"), 10, 0);
    assert_near(pes_r_get_f(pes_r_get(f, "instrs"), "call"), 4, 0);
    assert_near(pes_r_get_f(pes_r_get(section(r, "trace"), "ops"), "fp_add"), 80, 0);
    assert_near(pes_r_get_f(pes_r_get(f, "chain"), "fp_add"), 5, 0);
    assert_near(pes_r_get_f(f, "forks"), 1, 0);    /* two entries, one region */
    assert_near(pes_r_get_f(f, "barriers"), 1, 0); /* two calls, one episode */
    pes_report_destroy(r);

    /* the overlap model, 2 cores: chain 5 x 4 / 2 = 10 cycles; parallel
     * 1 x fork_join(2) + 1 x barrier(2) = 3000 + 500 = 3500; compute: 14
     * instructions / 2 cores / 4 per cycle against the fp_add port 10 / 2 = 5 */
    k.runtime_model = PES_RUNTIME_OVERLAP;
    r = run(&pes_analysis_reuse, &si, &k, a, 4, 4, 1, &bbs);
    const struct pes_rnode *rt = pes_r_get(pes_r_get(section(r, "config"), "model"), "runtime");
    const struct pes_rnode *t = pes_r_get(rt, "terms");
    assert_near(pes_r_get_f(pes_r_get(t, "chain"), "cycles"), 10, 1e-12);
    assert_near(pes_r_get_f(pes_r_get(t, "parallel"), "cycles"), 3500, 1e-9);
    assert_near(pes_r_get_f(pes_r_get(t, "compute"), "cycles"), 5, 1e-12);
    assert_string_equal(pes_r_get_s(rt, "bound"), "parallel");
    double total = pes_r_get_f(rt, "total_cycles");
    assert_near(total - 3500, fmax(pes_r_get_f(rt, "mem_cycles"), 10), 1e-9);
    pes_report_destroy(r);

    /* one block without the facts: unknown, not none — no model_facts and
     * every new term off */
    static const struct pes_bb old = {.id = 4, .ops = {[PES_OP_INT_ADD] = 1}};
    bbv[7] = &old;
    r = run(&pes_analysis_summary, &si, &k, a, 4, 4, 1, &bbs);
    assert_null(pes_r_get(section(r, "trace"), "model_facts"));
    pes_report_destroy(r);
    r = run(&pes_analysis_reuse, &si, &k, a, 4, 4, 1, &bbs);
    rt = pes_r_get(pes_r_get(section(r, "config"), "model"), "runtime");
    t = pes_r_get(rt, "terms");
    assert_near(pes_r_get_f(pes_r_get(t, "parallel"), "cycles"), 0, 0);
    assert_near(pes_r_get_f(pes_r_get(t, "chain"), "cycles"), 0, 0);
    /* compute from lanes: 80 fp_add / 2 = 40 on its port */
    assert_near(pes_r_get_f(pes_r_get(t, "compute"), "cycles"), 40, 1e-12);
    pes_report_destroy(r);
}

/* The TLB term's input: each stream's reuse distance in pages; misses of a
 * fully associative LRU TLB are the cold page accesses and those at page
 * distance >= entries. Pages 0 1 2 0 1 2 0 (lines inside them differ): 3 cold,
 * then 4 at distance 2. */
static void test_tlb_misses(void **state)
{
    (void)state;
    const struct pes_cache_config lv[1] = {
        {.size = 64 * 64, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1}};
    struct pes_machine m = machine(1, lv);
    struct pes_stream_info si = {
        .path = "t", .n_streams = 1, .machine = &m, .line = 64, .site = site_of};
    static const struct acc a[] = {
        {0, 8, 8, 0, 0, PES_BATCH_READ},    {4096, 8, 8, 0, 0, PES_BATCH_READ},
        {8192, 8, 8, 0, 0, PES_BATCH_READ}, {64, 8, 8, 0, 0, PES_BATCH_READ},
        {4160, 8, 8, 0, 0, PES_BATCH_READ}, {8256, 8, 8, 0, 0, PES_BATCH_READ},
        {128, 8, 8, 0, 0, PES_BATCH_READ}};
    static const double misses[] = {0, 7, 7, 3}; /* by entries 1..3 */
    for (uint32_t entries = 0; entries <= 3; entries++) {
        m.tlb_entries = entries;         /* 0: no TLB, no term, no keys */
        m.tlb_page = entries ? 4096 : 0; /* a machine without a TLB has none of its keys */
        m.tlb_miss_latency = entries ? 30 : 0;
        for (uint32_t jobs = 1; jobs <= 2; jobs++) {
            struct pes_knobs k = {.jobs = jobs,
                                  .top = 10,
                                  .sort = "invalidations",
                                  .runtime_model = PES_RUNTIME_OVERLAP};
            struct pes_report *r = run(&pes_analysis_reuse, &si, &k, a, 7, 3, 1, NULL);
            const struct pes_rnode *rt =
                pes_r_get(pes_r_get(section(r, "config"), "model"), "runtime");
            double tlb = pes_r_get_f(pes_r_get(pes_r_get(rt, "terms"), "tlb"), "cycles");
            if (!entries) {
                assert_null(pes_r_get(rt, "tlb_misses"));
                assert_near(tlb, 0, 0);
            } else {
                assert_int_equal(pes_r_get_u(rt, "tlb_lookups"), 7);
                assert_near(pes_r_get_f(rt, "tlb_misses"), misses[entries], 0);
                assert_near(tlb, misses[entries] * 30 / 10, 1e-12); /* latency / mlp 10 */
            }
            pes_report_destroy(r);
        }
    }
}

/* The prefetch term's input: of the line changes of each (stream, site), the
 * share that continue a constant stride within prefetch.max_stride (2048).
 * Site 0 steps by 8 over 4 lines: 4 changes (the first from nowhere), 3
 * prefetchable; site 1 steps by 8192 (beyond reach): 4 changes, none; site
 * 2 jumps about: 4 changes, none. Share 3 / 12; the fills' exposed latency
 * falls by that share. */
static void test_prefetch_share(void **state)
{
    (void)state;
    const struct pes_cache_config lv[1] = {
        {.size = 2 * 64, .ways = 0, .line = 64, .latency = 4, .recip_throughput = 1}};
    struct pes_machine m = machine(1, lv);
    struct pes_stream_info si = {
        .path = "t", .n_streams = 1, .machine = &m, .line = 64, .site = site_of};
    static struct acc a[44];
    size_t n = 0;
    for (int i = 0; i < 32; i++)
        a[n++] = (struct acc){(uint64_t)8 * i, 8, 8, 0, 0, PES_BATCH_READ};
    for (int i = 0; i < 4; i++)
        a[n++] = (struct acc){100000 + (uint64_t)8192 * i, 8, 8, 0, 1, PES_BATCH_READ};
    static const uint64_t jumps[] = {5000, 900, 70000, 3000};
    for (int i = 0; i < 4; i++)
        a[n++] = (struct acc){jumps[i], 8, 8, 0, 2, PES_BATCH_READ};
    static const struct pes_bb bb = {.id = 1, .ops = {[PES_OP_LOAD] = 40}};
    const struct pes_bb *bbv[] = {&bb};
    const uint32_t bb_stream[] = {0};
    struct bbs bbs = {1, bbv, bb_stream}; /* the loads the model's fills come from */
    struct pes_knobs k = {
        .jobs = 1, .top = 10, .sort = "invalidations", .runtime_model = PES_RUNTIME_OVERLAP};
    struct pes_report *r = run(&pes_analysis_reuse, &si, &k, a, n, 7, 1, &bbs);
    const struct pes_rnode *rt = pes_r_get(pes_r_get(section(r, "config"), "model"), "runtime");
    assert_null(pes_r_get(rt, "prefetched")); /* no prefetch.max_stride: off */
    double exposed = pes_r_get_f(pes_r_get(pes_r_get(rt, "terms"), "exposed"), "cycles");
    assert_true(exposed > 0);
    pes_report_destroy(r);
    m.prefetch_max_stride = 2048;
    r = run(&pes_analysis_reuse, &si, &k, a, n, 7, 1, &bbs);
    rt = pes_r_get(pes_r_get(section(r, "config"), "model"), "runtime");
    assert_near(pes_r_get_f(rt, "prefetched"), 0.25, 1e-15);
    assert_near(pes_r_get_f(pes_r_get(pes_r_get(rt, "terms"), "exposed"), "cycles"), 0.75 * exposed,
                1e-9 * exposed);
    pes_report_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_facts_totals),
        cmocka_unit_test(test_tlb_misses),
        cmocka_unit_test(test_prefetch_share),
        cmocka_unit_test(test_summary_counts),
        cmocka_unit_test(test_reuse_against_lru_oracle),
        cmocka_unit_test(test_reuse_site_rows_by_hand),
        cmocka_unit_test(test_reuse_long_distances),
        cmocka_unit_test(test_reuse_model_by_hand),
        cmocka_unit_test(test_approx_rate_one),
        cmocka_unit_test(test_sim_false_sharing),
        cmocka_unit_test(test_sim_ranking),
        cmocka_unit_test(test_sim_too_many_streams),
        cmocka_unit_test(test_pipeline_registry),
        cmocka_unit_test(test_pipeline_error_stops),
        cmocka_unit_test(test_sampled_by_hand),
        cmocka_unit_test(test_pipeline_siblings),
        cmocka_unit_test(test_sampled_by_object),
        cmocka_unit_test(test_accuracy_by_hand),
        cmocka_unit_test(test_accuracy_by_object),
        cmocka_unit_test(test_json_writer),
        cmocka_unit_test(test_timing_by_hand),
        cmocka_unit_test(test_timing_parts),
        cmocka_unit_test(test_stride_by_hand_and_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
