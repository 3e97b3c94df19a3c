/* omp_sum — an OpenMP program built with pes-clang for the collector e2e test:
 * a serial init writes a[0..n) once, a static parallel loop reads it once.
 * Prints the array's address so the checker knows which records are a[]. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4096;
    double *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = (double)i;
    double sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (long i = 0; i < n; i++)
        sum += a[i];
    printf("base=%p n=%ld sum=%.0f\n", (void *)a, n, sum);
    free(a);
    return 0;
}
