/* Dot product and sum of squares with OpenMP reductions, repeated passes. */
#include "kernel_common.h"

static double dot(long n, const double *restrict x, const double *restrict y) {
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (long i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 60000, 1L << 22);
    long passes = 8;
    double *x = kernel_alloc(sizeof(double) * n);
    double *y = kernel_alloc(sizeof(double) * n);
    for (long i = 0; i < n; i++) {
        x[i] = (double)(i % 31) / 31.0;
        y[i] = (double)(i % 37) / 37.0;
    }
    double s = 0.0;
    kernel_region_begin();
    for (long p = 0; p < passes; p++) s += dot(n, x, y) + dot(n, x, x);
    kernel_region_end();
    printf("reduction n=%ld passes=%ld result=%.6e\n", n, passes, s);
    free(x); free(y);
    return 0;
}
