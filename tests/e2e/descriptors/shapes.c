#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>

#define N 4000
static double a[N], b[N], c[N];
static double A[64][64];
static int idx[N];
volatile long g_sink;
static long g;
static jmp_buf jb;

__attribute__((noinline)) static void jumper(int i) { if (i == 37) longjmp(jb, 1); }

__attribute__((noinline)) static double simple(int n) { for (int i = 0; i < n; i++) a[i] = b[i] + c[i]; return a[n/2]; }
__attribute__((noinline)) static double triangular(int n) { double s = 0; for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) s += A[i][j]; return s; }
__attribute__((noinline)) static void negative(int n) { for (int i = n - 1; i >= 0; i--) a[i] *= 2.0; }
__attribute__((noinline)) static void strided(int n, int st) { for (int i = 0; i * st < n; i++) b[i * st] += 1.0; }
__attribute__((noinline)) static int early(int n, double key) { for (int i = 0; i < n; i++) if (a[i] == key) return i; return -1; }
__attribute__((noinline)) static void cont(int n) { for (int i = 0; i < n; i++) { if (i & 1) continue; c[i] = a[i] * 3; } }
__attribute__((noinline)) static void alias(double *p, int n) { for (int i = 0; i < n - 1; i++) p[i + 1] = p[i] * 0.5 + 1; }
__attribute__((noinline)) static double colmajor(void) { double s = 0; for (int j = 0; j < 64; j++) for (int i = 0; i < 64; i++) s += A[i][j]; return s; }
__attribute__((noinline)) static void invariant(int n) { for (int i = 0; i < n; i++) { g += (long)a[i]; g_sink = i; } }
__attribute__((noinline)) static void gather(int n) { for (int i = 0; i < n; i++) a[idx[i]] += 1.0; }
__attribute__((noinline)) static void copies(int n) { for (int i = 0; i + 4 <= n; i += 4) memcpy(&c[i], &b[i], 32); }
__attribute__((noinline)) static void trips(int n) { for (int i = 0; i < n; i++) b[i] = i; }
__attribute__((noinline)) static void withcall(int n) { for (int i = 0; i < n; i++) { a[i] += 1; jumper(i); } }
__attribute__((noinline)) static long reduce_int(const int *p, int n) { long s = 0; for (int i = 0; i < n; i++) s += p[i]; return s; }
__attribute__((noinline)) static void stencil(int n) { for (int t = 0; t < 3; t++) for (int i = 1; i < n - 1; i++) c[i] = (a[i-1] + a[i] + a[i+1]) / 3; }
__attribute__((noinline)) static void twod(int n) { for (int i = 1; i < 63; i++) for (int j = 1; j < 63; j++) A[i][j] = 0.25 * (A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]); (void)n; }

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 0; i < N; i++) { b[i] = i; c[i] = N - i; idx[i] = (i * 7919) % N; }
    for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j++) A[i][j] = i + j;
    double s = 0;
    for (int r = 0; r < reps; r++) {
        s += simple(N); s += triangular(64); negative(N); strided(N, 3); strided(N, 17);
        s += early(N, a[1234]); cont(N); alias(a, N); s += colmajor(); invariant(N); gather(N);
        copies(N); trips(0); trips(1); trips(2); trips(N);
        if (!setjmp(jb)) withcall(100);
        s += reduce_int(idx, N); stencil(N); twod(0);
    }
    printf("checksum %.3f %ld\n", s, g);
    return 0;
}
