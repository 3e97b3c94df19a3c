/* Shared helpers for the bench kernels: size parsing and a checksum that makes
 * the compiler keep the computation and lets runs be compared for equality. */
#ifndef PES_BENCH_KERNEL_COMMON_H
#define PES_BENCH_KERNEL_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* argv[1]: "small", "medium" or a number; returns the problem size. */
static inline long kernel_size(int argc, char **argv, long small, long medium) {
    if (argc < 2 || strcmp(argv[1], "small") == 0) return small;
    if (strcmp(argv[1], "medium") == 0) return medium;
    char *end;
    long n = strtol(argv[1], &end, 10);
    if (*end != '\0' || n <= 0) {
        fprintf(stderr, "%s: size must be small, medium or a positive integer, got '%s'\n",
                argv[0], argv[1]);
        exit(2);
    }
    return n;
}

static inline void *kernel_alloc(size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static inline double kernel_checksum(const double *a, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) s += a[i] * (double)((i % 7) + 1);
    return s;
}
#endif
