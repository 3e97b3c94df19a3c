/* samp_omp — an OpenMP program built with pes-clang (the real pass) for the
 * sampling e2e test: each thread sweeps its own block of a[] R times, so every
 * sampled element is reused one sweep later, after the same number of
 * instrumented accesses in every sweep: all reuse distances are equal. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long k = argc > 1 ? atol(argv[1]) : 1000, rounds = argc > 2 ? atol(argv[2]) : 1000;
    int nt = omp_get_max_threads();
    double *a = calloc((size_t)(k * nt + 64), sizeof *a);
    if (!a)
        return 1;
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
        double *mine = a + (long)omp_get_thread_num() * k;
        double s = 0;
        for (long r = 0; r < rounds; r++) {
            for (long i = 0; i < k; i++)
                s += mine[i] + (double)r;
        }
        total += s;
    }
    printf("samp_omp: total=%.0f\n", total);
    free(a);
    return 0;
}
