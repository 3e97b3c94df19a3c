/* omp_sigint PIDFILE — 2 OpenMP threads sweep memory until SIGINT (default
 * action) ends the process from outside; PIDFILE gets the pid once both
 * threads are working. No end of its own (neither a clock nor a work count:
 * either would race with the signal on a loaded machine); a test that never
 * sends the signal meets run.sh's CPU-time bound or its hang guard. */
#include <omp.h>
#include <stdlib.h>

#include "bh.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    bh_say("omp_sigint: started\n");
    static unsigned long a[2][4096];
    int working = 0;
#pragma omp parallel num_threads(2)
    {
        unsigned long *mine = a[omp_get_thread_num() & 1];
        bh_sweep(mine, 4096, 2);
#pragma omp atomic
        working++;
#pragma omp barrier
#pragma omp single nowait
        {
            FILE *f = fopen(argv[1], "w");
            if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0)
                abort();
        }
        for (;;)
            bh_sweep(mine, 4096, 1);
    }
    return 3;   /* not reached */
}
