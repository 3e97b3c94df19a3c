/*
 * true_sharing_array — all threads atomically add into the same eight-word
 * array (one line) at random words, with a private streaming read between
 * updates.
 * Why: true sharing on one line by every thread (the contrast to
 * false_sharing_counters: here words are shared, so no transfer is false).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 1 << 12;
    long ops = c.scale * 1000 / 5;
    static _Alignas(64) atomic_long shared[8];
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        long *priv = corpus_alloc(per * sizeof *priv), acc = 0;
        uint64_t s = c.seed * 11 + (uint64_t)t;
        for (long i = 0; i < per; i++) priv[i] = (long)(corpus_rand(&s) % 100);
        for (long i = 0; i < ops; i++) {
            acc += priv[i % per] + priv[(i * 7) % per];
            atomic_fetch_add_explicit(&shared[(acc >> 3) & 7], acc & 15, memory_order_relaxed);
        }
        total ^= corpus_mix((uint64_t)t, (uint64_t)acc);
        free(priv);
    }
    uint64_t h = total;
    for (int i = 0; i < 8; i++) h = corpus_mix(h, (uint64_t)atomic_load(&shared[i]));
    corpus_done("true_sharing_array", &c, h);
    return 0;
}
