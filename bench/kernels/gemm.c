/* C = alpha*A*B + beta*C (PolyBench-style gemm), OpenMP over rows of C. */
#include "kernel_common.h"

static void gemm(long n, double alpha, double beta, double *restrict c,
                 const double *restrict a, const double *restrict b) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < n; j++) c[i * n + j] *= beta;
        for (long k = 0; k < n; k++) {
            double aik = alpha * a[i * n + k];
            for (long j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
        }
    }
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 60, 384);
    double *a = kernel_alloc(sizeof(double) * n * n);
    double *b = kernel_alloc(sizeof(double) * n * n);
    double *c = kernel_alloc(sizeof(double) * n * n);
    for (long i = 0; i < n * n; i++) {
        a[i] = (double)(i % 13) / 13.0;
        b[i] = (double)(i % 17) / 17.0;
        c[i] = (double)(i % 11) / 11.0;
    }
    kernel_region_begin();
    gemm(n, 1.5, 1.2, c, a, b);
    kernel_region_end();
    printf("gemm n=%ld checksum=%.6e\n", n, kernel_checksum(c, n * n));
    free(a); free(b); free(c);
    return 0;
}
