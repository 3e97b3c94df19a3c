/*
 * transpose_naive — B = A^T on a 512 x 512 double matrix, row loop parallel:
 * reads of A are sequential, writes to B stride one row (4 KiB) apart.
 * Why: the classic column-stride pattern: each line of B is touched once per
 * row of A, so its reuse distance is a whole row sweep, and lines of B are
 * written by every thread (false sharing at the band edges, 8 per line).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 512;
    long reps = c.scale * 1000 * c.threads / (2 * n * n);
    if (reps < 1) reps = 1;
    double *a = corpus_alloc(n * n * sizeof *a), *b = corpus_alloc(n * n * sizeof *b);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) a[i] = (double)(corpus_rand(&s) % 1000);
    for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++) b[j * n + i] = a[i * n + j] + (double)r;
    }
    uint64_t h = 0;
    for (long i = 0; i < n * n; i++) h = corpus_mix(h, corpus_fix(b[i]));
    corpus_done("transpose_naive", &c, h);
    free(a); free(b);
    return 0;
}
