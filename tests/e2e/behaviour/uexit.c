/* uexit early|late — main leaves with _exit(0) (no atexit handlers, no
 * destructors, no stdio flush): after a few hundred accesses, or after
 * threads and main did a lot of work. */
#include <pthread.h>

#include "bh.h"

static void *worker(void *arg)
{
    unsigned long a[2048] = {0};
    *(unsigned long *)arg = bh_sweep(a, 2048, 100);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    static unsigned long a[8000];
    if (!strcmp(argv[1], "early")) {
        bh_say("uexit: early %lx\n", bh_sweep(a, 64, 2));
        _exit(0);
    }
    unsigned long r[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, &r[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    bh_say("uexit: late %lx %lx\n", r[0] ^ r[1] ^ r[2], bh_sweep(a, 8000, 100));
    _exit(0);
}
