/* dlopen_loop LIB — dlopen, call, dlclose of a shared library (built like this
 * program: with pes-clang or plain clang), LOADS times, while a second thread
 * sweeps memory. */
#include <dlfcn.h>
#include <pthread.h>

#include "bh.h"

#define LOADS 50
static int done;

static void *worker(void *arg)
{
    (void)arg;
    unsigned long a[2048] = {0};
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
        bh_sweep(a, 2048, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    unsigned long sum = 0;
    for (int i = 0; i < LOADS; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            printf("dlopen_loop: dlopen failed\n");
            return 3;
        }
        unsigned long (*work)(long) = (unsigned long (*)(long))dlsym(h, "bh_lib_work");
        if (!work)
            return 4;
        sum = sum * 3 + work(20 + i);
        dlclose(h);
    }
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    printf("dlopen_loop: %d loads, sum %lx\n", LOADS, sum);
    return 0;
}
