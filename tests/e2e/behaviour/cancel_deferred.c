/* cancel_deferred — deferred pthread_cancel of threads that sweep memory:
 * one reaches pthread_testcancel after each sweep, the other waits on a
 * condition variable that is never signalled (its cleanup handler unlocks the
 * mutex). Cleanup handlers write a global array. Repeated ROUNDS times. */
#include <pthread.h>
#include <sched.h>

#include "bh.h"

#define ROUNDS 20
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static unsigned long cleaned[2];
static long progress;   /* sweeps done by the looping thread */

static void cleanup(void *arg)
{
    long k = (long)arg;
    cleaned[k] = cleaned[k] * 3 + 1;
}

static void unlock(void *arg)
{
    pthread_mutex_unlock(arg);
}

static void *looper(void *arg)
{
    (void)arg;
    unsigned long a[2048] = {0};
    pthread_cleanup_push(cleanup, (void *)0);
    for (;;) {
        bh_sweep(a, 2048, 1);
        __atomic_add_fetch(&progress, 1, __ATOMIC_RELEASE);
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    unsigned long a[2048] = {0};
    bh_sweep(a, 2048, 20);
    pthread_cleanup_push(cleanup, (void *)1);
    pthread_mutex_lock(&mu);
    pthread_cleanup_push(unlock, &mu);
    for (;;)
        pthread_cond_wait(&never, &mu);
    pthread_cleanup_pop(1);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void)
{
    int cancelled = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t[2];
        __atomic_store_n(&progress, 0, __ATOMIC_RELAXED);
        pthread_create(&t[0], NULL, looper, NULL);
        pthread_create(&t[1], NULL, waiter, NULL);
        while (__atomic_load_n(&progress, __ATOMIC_ACQUIRE) < 5)
            sched_yield();
        for (int k = 0; k < 2; k++)
            pthread_cancel(t[k]);
        for (int k = 0; k < 2; k++) {
            void *ret;
            pthread_join(t[k], &ret);
            cancelled += ret == PTHREAD_CANCELED;
        }
    }
    /* the mutex is free again: the waiter's cleanup handler unlocked it */
    int relocked = pthread_mutex_trylock(&mu) == 0;
    printf("cancel_deferred: %d of %d threads cancelled, cleanup %lx %lx, mutex %s\n", cancelled,
           2 * ROUNDS, cleaned[0], cleaned[1], relocked ? "free" : "HELD");
    return 0;
}
