/*
 * trace_sample_gen.c — writes a small fixed trace for the command-line tests
 * (zstd -t, pes-dump). Usage: trace_sample_gen OUT [--no-footer] [--escapes]
 * [--sampled] [--loops]. The contents are spelled out here so the tests can
 * state expected output independently of the reader.
 *   --escapes  every string (command, host, cpu, config, module, file,
 *              function, label, mapping path) holds terminal control
 *              sequences: ESC ] title BEL, ESC [2J, a raw C1 CSI (0x9b) and
 *              a UTF-8 one (U+009B)
 *   --sampled  a sampled trace: the same tables and the EVENTS block, no
 *              ACCESS blocks
 *   --loops    thread 0's loop (records 2..9: 2 iterations of bb 3 and
 *              sites 0, 1, 2) stored as a loop descriptor group: the same
 *              trace once expanded (docs/trace-format.md §3.2)
 */
#include <stdio.h>
#include <string.h>

#include "pes/trace.h"

int main(int argc, char **argv)
{
    int footer = 1, escapes = 0, sampled = 0, loops = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--no-footer") == 0)
            footer = 0;
        else if (strcmp(argv[i], "--escapes") == 0)
            escapes = 1;
        else if (strcmp(argv[i], "--sampled") == 0)
            sampled = 1;
        else if (strcmp(argv[i], "--loops") == 0)
            loops = 1;
        else
            argc = 0;
    }
    if (argc < 2) {
        fprintf(stderr,
                "usage: trace_sample_gen OUT [--no-footer] [--escapes] [--sampled] [--loops]\n");
        return 2;
    }
#define E(s)                                                                                       \
    (escapes ? s "\x1b]0;pwned\x07\x1b[2J\x9b"                                                     \
                 "2J\xc2\x9b"                                                                      \
                 "2J"                                                                              \
             : s)
    struct pes_trace_info info = {0};
    info.kind = sampled ? PES_TRACE_SAMPLED : PES_TRACE_FULL;
    info.command = E("./gemm 128");
    info.hostname = E("testhost");
    info.cpu_model = E("Test CPU");
    info.n_cpus = 4;
    info.n_sockets = 1;
    info.n_cache_levels = 1;
    info.caches[0] = (struct pes_cache_level){1, 'D', 8, 64, 32768, 2};
    info.ticks_per_second = 1000000000ull;
    info.start_ticks = 1000;
    info.pid = 4242;
    /* settings replay reads, and a key it does not know that holds the escapes */
    info.config = sampled ? (escapes ? "mode=samples\nbackend=soft\nnote=\x1b[2J"
                                     : "mode=samples\nbackend=soft")
                          : (escapes ? "mode=full\nnote=\x1b[2J" : "mode=full");
    struct pes_error err;
    struct pes_trace_writer *w = pes_trace_writer_open(argv[1], 1, &info, NULL, &err);
    if (!w)
        goto fail;
    /* module: sites 0..2, BBs 3..4 */
    struct pes_site sites[3] = {
        {0, 3, PES_KIND_LOAD, 0, 5, 8, 12, E("gemm.c"), E("kernel")},
        {1, 3, PES_KIND_LOAD, 0, 14, 8, 12, E("gemm.c"), E("kernel")},
        {2, 3, PES_KIND_STORE, PES_SITE_SHARED, 9, 8, 13, E("gemm.c"), E("kernel")},
    };
    struct pes_bb bbs[2] = {
        {.id = 3,
         .n_sites = 3,
         .ops = {1, 0, 0, 1, 1, 0, 2, 1, 1, 0, 0},
         .flags = PES_BB_PARALLEL,
         .function = E("kernel"),
         .label = E("for.body")},
        {.id = 4,
         .n_sites = 0,
         .ops = {0},
         .flags = 0,
         .function = E("kernel"),
         .label = E("entry")},
    };
    struct pes_module m = {0, 3, 2, E("gemm.c"), sites, bbs};
    struct pes_thread t0 = {0, UINT32_MAX, 100, 0, 0, 1000};
    struct pes_thread t1 = {1, 0, 101, 1, 0, 1500};
    struct pes_record r0[] = {
        {1100, PES_ID_TIME, 0},
        {0, 4, 0},
        {0, 3, 0},
        {0x1000, 0, 0},
        {0x2000, 1, 0},
        {0x3000, 2, 0},
        {0, 3, 0},
        {0x1008, 0, 0},
        {0x2400, 1, 0},
        {0x3000, 2, 0},
        {7, PES_ID_REGION_BEGIN, 0},
        {0, PES_ID_REGION_END, 0},
    };
    /* r0 with records 2..9 as a group: R 8, m 4, phase 0, steps 0, 8, 0x400, 0 */
    struct pes_record r0_loops[] = {
        {1100, PES_ID_TIME, 0},
        {0, 4, 0},
        {8, PES_ID_LOOP, 4},
        {0, 3, 0},
        {0x1000, 0, 0},
        {0x2000, 1, 0},
        {0x3000, 2, 0},
        {0, PES_ID_LOOP_STEP, 0},
        {8, PES_ID_LOOP_STEP, 0},
        {0x400, PES_ID_LOOP_STEP, 0},
        {0, PES_ID_LOOP_STEP, 0},
        {7, PES_ID_REGION_BEGIN, 0},
        {0, PES_ID_REGION_END, 0},
    };
    struct pes_record r1[] = {{1600, PES_ID_TIME, 0}, {0, 3, 0}, {0x5000, 0, 0}};
    struct pes_event ev = {PES_EV_REUSE, PES_EVF_WRITE, 8,  1, 0,  2, 0x3000,
                           0x401234,     2000,          10, 5, 42, 0, PES_STACK_NONE};
    struct pes_mapping map = {0x400000, 0x402000, 0, E("/usr/bin/gemm")};
    /* footer records: ACCESS records (full), EVENTS events (sampled) */
    struct pes_thread_totals tot[2] = {{0, sampled ? 0 : 12, 4, 2, 0, 0, 3000},
                                       {1, sampled ? 1 : 3, 1, 0, 1, 0, 3100}};
    if (pes_trace_writer_module(w, &m, &err) || pes_trace_writer_thread(w, &t0, &err) ||
        pes_trace_writer_thread(w, &t1, &err) ||
        (!sampled && !loops &&
         pes_trace_writer_records(w, 0, r0, sizeof r0 / sizeof r0[0], &err)) ||
        (!sampled && loops &&
         pes_trace_writer_records(w, 0, r0_loops, sizeof r0_loops / sizeof r0_loops[0], &err)) ||
        (!sampled && pes_trace_writer_records(w, 1, r1, sizeof r1 / sizeof r1[0], &err)) ||
        pes_trace_writer_events(w, 1, &ev, 1, &err) || pes_trace_writer_mappings(w, &map, 1, &err))
        goto fail;
    if (pes_trace_writer_close(w, footer ? tot : NULL, footer ? 2 : 0, 3200, &err))
        goto fail;
    return 0;
fail:
    fprintf(stderr, "trace_sample_gen: %s\n", err.message);
    return 1;
}
