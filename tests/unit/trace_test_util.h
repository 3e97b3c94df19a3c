/* trace_test_util.h — helpers shared by the trace tests: temp files, a
 * deterministic PRNG, and whole-file reads (the reader under test is not used). */
#ifndef PES_TRACE_TEST_UTIL_H
#define PES_TRACE_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pes/trace.h"

static inline uint64_t tt_rand(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A fresh temp path (file does not exist). Caller frees and unlinks. */
static inline char *tt_temp_path(const char *tag)
{
    const char *dir = getenv("TMPDIR");
    char *p = malloc(512);
    snprintf(p, 512, "%s/pes-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag);
    int fd = mkstemp(p);
    if (fd >= 0) {
        close(fd);
        unlink(p);
    }
    return p;
}

static inline uint8_t *tt_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
    if (n > 0 && fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return d;
}

static inline void tt_default_info(struct pes_trace_info *info)
{
    memset(info, 0, sizeof *info);
    info->kind = PES_TRACE_FULL;
    info->command = "./gemm 128";
    info->hostname = "testhost";
    info->cpu_model = "Test CPU @ 1.00GHz";
    info->n_cpus = 4;
    info->n_sockets = 1;
    info->n_cache_levels = 2;
    info->caches[0] = (struct pes_cache_level){1, 'D', 8, 64, 32768, 2};
    info->caches[1] = (struct pes_cache_level){2, 'U', 16, 64, 1 << 20, 4};
    info->ticks_per_second = 1000000000ull;
    info->start_ticks = 12345;
    info->pid = 4242;
    info->config = "backend=full\nperiod=0\n";
}

/* Writes the tables that records need before them (docs/trace-format.md §6):
 * one MODULE block whose n_sites load sites are ids 0..n_sites-1, and the
 * THREAD blocks of threads 0..n_threads-1. Returns 0 or -1 (err filled). */
static inline int tt_write_tables(struct pes_trace_writer *w, uint32_t n_sites, uint32_t n_threads,
                                  struct pes_error *err)
{
    struct pes_site *sites = calloc(n_sites ? n_sites : 1, sizeof *sites);
    if (!sites)
        return -1;
    for (uint32_t i = 0; i < n_sites; i++)
        sites[i] = (struct pes_site){i, UINT32_MAX, PES_KIND_LOAD, 0, 1, 8, 1, "t.c", "f"};
    struct pes_module m = {0, n_sites, 0, "t.c", sites, NULL};
    int rc = n_sites ? pes_trace_writer_module(w, &m, err) : 0;
    free(sites);
    for (uint32_t i = 0; i < n_threads && rc == 0; i++) {
        struct pes_thread t = {i, i ? 0 : UINT32_MAX, 100 + i, -1, -1, 0};
        rc = pes_trace_writer_thread(w, &t, err);
    }
    return rc;
}

#endif
