/*
 * stencil1d_jacobi — 1-D three-point Jacobi sweep, two arrays, each thread
 * owns a contiguous block; the block edges are the halo its neighbours read.
 * Why: the simplest halo exchange: nearly all reuse is private and short,
 * and only the two cache lines at each block boundary move between threads.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 4096, n = per * c.threads + 2;
    long steps = c.scale * 1000 / (4 * per);
    if (steps < 1) steps = 1;
    double *a = corpus_alloc(n * sizeof *a), *b = corpus_alloc(n * sizeof *b);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) a[i] = b[i] = (double)(corpus_rand(&s) % 1000);
    for (long t = 0; t < steps; t++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
        double *x = a; a = b; b = x;
    }
    uint64_t h = 0;
    for (long i = 0; i < n; i++) h = corpus_mix(h, corpus_fix(a[i]));
    corpus_done("stencil1d_jacobi", &c, h);
    free(a); free(b);
    return 0;
}
