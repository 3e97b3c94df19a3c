/* 5-point Jacobi stencil on an n x n grid, t sweeps, OpenMP over rows. */
#include "kernel_common.h"

static void jacobi2d(long n, long steps, double *restrict a, double *restrict b) {
    for (long t = 0; t < steps; t++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                b[i * n + j] = 0.2 * (a[i * n + j] + a[i * n + j - 1] + a[i * n + j + 1] +
                                      a[(i - 1) * n + j] + a[(i + 1) * n + j]);
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                a[i * n + j] = 0.2 * (b[i * n + j] + b[i * n + j - 1] + b[i * n + j + 1] +
                                      b[(i - 1) * n + j] + b[(i + 1) * n + j]);
    }
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 120, 1024);
    long steps = 10;
    double *a = kernel_alloc(sizeof(double) * n * n);
    double *b = kernel_alloc(sizeof(double) * n * n);
    for (long i = 0; i < n * n; i++) a[i] = b[i] = (double)(i % 23) / 23.0;
    kernel_region_begin();
    jacobi2d(n, steps, a, b);
    kernel_region_end();
    printf("jacobi2d n=%ld steps=%ld checksum=%.6e\n", n, steps, kernel_checksum(a, n * n));
    free(a); free(b);
    return 0;
}
