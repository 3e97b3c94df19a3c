/*
 * spsc_ring — threads in pairs: the even thread produces items into a
 * single-producer single-consumer ring buffer (C11 atomics for head and
 * tail), the odd one consumes them. With an odd team the last thread
 * produces and consumes its own ring.
 * Why: the producer/consumer pattern of pipelines: ring slots migrate from
 * writer to reader, and the two indices are true sharing polled by both.
 */
#include "corpus.h"

enum { RING = 256 };
struct ring {
    _Alignas(64) atomic_long head;   /* next slot to write (producer) */
    _Alignas(64) atomic_long tail;   /* next slot to read (consumer) */
    _Alignas(64) long slot[RING];
};

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    long items = c.scale * 1000 / 6;
    int nt = c.threads, pairs = (nt + 1) / 2;
    struct ring *r = corpus_alloc(pairs * sizeof *r);
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        struct ring *q = &r[t / 2];
        int alone = (t == nt - 1 && nt % 2);
        uint64_t s = c.seed * 977 + (uint64_t)(t / 2), h = 0;
        if (alone) {
            for (long i = 0; i < items; i++) {
                q->slot[i % RING] = (long)(corpus_rand(&s) % 1000000);
                h = corpus_mix(h, (uint64_t)q->slot[i % RING]);
            }
        } else if (t % 2 == 0) {
            for (long i = 0; i < items; i++) {
                while (i - atomic_load_explicit(&q->tail, memory_order_acquire) >= RING) corpus_pause();
                q->slot[i % RING] = (long)(corpus_rand(&s) % 1000000);
                atomic_store_explicit(&q->head, i + 1, memory_order_release);
            }
        } else {
            for (long i = 0; i < items; i++) {
                while (atomic_load_explicit(&q->head, memory_order_acquire) <= i) corpus_pause();
                h = corpus_mix(h, (uint64_t)q->slot[i % RING]);
                atomic_store_explicit(&q->tail, i + 1, memory_order_release);
            }
        }
        total ^= h;
    }
    corpus_done("spsc_ring", &c, total);
    free(r);
    return 0;
}
