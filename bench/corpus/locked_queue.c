/*
 * locked_queue — one shared FIFO protected by a pthread mutex; every thread
 * pushes a batch of items, then pops and sums items until all are gone
 * (many producers, many consumers).
 * Why: a lock word and a queue's head/tail that every thread writes, and
 * items consumed by whichever thread gets them (unpredictable sharing).
 * A mutex that sleeps, not omp_lock_t: libomp's lock spins, and with more
 * threads than CPUs a preempted holder made the run take minutes.
 */
#include "corpus.h"
#include <pthread.h>

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 300);
    long per = c.scale * 1000 / 12, cap = per * c.threads;
    long *q = corpus_alloc(cap * sizeof *q), head = 0, tail = 0;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    uint64_t total = 0;
#pragma omp parallel reduction(+ : total)
    {
        uint64_t s = c.seed * 31 + (uint64_t)omp_get_thread_num();
        for (long i = 0; i < per; i++) {
            long v = (long)(corpus_rand(&s) % 1000);
            pthread_mutex_lock(&lock);
            q[tail++] = v;
            pthread_mutex_unlock(&lock);
        }
#pragma omp barrier
        for (;;) {
            long v = -1;
            pthread_mutex_lock(&lock);
            if (head < tail) v = q[head++];
            pthread_mutex_unlock(&lock);
            if (v < 0) break;
            total += (uint64_t)v;
        }
    }
    corpus_done("locked_queue", &c, total);
    free(q);
    return 0;
}
