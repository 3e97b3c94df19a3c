/*
 * micro_common.h — argument parsing and output shared by the ComDetective
 * microbenchmarks (Dissertation §5.4.1, Listings 5.1-5.4).
 *   --threads N  --iters N  --fraction PERCENT  --seed N  --expected FILE
 * Each program prints its expected quantities as one JSON object.
 */
#ifndef PES_BENCH_MICRO_COMMON_H
#define PES_BENCH_MICRO_COMMON_H

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct micro_args {
    int threads;
    long iters;
    int fraction;          /* percent */
    unsigned seed;
    const char *expected;  /* NULL: stdout */
};

static void micro_usage(const char *prog) {
    fprintf(stderr, "usage: %s [--threads N] [--iters N] [--fraction PERCENT] [--seed N] [--expected FILE]\n", prog);
    exit(2);
}

static long micro_long(const char *prog, const char *flag, const char *v, long min, long max) {
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < min || x > max) {
        fprintf(stderr, "%s: %s: expected an integer in %ld..%ld, got '%s'\n", prog, flag, min, max, v ? v : "");
        exit(2);
    }
    return x;
}

static struct micro_args micro_parse(int argc, char **argv, const char *prog, int fraction) {
    struct micro_args a = {0, 100000, fraction, 1, NULL};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--threads")) a.threads = (int)micro_long(prog, f, v, 1, 1024), i++;
        else if (!strcmp(f, "--iters")) a.iters = micro_long(prog, f, v, 1, 1L << 40), i++;
        else if (!strcmp(f, "--fraction")) a.fraction = (int)micro_long(prog, f, v, 0, 100), i++;
        else if (!strcmp(f, "--seed")) a.seed = (unsigned)micro_long(prog, f, v, 0, 1L << 31), i++;
        else if (!strcmp(f, "--expected")) { if (!v) micro_usage(prog); a.expected = v; i++; }
        else micro_usage(prog);
    }
    if (a.threads) omp_set_num_threads(a.threads);
    return a;
}

static FILE *micro_out(const struct micro_args *a) {
    if (!a->expected) return stdout;
    FILE *f = fopen(a->expected, "w");
    if (!f) {
        perror(a->expected);
        exit(1);
    }
    return f;
}

/* rand_r draws below this are "shared" (fraction percent of RAND_MAX + 1) */
static int micro_threshold(int percent) {
    return (int)((double)percent / 100.0 * ((double)RAND_MAX + 1.0));
}

#endif
