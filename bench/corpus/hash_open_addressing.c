/*
 * hash_open_addressing — a shared open-addressing table (linear probing,
 * keys inserted with compare-and-swap) filled by all threads, then probed by
 * all threads with lookups of present and absent keys.
 * Why: random accesses into one shared table, CAS writes during the build
 * then read sharing; probe runs give short spatial reuse.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    int nt = c.threads;
    long per = c.scale * 1000 / 16, keys = per * nt, size = 1;
    while (size < 2 * keys) size <<= 1;
    _Atomic uint64_t *slot = corpus_alloc(size * sizeof *slot);   /* 0 = empty */
    uint64_t found = 0;
#pragma omp parallel reduction(+ : found)
    {
        int t = omp_get_thread_num();
        uint64_t s = c.seed * 1009 + (uint64_t)t;
        for (long i = 0; i < per; i++) {
            uint64_t k = (corpus_rand(&s) | 1), pos = (k * 0x9e3779b97f4a7c15ULL) & (uint64_t)(size - 1);
            for (;;) {
                uint64_t e = 0;
                if (atomic_compare_exchange_strong(&slot[pos], &e, k) || e == k) break;
                pos = (pos + 1) & (uint64_t)(size - 1);
            }
        }
#pragma omp barrier
        uint64_t q = c.seed * 1009 + (uint64_t)((t + 1) % nt);   /* another thread's keys */
        for (long i = 0; i < 4 * per; i++) {
            uint64_t k = (i & 1) ? (corpus_rand(&q) | 1) : (corpus_rand(&s) & ~1ULL);
            uint64_t pos = (k * 0x9e3779b97f4a7c15ULL) & (uint64_t)(size - 1), e;
            while ((e = atomic_load_explicit(&slot[pos], memory_order_relaxed)) != 0 && e != k)
                pos = (pos + 1) & (uint64_t)(size - 1);
            found += e == k;
        }
    }
    corpus_done("hash_open_addressing", &c, found);
    free(slot);
    return 0;
}
