/*
 * stencil2d_halo_rows — 2-D five-point Jacobi on a grid of W columns; each
 * thread owns a band of rows and reads one row above and below its band,
 * which its neighbours write in the previous sweep.
 * Why: the 2-D stencil whose threads share halo rows: whole rows
 * (many lines) change owner each sweep, unlike the 1-D halo's single line.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long w = 256, rows_per = 32, h = rows_per * c.threads + 2;
    long steps = c.scale * 1000 / (6 * rows_per * w);
    if (steps < 1) steps = 1;
    double *a = corpus_alloc(w * h * sizeof *a), *b = corpus_alloc(w * h * sizeof *b);
    uint64_t s = c.seed;
    for (long i = 0; i < w * h; i++) a[i] = b[i] = (double)(corpus_rand(&s) % 1000);
    for (long t = 0; t < steps; t++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < h - 1; i++)
            for (long j = 1; j < w - 1; j++)
                b[i * w + j] = 0.2 * (a[i * w + j] + a[i * w + j - 1] + a[i * w + j + 1] +
                                      a[(i - 1) * w + j] + a[(i + 1) * w + j]);
        double *x = a; a = b; b = x;
    }
    uint64_t sum = 0;
    for (long i = 0; i < w * h; i++) sum = corpus_mix(sum, corpus_fix(a[i]));
    corpus_done("stencil2d_halo_rows", &c, sum);
    free(a); free(b);
    return 0;
}
