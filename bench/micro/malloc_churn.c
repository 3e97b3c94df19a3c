/*
 * malloc_churn.c — N malloc(SIZE) / free pairs in a loop and nothing else:
 * what the collector's allocator interposer adds per pair (bench/alloc_overhead.py).
 * The block escapes through an empty asm statement, so the compiler keeps
 * every call and the loop makes no memory access of its own (no record in a
 * full trace but the heap ones).
 *
 *   malloc_churn [N [SIZE]]   default 10000000 pairs of 32 bytes; prints the
 *                             loop's own time per pair
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* this thread only: the machine may be shared */
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000L;
    size_t size = argc > 2 ? (size_t)atol(argv[2]) : 32;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        void *p = malloc(size);
        if (!p)
            return 1;
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
    }
    double t1 = now();
    /* the loop alone, CPU time of this thread: without start-up, the
     * collector's encoder threads and its final flush */
    printf("malloc_churn: %ld pairs of %zu bytes, loop %.1f ns/pair\n", n, size, n ? (t1 - t0) / (double)n : 0.0);
    return 0;
}
