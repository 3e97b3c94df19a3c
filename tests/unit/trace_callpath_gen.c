/*
 * trace_callpath_gen.c — writes a small full trace with call edges (format
 * version 3, pes/trace.h "Call edges") whose call paths are known by
 * construction, for e2e.replay_callpaths. Usage:
 *   trace_callpath_gen OUT [--bad-kind | --bad-site | --no-calls] [--repeat N]
 *
 * Module a.c: access sites 0 helper:12, 1 main:30, 7 rec:55, 11
 * main.omp_outlined:80; call sites 2 main:40 and 4 main:41 (main calls),
 * 3 solve:22 and 5 solve:23 (solve calls helper), 6 rec:50 (rec recurses),
 * 8 main:42 (main calls rec), 9 main:70 (the OpenMP fork), 10 helper:14.
 * Every access but line 80's is to a line of its own, so line accesses are
 * accesses.
 *
 * Thread 0 (main), in order:
 *   A  helper's line from three call sites: main:40 > solve:22 (5),
 *      main:40 > solve:23 (3), main:41 (2); main's own line 30: 4
 *   B  recursion: main:42 > rec, rec:50 four times deeper, one access of
 *      line 55 at each of the 5 depths
 *   C  longjmp-like: main:40 > solve:22 > helper:14 left open, then main
 *      calls again from its own sp (the open calls made at or below it are
 *      over): main:41 > helper, 1 access of line 12; then a stray RETURN
 *      (an sp no frame has), ignored: 1 more access at main:41 > helper
 *   D  OpenMP: main:70 (the fork) open, REGION_BEGIN 77, 2 stores of
 *      line 80 to bytes 0 and 8 of one cache line, REGION_END
 * Thread 1 (a worker, parent 0), after D: REGION_BEGIN 77, 3 stores of line
 * 80 to bytes 16, 24, 32 of the same cache line, REGION_END: its path
 * starts with main's at the fork; its first store invalidates thread 0's
 * copy (one false-sharing invalidation, --simulate).
 *
 * --bad-kind: a CALL naming site 0 (a load); --bad-site: a CALL naming
 * site 999 (no module has it); --no-calls: the same accesses without call
 * sites or call edges (a trace recorded without call paths); --repeat N:
 * then N more times part A of thread 0, over a working set of 16384 lines
 * (a larger trace, for measuring what call paths cost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/trace.h"

enum { MAX_RECS = 2048 };

struct recs {
    struct pes_record r[MAX_RECS];
    size_t n;
    int calls; /* write call edges */
};

static void add(struct recs *R, uint64_t addr, uint32_t id, uint32_t extra)
{
    if ((id == PES_ID_CALL || id == PES_ID_RETURN) && !R->calls)
        return;
    if (R->n < MAX_RECS)
        R->r[R->n++] = (struct pes_record){addr, id, extra};
}

static uint64_t next_line = 0x100000;

/* n accesses of site, each to a line of its own */
static void accesses(struct recs *R, uint32_t site, int n)
{
    for (int i = 0; i < n; i++, next_line += 64)
        add(R, next_line, site, 0);
}

/* n accesses of site to one shared line, 8 bytes apart from byte `at` on */
static void shared_line(struct recs *R, uint32_t site, int n, uint64_t at)
{
    for (int i = 0; i < n; i++)
        add(R, 0x900000 + at + 8 * (uint64_t)i, site, 0);
}

int main(int argc, char **argv)
{
    int bad_kind = 0, bad_site = 0, calls = 1;
    unsigned long repeat = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--bad-kind") == 0)
            bad_kind = 1;
        else if (strcmp(argv[i], "--bad-site") == 0)
            bad_site = 1;
        else if (strcmp(argv[i], "--no-calls") == 0)
            calls = 0;
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = strtoul(argv[++i], NULL, 10);
        else
            argc = 0;
    }
    if (argc < 2) {
        fprintf(
            stderr,
            "usage: trace_callpath_gen OUT [--bad-kind | --bad-site | --no-calls] [--repeat N]\n");
        return 2;
    }
    struct pes_trace_info info = {0};
    info.kind = PES_TRACE_FULL;
    info.command = "./cp_program";
    info.hostname = "testhost";
    info.cpu_model = "Test CPU";
    info.n_cpus = 2;
    info.n_sockets = 1;
    info.ticks_per_second = 1000000000ull;
    info.start_ticks = 1000;
    info.config = "mode=full";
    struct pes_error err;
    struct pes_trace_writer *w = pes_trace_writer_open(argv[1], 1, &info, NULL, &err);
    if (!w)
        goto fail;
    const uint8_t C = calls ? PES_KIND_CALL : PES_KIND_LOAD; /* --no-calls: no call sites */
    struct pes_site sites[12] = {
        {0, 12, PES_KIND_LOAD, 0, 5, 8, 12, "src/a.c", "helper"},
        {1, 12, PES_KIND_STORE, 0, 5, 8, 30, "src/a.c", "main"},
        {2, 12, C, 0, 3, 0, 40, "src/a.c", "main"},
        {3, 12, C, 0, 3, 0, 22, "src/a.c", "solve"},
        {4, 12, C, 0, 3, 0, 41, "src/a.c", "main"},
        {5, 12, C, 0, 3, 0, 23, "src/a.c", "solve"},
        {6, 12, C, 0, 3, 0, 50, "src/a.c", "rec"},
        {7, 12, PES_KIND_LOAD, 0, 5, 8, 55, "src/a.c", "rec"},
        {8, 12, C, 0, 3, 0, 42, "src/a.c", "main"},
        {9, 12, C, 0, 3, 0, 70, "src/a.c", "main"},
        {10, 12, C, 0, 3, 0, 14, "src/a.c", "helper"},
        {11, 12, PES_KIND_STORE, 0, 5, 8, 80, "src/a.c", "main.omp_outlined"},
    };
    struct pes_bb bbs[1] = {
        {.id = 12, .n_sites = 0, .ops = {0}, .flags = 0, .function = "main", .label = "entry"}};
    struct pes_module m = {0, 12, 1, "src/a.c", sites, bbs};
    struct pes_thread t0 = {0, UINT32_MAX, 100, 0, 0, 1000};
    struct pes_thread t1 = {1, 0, 101, 1, 0, 5000};
    static struct recs R0, R1;
    R0.calls = R1.calls = calls;
    struct recs *r = &R0;
    add(r, 1100, PES_ID_TIME, 0);
    /* A */
    add(r, 1000, PES_ID_CALL, 2);
    add(r, 900, PES_ID_CALL, 3);
    accesses(r, 0, 5);
    add(r, 900, PES_ID_RETURN, 0);
    add(r, 900, PES_ID_CALL, 5);
    accesses(r, 0, 3);
    add(r, 900, PES_ID_RETURN, 0);
    add(r, 1000, PES_ID_RETURN, 0);
    add(r, 1000, PES_ID_CALL, 4);
    accesses(r, 0, 2);
    add(r, 1000, PES_ID_RETURN, 0);
    accesses(r, 1, 4);
    if (bad_kind)
        add(r, 1000, PES_ID_CALL, 0);
    if (bad_site)
        add(r, 1000, PES_ID_CALL, 999);
    /* B */
    add(r, 1000, PES_ID_CALL, 8);
    accesses(r, 7, 1);
    for (uint64_t sp = 800; sp > 400; sp -= 100) {
        add(r, sp, PES_ID_CALL, 6);
        accesses(r, 7, 1);
    }
    for (uint64_t sp = 500; sp <= 800; sp += 100)
        add(r, sp, PES_ID_RETURN, 0);
    add(r, 1000, PES_ID_RETURN, 0);
    /* C: main:40 > solve:22 > helper:14 left open by a longjmp back into
     * main, whose next CALL (sp 1000) ends them all: main:41 alone */
    add(r, 1000, PES_ID_CALL, 2);
    add(r, 900, PES_ID_CALL, 3);
    add(r, 800, PES_ID_CALL, 10);
    add(r, 1000, PES_ID_CALL, 4);
    accesses(r, 0, 1);
    add(r, 600, PES_ID_RETURN, 0); /* stray: no frame at 600, none below it */
    accesses(r, 0, 1);
    add(r, 1000, PES_ID_RETURN, 0);
    /* D */
    add(r, 1000, PES_ID_CALL, 9);
    add(r, 77, PES_ID_REGION_BEGIN, 0);
    shared_line(r, 11, 2, 0);
    add(r, 2000, PES_ID_TIME, 0);
    add(r, 77, PES_ID_REGION_END, 0);
    add(r, 1000, PES_ID_RETURN, 0);
    add(r, 9000, PES_ID_TIME, 0);
    /* thread 1, after thread 0 entered the region (time 5000 > 2000) */
    r = &R1;
    add(r, 5000, PES_ID_TIME, 0);
    add(r, 77, PES_ID_REGION_BEGIN, 0);
    shared_line(r, 11, 3, 16);
    add(r, 77, PES_ID_REGION_END, 0);
    add(r, 6000, PES_ID_TIME, 0);
    if (pes_trace_writer_module(w, &m, &err) || pes_trace_writer_thread(w, &t0, &err) ||
        pes_trace_writer_thread(w, &t1, &err) || pes_trace_writer_records(w, 0, R0.r, R0.n, &err) ||
        pes_trace_writer_records(w, 1, R1.r, R1.n, &err))
        goto fail;
    /* --repeat: part A again and again, in blocks of 64 repetitions */
    uint64_t records0 = R0.n;
    for (unsigned long k = 0; k < repeat;) {
        R0.n = 0;
        for (int b = 0; b < 64 && k < repeat; b++, k++) {
            if (next_line >= 0x100000 + 16384 * 64)
                next_line = 0x100000;
            add(r = &R0, 1000, PES_ID_CALL, 2);
            add(r, 900, PES_ID_CALL, 3);
            accesses(r, 0, 5);
            add(r, 900, PES_ID_RETURN, 0);
            add(r, 900, PES_ID_CALL, 5);
            accesses(r, 0, 3);
            add(r, 900, PES_ID_RETURN, 0);
            add(r, 1000, PES_ID_RETURN, 0);
            add(r, 1000, PES_ID_CALL, 4);
            accesses(r, 0, 2);
            add(r, 1000, PES_ID_RETURN, 0);
            accesses(r, 1, 4);
        }
        if (pes_trace_writer_records(w, 0, R0.r, R0.n, &err))
            goto fail;
        records0 += R0.n;
    }
    struct pes_thread_totals tot[2] = {{0, records0, 0, 0, 0, 0, 9000},
                                       {1, R1.n, 0, 0, 0, 0, 6000}};
    if (pes_trace_writer_close(w, tot, 2, 9000, &err))
        goto fail;
    return 0;
fail:
    fprintf(stderr, "trace_callpath_gen: %s\n", err.message);
    return 1;
}
