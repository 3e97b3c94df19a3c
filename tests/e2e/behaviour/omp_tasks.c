/* omp_tasks — OpenMP tasks (run with 2 threads): one task per block of an
 * array, then a recursive task tree; results do not depend on which thread
 * ran which task. */
#include <omp.h>

#include "bh.h"

#define BLOCKS 64
#define BLOCK 512
static unsigned long data[BLOCKS][BLOCK];
static unsigned long block_sum[BLOCKS];

static unsigned long tree(int depth, unsigned long *a)
{
    if (depth == 0)
        return bh_sweep(a, 64, 4);
    unsigned long left, right;
#pragma omp task shared(left)
    left = tree(depth - 1, a);
#pragma omp task shared(right)
    right = tree(depth - 1, a + 64 * (1 << (depth - 1)));
#pragma omp taskwait
    return left * 3 + right;
}

int main(void)
{
    static unsigned long leaves[64 * 256];
    unsigned long t = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int b = 0; b < BLOCKS; b++) {
#pragma omp task firstprivate(b)
            block_sum[b] = bh_sweep(data[b], BLOCK, 10 + b % 3);
        }
#pragma omp taskwait
        t = tree(8, leaves);
    }
    unsigned long s = 0;
    for (int b = 0; b < BLOCKS; b++)
        s = s * 31 + block_sum[b];
    printf("omp_tasks: blocks %lx, tree %lx\n", s, t);
    return 0;
}
