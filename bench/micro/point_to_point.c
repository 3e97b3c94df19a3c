/*
 * point_to_point.c — ComDetective's Point-to-Point benchmark (Dissertation
 * Listing 5.4), written from its description: threads 2k and 2k+1 share word
 * k (one line per pair) and store to it with probability fraction_k percent
 * (--fraction for pair 0, halved for each next pair), else to a private
 * word. Only the cells (2k, 2k+1) of the communication matrix should be
 * non-zero; the program prints the expected pairs and their store counts.
 */
#include "micro_common.h"

struct padded {
    _Alignas(64) volatile uint64_t v;
};

int main(int argc, char **argv) {
    struct micro_args a = micro_parse(argc, argv, "point_to_point", 80);
    static struct padded pair_data[512], priv[1024];
    int nthreads = 1;
    long long *stores = calloc(1024, sizeof *stores);
#pragma omp parallel
    {
        int tid = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        int pair = (tid / 2) % 512;
        int percent = a.fraction >> (pair < 16 ? pair : 16);
        int threshold = micro_threshold(percent);
        unsigned seed = a.seed * 7919u + (unsigned)tid;
        volatile uint64_t *shared = &pair_data[pair].v, *mine = &priv[tid % 1024].v;
        long long n = 0;
        const long iters = a.iters;
        for (long i = 0; i < iters; i++) {
            int r = rand_r(&seed);
            if (r < threshold) {
                *shared = (uint64_t)r;
                n++;
            } else {
                *mine = (uint64_t)r;
            }
        }
        stores[tid % 1024] = n;
    }
    FILE *out = micro_out(&a);
    fprintf(out, "{\"benchmark\": \"point_to_point\", \"threads\": %d, \"iters\": %ld, \"fraction\": %d, "
                 "\"pairs\": [", nthreads, a.iters, a.fraction);
    for (int t = 0; t + 1 < nthreads; t += 2)
        fprintf(out, "%s{\"threads\": [%d, %d], \"shared_stores\": [%lld, %lld]}", t ? ", " : "", t, t + 1,
                stores[t], stores[t + 1]);
    fprintf(out, "], \"expected_false_fraction\": 0}\n");
    if (out != stdout) fclose(out);
    free(stores);
    return 0;
}
