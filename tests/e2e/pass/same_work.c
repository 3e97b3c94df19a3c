/*
 * same_work.c — the kernels of the calls.same test (same_main.c), compiled
 * twice into one program: with call edges (PFX=edges_) and with -mllvm
 * -pes-no-call-edges (PFX=plain_). Affine loops (descriptors at -O2), calls in
 * loops, a call through a pointer, a recursion and qsort with an instrumented
 * comparator. Every address but the stack's comes from the caller (each
 * build has its own globals).
 */
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b)  CAT2(a, b)
#define NAME(x)    CAT(PFX, x)
#define NOINL      __attribute__((noinline))

NOINL static int leaf(const int *a, int i) {
    return a[i] * 3;
}

NOINL static int rec(int *a, int n) {
    if (n <= 0)
        return a[0];
    int r = rec(a, n - 1);
    a[n] += r & 7;
    return r + a[n];
}

static int cmp(const void *x, const void *y) {
    int u = *(const int *)x, v = *(const int *)y;
    return (u > v) - (u < v);
}

void NAME(warm)(volatile int *sink) {
    *sink = 1;
}

int NAME(work)(int *a, int n) {
    int s = 0, tmp[16];
    int (*volatile op)(const int *, int) = leaf; /* never made a direct call */
    for (int i = 0; i < n; i++)
        a[i] = (i * 7) % n;
    for (int i = 0; i < n; i++)
        s += leaf(a, i);
    for (int i = 0; i < n; i += 4)
        s += op(a, i);
    s += rec(a, 12);
    memcpy(tmp, a, sizeof tmp);
    for (int i = 0; i < 16; i++)
        s += tmp[i];
    qsort(a, (size_t)n, sizeof *a, cmp);
    return s;
}
