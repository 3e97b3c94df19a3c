/*
 * stencil1d_redblack — 1-D Gauss-Seidel in place, red-black ordering: odd
 * points then even points, each half-sweep reading the other colour.
 * Why: in-place updates (one array) give shorter reuse than Jacobi and the
 * boundary line is written by one thread and read by its neighbour in every
 * half-sweep (a Gauss-Seidel-like halo).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 8192, n = per * c.threads + 2;
    long steps = c.scale * 1000 / (4 * per);
    if (steps < 1) steps = 1;
    long *a = corpus_alloc(n * sizeof *a);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) a[i] = (long)(corpus_rand(&s) % 100000);
    for (long t = 0; t < steps; t++) {
        for (int colour = 1; colour >= 0; colour--) {
#pragma omp parallel for schedule(static)
            for (long i = 1; i < n - 1; i++)
                if ((i & 1) == colour) a[i] = (a[i - 1] + 2 * a[i] + a[i + 1]) / 4;
        }
    }
    uint64_t h = 0;
    for (long i = 0; i < n; i++) h = corpus_mix(h, (uint64_t)a[i]);
    corpus_done("stencil1d_redblack", &c, h);
    free(a);
    return 0;
}
