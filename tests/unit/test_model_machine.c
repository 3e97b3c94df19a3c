/* Machine presets, the .machine parser, cache specs and sysfs (fake tree) parsing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "pes/model.h"

#define KB 1024ull
#define MB (1024ull * 1024)

static void load_ok(const char *name, struct pes_machine *m)
{
    struct pes_error err = {0};
    int rc = pes_machine_load(name, m, &err);
    if (rc)
        print_error("%s: %s\n", name, err.message);
    assert_int_equal(rc, 0);
    assert_int_equal(pes_machine_validate(m, NULL), 0);
}

static void test_presets(void **state)
{
    (void)state;
    struct pes_machine m;
    /* PPT-Multicore Table 5 */
    load_ok("haswell", &m);
    assert_string_equal(m.name, "haswell");
    assert_true(m.ghz == 3.0);
    assert_int_equal(m.cores_per_socket, 8);
    assert_int_equal(m.n_levels, 3);
    assert_int_equal(m.level[0].size, 32 * KB);
    assert_int_equal(m.level[1].size, 256 * KB);
    assert_int_equal(m.level[2].size, 20 * MB);
    assert_int_equal(m.level[2].ways, 20);
    assert_int_equal(m.level[2].shared, 1);
    assert_int_equal(m.level[0].shared, 0);

    /* published second-level TLBs; no page-walk cost published: that term off */
    assert_true(m.tlb_entries == 1024 && m.tlb_page == 4096 && m.tlb_miss_latency == 0);
    assert_true(m.fork_join.n == 0 && m.mem_bandwidth.n == 0 && m.prefetch_max_stride == 0);

    load_ok("broadwell", &m);
    assert_true(m.tlb_entries == 1536 && m.tlb_page == 4096);
    assert_true(m.ghz == 2.2);
    assert_int_equal(m.cores_per_socket, 22);
    assert_int_equal(m.level[2].size, 55 * MB);

    assert_int_equal(m.validation, PES_MACHINE_PRESET); /* every preset says what it is */

    load_ok("zen2", &m);
    assert_true(m.tlb_entries == 2048 && m.tlb_page == 4096);
    assert_int_equal(m.validation, PES_MACHINE_PRESET);
    assert_true(m.ghz == 2.0);
    assert_int_equal(m.cores_per_socket, 64);
    /* Table 5 gives chip totals: 2 MB L1 and 32 MB L2 over 64 cores */
    assert_int_equal(m.level[0].size * 64, 2 * MB);
    assert_int_equal(m.level[1].size * 64, 32 * MB);
    /* latencies grow down the hierarchy in every preset */
    const char *names[] = {"haswell", "broadwell", "zen2"};
    for (int i = 0; i < 3; i++) {
        load_ok(names[i], &m);
        for (unsigned l = 1; l < m.n_levels; l++)
            assert_true(m.level[l].latency > m.level[l - 1].latency);
        assert_true(m.mem_latency > m.level[m.n_levels - 1].latency);
        assert_true(m.op_latency[PES_OP_FP_DIV] > m.op_latency[PES_OP_FP_ADD]);
    }
}

static void test_unknown_machine(void **state)
{
    (void)state;
    struct pes_machine m;
    struct pes_error err = {0};
    assert_int_equal(pes_machine_load("pentium4", &m, &err), -1);
    assert_int_not_equal(err.code, 0);
    assert_non_null(strstr(err.message, "unknown machine 'pentium4'"));
    assert_non_null(strstr(err.message, "broadwell"));
    assert_non_null(strstr(err.message, "haswell"));
    assert_non_null(strstr(err.message, "zen2"));
    assert_non_null(strstr(err.message, "host"));
    assert_non_null(strstr(err.message, "sysfs"));
    assert_int_equal(pes_machine_load("../etc/passwd", &m, &err), -1); /* a path: no such file */
    assert_int_equal(pes_machine_load("a b", &m, &err), -1);
    assert_int_equal(pes_machine_load("", &m, &err), -1);
}

static char tmpdir[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *print_to_string(const struct pes_machine *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    pes_machine_print(m, f);
    fclose(f);
    return buf;
}

static void test_env_dir_and_roundtrip(void **state)
{
    (void)state;
    struct pes_machine h, m;
    load_ok("haswell", &h);
    /* print -> parse gives the same machine */
    char *text = print_to_string(&h);
    struct pes_error err = {0};
    assert_int_equal(pes_machine_parse(text, "printed", &m, &err), 0);
    assert_memory_equal(&h, &m, sizeof h);

    /* $PES_MACHINES_DIR replaces the source tree's directory */
    char path[128];
    snprintf(path, sizeof path, "%s/custom.machine", tmpdir);
    write_file(path, text);
    free(text);
    setenv("PES_MACHINES_DIR", tmpdir, 1);
    load_ok("custom", &m);
    assert_int_equal(m.level[2].size, 20 * MB);
    assert_int_equal(pes_machine_load("haswell", &m, &err), -1);
    assert_non_null(strstr(err.message, "custom")); /* listed as available */
    unsetenv("PES_MACHINES_DIR");
    load_ok(path, &m); /* explicit path */
}

static const char *base_text = "name = t\nghz = 1\nsockets = 1\ncores_per_socket = 2\n"
                               "L1.size = 1K\nL1.ways = 2\nL1.line = 64\nL1.shared = private\n"
                               "L1.latency = 1\nL1.recip_throughput = 1\n"
                               "mem.latency = 9\nmem.recip_throughput = 2\n";

static char *with_ops(const char *extra)
{
    static char buf[8192];
    snprintf(buf, sizeof buf, "%s", base_text);
    for (int o = 0; o < PES_OP_COUNT; o++) {
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, "op.%s.latency = 1\nop.%s.recip_throughput = 1\n",
                 pes_machine_op_key(o), pes_machine_op_key(o));
    }
    size_t n = strlen(buf);
    snprintf(buf + n, sizeof buf - n, "%s", extra);
    return buf;
}

static void parse_fails(const char *text, const char *expect);

/* The validation key: optional (older files are unvalidated), one of three
 * words, printed and parsed back. */
static void test_validation_key(void **state)
{
    (void)state;
    struct pes_machine m;
    struct pes_error err = {0};
    assert_int_equal(pes_machine_parse(with_ops(""), "t.machine", &m, &err), 0);
    assert_int_equal(m.validation, PES_MACHINE_UNVALIDATED);
    const char *word[] = {"unvalidated", "preset", "calibrated"};
    for (int v = 0; v < 3; v++) {
        char extra[64];
        snprintf(extra, sizeof extra, "validation = %s   # comment\n", word[v]);
        assert_int_equal(pes_machine_parse(with_ops(extra), "t.machine", &m, &err), 0);
        assert_int_equal((int)m.validation, v);
        assert_string_equal(pes_machine_validation_name(m.validation), word[v]);
        char *text = print_to_string(&m);
        char line[64];
        snprintf(line, sizeof line, "\nvalidation = %s\n", word[v]);
        assert_non_null(strstr(text, line));
        struct pes_machine back;
        assert_int_equal(pes_machine_parse(text, "printed", &back, &err), 0);
        assert_memory_equal(&m, &back, sizeof m);
        free(text);
    }
    parse_fails(with_ops("validation = measured\n"),
                "t.machine:35: validation: 'measured' is not unvalidated, preset or calibrated");
    parse_fails(with_ops("validation = preset\nvalidation = preset\n"),
                "t.machine:36: duplicate key 'validation'");
    /* a level added by --cache has generic costs: no longer calibrated */
    assert_int_equal(
        pes_machine_parse(with_ops("validation = calibrated\n"), "t.machine", &m, &err), 0);
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L1=1K:2", &err), 0);
    assert_int_equal(m.validation, PES_MACHINE_CALIBRATED);
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L2=8K:4", &err), 0);
    assert_int_equal(m.validation, PES_MACHINE_UNVALIDATED);
}

/* "host" is this host's calibration when the cache holds one, else sysfs;
 * the cache file's name follows $XDG_CACHE_HOME, else $HOME/.cache. */
static void test_host_calibration(void **state)
{
    (void)state;
    char path[4096], dir[128], host[256] = "";
    struct pes_error err = {0};
    snprintf(dir, sizeof dir, "%s/xdg", tmpdir);
    setenv("XDG_CACHE_HOME", dir, 1);
    assert_int_equal(pes_machine_host_calibration_path(path, sizeof path, &err), 0);
    gethostname(host, sizeof host);
    char want[512];
    snprintf(want, sizeof want, "%s/pes/%s-", dir, host);
    assert_memory_equal(path, want, strlen(want));
    size_t n = strlen(path);
    assert_true(n == strlen(want) + 8 + 8); /* 8 hex digits, ".machine" */
    assert_string_equal(path + n - 8, ".machine");
    char again[4096]; /* stable */
    assert_int_equal(pes_machine_host_calibration_path(again, sizeof again, &err), 0);
    assert_string_equal(path, again);
    assert_int_equal(pes_machine_host_calibration_path(again, 10, &err), -1); /* too small */

    /* no calibration yet: host is the sysfs description, when there is one */
    struct pes_machine m, s;
    int have_sysfs = pes_machine_load("sysfs", &s, &err) == 0;
    if (have_sysfs) {
        assert_int_equal(s.validation, PES_MACHINE_UNVALIDATED);
        load_ok("host", &m);
        assert_memory_equal(&m, &s, sizeof m);
    }
    /* a calibration in the cache: host reads it */
    snprintf(want, sizeof want, "%s/pes", dir);
    mkdir(dir, 0755);
    mkdir(want, 0755);
    write_file(path, with_ops("validation = calibrated\n"));
    load_ok("host", &m);
    assert_int_equal(m.validation, PES_MACHINE_CALIBRATED);
    assert_string_equal(m.name, "t");
    if (have_sysfs) { /* sysfs still means sysfs */
        load_ok("sysfs", &m);
        assert_int_equal(m.validation, PES_MACHINE_UNVALIDATED);
    }
    /* a damaged calibration is an error naming the file and the way out */
    write_file(path, "ghz = fast\n");
    assert_int_equal(pes_machine_load("host", &m, &err), -1);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, ":1: ghz: bad value 'fast'"));
    assert_non_null(strstr(err.message, "pes-calibrate --force"));
    unlink(path);

    /* XDG_CACHE_HOME must be absolute; HOME/.cache otherwise */
    setenv("XDG_CACHE_HOME", "relative/dir", 1);
    setenv("HOME", "/home/someone", 1);
    assert_int_equal(pes_machine_host_calibration_path(path, sizeof path, &err), 0);
    assert_memory_equal(path, "/home/someone/.cache/pes/", 25);
    unsetenv("XDG_CACHE_HOME");
    assert_int_equal(pes_machine_host_calibration_path(path, sizeof path, &err), 0);
    assert_memory_equal(path, "/home/someone/.cache/pes/", 25);
    unsetenv("HOME");
    assert_int_equal(pes_machine_host_calibration_path(path, sizeof path, &err), -1);
    assert_non_null(strstr(err.message, "neither XDG_CACHE_HOME nor HOME"));
    if (have_sysfs) /* and host falls back to sysfs */
        load_ok("host", &m);
}

static void parse_fails(const char *text, const char *expect)
{
    struct pes_machine m;
    struct pes_error err = {0};
    int rc = pes_machine_parse(text, "t.machine", &m, &err);
    if (rc != -1 || !strstr(err.message, expect))
        print_error("expected '%s', got rc %d '%s'\n", expect, rc, err.message);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.message, expect));
}

static void test_parse_errors(void **state)
{
    (void)state;
    struct pes_machine m;
    assert_int_equal(pes_machine_parse(with_ops("# trailing comment\n\n"), "t.machine", &m, NULL),
                     0);
    assert_int_equal(m.n_levels, 1);
    assert_int_equal(m.level[0].size, 1024);
    /* the overlap model's core: optional, defaults when absent */
    assert_true(m.issue_width == PES_DEFAULT_ISSUE_WIDTH && m.mlp == PES_DEFAULT_MLP);
    assert_int_equal(
        pes_machine_parse(with_ops("issue_width = 6\nmlp = 22\n"), "t.machine", &m, NULL), 0);
    assert_true(m.issue_width == 6 && m.mlp == 22);
    parse_fails(with_ops("mlp = 0.5\n"), "t.machine:35: mlp: bad value '0.5' (>= 1)");
    /* the measured error band: all four keys, printed and read back */
    assert_int_equal(
        pes_machine_parse(with_ops("error.model = overlap\nerror.mean = 0.2\nerror.max = 0.5\n"
                                   "error.runs = 36\n"),
                          "t.machine", &m, NULL),
        0);
    assert_true(m.error.model == PES_RUNTIME_OVERLAP && m.error.mean == 0.2 && m.error.max == 0.5 &&
                m.error.runs == 36);
    {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        pes_machine_print(&m, f);
        fclose(f);
        struct pes_machine back;
        assert_int_equal(pes_machine_parse(text, "printed", &back, NULL), 0);
        assert_memory_equal(&back.error, &m.error, sizeof m.error);
        free(text);
    }
    parse_fails(with_ops("error.model = fast\nerror.mean = 0.2\nerror.max = 0.5\nerror.runs = 3\n"),
                "t.machine:35: error.model: 'fast' is not overlap or ppt");
    parse_fails(with_ops("error.model = ppt\nerror.mean = 0.6\nerror.max = 0.5\nerror.runs = 3\n"),
                "t.machine: error.mean 0.6 > error.max 0.5");
    parse_fails(with_ops("error.runs = 0\n"), "t.machine:35: error.runs: bad count '0'");
    parse_fails(with_ops("error.bogus = 1\n"), "t.machine:35: unknown key 'error.bogus'");
    parse_fails(with_ops("issue_width = 4\nissue_width = 4\n"),
                "t.machine:36: duplicate key 'issue_width'");
    parse_fails(with_ops("bogus = 1\n"), "t.machine:35: unknown key 'bogus'");
    parse_fails(with_ops("ghz = 2\n"), "t.machine:35: duplicate key 'ghz'");
    parse_fails(with_ops("L2.size = 4K\n"), "missing key 'L2.ways'");
    parse_fails(with_ops("no equals sign\n"), "t.machine:35: expected 'key = value'");
    parse_fails(with_ops("L2.size = 12Q\n"), "bad size '12Q'");
    parse_fails(with_ops("L2.latency = -3\n"), "bad value '-3'");
    parse_fails(with_ops("L2.shared = maybe\n"), "not private or shared");
    parse_fails(with_ops("op.fp_add.speed = 1\n"), "unknown key 'op.fp_add.speed'");
    parse_fails(with_ops("mem.size = 1\n"), "unknown key 'mem.size'");
    parse_fails(with_ops("L1.bogus = 1\n"), "unknown key 'L1.bogus'");
    parse_fails(base_text, "missing key 'op.int_add.latency'");
    parse_fails("ghz = 1\n", "missing key 'sockets'");
    /* geometry is validated: 1K / 64 = 16 blocks, 3 ways do not divide them */
    char *t = with_ops("");
    char *w = strstr(t, "L1.ways = 2");
    w[10] = '3';
    parse_fails(t, "3 ways do not divide 16 blocks");
    w[10] = '2';
    char *l = strstr(t, "L1.line = 64");
    memcpy(l + 10, "48", 2);
    parse_fails(t, "not a power of two");
}

/* Terms beyond Eq. 4-8 (issue 30): thread curves, TLB and prefetch reach.
 * Extra lines start at line 35 of with_ops' text. */
static void test_model_terms_keys(void **state)
{
    (void)state;
    struct pes_machine m, back;
    struct pes_error err = {0};
    const char *keys = "omp.fork_join.2 = 5000\nomp.fork_join.1 = 300\nomp.fork_join.4 = 9000\n"
                       "omp.barrier.2 = 700.5\nmem.bandwidth.1 = 12.5\nmem.bandwidth.2 = 20\n"
                       "L1.bandwidth.2 = 64\ntlb.entries = 2048\ntlb.page = 4K\n"
                       "tlb.miss_latency = 31.5\nprefetch.max_stride = 1K\n";
    assert_int_equal(pes_machine_parse(with_ops(keys), "t.machine", &m, &err), 0);
    /* sorted by thread count whatever the order of the lines */
    assert_int_equal(m.fork_join.n, 3);
    assert_int_equal(m.fork_join.threads[0], 1);
    assert_int_equal(m.fork_join.threads[1], 2);
    assert_int_equal(m.fork_join.threads[2], 4);
    assert_true(m.fork_join.value[0] == 300 && m.fork_join.value[1] == 5000 &&
                m.fork_join.value[2] == 9000);
    assert_true(m.barrier.n == 1 && m.barrier.threads[0] == 2 && m.barrier.value[0] == 700.5);
    assert_true(m.mem_bandwidth.n == 2 && m.mem_bandwidth.value[1] == 20);
    assert_true(m.level[0].bandwidth.n == 1 && m.level[0].bandwidth.value[0] == 64);
    assert_int_equal(m.tlb_entries, 2048);
    assert_int_equal(m.tlb_page, 4096);
    assert_true(m.tlb_miss_latency == 31.5 && m.prefetch_max_stride == 1024);
    assert_float_equal(pes_thread_curve_at(&m.fork_join, 3), 7000, 1e-9);

    /* print -> parse: the same machine */
    char *text = print_to_string(&m);
    assert_non_null(strstr(text, "omp.fork_join.4 = 9000\n"));
    assert_non_null(strstr(text, "tlb.page = 4K\n"));
    assert_non_null(strstr(text, "prefetch.max_stride = 1K\n"));
    assert_int_equal(pes_machine_parse(text, "printed", &back, &err), 0);
    assert_memory_equal(&m, &back, sizeof m);
    free(text);

    /* the same points in another order: the same curve */
    assert_int_equal(pes_machine_parse(with_ops("omp.fork_join.4 = 9000\nomp.fork_join.1 = 300\n"
                                                "omp.fork_join.2 = 5000\n"),
                                       "t.machine", &back, &err),
                     0);
    assert_memory_equal(&m.fork_join, &back.fork_join, sizeof m.fork_join);
    /* a machine without them: every term off, nothing printed */
    assert_int_equal(pes_machine_parse(with_ops(""), "t.machine", &back, &err), 0);
    assert_true(back.fork_join.n == 0 && back.tlb_entries == 0 && back.prefetch_max_stride == 0);
    text = print_to_string(&back);
    assert_null(strstr(text, "omp."));
    assert_null(strstr(text, "tlb."));
    assert_null(strstr(text, "bandwidth"));
    free(text);

    /* bad input: file and line */
    parse_fails(with_ops("omp.barrier.2 = 1\nomp.barrier.2 = 3\n"),
                "t.machine:36: duplicate key 'omp.barrier.2'");
    parse_fails(with_ops("omp.barrier.0 = 1\n"), "t.machine:35: omp.barrier.0: bad thread count");
    parse_fails(with_ops("omp.barrier.x = 1\n"), "t.machine:35: omp.barrier.x: bad thread count");
    parse_fails(with_ops("omp.barrier = 1\n"), "t.machine:35: unknown key 'omp.barrier'");
    parse_fails(with_ops("omp.fork_join.2 = 0\n"), "t.machine:35: omp.fork_join.2: bad value '0'");
    parse_fails(with_ops("mem.bandwidth.2 = -1\n"), "t.machine:35: mem.bandwidth.2: bad value");
    parse_fails(with_ops("mem.bandwidth.2 = nan\n"), "t.machine:35: mem.bandwidth.2: bad value");
    parse_fails(with_ops("mem.bandwidth.2 = inf\n"), "t.machine:35: mem.bandwidth.2: bad value");
    parse_fails(with_ops("L1.bandwidth.1 = 1\nL1.bandwidth.1 = 2\n"),
                "t.machine:36: duplicate key 'L1.bandwidth.1'");
    parse_fails(with_ops("L3.bandwidth.1 = 1\n"),
                "t.machine:35: L3.bandwidth.* for a level the file does not describe");
    parse_fails(with_ops("tlb.entries = 0\n"), "t.machine:35: tlb.entries: bad count '0'");
    parse_fails(with_ops("tlb.entries = 64\ntlb.page = 3K\n"), "t.machine:36: tlb.page: bad size");
    parse_fails(with_ops("tlb.entries = 64\n"),
                "t.machine:35: tlb.entries and tlb.page go together (missing 'tlb.page')");
    parse_fails(with_ops("tlb.miss_latency = 20\n"),
                "t.machine:35: tlb.entries and tlb.page go together (missing 'tlb.entries')");
    parse_fails(with_ops("tlb.entries = 64\ntlb.page = 4K\ntlb.entries = 64\n"),
                "t.machine:37: duplicate key 'tlb.entries'");
    parse_fails(with_ops("tlb.miss_latency = 0\n"), "t.machine:35: tlb.miss_latency: bad value");
    parse_fails(with_ops("tlb.size = 1\n"), "t.machine:35: unknown key 'tlb.size'");
    parse_fails(with_ops("prefetch.max_stride = 0\n"),
                "t.machine:35: prefetch.max_stride: bad size '0'");
    parse_fails(with_ops("prefetch.distance = 1\n"), "t.machine:35: unknown key");
    /* at most PES_CURVE_POINTS points */
    char many[2048] = "";
    for (int t = 1; t <= PES_CURVE_POINTS + 1; t++) {
        size_t n = strlen(many);
        snprintf(many + n, sizeof many - n, "omp.barrier.%d = %d\n", t, t);
    }
    char expect[96];
    snprintf(expect, sizeof expect, "t.machine:%d: omp.barrier.%d: more than %d thread counts",
             35 + PES_CURVE_POINTS, PES_CURVE_POINTS + 1, PES_CURVE_POINTS);
    parse_fails(with_ops(many), expect);

    /* validate: what a program may fill in by hand */
    struct pes_machine v = m;
    assert_int_equal(pes_machine_validate(&v, NULL), 0);
    v.barrier.threads[0] = 0;
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    assert_non_null(strstr(err.message, "omp.barrier"));
    v = m;
    v.fork_join.threads[2] = 2; /* not ascending */
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    assert_non_null(strstr(err.message, "omp.fork_join"));
    v = m;
    v.level[0].bandwidth.value[0] = NAN;
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    assert_non_null(strstr(err.message, "L1.bandwidth"));
    v = m;
    v.mem_bandwidth.n = PES_CURVE_POINTS + 1;
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    v = m;
    v.tlb_page = 0;
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    v = m;
    v.prefetch_max_stride = 100.5;
    assert_int_equal(pes_machine_validate(&v, &err), -1);
}

/* compute.throughput.<T> (threads' worth T threads retire together, at
 * most T): parse, print, validation. Extra lines start at line 35. */
static void test_model_compute_throughput_key(void **state)
{
    (void)state;
    struct pes_machine m, back;
    struct pes_error err = {0};
    const char *keys = "compute.throughput.2 = 1.25\ncompute.throughput.1 = 1\n"
                       "compute.throughput.4 = 4\n";
    assert_int_equal(pes_machine_parse(with_ops(keys), "t.machine", &m, &err), 0);
    assert_int_equal(m.compute_throughput.n, 3);
    assert_true(m.compute_throughput.threads[0] == 1 && m.compute_throughput.value[0] == 1);
    assert_true(m.compute_throughput.threads[1] == 2 && m.compute_throughput.value[1] == 1.25);
    assert_true(m.compute_throughput.threads[2] == 4 && m.compute_throughput.value[2] == 4);
    /* 3 threads: halfway between 1.25 and 4 */
    assert_float_equal(pes_thread_curve_at(&m.compute_throughput, 3), 2.625, 1e-12);
    char *text = print_to_string(&m);
    assert_non_null(strstr(text, "compute.throughput.1 = 1\ncompute.throughput.2 = 1.25\n"
                                 "compute.throughput.4 = 4\n"));
    assert_int_equal(pes_machine_parse(text, "printed", &back, &err), 0);
    assert_memory_equal(&m, &back, sizeof m);
    free(text);
    /* without the key: nothing printed */
    assert_int_equal(pes_machine_parse(with_ops(""), "t.machine", &back, &err), 0);
    assert_int_equal(back.compute_throughput.n, 0);
    text = print_to_string(&back);
    assert_null(strstr(text, "compute."));
    free(text);

    /* bad input: file and line */
    parse_fails(with_ops("compute.throughput.2 = 2.5\n"),
                "t.machine:35: compute.throughput.2: 2.5 is more than 2 threads' worth");
    parse_fails(with_ops("compute.throughput.1 = 1\ncompute.throughput.2 = 3\n"),
                "t.machine:36: compute.throughput.2: 3 is more than 2 threads' worth");
    parse_fails(with_ops("compute.throughput.2 = 0\n"),
                "t.machine:35: compute.throughput.2: bad value '0'");
    parse_fails(with_ops("compute.throughput.2 = nan\n"),
                "t.machine:35: compute.throughput.2: bad value");
    parse_fails(with_ops("compute.throughput.0 = 1\n"),
                "t.machine:35: compute.throughput.0: bad thread count");
    parse_fails(with_ops("compute.throughput.2 = 1\ncompute.throughput.2 = 1\n"),
                "t.machine:36: duplicate key 'compute.throughput.2'");
    parse_fails(with_ops("compute.throughput = 1\n"),
                "t.machine:35: unknown key 'compute.throughput'");

    /* validate: what a program may fill in by hand */
    struct pes_machine v = m;
    assert_int_equal(pes_machine_validate(&v, NULL), 0);
    v.compute_throughput.value[1] = 2.5; /* 2 threads, 2.5 threads' worth */
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    assert_non_null(strstr(err.message, "compute.throughput.2 = 2.5"));
    v = m;
    v.compute_throughput.value[0] = -1;
    assert_int_equal(pes_machine_validate(&v, &err), -1);
    assert_non_null(strstr(err.message, "compute.throughput"));
}

static void spec_fails(const char *spec, const char *expect)
{
    struct pes_machine m, before;
    load_ok("haswell", &m);
    before = m;
    struct pes_error err = {0};
    int rc = pes_machine_apply_cache_spec(&m, spec, &err);
    if (rc != -1 || strcmp(err.message, expect))
        print_error("spec '%s': expected \"%s\", got rc %d \"%s\"\n", spec, expect, rc,
                    err.message);
    assert_int_equal(rc, -1);
    assert_string_equal(err.message, expect);
    assert_memory_equal(&m, &before, sizeof m); /* all or nothing */
}

static void test_cache_spec(void **state)
{
    (void)state;
    struct pes_machine m;
    struct pes_error err = {0};
    load_ok("haswell", &m);
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L1=64K:4,L2=1M:16:128", &err), 0);
    assert_int_equal(m.level[0].size, 64 * KB);
    assert_int_equal(m.level[0].ways, 4);
    assert_int_equal(m.level[0].line, 64); /* kept */
    assert_int_equal(m.level[1].size, 1 * MB);
    assert_int_equal(m.level[1].line, 128);
    assert_true(m.level[1].latency == 12); /* costs kept */
    assert_int_equal(m.n_levels, 3);
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L4=128M:16:64:shared", &err), 0);
    assert_int_equal(m.n_levels, 4);
    assert_int_equal(m.level[3].size, 128 * MB);
    assert_int_equal(m.level[3].shared, 1);
    assert_true(m.level[3].latency > 0);
    assert_int_equal(pes_machine_apply_cache_spec(&m, "l1=32k:full,L3=20M:20:private", &err), 0);
    assert_int_equal(m.level[0].ways, 0);
    assert_int_equal(m.level[2].shared, 0);
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L2=2G:8", &err), 0);
    assert_int_equal(m.level[1].size, 2048 * MB);

    spec_fails("L2=256Q:8", "--cache: 'L2=256Q:8': bad size '256Q'");
    spec_fails("L1=32K", "--cache: 'L1=32K': missing ways (want SIZE:WAYS)");
    spec_fails("L5=1M:8", "--cache: 'L5=1M:8': bad level 'L5' (L1..L4)");
    spec_fails("X", "--cache: 'X': expected Ln=SIZE:WAYS");
    spec_fails("L1=:8", "--cache: 'L1=:8': bad size ''");
    spec_fails("L1=32K:x", "--cache: 'L1=32K:x': bad ways 'x'");
    spec_fails("L1=32K:7", "--cache: 'L1=32K:7': 7 ways do not divide 512 blocks");
    spec_fails("L1=32K:1024", "--cache: 'L1=32K:1024': 1024 ways do not divide 512 blocks");
    spec_fails("L1=32K:8:48", "--cache: 'L1=32K:8:48': line 48 is not a power of two");
    spec_fails("L1=32K:8:0", "--cache: 'L1=32K:8:0': bad line '0'");
    spec_fails(
        "L1=32K:8:64:bogus",
        "--cache: 'L1=32K:8:64:bogus': unknown field 'bogus' (want LINE, shared or private)");
    spec_fails("L1=32K:8:shared:private", "--cache: 'L1=32K:8:shared:private': sharing given "
                                          "twice ('private')");
    spec_fails("L1=100:1", "--cache: 'L1=100:1': size is not a multiple of the line (64)");
    spec_fails("L1=32K:8,,L2=1M:8", "--cache: 'L1=32K:8,,L2=1M:8': empty item");
    spec_fails("L1=32K:8,L1=64K:8", "--cache: 'L1=64K:8': level L1 given twice");
    spec_fails("L1=99999999999999999999K:8",
               "--cache: 'L1=99999999999999999999K:8': bad size '99999999999999999999K'");
    spec_fails("L1=17179869184G:8", "--cache: 'L1=17179869184G:8': bad size '17179869184G'");
    spec_fails("", "--cache: empty spec (want L1=32K:8,...)");
    /* a later bad item leaves the earlier good ones unapplied */
    spec_fails("L1=64K:8,L2=1M:3", "--cache: 'L2=1M:3': 3 ways do not divide 16384 blocks");

    /* a level past the end needs the ones before it */
    load_ok("haswell", &m);
    m.n_levels = 1;
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L3=1M:16", &err), -1);
    assert_non_null(strstr(err.message, "without L2"));
    assert_int_equal(pes_machine_apply_cache_spec(&m, "L3=1M:16,L2=256K:8", &err), 0);
    assert_int_equal(m.n_levels, 3);
}

/* ------------------------------------------------------------ fake sysfs */

static void mk(const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    /* mkdir -p */
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    mkdir(path, 0755);
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    write_file(path, text);
}

static void cache_index(const char *root, int idx, const char *level, const char *type,
                        const char *size, const char *ways, const char *shared)
{
    char rel[128];
    mk("%s/cpu0/cache/index%d", root, idx);
    snprintf(rel, sizeof rel, "cpu0/cache/index%d/level", idx);
    put(root, rel, level);
    snprintf(rel, sizeof rel, "cpu0/cache/index%d/type", idx);
    put(root, rel, type);
    snprintf(rel, sizeof rel, "cpu0/cache/index%d/size", idx);
    put(root, rel, size);
    snprintf(rel, sizeof rel, "cpu0/cache/index%d/ways_of_associativity", idx);
    put(root, rel, ways);
    snprintf(rel, sizeof rel, "cpu0/cache/index%d/coherency_line_size", idx);
    put(root, rel, "64\n");
    snprintf(rel, sizeof rel, "cpu0/cache/index%d/shared_cpu_list", idx);
    put(root, rel, shared);
}

/* 4 logical CPUs = 2 cores x 2 SMT threads on one socket. */
static void fake_tree(const char *root)
{
    for (int c = 0; c < 4; c++) {
        mk("%s/cpu%d/topology", root, c);
        char rel[64];
        snprintf(rel, sizeof rel, "cpu%d/topology/physical_package_id", c);
        put(root, rel, "0\n");
    }
    mk("%s/cpufreq", root); /* not a cpuN directory: ignored */
    put(root, "cpu0/topology/thread_siblings_list", "0-1\n");
    mk("%s/cpu0/cpufreq", root);
    put(root, "cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
    cache_index(root, 0, "1\n", "Data\n", "48K\n", "12\n", "0-1\n");
    cache_index(root, 1, "1\n", "Instruction\n", "32K\n", "8\n", "0-1\n");
    cache_index(root, 2, "2\n", "Unified\n", "1280K\n", "10\n", "0-1\n");
    cache_index(root, 3, "3\n", "Unified\n", "12288K\n", "12\n", "0-3\n");
}

static void test_sysfs(void **state)
{
    (void)state;
    char root[128];
    snprintf(root, sizeof root, "%s/sys", tmpdir);
    fake_tree(root);
    struct pes_machine m;
    struct pes_error err = {0};
    int rc = pes_machine_from_sysfs(root, &m, &err);
    if (rc)
        print_error("%s\n", err.message);
    assert_int_equal(rc, 0);
    assert_string_equal(m.name, "host");
    assert_int_equal(m.n_levels, 3);
    assert_int_equal(m.level[0].size, 48 * KB);
    assert_int_equal(m.level[0].ways, 12);
    assert_int_equal(m.level[0].line, 64);
    assert_int_equal(m.level[0].shared, 0); /* shared only by SMT siblings */
    assert_int_equal(m.level[1].size, 1280 * KB);
    assert_int_equal(m.level[1].shared, 0);
    assert_int_equal(m.level[2].size, 12 * MB);
    assert_int_equal(m.level[2].shared, 1);
    assert_int_equal(m.sockets, 1);
    assert_int_equal(m.cores_per_socket, 2);
    assert_true(m.ghz == 3.5);
    assert_true(m.level[0].latency > 0 && m.mem_latency > m.level[2].latency);

    /* broken trees give errors naming the file */
    put(root, "cpu0/cache/index2/size", "lots\n");
    assert_int_equal(pes_machine_from_sysfs(root, &m, &err), -1);
    assert_non_null(strstr(err.message, "index2/size: bad value 'lots'"));
    put(root, "cpu0/cache/index2/size", "1280K\n");
    put(root, "cpu0/cache/index2/level", "3\n"); /* now two L3s, no L2 */
    assert_int_equal(pes_machine_from_sysfs(root, &m, &err), -1);
    assert_non_null(strstr(err.message, "level 3"));
    put(root, "cpu0/cache/index2/level", "2\n");
    put(root, "cpu0/cache/index3/shared_cpu_list", "0-x\n");
    assert_int_equal(pes_machine_from_sysfs(root, &m, &err), -1);
    assert_non_null(strstr(err.message, "bad cpu list"));

    char empty[160];
    snprintf(empty, sizeof empty, "%s/nocache", tmpdir);
    mk("%s/cpu0", empty);
    assert_int_equal(pes_machine_from_sysfs(empty, &m, &err), -1);
    assert_non_null(strstr(err.message, "no cache description"));
}

static int setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/pes-model-test-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Hand-computed: points (1, 100), (2, 300), (8, 900). */
static void test_thread_curve(void **state)
{
    (void)state;
    struct pes_thread_curve c = {.n = 3, .threads = {1, 2, 8}, .value = {100, 300, 900}};
    assert_float_equal(pes_thread_curve_at(&c, 0.5), 100, 1e-12); /* below: first point */
    assert_float_equal(pes_thread_curve_at(&c, 1), 100, 1e-12);
    assert_float_equal(pes_thread_curve_at(&c, 1.5), 200, 1e-12);
    assert_float_equal(pes_thread_curve_at(&c, 4), 500, 1e-12); /* 300 + 600 * 2/6 */
    assert_float_equal(pes_thread_curve_at(&c, 8), 900, 1e-12);
    assert_float_equal(pes_thread_curve_at(&c, 64), 900, 1e-12); /* beyond: last point */
    struct pes_thread_curve none = {0};
    assert_true(isnan(pes_thread_curve_at(&none, 2)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_unknown_machine),
        cmocka_unit_test(test_env_dir_and_roundtrip),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_validation_key),
        cmocka_unit_test(test_host_calibration),
        cmocka_unit_test(test_cache_spec),
        cmocka_unit_test(test_sysfs),
        cmocka_unit_test(test_thread_curve),
        cmocka_unit_test(test_model_terms_keys),
        cmocka_unit_test(test_model_compute_throughput_key),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
