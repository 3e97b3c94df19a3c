/* Shared helpers for the bench kernels: size parsing and a checksum that makes
 * the compiler keep the computation and lets runs be compared for equality. */
#ifndef PES_BENCH_KERNEL_COMMON_H
#define PES_BENCH_KERNEL_COMMON_H
#include <stdint.h>
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

/* Fixed-seed pseudo-random input (splitmix64) for kernels that need irregular
 * structure: a seed gives the same sequence on every run, whatever the thread
 * count, so checksums stay comparable. Callers draw sequentially. */
static inline uint64_t kernel_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform in [0, 1): the top 53 bits fill a double's mantissa exactly */
static inline double kernel_rand_unit(uint64_t *state) {
    return (double)(kernel_rand(state) >> 11) * 0x1.0p-53;
}

/* uniform in [0, n) for n > 0; the modulo bias (< n / 2^64) does not matter here */
static inline long kernel_rand_below(uint64_t *state, long n) {
    return (long)(kernel_rand(state) % (uint64_t)n);
}

/* The computation a kernel times (bench/model_vs_host.py): built with
 * -DKERNEL_REGION, kernel_region_begin/end mark it as pes's region of
 * interest (pes/roi.h: a trace then holds the computation only) and the end
 * prints its wall time on stderr, so the measured and the predicted time
 * cover the same accesses. Without the macro both are empty. */
#ifdef KERNEL_REGION
#include <time.h>

#include "pes/roi.h"

static struct timespec kernel_region_t0, kernel_region_cpu0;

static inline double kernel_seconds_since(const struct timespec *t0, const struct timespec *t1) {
    return (double)(t1->tv_sec - t0->tv_sec) + 1e-9 * (double)(t1->tv_nsec - t0->tv_nsec);
}

static inline void kernel_region_begin(void) {
    /* the thread team starts at the first parallel region: before the timer
     * (and outside the trace), as the model predicts no start-up cost */
#pragma omp parallel
    { __asm__ volatile("" ::: "memory"); }
    pes_roi_begin();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &kernel_region_cpu0);
    clock_gettime(CLOCK_MONOTONIC, &kernel_region_t0);
}

/* wall time, and the CPU time of all threads (on a machine that other work
 * shares, CPU time / threads is the steadier figure) */
static inline void kernel_region_end(void) {
    struct timespec t1, cpu1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    pes_roi_end();
    fprintf(stderr, "kernel region: %.9f s wall, %.9f s cpu\n", kernel_seconds_since(&kernel_region_t0, &t1),
            kernel_seconds_since(&kernel_region_cpu0, &cpu1));
}
#else
static inline void kernel_region_begin(void) {}
static inline void kernel_region_end(void) {}
#endif
#endif
