/*
 * task_queue — a bag of tasks of random size (each sums a random slice of a
 * shared array) handed out through one shared atomic index; every thread
 * grabs the next task until none is left.
 * Why: dynamic scheduling: the hot index line is true-shared by everyone,
 * and which thread reads which slice changes from run to run.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 1 << 16;
    long tasks = c.scale * 1000 * c.threads / 260;
    long *data = corpus_alloc(n * sizeof *data), *start = corpus_alloc(tasks * sizeof *start),
         *len = corpus_alloc(tasks * sizeof *len), *res = corpus_alloc(tasks * sizeof *res);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) data[i] = (long)(corpus_rand(&s) % 1000);
    for (long k = 0; k < tasks; k++) {
        len[k] = 16 + (long)(corpus_rand(&s) % 480);
        start[k] = (long)(corpus_rand(&s) % (uint64_t)(n - len[k]));
    }
    static _Alignas(64) atomic_long next;
#pragma omp parallel
    for (;;) {
        long k = atomic_fetch_add(&next, 1);
        if (k >= tasks) break;
        long acc = 0;
        for (long i = start[k]; i < start[k] + len[k]; i++) acc += data[i];
        res[k] = acc;
    }
    uint64_t h = 0;
    for (long k = 0; k < tasks; k++) h = corpus_mix(h, (uint64_t)res[k]);
    corpus_done("task_queue", &c, h);
    free(data); free(start); free(len); free(res);
    return 0;
}
