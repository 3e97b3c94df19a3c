/*
 * spmv_csr_random — repeated y = A x with A in CSR form, row lengths drawn
 * from 1..63 (irregular), column indices uniform at random; rows split
 * statically, so threads get unequal work.
 * Why: indirect, irregular reads of a shared vector (the x gathers) next to
 * streaming reads of the matrix: two very different reuse populations.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    /* about 98 n accesses per product (3 per nonzero, 32 nonzeros a row):
     * n sized for four products, so the serial setup does not dominate */
    long n = c.scale * 1000 * c.threads / (4 * 98);
    if (n < 1000) n = 1000;
    uint64_t s = c.seed;
    long *rowptr = corpus_alloc((n + 1) * sizeof *rowptr);
    for (long i = 0; i < n; i++) rowptr[i + 1] = rowptr[i] + 1 + (long)(corpus_rand(&s) % 63);
    long nnz = rowptr[n];
    int *col = corpus_alloc(nnz * sizeof *col);
    double *val = corpus_alloc(nnz * sizeof *val), *x = corpus_alloc(n * sizeof *x), *y = corpus_alloc(n * sizeof *y);
    for (long k = 0; k < nnz; k++) {
        col[k] = (int)(corpus_rand(&s) % (uint64_t)n);
        val[k] = (double)(corpus_rand(&s) % 100) / 100.0;
    }
    for (long i = 0; i < n; i++) x[i] = 1.0 / (1 + i % 7);
    long iters = c.scale * 1000 * c.threads / (3 * nnz);
    if (iters < 1) iters = 1;
    for (long it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) {
            double acc = 0;
            for (long k = rowptr[i]; k < rowptr[i + 1]; k++) acc += val[k] * x[col[k]];
            y[i] = acc;
        }
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) x[i] = y[i] / 32.0 + 0.5;
    }
    uint64_t h = 0;
    for (long i = 0; i < n; i++) h = corpus_mix(h, corpus_fix(x[i]));
    corpus_done("spmv_csr_random", &c, h);
    free(rowptr); free(col); free(val); free(x); free(y);
    return 0;
}
