/*
 * bfs_random_graph — level-synchronous breadth-first search on a random
 * graph (CSR, average degree 8) from several sources: each level's frontier
 * is split over threads, which claim unvisited neighbours with a CAS on the
 * distance array and append them to the next frontier through an atomic
 * counter.
 * Why: irregular, data-dependent accesses to a shared distance array with
 * racy claims, plus a hot shared frontier counter: the graph codes' pattern.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 16384, deg = 8, m = n * deg;
    long sources = c.scale * 1000 * c.threads / (4 * m);
    if (sources < 1) sources = 1;
    uint64_t s = c.seed;
    long *rowptr = corpus_alloc((n + 1) * sizeof *rowptr);
    int *adj = corpus_alloc(m * sizeof *adj);
    for (long i = 0; i <= n; i++) rowptr[i] = i * deg;
    for (long k = 0; k < m; k++) adj[k] = (int)(corpus_rand(&s) % (uint64_t)n);
    _Atomic int *dist = corpus_alloc(n * sizeof *dist);
    int *front = corpus_alloc(n * sizeof *front), *next = corpus_alloc(n * sizeof *next);
    atomic_long nnext;
    uint64_t h = 0;
    for (long src = 0; src < sources; src++) {
        for (long i = 0; i < n; i++) atomic_init(&dist[i], -1);
        long root = (long)(corpus_rand(&s) % (uint64_t)n), nfront = 1;
        atomic_store(&dist[root], 0);
        front[0] = (int)root;
        for (int level = 1; nfront > 0; level++) {
            atomic_store(&nnext, 0);
#pragma omp parallel for schedule(static)
            for (long f = 0; f < nfront; f++) {
                long v = front[f];
                for (long k = rowptr[v]; k < rowptr[v + 1]; k++) {
                    int u = adj[k], e = -1;
                    if (atomic_load_explicit(&dist[u], memory_order_relaxed) < 0 &&
                        atomic_compare_exchange_strong(&dist[u], &e, level))
                        next[atomic_fetch_add(&nnext, 1)] = u;
                }
            }
            nfront = atomic_load(&nnext);
            int *x = front; front = next; next = x;
        }
        for (long i = 0; i < n; i++) h = corpus_mix(h, (uint64_t)(atomic_load(&dist[i]) + 1));
    }
    corpus_done("bfs_random_graph", &c, h);
    free(rowptr); free(adj); free((void *)dist); free(front); free(next);
    return 0;
}
