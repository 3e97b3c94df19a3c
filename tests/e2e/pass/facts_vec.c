/*
 * facts_vec.c — lanes against instructions (pes_bb.ops against
 * pes_bb.instrs) in vectorised loops, built at -O2 with
 * -mllvm -force-vector-width=4 -mllvm -force-vector-interleave=1, so each
 * vector.body works on 4 elements with one copy of the body. By hand, from
 * clang-19's vector.body:
 *   axpy  y[i] = a * x[i] + y[i] (doubles): one fmuladd <4 x double>:
 *         ops fp_mul 4, fp_add 4 (per lane); instrs fp_mul 1, fp_add 1. Loads
 *         and stores count per instruction in both (2 and 1). The index
 *         add is scalar (int_add 1 in both); chain {int_add 1}: nothing else
 *         is carried (y[i] is read and written in the same iteration).
 *         vector.body runs N / 4 times.
 *   isum  s += v[i] (ints): add <4 x i32> plus the scalar index add:
 *         ops int_add 4 + 1 = 5, instrs 2; the chain is one add either way:
 *         {int_add 1} (a vector accumulator, no longer per vector iteration).
 */
#include "pass_check.h"

#define N 400 /* a multiple of 4: the scalar remainder loop does not run */

double x[N], y[N];
int v[N];

__attribute__((noinline)) void axpy(double a, const double *restrict xs, double *restrict ys, int n) {
    for (int i = 0; i < n; i++)
        ys[i] = a * xs[i] + ys[i];
}

__attribute__((noinline)) int isum(const int *vs, int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += vs[i];
    return s;
}

/* The block labelled `label` in `function`, and its entry count. */
struct find {
    const char *function, *label;
    const struct pes_rt_bb *bb;
    unsigned long long entries;
};

NOINSTR static void find_visit(const struct mock_rec *r, void *p) {
    struct find *f = (struct find *)p;
    if (!r->site && r->bb && r->bb == f->bb)
        f->entries++;
}

NOINSTR static struct find find_block(const char *function, const char *label) {
    struct find f = {function, label, NULL, 0};
    for (int i = 0; i < mock_modules(); i++) {
        const struct pes_rt_module *m = mock_module(i);
        for (uint32_t b = 0; b < m->n_bbs; b++)
            if (!strcmp(mock_str(m, m->bbs[b].function), function) &&
                !strcmp(mock_str(m, m->bbs[b].label), label))
                f.bb = &m->bbs[b];
    }
    if (f.bb)
        mock_foreach(find_visit, &f);
    return f;
}

NOINSTR static void check_counts(const char *what, const uint32_t *got, const unsigned *want) {
    char name[96];
    for (int c = 0; c < PES_OP_COUNT; c++) {
        snprintf(name, sizeof name, "%s[%d]", what, c);
        CHECK_EQ(name, got[c], want[c]);
    }
}

NOINSTR static int run_checks(void) {
    struct find f = find_block("axpy", "vector.body");
    CHECK("axpy has a vector.body", f.bb != NULL);
    if (f.bb) {
        CHECK_EQ("axpy vector.body entries", f.entries, N / 4);
        CHECK_EQ("axpy ops fp_mul", f.bb->ops[PES_OP_FP_MUL], 4);
        CHECK_EQ("axpy ops fp_add", f.bb->ops[PES_OP_FP_ADD], 4);
        CHECK_EQ("axpy instrs fp_mul", f.bb->instrs[PES_OP_FP_MUL], 1);
        CHECK_EQ("axpy instrs fp_add", f.bb->instrs[PES_OP_FP_ADD], 1);
        CHECK_EQ("axpy ops load", f.bb->ops[PES_OP_LOAD], 2);
        CHECK_EQ("axpy instrs load", f.bb->instrs[PES_OP_LOAD], 2);
        CHECK_EQ("axpy instrs store", f.bb->instrs[PES_OP_STORE], 1);
        CHECK_EQ("axpy ops int_add", f.bb->ops[PES_OP_INT_ADD], 1);
        CHECK_EQ("axpy instrs int_add", f.bb->instrs[PES_OP_INT_ADD], 1);
        check_counts("axpy chain", f.bb->chain, (unsigned[PES_OP_COUNT]){[PES_OP_INT_ADD] = 1});
    }
    f = find_block("isum", "vector.body");
    CHECK("isum has a vector.body", f.bb != NULL);
    if (f.bb) {
        CHECK_EQ("isum vector.body entries", f.entries, N / 4);
        CHECK_EQ("isum ops int_add", f.bb->ops[PES_OP_INT_ADD], 5);
        CHECK_EQ("isum instrs int_add", f.bb->instrs[PES_OP_INT_ADD], 2);
        check_counts("isum chain", f.bb->chain, (unsigned[PES_OP_COUNT]){[PES_OP_INT_ADD] = 1});
    }
    return check_done();
}

int main(int argc, char **argv) {
    (void)argv;
    int n = N + argc - 1;
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 1;
        v[i] = i;
    }
    axpy(2, x, y, n);
    if (y[N - 1] != 2.0 * (N - 1) + 1 || isum(v, n) != N * (N - 1) / 2)
        return 2;
    return run_checks();
}
