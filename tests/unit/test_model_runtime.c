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

/* The base case of test_runtime_overlap: 1000 accesses (L2 serves 50, L3 40,
 * memory 10), 1000 fp_add, 600 int_add on the toy machine: T_mem 1220
 * (issue 800 + exposed 420), T_cpu 1000. */
static struct pes_runtime_input overlap_base(void)
{
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
    return in;
}

static void curve(struct pes_thread_curve *c, uint32_t n, const uint32_t *t, const double *v)
{
    c->n = n;
    for (uint32_t i = 0; i < n; i++)
        c->threads[i] = t[i], c->value[i] = v[i];
}

/* Without facts or machine values every new term is 0 and the prediction is
 * exactly today's (the goldens rely on it): facts known but no machine
 * values, and machine values but no facts, both give the base case. */
static void test_terms_off(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    struct pes_runtime_input in = overlap_base();
    struct pes_runtime base, r;
    assert_int_equal(pes_model_runtime(&m, &in, &base, NULL), 0);
    assert_near(base.total_cycles, 1220, 1e-9);
    assert_int_equal(base.bounds, PES_TERM_COMPUTE); /* 1000 > issue 800 > exposed 420 */
    assert_near(base.term[PES_TERM_ISSUE], 800, 1e-9);
    assert_near(base.term[PES_TERM_FILL], 200, 1e-9);
    assert_near(base.term[PES_TERM_EXPOSED], 420, 1e-9);
    for (int t = PES_TERM_CHAIN; t < PES_TERM_COUNT; t++)
        if (t != PES_TERM_ISSUE && t != PES_TERM_FILL && t != PES_TERM_EXPOSED)
            assert_true(base.term[t] == 0);
    /* a machine with every new value, a trace without facts */
    static const uint32_t th[] = {1, 4};
    static const double v[] = {1000, 4000};
    curve(&m.fork_join, 2, th, v);
    curve(&m.barrier, 2, th, v);
    curve(&m.mem_bandwidth, 2, th, v);
    m.tlb_entries = 64, m.tlb_page = 4096, m.tlb_miss_latency = 30, m.prefetch_max_stride = 256;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    /* bandwidth 10 lines * 64 B / 1000 B per cycle = 0.64 cycles: below the
     * fills, so the total is still exactly the base */
    assert_true(r.total_cycles == base.total_cycles && r.mem_cycles == base.mem_cycles &&
                r.cpu_cycles == base.cpu_cycles);
    /* facts known, a machine without the values */
    m = toy();
    in.known = PES_RUNTIME_KNOW_BB_FACTS | PES_RUNTIME_KNOW_TLB | PES_RUNTIME_KNOW_PREFETCH;
    memcpy(in.instrs, in.ops, sizeof in.instrs);
    in.forks = 5, in.barriers = 7, in.tlb_misses = 100, in.prefetched = 1;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_true(r.total_cycles == base.total_cycles && r.mem_cycles == base.mem_cycles);
    /* bad facts are named */
    struct pes_error err = {0};
    in.prefetched = 1.5;
    assert_int_equal(pes_model_runtime(&m, &in, &r, &err), -1);
    assert_non_null(strstr(err.message, "prefetched"));
    in.prefetched = 0;
    in.forks = -1;
    assert_int_equal(pes_model_runtime(&m, &in, &r, &err), -1);
    in.forks = 0;
    in.known = 64;
    assert_int_equal(pes_model_runtime(&m, &in, &r, &err), -1);
    assert_non_null(strstr(err.message, "facts"));
    assert_string_equal(pes_runtime_term_name(PES_TERM_PARALLEL), "parallel");
    assert_null(pes_runtime_term_name(PES_TERM_COUNT));
}

/* 1. fork/join and barriers: every core waits out each of them. */
static void test_term_parallel(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    static const uint32_t th[] = {1, 2, 4};
    static const double fj[] = {500, 1000, 3000}, bar[] = {100, 300, 700};
    curve(&m.fork_join, 3, th, fj);
    curve(&m.barrier, 3, th, bar);
    struct pes_runtime_input in = overlap_base();
    in.known = PES_RUNTIME_KNOW_BB_FACTS;
    memcpy(in.instrs, in.ops, sizeof in.instrs);
    in.forks = 2;
    in.barriers = 3;
    struct pes_runtime r;
    /* 2 cores: base 610 + 2 * 1000 + 3 * 300 = 610 + 2900 = 3510 */
    in.cores = 2;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_PARALLEL], 2900, 1e-9);
    assert_near(r.total_cycles, 3510, 1e-9);
    assert_int_equal(r.bounds, PES_TERM_PARALLEL);
    /* 3 cores, between the points: fork/join 2000, barrier 500:
     * 2 * 2000 + 3 * 500 = 5500; the rest 1220 / 3 */
    in.cores = 3;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_PARALLEL], 5500, 1e-9);
    assert_near(r.total_cycles, 1220.0 / 3 + 5500, 1e-9);
}

/* 2. dependence chains: sum of executions x chain ops x latency over cores. */
static void test_term_chain(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    struct pes_runtime_input in = overlap_base();
    in.known = PES_RUNTIME_KNOW_BB_FACTS;
    memcpy(in.instrs, in.ops, sizeof in.instrs);
    /* a reduction: 1000 iterations, each one fp_add (latency 3) on the chain
     * -> 3000 cycles on one core, against compute 1000 and T_mem 1220 */
    in.chain[PES_OP_FP_ADD] = 1000;
    struct pes_runtime r;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_CHAIN], 3000, 1e-9);
    assert_near(r.cpu_cycles, 3000, 1e-9);
    assert_near(r.total_cycles, 3000, 1e-9);
    assert_int_equal(r.bounds, PES_TERM_CHAIN);
    /* plus 10 fp_div (14) on the chain: 3140; over 2 cores 1570 */
    in.chain[PES_OP_FP_DIV] = 10;
    in.cores = 2;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_CHAIN], 1570, 1e-9);
    assert_near(r.total_cycles, 1570, 1e-9);
}

/* 3. vector width: with the facts, instructions issue, not lanes. */
static void test_term_vector(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    struct pes_runtime_input in = overlap_base();
    in.known = PES_RUNTIME_KNOW_BB_FACTS;
    /* 4-lane vectors: 250 fp_add instructions, 150 int_add, 200 loads, 50 stores:
     * compute max(650 / 4, 250 * 1) = 250; issue max(200, 50) = 200;
     * T_mem = max(200, fills 200) + 420 = 620 */
    in.instrs[PES_OP_FP_ADD] = 250;
    in.instrs[PES_OP_INT_ADD] = 150;
    in.instrs[PES_OP_LOAD] = 200;
    in.instrs[PES_OP_STORE] = 50;
    struct pes_runtime r;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_COMPUTE], 250, 1e-9);
    assert_near(r.term[PES_TERM_ISSUE], 200, 1e-9);
    assert_near(r.mem_cycles, 620, 1e-9);
    assert_near(r.total_cycles, 620, 1e-9);
    assert_int_equal(r.bounds, PES_TERM_EXPOSED);
}

/* 3b. compute throughput: compute, issue and chain are split over the
 * threads' worth T threads retire together (compute.throughput.<T>), not
 * over T; memory terms and the ppt model keep T. */
static void test_term_compute_throughput(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    struct pes_runtime_input in = overlap_base();
    struct pes_runtime plain, r;
    in.cores = 2;
    assert_int_equal(pes_model_runtime(&m, &in, &plain, NULL), 0);
    assert_near(plain.total_cycles, 610, 1e-9); /* 1220 / 2 without the curve */
    static const uint32_t th[] = {1, 2, 4};
    static const double v[] = {1, 1.25, 2};
    curve(&m.compute_throughput, 3, th, v);
    /* 2 threads retire 1.25 threads' worth: compute max(2600 / 1.25 / 4,
     * fp_add 1000 / 1.25) = 800; issue 800 loads / 1.25 = 640; fill 100 and
     * exposed 210 as before (per core: 2): T_mem = 640 + 210 = 850 */
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_COMPUTE], 800, 1e-9);
    assert_near(r.term[PES_TERM_ISSUE], 640, 1e-9);
    assert_near(r.term[PES_TERM_FILL], plain.term[PES_TERM_FILL], 1e-9);
    assert_near(r.term[PES_TERM_EXPOSED], 210, 1e-9);
    assert_near(r.total_cycles, 850, 1e-9);
    /* 3 threads: 1.25 + (2 - 1.25) / 2 = 1.625; compute 1000 / 1.625 */
    in.cores = 3;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_COMPUTE], 1000 / 1.625, 1e-9);
    /* 1 thread: 1 thread's worth, exactly the base */
    in.cores = 1;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.total_cycles, 1220, 1e-9);
    /* the chain too: 1000 fp_adds (latency 3) over 1.25 = 2400 at 2 threads */
    in.cores = 2;
    in.known = PES_RUNTIME_KNOW_BB_FACTS;
    memcpy(in.instrs, in.ops, sizeof in.instrs);
    in.chain[PES_OP_FP_ADD] = 1000;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_CHAIN], 2400, 1e-9);
    assert_near(r.total_cycles, 2400, 1e-9);
    assert_int_equal(r.bounds, PES_TERM_CHAIN);
    /* the ppt model does not use it */
    in = overlap_base();
    in.model = PES_RUNTIME_PPT;
    in.cores = 2;
    in.total_mem = 8000;
    struct pes_machine bare = toy();
    assert_int_equal(pes_model_runtime(&bare, &in, &plain, NULL), 0);
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_true(r.total_cycles == plain.total_cycles);
}

/* 4. TLB: misses x walk latency / mlp, split over the cores. */
static void test_term_tlb(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    m.tlb_entries = 64;
    m.tlb_page = 4096;
    m.tlb_miss_latency = 30;
    struct pes_runtime_input in = overlap_base();
    in.known = PES_RUNTIME_KNOW_TLB;
    in.tlb_misses = 200; /* 200 * 30 / 10 = 600: T_mem 1220 + 600 */
    struct pes_runtime r;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_TLB], 600, 1e-9);
    assert_near(r.mem_cycles, 1820, 1e-9);
    in.cores = 2; /* 100 misses per core: 300 */
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_TLB], 300, 1e-9);
    assert_near(r.mem_cycles, 910, 1e-9);
    m.tlb_miss_latency = 0; /* not measured: off */
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.mem_cycles, 610, 1e-9);
}

/* 5. prefetch: the prefetched share of the fills exposes no latency. */
static void test_term_prefetch(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    m.prefetch_max_stride = 2048;
    struct pes_runtime_input in = overlap_base();
    in.known = PES_RUNTIME_KNOW_PREFETCH;
    in.prefetched = 0.75; /* exposed 420 * 0.25 = 105: T_mem 800 + 105 */
    struct pes_runtime r;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_EXPOSED], 105, 1e-9);
    assert_near(r.mem_cycles, 905, 1e-9);
    in.prefetched = 1; /* all hidden: issue bound */
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.mem_cycles, 800, 1e-9);
}

/* 6. bandwidth: the cores' bytes from DRAM over the rate for that many cores. */
static void test_term_bandwidth(void **state)
{
    (void)state;
    struct pes_machine m = toy();
    static const uint32_t th[] = {1, 4};
    static const double dram[] = {0.5, 1.0}; /* bytes per cycle: saturates at 4 cores */
    curve(&m.mem_bandwidth, 2, th, dram);
    struct pes_runtime_input in = overlap_base();
    struct pes_runtime r;
    /* 1 core: 10 lines from memory = 640 B at 0.5 B/cycle = 1280 cycles
     * (more than issue 800): T_mem 1280 + 420 = 1700 */
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_BANDWIDTH], 1280, 1e-9);
    assert_near(r.mem_cycles, 1700, 1e-9);
    assert_int_equal(r.bounds, PES_TERM_BANDWIDTH);
    /* 4 cores and 8 cores: the same 640 B at 1 B/cycle = 640 cycles, so the
     * time stops falling: T_mem 640 + 105 at 4, 640 + 52.5 at 8 */
    in.cores = 4;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.mem_cycles, 745, 1e-9);
    in.cores = 8;
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_BANDWIDTH], 640, 1e-9);
    assert_near(r.mem_cycles, 692.5, 1e-9);
    /* a shared L3 of 2 B/cycle: 40 lines * 64 B = 2560 B -> 1280 cycles at any count */
    static const double l3[] = {2.0};
    curve(&m.level[2].bandwidth, 1, th, l3);
    assert_int_equal(pes_model_runtime(&m, &in, &r, NULL), 0);
    assert_near(r.term[PES_TERM_BANDWIDTH], 1280, 1e-9);
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
        cmocka_unit_test(test_eq6_eq7),         cmocka_unit_test(test_terms_off),
        cmocka_unit_test(test_term_parallel),   cmocka_unit_test(test_term_chain),
        cmocka_unit_test(test_term_vector),     cmocka_unit_test(test_term_compute_throughput),
        cmocka_unit_test(test_term_tlb),        cmocka_unit_test(test_term_prefetch),
        cmocka_unit_test(test_term_bandwidth),  cmocka_unit_test(test_runtime_eq4_eq5_eq8),
        cmocka_unit_test(test_runtime_overlap), cmocka_unit_test(test_hit_rates_per_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
