/*
 * transpose_blocked — the same transpose in 16 x 16 tiles, tiles distributed
 * over threads: both matrices are touched a tile (2 KiB) at a time.
 * Why: tiling turns the naive version's long reuse distances into short ones;
 * a pair with transpose_naive shows whether both distance ranges are right.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 512, bs = 16, nb = n / bs;
    long reps = c.scale * 1000 * c.threads / (2 * n * n);
    if (reps < 1) reps = 1;
    double *a = corpus_alloc(n * n * sizeof *a), *b = corpus_alloc(n * n * sizeof *b);
    uint64_t s = c.seed;
    for (long i = 0; i < n * n; i++) a[i] = (double)(corpus_rand(&s) % 1000);
    for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
        for (long t = 0; t < nb * nb; t++) {
            long bi = t / nb * bs, bj = t % nb * bs;
            for (long i = bi; i < bi + bs; i++)
                for (long j = bj; j < bj + bs; j++) b[j * n + i] = a[i * n + j] + (double)r;
        }
    }
    uint64_t h = 0;
    for (long i = 0; i < n * n; i++) h = corpus_mix(h, corpus_fix(b[i]));
    corpus_done("transpose_blocked", &c, h);
    free(a); free(b);
    return 0;
}
