/*
 * reuse_bench.c — throughput and memory of the exact reuse distance engine
 * (replay/src/reuse_distance.c). Each case runs in a child process so its peak
 * RSS (getrusage via wait4) is its own. Prints a markdown table; --json FILE
 * also writes the numbers as JSON.
 *
 *   reuse_bench [--accesses N] [--single] [--json FILE] [--case NAME]...
 *
 * Rates are per CPU second of the child (user + system, from wait4), which is
 * steadier than wall time on a shared machine; wall seconds are shown too.
 * By default addresses are pushed in blocks of 4096 with pes_reuse_push_batch
 * (as a replay of ACCESS blocks would); --single pushes one at a time.
 *
 * Cases (addresses generated on the fly; generation time is included):
 *   strided    a[i] = b[i] + c[i] sweeps over three 4 MiB arrays, 8-byte
 *              stride, line granularity (a kernel-like stream)
 *   strided-w  the same at word (8-byte) granularity
 *   rand-1m    uniform random over 1 Mi distinct lines
 *   rand-16m   uniform random over 16 Mi distinct lines
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reuse_distance.h"

struct result {
    double seconds;
    uint64_t accesses, cold, distinct, compactions, engine_bytes, checksum;
    int ok;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define BLOCK 4096

struct feeder {
    struct pes_reuse *e;
    int single;
    uint64_t addr[BLOCK], dist[BLOCK];
    size_t n;
    uint64_t sum, cold;
};

static int flush(struct feeder *f)
{
    if (f->single) {
        for (size_t i = 0; i < f->n; i++)
            if (pes_reuse_push(f->e, f->addr[i], &f->dist[i]) < 0)
                return -1;
    } else if (pes_reuse_push_batch(f->e, f->addr, f->n, f->dist) < 0) {
        return -1;
    }
    for (size_t i = 0; i < f->n; i++) {
        if (f->dist[i] == PES_REUSE_COLD)
            f->cold++;
        else
            f->sum += f->dist[i];
    }
    f->n = 0;
    return 0;
}

static inline int feed(struct feeder *f, uint64_t addr)
{
    f->addr[f->n++] = addr;
    return f->n == BLOCK ? flush(f) : 0;
}

static int run_case(const char *name, uint64_t n, int single, struct result *r)
{
    uint32_t granule = strcmp(name, "strided-w") == 0 ? 8 : 64;
    uint64_t lines = 0;
    if (strcmp(name, "rand-1m") == 0)
        lines = UINT64_C(1) << 20;
    else if (strcmp(name, "rand-16m") == 0)
        lines = UINT64_C(1) << 24;
    else if (strcmp(name, "strided") && strcmp(name, "strided-w"))
        return -1;
    struct pes_error err;
    struct pes_reuse_options o = { .granule = granule, .expected_keys = lines };
    struct pes_reuse *e = pes_reuse_create(&o, &err);
    if (!e) {
        fprintf(stderr, "reuse_bench: %s\n", err.message);
        return -1;
    }
    memset(r, 0, sizeof *r);
    static struct feeder f;
    f.e = e;
    f.single = single;
    double t0 = now();
    if (lines) {
        uint64_t s = 0x9E3779B97F4A7C15u;
        for (uint64_t i = 0; i < n; i++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            uint64_t line = (s >> 11) & (lines - 1);
            if (feed(&f, 0x7f0000000000u + line * 64) < 0)
                goto fail;
        }
    } else {
        const uint64_t elems = (4u << 20) / 8;
        const uint64_t a = 0x10000000, b = 0x20000000, c = 0x30000000;
        uint64_t i = 0, k = 0;
        while (k < n) {
            uint64_t addr[3] = { b + 8 * i, c + 8 * i, a + 8 * i };
            for (int j = 0; j < 3 && k < n; j++, k++) {
                if (feed(&f, addr[j]) < 0)
                    goto fail;
            }
            if (++i == elems)
                i = 0;
        }
    }
    if (flush(&f) < 0)
        goto fail;
    r->seconds = now() - t0;
    r->accesses = n;
    r->cold = f.cold;
    r->checksum = f.sum;
    r->distinct = pes_reuse_distinct(e);
    r->compactions = pes_reuse_compactions(e);
    r->engine_bytes = pes_reuse_memory(e);
    r->ok = 1;
    pes_reuse_destroy(e);
    return 0;
fail:
    fprintf(stderr, "reuse_bench: %s\n", pes_reuse_error(e)->message);
    pes_reuse_destroy(e);
    return -1;
}

int main(int argc, char **argv)
{
    uint64_t n = 100000000;
    const char *json = NULL;
    int single = 0;
    const char *cases[16];
    int n_cases = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--accesses") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            n = strtoull(argv[++i], &end, 0);
            if (errno || *end || n == 0) {
                fprintf(stderr, "reuse_bench: --accesses: expected a positive integer, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--single") == 0) {
            single = 1;
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc && n_cases < 16) {
            cases[n_cases++] = argv[++i];
        } else {
            fprintf(stderr, "usage: reuse_bench [--accesses N] [--single] [--json FILE] [--case strided|strided-w|rand-1m|rand-16m]...\n");
            return 2;
        }
    }
    if (n_cases == 0) {
        cases[n_cases++] = "strided";
        cases[n_cases++] = "strided-w";
        cases[n_cases++] = "rand-1m";
        cases[n_cases++] = "rand-16m";
    }
    FILE *jf = NULL;
    if (json && !(jf = fopen(json, "w"))) {
        fprintf(stderr, "reuse_bench: %s: %s\n", json, strerror(errno));
        return 1;
    }
    printf("| case | accesses | distinct granules | cold | wall s | CPU s | M accesses/CPU s | compactions | engine MiB | peak RSS MiB |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    if (jf)
        fprintf(jf, "[\n");
    int status_all = 0;
    for (int c = 0; c < n_cases; c++) {
        int fd[2];
        if (pipe(fd) < 0) {
            perror("reuse_bench: pipe");
            return 1;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("reuse_bench: fork");
            return 1;
        }
        if (pid == 0) {
            close(fd[0]);
            struct result r;
            int rc = run_case(cases[c], n, single, &r);
            if (rc == 0 && write(fd[1], &r, sizeof r) != (ssize_t)sizeof r)
                rc = -1;
            _exit(rc == 0 ? 0 : 1);
        }
        close(fd[1]);
        struct result r = { 0 };
        ssize_t got = read(fd[0], &r, sizeof r);
        close(fd[0]);
        int status;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0 || got != (ssize_t)sizeof r || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "reuse_bench: case %s failed\n", cases[c]);
            status_all = 1;
            continue;
        }
        double rss = ru.ru_maxrss / 1024.0;
        double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
                     ru.ru_stime.tv_usec * 1e-6;
        double rate = r.accesses / cpu / 1e6;
        printf("| %s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %.2f | %.2f | %.1f | %" PRIu64 " | %.1f | %.1f |\n",
               cases[c], r.accesses, r.distinct, r.cold, r.seconds, cpu, rate, r.compactions,
               r.engine_bytes / 1048576.0, rss);
        if (jf)
            fprintf(jf,
                    "%s  {\"case\": \"%s\", \"accesses\": %" PRIu64 ", \"distinct\": %" PRIu64
                    ", \"cold\": %" PRIu64 ", \"wall_seconds\": %.4f, \"cpu_seconds\": %.4f"
                    ", \"maccesses_per_cpu_s\": %.2f"
                    ", \"compactions\": %" PRIu64 ", \"engine_bytes\": %" PRIu64
                    ", \"peak_rss_kib\": %ld, \"checksum\": %" PRIu64 "}",
                    c ? ",\n" : "", cases[c], r.accesses, r.distinct, r.cold, r.seconds, cpu, rate,
                    r.compactions, r.engine_bytes, ru.ru_maxrss, r.checksum);
    }
    if (jf) {
        fprintf(jf, "\n]\n");
        fclose(jf);
    }
    return status_all;
}
