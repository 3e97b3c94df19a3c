/*
 * cyclic_scan_l2 — each thread scans its own buffer cyclically (1.5 MiB, one word per line),
 * reading and writing one word per step, always in the same order.
 * Why: a cyclic scan is LRU's worst case: every reuse distance is the buffer
 * size, around the 1-2 MiB L2 of current cores; a spike in the histogram whose bin
 * boundary decides hit or miss.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long elems = 24576, stride = 8;   /* touched words, words between them */
    long rounds = c.scale * 1000 / (2 * elems);
    if (rounds < 1) rounds = 1;
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        long *buf = corpus_alloc(elems * stride * sizeof *buf);
        uint64_t s = c.seed * 23 + (uint64_t)omp_get_thread_num();
        for (long i = 0; i < elems; i++) buf[i * stride] = (long)(corpus_rand(&s) % 1000);
        for (long r = 0; r < rounds; r++)
            for (long i = 0; i < elems; i++) buf[i * stride] = buf[i * stride] * 3 % 1000003 + r;
        uint64_t h = (uint64_t)omp_get_thread_num();
        for (long i = 0; i < elems; i++) h = corpus_mix(h, (uint64_t)buf[i * stride]);
        total ^= h;
        free(buf);
    }
    corpus_done("cyclic_scan_l2", &c, total);
    return 0;
}
