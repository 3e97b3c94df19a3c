/* Lower-triangular solve L x = b for several right-hand sides (forward
 * substitution); OpenMP over right-hand sides, each solve is sequential. */
#include "kernel_common.h"

static void trisolv(long n, long nrhs, const double *restrict l, double *restrict x,
                    const double *restrict b) {
#pragma omp parallel for schedule(static)
    for (long r = 0; r < nrhs; r++) {
        double *xr = x + r * n;
        const double *br = b + r * n;
        for (long i = 0; i < n; i++) {
            double s = br[i];
            for (long j = 0; j < i; j++) s -= l[i * n + j] * xr[j];
            xr[i] = s / l[i * n + i];
        }
    }
}

int main(int argc, char **argv) {
    long n = kernel_size(argc, argv, 120, 1536);
    long nrhs = 8;
    double *l = kernel_alloc(sizeof(double) * n * n);
    double *x = kernel_alloc(sizeof(double) * n * nrhs);
    double *b = kernel_alloc(sizeof(double) * n * nrhs);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) l[i * n + j] = j > i ? 0.0 : (i == j ? 2.0 + i % 3 : 0.01 * ((i + j) % 5));
    for (long i = 0; i < n * nrhs; i++) b[i] = 1.0 + (double)(i % 9);
    kernel_region_begin();
    trisolv(n, nrhs, l, x, b);
    kernel_region_end();
    printf("trisolv n=%ld nrhs=%ld checksum=%.6e\n", n, nrhs, kernel_checksum(x, n * nrhs));
    free(l); free(x); free(b);
    return 0;
}
