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
    /* n a multiple of the tile; products repeated (C accumulates) to reach
     * the wanted accesses, which the cube of n alone meets only coarsely */
    long n = 32;
    while (3 * (n + 32) * (n + 32) * (n + 32) <= c.scale * 1000 * c.threads && n < 128) n += 32;
    long reps = c.scale * 1000 * c.threads / (3 * n * n * n);
    if (reps < 1) reps = 1;
    double *a = corpus_alloc(n * n * sizeof *a), *b = corpus_alloc(n * n * sizeof *b), *cm = corpus_alloc(n * n * sizeof *cm);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) { a[i] = (double)(corpus_rand(&s) % 10); b[i] = (double)(corpus_rand(&s) % 10); }
    for (long r = 0; r < reps; r++)
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
