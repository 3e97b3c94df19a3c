/* roi_omp — a region of interest around one OpenMP loop (roi_run.sh): a
 * parallel loop before it writes a[0..n), the one inside reads a[0..m) and
 * writes b[0..m), the one after reads a[] and updates b[0..n). */
#include <pes/roi.h>
#include <stdio.h>
#include <stdlib.h>
double a[200000], b[200000];
int main(int argc, char **argv)
{
    long n = atol(argv[1]), m = atol(argv[2]);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        a[i] = (double)i;
    pes_roi_begin();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; i++)
        b[i] = 2 * a[i];
    pes_roi_end();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        b[i] += a[i];
    printf("a=%p b=%p n=%ld b1=%.0f\n", (void *)a, (void *)b, n, b[1]);
    return 0;
}
