/*
 * stencil2d_ghost_copy — 2-D Jacobi where each thread keeps its band in a
 * private buffer with two ghost rows, and after each sweep copies its edge
 * rows into shared mailboxes that the neighbours copy into their ghosts
 * (an MPI-style halo exchange done through shared memory).
 * Why: communication happens only in explicit copy phases, through buffers
 * written by one thread and read by exactly one other.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long w = 128, rows = 32;
    long steps = c.scale * 1000 / (6 * rows * w + 4 * w);
    if (steps < 1) steps = 1;
    int nt = c.threads;
    /* mailbox[t][0]: thread t's top row, [1]: its bottom row */
    double *mail = corpus_alloc((size_t)nt * 2 * w * sizeof *mail);
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        double *a = corpus_alloc((rows + 2) * w * sizeof *a), *b = corpus_alloc((rows + 2) * w * sizeof *b);
        uint64_t s = c.seed * 1000 + (uint64_t)t;
        for (long i = 0; i < (rows + 2) * w; i++) a[i] = b[i] = (double)(corpus_rand(&s) % 1000);
        for (long k = 0; k < steps; k++) {
            for (long i = 1; i <= rows; i++)
                for (long j = 1; j < w - 1; j++)
                    b[i * w + j] = 0.2 * (a[i * w + j] + a[i * w + j - 1] + a[i * w + j + 1] +
                                          a[(i - 1) * w + j] + a[(i + 1) * w + j]);
            double *x = a; a = b; b = x;
            memcpy(&mail[(t * 2 + 0) * w], &a[1 * w], w * sizeof *a);
            memcpy(&mail[(t * 2 + 1) * w], &a[rows * w], w * sizeof *a);
#pragma omp barrier
            if (t > 0) memcpy(&a[0], &mail[((t - 1) * 2 + 1) * w], w * sizeof *a);
            if (t < nt - 1) memcpy(&a[(rows + 1) * w], &mail[((t + 1) * 2 + 0) * w], w * sizeof *a);
#pragma omp barrier
        }
        uint64_t h = (uint64_t)t;
        for (long i = 0; i < (rows + 2) * w; i++) h = corpus_mix(h, corpus_fix(a[i]));
        total ^= h;
        free(a); free(b);
    }
    corpus_done("stencil2d_ghost_copy", &c, total);
    free(mail);
    return 0;
}
