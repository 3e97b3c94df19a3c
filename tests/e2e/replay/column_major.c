/* The column-major program of issue 28: a row-major N x N array of doubles
 * updated column by column, so consecutive accesses are N * 8 bytes apart
 * and every line is evicted (dirty) before its next element is used: many
 * L1 misses and writebacks. usage: column_major [N] */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 256;
    double *a = calloc((size_t)n * (size_t)n, sizeof *a);
    if (!a)
        return 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            a[(size_t)i * (size_t)n + (size_t)j] += i + j; /* the strided access */
    double s = 0;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        s += a[k];
    printf("%g\n", s);
    free(a);
    return 0;
}
