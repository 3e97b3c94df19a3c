/*
 * scatter_add — each thread reads a block of (index, value) pairs and adds
 * the value into a shared 1 MiB array at the index with an atomic add
 * (random indices: an integer-sort-like scatter).
 * Why: random writes to a large shared array: collisions between threads
 * are rare, so most lines are written by one thread at a time but owned by
 * no one; long reuse distances everywhere.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long size = 1 << 17;
    int nt = c.threads;
    long per = c.scale * 1000 / 4, n = per * nt;
    unsigned *idx = corpus_alloc(n * sizeof *idx);
    long *val = corpus_alloc(n * sizeof *val);
    atomic_long *out = corpus_alloc(size * sizeof *out);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) {
        uint64_t r = corpus_rand(&s);
        idx[i] = (unsigned)(r % (uint64_t)size);
        val[i] = (long)(r >> 54);
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) atomic_fetch_add_explicit(&out[idx[i]], val[i], memory_order_relaxed);
    uint64_t h = 0;
    for (long i = 0; i < size; i++) h = corpus_mix(h, (uint64_t)atomic_load(&out[i]));
    corpus_done("scatter_add", &c, h);
    free(idx); free(val); free(out);
    return 0;
}
