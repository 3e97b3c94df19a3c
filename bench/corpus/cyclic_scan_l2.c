/*
 * cyclic_scan_l2 — each thread scans its own buffer cyclically (1.5 MiB, one word per line),
 * reading and writing one word per step, always in the same order.
 * Why: a cyclic scan is LRU's worst case: every reuse distance is the buffer
 * size, around the 1-2 MiB L2 of current cores; a spike in the histogram whose bin
 * boundary decides hit or miss.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    /* touched words, words between them */
    corpus_done("cyclic_scan_l2", &c, corpus_cyclic_scan(&c, 24576, 8));
    return 0;
}
