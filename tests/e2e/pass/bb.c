/*
 * bb.c — basic-block entry records and static op counts, counted by hand.
 * loop(n): at -O0 clang emits for.cond (entered n+1 times), for.body (n),
 * for.inc (n); at -O2 (unrolling and vectorising disabled by pragma) the
 * block holding the volatile store is still entered n times. nest(n, m):
 * inner body n*m times. fp(): one block with 1 fmul, 1 fdiv, 2 fadd/fsub.
 */
#include "pass_check.h"

#define N 300
#define M 7
enum { L_COND = 21, L_INC = 22, L_BODY = 23, L_NEST = 32, L_FP = 39 };

volatile int g[N];
volatile double x = 3.0, y = 2.0;

__attribute__((noinline)) void loop(int n) {
    _Static_assert(__LINE__ + 3 == L_COND && __LINE__ + 4 == L_INC, "L_COND, L_INC");
#pragma clang loop unroll(disable) vectorize(disable)
    for (int i = 0;
         i < n;
         i++) {
        g[i] = i; _Static_assert(__LINE__ == L_BODY, "");
    }
}

__attribute__((noinline)) void nest(int n, int m) {
#pragma clang loop unroll(disable) vectorize(disable)
    for (int i = 0; i < n; i++) {
#pragma clang loop unroll(disable) vectorize(disable)
        for (int j = 0; j < m; j++) {
            g[j] += 1; _Static_assert(__LINE__ == L_NEST, "");
        }
    }
}

__attribute__((noinline)) double fp(void) {
    double a = x, b = y;
    return a * b + a / b - b; _Static_assert(__LINE__ == L_FP, "");
}

NOINSTR static const char *label(const struct pes_rt_module *m, const struct pes_rt_bb *bb) {
    return m && bb ? mock_str(m, bb->label) : "?";
}

NOINSTR static int run_checks(int optimized) {
    const struct pes_rt_bb *bb = NULL;
    const struct pes_rt_module *m = NULL;
    long long e = bb_entries((struct sel){.function = "loop", .line = L_BODY,
                                          .kind = PES_KIND_STORE, .need_flags = PES_SITE_VOLATILE},
                             &bb, &m);
    CHECK_EQ("loop body entries", e, N);
    CHECK_EQ("loop body not parallel", bb ? bb->flags & PES_BB_PARALLEL : 99, 0);
    CHECK_EQ("loop body function name", strcmp(mock_str(m, bb->function), "loop"), 0);
    e = bb_entries((struct sel){.function = "nest", .line = L_NEST, .kind = PES_KIND_STORE}, &bb, &m);
    CHECK_EQ("inner body entries", e, N * M);
    if (!optimized) {
        e = bb_entries((struct sel){.function = "loop", .line = L_BODY, .kind = PES_KIND_STORE},
                       &bb, &m);
        CHECK_EQ("for.body label", strcmp(label(m, bb), "for.body"), 0);
        e = bb_entries((struct sel){.function = "loop", .line = L_COND, .kind = PES_KIND_LOAD},
                       &bb, &m);
        CHECK_EQ("for.cond entries", e, N + 1);
        CHECK_EQ("for.cond label", strcmp(label(m, bb), "for.cond"), 0);
        /* for.cond: load i, load n, icmp, br */
        CHECK_EQ("for.cond loads", bb->ops[PES_OP_LOAD], 2);
        CHECK_EQ("for.cond branches", bb->ops[PES_OP_BRANCH], 1);
        CHECK_EQ("for.cond other", bb->ops[PES_OP_OTHER], 1);
        CHECK_EQ("for.cond int adds", bb->ops[PES_OP_INT_ADD], 0);
        CHECK_EQ("for.cond n_sites", bb->n_sites, 2);
        e = bb_entries((struct sel){.function = "loop", .line = L_INC, .kind = PES_KIND_STORE},
                       &bb, &m);
        CHECK_EQ("for.inc entries", e, N);
        CHECK_EQ("for.inc label", strcmp(label(m, bb), "for.inc"), 0);
        /* for.inc: load i, add, store i, br */
        CHECK_EQ("for.inc loads", bb->ops[PES_OP_LOAD], 1);
        CHECK_EQ("for.inc int adds", bb->ops[PES_OP_INT_ADD], 1);
        CHECK_EQ("for.inc stores", bb->ops[PES_OP_STORE], 1);
        CHECK_EQ("for.inc branches", bb->ops[PES_OP_BRANCH], 1);
        CHECK_EQ("for.inc other", bb->ops[PES_OP_OTHER], 0);
        CHECK_EQ("for.inc n_sites", bb->n_sites, 2);
    }
    e = bb_entries((struct sel){.function = "fp", .kind = PES_KIND_LOAD,
                                .need_flags = PES_SITE_VOLATILE}, &bb, &m);
    CHECK_EQ("fp entries", e, 1);
    CHECK_EQ("fp fp-mul", bb->ops[PES_OP_FP_MUL], 1);
    CHECK_EQ("fp fp-div", bb->ops[PES_OP_FP_DIV], 1);
    CHECK_EQ("fp fp-add", bb->ops[PES_OP_FP_ADD], 2);
    CHECK_EQ("fp int-mul", bb->ops[PES_OP_INT_MUL], 0);
    CHECK_EQ("fp int-div", bb->ops[PES_OP_INT_DIV], 0);
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    loop(N + argc - 1);
    nest(N + argc - 1, M + argc - 1);
    if (fp() != 3.0 * 2.0 + 1.5 - 2.0)
        return 2;
#ifdef __OPTIMIZE__
    return run_checks(1);
#else
    return run_checks(0);
#endif
}
