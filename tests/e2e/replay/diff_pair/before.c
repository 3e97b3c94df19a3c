/* --diff test (replay_diff_pair.sh), "before": the array summed column by
 * column, so each access of the inner loop lands on another cache line. */
#include <stdio.h>

#define ROWS 1024
#define COLS 72

static double a[ROWS][COLS];

static double sum_all(void)
{
    double s = 0;
    for (int j = 0; j < COLS; j++)
        for (int i = 0; i < ROWS; i++)
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
