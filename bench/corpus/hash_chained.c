/*
 * hash_chained — a chained hash map built serially (nodes from malloc, one
 * per key) and then looked up by all threads, which also bump a per-node hit
 * counter with relaxed atomics.
 * Why: chains scattered over heap blocks, read sharing of buckets, and
 * sparse true sharing on hit counters of popular keys.
 */
#include "corpus.h"

struct entry { uint64_t key; struct entry *next; atomic_long hits; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long nkeys = 20000, buckets = 8192;
    long lookups = c.scale * 1000 / 6;
    struct entry **bucket = corpus_alloc(buckets * sizeof *bucket);
    uint64_t *keys = corpus_alloc(nkeys * sizeof *keys), s = c.seed;
    for (long i = 0; i < nkeys; i++) {
        struct entry *e = malloc(sizeof *e);
        e->key = keys[i] = corpus_rand(&s);
        atomic_init(&e->hits, 0);
        long b = (long)(e->key % (uint64_t)buckets);
        e->next = bucket[b];
        bucket[b] = e;
    }
#pragma omp parallel
    {
        uint64_t r = c.seed * 3 + (uint64_t)omp_get_thread_num();
        for (long i = 0; i < lookups; i++) {
            uint64_t x = corpus_rand(&r);
            /* half the lookups go to the first 64 keys (popular), the rest anywhere */
            uint64_t k = keys[(x & 1) ? (x >> 1) % 64 : (x >> 1) % (uint64_t)nkeys];
            for (struct entry *e = bucket[k % (uint64_t)buckets]; e; e = e->next)
                if (e->key == k) { atomic_fetch_add_explicit(&e->hits, 1, memory_order_relaxed); break; }
        }
    }
    uint64_t h = 0;
    for (long b = 0; b < buckets; b++)
        for (struct entry *e = bucket[b], *n; e; e = n) {
            n = e->next;
            h += (uint64_t)atomic_load(&e->hits) * (e->key | 1);
            free(e);
        }
    corpus_done("hash_chained", &c, h);
    free(bucket); free(keys);
    return 0;
}
