/*
 * matmul_tiled — C = A B in 32 x 32 tiles (i-k-j inside a tile), tile rows
 * of C split over threads.
 * Why: tiling makes reuse distances short and bounded by the tile size: the
 * histogram is concentrated below a few KiB, unlike the other two orders.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long bs = 32;
    long n = 32;
    while (3 * (n + 32) * (n + 32) * (n + 32) <= c.scale * 1000 * c.threads) n += 32;
    if (n > 512) n = 512;
    double *a = corpus_alloc(n * n * sizeof *a), *b = corpus_alloc(n * n * sizeof *b), *cm = corpus_alloc(n * n * sizeof *cm);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) { a[i] = (double)(corpus_rand(&s) % 10); b[i] = (double)(corpus_rand(&s) % 10); }
#pragma omp parallel for collapse(2) schedule(static)
    for (long ii = 0; ii < n; ii += bs)
        for (long jj = 0; jj < n; jj += bs)
            for (long kk = 0; kk < n; kk += bs)
                for (long i = ii; i < ii + bs; i++)
                    for (long k = kk; k < kk + bs; k++) {
                        double x = a[i * n + k];
                        for (long j = jj; j < jj + bs; j++) cm[i * n + j] += x * b[k * n + j];
                    }
    uint64_t h = 0;
    for (long i = 0; i < n * n; i++) h = corpus_mix(h, corpus_fix(cm[i]));
    corpus_done("matmul_tiled", &c, h);
    free(a); free(b); free(cm);
    return 0;
}
