/*
 * readmostly_table — a shared 64 KiB lookup table that every thread reads at
 * random; thread 0 rewrites one entry every 1024 of its lookups.
 * Why: read sharing is free in MESI until a rare write invalidates every
 * reader's copy: few invalidations, each followed by several re-reads.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    enum { N = 8192 };
    long ops = c.scale * 1000 / 2;
    _Atomic long *table = corpus_alloc(N * sizeof *table);
    uint64_t s = c.seed;
    for (long i = 0; i < N; i++) atomic_init(&table[i], (long)(corpus_rand(&s) % 1000));
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        uint64_t r = c.seed * 7 + (uint64_t)t, h = 0;
        long sum = 0;
        for (long i = 0; i < ops; i++) {
            uint64_t x = corpus_rand(&r);
            sum += atomic_load_explicit(&table[x % N], memory_order_relaxed);
            if (t == 0 && (i & 1023) == 0)
                atomic_store_explicit(&table[(x >> 20) % N], (long)(x >> 50), memory_order_relaxed);
        }
        h = corpus_mix(h, (uint64_t)(t == 0));   /* sums race with the writes: not in the checksum */
        (void)sum;
        total ^= h;
    }
    uint64_t h = total;
    for (long i = 0; i < N; i++) h = corpus_mix(h, (uint64_t)atomic_load(&table[i]));
    corpus_done("readmostly_table", &c, h);
    free(table);
    return 0;
}
