/*
 * loop_expand_bench.c — how fast loop descriptor groups expand (the replay
 * hot path: pes_trace_reader_next hands out expanded records), on one thread.
 *
 *   expand   pes_loop_expand alone on blocks of 2^20 expanded records made of
 *            groups of R records (m templates, phase m / 2), in cache-cold
 *            output: records per second written
 *   read     pes_trace_reader_next over a trace of gemm-like loops (a BB
 *            entry and 3 accesses per iteration) stored as groups, and over
 *            its twin without groups: records per second handed out, zstd
 *            decompression and decoding included
 *
 * Prints a markdown table. Usage: loop_expand_bench [repeats (default 20)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "trace_internal.h"

#define BLOCK (1u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Groups of R records with m templates until BLOCK records; returns stored count. */
static size_t make_groups(struct pes_record *st, uint32_t m, uint64_t R)
{
    size_t k = 0;
    for (uint64_t done = 0; done < BLOCK; done += R) {
        uint64_t r = BLOCK - done < R ? BLOCK - done : R;
        uint32_t phase = m / 2;
        st[k++] = (struct pes_record){r, PES_ID_LOOP, m | phase << 16};
        for (uint32_t j = 0; j < m; j++)
            st[k++] = (struct pes_record){0x7f0000000000ull + 0x100000ull * j, 10 + j, 0};
        for (uint32_t j = 0; j < m; j++)
            st[k++] = (struct pes_record){8 * (j + 1), PES_ID_LOOP_STEP, 0};
    }
    return k;
}

static void bench_expand(int repeats)
{
    static const struct {
        uint32_t m;
        uint64_t R;
    } shapes[] = {{1, BLOCK}, {4, BLOCK}, {4, 256}, {16, 4096}, {64, BLOCK}, {3, 7}};
    struct pes_record *st = malloc(2 * BLOCK * sizeof *st);
    struct pes_record *out = malloc(BLOCK * sizeof *out);
    if (!st || !out)
        exit(1);
    printf("| expand: m | R per group | stored records | M records/s |\n|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t n = make_groups(st, shapes[s].m, shapes[s].R);
        struct pes_loop_walk w;
        if (pes_loop_walk(st, n, 0, BLOCK, 2 * BLOCK, 1, &w) || w.expanded != BLOCK)
            exit(1);
        pes_loop_expand(st, n, out); /* warm the pages */
        double best = 1e30;
        uint64_t sink = 0;
        for (int r = 0; r < repeats; r++) {
            double t0 = now();
            pes_loop_expand(st, n, out);
            double t = now() - t0;
            sink += out[BLOCK - 1].addr;
            best = t < best ? t : best;
        }
        printf("| %u | %llu | %zu | %.0f |\n", shapes[s].m, (unsigned long long)shapes[s].R, n,
               BLOCK / best / 1e6 + (double)(sink & 0));
    }
    free(st);
    free(out);
}

/* One thread's gemm loop nest (n^3 iterations of BB + 3 accesses), each
 * innermost loop (n iterations, 4n records) one group or 4n plain records. */
static double bench_read(const char *path, int groups, size_t n, int repeats, uint64_t *records)
{
    struct pes_trace_info info = {.kind = PES_TRACE_FULL, .command = "bench"};
    struct pes_error err;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, &err);
    if (!w)
        goto fail;
    struct pes_site sites[3];
    for (uint32_t i = 0; i < 3; i++)
        sites[i] = (struct pes_site){i, 3, PES_KIND_LOAD, 0, 1, 8, 1, "gemm.c", "kernel"};
    struct pes_bb bb = {3, 3, {0}, 0, "kernel", "for.body"};
    struct pes_module mod = {0, 3, 1, "gemm.c", sites, &bb};
    struct pes_thread th = {0, UINT32_MAX, 1, -1, -1, 0};
    if (pes_trace_writer_module(w, &mod, &err) || pes_trace_writer_thread(w, &th, &err))
        goto fail;
    const uint64_t A = 0x7f0000000000ull, B = A + n * n * 8, C = B + n * n * 8;
    size_t cap = 65536 + 16 * n, k = 0;
    struct pes_record *buf = malloc(cap * sizeof *buf);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (groups) {
                const struct pes_record g[] = {
                    {4 * n, PES_ID_LOOP, 4},
                    {0, 3, 0},
                    {A + i * n * 8, 0, 0},
                    {B + j * 8, 1, 0},
                    {C + (i * n + j) * 8, 2, 0},
                    {0, PES_ID_LOOP_STEP, 0},
                    {8, PES_ID_LOOP_STEP, 0},
                    {n * 8, PES_ID_LOOP_STEP, 0},
                    {0, PES_ID_LOOP_STEP, 0},
                };
                memcpy(buf + k, g, sizeof g);
                k += 9;
            } else {
                for (size_t l = 0; l < n; l++) {
                    buf[k++] = (struct pes_record){0, 3, 0};
                    buf[k++] = (struct pes_record){A + (i * n + l) * 8, 0, 0};
                    buf[k++] = (struct pes_record){B + (l * n + j) * 8, 1, 0};
                    buf[k++] = (struct pes_record){C + (i * n + j) * 8, 2, 0};
                }
            }
            total += 4 * n;
            /* the runtime's buffers: flushed at 64K expanded records */
            if (total % 65536 < 4 * n || k + 16 * n > cap) {
                if (pes_trace_writer_records(w, 0, buf, k, &err))
                    goto fail;
                k = 0;
            }
        }
    if (k && pes_trace_writer_records(w, 0, buf, k, &err))
        goto fail;
    free(buf);
    struct pes_thread_totals tot = {0, total, 0, 0, 0, 0, 0};
    if (pes_trace_writer_close(w, &tot, 1, 0, &err))
        goto fail;
    double best = 1e30;
    for (int r = 0; r < repeats; r++) {
        struct pes_trace_reader *rd = pes_trace_reader_open(path, &err);
        if (!rd)
            goto fail;
        struct pes_block b;
        uint64_t got = 0, sink = 0;
        double t0 = now();
        int rc;
        while ((rc = pes_trace_reader_next(rd, &b, &err)) == 1)
            if (b.type == PES_BLOCK_ACCESS) {
                got += b.n;
                sink += b.records[b.n - 1].addr;
            }
        double t = now() - t0;
        pes_trace_reader_close(rd);
        if (rc < 0 || got != total)
            goto fail;
        best = t < best ? t : best + (double)(sink & 0);
    }
    *records = total;
    return total / best / 1e6;
fail:
    fprintf(stderr, "loop_expand_bench: %s\n", err.message);
    exit(1);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 20;
    if (repeats < 1)
        repeats = 1;
    bench_expand(repeats);
    char path[] = "/tmp/pes-loop-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    printf("\n| read: gemm n | stored as | records | M records/s |\n|---|---|---|---|\n");
    for (int groups = 1; groups >= 0; groups--) {
        uint64_t total;
        double rate = bench_read(path, groups, 128, repeats < 5 ? repeats : 5, &total);
        printf("| 128 | %s | %llu | %.0f |\n", groups ? "groups" : "plain records",
               (unsigned long long)total, rate);
    }
    unlink(path);
    return 0;
}
