/*
 * kmeans_assign — k-means iterations on 2-D integer points: each thread
 * assigns its points to the nearest of 16 shared centroids and accumulates
 * per-thread sums; one thread then recomputes the centroids from all the
 * threads' sums.
 * Why: a small read-shared table (the centroids) read at every point, then
 * rewritten once per iteration: bursts of invalidations at phase boundaries.
 */
#include "corpus.h"

enum { K = 16 };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 8192;
    int nt = c.threads;
    long n = per * nt, iters = c.scale * 1000 / (per * (3 * K + 5));
    if (iters < 1) iters = 1;
    int *px = corpus_alloc(n * sizeof *px), *py = corpus_alloc(n * sizeof *py);
    long cx[K], cy[K];
    long *sum = corpus_alloc((size_t)nt * K * 3 * sizeof *sum);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) { px[i] = (int)(corpus_rand(&s) % 10000); py[i] = (int)(corpus_rand(&s) % 10000); }
    for (int k = 0; k < K; k++) { cx[k] = px[k]; cy[k] = py[k]; }
    for (long it = 0; it < iters; it++) {
        memset(sum, 0, (size_t)nt * K * 3 * sizeof *sum);
#pragma omp parallel
        {
            long *my = &sum[(size_t)omp_get_thread_num() * K * 3];
#pragma omp for schedule(static)
            for (long i = 0; i < n; i++) {
                long best = 0, bd = -1;
                for (int k = 0; k < K; k++) {
                    long dx = px[i] - cx[k], dy = py[i] - cy[k], d = dx * dx + dy * dy;
                    if (bd < 0 || d < bd) { bd = d; best = k; }
                }
                my[best * 3] += px[i]; my[best * 3 + 1] += py[i]; my[best * 3 + 2]++;
            }
        }
        for (int k = 0; k < K; k++) {
            long sx = 0, sy = 0, cnt = 0;
            for (int t = 0; t < nt; t++) { sx += sum[(t * K + k) * 3]; sy += sum[(t * K + k) * 3 + 1]; cnt += sum[(t * K + k) * 3 + 2]; }
            if (cnt) { cx[k] = sx / cnt; cy[k] = sy / cnt; }
        }
    }
    uint64_t h = 0;
    for (int k = 0; k < K; k++) h = corpus_mix(corpus_mix(h, (uint64_t)cx[k]), (uint64_t)cy[k]);
    corpus_done("kmeans_assign", &c, h);
    free(px); free(py); free(sum);
    return 0;
}
