/* roi_nest — regions of interest that nest and repeat (roi_run.sh nest):
 * reps times: outside, n stores to a[]; then a region entered twice (the
 * inner pair must not end it) holding 2 m loads of a[]. */
#include <pes/roi.h>
#include <stdio.h>
#include <stdlib.h>
double a[100000];
int main(int argc, char **argv)
{
    long n = atol(argv[1]), m = atol(argv[2]), reps = atol(argv[3]);
    double s = 0;
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            a[i] = (double)(i + r);
        pes_roi_begin();
        pes_roi_begin();
        for (long i = 0; i < m; i++)
            s += a[i];
        pes_roi_end();
        for (long i = 0; i < m; i++)
            s += a[i];
        pes_roi_end();
    }
    pes_roi_end();   /* unmatched: ignored */
    printf("s=%.0f\n", s);
    return 0;
}
