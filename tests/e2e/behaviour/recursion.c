/* recursion — DEPTH nested calls, each frame writing and reading a local
 * array (the main thread's default 8 MiB stack holds them: the plain clang
 * build at -O2 uses well under 100 bytes per frame). */
#include "bh.h"

#define DEPTH 50000

__attribute__((noinline)) static unsigned long down(long depth, volatile unsigned long *up)
{
    volatile unsigned long local[4];
    for (int i = 0; i < 4; i++)
        local[i] = up[i] * 3 + (unsigned long)depth;
    unsigned long below = depth ? down(depth - 1, local) : 1;
    return below * 7 + local[depth & 3];   /* after the call: no tail call */
}

int main(void)
{
    volatile unsigned long top[4] = {1, 2, 3, 4};
    printf("recursion: depth %d, %lx\n", DEPTH, down(DEPTH, top));
    return 0;
}
