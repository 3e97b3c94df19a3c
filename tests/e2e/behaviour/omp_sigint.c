/* omp_sigint PIDFILE — 2 OpenMP threads sweep memory until SIGINT (default
 * action) ends the process from outside; PIDFILE gets the pid once both
 * threads are working. Not interrupted within 20 s: prints so and exits 3. */
#include <omp.h>
#include <stdlib.h>
#include <time.h>

#include "bh.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    bh_say("omp_sigint: started\n");
    static unsigned long a[2][4096];
    int working = 0;
    time_t start = time(NULL);
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
        while (time(NULL) - start < 20)
            bh_sweep(mine, 4096, 1);
    }
    printf("omp_sigint: not interrupted, %d threads\n", working);
    return 3;
}
