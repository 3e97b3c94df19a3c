/* text_reader_bench — the plain-text trace reader alone (docs/trace-format.md
 * §9): how many records per second pes_text_reader_read hands out for each
 * file and thread count, nothing done with them but a checksum (so that the
 * reads cannot be skipped and two thread counts can be compared).
 *
 *   text_reader_bench [--threads 1,2] [--repeat 3] [--batch 4096] [--json OUT] FILE...
 *
 * Files are read once beforehand so that they come from the page cache; the
 * best of --repeat runs is kept (interference on a shared machine only adds
 * time). Prints a markdown table; --json writes the numbers. The format is
 * detected as pes-replay detects it. Built with -DTEXT_BENCH_NO_THREADS it
 * links against a pes_trace from before pes_text_reader_set_threads (for
 * before/after numbers; --threads is then ignored).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pes/trace.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void warm(const char *path)
{
    static char buf[1 << 20];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    while (read(fd, buf, sizeof buf) > 0)
        ;
    close(fd);
}

struct result {
    double seconds;
    uint64_t records, checksum;
    enum pes_text_format format;
};

static int run(const char *path, unsigned threads, size_t batch, struct pes_record *out, struct result *r)
{
    struct pes_error err;
    struct pes_text_reader *t = pes_text_reader_open(path, &err);
    if (!t) {
        fprintf(stderr, "text_reader_bench: %s\n", err.message);
        return -1;
    }
    double t0 = now();
#ifndef TEXT_BENCH_NO_THREADS
    if (pes_text_reader_set_threads(t, threads, &err) < 0) {
        fprintf(stderr, "text_reader_bench: %s\n", err.message);
        pes_text_reader_close(t);
        return -1;
    }
#else
    (void)threads;
#endif
    uint64_t n = 0, sum = 0;
    long k;
    while ((k = pes_text_reader_read(t, out, batch, &err)) > 0) {
        for (long i = 0; i < k; i++)
            sum += out[i].addr ^ out[i].id;
        n += (uint64_t)k;
    }
    r->seconds = now() - t0;
    r->format = pes_text_reader_format(t);
    pes_text_reader_close(t);
    if (k < 0) {
        fprintf(stderr, "text_reader_bench: %s\n", err.message);
        return -1;
    }
    r->records = n;
    r->checksum = sum;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned threads[16] = {1, 2};
    int n_threads = 2, repeat = 3;
    size_t batch = 4096;
    const char *json = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
        if (strcmp(argv[i], "--") == 0) {
            i--;
            break;
        }
        if (i + 1 >= argc)
            goto usage;
        if (strcmp(argv[i], "--threads") == 0) {
            n_threads = 0;
            for (char *s = argv[i + 1]; *s && n_threads < 16;) {
                threads[n_threads++] = (unsigned)strtoul(s, &s, 10);
                if (*s == ',')
                    s++;
            }
        } else if (strcmp(argv[i], "--repeat") == 0) {
            repeat = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--batch") == 0) {
            batch = (size_t)strtoul(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--json") == 0) {
            json = argv[i + 1];
        } else {
            goto usage;
        }
    }
    if (i >= argc || repeat < 1 || batch < 1 || n_threads < 1)
        goto usage;
    struct pes_record *out = malloc(batch * sizeof *out);
    FILE *js = json ? fopen(json, "w") : NULL;
    if (!out || (json && !js)) {
        perror(json ? json : "malloc");
        return 1;
    }
    if (js)
        fprintf(js, "[");
    printf("| file | format | records | threads | seconds | M records/s |\n|---|---|---|---|---|---|\n");
    int first = 1;
    for (; i < argc; i++) {
        warm(argv[i]);
        uint64_t checksum = 0;
        for (int k = 0; k < n_threads; k++) {
            struct result best = {0}, r;
            for (int rep = 0; rep < repeat; rep++) {
                if (run(argv[i], threads[k], batch, out, &r) < 0)
                    return 1;
                if (rep == 0 || r.seconds < best.seconds)
                    best = r;
            }
            if (k == 0)
                checksum = best.checksum;
            else if (best.checksum != checksum) {
                fprintf(stderr, "text_reader_bench: %s: %u threads read other records than %u\n", argv[i],
                        threads[k], threads[0]);
                return 1;
            }
            const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
            double rate = (double)best.records / best.seconds / 1e6;
            printf("| %s | %s | %llu | %u | %.3f | %.1f |\n", base, pes_text_format_name(best.format),
                   (unsigned long long)best.records, threads[k], best.seconds, rate);
            if (js)
                fprintf(js, "%s\n {\"file\": \"%s\", \"format\": \"%s\", \"records\": %llu, \"threads\": %u, "
                        "\"seconds\": %.6f, \"mrecords_per_s\": %.3f}", first ? "" : ",", base,
                        pes_text_format_name(best.format), (unsigned long long)best.records, threads[k],
                        best.seconds, rate);
            first = 0;
        }
    }
    if (js) {
        fprintf(js, "\n]\n");
        fclose(js);
    }
    free(out);
    return 0;
usage:
    fprintf(stderr, "usage: text_reader_bench [--threads 1,2] [--repeat 3] [--batch 4096] [--json OUT] FILE...\n");
    return 2;
}
