/*
 * migratory_token — a 512-byte object passed round the threads like a token:
 * the holder reads and updates every field, then hands it to the next thread
 * through a turn variable it spins on.
 * Why: migratory sharing: each line is read then written by one thread at a
 * time, in turn, so every transfer is a read miss followed by an upgrade.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    enum { FIELDS = 64 };
    long rounds = c.scale * 1000 / (2 * FIELDS + 200);
    if (rounds < 1) rounds = 1;
    static _Alignas(64) long obj[FIELDS];
    static _Alignas(64) atomic_long turn;
    uint64_t s = c.seed;
    for (int i = 0; i < FIELDS; i++) obj[i] = (long)(corpus_rand(&s) % 1000);
    int nt = c.threads;
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        long scratch[100] = {0};
        for (long r = 0; r < rounds; r++) {
            while (atomic_load_explicit(&turn, memory_order_acquire) != r * nt + t) corpus_pause();
            for (int i = 0; i < FIELDS; i++) obj[i] = obj[i] * 3 + t + (obj[(i + 1) % FIELDS] & 7);
            atomic_store_explicit(&turn, r * nt + t + 1, memory_order_release);
            for (int i = 0; i < 100; i++) scratch[i] += i ^ r;   /* private work between turns */
        }
        if (scratch[5] == -1) printf("never\n");
    }
    uint64_t h = 0;
    for (int i = 0; i < FIELDS; i++) h = corpus_mix(h, (uint64_t)obj[i]);
    corpus_done("migratory_token", &c, h);
    return 0;
}
