/*
 * read_write.c — ComDetective's Read-Write benchmark (Dissertation Listing
 * 5.3), written from its description: thread 0 stores to a shared word every
 * iteration; every other thread loads it with probability --fraction percent
 * and stores to it otherwise. Prints the loads and stores it did.
 */
#include "micro_common.h"

int main(int argc, char **argv) {
    struct micro_args a = micro_parse(argc, argv, "read_write", 50);
    static _Alignas(64) volatile uint64_t shared_data;
    int threshold = micro_threshold(a.fraction), nthreads = 1;
    long long loads = 0, stores = 0;
    uint64_t sink = 0;
#pragma omp parallel reduction(+ : loads, stores, sink)
    {
        int tid = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        unsigned seed = a.seed * 7919u + (unsigned)tid;
        const long iters = a.iters;
        for (long i = 0; i < iters; i++) {
            int r = rand_r(&seed);
            if (tid != 0 && r < threshold) {
                sink += shared_data;
                loads++;
            } else {
                shared_data = (uint64_t)r;
                stores++;
            }
        }
    }
    FILE *out = micro_out(&a);
    fprintf(out, "{\"benchmark\": \"read_write\", \"threads\": %d, \"iters\": %ld, \"fraction\": %d, "
                 "\"shared_loads\": %lld, \"shared_stores\": %lld, \"expected_false_fraction\": 0, \"sink\": %llu}\n",
            nthreads, a.iters, a.fraction, loads, stores, (unsigned long long)(sink & 1));
    if (out != stdout) fclose(out);
    return 0;
}
