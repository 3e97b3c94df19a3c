/*
 * fuzz_sampled.c — libFuzzer target for pes-replay's sampled path: the input
 * becomes a valid sampled trace (written with the trace writer, so the
 * fuzzer reaches the analyses instead of checksum failures), which goes
 * through replay_sampled_report (the reader's EVENTS blocks, the per-event
 * analyses, the Shen et al. conversion) and both report writers.
 *
 * Input: byte 0 = threads - 1 (mod 4); six u16 = period_load, period_store,
 * line_size, debug_registers, watch_bytes, sockets (out of their bounds in
 * pes/settings.h: folded into them, unless flag bit 3 is set); one byte of flags (bit 0:
 * granularity=spatial, bits 1-2: the mode, bit 3: those four as they are); then
 * raw struct pes_event values.
 * An event goes into the EVENTS block of thread `thread mod threads`; unless
 * bit 15 of its size is set (kept raw), its thread is that thread, its
 * other_thread and site are folded into the thread table / the module's
 * sites or "none" (a COMM event's other_thread, the publisher, into the
 * thread table only: docs/accuracy.md) and its stack into the trace's call
 * stacks or none. Oracle: when the analysis succeeds, its counts are the
 * numbers of events of each kind counted here; when it fails (raw events
 * only, or a header setting out of its bounds: then the message names the
 * key), it says so in one message naming the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pes/settings.h"
#include "replay_run.h"
#include "report_util.h"
#include "writers.h"

#define N_SITES    4u
#define STACK_BASE 0x80000000u
#define MAX_EVENTS 4096

static char path[64];

static void remove_trace(void)
{
    unlink(path);
}

/* Writes the trace; returns 0, or -1 if the writer refuses (then skipped). */
static int write_trace(const uint8_t *data, struct pes_event *ev, size_t n_ev, uint32_t n_threads,
                       int *raw, int *bad_config)
{
    uint16_t v[6];
    memcpy(v, data + 1, sizeof v);
    if (!(data[13] & 8)) { /* into the bounds of line_size, debug_registers, watch_bytes, sockets */
        static const char *const row[4] = {"line_size", "debug_registers", "watch_bytes",
                                           "sockets"};
        for (int i = 0; i < 4; i++) {
            const struct pes_setting *s = pes_settings_find(row[i]);
            if (v[2 + i] < s->min || v[2 + i] > s->max)
                v[2 + i] = (uint16_t)(s->min + v[2 + i] % (s->max - s->min + 1));
        }
    }
    static const char *const modes[] = {"samples", "reuse", "reuse-shared", "comm"};
    char config[256];
    snprintf(config, sizeof config,
             "backend=soft\nmode=%s\nperiod_load=%u\nperiod_store=%u\nline_size=%u\n"
             "debug_registers=%u\nwatch_bytes=%u\nsockets=%u\ngranularity=%s\n",
             modes[(data[13] >> 1) & 3], v[0], v[1], v[2], v[3], v[4], v[5],
             data[13] & 1 ? "spatial" : "temporal");
    struct pes_trace_info info = {.kind = PES_TRACE_SAMPLED,
                                  .command = "./fuzz",
                                  .hostname = "h",
                                  .cpu_model = "c",
                                  .config = config};
    struct pes_collect_settings settings;
    *bad_config = pes_settings_from_header(&settings, config, NULL) < 0;
    struct pes_error err;
    struct pes_trace_writer *w = pes_trace_writer_open(path, 1, &info, NULL, &err);
    if (!w)
        return -1;
    struct pes_site sites[N_SITES];
    for (uint32_t i = 0; i < N_SITES; i++)
        sites[i] = (struct pes_site){i, N_SITES, (uint8_t)(1 + i), 0, 1, 8, 10 + i, "f.c", "fn"};
    struct pes_bb bb = {.id = N_SITES,
                        .n_sites = N_SITES,
                        .ops = {0},
                        .flags = 0,
                        .function = "fn",
                        .label = "entry"};
    struct pes_module m = {0, N_SITES, 1, "f.c", sites, &bb};
    int rc = pes_trace_writer_module(w, &m, &err);
    /* allocation sites with the same ids, for alloc events (their site names
     * one of these, or UINT32_MAX: a thread's stack) */
    static const uint64_t ip = 0x401000;
    struct pes_alloc_site asites[N_SITES];
    for (uint32_t i = 0; i < N_SITES; i++)
        asites[i] = (struct pes_alloc_site){i, PES_ALLOC_MALLOC, 1, &ip};
    if (rc == 0)
        rc = pes_trace_writer_alloc_sites(w, asites, N_SITES, &err);
    /* call stacks for samples (version 3): ids STACK_BASE + i */
    static const uint64_t stack_ips[2] = {0x401000, 0x402000};
    struct pes_alloc_site stacks[N_SITES];
    for (uint32_t i = 0; i < N_SITES; i++)
        stacks[i] =
            (struct pes_alloc_site){STACK_BASE + i, PES_ALLOC_CALLSTACK, 1 + i % 2, stack_ips};
    if (rc == 0)
        rc = pes_trace_writer_alloc_sites(w, stacks, N_SITES, &err);
    struct pes_thread_totals tot[4] = {{0}};
    static struct pes_event block[MAX_EVENTS];
    for (uint32_t t = 0; t < n_threads && rc == 0; t++) {
        struct pes_thread th = {t, t ? 0 : UINT32_MAX, 100 + t, (int32_t)t, 0, 0};
        rc = pes_trace_writer_thread(w, &th, &err);
        size_t k = 0;
        for (size_t i = 0; i < n_ev; i++) {
            if (ev[i].thread % n_threads != t)
                continue;
            if (ev[i].size & 0x8000) {
                *raw = 1;
            } else {
                ev[i].thread = t;
                /* "none" too, but a COMM event always names its publisher */
                ev[i].other_thread %= n_threads + (ev[i].kind != PES_EV_COMM);
                if (ev[i].other_thread == n_threads)
                    ev[i].other_thread = UINT32_MAX;
                ev[i].site %= N_SITES + 1;
                if (ev[i].site == N_SITES)
                    ev[i].site = UINT32_MAX;
                ev[i].stack %= N_SITES + 1; /* one of the call stacks, or none */
                ev[i].stack = ev[i].stack == N_SITES ? PES_STACK_NONE : STACK_BASE + ev[i].stack;
                /* a sample that names its heap block: an allocation site, an offset in the block */
                if (ev[i].kind == PES_EV_SAMPLE && (ev[i].flags & PES_EVF_HEAP_BLOCK)) {
                    ev[i].other_thread %= N_SITES;
                    ev[i].distance %= ev[i].aux ? ev[i].aux : 1;
                }
            }
            block[k++] = ev[i];
        }
        tot[t] = (struct pes_thread_totals){t, k, 0, 0, 0, 0, 0};
        if (rc == 0 && k)
            rc = pes_trace_writer_events(w, t, block, k, &err);
    }
    if (pes_trace_writer_close(w, tot, n_threads, 0, &err) || rc)
        return -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/pes-fuzz-XXXXXX",
                 dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
        int fd = mkstemp(path);
        if (fd < 0)
            abort();
        close(fd);
        atexit(remove_trace);
    }
    if (size < 14)
        return 0;
    static struct pes_event ev[MAX_EVENTS];
    size_t n_ev = (size - 14) / sizeof *ev;
    if (n_ev > MAX_EVENTS)
        n_ev = MAX_EVENTS;
    memcpy(ev, data + 14, n_ev * sizeof *ev);
    uint32_t n_threads = 1 + data[0] % 4;
    int raw = 0, bad_config = 0;
    if (write_trace(data, ev, n_ev, n_threads, &raw, &bad_config))
        return 0; /* what the writer refuses cannot be in a trace */

    /* what the analysis must count (ev holds the events as written) */
    uint64_t samples = 0, reuses = 0, invals = 0, comm = 0, lost = 0;
    for (size_t i = 0; i < n_ev; i++) {
        samples += ev[i].kind == PES_EV_SAMPLE;
        reuses += ev[i].kind == PES_EV_REUSE;
        invals += ev[i].kind == PES_EV_INVALIDATION;
        comm += ev[i].kind == PES_EV_COMM;
        lost += ev[i].kind == PES_EV_LOST ? ev[i].aux : 0;
    }
    static struct pes_machine machine;
    struct pes_error err = {0};
    if (!machine.n_levels && pes_machine_load("haswell", &machine, &err) < 0)
        abort();
    replay_message_setup("fuzz_sampled", 1); /* the inputs' warnings are expected here */
    struct replay_options o = {.trace = path, .knobs.top = 10};
    struct pes_report *r = replay_sampled_report(&o, &machine, &err);
    if (!r) {
        if (bad_config != (strstr(err.message, "header config: ") != NULL)) {
            fprintf(stderr, "fuzz_sampled: header settings %s, but: %s\n",
                    bad_config ? "bad" : "good", err.message);
            abort();
        }
        if (!(raw || bad_config) || !err.message[0]) {
            fprintf(stderr, "fuzz_sampled: a valid trace refused: %s\n", err.message);
            abort();
        }
        return 0;
    }
    const struct pes_rnode *root = pes_report_tree(r), *intra = pes_r_get(root, "intra"),
                           *shared = pes_r_get(root, "shared");
    if (pes_r_get_u(root, "samples") != samples ||
        pes_r_get_u(intra, "reuses") + pes_r_get_u(shared, "reuses") != reuses ||
        pes_r_get_u(intra, "invalidations") + pes_r_get_u(shared, "invalidations") != invals ||
        pes_r_get_u(pes_r_get(root, "comm"), "events") != comm ||
        pes_r_get_u(root, "lost") != lost || pes_r_get_u(root, "threads") != n_threads)
        abort();
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        if (pes_report_write_sampled_text(null, r) < 0 || pes_report_write_json(null, r) < 0)
            abort();
        fclose(null);
    }
    pes_report_destroy(r);
    return 0;
}
