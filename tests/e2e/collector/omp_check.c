/* omp_check — checks the trace of omp_sum: the bytes of a[] written and read,
 * per thread, against what OpenMP's static schedule implies.
 *
 *   omp_check TRACE BASE N THREADS
 *
 * Expected: one thread stores all 8N bytes (the serial init); exactly THREADS
 * threads each load 8N/THREADS bytes (static schedule, N divisible by THREADS).
 * Bytes, not records, so vectorised loads count the same as scalar ones. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/trace.h"

#define MAX_THREADS 64

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: omp_check TRACE BASE N THREADS\n");
        return 2;
    }
    uint64_t base = strtoull(argv[2], NULL, 16);
    uint64_t n = strtoull(argv[3], NULL, 10);
    uint32_t threads = (uint32_t)strtoul(argv[4], NULL, 10);
    uint64_t end = base + 8 * n;
    struct pes_error err = {0};
    struct pes_trace_reader *r = pes_trace_reader_open(argv[1], &err);
    if (!r) {
        fprintf(stderr, "omp_check: %s\n", err.message);
        return 1;
    }
    uint64_t loads[MAX_THREADS] = {0}, stores[MAX_THREADS] = {0}, unknown = 0, regions = 0;
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type != PES_BLOCK_ACCESS || b.thread >= MAX_THREADS)
            continue;
        for (size_t i = 0; i < b.n; i++) {
            const struct pes_record *rec = &b.records[i];
            if (rec->id == PES_ID_REGION_BEGIN)
                regions++;
            if (rec->id >= PES_ID_CONTROL_FIRST || rec->addr < base || rec->addr >= end)
                continue;
            const struct pes_site *s = pes_trace_reader_site(r, rec->id);
            if (!s) {
                unknown++;
                continue;
            }
            uint64_t bytes = s->size ? s->size : rec->extra;
            if (pes_kind_reads(s->kind))
                loads[b.thread] += bytes;
            if (pes_kind_writes(s->kind))
                stores[b.thread] += bytes;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "omp_check: %s\n", err.message);
        return 1;
    }
    int ok = unknown == 0;
    uint32_t storers = 0, loaders = 0;
    for (uint32_t t = 0; t < MAX_THREADS; t++) {
        if (stores[t]) {
            storers++;
            ok &= stores[t] == 8 * n;
        }
        if (loads[t]) {
            loaders++;
            ok &= loads[t] == 8 * n / threads;
        }
        if (loads[t] || stores[t])
            printf("thread %u: loaded %" PRIu64 " B, stored %" PRIu64 " B of a[]\n", t, loads[t],
                   stores[t]);
    }
    ok &= storers == 1 && loaders == threads;
    printf("omp_check: %s: %u loading threads, %" PRIu64 " region markers, %" PRIu64
           " records with unknown ids\n", ok ? "ok" : "FAILED", loaders, regions, unknown);
    pes_trace_reader_close(r);
    return ok ? 0 : 1;
}
