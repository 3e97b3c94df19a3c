/* omp_shapes.c — loops in OpenMP regions with a static schedule, so each
 * thread's accesses are the same in every run: per-thread record sequences of
 * a trace with loop descriptors and of its --no-descriptors twin must match. */
#include <stdio.h>
#include <stdlib.h>

#define N 20000
static double a[N], b[N], c[N];
static int idx[N];

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 2;
    for (int i = 0; i < N; i++) {
        b[i] = i;
        c[i] = N - i;
        idx[i] = (int)((i * 7919L) % N);
    }
    double s = 0;
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < N; i++)
            a[i] = b[i] * 2 + c[i];
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (int i = 0; i < N; i++)
            s += a[i];
#pragma omp parallel for schedule(static)
        for (int i = 0; i < N; i++)
            b[idx[i]] = a[i]; /* not affine: per-access records */
#pragma omp parallel for schedule(static)
        for (int j = 0; j < 100; j++)
            for (int i = j; i < N; i += 100) /* strided, triangular start */
                c[i] += 1;
    }
    printf("checksum %.1f\n", s);
    return 0;
}
