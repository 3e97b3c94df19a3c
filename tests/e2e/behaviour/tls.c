/* tls — __thread and _Thread_local arrays, in main and 8 threads: each fills
 * its copies and checks that no other thread's writes reached them. */
#include <pthread.h>

#include "bh.h"

#define THREADS 8
#define N 512
static __thread unsigned long tls_a[N];
static _Thread_local unsigned long tls_b[N];
static unsigned long results[THREADS + 1];

static void *worker(void *arg)
{
    long k = (long)arg;
    for (long r = 0; r < 40; r++)
        for (long i = 0; i < N; i++) {
            tls_a[i] += (unsigned long)(k * r + i);
            tls_b[i] = tls_b[i] * 3 + tls_a[i];
        }
    unsigned long s = bh_sweep(tls_a, N, 10) ^ bh_sweep(tls_b, N, 10);
    for (long i = 0; i < N; i++)
        s += tls_a[i] - tls_b[i];
    results[k] = s;
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long k = 0; k < THREADS; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    worker((void *)(long)THREADS);
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    for (int k = 0; k <= THREADS; k++)
        printf("tls: thread %d %lx\n", k, results[k]);
    return 0;
}
