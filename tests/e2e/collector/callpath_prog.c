/* callpath_prog.c — one hot helper reached through two call paths with
 * known proportions (callpath_run.sh, issue 28): every round, solve_a calls
 * helper three times and solve_b once, each call loading the same N words,
 * so 3/4 of helper's loads run under main > solve_a > helper and 1/4 under
 * main > solve_b > helper. The lines of the calls are marked for the test. */
#include <stdio.h>
#include <stdlib.h>

#define N 100

__attribute__((noinline)) static double helper(const double *a, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i]; /* helper-load */
    /* a side effect: the calls are not hoisted out of the loops as pure ones */
    __asm__ volatile("" ::: "memory");
    return s;
}

__attribute__((noinline)) static double solve_a(const double *a)
{
    double s = 0;
    for (int k = 0; k < 3; k++)
        s += helper(a, N); /* call-a */
    return s;
}

__attribute__((noinline)) static double solve_b(const double *a)
{
    double s = helper(a, N); /* call-b */
    __asm__ volatile("" ::: "memory"); /* not a tail call: solve_b keeps its frame */
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50000;
    double *a = malloc(N * sizeof *a);
    if (!a)
        return 1;
    for (int i = 0; i < N; i++)
        a[i] = i;
    double s = 0;
    for (int r = 0; r < rounds; r++) {
        s += solve_a(a); /* main-a */
        s += solve_b(a); /* main-b */
    }
    printf("callpath_prog: %.0f\n", s);
    free(a);
    return 0;
}
