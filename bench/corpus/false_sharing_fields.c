/*
 * false_sharing_fields — an array of small structs {long a; long b;}: thread
 * 2k writes field a and thread 2k+1 writes field b of the same structs,
 * interleaved with private work; each thread also reads its own field back.
 * Why: the two struct fields written by two threads: every transfer
 * of these lines is false sharing (no word is used by both threads).
 */
#include "corpus.h"

struct pair { long a, b; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 64;   /* 1 KiB of pairs per thread pair */
    int nt = c.threads, pairs = (nt + 1) / 2;
    long rounds = c.scale * 1000 / (3 * n);
    struct pair *p = corpus_alloc((size_t)pairs * n * sizeof *p);
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        volatile struct pair *mine = &p[(size_t)(t / 2) * n];
        long priv = 0;
        for (long r = 0; r < rounds; r++)
            for (long i = 0; i < n; i++) {
                if (t % 2 == 0) mine[i].a = mine[i].a + r + i;
                else mine[i].b = mine[i].b ^ (r * i);
                priv += i * r;
            }
        total ^= corpus_mix((uint64_t)t, (uint64_t)priv);
    }
    uint64_t h = total;
    for (long i = 0; i < (long)pairs * n; i++) h = corpus_mix(corpus_mix(h, (uint64_t)p[i].a), (uint64_t)p[i].b);
    corpus_done("false_sharing_fields", &c, h);
    free(p);
    return 0;
}
