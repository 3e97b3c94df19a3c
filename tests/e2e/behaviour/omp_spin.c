/* omp_spin — OpenMP threads that wait by spinning, as NPB LU's pipelined
 * sweeps do: thread t may start step k of its block only after thread t-1
 * has finished step k (it polls t-1's flag, an atomic, with nothing but the
 * load in the loop), and may overwrite its block for step k only after t+1
 * has read step k-1 of it; then it publishes its own step. A second phase spins on a
 * shared counter (a hand-made barrier). The polls' number depends on the
 * schedule; the results do not. */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>

#include "bh.h"

#define MAXT 8
#define STEPS 200
#define N 256

static _Atomic long done[MAXT];      /* last step finished by each thread */
static _Atomic long arrived;
static double grid[MAXT][N];

int main(void)
{
    int nt = 0;
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        nt = n;
        if (t < MAXT && n <= MAXT) {
            for (long k = 1; k <= STEPS; k++) {
                if (t > 0)
                    while (atomic_load_explicit(&done[t - 1], memory_order_acquire) < k)
                        ;
                /* nor overwrite its block before thread t+1 has read step k-1 of it */
                if (t + 1 < n)
                    while (atomic_load_explicit(&done[t + 1], memory_order_acquire) < k - 1)
                        ;
                const double *left = t > 0 ? grid[t - 1] : grid[t];
                for (int i = 0; i < N; i++)
                    grid[t][i] = 0.5 * grid[t][i] + 0.25 * left[i] + (double)((k + i) % 7);
                atomic_store_explicit(&done[t], k, memory_order_release);
            }
            /* a spinning barrier */
            atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel);
            while (atomic_load_explicit(&arrived, memory_order_acquire) < n)
                ;
        }
    }
    double s = 0;
    for (int t = 0; t < nt && t < MAXT; t++)
        for (int i = 0; i < N; i++)
            s += grid[t][i] * (double)(t + 1);
    bh_say("omp_spin: %d threads, %.6f\n", nt, s);
    return 0;
}
