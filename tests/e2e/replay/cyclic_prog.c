/* replay_sdcm_assumptions.sh: reads one double of each of LINES consecutive
 * cache lines (argv[1]), PASSES times over. Each pass reuses every line at
 * reuse distance LINES - 1, after a first pass that writes them. On a haswell L1 (512 lines, 8 ways, 64 sets,
 * set = line mod 64) consecutive lines fill the sets evenly: 512 lines are 8
 * per set, so every pass after the first hits; 576 lines are 9 per set, so
 * every access misses (LRU evicts each line one access before its reuse). */
#include <stdio.h>
#include <stdlib.h>

#define PASSES 20
#define MAX_LINES 1024

static _Alignas(64) double a[MAX_LINES * 8];

int main(int argc, char **argv)
{
    int lines = argc > 1 ? atoi(argv[1]) : 512;
    if (lines < 1 || lines > MAX_LINES)
        return 2;
    for (int i = 0; i < lines; i++)
        a[8 * i] = argc + i;
    double s = 0;
    for (int p = 0; p < PASSES; p++)
        for (int i = 0; i < lines; i++)
            s += a[8 * i];
    printf("%g\n", s);
    return 0;
}
