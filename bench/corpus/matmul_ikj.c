/*
 * matmul_ikj — C = A B with the i-k-j order: the inner loop streams a row of
 * B and a row of C, the A element stays in a register.
 * Why: the cache-friendly order of the same computation: C's row is reused
 * at distance n per k step, B rows are swept; a contrast to matmul_ijk.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    long n = 16;
    while (3 * (n + 16) * (n + 16) * (n + 16) <= c.scale * 1000 * c.threads) n += 16;
    if (n > 512) n = 512;
    double *a = corpus_alloc(n * n * sizeof *a), *b = corpus_alloc(n * n * sizeof *b), *cm = corpus_alloc(n * n * sizeof *cm);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) { a[i] = (double)(corpus_rand(&s) % 10); b[i] = (double)(corpus_rand(&s) % 10); }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        for (long k = 0; k < n; k++) {
            double x = a[i * n + k];
            for (long j = 0; j < n; j++) cm[i * n + j] += x * b[k * n + j];
        }
    uint64_t h = 0;
    for (long i = 0; i < n * n; i++) h = corpus_mix(h, corpus_fix(cm[i]));
    corpus_done("matmul_ikj", &c, h);
    free(a); free(b); free(cm);
    return 0;
}
