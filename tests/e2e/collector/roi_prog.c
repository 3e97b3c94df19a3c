/* roi_prog — the region-of-interest e2e test (roi_run.sh): n stores to a[]
 * before the region, m loads of a[] inside it, n loads and n stores after it.
 * a[] is global so that the compiler keeps the accesses on their side of the
 * opaque marker calls. */
#include <pes/roi.h>
#include <stdio.h>
#include <stdlib.h>
double a[100000];
int main(int argc, char **argv)
{
    long n = atol(argv[1]), m = atol(argv[2]);
    for (long i = 0; i < n; i++)
        a[i] = (double)i;
    pes_roi_begin();
    double s = 0;
    for (long i = 0; i < m; i++)
        s += a[i];
    pes_roi_end();
    for (long i = 0; i < n; i++)
        a[i] *= 2;
    printf("a=%p s=%.0f\n", (void *)a, s);
    return 0;
}
