/*
 * list_chase_random — each thread builds its own singly linked list of 16 K
 * nodes laid out in a random permutation and walks it repeatedly.
 * Why: dependent loads with no spatial locality: every reuse distance is the
 * list length, a single spike, far beyond L1.
 */
#include "corpus.h"

struct node { struct node *next; long value; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 16384;
    long walks = c.scale * 1000 / (2 * n);
    if (walks < 1) walks = 1;
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        struct node *nodes = corpus_alloc(n * sizeof *nodes);
        long *perm = malloc(n * sizeof *perm);
        uint64_t s = c.seed * 13 + (uint64_t)t;
        for (long i = 0; i < n; i++) perm[i] = i;
        for (long i = n - 1; i > 0; i--) {
            long j = (long)(corpus_rand(&s) % (uint64_t)(i + 1)), x = perm[i];
            perm[i] = perm[j]; perm[j] = x;
        }
        for (long i = 0; i < n; i++) {
            nodes[perm[i]].next = &nodes[perm[(i + 1) % n]];
            nodes[perm[i]].value = (long)(corpus_rand(&s) % 100);
        }
        long sum = 0;
        for (long w = 0; w < walks; w++) {
            struct node *p = &nodes[perm[0]];
            for (long i = 0; i < n; i++) { sum += p->value; p = p->next; }
        }
        total ^= corpus_mix((uint64_t)t, (uint64_t)sum);
        free(perm); free(nodes);
    }
    corpus_done("list_chase_random", &c, total);
    return 0;
}
