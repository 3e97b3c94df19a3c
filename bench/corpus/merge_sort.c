/*
 * merge_sort — top-down merge sort of random keys with OpenMP tasks (a task
 * per half down to 4 K elements, insertion-free serial sort below), merging
 * through a scratch array.
 * Why: the data a parent merges were sorted by whichever threads ran the
 * child tasks: producer/consumer sharing decided by the task scheduler, and
 * log n streaming passes with growing reuse distances.
 */
#include "corpus.h"

static void msort(long *a, long *tmp, long n, int depth) {
    if (n < 2) return;
    long h = n / 2;
    if (n > 4096 && depth < 8) {
#pragma omp task
        msort(a, tmp, h, depth + 1);
#pragma omp task
        msort(a + h, tmp + h, n - h, depth + 1);
#pragma omp taskwait
    } else {
        msort(a, tmp, h, depth + 1);
        msort(a + h, tmp + h, n - h, depth + 1);
    }
    long i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    /* about 4 n log2(n) accesses in all */
    long n = 1024;
    while (4 * (2 * n) * 20 <= c.scale * 1000 * c.threads) n *= 2;
    long *a = corpus_alloc(n * sizeof *a), *tmp = corpus_alloc(n * sizeof *tmp);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) a[i] = (long)(corpus_rand(&s) % 1000000007);
#pragma omp parallel
#pragma omp single
    msort(a, tmp, n, 0);
    uint64_t h = 0;
    for (long i = 0; i < n; i++) h = corpus_mix(h, (uint64_t)a[i]);
    corpus_done("merge_sort", &c, h);
    free(a); free(tmp);
    return 0;
}
