/*
 * phase_change — first half: each thread streams over its own 256 KiB array
 * (no sharing, long reuse distances); second half: all threads update a
 * shared 2 KiB array at random places (short distances, many invalidations).
 * Why: a program whose pattern changes halfway: a single average over the
 * run hides both phases, and a sampler that adapts to the first misjudges
 * the second.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long per = 32768, hot = 256;
    long half = c.scale * 1000 / 2;
    static _Alignas(64) atomic_long shared[256];
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num();
        long *mine = corpus_alloc(per * sizeof *mine), acc = 0;
        for (long i = 0; i < half / 2; i++) {      /* phase 1: read + write per element */
            long k = i % per;
            mine[k] = mine[k] + (i ^ t);
        }
#pragma omp barrier
        uint64_t s = c.seed * 19 + (uint64_t)t;
        for (long i = 0; i < half; i++) {          /* phase 2: one shared RMW each */
            uint64_t r = corpus_rand(&s);
            atomic_fetch_add_explicit(&shared[r % hot], (long)(r >> 60), memory_order_relaxed);
        }
        for (long k = 0; k < per; k++) acc += mine[k];
        total ^= corpus_mix((uint64_t)t, (uint64_t)acc);
        free(mine);
    }
    uint64_t h = total;
    for (long i = 0; i < hot; i++) h = corpus_mix(h, (uint64_t)atomic_load(&shared[i]));
    corpus_done("phase_change", &c, h);
    return 0;
}
