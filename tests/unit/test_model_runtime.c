/* Hierarchy averages and runtime (PPT-Multicore Eq. 4–8) on hand-computed examples. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pes/model.h"

/* cmocka 1.1 has no assert_double_equal: |a - b| <= tol, printing both on failure. */
static void near_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        print_error("%.17g != %.17g (tolerance %g)\n", a, b, tol);
        _fail(file, line);
    }
}
#define assert_near(a, b, tol) near_((a), (b), (tol), __FILE__, __LINE__)

/* A made-up 3-level machine with round numbers. */
static struct pes_machine toy(void)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "toy");
    m.ghz = 2.0;
    m.sockets = 1;
    m.cores_per_socket = 4;
    m.n_levels = 3;
    m.level[0] = (struct pes_cache_config){
        .size = 32768, .ways = 8, .line = 64, .shared = 0, .latency = 4, .recip_throughput = 1};
    m.level[1] = (struct pes_cache_config){
        .size = 262144, .ways = 8, .line = 64, .shared = 0, .latency = 12, .recip_throughput = 2};
    m.level[2] = (struct pes_cache_config){.size = 8u << 20,
                                           .ways = 16,
                                           .line = 64,
                                           .shared = 1,
                                           .latency = 40,
                                           .recip_throughput = 4};
    m.mem_latency = 200;
    m.mem_recip_throughput = 20;
    for (int o = 0; o < PES_OP_COUNT; o++) {
        m.op_latency[o] = 1;
        m.op_recip_throughput[o] = 1;
    }
    m.op_latency[PES_OP_FP_ADD] = 3;
    m.op_recip_throughput[PES_OP_FP_ADD] = 1;
    m.op_latency[PES_OP_FP_DIV] = 14;
    m.op_recip_throughput[PES_OP_FP_DIV] = 4;
    return m;
}

static void test_eq6_eq7(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    /* global hit rates 0.9, 0.95, 0.99 -> local 0.9, 0.5, 0.8:
     * Eq. 6: 0.9*4 + 0.1*[0.5*12 + 0.5*(0.8*40 + 0.2*200)] = 3.6 + 0.1*42 = 7.8
     *       (= 0.9*4 + 0.05*12 + 0.04*40 + 0.01*200)
     * Eq. 7: 0.9*1 + 0.05*2 + 0.04*4 + 0.01*20 = 1.36 */
    double hit[PES_MAX_LEVELS] = {0.9, 0.95, 0.99};
    double d, b;
    assert_int_equal(pes_model_averages(&m, hit, &d, &b, NULL), 0);
    assert_near(d, 7.8, 1e-12);
    assert_near(b, 1.36, 1e-12);

    /* all hits in L1 -> L1 costs; no hits at all -> memory costs */
    double all[PES_MAX_LEVELS] = {1, 1, 1}, none[PES_MAX_LEVELS] = {0, 0, 0};
    assert_int_equal(pes_model_averages(&m, all, &d, &b, NULL), 0);
    assert_near(d, 4, 1e-12);
    assert_near(b, 1, 1e-12);
    assert_int_equal(pes_model_averages(&m, none, &d, &b, NULL), 0);
    assert_near(d, 200, 1e-12);
    assert_near(b, 20, 1e-12);

    /* a non-monotone input is read as monotone (L2 no better than L1) */
    double dip[PES_MAX_LEVELS] = {0.9, 0.8, 1.0}; /* = 0.9*4 + 0*12 + 0.1*40 */
    assert_int_equal(pes_model_averages(&m, dip, &d, &b, NULL), 0);
    assert_near(d, 7.6, 1e-12);

    struct pes_error err = {0};
    double bad[PES_MAX_LEVELS] = {0.5, NAN, 1};
    assert_int_equal(pes_model_averages(&m, bad, &d, &b, &err), -1);
    assert_non_null(strstr(err.message, "L2"));
    double big[PES_MAX_LEVELS] = {1.5, 1, 1};
    assert_int_equal(pes_model_averages(&m, big, &d, &b, &err), -1);
}

static void test_runtime_eq4_eq5_eq8(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    struct pes_runtime_input in;
    memset(&in, 0, sizeof in);
    in.hit[0] = 0.9;
    in.hit[1] = 0.95;
    in.hit[2] = 0.99;
    in.total_mem = 8000;
    in.block = 8;
    in.cores = 2;
    in.ops[PES_OP_FP_ADD] = 200;
    in.ops[PES_OP_FP_DIV] = 20;
    in.ops[PES_OP_LOAD] = 1000; /* charged by Eq. 5, not Eq. 8 */
    in.bound = PES_CPU_THROUGHPUT;
    struct pes_runtime r;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    /* Eq. 5 per core: (7.8 + 7*1.36)/8 * 8000/2 = 2.165 * 4000 = 8660 */
    assert_near(r.mem_cycles, 8660, 1e-9);
    /* Eq. 8 throughput per core: fp_add 3 + 99*1 = 102; fp_div 14 + 9*4 = 50 */
    assert_near(r.cpu_cycles, 152, 1e-9);
    /* Eq. 4 */
    assert_near(r.total_cycles, 8812, 1e-9);
    assert_near(r.total_seconds, 8812 / 2e9, 1e-18);
    assert_near(r.mem_seconds + r.cpu_seconds, r.total_seconds, 1e-18);
    assert_near(r.delta_avg, 7.8, 1e-12);
    assert_near(r.beta_avg, 1.36, 1e-12);

    /* Eq. 8 latency bound: 100*3 + 10*14 = 440 */
    in.bound = PES_CPU_LATENCY;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.cpu_cycles, 440, 1e-9);

    /* defaults: block 0 -> 8 bytes, cores 0 -> 1 */
    in.block = 0;
    in.cores = 0;
    in.bound = PES_CPU_THROUGHPUT;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.mem_cycles, 2.165 * 8000, 1e-9);
    assert_near(r.cpu_cycles, (3 + 199) + (14 + 19 * 4), 1e-9);

    /* b = 1: every byte pays the full latency */
    in.block = 1;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.mem_cycles, 7.8 * 8000, 1e-9);

    struct pes_error err = {0};
    in.block = 0.5;
    assert_int_equal(pes_model_runtime(&m, &in, &r, &err), -1);
    in.block = 8;
    in.ops[PES_OP_INT_ADD] = -1;
    assert_int_equal(pes_model_runtime(&m, &in, &r, &err), -1);
    assert_non_null(strstr(err.message, "int_add"));
}

/* The overlap model (docs/model.md §3), each term on a case that isolates it. */
static void test_runtime_overlap(void **state)
{
    (void)state;
    struct pes_machine m = toy(); /* issue_width, mlp 0: the defaults 4 and 10 */
    struct pes_runtime_input in;
    memset(&in, 0, sizeof in);
    in.model = PES_RUNTIME_OVERLAP;
    in.hit[0] = 0.9;
    in.hit[1] = 0.95;
    in.hit[2] = 0.99;
    in.ops[PES_OP_LOAD] = 800;
    in.ops[PES_OP_STORE] = 200;
    in.ops[PES_OP_FP_ADD] = 1000;
    in.ops[PES_OP_INT_ADD] = 600;
    in.total_mem = 123456; /* unused by this model */
    struct pes_runtime r;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    /* 1000 accesses: L2 serves 50, L3 40, memory 10.
     * issue max(800 * 1, 200 * 1) = 800; fills max(50*2, 40*4, 10*20) = 200;
     * exposed (50*12 + 40*40 + 10*200) / 10 = 420 -> T_mem = 800 + 420 = 1220.
     * T_cpu: 2600 ops / 4 = 650 against the fp_add port 1000*1 -> 1000.
     * T = max(1220, 1000). */
    assert_near(r.mem_cycles, 1220, 1e-9);
    assert_near(r.cpu_cycles, 1000, 1e-9);
    assert_near(r.total_cycles, 1220, 1e-9);
    assert_near(r.total_seconds, 1220 / 2e9, 1e-18);

    /* two cores split the work: every term halves */
    in.cores = 2;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.total_cycles, 610, 1e-9);
    in.cores = 1;

    /* mlp: one miss in flight exposes every latency */
    m.mlp = 1;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.mem_cycles, 800 + 4200, 1e-9);
    m.mlp = 0;

    /* a fill-bound stream: every access from memory, the fills (100 * 20)
     * outlast the issue (100 * 1) */
    struct pes_runtime_input mem = {.model = PES_RUNTIME_OVERLAP};
    mem.ops[PES_OP_LOAD] = 100;
    assert_int_equal(pes_model_runtime(&m, &mem, &r, NULL), 0);
    assert_near(r.mem_cycles, 2000 + 100 * 200 / 10.0, 1e-9);

    /* issue width: 4000 cheap ops are 1000 cycles at 4 per cycle, 2000 at 2 */
    struct pes_runtime_input cpu = {.model = PES_RUNTIME_OVERLAP};
    cpu.ops[PES_OP_OTHER] = 4000;
    m.op_recip_throughput[PES_OP_OTHER] = 0.1;
    assert_int_equal(pes_model_runtime(&m, &cpu, &r, NULL), 0);
    assert_near(r.cpu_cycles, 1000, 1e-9);
    m.issue_width = 2;
    assert_int_equal(pes_model_runtime(&m, &cpu, &r, NULL), 0);
    assert_near(r.cpu_cycles, 2000, 1e-9);
    /* overlap: the larger of the two is the time, not their sum */
    assert_near(r.total_cycles, 2000, 1e-9);

    /* machine checks and an unknown model */
    struct pes_error err = {0};
    m.issue_width = 0.5;
    assert_int_equal(pes_model_runtime(&m, &cpu, &r, &err), -1);
    assert_non_null(strstr(err.message, "issue_width"));
    m.issue_width = 0;
    cpu.model = (enum pes_runtime_model)7;
    assert_int_equal(pes_model_runtime(&m, &cpu, &r, &err), -1);
    assert_non_null(strstr(err.message, "model"));
    assert_string_equal(pes_runtime_model_name(PES_RUNTIME_PPT), "ppt");
    assert_string_equal(pes_runtime_model_name(PES_RUNTIME_OVERLAP), "overlap");
}

static void test_hit_rates_per_level(void **state)
{
    (void)state;
    /* L1 (private) from one profile, L2 and L3 from others; fully associative
     * levels make the expected values exact counts. */
    struct pes_machine m = toy();
    m.level[0] = (struct pes_cache_config){
        .size = 4 * 64, .ways = 0, .line = 64, .shared = 0, .latency = 4, .recip_throughput = 1};
    m.level[1] = (struct pes_cache_config){
        .size = 16 * 64, .ways = 0, .line = 64, .shared = 0, .latency = 12, .recip_throughput = 2};
    m.level[2] = (struct pes_cache_config){
        .size = 64 * 64, .ways = 0, .line = 64, .shared = 1, .latency = 40, .recip_throughput = 4};
    static struct pes_reuse_profile prd, crd;
    pes_profile_init(&prd);
    pes_profile_init(&crd);
    pes_profile_add(&prd, 2, 5);   /* hits L1 */
    pes_profile_add(&prd, 10, 3);  /* hits L2 */
    pes_profile_add(&prd, 100, 2); /* misses L1, L2 */
    pes_profile_add(&crd, 3, 4);
    pes_profile_add(&crd, 40, 4); /* hits L3 */
    pes_profile_add(&crd, PES_DISTANCE_COLD, 2);
    const struct pes_reuse_profile *prof[PES_MAX_LEVELS] = {&prd, &prd, &crd};
    double hit[PES_MAX_LEVELS];
    assert_int_equal(pes_model_hit_rates(&m, prof, hit, NULL), 0);
    assert_near(hit[0], 0.5, 1e-15);
    assert_near(hit[1], 0.8, 1e-15);
    assert_near(hit[2], 0.8, 1e-15); /* CRD gives 0.8 */
    /* a CRD that looks worse than L2 is lifted to L2's rate (monotone) */
    pes_profile_add(&crd, PES_DISTANCE_COLD, 10);
    assert_int_equal(pes_model_hit_rates(&m, prof, hit, NULL), 0);
    assert_near(hit[2], 0.8, 1e-15);
    prof[1] = NULL;
    struct pes_error err = {0};
    assert_int_equal(pes_model_hit_rates(&m, prof, hit, &err), -1);
    assert_non_null(strstr(err.message, "L2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eq6_eq7),
        cmocka_unit_test(test_runtime_eq4_eq5_eq8),
        cmocka_unit_test(test_runtime_overlap),
        cmocka_unit_test(test_hit_rates_per_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
