/*
 * prefix_sum — inclusive scan of a long array in three phases: each thread
 * sums its block, one thread scans the block sums, each thread rescans its
 * block with its offset.
 * Why: two streaming passes over private blocks with one tiny shared array in
 * between (written by all, read by one, then read by all).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 1 << 15;
    int nt = c.threads;
    long n = per * nt, reps = c.scale * 1000 / (4 * per);
    if (reps < 1) reps = 1;
    long *in = corpus_alloc(n * sizeof *in), *out = corpus_alloc(n * sizeof *out);
    long *part = corpus_alloc((nt + 1) * sizeof *part);
    uint64_t s = c.seed, h = 0;
    for (long i = 0; i < n; i++) in[i] = (long)(corpus_rand(&s) % 100);
    for (long r = 0; r < reps; r++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            long acc = 0;
            for (long i = t * per; i < (t + 1) * per; i++) acc += in[i];
            part[t + 1] = acc;
#pragma omp barrier
#pragma omp single
            for (int u = 1; u <= nt; u++) part[u] += part[u - 1];
            acc = part[t];
            for (long i = t * per; i < (t + 1) * per; i++) out[i] = acc += in[i];
        }
        in[r % n] += 1;
        h = corpus_mix(h, (uint64_t)out[n - 1]);
    }
    for (long i = 0; i < n; i += 97) h = corpus_mix(h, (uint64_t)out[i]);
    corpus_done("prefix_sum", &c, h);
    free(in); free(out); free(part);
    return 0;
}
