/* switch_prog — a long vectorised loop for the switching test: samples fall
 * in the middle of it, and each must be taken on exactly the access its count
 * names (the Kth load), compared with the full trace of the same program. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096
int a[N], b[N];

__attribute__((noinline)) static long dot(void)
{
    long s = 0;
    for (int i = 0; i < N; i++)
        s += (long)a[i] * b[i];
    return s;
}

int main(int argc, char **argv)
{
    long r = argc > 1 ? atol(argv[1]) : 100;
    for (int i = 0; i < N; i++) {
        a[i] = i % 17;
        b[i] = i % 5;
    }
    long s = 0;
    for (long k = 0; k < r; k++) {
        a[k % N]++; /* a new result each time: dot() cannot be hoisted */
        s += dot();
    }
    printf("switch_prog: %ld\n", s);
    return 0;
}
