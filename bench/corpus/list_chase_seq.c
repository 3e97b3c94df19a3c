/*
 * list_chase_seq — the same walk as list_chase_random but the nodes are laid
 * out in list order, four to a cache line, and the list is shorter (2 K).
 * Why: pointer chasing with spatial locality: line-level reuse at distance
 * 1-3 inside a line and a fitted-in-L1 cycle; a contrast to the random list.
 */
#include "corpus.h"

struct node { struct node *next; long value; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 2048;
    long walks = c.scale * 1000 / (2 * n);
    if (walks < 1) walks = 1;
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        struct node *nodes = corpus_alloc(n * sizeof *nodes);
        uint64_t s = c.seed * 17 + (uint64_t)t;
        for (long i = 0; i < n; i++) {
            nodes[i].next = &nodes[(i + 1) % n];
            nodes[i].value = (long)(corpus_rand(&s) % 100);
        }
        long sum = 0;
        for (long w = 0; w < walks; w++) {
            struct node *p = &nodes[0];
            for (long i = 0; i < n; i++) { sum += p->value; p = p->next; }
        }
        total ^= corpus_mix((uint64_t)t, (uint64_t)sum);
        free(nodes);
    }
    corpus_done("list_chase_seq", &c, total);
    return 0;
}
