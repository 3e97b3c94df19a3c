/* heap_events_prog — an allocation-heavy program with a known access pattern
 * for heap_events.sh: each round allocates NODES list nodes at one call
 * (make_node) and NODES small buffers at another (make_buf), walks the
 * nodes' payloads 3 times and each buffer once, and frees all of them. So
 * the nodes take three times the buffers' share of the heap accesses, and
 * every sample in a block is in a block freed soon after: a collector that
 * writes an event per allocation writes many per sample. */
#include <stdio.h>
#include <stdlib.h>

#define NODES 64
#define ROUNDS 4000

struct node {
    struct node *next;
    long v[7];
};

__attribute__((noinline)) static struct node *make_node(struct node *next)
{
    struct node *n = malloc(sizeof *n);
    if (!n)
        abort();
    n->next = next;
    return n;
}

__attribute__((noinline)) static long *make_buf(void)
{
    long *b = malloc(8 * sizeof *b);
    if (!b)
        abort();
    return b;
}

int main(void)
{
    long sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        struct node *head = NULL;
        long *bufs[NODES];
        for (int i = 0; i < NODES; i++) {
            head = make_node(head);
            bufs[i] = make_buf();
        }
        for (int pass = 0; pass < 3; pass++)
            for (struct node *n = head; n; n = n->next)
                for (int k = 0; k < 7; k++)
                    n->v[k] = pass + k + r;
        for (int i = 0; i < NODES; i++)
            for (int k = 0; k < 7; k++)
                bufs[i][k] = k;
        for (struct node *n = head; n; n = n->next)
            sum += n->v[3];
        while (head) {
            struct node *next = head->next;
            free(head);
            head = next;
        }
        for (int i = 0; i < NODES; i++)
            free(bufs[i]);
    }
    printf("heap_events_prog: sum=%ld\n", sum);
    return 0;
}
