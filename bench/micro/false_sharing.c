/*
 * false_sharing.c — ComDetective's False-Sharing benchmark (Dissertation
 * Listing 5.2), written from its description: every iteration each thread
 * atomically adds either to its own word of one shared cache line (false
 * sharing, probability --fraction percent) or to one word all threads share
 * (true sharing). The false share of the communication should follow the
 * fraction (Figure 5.8); the program prints the updates it did.
 */
#include "micro_common.h"

int main(int argc, char **argv) {
    struct micro_args a = micro_parse(argc, argv, "false_sharing", 50);
    /* 8 words per line: threads 8k..8k+7 share line k */
    static _Alignas(64) uint64_t false_data[1024];
    static _Alignas(64) uint64_t true_data;
    int threshold = micro_threshold(a.fraction), nthreads = 1;
    long long fs = 0, ts = 0;
#pragma omp parallel reduction(+ : fs, ts)
    {
        int tid = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        unsigned seed = a.seed * 7919u + (unsigned)tid;
        uint64_t *mine = &false_data[tid % 1024];
        const long iters = a.iters;
        for (long i = 0; i < iters; i++) {
            int r = rand_r(&seed);
            if (r < threshold) {
                __atomic_fetch_add(mine, (uint64_t)r, __ATOMIC_RELAXED);
                fs++;
            } else {
                __atomic_fetch_add(&true_data, (uint64_t)r, __ATOMIC_RELAXED);
                ts++;
            }
        }
    }
    FILE *out = micro_out(&a);
    fprintf(out, "{\"benchmark\": \"false_sharing\", \"threads\": %d, \"iters\": %ld, \"fraction\": %d, "
                 "\"false_sharing_updates\": %lld, \"true_sharing_updates\": %lld, "
                 "\"expected_false_fraction\": %.6f}\n",
            nthreads, a.iters, a.fraction, fs, ts, fs + ts ? (double)fs / (double)(fs + ts) : 0.0);
    if (out != stdout) fclose(out);
    return 0;
}
