/* cancel_async — asynchronous pthread_cancel of threads sweeping memory in a
 * loop without cancellation points: the cancel can land anywhere, also in
 * the collector's code. Repeated ROUNDS times. */
#include <pthread.h>
#include <sched.h>

#include "bh.h"

#define ROUNDS 40
static long progress;

static void *spin(void *arg)
{
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    static __thread unsigned long a[2048];
    for (;;) {
        bh_sweep(a, 2048, 1);
        __atomic_add_fetch(&progress, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

int main(void)
{
    int cancelled = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t;
        __atomic_store_n(&progress, 0, __ATOMIC_RELAXED);
        pthread_create(&t, NULL, spin, NULL);
        while (__atomic_load_n(&progress, __ATOMIC_ACQUIRE) < 3 + r % 5)
            sched_yield();
        pthread_cancel(t);
        void *ret;
        pthread_join(t, &ret);
        cancelled += ret == PTHREAD_CANCELED;
    }
    static unsigned long b[1000];
    printf("cancel_async: %d of %d threads cancelled, sweep %lx\n", cancelled, ROUNDS,
           bh_sweep(b, 1000, 50));
    return 0;
}
