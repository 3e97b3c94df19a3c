/*
 * write_volume.c — ComDetective's Write-Volume benchmark (Dissertation
 * Listing 5.1), written from its description: every iteration each thread
 * stores either to one shared word (with probability --fraction percent) or
 * to its own private word. No false sharing. Prints the stores it did; the
 * communication (line transfers) they cause is measured by the full trace.
 */
#include "micro_common.h"

struct padded {
    _Alignas(64) volatile uint64_t v;
};

int main(int argc, char **argv) {
    struct micro_args a = micro_parse(argc, argv, "write_volume", 20);
    static struct padded shared_data;
    struct padded *priv = aligned_alloc(64, 1024 * sizeof *priv);
    int threshold = micro_threshold(a.fraction), nthreads = 1;
    long long shared = 0, total = 0;
#pragma omp parallel reduction(+ : shared, total)
    {
        int tid = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        unsigned seed = a.seed * 7919u + (unsigned)tid;
        volatile uint64_t *mine = &priv[tid % 1024].v;
        const long iters = a.iters;
        for (long i = 0; i < iters; i++) {
            int r = rand_r(&seed);
            if (r < threshold) {
                __atomic_store_n(&shared_data.v, (uint64_t)r, __ATOMIC_RELAXED);
                shared++;
            } else {
                *mine = (uint64_t)r;
            }
            total++;
        }
    }
    FILE *out = micro_out(&a);
    fprintf(out, "{\"benchmark\": \"write_volume\", \"threads\": %d, \"iters\": %ld, \"fraction\": %d, "
                 "\"shared_stores\": %lld, \"stores\": %lld, \"expected_false_fraction\": 0}\n",
            nthreads, a.iters, a.fraction, shared, total);
    if (out != stdout) fclose(out);
    free(priv);
    return 0;
}
