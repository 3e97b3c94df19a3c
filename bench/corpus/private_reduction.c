/*
 * private_reduction — each thread sums its block of an array into a local
 * variable and writes it once into a padded per-thread slot; thread 0 adds
 * the slots.
 * Why: the well-behaved reduction: streaming private reads, no sharing except
 * one line per thread read once at the end (the contrast to
 * atomic_reduction and false_sharing_counters).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    long per = 1 << 16, n = per * c.threads;
    long rounds = c.scale * 1000 / per;
    if (rounds < 1) rounds = 1;
    long *data = corpus_alloc(n * sizeof *data);
    struct { _Alignas(64) long v; } *part = corpus_alloc(c.threads * 64);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) data[i] = (long)(corpus_rand(&s) % 1000);
    long total = 0;
    for (long r = 0; r < rounds; r++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            long acc = 0;
            for (long i = t * per; i < (t + 1) * per; i++) acc += data[i] ^ r;
            part[t].v = acc;
        }
        for (int t = 0; t < c.threads; t++) total += part[t].v;
    }
    corpus_done("private_reduction", &c, (uint64_t)total);
    free(data); free(part);
    return 0;
}
