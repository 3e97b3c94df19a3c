/* Threads increment their own counter in rounds separated by barriers;
 * counters are adjacent words of one cache line (false sharing), or padded to
 * a line each ("padded"). The barrier guarantees that the threads alternate
 * at least once per round, so the line moves between cores in every round of
 * any execution: the ground-truth program for false-sharing detection.
 * usage: false_sharing [adjacent|padded] [iterations per round] [rounds] */
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
    long iters = argc > 2 ? atol(argv[2]) : 10000;
    long rounds = argc > 3 ? atol(argv[3]) : 20;
    long total = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num() % MAX_THREADS;
        /* volatile: keep one load and one store per increment at -O2 */
        volatile long *mine = use_padding ? &padded[t].value /* one line per thread */
                                          : &adjacent[t];    /* neighbours share a line */
        for (long r = 0; r < rounds; r++) {
            for (long i = 0; i < iters; i++) (*mine)++; /* the contended line */
#pragma omp barrier
        }
    }
    for (int t = 0; t < MAX_THREADS; t++) total += adjacent[t] + padded[t].value;
    printf("false_sharing %s iters=%ld rounds=%ld total=%ld\n", use_padding ? "padded" : "adjacent", iters,
           rounds, total);
    return 0;
}
