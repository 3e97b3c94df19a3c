/* replay_sdcm_assumptions.sh: the control, a streaming kernel over 32,768
 * cache lines (2 MiB): one pass writes them, a second reads them. Within a
 * pass each line's first double misses and its seven others hit at reuse
 * distance 0; the read pass reuses each line 32,767 lines after its write,
 * far beyond the L1 (512 lines) and L2 (4,096) and far inside the L3
 * (327,680), where SDCM's hit probability is 0 or 1 as the simulation's
 * outcome is: 87.5 % L1 hits, no L2 hit, half the L3's (the second pass). */
#include <stdio.h>

#define N (32768 * 8)

static _Alignas(64) double a[N];

int main(int argc, char **argv)
{
    (void)argv;
    for (int i = 0; i < N; i++)
        a[i] = argc * i;
    double s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    printf("%g\n", s);
    return 0;
}
