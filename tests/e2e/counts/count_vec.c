/* count_vec — vectorised code for the exact-count tests (built for AVX2 with
 * Skylake tuning, like e2e.pass.gather): a gather whose active lanes depend on
 * data (the check clone counts them at run time), a masked store, and a plain
 * vectorised sum. No hand count: the totals of every sampling mode must equal
 * the full trace's of the same deterministic program. */
#include <stdio.h>
#include <stdlib.h>

#define N 1024
int a[N], idx[N], c[N], d[N];

__attribute__((noinline)) static int cgather(void)
{
    int sum = 0;
    for (int i = 0; i < N; i++)
        sum += c[i] ? a[idx[i]] : 0;
    return sum;
}

__attribute__((noinline)) static void masked(void)
{
    for (int i = 0; i < N; i++)
        if (c[i])
            d[i] = a[i];
}

__attribute__((noinline)) static long total(void)
{
    long s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    return s;
}

int main(int argc, char **argv)
{
    long r = argc > 1 ? atol(argv[1]) : 1;
    for (int i = 0; i < N; i++) {
        a[i] = i;
        idx[i] = (i * 7) % N;
        c[i] = (i % 3) != 0;
    }
    long s = 0;
    for (long k = 0; k < r; k++) {
        c[k % N] ^= 1; /* the active lanes change from call to call */
        s += cgather();
        masked();
        s += total();
    }
    printf("count_vec: %ld\n", s);
    return 0;
}
