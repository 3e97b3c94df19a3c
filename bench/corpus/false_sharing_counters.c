/*
 * false_sharing_counters — one long counter per thread in a plain array
 * (eight threads' counters on one line), each thread counting the even
 * elements of its block of a private-ish input into its own slot.
 * Why: the textbook per-thread-counter false sharing: reads of the input are
 * private, the counter line ping-pongs between all threads.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 1 << 14;
    int nt = c.threads;
    long rounds = c.scale * 1000 / (3 * per);
    if (rounds < 1) rounds = 1;
    long *in = corpus_alloc(per * nt * sizeof *in);
    volatile long *count = corpus_alloc(nt * sizeof *count);
    uint64_t s = c.seed;
    for (long i = 0; i < per * nt; i++) in[i] = (long)(corpus_rand(&s) % 1000);
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        for (long r = 0; r < rounds; r++)
            for (long i = t * per; i < (t + 1) * per; i++)
                if ((in[i] + r) % 2 == 0) count[t] = count[t] + 1;
    }
    uint64_t h = 0;
    for (int t = 0; t < nt; t++) h = corpus_mix(h, (uint64_t)count[t]);
    corpus_done("false_sharing_counters", &c, h);
    free(in); free((void *)count);
    return 0;
}
