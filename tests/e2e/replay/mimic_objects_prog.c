/* The program of e2e.replay_mimic_objects, traced on one thread and
 * mimicked on two cores: a heap array that a parallel loop updates through
 * the region's shared pointer (PES_SITE_SHARED: every core's accesses keep
 * its address), so with --chunk 1 the two cores write neighbouring elements
 * of one cache line, and a global that every core reads (a private copy per
 * core under mimicking). */
#include <stdio.h>
#include <stdlib.h>

double scale[4] = {1, 2, 3, 4};

int main(void) {
    double *v = malloc(64 * sizeof *v); /* the shared block */
    if (!v) return 1;
    for (int i = 0; i < 64; i++) v[i] = i;
    for (int r = 0; r < 4; r++) {
#pragma omp parallel for schedule(static, 1)
        for (int i = 0; i < 64; i++) v[i] = v[i] * scale[r];
    }
    double s = 0;
    for (int i = 0; i < 64; i++) s += v[i];
    printf("%g\n", s);
    free(v);
    return 0;
}
