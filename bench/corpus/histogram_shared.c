/*
 * histogram_shared — all threads increment one shared histogram of 256
 * bins with atomic adds, keys drawn from a skewed distribution.
 * Why: shared writes spread over a few lines with hot bins: true sharing
 * whose volume depends on the key distribution.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    enum { BINS = 256 };
    long per = c.scale * 1000 / 3, n = per * c.threads;
    unsigned char *key = corpus_alloc(n);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) {
        uint64_t r = corpus_rand(&s);
        key[i] = (unsigned char)((r & 3) ? (r >> 8) % 16 : (r >> 8) % BINS);   /* 75 % in 16 bins */
    }
    atomic_long *bin = corpus_alloc(BINS * sizeof *bin);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) atomic_fetch_add_explicit(&bin[key[i]], 1, memory_order_relaxed);
    uint64_t h = 0;
    for (int b = 0; b < BINS; b++) h = corpus_mix(h, (uint64_t)atomic_load(&bin[b]));
    corpus_done("histogram_shared", &c, h);
    free(key); free(bin);
    return 0;
}
