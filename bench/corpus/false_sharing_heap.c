/*
 * false_sharing_heap — each thread's accumulator state is a separate 24-byte
 * malloc block, allocated one after another before the parallel region, so
 * the allocator packs several threads' blocks into one line.
 * Why: false sharing that no array index shows: it appears only through the
 * allocator's layout (adjacent heap blocks).
 */
#include "corpus.h"

struct acc { long n, sum, last; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    int nt = c.threads;
    long ops = c.scale * 1000 / 6;
    struct acc **blk = malloc(nt * sizeof *blk);
    for (int t = 0; t < nt; t++) blk[t] = calloc(1, sizeof(struct acc));
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        volatile struct acc *a = blk[t];
        uint64_t s = c.seed * 5 + (uint64_t)t;
        for (long i = 0; i < ops; i++) {
            long x = (long)(corpus_rand(&s) % 1000);
            a->n = a->n + 1;
            a->sum = a->sum + x;
            a->last = x;
        }
    }
    uint64_t h = 0;
    for (int t = 0; t < nt; t++) {
        h = corpus_mix(corpus_mix(h, (uint64_t)blk[t]->sum), (uint64_t)blk[t]->last);
        free(blk[t]);
    }
    corpus_done("false_sharing_heap", &c, h);
    free(blk);
    return 0;
}
