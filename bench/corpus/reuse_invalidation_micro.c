/*
 * reuse_invalidation_micro — a ReuseTracker-style microbenchmark: each thread
 * cycles over a private array of P lines (intra-thread reuse at distance P)
 * and over a shared array of S lines in which it also writes every k-th
 * access; its neighbour thread reads the same shared lines, so a known share
 * of its reuses are broken by invalidations.
 * Why: reuse distances and an invalidation ratio both set by construction,
 * the quantities the reuse and invalidation estimators must recover.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long P = 96, S = 32, line = 8;   /* lines; words per line */
    int nt = c.threads;
    long steps = c.scale * 1000 / 2;
    long *shared = corpus_alloc((size_t)nt * S * line * sizeof *shared);
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        long *priv = corpus_alloc(P * line * sizeof *priv), acc = 0;
        volatile long *mine = &shared[(size_t)t * S * line];
        volatile long *theirs = &shared[(size_t)((t + nt - 1) % nt) * S * line];
        for (long i = 0; i < steps; i++) {
            if (i % 4 != 3) {
                long k = (i / 4 * 3 + i % 4) % P;
                priv[k * line] += i;                 /* private reuse at distance ~P */
            } else if (i % 16 == 15) {
                mine[(i / 16) % S * line] = i;       /* write my shared line */
            } else {
                acc += theirs[(i / 4) % S * line];   /* read my neighbour's lines */
            }
        }
        for (long k = 0; k < P; k++) acc += priv[k * line];
        total ^= corpus_mix((uint64_t)t, (uint64_t)(nt == 1 ? acc : 0));   /* reads race when nt > 1 */
        free(priv);
    }
    uint64_t h = total;
    for (long i = 0; i < (long)nt * S * line; i++) h = corpus_mix(h, (uint64_t)shared[i]);
    corpus_done("reuse_invalidation_micro", &c, h);
    free(shared);
    return 0;
}
