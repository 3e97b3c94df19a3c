/* samp_check — reads a sampled trace with the reader API and checks properties
 * that samp_prog's scenarios have by construction (not values the runtime
 * computed). Each argument is one expectation:
 *   KIND=N | KIND>=N    number of events of a kind (sample, reuse, invalidation, comm)
 *   distance=D          every reuse has time distance D (D = "same": all reuses equal)
 *   false-sharing>=N, true-sharing>=N   comm events with that flag
 *   reuse-pair=A,B      every reuse has thread A and other_thread B (inval-pair, comm-pair:
 *                       comm pairs are unordered)
 *   flags=F             every reuse/invalidation/comm event has flag F set
 *                       (shared, spatial, true, false)
 *   weighted=1          every reuse/invalidation has aux >= 1 (reservoir offers)
 *   totals=T:L:S        thread T's footer and TOTALS event say L loads, S stores
 *   threads>=N          at least N THREAD blocks
 *   not-access=N        samples whose site is no access site of the MODULE
 *                       blocks (a call site, or an id of no module)
 *   config=KEY=VALUE    a line of the header config */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pes/trace.h"

static const char *path;

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "samp_check: %s: ", path);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static struct pes_event *evs;
static size_t n_evs, cap;
static struct pes_thread_totals foot[256];
static size_t n_foot;
static unsigned threads;
static size_t not_access; /* samples naming no access site */

static int kind_of(const char *name)
{
    if (!strcmp(name, "sample")) return PES_EV_SAMPLE;
    if (!strcmp(name, "reuse")) return PES_EV_REUSE;
    if (!strcmp(name, "invalidation")) return PES_EV_INVALIDATION;
    if (!strcmp(name, "comm")) return PES_EV_COMM;
    return -1;
}

static size_t count(int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < n_evs; i++)
        n += evs[i].kind == kind;
    return n;
}

static void check_pair(int kind, const char *v, int unordered)
{
    unsigned a, b;
    if (sscanf(v, "%u,%u", &a, &b) != 2)
        fail("bad pair '%s'", v);
    for (size_t i = 0; i < n_evs; i++) {
        const struct pes_event *e = &evs[i];
        if (e->kind != kind)
            continue;
        int ok = (e->thread == a && e->other_thread == b) ||
                 (unordered && e->thread == b && e->other_thread == a);
        if (!ok)
            fail("%s event between threads %u and %u, expected %u,%u", pes_event_kind_name(kind),
                 e->thread, e->other_thread, a, b);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    path = argv[1];
    struct pes_error err = {0};
    struct pes_trace_reader *r = pes_trace_reader_open(path, &err);
    if (!r)
        fail("%s", err.message);
    const struct pes_trace_info *info = pes_trace_reader_info(r);
    if (info->kind != PES_TRACE_SAMPLED)
        fail("kind %u, expected sampled", info->kind);
    char *config = strdup(info->config ? info->config : "");
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(r, &b, &err)) == 1) {
        if (b.type == PES_BLOCK_THREAD) {
            threads++;
        } else if (b.type == PES_BLOCK_EVENTS) {
            if (n_evs + b.n > cap) {
                cap = (n_evs + b.n) * 2;
                evs = realloc(evs, cap * sizeof *evs);
                if (!evs)
                    fail("out of memory");
            }
            memcpy(evs + n_evs, b.events, b.n * sizeof *evs);
            n_evs += b.n;
            for (size_t k = 0; k < b.n; k++) {
                const struct pes_site *s = pes_trace_reader_site(r, b.events[k].site);
                not_access += b.events[k].kind == PES_EV_SAMPLE &&
                              (!s || !(pes_kind_reads(s->kind) || pes_kind_writes(s->kind)));
            }
        } else if (b.type == PES_BLOCK_FOOTER) {
            n_foot = b.n < 256 ? b.n : 256;
            memcpy(foot, b.totals, n_foot * sizeof *foot);
        }
    }
    if (rc < 0)
        fail("%s", err.message);
    if (pes_trace_reader_truncated(r, NULL))
        fail("truncated (no footer)");
    pes_trace_reader_close(r);

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        char name[64];
        unsigned long long v, v2, v3;
        const char *op = strpbrk(a, "=>");
        if (!op || (size_t)(op - a) >= sizeof name)
            fail("bad expectation '%s'", a);
        memcpy(name, a, (size_t)(op - a));
        name[op - a] = '\0';
        int ge = op[0] == '>' && op[1] == '=';
        const char *val = op + (ge ? 2 : 1);
        int kind = kind_of(name);
        if (kind > 0) {
            v = strtoull(val, NULL, 10);
            size_t n = count(kind);
            if (ge ? n < v : n != v)
                fail("%zu %s events, expected %s%llu", n, name, ge ? ">=" : "", v);
        } else if (!strcmp(name, "false-sharing") || !strcmp(name, "true-sharing")) {
            unsigned f = name[0] == 'f' ? PES_EVF_FALSE_SHARING : PES_EVF_TRUE_SHARING;
            size_t n = 0;
            for (size_t k = 0; k < n_evs; k++)
                n += evs[k].kind == PES_EV_COMM && (evs[k].flags & f);
            v = strtoull(val, NULL, 10);
            if (ge ? n < v : n != v)
                fail("%zu %s events, expected %s%llu", n, name, ge ? ">=" : "", v);
        } else if (!strcmp(name, "distance") && !strcmp(val, "same")) {
            for (size_t k = 0, first = SIZE_MAX; k < n_evs; k++) {
                if (evs[k].kind != PES_EV_REUSE)
                    continue;
                if (first == SIZE_MAX)
                    first = k;
                else if (evs[k].distance != evs[first].distance)
                    fail("reuse distances %" PRIu64 " and %" PRIu64 " differ", evs[first].distance,
                         evs[k].distance);
            }
        } else if (!strcmp(name, "distance")) {
            v = strtoull(val, NULL, 10);
            for (size_t k = 0; k < n_evs; k++)
                if (evs[k].kind == PES_EV_REUSE && evs[k].distance != v)
                    fail("reuse of 0x%" PRIx64 " at distance %" PRIu64 ", expected %llu",
                         evs[k].addr, evs[k].distance, v);
        } else if (!strcmp(name, "weighted")) {
            for (size_t k = 0; k < n_evs; k++)
                if ((evs[k].kind == PES_EV_REUSE || evs[k].kind == PES_EV_INVALIDATION) &&
                    evs[k].aux < 1)
                    fail("%s event with aux %" PRIu64 ", expected >= 1",
                         pes_event_kind_name(evs[k].kind), evs[k].aux);
        } else if (!strcmp(name, "reuse-pair")) {
            check_pair(PES_EV_REUSE, val, 0);
        } else if (!strcmp(name, "inval-pair")) {
            check_pair(PES_EV_INVALIDATION, val, 0);
        } else if (!strcmp(name, "comm-pair")) {
            check_pair(PES_EV_COMM, val, 1);
        } else if (!strcmp(name, "flags")) {
            unsigned f = !strcmp(val, "shared") ? PES_EVF_SHARED_CACHE
                       : !strcmp(val, "spatial") ? PES_EVF_SPATIAL
                       : !strcmp(val, "true") ? PES_EVF_TRUE_SHARING
                       : !strcmp(val, "false") ? PES_EVF_FALSE_SHARING : 0;
            if (!f)
                fail("bad flag '%s'", val);
            for (size_t k = 0; k < n_evs; k++) {
                int kk = evs[k].kind;
                if ((kk == PES_EV_REUSE || kk == PES_EV_INVALIDATION || kk == PES_EV_COMM) &&
                    !(evs[k].flags & f))
                    fail("%s event without flag %s", pes_event_kind_name((uint8_t)kk), val);
            }
        } else if (!strcmp(name, "totals")) {
            if (sscanf(val, "%llu:%llu:%llu", &v, &v2, &v3) != 3)
                fail("bad totals '%s'", val);
            int seen = 0;
            for (size_t k = 0; k < n_evs; k++)
                if (evs[k].kind == PES_EV_TOTALS && evs[k].thread == v) {
                    seen = 1;
                    if (evs[k].loads != v2 || evs[k].stores != v3)
                        fail("thread %llu TOTALS: %" PRIu64 " loads, %" PRIu64
                             " stores, expected %llu, %llu", v, evs[k].loads, evs[k].stores, v2, v3);
                }
            if (!seen)
                fail("no TOTALS event of thread %llu", v);
            if (v >= n_foot || foot[v].loads != v2 || foot[v].stores != v3)
                fail("thread %llu footer totals differ", v);
        } else if (!strcmp(name, "not-access")) {
            v = strtoull(val, NULL, 10);
            if (not_access != v)
                fail("%zu samples name no access site, expected %llu", not_access, v);
        } else if (!strcmp(name, "threads")) {
            v = strtoull(val, NULL, 10);
            if (ge ? threads < v : threads != v)
                fail("%u threads, expected %s%llu", threads, ge ? ">=" : "", v);
        } else if (!strcmp(name, "config")) {
            char line[128];
            snprintf(line, sizeof line, "%s\n", val);
            if (!strstr(config, line))
                fail("config has no line '%s'", val);
        } else {
            fail("unknown expectation '%s'", a);
        }
    }
    free(config);
    free(evs);
    return 0;
}
