/*
 * facts.c — the block facts of the runtime model (pes/trace.h, struct pes_bb:
 * forks, barriers, instrs, chain; docs/llvm-pass.md "Block facts"), checked
 * against values derived by hand from the source and clang-19's code for it.
 * Run with OMP_NUM_THREADS=2.
 *
 * Loop-carried chains, -O2 (unrolling and vectorising off by pragma; the one
 * latch of each loop executes once per iteration):
 *   dot      s += a[i] * b[i]  -> fmuladd(a[i], b[i], s): s reaches the next
 *            iteration through the addend only: {fp_add 1}; the counter's
 *            {int_add 1} is shorter. Its latch (the whole loop body) also has
 *            ops == instrs: 2 loads, 1 fmuladd (fp_mul 1, fp_add 1), 1 add,
 *            2 GEPs and 1 compare (other 3), 1 branch.
 *   recur    x = x * c + d     -> fmuladd(x, c, d): through the multiplicand:
 *            {fp_mul 1, fp_add 1}
 *   two_acc  s0 += a[i]; s1 += a[i + 1]: two independent adds, so one fp add
 *            per iteration: {fp_add 1} (clang-19 pairs them into one
 *            fadd <2 x double>, which is also 1: instructions, not lanes)
 *   chase    p = p->next (next at offset 0): {load 1}, over the count's add
 *   count    only a counter (the body stores to a volatile): {int_add 1}
 * At -O0 every value lives in memory: no chain anywhere.
 *
 * OpenMP (-O0 and -O2 alike: clang emits these calls before optimising).
 * A region counts in its body's entry block (forks 1 in each outlined
 * function passed to __kmpc_fork_call, 0 in the function that forks), which
 * each thread of the team enters once per region; thread 1 below is the
 * initial thread (main's records come first), the team's master:
 *   phases       one parallel region: forks 1 in phases.omp_outlined, 0 in
 *                phases; entered twice (2 threads), once by the master. Its
 *                body runs T_STEPS steps of an `omp for` without nowait (its
 *                __kmpc_barrier) and a `#pragma omp barrier`: 2 barriers in
 *                phases.omp_outlined, executed T_STEPS x 2 times per thread
 *   reduce       `omp for reduction(+:r)` without nowait inside a region:
 *                __kmpc_reduce (a barrier) + the loop's __kmpc_barrier = 2;
 *                forks 1 in reduce.omp_outlined
 *   nested       parallel for inside a parallel for: forks 1 in
 *                nested.omp_outlined (entered twice, once by the master) and
 *                1 in nested.omp_outlined.omp_outlined, entered once per
 *                outer iteration (the inner region is serialised: its
 *                encountering thread runs it): OUTER = 4 in all, 2 by the
 *                master (schedule static: iterations 0 and 1); none in
 *                nested; no barrier call (the region's end barrier is
 *                inside the fork call)
 * Every block of every module has PES_BB_MODEL_FACTS (the mock checks at
 * registration, with instrs <= ops).
 */
#include "pass_check.h"

#define N 300
#define T_STEPS 5
#define OUTER 4
#define NOVEC _Pragma("clang loop vectorize(disable) interleave(disable) unroll(disable)")

double va[N], vb[N], shared_a[64], shared_r;
volatile int sink[N];

struct node {
    struct node *next;
    long pad;
};
struct node nodes[N];

__attribute__((noinline)) double dot(const double *a, const double *b, int n) {
    double s = 0;
    NOVEC for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

__attribute__((noinline)) double recur(double x, double c, double d, int n) {
    NOVEC for (int i = 0; i < n; i++) x = x * c + d;
    return x;
}

__attribute__((noinline)) double two_acc(const double *a, int n) {
    double s0 = 0, s1 = 0;
    NOVEC for (int i = 0; i < n; i += 2) {
        s0 += a[i];
        s1 += a[i + 1];
    }
    return s0 + s1;
}

__attribute__((noinline)) int chase(struct node *p) {
    int k = 0;
    NOVEC while (p) {
        p = p->next;
        k++;
    }
    return k;
}

__attribute__((noinline)) void count(int n) {
    NOVEC for (int i = 0; i < n; i++) sink[i] = 0;
}

__attribute__((noinline)) void phases(void) {
#pragma omp parallel
    {
        for (int t = 0; t < T_STEPS; t++) {
#pragma omp for
            for (int i = 0; i < 64; i++)
                shared_a[i] += 1;
#pragma omp barrier
        }
    }
}

__attribute__((noinline)) void reduce(void) {
#pragma omp parallel
    {
#pragma omp for reduction(+ : shared_r)
        for (int i = 0; i < 64; i++)
            shared_r += shared_a[i];
    }
}

__attribute__((noinline)) void nested(void) {
#pragma omp parallel for
    for (int i = 0; i < OUTER; i++) {
#pragma omp parallel for
        for (int j = 0; j < 64; j++)
            shared_a[j] += i;
    }
}

/* The static facts of one function's blocks, and how often they ran. */
struct facts {
    const char *function;
    unsigned blocks, forks, barriers, chain_blocks;
    const struct pes_rt_bb *latch; /* the (last) block with a nonzero chain */
    unsigned long long latch_entries, fork_calls, barrier_calls;
    unsigned long long master_forks; /* fork_calls of thread 1 */
};

NOINSTR static int has_chain(const struct pes_rt_bb *b) {
    for (int c = 0; c < PES_OP_COUNT; c++)
        if (b->chain[c])
            return 1;
    return 0;
}

NOINSTR static void facts_visit(const struct mock_rec *r, void *p) {
    struct facts *f = (struct facts *)p;
    if (r->site || !r->bb || strcmp(mock_str(r->module, r->bb->function), f->function) != 0)
        return; /* only block entry records of the function */
    f->fork_calls += r->bb->forks;
    if (r->thread == 1)
        f->master_forks += r->bb->forks;
    f->barrier_calls += r->bb->barriers;
    if (r->bb == f->latch)
        f->latch_entries++;
}

NOINSTR static struct facts facts_of(const char *function) {
    struct facts f;
    memset(&f, 0, sizeof f);
    f.function = function;
    for (int i = 0; i < mock_modules(); i++) {
        const struct pes_rt_module *m = mock_module(i);
        for (uint32_t b = 0; b < m->n_bbs; b++) {
            const struct pes_rt_bb *bb = &m->bbs[b];
            if (strcmp(mock_str(m, bb->function), function) != 0)
                continue;
            f.blocks++;
            f.forks += bb->forks;
            f.barriers += bb->barriers;
            if (has_chain(bb)) {
                f.chain_blocks++;
                f.latch = bb;
            }
        }
    }
    mock_foreach(facts_visit, &f);
    return f;
}

/* The chain of f's one latch as {class: count}, all other classes zero. */
NOINSTR static void check_chain(const char *what, const struct facts *f, const unsigned *want) {
    char name[96];
    snprintf(name, sizeof name, "%s: one block with a chain", what);
    CHECK_EQ(name, f->chain_blocks, 1);
    if (!f->latch)
        return;
    for (int c = 0; c < PES_OP_COUNT; c++) {
        snprintf(name, sizeof name, "%s: chain[%d]", what, c);
        CHECK_EQ(name, f->latch->chain[c], want[c]);
    }
}

NOINSTR static int run_checks(int optimized) {
    struct facts f;
    const char *straight[] = {"dot", "recur", "two_acc", "chase", "count"};
    for (unsigned k = 0; k < sizeof straight / sizeof straight[0]; k++) {
        f = facts_of(straight[k]);
        CHECK("function has blocks", f.blocks > 0);
        CHECK_EQ("no forks outside OpenMP", f.forks, 0);
        CHECK_EQ("no barriers outside OpenMP", f.barriers, 0);
        if (!optimized)
            CHECK_EQ("-O0: no register chain", f.chain_blocks, 0);
    }
    if (optimized) {
        f = facts_of("dot");
        check_chain("dot", &f, (unsigned[PES_OP_COUNT]){[PES_OP_FP_ADD] = 1});
        CHECK_EQ("dot: latch entries = iterations", f.latch_entries, N);
        if (f.latch) {
            const unsigned want[PES_OP_COUNT] = {[PES_OP_LOAD] = 2,   [PES_OP_FP_MUL] = 1,
                                                 [PES_OP_FP_ADD] = 1, [PES_OP_INT_ADD] = 1,
                                                 [PES_OP_OTHER] = 3,  [PES_OP_BRANCH] = 1};
            for (int c = 0; c < PES_OP_COUNT; c++) {
                CHECK_EQ("dot latch ops", f.latch->ops[c], want[c]);
                CHECK_EQ("dot latch instrs", f.latch->instrs[c], want[c]);
            }
        }
        f = facts_of("recur");
        check_chain("recur", &f,
                    (unsigned[PES_OP_COUNT]){[PES_OP_FP_MUL] = 1, [PES_OP_FP_ADD] = 1});
        CHECK_EQ("recur: latch entries = iterations", f.latch_entries, N);
        f = facts_of("two_acc");
        check_chain("two_acc", &f, (unsigned[PES_OP_COUNT]){[PES_OP_FP_ADD] = 1});
        CHECK_EQ("two_acc: latch entries = iterations", f.latch_entries, N / 2);
        if (f.latch) { /* the pair of adds as one <2 x double> fadd */
            CHECK_EQ("two_acc ops fp_add (lanes)", f.latch->ops[PES_OP_FP_ADD], 2);
            CHECK_EQ("two_acc instrs fp_add", f.latch->instrs[PES_OP_FP_ADD], 1);
        }
        f = facts_of("chase");
        check_chain("chase", &f, (unsigned[PES_OP_COUNT]){[PES_OP_LOAD] = 1});
        CHECK_EQ("chase: latch entries = list length", f.latch_entries, N);
        f = facts_of("count");
        check_chain("count", &f, (unsigned[PES_OP_COUNT]){[PES_OP_INT_ADD] = 1});
        CHECK_EQ("count: latch entries = iterations", f.latch_entries, N);
    }

    int threads = mock_threads();
    CHECK_EQ("threads (main + 1 worker)", threads, 2);
    f = facts_of("phases");
    CHECK_EQ("phases: forks", f.forks, 0);
    CHECK_EQ("phases: barriers", f.barriers, 0);
    f = facts_of("phases.omp_outlined");
    CHECK_EQ("phases region: forks", f.forks, 1);
    CHECK_EQ("phases region: entries, all threads", f.fork_calls, 2);
    CHECK_EQ("phases region: entries, master", f.master_forks, 1);
    CHECK_EQ("phases region: barriers", f.barriers, 2);
    CHECK_EQ("phases region: barrier calls", f.barrier_calls, 2ull * T_STEPS * 2);
    f = facts_of("reduce");
    CHECK_EQ("reduce: forks", f.forks, 0);
    f = facts_of("reduce.omp_outlined");
    CHECK_EQ("reduce region: forks", f.forks, 1);
    CHECK_EQ("reduce region: entries, master", f.master_forks, 1);
    CHECK_EQ("reduce region: barriers (reduce + loop end)", f.barriers, 2);
    CHECK_EQ("reduce region: barrier calls", f.barrier_calls, 2ull * 2);
    f = facts_of("nested");
    CHECK_EQ("nested: forks", f.forks, 0);
    CHECK_EQ("nested: barriers", f.barriers, 0);
    f = facts_of("nested.omp_outlined");
    CHECK_EQ("nested outer region: forks", f.forks, 1);
    CHECK_EQ("nested outer region: entries, all threads", f.fork_calls, 2);
    CHECK_EQ("nested outer region: entries, master", f.master_forks, 1);
    CHECK_EQ("nested outer region: barriers", f.barriers, 0);
    f = facts_of("nested.omp_outlined.omp_outlined");
    CHECK_EQ("nested inner region: forks", f.forks, 1);
    CHECK_EQ("nested inner region: entries, all threads", f.fork_calls, OUTER);
    CHECK_EQ("nested inner region: entries, master", f.master_forks, OUTER / 2);
    CHECK_EQ("nested inner region: barriers", f.barriers, 0);
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    int n = N + argc - 1;
    for (int i = 0; i < N; i++) {
        va[i] = i;
        vb[i] = 2;
        nodes[i].next = i + 1 < N ? &nodes[i + 1] : NULL;
    }
    if (dot(va, vb, n) != (double)N * (N - 1))
        return 2;
    if (recur(1, 1, 1, n) != N + 1)
        return 2;
    if (two_acc(va, n) != (double)N * (N - 1) / 2)
        return 2;
    if (chase(&nodes[0]) != N)
        return 2;
    count(n);
    phases();
    reduce();
    nested();
#ifdef __OPTIMIZE__
    return run_checks(1);
#else
    return run_checks(0);
#endif
}
