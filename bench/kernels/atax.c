/* y = A^T (A x) (PolyBench-style atax): a row-wise then a column-wise sweep. */
#include "kernel_common.h"

static void atax(long n, const double *restrict a, const double *restrict x, double *restrict tmp,
                 double *restrict y) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double s = 0.0;
        for (long j = 0; j < n; j++) s += a[i * n + j] * x[j];
        tmp[i] = s;
    }
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) {
        double s = 0.0;
        for (long i = 0; i < n; i++) s += a[i * n + j] * tmp[i];
        y[j] = s;
    }
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 250, 4096);
    double *a = kernel_alloc(sizeof(double) * n * n);
    double *x = kernel_alloc(sizeof(double) * n);
    double *tmp = kernel_alloc(sizeof(double) * n);
    double *y = kernel_alloc(sizeof(double) * n);
    for (long i = 0; i < n * n; i++) a[i] = (double)(i % 19) / 19.0;
    for (long i = 0; i < n; i++) x[i] = 1.0 + (double)(i % 3);
    kernel_region_begin();
    atax(n, a, x, tmp, y);
    kernel_region_end();
    printf("atax n=%ld checksum=%.6e\n", n, kernel_checksum(y, n));
    free(a); free(x); free(tmp); free(y);
    return 0;
}
