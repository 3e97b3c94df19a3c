/* atexit — atexit handlers that write memory and print, after threads ran. */
#include <pthread.h>
#include <stdlib.h>

#include "bh.h"

static unsigned long late[1000];

static void first_registered(void)
{
    printf("atexit: last handler %lx\n", bh_sweep(late, 1000, 30));
}

static void second_registered(void)
{
    printf("atexit: first handler %lx\n", bh_sweep(late, 1000, 20));
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned long a[1000] = {0};
    return (void *)bh_sweep(a, 1000, 30);
}

int main(void)
{
    atexit(first_registered);
    atexit(second_registered);
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, &r);
    printf("atexit: main %lx\n", (unsigned long)r);
    return 0;
}
