/* B = A^T, naive and blocked (tile 32), OpenMP over rows. */
#include "kernel_common.h"

enum { TILE = 32 };

static void transpose_naive(long n, double *restrict b, const double *restrict a) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) b[j * n + i] = a[i * n + j];
}

static void transpose_blocked(long n, double *restrict b, const double *restrict a) {
#pragma omp parallel for schedule(static)
    for (long ii = 0; ii < n; ii += TILE)
        for (long jj = 0; jj < n; jj += TILE)
            for (long i = ii; i < ii + TILE && i < n; i++)
                for (long j = jj; j < jj + TILE && j < n; j++) b[j * n + i] = a[i * n + j];
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 120, 2048);
    double *a = kernel_alloc(sizeof(double) * n * n);
    double *b = kernel_alloc(sizeof(double) * n * n);
    for (long i = 0; i < n * n; i++) a[i] = (double)(i % 101);
    kernel_region_begin();
    transpose_naive(n, b, a);
    kernel_region_end();
    double s1 = kernel_checksum(b, n * n);
    transpose_blocked(n, a, b); /* transposing back restores a */
    printf("transpose n=%ld checksum=%.6e %.6e\n", n, s1, kernel_checksum(a, n * n));
    free(a); free(b);
    return 0;
}
