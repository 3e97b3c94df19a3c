/* watch_runtime — the program itself reads the runtime's per-thread state
 * (__pes_tls, found with dlsym when the runtime is there), so samples land on
 * memory the runtime reads and writes on every slow path and in its SIGTRAP
 * handler: a watchpoint there traps inside the runtime. Such traps must be
 * ignored, never recurse. The same happens by chance when a dead thread's
 * stack, still watched, becomes a new thread's TLS. The plain clang build
 * reads a variable of its own instead; the output is the same. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "bh.h"

#define THREADS 3
#define N 256
static unsigned long results[THREADS + 1];
static __thread long stand_in[4];

static void *worker(void *arg)
{
    long k = (long)arg;
    /* the calling thread's instance of a TLS symbol */
    volatile long *rt = dlsym(RTLD_DEFAULT, "__pes_tls");
    if (!rt)
        rt = stand_in;
    unsigned long a[N], sum = 0;
    for (long i = 0; i < N; i++)
        a[i] = (unsigned long)(i + k);
    for (long r = 0; r < 400; r++)
        for (long i = 0; i < N; i++) {
            long seen = rt[i & 3];   /* cursor, limit, countdown, flags */
            sum += a[i] + (seen != 0 ? 0 : 0);
            a[i] = a[i] * 5 + (unsigned long)r;
        }
    results[k] = sum;
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
        printf("watch_runtime: thread %d %lx\n", k, results[k]);
    return 0;
}
