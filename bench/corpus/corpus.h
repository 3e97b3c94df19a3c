/*
 * corpus.h — the little every bench/corpus program shares: its command line,
 * a seeded generator and the checksum line.
 *
 *   prog [--scale K] [--seed S] [--threads T]
 *
 * --scale K   about K thousand memory accesses per thread (each program sizes
 *             its loops from K; the harness picks K for a wanted length)
 * --seed S    seeds the program's data (same seed, same checksum, whatever
 *             the thread schedule)
 * --threads T overrides OMP_NUM_THREADS
 *
 * The last line of output is "<name> threads=T scale=K seed=S checksum=X".
 */
#ifndef PES_CORPUS_H
#define PES_CORPUS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* sched_yield under -std=c11 */
#endif
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct corpus {
    long scale;      /* thousands of accesses per thread, roughly */
    uint64_t seed;
    int threads;     /* the team size every parallel region gets */
};

static inline long corpus_long(const char *prog, const char *flag, const char *v, long min, long max) {
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || x < min || x > max) {
        fprintf(stderr, "%s: %s: expected an integer in %ld..%ld, got '%s'\n", prog, flag, min, max, v ? v : "");
        exit(2);
    }
    return x;
}

static inline struct corpus corpus_args(int argc, char **argv, long default_scale) {
    struct corpus c = {default_scale, 1, 0};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--scale")) c.scale = corpus_long(argv[0], f, v, 1, 1L << 30), i++;
        else if (!strcmp(f, "--seed")) c.seed = (uint64_t)corpus_long(argv[0], f, v, 0, 1L << 40), i++;
        else if (!strcmp(f, "--threads")) c.threads = (int)corpus_long(argv[0], f, v, 1, 1024), i++;
        else {
            fprintf(stderr, "%s: unknown argument '%s' (usage: --scale K --seed S --threads T)\n", argv[0], f);
            exit(2);
        }
    }
    if (c.threads) omp_set_num_threads(c.threads);
    c.threads = omp_get_max_threads();
    /* no dynamic team sizes: every region gets the same threads */
    omp_set_dynamic(0);
    return c;
}

/* splitmix64: one state word, good enough for data and shuffles */
static inline uint64_t corpus_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* one step of a spin-wait: give the CPU away, so that a team larger than the
 * machine (4 threads on 2 cores) still makes progress quickly */
static inline void corpus_pause(void) { sched_yield(); }

static inline uint64_t corpus_mix(uint64_t h, uint64_t x) {
    return (h ^ x) * 0x100000001b3ULL + (x >> 7);
}

/* a double's checksum contribution, rounded so that last-bit differences of
 * an order-independent result cannot show */
static inline uint64_t corpus_fix(double x) { return (uint64_t)(int64_t)(x * 1e6); }

static inline void *corpus_alloc(size_t bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    memset(p, 0, bytes);
    return p;
}

static inline void corpus_done(const char *name, const struct corpus *c, uint64_t sum) {
    printf("%s threads=%d scale=%ld seed=%llu checksum=%016llx\n", name, c->threads, c->scale,
           (unsigned long long)c->seed, (unsigned long long)sum);
}

/* A cyclic scan of each thread's own buffer: `elems` words `stride` words
 * apart, each read and written once per round, always in the same order, for
 * about c->scale thousand accesses; returns the threads' checksums xor-ed
 * (cyclic_scan_l1, _l2, _llc differ in the buffer's size only). */
static inline uint64_t corpus_cyclic_scan(const struct corpus *c, long elems, long stride) {
    long rounds = c->scale * 1000 / (2 * elems);
    if (rounds < 1) rounds = 1;
    uint64_t total = 0;
#pragma omp parallel reduction(^ : total)
    {
        long *buf = corpus_alloc(elems * stride * sizeof *buf);
        uint64_t s = c->seed * 23 + (uint64_t)omp_get_thread_num();
        for (long i = 0; i < elems; i++) buf[i * stride] = (long)(corpus_rand(&s) % 1000);
        for (long r = 0; r < rounds; r++)
            for (long i = 0; i < elems; i++) buf[i * stride] = buf[i * stride] * 3 % 1000003 + r;
        uint64_t h = (uint64_t)omp_get_thread_num();
        for (long i = 0; i < elems; i++) h = corpus_mix(h, (uint64_t)buf[i * stride]);
        total ^= h;
        free(buf);
    }
    return total;
}

#endif
