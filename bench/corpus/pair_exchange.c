/*
 * pair_exchange — threads in pairs (0,1), (2,3), ...: in each step a thread
 * writes a 1 KiB outbox, waits at a barrier, and reads its partner's outbox
 * into its own state. With an odd team the last thread exchanges with itself.
 * Why: the four-thread pair exchange: all communication is within
 * pairs, so the thread-pair matrix has a block-diagonal truth that the
 * estimated matrix must reproduce (no volume between pairs).
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    const long words = 128;
    int nt = c.threads;
    long steps = c.scale * 1000 / (4 * words);
    if (steps < 1) steps = 1;
    long *box = corpus_alloc((size_t)nt * words * sizeof *box);
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        int t = omp_get_thread_num(), partner = (t ^ 1) < nt ? (t ^ 1) : t;
        long state[128];
        uint64_t s = c.seed * 29 + (uint64_t)t;
        for (long i = 0; i < words; i++) state[i] = (long)(corpus_rand(&s) % 1000);
        for (long k = 0; k < steps; k++) {
            long *out = &box[(size_t)t * words], *in = &box[(size_t)partner * words];
            for (long i = 0; i < words; i++) out[i] = state[i] + k;
#pragma omp barrier
            for (long i = 0; i < words; i++) state[i] = (state[i] + in[words - 1 - i]) % 1000003;
#pragma omp barrier
        }
        uint64_t h = (uint64_t)t;
        for (long i = 0; i < words; i++) h = corpus_mix(h, (uint64_t)state[i]);
        total ^= h;
    }
    corpus_done("pair_exchange", &c, total);
    free(box);
    return 0;
}
