/*
 * sim_bench — throughput of the cache + MESI simulator (replay/sim/mesi.h)
 * on a synthetic interleaved stream. Not a test.
 *
 *   pes-sim-bench [-n ACCESSES] [-o FILE.json]
 *
 * For two stream mixes and 1, 4 and 16 cores (one socket; L1 32K:8, L2 1M:16 private, L3 32M:16
 * shared, 64-byte lines) it replays ACCESSES (default 100M) accesses, threads
 * pinned to cores and interleaved round-robin. Each thread mixes: streaming
 * over a private 1 MiB array (8-byte reads and writes), random reads of a
 * private hot set (mix "harsh": 38 % in 64 KiB; "typical": 10 % in 16 KiB),
 * and 2 % accesses to 4 shared lines (adjacent words:
 * false sharing, 1 in 4 a write). The stream is generated in chunks outside
 * the timed region. Prints a markdown table; -o also writes JSON.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mesi.h"

#define CHUNK (1u << 20)

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64*: cheap and good enough for a synthetic stream */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* CPU time of this thread: the machine may be shared, wall time overstates. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
    uint32_t cores;
    uint64_t accesses;
    double seconds, cpu_seconds;
    double l1_hit, l2_hit, l3_hit;
    uint64_t invalidations, coherence_misses;
};

/* Stream mixes, percent of accesses: shared lines / random hot-set reads / streaming. */
struct mix {
    const char *name;
    unsigned shared_pct, hot_pct;
    uint64_t hot_bytes;
};
static const struct mix mixes[] = {
    {"harsh", 2, 38, 64u << 10},    /* hot set twice the L1: ~69 % L1 hits */
    {"typical", 2, 10, 16u << 10},  /* hot set fits the L1: ~88 % L1 hits */
};

static int run(uint32_t cores, uint64_t n, const struct mix *mx, struct result *out)
{
    struct pes_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "bench");
    m.sockets = 1;
    m.cores_per_socket = cores;
    m.n_levels = 3;
    m.level[0] = (struct pes_cache_config){.size = 32 << 10, .ways = 8, .line = 64};
    m.level[1] = (struct pes_cache_config){.size = 1 << 20, .ways = 16, .line = 64};
    m.level[2] = (struct pes_cache_config){.size = 32 << 20, .ways = 16, .line = 64, .shared = 1};
    struct pes_sim_config cfg = {.machine = &m, .n_threads = cores};
    struct pes_error err = {0};
    struct pes_sim *s = pes_sim_create(&cfg, &err);
    if (!s) {
        fprintf(stderr, "pes-sim-bench: %s\n", err.message);
        return -1;
    }
    struct pes_sim_access *buf = malloc(CHUNK * sizeof *buf);
    uint64_t *pos = calloc(cores, sizeof *pos);
    if (!buf || !pos) {
        fprintf(stderr, "pes-sim-bench: out of memory\n");
        free(buf);
        free(pos);
        pes_sim_destroy(s);
        return -1;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    const uint64_t stream_bytes = 1u << 20, hot_bytes = mx->hot_bytes;
    double t = 0, cpu = 0;
    for (uint64_t done = 0; done < n;) {
        uint32_t len = n - done < CHUNK ? (uint32_t)(n - done) : CHUNK;
        for (uint32_t i = 0; i < len; i++) {
            uint32_t c = (uint32_t)((done + i) % cores);
            uint64_t r = rng_next(&rng);
            uint64_t base = (uint64_t)(c + 1) << 32;   /* private regions per thread */
            struct pes_sim_access *a = &buf[i];
            a->core = a->thread = c;
            a->size = 8;
            unsigned pick = (unsigned)(r % 100);
            if (pick < mx->shared_pct) {
                a->addr = (1ull << 31) + ((r >> 8) % 4) * 64 + (c % 8) * 8;
                a->is_write = (r >> 16) % 4 == 0;
                a->site = 3;
            } else if (pick < mx->shared_pct + mx->hot_pct) {
                a->addr = base + stream_bytes + ((r >> 8) % (hot_bytes / 8)) * 8;
                a->is_write = 0;
                a->site = 2;
            } else {
                a->addr = base + pos[c];
                pos[c] = (pos[c] + 8) % stream_bytes;
                a->is_write = (r >> 20) % 3 == 0;
                a->site = a->is_write;
            }
            a->is_read = !a->is_write;
        }
        double t0 = now_s(), c0 = cpu_s();
        if (pes_sim_access_batch(s, buf, len, &err) != 0) {
            fprintf(stderr, "pes-sim-bench: %s\n", err.message);
            free(buf);
            free(pos);
            pes_sim_destroy(s);
            return -1;
        }
        t += now_s() - t0;
        cpu += cpu_s() - c0;
        done += len;
    }
    const struct pes_sim_stats *st = pes_sim_totals(s);
    uint64_t l1m = st->accesses - st->hits[0], l2m = l1m - st->hits[1];
    out->cores = cores;
    out->accesses = st->accesses;
    out->seconds = t;
    out->cpu_seconds = cpu;
    out->l1_hit = st->accesses ? (double)st->hits[0] / (double)st->accesses : 0;
    out->l2_hit = l1m ? (double)st->hits[1] / (double)l1m : 0;
    out->l3_hit = l2m ? (double)st->hits[2] / (double)l2m : 0;
    out->invalidations = st->inval_true + st->inval_false;
    out->coherence_misses = st->coh_true + st->coh_false;
    free(buf);
    free(pos);
    pes_sim_destroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = 100000000ull;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            char *end;
            n = strtoull(argv[++i], &end, 10);
            if (*end || n == 0) {
                fprintf(stderr, "pes-sim-bench: -n: expected a positive count, got %s\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            json = argv[++i];
        } else {
            fprintf(stderr, "usage: pes-sim-bench [-n ACCESSES] [-o FILE.json]\n");
            return 2;
        }
    }
    const uint32_t cores[] = {1, 4, 16};
    struct result res[2][3];
    printf("| mix | cores | accesses | wall s | CPU s | M accesses/s (CPU) | L1 hit | L2 hit | L3 hit | invalidations | coherence misses |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int x = 0; x < 2; x++) {
        for (int k = 0; k < 3; k++) {
            struct result *r = &res[x][k];
            if (run(cores[k], n, &mixes[x], r) != 0)
                return 1;
            printf("| %s | %u | %llu | %.2f | %.2f | %.1f | %.3f | %.3f | %.3f | %llu | %llu |\n",
                   mixes[x].name, r->cores, (unsigned long long)r->accesses, r->seconds,
                   r->cpu_seconds, (double)r->accesses / r->cpu_seconds / 1e6, r->l1_hit,
                   r->l2_hit, r->l3_hit, (unsigned long long)r->invalidations,
                   (unsigned long long)r->coherence_misses);
            fflush(stdout);
        }
    }
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\"bench\": \"sim\", \"runs\": [");
        for (int x = 0; x < 2; x++)
            for (int k = 0; k < 3; k++) {
                const struct result *r = &res[x][k];
                fprintf(f, "%s{\"mix\": \"%s\", \"cores\": %u, \"accesses\": %llu, "
                        "\"wall_seconds\": %.4f, \"cpu_seconds\": %.4f, "
                        "\"maccesses_per_cpu_s\": %.2f, \"l1_hit\": %.4f}",
                        x || k ? ", " : "", mixes[x].name, r->cores,
                        (unsigned long long)r->accesses, r->seconds, r->cpu_seconds,
                        (double)r->accesses / r->cpu_seconds / 1e6, r->l1_hit);
            }
        fprintf(f, "]}\n");
        fclose(f);
    }
    return 0;
}
