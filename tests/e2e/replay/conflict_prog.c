/* replay_conflicts.sh: 256 rows of 4 KiB, read column by column. On a
 * haswell L1 (32 KiB, 8 ways, 64 sets) every row's first line maps to one
 * set, so 8 ways hold 8 of them, while the whole working set (at most 512
 * lines) fits a fully associative cache of the L1's 512 lines. */
#include <stdio.h>

static double a[256][512];

int main(int argc, char **argv)
{
    (void)argv;
    for (int i = 0; i < 256; i++)
        a[i][0] = argc + i;
    double s = 0;
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 8; j++)
            for (int i = 0; i < 256; i++)
                s += a[i][j];
    printf("%g\n", s);
    return 0;
}
