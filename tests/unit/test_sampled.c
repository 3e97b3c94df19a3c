/*
 * test_sampled — sampled-trace analyses (analyses/sampled_*.c, and the
 * report they publish) on hand-built event streams with
 * hand-computed results, and the --compare pipeline (ground_truth.c,
 * accuracy_metrics.c, analyses/accuracy.c) on a full trace plus a sampled trace
 * drawn from it by an ideal sampler written here: every use is sampled with
 * probability 1/P, and its outcome (ReuseTracker's intra-thread definition,
 * Dissertation Table 6.2) is found by scanning the stream forward.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "replay_run.h"
#include "sampled_run.h"
#include "writers.h"

static char sampled_path[256], full_path[256];

static void paths(void)
{
    snprintf(sampled_path, sizeof sampled_path, "/tmp/pes-test-sampled-%d.s.zst", (int)getpid());
    snprintf(full_path, sizeof full_path, "/tmp/pes-test-sampled-%d.f.zst", (int)getpid());
}

static const struct pes_site sites[3] = {
    {.id = 0,
     .bb = 3,
     .kind = PES_KIND_LOAD,
     .size = 8,
     .file = "t.c",
     .line = 10,
     .function = "f"},
    {.id = 1,
     .bb = 3,
     .kind = PES_KIND_STORE,
     .size = 8,
     .file = "t.c",
     .line = 11,
     .function = "f"},
    {.id = 2,
     .bb = 3,
     .kind = PES_KIND_STORE,
     .size = 8,
     .file = "t.c",
     .line = 12,
     .function = "f"},
};

static struct pes_trace_writer *open_trace(const char *path, uint32_t kind, const char *config,
                                           uint64_t pid, uint32_t n_threads)
{
    struct pes_error err = {0};
    struct pes_trace_info info = {.kind = kind,
                                  .command = "test",
                                  .hostname = "h",
                                  .cpu_model = "c",
                                  .config = config,
                                  .ticks_per_second = 1000000000,
                                  .pid = pid,
                                  .start_ticks = 777};
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, &err);
    assert_non_null(w);
    struct pes_bb bb = {.id = 3, .n_sites = 3, .function = "f", .label = "entry"};
    struct pes_module m = {
        .id_base = 0, .n_sites = 3, .n_bbs = 1, .name = "t.c", .sites = sites, .bbs = &bb};
    assert_int_equal(pes_trace_writer_module(w, &m, &err), 0);
    for (uint32_t t = 0; t < n_threads; t++) {
        struct pes_thread th = {
            .index = t, .parent = UINT32_MAX, .tid = 100 + t, .cpu = -1, .socket = -1};
        assert_int_equal(pes_trace_writer_thread(w, &th, &err), 0);
    }
    return w;
}

static const struct pes_site *in_site(const void *in, uint32_t id)
{
    return replay_input_site(in, id);
}

static int run_input(void *in, const struct pes_batch_sink *sink, struct pes_error *err)
{
    return replay_input_run(in, sink, err);
}

/* The sampled analyses of a file, read by the source pes-replay uses. */
static int load_sampled(const char *path, struct replay_sampled *s, struct pes_error *err)
{
    memset(s, 0, sizeof *s);
    struct replay_input *in = replay_input_open_sampled(path, err);
    if (!in)
        return -1;
    struct pes_stream_info si = {.path = path,
                                 .kind = PES_TRACE_SAMPLED,
                                 .header = replay_input_info(in),
                                 .settings = replay_input_settings(in),
                                 .n_streams = replay_input_threads(in),
                                 .site = in_site,
                                 .site_ctx = in};
    struct pes_weights *w = pes_weights_build(path, si.settings, si.n_streams, err);
    struct pes_knobs k = {0};
    si.weights = w;
    int rc = w ? sampled_run_stream(&si, &k, run_input, in, s, NULL, err) : -1;
    pes_weights_free(w);
    replay_input_close(in);
    return rc;
}

static int on_accesses(void *t, const struct pes_batch *b, struct pes_error *err)
{
    return replay_truth_batch(t, b, err);
}

/* The ground truth of a full trace file: one shared cache, 64-byte lines. */
static int load_truth(const char *path, const struct pes_machine *m, struct replay_truth *t,
                      struct pes_error *err)
{
    struct replay_input *in = replay_input_open(path, err);
    if (!in)
        return -1;
    uint32_t n = replay_input_threads(in);
    uint32_t *cache = calloc(n, sizeof *cache);
    assert_non_null(cache);
    struct pes_stream_info si = {
        .path = path,
        .kind = PES_TRACE_FULL,
        .header = replay_input_info(in),
        .n_streams = n,
        .n_caches = 1,
        .stream_cache = cache,
        .machine = m,
        .line = 64,
        .site = in_site,
        .site_ctx = in,
    };
    int rc = replay_truth_begin(&si, 0, t, err);
    if (rc == 0) {
        struct pes_batch_sink sink = {.batch = on_accesses, .ctx = t};
        rc = replay_input_run(in, &sink, err);
        if (rc == 0)
            rc = replay_truth_end(t, &si, err);
    }
    replay_input_close(in);
    free(cache);
    return rc;
}

static void load_machine(struct pes_machine *m)
{
    struct pes_error err = {0};
    assert_int_equal(pes_machine_load("haswell", m, &err), 0);
}

/* pes-replay's report of a sampled trace (or of --compare when full is
 * given); its text and JSON writers must not fail on it. */
static struct pes_report *report_of(const char *sampled, const char *full)
{
    static struct pes_machine m;
    load_machine(&m);
    struct replay_options o = {
        .trace = sampled, .full = full, .compare = full != NULL, .knobs.top = 10};
    struct pes_error err = {0};
    struct pes_report *r = replay_sampled_report(&o, &m, &err);
    if (!r)
        print_message("%s\n", err.message);
    assert_non_null(r);
    FILE *null = fopen("/dev/null", "w");
    assert_non_null(null);
    assert_int_equal(pes_report_write_sampled_text(null, r), 0);
    assert_int_equal(pes_report_write_json(null, r), 0);
    fclose(null);
    return r;
}

/* The label of site id in a sampled report's site list (NULL: not listed). */
static const char *site_label(const struct pes_report *r, int64_t id)
{
    const struct pes_rnode *sites = pes_r_get(pes_report_tree(r), "sites");
    for (size_t i = 0; i < pes_r_count(sites); i++) {
        const struct pes_rnode *row = pes_r_at(sites, i), *site = pes_r_get(row, "site");
        if (id < 0 ? pes_r_kind(site) == PES_R_NULL
                   : pes_r_kind(site) == PES_R_U64 && pes_r_u(site) == (uint64_t)id)
            return pes_r_get_s(row, "label");
    }
    return NULL;
}

static struct pes_event ev(uint8_t kind, uint8_t flags, uint32_t thread, uint32_t other,
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

/* ------------------------------------------------------------ hand-built */

static const char *config =
    "mode=reuse\nbackend=soft\nperiod_load=100\nperiod_store=300\ngranularity=temporal\nsockets=0\n"
    "debug_registers=4\nwatch_bytes=8\nline_size=64\n";

static void test_hand_built(void **state)
{
    (void)state;
    paths();
    struct pes_trace_writer *w = open_trace(sampled_path, PES_TRACE_SAMPLED, config, 1, 2);
    struct pes_error err = {0};
    struct pes_event e0[] = {
        ev(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        ev(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 0, 0, 0),
        ev(PES_EV_SAMPLE, PES_EVF_WRITE, 0, UINT32_MAX, 1, 0, 0),
        /* collector distances: position differences, 1 + accesses between */
        ev(PES_EV_REUSE, 0, 0, 0, 0, 4, 0),
        ev(PES_EV_REUSE, 0, 0, 0, 0, 21, 0),
        ev(PES_EV_INVALIDATION, PES_EVF_WRITE, 0, 1, 1, 0, 0),
        ev(PES_EV_TOTALS, 0, 0, UINT32_MAX, UINT32_MAX, 0, 3),
    };
    e0[6].loads = 600;
    e0[6].stores = 400;
    /* thread 1 reports a reuse of thread 0's use (the trapping thread writes
     * the event, owner = thread 0), and communication */
    struct pes_event e1[] = {
        ev(PES_EV_REUSE, 0, 0, 0, 0, 21, 0),
        /* detected at a sample, a store: period_store = 300 */
        ev(PES_EV_COMM, PES_EVF_TRUE_SHARING | PES_EVF_WRITE, 1, 0, 2, 0, 0),
        /* a trap on a load: period_load x 64 / (4 x 8) = 200 */
        ev(PES_EV_COMM, PES_EVF_FALSE_SHARING, 1, 0, 2, 0, 1),
        ev(PES_EV_LOST, 0, 1, UINT32_MAX, UINT32_MAX, 0, 5),
    };
    assert_int_equal(pes_trace_writer_events(w, 0, e0, 7, &err), 0);
    assert_int_equal(pes_trace_writer_events(w, 1, e1, 4, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);

    assert_int_equal(replay_input_pes_kind(sampled_path), PES_TRACE_SAMPLED);
    struct replay_sampled s;
    assert_int_equal(load_sampled(sampled_path, &s, &err), 0);
    assert_string_equal(s.mode, "reuse");
    assert_int_equal(s.period_load, 100);
    assert_int_equal(s.period_store, 300);
    assert_true(fabs(s.trap_scale - 2.0) < 1e-12);
    assert_int_equal(s.n_threads, 2);
    assert_int_equal(s.samples, 3);
    assert_int_equal(s.reuses[0], 3);
    assert_int_equal(s.reuses[1], 0);
    assert_int_equal(s.invalidations[0], 1);
    assert_int_equal(s.lost, 5);
    assert_true(s.temporal[0][pes_rt_bin(3)] == 1);
    assert_true(s.temporal[0][pes_rt_bin(20)] == 2);
    assert_int_equal(s.thread[0].loads, 600);
    assert_int_equal(s.thread[0].stores, 400);
    assert_int_equal(s.thread[0].reuses, 3);
    /* Kac: mean of (3+1, 20+1, 20+1) */
    assert_true(fabs(s.thread[0].n_distinct - 46.0 / 3.0) < 1e-9);
    double stack = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++)
        stack += s.stack[i];
    assert_true(fabs(stack - 3) < 1e-9);
    assert_true(s.reuse_weight[0] == 3 && s.inval_weight[0] == 1);
    /* symmetric matrices, every transfer in both cells */
    assert_true(s.comm_true[0 * 2 + 1] == 300 && s.comm_true[1 * 2 + 0] == 300);
    assert_true(s.comm_false[0 * 2 + 1] == 200 && s.comm_false[1 * 2 + 0] == 200);
    assert_true(s.comm_true[0] == 0 && s.comm_true[3] == 0);
    assert_int_equal(s.comm_events, 2);
    /* sites: 0 (2 samples, 3 reuses), 1 (1 sample, 1 invalidation), 2 (comm) */
    assert_int_equal(s.n_sites, 3);
    for (size_t i = 0; i < s.n_sites; i++) {
        const struct replay_sampled_site *p = &s.sites[i];
        if (p->site == 0) {
            assert_int_equal(p->samples, 2);
            assert_int_equal(p->reuses, 3);
        } else if (p->site == 1) {
            assert_int_equal(p->samples, 1);
            assert_int_equal(p->invalidations, 1);
        } else {
            assert_int_equal(p->site, 2);
            assert_int_equal(p->comm_true, 1);
            assert_int_equal(p->comm_false, 1);
        }
    }
    replay_sampled_free(&s);
    /* the report lists the sites with their source labels */
    struct pes_report *r = report_of(sampled_path, NULL);
    assert_non_null(site_label(r, 0));
    assert_non_null(strstr(site_label(r, 0), "t.c:10"));
    assert_int_equal(pes_r_get_u(pes_r_get(pes_report_tree(r), "intra"), "reuses"), 3);
    pes_report_destroy(r);
    unlink(sampled_path);
}

static void test_bad_events(void **state)
{
    (void)state;
    paths();
    struct pes_error err = {0};
    struct pes_trace_writer *w = open_trace(sampled_path, PES_TRACE_SAMPLED, config, 1, 1);
    struct pes_event e[] = {ev(PES_EV_REUSE, 0, 5, 0, 0, 3, 0)}; /* thread 5 of 1 */
    assert_int_equal(pes_trace_writer_events(w, 0, e, 1, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    struct replay_sampled s;
    assert_int_equal(load_sampled(sampled_path, &s, &err), -1);
    assert_int_equal(err.code, PES_ERR_FORMAT);
    assert_non_null(strstr(err.message, "thread 5"));
    assert_non_null(strstr(err.message, sampled_path));
    unlink(sampled_path);
    /* a full trace is not a sampled trace */
    w = open_trace(full_path, PES_TRACE_FULL, "", 1, 1);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    assert_int_equal(replay_input_pes_kind(full_path), PES_TRACE_FULL);
    assert_int_equal(load_sampled(full_path, &s, &err), -1);
    assert_non_null(strstr(err.message, "full trace"));
    unlink(full_path);
    assert_int_equal(replay_input_pes_kind("/nonexistent/x"), 0);
}

/* Events without a site (PEBS/IBS samples in uninstrumented code) are
 * pooled in one "(other sites)" row, and do not cost a site table as large
 * as the biggest dense id (2^22 rows, ~750 MB, before). */
static void test_events_without_site(void **state)
{
    (void)state;
    paths();
    struct pes_error err = {0};
    struct pes_trace_writer *w = open_trace(sampled_path, PES_TRACE_SAMPLED, config, 1, 1);
    struct pes_event e[] = {ev(PES_EV_SAMPLE, 0, 0, UINT32_MAX, UINT32_MAX, 0, 0),
                            ev(PES_EV_REUSE, 0, 0, 0, UINT32_MAX, 9, 0),
                            ev(PES_EV_SAMPLE, 0, 0, UINT32_MAX, 1, 0, 0)};
    assert_int_equal(pes_trace_writer_events(w, 0, e, 3, &err), 0);
    struct pes_thread_totals tot = {.thread = 0, .records = 3};
    assert_int_equal(pes_trace_writer_close(w, &tot, 1, 0, &err), 0);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    struct replay_sampled s;
    assert_int_equal(load_sampled(sampled_path, &s, &err), 0);
    getrusage(RUSAGE_SELF, &after);
    assert_true(after.ru_maxrss - before.ru_maxrss < 64 * 1024); /* KiB */
    assert_int_equal(s.n_sites, 2);
    assert_int_equal(s.sites[0].site, 1);
    assert_int_equal(s.sites[0].samples, 1);
    assert_int_equal(s.sites[1].site, UINT32_MAX);
    assert_int_equal(s.sites[1].samples, 1);
    assert_int_equal(s.sites[1].reuses, 1);
    replay_sampled_free(&s);
    struct pes_report *r = report_of(sampled_path, NULL);
    assert_non_null(site_label(r, -1));
    assert_string_equal(site_label(r, -1), "(other sites)");
    pes_report_destroy(r);
    unlink(sampled_path);
}

/* aux = reservoir offers a decided watch stood for: its outcome's weight */
static void test_reservoir_weights(void **state)
{
    (void)state;
    paths();
    struct pes_error err = {0};
    struct pes_trace_writer *w = open_trace(sampled_path, PES_TRACE_SAMPLED, config, 1, 1);
    struct pes_event e[] = {
        ev(PES_EV_REUSE, 0, 0, 0, 0, 5, 3),
        ev(PES_EV_REUSE, 0, 0, 0, 0, 50, 0),
        ev(PES_EV_INVALIDATION, 0, 0, 0, 1, 0, 2),
    };
    assert_int_equal(pes_trace_writer_events(w, 0, e, 3, &err), 0);

    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    struct replay_sampled s;
    assert_int_equal(load_sampled(sampled_path, &s, &err), 0);
    assert_true(s.temporal[0][pes_rt_bin(4)] == 3);
    assert_true(s.temporal[0][pes_rt_bin(49)] == 1);
    assert_int_equal(s.reuses[0], 2);
    assert_true(s.reuse_weight[0] == 4 && s.inval_weight[0] == 2);
    assert_int_equal(s.weighted_events, 2);
    assert_true(s.reuse_weight_sq[0] == 10); /* 3^2 + 1^2 */
    /* Kac with weights: (3 x 5 + 1 x 50) / 4 */
    assert_true(fabs(s.thread[0].n_distinct - 65.0 / 4.0) < 1e-9);
    replay_sampled_free(&s);
    unlink(sampled_path);
}

/* An absurd distance (corrupt or hostile trace) converts without overflow
 * (UBSan) and keeps its weight. */
static void test_huge_distance(void **state)
{
    (void)state;
    paths();
    struct pes_error err = {0};
    struct pes_trace_writer *w = open_trace(sampled_path, PES_TRACE_SAMPLED, config, 1, 1);
    struct pes_event e[] = {ev(PES_EV_REUSE, 0, 0, 0, 0, UINT64_MAX, 0),
                            ev(PES_EV_REUSE, 0, 0, 0, 0, 4, 0)};
    assert_int_equal(pes_trace_writer_events(w, 0, e, 2, &err), 0);
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    struct replay_sampled s;
    assert_int_equal(load_sampled(sampled_path, &s, &err), 0);
    double stack = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++)
        stack += s.stack[i];
    assert_true(fabs(stack - 2) < 1e-9);
    assert_true(s.temporal[0][pes_rt_bin(UINT64_MAX - 1)] == 1);
    replay_sampled_free(&s);
    unlink(sampled_path);
}

/* Marathe's references are source lines: sites of one line share a key */
static void test_line_keys(void **state)
{
    (void)state;
    struct pes_site a = {.id = 4, .file = "x/t.c", .line = 7},
                    b = {.id = 9, .file = "x/t.c", .line = 7};
    struct pes_site c = {.id = 5, .file = "x/t.c", .line = 8},
                    d = {.id = 6, .file = "x/u.c", .line = 7};
    struct pes_site nodebug = {.id = 3, .file = "", .line = 0};
    assert_true(replay_site_line_key(&a, 4) == replay_site_line_key(&b, 9));
    assert_true(replay_site_line_key(&a, 4) != replay_site_line_key(&c, 5));
    assert_true(replay_site_line_key(&a, 4) != replay_site_line_key(&d, 6));
    assert_true(replay_site_line_key(&nodebug, 3) != replay_site_line_key(&nodebug, 2));
    assert_true(replay_site_line_key(NULL, 3) == replay_site_line_key(&nodebug, 3));
}

/* ------------------------------------------------------------ ideal sampler */

static uint64_t rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

struct acc {
    uint32_t thread, site;
    uint64_t addr;
    int write;
};

/*
 * Two threads: 90 % of the accesses go to the thread's private array of M
 * 8-byte elements (site 0 loads, site 1 stores), 10 % are stores to 4 shared
 * words (site 2), which invalidate the other thread's uses. Full trace with a
 * time mark around every access (exact global order), and a sampled trace of
 * the same "execution" (same pid and start time) from the ideal sampler.
 */
static size_t build_pair(size_t n, uint64_t m, uint32_t period, uint64_t seed, uint64_t sampled_pid)
{
    struct acc *a = malloc(n * sizeof *a);
    assert_non_null(a);
    uint64_t r = seed;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = rng(&r) % 2;
        if (rng(&r) % 10 == 0) {
            a[i] = (struct acc){t, 2, 0x900000 + 8 * (rng(&r) % 4), 1};
        } else {
            int w = rng(&r) % 4 == 0;
            a[i] = (struct acc){t, w ? 1u : 0u, 0x100000 * (t + 1) + 8 * (rng(&r) % m), w};
        }
    }
    struct pes_error err = {0};
    struct pes_trace_writer *w = open_trace(full_path, PES_TRACE_FULL, "mode=full\n", 4242, 2);
    for (size_t i = 0; i < n; i++) {
        struct pes_record recs[3] = {
            {.addr = 10 * i + 10, .id = PES_ID_TIME},
            {.addr = a[i].addr, .id = a[i].site},
            {.addr = 10 * i + 12, .id = PES_ID_TIME},
        };
        assert_int_equal(pes_trace_writer_records(w, a[i].thread, recs, 3, &err), 0);
    }
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);

    char cfg[256];
    snprintf(cfg, sizeof cfg, "mode=reuse\nperiod_load=%u\nperiod_store=%u\ngranularity=temporal\n",
             period, period);
    w = open_trace(sampled_path, PES_TRACE_SAMPLED, cfg, sampled_pid, 2);
    struct pes_event *evs = malloc(2 * n * sizeof *evs);
    uint64_t count[2] = {0, 0};
    size_t samples = 0;
    for (uint32_t t = 0; t < 2; t++) {
        size_t ne = 0;
        uint64_t mine = 0;
        for (size_t i = 0; i < n; i++) {
            if (a[i].thread != t)
                continue;
            mine++;
            if (rng(&r) % period)
                continue;
            samples++;
            struct pes_event s =
                ev(PES_EV_SAMPLE, a[i].write ? PES_EVF_WRITE : 0, t, UINT32_MAX, a[i].site, 0, 0);
            s.addr = a[i].addr;
            s.loads = mine; /* counters only need to be monotone here */
            evs[ne++] = s;
            /* Table 6.2: the next same-thread access to the address is a
             * reuse, unless another thread writes it first */
            uint64_t between = 0;
            for (size_t j = i + 1; j < n; j++) {
                if (a[j].addr != a[i].addr) {
                    if (a[j].thread == t)
                        between++;
                    continue;
                }
                if (a[j].thread == t) {
                    /* the collector's convention: position difference */
                    struct pes_event e = ev(PES_EV_REUSE, 0, t, t, a[i].site, between + 1, 0);
                    e.loads =
                        mine + between + 1; /* the owner's count at the reuse, as the collector's */
                    evs[ne++] = e;
                    break;
                }
                if (a[j].write) {
                    struct pes_event e =
                        ev(PES_EV_INVALIDATION, 0, t, a[j].thread, a[i].site, 0, 0);
                    evs[ne++] = e;
                    break;
                }
            }
        }
        struct pes_event tot = ev(PES_EV_TOTALS, 0, t, UINT32_MAX, UINT32_MAX, 0, 0);
        tot.loads = mine;
        evs[ne++] = tot;
        count[t] = mine;
        assert_int_equal(pes_trace_writer_events(w, t, evs, ne, &err), 0);
    }
    assert_int_equal(pes_trace_writer_close(w, NULL, 0, 0, &err), 0);
    free(evs);
    free(a);
    return samples;
}

/*
 * Tolerances from the number of samples n (not tuned): a histogram estimated
 * from n samples has expected half-L1 distance at most 0.5 sqrt(k/n) from the
 * truth for k occupied bins (Cauchy-Schwarz on per-bin standard errors); we
 * allow 3x. The invalidation ratio is a binomial proportion: 4 sigma.
 */
static void test_compare_ideal_sampler(void **state)
{
    (void)state;
    paths();
    size_t samples = build_pair(60000, 500, 20, 11, 4242);
    struct pes_error err = {0};
    struct replay_sampled s;
    struct replay_truth t;
    struct replay_accuracy a;
    struct pes_machine m;
    load_machine(&m);
    assert_int_equal(load_sampled(sampled_path, &s, &err), 0);
    assert_int_equal(load_truth(full_path, &m, &t, &err), 0);
    assert_int_equal(t.accesses, 60000);
    assert_int_equal(replay_accuracy_compute(&s, &t, 10, &a, &err), 0);
    assert_true(a.same_execution);
    assert_int_equal(a.samples, samples);

    const struct pes_rt_stats *intra = pes_rt_totals(t.rt, PES_RT_INTRA);
    size_t k = 0;
    for (size_t i = 0; i < PES_RT_BINS; i++)
        k += intra->temporal.bin[i] > 0;
    double n = (double)(s.reuses[0]);
    double tol = 3 * 0.5 * sqrt((double)k / n);
    print_message("n=%.0f k=%zu S intra=%.4f (>= %.4f) S stack=%.4f inval ratio %.4f vs %.4f\n", n,
                  k, a.s_intra, 1 - tol, a.s_stack, a.inval_ratio_sampled, a.inval_ratio_true);
    assert_true(a.s_intra >= 1 - tol);
    /* uniform random private accesses: the conversion's own accuracy (S >= 0.9
     * on uniform streams, test_time_to_stack) less the sampling allowance */
    assert_true(a.s_stack >= 0.9 - tol);
    double r = a.inval_ratio_true, nd = (double)a.decided;
    assert_true(fabs(a.inval_ratio_error) <= 4 * sqrt(r * (1 - r) / nd));
    /* only the shared stores (site 2) are invalidated: coverage 1, no false positive */
    assert_true(fabs(a.top_invalidations.coverage - 1) < 1e-12);
    assert_int_equal(a.top_invalidations.false_positives, 0);
    assert_int_equal(a.top_invalidations.n_full, 1);
    /* no COMM events: communication metrics undefined */
    assert_true(isnan(a.comm.volume_error));
    replay_sampled_free(&s);
    /* pes-replay --compare reports the same figures */
    struct pes_report *rep = report_of(sampled_path, full_path);
    const struct pes_rnode *root = pes_report_tree(rep);
    assert_int_equal(pes_r_get_u(root, "accesses"), 60000);
    assert_true(pes_r_get_f(root, "s_intra") == a.s_intra);
    assert_true(pes_r_get_f(pes_r_get(root, "top_invalidations"), "coverage") ==
                a.top_invalidations.coverage);
    assert_int_equal(pes_r_kind(pes_r_get(root, "top_invalidations_caused")), PES_R_NULL);
    pes_report_destroy(rep);
    replay_truth_free(&t);

    /* a sampled trace of another execution is flagged */
    build_pair(2000, 50, 20, 12, 999);
    assert_int_equal(load_sampled(sampled_path, &s, &err), 0);
    assert_int_equal(load_truth(full_path, &m, &t, &err), 0);
    assert_int_equal(replay_accuracy_compute(&s, &t, 10, &a, &err), 0);
    assert_false(a.same_execution);
    replay_sampled_free(&s);
    replay_truth_free(&t);
    unlink(sampled_path);
    unlink(full_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_built),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_events_without_site),
        cmocka_unit_test(test_reservoir_weights),
        cmocka_unit_test(test_line_keys),
        cmocka_unit_test(test_huge_distance),
        cmocka_unit_test(test_compare_ideal_sampler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
