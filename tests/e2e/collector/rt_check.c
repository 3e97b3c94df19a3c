/* rt_check — reads a trace written for rt_prog with the reader API and checks
 * it against the pattern rt_prog is known to emit (rt_pattern.h), not against
 * anything the runtime computed.
 *
 *   rt_check TRACE [--interval I] [--thread-end] [--no-footer] [--prefix]
 *            [--command CMD] K:N...
 *
 * K:N = worker K emitted exactly N records (in pattern order); no other worker
 * may appear. --prefix: between 1 and N records (threads stopped at exit).
 * Heap records (ALLOC, ALLOC_SIZE, FREE: whatever libc allocates for the
 * program) are not part of the pattern, but count between time marks as the
 * runtime counts every record, which moves a mark due between an ALLOC and
 * its ALLOC_SIZE one record earlier. Each thread that accesses has its stack
 * (ALLOC with PES_ALLOC_SITE_STACK, then ALLOC_SIZE) once, before its first
 * access. A thread may have heap records only (the main thread, whose
 * allocations for pthread_create set it up). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/rt_abi.h"
#include "pes/trace.h"
#include "rt_pattern.h"

#define MAX_THREADS 256

struct stream {
    struct pes_record *r;
    size_t n, cap;
};

static const char *trace_path;

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rt_check: %s: ", trace_path);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void append(struct stream *s, const struct pes_record *r, size_t n)
{
    if (s->n + n > s->cap) {
        s->cap = (s->n + n) * 2;
        s->r = realloc(s->r, s->cap * sizeof *s->r);
        if (!s->r)
            fail("out of memory");
    }
    memcpy(s->r + s->n, r, n * sizeof *r);
    s->n += n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rt_check TRACE [--interval I] [--thread-end] [--no-footer] K:N...\n");
        return 2;
    }
    trace_path = argv[1];
    uint64_t interval = 0;
    int want_end = 0, want_footer = 1, prefix = 0;
    const char *command = NULL;
    int64_t expect[MAX_THREADS];
    for (int i = 0; i < MAX_THREADS; i++)
        expect[i] = -1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc)
            interval = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--thread-end") == 0)
            want_end = 1;
        else if (strcmp(argv[i], "--command") == 0 && i + 1 < argc)
            command = argv[++i];
        else if (strcmp(argv[i], "--prefix") == 0)
            prefix = 1;
        else if (strcmp(argv[i], "--no-footer") == 0)
            want_footer = 0;
        else {
            unsigned k;
            unsigned long long n;
            if (sscanf(argv[i], "%u:%llu", &k, &n) != 2 || k >= MAX_THREADS)
                fail("bad expectation '%s'", argv[i]);
            expect[k] = (int64_t)n;
        }
    }

    struct pes_error err = {0};
    struct pes_trace_reader *r = pes_trace_reader_open(trace_path, &err);
    if (!r)
        fail("open: %s", err.message);
    const struct pes_trace_info *info = pes_trace_reader_info(r);
    if (info->kind != PES_TRACE_FULL)
        fail("kind %u, expected full", info->kind);
    if (info->ticks_per_second != 1000000000u || info->pid == 0 || !info->command[0])
        fail("header: ticks/s %" PRIu64 ", pid %" PRIu64 ", command '%s'", info->ticks_per_second,
             info->pid, info->command);
    if (command && strcmp(info->command, command) != 0)
        fail("command '%s', expected '%s'", info->command, command);
    char abi[32];
    snprintf(abi, sizeof abi, "abi_version=%u\n", PES_RT_ABI_VERSION);
    if (info->n_cpus == 0 || !info->hostname[0] || !strstr(info->config, "mode=full\n") ||
        !strstr(info->config, abi))
        fail("header: %u cpus, hostname '%s', config '%s'", info->n_cpus, info->hostname,
             info->config);
    if (interval) {
        char want[64];
        snprintf(want, sizeof want, "time_interval=%" PRIu64 "\n", interval);
        if (!strstr(info->config, want))
            fail("config lacks '%s': %s", want, info->config);
    }

    struct stream streams[MAX_THREADS] = {{0}};
    uint32_t n_threads = 0, a_base = UINT32_MAX, b_base = UINT32_MAX;
    int n_modules = 0, footer = 0;
    struct pes_thread_totals totals[MAX_THREADS];
    size_t n_totals = 0;
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        switch (b.type) {
        case PES_BLOCK_MODULE: {
            const struct pes_module *m = b.module;
            n_modules++;
            if (strcmp(m->name, "rt_prog_a.c") == 0) {
                a_base = m->id_base;
                if (m->n_sites != RT_A_SITES || m->n_bbs != RT_A_BBS)
                    fail("module A: %u sites %u bbs", m->n_sites, m->n_bbs);
                if (m->sites[1].kind != PES_KIND_STORE || m->sites[2].kind != PES_KIND_RMW ||
                    m->sites[2].line != 12 || m->sites[2].column != 7 || m->sites[2].size != 4 ||
                    strcmp(m->sites[0].file, "rt_prog.c") || strcmp(m->sites[0].function, "worker"))
                    fail("module A: site table differs from rt_prog's");
                if (m->sites[1].bb != m->id_base + RT_A_SITES + 1 || m->sites[0].id != m->id_base)
                    fail("module A: site ids/bb ids not global (%u, %u)", m->sites[0].id,
                         m->sites[1].bb);
                if (strcmp(m->bbs[1].label, "body") || !(m->bbs[1].flags & PES_BB_PARALLEL) ||
                    m->bbs[1].ops[PES_OP_LOAD] != 1 || m->bbs[1].id != m->id_base + RT_A_SITES + 1)
                    fail("module A: bb table differs from rt_prog's");
                if (!(m->bbs[1].flags & PES_BB_MODEL_FACTS) || m->bbs[1].barriers != 1 ||
                    m->bbs[1].forks != 0 || m->bbs[1].instrs[PES_OP_LOAD] != 1 ||
                    m->bbs[1].chain[PES_OP_INT_ADD] != 1 || m->bbs[1].chain[PES_OP_LOAD] != 0 ||
                    (m->bbs[0].flags & PES_BB_MODEL_FACTS))
                    fail("module A: block facts differ from rt_prog's");
            } else if (strcmp(m->name, "rt_prog_b.c") == 0) {
                b_base = m->id_base;
                if (m->n_sites != RT_B_SITES || m->sites[0].kind != PES_KIND_COPY_SRC ||
                    m->sites[0].size != 0)
                    fail("module B: site table differs from rt_prog's");
            } else {
                fail("unexpected module '%s'", m->name);
            }
            break;
        }
        case PES_BLOCK_THREAD:
            if (b.thread_info->index != n_threads)
                fail("thread block %u, expected index %u (dense, in order)", b.thread_info->index,
                     n_threads);
            if (b.thread_info->tid == 0)
                fail("thread %u: tid 0", n_threads);
            if (++n_threads > MAX_THREADS)
                fail("too many threads");
            break;
        case PES_BLOCK_ACCESS:
            if (b.thread >= n_threads)
                fail("records of thread %u before its THREAD block", b.thread);
            append(&streams[b.thread], b.records, b.n);
            break;
        case PES_BLOCK_FOOTER:
            footer = 1;
            n_totals = b.n < MAX_THREADS ? b.n : MAX_THREADS;
            memcpy(totals, b.totals, n_totals * sizeof *totals);
            break;
        default:
            break;
        }
    }
    if (rc < 0)
        fail("%s", err.message);
    const char *why = NULL;
    if (pes_trace_reader_truncated(r, &why) && want_footer)
        fail("truncated: %s", why ? why : "?");
    if (n_modules != 2 || a_base != 0 || b_base != RT_A_SITES + RT_A_BBS)
        fail("modules: %d, A at %u, B at %u (expected 2, ranges 0 and %u)", n_modules, a_base,
             b_base, RT_A_SITES + RT_A_BBS);
    if (want_footer && !footer)
        fail("no footer");

    int seen[MAX_THREADS] = {0};
    uint64_t all = 0;
    for (uint32_t t = 0; t < n_threads; t++) {
        struct stream *s = &streams[t];
        uint64_t i = 0, since_mark = 0, last_time = 0, marks = 0, loads = 0, stores = 0, heap = 0;
        uint64_t n_early = 0;
        int64_t k = -1;
        uint64_t stacks = 0;
        for (size_t j = 0; j < s->n; j++) {
            const struct pes_record *rec = &s->r[j];
            if (rec->id == PES_ID_TIME) {
                /* early by one before an ALLOC/ALLOC_SIZE pair that the mark would split */
                int early = since_mark + 1 == interval && j + 2 < s->n &&
                            s->r[j + 1].id == PES_ID_ALLOC && s->r[j + 2].id == PES_ID_ALLOC_SIZE;
                n_early += j > 0 && interval && since_mark != interval && early;
                if (j > 0 && interval && since_mark != interval && !early)
                    fail("thread %u: %" PRIu64 " records between time marks, expected %" PRIu64, t,
                         since_mark, interval);
                if (rec->addr < last_time)
                    fail("thread %u: time goes backwards", t);
                last_time = rec->addr;
                since_mark = 0;
                marks++;
                continue;
            }
            if (j == 0)
                fail("thread %u: first record is not a time mark", t);
            if (rec->id == PES_ID_THREAD_END) {
                if (j + 1 != s->n)
                    fail("thread %u: THREAD_END is not last", t);
                continue;
            }
            since_mark++;
            if (rec->id == PES_ID_ALLOC || rec->id == PES_ID_ALLOC_SIZE || rec->id == PES_ID_FREE) {
                if ((rec->id == PES_ID_ALLOC) != (j + 1 < s->n && s->r[j + 1].id == PES_ID_ALLOC_SIZE) &&
                    !(rec->id == PES_ID_ALLOC_SIZE && s->r[j - 1].id == PES_ID_ALLOC))
                    fail("thread %u record %zu: ALLOC and ALLOC_SIZE not paired", t, j);
                heap++;
                if (rec->id == PES_ID_ALLOC && rec->extra == PES_ALLOC_SITE_STACK) {
                    stacks++;
                    if (i != 0 || s->r[j + 1].addr == 0)
                        fail("thread %u record %zu: its stack after its first access, or of size 0", t, j);
                }
                continue;
            }
            if (k < 0) {
                k = (int64_t)(rec->addr >> 40) - 1;
                if (k < 0 || k >= MAX_THREADS || expect[k] < 0)
                    fail("thread %u: records of unexpected worker %" PRId64, t, k);
                if (seen[k]++)
                    fail("worker %" PRId64 " appears in two threads", k);
            }
            struct rt_expect e = rt_pattern((uint32_t)k, i);
            uint32_t id = (e.module ? b_base : a_base) + e.local;
            if (rec->addr != e.addr || rec->id != id || rec->extra != e.extra)
                fail("thread %u record %zu: {0x%" PRIx64 ", %u, %u}, expected {0x%" PRIx64
                     ", %u, %u} (worker %" PRId64 " access %" PRIu64 ")",
                     t, j, rec->addr, rec->id, rec->extra, e.addr, id, e.extra, k, i);
            loads += i % 5 == 0 || i % 5 == 2 || i % 5 == 3;
            stores += i % 5 == 1 || i % 5 == 2;
            i++;
        }
        if (k < 0 && heap == 0)
            fail("thread %u has no records", t);
        if (k >= 0 && stacks != 1)
            fail("thread %u: %" PRIu64 " stack records, expected 1", t, stacks);
        if (k < 0) { /* heap records only */
            if (footer && (t >= n_totals || totals[t].records != s->n))
                fail("footer thread %u: records differ from the %zu in the trace", t, s->n);
            free(s->r);
            continue;
        }
        if (prefix ? (i == 0 || (int64_t)i > expect[k]) : (int64_t)i != expect[k])
            fail("worker %" PRId64 ": %" PRIu64 " records, expected %" PRId64, k, i, expect[k]);
        /* each early mark takes one record from the following intervals */
        if (interval && (marks < (i + heap + interval - 1) / interval ||
                         marks > (i + heap + n_early + interval - 1) / interval))
            fail("thread %u: %" PRIu64 " time marks for %" PRIu64 " records", t, marks, i + heap);
        if (want_end && (s->n == 0 || s->r[s->n - 1].id != PES_ID_THREAD_END))
            fail("thread %u: no THREAD_END record", t);
        if (footer) {
            if (t >= n_totals)
                fail("footer has %zu threads, trace has %u", n_totals, n_threads);
            const struct pes_thread_totals *tt = &totals[t];
            if (tt->thread != t || tt->records != s->n || tt->loads != loads || tt->stores != stores)
                fail("footer thread %u: records %" PRIu64 " loads %" PRIu64 " stores %" PRIu64
                     ", expected %zu %" PRIu64 " %" PRIu64,
                     t, tt->records, tt->loads, tt->stores, s->n, loads, stores);
        }
        all += i;
        free(s->r);
    }
    if (footer && n_totals != n_threads)
        fail("footer has %zu threads, trace has %u", n_totals, n_threads);
    for (int k = 0; k < MAX_THREADS; k++)
        if (expect[k] >= 0 && !seen[k])
            fail("worker %d missing", k);
    pes_trace_reader_close(r);
    printf("rt_check: ok: %u threads, %" PRIu64 " accesses\n", n_threads, all);
    return 0;
}
