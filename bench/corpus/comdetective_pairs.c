/*
 * comdetective_pairs — ComDetective-style read/write pairs: in each thread
 * pair the writer stores to a 4 KiB array and the reader loads from it; a
 * fraction of the reader's loads (every fourth) go to words the writer never
 * writes but which sit on its lines (odd words), the rest to written words.
 * Why: communication from plain reads after writes (not RMW), with a known
 * mix of true and false sharing on the same lines.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long words = 512;
    int nt = c.threads, pairs = (nt + 1) / 2;
    long ops = c.scale * 1000;
    long *arr = corpus_alloc((size_t)pairs * words * sizeof *arr);
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        volatile long *a = &arr[(size_t)(t / 2) * words];
        int writer = t % 2 == 0;
        long acc = 0;
        for (long i = 0; i < ops; i++) {
            long w = (i * 2) % words;               /* even words: written */
            if (writer) a[w] = i;
            else acc += (i % 4 == 3) ? a[w + 1] : a[w];
        }
        total ^= corpus_mix((uint64_t)t, (uint64_t)(writer ? 1 : 0));   /* the reader's sum races */
        (void)acc;
    }
    uint64_t h = total;
    for (long i = 0; i < (long)pairs * words; i++) h = corpus_mix(h, (uint64_t)arr[i]);
    corpus_done("comdetective_pairs", &c, h);
    free(arr);
    return 0;
}
