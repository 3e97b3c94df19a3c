/*
 * atomic_reduction — every thread adds its terms straight into one shared
 * counter with an atomic add (no privatisation).
 * Why: the worst case of true sharing: one line written by all threads all
 * the time; interleaving decides the communication volume.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    long n = c.scale * 1000 / 3;
    long *data = corpus_alloc(n * sizeof *data);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) data[i] = (long)(corpus_rand(&s) % 1000);
    static _Alignas(64) atomic_long sum;
#pragma omp parallel
    {
        /* each thread sums the whole array: n terms per thread */
        for (long i = 0; i < n; i++) atomic_fetch_add_explicit(&sum, data[i], memory_order_relaxed);
    }
    corpus_done("atomic_reduction", &c, (uint64_t)atomic_load(&sum));
    free(data);
    return 0;
}
