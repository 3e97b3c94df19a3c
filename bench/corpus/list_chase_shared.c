/*
 * list_chase_shared — one random-order linked list of 8 K nodes built by the
 * main thread; every thread walks it from a different start, and every
 * 64th node it visits it bumps the node's visit counter.
 * Why: pointer chasing through shared, mostly read data: read sharing of
 * every line plus occasional true-sharing writes into the nodes.
 */
#include "corpus.h"

struct node { struct node *next; long value; atomic_long visits; long pad; };

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long n = 8192;
    long steps = c.scale * 1000 / 2;
    struct node *nodes = corpus_alloc(n * sizeof *nodes);
    long *perm = malloc(n * sizeof *perm);
    uint64_t s = c.seed;
    for (long i = 0; i < n; i++) perm[i] = i;
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(corpus_rand(&s) % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[j]; perm[j] = x;
    }
    for (long i = 0; i < n; i++) {
        nodes[perm[i]].next = &nodes[perm[(i + 1) % n]];
        nodes[perm[i]].value = (long)(corpus_rand(&s) % 100);
    }
    uint64_t total = 0;
#pragma omp parallel reduction(+ : total)
    {
        int t = omp_get_thread_num();
        struct node *p = &nodes[perm[(long)t * n / c.threads]];
        long sum = 0;
        for (long i = 0; i < steps; i++) {
            sum += p->value;
            if ((i & 63) == 0) atomic_fetch_add_explicit(&p->visits, 1, memory_order_relaxed);
            p = p->next;
        }
        total += (uint64_t)sum;
    }
    for (long i = 0; i < n; i++) total = corpus_mix(total, (uint64_t)atomic_load(&nodes[i].visits));
    corpus_done("list_chase_shared", &c, total);
    free(perm); free(nodes);
    return 0;
}
