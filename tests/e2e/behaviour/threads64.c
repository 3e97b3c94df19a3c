/* threads64 — 64 threads at once (more than CPUs and than debug registers),
 * each sweeping its own array; main prints the combined checksum. */
#include <pthread.h>

#include "bh.h"

#define THREADS 64
static unsigned long arrays[THREADS][1024];
static unsigned long results[THREADS];
static pthread_barrier_t all_started;

static void *worker(void *arg)
{
    long k = (long)arg;
    pthread_barrier_wait(&all_started);
    results[k] = bh_sweep(arrays[k], 1024, 20 + k % 7);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&all_started, NULL, THREADS);
    for (long k = 0; k < THREADS; k++)
        if (pthread_create(&t[k], NULL, worker, (void *)k) != 0)
            return 3;
    unsigned long sum = 0;
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        sum = sum * 31 + results[k];
    }
    printf("threads64: %d threads, sum %lx\n", THREADS, sum);
    return 0;
}
