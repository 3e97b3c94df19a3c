/*
 * histogram_private — each thread fills its own 4096-bin histogram, then the
 * private histograms are merged in parallel by bin ranges.
 * Why: privatisation: a hot private table during counting (short reuse),
 * then a merge phase in which every thread reads every other thread's table.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    enum { BINS = 4096 };
    int nt = c.threads;
    long per = c.scale * 1000 / 3, n = per * nt;
    unsigned *key = corpus_alloc(n * sizeof *key);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) key[i] = (unsigned)(corpus_rand(&s) % BINS);
    long *priv = corpus_alloc((size_t)nt * BINS * sizeof *priv), *out = corpus_alloc(BINS * sizeof *out);
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        long *mine = &priv[(size_t)t * BINS];
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++) mine[key[i]]++;
#pragma omp for schedule(static)
        for (long b = 0; b < BINS; b++) {
            long v = 0;
            for (int u = 0; u < nt; u++) v += priv[(size_t)u * BINS + b];
            out[b] = v;
        }
    }
    uint64_t h = 0;
    for (int b = 0; b < BINS; b++) h = corpus_mix(h, (uint64_t)out[b]);
    corpus_done("histogram_private", &c, h);
    free(key); free(priv); free(out);
    return 0;
}
