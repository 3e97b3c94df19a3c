/*
 * cyclic_scan_llc — each thread scans its own buffer cyclically (12 MiB, one word per line),
 * reading and writing one word per step, always in the same order.
 * Why: a cyclic scan is LRU's worst case: every reuse distance is the buffer
 * size, around a last-level cache share; a spike in the histogram whose bin
 * boundary decides hit or miss.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    /* touched words, words between them */
    corpus_done("cyclic_scan_llc", &c, corpus_cyclic_scan(&c, 196608, 8));
    return 0;
}
