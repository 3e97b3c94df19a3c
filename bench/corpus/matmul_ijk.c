/*
 * matmul_ijk — C = A B, naive i-j-k loops over doubles, rows of C split over
 * threads: B is read column-wise (one line per k step).
 * Why: the textbook bad order: B's reuse distance is a whole matrix sweep,
 * shared read-only by every thread.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    long n = 16;
    while (2 * (n + 16) * (n + 16) * (n + 16) <= c.scale * 1000 * c.threads) n += 16;
    if (n > 512) n = 512;
    double *a = corpus_alloc(n * n * sizeof *a), *b = corpus_alloc(n * n * sizeof *b), *cm = corpus_alloc(n * n * sizeof *cm);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) { a[i] = (double)(corpus_rand(&s) % 10); b[i] = (double)(corpus_rand(&s) % 10); }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double acc = 0;
            for (long k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];
            cm[i * n + j] = acc;
        }
    uint64_t h = 0;
    for (long i = 0; i < n * n; i++) h = corpus_mix(h, corpus_fix(cm[i]));
    corpus_done("matmul_ijk", &c, h);
    free(a); free(b); free(cm);
    return 0;
}
