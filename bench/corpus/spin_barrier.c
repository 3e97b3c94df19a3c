/*
 * spin_barrier — a hand-written sense-reversing barrier (an atomic arrival
 * counter and a global sense flag) separating short private compute phases.
 * Why: synchronisation traffic as the main communication: every thread
 * writes the counter and spins reading the flag, which one thread writes.
 */
#include "corpus.h"

static _Alignas(64) atomic_int arrived;
static _Alignas(64) atomic_int sense;

static void barrier(int nt, int *local) {
    *local = !*local;
    if (atomic_fetch_add(&arrived, 1) == nt - 1) {
        atomic_store(&arrived, 0);
        atomic_store(&sense, *local);
    } else {
        while (atomic_load(&sense) != *local) corpus_pause();
    }
}

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 300);
    const long work = 128;
    long phases = c.scale * 1000 / (2 * work + 20);
    if (phases < 1) phases = 1;
    int nt = c.threads;
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num(), local = 0;
        long buf[128];
        for (long i = 0; i < work; i++) buf[i] = i + t;
        for (long p = 0; p < phases; p++) {
            for (long i = 0; i < work; i++) buf[i] = (buf[i] * 5 + p) % 65521;
            barrier(nt, &local);
        }
        uint64_t h = (uint64_t)t;
        for (long i = 0; i < work; i++) h = corpus_mix(h, (uint64_t)buf[i]);
        total ^= h;
    }
    corpus_done("spin_barrier", &c, total);
    return 0;
}
