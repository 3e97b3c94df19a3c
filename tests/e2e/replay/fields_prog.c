/* Two threads increment neighbouring struct fields (counters.hits by thread
 * 0, counters.misses by thread 1: one cache line) and neighbouring elements
 * of a heap array (a[0], a[1], allocated in make_a) in rounds separated by
 * barriers, so both lines move between the cores every round: false sharing
 * on two known fields and on two known heap elements. counters.cold and the
 * array of make_b are touched once (cold). The test checks that pes-replay
 * --simulate names exactly these objects, fields and offsets. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct stats {
    long hits;
    long misses;
    long cold[6];
};

static struct stats counters __attribute__((aligned(64)));

static long *make_a(long n) { return calloc((size_t)n, sizeof(long)); }
static long *make_b(long n) { return calloc((size_t)n, sizeof(long)); }

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 500, rounds = 20;
    long *a = make_a(16), *b = make_b(16);
    if (!a || !b) return 1;
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        volatile long *field = t == 0 ? &counters.hits : &counters.misses; /* FIELDS */
        volatile long *cell = &a[t];                                        /* HEAP */
        for (long r = 0; r < rounds; r++) {
            for (long i = 0; i < iters; i++) {
                (*field)++;
                (*cell)++;
            }
#pragma omp barrier
        }
    }
    counters.cold[2] = b[3] + 1;
    printf("%ld %ld %ld %ld %ld\n", counters.hits, counters.misses, a[0], a[1], counters.cold[2]);
    free(a);
    free(b);
    return 0;
}
