/*
 * mutex_counters — pthreads: 16 counters, each behind its own mutex; each
 * thread does read-modify-write updates on randomly chosen counters
 * (counter and its mutex on one line) with some private work in between.
 * Why: lock-protected shared state: lock words and data migrate together,
 * contended on few lines.
 */
#include "corpus.h"
#include <pthread.h>

enum { COUNTERS = 16 };
struct counter {
    _Alignas(64) pthread_mutex_t m;
    long value;
};
static struct counter ctr[COUNTERS];
static struct corpus cfg;

static void *worker(void *arg) {
    long t = (long)arg, ops = cfg.scale * 1000 / 24;
    uint64_t s = cfg.seed * 101 + (uint64_t)t;
    long local[64] = {0};
    for (long i = 0; i < ops; i++) {
        uint64_t r = corpus_rand(&s);
        for (int k = 0; k < 8; k++) local[(r + k) & 63] += k;   /* private work */
        struct counter *x = &ctr[r % COUNTERS];
        pthread_mutex_lock(&x->m);
        x->value += (long)(r >> 40) % 7;
        pthread_mutex_unlock(&x->m);
    }
    long keep = 0;
    for (int k = 0; k < 64; k++) keep += local[k];
    return (void *)keep;
}

int main(int argc, char **argv) {
    cfg = corpus_args(argc, argv, 500);
    for (int i = 0; i < COUNTERS; i++) pthread_mutex_init(&ctr[i].m, NULL);
    pthread_t *th = malloc(cfg.threads * sizeof *th);
    for (long t = 0; t < cfg.threads; t++) pthread_create(&th[t], NULL, worker, (void *)t);
    uint64_t h = 0;
    for (long t = 0; t < cfg.threads; t++) {
        void *r;
        pthread_join(th[t], &r);
        h += (uint64_t)(long)r;
    }
    for (int i = 0; i < COUNTERS; i++) h = corpus_mix(h, (uint64_t)ctr[i].value);
    corpus_done("mutex_counters", &cfg, h);
    return 0;
}
