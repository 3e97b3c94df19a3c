/*
 * stencil2d_redblack — 2-D red-black Gauss-Seidel in place (integer grid):
 * each half-sweep updates one colour from its four neighbours of the other.
 * Why: in-place 2-D updates, stride-2 access within rows, and halo rows that
 * are both read and written by the two threads on either side of a band edge.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long w = 192, rows_per = 24, h = rows_per * c.threads + 2;
    long steps = c.scale * 1000 / (6 * rows_per * w);
    if (steps < 1) steps = 1;
    long *a = corpus_alloc(w * h * sizeof *a);
    uint64_t s = c.seed;
    for (long i = 0; i < w * h; i++) a[i] = (long)(corpus_rand(&s) % 100000);
    for (long t = 0; t < steps; t++)
        for (int colour = 0; colour < 2; colour++) {
#pragma omp parallel for schedule(static)
            for (long i = 1; i < h - 1; i++)
                for (long j = 1 + ((i + colour) & 1); j < w - 1; j += 2)
                    a[i * w + j] = (a[i * w + j - 1] + a[i * w + j + 1] + a[(i - 1) * w + j] +
                                    a[(i + 1) * w + j]) / 4;
        }
    uint64_t sum = 0;
    for (long i = 0; i < w * h; i++) sum = corpus_mix(sum, (uint64_t)a[i]);
    corpus_done("stencil2d_redblack", &c, sum);
    free(a);
    return 0;
}
