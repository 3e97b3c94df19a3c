/*
 * cyclic_scan_l1 — each thread scans its own buffer cyclically (48 KiB of words, 8 accesses per line),
 * reading and writing one word per step, always in the same order.
 * Why: a cyclic scan is LRU's worst case: every reuse distance is the buffer
 * size, just over a 32 KiB L1 and inside a 48 KiB one; a spike in the histogram whose bin
 * boundary decides hit or miss.
 */
#include "corpus.h"

int main(int argc, char **argv) {
    struct corpus c = corpus_args(argc, argv, 500);
    /* touched words, words between them */
    corpus_done("cyclic_scan_l1", &c, corpus_cyclic_scan(&c, 6144, 1));
    return 0;
}
