/*
 * trace_stress_gen.c — writes valid full traces shaped to stress pes-replay's
 * and pes-dump's memory (tests/e2e/replay/replay_memory.sh):
 *
 *   trace_stress_gen no-marks OUT N        one thread, N accesses between its
 *                                          start mark and its THREAD_END, none
 *                                          in between (what --time-interval
 *                                          4294967295 records)
 *   trace_stress_gen threads OUT N K       N threads of K accesses each, one
 *                                          after the other (short-lived threads)
 *   trace_stress_gen concurrent OUT N K    the same, all running at the same time
 *   trace_stress_gen huge-range OUT        one memcpy record of 2^32-1 bytes
 *                                          between a few 8-byte accesses
 *   trace_stress_gen high-ids OUT          a few accesses at sites whose ids
 *                                          start at 2^22 - 8 (a module placed
 *                                          high in the id space)
 *   trace_stress_gen sampled-high-ids OUT  the same module in a sampled trace:
 *                                          100 samples at its load site
 *   trace_stress_gen many-sites OUT S T    S sites (loads and stores, each its
 *                                          own source line) run by T concurrent
 *                                          threads, twice each, over 4096
 *                                          shared lines (a large report:
 *                                          replay_html.sh)
 *   trace_stress_gen spin OUT K            two threads side by side: thread 0
 *                                          K loads over 4096 lines, then a
 *                                          store to a flag; thread 1 K polls
 *                                          of the flag, then one more after
 *                                          the store: one wait of K + 1 loads
 *                                          across the whole trace, which every
 *                                          time part cuts (replay_jobs.sh)
 *
 * Each access of a thread is a BB entry plus an 8-byte load, cycling over 4096
 * cache lines, so the reuse engines stay small and only the structure of the
 * trace (marks, threads, ranges) is stressed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/trace.h"

enum { SITE_LOAD, SITE_COPY, BB_LOOP, N_IDS }; /* offsets from the module's id base */
static uint32_t id_base;
#define TICKS_PER_ACCESS 10u
#define BATCH            (1u << 20)

static int usage(void)
{
    fprintf(stderr,
            "usage: trace_stress_gen no-marks OUT N | threads OUT N K | concurrent OUT N K | "
            "huge-range OUT | high-ids OUT | many-sites OUT S T | sampled-high-ids OUT | "
            "spin OUT K\n");
    return 2;
}

static int parse(const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (*s == '\0' || *end != '\0' || x == 0 || x > max)
        return -1;
    *v = x;
    return 0;
}

static uint32_t trace_kind = PES_TRACE_FULL;

/* The header every generator writes: a full trace of one socket with one
 * 32 KiB L1D, started at tick 1000 of a 1 GHz clock. */
static struct pes_trace_info test_info(const char *command, uint32_t n_cpus)
{
    struct pes_trace_info info = {0};
    info.kind = PES_TRACE_FULL;
    info.command = command;
    info.hostname = "testhost";
    info.cpu_model = "Test CPU";
    info.n_cpus = n_cpus;
    info.n_sockets = 1;
    info.n_cache_levels = 1;
    info.caches[0] = (struct pes_cache_level){1, 'D', 8, 64, 32768, 2};
    info.ticks_per_second = 1000000000ull;
    info.start_ticks = 1000;
    info.config = "mode=full";
    return info;
}

static struct pes_trace_writer *open_trace(const char *path, struct pes_error *err)
{
    struct pes_trace_info info = test_info("trace_stress_gen", 4);
    info.kind = trace_kind;
    info.config = trace_kind == PES_TRACE_FULL ? "mode=full" : "backend=soft\nmode=samples";
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, err);
    if (!w)
        return NULL;
    struct pes_site sites[2] = {
        {id_base + SITE_LOAD, id_base + BB_LOOP, PES_KIND_LOAD, 0, 5, 8, 10, "stress.c", "kernel"},
        {id_base + SITE_COPY, id_base + BB_LOOP, PES_KIND_COPY_DST, 0, 5, 0, 11, "stress.c",
         "kernel"},
    };
    struct pes_bb bbs[1] = {{.id = id_base + BB_LOOP,
                             .n_sites = 2,
                             .ops = {0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0},
                             .flags = 0,
                             .function = "kernel",
                             .label = "loop"}};
    struct pes_module m = {id_base, 2, 1, "stress.c", sites, bbs};
    if (pes_trace_writer_module(w, &m, err) < 0) {
        pes_trace_writer_close(w, NULL, 0, 0, err);
        return NULL;
    }
    return w;
}

/* Record i of a thread's loop: a BB entry, then a load. */
static struct pes_record loop_record(uint64_t i)
{
    if (i % 2 == 0)
        return (struct pes_record){0, id_base + BB_LOOP, 0};
    return (struct pes_record){0x100000 + (i / 2 % 4096) * 64, id_base + SITE_LOAD, 0};
}

/* N accesses of one thread, with marks only at its start and end. */
static int no_marks(struct pes_trace_writer *w, uint64_t n, struct pes_error *err)
{
    struct pes_thread t = {0, UINT32_MAX, 100, 0, 0, 1000};
    struct pes_record *buf = malloc(BATCH * sizeof *buf);
    if (!buf || pes_trace_writer_thread(w, &t, err) < 0)
        goto fail;
    uint64_t total = 2 * n + 2, written = 0; /* mark, n × (BB, load), THREAD_END */
    while (written < total) {
        size_t k = 0;
        for (; k < BATCH && written + k < total; k++) {
            uint64_t i = written + k;
            if (i == 0)
                buf[k] = (struct pes_record){1000, PES_ID_TIME, 0};
            else if (i == total - 1)
                buf[k] = (struct pes_record){1000 + n * TICKS_PER_ACCESS, PES_ID_THREAD_END, 0};
            else
                buf[k] = loop_record(i - 1);
        }
        if (pes_trace_writer_records(w, 0, buf, k, err) < 0)
            goto fail;
        written += k;
    }
    free(buf);
    struct pes_thread_totals tot = {0, total, n, 0, 0, 0, 1000 + n * TICKS_PER_ACCESS};
    return pes_trace_writer_close(w, &tot, 1, tot.end_ticks, err);
fail:
    free(buf);
    pes_trace_writer_close(w, NULL, 0, 0, err);
    return -1;
}

/* n threads of k accesses; one after the other, or all at the same time. */
static int threads(struct pes_trace_writer *w, uint64_t n, uint64_t k, int concurrent,
                   struct pes_error *err)
{
    size_t per = (size_t)(2 * k + 2);
    struct pes_record *buf = malloc(per * sizeof *buf);
    struct pes_thread_totals *tot = calloc(n, sizeof *tot);
    uint64_t span = k * TICKS_PER_ACCESS, end = 0;
    if (!buf || !tot)
        goto fail;
    for (uint32_t t = 0; t < n; t++) {
        uint64_t start = 1000 + (concurrent ? 0 : t * (span + 100));
        struct pes_thread info = {t, t ? 0 : UINT32_MAX, 100 + t, 0, 0, start};
        buf[0] = (struct pes_record){start, PES_ID_TIME, 0};
        for (size_t i = 1; i + 1 < per; i++) {
            buf[i] = loop_record(i - 1);
            if (buf[i].id == id_base + SITE_LOAD)
                buf[i].addr += (uint64_t)t << 20; /* each thread its own lines */
        }
        buf[per - 1] = (struct pes_record){start + span, PES_ID_THREAD_END, 0};
        if (pes_trace_writer_thread(w, &info, err) < 0 ||
            pes_trace_writer_records(w, t, buf, per, err) < 0)
            goto fail;
        tot[t] = (struct pes_thread_totals){t, per, k, 0, 0, 0, start + span};
        end = start + span;
    }
    free(buf);
    int rc = pes_trace_writer_close(w, tot, n, end, err);
    free(tot);
    return rc;
fail:
    free(buf);
    free(tot);
    pes_trace_writer_close(w, NULL, 0, 0, err);
    return -1;
}

/* spin OUT K (above): spin.c's sites work (load, line 10), poll (load,
 * line 11), set (store, line 12); both threads' time marks every 256
 * records at the same pace, the store 10 ticks before the last poll. */
static int spin(const char *path, uint64_t k, struct pes_error *err)
{
    enum { WORK, POLL, SET, BB, EVERY = 256 };
    struct pes_trace_info info = test_info("trace_stress_gen spin", 2);
    const struct pes_site sites[] = {
        {WORK, BB, PES_KIND_LOAD, 0, 3, 8, 10, "spin.c", "work"},
        {POLL, BB, PES_KIND_LOAD, 0, 3, 4, 11, "spin.c", "wait"},
        {SET, BB, PES_KIND_STORE, 0, 3, 4, 12, "spin.c", "work"},
    };
    struct pes_bb bb = {.id = BB, .n_sites = 3, .function = "work", .label = "loop"};
    struct pes_module m = {0, 3, 1, "spin.c", sites, &bb};
    const uint64_t flag = 0x900000, end = 1000 + (k + 1) * TICKS_PER_ACCESS;
    struct pes_record *buf = calloc(k + k / EVERY + 4, sizeof *buf);
    struct pes_thread_totals tot[2];
    struct pes_trace_writer *w = NULL;
    if (!buf || !(w = pes_trace_writer_open(path, 1, &info, NULL, err)) ||
        pes_trace_writer_module(w, &m, err) < 0)
        goto fail;
    for (uint32_t t = 0; t < 2; t++) {
        struct pes_thread th = {t, t ? 0 : UINT32_MAX, 100 + t, 0, 0, 1000};
        size_t n = 0;
        for (uint64_t i = 0; i < k; i++) {
            if (i % EVERY == 0)
                buf[n++] = (struct pes_record){1000 + i * TICKS_PER_ACCESS, PES_ID_TIME, 0};
            buf[n++] = t ? (struct pes_record){flag, POLL, 0}
                         : (struct pes_record){0x100000 + (i % 4096) * 64, WORK, 0};
        }
        /* thread 0 sets the flag; thread 1 polls once more, after it */
        buf[n++] = (struct pes_record){end - 10 * (1 - t), PES_ID_TIME, 0};
        buf[n++] = (struct pes_record){flag, t ? POLL : SET, 0};
        buf[n++] = (struct pes_record){end, PES_ID_THREAD_END, 0};
        if (pes_trace_writer_thread(w, &th, err) < 0 ||
            pes_trace_writer_records(w, t, buf, n, err) < 0)
            goto fail;
        tot[t] = (struct pes_thread_totals){t, n, k + 1, 0, 0, 0, end};
    }
    free(buf);
    return pes_trace_writer_close(w, tot, 2, end, err);
fail:
    if (w)
        pes_trace_writer_close(w, NULL, 0, 0, err);
    free(buf);
    return -1;
}

/* 100 sampled loads at the module's load site, one thread. */
static int samples(struct pes_trace_writer *w, struct pes_error *err)
{
    struct pes_thread t = {0, UINT32_MAX, 100, 0, 0, 1000};
    struct pes_event ev[100];
    for (uint32_t i = 0; i < 100; i++)
        ev[i] = (struct pes_event){PES_EV_SAMPLE,
                                   0,
                                   8,
                                   0,
                                   UINT32_MAX,
                                   id_base + SITE_LOAD,
                                   0x100000 + 64 * (uint64_t)i,
                                   0x401000,
                                   1000 + i,
                                   i,
                                   0,
                                   0,
                                   0,
                                   PES_STACK_NONE};
    if (pes_trace_writer_thread(w, &t, err) < 0 ||
        pes_trace_writer_events(w, 0, ev, 100, err) < 0) {
        pes_trace_writer_close(w, NULL, 0, 0, err);
        return -1;
    }
    struct pes_thread_totals tot = {0, 100, 100, 0, 100, 0, 2000};
    return pes_trace_writer_close(w, &tot, 1, 2000, err);
}

/* One 2^32-1-byte memcpy destination between loads of the lines it covers first. */
static int huge_range(struct pes_trace_writer *w, struct pes_error *err)
{
    struct pes_thread t = {0, UINT32_MAX, 100, 0, 0, 1000};
    struct pes_record r[] = {
        {1000, PES_ID_TIME, 0},       {0, BB_LOOP, 0},
        {0x10000000, SITE_LOAD, 0},   {0x10000000, SITE_COPY, UINT32_MAX},
        {0x10000040, SITE_LOAD, 0},   {0x10000000, SITE_LOAD, 0},
        {2000, PES_ID_THREAD_END, 0},
    };
    size_t n = sizeof r / sizeof r[0];
    if (pes_trace_writer_thread(w, &t, err) < 0 || pes_trace_writer_records(w, 0, r, n, err) < 0) {
        pes_trace_writer_close(w, NULL, 0, 0, err);
        return -1;
    }
    struct pes_thread_totals tot = {0, n, 4, 0, 0, 0, 2000};
    return pes_trace_writer_close(w, &tot, 1, 2000, err);
}

/* S sites of gen.c (even: loads, odd: stores), T threads each running them
 * all twice; thread t touches word t % 8 of line s % 4096, so threads share
 * lines truly (same word) and falsely (other words). */
static int many_sites(const char *path, uint32_t ns, uint32_t nt, struct pes_error *err)
{
    struct pes_trace_info info = test_info("trace_stress_gen many-sites", 64);
    struct pes_site *sites = calloc(ns, sizeof *sites);
    struct pes_record *buf = calloc(2 * (size_t)ns + 4, sizeof *buf);
    struct pes_thread_totals *tot = calloc(nt, sizeof *tot);
    struct pes_trace_writer *w = NULL;
    if (!sites || !buf || !tot)
        goto fail;
    for (uint32_t s = 0; s < ns; s++)
        sites[s] = (struct pes_site){
            s,       ns,      (uint8_t)(s % 2 ? PES_KIND_STORE : PES_KIND_LOAD), 0, 3, 8, 10 + s,
            "gen.c", "kernel"};
    struct pes_bb bb = {.id = ns,
                        .n_sites = ns,
                        .ops = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0},
                        .flags = PES_BB_PARALLEL,
                        .function = "kernel",
                        .label = "loop"};
    struct pes_module m = {0, ns, 1, "gen.c", sites, &bb};
    if (!(w = pes_trace_writer_open(path, 1, &info, NULL, err)) ||
        pes_trace_writer_module(w, &m, err) < 0)
        goto fail;
    uint64_t span = 2 * (uint64_t)ns * TICKS_PER_ACCESS;
    for (uint32_t t = 0; t < nt; t++) {
        struct pes_thread th = {t, t ? 0 : UINT32_MAX, 100 + t, 0, 0, 1000};
        size_t k = 0;
        buf[k++] = (struct pes_record){1000, PES_ID_TIME, 0};
        for (int round = 0; round < 2; round++) {
            buf[k++] = (struct pes_record){0, ns, 0};
            for (uint32_t s = 0; s < ns; s++)
                buf[k++] =
                    (struct pes_record){0x100000 + (uint64_t)(s % 4096) * 64 + (t % 8) * 8, s, 0};
        }
        buf[k++] = (struct pes_record){1000 + span, PES_ID_THREAD_END, 0};
        if (pes_trace_writer_thread(w, &th, err) < 0 ||
            pes_trace_writer_records(w, t, buf, k, err) < 0)
            goto fail;
        tot[t] = (struct pes_thread_totals){t, k, 2 * (uint64_t)ns, 0, 0, 0, 1000 + span};
    }
    int rc = pes_trace_writer_close(w, tot, nt, 1000 + span, err);
    free(sites);
    free(buf);
    free(tot);
    return rc;
fail:
    if (w)
        pes_trace_writer_close(w, NULL, 0, 0, err);
    free(sites);
    free(buf);
    free(tot);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    const char *mode = argv[1], *out = argv[2];
    uint64_t n = 0, k = 0;
    int rc;
    struct pes_error err = {0};
    if (strcmp(mode, "no-marks") == 0) {
        if (argc != 4 || parse(argv[3], UINT64_C(1) << 40, &n) < 0)
            return usage();
        struct pes_trace_writer *w = open_trace(out, &err);
        rc = w ? no_marks(w, n, &err) : -1;
    } else if (strcmp(mode, "threads") == 0 || strcmp(mode, "concurrent") == 0) {
        if (argc != 5 || parse(argv[3], UINT64_C(1) << 20, &n) < 0 ||
            parse(argv[4], 1u << 19, &k) < 0)
            return usage();
        struct pes_trace_writer *w = open_trace(out, &err);
        rc = w ? threads(w, n, k, strcmp(mode, "concurrent") == 0, &err) : -1;
    } else if (strcmp(mode, "high-ids") == 0) {
        if (argc != 3)
            return usage();
        id_base = (UINT32_C(1) << 22) - 8;
        struct pes_trace_writer *w = open_trace(out, &err);
        rc = w ? threads(w, 2, 100, 1, &err) : -1;
    } else if (strcmp(mode, "sampled-high-ids") == 0) {
        if (argc != 3)
            return usage();
        id_base = (UINT32_C(1) << 22) - 8;
        trace_kind = PES_TRACE_SAMPLED;
        struct pes_trace_writer *w = open_trace(out, &err);
        rc = w ? samples(w, &err) : -1;
    } else if (strcmp(mode, "many-sites") == 0) {
        if (argc != 5 || parse(argv[3], 1u << 20, &n) < 0 || parse(argv[4], 1024, &k) < 0)
            return usage();
        rc = many_sites(out, (uint32_t)n, (uint32_t)k, &err);
    } else if (strcmp(mode, "spin") == 0) {
        if (argc != 4 || parse(argv[3], 1u << 24, &n) < 0)
            return usage();
        rc = spin(out, n, &err);
    } else if (strcmp(mode, "huge-range") == 0) {
        if (argc != 3)
            return usage();
        struct pes_trace_writer *w = open_trace(out, &err);
        rc = w ? huge_range(w, &err) : -1;
    } else {
        return usage();
    }
    if (rc < 0) {
        fprintf(stderr, "trace_stress_gen: %s: %s\n", out, err.message);
        return 1;
    }
    return 0;
}
