/*
 * stream_triad — a[i] = b[i] + q c[i] over three 2 MiB-per-thread arrays,
 * repeated, static partition.
 * Why: pure streaming with no temporal reuse inside a sweep: reuse only
 * across sweeps at a distance of the whole working set, and no sharing.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 1 << 18;
    long n = per * c.threads, reps = c.scale * 1000 / (3 * per);
    if (reps < 1) reps = 1;
    double *a = corpus_alloc(n * sizeof *a), *b = corpus_alloc(n * sizeof *b), *cc = corpus_alloc(n * sizeof *cc);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) { b[i] = (double)(corpus_rand(&s) % 100); cc[i] = (double)(i % 10); }
    for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + 0.5 * cc[i];
        double *x = b; b = a; a = x;
    }
    uint64_t h = 0;
    for (long i = 0; i < n; i += 61) h = corpus_mix(h, corpus_fix(b[i]));
    corpus_done("stream_triad", &c, h);
    free(a); free(b); free(cc);
    return 0;
}
