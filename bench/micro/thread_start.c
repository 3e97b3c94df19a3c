/*
 * thread_start.c — many short threads, for bench/thread_setup.py: what the
 * collector costs a thread before its first access is recorded.
 *
 * Creates --threads N threads one after the other (--concurrent K: K at a
 * time). Each reads CLOCK_MONOTONIC on entry (libc, not instrumented), makes
 * one instrumented store (the first access of the thread: under pes-collect
 * the runtime sets the thread up there), reads the clock again, then makes
 * --accesses more loads and stores over a private 4 KiB array. Prints (to
 * stdout, or to --out FILE), one per line, "first_access_ns N" for every
 * thread, then "checksum C" (identical under every build: the program must
 * not change under the collector).
 *
 * usage: thread_start [--threads N] [--concurrent K] [--accesses N] [--out FILE]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct job {
    _Alignas(64) volatile uint64_t first;   /* the first access */
    long accesses;
    uint64_t ns;                            /* entry to just after the first access */
    uint64_t sum;
    uint64_t data[512];
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *body(void *p)
{
    struct job *j = p;
    uint64_t t0 = now_ns();
    j->first = 1;
    uint64_t t1 = now_ns();
    j->ns = t1 - t0;
    uint64_t s = 0;
    for (long i = 0; i < j->accesses / 2; i++) {
        size_t k = (size_t)(i * 7) % 512;
        j->data[k] += (uint64_t)i;   /* a load and a store */
        s += j->data[(k + 1) % 512];
    }
    j->sum = s;
    return NULL;
}

static long arg_long(const char *flag, const char *v, long min, long max)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || end == v || x < min || x > max) {
        fprintf(stderr, "thread_start: %s: expected an integer in %ld..%ld, got '%s'\n", flag, min, max,
                v ? v : "");
        exit(2);
    }
    return x;
}

int main(int argc, char **argv)
{
    long n = 64, concurrent = 1, accesses = 20000;
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads"))
            n = arg_long(argv[i], argv[i + 1], 1, 4096), i++;
        else if (!strcmp(argv[i], "--concurrent"))
            concurrent = arg_long(argv[i], argv[i + 1], 1, 4096), i++;
        else if (!strcmp(argv[i], "--accesses"))
            accesses = arg_long(argv[i], argv[i + 1], 0, 1L << 40), i++;
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_path = argv[++i];
        else {
            fprintf(stderr, "usage: thread_start [--threads N] [--concurrent K] [--accesses N] [--out FILE]\n");
            return 2;
        }
    }
    struct job *jobs = aligned_alloc(64, (size_t)n * sizeof *jobs);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!jobs || !th) {
        fprintf(stderr, "thread_start: out of memory\n");
        return 1;
    }
    memset(jobs, 0, (size_t)n * sizeof *jobs);
    for (long i = 0; i < n; i += concurrent) {
        long end = i + concurrent < n ? i + concurrent : n;
        for (long k = i; k < end; k++) {
            jobs[k].accesses = accesses;
            if (pthread_create(&th[k], NULL, body, &jobs[k])) {
                fprintf(stderr, "thread_start: pthread_create failed\n");
                return 1;
            }
        }
        for (long k = i; k < end; k++)
            pthread_join(th[k], NULL);
    }
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        fprintf(stderr, "thread_start: %s: cannot open for writing\n", out_path);
        return 1;
    }
    uint64_t c = 0;
    for (long k = 0; k < n; k++) {
        fprintf(out, "first_access_ns %llu\n", (unsigned long long)jobs[k].ns);
        c = c * 31 + jobs[k].sum;
    }
    fprintf(out, "checksum %llu\n", (unsigned long long)c);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "thread_start: %s: write failed\n", out_path);
        return 1;
    }
    free(jobs);
    free(th);
    return 0;
}
