/* The program of e2e.replay_objects: known globals, two heap allocation
 * sites, a freed block whose address the second site gets again, and a stack
 * array. Every access is volatile, so each one in the source is one record;
 * the test counts them by hand from the loop bounds below. */
#include <stdio.h>
#include <stdlib.h>

volatile int table[8];
struct pair { long hot; long cold; };
volatile struct pair counters;
struct row { int id; double sum; };
volatile struct row rows[4];

__attribute__((noinline)) void bump(void) {
    static volatile long calls;
    calls = calls + 1;
}
/* the check after the call keeps the allocation out of a tail call: the
 * site's return address is in these functions */
__attribute__((noinline)) volatile double *make_a(int n) {
    volatile double *p = malloc((size_t)n * sizeof(double)); /* site A */
    if (!p) abort();
    return p;
}
__attribute__((noinline)) volatile double *make_b(int n) {
    volatile double *p = malloc((size_t)n * sizeof(double)); /* site B */
    if (!p) abort();
    return p;
}
__attribute__((noinline)) double stack_work(void) {
    volatile double loc[16];
    for (int i = 0; i < 16; i++) loc[i] = i;
    double s = 0;
    for (int i = 0; i < 16; i++) s += loc[i];
    return s;
}
int main(void) {
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < 8; i++) table[i] = table[i] + r;
    for (int i = 0; i < 100; i++) counters.hot = counters.hot + i;
    counters.cold = 7;
    for (int i = 0; i < 4; i++) {
        rows[i].id = i;
        rows[i].sum = rows[i].sum + 1.0;
    }
    for (int i = 0; i < 5; i++) bump();
    volatile double *a = make_a(64), *b = make_b(32);
    for (int i = 0; i < 64; i++) a[i] = i;
    for (int i = 0; i < 32; i++) b[i] = i;
    free((void *)a);
    volatile double *c = make_b(64);
    for (int i = 0; i < 64; i++) c[i] = 2 * i;
    printf("%s\n", (void *)c == (void *)a ? "reused" : "not reused");
    double s = stack_work();
    printf("%g %g\n", s, c[3] + b[2]);
    free((void *)b);
    free((void *)c);
    return 0;
}
