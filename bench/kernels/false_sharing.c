/* Threads increment their own counter; counters are adjacent words of one cache
 * line (false sharing) or padded to a line each ("padded" argument). The
 * ground-truth program for false-sharing detection. */
#include <omp.h>
#include "kernel_common.h"

enum { MAX_THREADS = 64, LINE = 64 };

struct padded_counter {
    long value;
    char pad[LINE - sizeof(long)];
};

static long adjacent[MAX_THREADS] __attribute__((aligned(LINE)));
static struct padded_counter padded[MAX_THREADS] __attribute__((aligned(LINE)));

int main(int argc, char **argv) {
    int use_padding = argc > 1 && strcmp(argv[1], "padded") == 0;
    long iters = argc > 2 ? atol(argv[2]) : 100000;
    long total = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num() % MAX_THREADS;
        /* volatile: keep one load and one store per increment at -O2 */
        volatile long *mine = use_padding ? &padded[t].value /* one line per thread */
                                          : &adjacent[t];    /* neighbours share a line */
        for (long i = 0; i < iters; i++) (*mine)++;
    }
    for (int t = 0; t < MAX_THREADS; t++) total += adjacent[t] + padded[t].value;
    printf("false_sharing %s iters=%ld total=%ld\n", use_padding ? "padded" : "adjacent", iters, total);
    return 0;
}
