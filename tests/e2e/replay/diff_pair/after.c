/* --diff test (replay_diff_pair.sh), "after": the same sum row by row. */
#include <stdio.h>

#define ROWS 1024
#define COLS 72

static double a[ROWS][COLS];

static double sum_all(void)
{
    double s = 0;
    /* Row by row: the inner loop walks along a row, so the 8 doubles of
     * each cache line are used one after the other (this comment and the
     * blank line below move the hot line down).
     */

    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            s += a[i][j]; /* the hot line */
    return s;
}

int main(void)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            a[i][j] = i + j;
    printf("%g\n", sum_all());
    return 0;
}
