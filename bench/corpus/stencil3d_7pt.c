/*
 * stencil3d_7pt — 3-D seven-point Jacobi on an n x n x (planes per thread x
 * threads) box, threads own slabs of planes.
 * Why: three reuse distances at once (neighbour in a row, in a plane, across
 * planes: the last is long), and whole planes as halo between slabs.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 40, per = 8, d = per * c.threads + 2, plane = n * n;
    long steps = c.scale * 1000 / (8 * per * plane);
    if (steps < 1) steps = 1;
    float *a = corpus_alloc(d * plane * sizeof *a), *b = corpus_alloc(d * plane * sizeof *b);
    uint64_t s = c.seed;
    for (long i = 0; i < d * plane; i++) a[i] = b[i] = (float)(corpus_rand(&s) % 1000);
    for (long t = 0; t < steps; t++) {
#pragma omp parallel for schedule(static)
        for (long k = 1; k < d - 1; k++)
            for (long i = 1; i < n - 1; i++)
                for (long j = 1; j < n - 1; j++) {
                    long x = k * plane + i * n + j;
                    b[x] = (a[x] + a[x - 1] + a[x + 1] + a[x - n] + a[x + n] + a[x - plane] + a[x + plane]) /
                           7.0f;
                }
        float *x = a; a = b; b = x;
    }
    uint64_t h = 0;
    for (long i = 0; i < d * plane; i++) h = corpus_mix(h, corpus_fix(a[i]));
    corpus_done("stencil3d_7pt", &c, h);
    free(a); free(b);
    return 0;
}
